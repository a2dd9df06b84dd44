"""The demo checkpoint on the bundled PatentsView data, run from files (pandas), SQLite,
PostgreSQL and Spark local mode: every expectation observes the same value (to 1e-9).

The tables are loaded into the database or Spark first; the checkpoint then points at them
with ``data.engine``. The whole demo suite runs, its drift checks (baseline release columns
built by the engine) included.
"""

from __future__ import annotations

import math
import os
import shutil
import sqlite3
from pathlib import Path

import pandas as pd
import pytest
from support.enginetools import postgres_url, spark_available
from support.paths import REPO

import er_expectations  # noqa: F401 - registers the expectations
from er_expectations.config.yamlnodes import read_yaml
from er_expectations.gx.expectations import EXPECTATION_TYPES
from er_expectations.run.runner import run_checkpoint

DEMO = REPO / "checkpoints" / "patentsview.yml"
DATA = REPO / "er_expectations" / "data" / "patentsview"
RELEASES = ("2021-12-30", "2022-06-30")
RECORD_COLUMNS = ["mention_id", "name_first", "name_last"]


def demo_suite(folder: Path) -> None:
    """The demo suite, drift checks included."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(REPO / "suites" / "patentsview.yml", folder / "patentsview.yml")
    suite = read_yaml((folder / "patentsview.yml").read_text(encoding="utf-8"))
    names = {e["expectation"] for e in suite["expectations"]}
    assert names & {name for name, cls in EXPECTATION_TYPES.items() if cls.reads_baseline} and len(names) >= 10


def engine_checkpoint(root: Path, engine: str, data_section: str, *, releases: tuple[str, ...] = ()) -> Path:
    """The demo checkpoint with its ``data`` section replaced, for :data:`RELEASES` (the wide
    columns; the long layout names its releases by label)."""
    releases = releases or tuple(f"inventor_id_{r.replace('-', '')}" for r in RELEASES)
    demo = DEMO.read_text(encoding="utf-8")
    head = demo[:demo.index("data:")]
    tail = demo[demo.index("releases:"):]
    text = (head + data_section + tail).replace("project_dir: ../build/patentsview", "project_dir: ../project")
    text = text.replace("releases: all", f"releases: [{', '.join(releases)}]")
    (root / "checkpoints").mkdir(parents=True, exist_ok=True)
    demo_suite(root / "suites")
    path = root / "checkpoints" / f"{engine}.yml"
    path.write_text(text, encoding="utf-8")
    return path


FILES = f"""data:
  records: {{path: {DATA / 'records.parquet'}, id_column: mention_id}}
  predictions: {{path: {DATA / 'predictions.parquet'}, id_column: mention_id, columns: "inventor_id_*", batch_column: inventor_id}}
  benchmark: {{path: {DATA / 'benchmark.parquet'}, id_column: mention_id, reference_column: benchmark_id}}
  name: {{columns: [name_first, name_last], separator: " ", output_column: full_name}}
"""


def sql_section(url: str, names: dict[str, str]) -> str:
    return f"""data:
  engine: sql
  connection: {{url: "{url}"}}
  records: {{query: "select mention_id, name_first, name_last from {names['records']}", id_column: mention_id}}
  predictions: {{table: {names['predictions']}, id_column: mention_id, columns: "inventor_id_*", batch_column: inventor_id}}
  benchmark: {{table: {names['benchmark']}, id_column: mention_id, reference_column: benchmark_id}}
  name: {{columns: [name_first, name_last], separator: " ", output_column: full_name}}
