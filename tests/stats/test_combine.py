"""The paired difference of two ratio estimates on shared draws (SPEC 8 and 10)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from er_expectations.core.errors import InputError
from er_expectations.stats.combine import difference
from er_expectations.stats.estimator import ratio_estimate


def _by_hand(rows_a, rows_b):
    """SPEC 10 written out over the expanded draws (one entry per draw), plain Python."""
    k = len(rows_a)
    fa, ga = [r[0] for r in rows_a], [r[1] for r in rows_a]
    fb, gb = [r[0] for r in rows_b], [r[1] for r in rows_b]
    ta, tb = sum(fa) / sum(ga), sum(fb) / sum(gb)
    gbar_a, gbar_b = sum(ga) / k, sum(gb) / k
    u = [(f - ta * g) / gbar_a for f, g in zip(fa, ga, strict=True)]
    v = [(f - tb * g) / gbar_b for f, g in zip(fb, gb, strict=True)]
    return ta - tb, math.sqrt(sum((x - y) ** 2 for x, y in zip(u, v, strict=True)) / (k * (k - 1)))


def test_hand_worked_with_repeated_draws():
    # three clusters, the second drawn twice; a cluster absent from release b has f = g = 0
    fa, ga = np.array([1.0, 3.0, 0.0]), np.array([1.0, 6.0, 1.0])
    fb, gb = np.array([1.0, 5.0, 0.0]), np.array([1.0, 6.0, 0.0])
    d = np.array([1, 2, 1])
    a = ratio_estimate(fa, ga, d, bias_adjust=False)
    b = ratio_estimate(fb, gb, d, bias_adjust=False)
    got = difference(a, b, d)
    expanded = [0, 1, 1, 2]
    want_est, want_se = _by_hand([(fa[i], ga[i]) for i in expanded], [(fb[i], gb[i]) for i in expanded])
    assert got.estimate == pytest.approx(want_est, abs=1e-15)
    assert got.std_error == pytest.approx(want_se, rel=1e-12)
    assert got.draws == 4
    assert got.ci_lower < got.estimate < got.ci_upper


def test_identical_releases_differ_by_zero_with_zero_error():
    rng = np.random.default_rng(1)
    g = rng.integers(1, 10, 50).astype(float)
    f = np.minimum(g, rng.integers(0, 10, 50))
    a = ratio_estimate(f, g)
    got = difference(a, a)
    assert got.estimate == 0.0 and got.std_error == 0.0 and got.p_value == 1.0
    assert "zero width" in got.note


def test_paired_se_matches_the_spread_of_repeated_samples():
    """Monte Carlo: the paired SE tracks the true sampling SD; the unpaired one overstates it."""
    rng = np.random.default_rng(7)
    n_pop, k, reps = 3000, 300, 600
    g_a = rng.integers(1, 30, n_pop).astype(float)
    f_a = np.floor(g_a * rng.beta(8, 2, n_pop))
    # release b agrees with a on most clusters and loses a little on a few
    changed = rng.random(n_pop) < 0.1
    g_b = g_a.copy()
    f_b = np.where(changed, np.floor(f_a * 0.7), f_a)
    diffs, ses, naive, cover = [], [], [], 0
    for _ in range(reps):
        idx = rng.integers(0, n_pop, k)
        a = ratio_estimate(f_a[idx], g_a[idx], bias_adjust=False)
        b = ratio_estimate(f_b[idx], g_b[idx], bias_adjust=False)
        dd = difference(a, b)
        diffs.append(dd.estimate)
        ses.append(dd.std_error)
        naive.append(math.hypot(a.std_error, b.std_error))
    truth = f_a.sum() / g_a.sum() - f_b.sum() / g_b.sum()
    for est, se in zip(diffs, ses, strict=True):
        cover += abs(est - truth) <= 1.959964 * se
    sd = float(np.std(diffs, ddof=1))
    assert np.mean(ses) == pytest.approx(sd, rel=0.12)
    assert np.mean(naive) > 2 * sd  # ignoring the pairing is far too wide here
    assert 0.91 <= cover / reps <= 0.98


def test_refuses_estimates_on_different_draws():
    a = ratio_estimate(np.array([1.0, 2.0]), np.array([2.0, 2.0]))
    b = ratio_estimate(np.array([1.0, 2.0, 1.0]), np.array([2.0, 2.0, 1.0]))
    with pytest.raises(InputError, match="same sample rows"):
        difference(a, b)


def test_undefined_side_gives_a_note_not_a_number():
    a = ratio_estimate(np.array([1.0, 2.0]), np.array([2.0, 2.0]))
    b = ratio_estimate(np.array([0.0, 0.0]), np.array([0.0, 0.0]))
    got = difference(a, b)
    assert math.isnan(got.estimate) and "undefined" in got.note
