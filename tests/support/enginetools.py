"""Which engines the engine tests run on (SQLite always; PostgreSQL and Spark when available),
and a pandas frame loaded into Spark.

Under CI=true a missing PostgreSQL URL or pyspark is a failure, not a skip: .ci/run starts
the server and ./run test installs the spark extra.
"""

from __future__ import annotations

import importlib
import math
import os

import numpy as np
import pandas as pd
import pytest

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def importable(*modules: str) -> bool:
    """Whether every module imports (an optional extra's); under CI=true a missing one is an error."""
    try:
        for module in modules:
            importlib.import_module(module)
    except ImportError:
        if IN_CI:
            raise
        return False
    return True


def spark_available() -> bool:
    return importable("pyspark")


def engine_params() -> list:
    """pytest params "sqlite", "postgres", "spark", each marked with its backend."""
    params = [pytest.param("sqlite", marks=pytest.mark.sqlite)]
    if os.environ.get("ER_TEST_POSTGRES_URL") or IN_CI:
        params.append(pytest.param("postgres", marks=pytest.mark.postgres))
    if spark_available():
        params.append(pytest.param("spark", marks=pytest.mark.spark))
    return params


def duckdb_available() -> bool:
    """DuckDB and its SQLAlchemy driver (the duckdb-sql extra; required under CI=true)."""
    return importable("duckdb", "duckdb_engine")


def duckdb_params() -> list:
    """The pytest param "duckdb" (marked) when DuckDB and duckdb-engine are installed."""
    return [pytest.param("duckdb", marks=pytest.mark.duckdb)] if duckdb_available() else []


def duckdb_load(bind, name: str, df: pd.DataFrame) -> None:
    """``df`` as table ``name`` of the DuckDB database of ``bind`` (registered and copied by
    DuckDB itself; columns of Python objects become text, or BIGINT when every value is an int)."""
    with bind.connect() as conn:
        raw = conn.connection.driver_connection
        raw.register("erx_frame", df)
        try:
            raw.execute(f'CREATE TABLE "{name}" AS SELECT * FROM erx_frame')
        finally:
            raw.unregister("erx_frame")
        conn.commit()


def postgres_url() -> str:
    """The test server's URL (``ER_TEST_POSTGRES_URL``); skip without one, fail under CI=true."""
    url = os.environ.get("ER_TEST_POSTGRES_URL")
    if not url:
        if IN_CI:
            pytest.fail("CI=true but ER_TEST_POSTGRES_URL is not set")
        pytest.skip("ER_TEST_POSTGRES_URL is not set")
    return url


def spark_session():
    from pyspark.sql import SparkSession

    return (SparkSession.builder.master("local[2]").config("spark.sql.shuffle.partitions", "4")
            .config("spark.ui.enabled", "false").config("spark.sql.execution.arrow.pyspark.enabled", "true")
            .getOrCreate())


def spark_frame(spark, df: pd.DataFrame):
    """The frame as a Spark DataFrame with an explicit schema (an all-null column is text)."""
    from pyspark.sql import types as T  # noqa: N812

    fields, columns = [], {}
    for col in df.columns:
        values = df[col]
        present = values.dropna()
        lists = len(present) and all(isinstance(v, (list, tuple, np.ndarray)) for v in present)
        if lists:
            items = [i for v in present for i in v]
            whole = items and all(isinstance(i, (int, np.integer)) and not isinstance(i, bool) for i in items)
            kind = T.ArrayType(T.LongType() if whole else T.StringType())
            columns[col] = values.map(lambda v, whole=whole: None if not isinstance(v, (list, tuple, np.ndarray))
                                      else [int(i) if whole else str(i) for i in v])
            fields.append(T.StructField(str(col), kind, True))
            continue
        if pd.api.types.is_bool_dtype(values.dtype):
            kind = T.BooleanType()
        elif pd.api.types.is_integer_dtype(values.dtype) or (
                len(present) and all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in present)):
            kind = T.LongType()
        elif pd.api.types.is_float_dtype(values.dtype):
            kind = T.DoubleType()
        else:
            kind = T.StringType()
        fields.append(T.StructField(str(col), kind, True))
        if isinstance(kind, T.LongType):
            columns[col] = values.astype("Int64")
        elif isinstance(kind, T.StringType):
            columns[col] = values.astype(object).where(values.notna(), None)
        else:
            columns[col] = values
    rows = pd.DataFrame(columns)
    data = [tuple(v if isinstance(v, list) else
                  None if (v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v))) else
                  (int(v) if isinstance(v, np.integer) else v) for v in row)
            for row in rows.astype(object).itertuples(index=False, name=None)]
    return spark.createDataFrame(data, schema=T.StructType(fields))
