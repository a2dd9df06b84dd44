"""The ratio estimator of SPEC section 6, with its standard error and interval.

A metric θ = E[f(c)] / E[g(c)] is estimated from draws i = 1..k with values f_i, g_i.
Draws of the same cluster are given once with a frequency ``draws`` (sampling with
replacement, SPEC 2.1), which is the same as repeating the row.
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field
from statistics import NormalDist

import numpy as np

from er_expectations.core.errors import InputError
from er_expectations.core.hints import did_you_mean

__all__ = [
    "BOOTSTRAP_METHODS",
    "CI_METHODS",
    "DEFAULT_N_BOOT",
    "GAP_METHODS",
    "INTERVAL_METHODS",
    "DEFAULT_CI_METHOD",
    "DEFAULT_SEED",
    "MAX_N_BOOT",
    "RECOMMENDED",
    "RECOMMENDED_CI_METHOD",
    "RECOMMENDED_CHANGE_METHOD",
    "RECOMMENDED_GAP_METHOD",
    "RatioEstimate",
    "bootstrap_counts",
    "concrete_methods",
    "bootstrap_sums",
    "check_ci_level",
    "check_ci_method",
    "check_interval_options",
    "check_n_boot",
    "check_seed",
    "f_beta_estimate",
    "percentile_interval",
    "ratio_estimate",
    "ratio_replicates",
    "resolve_seed",
    "interval_seed",
    "uses_bootstrap",
    "z_value",
    "zero_event_draws",
    "zero_event_interval",
]

#: The first two interval methods (SPEC 6): the normal interval of the linearised variance
#: and the percentile bootstrap over the draws (``check_ci_method`` without
#: ``every_method``). Every user-facing layer now offers :data:`INTERVAL_METHODS` and
#: ``"recommended"`` (:func:`check_interval_options`).
CI_METHODS: tuple[str, ...] = ("linearization", "bootstrap")
#: Every interval method of the statistics layer (SPEC 6; :mod:`.intervals`): the
#: linearised normal interval, the same on the logit scale, and three bootstraps over the
#: draws (percentile, BCa, studentised).
INTERVAL_METHODS: tuple[str, ...] = ("linearization", "logit", "bootstrap", "bca", "studentized")
#: The interval methods that resample the draws (they take ``n_boot`` and ``seed``).
BOOTSTRAP_METHODS: tuple[str, ...] = ("bootstrap", "bca", "studentized")
#: The method each estimate gets with ``ci_method="recommended"`` (SPEC 6, 8), chosen from the
#: coverage study of issue 21 (benchmarks/studies/coverage_methods.py, benchmarks/README.md): BCa,
#: for every metric. Over RLdata10000 and a heavy-tailed population, 200/400/800 draws, it
#: had the best or a tied lowest coverage of all methods but the studentised bootstrap for
#: every metric (RLdata, 800 size-proportional draws: 93.3–96.4 % where the linearised
#: interval gave 86.9–95.5 %), gained most where errors sit in the largest clusters
#: (pairwise precision and F) and under the uniform design, and keeps widths 1.0–1.4 times
#: the linearised ones; the studentised bootstrap covered a little more but its intervals
#: reach the end of the range whenever the resamples without an error pass α/2 (mean
#: widths up to 250 times the linearised one at 200 draws). A metric not listed gets
#: ``"linearization"``.
RECOMMENDED_CI_METHOD: dict[str, str] = {
    metric: "bca" for metric in (
        "pairwise_precision", "pairwise_recall", "pairwise_f", "cluster_precision", "cluster_recall", "cluster_f",
        "b_cubed_precision", "b_cubed_recall", "b_cubed_f", "homogeneity", "average_cluster_size",
        "matching_rate", "homonymy_rate", "name_variation_rate")
}
#: The method of the subgroup gaps (SPEC 8) with ``ci_method="recommended"``: ``"hull"``, the
#: smallest interval holding both the paired normal interval and the MOVER of the two sides'
#: BCa intervals (``"bca_mover"``). Neither alone is honest everywhere (issue 21's study,
#: benchmarks/README.md): the paired normal interval misses on the side of the errors where
#: the grouping is correlated with them (RLdata10000, 800 draws: 89.4–91.6 % for six
#: metrics), because samples with fewer errors in the group have both a higher estimate and
#: a smaller SE; the MOVER of skewed side intervals fixes that (94–96 %) but trusts each
#: side's interval, which fails where a side's estimate is made by a few heavy draws (the
#: heavy-tailed population: 86–89 %, false alarms 7–14 % under no true gap). The hull covers
#: whenever either covers and its test rejects only when both do, so it is at least as
#: honest as the better of the two in every cell: 94.8–99.9 % on RLdata10000 and 93.8–97.4 %
#: on the heavy-tailed population at 800 draws (the study's three groupings; 89.5 % for a
#: grouping that puts that population's few heavy errors on one side: no interval sees
#: errors the draws miss, benchmarks/README.md), false-positive rate 0.4–5.0 % under a null
#: grouping (below 3.5 % only where a handful of error draws makes any exact test
#: conservative), widths 1.02–1.35 times the paired normal interval.
RECOMMENDED_GAP_METHOD: dict[str, str] = dict.fromkeys(RECOMMENDED_CI_METHOD, "hull")
#: The method of the paired changes (SPEC 10) with ``ci_method="recommended"``: MOVER of the
#: two releases' logit intervals (with their correlation) for the shares, which had the best
#: lowest and mean coverage of every method for every metric measured (RLdata 95.9–97.2 %
#: at 800 draws; the heavy-tailed population 86.4–99.7 % where the paired normal interval
#: fell to 77.8 %); the paired normal interval for cluster precision and F and the average
#: cluster size (not shares of clusters, so the logit scale does not apply; the study measured
#: changes of shares only). A change without a changed draw takes the no-change bound whatever
#: the method.
RECOMMENDED_CHANGE_METHOD: dict[str, str] = {
    metric: ("linearization" if metric in ("cluster_precision", "cluster_f", "average_cluster_size") else "logit")
    for metric in RECOMMENDED_CI_METHOD
}
#: Interval methods for subgroup gaps only (SPEC 8): ``"bca_mover"`` combines the BCa
#: intervals of the group and of its comparison by MOVER (each side's skewness shapes its
#: own tail of the gap) instead of taking the BCa interval of the replicate gaps;
#: ``"hull"`` is the smallest interval holding both the paired normal interval and the
#: ``"bca_mover"`` one (:func:`~.differences.hull_difference`).
GAP_METHODS: tuple[str, ...] = ("bca_mover", "hull")
#: ``ci_method="recommended"``: each metric with its :data:`RECOMMENDED_CI_METHOD`, its
#: subgroup gaps with :data:`RECOMMENDED_GAP_METHOD` and its changes with
#: :data:`RECOMMENDED_CHANGE_METHOD`.
RECOMMENDED = "recommended"
#: Default number of bootstrap replicates.
DEFAULT_N_BOOT = 2000
#: Smallest number of bootstrap replicates accepted (the tails of fewer are too noisy).
MIN_N_BOOT = 100
#: Largest number of bootstrap replicates accepted: time and memory grow with n_boot (a
#: gap or change keeps every series' replicates), and with 20,000 replicates the Monte
#: Carlo error of a 95 % limit is already about 1 % of the standard error, far below the
#: sampling error of any benchmark.
MAX_N_BOOT = 20_000


def check_ci_level(ci_level: float, *, parameter: str = "ci_level") -> float:
    """Validate a confidence level in the open interval (0, 1)."""
    if isinstance(ci_level, bool) or not isinstance(ci_level, (int, float, np.floating)):
        raise InputError(f"{parameter}={ci_level!r} is not a number; give a confidence level in (0, 1) such as 0.95")
    level = float(ci_level)
    if not (0.0 < level < 1.0):
        raise InputError(f"{parameter}={ci_level!r} is outside (0, 1); give a confidence level such as 0.95 (not 95)")
    return level


def check_ci_method(ci_method: str, *, parameter: str = "ci_method", every_method: bool = False) -> str:
    """Validate an interval method: one of :data:`CI_METHODS` (SPEC 6), or of
    :data:`INTERVAL_METHODS` and ``"recommended"`` with ``every_method``."""
    methods = (*INTERVAL_METHODS, RECOMMENDED) if every_method else CI_METHODS
    if not isinstance(ci_method, str) or ci_method not in methods:
        close = did_you_mean(str(ci_method), methods)
        hint = f"; {close}" if close else ""
        raise InputError(f"{parameter}={ci_method!r} is not an interval method{hint} "
                         f"Use one of: {', '.join(methods)}")
    return ci_method


def concrete_methods(methods: tuple[str, ...], metrics: tuple[str, ...]) -> tuple[str, ...]:
    """The interval methods to compute for ``methods`` (validated) on ``metrics``: each one
    itself, and ``"recommended"`` replaced by the :data:`RECOMMENDED_CI_METHOD`,
    :data:`RECOMMENDED_GAP_METHOD` and :data:`RECOMMENDED_CHANGE_METHOD` of every metric (always with ``"linearization"``,
    which the others start from; ``"hull"`` after the ``"bca_mover"`` it is made from)."""
    out = ["linearization"]
    for m in methods:
        if m == RECOMMENDED:
            out += [RECOMMENDED_CI_METHOD.get(mid, "linearization") for mid in metrics]
            out += [RECOMMENDED_GAP_METHOD.get(mid, "linearization") for mid in metrics]
            out += [RECOMMENDED_CHANGE_METHOD.get(mid, "linearization") for mid in metrics]
        else:
            out.append(m)
    if "hull" in out:  # the hull of the paired normal and the BCa MOVER gap (SPEC 8)
        out.insert(out.index("hull"), "bca_mover")
    return tuple(dict.fromkeys(out))


def check_n_boot(n_boot: int, *, parameter: str = "n_boot") -> int:
    """Validate the number of bootstrap replicates: an integer in [:data:`MIN_N_BOOT`,
    :data:`MAX_N_BOOT`] (booleans refused)."""
    if isinstance(n_boot, bool) or not isinstance(n_boot, (int, np.integer)):
        raise InputError(f"{parameter}={n_boot!r} is not an integer; give a number of bootstrap replicates "
                         f"such as {DEFAULT_N_BOOT}")
    if int(n_boot) < MIN_N_BOOT:
        raise InputError(f"{parameter}={n_boot!r} is too small; give at least {MIN_N_BOOT} bootstrap replicates "
                         f"(default {DEFAULT_N_BOOT}): the tails of the percentile interval need them")
    if int(n_boot) > MAX_N_BOOT:
        raise InputError(f"{parameter}={n_boot!r} is too large; give at most {MAX_N_BOOT:,} bootstrap replicates "
                         f"(default {DEFAULT_N_BOOT}): time and memory grow with n_boot, and beyond "
                         f"{MAX_N_BOOT:,} the Monte Carlo error of the interval is far below the sampling error "
                         "of the benchmark")
    return int(n_boot)


#: The interval method every user-facing layer uses when none is given (SPEC 6, "Default
#: interval, per metric"; the API, the YAML suites, the GX expectations and the command line
#: share it): ``"recommended"``, i.e. per metric :data:`RECOMMENDED_CI_METHOD` for an estimate
#: (BCa), :data:`RECOMMENDED_GAP_METHOD` for a subgroup gap (the hull) and
#: :data:`RECOMMENDED_CHANGE_METHOD` for a change between releases. Chosen in issue 28 from the
#: coverage studies (benchmarks/README.md, "Default floor and default interval"; 516 cells):
#: BCa covered less than the linearised interval by more than a point only where that one
#: over-covers or within Monte Carlo error, and up to 32 points more; at 800 draws its lowest
#: coverage over the metrics is 93.4 % (RLdata10000, size-proportional design) where the
#: linearised interval gives 86.9 %. Seeded by :data:`DEFAULT_SEED` when no seed is given, so a
#: default result is reproducible; ``"linearization"`` (deterministic, the fastest, the method
#: of every result before 0.2.0) stays selectable.
DEFAULT_CI_METHOD = "recommended"


def uses_bootstrap(ci_method: str) -> bool:
    """True when ``ci_method`` resamples the draws (it takes ``n_boot`` and ``seed``):
    the bootstraps, ``"bca_mover"`` and ``"recommended"`` (whose estimates are BCa)."""
    return ci_method in (*BOOTSTRAP_METHODS, *GAP_METHODS) or (
        ci_method == RECOMMENDED and any(m in BOOTSTRAP_METHODS for m in RECOMMENDED_CI_METHOD.values()))


def check_interval_options(ci_method: str, n_boot: int, seed: int | None, *, gaps: bool = False,
                           prefix: str = "") -> tuple[str, int, int | None]:
    """Validate the three interval options together, before any data is read (SPEC 6):
    ``ci_method`` one of :data:`INTERVAL_METHODS` or ``"recommended"`` (and, with
    ``gaps``, :data:`GAP_METHODS`), ``n_boot`` in [:data:`MIN_N_BOOT`, :data:`MAX_N_BOOT`]
    and ``seed`` None or ≥ 0. ``prefix`` goes before each parameter's name in the errors
    (``"--"`` for the command line). Returns them checked."""
    methods = (*INTERVAL_METHODS, *(GAP_METHODS if gaps else ()), RECOMMENDED)
    if not isinstance(ci_method, str) or ci_method not in methods:
        close = did_you_mean(str(ci_method), methods)
        hint = f"; {close}" if close else ""
        raise InputError(f"{prefix}ci_method={ci_method!r} is not an interval method{hint}. "
                         f"Use one of: {', '.join(methods)}")
    return (ci_method, check_n_boot(n_boot, parameter=f"{prefix}n_boot"),
            check_seed(seed, parameter=f"{prefix}seed"))


def check_seed(seed: int | None, *, parameter: str = "seed") -> int | None:
    """Validate a random seed: ``None`` (fresh randomness) or an integer ≥ 0 (booleans refused)."""
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise InputError(f"{parameter}={seed!r} is not an integer; give a seed such as 42, or none for a fresh one")
    if int(seed) < 0:
        raise InputError(f"{parameter}={seed!r} is negative; give a seed ≥ 0")
    return int(seed)


#: The seed of an interval's bootstrap when the caller gives none (SPEC 6, issue 28): the same
#: data and options give the same interval, and a check the same verdict, on every run. Give
#: ``seed`` to choose another one (another seed shows the Monte Carlo variation of the
#: interval, small with the default 2,000 resamples). The simulations and the slice search
#: keep a fresh seed when none is given (:func:`resolve_seed`).
DEFAULT_SEED = 0


def interval_seed(seed: int | None) -> int:
    """The seed of an interval's bootstrap (SPEC 6): ``seed`` itself (checked), or
    :data:`DEFAULT_SEED` when it is None, so that a result without a seed is reproducible."""
    checked = check_seed(seed)
    return DEFAULT_SEED if checked is None else checked


def resolve_seed(seed: int | None) -> int:
    """The seed to use: ``seed`` itself, or a fresh random 32-bit one that the result records."""
    checked = check_seed(seed)
    return secrets.randbits(32) if checked is None else checked


def z_value(ci_level: float) -> float:
    """Two-sided normal quantile for the confidence level."""
    return NormalDist().inv_cdf(0.5 + check_ci_level(ci_level) / 2.0)


@dataclass(frozen=True, slots=True)
class RatioEstimate:
    """One estimate with its uncertainty (SPEC 6).

    ``std_error`` (and the interval) is NaN exactly when ``note`` says why: fewer than two
    draws, f̄ = 0, or an undefined ratio (ḡ = 0, then ``estimate`` is NaN too).
    ``influence`` holds the linearised per-row influence values (f_i − θ g_i)/ḡ used to
    combine estimates that share draws (b-cubed F, subgroup disparities); it is None when
    the estimate is undefined.

    ``interval`` says where ``ci_lower``/``ci_upper`` come from: ``"linearization"``
    (θ̂ ± z·SE), ``"bootstrap"`` (percentile bootstrap over the draws), ``"zero_event"``
    (no draw shows an error or an event, so V̂ = 0: the exact binomial bound of
    :func:`zero_event_interval`) or ``"none"`` (no interval, ``note`` says why). ``seed``
    is the bootstrap seed when a bootstrap was asked for.
    """

    estimate: float
    std_error: float
    ci_lower: float
    ci_upper: float
    draws: int
    clusters: int
    ci_level: float
    note: str = ""
    influence: np.ndarray | None = field(default=None, repr=False, compare=False)
    interval: str = "none"
    seed: int | None = None

    @property
    def defined(self) -> bool:
        return not math.isnan(self.estimate)

    @property
    def has_std_error(self) -> bool:
        return not math.isnan(self.std_error)

    @property
    def has_interval(self) -> bool:
        return not (math.isnan(self.ci_lower) or math.isnan(self.ci_upper))


def _interval(est: float, se: float, level: float, bounds: tuple[float, float] | None) -> tuple[float, float]:
    if math.isnan(se) or math.isnan(est):
        return math.nan, math.nan
    z = z_value(level)
    lo, hi = est - z * se, est + z * se
    if bounds is not None and bounds[0] <= est <= bounds[1]:
        # clip to the metric's range; an estimate outside it keeps its raw interval (SPEC 6)
        lo, hi = max(lo, bounds[0]), min(hi, bounds[1])
    return lo, hi


#: Relative tolerance for "f_i = g_i" and "V̂ = 0" (the values are sums of a few products).
REL_TOL = 1e-12


def _fmt_level(level: float) -> str:
    return f"{level * 100:g} %"


def zero_event_draws(g: np.ndarray, draws: np.ndarray | None = None) -> np.ndarray | float:
    """Effective number of draws of the no-error bound: k* = Σ d·g / max g (SPEC 6).

    Over the draws with g > 0 and d > 0, along the last axis (one value per row of a 2-D
    ``g``; ``draws`` defaults to 1 per entry): the draws counted in units of the heaviest
    drawn one. k* = k when g is constant, and k* ≤ Kish's (Σ d g)²/Σ d g² otherwise (since
    Σ d g² ≤ max g · Σ d g). 0 where no draw has g > 0.
    """
    g = np.asarray(g, dtype=np.float64)
    d = np.ones_like(g) if draws is None else np.broadcast_to(np.asarray(draws, dtype=np.float64), g.shape)
    w = np.where((g > 0) & (d > 0), g, 0.0)
    top = w.max(axis=-1) if w.shape[-1] else np.zeros(w.shape[:-1])
    with np.errstate(divide="ignore", invalid="ignore"):
        k = np.where(top > 0, (d * w).sum(axis=-1) / top, 0.0)
    return float(k) if k.ndim == 0 else k


def zero_event_interval(
    g: np.ndarray, draws: np.ndarray, *, ci_level: float, at_one: bool
) -> tuple[float, float, str]:
    """Non-collapsing interval for a sample without a single error or event (SPEC 6).

    Applies to a metric θ = E[f]/E[g] with 0 ≤ f(c) ≤ g(c) for every cluster. Call a draw
    an *error* when f < g (``at_one``: every sampled draw has f = g, θ̂ = 1) or an *event*
    when f > 0 (not ``at_one``: every f is 0, θ̂ = 0). Because 0 ≤ f ≤ g,

        1 − θ = E[g − f]/E[g] ≤ E[g·1{f<g}]/E[g] = q      and      θ ≤ E[g·1{f>0}]/E[g] = q,

    where q is the share of clusters with an error (or event) weighted by g·p_c. The draws
    bound the per-draw error chance π (none in n draws: π ≤ 1 − α^(1/n), exact
    Clopper–Pearson), and q = π·E[g | error]/E[g]. If no cluster with an error weighs
    more than G, the heaviest drawn g, then q ≤ Mπ/(1 + (M − 1)π) ≤ 1 − (1 − π)^M with
    M = G/ḡ (ḡ the mean g of the draws with g > 0), so q ≤ 1 − α^(1/k*) with
    k* = n/M = Σ d g / G (:func:`zero_event_draws`): the rule of three with the draws
    counted in units of the heaviest one; k* = n when g is constant. The interval is
    [1 − q, 1] (``at_one``) or [0, q]. Returns (lower, upper, note).
    """
    level = check_ci_level(ci_level)
    g = np.asarray(g, dtype=np.float64)
    d = np.asarray(draws, dtype=np.float64)
    use = (g > 0) & (d > 0)
    n = int(round(float(d[use].sum())))
    k_eff = float(zero_event_draws(g, d))
    if k_eff <= 0:
        return math.nan, math.nan, ""
    q = -math.expm1(math.log1p(-level) / k_eff)
    eff = "" if abs(k_eff - n) <= 1e-9 * n else (
        f" ({k_eff:.1f} effective draws: as g varies, the draws are counted in units of the heaviest drawn "
        "one, which holds if no cluster with an error weighs more)")
    lvl = _fmt_level(level)
    if at_one:
        lo, hi = 1.0 - q, 1.0
        what = (f"no sampled draw shows an error (f = g in all {n} draws with g > 0), so the linearised "
                "interval collapses to a point. The interval is instead the exact one-sided "
                f"{lvl} binomial bound from the number of draws{eff}: the share of clusters with an "
                f"error (weighted by g) is at most 1 − (1 − {level:g})^(1/{k_eff:.4g}) = {q:.4g}, so the metric "
                f"is at least {lo:.4g} (SPEC 6)")
    else:
        lo, hi = 0.0, q
        what = (f"no sampled draw counts for the numerator (f = 0 in all {n} draws with g > 0). "
                f"The interval is the exact one-sided {lvl} binomial bound from the number of "
                f"draws{eff}: the share of clusters with f > 0 (weighted by g) is at most "
                f"1 − (1 − {level:g})^(1/{k_eff:.4g}) = {q:.4g}, and so is the metric (SPEC 6)")
    return lo, hi, what


def ratio_estimate(
    f: np.ndarray,
    g: np.ndarray,
    draws: np.ndarray | None = None,
    *,
    bias_adjust: bool = True,
    ci_level: float = 0.95,
    bounds: tuple[float, float] | None = None,
    undefined_reason: str = "the denominator E[g] is 0 in this sample",
    zero_event: bool = False,
) -> RatioEstimate:
    """Estimate θ = E[f]/E[g] from per-cluster values ``f``, ``g`` and draw counts (SPEC 6).

    θ̂ = (f̄/ḡ)(1 + Σ_i (g_i/ḡ)(f_i/f̄ − g_i/ḡ) / (k(k−1)))  when ``bias_adjust``;
    V̂ = (f̄/ḡ)² Σ_i (g_i/ḡ − f_i/f̄)² / (k(k−1)); the interval is θ̂ ± z√V̂, clipped to
    ``bounds`` if given (the estimate itself is never clipped).

    ``zero_event`` (only for metrics with 0 ≤ f ≤ g): a sample of k ≥ 2 draws in which
    every f_i = g_i (θ̂ = 1, V̂ = 0) or every f_i = 0 (θ̂ = 0) gets the interval of
    :func:`zero_event_interval` instead of a point, with a note saying so.
    """
    level = check_ci_level(ci_level)
    f = np.asarray(f, dtype=np.float64)
    g = np.asarray(g, dtype=np.float64)
    d = np.ones_like(f) if draws is None else np.asarray(draws, dtype=np.float64)
    if not (f.shape == g.shape == d.shape):
        raise InputError("f, g and draws must have the same length")
    k = int(round(d.sum()))
    clusters = int((d > 0).sum())
    nan = math.nan
    if k == 0:
        return RatioEstimate(nan, nan, nan, nan, 0, 0, level, "undefined: no draws in this sample")
    fbar = float((d * f).sum() / k)
    gbar = float((d * g).sum() / k)
    if gbar == 0.0 or not math.isfinite(gbar):
        return RatioEstimate(nan, nan, nan, nan, k, clusters, level, f"undefined: {undefined_reason}")
    ratio = fbar / gbar
    influence = (f - ratio * g) / gbar
    if fbar == 0.0:
        note = "no standard error: every sampled value of the numerator is 0"
        if zero_event and k >= 2:
            lo, hi, why = zero_event_interval(g, d, ci_level=level, at_one=False)
            return RatioEstimate(0.0, nan, lo, hi, k, clusters, level, f"{note}; {why}", influence, "zero_event")
        return RatioEstimate(0.0, nan, nan, nan, k, clusters, level, note, influence)
    if k < 2:
        return RatioEstimate(ratio, nan, nan, nan, k, clusters, level,
                             "no standard error: fewer than 2 draws", influence)
    kk1 = k * (k - 1)
    est = ratio
    if bias_adjust:
        est = ratio * (1.0 + float((d * (g / gbar) * (f / fbar - g / gbar)).sum()) / kk1)
    var = ratio**2 * float((d * (g / gbar - f / fbar) ** 2).sum()) / kk1
    se = math.sqrt(max(var, 0.0))
    use = (d > 0) & (g > 0)
    if zero_event and np.all(np.abs(f[use] - g[use]) <= REL_TOL * g[use]):
        lo, hi, why = zero_event_interval(g, d, ci_level=level, at_one=True)
        return RatioEstimate(est, se, lo, hi, k, clusters, level, f"standard error 0: {why}", influence,
                             "zero_event")
    lo, hi = _interval(est, se, level, bounds)
    note = ""
    if se <= REL_TOL * abs(ratio):
        note = ("standard error 0: every draw has the same ratio f/g, so the interval has zero width and "
                "understates the uncertainty (SPEC 6)")
    return RatioEstimate(est, se, lo, hi, k, clusters, level, note, influence, "linearization")


def _flat(res: RatioEstimate) -> bool:
    """True when ``res`` has a standard error of 0 (every draw the same ratio, or no error)."""
    return res.has_std_error and res.std_error <= REL_TOL * max(abs(res.estimate), 1.0)


def _part_notes(label: str, res: RatioEstimate, other: str, *, flat_other: bool) -> list[str]:
    """What an F says of one of its parts (SPEC 6: a note belongs to its quantity).

    A part's zero standard error is restated as the part's, with what it means for F (F's
    standard error and interval carry the other part's uncertainty only); a part's own bound
    is never repeated (it bounds the part, not F). The part's other notes (a range warning)
    are kept, named as the part's."""
    out = []
    for clause in filter(None, res.note.split("; ")):
        if clause.startswith("standard error 0"):
            continue
        out.append(f"{label}: {clause}")
    if _flat(res) and not flat_other:
        why = (f"no sampled draw shows an error of {label}" if res.interval == "zero_event"
               else f"every draw has the same {label}")
        out.insert(0, f"{label}'s standard error is 0 in this sample ({why}), so F's standard error and "
                      f"interval carry {other}'s uncertainty only, not {label}'s (SPEC 6)")
    return out


def f_beta_estimate(
    p: RatioEstimate,
    r: RatioEstimate,
    draws: np.ndarray | None,
    *,
    beta: float,
    ci_level: float,
    labels: tuple[str, str] = ("precision", "recall"),
) -> RatioEstimate:
    """F_β of two estimates that share their draws, SE by linearisation (SPEC 5, b-cubed F).

    1/F = (1/P + β²/R)/(1+β²), i.e. F = (1+β²)PR/(β²P + R). The influence of F is
    ∂F/∂P·z_P + ∂F/∂R·z_R and V̂ = Σ d z_F² / (k(k−1)).

    The note is F's own (SPEC 6): it says "standard error 0" only when F's is, gives a bound
    only when it is F's interval, and names a part (``labels``: how the note calls P and R)
    for what is true of that part alone, e.g. that its standard error is 0, so F's interval
    carries the other part's uncertainty only. A part's zero-event bound ("at least …") is
    the part's and is never repeated under F.
    """
    level = check_ci_level(ci_level)
    nan = math.nan
    k, clusters = p.draws, p.clusters
    lp, lr = labels
    if not (p.defined and r.defined):
        which = " and ".join(lab for lab, e in ((lp, p), (lr, r)) if not e.defined)
        return RatioEstimate(nan, nan, nan, nan, k, clusters, level,
                             f"undefined: {which} {'is' if ' and ' not in which else 'are'} undefined for this "
                             "sample, so F is too")
    b2 = beta * beta
    denom = b2 * p.estimate + r.estimate
    if denom <= 0 or p.estimate <= 0 or r.estimate <= 0:
        zero = [lab for lab, e in ((lp, p), (lr, r)) if e.estimate <= 0]
        return RatioEstimate(0.0, nan, nan, nan, k, clusters, level,
                             f"no standard error: {' and '.join(zero)} {'is' if len(zero) == 1 else 'are'} 0 in "
                             "this sample, so F is 0", None)
    est = (1 + b2) * p.estimate * r.estimate / denom
    if p.influence is None or r.influence is None or k < 2:
        return RatioEstimate(est, nan, nan, nan, k, clusters, level, "no standard error: fewer than 2 draws")
    d_p = (1 + b2) * r.estimate**2 / denom**2
    d_r = (1 + b2) * b2 * p.estimate**2 / denom**2
    z = d_p * p.influence + d_r * r.influence
    d = np.ones_like(z) if draws is None else np.asarray(draws, dtype=np.float64)
    z = z - float((d * z).sum()) / k  # centred (both influences already sum to 0)
    var = float((d * z * z).sum()) / (k * (k - 1))
    se = math.sqrt(max(var, 0.0))
    if p.interval == r.interval == "zero_event" and p.ci_upper == r.ci_upper == 1.0:
        # no draw has an error of either kind: F ≥ min(P, R) ≥ 1 − q for the share q of
        # clusters with any error, which both bounds bound (SPEC 6)
        lo = min(p.ci_lower, r.ci_lower)
        note = (f"standard error 0: no sampled draw shows an error of {lp} or {lr}, and F lies between "
                f"them, so the interval [{lo:.4g}, 1] of the error-free draws holds for F too (SPEC 6)")
        return RatioEstimate(est, se, lo, 1.0, k, clusters, level, note, z, "zero_event")
    flat_p, flat_r = _flat(p), _flat(r)
    notes = [*_part_notes(lp, p, lr, flat_other=flat_r), *_part_notes(lr, r, lp, flat_other=flat_p)]
    if se <= REL_TOL * est:
        why = (f"neither {lp} nor {lr} varies over the draws" if flat_p and flat_r
               else "F has the same influence on every draw")
        notes.insert(0, f"standard error 0: {why}, so F's interval has zero width and understates the "
                        "uncertainty (SPEC 6)")
    lo, hi = _interval(est, se, level, (0.0, 1.0))
    return RatioEstimate(est, se, lo, hi, k, clusters, level, "; ".join(notes), z, "linearization")


# -- percentile bootstrap over the draws (SPEC 6) ------------------------------------------

#: Replicates per block: bounds the memory of the count matrix to about 16 MB.
_BLOCK_CELLS = 2_000_000


def bootstrap_counts(draws: np.ndarray, n_boot: int, seed: int) -> Iterator[np.ndarray]:
    """Bootstrap resamples of the draws as count matrices, in blocks of replicates.

    The sample has k = Σ d draws (a cluster drawn d times is d draws). Each replicate draws
    k of them uniformly with replacement, so the counts of the clusters are
    Multinomial(k, d/k); a block is a (b, K) float64 array whose rows sum to k. The
    stream is a function of ``seed``, the draws and ``n_boot`` only.
    """
    d = np.asarray(draws, dtype=np.int64)
    n_clusters = d.shape[0]
    k = int(d.sum())
    owner = np.repeat(np.arange(n_clusters, dtype=np.int64), d)
    rng = np.random.default_rng(seed)
    block = max(1, min(n_boot, _BLOCK_CELLS // max(k, n_clusters, 1)))
    done = 0
    while done < n_boot:
        b = min(block, n_boot - done)
        picked = owner[rng.integers(0, k, size=(b, k))]
        picked += (np.arange(b, dtype=np.int64) * n_clusters)[:, None]
        yield np.bincount(picked.ravel(), minlength=b * n_clusters).reshape(b, n_clusters).astype(np.float64)
        done += b


#: The count blocks of :func:`bootstrap_sums`' last resample are kept when they hold at most this
#: many bytes: every estimate of a benchmark resamples the same draws with the same seed (a run of
#: the demo checkpoint drew the same 2,000 × 401 counts 164 times: half of its metrics' CPU time).
_KEPT_RESAMPLE_BYTES = 64 << 20
_kept_resample: tuple[tuple[bytes, int, int], list[np.ndarray]] | None = None


def _resample(draws: np.ndarray, n_boot: int, seed: int) -> Iterator[np.ndarray] | list[np.ndarray]:
    """The blocks of :func:`bootstrap_counts` (draws, n_boot, seed), those of the last call with
    the same arguments again when they were small enough to keep (read-only: the same values,
    not drawn again)."""
    global _kept_resample
    d = np.asarray(draws, dtype=np.int64)
    if not isinstance(seed, (int, np.integer)) or n_boot * max(d.shape[0], 1) * 8 > _KEPT_RESAMPLE_BYTES:
        return bootstrap_counts(d, n_boot, seed)
    key = (d.tobytes(), int(n_boot), int(seed))
    kept = _kept_resample
    if kept is not None and kept[0] == key:
        return kept[1]
    blocks = list(bootstrap_counts(d, n_boot, seed))
    for block in blocks:
        block.setflags(write=False)
    _kept_resample = (key, blocks)
    return blocks


def bootstrap_sums(values: np.ndarray, draws: np.ndarray, *, n_boot: int, seed: int) -> np.ndarray:
    """Σ_j W_bj·values_jm for every replicate b and column m: a (n_boot, m) array.

    ``values`` is (K, m), one row per cluster; ``W`` are the counts of
    :func:`bootstrap_counts`, so every column of every replicate is computed from the same
    resample (one matrix product per block).
    """
    values = np.asarray(values, dtype=np.float64)
    if values.ndim == 1:
        values = values[:, None]
    return np.vstack([w @ values for w in _resample(draws, n_boot, seed)])


def ratio_replicates(sum_f: np.ndarray, sum_g: np.ndarray, sum_gf: np.ndarray, sum_gg: np.ndarray,
                     k: int, *, bias_adjust: bool) -> np.ndarray:
    """The estimator of :func:`ratio_estimate` on every bootstrap replicate (vectorised).

    From the replicate sums Σf, Σg, Σgf and Σg² over the k resampled draws:
    θ* = (f̄/ḡ)(1 + (Σgf/(ḡ f̄) − Σg²/ḡ²)/(k(k−1))), which is the bias adjustment of
    SPEC 6 expanded; θ* = 0 when f̄ = 0 and NaN (undefined) when ḡ = 0, as for θ̂.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        fbar, gbar = sum_f / k, sum_g / k
        ratio = fbar / gbar
        if bias_adjust and k >= 2:
            adj = (sum_gf / (gbar * fbar) - sum_gg / (gbar * gbar)) / (k * (k - 1))
            est = ratio * (1.0 + adj)
        else:
            est = ratio
    est = np.where(fbar == 0.0, 0.0, est)
    return np.where((gbar == 0.0) | ~np.isfinite(gbar), np.nan, est)


def percentile_interval(replicates: np.ndarray, estimate: float, *, ci_level: float,
                        bounds: tuple[float, float] | None) -> tuple[float, float, int]:
    """Percentile interval of bootstrap replicates: the α/2 and 1 − α/2 quantiles.

    Undefined replicates (NaN: a resample with ḡ = 0) are left out and counted; the
    bounds are clipped to the metric's range when the estimate lies in it, as for the
    linearised interval. Returns (lower, upper, replicates left out).
    """
    level = check_ci_level(ci_level)
    reps = np.asarray(replicates, dtype=np.float64)
    ok = reps[~np.isnan(reps)]
    dropped = int(reps.size - ok.size)
    if ok.size == 0:
        return math.nan, math.nan, dropped
    alpha = 1.0 - level
    lo, hi = (float(x) for x in np.quantile(ok, [alpha / 2.0, 1.0 - alpha / 2.0]))
    if bounds is not None and bounds[0] <= estimate <= bounds[1]:
        lo, hi = max(lo, bounds[0]), min(hi, bounds[1])
    return lo, hi, dropped
