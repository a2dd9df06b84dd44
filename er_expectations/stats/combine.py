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

No difference collapses to a point (issue 21; :mod:`.differences` has the derivations): a
side whose draws show no error (a zero-event interval, SPEC 6) enters the interval through
its binomial bound (MOVER), a change whose draws show no change at all gets the rule of
three for the share of changed clusters (``unchanged``), and a difference whose draws
cannot say anything more gets no interval rather than a zero-width one. Such intervals
are marked ``interval == "zero_event"``, as for single estimates.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import TYPE_CHECKING

import numpy as np

from er_expectations.core.errors import InputError
from er_expectations.stats.differences import Difference, honest_difference
from er_expectations.stats.estimator import RatioEstimate, check_ci_level, z_value

__all__ = ["SE_ROUNDING", "Difference", "difference"]

if TYPE_CHECKING:  # a type only
    from er_expectations.stats.intervals import NoChangeBound


#: A paired standard error below this share of the larger estimate is rounding (SPEC 8, 10):
#: the difference then has no variation of its own and gets an honest interval instead.
SE_ROUNDING = 1e-8


def difference(a: RatioEstimate, b: RatioEstimate, draws: np.ndarray | None = None, *,
               ci_level: float = 0.95, method: str = "linearization", comparison: str = "domains",
               unchanged: NoChangeBound | None = None) -> Difference:
    """The difference θ̂_a − θ̂_b of two estimates on the same draws, in the same row order.

    ``draws`` are the multiplicities d_i of the rows (None: each row drawn once); both
    estimates must come from :func:`~er_expectations.stats.estimator.ratio_estimate` (or
    :func:`f_beta_estimate`) on those rows, a row absent from one side carrying f = g = 0
    there. The point difference uses the estimates as given (bias-adjusted or not).

    ``method`` is ``"linearization"`` (the paired normal interval) or ``"logit"`` (MOVER
    of the two sides' logit intervals, :func:`.differences.honest_difference`).

    ``comparison`` says what the two sides are. ``"domains"`` (SPEC 8: a subgroup and its
    comparison, disjoint or nested sets of entities): a side whose draws show no error
    enters through its zero-event bound (MOVER), since its uncertainty is its own.
    ``"releases"`` (SPEC 10: one metric of two releases on the same clusters): errors of
    the clusters both releases share cancel in the change, so an error-free side adds
    nothing; what needs a bound is a change whose drawn clusters are all the same on both
    sides: pass its :func:`~.intervals.no_change_bound` as ``unchanged`` (the caller
    checks that no drawn cluster changed; :func:`~.drift.paired_change` does), and the
    interval is ±its half-width.
    """
    level = check_ci_level(ci_level)
    nan = math.nan
    if comparison not in ("domains", "releases"):
        raise InputError(f"difference: comparison={comparison!r}; give 'domains' (SPEC 8) or 'releases' (SPEC 10)")
    if method not in ("linearization", "logit"):
        raise InputError(f"difference: method={method!r}; give 'linearization' or 'logit' (the bootstraps resample "
                         "the draws: see stats.differences.bootstrap_difference)")
    if a.draws != b.draws:
        raise InputError(f"the two estimates do not share their draws ({a.draws} and {b.draws} draws); "
                         "compute both on the same sample rows (SPEC 10)")
    k = a.draws
    est = a.estimate - b.estimate
    if not (a.defined and b.defined):
        return Difference(nan, nan, nan, nan, nan, k, level,
                          "undefined: one of the two estimates is undefined for this sample", "none")
    if a.influence is None or b.influence is None:
        return Difference(est, nan, nan, nan, nan, k, level,
                          "no standard error: one of the two estimates has none", "none")
    u = np.asarray(a.influence, dtype=np.float64)
    v = np.asarray(b.influence, dtype=np.float64)
    d = np.ones_like(u) if draws is None else np.asarray(draws, dtype=np.float64)
    if not (u.shape == v.shape == d.shape):
        raise InputError(f"the two estimates have {u.shape[0]} and {v.shape[0]} rows and draws has "
                         f"{d.shape[0]}: give both estimates on the same rows, in the same order")
    if int(round(float(d.sum()))) != k:
        raise InputError(f"draws sum to {d.sum():g} but the estimates were computed on {k} draws")
    if k < 2:
        return Difference(est, nan, nan, nan, nan, k, level, "no standard error: fewer than 2 draws", "none")
    w = u - v
    w = w - float((d * w).sum()) / k  # both influences sum to 0; centring guards rounding
    se = math.sqrt(max(float((d * w * w).sum()) / (k * (k - 1)), 0.0))
    if se <= SE_ROUNDING * max(abs(a.estimate), abs(b.estimate)):
        # rounding of two equal influences, not a standard error: the square root of a
        # variance left by cancellation (about 1e-18) is about 1e-9 of the estimates
        se = 0.0
    plain = (method == "linearization" and unchanged is None and se > 0.0
             and (comparison == "releases" or "zero_event" not in (a.interval, b.interval)))
    if not plain:
        return honest_difference(a, b, d, est=est, std_error=se, ci_level=level, method=method,
                                 comparison=comparison, unchanged=unchanged)
    z = z_value(level)
    p = 2.0 * (1.0 - NormalDist().cdf(abs(est) / se))
    return Difference(est, se, est - z * se, est + z * se, p, k, level)
