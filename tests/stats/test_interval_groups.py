"""Interval methods for subgroup gaps (SPEC 8) and paired changes (SPEC 10), issue 21 item 2:
the joint bootstrap against a brute-force resampling, seeds, bounds, and what the p-values are."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from support.intervals import random_sample

from er_expectations.core.errors import InputError
from er_expectations.stats import BenchmarkSample, estimate_metrics
from er_expectations.stats.drift import paired_change, paired_changes
from er_expectations.stats.estimator import bootstrap_counts
from er_expectations.stats.subgroups import Membership, estimate_groups, estimate_groups_methods

METHODS = ("linearization", "logit", "bootstrap", "bca", "studentized")
GROUP_IDS = ("pairwise_precision", "pairwise_recall", "cluster_recall", "b_cubed_f", "homogeneity")


def _membership(sample: BenchmarkSample, seed: int) -> Membership:
    rng = np.random.default_rng(seed)
    n = sample.labels.size
    which = rng.integers(0, 3, n)  # 0: group a, 1: group b, 2: unknown
    which[rng.random(n) < 0.1] = 2
    pi = np.column_stack([(which == 0), (which == 1)]).astype(float)
    return Membership(groups=("a", "b"), pi=pi, known=which != 2)


def _order(labels: np.ndarray) -> np.ndarray:
    return np.argsort(np.array([str(x) for x in labels], dtype=object), kind="stable")


def _resamples(sample: BenchmarkSample, seed: int, n_boot: int) -> np.ndarray:
    """The bootstrap counts of every cluster, in the sample's row order (resampled by label)."""
    order = _order(sample.labels)
    ordered = np.vstack(list(bootstrap_counts(sample.draws[order].astype(np.int64), n_boot, seed)))
    counts = np.empty_like(ordered)
    counts[:, order] = ordered
    return counts


# -- groups ----------------------------------------------------------------------------------------


def test_all_methods_at_once_equal_one_call_per_method():
    sample = random_sample(6, n=60)
    membership = _membership(sample, 1)
    together = estimate_groups_methods(sample, membership, GROUP_IDS, methods=METHODS, min_draws=5, n_boot=300,
                                       seed=4)
    for method in METHODS:
        alone = estimate_groups(sample, membership, GROUP_IDS, ci_method=method, min_draws=5, n_boot=300, seed=4)
        assert alone == together[method], method
        # the same seed gives the same rows again; statuses and estimates do not depend on the method
        assert estimate_groups(sample, membership, GROUP_IDS, ci_method=method, min_draws=5, n_boot=300,
                               seed=4) == alone
        assert [(r.status, r.estimate.estimate, r.disparity.estimate) for r in alone] == \
            [(r.status, r.estimate.estimate, r.disparity.estimate) for r in together["linearization"]]
    other = estimate_groups(sample, membership, GROUP_IDS, ci_method="bootstrap", min_draws=5, n_boot=300, seed=5)
    assert any(a.disparity.ci_lower != b.disparity.ci_lower for a, b in zip(other, together["bootstrap"],
                                                                            strict=True))


@pytest.mark.parametrize("compare_to", ["rest", "all"])
def test_bootstrap_gap_is_the_quantile_of_paired_replicates_recomputed_by_brute_force(compare_to):
    """Every resample rebuilt as a benchmark with those draw counts and estimated afresh: the
    gap replicate is the group's estimate minus the comparison's on the *same* resample."""
    sample = random_sample(7, n=50)
    membership = _membership(sample, 2)
    n_boot = 200
    rows = estimate_groups(sample, membership, ("pairwise_recall", "b_cubed_f"), ci_method="bootstrap",
                           compare_to=compare_to, min_draws=2, n_boot=n_boot, seed=13)
    counts = _resamples(sample, 13, n_boot)
    for j, name in enumerate(membership.groups):
        pi = membership.pi[:, j]
        other = None if compare_to == "all" else (1 - pi) * membership.known
        gaps = {m: [] for m in ("pairwise_recall", "b_cubed_f")}
        for w in counts:
            resample = replace(sample, draws=w)
            mine = estimate_metrics(resample, tuple(gaps), domain=pi)
            theirs = estimate_metrics(resample, tuple(gaps), domain=other)
            for m in gaps:
                gaps[m].append(mine[m].estimate - theirs[m].estimate)
        for m, values in gaps.items():
            row = next(r for r in rows if r.group == name and r.metric == m)
            if row.disparity.interval != "bootstrap":
                continue
            values = np.array(values)
            lo, hi = np.quantile(values[~np.isnan(values)], [0.025, 0.975])
            assert row.disparity.ci_lower == pytest.approx(lo, rel=1e-9, abs=1e-12), (name, m)
            assert row.disparity.ci_upper == pytest.approx(hi, rel=1e-9, abs=1e-12), (name, m)
            assert row.disparity.seed == 13 and row.estimate.seed == 13


