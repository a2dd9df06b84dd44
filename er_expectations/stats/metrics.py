"""Performance metrics and true-clustering statistics as ratios of expectations (SPEC 5, 7).

Each metric is a :class:`MetricDef` that maps the per-sampled-cluster table to the
per-cluster values f(c) and g(c) (weights included); :func:`estimate_metrics` feeds them
to the ratio estimator. Property tests iterate over :data:`METRICS`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from .estimator import RatioEstimate, check_ci_level, f_beta_estimate, ratio_estimate
from .sample import BenchmarkSample, ClusterErrors, cluster_errors

__all__ = [
    "MetricDef",
    "METRICS",
    "PERFORMANCE_METRICS",
    "TRUE_STATISTICS",
    "NAME_STATISTICS",
    "check_beta",
    "resolve_metrics",
    "estimate_metrics",
    "fg_values",
    "error_contributions",
]

FG = Callable[[BenchmarkSample, ClusterErrors, float], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True, slots=True)
class MetricDef:
    """One estimable quantity: its id, label, f/g (SPEC 5 and 7) and range."""

    id: str
    label: str
    kind: str  # "performance" | "statistic"
    fg: FG | None  # None for metrics combined from others (b-cubed F)
    bounds: tuple[float, float] | None = (0.0, 1.0)
    complement: bool = False  # homogeneity = 1 − ratio
    uses_beta: bool = False
    needs_names: bool = False
    needs_population_counts: bool = False  # depends on N and |Ĉ| (cluster precision, F)
    undefined_reason: str = "the denominator E[g] is 0 in this sample"


def _w(sample: BenchmarkSample) -> np.ndarray:
    """Weights scaled to a maximum of 1: every metric is a ratio, so the scale cancels, and
    weights such as 1e308 cannot overflow the sums (SPEC 6)."""
    w = sample.weight.astype(np.float64)
    return w / w.max()


def _s(sample: BenchmarkSample) -> np.ndarray:
    return sample.size.astype(np.float64)


def _pairwise_tp(sample: BenchmarkSample, e: ClusterErrors) -> np.ndarray:
    s = _s(sample)
    return s * (s - 1.0 - e.uce) * _w(sample)


def _pp(sample: BenchmarkSample, e: ClusterErrors, beta: float):
    s = _s(sample)
    return _pairwise_tp(sample, e), s * (s - 1.0 + e.sde) * _w(sample)


def _pr(sample: BenchmarkSample, e: ClusterErrors, beta: float):
    s = _s(sample)
    return _pairwise_tp(sample, e), s * (s - 1.0) * _w(sample)


def _pf(sample: BenchmarkSample, e: ClusterErrors, beta: float):
    s = _s(sample)
    return _pairwise_tp(sample, e), s * (s - 1.0 + e.sde / (1.0 + beta * beta)) * _w(sample)


def _cp(sample: BenchmarkSample, e: ClusterErrors, beta: float):
    w = _w(sample)
    return sample.n_records * (1.0 - e.ei) * w, sample.n_clusters * _s(sample) * w


def _cr(sample: BenchmarkSample, e: ClusterErrors, beta: float):
    w = _w(sample)
    return (1.0 - e.ei) * w, w


def _cf(sample: BenchmarkSample, e: ClusterErrors, beta: float):
    w = _w(sample)
    b2 = beta * beta
    n = float(sample.n_records)
    return n * (1.0 + b2) * (1.0 - e.ei) * w, (n * b2 + sample.n_clusters * _s(sample)) * w


def _bp(sample: BenchmarkSample, e: ClusterErrors, beta: float):
    w = _w(sample)
    return (1.0 - e.roce) * w, w


def _br(sample: BenchmarkSample, e: ClusterErrors, beta: float):
    w = _w(sample)
    return (1.0 - e.ruce) * w, w


def _hom(sample: BenchmarkSample, e: ClusterErrors, beta: float):
    s, w = _s(sample), _w(sample)
    return s * e.hl * w, s * np.log(s / float(sample.n_records)) * w


def _avg(sample: BenchmarkSample, e: ClusterErrors, beta: float):
    w = _w(sample)
    return _s(sample) * w, w


def _match(sample: BenchmarkSample, e: ClusterErrors, beta: float):
    s, w = _s(sample), _w(sample)
    return s * (s > 1) * w, s * w


def _named(sample: BenchmarkSample, flag: np.ndarray | None, what: str):
    if flag is None or sample.has_name is None:
        raise InputError(f"{what} needs a name column: pass name=<column>")
    w = _w(sample) * sample.has_name
    return flag.astype(np.float64) * w, w


def _homonymy(sample: BenchmarkSample, e: ClusterErrors, beta: float):
    return _named(sample, sample.homonym, "homonymy_rate")


def _variation(sample: BenchmarkSample, e: ClusterErrors, beta: float):
    return _named(sample, sample.name_variation, "name_variation_rate")


_NO_PAIRS = "no sampled cluster has 2 or more records, so there are no pairs to count"

_DEFS: tuple[MetricDef, ...] = (
    MetricDef("pairwise_precision", "pairwise precision", "performance", _pp,
              undefined_reason="no sampled record is in a predicted cluster of 2 or more records"),
    MetricDef("pairwise_recall", "pairwise recall", "performance", _pr, undefined_reason=_NO_PAIRS),
    MetricDef("pairwise_f", "pairwise F", "performance", _pf, uses_beta=True, undefined_reason=_NO_PAIRS),
    MetricDef("cluster_precision", "cluster precision", "performance", _cp, needs_population_counts=True),
    MetricDef("cluster_recall", "cluster recall", "performance", _cr),
    MetricDef("cluster_f", "cluster F", "performance", _cf, uses_beta=True, needs_population_counts=True),
    MetricDef("b_cubed_precision", "b-cubed precision", "performance", _bp),
    MetricDef("b_cubed_recall", "b-cubed recall", "performance", _br),
    MetricDef("b_cubed_f", "b-cubed F", "performance", None, uses_beta=True),
    MetricDef("homogeneity", "homogeneity", "performance", _hom, complement=True,
              undefined_reason="every sampled cluster holds the whole release, so the entropy of the true clustering is 0"),
    MetricDef("average_cluster_size", "average true cluster size", "statistic", _avg, bounds=(1.0, math.inf)),
    MetricDef("matching_rate", "true matching rate", "statistic", _match),
    MetricDef("homonymy_rate", "true homonymy rate", "statistic", _homonymy, needs_names=True,
              undefined_reason="no sampled cluster has a named record"),
    MetricDef("name_variation_rate", "true name variation rate", "statistic", _variation, needs_names=True,
              undefined_reason="no sampled cluster has a named record"),
)

#: Every estimable metric, by id, in output order.
METRICS: dict[str, MetricDef] = {m.id: m for m in _DEFS}
PERFORMANCE_METRICS: tuple[str, ...] = tuple(m.id for m in _DEFS if m.kind == "performance")
TRUE_STATISTICS: tuple[str, ...] = tuple(m.id for m in _DEFS if m.kind == "statistic")
NAME_STATISTICS: tuple[str, ...] = ("homonymy_rate", "name_variation_rate")


def check_beta(beta: float, *, parameter: str = "beta") -> float:
    """Validate β > 0 (finite)."""
    if isinstance(beta, bool) or not isinstance(beta, (int, float, np.floating, np.integer)):
        raise InputError(f"{parameter}={beta!r} is not a number; give β > 0 (1 for F1, 0.5 to favour precision, 2 recall)")
    b = float(beta)
    if not (math.isfinite(b) and b > 0):
        raise InputError(f"{parameter}={beta!r} is invalid; F_β needs a finite β > 0 (1 for F1)")
    return b


def resolve_metrics(metrics: str | Iterable[str] | None, *, names: bool) -> tuple[str, ...]:
    """Validate metric ids; ``None`` means every metric (name statistics only with names)."""
    if metrics is None:
        return tuple(m for m in METRICS if names or m not in NAME_STATISTICS)
    if isinstance(metrics, str):
        metrics = (metrics,)
    if not isinstance(metrics, Iterable) or isinstance(metrics, (bytes, dict)):
        raise InputError(f"metrics={metrics!r}: give a metric id, a list of metric ids, or None for all; "
                         f"known ids: {', '.join(METRICS)}")
    metrics = list(metrics)
    if not metrics:
        raise InputError("metrics=[] selects no metric; give metric ids, or None for all of them")
    out: list[str] = []
    for m in metrics:
        if not isinstance(m, str):
            raise InputError(f"metrics: {m!r} is not a metric id (a text such as 'pairwise_precision')")
        if m not in METRICS:
            import difflib

            close = difflib.get_close_matches(str(m), list(METRICS), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise InputError(f"metrics: unknown metric id {m!r}{hint} Known ids: {', '.join(METRICS)}")
        if m in NAME_STATISTICS and not names:
            raise InputError(f"metrics: {m!r} needs a name column; pass name=<column>")
        if m not in out:
            out.append(m)
    return tuple(out)


def fg_values(sample: BenchmarkSample, metric: str, *, beta: float = 1.0,
              errors: ClusterErrors | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per-cluster f(c) and g(c) of a metric (weights included), SPEC 5 and 7."""
    d = METRICS[metric]
    if d.fg is None:
        raise InputError(f"{metric} is combined from other estimates and has no f/g of its own")
    return d.fg(sample, errors if errors is not None else cluster_errors(sample), beta)


