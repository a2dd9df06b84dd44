"""Validate a PatentsView release where it lives: a SQL database (SQLite here) and Spark.

The record table never comes into Python: the er-expectations metrics aggregate it inside
the database (SQLAlchemy Core group-bys) or in Spark, and only per-cluster tables come back.
The same suite gives the same numbers as on pandas (tests/engines/test_common.py).

    python examples/sql_and_spark.py            # SQLite, and Spark when pyspark is installed
    python examples/sql_and_spark.py --no-spark

For a warehouse, replace the SQLite datasource by ``context.data_sources.add_postgres(...)``
(or ``add_sql`` with any SQLAlchemy URL; keep credentials in environment variables, e.g.
``connection_string="${WAREHOUSE_URL}"``, which GX substitutes), and for a Spark table use
``spark.table("catalog.schema.table")`` as the dataframe of a Spark dataframe asset.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import great_expectations as gx
import pandas as pd
from great_expectations.data_context.types.base import ProgressBarsConfig

import er_expectations.gx  # noqa: F401 - registers the expectations with GX
from er_expectations.gx.expectations import (
    ExpectAverageClusterSizeToBeBetween,
    ExpectEstimatedPairwisePrecisionToBeBetween,
    ExpectEstimatedPairwiseRecallToBeBetween,
)

DATA = Path(er_expectations.__file__).parent / "data" / "patentsview"
RELEASE = "inventor_id_20211230"


def release_table() -> pd.DataFrame:
    """One row per mention: its predicted inventor in the release and its benchmark inventor."""
    pred = pd.read_parquet(DATA / "predictions.parquet", columns=["mention_id", RELEASE])
    bench = pd.read_parquet(DATA / "benchmark.parquet")
    return pred.merge(bench, on="mention_id", how="left").rename(columns={RELEASE: "inventor_id"})


def suite(name: str) -> gx.ExpectationSuite:
    common = {"prediction_column": "inventor_id", "record_id_column": "mention_id"}
    return gx.ExpectationSuite(name=name, expectations=[
        ExpectAverageClusterSizeToBeBetween(**common, min_value=1.0, max_value=20.0),
        ExpectEstimatedPairwisePrecisionToBeBetween(**common, reference_column="benchmark_id", min_value=0.8),
        ExpectEstimatedPairwiseRecallToBeBetween(**common, reference_column="benchmark_id", min_value=0.9),
    ])


def show(engine: str, result) -> None:
    print(f"{engine}: success={result.success}")
    for r in result.results:
        print(f"  {r.expectation_config.type}: observed {r.result.get('observed_value'):.4f}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--no-spark", action="store_true", help="skip the Spark part")
    args = ap.parse_args(argv)
    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    table = release_table()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "warehouse.db"
        url = f"sqlite:///{db}"
        import sqlalchemy as sa

        engine = sa.create_engine(url)
        table.to_sql("inventor_mentions", engine, index=False)  # stands in for a warehouse table
        engine.dispose()
        source = context.data_sources.add_sqlite("warehouse", connection_string=url)
        batch = (source.add_table_asset("mentions", table_name="inventor_mentions")
                 .add_batch_definition_whole_table("all").get_batch())
        show("SQLite", batch.validate(context.suites.add(suite("sql"))))
    if args.no_spark:
        return 0
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        print("Spark: skipped (pip install 'er-expectations[spark]')")
        return 0
    spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
             .config("spark.sql.shuffle.partitions", "4").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "inventor_mentions.parquet"
        table.to_parquet(path, index=False)  # stands in for a lake table
        frame = spark.read.parquet(str(path))  # or spark.table("catalog.schema.inventor_mentions")
        batch = (context.data_sources.add_spark("spark").add_dataframe_asset("mentions")
                 .add_batch_definition_whole_dataframe("all").get_batch(batch_parameters={"dataframe": frame}))
        show("Spark", batch.validate(context.suites.add(suite("spark"))))
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
