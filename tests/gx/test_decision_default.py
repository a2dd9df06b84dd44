"""One decision rule for "beyond a limit" (issue 29 item 2, SPEC 13).

Registry-style: every expectation class of er-expectations is visited; each one that compares
an estimate (a value with a confidence interval: it has ``ci_level``) with a limit must take
``decision`` with the default ``significant`` (fail only when the whole interval is beyond the
limit), and say it in the same clause on its page. The other rules stay selectable and named.
"""

from __future__ import annotations

import pytest

import er_expectations.gx.expectations as registry
from er_expectations.gx.expectations.decisions import rule_clause
from er_expectations.stats.decision import DEFAULT_RULE, decide

#: Parameters that state a limit on what a check compares.
LIMITS = {"min_value", "max_value", "max_change", "max_relative_change", "max_disparity", "max_rate", "max_lift"}
#: Checks with an interval that are not "an estimate against a limit", and why.
NOT_A_LIMIT = {
    # the prediction's EXACT statistic against the interval of the estimated true value: the
    # interval is the region, there is no limit to be beyond
    "ExpectStatisticToMatchBenchmarkEstimate",
}


def _classes():
    return [getattr(registry, name) for name in registry.__all__]


def _estimate_vs_limit():
    found = []
    for cls in _classes():
        fields = set(cls.__fields__)
        if "ci_level" in fields and fields & LIMITS and cls.__name__ not in NOT_A_LIMIT:
            found.append(cls)
    return found


def test_the_registry_is_not_empty_and_holds_every_family():
    names = {cls.__name__ for cls in _estimate_vs_limit()}
    # estimated metrics (10), change of an estimate, disparity, error cause, slices
    assert len(names) == 14, sorted(names)
    assert {"ExpectEstimatedPairwisePrecisionToBeBetween", "ExpectEstimateChangeToBeBelow",
            "ExpectSubgroupDisparityToBeBelow", "ExpectErrorCauseRateToBeBelow",
            "ExpectNoErrorSliceAbove"} <= names


@pytest.mark.parametrize("cls", _estimate_vs_limit(), ids=lambda c: c.__name__)
def test_every_estimate_against_a_limit_defaults_to_the_one_rule(cls):
    assert DEFAULT_RULE == "significant"
    field = cls.__fields__.get("decision")
    assert field is not None, f"{cls.__name__} compares an estimate with a limit but takes no decision rule"
    assert field.default == DEFAULT_RULE


_KWARGS = {
    "ExpectEstimateChangeToBeBelow": {"metric": "pairwise_recall", "max_change": 0.03},
    "ExpectSubgroupDisparityToBeBelow": {"metric": "pairwise_f", "max_disparity": 0.05, "group_column": "g"},
    "ExpectErrorCauseRateToBeBelow": {"tag": "t", "max_rate": 0.1},
}


@pytest.mark.parametrize("cls", [c for c in _estimate_vs_limit() if c.__name__ != "ExpectNoErrorSliceAbove"],
                         ids=lambda c: c.__name__)
def test_the_page_says_the_rule_in_the_same_words(cls):
    """Without ``decision`` the sentence states the default rule's clause, word for word; with
    another rule, that rule's clause (named, still selectable)."""
    base = {"prediction_column": "p", "min_value": 0.5, **_KWARGS.get(cls.__name__, {})}
    template, _ = cls._sentence(dict(base))
    assert "beyond the limit (confidently beyond)" in template
    assert any(rule_clause(None, what) in template for what in ("the estimate", "the change", "each gap", "the share"))
    template, _ = cls._sentence({**base, "decision": "interval"})
    assert "within the limit (confidently within)" in template
    template, _ = cls._sentence({**base, "decision": "estimate"})
    assert "point estimate" in template


def test_the_bound_parameter_still_selects_the_older_rules():
    cls = registry.ExpectEstimatedPairwisePrecisionToBeBetween
    assert cls(prediction_column="p", reference_column="t", min_value=0.5).rule() == "significant"
    assert cls(prediction_column="p", reference_column="t", min_value=0.5, bound="interval").rule() == "interval"
    assert cls(prediction_column="p", reference_column="t", min_value=0.5, decision="estimate").rule() == "estimate"
    with pytest.raises(Exception, match="disagree"):
        cls(prediction_column="p", reference_column="t", min_value=0.5, bound="interval", decision="estimate")


def test_significant_is_beyond_the_limit_not_different_from_zero():
    """The issue's example: a gap of −0.056 with interval −0.099 to −0.014 against ±0.05 is
    significantly different from zero but NOT beyond the limit: it passes under the one rule."""
    found = decide("significant", estimate=-0.056, lower=-0.099, upper=-0.014, low=-0.05, high=0.05,
                   symmetric=True, what="the gap of api")
    assert found.passed and "not confidently beyond" in found.sentence
    beyond = decide("significant", estimate=-0.11, lower=-0.15, upper=-0.07, low=-0.05, high=0.05,
                    symmetric=True, what="the gap of api")
    assert not beyond.passed and "beyond ±0.050 (confidently beyond)" in beyond.sentence
