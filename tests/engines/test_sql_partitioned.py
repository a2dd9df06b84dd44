"""A daily-partitioned SQL batch (issue 30 item 4): GX's ``add_batch_definition_daily`` selects
one day of a table that holds many releases with ``EXTRACT(...) = ...`` filters, which a
planner estimates at one row. The SQL engine must give on that batch exactly what it gives on
the same release stored alone, and aggregate it without joining two aggregates of the batch to
each other (the plan that ran as a nested loop: 294× the whole-table time on PostgreSQL,
benchmarks/bench_sql_partitioned.py). Checked on SQLite and PostgreSQL against the pandas
engine on the release alone. A filtered batch is read once into a temporary table
(``engines/sql/batch.py``); the tests check the copy is made, used, dropped when the next batch
comes, and that a database refusing it still gives the same answer."""

from __future__ import annotations

import datetime
import sqlite3
import uuid

import numpy as np
import pytest
from support.enginetools import engine_params, postgres_url
from support.partitioned import DAYS, releases

from er_expectations.engines.pandas.pairs import ReleasePair
from er_expectations.engines.pandas.release import PandasRelease

sa = pytest.importorskip("sqlalchemy")
from er_expectations.engines.sql import batch as batches  # noqa: E402
from er_expectations.engines.sql.pairs import SqlReleasePair  # noqa: E402
from er_expectations.engines.sql.release import SqlRelease  # noqa: E402


def daily(table: sa.Table, dialect: str, day: datetime.date):
    d = table.c.release_date
    if dialect == "sqlite":
        where = sa.and_(sa.func.strftime("%Y", d) == f"{day.year:04d}", sa.func.strftime("%m", d) == f"{day.month:02d}",
                        sa.func.strftime("%d", d) == f"{day.day:02d}")
    else:
        where = sa.and_(sa.extract("year", d) == day.year, sa.extract("month", d) == day.month,
                        sa.extract("day", d) == day.day)
    return sa.select(*[c for c in table.c if c.name != "release_date"]).where(where).subquery("batch")


def facts(release, *, known: str | None) -> dict:
    table = release.clustering_table(name="name")
    sample = release.benchmark_sample(reference="ref", name="name", known=known)
    order = np.argsort(np.asarray(sample.labels, dtype=np.int64), kind="stable")
    labels = np.asarray(sample.labels, dtype=np.int64)
    return {
        "sizes": dict(zip(table.sizes.tolist(), table.counts.tolist(), strict=True)),
        "names": (table.n_named_clusters, table.n_homonymous_clusters, table.n_varied_clusters),
        "labels": labels[order].tolist(), "size": np.asarray(sample.size)[order].tolist(),
        "homonym": np.asarray(sample.homonym)[order].tolist(),
        "variation": np.asarray(sample.name_variation)[order].tolist(),
        "pieces": sorted((int(labels[c]), int(p), int(n), int(m)) for c, p, n, m in zip(
            sample.piece_cluster, sample.piece_label, sample.piece_n, sample.piece_m, strict=True)),
        "counts": (sample.n_records, sample.n_clusters, sample.records_set_aside, sample.records_added,
                   sample.records_added_in_sampled, sample.benchmark_version),
    }


@pytest.fixture(params=[p for p in engine_params() if p.values[0] != "spark"])
def engine(request, tmp_path):
    # SQLite on a file: an in-memory database is not copied (it is in memory already)
    eng = sa.create_engine(f"sqlite:///{tmp_path / 'db.sqlite'}" if request.param == "sqlite" else postgres_url())
    yield eng
    batches.release_all()
    eng.dispose()


def temp_tables(engine) -> list[str]:
    """The batch tables alive on the slot's connection (a temporary table is its session's own;
    other sessions of a shared test database are not counted)."""
    slot = batches._SLOTS.get(id(engine))
    if slot is None or slot.conn is None or slot.conn.closed:
        return []
    query = ("SELECT relname FROM pg_class WHERE relnamespace = pg_my_temp_schema() AND relname LIKE 'erx_batch_%'"
             if engine.dialect.name == "postgresql" else "SELECT name FROM sqlite_temp_master WHERE type = 'table'")
    return sorted(r[0] for r in slot.conn.execute(sa.text(query)))


@pytest.mark.parametrize("known", ["benchmark_version", None])
def test_daily_batch_equals_the_release_alone(engine, known):
    every = releases()
    name = f"stacked_{uuid.uuid4().hex[:10]}"
    every.to_sql(name, engine, index=False)
    statements: list[str] = []

    def record(conn, cursor, statement, *args):
        statements.append(statement)

    try:
        table = sa.Table(name, sa.MetaData(), autoload_with=engine)
        for day in DAYS:
            alone = every[every["release_date"] == day].drop(columns="release_date").reset_index(drop=True)
            expected = facts(PandasRelease(alone, prediction="pred"), known=known)
            sa.event.listen(engine, "before_cursor_execute", record)
            try:
                with engine.connect() as conn:
                    got = facts(SqlRelease.from_batch(daily(table, engine.dialect.name, day), connection=conn, prediction="pred"),
                                known=known)
            finally:
                sa.event.remove(engine, "before_cursor_execute", record)
            assert got == expected, day
    finally:
        with engine.begin() as conn:
            conn.execute(sa.text(f"DROP TABLE {name}"))
    # one scan per aggregate: no statement joins the batch (or an aggregate of it) to another
    assert statements and not [s for s in statements if " JOIN " in s.upper()]
    # each day's batch was copied once into a temporary table, and the aggregates read the copy
    copies = [s for s in statements if s.startswith("CREATE TEMPORARY TABLE erx_batch_")]
    assert len(copies) == len(DAYS)
    reads = [s for s in statements if s.lstrip().upper().startswith("SELECT")]
    assert reads and all("erx_batch_" in s and "EXTRACT" not in s.upper() and "strftime" not in s
                         for s in reads)