"""


def observed(report) -> dict:
    out = {}
    for release in report.releases:
        for e in release.expectations:
            assert e.error is None, (release.label, e.label, e.error)
            out[(release.label, e.suite, e.label)] = (e.observed, e.success)
    return out


def assert_same(got: dict, want: dict) -> None:
    assert got.keys() == want.keys()
    for key, (value, success) in want.items():
        other, other_success = got[key]
        assert other_success == success, key
        if isinstance(value, float) and not math.isnan(value):
            assert other == pytest.approx(value, rel=1e-9, abs=1e-12), key
        else:
            assert other == value or (value != value and other != other), key


def wide_tables() -> dict[str, pd.DataFrame]:
    keep = ["mention_id", *[f"inventor_id_{r.replace('-', '')}" for r in RELEASES]]
    return {
        "records": pd.read_parquet(DATA / "records.parquet", columns=RECORD_COLUMNS),
        "predictions": pd.read_parquet(DATA / "predictions.parquet", columns=keep),
        "benchmark": pd.read_parquet(DATA / "benchmark.parquet"),
    }


@pytest.fixture(scope="module")
def pandas_run(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("files")
    values = observed(run_quietly(engine_checkpoint(root, "files", FILES)))
    assert {label for label, _, _ in values} == set(RELEASES)
    assert len(values) >= 2 * 15
    return values


def run_quietly(path: Path, releases: tuple[str, ...] | None = None):
    with open(os.devnull, "w") as sink:
        return run_checkpoint(path, releases=releases, progress=False, out=sink)


@pytest.mark.sqlite
def test_sqlite_equals_pandas_and_fetches_no_record_table(tmp_path, pandas_run, monkeypatch):
    from support.sourcetools import count_fetched_rows, count_statements

    db = tmp_path / "warehouse.db"
    with sqlite3.connect(db):
        pass
    import sqlalchemy as sa

    engine = sa.create_engine(f"sqlite:///{db}")
    for name, frame in wide_tables().items():
        frame.to_sql(name, engine, index=False)
    engine.dispose()
    monkeypatch.setenv("WAREHOUSE_URL", f"sqlite:///{db}")
    path = engine_checkpoint(tmp_path, "sqlite", sql_section("${WAREHOUSE_URL}", {
        "records": "records", "predictions": "predictions", "benchmark": "benchmark"}))
    with count_fetched_rows() as fetched, count_statements("er_ids") as release_queries:
        report = run_quietly(path)
    assert_same(observed(report), pandas_run)
    # each release's query (the joins building its batch) runs once, into GX's temporary
    # table, which every check then aggregates (data.connection.temp_table, the default)
    assert len(release_queries) == len(RELEASES), release_queries
    assert all(q.lstrip().upper().startswith("CREATE TEMPORARY TABLE") for q in release_queries)
    n_records = len(wide_tables()["records"])
    # what came back to Python: per-cluster tables of the benchmark, histograms and counts
    assert max(fetched) < 20_000 < n_records, sorted(fetched)[-5:]
    assert not (tmp_path / "project" / "er_data").exists()  # no release table written


@pytest.mark.sqlite
def test_long_layout_on_sqlite_equals_pandas(tmp_path, pandas_run, monkeypatch):
    import sqlalchemy as sa
    from support.sourcetools import count_statements

    tables = wide_tables()
    wide = tables.pop("predictions")
    long = pd.concat([pd.DataFrame({"mention_id": wide["mention_id"], "release": label,
                                    "inventor_id": wide[f"inventor_id_{label.replace('-', '')}"]})
                      for label in RELEASES], ignore_index=True).dropna(subset=["inventor_id"])
    db = tmp_path / "warehouse.db"
    engine = sa.create_engine(f"sqlite:///{db}")
    for name, frame in {**tables, "predictions_long": long}.items():
        frame.to_sql(name, engine, index=False)
    with engine.begin() as conn:  # a warehouse's keys are indexed: the joins stay fast without temp tables
        conn.execute(sa.text("CREATE INDEX long_release ON predictions_long (release, mention_id)"))
        conn.execute(sa.text("CREATE INDEX records_id ON records (mention_id)"))
        conn.execute(sa.text("CREATE INDEX benchmark_id ON benchmark (mention_id)"))
    engine.dispose()
    section = sql_section(f"sqlite:///{db}", {"records": "records", "predictions": "predictions_long",
                                              "benchmark": "benchmark"})
    section = section.replace('columns: "inventor_id_*", batch_column: inventor_id',
                              "release_column: release, prediction_column: inventor_id")
    # and without temporary tables: every check aggregates the release's query itself
    section = section.replace('"}\n', '", temp_table: false}\n', 1)
    assert "temp_table: false" in section
    # both releases in the checkpoint (the drift checks' previous release), one validated: time
    path = engine_checkpoint(tmp_path, "long", section, releases=RELEASES)
    with count_statements("er_ids") as release_queries:
        report = run_quietly(path, RELEASES[1:])
    assert_same(observed(report), {k: v for k, v in pandas_run.items() if k[0] == RELEASES[1]})
    assert len(release_queries) > 10 and not any("TEMPORARY" in q.upper() for q in release_queries)


@pytest.mark.postgres
def test_postgres_equals_pandas(tmp_path, pandas_run, monkeypatch):
    from support.sourcetools import postgres_warehouse

    url = postgres_url()
    names = postgres_warehouse(url, wide_tables())
    monkeypatch.setenv("WAREHOUSE_URL", url)
    path = engine_checkpoint(tmp_path, "postgres", sql_section("${WAREHOUSE_URL}", names))
    assert_same(observed(run_quietly(path)), pandas_run)


@pytest.mark.spark
@pytest.mark.skipif(not spark_available(), reason="pyspark is not installed")
def test_spark_equals_pandas_and_collects_no_record_table(tmp_path, pandas_run, monkeypatch):
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[2]").config("spark.sql.shuffle.partitions", "4")
             .config("spark.ui.enabled", "false").getOrCreate())
    for name, frame in wide_tables().items():
        frame.to_parquet(tmp_path / f"{name}.parquet", index=False)
    spark.read.parquet(str(tmp_path / "records.parquet")).createOrReplaceTempView("er_records")
    section = f"""data:
  engine: spark
  records: {{table: er_records, id_column: mention_id}}
  predictions: {{path: ../predictions.parquet, id_column: mention_id, columns: "inventor_id_*", batch_column: inventor_id}}
  benchmark: {{query: "select * from parquet.`{tmp_path / 'benchmark.parquet'}`", id_column: mention_id, reference_column: benchmark_id}}
  name: {{columns: [name_first, name_last], separator: " ", output_column: full_name}}
"""
    path = engine_checkpoint(tmp_path, "spark", section)
    DataFrame = type(spark.range(1))  # noqa: N806 - the session's DataFrame class (classic or Connect)
    fetched: list[int] = []
    collect, to_pandas = DataFrame.collect, DataFrame.toPandas

    def counted_collect(self):
        rows = collect(self)
        fetched.append(len(rows))
        return rows

    def counted_to_pandas(self):
        frame = to_pandas(self)
        fetched.append(len(frame))
        return frame

    monkeypatch.setattr(DataFrame, "collect", counted_collect)
    monkeypatch.setattr(DataFrame, "toPandas", counted_to_pandas)
    report = run_quietly(path)
    monkeypatch.undo()
    assert_same(observed(report), pandas_run)
    assert fetched and max(fetched) < 20_000 < len(wide_tables()["records"]), sorted(fetched)[-5:]
    shutil.rmtree(tmp_path / "project", ignore_errors=True)