def _range_note(metric: MetricDef, est: float) -> str:
    if metric.bounds is None or math.isnan(est):
        return ""
    lo, hi = metric.bounds
    if lo <= est <= hi:
        return ""
    if metric.needs_population_counts:
        return (f"warning: estimate {est:.4g} lies outside [{lo:g}, {hi:g}]: {metric.label} uses the record and "
                "cluster counts of the release, which are only right when the benchmark was sampled from "
                "the whole release population (SPEC 5)")
    return (f"warning: estimate {est:.4g} lies outside [{lo:g}, {hi:g}] (sampling noise in a small "
            "or bias-adjusted sample)")


def _finish(metric: MetricDef, est: RatioEstimate) -> RatioEstimate:
    if metric.complement and est.defined:
        lo, hi = est.ci_lower, est.ci_upper
        lo, hi = (1.0 - hi, 1.0 - lo) if not math.isnan(lo) else (lo, hi)
        if not math.isnan(lo) and 0.0 <= 1.0 - est.estimate <= 1.0:
            lo, hi = max(lo, 0.0), min(hi, 1.0)
        influence = None if est.influence is None else -est.influence
        est = RatioEstimate(1.0 - est.estimate, est.std_error, lo, hi, est.draws, est.clusters,
                            est.ci_level, est.note.replace("numerator", "entropy term"), influence)
    extra = _range_note(metric, est.estimate)
    if extra:
        note = "; ".join(n for n in (est.note, extra) if n)
        est = RatioEstimate(est.estimate, est.std_error, est.ci_lower, est.ci_upper, est.draws,
                            est.clusters, est.ci_level, note, est.influence)
    return est


