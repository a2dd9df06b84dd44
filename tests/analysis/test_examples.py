"""The all-but-one prediction of the paper's simulation (er_expectations.analysis.examples)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from er_expectations import InputError
from er_expectations.analysis.examples import RLDATA_FIELDS, agreement_prediction


def _brute_force(records: pd.DataFrame, fields: list[str], m: int) -> list[set[int]]:
    """Every pair compared field by field, then the closure by a plain graph search."""
    rows = records[fields].astype("string").fillna("").values.tolist()
    n = len(rows)
    adj: dict[int, set[int]] = {i: set() for i in range(n)}
    for i, j in itertools.combinations(range(n), 2):
        if sum(a == b for a, b in zip(rows[i], rows[j], strict=True)) >= m:
            adj[i].add(j)
            adj[j].add(i)
    seen, parts = set(), []
    for i in range(n):
        if i in seen:
            continue
        stack, part = [i], set()
        while stack:
            x = stack.pop()
            if x not in part:
                part.add(x)
                stack.extend(adj[x] - part)
        seen |= part
        parts.append(part)
    return sorted(parts, key=min)


def _parts(labels: np.ndarray) -> list[set[int]]:
    groups: dict[int, set[int]] = {}
    for i, lab in enumerate(labels.tolist()):
        groups.setdefault(lab, set()).add(i)
    return sorted(groups.values(), key=min)


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 40), st.integers(1, 5), st.integers(0, 2**32 - 1))
def test_components_equal_brute_force(n, m, seed):
    rng = np.random.default_rng(seed)
    records = pd.DataFrame({f: rng.integers(0, 3, size=n) for f in RLDATA_FIELDS})
    labels = agreement_prediction(records, RLDATA_FIELDS, min_agree=m)
    assert _parts(labels) == _brute_force(records, list(RLDATA_FIELDS), m)
    assert all(labels[min(p)] == min(p) for p in _parts(labels))  # labelled by the smallest row


def test_rldata500_equals_brute_force(rldata_dir):
    records = pd.read_csv(rldata_dir / "RLdata500.tsv", sep="\t", keep_default_na=False)
    labels = agreement_prediction(records)
    assert _parts(labels) == _brute_force(records, list(RLDATA_FIELDS), 4)


def test_bad_arguments():
    df = pd.DataFrame({"a": [1, 2]})
    with pytest.raises(InputError, match="no column"):
        agreement_prediction(df, ["a", "b"])
    with pytest.raises(InputError, match="min_agree=3"):
        agreement_prediction(df, ["a"], min_agree=3)
