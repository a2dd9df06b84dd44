"""The no-error bound under unequal weights (SPEC 6, issue 28 item 2).

The bound of an error-free sample bounds q = E[g·1{error}]/E[g], the g-weighted share of
clusters with an error. The draws bound the per-draw error chance π; q = π·E[g | error]/E[g]
exceeds π when the clusters with an error weigh more than average. The old bound took Kish's
k* = (Σg)²/Σg², which bounds π (nearly) but not q: under the uniform design the share of
records of a cause that sits on pairs (g = s = 2, mean 1.11) missed in every error-free
sample. The new k* = Σg / max g is the rule of three with the draws counted in units of the
heaviest drawn one; it holds whenever no cluster with an error weighs more than that.

The probabilities below are exact: an error-free sample of a population of singletons and
pairs is described by the number m of pairs among its k draws (binomial), so the chance that
a sample is error-free and its bound misses q is a finite sum over m.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from er_expectations.stats.error_audit import tag_shares
from er_expectations.stats.estimator import ratio_estimate, zero_event_draws, zero_event_interval
from er_expectations.stats.resample import replicate_ratio

ALPHA = 0.05


def kish_bound(g: np.ndarray, d: np.ndarray, level: float = 1 - ALPHA) -> float:
    """The old bound, written from its formula: k* = (Σ d g)² / Σ d g²."""
    k_eff = (d * g).sum() ** 2 / (d * g * g).sum()
    return 1.0 - (1.0 - level) ** (1.0 / k_eff)


def miss_chance(k: int, singles: int, pairs: int, event_pairs: int, bound) -> tuple[float, float, float]:
    """(q, P(error-free), P(error-free and bound(g, d) < q)) under the uniform design.

    The population has ``singles`` singletons and ``pairs`` pairs without an error and
    ``event_pairs`` pairs with one; the share is the share of records (g = s·w, w = 1)."""
    clusters = singles + pairs + event_pairs
    q = 2 * event_pairs / (singles + 2 * pairs + 2 * event_pairs)
    a, b = pairs / clusters, singles / clusters  # per-draw chance of a clean pair, a singleton
    free = (a + b) ** k
    miss = 0.0
    for m in range(k + 1):
        logp = (math.lgamma(k + 1) - math.lgamma(m + 1) - math.lgamma(k - m + 1)
                + (m * math.log(a) if m else 0.0) + (k - m) * math.log(b))
        p = math.exp(logp)
        if p < 1e-18:  # all such m together weigh less than 1e-15
            continue
        g = np.array([1.0, 2.0])
        d = np.array([k - m, m], dtype=np.float64)
        if bound(g, d) < q:
            miss += p
    return q, free, miss


def new_bound(g: np.ndarray, d: np.ndarray) -> float:
    f = np.zeros_like(g)
    res = ratio_estimate(f, g, d, zero_event=True, bounds=(0.0, 1.0))
    assert res.interval == "zero_event" and res.ci_lower == 0.0
    return res.ci_upper


def test_rldata_like_cause_on_pairs_missed_before_and_covered_now():
    # RLdata10000's shape: 8,000 singletons and 1,000 pairs; a cause on 25 pairs has a records
    # share of 50/10,000 = 0.005 (the issue: truths 0.0050 and 0.0048 at 800 draws).
    q, free, old_miss = miss_chance(800, 8000, 975, 25, kish_bound)
    assert q == pytest.approx(0.005)
    assert free == pytest.approx((1 - 25 / 9000) ** 800)
    # every error-free sample missed: the old bound is ≈ 0.0040 (the number)
    assert old_miss == pytest.approx(free, rel=1e-9) and old_miss > 0.10
    g, d = np.array([1.0, 2.0]), np.array([720.0, 80.0])
    assert kish_bound(g, d) == pytest.approx(0.00402, abs=5e-5)
    _, _, new_miss = miss_chance(800, 8000, 975, 25, new_bound)
    assert new_miss < 1e-12
    # the new bound of the typical sample: 1 − 0.05^(M/k), M = 2/1.1 = max g / mean g
    assert new_bound(g, d) == pytest.approx(1 - 0.05 ** ((2 / 1.1) / 800), rel=1e-12)
    assert new_bound(g, d) == pytest.approx(0.00679, abs=5e-5)


@pytest.mark.parametrize(("k", "singles", "pairs"), [(800, 8000, 1000), (200, 8000, 1000), (400, 500, 1500),
                                                      (50, 900, 100)])
def test_worst_case_over_the_cause_size_is_at_most_alpha(k, singles, pairs):
    # the chance that a sample is error-free and its bound misses q, over every number of
    # pairs that carry the cause: the old bound passes α, the new one never does
    old, new = [], []
    clusters = singles + pairs
    for e in range(1, min(pairs, 10 * clusters // k + 2)):  # beyond, P(error-free) < e^-10
        old.append(miss_chance(k, singles, pairs - e, e, kish_bound)[2])
        new.append(miss_chance(k, singles, pairs - e, e, new_bound)[2])
    assert max(new) <= ALPHA
    assert max(old) > ALPHA


def test_equal_weights_keep_the_exact_rule_of_three():
    # the size design's records share (g = s·(1/s) = 1) and every constant g: unchanged
    for k in (2, 10, 400, 800):
        g, d = np.full(3, 7.0), np.array([k - 2, 1, 1], dtype=np.float64)
        assert new_bound(g, d) == pytest.approx(1 - 0.05 ** (1 / k), rel=1e-12)
        assert new_bound(g, d) == pytest.approx(kish_bound(g, d), rel=1e-12)
    rule = 1 - 0.05 ** (1 / 800)
    assert rule == pytest.approx(0.0037377, abs=1e-7)


def test_the_audit_shares_use_the_bound():
    # uniform design (w = 1): 90 singleton draws and 10 pair draws, no error, no tag
    size = np.array([1.0, 2.0])
    res = tag_shares(size, np.ones(2), np.array([90.0, 10.0]), np.array([False, False]),
                     {"typo": np.array([False, False])})["typo"]
    records = res["records"]
    assert records.interval == "zero_event"
    # k* = Σ d g / max g = (90 + 20)/2 = 55
    assert records.ci_upper == pytest.approx(1 - 0.05 ** (1 / 55), rel=1e-12)
    assert "55.0 effective draws" in records.note
    # the entity share has g = w = 1: the plain rule of three over 100 draws
    assert res["entities"].ci_upper == pytest.approx(1 - 0.05 ** (1 / 100), rel=1e-12)


def test_replicates_use_the_same_bound():
    # the vectorised estimator of simulate/bootstrap gives the single estimator's bound
    rng = np.random.default_rng(3)
    G = rng.choice([1.0, 2.0, 5.0], size=(4, 30))
    rep = replicate_ratio(np.zeros_like(G), G, bias_adjust=True, ci_level=0.95, bounds=(0.0, 1.0), zero_event=True)
    for row, hi in zip(G, rep.ci_upper, strict=True):
        assert hi == pytest.approx(new_bound(row, np.ones_like(row)), rel=1e-12)


# -- properties ------------------------------------------------------------------------------

weights = st.lists(st.floats(min_value=1e-3, max_value=1e3, allow_nan=False), min_size=2, max_size=30)
counts = st.integers(min_value=1, max_value=20)


@settings(max_examples=200, deadline=None)
@given(weights, st.data())
def test_bound_is_a_share_and_never_below_the_old_one(g, data):
    g = np.asarray(g)
    d = np.asarray(data.draw(st.lists(counts, min_size=len(g), max_size=len(g))), dtype=np.float64)
    new = new_bound(g, d)
    assert 0.0 < new <= 1.0
    # Σg/max g ≤ (Σg)²/Σg² (Σg² ≤ max g·Σg): the new bound only widens where g varies
    assert new >= kish_bound(g, d) * (1 - 1e-12)
    assert zero_event_draws(g, d) <= d.sum() * (1 + 1e-12)


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=1e-3, max_value=1e3), st.lists(counts, min_size=2, max_size=30))
def test_constant_weights_equal_the_old_bound(c, d):
    g = np.full(len(d), c)
    d = np.asarray(d, dtype=np.float64)
    assert new_bound(g, d) == pytest.approx(kish_bound(g, d), rel=1e-9)
    assert zero_event_draws(g, d) == pytest.approx(d.sum(), rel=1e-12)


@settings(max_examples=200, deadline=None)
@given(weights, st.data(), st.integers(min_value=2, max_value=5))
def test_more_draws_give_a_smaller_bound(g, data, factor):
    g = np.asarray(g)
    d = np.asarray(data.draw(st.lists(counts, min_size=len(g), max_size=len(g))), dtype=np.float64)
    base = new_bound(g, d)
    # every draw repeated: the same weights, `factor` times the draws
    assert new_bound(g, d * factor) < base
    # one more draw of any weight up to the heaviest drawn one
    extra = data.draw(st.floats(min_value=1e-3, max_value=float(g.max())))
    assert new_bound(np.append(g, extra), np.append(d, 1.0)) < base


def test_note_states_the_assumption():
    lo, hi, why = zero_event_interval(np.array([1.0, 2.0]), np.array([90.0, 10.0]), ci_level=0.95, at_one=False)
    assert hi == pytest.approx(1 - 0.05 ** (1 / 55), rel=1e-12)
    assert "55.0 effective draws" in why
    assert "heaviest" in why
