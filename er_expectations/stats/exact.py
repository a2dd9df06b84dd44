"""Exact performance metrics from a full contingency table (SPEC 5, last paragraph).

Used when the reference covers every record of the release (simulations, synthetic
benchmarks). Computed by pair counting and entropies, independently of the estimator.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..errors import UndefinedMetricWarning
from .metrics import PERFORMANCE_METRICS, check_beta

__all__ = ["exact_metrics_from_contingency"]


def _pairs(x: np.ndarray) -> float:
    x = x.astype(np.float64)
    return float((x * (x - 1.0) / 2.0).sum())


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


def exact_metrics_from_contingency(
    true_idx: np.ndarray,
    pred_idx: np.ndarray,
    n: np.ndarray,
    *,
    beta: float = 1.0,
) -> tuple[dict[str, float], dict[str, str]]:
    """Exact metrics from contingency rows (true cluster index, predicted cluster index, count).

    Returns (values by metric id, notes for undefined metrics). Pairwise metrics count
    unordered pairs; cluster metrics count exactly-right clusters; b-cubed P/R average over
    true clusters as the paper defines them; homogeneity is 1 − H(C|Ĉ)/H(C) (1 when H(C)=0).
    """
    b2 = check_beta(beta) ** 2
    true_idx = np.asarray(true_idx, dtype=np.int64)
    pred_idx = np.asarray(pred_idx, dtype=np.int64)
    n = np.asarray(n, dtype=np.float64)
    n_true = int(true_idx.max()) + 1
    n_pred = int(pred_idx.max()) + 1
    s = np.bincount(true_idx, weights=n, minlength=n_true)
    m = np.bincount(pred_idx, weights=n, minlength=n_pred)
    big_n = float(n.sum())
    notes: dict[str, str] = {}
    out: dict[str, float] = {}

    tp, pp, tt = _pairs(n), _pairs(m), _pairs(s)
    out["pairwise_precision"] = _div(tp, pp, "pairwise_precision", "the prediction has no pair of records", notes)
    out["pairwise_recall"] = _div(tp, tt, "pairwise_recall", "the reference has no pair of records", notes)
    out["pairwise_f"] = _div((1 + b2) * tp, pp + b2 * tt, "pairwise_f", "neither clustering has a pair", notes)

    pieces_of_true = np.bincount(true_idx, minlength=n_true)
    pieces_of_pred = np.bincount(pred_idx, minlength=n_pred)
    exact_rows = (pieces_of_true[true_idx] == 1) & (pieces_of_pred[pred_idx] == 1)
    correct = float(exact_rows.sum())
    out["cluster_precision"] = correct / n_pred
    out["cluster_recall"] = correct / n_true
    out["cluster_f"] = (1 + b2) * correct / (b2 * n_true + n_pred)

    prec_r = n / m[pred_idx]  # per contingency row: |c ∩ ĉ| / |ĉ| for each of its n records
    rec_r = n / s[true_idx]
    bp_c = np.bincount(true_idx, weights=n * prec_r, minlength=n_true) / s
    br_c = np.bincount(true_idx, weights=n * rec_r, minlength=n_true) / s
    out["b_cubed_precision"] = float(bp_c.mean())
    out["b_cubed_recall"] = float(br_c.mean())
    out["b_cubed_f"] = _fbeta(out["b_cubed_precision"], out["b_cubed_recall"], b2)

    h_c = -float((s / big_n * np.log(s / big_n)).sum())
    h_c_given_k = -float((n / big_n * np.log(n / m[pred_idx])).sum())
    out["homogeneity"] = 1.0 if h_c == 0 else 1.0 - h_c_given_k / h_c
    return {k: out[k] for k in PERFORMANCE_METRICS}, notes
