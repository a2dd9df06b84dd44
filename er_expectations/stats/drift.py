"""Drift between two releases on small tables (SPEC 10; numpy only).

* :func:`classify_clusters`: each cluster of the *after* release, on the records both
  releases hold, is unchanged, merged (from several *before* clusters), split (a piece of
  one before cluster that is now in several) or both, from the contingency cells of the
  two clusterings.
* :func:`paired_change`: an estimated metric of two releases evaluated on the same
  benchmark draws, aligned cluster by cluster (a cluster absent from one release
  contributes f = g = 0 there), with the paired standard error of the change
  (:func:`~er_expectations.stats.combine.difference`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from er_expectations.core.errors import InputError
from er_expectations.stats.combine import Difference, difference
from er_expectations.stats.estimator import RatioEstimate, f_beta_estimate, ratio_estimate
from er_expectations.stats.metrics import (
    F_PARTS_LABELS,
    METRICS,
    PERFORMANCE_METRICS,
    check_beta,
    fg_values,
    finish_metric,
)
from er_expectations.stats.sample import BenchmarkSample, cluster_errors

__all__ = [
    "CHANGE_CLASSES",
    "ChangeCounts",
    "ClusterChanges",
    "PairedChange",
    "classify_clusters",
    "paired_change",
    "paired_changes",
]

if TYPE_CHECKING:  # a type only
    from er_expectations.stats.intervals import NoChangeBound

#: Classes of an *after* cluster against the *before* clustering, by code (SPEC 10).
CHANGE_CLASSES: tuple[str, ...] = ("unchanged", "merged", "split", "both")


@dataclass(frozen=True, slots=True)
class ChangeCounts:
    """The totals of a release diff (SPEC 10), O(1) in size whatever the number of clusters.

    ``clusters[k]`` / ``records[k]``: after clusters of class ``CHANGE_CLASSES[k]`` and the
    common records they hold; ``before_clusters``: clusters of the before release on the
    common records, ``before_clusters_split`` those that went to two or more after clusters.
    """

    clusters: tuple[int, int, int, int]
    records: tuple[int, int, int, int]
    before_clusters: int
    before_clusters_split: int

    @property
    def common_records(self) -> int:
        return int(sum(self.records))

    @property
    def records_moved(self) -> int:
        """Common records whose cluster mates (on the common records) changed."""
        return int(sum(self.records[1:]))

    def cluster_counts(self) -> dict[str, int]:
        return {name: int(self.clusters[i]) for i, name in enumerate(CHANGE_CLASSES)}

    def record_counts(self) -> dict[str, int]:
        return {name: int(self.records[i]) for i, name in enumerate(CHANGE_CLASSES)}


@dataclass(frozen=True, slots=True)
class ClusterChanges:
    """Every after cluster's class on the common records, and what it is made of.

    ``kind[a]`` indexes :data:`CHANGE_CLASSES`; ``size[a]`` is its number of common records,
    ``sources[a]`` the number of before clusters it takes records from. ``moved[a]`` is
    true when the set of cluster mates of its records changed (every class but unchanged).
    """

    kind: np.ndarray
    size: np.ndarray
    sources: np.ndarray
    before_pieces: np.ndarray  # per before cluster: how many after clusters it went to

    def counts(self) -> dict[str, int]:
        """Number of after clusters of each class."""
        found = np.bincount(self.kind, minlength=len(CHANGE_CLASSES))
        return {name: int(found[i]) for i, name in enumerate(CHANGE_CLASSES)}

    def records(self) -> dict[str, int]:
        """Number of common records in after clusters of each class."""
        found = np.bincount(self.kind, weights=self.size, minlength=len(CHANGE_CLASSES))
        return {name: int(found[i]) for i, name in enumerate(CHANGE_CLASSES)}

    @property
    def records_moved(self) -> int:
        """Common records whose cluster mates (on the common records) changed."""
        return int(self.size[self.kind != 0].sum())

    def totals(self) -> ChangeCounts:
        """The :class:`ChangeCounts` of these clusters."""
        c, r = self.counts(), self.records()
        return ChangeCounts(clusters=tuple(c[k] for k in CHANGE_CLASSES),  # type: ignore[arg-type]
                            records=tuple(r[k] for k in CHANGE_CLASSES),  # type: ignore[arg-type]
                            before_clusters=int(self.before_pieces.size),
                            before_clusters_split=int((self.before_pieces >= 2).sum()))


def classify_clusters(after_idx: np.ndarray, before_idx: np.ndarray, n: np.ndarray, *,
                      n_after: int | None = None, n_before: int | None = None) -> ClusterChanges:
    """Classify the after clusters from the contingency cells (after index, before index, count).

    With m(a) the number of before clusters after cluster a intersects and s(b) the number
    of after clusters before cluster b intersects: unchanged when m(a) = 1 and its before
    cluster has s = 1 (the same set of records); merged when m(a) ≥ 2 and every one of its
    before clusters has s = 1 (whole clusters put together); split when m(a) = 1 and its
    before cluster has s ≥ 2 (a piece of a cluster taken apart); both when m(a) ≥ 2 and at
    least one of its before clusters has s ≥ 2.
    """
    a = np.asarray(after_idx, dtype=np.int64)
    b = np.asarray(before_idx, dtype=np.int64)
    n = np.asarray(n, dtype=np.int64)
    if not (a.shape == b.shape == n.shape):
        raise InputError("classify_clusters: the three cell arrays must have the same length")
    n_a = int(a.max()) + 1 if n_after is None and a.size else int(n_after or 0)
    n_b = int(b.max()) + 1 if n_before is None and b.size else int(n_before or 0)
    sources = np.bincount(a, minlength=n_a)  # m(a): cells are distinct (a, b) pairs
    pieces = np.bincount(b, minlength=n_b)  # s(b)
    size = np.bincount(a, weights=n, minlength=n_a).astype(np.int64)
    split_cell = pieces[b] >= 2
    has_split = np.bincount(a, weights=split_cell, minlength=n_a) > 0
    merged = sources >= 2
    kind = np.where(merged, np.where(has_split, 3, 1), np.where(has_split, 2, 0)).astype(np.int64)
    return ClusterChanges(kind=kind, size=size, sources=sources, before_pieces=pieces)


@dataclass(frozen=True, slots=True)
class PairedChange:
    """θ̂_t − θ̂_b of one metric for two releases on the same benchmark draws (SPEC 10).

    ``current`` and ``baseline`` are the two estimates on the aligned draws (a cluster
    absent from one release counted there with f = g = 0); ``change`` has the paired
    standard error; ``naive_std_error`` is √(se_t² + se_b²), which ignores the pairing and
    is shown only for comparison. ``only_current`` / ``only_baseline`` count the benchmark
    clusters present in one release only.
    """

    metric: str
    current: RatioEstimate
    baseline: RatioEstimate
    change: Difference
    naive_std_error: float
    draws: int
    clusters: int
    only_current: int
    only_baseline: int


def _aligned(sample: BenchmarkSample, rows: dict[object, int], n: int, metric: str, beta: float,
             ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """f and g of ``metric`` (and of b-cubed P and R for b-cubed F) on the aligned rows."""
    errors = cluster_errors(sample)
    where = np.fromiter((rows[label] for label in sample.labels), dtype=np.int64, count=len(sample.labels))
    wanted = ("b_cubed_precision", "b_cubed_recall") if METRICS[metric].fg is None else (metric,)
    out = {}
    for mid in wanted:
        f, g = fg_values(sample, mid, beta=beta, errors=errors)
        fa, ga = np.zeros(n), np.zeros(n)
        fa[where], ga[where] = f, g
        out[mid] = (fa, ga)
    return out


def _estimate(values: dict[str, tuple[np.ndarray, np.ndarray]], metric: str, draws: np.ndarray, *,
              beta: float, ci_level: float) -> RatioEstimate:
    """The estimator of :func:`~er_expectations.stats.estimate_metrics` on given f, g values."""
    def one(mid: str) -> RatioEstimate:
        d = METRICS[mid]
        f, g = values[mid]
        res = ratio_estimate(f, g, draws, ci_level=ci_level, bounds=None if d.complement else d.bounds,
                             undefined_reason=d.undefined_reason, zero_event=d.zero_event)
        return finish_metric(d, res)

    if METRICS[metric].fg is None:
        est = f_beta_estimate(one("b_cubed_precision"), one("b_cubed_recall"), draws, beta=beta,
                              ci_level=ci_level, labels=F_PARTS_LABELS)
        return finish_metric(METRICS[metric], est)
    return one(metric)


def _unchanged(values_t: dict[str, tuple[np.ndarray, np.ndarray]], values_b: dict[str, tuple[np.ndarray, np.ndarray]],
               metric: str, draws: np.ndarray, est_t: RatioEstimate, est_b: RatioEstimate, *, beta: float,
               ci_level: float) -> NoChangeBound | None:
    """The no-change bound of SPEC 10 when no drawn cluster changed, else None.

    A drawn row is unchanged when f and g of every ratio the metric is made of are the same
    in both releases (to rounding). The bound needs 0 ≤ f ≤ g (a share: the metrics with a
    zero-event interval); other metrics get None (and no interval, rather than a point).
    """
    from er_expectations.stats.intervals import f_beta_lipschitz, no_change_bound

    drawn = draws > 0
    for mid in values_t:
        (ft, gt), (fb, gb) = values_t[mid], values_b[mid]
        tol = 1e-12 * np.maximum(np.abs(gt), np.abs(gb))
        if np.any(drawn & ((np.abs(ft - fb) > tol) | (np.abs(gt - gb) > tol))):
            return None
    bases = list(values_t)
    if not all(METRICS[m].zero_event for m in bases):
        return None
    h = np.maximum.reduce([np.maximum(values_t[m][1], values_b[m][1]) for m in bases])
    if METRICS[metric].fg is not None:
        return no_change_bound(h, draws, ci_level=ci_level)
    # b-cubed F: precision and recall share g = w, so both move by at most the same share q
    first = no_change_bound(h, draws, ci_level=ci_level)
    if np.isnan(first.half_width) or not (est_t.defined and est_b.defined):
        return first
    # ∂F/∂P + ∂F/∂R at the estimates (the same on both sides: nothing drawn changed)
    p_hat = _estimate(values_b, "b_cubed_precision", draws, beta=beta, ci_level=ci_level).estimate
    r_hat = _estimate(values_b, "b_cubed_recall", draws, beta=beta, ci_level=ci_level).estimate
    lip = f_beta_lipschitz(p_hat, r_hat, beta=beta, move=first.half_width)
    return no_change_bound(h, draws, ci_level=ci_level, lipschitz=lip)


def paired_change(current: BenchmarkSample, baseline: BenchmarkSample, metric: str, *, beta: float = 1.0,
                  ci_level: float = 0.95, ci_method: str = "linearization", n_boot: int = 2000,
                  seed: int | None = None) -> PairedChange:
    """The change of an estimated metric from ``baseline`` to ``current`` on the same draws.

    Rows are the union of the benchmark clusters of both samples, in the order of the
    current sample then the baseline-only clusters; each sample's f and g (SPEC 5, with the
    benchmark restricted to its own release, SPEC 2.1) go to their cluster's row, zeros
    elsewhere. The draws of a cluster must be the same in both samples (same benchmark).

    ``ci_method`` (:data:`~.estimator.INTERVAL_METHODS`) sets the intervals of both
    estimates and of the change: ``"linearization"`` (the paired normal interval),
    ``"logit"`` (MOVER of the two logit intervals) or a bootstrap of ``n_boot`` resamples
    of the shared draws, seeded by ``seed`` (``DEFAULT_SEED`` when None, recorded in the result), the
    replicate change being the difference of the two releases on the same resample. When
    no drawn cluster changed, the change gets ±the no-change bound of
    :func:`~.intervals.no_change_bound` whatever the method (SPEC 10); it is never a point.
    :func:`paired_changes` gives several metrics and methods at once.
    """
    return paired_changes(current, baseline, (metric,), methods=(ci_method,), beta=beta, ci_level=ci_level,
                          n_boot=n_boot, seed=seed)[metric][ci_method]


def paired_changes(current: BenchmarkSample, baseline: BenchmarkSample, metrics: tuple[str, ...] | list[str], *,
                   methods: tuple[str, ...] | list[str] = ("linearization",), beta: float = 1.0,
                   ci_level: float = 0.95, n_boot: int = 2000,
                   seed: int | None = None) -> dict[str, dict[str, PairedChange]]:
    """:func:`paired_change` of every metric and interval method (SPEC 10), the bootstraps
    of every metric on one set of resamples: ``{metric: {method: PairedChange}}``.

    Each ``result[metric][method]`` equals ``paired_change(current, baseline, metric,
    ci_method=method, n_boot=n_boot, seed=seed, ...)``; ``"recommended"`` gives the two
    estimates of the metric's :data:`~.estimator.RECOMMENDED_CI_METHOD` and the change of its
    :data:`~.estimator.RECOMMENDED_CHANGE_METHOD`.
    """
    from er_expectations.stats.estimator import (
        BOOTSTRAP_METHODS,
        RECOMMENDED,
        RECOMMENDED_CHANGE_METHOD,
        RECOMMENDED_CI_METHOD,
        check_ci_level,
        check_ci_method,
        check_n_boot,
        concrete_methods,
        interval_seed,
    )
    from er_expectations.stats.metrics import base_series

    if isinstance(metrics, str):
        metrics = (metrics,)
    ids = tuple(dict.fromkeys(metrics))
    for metric in ids:
        if metric not in PERFORMANCE_METRICS and metric not in METRICS:
            raise InputError(f"metric={metric!r} is not an estimable metric")
    if not ids:
        raise InputError("metrics=() selects no metric; give at least one, such as 'pairwise_f'")
    beta = check_beta(beta)
    ci_level = check_ci_level(ci_level)
    wanted = tuple(dict.fromkeys(check_ci_method(m, parameter="ci_method", every_method=True) for m in methods))
    if not wanted:
        raise InputError("methods=() selects no interval method; give at least one, such as 'linearization'")
    needed = concrete_methods(wanted, ids)
    if any(m in BOOTSTRAP_METHODS for m in needed):
        n_boot = check_n_boot(n_boot)
        seed = interval_seed(seed)
    rows: dict[object, int] = {label: i for i, label in enumerate(current.labels)}
    for label in baseline.labels:
        rows.setdefault(label, len(rows))
    n = len(rows)
    draws = np.zeros(n)
    draws[: len(current.labels)] = current.draws
    where_b = np.fromiter((rows[label] for label in baseline.labels), dtype=np.int64, count=len(baseline.labels))
    shared = where_b < len(current.labels)
    if np.any(draws[where_b[shared]] != baseline.draws[shared]):
        i = int(np.flatnonzero(draws[where_b[shared]] != baseline.draws[shared])[0])
        raise InputError(f"benchmark cluster {baseline.labels[shared][i]!r} has a different number of draws in the "
                         "two releases; both must be evaluated on the same benchmark (SPEC 10)")
    draws[where_b[~shared]] = baseline.draws[~shared]
    all_t = {m: v for metric in ids for m, v in _aligned(current, rows, n, metric, beta).items()}
    all_b = {m: v for metric in ids for m, v in _aligned(baseline, rows, n, metric, beta).items()}
    boot = None
    if any(m in BOOTSTRAP_METHODS for m in needed):
        boot = _ChangeBootstrap(all_t, all_b, draws, ids, labels=list(rows), beta=beta, n_boot=n_boot, seed=seed,
                                studentized="studentized" in needed)
    out: dict[str, dict[str, PairedChange]] = {}
    for metric in ids:
        values_t = {m: all_t[m] for m in base_series(metric)}
        values_b = {m: all_b[m] for m in base_series(metric)}
        est_t = _estimate(values_t, metric, draws, beta=beta, ci_level=ci_level)
        est_b = _estimate(values_b, metric, draws, beta=beta, ci_level=ci_level)
        unchanged = _unchanged(values_t, values_b, metric, draws, est_t, est_b, beta=beta, ci_level=ci_level)
        naive = math.sqrt(est_t.std_error ** 2 + est_b.std_error ** 2)
        common = {"metric": metric, "naive_std_error": naive, "draws": int(draws.sum()), "clusters": n,
                  "only_current": len(current.labels) - int(shared.sum()), "only_baseline": int((~shared).sum())}
        out[metric] = {}
        mine = RECOMMENDED_CI_METHOD.get(metric, "linearization")
        mine_change = RECOMMENDED_CHANGE_METHOD.get(metric, "linearization")
        run = [m for m in wanted if m != RECOMMENDED] + ([mine, mine_change] if RECOMMENDED in wanted else [])
        for method in dict.fromkeys(run):
            if boot is not None and method in BOOTSTRAP_METHODS:
                change = boot.difference(method, metric, est_t, est_b, unchanged=unchanged, ci_level=ci_level)
                shown_t = boot.side(method, "t", metric, est_t, ci_level=ci_level)
                shown_b = boot.side(method, "b", metric, est_b, ci_level=ci_level)
            else:
                change = difference(est_t, est_b, draws, ci_level=ci_level, method=method, comparison="releases",
                                    unchanged=unchanged)
                shown_t = _side_logit(method, metric, est_t, ci_level)
                shown_b = _side_logit(method, metric, est_b, ci_level)
            if change.note:
                from dataclasses import replace

                change = replace(change, note=change.note.replace("first side", "current release")
                                 .replace("second side", "baseline release"))
            out[metric][method] = PairedChange(current=shown_t, baseline=shown_b, change=change, **common)
        if RECOMMENDED in wanted:  # the estimates of one method, the change of the other
            from dataclasses import replace

            out[metric][RECOMMENDED] = replace(out[metric][mine_change], current=out[metric][mine].current,
                                               baseline=out[metric][mine].baseline)
        out[metric] = {m: out[metric][m] for m in wanted}
    return out


def _side_logit(method: str, metric: str, res: RatioEstimate, ci_level: float) -> RatioEstimate:
    if method != "logit":
        return res
    from er_expectations.stats.metrics import with_logit

    return with_logit(METRICS[metric], res, ci_level=ci_level)


class _ChangeBootstrap:
    """Metrics of two releases on the same resamples of the shared draws (SPEC 10)."""

    def __init__(self, values_t: dict[str, tuple[np.ndarray, np.ndarray]],
                 values_b: dict[str, tuple[np.ndarray, np.ndarray]], draws: np.ndarray, metrics: tuple[str, ...], *,
                 labels: list, beta: float, n_boot: int, seed: int, studentized: bool) -> None:
        from er_expectations.stats.joint import JointBootstrap
        from er_expectations.stats.metrics import base_series, label_order, moment_pairs

        values = {("t", m): v for m, v in values_t.items()} | {("b", m): v for m, v in values_b.items()}
        moments: list = []
        if studentized:
            for metric in metrics:
                moments += moment_pairs([(side, b) for side in ("t", "b") for b in base_series(metric)])
        self.beta, self.draws = beta, draws
        self.n_boot, self.seed = n_boot, seed
        self.boot = JointBootstrap(values, draws, n_boot=n_boot, seed=seed, bias_adjust=True,
                                   order=label_order(np.asarray(labels, dtype=object)), moments=moments)

    def replicates(self, side: str, metric: str) -> tuple[np.ndarray, list]:
        from er_expectations.stats.metrics import replicate_metric

        return replicate_metric(self.boot, metric, lambda m: (side, m), beta=self.beta)

    def side(self, method: str, side: str, metric: str, res: RatioEstimate, *, ci_level: float) -> RatioEstimate:
        from er_expectations.stats.metrics import apply_method, combination_se

        theta, terms = self.replicates(side, metric)
        se = combination_se(self.boot, terms) if method == "studentized" else None
        return apply_method(METRICS[metric], res, method, theta, se, self.draws, ci_level=ci_level,
                      n_boot=self.n_boot, seed=self.seed)

    def difference(self, method: str, metric: str, est_t: RatioEstimate, est_b: RatioEstimate, *,
                   unchanged: NoChangeBound | None, ci_level: float) -> Difference:
        from er_expectations.stats.differences import bootstrap_difference
        from er_expectations.stats.metrics import combination_se

        ta, terms_a = self.replicates("t", metric)
        tb, terms_b = self.replicates("b", metric)
        rse = side_se = None
        if method == "studentized":
            rse = combination_se(self.boot, terms_a + [(k, -c) for k, c in terms_b])
            side_se = (combination_se(self.boot, terms_a), combination_se(self.boot, terms_b))
        return bootstrap_difference(est_t, est_b, self.draws, ta, tb, method=method, ci_level=ci_level,
                                    seed=self.seed, replicate_se=rse, side_se=side_se, comparison="releases",
                                    unchanged=unchanged)
