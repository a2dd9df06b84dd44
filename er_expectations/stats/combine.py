"""Differences of two ratio estimates that share their draws (SPEC 8 and 10).

Two estimates computed on the *same* k draws are correlated: a subgroup's estimate and the
estimate of the rest (SPEC 8, domain estimators over all draws), or one metric on two
releases evaluated on the same benchmark (SPEC 10, the paired change). Linearising both
ratio estimators on the paired draws gives the influence values

    u_i = (f_i^a − θ̂_a g_i^a)/ḡ^a        v_i = (f_i^b − θ̂_b g_i^b)/ḡ^b

(:attr:`RatioEstimate.influence`) and

    V̂(θ̂_a − θ̂_b) = Σ_i d_i (u_i − v_i)² / (k(k−1)),

with d_i the number of times row i was drawn and k = Σ d_i. √(se_a² + se_b²) ignores the
pairing; it is right only for independent samples.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from er_expectations.core.errors import InputError
from er_expectations.stats.estimator import RatioEstimate, check_ci_level, z_value

__all__ = ["Difference", "difference"]


@dataclass(frozen=True, slots=True)
class Difference:
    """θ̂_a − θ̂_b with its paired standard error, interval and two-sided p-value (H0: equal).

    ``std_error`` and everything derived from it are NaN exactly when ``note`` says why.
    """

    estimate: float
    std_error: float
    ci_lower: float
    ci_upper: float
    p_value: float
    draws: int
    ci_level: float
    note: str = ""

    @property
    def has_std_error(self) -> bool:
        return not math.isnan(self.std_error)


def difference(a: RatioEstimate, b: RatioEstimate, draws: np.ndarray | None = None, *,
               ci_level: float = 0.95) -> Difference:
    """The difference θ̂_a − θ̂_b of two estimates on the same draws, in the same row order.

    ``draws`` are the multiplicities d_i of the rows (None: each row drawn once); both
    estimates must come from :func:`~er_expectations.stats.estimator.ratio_estimate` (or
    :func:`f_beta_estimate`) on those rows, a row absent from one side carrying f = g = 0
    there. The point difference uses the estimates as given (bias-adjusted or not).
    """
    level = check_ci_level(ci_level)
    nan = math.nan
    if a.draws != b.draws:
        raise InputError(f"the two estimates do not share their draws ({a.draws} and {b.draws} draws); "
                         "compute both on the same sample rows (SPEC 10)")
    k = a.draws
    est = a.estimate - b.estimate
    if not (a.defined and b.defined):
        return Difference(nan, nan, nan, nan, nan, k, level,
                          "undefined: one of the two estimates is undefined for this sample")
    if a.influence is None or b.influence is None:
        return Difference(est, nan, nan, nan, nan, k, level,
                          "no standard error: one of the two estimates has none")
    u = np.asarray(a.influence, dtype=np.float64)
    v = np.asarray(b.influence, dtype=np.float64)
    d = np.ones_like(u) if draws is None else np.asarray(draws, dtype=np.float64)
    if not (u.shape == v.shape == d.shape):
        raise InputError(f"the two estimates have {u.shape[0]} and {v.shape[0]} rows and draws has "
                         f"{d.shape[0]}: give both estimates on the same rows, in the same order")
    if int(round(float(d.sum()))) != k:
        raise InputError(f"draws sum to {d.sum():g} but the estimates were computed on {k} draws")
    if k < 2:
        return Difference(est, nan, nan, nan, nan, k, level, "no standard error: fewer than 2 draws")
    w = u - v
    w = w - float((d * w).sum()) / k  # both influences sum to 0; centring guards rounding
    se = math.sqrt(max(float((d * w * w).sum()) / (k * (k - 1)), 0.0))
    z = z_value(level)
    if se == 0.0:
        p = 1.0 if est == 0.0 else 0.0
        return Difference(est, 0.0, est, est, p, k, level,
                          "standard error 0: every draw changes by the same amount, so the interval has "
                          "zero width and understates the uncertainty")
    p = 2.0 * (1.0 - NormalDist().cdf(abs(est) / se))
    return Difference(est, se, est - z * se, est + z * se, p, k, level)
