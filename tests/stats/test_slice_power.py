"""Power of the slice search against a planted slice (SPEC 12.2 "Power", issue 28): the planted
rates by hand, the words, the detection rule, and the number a page shows (planted in one
sample) against a brute-force simulation that draws fresh benchmarks from a population whose
slice is real and runs the search end to end from the records."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from er_expectations.analysis.slices import cluster_features, slice_inputs
from er_expectations.core.errors import InputError
from er_expectations.engines.pandas.release import PandasRelease
from er_expectations.stats.slice_power import (
    SlicePower,
    check_power_options,
    found_planted,
    how_often,
    plant_errors,
    planted_rates,
    slice_power,
)
from er_expectations.stats.slices import Condition, Features, search_slices


def test_words_for_a_chance():
    assert how_often(0.26) == "about 1 time in 4"
    assert how_often(0.665) == "about 2 times in 3"
    assert how_often(0.10) == "about 1 time in 10"
    assert how_often(0.5) == "about 1 time in 2"
    assert how_often(0.97) == "almost always"
    assert how_often(0.01) == "almost never"


def test_planted_rates_keep_the_rate_and_the_lift():
    for p, s, lift in ((0.15, 0.2, 3.0), (0.02, 0.1, 5.0), (0.3, 0.5, 2.0)):
        r_s, r_r, note = planted_rates(p, s, lift)
        assert note == ""
        assert math.isclose(s * r_s + (1 - s) * r_r, p, rel_tol=1e-12)
        assert math.isclose(r_s / r_r, lift, rel_tol=1e-12)
    # 20 % at 3x of 0.5: the rest 0.5/1.4 = 0.357, the slice 1.07 > 1
    r_s, _, note = planted_rates(0.5, 0.2, 3.0)
    assert math.isnan(r_s) and "1.07" in note and "above 1" in note
    assert "no error" in planted_rates(0.0, 0.2, 3.0)[2]


def test_planted_errors_have_the_planted_rates():
    rng = np.random.default_rng(5)
    n = 200_000
    member, y = plant_errors(rng, n, np.array([1.0]), share=0.2, slice_rate=0.3, rest_rate=0.1)
    assert abs(member.mean() - 0.2) < 4 * math.sqrt(0.16 / n)
    assert abs(y[member].mean() - 0.3) < 4 * math.sqrt(0.21 / member.sum())
    assert abs(y[~member].mean() - 0.1) < 4 * math.sqrt(0.09 / (~member).sum())
    # the magnitudes come from the pool: OCE-like values 1, 2, 5 in equal parts
    _, y = plant_errors(rng, n, np.array([1.0, 2.0, 5.0]), share=0.2, slice_rate=0.3, rest_rate=0.1)
    assert set(np.unique(y)) == {0.0, 1.0, 2.0, 5.0}


def test_options_are_checked():
    assert check_power_options(0.2, 3, 200) == (0.2, 3.0, 200)
    for bad, word in (((0.0, 3, 200), "slice_share"), ((0.7, 3, 200), "slice_share"), ((0.2, 1.0, 200), "slice_lift"),
                      ((0.2, math.inf, 200), "slice_lift"), ((0.2, 3, 5), "slice_reps"), ((0.2, 3, True), "slice_reps")):
        with pytest.raises(InputError, match=word):
            check_power_options(*bad)


def test_detection_needs_a_significant_slice_mostly_planted():
    class R:  # a search result with one significant slice "x in {a}"
        def __init__(self, cond):
            self.significant = (type("S", (), {"conditions": (cond,)})(),)

    feats = Features(("x",), (False,), (np.array([0, 0, 0, 1, 1, 1]),), (("a", "b"),))
    cond = Condition("x", "in", categories=("a",))
    g, d = np.ones(6), np.array([1, 1, 1, 1, 1, 1])
    assert found_planted(R(cond), np.array([True, True, False, False, False, False]), g, d, feats)  # 2 of 3
    assert not found_planted(R(cond), np.array([True, False, False, True, True, True]), g, d, feats)  # 1 of 3
    # weights count: the one planted entity weighs more than the other two together
    assert found_planted(R(cond), np.array([True, False, False, False, False, False]), np.array([3.0, 1, 1, 1, 1, 1]),
                         d, feats)


def test_no_power_without_errors_or_with_an_impossible_lift():
    feats = Features(("s",), (True,), (np.arange(200, dtype=float),), ((),))
    out = slice_power(np.zeros(200), np.ones(200), np.ones(200, dtype=np.int64), np.arange(200), feats)
    assert isinstance(out, SlicePower) and not out.defined and "no error" in out.note
    assert "not computed" in out.sentence()
    y = (np.arange(200) % 2).astype(float)  # rate 0.5: 3x on a fifth is impossible
    out = slice_power(y, np.ones(200), np.ones(200, dtype=np.int64), np.arange(200), feats)
    assert not out.defined and "above 1" in out.note
    with pytest.raises(InputError, match="non-negative"):
        slice_power(-y, np.ones(200), np.ones(200, dtype=np.int64), np.arange(200), feats)


# -- the page's number against brute force ---------------------------------------------------------

N_ENTITIES = 100_000
SHARE, LIFT, REST = 0.2, 3.0, 0.06  # the slice's error chance 0.18; overall 0.084


def _population(seed: int = 7):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 10, N_ENTITIES)  # every entity can have an error (a record split off)
    country = rng.choice(np.array(["US", "JP", "DE", "FR"]), N_ENTITIES)
    segment = np.where(rng.random(N_ENTITIES) < SHARE, "A", "B")
    error = rng.random(N_ENTITIES) < np.where(segment == "A", LIFT * REST, REST)
    return sizes, np.cumsum(sizes), country, segment, error


def _benchmark(pop, rng, draws: int) -> pd.DataFrame:
    """The records of the entities of a size-proportional benchmark; an erroneous entity has one
    record split off into a predicted cluster of its own."""
    sizes, cum, country, segment, error = pop
    picked = np.searchsorted(cum, rng.integers(0, int(cum[-1]), draws), side="right")
    labels, counts = np.unique(picked, return_counts=True)
    s = sizes[labels]
    true = np.repeat(labels, s)
    pred = true.copy()
    first = np.r_[0, np.cumsum(s)[:-1]]
    err = error[labels]
    pred[first[err]] = -1 - np.arange(int(err.sum()))
    return pd.DataFrame({"pred": pred, "bench": true, "d": np.repeat(counts, s), "country": country[true],
                         "segment": segment[true]})


def _sample(df: pd.DataFrame, features: list[str]):
    sample = PandasRelease(df, prediction="pred").benchmark_sample(reference="bench", draws="d")
    feats, _ = cluster_features(df, sample, prediction="pred", reference="bench", features=features)
    y, g = slice_inputs(sample, "EI", "entity")
    return sample, feats, y, g


def test_power_in_one_sample_matches_brute_force():
    """The brute force draws 240 benchmarks of 500 draws from a population whose slice (20 % of the
    entities, 3x the error chance) is real and counts how often the search finds it; the page's
    number plants a slice in one benchmark and reruns the search, at that benchmark's estimated
    error rate, so it varies from benchmark to benchmark (here from about 0.05 to 0.5: the rate's
    own error). Averaged over 10 benchmarks they must agree (SE of the difference about 0.05)."""
    pop = _population()
    rng = np.random.default_rng(11)
    draws = 500
    hits = 0
    brute_reps = 240
    for r in range(brute_reps):
        df = _benchmark(pop, rng, draws)
        sample, feats, y, g = _sample(df, ["country", "segment"])
        res = search_slices(y, g, sample.draws, sample.labels, feats, seed=r, min_draws=30)
        segment = feats.column("segment")
        member = np.asarray(segment[1]) == segment[2].index("A")
        hits += found_planted(res, member, g, sample.draws, feats)
    brute = hits / brute_reps
    conditional = []
    for _ in range(10):
        df = _benchmark(pop, rng, draws)
        sample, feats, y, g = _sample(df, ["country"])  # the user's features: the slice is not among them
        out = slice_power(y, g, sample.draws, sample.labels, feats, share=SHARE, lift=LIFT, reps=60, seed=3,
                          min_draws=30)
        assert out.defined and out.draws == draws
        conditional.append(out.power)
    assert 0.15 < brute < 0.85, brute  # a setting where the power is neither 0 nor 1: the test can see a bias
    assert abs(float(np.mean(conditional)) - brute) < 0.12, (conditional, brute)
