"""The demo checkpoint with ``table:`` on a DuckDB file (``duckdb:///``, through GX's generic
SQL source and duckdb-engine) observes what the files run observes (issue 32).

Table reflection on DuckDB used to stop the run with exit 2: SQLAlchemy's PostgreSQL dialect,
which duckdb-engine derives from, reflects a table through ``pg_catalog.pg_collation``.
"""

from __future__ import annotations

import pytest
from test_sources_engines import (
    RELEASES,
    assert_same,
    engine_checkpoint,
    observed,
    pandas_run,  # noqa: F401 - the fixture
    run_quietly,
    sql_section,
    wide_tables,
)

duckdb = pytest.importorskip("duckdb")
pytest.importorskip("duckdb_engine")


def test_duckdb_tables_equal_files(tmp_path, pandas_run, monkeypatch):  # noqa: F811
    db = tmp_path / "warehouse.duckdb"
    with duckdb.connect(str(db)) as conn:
        for name, frame in wide_tables().items():
            conn.register("frame", frame)
            conn.execute(f"create table {name} as select * from frame")
            conn.unregister("frame")
    monkeypatch.setenv("WAREHOUSE_URL", f"duckdb:///{db}")
    section = sql_section("${WAREHOUSE_URL}", {"predictions": "predictions", "benchmark": "benchmark"} | {
        "records": "records"})
    section = section.replace('{query: "select mention_id, name_first, name_last from records", ',
                              "{table: records, ")
    assert section.count("table:") == 3
    report = run_quietly(engine_checkpoint(tmp_path, "duckdb", section))
    assert_same(observed(report), pandas_run)


def test_duckdb_missing_table_is_named_with_a_hint(tmp_path, monkeypatch):
    from er_expectations.config.errors import ConfigError

    db = tmp_path / "warehouse.duckdb"
    with duckdb.connect(str(db)) as conn:
        for name, frame in wide_tables().items():
            conn.register("frame", frame)
            conn.execute(f"create table {name} as select * from frame")
            conn.unregister("frame")
    monkeypatch.setenv("WAREHOUSE_URL", f"duckdb:///{db}")
    section = sql_section("${WAREHOUSE_URL}", {"records": "records", "predictions": "predictionz",
                                                "benchmark": "benchmark"})
    with pytest.raises(ConfigError) as caught:
        run_quietly(engine_checkpoint(tmp_path, "duckdb", section))
    text = str(caught.value)
    assert "duckdb.yml:14:" in text and "data.predictions.table: table 'predictionz' does not exist" in text
    assert "predictions" in text.split("does not exist", 1)[1]  # did you mean
    assert "pg_collation" not in text


# -- data.engine: duckdb (issue 32 item 2): the DuckDB engine, a database file or files in place ---

def duckdb_section(connection: str, sources: dict[str, str]) -> str:
    """The demo's data section on engine duckdb: ``connection`` (a YAML line, or empty for an
    in-memory database) and each table's ``{table: ...}``, ``{query: ...}`` or ``{path: ...}``."""
    return f"""data:
  engine: duckdb
{connection}  records: {{{sources['records']}, id_column: mention_id}}
  predictions: {{{sources['predictions']}, id_column: mention_id, columns: "inventor_id_*", batch_column: inventor_id}}
  benchmark: {{{sources['benchmark']}, id_column: mention_id, reference_column: benchmark_id}}
  name: {{columns: [name_first, name_last], separator: " ", output_column: full_name}}
"""


def write_database(path) -> None:
    with duckdb.connect(str(path)) as conn:
        for name, frame in wide_tables().items():
            conn.register("frame", frame)
            conn.execute(f"create table {name} as select * from frame")
            conn.unregister("frame")


TABLES = {role: f"table: {role}" for role in ("records", "predictions", "benchmark")}


def count_duckdb_releases(monkeypatch) -> list[str]:
    """The batches the DuckDB engine aggregates (the engine registry's choice for GX's SQL
    batches on a DuckDB connection), one entry per release object made."""
    from er_expectations.engines.duckdb.release import DuckDbRelease

    made: list[str] = []
    original = DuckDbRelease.from_batch.__func__

    def counted(cls, table, **kwargs):
        made.append(kwargs["prediction"])
        return original(cls, table, **kwargs)

    monkeypatch.setattr(DuckDbRelease, "from_batch", classmethod(counted))
    return made


