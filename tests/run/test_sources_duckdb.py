"""The demo checkpoint with ``table:`` on a DuckDB file (``duckdb:///``, through GX's generic
SQL source and duckdb-engine) observes what the files run observes (issue 32).

Table reflection on DuckDB used to stop the run with exit 2: SQLAlchemy's PostgreSQL dialect,
which duckdb-engine derives from, reflects a table through ``pg_catalog.pg_collation``.
"""

from __future__ import annotations

import pytest
from test_sources_engines import (
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
