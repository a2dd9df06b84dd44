"""Interval methods beyond θ̂ ± z·SE, and intervals of differences that never collapse (SPEC 6, 8, 10).

Pure functions on numbers and arrays (numpy only); they work element-wise on arrays, so
a simulation can apply them to many replicate samples at once.

Single estimates (SPEC 6, ``ci_method``):

* :func:`logit_interval`: θ̂ ± z·SE on the logit scale, back-transformed. logit(θ) =
  −logit(1 − θ), so this is also the interval of the error rate 1 − θ on its logit
  scale: where errors are rare the interval stretches towards the errors, which the
  plain interval cannot do (samples with fewer errors have both a higher θ̂ and a smaller
  SE, so θ̂ ± z·SE misses on the side of the errors).
* :func:`bca_interval`: Efron's bias-corrected and accelerated percentile interval, the
  acceleration from the influence values of the draws.
* :func:`studentized_interval`: the bootstrap-t interval, each replicate studentised by
  its own standard error.

Differences of two estimates on the same draws (SPEC 8 gaps, SPEC 10 changes):

* :func:`mover_interval`: the interval of θ_a − θ_b recovered from the one-sided limits of
  each side (Zou & Donner's MOVER, Newcombe's hybrid for proportions), with the
  correlation of the two estimates. With symmetric limits θ̂ ± z·SE it *is* the paired
  normal interval; with a side that shows no error its zero-event bound enters the
  difference instead of a zero standard error.
* :func:`no_change_bound`: the half-width of the interval of a change whose draws show no
  change at all (the rule of three for the share of changed clusters).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from er_expectations.stats.estimator import (
    BOOTSTRAP_METHODS,
    INTERVAL_METHODS,
    MAX_N_BOOT,
    RECOMMENDED_CI_METHOD,
    check_ci_level,
    check_ci_method,
    z_value,
    zero_event_draws,
)

__all__ = [
    "BCA_TIE_TOLERANCE",
    "BOOTSTRAP_METHODS",
    "INTERVAL_METHODS",
    "MAX_N_BOOT",
    "NoChangeBound",
    "RECOMMENDED_CI_METHOD",
    "bca_family",
    "bca_interval",
    "check_interval_method",
    "f_beta_lipschitz",
    "logit_family",
    "logit_interval",
    "mover_interval",
    "mover_p_value",
    "no_change_bound",
    "percentile_family",
    "studentized_family",
    "studentized_interval",
    "zero_event_bound",
    "zero_event_effective_draws",
]

#: An interval as a function of its level: level ↦ (lower, upper).
Family = Callable[[float], tuple[float, float]]


def check_interval_method(ci_method: str, *, parameter: str = "ci_method") -> str:
    """Validate an interval method: one of :data:`INTERVAL_METHODS` (SPEC 6)."""
    return check_ci_method(ci_method, parameter=parameter, every_method=True)


# -- logit -----------------------------------------------------------------------------------


def logit_interval(estimate: np.ndarray | float, std_error: np.ndarray | float, *,
                   ci_level: float) -> tuple[np.ndarray, np.ndarray]:
    """The interval logit⁻¹(logit θ̂ ± z·SE/(θ̂(1 − θ̂))) of a metric in (0, 1) (SPEC 6).

    The delta method gives SE(logit θ̂) = SE(θ̂)/(θ̂(1 − θ̂)); the interval is built there
    and mapped back, so it stays inside (0, 1) and is asymmetric: with θ̂ near 1 the lower
    limit lies further from θ̂ than the upper one (the same interval as that of the error
    rate 1 − θ on its own logit scale). Element-wise; NaN where θ̂ ∉ (0, 1) or SE is NaN
    (the caller keeps its other interval there: the zero-event one when θ̂ is 0 or 1).
    """
    level = check_ci_level(ci_level)
    z = z_value(level)
    est = np.asarray(estimate, dtype=np.float64)
    se = np.asarray(std_error, dtype=np.float64)
    inside = (est > 0.0) & (est < 1.0) & np.isfinite(se)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        centre = np.log(est) - np.log1p(-est)
        half = z * se / (est * (1.0 - est))
        lo = _expit(centre - half)
        hi = _expit(centre + half)
    return np.where(inside, lo, np.nan), np.where(inside, hi, np.nan)


def logit_family(estimate: float, std_error: float) -> Family | None:
    """The logit intervals of :func:`logit_interval` at every level, as a function of the
    level (scalar arithmetic, for inverting into a p-value); None where θ̂ ∉ (0, 1) or the
    standard error is not finite."""
    if not (0.0 < estimate < 1.0) or not math.isfinite(std_error):
        return None
    centre = math.log(estimate) - math.log1p(-estimate)
    scale = std_error / (estimate * (1.0 - estimate))

    def expit(x: float) -> float:
        return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))

    def family(level: float) -> tuple[float, float]:
        half = z_value(level) * scale
        return expit(centre - half), expit(centre + half)

    return family


def _expit(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return np.where(x >= 0, 1.0 / (1.0 + np.exp(-np.abs(x))), np.exp(-np.abs(x)) / (1.0 + np.exp(-np.abs(x))))


# -- bootstrap intervals from replicates -------------------------------------------------------


def _clip(lo: float, hi: float, estimate: float, bounds: tuple[float, float] | None) -> tuple[float, float]:
    if bounds is not None and bounds[0] <= estimate <= bounds[1]:
        return max(lo, bounds[0]), min(hi, bounds[1])
    return lo, hi


def _sorted_quantile(x: np.ndarray, q: float) -> float:
    """numpy's default (linear) quantile of a sorted array: x at the virtual index q·(n − 1)."""
    n = x.shape[0]
    pos = min(max(q, 0.0), 1.0) * (n - 1)
    lo = int(math.floor(pos))
    if lo >= n - 1:
        return float(x[-1])
    frac = pos - lo
    a, b = float(x[lo]), float(x[lo + 1])
    return a if frac == 0.0 or a == b else a + (b - a) * frac


