"""The three decision rules of SPEC 13, worked by hand and as properties.

For an estimate inside its own interval the rules are nested: confidently within ⇒ the point
estimate within ⇒ not confidently beyond. Hypothesis checks that on any numbers; the table
checks each rule's verdict and words on cases worked out by hand.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from er_expectations.core.errors import InputError
from er_expectations.stats.decision import decide


@pytest.mark.parametrize("rule, est, lo, hi, passed, words", [
    # an estimate of at least 0.75: estimate 0.80, interval 0.72 to 0.88
    ("estimate", 0.80, 0.72, 0.88, True, "the estimate 0.800 is at least 0.750"),
    ("interval", 0.80, 0.72, 0.88, False, "the 95 % interval 0.720 to 0.880 reaches below 0.750 "
                                          "(not confidently within, though the estimate 0.800 is at least 0.750)"),
    ("significant", 0.80, 0.72, 0.88, True, "the estimate 0.800 is at least 0.750"),
    # estimate 0.70, interval 0.66 to 0.74: all below 0.75
    ("significant", 0.70, 0.66, 0.74, False, "the whole 95 % interval 0.660 to 0.740 is below 0.750 "
                                             "(confidently beyond)"),
    # estimate 0.72, interval 0.60 to 0.84: below, but the interval reaches back
    ("significant", 0.72, 0.60, 0.84, True, "the estimate 0.720 is below 0.750, but the 95 % interval 0.600 to "
                                            "0.840 reaches back inside: sampling error can explain it "
                                            "(not confidently beyond)"),
    ("interval", 0.80, 0.76, 0.88, True, "the whole 95 % interval 0.760 to 0.880 is at least 0.750 "
                                         "(confidently within)"),
])
def test_rules_by_hand(rule, est, lo, hi, passed, words):
    d = decide(rule, estimate=est, lower=lo, upper=hi, low=0.75)
    assert d.passed is passed and d.sentence == words, d.sentence


def test_a_change_within_plus_minus_a_limit():
    d = decide("significant", estimate=-0.08, lower=-0.12, upper=-0.06, low=-0.05, high=0.05, symmetric=True,
               what="the change")
    assert not d.passed and d.sentence == "the whole 95 % interval -0.120 to -0.060 is beyond ±0.050 (confidently beyond)"
    d = decide("estimate", estimate=0.03, lower=-0.01, upper=0.07, low=-0.05, high=0.05, symmetric=True,
               what="the change")
    assert d.passed and d.sentence == "the change 0.030 is within ±0.050"


def test_without_an_interval():
    assert not decide("interval", estimate=0.9, low=0.75).passed
    d = decide("significant", estimate=0.7, low=0.75)
    assert not d.passed and d.sentence.startswith("no interval, so decided on the point estimate")


def test_strict_bounds_and_bad_input():
    assert not decide("estimate", estimate=0.75, low=0.75, strict_low=True).passed
    assert decide("estimate", estimate=0.75, low=0.75).passed
    with pytest.raises(InputError, match="decision: expected one of estimate, interval, significant"):
        decide("point", estimate=0.5)
    with pytest.raises(InputError, match="undefined"):
        decide("estimate", estimate=float("nan"))


@given(st.floats(-2, 2), st.floats(0, 1), st.floats(0, 1), st.one_of(st.none(), st.floats(-1, 1)),
       st.one_of(st.none(), st.floats(0, 1)))
def test_the_rules_are_nested(est, below, above, low, width):
    high = None if low is None or width is None else low + width
    lower, upper = est - below, est + above
    within = decide("interval", estimate=est, lower=lower, upper=upper, low=low, high=high).passed
    point = decide("estimate", estimate=est, lower=lower, upper=upper, low=low, high=high).passed
    not_beyond = decide("significant", estimate=est, lower=lower, upper=upper, low=low, high=high).passed
    assert (not within or point) and (not point or not_beyond)

