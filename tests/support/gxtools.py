"""Helpers of the tests that validate frames with GX (one place for the boilerplate): a quiet
context, a frame validated through a pandas datasource, or through a datasource of any engine
(pandas, SQLite, PostgreSQL, DuckDB, Spark) with its results compared to 1e-9."""

from __future__ import annotations

import math
import os
import uuid
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from support.enginetools import duckdb_load, spark_frame, spark_session


def quiet_context() -> Any:
    """An ephemeral GX context without progress bars."""
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig

    ctx = gx.get_context(mode="ephemeral")
    ctx.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    return ctx


def validate_frame(context: Any, df: Any, expectations: list, name: str) -> Any:
    """Validate ``df`` with a new suite ``name`` of ``expectations`` (``batch.validate``)."""
    import great_expectations as gx

    suite = context.suites.add(gx.ExpectationSuite(name=name, expectations=expectations))
    ds = context.data_sources.add_pandas(f"ds_{name}")
    batch_def = ds.add_dataframe_asset("asset").add_batch_definition_whole_dataframe("whole")
    return batch_def.get_batch(batch_parameters={"dataframe": df}).validate(suite)


def sql_url(engine: str, tmp_path: Path) -> str:
    if engine == "sqlite":
        return f"sqlite:///{tmp_path / f'{uuid.uuid4().hex[:8]}.db'}"
    if engine == "duckdb":
        return f"duckdb:///{tmp_path / f'{uuid.uuid4().hex[:8]}.duckdb'}"
    url = os.environ.get("ER_TEST_POSTGRES_URL")
    if not url:
        pytest.fail("CI=true but ER_TEST_POSTGRES_URL is not set: .ci/run must start PostgreSQL")
    return url


def validate(engine: str, df: pd.DataFrame | None, expectations: list, tmp_path: Path, *,
             result_format: str = "COMPLETE", loaded: tuple[str, str] | None = None):
    """Validate ``expectations`` on ``df`` through a GX datasource of ``engine``.

    ``loaded`` = (database URL, table name): a SQL table the caller already wrote (``df`` is
    then None, and the table is the caller's to drop)."""
    import great_expectations as gx
    import sqlalchemy as sa

    ctx = quiet_context()
    suite = ctx.suites.add(gx.ExpectationSuite(name=f"s_{uuid.uuid4().hex[:6]}", expectations=expectations))
    if engine == "pandas":
        bd = ctx.data_sources.add_pandas("pd").add_dataframe_asset("release").add_batch_definition_whole_dataframe("all")
        return bd.get_batch(batch_parameters={"dataframe": df}).validate(suite, result_format=result_format)
    if engine == "spark":
        sdf = spark_frame(spark_session(), df)
        bd = ctx.data_sources.add_spark("spark").add_dataframe_asset("release").add_batch_definition_whole_dataframe("all")
        return bd.get_batch(batch_parameters={"dataframe": sdf}).validate(suite, result_format=result_format)
    url, table = loaded or (sql_url(engine, tmp_path), f"release_{uuid.uuid4().hex[:8]}")
    bind = sa.create_engine(url)
    try:
        if loaded is None and engine == "duckdb":
            duckdb_load(bind, table, df)
            bind.dispose()  # GX opens the file itself (DuckDB: one configuration per process)
        elif loaded is None:
            df.to_sql(table, bind, index=False)
        ds = (ctx.data_sources.add_sqlite("sql", connection_string=url) if engine == "sqlite"
              else ctx.data_sources.add_sql("sql", connection_string=url) if engine == "duckdb"
              else ctx.data_sources.add_postgres("sql", connection_string=url))
        bd = ds.add_table_asset("release", table_name=table).add_batch_definition_whole_table("all")
        return bd.get_batch().validate(suite, result_format=result_format)
    finally:
        if engine == "postgres" and loaded is None:
            with bind.begin() as conn:
                conn.execute(sa.text(f'DROP TABLE IF EXISTS "{table}"'))
        bind.dispose()


def results(result) -> dict:
    """{(type, metric/statistic, q): (success, result)}; no expectation may have raised."""
    out = {}
    for r in result.results:
        info = r.exception_info or {}
        infos = [v for v in info.values() if isinstance(v, dict)] or [info]
        for i in infos:
            assert not i.get("raised_exception"), i.get("exception_message")
        cfg = r.expectation_config
        key = (cfg.type, cfg.kwargs.get("metric") or cfg.kwargs.get("statistic"), cfg.kwargs.get("q"))
        assert key not in out, key
        out[key] = (r.success, r.result)
    return out


def assert_same(got, want, where=()):
    """Equal, with floats to 1e-9 (NaN equals NaN); ints, text, flags and lists exactly."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and got.keys() == want.keys(), (where, sorted(got), sorted(want))
        for key in want:
            assert_same(got[key], want[key], (*where, key))
    elif isinstance(want, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(want), (where, got, want)
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            assert_same(g, w, (*where, i))
    elif isinstance(want, float) and not isinstance(want, bool):
        assert isinstance(got, (int, float)), (where, got, want)
        assert (math.isnan(want) and math.isnan(got)) or got == pytest.approx(want, rel=1e-9, abs=1e-12), \
            (where, got, want)
    else:
        assert got == want and type(got) is type(want), (where, got, want)


def assert_results_equal(got: dict, want: dict) -> None:
    assert got.keys() == want.keys()
    for key, (ok, res) in want.items():
        assert got[key][0] == ok, key
        assert_same(got[key][1], res, key)
