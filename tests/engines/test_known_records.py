"""A later release on the SQL engine: the records known at labelling (SPEC 14), as pandas.

A benchmark labelled on a labelling release L is joined onto a later release T that holds
records added since (new records of benchmark entities and of others, whole new entities),
drops some records of L, and has its own prediction errors. The SQL engine (SQLite; also
PostgreSQL when ``ER_TEST_POSTGRES_URL`` is set) must give the pandas engine's
``BenchmarkSample`` with ``known="auto"``: the same pieces, N, |Ĉ| and the counts of records
added (in all, and in the predicted clusters of sampled records). Both are checked against
a hand-worked release and against an independent computation: the release with the added
records physically removed, and the counts by brute force. The coverage of the estimates
this rule gives is ``benchmarks/studies/coverage_later_release.py``.
"""

from __future__ import annotations

import os
import uuid

import numpy as np
import pandas as pd
import pytest

from er_expectations.engines.pandas import release as pandas_engine

sa = pytest.importorskip("sqlalchemy")
from er_expectations.engines.sql import release as sql_engine  # noqa: E402

BACKENDS = [pytest.param("sqlite", marks=pytest.mark.sqlite)]
if os.environ.get("ER_TEST_POSTGRES_URL"):
    BACKENDS.append(pytest.param("postgres", marks=pytest.mark.postgres))


@pytest.fixture(params=BACKENDS)
def engine(request):
    eng = sa.create_engine("sqlite://" if request.param == "sqlite" else os.environ["ER_TEST_POSTGRES_URL"])
    yield eng
    eng.dispose()


def load(engine, df: pd.DataFrame) -> str:
    name = f"later_{uuid.uuid4().hex[:10]}"
    df.to_sql(name, engine, index=False)
    return name


def fields(sample) -> dict:
    """The sample with clusters and pieces in label order (engines may order them differently)."""
    order = np.argsort(np.asarray(sample.labels, dtype=np.int64), kind="stable")
    labels = np.asarray(sample.labels, dtype=np.int64)
    return {
        "labels": labels[order].tolist(),
        "size": np.asarray(sample.size, dtype=np.int64)[order].tolist(),
        "draws": np.asarray(sample.draws, dtype=np.int64)[order].tolist(),
        "weight": np.asarray(sample.weight, dtype=np.float64)[order].tolist(),
        "pieces": sorted((int(labels[c]), int(p), int(n), int(m)) for c, p, n, m in zip(
            sample.piece_cluster, sample.piece_label, sample.piece_n, sample.piece_m, strict=True)),
        **{f: getattr(sample, f) for f in ("n_records", "n_clusters", "design", "records_set_aside",
                                           "clusters_set_aside", "known_column", "records_added",
                                           "records_added_in_sampled", "benchmark_version")},
    }


def hand_release() -> pd.DataFrame:
    """Eight records of T. Known at labelling: 1, 2, 4, 6, 7 (version 1) and 9 (version 2,
    a top-up); added since: 3, 5, 8. Benchmark entities: 10 = {1, 2}, 20 = {4, 9}.
    Predicted clusters: A = {1, 2, 3}, B = {4, 5, 9}, C = {6, 7}, D = {8}."""
    return pd.DataFrame({
        "record": [1, 2, 3, 4, 5, 6, 7, 8, 9],
        "pred": [100, 100, 100, 200, 200, 300, 300, 400, 200],
        "ref": pd.array([10, 10, None, 20, None, None, None, None, 20], dtype="Int64"),
        "draws": pd.array([2, 2, None, 1, None, None, None, None, 1], dtype="Int64"),
        "benchmark_version": pd.array([1, 1, None, 1, None, 1, 1, None, 2], dtype="Int64"),
    })


