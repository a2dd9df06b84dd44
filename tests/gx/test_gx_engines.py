"""Every expectation family runs on GX's pandas, SQL and Spark engines with the same results.

The same frame is validated through a pandas datasource, a SQLite datasource (and
PostgreSQL when ``ER_TEST_POSTGRES_URL`` is set) and a Spark datasource (when pyspark is
installed; under CI=true it must be). The observed values must agree to 1e-9.
"""

from __future__ import annotations

import math
import os
import uuid

import great_expectations as gx
import pandas as pd
import pytest
from great_expectations.data_context.types.base import ProgressBarsConfig
from support.enginetools import IN_CI, engine_params
from support.releases import release_frame

import er_expectations.gx  # noqa: F401 - registers the expectations
from er_expectations.gx.expectations import (
    ExpectAverageClusterSizeToBeBetween,
    ExpectEstimatedBCubedFToBeBetween,
    ExpectEstimatedPairwisePrecisionToBeBetween,
    ExpectEstimatedPairwiseRecallToBeBetween,
    ExpectHillNumberToBeBetween,
    ExpectHomonymyRateToBeBetween,
    ExpectMatchingRateToBeBetween,
    ExpectNameVariationRateToBeBetween,
    ExpectStatisticToMatchBenchmarkEstimate,
    ExpectSubgroupDisparityToBeBelow,
)

sa = pytest.importorskip("sqlalchemy")
_IN_CI = IN_CI
_ENGINES = engine_params()


def _suite(name: str) -> gx.ExpectationSuite:
    common = {"prediction_column": "pred", "record_id_column": "record"}
    bench = {**common, "reference_column": "ref"}
    return gx.ExpectationSuite(name=name, expectations=[
        ExpectAverageClusterSizeToBeBetween(**common, min_value=1.0),
        ExpectMatchingRateToBeBetween(**common, min_value=0.0),
        ExpectHillNumberToBeBetween(**common, q=2, min_value=1.0),
        ExpectHomonymyRateToBeBetween(**common, name_column="name", max_value=1.0),
        ExpectNameVariationRateToBeBetween(**common, name_column="name", max_value=1.0),
        ExpectEstimatedPairwisePrecisionToBeBetween(**bench, min_value=0.5),
        ExpectEstimatedPairwiseRecallToBeBetween(**bench, min_value=0.5, weights="uniform"),
        ExpectEstimatedBCubedFToBeBetween(**bench, min_value=0.5, ci_method="bootstrap", n_boot=200, seed=3),
        ExpectStatisticToMatchBenchmarkEstimate(**bench, statistic="homonymy_rate", name_column="name"),
        ExpectSubgroupDisparityToBeBelow(**bench, group_column="grp", max_disparity=0.5, min_draws=5),
    ])


def _context():
    ctx = gx.get_context(mode="ephemeral")
    ctx.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    return ctx


def _validate_pandas(df: pd.DataFrame):
    ctx = _context()
    bd = (ctx.data_sources.add_pandas("pd").add_dataframe_asset("release")
          .add_batch_definition_whole_dataframe("all"))
    return bd.get_batch(batch_parameters={"dataframe": df}).validate(ctx.suites.add(_suite("pandas")))


def _validate(engine: str, df: pd.DataFrame, request):
    ctx = _context()
    if engine == "spark":
        from pyspark.sql import SparkSession

        spark = SparkSession.builder.master("local[2]").config("spark.sql.shuffle.partitions", "4") \
            .config("spark.ui.enabled", "false").getOrCreate()
        sdf = spark.createDataFrame(df.astype(object).where(df.notna(), None))
        bd = (ctx.data_sources.add_spark("spark").add_dataframe_asset("release")
              .add_batch_definition_whole_dataframe("all"))
        return bd.get_batch(batch_parameters={"dataframe": sdf}).validate(ctx.suites.add(_suite("spark")))
    table = f"release_{uuid.uuid4().hex[:8]}"
    if engine == "sqlite":
        db = request.getfixturevalue("tmp_path") / "release.db"
        url = f"sqlite:///{db}"
        ds = ctx.data_sources.add_sqlite("sql", connection_string=url)
    else:
        url = os.environ.get("ER_TEST_POSTGRES_URL")
        if not url:
            pytest.fail("CI=true but ER_TEST_POSTGRES_URL is not set: .ci/run must start PostgreSQL")
        ds = ctx.data_sources.add_postgres("sql", connection_string=url)
    engine_ = sa.create_engine(url)
    df.to_sql(table, engine_, index=False)
    engine_.dispose()
    bd = ds.add_table_asset("release", table_name=table).add_batch_definition_whole_table("all")
    return bd.get_batch().validate(ctx.suites.add(_suite("sql")))


