"""What a sample of n draws cannot show: the blind spot of an estimate (SPEC 6.1; issue 28).

No interval covers errors the draws did not reach. Under the size-proportional design a
record alone in its entity is drawn with chance 1/N per draw, under the uniform design an
entity with chance 1/|E|. The *blind spot* of a sample of n draws is the largest number k
of such records (or entities) that n draws miss altogether with chance at least 1/2:

    (1 − k·q)ⁿ ≥ 1/2  ⇔  k = ⌊(1 − 2^(−1/n)) / q⌋,    q = 1/N or 1/|Ĉ|

(|Ĉ|, the release's predicted clusters, stands for the number of entities, which the
release does not give). What they could hold is read from the release's cluster sizes:

* **size-proportional** (``cluster_size``): one record of another entity placed in each of
  the k largest predicted clusters (sizes m₁ ≥ … ≥ m_k) adds 2·Σ m_j false ordered pairs to
  the PP = Σ m(m − 1) predicted pairs, so pairwise precision P becomes P·PP/(PP + 2·Σ m_j);
  a sample without those records sees only the half of those pairs that start in the
  clusters' other records.
* **uniform**: the entities of the k largest predicted clusters, which hold a share Y of the
  predicted pairs; pairwise precision rests on the other 1 − Y, and would be lower by up to
  P·Y if those clusters' pairs were false.

The shift of pairwise F follows from that of precision with recall unchanged. A blind spot
whose shift is larger than the interval reaches below the estimate is a warning: the interval cannot be
relied on to cover errors of that kind (the heavy-tailed floor of benchmarks/README.md), and
the remedy is more draws or the expected-errors design (SPEC 12.3). Other designs
(a weights column, expected errors) draw with chances this module does not know.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from er_expectations.stats.estimator import RatioEstimate
from er_expectations.stats.metrics import estimate_metrics
from er_expectations.stats.sample import BenchmarkSample
from er_expectations.stats.subgroups import GroupResult, Membership

__all__ = ["BLIND_SPOT_METRICS", "SIZE_WEIGHTED", "BlindSpot", "SkewedSizes", "blind_spot", "blind_spot_records",
           "change_blind_spot", "group_blind_spot", "group_blind_spots", "sample_blind_spots", "sample_skewed_sizes", "skewed_sizes"]

#: The metrics whose blind spot is computed (the two the coverage study found below level).
BLIND_SPOT_METRICS = ("pairwise_precision", "pairwise_f")

#: The chance with which n draws miss the whole blind spot (at least).
MISS_CHANCE = 0.5


@dataclass(frozen=True, slots=True)
class BlindSpot:
    """The blind spot of one estimate (SPEC 6.1).

    ``records``: k, the records (size-proportional) or entities (uniform) that ``draws``
    draws miss altogether with chance ``miss_chance`` ≥ 1/2; ``largest`` and ``smallest``: the
    sizes of the largest and the k-th largest predicted cluster; ``pair_share``: the share of
    the predicted pairs the blind spot would make (size-proportional) or holds (uniform);
    ``estimate`` and ``shifted``: the metric as estimated and with the blind spot's errors;
    ``below``: how far the interval reaches below the estimate (NaN without an interval);
    ``group``: the estimate is a group's (SPEC 8); ``pairs``: the predicted pairs the shift is
    read against (the release's, or the group's estimated).
    """

    metric: str
    design: str
    draws: int
    n_records: int
    n_clusters: int
    records: int
    largest: int
    smallest: int
    pair_share: float
    miss_chance: float
    estimate: float
    shifted: float
    below: float
    group: bool = False
    pairs: float = math.nan

    @property
    def change(self) -> float:
        """How much lower the metric would be (≥ 0)."""
        return self.estimate - self.shifted

    @property
    def warning(self) -> bool:
        """The shift is larger than the interval reaches below the estimate."""
        return not math.isnan(self.below) and self.change > self.below

    def _sizes(self) -> str:
        return f"{self.largest:,}" if self.largest == self.smallest else f"{self.largest:,} to {self.smallest:,}"

    def text(self, label: str) -> str:
        """One plain sentence for a page or a note."""
        chance = f"{self.miss_chance:.2f}"
        if self.group:
            what = (f"one record of an entity of this group in each of the {self.records:,} largest predicted "
                    f"clusters ({self._sizes()} records) would lower its {label} by at least {self.change:.3g} "
                    f"(from {self.estimate:.3f} to {self.shifted:.3f}); {self.draws:,} size-proportional draws "
                    f"hold none of them with chance {chance}")
        elif self.design == "cluster_size":
            what = (f"one record of another entity in each of the {self.records:,} largest predicted clusters "
                    f"({self._sizes()} records) would lower the {label} by {self.change:.3g} "
                    f"(from {self.estimate:.3f} to {self.shifted:.3f}); {self.draws:,} size-proportional draws "
                    f"hold none of them with chance {chance}, and a sample without them sees only the half of their "
                    "false pairs that start in those clusters' other records")
        else:
            what = (f"the {self.records:,} largest predicted clusters ({self._sizes()} records) hold "
                    f"{100 * self.pair_share:.1f} % of the predicted pairs, and {self.draws:,} uniform draws hold "
                    f"none of their entities with chance {chance}: were their pairs false, the {label} would be "
                    f"lower by up to {self.change:.3g} (from {self.estimate:.3f} to {self.shifted:.3f})")
        if not self.warning:
            return f"Blind spot of the sample: {what}."
        return (f"Warning, blind spot larger than the interval: {what}, more than the interval reaches below "
                f"the estimate ({self.below:.3g}). The interval cannot be relied on to cover errors of this kind; "
                "draw by expected errors (sample --design expected_errors, SPEC 12.3) or draw more.")

    def as_dict(self) -> dict[str, object]:
        return {"metric": self.metric, "design": self.design, "draws": self.draws, "records": self.records,
                "largest": self.largest, "smallest": self.smallest, "pair_share": self.pair_share, "miss_chance": self.miss_chance,
                "estimate": self.estimate, "shifted": self.shifted, "change": self.change,
                "below": None if math.isnan(self.below) else self.below,
                "warning": self.warning, "group": self.group, "pairs": self.pairs}


def blind_spot_records(draws: int, reach: float) -> int:
    """k = ⌊(1 − 2^(−1/n)) / q⌋: the most units of per-draw chance ``reach`` that ``draws``
    draws miss altogether with chance ≥ 1/2 (SPEC 6.1)."""
    if draws < 1 or not 0 < reach <= 1:
        raise ValueError(f"draws={draws} and reach={reach}: need draws ≥ 1 and 0 < reach ≤ 1")
    bound = -math.expm1(math.log(MISS_CHANCE) / draws) / reach
    k = math.floor(bound * (1 + 1e-12))
    while k > 0 and (1 - k * reach) ** draws < MISS_CHANCE:  # rounding at the boundary
        k -= 1
    return k


def _largest(sizes: np.ndarray, counts: np.ndarray, k: int) -> np.ndarray:
    """The k largest cluster sizes, largest first, from an ascending histogram (without
    expanding the whole histogram: a release may hold 10⁸ clusters)."""
    desc_sizes, desc_counts = sizes[::-1], counts[::-1]
    upto = int(np.searchsorted(np.cumsum(desc_counts), k)) + 1
    take = desc_counts[:upto].copy()
    take[-1] -= int(take.sum()) - k
    return np.repeat(desc_sizes[:upto], take).astype(np.float64)


def _f(precision: float, recall: float, beta: float) -> float:
    b2 = beta * beta
    den = b2 * precision + recall
    return (1 + b2) * precision * recall / den if den > 0 else math.nan


def blind_spot(
    sizes: np.ndarray,
    counts: np.ndarray,
    *,
    design: str,
    draws: int,
    metric: str,
    estimate: float,
    precision: float,
    recall: float | None = None,
    beta: float = 1.0,
    below: float = math.nan,
    group_pairs: float | None = None,
) -> BlindSpot | None:
    """The blind spot of an estimate of ``metric`` from ``draws`` draws (SPEC 6.1).

    Parameters
    ----------
    sizes, counts : numpy.ndarray
        The release's predicted cluster size histogram (distinct sizes, clusters of each; SPEC 3).
    design : str
        ``"cluster_size"`` or ``"uniform"`` (SPEC 2.1); other designs have no blind spot here.
    draws : int
        n, the draws of the sample (Σ draws).
    metric : str
        ``"pairwise_precision"`` or ``"pairwise_f"`` (:data:`BLIND_SPOT_METRICS`).
    estimate : float
        The metric's estimate.
    precision : float
        The estimated pairwise precision (for ``pairwise_precision``, ``estimate``).
    recall : float, optional
        The estimated pairwise recall (needed for ``pairwise_f``).
    beta : float
        β of the F score.
    below : float
        How far the metric's interval reaches below the estimate (NaN: no interval).
    group_pairs : float, optional
        For a group's estimate (SPEC 8; size-proportional design only): the estimated predicted
        pairs that start in the group's records. The blind spot's records are then the group's,
        and only their side of the false pairs (Σ m_j) is counted: the clusters' other records
        may belong to any group, so the drop is the least such records would make.

    Returns
    -------
    BlindSpot or None
        ``None`` when the design is not one of the two, the metric is not covered, the
        release has no predicted pair, or n draws reach every unit with chance above 1/2.
    """
    if metric not in BLIND_SPOT_METRICS or design not in ("cluster_size", "uniform") or draws < 1:
        return None
    if not math.isfinite(estimate) or not math.isfinite(precision) or (metric == "pairwise_f" and (recall is None or not math.isfinite(recall))):
        return None
    sizes = np.asarray(sizes, dtype=np.int64)
    counts = np.asarray(counts, dtype=np.int64)
    keep = counts > 0
    sizes, counts = sizes[keep], counts[keep]
    if sizes.size == 0:
        return None
    n_records = int((sizes * counts).sum())
    n_clusters = int(counts.sum())
    pairs = float((counts * sizes * (sizes - 1)).sum())
    if pairs <= 0:
        return None
    reach = 1.0 / (n_records if design == "cluster_size" else n_clusters)
    k = min(blind_spot_records(draws, reach), n_clusters, n_records - 1)
    if k < 1:
        return None
    top = _largest(sizes, counts, k)
    largest, smallest = int(top[0]), int(top[-1])
    if group_pairs is not None:  # a group's records: the pairs that start at them only
        if design != "cluster_size" or not group_pairs > 0:
            return None
        added = float(top.sum())
        share = added / (group_pairs + added)
        shifted_p = precision * group_pairs / (group_pairs + added)
    elif design == "cluster_size":  # one record of another entity in each: 2m more false ordered pairs
        added = 2.0 * float(top.sum())
        share = added / (pairs + added)
        shifted_p = precision * pairs / (pairs + added)  # TP/(PP + added) with P = TP/PP
    else:  # the k largest clusters' entities are not drawn; were their pairs false
        share = float((top * (top - 1.0)).sum()) / pairs
        shifted_p = precision * (1.0 - share)
    miss = (1.0 - k * reach) ** draws
    if metric == "pairwise_precision":
        drop = precision - shifted_p
    else:  # F moves with precision, recall unchanged
        drop = _f(precision, recall, beta) - _f(shifted_p, recall, beta)  # type: ignore[arg-type]
    if not math.isfinite(drop):
        return None
    return BlindSpot(metric=metric, design=design, draws=int(draws), n_records=n_records, n_clusters=n_clusters,
                     records=int(k), largest=largest, smallest=smallest, pair_share=float(share), miss_chance=float(miss),
                     estimate=float(estimate), shifted=float(estimate - drop), below=float(below),
                     group=group_pairs is not None, pairs=float(pairs if group_pairs is None else group_pairs))


def sample_blind_spots(sample: BenchmarkSample, results: Mapping[str, RatioEstimate], *, beta: float = 1.0,
                       bias_adjust: bool = True) -> dict[str, BlindSpot]:
    """The blind spot of each estimate of ``results`` that has one (SPEC 6.1).

    Pairwise F needs the precision and recall point estimates; when ``results`` lacks them
    they are computed here (linearised, which gives the same point estimates).
    """
    wanted = [m for m in BLIND_SPOT_METRICS if m in results and results[m].defined]
    if not wanted or sample.size_histogram is None or sample.design not in ("cluster_size", "uniform"):
        return {}
    parts = {m: results[m] for m in ("pairwise_precision", "pairwise_recall") if m in results}
    missing = [m for m in ("pairwise_precision", "pairwise_recall") if m not in parts]
    if missing:
        parts.update(estimate_metrics(sample, missing, beta=beta, bias_adjust=bias_adjust))
    sizes, counts = sample.size_histogram
    out = {}
    for metric in wanted:
        est = results[metric]
        found = blind_spot(sizes, counts, design=sample.design, draws=sample.k, metric=metric,
                           estimate=est.estimate, precision=parts["pairwise_precision"].estimate,
                           recall=parts["pairwise_recall"].estimate, beta=beta,
                           below=est.estimate - est.ci_lower if est.has_interval else math.nan)
        if found is not None:
            out[metric] = found
    return out


#: Metrics whose per-entity terms grow with the entity: by its pairs, or by its records
#: (SPEC 6.1). Under the uniform design their estimates are means of skewed terms.
SIZE_WEIGHTED: dict[str, str] = {
    "pairwise_precision": "pairs", "pairwise_recall": "pairs", "pairwise_f": "pairs",
    "average_cluster_size": "records", "matching_rate": "records", "cluster_precision": "records",
    "cluster_f": "records", "homogeneity": "records",
}


@dataclass(frozen=True, slots=True)
class SkewedSizes:
    """Cochran's rule for an estimate from entities drawn uniformly (SPEC 6.1).

    ``skewness``: G₁ of the release's predicted clusters' ``weighted_by`` (records m or ordered
    pairs m(m − 1)), standing for the entities'; ``needed``: 28 + 25·G₁² draws (Sugden, Smith
    and Jones 2000), the sample size from which a normal-theory interval of a mean of such
    terms holds its level; ``draws``: the sample's.
    """

    metric: str
    weighted_by: str
    skewness: float
    needed: int
    draws: int

    @property
    def warning(self) -> bool:
        return self.draws < self.needed

    def text(self, label: str) -> str:
        return (f"Warning, skewed sizes under uniform draws: the release's predicted clusters' {self.weighted_by} "
                f"have skewness {self.skewness:.1f}, and Cochran's rule (n ≥ 28 + 25·G₁², Sugden et al. 2000) asks "
                f"for {self.needed:,} draws before an interval of the {label}, an average over entities weighted by "
                f"their {self.weighted_by}, holds its level; this sample has {self.draws:,}. The interval may cover "
                "less than its level; draw records (size-proportional) or by expected errors (SPEC 12.3).")

    def as_dict(self) -> dict[str, object]:
        return {"metric": self.metric, "weighted_by": self.weighted_by, "skewness": self.skewness,
                "needed": self.needed, "draws": self.draws, "warning": self.warning}


def skewed_sizes(sizes: np.ndarray, counts: np.ndarray, *, design: str, draws: int,
                 metric: str) -> SkewedSizes | None:
    """Cochran's rule on the release's predicted cluster sizes for one estimate (SPEC 6.1).

    Parameters
    ----------
    sizes, counts : numpy.ndarray
        The release's predicted cluster size histogram (SPEC 3).
    design : str
        Only ``"uniform"`` draws entities with equal chances; other designs give ``None``.
    draws : int
        n, the draws of the sample.
    metric : str
        A metric of :data:`SIZE_WEIGHTED` (others give ``None``).

    Returns
    -------
    SkewedSizes or None
        ``None`` as above, or when the sizes do not vary.
    """
    weighted_by = SIZE_WEIGHTED.get(metric)
    if design != "uniform" or weighted_by is None:
        return None
    sizes = np.asarray(sizes, dtype=np.float64)
    counts = np.asarray(counts, dtype=np.float64)
    if counts.sum() <= 0:
        return None
    v = sizes * (sizes - 1.0) if weighted_by == "pairs" else sizes
    p = counts / counts.sum()
    mean = float((p * v).sum())
    var = float((p * (v - mean) ** 2).sum())
    if var <= 0 or mean <= 0 or var <= 1e-12 * mean * mean:
        return None
    g1 = float((p * (v - mean) ** 3).sum()) / var ** 1.5
    needed = math.ceil(28 + 25 * g1 * g1)
    return SkewedSizes(metric=metric, weighted_by=weighted_by, skewness=g1, needed=needed, draws=int(draws))


def sample_skewed_sizes(sample: BenchmarkSample, metrics: list[str] | tuple[str, ...]) -> dict[str, SkewedSizes]:
    """:func:`skewed_sizes` of each metric for ``sample`` (SPEC 6.1), those that warn only."""
    if sample.size_histogram is None or sample.design != "uniform":
        return {}
    sizes, counts = sample.size_histogram
    out = {}
    for metric in metrics:
        found = skewed_sizes(sizes, counts, design=sample.design, draws=sample.k, metric=metric)
        if found is not None and found.warning:
            out[metric] = found
    return out


def group_blind_spot(sample: BenchmarkSample, domain: np.ndarray, estimate: RatioEstimate, *, metric: str,
                     beta: float = 1.0, bias_adjust: bool = True) -> BlindSpot | None:
    """The blind spot of one group's estimate (SPEC 6.1, 8), size-proportional design only.

    ``domain`` holds π_G(c) per sampled cluster. The group's predicted pairs are estimated by
    Horvitz–Thompson, PP̂_G = (N/n)·Σ_i d_i π_G(c_i) pp(c_i)/|c_i|, pp(c) the ordered predicted
    pairs that start in c's records; its precision and recall are the domain estimates.
    """
    if (metric not in BLIND_SPOT_METRICS or sample.design != "cluster_size" or sample.size_histogram is None
            or not estimate.defined):
        return None
    domain = np.asarray(domain, dtype=np.float64)
    k = len(sample.labels)
    pp = np.bincount(sample.piece_cluster, weights=sample.piece_n * (sample.piece_m - 1.0), minlength=k)
    n = sample.k
    group_pairs = sample.n_records / n * float((sample.draws * domain * pp / sample.size).sum())
    parts = estimate_metrics(sample, ["pairwise_precision", "pairwise_recall"], beta=beta, bias_adjust=bias_adjust,
                             domain=domain)
    sizes, counts = sample.size_histogram
    return blind_spot(sizes, counts, design=sample.design, draws=n, metric=metric, estimate=estimate.estimate,
                      precision=parts["pairwise_precision"].estimate, recall=parts["pairwise_recall"].estimate,
                      beta=beta, below=estimate.estimate - estimate.ci_lower if estimate.has_interval else math.nan,
                      group_pairs=group_pairs)


def group_blind_spots(sample: BenchmarkSample, membership: Membership, results: list[GroupResult], *,
                      beta: float = 1.0, bias_adjust: bool = True) -> dict[tuple[str, str], BlindSpot]:
    """:func:`group_blind_spot` of every (group, metric) row of ``results`` that has one."""
    out = {}
    for row in results:
        if row.metric not in BLIND_SPOT_METRICS or row.group not in membership.groups:
            continue
        domain = membership.pi[:, membership.groups.index(row.group)]
        found = group_blind_spot(sample, domain, row.estimate, metric=row.metric, beta=beta, bias_adjust=bias_adjust)
        if found is not None:
            out[(row.group, row.metric)] = found
    return out


def change_blind_spot(current: BenchmarkSample, change: float, lower: float, *, metric: str,
                      beta: float = 1.0) -> BlindSpot | None:
    """The blind spot of the change θ̂_this − θ̂_baseline of pairwise precision or F (SPEC 6.1, 10):
    records of other entities in this release's largest predicted clusters, which its draws
    miss with chance ≥ 1/2, would lower this release's metric, and the change with it, by the
    drop of :func:`blind_spot`. ``lower`` is the change's lower limit (NaN: no interval)."""
    if metric not in BLIND_SPOT_METRICS or current.size_histogram is None or not math.isfinite(change):
        return None
    parts = estimate_metrics(current, ["pairwise_precision", "pairwise_recall"], beta=beta)
    sizes, counts = current.size_histogram
    return blind_spot(sizes, counts, design=current.design, draws=current.k, metric=metric, estimate=change,
                      precision=parts["pairwise_precision"].estimate, recall=parts["pairwise_recall"].estimate,
                      beta=beta, below=change - lower if math.isfinite(lower) else math.nan)
