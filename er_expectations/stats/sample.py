"""The per-sampled-cluster table (SPEC 4) built from contingency counts.

The engines aggregate the release into a :class:`BenchmarkSample`: one row per benchmark
cluster c restricted to the release (its size s = |c ∩ R_t|, weight and draw count) plus
one row per (c, ĉ) intersection with n = |c ∩ ĉ| and m = |ĉ|. Everything below is exact
arithmetic on those few thousand rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from er_expectations.core.errors import InputError

__all__ = ["BenchmarkSample", "ClusterErrors", "cluster_errors"]


@dataclass(frozen=True, slots=True)
class BenchmarkSample:
    """A benchmark restricted to one release, aggregated (SPEC 2.1 and 4).

    Cluster arrays (length K, one per benchmark cluster present in the release):
    ``labels`` (true cluster ids), ``size`` (s), ``weight`` (w), ``draws`` and optional
    name flags ``homonym`` (a name of c occurs on a population record outside c),
    ``name_variation`` (≥ 2 distinct names) and ``has_name`` (≥ 1 non-null name).
    Contingency arrays (length J): ``piece_cluster`` (index into the cluster arrays),
    ``piece_n`` = |c ∩ ĉ|, ``piece_m`` = |ĉ|, ``piece_label`` (the ĉ id).
    ``n_records`` and ``n_clusters`` are N and |Ĉ| of the release population;
    ``size_histogram`` its predicted cluster sizes (distinct sizes, clusters of each; SPEC 3),
    from which the blind spot of an estimate is read (SPEC 6.1; ``None``: not given).

    The benchmark's life (SPEC 14): ``known_column`` names the column that marks the records
    known when the benchmark was labelled (``None``: the benchmark does not say, and every
    record of the release is evaluated). With it, the release is evaluated on its known
    records only: ``records_added`` records of the release are unknown to the benchmark (SPEC 14) and are
    set aside, ``records_added_in_sampled`` of them in a predicted cluster that holds a
    benchmark record; ``benchmark_version`` is the benchmark's latest version.
    """

    labels: np.ndarray
    size: np.ndarray
    weight: np.ndarray
    draws: np.ndarray
    piece_cluster: np.ndarray
    piece_n: np.ndarray
    piece_m: np.ndarray
    piece_label: np.ndarray
    n_records: int
    n_clusters: int
    design: str
    homonym: np.ndarray | None = None
    name_variation: np.ndarray | None = None
    has_name: np.ndarray | None = None
    records_set_aside: int = 0
    clusters_set_aside: int = 0
    known_column: str | None = None
    records_added: int = 0
    records_added_in_sampled: int = 0
    benchmark_version: int | None = None
    size_histogram: tuple[np.ndarray, np.ndarray] | None = None

    def __post_init__(self) -> None:
        k = self.labels.shape[0]
        if k == 0:
            raise InputError("the benchmark is empty after restriction to the release")
        for name in ("size", "weight", "draws"):
            if getattr(self, name).shape[0] != k:
                raise InputError(f"BenchmarkSample.{name} must have one value per cluster")
        if not np.all(np.isfinite(self.weight)) or np.any(self.weight <= 0):
            raise InputError("weights must be finite and > 0")
        sums = np.bincount(self.piece_cluster, weights=self.piece_n, minlength=k)
        if not np.array_equal(sums.astype(np.int64), self.size.astype(np.int64)):
            raise InputError("contingency counts do not add up to the cluster sizes")

    @property
    def k(self) -> int:
        """Number of draws used (Σ draws)."""
        return int(self.draws.sum())


@dataclass(frozen=True, slots=True)
class ClusterErrors:
    """Cluster-level error metrics E(c) = mean of E(r) over r ∈ c (SPEC 4), one per cluster.

    ``hl`` is the cluster mean of log(|ĉ(r) ∩ c| / |ĉ(r)|) used by homogeneity (SPEC 5,
    erratum 4).
    """

    ei: np.ndarray
    sde: np.ndarray
    oce: np.ndarray
    uce: np.ndarray
    roce: np.ndarray
    ruce: np.ndarray
    hl: np.ndarray


def cluster_errors(sample: BenchmarkSample) -> ClusterErrors:
    """Compute EI, SDE, OCE, UCE, ROCE, RUCE and the homogeneity term for every sampled cluster.

    For a piece j of c (records of c predicted into ĉ_j, n_j of them, |ĉ_j| = m_j):
    SDE(r) = m_j − s, OCE(r) = m_j − n_j, UCE(r) = s − n_j, ROCE(r) = (m_j − n_j)/m_j,
    RUCE(r) = (s − n_j)/s, Hl(r) = log(n_j/m_j); EI(c) = 0 iff c is one piece with m = s.
    """
    k = sample.labels.shape[0]
    idx = sample.piece_cluster
    n = sample.piece_n.astype(np.float64)
    m = sample.piece_m.astype(np.float64)
    s = sample.size.astype(np.float64)
    s_p = s[idx]

    def cmean(values: np.ndarray) -> np.ndarray:
        return np.bincount(idx, weights=n * values, minlength=k) / s

    pieces = np.bincount(idx, minlength=k)
    exact = (pieces == 1) & (np.bincount(idx, weights=m, minlength=k) == s)
    return ClusterErrors(
        ei=np.where(exact, 0.0, 1.0),
        sde=cmean(m - s_p),
        oce=cmean(m - n),
        uce=cmean(s_p - n),
        roce=cmean((m - n) / m),
        ruce=cmean((s_p - n) / s_p),
        hl=cmean(np.log(n / m)),
    )
