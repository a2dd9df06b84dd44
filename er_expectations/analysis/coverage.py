"""Coverage of every interval method, and of group estimates, gaps and changes, for
:func:`er_expectations.simulate` (SPEC 6, 8, 10; issue 21 item 4).

:func:`~er_expectations.analysis.planning.simulate` replays a design with the linearised
interval on all replicates at once. This module takes the *same* replicates (the same drawn
clusters) one by one through the estimators of the API — ``estimate_methods`` (every method
on one set of bootstrap resamples), ``estimate_groups_methods`` and ``paired_changes`` — so
that a team sees, at its own sample size, which interval method covers.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from er_expectations.core.errors import InputError
from er_expectations.core.hints import did_you_mean
from er_expectations.stats import (
    GAP_METHODS,
    INTERVAL_METHODS,
    PERFORMANCE_METRICS,
    RECOMMENDED,
    BenchmarkSample,
    estimate_metrics,
)
from er_expectations.stats.drift import paired_changes
from er_expectations.stats.metrics import estimate_methods
from er_expectations.stats.subgroups import NO_SUBGROUP_FORM, Membership, estimate_groups_methods

__all__ = ["ALL_METHODS", "CoverageCell", "cell_row", "check_ci_methods", "drawn_sample", "group_truth", "method_cells"]

#: Every interval method :func:`simulate` can report (``ci_methods="all"``); the gap-only
#: methods (:data:`~er_expectations.stats.GAP_METHODS`: ``"bca_mover"``, ``"hull"``) give
#: rows for the subgroup gaps only.
ALL_METHODS: tuple[str, ...] = (*INTERVAL_METHODS, *GAP_METHODS, RECOMMENDED)


def check_ci_methods(ci_methods: object, *, parameter: str = "ci_methods", gaps: bool = True) -> tuple[str, ...]:
    """``"all"``, one method or a list of methods of :data:`ALL_METHODS` (checked, each once).

    Without ``gaps`` (no grouping to report gaps of), a gap-only method named on its own is an
    error, since it would report nothing; ``"all"`` then leaves them out."""
    if ci_methods == "all" or (isinstance(ci_methods, (list, tuple)) and list(ci_methods) == ["all"]):
        return ALL_METHODS if gaps else tuple(m for m in ALL_METHODS if m not in GAP_METHODS)
    if isinstance(ci_methods, str):
        ci_methods = (ci_methods,)
    if not isinstance(ci_methods, Iterable):
        raise InputError(f"{parameter}={ci_methods!r}: give 'all', one interval method or a list of them "
                         f"({', '.join(ALL_METHODS)})")
    out: list[str] = []
    for m in ci_methods:
        if not isinstance(m, str) or m not in ALL_METHODS:
            close = did_you_mean(str(m), ALL_METHODS)
            raise InputError(f"{parameter}: {m!r} is not an interval method{'; ' + close if close else ''}. "
                             f"Use 'all' or some of: {', '.join(ALL_METHODS)}")
        if m in GAP_METHODS and not gaps:
            raise InputError(f"{parameter}: {m!r} is an interval method for subgroup gaps only and reports nothing "
                             "without a grouping; give group_column= (--group-column) or another method")
        out.append(m)
    if not out:
        raise InputError(f"{parameter}=[] selects no interval method; give 'all' or e.g. ['linearization', 'bca']")
    return tuple(dict.fromkeys(out))


def drawn_sample(sample: BenchmarkSample, counts: np.ndarray) -> BenchmarkSample:
    """The benchmark of the clusters of ``sample`` drawn ``counts`` times (> 0): what
    ``erx.estimate`` aggregates from a benchmark of those draws (SPEC 2.1, 4)."""
    keep = np.flatnonzero(counts)
    new_index = np.full(sample.labels.shape[0], -1, dtype=np.int64)
    new_index[keep] = np.arange(keep.size)
    pieces = new_index[sample.piece_cluster] >= 0

    def take(x: np.ndarray | None) -> np.ndarray | None:
        return None if x is None else x[keep]

    return replace(sample, labels=sample.labels[keep], size=sample.size[keep], weight=sample.weight[keep],
                   draws=counts[keep].astype(np.int64), piece_cluster=new_index[sample.piece_cluster[pieces]],
                   piece_n=sample.piece_n[pieces], piece_m=sample.piece_m[pieces],
                   piece_label=sample.piece_label[pieces], homonym=take(sample.homonym),
                   name_variation=take(sample.name_variation), has_name=take(sample.has_name))


@dataclass
class CoverageCell:
    """The replicates of one (target, metric, method): estimates and interval limits."""

    target: str
    metric: str
    method: str
    truth: float
    estimate: list[float]
    std_error: list[float]
    lower: list[float]
    upper: list[float]


def _cell(cells: dict, target: str, metric: str, method: str, truth: float) -> CoverageCell:
    key = (target, metric, method)
    if key not in cells:
        cells[key] = CoverageCell(target, metric, method, truth, [], [], [], [])
    return cells[key]


def _add(cell: CoverageCell, est: float, se: float, lo: float, hi: float) -> None:
    cell.estimate.append(est)
    cell.std_error.append(se)
    cell.lower.append(lo)
    cell.upper.append(hi)


def group_truth(population: BenchmarkSample, pi: np.ndarray, ids: Sequence[str]) -> dict[str, float]:
    """θ_G of every metric on the whole population (each true cluster once, no bias
    adjustment): the domain ratio of population totals (SPEC 8)."""
    res = estimate_metrics(population, list(ids), bias_adjust=False, domain=pi)
    return {m: r.estimate for m, r in res.items()}


def method_cells(population: BenchmarkSample, design_sample: BenchmarkSample, idx: np.ndarray, *,
                 ids: tuple[str, ...], truth: dict[str, float], methods: tuple[str, ...], ci_level: float,
                 bias_adjust: bool, n_boot: int, seed: int, membership: Membership | None,
                 group_truths: dict[str, dict[str, float]] | None, baseline: BenchmarkSample | None,
                 change_truth: dict[str, float] | None) -> list[CoverageCell]:
    """Every replicate of ``idx`` (replicates × draws of cluster indices of ``design_sample``)
    through the API's estimators: single estimates for ``methods``, and with ``membership``
    the group estimates and gaps, with ``baseline`` the paired changes."""
    k = design_sample.labels.shape[0]
    rng = np.random.default_rng([seed, 21])
    cells: dict = {}
    perf = tuple(m for m in ids if m in PERFORMANCE_METRICS)
    group_ids = tuple(m for m in perf if m not in NO_SUBGROUP_FORM)
    if baseline is not None:
        where = {label: i for i, label in enumerate(baseline.labels)}
        base_index = np.fromiter((where.get(label, -1) for label in design_sample.labels), dtype=np.int64, count=k)
    for r in range(idx.shape[0]):
        counts = np.bincount(idx[r], minlength=k)
        sample = drawn_sample(design_sample, counts)
        boot_seed = int(rng.integers(0, 2**31))
        single = [m for m in methods if m != "linearization" and m not in GAP_METHODS]
        if single:
            res = estimate_methods(sample, ids, methods=single, ci_level=ci_level, bias_adjust=bias_adjust,
                                   n_boot=n_boot, seed=boot_seed)
            for method, by_metric in res.items():
                for m, e in by_metric.items():
                    _add(_cell(cells, "estimate", m, method, truth[m]), e.estimate, e.std_error, e.ci_lower,
                         e.ci_upper)
        if membership is not None and group_ids and group_truths is not None:
            keep = counts > 0
            gm = Membership(groups=membership.groups, pi=membership.pi[keep], known=membership.known[keep])
            res_g = estimate_groups_methods(sample, gm, group_ids, methods=methods, ci_level=ci_level,
                                            min_draws=2, adjust="none", bias_adjust=bias_adjust, n_boot=n_boot,
                                            seed=boot_seed)
            for method, rows in res_g.items():
                for row in rows:
                    tg, tc = group_truths[row.group], group_truths[f"rest of {row.group}"]
                    m = row.metric
                    e, d = row.estimate, row.disparity
                    if method not in GAP_METHODS:  # a gap-only method shows no estimates of its own
                        _add(_cell(cells, f"group {row.group}", m, method, tg[m]), e.estimate, e.std_error,
                             e.ci_lower, e.ci_upper)
                    _add(_cell(cells, f"gap {row.group}", m, method, tg[m] - tc[m]), d.estimate, d.std_error,
                         d.ci_lower, d.ci_upper)
        change_methods = [m for m in methods if m not in GAP_METHODS]
        if baseline is not None and change_truth is not None and perf and change_methods:
            counts_b = np.zeros(baseline.labels.shape[0], dtype=np.int64)
            present = base_index >= 0
            counts_b[base_index[present]] = counts[present]
            base = drawn_sample(baseline, counts_b)
            res_c = paired_changes(sample, base, perf, methods=change_methods, ci_level=ci_level, n_boot=n_boot,
                                   seed=boot_seed)
            for m, by_method in res_c.items():
                for method, ch in by_method.items():
                    c = ch.change
                    _add(_cell(cells, "change", m, method, change_truth[m]), c.estimate, c.std_error, c.ci_lower,
                         c.ci_upper)
    return list(cells.values())


def cell_row(cell: CoverageCell, *, design: str, size: int, reps: int) -> dict:
    """One row of the :func:`simulate` frame from a cell's replicates."""
    est = np.asarray(cell.estimate, dtype=np.float64)
    lo = np.asarray(cell.lower, dtype=np.float64)
    hi = np.asarray(cell.upper, dtype=np.float64)
    se = np.asarray(cell.std_error, dtype=np.float64)
    ok = ~np.isnan(est)
    e = est[ok]
    truth = cell.truth
    with np.errstate(invalid="ignore"):
        covered = (lo <= truth) & (truth <= hi)
    mean = float(e.mean()) if e.size else math.nan
    return {
        "metric": cell.metric, "design": design, "size": size, "truth": truth, "mean": mean, "bias": mean - truth,
        "rmse": float(np.sqrt(np.mean((e - truth) ** 2))) if e.size else math.nan,
        "coverage": float(covered.mean()) if not math.isnan(truth) else math.nan, "reps": reps,
        "sd": float(e.std(ddof=1)) if e.size >= 2 else math.nan,
        "mean_se": float(np.nanmean(se)) if np.any(~np.isnan(se)) else math.nan,
        "undefined": int((~ok).sum()), "target": cell.target, "ci_method": cell.method,
    }
