"""The interval methods of SPEC 6 applied to estimates of a sample (logit, BCa, studentised).

:func:`with_interval_method` replaces the linearised interval of each
:class:`~er_expectations.stats.estimator.RatioEstimate` by the interval of another method;
:func:`metric_replicates` gives every metric's bootstrap replicates (and, for the
studentised bootstrap, their standard errors) on one set of resamples. Both are used by
:func:`~er_expectations.stats.metrics.estimate_metrics`, by the subgroup estimates
(SPEC 8) and the paired changes (SPEC 10).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import replace

import numpy as np

from er_expectations.errors import InputError
from er_expectations.stats.estimator import (
    BOOTSTRAP_METHODS,
    DEFAULT_N_BOOT,
    INTERVAL_METHODS,
    RECOMMENDED,
    RECOMMENDED_CI_METHOD,
    RatioEstimate,
    check_ci_level,
    check_ci_method,
    check_n_boot,
    concrete_methods,
    percentile_interval,
    resolve_seed,
)
from er_expectations.stats.intervals import bca_interval, logit_interval, studentized_interval
from er_expectations.stats.joint import JointBootstrap
from er_expectations.stats.metrics import (
    METRICS,
    MetricDef,
    _label_order,
    check_beta,
    estimate_metrics,
    fg_values,
)
from er_expectations.stats.sample import BenchmarkSample, cluster_errors

__all__ = ["base_series", "combination_se", "estimate_methods", "f_beta_replicates", "interval_from_replicates",
           "metric_replicates", "moment_pairs", "replicate_metric", "with_interval_method", "with_logit"]

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


def _apply(metric: MetricDef, res: RatioEstimate, method: str, reps: np.ndarray, se: np.ndarray | None,
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
    assert seed is not None
    reps, ses = metric_replicates(values, draws, tuple(results), beta=beta, bias_adjust=bias_adjust, n_boot=n_boot,
                                  seed=seed, order=order, with_se=method == "studentized")
    return {mid: _apply(METRICS[mid], res, method, reps[mid], None if ses is None else ses[mid], draws,
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
    simulation of coverage, or to show the methods side by side. ``seed`` None draws a
    fresh one, recorded in every bootstrap result. ``"recommended"`` gives each metric the
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
    if boot_methods:
        n_boot = check_n_boot(n_boot)
        seed = resolve_seed(seed)
    out: dict[str, dict[str, RatioEstimate]] = {"linearization": lin}
    if "logit" in needed:
        out["logit"] = {mid: with_logit(METRICS[mid], res, ci_level=level) for mid, res in lin.items()}
    if boot_methods:
        assert seed is not None
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
                                      seed=seed, order=_label_order(sample.labels),
                                      with_se="studentized" in boot_methods)
        for method in boot_methods:
            out[method] = {mid: _apply(METRICS[mid], res, method, reps[mid], None if ses is None else ses[mid],
                                       draws, ci_level=level, n_boot=n_boot, seed=seed)
                           for mid, res in lin.items()}
    if RECOMMENDED in wanted:
        out[RECOMMENDED] = {mid: out[RECOMMENDED_CI_METHOD.get(mid, "linearization")][mid] for mid in lin}
    return {m: out[m] for m in wanted}
