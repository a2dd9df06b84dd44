"""Differences that never collapse to a point (SPEC 8 and 10, issue 21 item 1): hand-worked
intervals, properties, and the coverage of a small but nonzero difference by simulation."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from er_expectations.core.errors import InputError
from er_expectations.stats import ratio_estimate
from er_expectations.stats.combine import difference
from er_expectations.stats.differences import bootstrap_difference
from er_expectations.stats.intervals import mover_interval, mover_p_value, no_change_bound
from er_expectations.stats.joint import JointBootstrap

Z95 = NormalDist().inv_cdf(0.975)


def _domains(f, g, member):
    """Domain estimators of a group and of the rest on the same rows (SPEC 8)."""
    pi = np.asarray(member, dtype=float)
    a = ratio_estimate(f * pi, g * pi, zero_event=True)
    b = ratio_estimate(f * (1 - pi), g * (1 - pi), zero_event=True)
    return a, b


# -- both sides without an error ------------------------------------------------------------------


def test_gap_of_two_error_free_domains_is_minus_q_group_to_q_rest():
    # 10 draws in the group, 30 in the rest, every f = g = 1: both estimates are 1 with SE 0
    g = np.ones(40)
    member = np.r_[np.ones(10), np.zeros(30)]
    a, b = _domains(g, g, member)
    assert a.interval == b.interval == "zero_event"
    gap = difference(a, b)
    # each side's bound at one-sided 97.5 %: the lower tail of the gap is θ_G's, the upper θ_rest's
    assert gap.estimate == 0.0 and gap.std_error == 0.0
    assert gap.ci_lower == pytest.approx(-(1 - 0.025 ** (1 / 10)), rel=1e-12)
    assert gap.ci_upper == pytest.approx(1 - 0.025 ** (1 / 30), rel=1e-12)
    assert gap.ci_lower == pytest.approx(-0.30849, abs=1e-5) and gap.ci_upper == pytest.approx(0.11570, abs=1e-5)
    assert gap.zero_event and gap.interval == "zero_event" and gap.p_value == 1.0
    assert "no draw shows an error" in gap.note and "97.5 %" in gap.note
    # at 90 %: one-sided 95 % bounds
    gap90 = difference(a, b, ci_level=0.9)
    assert gap90.ci_lower == pytest.approx(-(1 - 0.05 ** (1 / 10)), rel=1e-12)


def test_gap_of_two_domains_where_nothing_counts_is_q_the_other_way():
    # every f = 0 (a rate of events, none drawn): each side [0, q]
    g = np.ones(20)
    member = np.r_[np.ones(5), np.zeros(15)]
    a, b = _domains(np.zeros(20), g, member)
    gap = difference(a, b)
    assert (gap.ci_lower, gap.ci_upper) == (pytest.approx(-(1 - 0.025 ** (1 / 15)), rel=1e-12),
                                            pytest.approx(1 - 0.025 ** (1 / 5), rel=1e-12))


def test_one_error_free_side_enters_by_its_bound_mover_by_hand():
    # group: 20 error-free draws; rest: 40 draws with errors
    rng = np.random.default_rng(2)
    g = rng.integers(1, 4, 60).astype(float)
    f = g.copy()
    f[20:][rng.random(40) < 0.3] = 0.0
    member = np.r_[np.ones(20), np.zeros(40)]
    a, b = _domains(f, g, member)
    assert a.interval == "zero_event" and b.interval == "linearization"
    gap = difference(a, b)
    q = 1 - 0.025 ** (g[:20].max() / g[:20].sum())  # the group's k* = Σ g / max g (SPEC 6)
    d = a.estimate - b.estimate
    # the group's influence is 0 on every draw, so r = 0 and the rest's limits are θ̂ ± z·SE
    assert gap.ci_lower == pytest.approx(d - math.hypot(q, Z95 * b.std_error), rel=1e-10)
    assert gap.ci_upper == pytest.approx(d + Z95 * b.std_error, rel=1e-10)
    assert gap.interval == "zero_event"
    # the paired SE alone (the old interval) ignored the group's uncertainty: it was narrower
    assert gap.std_error == pytest.approx(b.std_error, rel=1e-12)
    assert gap.ci_lower < d - Z95 * gap.std_error


def test_linearised_differences_without_a_zero_event_side_are_the_paired_normal_interval():
    rng = np.random.default_rng(5)
    g = rng.integers(1, 5, 50).astype(float)
    f = np.minimum(g, rng.integers(0, 5, 50))
    a, b = _domains(f, g, rng.random(50) < 0.4)
    gap = difference(a, b)
    u, v = a.influence, b.influence
    se = math.sqrt(((u - v) ** 2).sum() / (50 * 49))
    assert gap.std_error == pytest.approx(se, rel=1e-12)
    assert (gap.ci_lower, gap.ci_upper) == pytest.approx((gap.estimate - Z95 * se, gap.estimate + Z95 * se),
                                                         rel=1e-12)
    assert gap.p_value == pytest.approx(math.erfc(abs(gap.estimate) / se / math.sqrt(2)), rel=1e-12)
    assert gap.interval == "linearization" and not gap.zero_event


def test_equal_constant_ratios_give_no_interval_rather_than_a_point():
    # every draw of both sides has f/g = 1/2 (no error bound applies: f < g everywhere)
    g = np.full(12, 2.0)
    a, b = _domains(g / 2, g, np.r_[np.ones(6), np.zeros(6)])
    gap = difference(a, b)
    assert gap.std_error == 0.0 and math.isnan(gap.ci_lower) and math.isnan(gap.ci_upper)
    assert gap.interval == "none" and "zero width" in gap.note and gap.p_value == 1.0


# -- MOVER ------------------------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(ta=st.floats(-5, 5), tb=st.floats(-5, 5), sa=st.floats(0, 3), sb=st.floats(0, 3), r=st.floats(-1, 1),
       level=st.floats(0.5, 0.999))
def test_mover_with_symmetric_limits_is_the_paired_normal_interval(ta, tb, sa, sb, r, level):
    z = NormalDist().inv_cdf(0.5 + level / 2)
    lo, hi = mover_interval(ta - tb, ta - z * sa, ta + z * sa, ta, tb - z * sb, tb + z * sb, tb, correlation=r)
    half = z * math.sqrt(max(sa * sa + sb * sb - 2 * r * sa * sb, 0.0))
    assert float(lo) == pytest.approx(ta - tb - half, abs=1e-9)
    assert float(hi) == pytest.approx(ta - tb + half, abs=1e-9)


@settings(max_examples=100, deadline=None)
@given(d=st.floats(-0.5, 0.5), s=st.floats(1e-4, 0.3), skew=st.floats(0.2, 5.0), level=st.floats(0.6, 0.995))
def test_p_value_and_interval_never_disagree(d, s, skew, level):
    def limits(lvl):
        z = NormalDist().inv_cdf(0.5 + lvl / 2)
        return d - z * s * skew, d + z * s

    p = mover_p_value(limits)
    lo, hi = limits(level)
    excludes = lo > 0 or hi < 0
    if abs(p - (1 - level)) > 1e-9:  # away from the boundary the two must agree exactly
        assert (p < 1 - level) == excludes


# -- changes without a changed draw -----------------------------------------------------------------------


def test_no_change_bound_hand_worked():
    b = no_change_bound(np.ones(50), None, ci_level=0.95)
    assert b.half_width == pytest.approx(1 - 0.05 ** (1 / 50), rel=1e-14)
    assert b.half_width == pytest.approx(0.05815, abs=1e-5)  # ≈ 3/50: the rule of three
    # unequal h: k* = Σ d h / max h = (1 + 2·2 + 3) / 3 = 8 / 3 (Kish's 64/18 = 3.6 bounded the
    # per-draw chance of a change, not the h-weighted share: issue 28)
    b = no_change_bound(np.array([1.0, 2.0, 3.0, 0.0]), np.array([1, 2, 1, 5]), ci_level=0.9)
    assert b.effective_draws == pytest.approx(8 / 3, rel=1e-14)
    assert b.half_width == pytest.approx(1 - 0.1 ** (3 / 8), rel=1e-14)
    assert "2.7 effective draws" in b.note


def test_identical_releases_get_the_no_change_interval_not_a_point():
    rng = np.random.default_rng(1)
    g = rng.integers(1, 10, 50).astype(float)
    f = np.minimum(g, rng.integers(0, 10, 50))
    a = ratio_estimate(f, g)
    bound = no_change_bound(g, None, ci_level=0.95)
    ch = difference(a, a, comparison="releases", unchanged=bound)
    assert ch.estimate == 0.0 and ch.std_error == 0.0 and ch.p_value == 1.0
    assert (ch.ci_lower, ch.ci_upper) == (-bound.half_width, bound.half_width) and ch.zero_event
    assert "no drawn cluster changes" in ch.note
    # without the bound the difference says it cannot give an interval (it is not a point either)
    bare = difference(a, a)
    assert math.isnan(bare.ci_lower) and "zero width" in bare.note


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_a_change_is_at_most_the_h_weighted_share_of_changed_clusters(data):
    """The inequality the no-change bound rests on (SPEC 10): |θ_t − θ_b| ≤ E[h·1{changed}]/E[h]
    for any population with 0 ≤ f ≤ g on both sides, h = max(g_t, g_b)."""
    n = data.draw(st.integers(1, 12))
    p = np.array(data.draw(st.lists(st.floats(0.01, 1.0), min_size=n, max_size=n)))
    g_b = np.array(data.draw(st.lists(st.floats(0.0, 10.0), min_size=n, max_size=n)))
    f_b = g_b * np.array(data.draw(st.lists(st.floats(0.0, 1.0), min_size=n, max_size=n)))
    changed = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    g_t = np.where(changed, np.array(data.draw(st.lists(st.floats(0.0, 10.0), min_size=n, max_size=n))), g_b)
    f_t = np.where(changed, g_t * np.array(data.draw(st.lists(st.floats(0.0, 1.0), min_size=n, max_size=n))), f_b)
    if (p * g_b).sum() <= 1e-9 or (p * g_t).sum() <= 1e-9:
        return
    delta = (p * f_t).sum() / (p * g_t).sum() - (p * f_b).sum() / (p * g_b).sum()
    h = np.maximum(g_t, g_b)
    q = (p * h * changed).sum() / (p * h).sum()
    assert abs(delta) <= q + 1e-12


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_no_difference_interval_has_zero_width(data):
    """Whatever the draws (k ≥ 2), a gap or a change has an interval of positive width, or none
    (NaN, with a note saying why): never a point."""
    k = data.draw(st.integers(2, 15))
    g = np.array(data.draw(st.lists(st.integers(0, 4), min_size=k, max_size=k)), dtype=float)
    share = np.array(data.draw(st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=k, max_size=k)))
    f = g * share
    member = np.array(data.draw(st.lists(st.booleans(), min_size=k, max_size=k)))
    d = np.array(data.draw(st.lists(st.integers(1, 3), min_size=k, max_size=k)))
    pi = member.astype(float)
    a = ratio_estimate(f * pi, g * pi, d, zero_event=True)
    b = ratio_estimate(f * (1 - pi), g * (1 - pi), d, zero_event=True)
    for method in ("linearization", "logit"):
        gap = difference(a, b, d, method=method)
        if gap.has_interval:
            assert gap.ci_upper > gap.ci_lower, (method, gap)
        elif a.defined and b.defined and k >= 2:
            assert gap.note
    # a change: the second release differs on the drawn rows where ``member`` is set
    f2 = np.where(member, g * (1 - share), f)
    c = ratio_estimate(f2, g, d, zero_event=True)
    unchanged = no_change_bound(g, d, ci_level=0.95) if np.array_equal(f2, f) else None
    ch = difference(c, ratio_estimate(f, g, d, zero_event=True), d, comparison="releases", unchanged=unchanged)
    if ch.has_interval:
        assert ch.ci_upper > ch.ci_lower, ch


def test_bad_arguments_are_input_errors():
    a = ratio_estimate(np.array([1.0, 2.0]), np.array([2.0, 2.0]))
    with pytest.raises(InputError, match="comparison='both'"):
        difference(a, a, comparison="both")
    with pytest.raises(InputError, match="bootstrap_difference"):
        difference(a, a, method="bca")


# -- the joint bootstrap of a difference ---------------------------------------------------------------------


def _change_bootstrap(f_t, g_t, f_b, g_b, d, seed=3, n_boot=400):
    boot = JointBootstrap({"t": (f_t, g_t), "b": (f_b, g_b)}, d, n_boot=n_boot, seed=seed, bias_adjust=True,
                          moments=[("t", "t"), ("b", "b"), ("t", "b")])
    return boot, ratio_estimate(f_t, g_t, d, zero_event=True), ratio_estimate(f_b, g_b, d, zero_event=True)


def test_identical_sides_give_degenerate_replicates_and_then_the_no_change_interval():
    rng = np.random.default_rng(4)
    g = rng.integers(1, 5, 30).astype(float)
    f = np.minimum(g, rng.integers(0, 5, 30)).astype(float)
    d = rng.integers(1, 3, 30)
    boot, est_t, est_b = _change_bootstrap(f, g, f.copy(), g.copy(), d)
    reps = boot.theta["t"] - boot.theta["b"]
    assert np.all(reps[~np.isnan(reps)] == 0.0)
    bound = no_change_bound(g, d, ci_level=0.95)
    for method in ("bootstrap", "bca"):
        ch = bootstrap_difference(est_t, est_b, d, boot.theta["t"], boot.theta["b"], method=method, ci_level=0.95,
                                  seed=3, comparison="releases", unchanged=bound)
        assert (ch.ci_lower, ch.ci_upper) == (-bound.half_width, bound.half_width) and ch.zero_event
        assert ch.seed == 3


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_replicates_are_degenerate_at_zero_only_when_the_sides_cannot_differ(data):
    """θ̂*_t − θ̂*_b is 0 on every resample only if the two sides' f/g agree on every drawn row
    with g scaled by one common factor: one changed row is enough to move some replicates."""
    k = data.draw(st.integers(3, 12))
    g = np.array(data.draw(st.lists(st.integers(1, 5), min_size=k, max_size=k)), dtype=float)
    f = np.floor(g * np.array(data.draw(st.lists(st.floats(0, 1), min_size=k, max_size=k))))
    row = data.draw(st.integers(0, k - 1))
    f2 = f.copy()
    f2[row] = g[row] - f[row] if g[row] != 2 * f[row] else (0.0 if f[row] else g[row])  # f/g of that row moves
    if np.allclose(f2 / g, f / g):
        return
    d = np.ones(k, dtype=np.int64)
    boot, _, _ = _change_bootstrap(f2, g, f, g, d, n_boot=300)
    reps = boot.theta["t"] - boot.theta["b"]
    assert np.any(np.abs(reps[~np.isnan(reps)]) > 1e-12)


def test_the_joint_bootstrap_keeps_the_pairing():
    """The spread of θ̂*_t − θ̂*_b from one resampling tracks the paired SE; resampling each side on
    its own (pairing lost) spreads it as √(se_t² + se_b²), far wider when the releases agree."""
    rng = np.random.default_rng(8)
    k = 400
    g = rng.integers(1, 20, k).astype(float)
    f = np.floor(g * rng.beta(8, 2, k))
    f2 = np.where(rng.random(k) < 0.1, np.floor(f * 0.7), f)
    d = np.ones(k, dtype=np.int64)
    boot, est_t, est_b = _change_bootstrap(f2, g, f, g, d, n_boot=2000)
    joint_sd = np.std(boot.theta["t"] - boot.theta["b"], ddof=1)
    paired = difference(est_t, est_b, d, comparison="releases")
    assert joint_sd == pytest.approx(paired.std_error, rel=0.1)
    other = JointBootstrap({"b": (f, g)}, d, n_boot=2000, seed=99, bias_adjust=True)
    unpaired_sd = np.std(boot.theta["t"] - other.theta["b"], ddof=1)
    assert unpaired_sd > 2.5 * joint_sd
    ch = bootstrap_difference(est_t, est_b, d, boot.theta["t"], boot.theta["b"], method="bootstrap", ci_level=0.95,
                              seed=3, comparison="releases")
    diff = boot.theta["t"] - boot.theta["b"]
    assert (ch.ci_lower, ch.ci_upper) == pytest.approx(tuple(np.quantile(diff, [0.025, 0.975])), rel=1e-12)
    assert ch.interval == "bootstrap"
    # p-value of the percentile interval: below 5 % exactly when the interval excludes 0
    assert (ch.p_value < 0.05) == (ch.ci_lower > 0 or ch.ci_upper < 0)


# -- coverage of a small, nonzero difference that most samples do not see -----------------------------------


def test_coverage_of_a_rare_change_most_samples_do_not_see():
    """A population of 2,000 equal-weight clusters; the second release breaks 6 of them (0.3 %):
    the true change of recall is −0.003, and with 100 draws 74 % of the samples draw no changed
    cluster. The old interval was [0, 0] there (coverage ≈ 26 %); the no-change bound covers."""
    n_pop, k, reps = 2000, 100, 1500
    rng = np.random.default_rng(12)
    g = np.ones(n_pop)
    f_b = np.where(rng.random(n_pop) < 0.05, 0.0, 1.0)  # 5 % errors in the baseline
    f_t = f_b.copy()
    f_t[np.flatnonzero(f_b == 1.0)[:6]] = 0.0
    truth = f_t.mean() - f_b.mean()
    assert truth == pytest.approx(-0.003)
    cover = old_cover = unseen = 0
    for _ in range(reps):
        idx = rng.integers(0, n_pop, k)
        d = np.bincount(idx, minlength=n_pop)
        rows = np.flatnonzero(d)
        a = ratio_estimate(f_t[rows], g[rows], d[rows], zero_event=True)
        b = ratio_estimate(f_b[rows], g[rows], d[rows], zero_event=True)
        same = np.array_equal(f_t[rows], f_b[rows])
        unseen += same
        bound = no_change_bound(g[rows], d[rows], ci_level=0.95) if same else None
        ch = difference(a, b, d[rows], comparison="releases", unchanged=bound)
        cover += ch.ci_lower <= truth <= ch.ci_upper
        old_cover += (not same) and abs(ch.estimate - truth) <= Z95 * ch.std_error
    assert unseen / reps == pytest.approx((1 - 6 / n_pop) ** k, abs=0.04)
    assert cover / reps >= 0.93
    assert old_cover / reps < 0.3


def test_coverage_of_a_gap_whose_group_rarely_shows_an_error():
    """A group of 7 % of the entities with 3 % errors, the rest with 2 %: with 450 draws the
    group has ≈ 31 of them and is error-free in ≈ 40 % of the samples. Its estimate is then 1
    with SE 0, and the paired normal interval, which counts the rest's uncertainty only,
    misses the true gap (≈ −0.007) each time; the zero-event bound of the group covers."""
    n_pop, k, reps = 20000, 450, 1000
    rng = np.random.default_rng(21)
    member = rng.random(n_pop) < 0.07
    f = np.where(rng.random(n_pop) < np.where(member, 0.03, 0.02), 0.0, 1.0)
    truth = f[member].mean() - f[~member].mean()
    cover = old = free = 0
    for _ in range(reps):
        idx = rng.integers(0, n_pop, k)
        a, b = _domains(f[idx], np.ones(k), member[idx])
        gap = difference(a, b)
        free += a.interval == "zero_event"
        cover += gap.ci_lower <= truth <= gap.ci_upper
        old += abs(gap.estimate - truth) <= Z95 * gap.std_error
    assert 0.3 < free / reps < 0.5
    assert cover / reps >= 0.93
    assert old / reps < 0.75