def _observed(result) -> dict:
    out = {}
    for r in result.results:
        assert not r.exception_info.get("raised_exception"), r.exception_info
        for info in r.exception_info.values() if isinstance(r.exception_info, dict) else ():
            assert not (isinstance(info, dict) and info.get("raised_exception")), info
        cfg = r.expectation_config
        key = (cfg.type, cfg.kwargs.get("q"), cfg.kwargs.get("statistic"))
        out[key] = r.result
    return out


@pytest.mark.parametrize("ids", ["str", "int"])
@pytest.mark.parametrize("engine", _ENGINES)
def test_results_equal_pandas(engine, ids, request):
    df = release_frame(ids=ids)
    want = _observed(_validate_pandas(df))
    got = _observed(_validate(engine, df, request))
    assert got.keys() == want.keys()
    for key, w in want.items():
        g = got[key]
        wv, gv = w["observed_value"], g["observed_value"]
        assert isinstance(wv, float) and not math.isnan(wv), (key, w)
        assert gv == pytest.approx(wv, rel=1e-9), key
        for detail in ("std_error", "ci_lower", "ci_upper", "draws", "clusters"):
            if detail in w.get("details", {}):
                assert g["details"][detail] == pytest.approx(w["details"][detail], rel=1e-9, nan_ok=True), (key, detail)
        for gw, gg in zip(w["details"].get("groups", []), g["details"].get("groups", []), strict=True):
            assert gg["group"] == gw["group"], key
            for detail in ("estimate", "std_error", "disparity", "disparity_se", "p_adjusted", "draws"):
                assert gg[detail] == pytest.approx(gw[detail], rel=1e-9, nan_ok=True), (key, gw["group"], detail)


def test_an_expectation_for_fewer_engines_says_so_on_sql(tmp_path, monkeypatch):
    """The engine rule (ERExpectation.engines) stays for checks that cannot run everywhere: on
    another engine one clear error naming the engines and why, the other expectations still run.
    Every family runs on every engine today, so the rule is tried on a patched expectation."""
    from er_expectations.gx.expectations import ExpectHillNumberToBeBetween as Patched
    from er_expectations.gx.expectations.base import PANDAS_ONLY

    monkeypatch.setattr(Patched, "engines", PANDAS_ONLY)
    monkeypatch.setattr(Patched, "engines_note", "a reason given by the expectation")
    url = f"sqlite:///{tmp_path / 'release.db'}"
    engine_ = sa.create_engine(url)
    release_frame().to_sql("release", engine_, index=False)
    engine_.dispose()
    ctx = _context()
    batch = (ctx.data_sources.add_sqlite("sql", connection_string=url).add_table_asset("release", table_name="release")
             .add_batch_definition_whole_table("all").get_batch())
    suite = ctx.suites.add(gx.ExpectationSuite(name="pandas_only", expectations=[
        Patched(prediction_column="pred", q=2, min_value=1.0),
        ExpectMatchingRateToBeBetween(prediction_column="pred", min_value=0.0),
    ]))
    results = {r.expectation_config.type: r for r in batch.validate(suite).results}
    assert results["expect_matching_rate_to_be_between"].success is True  # runs on SQL
    r = results["expect_hill_number_to_be_between"]
    (info,) = [v for v in r.exception_info.values() if isinstance(v, dict)] or [r.exception_info]
    message = info["exception_message"]
    assert r.success is False and "No provider found" not in message
    assert "expect_hill_number_to_be_between runs on pandas datasources (a reason given by the expectation)" \
        in message and "SqliteExecutionEngine" in message
