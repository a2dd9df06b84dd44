"""Agreement and release diff on SQLite, PostgreSQL and Spark: the same answers as pandas,
computed where the data lives, with a bounded number of rows brought back (SPEC 10).

The pair of each engine is built directly (no GX) so that many cases run: hypothesis
clusterings with text ids from a hostile alphabet (mixed case, accents, digits against
letters, punctuation and spaces: a locale collation orders them differently from Python's
``sorted``) or integer ids (negative, large), nulls on both sides; no common record, a
single cluster, all singletons. Values to 1e-9; counts, notes,
the examples, their order, sources and names exactly. Then the rows fetched do not grow
with the number of clusters, and a SQLite without ``ln`` still works.
"""

from __future__ import annotations

import math
import sqlite3
import uuid
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.compare import assert_identical
from support.drift import HOSTILE, frame, shaped_frame
from support.enginetools import engine_params, postgres_url, spark_frame, spark_session
from support.sourcetools import count_fetched_rows

from er_expectations.analysis.drift import agreement_of, diff_of
from er_expectations.engines.pandas.pairs import ReleasePair
from er_expectations.engines.pandas.release import PandasRelease

sa = pytest.importorskip("sqlalchemy")
_ENGINES = engine_params()
_SQL = [p for p in _ENGINES if p.values[0] != "spark"]


# -- one pair per engine -----------------------------------------------------------------------------


@contextmanager
def engine_pair(engine: str, df: pd.DataFrame, *, collation: bool = False, bind=None):
    """The release pair (current ``pred``, baseline ``base``) of ``df`` on ``engine``.

    ``collation``: the text id columns get a collation that is not Python's order (SQLite: a
    case-insensitive-first order registered on each connection; PostgreSQL: ICU en-US), which
    the pair must override. Both keep equality byte-wise (the clusters stay the same).
    """
    if engine == "pandas":
        yield ReleasePair(PandasRelease(df, prediction="pred"), PandasRelease(df, prediction="base"))
        return
    if engine == "spark":
        from er_expectations.engines.spark.pairs import SparkReleasePair
        from er_expectations.engines.spark.release import SparkRelease

        sdf = spark_frame(spark_session(), df)
        yield SparkReleasePair(SparkRelease(sdf, prediction="pred"), SparkRelease(sdf, prediction="base"))
        return
    from er_expectations.engines.sql.pairs import SqlReleasePair
    from er_expectations.engines.sql.release import SqlRelease

    table = f"pair_{uuid.uuid4().hex[:8]}"
    own = bind is None
    bind = bind if bind is not None else sa.create_engine("sqlite://" if engine == "sqlite" else postgres_url())
    try:
        if engine == "sqlite" and collation:
            sa.event.listen(bind, "connect", _add_collation)
            kinds = {c: "TEXT" if df[c].dtype == object else "INTEGER" for c in df.columns}
            kinds.update({c: "TEXT COLLATE hostile" for c in ("pred", "base") if df[c].dtype == object})
            ddl = ", ".join(f'"{c}" {k}' for c, k in kinds.items())
            with bind.begin() as conn:
                conn.execute(sa.text(f'CREATE TABLE "{table}" ({ddl})'))
            df.to_sql(table, bind, index=False, if_exists="append")
        else:
            df.to_sql(table, bind, index=False)
            if collation:
                with bind.begin() as conn:
                    for c in ("pred", "base"):
                        if df[c].dtype == object:
                            conn.execute(sa.text(f'ALTER TABLE "{table}" ALTER COLUMN "{c}" TYPE text '
                                                 'COLLATE "en-US-x-icu"'))
        yield SqlReleasePair(SqlRelease(bind, table, prediction="pred"), SqlRelease(bind, table, prediction="base"))
    finally:
        if engine == "postgres":
            with bind.begin() as conn:
                conn.execute(sa.text(f'DROP TABLE IF EXISTS "{table}"'))
        if own:
            bind.dispose()


