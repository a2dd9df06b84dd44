"""Subgroup estimates and disparities (SPEC 8): domain estimators over all draws.

A subgroup G is a set of *entities* (true clusters). Its membership is one value π_G(c) per
sampled cluster: 0 or 1 (hard membership, e.g. an attribute of the entity or the arg-max of
an imputed ethnicity) or a probability (soft membership). The estimate of θ_G is the ratio
estimator of SPEC 6 on f_i·π_G(c_i) and g_i·π_G(c_i) over *all* k draws, draws outside the
group contributing zeros (the domain estimator), so every group, the rest and the whole
sample share their rows and :func:`~.combine.difference` gives the paired standard error
of a gap.

Comparisons (``compare_to``):

* ``"rest"``: the entities of known membership that are not in G,
  π_rest(c) = (1 − π_G(c))·known(c). A cluster whose membership is unknown (an imputation
  that abstained, a null group attribute) is in no group and not in the rest: we do not
  know which side it is on. For soft membership 1 − π_G(c) is the probability of the
  other categories.
* ``"all"``: every sampled entity, abstained ones included, π_all(c) = 1: θ̂_all is the
  estimate ``erx.estimate`` reports for the whole release.

A group (or, with ``"rest"``, its comparison) with fewer than ``min_draws`` draws in it,
Σ_i d_i π(c_i) (whole for hard membership, expected for soft), is "too small": its
estimates are reported but it is not tested (no p-value) and it neither passes nor fails.
The p-values of the tested (group, metric) pairs are adjusted together (Holm's step-down
by default), so that the chance of any false alarm among them is at most α.

Cluster precision and cluster F have no subgroup form: their f and g use the number of
records and predicted clusters of the whole release, and the predicted clusters of a
group of true entities are not defined.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from er_expectations.core.errors import InputError
from er_expectations.core.hints import did_you_mean
from er_expectations.stats.combine import Difference, difference
from er_expectations.stats.differences import hull_difference
from er_expectations.stats.estimator import RatioEstimate, check_ci_level
from er_expectations.stats.metrics import METRICS, PERFORMANCE_METRICS, estimate_metrics
from er_expectations.stats.sample import BenchmarkSample

__all__ = [
    "ADJUSTMENTS",
    "COMPARISONS",
    "DEFAULT_MIN_DRAWS",
    "DEFAULT_SUBGROUP_METRICS",
    "GroupResult",
    "MEMBERSHIPS",
    "Membership",
    "NO_SUBGROUP_FORM",
    "STATUSES",
    "adjust_p_values",
    "check_min_draws",
    "check_subgroup_metrics",
    "estimate_groups",
    "estimate_groups_methods",
    "holm",
]

#: How membership is read: hard (0/1, the arg-max of an imputation) or soft (probabilities).
MEMBERSHIPS: tuple[str, ...] = ("hard", "soft")
#: What a group is compared with (SPEC 8).
COMPARISONS: tuple[str, ...] = ("rest", "all")
#: Multiple-testing adjustments of the p-values over every (group, metric) tested.
ADJUSTMENTS: tuple[str, ...] = ("holm", "bonferroni", "none")
#: Status of a (group, metric) row.
STATUSES: tuple[str, ...] = ("ok", "too small", "undefined")
#: Default smallest number of draws in a group (and in its comparison) for a test.
DEFAULT_MIN_DRAWS = 30

_NO_FORM = ("{m} has no subgroup form: its f and g use the number of records and of predicted clusters "
            "of the whole release, and the predicted clusters of a group of true entities are not defined "
            "(SPEC 8). Use pairwise_f, b_cubed_f, cluster_recall or another metric of the sampled clusters")
#: Metrics refused for subgroups, with the reason.
NO_SUBGROUP_FORM: dict[str, str] = {m: _NO_FORM.format(m=m) for m in ("cluster_precision", "cluster_f")}
#: Metrics estimated by group when none are named: the performance metrics that have a subgroup form.
DEFAULT_SUBGROUP_METRICS: tuple[str, ...] = tuple(m for m in PERFORMANCE_METRICS if m not in NO_SUBGROUP_FORM)


def check_subgroup_metrics(metrics: str | Iterable[str] | None, *, names: bool = False,
                           parameter: str = "metrics") -> tuple[str, ...]:
    """Validate metric ids for subgroup estimates; ``None`` gives :data:`DEFAULT_SUBGROUP_METRICS`."""
    if metrics is None:
        return DEFAULT_SUBGROUP_METRICS
    items = [metrics] if isinstance(metrics, str) else metrics
    if not isinstance(items, Iterable) or isinstance(items, (bytes, dict)):
        raise InputError(f"{parameter}={metrics!r}: give a metric id, a list of metric ids, or None for "
                         f"{', '.join(DEFAULT_SUBGROUP_METRICS)}")
    out: list[str] = []
    for m in items:
        if not isinstance(m, str):
            raise InputError(f"{parameter}: {m!r} is not a metric id (a text such as 'pairwise_f')")
        if m in NO_SUBGROUP_FORM:
            raise InputError(f"{parameter}: {NO_SUBGROUP_FORM[m]}")
        usable = [k for k in METRICS if k not in NO_SUBGROUP_FORM and (names or not METRICS[k].needs_names)]
        if m not in METRICS:
            close = did_you_mean(m, usable)
            raise InputError(f"{parameter}: unknown metric id {m!r}{'; ' + close if close else ''} "
                             f"Known ids: {', '.join(usable)}")
        if METRICS[m].needs_names and not names:
            raise InputError(f"{parameter}: {m!r} needs a name column, which subgroup estimates do not take; "
                             "leave it out")
        if m not in out:
            out.append(m)
    if not out:
        raise InputError(f"{parameter}=[] selects no metric; give metric ids, or None for the default ones")
    return tuple(out)


def check_min_draws(min_draws: object, *, parameter: str = "min_draws") -> int:
    """Validate the smallest number of draws of a tested group: an integer ≥ 2."""
    if isinstance(min_draws, bool) or not isinstance(min_draws, (int, np.integer)):
        raise InputError(f"{parameter}={min_draws!r} is not an integer; give the smallest number of draws a "
                         f"group needs to be tested, such as {DEFAULT_MIN_DRAWS}")
    if int(min_draws) < 2:
        raise InputError(f"{parameter}={min_draws!r}: a group needs at least 2 draws for a standard error; "
                         f"give {DEFAULT_MIN_DRAWS} or so (normal intervals need a few dozen)")
    return int(min_draws)


def _check_choice(value: object, choices: Sequence[str], parameter: str) -> str:
    if not isinstance(value, str) or value not in choices:
        close = did_you_mean(str(value), choices)
        raise InputError(f"{parameter}={value!r} is not one of {', '.join(choices)}"
                         f"{'; ' + close if close else ''}")
    return value


def holm(p_values: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjustment: p_(j) ↦ max_{i ≤ j} min(1, (m − i + 1)·p_(i)).

    NaN p-values are left out of the family (and stay NaN). Rejecting the adjusted values
    below α keeps the family-wise error rate at most α under any dependence (Holm 1979).
    """
    p = np.asarray(p_values, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    idx = np.flatnonzero(~np.isnan(p))
    order = idx[np.argsort(p[idx], kind="stable")]
    m = order.size
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    out[order] = np.maximum.accumulate(scaled) if m else scaled
    return out


def adjust_p_values(p_values: Sequence[float], method: str = "holm") -> np.ndarray:
    """Adjust a family of p-values: ``holm``, ``bonferroni`` (m·p, capped at 1) or ``none``."""
    method = _check_choice(method, ADJUSTMENTS, "adjust")
    p = np.asarray(p_values, dtype=np.float64)
    if method == "holm":
        return holm(p)
    if method == "bonferroni":
        return np.minimum(1.0, p * int((~np.isnan(p)).sum()))
    return p.copy()


@dataclass(frozen=True, slots=True)
class Membership:
    """Group membership of every sampled cluster, aligned with a :class:`BenchmarkSample`.

    ``pi`` is (K, G): π_g(c) ∈ [0, 1], 0/1 for hard membership; the groups are disjoint
    (a row sums to at most 1). ``known`` is False for a cluster whose membership is unknown
    (an abstained imputation, a null attribute): it belongs to no group and to no rest.
    """

    groups: tuple[str, ...]
    pi: np.ndarray
    known: np.ndarray
    kind: str = "hard"

    def __post_init__(self) -> None:
        _check_choice(self.kind, MEMBERSHIPS, "membership")
        pi = np.asarray(self.pi, dtype=np.float64)
        known = np.asarray(self.known, dtype=bool)
        if pi.ndim != 2 or pi.shape[1] != len(self.groups) or known.shape != (pi.shape[0],):
            raise InputError(f"membership: pi must be (clusters, groups) = ({known.shape[0]}, {len(self.groups)}) "
                             f"and known one flag per cluster; got {pi.shape} and {known.shape}")
        if len(set(self.groups)) != len(self.groups):
            raise InputError(f"membership: a group name is given twice in {list(self.groups)}")
        if not np.all(np.isfinite(pi)) or np.any(pi < 0) or np.any(pi > 1):
            raise InputError("membership: every π_G(c) must be a probability in [0, 1]")
        if np.any(pi.sum(axis=1) > 1 + 1e-9):
            raise InputError("membership: the groups overlap (a cluster's memberships add up to more than 1); "
                             "give disjoint groups")
        if np.any(pi[~known] > 0):
            raise InputError("membership: a cluster of unknown membership cannot belong to a group")
        if self.kind == "hard" and np.any((pi != 0) & (pi != 1)):
            raise InputError("membership='hard' takes 0/1 memberships; use membership='soft' for probabilities")
        object.__setattr__(self, "pi", pi)
        object.__setattr__(self, "known", known)

    @property
    def abstained(self) -> int:
        """Number of sampled clusters in no group (unknown membership)."""
        return int((~self.known).sum())


@dataclass(frozen=True, slots=True)
class GroupResult:
    """One (group, metric): the group's estimate, its comparison and the gap between them.

    ``draws`` is Σ d_i π_G(c_i) and ``clusters`` the number of sampled clusters with
    π_G(c) > 0; ``comparison_draws`` the same for the comparison. ``disparity`` is
    θ̂_G − θ̂_comparison with the paired SE of :func:`~.combine.difference`. ``p_adjusted``
    is NaN for rows that were not tested (status other than "ok").
    """

    group: str
    metric: str
    estimate: RatioEstimate
    comparison: RatioEstimate
    disparity: Difference
    draws: float
    clusters: int
    comparison_draws: float
    status: str
    p_value: float
    p_adjusted: float = math.nan
    note: str = ""


def _domain_draws(d: np.ndarray, pi: np.ndarray) -> tuple[float, int]:
    return float((d * pi).sum()), int(((pi > 0) & (d > 0)).sum())


def estimate_groups(
    sample: BenchmarkSample,
    membership: Membership,
    metrics: str | Iterable[str] | None = None,
    *,
    beta: float = 1.0,
    ci_level: float = 0.95,
    compare_to: str = "rest",
    min_draws: int = DEFAULT_MIN_DRAWS,
    adjust: str = "holm",
    bias_adjust: bool = True,
    ci_method: str = "linearization",
    n_boot: int = 2000,
    seed: int | None = None,
) -> list[GroupResult]:
    """Every (group, metric) estimate with its gap to the comparison (SPEC 8).

    Rows come group by group in the order of ``membership.groups``, metrics in the order
    asked. The p-values of the rows with status "ok" are adjusted together by ``adjust``.

    ``ci_method`` (SPEC 6; :data:`~.estimator.INTERVAL_METHODS`) sets the intervals of the
    group's estimate, of its comparison and of the gap: ``"linearization"`` (the paired
    normal interval of the gap), ``"logit"`` (the logit interval of each side, the gap by
    MOVER from them), or a bootstrap (``"bootstrap"``, ``"bca"``, ``"studentized"``) of
    ``n_boot`` resamples of the shared draws, seeded by ``seed`` (:data:`~.estimator.DEFAULT_SEED`
    when None, recorded in the results): every group, comparison and gap is computed on the same
    resamples, so the gap's replicates keep the pairing. Whatever the method, a gap never
    has a zero-width interval (:func:`~.combine.difference`); its p-value is that of its
    own interval. :func:`estimate_groups_methods` gives several methods at once.
    """
    return estimate_groups_methods(sample, membership, metrics, methods=(ci_method,), beta=beta, ci_level=ci_level,
                                   compare_to=compare_to, min_draws=min_draws, adjust=adjust,
                                   bias_adjust=bias_adjust, n_boot=n_boot, seed=seed)[ci_method]


def estimate_groups_methods(
    sample: BenchmarkSample,
    membership: Membership,
    metrics: str | Iterable[str] | None = None,
    *,
    methods: Sequence[str] = ("linearization",),
    beta: float = 1.0,
    ci_level: float = 0.95,
    compare_to: str = "rest",
    min_draws: int = DEFAULT_MIN_DRAWS,
    adjust: str = "holm",
    bias_adjust: bool = True,
    n_boot: int = 2000,
    seed: int | None = None,
) -> dict[str, list[GroupResult]]:
    """:func:`estimate_groups` for every interval method in ``methods`` at once (SPEC 8):
    ``{method: rows}``, the bootstraps on one set of resamples of the draws.

    Each ``result[method]`` equals ``estimate_groups(..., ci_method=method, n_boot=n_boot,
    seed=seed)``; the estimates, standard errors and statuses are the same for every
    method, the intervals, p-values and adjusted p-values are the method's.
    ``"bca_mover"`` (:data:`~.estimator.GAP_METHODS`) shows BCa estimates and combines them
    by MOVER into the gap; ``"hull"`` shows the linearised estimates and the smallest gap
    interval holding both the paired normal and the ``"bca_mover"`` one
    (:func:`~.differences.hull_difference`). ``"recommended"`` gives each row the estimates of its metric's
    :data:`~.estimator.RECOMMENDED_CI_METHOD` and the gap (interval and p-value) of its
    :data:`~.estimator.RECOMMENDED_GAP_METHOD` (the p-values adjusted together).
    """
    # imported here: the estimator's names of the interval methods (issue 21)
    from er_expectations.stats.estimator import (
        BOOTSTRAP_METHODS,
        GAP_METHODS,
        RECOMMENDED,
        RECOMMENDED_CI_METHOD,
        RECOMMENDED_GAP_METHOD,
        check_ci_method,
        check_n_boot,
        concrete_methods,
        interval_seed,
    )

    ids = check_subgroup_metrics(metrics)
    level = check_ci_level(ci_level)
    compare_to = _check_choice(compare_to, COMPARISONS, "compare_to")
    min_draws = check_min_draws(min_draws)
    adjust = _check_choice(adjust, ADJUSTMENTS, "adjust")
    wanted = tuple(dict.fromkeys(m if m in GAP_METHODS else check_ci_method(m, parameter="ci_method",
                                                                          every_method=True)
                                 for m in methods))
    if not wanted:
        raise InputError("methods=() selects no interval method; give at least one, such as 'linearization'")
    needed = concrete_methods(wanted, ids)
    resampled = (*BOOTSTRAP_METHODS, *GAP_METHODS)
    if any(m in resampled for m in needed):
        n_boot = check_n_boot(n_boot)
        seed = interval_seed(seed)
    if membership.pi.shape[0] != sample.labels.shape[0]:
        raise InputError(f"membership has {membership.pi.shape[0]} clusters but the sample has "
                         f"{sample.labels.shape[0]}; align it with the sample's clusters")
    d = sample.draws.astype(np.float64)

    def run(domain: np.ndarray | None) -> dict[str, RatioEstimate]:
        return estimate_metrics(sample, ids, beta=beta, ci_level=level, bias_adjust=bias_adjust, domain=domain)

    # the domains: each group, and its comparison (the rest of group j, or all entities)
    domains: dict[Hashable, np.ndarray | None] = {}
    pairs: list[tuple[int, str, Hashable, Hashable]] = []
    for j, name in enumerate(membership.groups):
        domains[("group", j)] = membership.pi[:, j]
        if compare_to == "all":
            domains.setdefault(("all",), None)
            pairs.append((j, name, ("group", j), ("all",)))
        else:
            domains[("rest", j)] = (1.0 - membership.pi[:, j]) * membership.known
            pairs.append((j, name, ("group", j), ("rest", j)))
    linear = {key: run(pi) for key, pi in domains.items()}
    sizes = {key: (_domain_draws(d, pi) if pi is not None else (float(d.sum()), int((d > 0).sum())))
             for key, pi in domains.items()}
    boot = None
    if any(m in resampled for m in needed):
        boot = _GroupBootstrap(sample, domains, pairs, ids, beta=beta, bias_adjust=bias_adjust, n_boot=n_boot,
                               seed=seed, studentized="studentized" in needed)
    raw: dict[str, list[GroupResult]] = {}
    for method in needed:
        if method == "hull":  # made from the paired normal and the BCa MOVER rows, below
            continue
        rows: list[GroupResult] = []
        for _, name, gkey, ckey in pairs:
            draws, clusters = sizes[gkey]
            other_draws = sizes[ckey][0]
            for mid in ids:
                est, cmp_ = linear[gkey][mid], linear[ckey][mid]
                labels = ("group", "comparison")
                if boot is not None and method in resampled:
                    base, combine = ("bca", "mover") if method == "bca_mover" else (method, "joint")
                    diff = boot.difference(base, gkey, ckey, mid, est, cmp_, ci_level=level, combine=combine)
                    show_est = boot.side(base, gkey, mid, est, ci_level=level)
                    show_cmp = boot.side(base, ckey, mid, cmp_, ci_level=level)
                else:
                    diff = difference(est, cmp_, d, ci_level=level, method=method)
                    show_est, show_cmp = _side_logit(method, mid, est, level), _side_logit(method, mid, cmp_, level)
                diff = _labelled(diff, labels)
                status, note = _row_status(diff, est, cmp_, draws=draws, other_draws=other_draws,
                                           min_draws=min_draws, rest=compare_to == "rest")
                p = diff.p_value if status == "ok" else math.nan
                rows.append(GroupResult(name, mid, show_est, show_cmp, diff, draws, clusters, other_draws, status,
                                        p, note=note))
        raw[method] = rows
    if "hull" in needed:  # the smallest interval holding the paired normal and the BCa MOVER gaps
        # the row's note is rebuilt from the hull's gap: the note of the paired normal gap is not its
        raw["hull"] = [replace(lin, disparity=(gap := hull_difference(lin.disparity, mover.disparity)),
                               p_value=gap.p_value if lin.status == "ok" else math.nan,
                               note=_row_status(gap, lin.estimate, lin.comparison, draws=lin.draws,
                                                other_draws=lin.comparison_draws, min_draws=min_draws,
                                                rest=compare_to == "rest")[1])
                       for lin, mover in zip(raw["linearization"], raw["bca_mover"], strict=True)]
    if RECOMMENDED in wanted:  # each row: estimates and gap from its metric's methods
        rec = []
        for i, r in enumerate(raw["linearization"]):
            sides = raw[RECOMMENDED_CI_METHOD.get(r.metric, "linearization")][i]
            gap = raw[RECOMMENDED_GAP_METHOD.get(r.metric, "linearization")][i]
            rec.append(replace(gap, estimate=sides.estimate, comparison=sides.comparison))
        raw[RECOMMENDED] = rec
    out: dict[str, list[GroupResult]] = {}
    for method in wanted:
        adjusted = adjust_p_values([r.p_value for r in raw[method]], adjust)
        out[method] = [_with_p(r, float(a)) for r, a in zip(raw[method], adjusted, strict=True)]
    return out


def _row_status(diff: Difference, est: RatioEstimate, cmp_: RatioEstimate, *, draws: float, other_draws: float,
                min_draws: int, rest: bool) -> tuple[str, str]:
    """The status of a (group, metric) row and its note (SPEC 8). A row has no number of its
    own: every clause of its note names the part it is about, "gap: " (the disparity),
    "group: " or "comparison: " (the two estimates), or is about the row's test (too few
    draws). A part's note is never shown as the row's (SPEC 6: a note belongs to its quantity)."""
    notes: list[str] = []

    def part(label: str, note: str) -> None:
        notes.extend(f"{label}: {clause}" for clause in note.split("; ") if clause)

    if draws < min_draws:
        status = "too small"
        notes.append(f"{draws:g} draws in the group, fewer than min_draws={min_draws}: reported, not tested")
    elif rest and other_draws < min_draws:
        status = "too small"
        notes.append(f"{other_draws:g} draws in the rest, fewer than min_draws={min_draws}: reported, not tested")
    elif not diff.has_std_error:
        status = "undefined"
        part("gap", diff.note or "no standard error")
    else:
        status = "ok"
        if diff.interval in ("zero_event", "none"):
            part("gap", diff.note)
    for label, e in (("group", est), ("comparison", cmp_)):
        if not e.defined:
            part(label, e.note)
    return status, "; ".join(notes)


def _labelled(diff: Difference, labels: tuple[str, str]) -> Difference:
    """The notes of a gap name its sides as the group and its comparison."""
    if not diff.note:
        return diff
    note = diff.note.replace("first side", labels[0]).replace("second side", labels[1])
    return replace(diff, note=note)


def _side_logit(method: str, mid: str, res: RatioEstimate, level: float) -> RatioEstimate:
    if method != "logit":
        return res
    from er_expectations.stats.metrics import with_logit

    return with_logit(METRICS[mid], res, ci_level=level)


class _GroupBootstrap:
    """Every (domain, metric) of :func:`estimate_groups_methods` on the same resamples."""

    def __init__(self, sample: BenchmarkSample, domains: dict[Hashable, np.ndarray | None],
                 pairs: list[tuple[int, str, Hashable, Hashable]], ids: tuple[str, ...], *, beta: float,
                 bias_adjust: bool, n_boot: int, seed: int, studentized: bool) -> None:
        from er_expectations.stats.joint import JointBootstrap
        from er_expectations.stats.metrics import base_series, fg_values, label_order, moment_pairs
        from er_expectations.stats.sample import cluster_errors

        errors = cluster_errors(sample)
        bases = list(dict.fromkeys(b for mid in ids for b in base_series(mid)))
        fg = {m: fg_values(sample, m, beta=beta, errors=errors) for m in bases}
        values = {}
        for key, pi in domains.items():
            for m in bases:
                f, g = fg[m]
                values[(key, m)] = (f, g) if pi is None else (f * pi, g * pi)
        moments: list[tuple[Hashable, Hashable]] = []
        if studentized:
            for _, _, gkey, ckey in pairs:
                for mid in ids:
                    moments += moment_pairs([(k, b) for k in (gkey, ckey) for b in base_series(mid)])
        self.draws = sample.draws.astype(np.float64)
        self.beta = beta
        self.n_boot, self.seed = n_boot, seed
        self.boot = JointBootstrap(values, self.draws, n_boot=n_boot, seed=seed, bias_adjust=bias_adjust,
                                   order=label_order(sample.labels), moments=moments)
        self.studentized = studentized
        self._cache: dict[tuple[Hashable, str], tuple[np.ndarray, list]] = {}

    def replicates(self, key: Hashable, mid: str) -> tuple[np.ndarray, list]:
        from er_expectations.stats.metrics import replicate_metric

        if (key, mid) not in self._cache:
            self._cache[(key, mid)] = replicate_metric(self.boot, mid, lambda m: (key, m), beta=self.beta)
        return self._cache[(key, mid)]

    def side(self, method: str, key: Hashable, mid: str, res: RatioEstimate, *, ci_level: float) -> RatioEstimate:
        from er_expectations.stats.metrics import apply_method, combination_se

        theta, terms = self.replicates(key, mid)
        se = combination_se(self.boot, terms) if method == "studentized" else None
        return apply_method(METRICS[mid], res, method, theta, se, self.draws, ci_level=ci_level, n_boot=self.n_boot,
                      seed=self.seed)

    def difference(self, method: str, gkey: Hashable, ckey: Hashable, mid: str, est: RatioEstimate,
                   cmp_: RatioEstimate, *, ci_level: float, combine: str = "joint") -> Difference:
        from er_expectations.stats.differences import bootstrap_difference
        from er_expectations.stats.metrics import combination_se

        ta, terms_a = self.replicates(gkey, mid)
        tb, terms_b = self.replicates(ckey, mid)
        rse = side_se = None
        if method == "studentized":
            both = terms_a + [(k, -c) for k, c in terms_b]
            rse = combination_se(self.boot, both)
            side_se = (combination_se(self.boot, terms_a), combination_se(self.boot, terms_b))
        return bootstrap_difference(est, cmp_, self.draws, ta, tb, method=method, ci_level=ci_level, seed=self.seed,
                                    replicate_se=rse, side_se=side_se, combine=combine)


def _with_p(row: GroupResult, p_adjusted: float) -> GroupResult:
    return replace(row, p_adjusted=p_adjusted)
