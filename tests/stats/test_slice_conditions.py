"""One-feature conditions merged into their simplest form (SPEC 12.2, issue 28): hand-worked
descriptions, and a property test that the merged conjunction selects exactly the rows of the
original on random tables (unknown values, categories the conditions name but the table lacks)."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from er_expectations.stats.slice_conditions import Condition, Features, describe, simplify

UNIVERSE = ("A", "B", "C", "D", "E")


def _features(size: np.ndarray, source: list[str | None], cats: tuple[str, ...] = UNIVERSE) -> Features:
    codes = np.array([-1 if s is None else cats.index(s) for s in source], dtype=np.int64)
    return Features(("size", "source"), (True, False), (size, codes), ((), cats))


def _and(conditions, features) -> np.ndarray:
    m = np.ones(features.size, dtype=bool)
    for c in conditions:
        m &= c.mask(features)
    return m


FEATS = _features(np.array([1.0, 3, 5, 12, np.nan, 7]), ["A", "C", "E", None, "B", "C"])


def test_the_issues_example_and_friends():
    conds = (Condition("source", "not in", categories=("E",)), Condition("source", "in", categories=("C",)))
    assert describe(simplify(conds, FEATS)) == "source in {C}"
    conds = (Condition("size", "≥", 3.0), Condition("size", "<", 12.0), Condition("size", "≥", 5.0))
    assert describe(simplify(conds, FEATS)) == "5 ≤ size < 12"
    conds = (Condition("size", "<", 12.0, unknown=True), Condition("size", "<", 6.0, unknown=True))
    assert describe(simplify(conds, FEATS)) == "(size < 6 or unknown)"
    conds = (Condition("size", "<", 12.0, unknown=True), Condition("size", "≥", 2.0))
    assert describe(simplify(conds, FEATS)) == "2 ≤ size < 12"  # unknown only when every part admits it
    conds = (Condition("source", "not in", categories=("E",)), Condition("source", "not in", categories=("A", "B")))
    assert describe(simplify(conds, FEATS)) == "source not in {A, B, E}"
    # a feature with one condition keeps it; other features keep their order
    conds = (Condition("source", "in", categories=("A", "C")), Condition("size", "≥", 3.0),
             Condition("source", "not in", categories=("A",)))
    assert describe(simplify(conds, FEATS)) == "source in {C} and size ≥ 3"
    assert simplify((Condition("size", "≥", 3.0),), FEATS) == (Condition("size", "≥", 3.0),)


def test_contradictions():
    conds = (Condition("size", "≥", 12.0), Condition("size", "<", 5.0), Condition("source", "in", categories=("A",)))
    out = simplify(conds, FEATS)
    assert [c.op for c in out] == ["none"] and not _and(out, FEATS).any()
    assert describe(out) == "no value of size (the conditions on it contradict)"
    conds = (Condition("size", "≥", 12.0, unknown=True), Condition("size", "<", 5.0, unknown=True))
    assert describe(simplify(conds, FEATS)) == "size unknown"
    conds = (Condition("source", "in", categories=("A",), unknown=True),
             Condition("source", "not in", categories=("A",), unknown=True))
    out = simplify(conds, FEATS)
    assert describe(out) == "source unknown" and _and(out, FEATS).tolist() == [False, False, False, True, False, False]


def _condition(draw, feature: str) -> Condition:
    unknown = draw(st.booleans())
    if feature == "size":
        op = draw(st.sampled_from(["≥", "<", "range"]))
        t = float(draw(st.integers(0, 14)))
        upper = t + float(draw(st.integers(-2, 8))) if op == "range" else math.nan
        return Condition("size", op, t, unknown=unknown, upper=upper)
    cats = tuple(sorted(draw(st.sets(st.sampled_from(UNIVERSE), min_size=1, max_size=4))))
    return Condition("source", draw(st.sampled_from(["in", "not in"])), categories=cats, unknown=unknown)


@st.composite
def _case(draw):
    n = draw(st.integers(1, 40))
    present = tuple(sorted(draw(st.sets(st.sampled_from(UNIVERSE), min_size=1))))  # the table may lack some
    size = np.array([float(x) if x is not None else np.nan
                     for x in draw(st.lists(st.one_of(st.none(), st.integers(0, 15)), min_size=n, max_size=n))])
    source = draw(st.lists(st.one_of(st.none(), st.sampled_from(present)), min_size=n, max_size=n))
    other = draw(st.lists(st.one_of(st.none(), st.sampled_from(UNIVERSE)), min_size=n, max_size=n))
    conds = [_condition(draw, draw(st.sampled_from(["size", "source"]))) for _ in range(draw(st.integers(1, 5)))]
    return _features(size, source, present), _features(size, other), tuple(conds)


@settings(max_examples=250, deadline=None)
@given(_case())
def test_the_merged_conditions_select_exactly_the_same_rows(case):
    features, other, conds = case
    out = simplify(conds, features)
    assert np.array_equal(_and(out, features), _and(conds, features)), (describe(conds), describe(out))
    assert len({c.feature for c in out}) == len(out)  # one condition per feature
    # exact for any value, not only those of the table: the same on a table with other categories
    assert np.array_equal(_and(out, other), _and(conds, other))
    assert simplify(out, features) == out  # simplest already