def test_p_values_are_wald_for_plain_gaps_and_follow_the_interval_otherwise():
    """What replaces the p-value check of tests/analysis/test_subgroups.py for gaps with an error-free
    side: a linearised gap keeps the Wald p-value; any other gap's p-value is below 1 − level
    exactly when its interval excludes 0."""
    seen = set()
    for seed in range(12):
        sample = random_sample(seed, n=25)
        membership = _membership(sample, seed)
        res = estimate_groups_methods(sample, membership, GROUP_IDS, methods=("linearization", "logit", "bca"),
                                      min_draws=2, adjust="none", n_boot=200, seed=seed)
        for method, rows in res.items():
            for r in rows:
                gap = r.disparity
                if r.status != "ok":
                    continue
                seen.add(gap.interval)
                if gap.interval == "linearization":
                    z = abs(gap.estimate) / gap.std_error
                    assert gap.p_value == pytest.approx(math.erfc(z / math.sqrt(2)), rel=1e-9)
                elif gap.has_interval:
                    excludes = gap.ci_lower > 0 or gap.ci_upper < 0
                    if abs(gap.p_value - 0.05) > 1e-9:
                        assert (gap.p_value < 0.05) == excludes, (method, gap)
                    assert gap.ci_upper > gap.ci_lower
                else:
                    assert gap.interval == "none" and gap.note
    assert {"linearization", "zero_event", "logit", "bca"} <= seen


def test_group_rows_bad_input():
    sample = random_sample(8)
    membership = _membership(sample, 3)
    with pytest.raises(InputError, match="too large"):
        estimate_groups(sample, membership, ci_method="bootstrap", n_boot=50_000)
    with pytest.raises(InputError, match="not an interval method"):
        estimate_groups(sample, membership, ci_method="percentile")
    with pytest.raises(InputError, match="selects no interval method"):
        estimate_groups_methods(sample, membership, methods=())


# -- changes ------------------------------------------------------------------------------------------------


def _changed(sample: BenchmarkSample, seed: int, share: float) -> BenchmarkSample:
    """The same benchmark against a second release: a share of the clusters lose a record."""
    rng = np.random.default_rng(seed)
    n = sample.piece_n.copy()
    m = sample.piece_m.copy()
    hit = (rng.random(n.size) < share) & (n >= 2)
    cluster = list(sample.piece_cluster)
    counts, ms, labels = [], [], []
    top = int(sample.piece_label.max()) + 1
    extra_cluster = []
    for j in range(n.size):
        if hit[j]:
            counts += [n[j] - 1]
            ms += [m[j] - 1]
            labels += [sample.piece_label[j]]
            extra_cluster.append(cluster[j])
        else:
            counts += [n[j]]
            ms += [m[j]]
            labels += [sample.piece_label[j]]
    piece_cluster = np.array(cluster + extra_cluster)
    piece_n = np.array(counts + [1] * len(extra_cluster))
    piece_m = np.array(ms + [1] * len(extra_cluster))
    piece_label = np.array(labels + list(range(top, top + len(extra_cluster))))
    return replace(sample, piece_cluster=piece_cluster, piece_n=piece_n, piece_m=piece_m, piece_label=piece_label)


CHANGE_IDS = ("pairwise_recall", "pairwise_precision", "b_cubed_f", "cluster_recall", "homogeneity")