def test_hand_worked_later_release(engine):
    df = hand_release()
    expected = {
        # 20's record 9 came with a top-up (version 2): a draw could only have picked 4, so
        # w = 1/1 (SPEC 14.3), not 1/2
        "labels": [10, 20], "size": [2, 2], "draws": [2, 1], "weight": [0.5, 1.0],
        # on the known records: A = {1, 2}, B = {4, 9}, C = {6, 7}; D held only an added record
        "pieces": [(10, 100, 2, 2), (20, 200, 2, 2)],
        "n_records": 6, "n_clusters": 3, "design": "cluster_size", "records_set_aside": 0,
        "clusters_set_aside": 0, "known_column": "benchmark_version",
        # 3, 5 and 8 added; 3 (in A) and 5 (in B) share a predicted cluster with benchmark records
        "records_added": 3, "records_added_in_sampled": 2, "benchmark_version": 2,
    }
    a = pandas_engine.benchmark_sample(df, prediction="pred", reference="ref", draws="draws")
    b = sql_engine.benchmark_sample(engine, load(engine, df), prediction="pred", reference="ref", draws="draws")
    assert fields(a) == expected
    assert fields(b) == expected
    # known=None: the old rule, every record evaluated (3 and 5 count as false links)
    old = {**expected, "weight": [0.5, 0.5], "pieces": [(10, 100, 2, 3), (20, 200, 2, 3)], "n_records": 9, "n_clusters": 4,
           "known_column": None, "records_added": 0, "records_added_in_sampled": 0, "benchmark_version": None}
    a0 = pandas_engine.benchmark_sample(df, prediction="pred", reference="ref", draws="draws", known=None)
    b0 = sql_engine.benchmark_sample(engine, load(engine, df), prediction="pred", reference="ref", draws="draws",
                                     known=None)
    assert fields(a0) == old
    assert fields(b0) == old


def later_release(seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    """A random later release T and which of its records were known at labelling.

    ~600 records; 20 % added after labelling (whole new entities and new records of old
    ones); T drops 3 % of L's records (null prediction); T's prediction lumps, splits and
    moves records, so that added records join and bridge known clusters; benchmark: 40
    records of L drawn with replacement, their entities' records of L labelled.
    """
    rng = np.random.default_rng(seed)
    sizes = np.minimum(rng.zipf(1.8, size=250), 60)
    true = np.repeat(np.arange(len(sizes)), sizes)
    n = len(true)
    new_entity = rng.random(len(sizes)) < 0.06
    late = new_entity[true] | (rng.random(n) < 0.16)
    first = np.unique(true, return_index=True)[1]
    late[first[~new_entity]] = False  # every old entity keeps a record known at labelling
    known = ~late
    pred = true.copy()
    lump = rng.random(len(sizes)) < 0.1
    pred[lump[true]] = (true[lump[true]] + 1) % len(sizes)
    split = rng.random(n) < 0.05
    pred[split] = len(sizes) + true[split]
    move = rng.random(n) < 0.04
    pred[move] = pred[rng.integers(0, n, size=int(move.sum()))]
    dropped = known & (rng.random(n) < 0.03)
    known_idx = np.flatnonzero(known)
    drawn = np.bincount(true[rng.choice(known_idx, size=40)], minlength=len(sizes))
    bench = known & (drawn[true] > 0)
    df = pd.DataFrame({
        "record": np.arange(n),
        "pred": pd.array(pred + 1000, dtype="Int64"),
        "ref": pd.arrays.IntegerArray(true, ~bench),
        "draws": pd.arrays.IntegerArray(drawn[true], ~bench),
        "benchmark_version": pd.arrays.IntegerArray(np.ones(n, dtype=np.int64), ~known),
    })
    df.loc[dropped, "pred"] = pd.NA
    return df, known


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_random_later_release_engines_agree(engine, seed):
    df, known = later_release(seed)
    a = pandas_engine.benchmark_sample(df, prediction="pred", reference="ref", draws="draws")
    b = sql_engine.benchmark_sample(engine, load(engine, df), prediction="pred", reference="ref", draws="draws")
    assert fields(b) == fields(a)
    # independent: the release with the added records removed, evaluated as it stands
    cut = pandas_engine.benchmark_sample(df[known], prediction="pred", reference="ref", draws="draws", known=None)
    unmarked = {"known_column": None, "records_added": 0, "records_added_in_sampled": 0, "benchmark_version": None}
    marked = {"known_column": "benchmark_version", "benchmark_version": 1}
    assert fields(a) == {**fields(cut), **marked, "records_added": a.records_added,
                         "records_added_in_sampled": a.records_added_in_sampled}
    assert {k: fields(cut)[k] for k in unmarked} == unmarked
    # the counts by brute force: added records in the release, and those whose predicted
    # cluster holds a benchmark record (of the release)
    pred = df["pred"].to_numpy(dtype=float, na_value=np.nan)
    in_release = ~np.isnan(pred)
    added = in_release & ~known
    sampled_clusters = set(pred[in_release & df["ref"].notna().to_numpy()].tolist())
    assert a.records_added == int(added.sum()) > 0
    assert a.records_added_in_sampled == sum(1 for p in pred[added] if p in sampled_clusters) > 0
    assert a.records_set_aside == int((df["ref"].notna().to_numpy() & ~in_release).sum())