@pytest.mark.duckdb
def test_duckdb_database_file_equals_files_and_fetches_no_record_table(tmp_path, pandas_run, monkeypatch):  # noqa: F811
    from support.sourcetools import count_fetched_rows

    made = count_duckdb_releases(monkeypatch)
    write_database(tmp_path / "warehouse.duckdb")  # beside checkpoints/: the path is relative to it
    path = engine_checkpoint(tmp_path, "duckdb_file",
                             duckdb_section("  connection: {database: ../warehouse.duckdb}\n", TABLES))
    with count_fetched_rows() as fetched:
        report = run_quietly(path)
    assert_same(observed(report), pandas_run)
    assert max(fetched) < 20_000 < len(wide_tables()["records"]), sorted(fetched)[-5:]
    assert not (tmp_path / "project" / "er_data").exists()  # no release table written
    assert len(made) >= len(RELEASES)  # every release's batch aggregated by the DuckDB engine
    provenance = report.provenance
    assert provenance["engine"] == "duckdb"
    assert {"role": "connection", "engine": "duckdb", "database": "../warehouse.duckdb"} in provenance["inputs"]


@pytest.mark.duckdb
def test_duckdb_url_with_tables_equals_files(tmp_path, pandas_run, monkeypatch):  # noqa: F811
    """``url: duckdb:///...`` and ``table:`` on the DuckDB engine (reflection: no pg_collation)."""
    write_database(tmp_path / "warehouse.duckdb")
    monkeypatch.setenv("WAREHOUSE_URL", f"duckdb:///{tmp_path / 'warehouse.duckdb'}")
    path = engine_checkpoint(tmp_path, "duckdb_url",
                             duckdb_section('  connection: {url: "${WAREHOUSE_URL}"}\n', TABLES))
    assert_same(observed(run_quietly(path)), pandas_run)


@pytest.mark.duckdb
def test_duckdb_parquet_and_csv_in_place_equal_files(tmp_path, pandas_run, monkeypatch):  # noqa: F811
    """No database: Parquet and CSV files queried in place; the records never come into Python."""
    from support.sourcetools import count_fetched_rows

    made = count_duckdb_releases(monkeypatch)
    tables = wide_tables()
    tables["records"].to_csv(tmp_path / "records.csv", index=False)
    tables["predictions"].to_parquet(tmp_path / "predictions.parquet", index=False)
    half = len(tables["benchmark"]) // 2  # a glob over two Parquet files
    (tmp_path / "benchmark").mkdir()
    tables["benchmark"].iloc[:half].to_parquet(tmp_path / "benchmark" / "part-0.parquet", index=False)
    tables["benchmark"].iloc[half:].to_parquet(tmp_path / "benchmark" / "part-1.parquet", index=False)
    path = engine_checkpoint(tmp_path, "duckdb_files", duckdb_section("", {
        "records": "path: ../records.csv", "predictions": "path: ../predictions.parquet",
        "benchmark": 'path: "../benchmark/*.parquet"'}))
    with count_fetched_rows() as fetched:
        report = run_quietly(path)
    assert_same(observed(report), pandas_run)
    assert max(fetched) < 20_000 < len(tables["records"]), sorted(fetched)[-5:]
    assert {"role": "records", "path": "../records.csv"} in report.provenance["inputs"]
    assert len(made) >= len(RELEASES)


@pytest.mark.duckdb
@pytest.mark.parametrize(("connection", "sources", "key", "expected"), [
    ("", TABLES, "data.records.table", "engine duckdb without a database has no tables"),
    ('  connection: {url: "sqlite:///x.db"}\n', TABLES, "data.connection.url",
     "engine duckdb reads a DuckDB database, not sqlite"),
    ("  connection: {url: duckdb:///a.duckdb, database: a.duckdb}\n", TABLES, "data.connection",
     "give either 'url'"),
    ("  connection: {database: missing.duckdb}\n", TABLES, "data.connection.database",
     "missing.duckdb does not exist"),
    ("", {"records": "path: ../nowhere.parquet", "predictions": "path: ../nowhere.parquet",
          "benchmark": "path: ../nowhere.parquet"}, "data.records.path", "DuckDB cannot read"),
])
def test_duckdb_settings_errors_name_the_key(tmp_path, connection, sources, key, expected):
    from er_expectations.config.errors import ConfigError

    path = engine_checkpoint(tmp_path, "duckdb_bad", duckdb_section(connection, sources))
    with pytest.raises(ConfigError) as caught:
        run_quietly(path)
    text = str(caught.value)
    assert expected in text and key in text, text