def _sorted_order_statistic(x: np.ndarray, q: float) -> float:
    """The inverted-CDF quantile of a sorted array: x at index ⌈n·q⌉ − 1 (no interpolation, so
    infinite values are returned as they are)."""
    n = x.shape[0]
    return float(x[min(max(int(math.ceil(n * q - 1e-12)) - 1, 0), n - 1)])


def percentile_family(replicates: np.ndarray, estimate: float, *,
                      bounds: tuple[float, float] | None = None) -> tuple[Family, int]:
    """The percentile intervals of ``replicates`` at every level, and the replicates left out.

    ``family(level)`` = the α/2 and 1 − α/2 linear quantiles of the defined replicates (as
    :func:`~.estimator.percentile_interval`), clipped to ``bounds`` when the estimate lies
    in them. The replicates are sorted once, so a p-value can invert the family cheaply.
    """
    reps = np.asarray(replicates, dtype=np.float64)
    ok = np.sort(reps[~np.isnan(reps)])
    dropped = int(reps.size - ok.size)
    if ok.size == 0 or math.isnan(estimate):
        return (lambda level: (math.nan, math.nan)), dropped

    def family(level: float) -> tuple[float, float]:
        alpha = 1.0 - level
        lo, hi = _sorted_quantile(ok, alpha / 2.0), _sorted_quantile(ok, 1.0 - alpha / 2.0)
        return _clip(lo, hi, estimate, bounds)

    return family, dropped


#: Relative tolerance within which a bootstrap replicate counts as equal to the estimate in
#: the bias correction z₀ of BCa (:func:`bca_interval`): far above the rounding of a ratio of
#: sums (~10⁻¹⁵ relative) and far below any real difference between replicates.
BCA_TIE_TOLERANCE = 1e-9


