"""Performance metrics and true-clustering statistics as ratios of expectations (SPEC 5, 7).

Each metric is a :class:`MetricDef` that maps the per-sampled-cluster table to the
per-cluster values f(c) and g(c) (weights included); :func:`estimate_metrics` feeds them
to the ratio estimator. Property tests iterate over :data:`METRICS`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from ..errors import InputError
from .estimator import (
    DEFAULT_N_BOOT,
    RatioEstimate,
    bootstrap_sums,
    check_ci_level,
    check_ci_method,
    check_n_boot,
    f_beta_estimate,
    percentile_interval,
    ratio_estimate,
    ratio_replicates,
    resolve_seed,
)
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
    """One estimable quantity: its id, label, f/g (SPEC 5 and 7) and range.

    ``zero_event`` marks metrics with 0 ≤ f(c) ≤ g(c) for every cluster (a g-weighted
    share): a sample without a single error (or event) then gets the binomial interval of
    :func:`~er_expectations.stats.estimator.zero_event_interval` (SPEC 6).
    """

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
    zero_event: bool = False


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
              undefined_reason="no sampled record is in a predicted cluster of 2 or more records", zero_event=True),
    MetricDef("pairwise_recall", "pairwise recall", "performance", _pr, undefined_reason=_NO_PAIRS,
              zero_event=True),
    MetricDef("pairwise_f", "pairwise F", "performance", _pf, uses_beta=True, undefined_reason=_NO_PAIRS,
              zero_event=True),
    MetricDef("cluster_precision", "cluster precision", "performance", _cp, needs_population_counts=True),
    MetricDef("cluster_recall", "cluster recall", "performance", _cr, zero_event=True),
    MetricDef("cluster_f", "cluster F", "performance", _cf, uses_beta=True, needs_population_counts=True),
    MetricDef("b_cubed_precision", "b-cubed precision", "performance", _bp, zero_event=True),
    MetricDef("b_cubed_recall", "b-cubed recall", "performance", _br, zero_event=True),
    MetricDef("b_cubed_f", "b-cubed F", "performance", None, uses_beta=True),
    MetricDef("homogeneity", "homogeneity", "performance", _hom, complement=True,
              undefined_reason="every sampled cluster holds the whole release, so the entropy of the true clustering is 0"),
    MetricDef("average_cluster_size", "average true cluster size", "statistic", _avg, bounds=(1.0, math.inf)),
    MetricDef("matching_rate", "true matching rate", "statistic", _match, zero_event=True),
    MetricDef("homonymy_rate", "true homonymy rate", "statistic", _homonymy, needs_names=True,
              undefined_reason="no sampled cluster has a named record", zero_event=True),
    MetricDef("name_variation_rate", "true name variation rate", "statistic", _variation, needs_names=True,
              undefined_reason="no sampled cluster has a named record", zero_event=True),
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
            from ..hints import did_you_mean

            close = did_you_mean(m, list(METRICS))
            hint = f"; {close}" if close else ""
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
        est = replace(est, estimate=1.0 - est.estimate, ci_lower=lo, ci_upper=hi,
                      note=est.note.replace("numerator", "entropy term"), influence=influence)
    extra = _range_note(metric, est.estimate)
    if extra:
        est = replace(est, note="; ".join(n for n in (est.note, extra) if n))
    return est


def estimate_metrics(
    sample: BenchmarkSample,
    metrics: Sequence[str] | None = None,
    *,
    beta: float = 1.0,
    ci_level: float = 0.95,
    bias_adjust: bool = True,
    ci_method: str = "linearization",
    n_boot: int = DEFAULT_N_BOOT,
    seed: int | None = None,
    domain: np.ndarray | None = None,
) -> dict[str, RatioEstimate]:
    """Estimate the requested metrics from a benchmark sample (SPEC 5–7).

    Returns one :class:`RatioEstimate` per metric id, in the order asked. The estimate
    and standard error never depend on ``ci_method``; with ``"bootstrap"`` the interval is
    the percentile interval of ``n_boot`` resamples of the draws (seeded by ``seed``; a
    fresh seed is drawn and recorded in each result when it is None). A sample without a
    single error keeps its zero-event interval whatever the method (SPEC 6).

    The other methods of :data:`~er_expectations.stats.intervals.INTERVAL_METHODS`:
    ``"logit"`` (:func:`~er_expectations.stats.intervals.logit_interval`, for metrics in
    (0, 1); others keep the linearised interval, with a note), ``"bca"`` and
    ``"studentized"`` (:func:`~er_expectations.stats.intervals.bca_interval`,
    :func:`~er_expectations.stats.intervals.studentized_interval`, on the same resamples
    as ``"bootstrap"``: a seed gives the same replicates θ̂* to every bootstrap method).
    ``n_boot`` is at most :data:`~er_expectations.stats.intervals.MAX_N_BOOT`.
    ``"recommended"`` gives each metric its
    :data:`~er_expectations.stats.estimator.RECOMMENDED_CI_METHOD` (the result's
    ``interval`` names the method used).

    ``domain`` (one value π(c) in [0, 1] per sampled cluster) gives the domain estimator of
    a subgroup of entities (SPEC 8): f and g become f·π and g·π over *all* the draws, draws
    outside the group contributing zeros, so the estimates share their rows with any other
    domain of the same sample (see :mod:`.subgroups`).
    """
    # imported here, not at the top: keeps this change apart from the module move of issue 21
    from er_expectations.stats.estimator import BOOTSTRAP_METHODS

    beta = check_beta(beta)
    level = check_ci_level(ci_level)
    method = check_ci_method(ci_method, every_method=True)
    if method == "recommended":  # each metric with its own method (RECOMMENDED_CI_METHOD)
        from er_expectations.stats.methods import estimate_methods

        return estimate_methods(sample, metrics, methods=(method,), beta=beta, ci_level=level,
                                bias_adjust=bias_adjust, n_boot=n_boot, seed=seed, domain=domain)[method]
    if method in BOOTSTRAP_METHODS:
        n_boot = check_n_boot(n_boot)
        seed = resolve_seed(seed)
    ids = resolve_metrics(metrics, names=sample.has_name is not None)
    errors = cluster_errors(sample)
    draws = sample.draws.astype(np.float64)
    out: dict[str, RatioEstimate] = {}
    cache: dict[str, RatioEstimate] = {}
    values: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def one(mid: str) -> RatioEstimate:
        if mid in cache:
            return cache[mid]
        d = METRICS[mid]
        if d.fg is None:  # b-cubed F
            p, r = one("b_cubed_precision"), one("b_cubed_recall")
            res = f_beta_estimate(p, r, draws, beta=beta, ci_level=level)
        else:
            f, g = d.fg(sample, errors, beta)
            if domain is not None:
                f, g = f * domain, g * domain
            values[mid] = (f, g)
            bounds = None if d.complement else d.bounds
            res = ratio_estimate(f, g, draws, bias_adjust=bias_adjust, ci_level=level, bounds=bounds,
                                 undefined_reason=d.undefined_reason, zero_event=d.zero_event)
        res = _finish(d, res)
        cache[mid] = res
        return res

    for mid in ids:
        out[mid] = one(mid)
    if method == "bootstrap":
        replicates = _bootstrap_replicates(values, draws, sample.k, beta=beta, bias_adjust=bias_adjust,
                                           n_boot=n_boot, seed=seed, order=_label_order(sample.labels))
        out = {mid: _with_bootstrap(METRICS[mid], res, replicates[mid], level=level, n_boot=n_boot, seed=seed)
               for mid, res in out.items()}
    elif method != "linearization":
        from er_expectations.stats.methods import with_interval_method

        out = with_interval_method(out, values, draws, method=method, ci_level=level, beta=beta,
                                   bias_adjust=bias_adjust, n_boot=n_boot, seed=seed,
                                   order=_label_order(sample.labels))
    return out


def _label_order(labels: np.ndarray) -> np.ndarray:
    """The clusters in the order of their ids as text: the same whatever engine listed them."""
    return np.argsort(np.array([str(x) for x in labels], dtype=object), kind="stable")


def _bootstrap_replicates(values: dict[str, tuple[np.ndarray, np.ndarray]], draws: np.ndarray, k: int, *,
                          beta: float, bias_adjust: bool, n_boot: int, seed: int,
                          order: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Every metric on the same ``n_boot`` resamples of the draws, on the metric's scale (SPEC 6).

    The clusters are resampled in ``order`` (by id), so that a seed gives the same
    replicates whichever engine aggregated the sample and in whatever order it listed them.
    """
    ids = list(values)
    columns = np.column_stack([c for mid in ids for f, g in [values[mid]] for c in (f, g, g * f, g * g)])
    if order is not None:
        columns, draws = columns[order], draws[order]
    sums = bootstrap_sums(columns, draws.astype(np.int64), n_boot=n_boot, seed=seed)
    reps: dict[str, np.ndarray] = {}
    for j, mid in enumerate(ids):
        theta = ratio_replicates(*(sums[:, 4 * j + c] for c in range(4)), k, bias_adjust=bias_adjust)
        reps[mid] = 1.0 - theta if METRICS[mid].complement else theta
    if "b_cubed_precision" in reps and "b_cubed_recall" in reps:
        p, r = reps["b_cubed_precision"], reps["b_cubed_recall"]
        b2 = beta * beta
        with np.errstate(divide="ignore", invalid="ignore"):
            f_rep = (1 + b2) * p * r / (b2 * p + r)
        reps["b_cubed_f"] = np.where((p > 0) & (r > 0), f_rep, np.where(np.isnan(p) | np.isnan(r), np.nan, 0.0))
    return reps


def _with_bootstrap(metric: MetricDef, res: RatioEstimate, replicates: np.ndarray, *, level: float,
                    n_boot: int, seed: int) -> RatioEstimate:
    """Replace a linearised interval by the percentile interval of the replicates."""
    if res.interval != "linearization":
        # no interval, or a sample without errors: every replicate repeats the estimate,
        # so the zero-event interval stands (SPEC 6)
        return replace(res, seed=seed)
    lo, hi, dropped = percentile_interval(replicates, res.estimate, ci_level=level, bounds=metric.bounds)
    note = res.note
    if dropped:
        note = "; ".join(n for n in (note, f"{dropped} of {n_boot} bootstrap resamples have no value of the "
                                           "denominator and are left out") if n)
    return replace(res, ci_lower=lo, ci_upper=hi, note=note, interval="bootstrap", seed=seed)


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