def _hostile(x: str, y: str) -> int:
    """A locale-like order: case-folded first, then the text (equal only when identical)."""
    kx, ky = (x.casefold(), x), (y.casefold(), y)
    return (kx > ky) - (kx < ky)


def _add_collation(dbapi_connection, record) -> None:
    dbapi_connection.create_collation("hostile", _hostile)


def answers(pair, *, examples: int = 3, seed: int = 0, name: str | None = "name") -> dict:
    agreement = agreement_of(pair, beta=1.5)
    return {"values": agreement.values, "notes": agreement.notes, "common": agreement.common_records,
            "clusters": (agreement.current_clusters, agreement.baseline_clusters),
            "diff": diff_of(pair, name=name, examples=examples, seed=seed).to_dict()}


def check_engine(engine: str, df: pd.DataFrame, *, collation: bool = False, **kwargs) -> dict:
    with engine_pair("pandas", df) as pair:
        want = answers(pair, **kwargs)
    with engine_pair(engine, df, collation=collation) as pair:
        got = answers(pair, **kwargs)
    assert_identical(got, want)
    return want


# -- cases ------------------------------------------------------------------------------------------


def _ids(kind: str):
    if kind == "int":
        return st.one_of(st.none(), st.integers(-3, 12), st.sampled_from([2**40, -(2**35)]))
    return st.one_of(st.none(), st.sampled_from(HOSTILE))


@st.composite
def clusterings(draw, kind: str):
    n = draw(st.integers(1, 60))
    cur = draw(st.lists(_ids(kind), min_size=n, max_size=n))
    base = draw(st.lists(_ids(kind), min_size=n, max_size=n))
    names = draw(st.lists(st.one_of(st.none(), st.sampled_from(["Ann", "ann", "Bob", "Éva", "Zoë"])),
                          min_size=n, max_size=n))
    return frame(cur, base, names, ids=kind)


HYP = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                      HealthCheck.function_scoped_fixture])


@pytest.mark.parametrize("kind", ["str", "int"])
@pytest.mark.parametrize("engine", _SQL)
@HYP
@given(data=st.data())
def test_random_clusterings_equal_pandas(engine, kind, data):
    df = data.draw(clusterings(kind))
    examples, seed = data.draw(st.integers(0, 4)), data.draw(st.integers(0, 3))
    check_engine(engine, df, examples=examples, seed=seed, collation=data.draw(st.booleans()))


@pytest.mark.parametrize("ids", ["str", "int"])
@pytest.mark.parametrize("engine", _ENGINES)
def test_shaped_releases_equal_pandas(engine, ids):
    df = shaped_frame(3, ids=ids)
    want = check_engine(engine, df, examples=4, seed=1, collation=engine != "spark")
    assert all(want["diff"]["clusters"][k] > 4 for k in ("merged", "split", "both"))
    assert sum(len(e["sources"]) for e in want["diff"]["examples"]) > 12
    # every changed cluster shown: the whole order of the ids is compared
    want = check_engine(engine, df, examples=1000, seed=0, collation=engine != "spark")
    assert len(want["diff"]["examples"]) == sum(want["diff"]["clusters"][k] for k in ("merged", "split", "both"))


@pytest.mark.parametrize("engine", _ENGINES)
def test_edge_cases_equal_pandas(engine):
    no_common = frame(["a", None, "b", None], [None, "x", None, "y"])
    want = check_engine(engine, no_common)
    assert want["common"] == 0 and all(math.isnan(v) for v in want["values"].values())
    one = frame(["é"] * 5 + [None], ["A"] * 6)
    want = check_engine(engine, one)
    assert want["clusters"] == (1, 1) and want["values"]["homogeneity"] == 1.0
    singletons = frame([f"c{i}" for i in range(7)], [f"B{i}" for i in range(7)], ids="str")
    want = check_engine(engine, singletons)
    assert set(want["notes"]) == {"pairwise_precision", "pairwise_recall", "pairwise_f"}
    assert want["diff"]["clusters"]["unchanged"] == 7 and want["diff"]["examples"] == []
    merged = frame(["m"] * 6, ["Z", "z", "é", "e", "E", "_"])  # one cluster from six: sources ordered by id
    want = check_engine(engine, merged, examples=2)
    assert [s["cluster"] for s in want["diff"]["examples"][0]["sources"]] == ["E", "Z", "_", "e", "z"]


