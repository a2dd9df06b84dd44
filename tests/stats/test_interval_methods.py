"""Interval methods of single estimates (SPEC 6, issue 21): logit, BCa, studentised bootstrap,
the joint bootstrap machinery, and the bounds on n_boot."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.intervals import random_sample

from er_expectations.core.errors import InputError
from er_expectations.stats import BenchmarkSample, estimate_metrics, ratio_estimate
from er_expectations.stats.estimator import MAX_N_BOOT, bootstrap_counts, check_n_boot
from er_expectations.stats.intervals import (
    bca_interval,
    logit_interval,
    studentized_interval,
    zero_event_bound,
    zero_event_effective_draws,
)
from er_expectations.stats.joint import JointBootstrap
from er_expectations.stats.metrics import estimate_methods

ND = NormalDist()
Z95 = ND.inv_cdf(0.975)


def _expit(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


# -- logit ------------------------------------------------------------------------------------


def test_logit_interval_hand_worked():
    # θ̂ = 0.9, SE = 0.03: logit 0.9 = log 9, SE on the logit scale 0.03 / (0.9 · 0.1) = 1/3
    lo, hi = logit_interval(0.9, 0.03, ci_level=0.95)
    assert float(lo) == pytest.approx(_expit(math.log(9) - Z95 / 3), rel=1e-12)
    assert float(hi) == pytest.approx(_expit(math.log(9) + Z95 / 3), rel=1e-12)
    assert float(lo) == pytest.approx(0.82403, abs=1e-5) and float(hi) == pytest.approx(0.94535, abs=1e-5)
    # the linearised interval would be 0.9 ± 0.0588: the logit one reaches further towards the errors
    assert 0.9 - float(lo) > Z95 * 0.03 > float(hi) - 0.9


def test_logit_interval_is_undefined_at_the_ends_and_vectorised():
    lo, hi = logit_interval(np.array([0.0, 1.0, 0.5, 0.2]), np.array([0.1, 0.1, math.nan, 0.05]), ci_level=0.9)
    assert np.isnan(lo[:3]).all() and np.isnan(hi[:3]).all()
    z = ND.inv_cdf(0.95)
    assert lo[3] == pytest.approx(_expit(math.log(0.25) - z * 0.05 / 0.16), rel=1e-12)


@settings(max_examples=200, deadline=None)
@given(est=st.floats(1e-6, 1 - 1e-6), se=st.floats(1e-9, 2.0), level=st.floats(0.5, 0.999))
def test_logit_interval_stays_inside_and_leans_towards_the_nearer_end(est, se, level):
    lo, hi = (float(x) for x in logit_interval(est, se, ci_level=level))
    assert 0.0 <= lo <= est <= hi <= 1.0
    # with θ̂ above 1/2 the interval reaches further down (towards the errors) than up, and
    # the other way round below 1/2 (logit θ = −logit(1 − θ))
    if est > 0.5 + 1e-9:
        assert est - lo >= hi - est - 1e-12
    elif est < 0.5 - 1e-9:
        assert hi - est >= est - lo - 1e-12


# -- BCa -----------------------------------------------------------------------------------------------


def test_bca_with_symmetric_replicates_and_influence_is_the_percentile_interval():
    rng = np.random.default_rng(3)
    half = rng.normal(0, 0.05, 999)
    reps = 0.5 + np.concatenate([half, -half, [0.0]])  # symmetric about θ̂: z0 = 0
    u = np.array([-1.0, 1.0, -2.0, 2.0])  # no skewness: a = 0
    lo, hi, dropped = bca_interval(reps, 0.5, u, None, ci_level=0.9)
    assert dropped == 0
    assert (lo, hi) == pytest.approx(tuple(np.quantile(reps, [0.05, 0.95])), rel=1e-12)


def test_bca_hand_worked_adjusted_levels():
    reps = np.linspace(0.0, 1.0, 1001)  # quantile q is q itself
    est = 0.6  # 600 replicates below, 1 tie: share (600 + 0.5) / 1001
    u = np.array([1.0, 1.0, 1.0, -3.0])  # Σu³ = -24, Σu² = 12: a = -24 / (6 · 12^1.5)
    a = -24 / (6 * 12**1.5)
    z0 = ND.inv_cdf(600.5 / 1001)
    want = []
    for q in (0.025, 0.975):
        zq = ND.inv_cdf(q)
        want.append(ND.cdf(z0 + (z0 + zq) / (1 - a * (z0 + zq))))
    lo, hi, _ = bca_interval(reps, est, u, np.ones(4), ci_level=0.95)
    assert (lo, hi) == pytest.approx(tuple(want), abs=1e-12)
    # a negative acceleration (rare large negative influences: errors) moves the interval down
    lo0, hi0, _ = bca_interval(reps, est, np.array([1.0, -1.0]), None, ci_level=0.95)
    assert lo < lo0 and hi < hi0


def test_bca_counts_draws_as_repeated_rows():
    reps = np.random.default_rng(0).normal(0.8, 0.02, 500)
    u = np.array([0.3, -0.1, 0.05, -0.7])
    d = np.array([1, 3, 2, 1])
    assert bca_interval(reps, 0.8, u, d, ci_level=0.95) == bca_interval(reps, 0.8, np.repeat(u, d), None,
                                                                        ci_level=0.95)


def test_bca_leaves_out_undefined_replicates_and_clips():
    reps = np.array([np.nan, 0.99, 1.0, 1.0, 0.97, np.nan] * 30)
    lo, hi, dropped = bca_interval(reps, 0.99, np.array([0.1, -0.1]), None, ci_level=0.95, bounds=(0.0, 1.0))
    assert dropped == 60 and hi <= 1.0 and lo >= 0.97


# -- studentised ---------------------------------------------------------------------------------------


def test_studentized_hand_worked():
    est, se = 0.9, 0.02
    reps = np.array([0.88, 0.90, 0.93, 0.95, 0.89])
    ses = np.array([0.02, 0.01, 0.01, 0.0, 0.04])  # the fourth resample has no error: t = +inf
    t = sorted([(0.88 - 0.9) / 0.02, 0.0, (0.93 - 0.9) / 0.01, math.inf, (0.89 - 0.9) / 0.04])
    # order statistics at ⌈5·q⌉ − 1: q = 0.1 → index 0, q = 0.9 → index 4
    lo, hi, dropped = studentized_interval(reps, ses, est, se, ci_level=0.8)
    assert dropped == 0
    assert math.isinf(t[4]) and lo == -math.inf
    assert hi == pytest.approx(est - t[0] * se, rel=1e-12)
    # clipped to the metric's range
    lo, hi, _ = studentized_interval(reps, ses, est, se, ci_level=0.8, bounds=(0.0, 1.0))
    assert lo == 0.0


def test_studentized_without_standard_error_gives_no_interval():
    lo, hi, _ = studentized_interval(np.array([1.0, 1.0]), np.array([0.0, 0.0]), 1.0, 0.0, ci_level=0.95)
    assert math.isnan(lo) and math.isnan(hi)


# -- the joint bootstrap against a brute-force recomputation ------------------------------------------


def _brute_force(f, g, d, seed, n_boot):
    """Every resample rebuilt from bootstrap_counts and fed to ratio_estimate (SPEC 6)."""
    counts = np.vstack(list(bootstrap_counts(d, n_boot, seed)))
    thetas, ses, infl = [], [], []
    for w in counts:
        r = ratio_estimate(f, g, w)
        thetas.append(r.estimate)
        ses.append(r.std_error)
        infl.append(r.influence)
    return np.array(thetas), np.array(ses), counts, infl


def test_joint_bootstrap_replicates_and_their_standard_errors_equal_the_estimator_on_each_resample():
    rng = np.random.default_rng(11)
    k = 12
    g1 = rng.integers(1, 6, k).astype(float)
    f1 = np.minimum(g1, rng.integers(0, 6, k)).astype(float)
    g2 = rng.integers(1, 4, k).astype(float)
    f2 = np.minimum(g2, rng.integers(0, 4, k)).astype(float)
    d = rng.integers(1, 3, k)
    boot = JointBootstrap({"a": (f1, g1), "b": (f2, g2)}, d, n_boot=150, seed=5, bias_adjust=True,
                          moments=[("a", "a"), ("b", "b"), ("a", "b")])
    theta_a, se_a, counts, infl_a = _brute_force(f1, g1, d, 5, 150)
    theta_b, se_b, _, infl_b = _brute_force(f2, g2, d, 5, 150)
    ok = ~np.isnan(se_a) & ~np.isnan(se_b)
    assert ok.sum() > 100
    np.testing.assert_allclose(boot.theta["a"], theta_a, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(boot.theta["b"], theta_b, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(boot.std_error("a")[ok], se_a[ok], rtol=1e-9, atol=1e-13)
    np.testing.assert_allclose(boot.std_error("b")[ok], se_b[ok], rtol=1e-9, atol=1e-13)
    kk1 = k_ = counts[0].sum()
    kk1 = k_ * (k_ - 1)
    cov = [float((w * ia * ib).sum()) / kk1 for w, ia, ib in zip(counts, infl_a, infl_b, strict=True)]
    np.testing.assert_allclose(boot.covariance("a", "b")[ok], np.array(cov)[ok], rtol=1e-9, atol=1e-13)


METHODS = ("linearization", "logit", "bootstrap", "bca", "studentized")
IDS = ("pairwise_precision", "pairwise_recall", "b_cubed_precision", "b_cubed_recall", "b_cubed_f",
       "cluster_recall", "homogeneity", "average_cluster_size")


def _same(a: dict, b: dict) -> bool:
    """Equal results; bootstrap limits to rounding (the sums of the resamples are matrix
    products whose summation order may depend on how many series are computed with them)."""
    if a.keys() != b.keys():
        return False
    for k in a:
        x, y = a[k], b[k]
        if (x.estimate, x.std_error, x.interval, x.note, x.seed) != (y.estimate, y.std_error, y.interval, y.note,
                                                                     y.seed):
            return False
        if x.ci_lower != pytest.approx(y.ci_lower, rel=1e-12) or x.ci_upper != pytest.approx(y.ci_upper, rel=1e-12):
            return False
    return True


def test_every_method_from_one_call_equals_one_call_per_method_and_the_seed_reproduces_it():
    sample = random_sample(1)
    together = estimate_methods(sample, IDS, methods=METHODS, n_boot=300, seed=9)
    for method in METHODS:
        alone = estimate_metrics(sample, IDS, ci_method=method, n_boot=300, seed=9)
        assert _same(alone, together[method]), method
        assert estimate_metrics(sample, IDS, ci_method=method, n_boot=300, seed=9) == alone  # bit for bit
    # the estimates and standard errors never depend on the method
    for mid in IDS:
        assert len({(together[m][mid].estimate, together[m][mid].std_error) for m in METHODS}) == 1
    # another seed moves the bootstrap limits
    other = estimate_metrics(sample, IDS, ci_method="bca", n_boot=300, seed=10)
    assert any(other[m].ci_lower != together["bca"][m].ci_lower for m in IDS if other[m].interval == "bca")
    # the percentile bootstrap of estimate_methods is the one estimate_metrics always had
    assert _same(estimate_metrics(sample, IDS, ci_method="bootstrap", n_boot=300, seed=9), together["bootstrap"])


def test_methods_label_their_intervals_and_fall_back_with_a_note():
    sample = random_sample(2)
    res = estimate_methods(sample, IDS, methods=METHODS, n_boot=200, seed=1)
    for method in METHODS:
        for mid in IDS:
            r = res[method][mid]
            if res["linearization"][mid].interval == "linearization" and mid != "average_cluster_size":
                assert r.interval == method, (method, mid, r.note)
    # average cluster size does not live in (0, 1): no logit interval, said in the note
    acs = res["logit"]["average_cluster_size"]
    assert acs.interval == "linearization" and "logit interval not used" in acs.note
    assert res["bca"]["pairwise_recall"].seed == 1


def test_an_error_free_sample_keeps_its_zero_event_interval_under_every_method():
    f = g = np.array([1.0, 2.0, 1.0, 3.0])
    sample = random_sample(3)
    # make every cluster exact: one piece per cluster, predicted cluster = true cluster
    exact = BenchmarkSample(labels=sample.labels, size=sample.size, weight=sample.weight, draws=sample.draws,
                            piece_cluster=np.arange(sample.size.size), piece_n=sample.size, piece_m=sample.size,
                            piece_label=np.arange(sample.size.size), n_records=2000, n_clusters=1500,
                            design="cluster_size")
    res = estimate_methods(exact, ("pairwise_recall", "b_cubed_precision"), methods=METHODS, n_boot=200, seed=3)
    for method in METHODS:
        for r in res[method].values():
            assert r.interval == "zero_event" and r.ci_upper == 1.0 and r.ci_lower < 1.0
    assert ratio_estimate(f, g, zero_event=True).interval == "zero_event"


def test_n_boot_is_bounded_with_a_clear_error():
    sample = random_sample(4)
    with pytest.raises(InputError, match="too large; give at most 20,000"):
        estimate_metrics(sample, ("pairwise_recall",), ci_method="bca", n_boot=MAX_N_BOOT + 1, seed=1)
    with pytest.raises(InputError, match="too small"):
        estimate_methods(sample, ("pairwise_recall",), methods=("studentized",), n_boot=99, seed=1)
    assert check_n_boot(MAX_N_BOOT) == MAX_N_BOOT
    with pytest.raises(InputError, match="not an interval method; did you mean 'bca'"):
        estimate_metrics(sample, ("pairwise_recall",), ci_method="bcaa")


def test_zero_event_bound_restated_at_another_level():
    q = float(zero_event_bound(25.0, ci_level=0.95))
    assert q == pytest.approx(1 - 0.05 ** (1 / 25), rel=1e-14)
    assert float(zero_event_effective_draws(q, ci_level=0.95)) == pytest.approx(25.0, rel=1e-12)
    assert float(zero_event_bound(25.0, ci_level=0.975)) == pytest.approx(1 - 0.025 ** (1 / 25), rel=1e-14)


def test_recommended_takes_each_metric_from_its_method():
    from er_expectations.stats.estimator import RECOMMENDED_CI_METHOD

    sample = random_sample(5)
    ids = ("pairwise_precision", "pairwise_recall", "cluster_precision", "b_cubed_f", "average_cluster_size")
    res = estimate_methods(sample, ids, methods=(*METHODS, "recommended"), n_boot=300, seed=2)
    for mid in ids:
        assert res["recommended"][mid] == res[RECOMMENDED_CI_METHOD[mid]][mid], mid
    alone = estimate_metrics(sample, ids, ci_method="recommended", n_boot=300, seed=2)
    assert _same(alone, res["recommended"])
    assert {alone[m].interval for m in ids} == {"bca"} and alone["pairwise_recall"].seed == 2
    # without a seed: DEFAULT_SEED (0), recorded, as for any bootstrap
    default = estimate_metrics(sample, ("pairwise_recall",), ci_method="recommended", n_boot=200)
    assert default["pairwise_recall"].seed == 0
    assert default == estimate_metrics(sample, ("pairwise_recall",), ci_method="recommended", n_boot=200, seed=0)


def test_a_resampling_method_without_a_seed_is_an_error_with_its_reason():
    """Not a bare assert (which ``python -O`` drops): the message names the method and the fix."""
    import numpy as np

    from er_expectations.stats.metrics import with_interval_method

    with pytest.raises(ValueError, match="method 'bca' resamples the draws and needs a seed"):
        with_interval_method({}, {}, np.ones(3), method="bca", ci_level=0.95, beta=1.0, bias_adjust=True,
                             n_boot=200, seed=None, order=None)


def test_bca_counts_replicates_equal_to_the_estimate_up_to_rounding_as_ties():
    """z₀ counts the replicates below θ̂ and half the ties; a replicate within 1e-9 (relative)
    of θ̂ is a tie (issue 28), so rounding noise of 1e-15 gives the limits of exact ties."""
    rng = np.random.default_rng(4)
    est = 0.8
    reps = np.round(rng.normal(est, 0.05, 400), 2)  # many replicates exactly at 0.80
    assert (reps == est).sum() > 20
    u = rng.normal(0.0, 1.0, 30)
    exact = bca_interval(reps, est, u, None, ci_level=0.95)
    noisy = reps.copy()
    at = reps == est
    for side in (-1.0, 1.0):  # every tie rounded below θ̂, or above
        noisy[at] = est * (1.0 + side * 2e-15)
        assert bca_interval(noisy, est, u, None, ci_level=0.95) == pytest.approx(exact, abs=1e-14)
    # by hand: z0 = Φ⁻¹((below + ties/2)/B)
    below, ties = int((reps < est).sum()), int(at.sum())
    z0 = NormalDist().inv_cdf((below + 0.5 * ties) / reps.size)
    a = float((u**3).sum()) / (6.0 * float((u**2).sum()) ** 1.5)
    q = NormalDist().cdf(z0 + (z0 - 1.959963984540054) / (1 - a * (z0 - 1.959963984540054)))
    assert exact[0] == pytest.approx(float(np.quantile(reps, q)), abs=1e-12)
    # a real difference (1e-6 relative) is not a tie
    apart = reps.copy()
    apart[at] = est * (1.0 + 1e-6)
    assert bca_interval(apart, est, u, None, ci_level=0.95)[0] != pytest.approx(exact[0], abs=1e-9)