def estimate_metrics(
    sample: BenchmarkSample,
    metrics: Sequence[str] | None = None,
    *,
    beta: float = 1.0,
    ci_level: float = 0.95,
    bias_adjust: bool = True,
) -> dict[str, RatioEstimate]:
    """Estimate the requested metrics from a benchmark sample (SPEC 5–7).

    Returns one :class:`RatioEstimate` per metric id, in the order asked.
    """
    beta = check_beta(beta)
    level = check_ci_level(ci_level)
    ids = resolve_metrics(metrics, names=sample.has_name is not None)
    errors = cluster_errors(sample)
    draws = sample.draws.astype(np.float64)
    out: dict[str, RatioEstimate] = {}
    cache: dict[str, RatioEstimate] = {}

    def one(mid: str) -> RatioEstimate:
        if mid in cache:
            return cache[mid]
        d = METRICS[mid]
        if d.fg is None:  # b-cubed F
            p, r = one("b_cubed_precision"), one("b_cubed_recall")
            res = f_beta_estimate(p, r, draws, beta=beta, ci_level=level)
        else:
            f, g = d.fg(sample, errors, beta)
            bounds = None if d.complement else d.bounds
            res = ratio_estimate(f, g, draws, bias_adjust=bias_adjust, ci_level=level, bounds=bounds,
                                 undefined_reason=d.undefined_reason)
        res = _finish(d, res)
        cache[mid] = res
        return res

    for mid in ids:
        out[mid] = one(mid)
    return out


def error_contributions(sample: BenchmarkSample, metric: str, *, beta: float = 1.0) -> np.ndarray:
    """Each sampled cluster's share of the estimated error 1 − θ (plain ratio, draws counted).

    For a performance metric with f ≤ g the error is Σ d (g − f) / Σ d g, so a cluster
    contributes d_c (g_c − f_c) / Σ d g; for homogeneity the error term is Σ d f / Σ d g.
    The values add up to the plain-ratio error and rank clusters for the failure table.
    """
    d = METRICS[metric]
    if d.kind != "performance":
        raise InputError(f"{metric} is not a performance metric; error contributions apply to performance metrics")
    draws = sample.draws.astype(np.float64)
    if d.fg is None:
        pc = error_contributions(sample, "b_cubed_precision", beta=beta)
        rc = error_contributions(sample, "b_cubed_recall", beta=beta)
        return (pc + rc) / 2.0
    f, g = d.fg(sample, cluster_errors(sample), beta)
    total = float((draws * g).sum())
    if total == 0:
        return np.zeros_like(f)
    if d.complement:
        return draws * f / total
    return draws * (g - f) / total
