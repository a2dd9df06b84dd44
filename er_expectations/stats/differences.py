"""Intervals of differences that never collapse to a point (SPEC 8 gaps, SPEC 10 changes).

:func:`~.combine.difference` gives the paired normal interval of θ̂_a − θ̂_b when both
sides have a linearised interval and the paired standard error is positive. Everything
else comes here:

1. **A side without errors** (SPEC 6 zero-event interval: every draw of that side has
   f = g, or every f = 0). Its standard error is 0, so θ̂_a − θ̂_b ± z·SE counts the
   uncertainty of the other side only, and [0, 0] when both sides are error-free. Each
   side's interval is a pair of one-sided limits; the difference takes MOVER's limits
   (:func:`~.intervals.mover_interval`): its lower limit combines the lower limit of a
   with the upper limit of b, its upper limit the reverse. A side without errors brings
   its exact one-sided binomial bound at level 1 − α/2: with q_a = 1 − (α/2)^(1/k*_a),

       θ_a ≥ 1 − q_a (each draw of a shows no error)      θ_a ≤ 1 always,

   so with both sides error-free the interval is [−q_a, q_b]: the lower tail fails only
   if θ_a < 1 − q_a (chance ≤ α/2 with the sample error-free, SPEC 6) and the upper tail
   only if θ_b < 1 − q_b, so each tail has at most α/2 whatever the correlation of the
   two sides. With one error-free side the other side's normal (or logit) limits enter
   MOVER with the correlation r of the two estimates (0 when a side has no variance). At
   the other end (every f = 0, θ̂ = 0) the bound is [0, q] and the roles swap. The bound
   at level 1 − α/2 is restated from the side's own interval by its effective number of
   draws k* = log(1 − level)/log(1 − q) (:func:`~.intervals.zero_event_effective_draws`).
   This is for two *domains* of the draws (``comparison="domains"``, SPEC 8: a subgroup
   and the rest, or all). Two *releases* on the same clusters (``"releases"``, SPEC 10)
   share the errors of every cluster that did not change, which cancel in the change: an
   error-free release adds no uncertainty of its own there, and what can collapse is a
   change whose draws show no change at all (case 2).
2. **A change without a changed draw** (SPEC 10): the caller passes the
   :func:`~.intervals.no_change_bound` (|θ_t − θ_b| is at most the share of changed
   clusters, bounded by the rule of three): the interval is ±that bound.
3. **No variation that any bound can use** (every draw has the same ratio f/g on both
   sides, a metric that is not a share, or sides proportional row by row): no interval
   (NaN) with a note, rather than a zero-width one.

With ``method="logit"`` every side with a linearised interval enters MOVER by its logit
interval instead (:func:`~.intervals.logit_family`), with the correlation of the two
estimates from their influence values; with symmetric limits MOVER is exactly the paired
normal interval, so this only moves the interval where a side's estimate is skewed.

The bootstrap of a difference (:func:`bootstrap_difference`) resamples the shared draws
once for both sides (:class:`~.joint.JointBootstrap`), so that a replicate of the
difference is θ̂*_a − θ̂*_b of the same resample, and takes the percentile, BCa or
studentised interval of those replicates; cases 1–3 are handled as above (every resample
of an error-free side repeats θ̂, so its replicates cannot carry its uncertainty).

The **hull** of two intervals of the same difference (:func:`hull_difference`, the
subgroup gaps' ``"hull"`` method, SPEC 8) is the smallest interval holding both: it covers
whenever either covers, and its test rejects only when both reject (p = the larger of the
two p-values), so it is never less honest than the better of the two; it costs width.

The p-value of every interval here is that of its own family: p = 1 − the largest level
at which the interval excludes 0 (:func:`~.intervals.mover_p_value`), so a test at level
α rejects exactly when the interval at 1 − α excludes 0.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from er_expectations.stats.estimator import (
    RatioEstimate,
    check_ci_level,
    z_value,
)
from er_expectations.stats.intervals import (
    NoChangeBound,
    bca_family,
    logit_family,
    mover_p_value,
    percentile_family,
    studentized_family,
    zero_event_bound,
    zero_event_effective_draws,
)


@dataclass(frozen=True, slots=True)
class Difference:
    """θ̂_a − θ̂_b with its paired standard error, interval and two-sided p-value (H0: equal).

    ``std_error`` and everything derived from it are NaN exactly when ``note`` says why.
    ``interval`` says where the interval comes from, as for a single estimate:
    ``"linearization"`` (paired normal interval), ``"logit"`` (MOVER of the two logit
    intervals), ``"bootstrap"``, ``"bca"``, ``"studentized"`` (joint resampling of the
    shared draws), ``"zero_event"`` (a bound from the number of error-free or unchanged
    draws enters it, SPEC 6 and 10) or ``"none"``. The p-value is that of the same
    interval family (p < 1 − level exactly when the interval excludes 0). ``seed`` is the
    bootstrap seed when a bootstrap was asked for.
    """

    estimate: float
    std_error: float
    ci_lower: float
    ci_upper: float
    p_value: float
    draws: int
    ci_level: float
    note: str = ""
    interval: str = "linearization"
    seed: int | None = None

    @property
    def has_std_error(self) -> bool:
        return not math.isnan(self.std_error)

    @property
    def has_interval(self) -> bool:
        return not (math.isnan(self.ci_lower) or math.isnan(self.ci_upper))

    @property
    def zero_event(self) -> bool:
        """True when the interval rests on draws without an error (or change) on a side."""
        return self.interval == "zero_event"


__all__ = ["bootstrap_difference", "honest_difference", "hull_difference", "paired_correlation", "side_limits",
           "zero_event_side"]

Limits = Callable[[float], tuple[float, float]]


def _fmt(level: float) -> str:
    return f"{level * 100:g} %"


def zero_event_side(res: RatioEstimate) -> tuple[bool, float] | None:
    """(at_one, k*) of an estimate with a zero-event interval, None for any other estimate."""
    if res.interval != "zero_event":
        return None
    at_one = res.ci_upper >= 1.0 and res.ci_lower < 1.0 and res.estimate > 0.0
    q = 1.0 - res.ci_lower if at_one else res.ci_upper
    return at_one, float(zero_event_effective_draws(q, ci_level=res.ci_level))


def side_limits(res: RatioEstimate, *, method: str,
                bootstrap: Callable[[float], tuple[float, float]] | None = None,
                own_bound: bool = True) -> tuple[Limits, str]:
    """The two-sided limits of one side at any level, as a function, and their kind.

    Kinds: ``"zero_event"`` (the side's binomial bound restated at one-sided level
    1 − α/2), ``"logit"`` (:func:`~.intervals.logit_interval`), a bootstrap method
    (``bootstrap(level)``, the side's bootstrap interval), ``"linearization"`` (θ̂ ∓ z·SE,
    unclipped) or ``"point"`` (no standard error: the side adds no width, e.g. f̄ = 0 for a
    metric without a zero-event bound, or an error-free release whose errors elsewhere the
    other release shares: ``own_bound=False``).
    """
    est = res.estimate
    ze = zero_event_side(res) if own_bound else None
    if ze is not None:
        at_one, k_eff = ze

        def zero_event(level: float) -> tuple[float, float]:
            q = -math.expm1(math.log((1.0 - level) / 2.0) / k_eff)  # one-sided at 1 − α/2
            return (1.0 - q, 1.0) if at_one else (0.0, q)

        return zero_event, "zero_event"
    se = res.std_error
    if not (se > 0.0):
        return (lambda level: (est, est)), "point"
    if method == "logit":
        logit = logit_family(est, se)
        if logit is not None:
            return logit, "logit"
    elif bootstrap is not None:
        return bootstrap, method

    def normal(level: float) -> tuple[float, float]:
        z = z_value(level)
        return est - z * se, est + z * se

    return normal, "linearization"


def paired_correlation(a: RatioEstimate, b: RatioEstimate, draws: np.ndarray) -> float:
    """Correlation of θ̂_a and θ̂_b from their influence values on the shared draws (0 when
    either has no variance)."""
    if a.influence is None or b.influence is None:
        return 0.0
    d = np.asarray(draws, dtype=np.float64)
    k = float(d.sum())
    u = np.asarray(a.influence, dtype=np.float64)
    v = np.asarray(b.influence, dtype=np.float64)
    u = u - float((d * u).sum()) / k
    v = v - float((d * v).sum()) / k
    su, sv = float((d * u * u).sum()), float((d * v * v).sum())
    if su <= 0.0 or sv <= 0.0:
        return 0.0
    return max(-1.0, min(1.0, float((d * u * v).sum()) / math.sqrt(su * sv)))


def _mover(a: RatioEstimate, b: RatioEstimate, la: Limits, lb: Limits, r: float) -> Limits:
    est = a.estimate - b.estimate
    ea, eb = a.estimate, b.estimate

    def limits(level: float) -> tuple[float, float]:
        # :func:`~.intervals.mover_interval`, in scalar arithmetic (a p-value inverts it often)
        lo_a, hi_a = la(level)
        lo_b, hi_b = lb(level)
        below_a, above_a, below_b, above_b = ea - lo_a, hi_a - ea, eb - lo_b, hi_b - eb
        down = below_a * below_a + above_b * above_b - 2.0 * r * below_a * above_b
        up = above_a * above_a + below_b * below_b - 2.0 * r * above_a * below_b
        return est - math.sqrt(max(down, 0.0)), est + math.sqrt(max(up, 0.0))

    return limits


def _side_note(label: str, res: RatioEstimate, kind: str, level: float) -> str:
    """What a difference says of a side that enters by its zero-event bound: one clause that
    names the side (SPEC 6: a note belongs to its quantity; the bound is the side's, at the
    one-sided level it enters with, not a bound of the difference)."""
    ze = zero_event_side(res)
    if kind != "zero_event" or ze is None:
        return ""
    at_one, k_eff = ze
    one_sided = 1.0 - (1.0 - level) / 2.0
    q = float(zero_event_bound(k_eff, ci_level=one_sided))
    what = "no draw shows an error" if at_one else "no draw counts for the numerator"
    se = "its standard error is 0" if res.has_std_error else "it has no standard error"
    bound = f"θ ≥ {1 - q:.4g}" if at_one else f"θ ≤ {q:.4g}"
    return (f"{label}: {what} ({k_eff:.4g} effective draws), so {se}, and it enters the difference's interval "
            f"by its own exact one-sided {_fmt(one_sided)} binomial bound {bound} for {label} alone (MOVER, SPEC 6)")


def _finish(est: float, se: float, k: int, level: float, limits: Limits, kinds: tuple[str, str], notes: list[str],
            method: str, seed: int | None, labels: tuple[str, str], scale: float) -> Difference:
    if "zero_event" in kinds or "logit" in kinds:
        # both sides are shares in [0, 1] (a zero-event bound or a logit interval exists only
        # for those), so their difference lies in [−1, 1]
        inner = limits

        def limits(lvl: float) -> tuple[float, float]:
            lo, hi = inner(lvl)
            return max(lo, -1.0), min(hi, 1.0)

    lo, hi = limits(level)
    interval = "zero_event" if "zero_event" in kinds else method
    tol = 1e-8 * scale  # scale: the larger of |θ̂_a|, |θ̂_b| (a width below it is rounding, combine.SE_ROUNDING)
    if not (hi - lo > tol):
        why = (f"no interval: the draws show no variation of the difference ({labels[0]} and {labels[1]} have the "
               "same influence on every draw) and no bound from the number of draws applies (the metric is not a "
               "share of error-free clusters, or the change of each drawn cluster is not known to be nil); a "
               "linearised interval would have zero width and claim a certainty the draws cannot give")
        p = 1.0 if abs(est) <= tol else math.nan
        return Difference(est, se, math.nan, math.nan, p, k, level, "; ".join(n for n in [*notes, why] if n), "none",
                          seed)
    p = mover_p_value(limits)
    return Difference(est, se, lo, hi, p, k, level, "; ".join(n for n in notes if n), interval, seed)


def honest_difference(a: RatioEstimate, b: RatioEstimate, draws: np.ndarray, *, est: float, std_error: float,
                      ci_level: float, method: str = "linearization", comparison: str = "domains",
                      unchanged: NoChangeBound | None = None, seed: int | None = None,
                      labels: tuple[str, str] = ("first side", "second side")) -> Difference:
    """θ̂_a − θ̂_b when the paired normal interval would collapse or was not asked for
    (cases 1–3 of the module docstring; ``method`` "linearization" or "logit").

    ``est`` and ``std_error`` are the difference and its paired standard error as
    :func:`~.combine.difference` computed them (they are reported as they are).
    """
    level = check_ci_level(ci_level)
    k = a.draws
    if unchanged is not None and not math.isnan(unchanged.half_width):
        hw = unchanged.half_width
        return Difference(est, std_error, est - hw, est + hw, 1.0 if est == 0.0 else math.nan, k, level,
                          unchanged.note, "zero_event", seed)
    own = comparison == "domains"
    if not own and std_error == 0.0:
        # two releases whose draws give the change no variation and no bound (a metric that is
        # not a share, or rows that differ only by a common factor): nothing to build an
        # interval from, whatever the method (the asymmetry of two logit intervals would
        # give a width that says nothing about the change)
        return _finish(est, std_error, k, level, lambda lvl: (est, est), (method, method), [], method, seed,
                       labels, max(abs(a.estimate), abs(b.estimate)))
    if not own and method == "linearization":
        # two releases, something drawn changed: the paired normal interval (an error-free
        # release adds nothing of its own: its errors elsewhere the other release shares)
        def paired(lvl: float) -> tuple[float, float]:
            z = z_value(lvl)
            return est - z * std_error, est + z * std_error

        return _finish(est, std_error, k, level, paired, ("linearization", "linearization"), [], method, seed,
                       labels, max(abs(a.estimate), abs(b.estimate)))
    la, ka = side_limits(a, method=method, own_bound=own)
    lb, kb = side_limits(b, method=method, own_bound=own)
    notes = [_side_note(labels[0], a, ka, level), _side_note(labels[1], b, kb, level)]
    limits = _mover(a, b, la, lb, paired_correlation(a, b, draws))
    return _finish(est, std_error, k, level, limits, (ka, kb), notes, method, seed, labels,
                   max(abs(a.estimate), abs(b.estimate)))


def bootstrap_difference(a: RatioEstimate, b: RatioEstimate, draws: np.ndarray, replicates_a: np.ndarray,
                         replicates_b: np.ndarray, *, method: str, ci_level: float, seed: int,
                         replicate_se: np.ndarray | None = None, side_se: tuple[np.ndarray, np.ndarray] | None = None,
                         comparison: str = "domains", unchanged: NoChangeBound | None = None,
                         combine: str = "joint",
                         labels: tuple[str, str] = ("first side", "second side")) -> Difference:
    """θ̂_a − θ̂_b with the ``method`` interval of the joint bootstrap of the shared draws.

    ``replicates_a`` and ``replicates_b`` are θ̂* of each side on the *same* resamples
    (:class:`~.joint.JointBootstrap`), so θ̂*_a − θ̂*_b keeps the pairing. ``method``:

    * ``"bootstrap"``: the α/2 and 1 − α/2 quantiles of the differences;
    * ``"bca"``: :func:`~.intervals.bca_interval` of the differences, the acceleration
      from the influence values u_a − u_b of the difference;
    * ``"studentized"``: :func:`~.intervals.studentized_interval`, each replicate
      difference studentised by its own paired standard error ``replicate_se``
      (√(V*_a + V*_b − 2C*_ab)), the sample's by the paired standard error.

    ``side_se`` (SE* of each side) serves a side's own studentised interval when the
    other side has no errors. A side without errors and a change without a changed draw
    are handled as in :func:`honest_difference` (cases 1–3), the other side's interval
    then being its own bootstrap interval of the same method (``comparison="domains"``;
    with ``"releases"`` an error-free side's replicates are its share of the change, as
    in :func:`~.combine.difference`). Replicates where a side is undefined are left out.

    ``combine="mover"`` combines the two sides' own bootstrap intervals (of ``method``) by
    MOVER with the correlation of the two estimates, instead of taking the interval of the
    replicate differences: each side's skewness then shapes its own tail of the
    difference, which the replicate differences mix (SPEC 8 ``"bca_mover"``, half of the
    ``"hull"`` that ``"recommended"`` gives the gaps).
    """
    level = check_ci_level(ci_level)
    k = a.draws
    est = a.estimate - b.estimate
    nan = math.nan
    if not (a.defined and b.defined):
        return Difference(nan, nan, nan, nan, nan, k, level,
                          "undefined: one of the two estimates is undefined for this sample", "none", seed)
    if a.influence is None or b.influence is None or k < 2:
        return Difference(est, nan, nan, nan, nan, k, level, "no standard error: fewer than 2 draws", "none", seed)
    d = np.asarray(draws, dtype=np.float64)
    w = np.asarray(a.influence, dtype=np.float64) - np.asarray(b.influence, dtype=np.float64)
    w = w - float((d * w).sum()) / k
    se = math.sqrt(max(float((d * w * w).sum()) / (k * (k - 1)), 0.0))
    ra = np.asarray(replicates_a, dtype=np.float64)
    rb = np.asarray(replicates_b, dtype=np.float64)
    if combine not in ("joint", "mover"):
        raise ValueError(f"combine={combine!r}: 'joint' or 'mover'")
    if (unchanged is not None or combine == "mover"
            or (comparison == "domains" and "zero_event" in (a.interval, b.interval))):
        share = "zero_event" in (a.interval, b.interval)

        def side_boot(res: RatioEstimate, reps: np.ndarray, rse: np.ndarray | None) -> Limits:
            # with a zero-event side the metric is a share: each side's limits in [0, 1]
            bounds = (0.0, 1.0) if share else None
            return _family(method, reps, rse, res.estimate, res.std_error, res.influence, d, bounds)[0]

        if unchanged is not None and not math.isnan(unchanged.half_width):
            return honest_difference(a, b, d, est=est, std_error=se, ci_level=level, unchanged=unchanged, seed=seed,
                                     labels=labels)
        sa, sb = (None, None) if side_se is None else side_se
        own = comparison == "domains"
        la, ka = side_limits(a, method=method, bootstrap=side_boot(a, ra, sa), own_bound=own)
        lb, kb = side_limits(b, method=method, bootstrap=side_boot(b, rb, sb), own_bound=own)
        notes = [_side_note(labels[0], a, ka, level), _side_note(labels[1], b, kb, level)]
        limits = _mover(a, b, la, lb, paired_correlation(a, b, d))
        return _finish(est, se, k, level, limits, (ka, kb), notes, method, seed, labels,
                   max(abs(a.estimate), abs(b.estimate)))
    diff = ra - rb
    rse = None if replicate_se is None else np.asarray(replicate_se, dtype=np.float64)
    ok = ~np.isnan(diff)
    dropped = int(diff.size - int(ok.sum()))
    notes = []
    if dropped:
        notes.append(f"{dropped} of {diff.size} bootstrap resamples leave a side undefined and are left out")
    if ok.any() and np.all(diff[ok] == diff[ok][0]) and se == 0.0:
        return _finish(est, se, k, level, lambda lvl: (est, est), (method, method), notes, method, seed, labels,
                   max(abs(a.estimate), abs(b.estimate)))

    limits = _family(method, diff, rse, est, se, w, d, None)[0]
    return _finish(est, se, k, level, limits, (method, method), notes, method, seed, labels,
                   max(abs(a.estimate), abs(b.estimate)))


def _family(method: str, reps: np.ndarray, rep_se: np.ndarray | None, est: float, se: float,
            influence: np.ndarray | None, draws: np.ndarray,
            bounds: tuple[float, float] | None) -> tuple[Limits, int]:
    """The intervals of a bootstrap ``method`` at every level (replicates sorted once)."""
    if method == "bootstrap":
        return percentile_family(reps, est, bounds=bounds)
    if method == "bca":
        if influence is None:
            return (lambda level: (math.nan, math.nan)), 0
        return bca_family(reps, est, influence, draws, bounds=bounds)
    if method == "studentized":
        if rep_se is None:
            raise ValueError("studentized: replicate standard errors are needed")
        return studentized_family(reps, rep_se, est, se, bounds=bounds)
    raise ValueError(f"not a bootstrap method: {method!r}")


def hull_difference(first: Difference, second: Difference) -> Difference:
    """The smallest interval holding both intervals of the same difference (SPEC 8 ``"hull"``).

    ``first`` and ``second`` are two intervals of θ̂_a − θ̂_b on the same draws (the
    subgroup gaps use the paired normal interval and the MOVER of the two sides' BCa
    intervals). The hull covers the true difference whenever either does, so its coverage
    is at least the larger of the two; its test rejects (p < 1 − level) only when both
    reject, so p is the larger p-value and the false-positive rate is at most the smaller
    one. A side without an interval leaves the other's; the estimate and the paired
    standard error are ``first``'s. The result is ``"zero_event"`` when either interval
    rests on a zero-event bound (SPEC 6), ``"hull"`` otherwise.
    """
    if not second.has_interval:
        return first
    if not first.has_interval:
        return replace(second, estimate=first.estimate, std_error=first.std_error)
    lo, hi = min(first.ci_lower, second.ci_lower), max(first.ci_upper, second.ci_upper)
    p = max(first.p_value, second.p_value) if not (math.isnan(first.p_value) or math.isnan(second.p_value)) \
        else math.nan
    interval = "zero_event" if (first.zero_event or second.zero_event) else "hull"
    notes = list(dict.fromkeys(n for n in (first.note, second.note) if n))
    return replace(first, ci_lower=lo, ci_upper=hi, p_value=p, interval=interval, note="; ".join(notes),
                   seed=second.seed if second.seed is not None else first.seed)
