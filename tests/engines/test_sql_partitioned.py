"""A daily-partitioned SQL batch (issue 30 item 4): GX's ``add_batch_definition_daily`` selects
one day of a table that holds many releases with ``EXTRACT(...) = ...`` filters, which a
planner estimates at one row. The SQL engine must give on that batch exactly what it gives on
the same release stored alone, and aggregate it without joining two aggregates of the batch to
each other (the plan that ran as a nested loop: 294× the whole-table time on PostgreSQL,
benchmarks/bench_sql_partitioned.py). Checked on SQLite and PostgreSQL against the pandas
engine on the release alone."""

from __future__ import annotations

import datetime
import uuid

import numpy as np
import pandas as pd
import pytest
from support.enginetools import engine_params, postgres_url

from er_expectations.engines.pandas.release import PandasRelease

sa = pytest.importorskip("sqlalchemy")
from er_expectations.engines.sql.release import SqlRelease  # noqa: E402

DAYS = [datetime.date(2021, 9, 30), datetime.date(2021, 12, 30), datetime.date(2022, 3, 31)]


def releases(seed: int = 7) -> pd.DataFrame:
    """Three releases of 600 records: the same benchmark (40 true clusters, versions 1 and 2,
    some records added later), predictions that split and merge differently each day, names
    with homonyms across clusters."""
    rng = np.random.default_rng(seed)
    n = 600
    truth = rng.integers(0, 150, n)
    names = np.array([f"name {t % 60}" for t in truth], dtype=object)
    names[rng.random(n) < 0.1] = None
    sampled = np.isin(truth, rng.choice(150, 40, replace=False))
    bench = pd.array(np.where(sampled, truth + 10**15, 0), dtype="Int64")  # large ids
    bench[~sampled] = pd.NA
    version = pd.array(np.where(rng.random(n) < 0.85, 1 + (rng.random(n) < 0.2), 0), dtype="Int64")
    version[(version == 0) & ~sampled] = pd.NA  # added after labelling (never a benchmark record)
    version[(version == 0) & sampled] = 1
    frames = []
    for i, day in enumerate(DAYS):
        pred = truth.copy()
        split = rng.random(n) < 0.1 * (i + 1)
        pred[split] = 1000 + rng.integers(0, 40, split.sum())
        pred = pd.array(pred, dtype="Int64")
        pred[rng.random(n) < 0.05] = pd.NA  # not in this release
        frames.append(pd.DataFrame({"record": np.arange(n) + 2**62, "release_date": day, "pred": pred,
                                    "ref": bench, "name": names, "benchmark_version": version}))
    return pd.concat(frames, ignore_index=True)


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
def engine(request):
    eng = sa.create_engine("sqlite://" if request.param == "sqlite" else postgres_url())
    yield eng
    eng.dispose()


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
                    got = facts(SqlRelease(conn, daily(table, engine.dialect.name, day), prediction="pred"),
                                known=known)
            finally:
                sa.event.remove(engine, "before_cursor_execute", record)
            assert got == expected, day
    finally:
        with engine.begin() as conn:
            conn.execute(sa.text(f"DROP TABLE {name}"))
    # one scan per aggregate: no statement joins the batch (or an aggregate of it) to another
    assert statements and not [s for s in statements if " JOIN " in s.upper()]
