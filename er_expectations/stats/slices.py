"""Slices of high error, found on one part of the draws and tested on the other (SPEC 12.2).

A *slice* is a set of entities (true clusters) described by conditions on their features
("cluster_size ≥ 12 and name_spellings ≥ 3"). Its error rate for a cluster-wise metric E of
SPEC 4 is the domain estimate of SPEC 8,

    θ_S = E[E(c)·g(c)·1_S(c)] / E[g(c)·1_S(c)],     g(c) = w_c (per entity) or s·w_c (per record),

its share of the population is E[g·1_S]/E[g] and its lift is θ_S/θ_rest, the rest being every
other entity.

*Honest inference.* Slices are searched for, so the draws that choose a slice must not also
test it. The k draws are split at random (seeded) into a search part and an estimation part.
The draws are i.i.d. (sampling with replacement, SPEC 1), so both parts are independent
i.i.d. samples of the same design, whatever clusters they share. On the search part a
design-weighted regression tree (:func:`grow_tree`) proposes slices; on the estimation
part only, each slice gets its estimate, interval, share, lift and the one-sided p-value of
H0: θ_S ≤ L0·θ_rest (``null_lift`` L0, default 1: no excess error) or H0: θ_S ≤ r0
(``null_rate``), and the p-values of the slices reported are adjusted together by Holm's
step-down method. A slice is *significant* when its adjusted p-value is below α. Given the
search part, the slices are fixed and the estimation part is a fresh sample, so the
p-values are those of tests named in advance; with Holm's adjustment the chance of
reporting any significant slice when errors depend on no feature is at most α
(benchmarks/bench_slices_fdr.py measures it).

``inference="naive"`` searches and tests on all the draws without adjustment: the common
mistake, kept only to show by simulation how far it exceeds α.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from statistics import NormalDist

import numpy as np

from er_expectations.core.errors import InputError
from er_expectations.core.hints import did_you_mean
from er_expectations.stats.estimator import (
    RatioEstimate,
    check_ci_level,
    ratio_estimate,
    resolve_seed,
    z_value,
)
from er_expectations.stats.metrics import label_order
from er_expectations.stats.slice_conditions import Condition, Features, describe, simplify
from er_expectations.stats.subgroups import DEFAULT_MIN_DRAWS, check_min_draws, holm

__all__ = [
    "CLUSTER_METRICS",
    "INFERENCES",
    "MAX_SHARE",
    "SEARCH_MIN_DRAWS",
    "SPLIT_Z",
    "UNITS",
    "Condition",
    "Features",
    "Slice",
    "SliceSearch",
    "TreeNode",
    "check_metric",
    "grow_tree",
    "minimum_draws",
    "search_slices",
    "split_draws",
]

#: The cluster-wise error metrics of SPEC 4 a slice can be searched on, with their range.
CLUSTER_METRICS: dict[str, tuple[float, float] | None] = {
    "EI": (0.0, 1.0), "ROCE": (0.0, 1.0), "RUCE": (0.0, 1.0),
    "OCE": (0.0, math.inf), "UCE": (0.0, math.inf), "SDE": None,
}
#: What a slice's rate counts: entities (g = w) or records (g = s·w).
UNITS: tuple[str, ...] = ("entity", "record")
#: ``split``: search on one part, test on the other (honest); ``naive``: search and test on
#: all the draws, no adjustment (for the simulation that shows why not).
INFERENCES: tuple[str, ...] = ("split", "naive")
#: Fewest draws of the search part in a node of the tree.
SEARCH_MIN_DRAWS = 5
#: Largest search-part share of a reported slice: a slice is a minority of the entities, tested
#: against the larger rest. (The complement of a small low-error node is not a slice: its test
#: would rest on the small node's few errors, whose rate is skewed, and reject too often.)
MAX_SHARE = 0.5
#: A split is made only when the search part tells its two sides apart: |z| of the gap
#: between their rates at least this (two-sided 5 %).
SPLIT_Z = 1.959963984540054


def check_metric(metric: object, *, parameter: str = "metric") -> str:
    """A cluster-wise metric of SPEC 4 (EI, OCE, UCE, ROCE, RUCE, SDE), case-insensitive."""
    if isinstance(metric, str) and metric.upper() in CLUSTER_METRICS:
        return metric.upper()
    close = did_you_mean(str(metric), tuple(CLUSTER_METRICS))
    raise InputError(f"{parameter}={metric!r} is not a cluster-wise error metric{'; ' + close if close else ''} "
                     f"Use one of: {', '.join(CLUSTER_METRICS)} (SPEC 4)")


@dataclass(frozen=True, slots=True)
class TreeNode:
    """A node of the search tree: its conditions, clusters and its search-part rate and share."""

    conditions: tuple[Condition, ...]
    mask: np.ndarray = field(repr=False)
    rate: float
    share: float
    draws: int
    depth: int
    parent: int  # index of the parent node, −1 for the root


def _sse_terms(sw: np.ndarray, swy: np.ndarray, b0: np.ndarray, b1: np.ndarray, b2: np.ndarray):
    """Mean and the numerator of the domain variance Σ d g² (y − m)² of cumulative blocks."""
    with np.errstate(divide="ignore", invalid="ignore"):
        m = swy / sw
    return m, np.maximum(b2 - 2 * m * b1 + m * m * b0, 0.0)


def _best_split(y: np.ndarray, a: np.ndarray, b: np.ndarray, d: np.ndarray,
                order_keys: np.ndarray, missing: np.ndarray, *, total: float, min_share: float,
                k: int) -> tuple[float, int, bool] | None:
    """The best threshold over ordered blocks of rows: (|z|, position, unknown-to-left).

    ``order_keys`` gives each known row its block (0..B−1, blocks in order); a split at
    position p puts blocks < p left. ``a`` = d·g (weights), ``b`` = d·g², ``d`` draws.
    Unknown rows (``missing``) go to the side that separates better.
    """
    nb = int(order_keys.max()) + 1 if order_keys.size else 0
    if nb < 2:
        return None
    known = ~missing

    def sums(v: np.ndarray) -> np.ndarray:
        return np.bincount(order_keys, weights=v[known], minlength=nb)

    cols = [a, a * y, b, b * y, b * y * y, d.astype(np.float64)]
    cum = [np.cumsum(sums(c))[:-1] for c in cols]  # left = blocks before p, p = 1..nb−1
    tot = [float(c[known].sum()) for c in cols]
    miss = [float(c[missing].sum()) for c in cols]
    best: tuple[float, int, bool] | None = None
    for unknown_left in ((False, True) if missing.any() else (False,)):
        left = [c + (m if unknown_left else 0.0) for c, m in zip(cum, miss, strict=True)]
        right = [t + m - lft for t, m, lft in zip(tot, miss, left, strict=True)]
        ok = ((left[0] >= min_share * total) & (right[0] >= min_share * total)
              & (left[5] >= SEARCH_MIN_DRAWS) & (right[5] >= SEARCH_MIN_DRAWS) & (left[0] > 0) & (right[0] > 0))
        if not ok.any():
            continue
        ml, vl = _sse_terms(left[0], left[1], left[2], left[3], left[4])
        mr, vr = _sse_terms(right[0], right[1], right[2], right[3], right[4])
        var = (k / max(k - 1, 1)) * (vl / left[0] ** 2 + vr / right[0] ** 2)
        gap = np.abs(ml - mr)
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(var > 0, gap / np.sqrt(var), np.where(gap > 0, np.inf, 0.0))
        z = np.where(ok, z, -1.0)
        p = int(np.argmax(z))
        if z[p] >= 0 and (best is None or z[p] > best[0]):
            best = (float(z[p]), p + 1, unknown_left)
    return best


def _candidate(features: Features, j: int, rows: np.ndarray, y: np.ndarray, a: np.ndarray, b: np.ndarray,
               d: np.ndarray, *, total: float, min_share: float, k: int):
    """The best split of feature j on the node's search rows: (|z|, left condition, right condition)."""
    name, numeric = features.names[j], features.numeric[j]
    v = features.values[j][rows]
    yy, aa, bb, dd = y[rows], a[rows], b[rows], d[rows]
    if numeric:
        missing = np.isnan(v)
        uniq, keys = np.unique(v[~missing], return_inverse=True)
    else:
        missing = np.zeros(v.shape, dtype=bool)  # unknown (−1) is a category of its own here
        present = np.unique(v)
        wsum = np.bincount(np.searchsorted(present, v), weights=aa, minlength=present.size)
        ysum = np.bincount(np.searchsorted(present, v), weights=aa * yy, minlength=present.size)
        with np.errstate(divide="ignore", invalid="ignore"):
            means = np.where(wsum > 0, ysum / wsum, 0.0)
        rank = np.empty(present.size, dtype=np.int64)
        order = np.lexsort((present, means))  # categories by their rate (CART's ordering)
        rank[order] = np.arange(present.size)
        uniq, keys = present[order], rank[np.searchsorted(present, v)]
    found = _best_split(yy, aa, bb, dd, keys.astype(np.int64), missing, total=total,
                        min_share=min_share, k=k)
    if found is None:
        return None
    z, p, unknown_left = found
    if numeric:
        t = float(uniq[p])
        # unknown values (if the feature has any) follow the side chosen on the search part;
        # without any in this node they go with "≥"
        some = bool(np.isnan(features.values[j]).any())
        return z, (Condition(name, "<", t, unknown=some and unknown_left),
                   Condition(name, "≥", t, unknown=some and not unknown_left))
    cats = features.categories[j]
    some = bool((features.values[j] < 0).any())
    sides = [[int(c) for c in uniq[:p]], [int(c) for c in uniq[p:]]]
    named = [tuple(sorted(cats[c] for c in side if c >= 0)) for side in sides]
    # each side in words: "in {…}" for the side that names fewer categories (never an empty
    # set), "not in {…}" of the same set for the other; categories this node's search part did
    # not see go with the "not in" side
    small = 0 if named[0] and (len(named[0]) <= len(named[1]) or not named[1]) else 1
    unk_small = -1 in sides[small]
    conds = [Condition(name, "in", categories=named[small], unknown=some and unk_small),
             Condition(name, "not in", categories=named[small], unknown=some and not unk_small)]
    return z, (conds[0], conds[1]) if small == 0 else (conds[1], conds[0])


