"""The DuckDB engine's own cases (issue 32 item 2); every statistic runs on it in test_common.py.

* GX's SQL batches on a ``duckdb:///`` connection are aggregated by the DuckDB engine, those on
  any other database by the SQL engine (``engines/registry.py``, by dialect);
* the PatentsView release (names, benchmark) equals the pandas engine to 1e-12, its counts
  exactly;
* floats are double precision (SQLAlchemy's ``FLOAT`` is single precision on DuckDB: a weight
  of 1/3 came back as 0.3333333432674408 through the SQL release);
* a daily batch of a DuckDB file is copied once into a temporary table and equals the release
  alone; the drift pair on that batch reads the copy too;
* a table named by text is read without PostgreSQL reflection, and a missing one is named with
  a hint.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest
from support.enginetools import duckdb_load
from support.partitioned import DAYS, releases
from support.paths import PV_DATA

from er_expectations.core.errors import InputError
from er_expectations.engines.pandas.pairs import ReleasePair
from er_expectations.engines.pandas.release import PandasRelease
from er_expectations.engines.registry import ENGINES, engine_for
from er_expectations.stats import estimate_metrics, summary_statistics

pytest.importorskip("duckdb")
pytest.importorskip("duckdb_engine")
sa = pytest.importorskip("sqlalchemy")
from er_expectations.engines.duckdb.release import DuckDbRelease  # noqa: E402
from er_expectations.engines.sql import batch as batches  # noqa: E402
from er_expectations.engines.sql.pairs import SqlReleasePair  # noqa: E402
from er_expectations.engines.sql.release import SqlRelease  # noqa: E402

pytestmark = pytest.mark.duckdb


@pytest.fixture
def engine(tmp_path):
    eng = sa.create_engine(f"duckdb:///{tmp_path / 'warehouse.duckdb'}")
    yield eng
    batches.release_all()
    eng.dispose()


def test_gx_batches_on_duckdb_go_to_the_duckdb_engine(tmp_path):
    import great_expectations as gx

    ctx = gx.get_context(mode="ephemeral")
    for url, expected in ((f"duckdb:///{tmp_path / 'a.duckdb'}", "duckdb"), (f"sqlite:///{tmp_path / 'a.db'}", "sql")):
        bind = sa.create_engine(url)
        with bind.begin() as conn:
            conn.execute(sa.text("CREATE TABLE t (x INTEGER)"))
        bind.dispose()
        source = ctx.data_sources.add_sql(f"s_{expected}", connection_string=url)
        batch = source.add_table_asset("t", table_name="t").add_batch_definition_whole_table("all").get_batch()
        execution_engine = batch.data.execution_engine
        assert type(execution_engine).__name__ == "SqlAlchemyExecutionEngine"
        assert engine_for(execution_engine) is ENGINES[expected]
        if expected == "duckdb":
            assert isinstance(ENGINES[expected].release_of(batch.data.selectable, execution_engine=execution_engine,
                                                           prediction="x"), DuckDbRelease)


@pytest.fixture(scope="module")
def patentsview() -> pd.DataFrame:
    """The 2021-12-30 release with its names and benchmark (133,541 records)."""
    pred = pd.read_parquet(PV_DATA / "predictions.parquet", columns=["mention_id", "inventor_id_20211230"])
    records = pd.read_parquet(PV_DATA / "records.parquet", columns=["mention_id", "name_first", "name_last"])
    bench = pd.read_parquet(PV_DATA / "benchmark.parquet")
    df = pred.merge(records, on="mention_id").merge(bench, on="mention_id", how="left")
    df["name"] = df["name_first"].str.cat(df["name_last"], sep=" ")
    return df.drop(columns=["name_first", "name_last"]).astype(object).where(lambda d: d.notna(), None)


def test_patentsview_equals_pandas_to_1e12(engine, patentsview):
    duckdb_load(engine, "release", patentsview)
    args = {"prediction": "inventor_id_20211230"}
    got, want = DuckDbRelease(engine, "release", **args), PandasRelease(patentsview, **args)
    table, expected = got.clustering_table(name="name"), want.clustering_table(name="name")
    sized = DuckDbRelease(engine, "release", **args)
    sized.size_histogram()  # the sizes first (as GX asks): then the name counts alone
    for got_table in (table, sized.clustering_table(name="name")):
        for field in ("sizes", "counts"):
            assert np.array_equal(getattr(got_table, field), getattr(expected, field)), field
        for field in ("n_named_clusters", "n_homonymous_clusters", "n_varied_clusters"):
            assert getattr(got_table, field) == getattr(expected, field), field
    assert table.n_homonymous_clusters > 0 and table.n_varied_clusters > 0
    stats, stats_pandas = summary_statistics(table), summary_statistics(expected)
    assert stats.keys() == stats_pandas.keys()
    for key, value in stats_pandas.items():
        assert stats[key] == pytest.approx(value, rel=1e-12, abs=0), key
    for weights in ("cluster_size", "uniform"):
        sample = got.benchmark_sample(reference="benchmark_id", weights=weights, name="name", known=None)
        sample_pandas = want.benchmark_sample(reference="benchmark_id", weights=weights, name="name", known=None)
        order, order_pandas = np.argsort(sample.labels.astype(str)), np.argsort(sample_pandas.labels.astype(str))
        for field in ("labels", "size", "weight", "draws", "homonym", "name_variation", "has_name"):
            assert np.array_equal(getattr(sample, field)[order], getattr(sample_pandas, field)[order_pandas]), field
        estimates = estimate_metrics(sample)
        for metric, estimate in estimate_metrics(sample_pandas).items():
            for part in ("estimate", "std_error", "ci_lower", "ci_upper"):
                value, other = getattr(estimate, part), getattr(estimates[metric], part)
                assert (math.isnan(value) and math.isnan(other)) or other == pytest.approx(value, rel=1e-12), \
                    (weights, metric, part)


def test_floats_are_double_precision(engine):
    df = pd.DataFrame({"pred": ["a", "a", "b", "c"], "ref": ["t1", "t1", "t2", None],
                       "w": [1 / 3, 1 / 3, 2 / 7, None]})
    duckdb_load(engine, "weighted", df)
    sample = DuckDbRelease(engine, "weighted", prediction="pred").benchmark_sample(
        reference="ref", weights={"column": "w"}, known=None)
    assert sorted(sample.weight.tolist()) == sorted([1 / 3, 2 / 7])  # exactly
    # what the SQL engine's FLOAT cast gives on DuckDB: single precision
    single = SqlRelease(engine, sa.table("weighted", sa.column("pred"), sa.column("ref"), sa.column("w")),
                        prediction="pred").benchmark_sample(reference="ref", weights={"column": "w"}, known=None)
    assert 1 / 3 not in single.weight.tolist()


def _facts(release, *, known):
    table = release.clustering_table(name="name")
    sample = release.benchmark_sample(reference="ref", name="name", known=known)
    labels = np.asarray(sample.labels, dtype=np.int64)
    order = np.argsort(labels, kind="stable")
    return {"sizes": table.sizes.tolist(), "size_counts": table.counts.tolist(),
            "names": (table.n_named_clusters, table.n_homonymous_clusters, table.n_varied_clusters), "labels": labels[order].tolist(), "size": sample.size[order].tolist(),
            "homonym": sample.homonym[order].tolist(), "variation": sample.name_variation[order].tolist(),
            "pieces": sorted((int(labels[c]), int(p), int(n), int(m)) for c, p, n, m in zip(
                sample.piece_cluster, sample.piece_label, sample.piece_n, sample.piece_m, strict=True)),
            "counts": (sample.n_records, sample.n_clusters, sample.records_set_aside, sample.records_added,
                       sample.benchmark_version)}


def test_daily_batch_is_copied_once_and_equals_the_release_alone(engine):
    every = releases()
    every["base"] = every["pred"].shift(7)  # a baseline column for the pair
    duckdb_load(engine, "stacked", every)
    table = sa.table("stacked", *[sa.column(c) for c in every.columns])
    statements: list[str] = []
    sa.event.listen(engine, "before_cursor_execute", lambda conn, cursor, statement, *a: statements.append(statement))
    for day in DAYS:
        alone = every[every["release_date"] == day].drop(columns="release_date").reset_index(drop=True)
        d = table.c.release_date
        batch = (sa.select(*[c for c in table.c if c.name != "release_date"])
                 .where(sa.extract("year", d) == day.year, sa.extract("month", d) == day.month,
                        sa.extract("day", d) == day.day).subquery("batch"))
        for known in ("benchmark_version", None):
            current = DuckDbRelease.from_batch(batch, connection=engine, prediction="pred")
            assert current.batch is not None
            assert _facts(current, known=known) == _facts(PandasRelease(alone, prediction="pred"), known=known)
        pair = SqlReleasePair(current, DuckDbRelease.from_batch(batch, connection=engine, prediction="base"))
        pandas_pair = ReleasePair(PandasRelease(alone, prediction="pred"), PandasRelease(alone, prediction="base"))
        restricted = [(t.sizes.tolist(), t.counts.tolist()) for t in (r.clustering_table() for r in pair.restricted())]
        assert restricted == [(t.sizes.tolist(), t.counts.tolist())
                              for t in (r.clustering_table() for r in pandas_pair.restricted())]
        sums, sums_pandas = dataclasses.asdict(pair.contingency_sums()), dataclasses.asdict(pandas_pair.contingency_sums())
        assert sums == pytest.approx(sums_pandas, rel=1e-12)
    copies = [s for s in statements if s.startswith('CREATE TEMPORARY TABLE "erx_batch_')
              or s.startswith("CREATE TEMPORARY TABLE erx_batch_")]
    assert len(copies) == len(DAYS)


def test_a_table_named_by_text_needs_no_reflection(engine):
    duckdb_load(engine, "predictions", pd.DataFrame({"pred": ["a", "a", "b"]}))
    assert DuckDbRelease(engine, "predictions", prediction="pred").n_clusters == 2
    with pytest.raises(InputError) as caught:
        DuckDbRelease(engine, "predictionz", prediction="pred")
    text = str(caught.value)
    assert "table 'predictionz' does not exist" in text and "'predictions'" in text and "pg_collation" not in text


@pytest.mark.slow
def test_the_scale_benchmark_runs_small(tmp_path):
    """benchmarks/bench_duckdb_scale.py at 20,000 records (its CI smoke): the DuckDB engine
    served GX, the SQL engine's values equal it (the script checks them to 1e-12), and the
    floor and peaks are reported."""
    import json
    import os
    import subprocess
    import sys

    from support.paths import REPO

    out = tmp_path / "scale.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, str(REPO / "benchmarks" / "bench_duckdb_scale.py"), "--sizes", "20000",
                           "--with-sql", "--workdir", str(tmp_path), "--out", str(out)],
                          capture_output=True, text=True, env=env, check=False, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    (row,) = json.loads(out.read_text())["rows"]
    assert row["records"] == 20000 and row["engine"] == "duckdb"
    assert row["floor_warm_s"] > 0 and row["ratio_warm"] > 0 and row["engine_peak_gb"] > 0
    assert set(row["aggregates_s"]) >= {"floor_group_by", "floor_names", "duckdb_names", "sql_names"}
    assert 0 < row["observed"]["expect_homonymy_rate_to_be_between"] < 1
