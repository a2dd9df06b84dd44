"""The decision rule of a threshold check on an estimate, declared once for every family (SPEC 13).

Estimates, changes of an estimate and subgroup gaps all take ``decision``: ``estimate`` (the
point estimate against the limit), ``interval`` (confidently within: the whole interval inside
the limit) or ``significant`` (confidently beyond: fails only when the whole interval is outside
it). Every family has ONE default, :data:`DEFAULT_RULE` (``significant``, SPEC 13: a check says
"beyond the limit" only when its whole confidence interval is beyond it), and says its rule in
the same clause (:func:`rule_clause`). ``interval`` stays the sign-off gate to ask for,
``estimate`` the point estimate; disparity's ``require_significance`` adds Holm's test of no gap,
named as such. The page, the result and the alerts give the verdict in the words of
:func:`er_expectations.stats.decision.decide`, and its status and colour follow it.
"""

from __future__ import annotations

from typing import Any

from great_expectations.compatibility import pydantic

from er_expectations.stats.decision import DECISION_RULES, DEFAULT_RULE, RULE_WORDS, Decision

__all__ = ["DECISION_RULES", "DEFAULT_RULE", "decision_details", "decision_field", "rule_clause", "rule_phrase"]


def decision_field(default: str = DEFAULT_RULE) -> Any:
    """The ``decision`` parameter of a family, with its default (:data:`DEFAULT_RULE`)."""
    shown = f" Default: {default}."
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


def rule_clause(rule: str | None, what: str) -> str:
    """The clause every check's sentence ends with, the same words in every family: how ``rule``
    decides on ``what`` (e.g. 'the change'); ``$level`` is left for the template."""
    rule = rule or DEFAULT_RULE
    if rule == "significant":
        return (f"it fails only when the whole $level confidence interval of {what} is beyond the limit "
                "(confidently beyond)")
    if rule == "interval":
        return (f"it passes only when the whole $level confidence interval of {what} is within the limit "
                "(confidently within)")
    return f"{what} is compared with the limit as estimated (point estimate; $level confidence interval reported)"