def grow_tree(features: Features, y: np.ndarray, g: np.ndarray, draws: np.ndarray, *, max_depth: int,
              min_share: float, split_z: float = SPLIT_Z) -> list[TreeNode]:
    """The design-weighted regression tree of the search part (SPEC 12.2): every node, root first.

    Rows are sampled clusters with ``draws`` d_i in the search part (rows with d = 0 take no
    part), metric value y_i and weight g_i. A node's rate is Σ d g y / Σ d g (the ratio
    estimator without bias adjustment), its share Σ d g / the root's. Each node is split on
    the feature and threshold whose two sides differ most in z = |m_L − m_R| / SE (the SE of
    SPEC 8's domain estimators, the two sides disjoint); a numeric feature splits at an
    observed value t into ``< t`` and ``≥ t``, a categorical one at the CART ordering of its
    categories by rate. A split needs z ≥ ``split_z`` and, on each side, a share ≥
    ``min_share`` of the search part and ≥ :data:`SEARCH_MIN_DRAWS` draws. Ties go to the
    first feature.
    """
    d = np.asarray(draws, dtype=np.float64)
    g = np.asarray(g, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    a, b = d * g, d * g * g
    total = float(a.sum())
    k = int(round(d.sum()))
    if total <= 0:
        raise InputError("the search part has no weight: no draw with g > 0")
    all_rows = np.ones(y.shape[0], dtype=bool)

    def node(mask: np.ndarray, conds: tuple[Condition, ...], depth: int, parent: int) -> TreeNode:
        w = float(a[mask].sum())
        rate = float((a * y)[mask].sum() / w) if w > 0 else math.nan
        return TreeNode(conds, mask, rate, w / total, int(round(float(d[mask].sum()))), depth, parent)

    nodes = [node(all_rows, (), 0, -1)]
    i = 0
    while i < len(nodes):
        cur = nodes[i]
        if cur.depth < max_depth:
            rows = np.flatnonzero(cur.mask & (d > 0))
            best = None
            for j in range(len(features.names)):
                cand = _candidate(features, j, rows, y, a, b, d, total=total, min_share=min_share, k=k)
                if cand is not None and cand[0] >= split_z and (best is None or cand[0] > best[0]):
                    best = cand
            if best is not None:
                for cond in best[1]:
                    nodes.append(node(cur.mask & cond.mask(features), (*cur.conditions, cond), cur.depth + 1, i))
        i += 1
    return nodes


def minimum_draws(min_draws: int, split: float) -> int:
    """Fewest draws :func:`search_slices` accepts: the estimation part must hold a slice and its
    rest of ``min_draws`` draws each, and the search part two nodes of :data:`SEARCH_MIN_DRAWS`."""
    return max(math.ceil(2 * min_draws / (1.0 - split)), math.ceil(2 * SEARCH_MIN_DRAWS / split))


def split_draws(labels: np.ndarray, draws: np.ndarray, *, split: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Split the k draws at random into a search part of round(split·k) draws and an estimation
    part: (search draws, estimation draws) per cluster.

    A cluster drawn d times is d draws, which may fall in either part: the draws are i.i.d., so
    a random subset of them is an i.i.d. sample independent of the rest. The draws are listed
    in the order of the cluster ids as text before they are shuffled, so a seed gives the same
    split whatever order an engine listed the clusters in.
    """
    d = np.asarray(draws, dtype=np.int64)
    order = label_order(np.asarray(labels, dtype=object))
    owner = np.repeat(order, d[order])
    rng = np.random.default_rng(seed)
    owner = owner[rng.permutation(owner.size)]
    n_search = int(round(split * owner.size))
    search = np.bincount(owner[:n_search], minlength=d.size)
    return search, d - search


@dataclass(frozen=True, slots=True)
class Slice:
    """One slice reported by :func:`search_slices`, estimated on the estimation part.

    ``rate`` and ``rest`` are the domain estimates (SPEC 8) of the slice and of every other
    entity, ``share`` the slice's share of the population (entities or records), ``lift``
    rate/rest with a delta-method interval on the log scale. ``p_value`` is one-sided (H0 of
    :class:`SliceSearch`), ``p_adjusted`` Holm's over the tested slices; ``status`` is "ok",
    "too small" (fewer than ``min_draws`` draws in the slice or its rest: reported, not
    tested) or "undefined". ``search_rate``, ``search_share`` and ``search_lift`` are what the
    search part saw (not for inference).
    """

    conditions: tuple[Condition, ...]
    description: str
    rate: RatioEstimate
    rest: RatioEstimate
    share: RatioEstimate
    lift: float
    lift_ci_lower: float
    lift_ci_upper: float
    draws: float
    rest_draws: float
    clusters: int
    status: str
    p_value: float
    p_adjusted: float
    significant: bool
    search_rate: float
    search_share: float
    search_lift: float
    note: str = ""


@dataclass(frozen=True, slots=True)
class SliceSearch:
    """The result of :func:`search_slices`: the slices (fewest conditions first, then by search
    lift) and how they
    were found. ``overall`` is the estimation part's rate over every entity; ``hypothesis`` says
    what each p-value tests; ``search_draws``/``estimate_draws`` the split (per cluster)."""

    slices: tuple[Slice, ...]
    metric: str
    per: str
    inference: str
    alpha: float
    seed: int
    split: float
    min_share: float
    min_draws: int
    max_depth: int
    null_lift: float | None
    null_rate: float | None
    hypothesis: str
    overall: RatioEstimate
    features: tuple[str, ...]
    k_search: int
    k_estimate: int
    search_draws: np.ndarray = field(repr=False)
    estimate_draws: np.ndarray = field(repr=False)

    @property
    def significant(self) -> tuple[Slice, ...]:
        return tuple(s for s in self.slices if s.significant)


def _check_fraction(value: object, parameter: str, *, low: float, high: float, example: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)) \
            or not math.isfinite(float(value)) or not (low < float(value) < high):
        raise InputError(f"{parameter}={value!r}: give a number strictly between {low:g} and {high:g}, such as {example}")
    return float(value)


def _check_depth(max_depth: object) -> int:
    if isinstance(max_depth, bool) or not isinstance(max_depth, (int, np.integer)) or not 1 <= int(max_depth) <= 4:
        raise InputError(f"max_depth={max_depth!r}: give 1, 2, 3 or 4 conditions per slice (default 2); deeper "
                         "slices are too small to test and too long to read")
    return int(max_depth)


def _null_test(y: np.ndarray, g: np.ndarray, pi: np.ndarray, d: np.ndarray, s: RatioEstimate, r: RatioEstimate, *,
               null_lift: float | None, null_rate: float | None) -> tuple[float, float]:
    """(contrast, its SE under H0): a score-type test of H0: θ_S = L0·θ_rest (or θ_S = r0).

    The contrast is θ̂_S − L0·θ̂_rest (or θ̂_S − r0). Its standard error is the paired
    linearisation of SPEC 8 with the influence values taken *at the null*: both rates at their
    pooled estimate under H0, θ_rest,0 = (F_S + F_R)/(L0·G_S + G_R), θ_S,0 = L0·θ_rest,0 (F, G
    the sums of d·y·g and d·g over each side), u_i = (y_i − θ_S,0)·g_i·π_i/ḡ_S −
    L0·(y_i − θ_rest,0)·g_i·(1 − π_i)/ḡ_rest. As for proportions (the pooled two-sample
    test), this keeps a side that drew few errors by chance from looking certain: the Wald
    SE of a small rest with few errors is too small, and the test then rejects too often.
    """
    k = float(d.sum())
    a_s, a_r = d * g * pi, d * g * (1.0 - pi)
    gs, gr = float(a_s.sum()), float(a_r.sum())
    if null_rate is not None:
        u = (y - null_rate) * g * pi / (gs / k)
        est = s.estimate - null_rate
    else:
        lift0 = float(null_lift)  # type: ignore[arg-type]
        t_r = float((a_s * y).sum() + (a_r * y).sum()) / (lift0 * gs + gr)
        u = (y - lift0 * t_r) * g * pi / (gs / k) - lift0 * (y - t_r) * g * (1.0 - pi) / (gr / k)
        est = s.estimate - lift0 * r.estimate
    u = u - float((d * u).sum()) / k
    var = float((d * u * u).sum()) / (k * (k - 1))
    return est, math.sqrt(max(var, 0.0))


def _lift(s: RatioEstimate, r: RatioEstimate, d: np.ndarray, z: float) -> tuple[float, float, float, str]:
    if not (s.defined and r.defined) or r.estimate <= 0:
        return math.nan, math.nan, math.nan, "no lift: the rest's estimated rate is not above 0"
    lift = s.estimate / r.estimate
    if s.estimate <= 0 or s.influence is None or r.influence is None:
        return lift, math.nan, math.nan, ""
    u = s.influence / s.estimate - r.influence / r.estimate
    k = s.draws
    u = u - float((d * u).sum()) / k
    se = math.sqrt(max(float((d * u * u).sum()) / (k * (k - 1)), 0.0))
    if se == 0.0:
        return lift, math.nan, math.nan, "no interval for the lift: no variation in the estimation draws"
    return lift, lift * math.exp(-z * se), lift * math.exp(z * se), ""


def search_slices(y: np.ndarray, g: np.ndarray, draws: np.ndarray, labels: np.ndarray, features: Features, *,
                  metric: str = "EI", per: str = "entity", max_depth: int = 2, min_share: float = 0.05,
                  min_draws: int = DEFAULT_MIN_DRAWS, alpha: float = 0.05, ci_level: float = 0.95,
                  null_lift: float | None = 1.0, null_rate: float | None = None, split: float = 0.5,
                  max_slices: int = 10, seed: int | None = None, inference: str = "split") -> SliceSearch:
    """Find slices of high error on a search part of the draws and test them on the rest (SPEC 12.2).

    ``y`` is the cluster-wise metric E(c) of every sampled cluster, ``g`` its weight g(c)
    (w_c per entity, s·w_c per record), ``draws`` d_i, ``labels`` the cluster ids (they fix
    the split's order). ``features`` are the clusters' features. Reported: every node of the
    search tree (:func:`grow_tree`, ``max_depth`` conditions at most) whose search-part rate is
    above the rest's and, below a reported node, above its parent's; at most ``max_slices``,
    chosen by largest search lift, listed with the fewest conditions first. Each is tested on the estimation part: H0: θ_S ≤ null_lift·θ_rest
    (default: no excess error), or H0: θ_S ≤ null_rate when that is given: one-sided normal
    tests of the contrast with the paired linearisation of SPEC 8 taken at the null
    (:func:`_null_test`), Holm-adjusted over the tested slices.
    """
    metric = check_metric(metric)
    if per not in UNITS:
        raise InputError(f"per={per!r}: give 'entity' (share of entities with the error) or 'record'")
    if inference not in INFERENCES:
        raise InputError(f"inference={inference!r}: give 'split' (honest) or 'naive' (simulations only)")
    max_depth = _check_depth(max_depth)
    min_share = _check_fraction(min_share, "min_share", low=0.0, high=0.5, example="0.05")
    alpha = _check_fraction(alpha, "alpha", low=0.0, high=1.0, example="0.05")
    split = _check_fraction(split, "split", low=0.0, high=1.0, example="0.5")
    level = check_ci_level(ci_level)
    min_draws = check_min_draws(min_draws)
    if isinstance(max_slices, bool) or not isinstance(max_slices, (int, np.integer)) or int(max_slices) < 1:
        raise InputError(f"max_slices={max_slices!r}: give how many slices to report at most, such as 10")
    if (null_lift is None) == (null_rate is None):
        raise InputError("give exactly one of null_lift (test rate(slice) > null_lift × rate(rest)) or null_rate "
                         "(test rate(slice) > null_rate)")
    if null_lift is not None:
        null_lift = _check_fraction(null_lift, "null_lift", low=0.0, high=math.inf, example="1 or 1.5")
    else:
        if isinstance(null_rate, bool) or not isinstance(null_rate, (int, float, np.integer, np.floating)) \
                or not math.isfinite(float(null_rate)):
            raise InputError(f"max_rate={null_rate!r}: give a finite rate, such as 0.1")
        null_rate = float(null_rate)
        if null_rate < 0 and metric != "SDE":
            # EI, OCE, UCE, ROCE and RUCE are never negative: every slice would be "above" the limit
            raise InputError(f"max_rate={null_rate:g}: {metric} is never negative, so every slice would be above "
                             f"it; give the largest acceptable {metric} of a slice, 0 or more, such as 0.1")
        if null_rate > 1 and CLUSTER_METRICS[metric] == (0.0, 1.0):
            raise InputError(f"max_rate={null_rate:g}: {metric} is a share between 0 and 1, so no slice can be "
                             "above it; give a rate below 1, such as 0.1")
    y = np.asarray(y, dtype=np.float64)
    g = np.asarray(g, dtype=np.float64)
    d = np.asarray(draws, dtype=np.int64)
    if not (y.shape == g.shape == d.shape) or features.size not in (0, y.shape[0]):
        raise InputError("search_slices: y, g, draws and every feature need one value per sampled cluster")
    if not np.all(np.isfinite(y)) or not np.all(np.isfinite(g)) or np.any(g < 0) or np.any(d < 0):
        raise InputError("search_slices: metric values and weights must be finite, weights and draws ≥ 0")
    if not features.names:
        raise InputError("search_slices: no feature to search on (every feature was dropped or none was given)")
    k = int(d.sum())
    seed = resolve_seed(seed)
    if inference == "split":
        need = minimum_draws(min_draws, split)
        if k < need:
            raise InputError(f"too few draws to split: the sample has {k} draws and slice search needs at least "
                             f"{need} (split={split:g}: the estimation part must hold a slice and its rest of "
                             f"min_draws={min_draws} draws each). Label more clusters, or lower min_draws")
        d_search, d_est = split_draws(labels, d, split=split, seed=seed)
    else:
        d_search, d_est = d.copy(), d.copy()
    z = z_value(level)
    bounds = CLUSTER_METRICS[metric]
    bounded = bounds == (0.0, 1.0)
    nodes = grow_tree(features, y, g, d_search, max_depth=max_depth, min_share=min_share)
    root_rate = nodes[0].rate
    a_s = d_search * g
    reported: dict[int, float] = {}
    for i, nd in enumerate(nodes[1:], start=1):
        rest_w = float(a_s[~nd.mask].sum())
        rest_rate = float((a_s * y)[~nd.mask].sum() / rest_w) if rest_w > 0 else math.nan
        lift = nd.rate / rest_rate if rest_rate > 0 else (math.inf if nd.rate > root_rate else math.nan)
        above_parent = nd.parent not in reported or nd.rate > nodes[nd.parent].rate
        if nd.rate > rest_rate and above_parent and nd.share <= MAX_SHARE:
            reported[i] = lift
    # the slices to test are chosen on the search part alone (largest search lift first, at
    # most max_slices); they are listed with the fewest conditions first
    chosen = sorted(reported, key=lambda i: (-reported[i], i))[: int(max_slices)]
    chosen.sort(key=lambda i: (nodes[i].depth, -reported[i], i))
    de = d_est.astype(np.float64)

    def est(f: np.ndarray, gg: np.ndarray, zero_event: bool, bnds) -> RatioEstimate:
        return ratio_estimate(f, gg, de, ci_level=level, bounds=bnds, zero_event=zero_event,
                              undefined_reason="no estimation draw falls in it")

    overall = est(y * g, g, bounded, bounds)
    rows: list[dict] = []
    for i in chosen:
        nd = nodes[i]
        m = nd.conditions[0].mask(features)
        for c in nd.conditions[1:]:
            m = m & c.mask(features)
        pi = m.astype(np.float64)
        s_est = est(y * g * pi, g * pi, bounded, bounds)
        r_est = est(y * g * (1 - pi), g * (1 - pi), bounded, bounds)
        share = est(g * pi, g, True, (0.0, 1.0))
        draws_in, draws_out = float((de * pi).sum()), float((de * (1 - pi)).sum())
        lift, lo, hi, lift_note = _lift(s_est, r_est, de, z)
        notes = [lift_note] if lift_note else []
        p = math.nan
        if draws_in < min_draws or draws_out < min_draws:
            status = "too small"
            notes.append(f"{draws_in:g} estimation draws in the slice and {draws_out:g} in the rest; a test needs "
                         f"min_draws={min_draws} on each side: reported, not tested")
        elif not (s_est.defined and r_est.defined) or s_est.influence is None or r_est.influence is None:
            status = "undefined"
            # each side's note named as that side's (SPEC 6: a note belongs to its quantity)
            notes += [f"{side}: {e.note}" for side, e in (("slice", s_est), ("rest", r_est)) if e.note] \
                or ["undefined on the estimation part"]
        else:
            c, se = _null_test(y, g, pi, de, s_est, r_est, null_lift=null_lift, null_rate=null_rate)
            if se > 0:
                status, p = "ok", 1.0 - NormalDist().cdf(c / se)
            else:
                status = "undefined"
                notes.append("no standard error: the estimation draws show no variation")
        rows.append({"node": nd, "mask": m, "conditions": simplify(nd.conditions, features), "s": s_est, "r": r_est, "share": share, "lift": (lift, lo, hi),
                     "draws": (draws_in, draws_out), "clusters": int(((d_est > 0) & m).sum()), "status": status,
                     "p": p, "notes": notes, "search_lift": reported[i]})
    p_all = [r["p"] for r in rows]
    p_adj = holm(p_all) if inference == "split" else np.asarray(p_all, dtype=np.float64)
    slices = tuple(Slice(
        conditions=r["conditions"], description=describe(r["conditions"]), rate=r["s"], rest=r["r"],
        share=r["share"], lift=r["lift"][0], lift_ci_lower=r["lift"][1], lift_ci_upper=r["lift"][2],
        draws=r["draws"][0], rest_draws=r["draws"][1], clusters=r["clusters"], status=r["status"],
        p_value=r["p"], p_adjusted=float(pa), significant=bool(pa < alpha), search_rate=r["node"].rate,
        search_share=r["node"].share, search_lift=r["search_lift"], note="; ".join(r["notes"]),
    ) for r, pa in zip(rows, p_adj, strict=True))
    what = (f"rate(slice) ≤ {null_lift:g} × rate(rest)" if null_rate is None else f"rate(slice) ≤ {null_rate:g}")
    return SliceSearch(
        slices=slices, metric=metric, per=per, inference=inference, alpha=alpha, seed=seed, split=split,
        min_share=min_share, min_draws=min_draws, max_depth=max_depth, null_lift=null_lift, null_rate=null_rate,
        hypothesis=f"H0: {what}, one-sided, Holm-adjusted over {int(np.isfinite(p_adj).sum())} tested slices",
        overall=overall, features=features.names, k_search=int(d_search.sum()), k_estimate=int(d_est.sum()),
        search_draws=d_search, estimate_draws=d_est)