def bca_family(replicates: np.ndarray, estimate: float, influence: np.ndarray, draws: np.ndarray | None, *,
               bounds: tuple[float, float] | None = None) -> tuple[Family, int]:
    """The BCa intervals at every level (:func:`bca_interval`), and the replicates left out."""
    reps = np.asarray(replicates, dtype=np.float64)
    ok = np.sort(reps[~np.isnan(reps)])
    dropped = int(reps.size - ok.size)
    if ok.size == 0 or math.isnan(estimate):
        return (lambda level: (math.nan, math.nan)), dropped
    u = np.asarray(influence, dtype=np.float64)
    d = np.ones_like(u) if draws is None else np.asarray(draws, dtype=np.float64)
    s2 = float((d * u * u).sum())
    a = float((d * u**3).sum()) / (6.0 * s2**1.5) if s2 > 0 else 0.0
    b = ok.size
    # replicates equal to θ̂ up to rounding are ties (a replicate that redraws the sample's
    # clusters in its proportions is θ̂ in exact arithmetic, but its rounding depends on the
    # scale of the weights): without the tolerance, weights × 10⁻³⁰⁰ moved z₀ and the limits
    # by up to 0.08 (issue 28)
    tol = BCA_TIE_TOLERANCE * max(abs(estimate), float(np.abs(ok).max()))
    below = int(np.searchsorted(ok, estimate - tol, side="left"))
    ties = int(np.searchsorted(ok, estimate + tol, side="right")) - below
    share = (below + 0.5 * ties) / b
    share = min(max(share, 0.5 / b), 1.0 - 0.5 / b)
    nd = NormalDist()
    z0 = nd.inv_cdf(share)

    def adjusted(q: float) -> float:
        zq = nd.inv_cdf(q)
        denom = 1.0 - a * (z0 + zq)
        if denom <= 0:
            return 1.0 if zq > 0 else 0.0
        return nd.cdf(z0 + (z0 + zq) / denom)

    def family(level: float) -> tuple[float, float]:
        alpha = 1.0 - level
        lo = _sorted_quantile(ok, adjusted(alpha / 2.0))
        hi = _sorted_quantile(ok, adjusted(1.0 - alpha / 2.0))
        return _clip(lo, hi, estimate, bounds)

    return family, dropped


def studentized_family(replicates: np.ndarray, replicate_se: np.ndarray, estimate: float, std_error: float, *,
                       bounds: tuple[float, float] | None = None) -> tuple[Family, int]:
    """The bootstrap-t intervals at every level (:func:`studentized_interval`), and the
    replicates left out."""
    reps = np.asarray(replicates, dtype=np.float64)
    ses = np.asarray(replicate_se, dtype=np.float64)
    ok = ~np.isnan(reps)
    dropped = int(reps.size - int(ok.sum()))
    if not ok.any() or math.isnan(estimate) or not std_error > 0:
        # no spread to studentise (an error-free sample keeps its own interval)
        return (lambda level: (math.nan, math.nan)), dropped
    dev = reps[ok] - estimate
    se_ok = ses[ok]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(se_ok > 0, dev / se_ok, np.sign(dev) * np.inf)
    t = np.sort(np.where(np.isnan(t), 0.0, t))  # SE* NaN with θ̂* = θ̂ (f̄* = 0 and θ̂ = 0)

    def family(level: float) -> tuple[float, float]:
        alpha = 1.0 - level
        t_lo = _sorted_order_statistic(t, alpha / 2.0)
        t_hi = _sorted_order_statistic(t, 1.0 - alpha / 2.0)
        return _clip(estimate - t_hi * std_error, estimate - t_lo * std_error, estimate, bounds)

    return family, dropped