@pytest.fixture
def stacked(engine):
    every = releases()
    name = f"stacked_{uuid.uuid4().hex[:10]}"
    every.to_sql(name, engine, index=False)
    yield every, sa.Table(name, sa.MetaData(), autoload_with=engine)
    batches.release_all()
    with engine.begin() as conn:
        conn.execute(sa.text(f"DROP TABLE {name}"))


def test_interleaved_batches_stay_right_and_one_table_is_kept(engine, stacked):
    """Two releases used in turn (as GX may ask for a metric of an earlier batch): each reads its
    own rows; the slot holds one batch table at a time and one connection per database."""
    every, table = stacked
    first, second = (SqlRelease.from_batch(daily(table, engine.dialect.name, day), connection=engine, prediction="pred") for day in DAYS[:2])
    expected = [facts(PandasRelease(every[every["release_date"] == day].drop(columns="release_date")
                                    .reset_index(drop=True), prediction="pred"), known=None) for day in DAYS[:2]]
    for _ in range(2):
        assert facts(first, known=None) == expected[0]
        assert facts(second, known=None) == expected[1]
        assert len(temp_tables(engine)) == 1
    batches.release_all()
    assert temp_tables(engine) == []
    assert facts(first, known="benchmark_version") == facts(  # the copy comes back on demand
        PandasRelease(every[every["release_date"] == DAYS[0]].drop(columns="release_date").reset_index(drop=True),
                      prediction="pred"), known="benchmark_version")


def test_a_whole_table_batch_is_not_copied(engine, stacked):
    """GX selects a whole table as ``SELECT * FROM t WHERE true`` (``1 = 1`` on SQLite)."""
    _, table = stacked
    where = sa.text("1 = 1") if engine.dialect.name == "sqlite" else sa.true()
    release = SqlRelease.from_batch(sa.select(sa.text("*")).select_from(sa.table(table.name)).where(where),
                                    connection=engine, prediction="pred")
    assert release.batch is None and release.n_records == 1800 - int(releases()["pred"].isna().sum())


def test_a_database_that_refuses_temporary_tables_is_queried_in_place(tmp_path, caplog):
    """SQLite's authorizer denies CREATE TEMP TABLE, as a role without the TEMPORARY privilege
    would be denied: same answer, queried where it is, and a warning saying so."""
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'refusing.sqlite'}")
    every = releases()
    every.to_sql("stacked", engine, index=False)

    def deny_temp(action, *_):
        return sqlite3.SQLITE_DENY if action == sqlite3.SQLITE_CREATE_TEMP_TABLE else sqlite3.SQLITE_OK

    sa.event.listen(engine, "connect", lambda dbapi, _: dbapi.set_authorizer(deny_temp))
    engine.dispose()
    try:
        table = sa.Table("stacked", sa.MetaData(), autoload_with=engine)
        release = SqlRelease.from_batch(daily(table, "sqlite", DAYS[1]), connection=engine, prediction="pred")
        assert release.batch is None
        assert "queried in place" in caplog.text
        alone = every[every["release_date"] == DAYS[1]].drop(columns="release_date").reset_index(drop=True)
        assert facts(release, known=None) == facts(PandasRelease(alone, prediction="pred"), known=None)
    finally:
        batches.release_all()
        engine.dispose()


def test_release_diff_of_a_daily_batch_equals_pandas(engine, stacked):
    """The drift sums (SPEC 10) of a copied batch: current ``pred`` against a baseline column of
    the same rows (``ref``, as a wide table holds the previous release), on its connection."""
    every, table = stacked
    for day in DAYS[:2]:
        current = SqlRelease.from_batch(daily(table, engine.dialect.name, day), connection=engine, prediction="pred")
        baseline = SqlRelease.from_batch(daily(table, engine.dialect.name, day), connection=engine, prediction="ref")
        assert current.batch is not None
        pair = SqlReleasePair(current, baseline)
        alone = every[every["release_date"] == day].drop(columns="release_date").reset_index(drop=True)
        expected = ReleasePair(PandasRelease(alone, prediction="pred"), PandasRelease(alone, prediction="ref"))
        assert pair.n_common == expected.n_common > 0
        assert pair.change_counts() == expected.change_counts()
        got, want = pair.contingency_sums(), expected.contingency_sums()
        assert np.allclose([getattr(got, f) for f in got.__dataclass_fields__],
                           [getattr(want, f) for f in want.__dataclass_fields__], rtol=1e-12)
