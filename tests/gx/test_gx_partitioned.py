"""GX's daily batches on SQL (issue 30 item 4) through GX's own API: a table of three releases,
``add_batch_definition_daily`` on its date column, an estimate and a summary check per day.
Each day's results equal the pandas engine's on that release alone, and the SQL engine reads
each day's batch once into a temporary table (``engines/sql/batch.py``), then never filters the
stacked table again."""

from __future__ import annotations

import datetime

import great_expectations as gx
import pytest
from great_expectations.data_context.types.base import ProgressBarsConfig
from support.enginetools import engine_params, postgres_url
from support.partitioned import DAYS, releases

import er_expectations.gx  # noqa: F401 - registers the expectations
from er_expectations.engines.sql import batch as batches
from er_expectations.gx.expectations import (
    ExpectAverageClusterSizeToBeBetween,
    ExpectEstimatedPairwiseRecallToBeBetween,
)

sa = pytest.importorskip("sqlalchemy")


def _suite(ctx, name):
    return ctx.suites.add(gx.ExpectationSuite(name=name, expectations=[
        ExpectAverageClusterSizeToBeBetween(prediction_column="pred", min_value=0.0),
        ExpectEstimatedPairwiseRecallToBeBetween(prediction_column="pred", reference_column="ref",
                                                 weights="uniform", min_value=0.0),
    ]))


def _observed(result) -> list:
    return [round(float(r.result["observed_value"]), 12) for r in result.results]


@pytest.mark.parametrize("kind", [p.values[0] for p in engine_params() if p.values[0] != "spark"])
def test_daily_batches_equal_each_release_alone(kind, tmp_path):
    every = releases().assign(release_date=lambda d: d["release_date"].map(
        lambda day: datetime.datetime.combine(day, datetime.time())))
    every["ref"] = every["ref"].astype("string")  # GX's SQL asset; ids as text, as a user's would be
    url = f"sqlite:///{tmp_path / 'stacked.db'}" if kind == "sqlite" else postgres_url()
    table = f"stacked_daily_{kind}"
    engine = sa.create_engine(url)
    every.to_sql(table, engine, index=False, if_exists="replace")
    statements: list[str] = []

    def record(conn, cursor, statement, *args):
        statements.append(statement)

    ctx = gx.get_context(mode="ephemeral")
    ctx.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    sa.event.listen(sa.engine.Engine, "before_cursor_execute", record)
    try:
        source = (ctx.data_sources.add_sqlite("sql", connection_string=url) if kind == "sqlite"
                  else ctx.data_sources.add_postgres("sql", connection_string=url))
        asset = source.add_table_asset("releases", table_name=table)
        daily = asset.add_batch_definition_daily("daily", column="release_date")
        files = ctx.data_sources.add_pandas("files")
        got, want = {}, {}
        for day in DAYS:
            when = {"year": day.year, "month": day.month, "day": day.day}
            got[day] = _observed(daily.get_batch(batch_parameters=when).validate(_suite(ctx, f"sql-{day}")))
            alone = every[every["release_date"].dt.date == day].drop(columns="release_date")
            frame = files.add_dataframe_asset(f"alone-{day}").add_batch_definition_whole_dataframe("all")
            want[day] = _observed(frame.get_batch(batch_parameters={"dataframe": alone}).validate(
                _suite(ctx, f"pandas-{day}")))
    finally:
        sa.event.remove(sa.engine.Engine, "before_cursor_execute", record)
        batches.release_all()
        with engine.begin() as conn:
            conn.execute(sa.text(f"DROP TABLE {table}"))
        engine.dispose()
    assert got == want and all(len(v) == 2 for v in got.values())
    assert len({tuple(v) for v in got.values()}) == len(DAYS)  # three different releases
    assert len({s for s in statements if s.startswith("CREATE TEMPORARY TABLE erx_batch_")}) == len(DAYS)