def bca_interval(replicates: np.ndarray, estimate: float, influence: np.ndarray, draws: np.ndarray | None,
                 *, ci_level: float, bounds: tuple[float, float] | None = None) -> tuple[float, float, int]:
    """Efron's BCa interval from bootstrap replicates θ̂*_b (Efron 1987; Efron & Tibshirani 1993, 14.3).

    The percentile interval takes the α/2 and 1 − α/2 quantiles of θ̂*; BCa takes the
    quantiles α₁ = Φ(z₀ + (z₀ + z_{α/2})/(1 − a(z₀ + z_{α/2}))) and α₂ (the same with
    z_{1−α/2}), where

    * z₀ = Φ⁻¹(share of θ̂* below θ̂, ties counted half) corrects the median bias of θ̂*; a
      replicate within :data:`BCA_TIE_TOLERANCE` (relative) of θ̂ is a tie, so that rounding
      (which depends on the scale of the weights) does not move z₀;
    * a = Σ d u³ / (6 (Σ d u²)^{3/2}), from the influence values u_i of the draws (d_i the
      draw counts), is the acceleration: the skewness of the estimator's influence,
      which is how fast its standard error changes with θ. For a metric with rare errors
      most draws have a small positive influence and the few draws with an error a large
      negative one, so a < 0 and the interval reaches further down.

    Undefined replicates (NaN) are left out and counted. z₀ is held inside the range that
    the number of replicates can resolve (share in [1/(2B), 1 − 1/(2B)]); an adjusted
    quantile whose denominator 1 − a(z₀ + z) is not positive is taken as 0 or 1 (the
    extreme replicate). Quantiles are numpy's default (linear). Returns (lower, upper,
    replicates left out); the limits are clipped to ``bounds`` when the estimate lies in
    them, as for the other intervals.
    """
    level = check_ci_level(ci_level)
    family, dropped = bca_family(replicates, estimate, influence, draws, bounds=bounds)
    return (*family(level), dropped)


def studentized_interval(replicates: np.ndarray, replicate_se: np.ndarray, estimate: float, std_error: float,
                         *, ci_level: float, bounds: tuple[float, float] | None = None) -> tuple[float, float, int]:
    """The bootstrap-t interval [θ̂ − t*_{1−α/2}·SE, θ̂ − t*_{α/2}·SE] (Efron & Tibshirani 1993, 12.5).

    t*_b = (θ̂*_b − θ̂)/SE*_b, with SE*_b the linearised standard error of SPEC 6 computed
    on replicate b itself, so the interval follows how the standard error moves with the
    estimate (with rare errors: a resample with fewer errors has a higher θ̂* *and* a
    smaller SE*, its t* is large, and the lower limit moves down). A replicate with
    SE* = 0 (no error resampled) has t* = ±∞ (0 when θ̂* = θ̂): it lies beyond every
    finite t*, and when more than α/2 of the replicates are such the limit is the end of
    the metric's range. The t quantiles are order statistics (inverted CDF, index
    ⌈B·q⌉ − 1), which keep infinite values. Undefined replicates (NaN) are left out and
    counted. Returns (lower, upper, replicates left out); limits clipped to ``bounds``.
    """
    level = check_ci_level(ci_level)
    family, dropped = studentized_family(replicates, replicate_se, estimate, std_error, bounds=bounds)
    return (*family(level), dropped)


# -- zero-event bounds at another level ----------------------------------------------------------


