"""Exact performance metrics from a full contingency table (SPEC 5, last paragraph).

Used when the reference covers every record of the release (simulations, synthetic
benchmarks) and for the agreement of two releases (SPEC 10). Computed by pair counting and
entropies, independently of the estimator, in two steps: the cells reduce to a few
sufficient sums (:class:`ContingencySums`, :func:`contingency_sums`), which an engine may
also compute where the data lives, and the metrics follow from the sums alone
(:func:`exact_metrics_from_sums`).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from er_expectations.core.errors import UndefinedMetricWarning
from er_expectations.stats.metrics import PERFORMANCE_METRICS, check_beta

__all__ = ["ContingencySums", "contingency_sums", "exact_metrics_from_contingency", "exact_metrics_from_sums"]


def _div(num: float, den: float, metric: str, why: str, notes: dict[str, str]) -> float:
    if den == 0:
        notes[metric] = f"undefined: {why}"
        warnings.warn(f"{metric} is undefined: {why}", UndefinedMetricWarning, stacklevel=4)
        return math.nan
    return num / den


def _fbeta(p: float, r: float, b2: float) -> float:
    if math.isnan(p) or math.isnan(r):
        return math.nan
    if p == 0 or r == 0:
        return 0.0
    return (1 + b2) * p * r / (b2 * p + r)


@dataclass(frozen=True, slots=True)
class ContingencySums:
    """The sufficient statistics of the exact metrics (SPEC 5) of a contingency table.

    With n the count of a cell (true cluster c, predicted cluster ĉ), s = |c| and m = |ĉ|
    on the records of the table and N = Σ n:

    * ``records`` N, ``true_clusters`` and ``pred_clusters`` (clusters with a record);
    * ``cell_pairs`` Σ_cells n(n−1)/2, ``pred_pairs`` Σ_ĉ m(m−1)/2, ``true_pairs``
      Σ_c s(s−1)/2 (unordered pairs of records);
    * ``exact_clusters``: cells that are a whole true cluster and a whole predicted one;
    * ``bcubed_precision_sum`` Σ_c (Σ_cells of c n·n/m)/s and ``bcubed_recall_sum``
      Σ_c (Σ_cells of c n·n/s)/s (b-cubed P and R are their means over the true clusters);
    * ``true_entropy`` H(C) = −Σ_c (s/N)·ln(s/N) and ``conditional_entropy``
      H(C|Ĉ) = −Σ_cells (n/N)·ln(n/m) (sums of terms of one sign: no cancellation).

    Counts are exact integers; the other sums are float64 (as the metrics).
    """

    records: int
    true_clusters: int
    pred_clusters: int
    cell_pairs: float
    pred_pairs: float
    true_pairs: float
    exact_clusters: int
    bcubed_precision_sum: float
    bcubed_recall_sum: float
    true_entropy: float
    conditional_entropy: float

    @classmethod
    def empty(cls) -> ContingencySums:
        """The sums of a table without records."""
        return cls(0, 0, 0, 0.0, 0.0, 0.0, 0, 0.0, 0.0, 0.0, 0.0)


def _pairs(x: np.ndarray) -> float:
    return float((x * (x - 1.0) / 2.0).sum())


def contingency_sums(true_idx: np.ndarray, pred_idx: np.ndarray, n: np.ndarray) -> ContingencySums:
    """The :class:`ContingencySums` of contingency rows (true cluster index, predicted cluster
    index, count): one row per non-empty cell, indices 0 … k − 1 (SPEC 5)."""
    true_idx = np.asarray(true_idx, dtype=np.int64)
    pred_idx = np.asarray(pred_idx, dtype=np.int64)
    n = np.asarray(n, dtype=np.float64)
    if n.size == 0:
        return ContingencySums.empty()
    n_true = int(true_idx.max()) + 1
    n_pred = int(pred_idx.max()) + 1
    s = np.bincount(true_idx, weights=n, minlength=n_true)
    m = np.bincount(pred_idx, weights=n, minlength=n_pred)
    big_n = float(n.sum())
    pieces_of_true = np.bincount(true_idx, minlength=n_true)
    pieces_of_pred = np.bincount(pred_idx, minlength=n_pred)
    exact_rows = (pieces_of_true[true_idx] == 1) & (pieces_of_pred[pred_idx] == 1)
    per_true_p = np.bincount(true_idx, weights=n * (n / m[pred_idx]), minlength=n_true) / s
    per_true_r = np.bincount(true_idx, weights=n * (n / s[true_idx]), minlength=n_true) / s
    return ContingencySums(
        records=int(round(big_n)), true_clusters=n_true, pred_clusters=n_pred,
        cell_pairs=_pairs(n), pred_pairs=_pairs(m), true_pairs=_pairs(s), exact_clusters=int(exact_rows.sum()),
        bcubed_precision_sum=float(per_true_p.sum()), bcubed_recall_sum=float(per_true_r.sum()),
        true_entropy=-float((s / big_n * np.log(s / big_n)).sum()),
        conditional_entropy=-float((n / big_n * np.log(n / m[pred_idx])).sum()))


def exact_metrics_from_sums(sums: ContingencySums, *, beta: float = 1.0) -> tuple[dict[str, float], dict[str, str]]:
    """Exact metrics (SPEC 5) from the sufficient sums of a non-empty contingency table.

    Returns (values by metric id, notes for undefined metrics). Pairwise metrics count
    unordered pairs; cluster metrics count exactly-right clusters; b-cubed P/R average over
    true clusters as the paper defines them; homogeneity is 1 − H(C|Ĉ)/H(C) (1 when H(C)=0,
    that is when there is one true cluster).
    """
    b2 = check_beta(beta) ** 2
    if sums.records <= 0:
        raise ValueError("exact metrics need a contingency table with at least one record")
    notes: dict[str, str] = {}
    out: dict[str, float] = {}
    tp, pp, tt = sums.cell_pairs, sums.pred_pairs, sums.true_pairs
    out["pairwise_precision"] = _div(tp, pp, "pairwise_precision", "the prediction has no pair of records", notes)
    out["pairwise_recall"] = _div(tp, tt, "pairwise_recall", "the reference has no pair of records", notes)
    out["pairwise_f"] = _div((1 + b2) * tp, pp + b2 * tt, "pairwise_f", "neither clustering has a pair", notes)

    correct = float(sums.exact_clusters)
    n_true, n_pred = sums.true_clusters, sums.pred_clusters
    out["cluster_precision"] = correct / n_pred
    out["cluster_recall"] = correct / n_true
    out["cluster_f"] = (1 + b2) * correct / (b2 * n_true + n_pred)

    out["b_cubed_precision"] = sums.bcubed_precision_sum / n_true
    out["b_cubed_recall"] = sums.bcubed_recall_sum / n_true
    out["b_cubed_f"] = _fbeta(out["b_cubed_precision"], out["b_cubed_recall"], b2)

    h_c, h_c_given_k = sums.true_entropy, sums.conditional_entropy
    out["homogeneity"] = 1.0 if n_true == 1 or h_c == 0 else 1.0 - h_c_given_k / h_c
    return {k: out[k] for k in PERFORMANCE_METRICS}, notes


def exact_metrics_from_contingency(
    true_idx: np.ndarray,
    pred_idx: np.ndarray,
    n: np.ndarray,
    *,
    beta: float = 1.0,
) -> tuple[dict[str, float], dict[str, str]]:
    """Exact metrics from contingency rows (true cluster index, predicted cluster index, count):
    :func:`exact_metrics_from_sums` of :func:`contingency_sums` (one formula for every engine).

    Returns (values by metric id, notes for undefined metrics).
    """
    check_beta(beta)
    return exact_metrics_from_sums(contingency_sums(true_idx, pred_idx, n), beta=beta)