def test_paired_changes_of_several_metrics_equal_one_call_each():
    base = random_sample(9, n=60)
    cur = _changed(base, 1, 0.2)
    together = paired_changes(cur, base, CHANGE_IDS, methods=METHODS, n_boot=300, seed=2)
    for m in CHANGE_IDS:
        for method in METHODS:
            alone = paired_change(cur, base, m, ci_method=method, n_boot=300, seed=2)
            got = together[m][method]
            assert (alone.change.estimate, alone.change.std_error, alone.change.interval) == \
                (got.change.estimate, got.change.std_error, got.change.interval), (m, method)
            assert alone.change.ci_lower == pytest.approx(got.change.ci_lower, rel=1e-12, abs=1e-15)
            assert alone.change.ci_upper == pytest.approx(got.change.ci_upper, rel=1e-12, abs=1e-15)
            if method in ("bootstrap", "bca", "studentized"):
                assert got.change.seed == 2


def test_bootstrap_change_is_the_quantile_of_paired_replicates_recomputed_by_brute_force():
    base = random_sample(10, n=40)
    cur = _changed(base, 2, 0.3)
    n_boot = 200
    got = paired_change(cur, base, "pairwise_recall", ci_method="bootstrap", n_boot=n_boot, seed=21)
    assert got.change.interval == "bootstrap"
    counts = _resamples(base, 21, n_boot)  # both samples list the same clusters in the same order
    changes = []
    for w in counts:
        a = estimate_metrics(replace(cur, draws=w), ("pairwise_recall",))["pairwise_recall"].estimate
        b = estimate_metrics(replace(base, draws=w), ("pairwise_recall",))["pairwise_recall"].estimate
        changes.append(a - b)
    changes = np.array(changes)
    lo, hi = np.quantile(changes[~np.isnan(changes)], [0.025, 0.975])
    assert (got.change.ci_lower, got.change.ci_upper) == pytest.approx((lo, hi), rel=1e-9, abs=1e-12)


def test_a_change_without_a_changed_draw_gets_the_no_change_bound_under_every_method():
    base = random_sample(11, n=50)
    res = paired_changes(base, base, CHANGE_IDS, methods=METHODS, n_boot=200, seed=1)
    for m in ("pairwise_recall", "pairwise_precision", "cluster_recall"):
        for method in METHODS:
            ch = res[m][method].change
            assert ch.estimate == 0.0 and ch.zero_event and ch.ci_lower == -ch.ci_upper < 0, (m, method)
            assert "no drawn cluster changes" in ch.note and ch.p_value == 1.0
    # b-cubed F: the bound of its precision and recall, times the change of F per change of both
    bf = res["b_cubed_f"]["linearization"].change
    assert bf.zero_event and "for F_β" in bf.note
    # homogeneity is not a share (no bound from the number of draws): no interval, never a point
    hom = res["homogeneity"]["linearization"].change
    assert math.isnan(hom.ci_lower) and hom.interval == "none" and "zero width" in hom.note


def test_an_error_free_baseline_does_not_widen_a_change():
    """Two releases share their clusters: the errors an error-free baseline may have elsewhere
    are the current release's too, so the change keeps the paired interval (SPEC 10)."""
    base = random_sample(12, n=60)
    exact = replace(base, piece_cluster=np.arange(base.size.size), piece_n=base.size, piece_m=base.size,
                    piece_label=np.arange(base.size.size))
    cur = _changed(exact, 3, 0.3)
    ch = paired_change(cur, exact, "pairwise_recall")
    assert ch.baseline.interval == "zero_event" and ch.change.interval == "linearization"
    z = 1.959963984540054
    assert (ch.change.ci_lower, ch.change.ci_upper) == pytest.approx(
        (ch.change.estimate - z * ch.change.std_error, ch.change.estimate + z * ch.change.std_error), rel=1e-12)