# -- what comes back ----------------------------------------------------------------------------------


def _releases(clusters: int) -> pd.DataFrame:
    """Baseline clusters of 5 records; the current release merges every 7th pair, splits every 5th."""
    n = clusters * 5
    base = np.arange(n) // 5
    cur = np.where(base % 7 == 0, base + 1, base)
    cur = np.where((base % 5 == 0) & (np.arange(n) % 2 == 0), cur + 10 * clusters, cur)
    return frame([f"c{x}" for x in cur], [f"b{x}" for x in base], [f"n{i % 3}" for i in range(n)])


def test_sql_rows_fetched_do_not_grow_with_clusters():
    """Agreement and diff on SQLite: a bounded number of rows, 10 or 10,000 clusters."""
    fetched = {}
    for clusters in (10, 10_000):
        df = _releases(clusters)
        with engine_pair("sqlite", df) as pair:
            with count_fetched_rows() as rows:
                res = answers(pair, examples=5)
            fetched[clusters] = sum(rows)
        with engine_pair("pandas", df) as pair:
            assert_identical(res, answers(pair, examples=5))
        assert res["diff"]["clusters"]["merged"] > 0 and res["diff"]["clusters"]["split"] > 0
    # sums and totals: 1 row; sources of 3 × 5 shown clusters (≤ 2 each); their names (≤ 3 each)
    assert fetched[10_000] <= 1 + 15 * 2 + 15 * 3, fetched
    assert fetched[10] <= fetched[10_000]


@pytest.mark.spark
def test_spark_rows_collected_do_not_grow_with_clusters(monkeypatch):
    pytest.importorskip("pyspark")
    from er_expectations.engines.spark import pairs as pairs_spark

    original = pairs_spark.collect
    collected: list[int] = []

    def counting(frame):
        rows = original(frame)
        collected.append(len(rows))
        return rows

    monkeypatch.setattr(pairs_spark, "collect", counting)
    df = _releases(10_000)
    with engine_pair("spark", df) as pair:
        res = answers(pair, examples=5)
    with engine_pair("pandas", df) as pair:
        assert_identical(res, answers(pair, examples=5))
    assert collected[0] == 1 and sum(collected) <= 1 + 15 * 2 + 15 * 3, collected  # one row: sums and totals


# -- SQLite without ln ----------------------------------------------------------------------------------


def _no_ln(path: Path):
    def connect():
        conn = sqlite3.connect(path, check_same_thread=False)
        conn.create_function("ln", 1, None)  # as a build without the math functions: ln fails
        return conn
    return connect


@pytest.mark.parametrize("as_connection", [False, True])
def test_sqlite_without_ln_registers_it(tmp_path, as_connection):
    creator = _no_ln(tmp_path / "no_ln.db")
    raw = creator()
    with pytest.raises(sqlite3.OperationalError):
        raw.execute("SELECT ln(2.0)").fetchone()
    raw.close()
    engine = sa.create_engine("sqlite://", creator=creator)
    df = shaped_frame(5, ids="str")
    with engine_pair("pandas", df) as pair:
        want = answers(pair)
    try:
        if as_connection:
            with engine.connect() as conn, engine_pair("sqlite", df, bind=conn) as pair:
                got = answers(pair)
        else:
            with engine_pair("sqlite", df, bind=engine) as pair:
                got = answers(pair)
    finally:
        engine.dispose()
    assert_identical(got, want)
    assert want["values"]["homogeneity"] < 1.0
