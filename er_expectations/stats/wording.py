"""Human labels of the statistics and metrics (SPEC 3, 5, 7): one wording for every report."""

from __future__ import annotations

from er_expectations.core.text import fmt_q
from er_expectations.stats.metrics import METRICS

__all__ = ["STATISTIC_LABELS", "statistic_label"]

STATISTIC_LABELS: dict[str, str] = {
    "average_cluster_size": "average cluster size",
    "matching_rate": "matching rate",
    "homonymy_rate": "homonymy rate",
    "name_variation_rate": "name variation rate",
    "hill_number": "Hill number",
    "n_records": "number of records",
    "n_clusters": "number of clusters",
}



def statistic_label(stat: str, *, q: float | None = None) -> str:
    """Human label of a statistic id, e.g. 'Hill number of order 2'."""
    if stat == "hill_number" or stat.startswith("hill_number_"):
        if q is None and stat.startswith("hill_number_"):
            q = float(stat.rsplit("_", 1)[1])
        return f"Hill number of order {fmt_q(q)}"
    if stat in STATISTIC_LABELS:
        return STATISTIC_LABELS[stat]
    return METRICS[stat].label if stat in METRICS else stat.replace("_", " ")
