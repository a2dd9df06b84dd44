"""One decision rule for every threshold check on an estimated quantity (SPEC 13).

A check compares an estimate θ̂ with interval [L, U] against an acceptable region: ``[low,
high]`` (an estimate within bounds), or ``[−limit, limit]`` (a change or a gap of at most
``limit``). It decides by one of three named rules, and says its verdict in the same words
wherever it is shown (the page, the run report, alerts):

* ``estimate`` — the point estimate against the region;
* ``interval`` — *confidently within*: passes only when the whole interval lies in the region
  (the conservative gate for a sign-off);
* ``significant`` — *confidently beyond*: fails only when the whole interval lies outside the
  region (for checks that must not cry wolf).

Without an interval (no standard error), ``interval`` cannot be confirmed and fails, and
``significant`` falls back to the point estimate; the sentence says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from er_expectations.core.errors import InputError
from er_expectations.core.text import fmt_number

__all__ = ["DECISION_RULES", "DEFAULT_RULE", "RULE_WORDS", "Decision", "check_rule", "decide", "region_phrase"]

#: The rules of SPEC 13, in the order the docs list them.
DECISION_RULES: tuple[str, ...] = ("estimate", "interval", "significant")
#: The default of every check that compares an estimate with a limit (SPEC 13): a check says
#: "beyond the limit" only when the whole confidence interval is beyond it.
DEFAULT_RULE = "significant"
#: How each rule is named on a page.
RULE_WORDS = {
    "estimate": "the point estimate against the limit",
    "interval": "confidently within: the whole interval within the limit",
    "significant": "confidently beyond: fails only when the whole interval is beyond the limit",
}


@dataclass(frozen=True, slots=True)
class Decision:
    """The verdict of one check: ``passed``, the ``rule`` that gave it and the sentence that says why."""

    rule: str
    passed: bool
    sentence: str

    def to_dict(self) -> dict[str, object]:
        return {"rule": self.rule, "passed": self.passed, "verdict": self.sentence}


def check_rule(rule: object, *, parameter: str = "decision") -> str:
    """``rule`` if it is one of :data:`DECISION_RULES`, else a clear error naming ``parameter``."""
    if rule not in DECISION_RULES:
        raise InputError(f"{parameter}: expected one of {', '.join(DECISION_RULES)}, got {rule!r}")
    return str(rule)


def _finite(x: float | None) -> bool:
    return x is not None and not math.isnan(float(x))


def region_phrase(low: float | None, high: float | None, *, symmetric: bool = False) -> str:
    """'within ±0.05', 'at least 0.75', 'at most 0.1', 'between 0.8 and 0.9'."""
    if symmetric and high is not None:
        return f"within ±{fmt_number(high)}"
    if low is not None and high is not None:
        return f"between {fmt_number(low)} and {fmt_number(high)}"
    if low is not None:
        return f"at least {fmt_number(low)}"
    if high is not None:
        return f"at most {fmt_number(high)}"
    return "unbounded"


def decide(rule: str, *, estimate: float, lower: float | None = None, upper: float | None = None,
           low: float | None = None, high: float | None = None, strict_low: bool = False,
           strict_high: bool = False, symmetric: bool = False, level: float = 0.95,
           what: str = "the estimate") -> Decision:
    """The verdict of ``rule`` for ``estimate`` (interval ``[lower, upper]``) against the region
    ``[low, high]`` (``None``: unbounded on that side; ``strict_*``: the bound itself is outside).

    ``symmetric`` says the region is ``[−high, high]`` (a change or a gap), for the words only.
    """
    check_rule(rule)
    if math.isnan(float(estimate)):
        raise InputError(f"{what} is undefined: there is nothing to decide on")
    region = region_phrase(low, high, symmetric=symmetric)

    def inside(x: float) -> bool:
        if low is not None and (x < low or (strict_low and x == low)):
            return False
        return not (high is not None and (x > high or (strict_high and x == high)))

    def beyond(lo: float, hi: float) -> bool:  # the whole [lo, hi] outside the region
        above = high is not None and (lo > high or (strict_high and lo == high))
        below = low is not None and (hi < low or (strict_low and hi == low))
        return above or below

    has_interval = _finite(lower) and _finite(upper)
    interval = (f"the {level * 100:g} % interval {fmt_number(lower)} to {fmt_number(upper)}"
                if has_interval else "")
    point = f"{what} {fmt_number(estimate)}"

    def side(lo: float, hi: float) -> str:
        """Where [lo, hi] leaves the region: 'below 0.750', 'above 0.100' or 'beyond ±0.050'."""
        if symmetric and high is not None:
            return f"beyond ±{fmt_number(high)}"
        if low is not None and (lo < low or (strict_low and lo == low)):
            return f"below {fmt_number(low)}"
        return f"above {fmt_number(high)}"

    if rule == "estimate":
        ok = inside(float(estimate))
        return Decision(rule, ok, f"{point} is {'' if ok else 'not '}{region}")
    if rule == "interval":
        if not has_interval:
            return Decision(rule, False, f"{point} has no interval, so it cannot be confidently {region}")
        ok = inside(float(lower)) and inside(float(upper))  # type: ignore[arg-type]
        if ok:
            return Decision(rule, True, f"the whole {interval.removeprefix('the ')} is {region} (confidently within)")
        return Decision(rule, False, f"{interval} reaches {side(float(lower), float(upper))} "  # type: ignore[arg-type]
                        f"(not confidently within{f', though {point} is {region}' if inside(float(estimate)) else ''})")
    if not has_interval:
        ok = inside(float(estimate))
        return Decision(rule, ok, f"no interval, so decided on the point estimate: {point} is "
                        f"{'' if ok else 'not '}{region}")
    if beyond(float(lower), float(upper)):  # type: ignore[arg-type]
        return Decision(rule, False, f"the whole {interval.removeprefix('the ')} is "
                        f"{side(float(lower), float(upper))} (confidently beyond)")  # type: ignore[arg-type]
    if inside(float(estimate)):
        return Decision(rule, True, f"{point} is {region}")
    return Decision(rule, True, f"{point} is {side(float(estimate), float(estimate))}, but {interval} reaches back "
                    "inside: sampling error can explain it (not confidently beyond)")
