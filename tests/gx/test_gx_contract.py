"""Contract tests for the undocumented GX 1.x APIs the plugin relies on (the supported range,
pyproject.toml; .ci/compat runs them on its lowest and newest GX).

If one of these fails after a GX upgrade, the plugin needs porting before the range moves.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import great_expectations as gx
import numpy as np
import pandas as pd
import pytest
from great_expectations.expectations.registry import get_expectation_impl, get_renderer_impl
from great_expectations.render import LegacyDiagnosticRendererType, LegacyRendererType
from packaging.requirements import Requirement
from support.gxtools import validate_frame
from support.paths import REPO

import er_expectations as erx
from er_expectations.config import default_registry
from er_expectations.engines.pandas import release as pandas_engine
from er_expectations.gx import expectation_names
from er_expectations.gx.expectations import (
    ExpectAverageClusterSizeToBeBetween,
    ExpectEstimatedBCubedFToBeBetween,
    ExpectEstimatedPairwiseFToBeBetween,
    ExpectEstimatedPairwisePrecisionToBeBetween,
    ExpectEstimatedPairwiseRecallToBeBetween,
    ExpectHillNumberToBeBetween,
    ExpectHomonymyRateToBeBetween,
    ExpectMatchingRateToBeBetween,
    ExpectStatisticToMatchBenchmarkEstimate,
)


def test_gx_version_is_in_the_declared_range():
    """The installed GX lies in the range pyproject.toml declares (the releases .ci/compat runs
    this suite on): a GX outside it has never been tested."""
    declared = [d for d in (REPO / "pyproject.toml").read_text(encoding="utf-8").splitlines()
                if d.strip().startswith('"great-expectations')]
    assert len(declared) == 1, "pyproject.toml must declare great-expectations once"
    spec = Requirement(declared[0].strip().rstrip(",").strip('"')).specifier
    assert spec.contains(gx.__version__), f"GX {gx.__version__} is outside the declared {spec}"
    assert not spec.contains("1.15.1") and not spec.contains("1.25.0"), spec


def test_compat_tests_the_installed_wheel():
    """Under .ci/compat the package is the wheel installed in that environment, not this checkout."""
    site = os.environ.get("ER_COMPAT_SITE")
    if not site:
        pytest.skip("only under .ci/compat (ER_COMPAT_SITE: where the wheel is installed)")
    assert Path(erx.__file__).resolve().parent == Path(site).resolve()


def test_every_public_expectation_is_registered_on_import():
    names = expectation_names()
    assert sorted(names) == sorted(default_registry()), "GX classes and the YAML registry must list the same expectations"
    for name in names:
        impl = get_expectation_impl(name)
        assert impl.__module__.startswith("er_expectations.gx.expectations")


@pytest.mark.parametrize("name", sorted(default_registry()))
def test_our_renderers_are_the_ones_gx_uses(name):
    observed = get_renderer_impl(name, LegacyDiagnosticRendererType.OBSERVED_VALUE)
    assert observed is not None and observed.renderer.__qualname__.startswith("ERExpectation.")
    prescriptive = get_renderer_impl(name, LegacyRendererType.PRESCRIPTIVE)
    assert prescriptive is not None and prescriptive.renderer.__qualname__.startswith("ERExpectation.")


def _frame(seed: int = 0, n: int = 3000) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    true = rng.zipf(2.0, size=n // 2).clip(max=40)
    truth = np.repeat(np.arange(true.size), true)[:n]
    pred = np.where(rng.random(truth.size) < 0.9, truth, rng.integers(0, truth.max() + 1, truth.size))
    sampled = rng.choice(np.unique(truth), size=60, replace=False)
    names = np.array([f"name{k % 300}" for k in truth])
    return pd.DataFrame({
        "record": [f"r{i}" for i in range(truth.size)],
        "pred": [f"p{x}" for x in pred],
        "ref": np.where(np.isin(truth, sampled), [f"t{x}" for x in truth], None),
        "name": names,
    })


def test_heavy_aggregate_runs_once_per_batch_for_many_expectations(context, monkeypatch):
    calls = {"sample": 0, "table": 0, "factorize": 0}
    original_factorize = pandas_engine._factorize

    def counted_factorize(values):
        calls["factorize"] += 1
        return original_factorize(values)

    monkeypatch.setattr(pandas_engine, "_factorize", counted_factorize)
    original_sample = pandas_engine.PandasRelease.benchmark_sample
    original_table = pandas_engine.PandasRelease.clustering_table

    def counted_sample(self, **kw):
        calls["sample"] += 1
        return original_sample(self, **kw)

    def counted_table(self, **kw):
        calls["table"] += 1
        return original_table(self, **kw)

    monkeypatch.setattr(pandas_engine.PandasRelease, "benchmark_sample", counted_sample)
    monkeypatch.setattr(pandas_engine.PandasRelease, "clustering_table", counted_table)
    common = {"prediction_column": "pred", "reference_column": "ref"}
    expectations = [
        ExpectEstimatedPairwisePrecisionToBeBetween(**common, min_value=0.0),
        ExpectEstimatedPairwiseRecallToBeBetween(**common, min_value=0.0),
        ExpectEstimatedPairwiseFToBeBetween(**common, min_value=0.0, beta=2.0),
        ExpectEstimatedBCubedFToBeBetween(**common, min_value=0.0),
        ExpectStatisticToMatchBenchmarkEstimate(**common, statistic="matching_rate"),
        ExpectMatchingRateToBeBetween(prediction_column="pred", min_value=0.0),
        ExpectAverageClusterSizeToBeBetween(prediction_column="pred", min_value=1.0),
        ExpectHillNumberToBeBetween(prediction_column="pred", q=2, min_value=0.0),
    ]
    res = validate_frame(context, _frame(), expectations, "once")
    assert all(r.exception_info.get("raised_exception") is not True for r in res.results)
    assert len(res.results) == len(expectations)
    # the prediction column is factorised once per batch, shared by both aggregates
    assert calls == {"sample": 1, "table": 1, "factorize": 1}


def test_results_equal_the_python_api_and_are_json(context):
    df = _frame(seed=3)
    api = erx.estimate(df, prediction="pred", reference="ref", beta=2.0, ci_level=0.9)
    summary = erx.summarize(df, cluster="pred", name="name", hill_orders=(math.inf,))
    common = {"prediction_column": "pred", "reference_column": "ref", "ci_level": 0.9}
    expectations = [
        ExpectEstimatedPairwiseFToBeBetween(**common, min_value=0.0, beta=2.0, bound="interval"),
        ExpectEstimatedPairwisePrecisionToBeBetween(**common, min_value=0.0),
        ExpectHillNumberToBeBetween(prediction_column="pred", q="inf", min_value=0.0),
        ExpectHomonymyRateToBeBetween(prediction_column="pred", name_column="name", max_value=1.0),
    ]
    res = validate_frame(context, df, expectations, "api")
    by_type = {r.expectation_config.type: r for r in res.results}
    f = by_type["expect_estimated_pairwise_f_to_be_between"].result["details"]
    assert f["estimate"] == pytest.approx(api.loc["pairwise_f", "estimate"], rel=1e-12)
    assert f["std_error"] == pytest.approx(api.loc["pairwise_f", "std_error"], rel=1e-12)
    assert f["ci_lower"] == pytest.approx(api.loc["pairwise_f", "ci_lower"], rel=1e-12)
    assert f["ci_level"] == 0.9 and f["clusters"] == api.loc["pairwise_f", "clusters"]
    p = by_type["expect_estimated_pairwise_precision_to_be_between"].result
    assert p["observed_value"] == pytest.approx(api.loc["pairwise_precision", "estimate"], rel=1e-12)
    hill = by_type["expect_hill_number_to_be_between"].result["observed_value"]
    assert hill == pytest.approx(summary["hill_number_inf"], rel=1e-12)
    hom = by_type["expect_homonymy_rate_to_be_between"].result["observed_value"]
    assert hom == pytest.approx(summary["homonymy_rate"], rel=1e-12)
    json.dumps(res.to_json_dict())  # everything in a result must be JSON-safe


def test_interval_bound_is_stricter_than_point_bound(context):
    df = _frame(seed=5)
    est = erx.estimate(df, prediction="pred", reference="ref", metrics=["pairwise_recall"]).iloc[0]
    threshold = (est.estimate + est.ci_lower) / 2  # point estimate above, lower CI bound below
    common = {"prediction_column": "pred", "reference_column": "ref", "min_value": float(threshold)}
    res = validate_frame(context, df, [
        ExpectEstimatedPairwiseRecallToBeBetween(**common, bound="estimate"),
        ExpectEstimatedPairwiseRecallToBeBetween(**common, bound="interval"),
    ], "bounds")
    outcome = {r.expectation_config.kwargs.get("bound", "estimate"): r.success for r in res.results}
    assert outcome == {"estimate": True, "interval": False}
    failed = next(r for r in res.results if not r.success)
    top = failed.result["details"]["top_clusters"]
    assert top and all(t["error_share"] > 0 for t in top)
    shares = [t["error_share"] for t in top]
    assert shares == sorted(shares, reverse=True)


def test_statistic_match_flags_a_prediction_outside_the_interval(context):
    df = _frame(seed=7)
    merged = df.assign(pred="everything")  # one giant cluster: matching rate 1.0
    res = validate_frame(context, merged, [
        ExpectStatisticToMatchBenchmarkEstimate(prediction_column="pred", reference_column="ref",
                                                statistic="average_cluster_size"),
    ], "match")
    r = res.results[0]
    assert r.success is False
    assert r.result["observed_value"] == pytest.approx(len(df))
    assert "above the 95 % interval of the true value" in r.result["details"]["note"]


def test_bad_kwargs_are_rejected_with_the_parameter_named():
    with pytest.raises(Exception, match="min_value"):
        ExpectMatchingRateToBeBetween(prediction_column="pred")
    with pytest.raises(Exception, match="ci_level"):
        ExpectEstimatedPairwiseRecallToBeBetween(prediction_column="p", reference_column="r", min_value=0.5,
                                                 ci_level=95)
    with pytest.raises(Exception, match="q"):
        ExpectHillNumberToBeBetween(prediction_column="p", q=-1, min_value=0)
    with pytest.raises(Exception, match="name_column"):
        ExpectStatisticToMatchBenchmarkEstimate(prediction_column="p", reference_column="r",
                                                statistic="homonymy_rate")


def test_suite_round_trips_through_a_file_context(tmp_path):
    ctx = gx.get_context(mode="file", project_root_dir=tmp_path)
    suite = gx.ExpectationSuite(name="rt", expectations=[
        ExpectHillNumberToBeBetween(prediction_column="p", q="inf", min_value=1.0),
        ExpectEstimatedPairwiseFToBeBetween(prediction_column="p", reference_column="r", min_value=0.5, beta=0.5,
                                            weights={"column": "w"}, bound="interval"),
    ])
    ctx.suites.add(suite)
    again = gx.get_context(mode="file", project_root_dir=tmp_path).suites.get("rt")
    kinds = [e.expectation_type for e in again.expectations]
    assert kinds == ["expect_hill_number_to_be_between", "expect_estimated_pairwise_f_to_be_between"]
    assert again.expectations[0].q == "inf"
    assert again.expectations[1].weights == {"column": "w"} and again.expectations[1].beta == 0.5


def test_the_runner_uses_no_private_gx_api():
    """The runner stores one checkpoint per release, runs each with ``Checkpoint.run`` and builds
    Data Docs once with ``build_data_docs``: public GX APIs only (no ``._name`` of a GX object)."""
    import re

    run_layer = REPO / "er_expectations" / "run"
    source = "\n".join(p.read_text(encoding="utf-8") for p in sorted(run_layer.rglob("*.py")))
    assert "def run_checkpoint" in source
    assert not re.search(r"\b(combined|checkpoint|ctx|context|cp|vd)\._[a-z]", source)
    assert "SLF001" not in source
