"""The sufficient sums of the exact metrics (SPEC 5, used by the release agreement of SPEC 10).

:func:`contingency_sums` and :func:`exact_metrics_from_sums` against brute force: every
unordered pair of records enumerated, b-cubed record by record and entropies from the
definitions (``tests/support/reference_impl.py``), on hypothesis clusterings; the sums themselves
against pair enumeration; a hand-worked example; and the edge cases (one true cluster, all
singletons, no record).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import reference_impl as ref

from er_expectations.stats.exact import (
    ContingencySums,
    contingency_sums,
    exact_metrics_from_contingency,
    exact_metrics_from_sums,
)

HYP = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def cells_of(truth: list, pred: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(true index, pred index, count) of the non-empty cells, counted record by record."""
    t_ids = {v: i for i, v in enumerate(dict.fromkeys(truth))}
    p_ids = {v: i for i, v in enumerate(dict.fromkeys(pred))}
    counts: dict[tuple[int, int], int] = {}
    for t, p in zip(truth, pred, strict=True):
        counts[(t_ids[t], p_ids[p])] = counts.get((t_ids[t], p_ids[p]), 0) + 1
    keys = list(counts)
    return (np.array([k[0] for k in keys], dtype=np.int64), np.array([k[1] for k in keys], dtype=np.int64),
            np.array([counts[k] for k in keys], dtype=np.int64))


def brute_sums(truth: list, pred: list) -> dict:
    """The integer sums by enumerating pairs and clusters."""
    n = len(truth)
    both = same_pred = same_true = 0
    for a in range(n):
        for b in range(a + 1, n):
            same_pred += pred[a] == pred[b]
            same_true += truth[a] == truth[b]
            both += pred[a] == pred[b] and truth[a] == truth[b]
    true_sets = {frozenset(i for i in range(n) if truth[i] == t) for t in truth}
    pred_sets = {frozenset(i for i in range(n) if pred[i] == p) for p in pred}
    return {"records": n, "true_clusters": len(true_sets), "pred_clusters": len(pred_sets), "cell_pairs": both,
            "pred_pairs": same_pred, "true_pairs": same_true, "exact_clusters": len(true_sets & pred_sets)}


labels = st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), min_size=1, max_size=40)


@HYP
@given(rows=labels, beta=st.sampled_from([0.5, 1.0, 2.0]))
def test_metrics_from_sums_equal_brute_force(rows, beta):
    truth = [f"t{t}" for t, _ in rows]
    pred = [f"p{p}" for _, p in rows]
    sums = contingency_sums(*cells_of(truth, pred))
    for key, value in brute_sums(truth, pred).items():
        assert getattr(sums, key) == value, key
    values, notes = exact_metrics_from_sums(sums, beta=beta) if sums.pred_pairs and sums.true_pairs else (None, None)
    expected = ref.exact_metrics_ref(pd.DataFrame({"pred": pred, "truth": truth}), "pred", "truth", beta=beta)
    if values is None:  # an undefined pairwise metric: the reason is kept, the rest is defined
        with pytest.warns(Warning):
            values, notes = exact_metrics_from_sums(sums, beta=beta)
        assert notes and all(v.startswith("undefined: ") for v in notes.values())
        assert all(math.isnan(values[m]) for m in notes)
    brute = brute_sums(truth, pred)
    b2 = beta * beta  # pairwise F from the pair counts (defined when one of P, R is not)
    denominator = brute["pred_pairs"] + b2 * brute["true_pairs"]
    expected["pairwise_f"] = (1 + b2) * brute["cell_pairs"] / denominator if denominator else math.nan
    for metric, want in expected.items():
        if metric in notes:
            assert math.isnan(want), metric
            continue
        assert values[metric] == pytest.approx(want, rel=1e-12, abs=1e-12), metric


@HYP
@given(rows=labels)
def test_contingency_path_is_the_sums_path(rows):
    """exact_metrics_from_contingency is contingency_sums then exact_metrics_from_sums: equal bit for bit."""
    t, p, n = cells_of([r[0] for r in rows], [r[1] for r in rows])
    a = _silent(lambda: exact_metrics_from_contingency(t, p, n, beta=1.5))
    b = _silent(lambda: exact_metrics_from_sums(contingency_sums(t, p, n), beta=1.5))
    assert a[1] == b[1]
    assert all(a[0][k] == b[0][k] or (math.isnan(a[0][k]) and math.isnan(b[0][k])) for k in a[0])


def test_hand_worked_sums():
    """truth {1,2,3} {4,5}, prediction {1,2} {3,4,5}: cells (a,x)=2, (a,y)=1, (b,y)=2."""
    sums = contingency_sums(np.array([0, 0, 1]), np.array([0, 1, 1]), np.array([2, 1, 2]))
    assert sums.records == 5 and sums.true_clusters == 2 and sums.pred_clusters == 2
    assert (sums.cell_pairs, sums.pred_pairs, sums.true_pairs) == (2.0, 4.0, 4.0)
    assert sums.exact_clusters == 0
    # b-cubed precision: true a = (2·2/2 + 1·1/3)/3, true b = (2·2/3)/2
    assert sums.bcubed_precision_sum == pytest.approx((2 + 1 / 3) / 3 + (4 / 3) / 2, rel=1e-15)
    # b-cubed recall: true a = (2·2/3 + 1·1/3)/3, true b = (2·2/2)/2
    assert sums.bcubed_recall_sum == pytest.approx((5 / 3) / 3 + 1.0, rel=1e-15)
    assert sums.true_entropy == pytest.approx(-(0.6 * math.log(0.6) + 0.4 * math.log(0.4)), rel=1e-15)
    assert sums.conditional_entropy == pytest.approx(-(0.4 * math.log(1.0) + 0.2 * math.log(1 / 3)
                                                       + 0.4 * math.log(2 / 3)), rel=1e-15)
    values, notes = exact_metrics_from_sums(sums)
    assert not notes and values["pairwise_precision"] == 0.5 and values["cluster_f"] == 0.0


def test_edge_cases():
    one = contingency_sums(np.zeros(3, dtype=int), np.arange(3), np.ones(3, dtype=int))  # one true cluster, 3 pieces
    values, _ = _silent(exact_metrics_from_sums, one)
    assert values["homogeneity"] == 1.0 and values["pairwise_recall"] == 0.0
    singletons = contingency_sums(np.arange(4), np.arange(4), np.ones(4, dtype=int))
    values, notes = _silent(exact_metrics_from_sums, singletons)
    assert values["cluster_f"] == 1.0 and values["b_cubed_f"] == 1.0 and values["homogeneity"] == 1.0
    assert set(notes) == {"pairwise_precision", "pairwise_recall", "pairwise_f"}
    empty = contingency_sums(np.array([], dtype=int), np.array([], dtype=int), np.array([], dtype=int))
    assert empty == ContingencySums(0, 0, 0, 0.0, 0.0, 0.0, 0, 0.0, 0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="at least one record"):
        exact_metrics_from_sums(empty)


def _silent(fn, *args):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args)