def zero_event_bound(effective_draws: np.ndarray | float, *, ci_level: float) -> np.ndarray:
    """q = 1 − (1 − level)^(1/k*): the exact one-sided binomial bound on a share with no
    event among k* (effective) draws (SPEC 6; ≈ 3/k* at 95 %, the rule of three)."""
    level = check_ci_level(ci_level)
    k = np.asarray(effective_draws, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = -np.expm1(math.log1p(-level) / k)
    return np.where(k > 0, q, np.nan)


def zero_event_effective_draws(bound: np.ndarray | float, *, ci_level: float) -> np.ndarray:
    """k* of a zero-event bound q given at ``ci_level``: k* = log(1 − level)/log(1 − q).

    Inverts :func:`zero_event_bound`, so that a bound reported at one level can be restated
    at another (a difference needs each side's bound at level 1 − α/2)."""
    level = check_ci_level(ci_level)
    q = np.asarray(bound, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return math.log1p(-level) / np.log1p(-q)


# -- differences -------------------------------------------------------------------------------------


def mover_interval(difference: np.ndarray | float, lower_a: np.ndarray | float, upper_a: np.ndarray | float,
                   estimate_a: np.ndarray | float, lower_b: np.ndarray | float, upper_b: np.ndarray | float,
                   estimate_b: np.ndarray | float, *, correlation: np.ndarray | float = 0.0,
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Interval of θ_a − θ_b from each side's limits (MOVER; SPEC 8 and 10).

    Zou & Donner (2008) "method of variance estimates recovery": the limits (l, u) of a
    side at level 1 − α/2 each way recover its variance near each limit, (θ̂ − l)²/z²
    below and (u − θ̂)²/z² above, and the difference D = θ̂_a − θ̂_b gets

        L = D − √((θ̂_a − l_a)² + (u_b − θ̂_b)² − 2r(θ̂_a − l_a)(u_b − θ̂_b))
        U = D + √((u_a − θ̂_a)² + (θ̂_b − l_b)² − 2r(u_a − θ̂_a)(θ̂_b − l_b))

    with r the correlation of θ̂_a and θ̂_b (paired draws). The lower limit of D takes the
    lower limit of a and the upper of b: the directions in which each side can be wrong
    to make D too high. With l, u = θ̂ ∓ z·SE this is exactly the paired normal interval
    D ± z·√(SE_a² + SE_b² − 2r·SE_a·SE_b). For proportions with independent sides and
    Wilson limits it is Newcombe's (1998) hybrid score interval, which covers where the
    Wald interval of a difference collapses (no event on a side). Element-wise.
    """
    d = np.asarray(difference, dtype=np.float64)
    r = np.asarray(correlation, dtype=np.float64)
    below_a = np.asarray(estimate_a, dtype=np.float64) - np.asarray(lower_a, dtype=np.float64)
    above_a = np.asarray(upper_a, dtype=np.float64) - np.asarray(estimate_a, dtype=np.float64)
    below_b = np.asarray(estimate_b, dtype=np.float64) - np.asarray(lower_b, dtype=np.float64)
    above_b = np.asarray(upper_b, dtype=np.float64) - np.asarray(estimate_b, dtype=np.float64)
    return d - _half_width(below_a, above_b, r), d + _half_width(above_a, below_b, r)


#: A recovered variance this small against its terms is rounding, not spread: 0 (the square
#: root would turn ~1e-16 of cancellation into a half-width of ~1e-8, e.g. r = 1, equal sides).
_VARIANCE_ROUNDING = 1e-12


def _half_width(x: np.ndarray, y: np.ndarray, r: np.ndarray) -> np.ndarray:
    """√(x² + y² − 2r·x·y), with cancellation below :data:`_VARIANCE_ROUNDING` of x² + y² as 0."""
    scale = x**2 + y**2
    variance = scale - 2.0 * r * x * y
    return np.sqrt(np.where(variance <= _VARIANCE_ROUNDING * scale, 0.0, variance))


def mover_p_value(limits: Callable[[float], tuple[float, float]], *, iterations: int = 48) -> float:
    """Two-sided p-value of H0: θ_a = θ_b by inverting a family of nested intervals.

    ``limits(level)`` returns the interval of the difference at ``level``; the p-value is
    1 − the largest level at which the interval still excludes 0 (so that p < 1 − level
    exactly when the interval at ``level`` excludes 0: the test and the interval never
    disagree). Bisection on log(1 − level), so small p-values keep their relative
    precision; 1 when even the narrowest interval holds 0, and 10⁻¹⁵ at the smallest.
    """
    def excludes(alpha: float) -> bool:
        lo, hi = limits(1.0 - alpha)
        return bool(lo > 0.0 or hi < 0.0)

    small, large = math.log(1e-15), math.log1p(-1e-12)  # log α: widest and narrowest interval
    if not excludes(math.exp(large)):
        return 1.0
    if excludes(math.exp(small)):
        return 1e-15
    for _ in range(iterations):
        mid = 0.5 * (small + large)
        if excludes(math.exp(mid)):
            large = mid
        else:
            small = mid
    return float(math.exp(0.5 * (small + large)))


@dataclass(frozen=True, slots=True)
class NoChangeBound:
    """The interval [−half_width, half_width] of a change whose draws show no change (SPEC 10).

    ``effective_draws`` is k* = Σ d h / max h over the draws that count (h > 0); ``note`` says how
    the bound was built."""

    half_width: float
    effective_draws: float
    note: str


def no_change_bound(h: np.ndarray, draws: np.ndarray | None, *, ci_level: float,
                    lipschitz: float = 1.0) -> NoChangeBound:
    """The bound on |θ_t − θ_b| when no drawn cluster changed between the two releases.

    Derivation (SPEC 10). Take a metric with 0 ≤ f ≤ g on both releases (a g-weighted
    share: pairwise, cluster and b-cubed precision/recall, pairwise F, the rates of SPEC 7).
    Call a cluster *changed* when its (f, g) differ between the releases, let
    h = max(g_t, g_b) per cluster (h = g on an unchanged cluster), and split each
    expectation into unchanged clusters (F₀, G₀, the same on both sides) and changed ones.
    With H₁ = E[h·1{changed}] and 0 ≤ E[f·1{changed}] ≤ E[g·1{changed}] ≤ H₁ on either side,

        θ_t ≤ (F₀ + H₁)/(G₀ + H₁)      and      θ_b ≥ F₀/(G₀ + H₁),

    so θ_t − θ_b ≤ H₁/(G₀ + H₁) = E[h·1{changed}]/E[h] = q_h, and the same for θ_b − θ_t:
    |θ_t − θ_b| ≤ q_h, the h-weighted share of changed clusters. With no changed cluster
    among the k draws, the exact one-sided Clopper–Pearson bound at level 1 − α is
    q_h ≤ 1 − α^(1/k*) (the rule of three, ≈ 3/k at 95 %), k* = Σ d h / max h over the
    draws with h > 0 (as in SPEC 6's zero-event interval: it holds if no changed cluster has
    a larger h than the heaviest drawn one; k* = k for constant h). Because
    |Δ| ≤ q_h bounds both tails at once, the whole α goes to that one bound: the interval
    is [−q, q] at level 1 − α. For F_β combined from P and R (b-cubed F) both move by at
    most q (same g), and |ΔF| ≤ q·(∂F/∂P + ∂F/∂R): pass that factor as ``lipschitz``
    (:func:`f_beta_lipschitz`).
    """
    level = check_ci_level(ci_level)
    h = np.asarray(h, dtype=np.float64)
    d = np.ones_like(h) if draws is None else np.asarray(draws, dtype=np.float64)
    use = (h > 0) & (d > 0)
    n = float(d[use].sum())
    k_eff = float(zero_event_draws(h, d))
    if k_eff <= 0 or not math.isfinite(lipschitz) or lipschitz <= 0:
        return NoChangeBound(math.nan, k_eff, "")
    q = float(zero_event_bound(k_eff, ci_level=level))
    half = min(q * lipschitz, 1.0)
    eff = "" if abs(k_eff - n) <= 1e-9 * n else (
        f" ({k_eff:.1f} effective draws: as g varies, the draws are counted in units of the heaviest drawn one, "
        "which holds if no changed cluster weighs more)")
    scale = "" if lipschitz == 1.0 else f", times {lipschitz:.4g} for F_β (its change per change of P and R)"
    note = (f"no drawn cluster changes between the two releases (all {n:g} draws that count), so the "
            "paired standard error is 0 and the linearised interval would have zero width. The interval is "
            f"instead ±{half:.4g}: the change is at most the share of changed clusters (weighted by g), whose "
            f"exact one-sided {level * 100:g} % binomial bound from the number of draws{eff} is "
            f"1 − (1 − {level:g})^(1/{k_eff:.4g}) = {q:.4g}{scale} (SPEC 10)")
    return NoChangeBound(half, k_eff, note)


def f_beta_lipschitz(precision: float, recall: float, *, beta: float, move: float) -> float:
    """Largest ∂F/∂P + ∂F/∂R of F_β along the move of P and R by ±``move`` from the estimates.

    F_β = (1+β²)PR/(β²P + R) is increasing in P and R and homogeneous of degree 1, so its
    gradient depends on R/P only; the sum (1+β²)(R² + β²P²)/(β²P + R)² is largest at one
    end of the move (R/P moves monotonically along it). Used by :func:`no_change_bound`
    for b-cubed F (its precision and recall move by at most the same share q).
    """
    b2 = beta * beta

    def grad(p: float, r: float) -> float:
        denom = (b2 * p + r) ** 2
        return (1 + b2) * (r * r + b2 * p * p) / denom if denom > 0 else math.inf

    ends = [(precision, recall), (precision + move, recall + move), (max(precision - move, 1e-12),
                                                                     max(recall - move, 1e-12))]
    return max(grad(p, r) for p, r in ends)
