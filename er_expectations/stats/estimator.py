"""The ratio estimator of SPEC section 6, with its standard error and interval.

A metric θ = E[f(c)] / E[g(c)] is estimated from draws i = 1..k with values f_i, g_i.
Draws of the same cluster are given once with a frequency ``draws`` (sampling with
replacement, SPEC 2.1), which is the same as repeating the row.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from statistics import NormalDist

import numpy as np

from ..errors import InputError

__all__ = ["RatioEstimate", "ratio_estimate", "z_value", "check_ci_level", "f_beta_estimate"]


def check_ci_level(ci_level: float, *, parameter: str = "ci_level") -> float:
    """Validate a confidence level in the open interval (0, 1)."""
    if isinstance(ci_level, bool) or not isinstance(ci_level, (int, float, np.floating)):
        raise InputError(f"{parameter}={ci_level!r} is not a number; give a confidence level in (0, 1) such as 0.95")
    level = float(ci_level)
    if not (0.0 < level < 1.0):
        raise InputError(f"{parameter}={ci_level!r} is outside (0, 1); give a confidence level such as 0.95 (not 95)")
    return level


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

    @property
    def defined(self) -> bool:
        return not math.isnan(self.estimate)

    @property
    def has_std_error(self) -> bool:
        return not math.isnan(self.std_error)


def _interval(est: float, se: float, level: float, bounds: tuple[float, float] | None) -> tuple[float, float]:
    if math.isnan(se) or math.isnan(est):
        return math.nan, math.nan
    z = z_value(level)
    lo, hi = est - z * se, est + z * se
    if bounds is not None and bounds[0] <= est <= bounds[1]:
        # clip to the metric's range; an estimate outside it keeps its raw interval (SPEC 6)
        lo, hi = max(lo, bounds[0]), min(hi, bounds[1])
    return lo, hi


def ratio_estimate(
    f: np.ndarray,
    g: np.ndarray,
    draws: np.ndarray | None = None,
    *,
    bias_adjust: bool = True,
    ci_level: float = 0.95,
    bounds: tuple[float, float] | None = None,
    undefined_reason: str = "the denominator E[g] is 0 in this sample",
) -> RatioEstimate:
    """Estimate θ = E[f]/E[g] from per-cluster values ``f``, ``g`` and draw counts (SPEC 6).

    θ̂ = (f̄/ḡ)(1 + Σ_i (g_i/ḡ)(f_i/f̄ − g_i/ḡ) / (k(k−1)))  when ``bias_adjust``;
    V̂ = (f̄/ḡ)² Σ_i (g_i/ḡ − f_i/f̄)² / (k(k−1)); the interval is θ̂ ± z√V̂, clipped to
    ``bounds`` if given (the estimate itself is never clipped).
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
        return RatioEstimate(0.0, nan, nan, nan, k, clusters, level,
                             "no standard error: every sampled value of the numerator is 0", influence)
    if k < 2:
        return RatioEstimate(ratio, nan, nan, nan, k, clusters, level,
                             "no standard error: fewer than 2 draws", influence)
    kk1 = k * (k - 1)
    est = ratio
    if bias_adjust:
        est = ratio * (1.0 + float((d * (g / gbar) * (f / fbar - g / gbar)).sum()) / kk1)
    var = ratio**2 * float((d * (g / gbar - f / fbar) ** 2).sum()) / kk1
    se = math.sqrt(max(var, 0.0))
    lo, hi = _interval(est, se, level, bounds)
    return RatioEstimate(est, se, lo, hi, k, clusters, level, "", influence)


def f_beta_estimate(
    p: RatioEstimate,
    r: RatioEstimate,
    draws: np.ndarray | None,
    *,
    beta: float,
    ci_level: float,
) -> RatioEstimate:
    """F_β of two estimates that share their draws, SE by linearisation (SPEC 5, b-cubed F).

    1/F = (1/P + β²/R)/(1+β²), i.e. F = (1+β²)PR/(β²P + R). The influence of F is
    ∂F/∂P·z_P + ∂F/∂R·z_R and V̂ = Σ d z_F² / (k(k−1)).
    """
    level = check_ci_level(ci_level)
    nan = math.nan
    k, clusters = p.draws, p.clusters
    if not (p.defined and r.defined):
        return RatioEstimate(nan, nan, nan, nan, k, clusters, level,
                             "undefined: precision or recall is undefined for this sample")
    b2 = beta * beta
    denom = b2 * p.estimate + r.estimate
    if denom <= 0 or p.estimate <= 0 or r.estimate <= 0:
        return RatioEstimate(0.0, nan, nan, nan, k, clusters, level,
                             "no standard error: precision or recall is 0", None)
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
    notes = "; ".join(n for n in (p.note, r.note) if n)
    lo, hi = _interval(est, se, level, (0.0, 1.0))
    return RatioEstimate(est, se, lo, hi, k, clusters, level, notes, z)