def test_recommended_rows_and_changes_come_from_each_metric_s_methods():
    from er_expectations.stats.estimator import (
        RECOMMENDED_CHANGE_METHOD,
        RECOMMENDED_CI_METHOD,
        RECOMMENDED_GAP_METHOD,
    )
    from er_expectations.stats.subgroups import adjust_p_values

    sample = random_sample(13, n=60)
    membership = _membership(sample, 4)
    res = estimate_groups_methods(sample, membership, GROUP_IDS, methods=(*METHODS, "hull", "recommended"),
                                  min_draws=5, adjust="holm", n_boot=300, seed=6)
    for i, row in enumerate(res["recommended"]):
        sides = res[RECOMMENDED_CI_METHOD[row.metric]][i]
        gap = res[RECOMMENDED_GAP_METHOD[row.metric]][i]
        assert (row.estimate, row.comparison) == (sides.estimate, sides.comparison)
        assert (row.disparity, row.p_value) == (gap.disparity, gap.p_value)
    # BCa estimates, the hull gap (or its zero-event fallback)
    pp = next(r for r in res["recommended"] if r.metric == "pairwise_precision" and r.status == "ok")
    assert pp.estimate.interval == "bca" and pp.disparity.interval in ("hull", "zero_event")
    # the adjustment runs over the recommended rows' own p-values
    want = adjust_p_values([r.p_value for r in res["recommended"]], "holm")
    np.testing.assert_allclose([r.p_adjusted for r in res["recommended"]], want, equal_nan=True)
    base = random_sample(14, n=60)
    ch = paired_changes(_changed(base, 5, 0.2), base, CHANGE_IDS, methods=("recommended", "bca", "logit"),
                        n_boot=300, seed=3)
    assert ch["pairwise_recall"]["recommended"].change.interval in ("logit", "zero_event")
    for m in CHANGE_IDS:
        rec = ch[m]["recommended"]
        assert rec.change == ch[m][RECOMMENDED_CHANGE_METHOD[m]].change
        assert rec.current == ch[m][RECOMMENDED_CI_METHOD[m]].current
        assert rec.baseline == ch[m][RECOMMENDED_CI_METHOD[m]].baseline


def test_a_change_without_variation_has_no_interval_under_any_method():
    """Homogeneity is not a share, so no bound from the number of draws exists for it: with no
    drawn cluster changed, every method gives no interval (and says why), never a width that
    comes from the asymmetry of the two sides' intervals."""
    base = random_sample(15, n=50)
    res = paired_changes(base, base, ("homogeneity",), methods=METHODS, n_boot=200, seed=1)
    for method in METHODS:
        ch = res["homogeneity"][method].change
        assert not ch.has_interval and ch.interval == "none" and ch.note, method


def test_bca_mover_gap_is_mover_of_the_two_sides_bca_intervals():
    from er_expectations.stats.differences import paired_correlation
    from er_expectations.stats.intervals import mover_interval

    sample = random_sample(16, n=80)
    membership = _membership(sample, 5)
    res = estimate_groups_methods(sample, membership, ("pairwise_recall", "b_cubed_f"), methods=("bca_mover", "bca"),
                                  min_draws=5, n_boot=400, seed=8)
    checked = 0
    for row, bca_row in zip(res["bca_mover"], res["bca"], strict=True):
        assert (row.estimate, row.comparison) == (bca_row.estimate, bca_row.comparison)
        a, b = row.estimate, row.comparison
        if row.disparity.interval != "bca" or a.interval != "bca" or b.interval != "bca":
            continue
        r = paired_correlation(a, b, sample.draws)
        lo, hi = mover_interval(a.estimate - b.estimate, a.ci_lower, a.ci_upper, a.estimate, b.ci_lower, b.ci_upper,
                                b.estimate, correlation=r)
        # the sides' shown intervals are clipped to [0, 1]; inside the range they are the limits MOVER used
        if a.ci_lower > 0 and a.ci_upper < 1 and b.ci_lower > 0 and b.ci_upper < 1:
            assert (row.disparity.ci_lower, row.disparity.ci_upper) == pytest.approx((float(lo), float(hi)),
                                                                                      rel=1e-12)
            checked += 1
    assert checked >= 2


