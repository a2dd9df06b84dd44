"""The decision rule of a threshold check on an estimate, declared once for every family (SPEC 13).

Estimates, changes of an estimate and subgroup gaps all take ``decision``: ``estimate`` (the
point estimate against the limit), ``interval`` (confidently within: the whole interval inside
the limit) or ``significant`` (confidently beyond: fails only when the whole interval is outside
it). Each family has its own default, said in SPEC 8, 10 and 13: estimates ``estimate`` (a
release owner's target on the best estimate; ``interval`` for a sign-off gate), changes of an
estimate ``significant`` (a paired change must not cry wolf over sampling error), disparity
``estimate`` (a gap is reported as estimated; ``require_significance`` adds Holm's test of no
gap). The page, the result and the alerts give the verdict in the words of
:func:`er_expectations.stats.decision.decide`, and its status and colour follow it.
"""

from __future__ import annotations

from typing import Any

from great_expectations.compatibility import pydantic

from er_expectations.stats.decision import DECISION_RULES, RULE_WORDS, Decision

__all__ = ["DECISION_RULES", "decision_details", "decision_field", "rule_phrase"]


def decision_field(default: str | None) -> Any:
    """The ``decision`` parameter of a family, with its default."""
    shown = f" Default: {default}." if default else " Default: the value of bound (estimate)."
    return pydantic.Field(
        default, description="The decision rule (SPEC 13): estimate (the point estimate against the limit), "
        "interval (confidently within: passes only when the whole confidence interval is within the limit) or "
        "significant (confidently beyond: fails only when the whole interval is beyond the limit)." + shown)


def rule_phrase(rule: str) -> str:
    """How a rule is named in a check's sentence, e.g. 'confidently within: the whole interval ...'."""
    return RULE_WORDS[rule]


def decision_details(decision: Decision) -> dict[str, Any]:
    """What a result records of its decision: the rule and the verdict's sentence."""
    return {"decision": decision.rule, "decision_words": RULE_WORDS[decision.rule], "verdict": decision.sentence}
