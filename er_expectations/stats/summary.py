"""Summary statistics of a clustering (SPEC section 3).

Everything here works on small tables: the cluster-size distribution (distinct sizes and
how many clusters have each size) and a handful of name counts. The engines compute
those tables from the full data; no function here ever sees a record.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from er_expectations.core.errors import InputError

__all__ = [
    "ClusteringTable",
    "hill_label",
    "hill_number",
    "parse_hill_orders",
    "summary_statistics",
    "SUMMARY_STATISTICS",
]

#: Statistic ids of the predicted clustering that ``summary_statistics`` can return.
SUMMARY_STATISTICS: tuple[str, ...] = (
    "n_records",
    "n_clusters",
    "average_cluster_size",
    "matching_rate",
    "homonymy_rate",
    "name_variation_rate",
)


@dataclass(frozen=True, slots=True)
class ClusteringTable:
    """The cluster-size distribution of one clustering plus its name counts.

    ``sizes`` holds the distinct cluster sizes (ascending) and ``counts`` the number of
    clusters of each size. The three name counts are ``None`` when no name column was
    given. A cluster counts in the name statistics only if at least one of its records
    has a non-null name (``n_named_clusters``), SPEC 3.
    """

    sizes: np.ndarray
    counts: np.ndarray
    n_named_clusters: int | None = None
    n_homonymous_clusters: int | None = None
    n_varied_clusters: int | None = None

    @property
    def n_clusters(self) -> int:
        return int(self.counts.sum())

    @property
    def n_records(self) -> int:
        return int((self.sizes * self.counts).sum())


def hill_label(q: float) -> str:
    """Index label of the Hill number of order ``q``: 0 → 'hill_number_0', inf → 'hill_number_inf'."""
    if math.isinf(q):
        return "hill_number_inf"
    if float(q).is_integer():
        return f"hill_number_{int(q)}"
    return f"hill_number_{q:g}"


def parse_hill_orders(orders: Sequence[float] | float, *, parameter: str = "hill_orders") -> tuple[float, ...]:
    """Validate Hill orders: real numbers q ≥ 0 (``math.inf`` or the string 'inf' allowed)."""
    if isinstance(orders, (int, float, str)) and not isinstance(orders, bool):
        orders = (orders,)
    if isinstance(orders, bool) or not isinstance(orders, Iterable) or isinstance(orders, (bytes, dict)):
        raise InputError(f"{parameter}={orders!r}: give Hill orders q >= 0 as a list, e.g. (0, 1, 2, 'inf')")
    orders = list(orders)  # an empty list is allowed: no Hill numbers
    out: list[float] = []
    for q in orders:
        if isinstance(q, bool):
            raise InputError(f"{parameter}: Hill order {q!r} is a boolean; give a number q >= 0 such as 0, 1, 2 or 'inf'")
        if isinstance(q, str):
            if q.strip().lower() in {"inf", ".inf", "infinity", "+inf"}:
                q = math.inf
            else:
                try:
                    q = float(q)
                except ValueError:
                    raise InputError(f"{parameter}: Hill order {q!r} is not a number; give q >= 0 such as 0, 1, 2 or 'inf'") from None
        try:
            qf = float(q)
        except (TypeError, ValueError):
            raise InputError(f"{parameter}: Hill order {q!r} is not a number; give q >= 0 such as 0, 1, 2 or 'inf'") from None
        if math.isnan(qf) or qf < 0:
            raise InputError(f"{parameter}: Hill order q={q!r} is invalid; Hill numbers are defined for q >= 0 (SPEC 3)")
        out.append(qf)
    return tuple(out)


def hill_number(table: ClusteringTable | np.ndarray, q: float) -> float:
    """Hill number of order ``q`` of the cluster-size distribution (SPEC 3).

    With π_i the share of clusters of size i: H_q = (Σ π_i^q)^(1/(1−q)); the limits are
    H_0 = number of distinct sizes, H_1 = exp(−Σ π_i log π_i), H_∞ = 1 / max π_i.
    ``table`` is a :class:`ClusteringTable` or an array of clusters-per-size counts.
    """
    (q,) = parse_hill_orders((q,), parameter="q")
    counts = table.counts if isinstance(table, ClusteringTable) else np.asarray(table)
    counts = counts[counts > 0].astype(np.float64)
    if counts.size == 0:
        raise InputError("Hill numbers need at least one cluster; the clustering is empty")
    pi = counts / counts.sum()
    if q == 0:
        return float(pi.size)
    if math.isinf(q):
        return float(1.0 / pi.max())
    log_pi = np.log(pi)
    if q == 1:
        return float(math.exp(-(pi * log_pi).sum()))
    if abs(q - 1.0) < 1e-3:
        # near q = 1: log Σ π^q = log1p(Σ π (π^(q−1) − 1)) keeps full precision
        log_sum = math.log1p(float((pi * np.expm1((q - 1.0) * log_pi)).sum()))
    else:
        # elsewhere factor out the largest share so that π^q cannot underflow for large q
        log_max = float(log_pi.max())
        log_sum = q * log_max + math.log(float(np.exp(q * (log_pi - log_max)).sum()))
    return float(math.exp(log_sum / (1.0 - q)))


def summary_statistics(table: ClusteringTable, *, hill_orders: Sequence[float] = (0, 1, 2, math.inf)) -> dict[str, float]:
    """Summary statistics of a clustering from its size table (SPEC 3).

    Returns n_records, n_clusters, average_cluster_size, matching_rate, one
    ``hill_number_<q>`` per order and, when the table has name counts, homonymy_rate and
    name_variation_rate (over the clusters that have at least one named record).
    """
    orders = parse_hill_orders(hill_orders)
    n_clusters = table.n_clusters
    n_records = table.n_records
    if n_clusters == 0:
        raise InputError("the clustering is empty: no record has a non-null cluster id")
    matched = int((table.sizes[table.sizes >= 2] * table.counts[table.sizes >= 2]).sum())
    out: dict[str, float] = {
        "n_records": n_records,
        "n_clusters": n_clusters,
        "average_cluster_size": n_records / n_clusters,
        "matching_rate": matched / n_records,
    }
    for q in orders:
        out[hill_label(q)] = hill_number(table, q)
    if table.n_named_clusters is not None:
        named = table.n_named_clusters
        if named == 0:
            raise InputError("the name column is null on every record of the release; name statistics are undefined")
        out["homonymy_rate"] = (table.n_homonymous_clusters or 0) / named
        out["name_variation_rate"] = (table.n_varied_clusters or 0) / named
    return out
