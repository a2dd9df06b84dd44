"""Performance metrics and true-clustering statistics as ratios of expectations (SPEC 5, 7).

Each metric is a :class:`MetricDef` that maps the per-sampled-cluster table to the
per-cluster values f(c) and g(c) (weights included); :func:`estimate_metrics` feeds them
to the ratio estimator. Property tests iterate over :data:`METRICS`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from er_expectations.core.errors import InputError
from er_expectations.stats.estimator import (
    BOOTSTRAP_METHODS,
    DEFAULT_N_BOOT,
    INTERVAL_METHODS,
    RECOMMENDED,
    RECOMMENDED_CI_METHOD,
    RatioEstimate,
    bootstrap_sums,
    check_ci_level,
    check_ci_method,
    check_n_boot,
    concrete_methods,
    f_beta_estimate,
    interval_seed,
    percentile_interval,
    ratio_estimate,
    ratio_replicates,
)
from er_expectations.stats.intervals import bca_interval, logit_interval, studentized_interval
from er_expectations.stats.joint import JointBootstrap
from er_expectations.stats.sample import BenchmarkSample, ClusterErrors, cluster_errors

__all__ = [
    "MetricDef",
    "F_PARTS_LABELS",
    "METRICS",
    "PERFORMANCE_METRICS",
    "TRUE_STATISTICS",
    "NAME_STATISTICS",
    "check_beta",
    "resolve_metrics",
    "estimate_metrics",
    "fg_values",
    "error_contributions",
    "base_series",
    "combination_se",
    "estimate_methods",
    "f_beta_replicates",
    "interval_from_replicates",
    "metric_replicates",
    "moment_pairs",
    "replicate_metric",
    "with_interval_method",
    "with_logit",
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
#: How the note of b-cubed F names its parts (SPEC 6: a note belongs to its quantity).
F_PARTS_LABELS: tuple[str, str] = (METRICS["b_cubed_precision"].label, METRICS["b_cubed_recall"].label)
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
            from er_expectations.core.hints import did_you_mean

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


def finish_metric(metric: MetricDef, est: RatioEstimate) -> RatioEstimate:
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
    the percentile interval of ``n_boot`` resamples of the draws (seeded by ``seed``;
    :data:`~.estimator.DEFAULT_SEED` when it is None, recorded in each result). A sample without a
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
    beta = check_beta(beta)
    level = check_ci_level(ci_level)
    method = check_ci_method(ci_method, every_method=True)
    if method == "recommended":  # each metric with its own method (RECOMMENDED_CI_METHOD)
        return estimate_methods(sample, metrics, methods=(method,), beta=beta, ci_level=level,
                                bias_adjust=bias_adjust, n_boot=n_boot, seed=seed, domain=domain)[method]
    if method in BOOTSTRAP_METHODS:
        n_boot = check_n_boot(n_boot)
        seed = interval_seed(seed)
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
            res = f_beta_estimate(p, r, draws, beta=beta, ci_level=level, labels=F_PARTS_LABELS)
        else:
            f, g = d.fg(sample, errors, beta)
            if domain is not None:
                f, g = f * domain, g * domain
            values[mid] = (f, g)
            bounds = None if d.complement else d.bounds
            res = ratio_estimate(f, g, draws, bias_adjust=bias_adjust, ci_level=level, bounds=bounds,
                                 undefined_reason=d.undefined_reason, zero_event=d.zero_event)
        res = finish_metric(d, res)
        cache[mid] = res
        return res

    for mid in ids:
        out[mid] = one(mid)
    if method == "bootstrap":
        replicates = _bootstrap_replicates(values, draws, sample.k, beta=beta, bias_adjust=bias_adjust,
                                           n_boot=n_boot, seed=seed, order=label_order(sample.labels))
        out = {mid: _with_bootstrap(METRICS[mid], res, replicates[mid], level=level, n_boot=n_boot, seed=seed)
               for mid, res in out.items()}
    elif method != "linearization":
        out = with_interval_method(out, values, draws, method=method, ci_level=level, beta=beta,
                                   bias_adjust=bias_adjust, n_boot=n_boot, seed=seed,
                                   order=label_order(sample.labels))
    return out


def label_order(labels: np.ndarray) -> np.ndarray:
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


# -- interval methods other than linearisation and the percentile bootstrap (issue 21) ------
_METHOD_LABEL = {"bootstrap": "percentile bootstrap", "bca": "BCa bootstrap", "studentized": "studentised bootstrap",
                 "logit": "logit"}


def with_logit(metric: MetricDef, res: RatioEstimate, *, ci_level: float) -> RatioEstimate:
    """``res`` with the logit interval of :func:`~.intervals.logit_interval` (SPEC 6).

    Only a linearised interval is replaced (a zero-event interval, or none, stands); a
    metric whose range is not [0, 1], or an estimate at or beyond 0 or 1, keeps the
    linearised interval with a note saying why.
    """
    if res.interval != "linearization":
        return res
    if metric.bounds != (0.0, 1.0):
        return replace(res, note=_join(res.note, f"logit interval not used: {metric.label} does not live in [0, 1]; "
                                                 "linearised interval"))
    lo, hi = logit_interval(res.estimate, res.std_error, ci_level=ci_level)
    if np.isnan(lo):
        return replace(res, note=_join(res.note, f"logit interval not used: the estimate {res.estimate:.4g} is not "
                                                 "inside (0, 1); linearised interval"))
    return replace(res, ci_lower=float(lo), ci_upper=float(hi), interval="logit")


def f_beta_replicates(p: np.ndarray, r: np.ndarray, *, beta: float) -> np.ndarray:
    """F_β = (1+β²)PR/(β²P + R) of replicate precisions and recalls; 0 when either is 0,
    NaN when either is undefined (as :func:`~.estimator.f_beta_estimate`)."""
    b2 = beta * beta
    with np.errstate(divide="ignore", invalid="ignore"):
        f = (1 + b2) * p * r / (b2 * p + r)
    return np.where((p > 0) & (r > 0), f, np.where(np.isnan(p) | np.isnan(r), np.nan, 0.0))


def base_series(mid: str) -> tuple[str, ...]:
    """The ratio metrics a metric is computed from: itself, or b-cubed precision and recall
    for b-cubed F (SPEC 5)."""
    return ("b_cubed_precision", "b_cubed_recall") if METRICS[mid].fg is None else (mid,)


Terms = list[tuple[Hashable, "np.ndarray | float"]]


def replicate_metric(boot: JointBootstrap, mid: str, key: Callable[[str], Hashable], *,
                     beta: float) -> tuple[np.ndarray, Terms]:
    """θ̂* of metric ``mid`` on every resample of ``boot``, on the metric's scale, and its
    linearisation: the series and coefficients c whose Σ c·u is its influence.

    ``key(m)`` names the series of ratio metric m in ``boot`` (a metric of one domain or
    one release). Homogeneity is 1 − ratio (coefficient −1); b-cubed F is F_β of the
    b-cubed replicates with coefficients ∂F/∂P and ∂F/∂R at the replicate's P*, R* (as
    :func:`~.estimator.f_beta_estimate` does for the sample).
    """
    if METRICS[mid].fg is not None:
        theta = boot.theta[key(mid)]
        if METRICS[mid].complement:
            return 1.0 - theta, [(key(mid), -1.0)]
        return theta, [(key(mid), 1.0)]
    pk, rk = key("b_cubed_precision"), key("b_cubed_recall")
    p, r = boot.theta[pk], boot.theta[rk]
    b2 = beta * beta
    with np.errstate(divide="ignore", invalid="ignore"):
        denom = b2 * p + r
        d_p = (1 + b2) * r**2 / denom**2
        d_r = (1 + b2) * b2 * p**2 / denom**2
    return f_beta_replicates(p, r, beta=beta), [(pk, d_p), (rk, d_r)]


def combination_se(boot: JointBootstrap, terms: Terms) -> np.ndarray:
    """√(Σ_i Σ_j c_i c_j C*(i, j)) on every resample: the linearised standard error of
    Σ c·θ̂ (the covariances of every pair of series must have been asked for)."""
    var = np.zeros(boot.n_boot)
    with np.errstate(invalid="ignore"):
        for i, (a, ca) in enumerate(terms):
            for j, (b, cb) in enumerate(terms):
                if j < i:
                    continue
                var = var + (1.0 if i == j else 2.0) * ca * cb * boot.covariance(a, b)
    return np.sqrt(np.maximum(var, 0.0))


def moment_pairs(keys: list[Hashable]) -> list[tuple[Hashable, Hashable]]:
    """Every pair (a, b), a before b or equal, of ``keys``: the moments a combination needs."""
    keys = list(dict.fromkeys(keys))
    return [(a, b) for i, a in enumerate(keys) for b in keys[i:]]


def metric_replicates(values: Mapping[str, tuple[np.ndarray, np.ndarray]], draws: np.ndarray, ids: tuple[str, ...], *,
                      beta: float, bias_adjust: bool, n_boot: int, seed: int, order: np.ndarray | None,
                      with_se: bool) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray] | None]:
    """θ̂* of every metric in ``ids`` on the same ``n_boot`` resamples, on the metric's scale
    (homogeneity as 1 − ratio; b-cubed F from the b-cubed replicates), and SE* when asked.

    ``values`` holds f and g of every ratio metric needed (b-cubed precision and recall
    for b-cubed F). The resamples are those of the percentile bootstrap of
    :func:`~.metrics.estimate_metrics` for the same seed, draws and order.
    """
    moments: list[tuple[Hashable, Hashable]] = []
    if with_se:
        for mid in ids:
            moments += moment_pairs(list(base_series(mid)))
    boot = JointBootstrap(values, draws, n_boot=n_boot, seed=seed, bias_adjust=bias_adjust, order=order,
                          moments=moments)
    reps: dict[str, np.ndarray] = {}
    ses: dict[str, np.ndarray] | None = {} if with_se else None
    for mid in ids:
        theta, terms = replicate_metric(boot, mid, lambda m: m, beta=beta)
        reps[mid] = theta
        if ses is not None:
            ses[mid] = combination_se(boot, terms)
    return reps, ses


def interval_from_replicates(method: str, res: RatioEstimate, replicates: np.ndarray,
                             replicate_se: np.ndarray | None, draws: np.ndarray, *,
                             bounds: tuple[float, float] | None, ci_level: float) -> tuple[float, float, int]:
    """(lower, upper, replicates left out) of a bootstrap ``method`` for one estimate."""
    if method == "bootstrap":
        return percentile_interval(replicates, res.estimate, ci_level=ci_level, bounds=bounds)
    if method == "bca":
        return bca_interval(replicates, res.estimate, res.influence, draws, ci_level=ci_level, bounds=bounds)
    if method == "studentized":
        return studentized_interval(replicates, replicate_se, res.estimate, res.std_error, ci_level=ci_level,
                                    bounds=bounds)
    raise ValueError(f"not a bootstrap method: {method!r}")


def _join(*notes: str) -> str:
    return "; ".join(n for n in notes if n)


def apply_method(metric: MetricDef, res: RatioEstimate, method: str, reps: np.ndarray, se: np.ndarray | None,
           draws: np.ndarray, *, ci_level: float, n_boot: int, seed: int) -> RatioEstimate:
    if res.interval != "linearization" or res.influence is None:
        # no interval, or a sample without errors: the zero-event interval stands (SPEC 6)
        return replace(res, seed=seed)
    lo, hi, dropped = interval_from_replicates(method, res, reps, se, draws, bounds=metric.bounds,
                                               ci_level=ci_level)
    note = res.note
    if dropped:
        note = _join(note, f"{dropped} of {n_boot} bootstrap resamples have no value of the denominator and are "
                           "left out")
    if np.isnan(lo) or np.isnan(hi):
        return replace(res, note=_join(note, f"no {_METHOD_LABEL[method]} interval; linearised interval"), seed=seed)
    return replace(res, ci_lower=lo, ci_upper=hi, note=note, interval=method, seed=seed)


def with_interval_method(results: dict[str, RatioEstimate], values: Mapping[str, tuple[np.ndarray, np.ndarray]],
                         draws: np.ndarray, *, method: str, ci_level: float, beta: float, bias_adjust: bool,
                         n_boot: int, seed: int | None, order: np.ndarray | None) -> dict[str, RatioEstimate]:
    """``results`` (linearised, from :func:`~.metrics.estimate_metrics`) with the intervals of
    ``method`` ("logit", "bca" or "studentized"; SPEC 6).

    The estimates and standard errors are unchanged; a zero-event interval (or no
    interval) stands whatever the method, as for the percentile bootstrap. ``values`` are
    the f and g of the ratio metrics in ``results`` (with b-cubed precision and recall when
    b-cubed F is there), ``draws`` the rows' draw counts.
    """
    if method == "logit":
        return {mid: with_logit(METRICS[mid], res, ci_level=ci_level) for mid, res in results.items()}
    if method not in BOOTSTRAP_METHODS or method == "bootstrap":
        raise ValueError(f"with_interval_method: {method!r} is not 'logit', 'bca' or 'studentized'")
    if seed is None:
        raise ValueError(f"with_interval_method: method {method!r} resamples the draws and needs a seed; "
                         "pass the seed the caller resolved (interval_seed)")
    reps, ses = metric_replicates(values, draws, tuple(results), beta=beta, bias_adjust=bias_adjust, n_boot=n_boot,
                                  seed=seed, order=order, with_se=method == "studentized")
    return {mid: apply_method(METRICS[mid], res, method, reps[mid], None if ses is None else ses[mid], draws,
                        ci_level=ci_level, n_boot=n_boot, seed=seed)
            for mid, res in results.items()}


def estimate_methods(sample: BenchmarkSample, metrics: tuple[str, ...] | list[str] | None = None, *,
                     methods: tuple[str, ...] | list[str] = INTERVAL_METHODS, beta: float = 1.0,
                     ci_level: float = 0.95, bias_adjust: bool = True, n_boot: int = DEFAULT_N_BOOT,
                     seed: int | None = None, domain: np.ndarray | None = None,
                     ) -> dict[str, dict[str, RatioEstimate]]:
    """Every metric with the interval of every method in ``methods``, the bootstraps on one
    set of resamples (SPEC 6): ``{method: {metric: RatioEstimate}}``.

    Each ``result[method]`` equals ``estimate_metrics(sample, metrics, ci_method=method,
    n_boot=n_boot, seed=seed, ...)`` (the same seed gives the same resamples to every
    bootstrap method), computed with one resampling instead of one per method: for a
    simulation of coverage, or to show the methods side by side. ``seed`` None is
    :data:`~.estimator.DEFAULT_SEED`, recorded in every bootstrap result. ``"recommended"`` gives each metric the
    result of its :data:`~.estimator.RECOMMENDED_CI_METHOD` (its ``interval`` names it).
    """
    beta = check_beta(beta)
    level = check_ci_level(ci_level)
    if isinstance(methods, str):
        methods = (methods,)
    wanted = tuple(dict.fromkeys(check_ci_method(m, parameter="methods", every_method=True) for m in methods))
    if not wanted:
        raise InputError("methods=() selects no interval method; give at least one, such as 'linearization'")
    lin = estimate_metrics(sample, metrics, beta=beta, ci_level=level, bias_adjust=bias_adjust, domain=domain)
    needed = concrete_methods(wanted, tuple(lin))
    boot_methods = [m for m in needed if m in BOOTSTRAP_METHODS]
    out: dict[str, dict[str, RatioEstimate]] = {"linearization": lin}
    if "logit" in needed:
        out["logit"] = {mid: with_logit(METRICS[mid], res, ci_level=level) for mid, res in lin.items()}
    if boot_methods:
        n_boot = check_n_boot(n_boot)
        seed = interval_seed(seed)  # an int from here on: every bootstrap method shares these resamples
        errors = cluster_errors(sample)
        need = [m for m in lin if METRICS[m].fg is not None]
        if "b_cubed_f" in lin:
            need += [m for m in ("b_cubed_precision", "b_cubed_recall") if m not in need]
        values = {}
        for m in need:
            f, g = fg_values(sample, m, beta=beta, errors=errors)
            values[m] = (f * domain, g * domain) if domain is not None else (f, g)
        draws = sample.draws.astype(np.float64)
        reps, ses = metric_replicates(values, draws, tuple(lin), beta=beta, bias_adjust=bias_adjust, n_boot=n_boot,
                                      seed=seed, order=label_order(sample.labels),
                                      with_se="studentized" in boot_methods)
        for method in boot_methods:
            out[method] = {mid: apply_method(METRICS[mid], res, method, reps[mid], None if ses is None else ses[mid],
                                       draws, ci_level=level, n_boot=n_boot, seed=seed)
                           for mid, res in lin.items()}
    if RECOMMENDED in wanted:
        out[RECOMMENDED] = {mid: out[RECOMMENDED_CI_METHOD.get(mid, "linearization")][mid] for mid in lin}
    return {m: out[m] for m in wanted}