def test_hull_gap_holds_the_paired_normal_and_the_bca_mover_gaps():
    """"hull" is the smallest interval holding both gap intervals, row by row; its test rejects
    only when both reject (p the larger p-value), and it keeps the paired normal estimate and
    standard error."""
    for seed in (21, 22, 23):
        sample = random_sample(seed, n=80)
        membership = _membership(sample, 3)
        res = estimate_groups_methods(sample, membership, GROUP_IDS,
                                      methods=("linearization", "bca_mover", "hull"), min_draws=5, adjust="none",
                                      n_boot=300, seed=seed)
        seen = 0
        for lin, mover, hull in zip(res["linearization"], res["bca_mover"], res["hull"], strict=True):
            assert (hull.estimate, hull.comparison, hull.status) == (lin.estimate, lin.comparison, lin.status)
            a, b, h = lin.disparity, mover.disparity, hull.disparity
            assert (h.estimate, h.std_error) == (a.estimate, a.std_error)
            if not (a.has_interval and b.has_interval):
                continue
            seen += 1
            assert h.ci_lower == min(a.ci_lower, b.ci_lower) and h.ci_upper == max(a.ci_upper, b.ci_upper)
            assert h.interval == ("zero_event" if "zero_event" in (a.interval, b.interval) else "hull")
            if lin.status == "ok":
                assert hull.p_value == max(lin.p_value, mover.p_value)
                # the test rejects exactly when the hull excludes 0
                assert (hull.p_value < 0.05) == (h.ci_lower > 0 or h.ci_upper < 0)
        assert seen > 0


def test_hull_difference_by_hand():
    from er_expectations.stats.differences import Difference, hull_difference

    a = Difference(-0.05, 0.02, -0.0892, -0.0108, 0.012, 800, 0.95, "", "linearization")
    b = Difference(-0.05, 0.02, -0.1010, -0.0150, 0.004, 800, 0.95, "side note", "bca", 7)
    h = hull_difference(a, b)
    assert (h.ci_lower, h.ci_upper, h.p_value, h.interval, h.seed) == (-0.1010, -0.0108, 0.012, "hull", 7)
    assert (h.estimate, h.std_error, h.note) == (-0.05, 0.02, "side note")
    none = Difference(-0.05, float("nan"), float("nan"), float("nan"), float("nan"), 800, 0.95, "no SE", "none")
    assert hull_difference(a, none) == a
    assert hull_difference(none, b).ci_lower == -0.1010
    zero = Difference(0.0, 0.0, -0.004, 0.004, 1.0, 800, 0.95, "no error", "zero_event")
    assert hull_difference(zero, b).interval == "zero_event"


def test_hull_difference_properties():
    """For any two intervals of one difference: the hull holds both, covers any value either
    covers, and excludes 0 at 5 % exactly when both do (its p is the larger p)."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from er_expectations.stats.differences import Difference, hull_difference

    finite = st.floats(-1.0, 1.0, allow_nan=False)

    @st.composite
    def interval(draw):
        lo, hi = sorted((draw(finite), draw(finite)))
        p = draw(st.floats(0.0, 1.0))
        return lo, hi, p, draw(st.sampled_from(("linearization", "bca", "zero_event")))

    @settings(max_examples=300, deadline=None)
    @given(interval(), interval(), finite)
    def check(a, b, value):
        first = Difference(0.01, 0.02, a[0], a[1], a[2], 100, 0.95, "", a[3])
        second = Difference(0.01, 0.02, b[0], b[1], b[2], 100, 0.95, "", b[3])
        h = hull_difference(first, second)
        assert h.ci_lower <= min(a[0], b[0]) and h.ci_upper >= max(a[1], b[1])
        assert (h.ci_lower, h.ci_upper) == (min(a[0], b[0]), max(a[1], b[1]))
        if a[0] <= value <= a[1] or b[0] <= value <= b[1]:
            assert h.ci_lower <= value <= h.ci_upper
        assert h.p_value == max(a[2], b[2])
        assert (h.p_value < 0.05) == (a[2] < 0.05 and b[2] < 0.05)
        assert h.zero_event == ("zero_event" in (a[3], b[3]))

    check()
