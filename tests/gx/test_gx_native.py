"""Native GX use: suites built in Python and run with GX's own validation definitions.

Covers the load-order guard (GX drops expectation types it does not know when it loads a
suite), suite parameters, strict bounds, result_format levels, row_condition and engines
other than pandas.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import great_expectations as gx
import numpy as np
import pandas as pd
import pytest
from great_expectations.data_context.types.base import ProgressBarsConfig
from support.paths import REPO

import er_expectations as erx
from er_expectations.core.errors import InputError
from er_expectations.gx import UnregisteredExpectationError, require_registered
from er_expectations.gx.expectations import (
    ExpectAverageClusterSizeToBeBetween,
    ExpectEstimatedPairwisePrecisionToBeBetween,
    ExpectEstimatedPairwiseRecallToBeBetween,
    ExpectMatchingRateToBeBetween,
    ExpectStatisticToMatchBenchmarkEstimate,
)

ROOT = REPO


def _frame(seed: int = 0, n: int = 3000) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    true = rng.zipf(2.0, size=n // 2).clip(max=40)
    truth = np.repeat(np.arange(true.size), true)[:n]
    pred = np.where(rng.random(truth.size) < 0.9, truth, rng.integers(0, truth.max() + 1, truth.size))
    sampled = rng.choice(np.unique(truth), size=60, replace=False)
    return pd.DataFrame({
        "pred": [f"p{x}" for x in pred],
        "ref": np.where(np.isin(truth, sampled), [f"t{x}" for x in truth], None),
        "name": [f"name{k % 300}" for k in truth],
    })


_COUNTER = iter(range(10**6))


def _run(context, df, expectations, *, result_format="SUMMARY", parameters=None):
    """Validate through a ValidationDefinition, the object GX's checkpoints run."""
    name = f"native{next(_COUNTER)}"
    suite = context.suites.add(gx.ExpectationSuite(name=name, expectations=expectations))
    batch_def = (context.data_sources.add_pandas(f"ds_{name}").add_dataframe_asset("asset")
                 .add_batch_definition_whole_dataframe("whole"))
    vd = context.validation_definitions.add(gx.ValidationDefinition(name=name, data=batch_def, suite=suite))
    return vd.run(batch_parameters={"dataframe": df}, expectation_parameters=parameters,
                  result_format=result_format)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


# -- the load-order guard ------------------------------------------------------------------

_LOAD_WITHOUT_PLUGIN = textwrap.dedent("""
    import json, sys
    import great_expectations as gx
    import pandas as pd

    root, out = sys.argv[1], sys.argv[2]
    ctx = gx.get_context(mode="file", project_root_dir=root)
    suite = ctx.suites.get("release_checks")           # er_expectations NOT imported yet
    loaded = [e.expectation_type for e in suite.expectations]
    batch = (ctx.data_sources.add_pandas("p").add_dataframe_asset("a")
             .add_batch_definition_whole_dataframe("w")
             .get_batch(batch_parameters={"dataframe": pd.DataFrame({"pred": ["a", "b", "c"]})}))
    res = batch.validate(suite)
    report = {"loaded": loaded, "success": res.success, "n_results": len(res.results),
              "plugin_imported_before_guard": "er_expectations" in sys.modules}

    import er_expectations.gx                        # too late: the suite object has lost it
    try:
        er_expectations.gx.require_registered(suite)
        report["guard"] = "passed"
    except er_expectations.gx.UnregisteredExpectationError as exc:
        report["guard"] = str(exc)
    json.dump(report, open(out, "w"))
""")


def _write_suite(root: Path) -> Path:
    ctx = gx.get_context(mode="file", project_root_dir=root)
    ctx.suites.add(gx.ExpectationSuite(name="release_checks", expectations=[
        gx.expectations.ExpectTableRowCountToBeBetween(min_value=1),
        # fails on the data of the script: no record is matched
        ExpectMatchingRateToBeBetween(prediction_column="pred", min_value=0.5),
    ]))
    path = root / "gx" / "expectations" / "release_checks.json"
    assert path.is_file()
    return path


def test_without_the_plugin_gx_drops_our_expectation_and_the_guard_refuses_the_suite(tmp_path):
    path = _write_suite(tmp_path)
    script = tmp_path / "load_without_plugin.py"
    script.write_text(_LOAD_WITHOUT_PLUGIN)
    out = tmp_path / "report.json"
    proc = subprocess.run([sys.executable, str(script), str(tmp_path), str(out)], env=_env(),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(out.read_text())
    # the drop: GX loaded the suite without our expectation and the failing release passes
    assert report["plugin_imported_before_guard"] is False
    assert report["loaded"] == ["expect_table_row_count_to_be_between"]
    assert report["success"] is True and report["n_results"] == 1
    # the guard compares the suite object with what is stored and refuses it
    assert "expect_matching_rate_to_be_between" in report["guard"]
    assert "import er_expectations" in report["guard"]
    # the stored file still names it (validating does not rewrite the suite) and, with the
    # plugin imported, the file itself passes the guard
    assert require_registered(path) == ("expect_table_row_count_to_be_between",
                                        "expect_matching_rate_to_be_between")


def test_guard_refuses_unregistered_types_in_a_dict_or_file(tmp_path):
    suite = {"name": "s", "expectations": [
        {"type": "expect_table_row_count_to_be_between", "kwargs": {"min_value": 1}},
        {"type": "expect_something_from_another_plugin", "kwargs": {}},
    ]}
    with pytest.raises(UnregisteredExpectationError, match="expect_something_from_another_plugin"):
        require_registered(suite)
    path = tmp_path / "s.json"
    path.write_text(json.dumps(suite))
    with pytest.raises(UnregisteredExpectationError, match="expect_something_from_another_plugin"):
        require_registered(path)
    with pytest.raises(UnregisteredExpectationError, match="expect_something_from_another_plugin"):
        require_registered(str(path))
    assert issubclass(UnregisteredExpectationError, InputError)


def test_guard_refuses_a_stored_expectation_gx_cannot_build():
    # GX also drops, with only a log line, an expectation whose kwargs do not validate
    suite = {"name": "s", "expectations": [
        {"type": "expect_matching_rate_to_be_between", "kwargs": {"prediction_column": "p"}},
    ]}
    with pytest.raises(UnregisteredExpectationError, match="min_value"):
        require_registered(suite)


def test_guard_passes_a_valid_suite_and_rejects_garbage(tmp_path):
    suite = gx.ExpectationSuite(name="ok", expectations=[
        ExpectMatchingRateToBeBetween(prediction_column="pred", min_value=0.1)])
    assert require_registered(suite) == ("expect_matching_rate_to_be_between",)
    assert require_registered(suite.to_json_dict()) == ("expect_matching_rate_to_be_between",)
    with pytest.raises(InputError, match="expectations"):
        require_registered({"name": "no list"})
    with pytest.raises(InputError, match="not found"):
        require_registered(tmp_path / "missing.json")
    with pytest.raises(InputError, match="JSON"):
        (tmp_path / "bad.json").write_text("{not json")
        require_registered(tmp_path / "bad.json")


def _checkpoint_with_guard(root: Path) -> None:
    """A file context with the suite of _write_suite, a validation definition and a checkpoint
    that runs RequireRegisteredAction."""
    from er_expectations.gx import RequireRegisteredAction

    _write_suite(root)
    ctx = gx.get_context(mode="file", project_root_dir=root)
    bd = (ctx.data_sources.add_pandas("p").add_dataframe_asset("a")
          .add_batch_definition_whole_dataframe("w"))
    vd = ctx.validation_definitions.add(gx.ValidationDefinition(name="v", data=bd,
                                                                suite=ctx.suites.get("release_checks")))
    ctx.checkpoints.add(gx.Checkpoint(name="cp", validation_definitions=[vd],
                                      actions=[RequireRegisteredAction(name="require_registered")]))


_CHECKPOINT_WITHOUT_PLUGIN = textwrap.dedent("""
    import json, sys
    import great_expectations as gx

    root, out = sys.argv[1], sys.argv[2]
    ctx = gx.get_context(mode="file", project_root_dir=root)
    try:
        ctx.checkpoints.get("cp")
        report = {"loaded": True}
    except Exception as exc:
        report = {"loaded": False, "error": f"{type(exc).__name__}: {exc}"}
    report["plugin_imported"] = "er_expectations" in sys.modules
    json.dump(report, open(out, "w"))
""")


def test_a_checkpoint_with_the_guard_action_does_not_load_without_the_plugin(tmp_path):
    _checkpoint_with_guard(tmp_path)
    script = tmp_path / "checkpoint_without_plugin.py"
    script.write_text(_CHECKPOINT_WITHOUT_PLUGIN)
    out = tmp_path / "report.json"
    proc = subprocess.run([sys.executable, str(script), str(tmp_path), str(out)], env=_env(),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(out.read_text())
    assert report["plugin_imported"] is False
    assert report["loaded"] is False and "er_require_registered" in report["error"]


def test_the_guard_action_fails_a_run_that_skipped_a_stored_expectation(tmp_path):
    _checkpoint_with_guard(tmp_path)
    # the stored suite also names an expectation of a plugin that is not installed
    path = tmp_path / "gx" / "expectations" / "release_checks.json"
    stored = json.loads(path.read_text())
    stored["expectations"].append({"type": "expect_something_from_another_plugin", "kwargs": {}, "meta": {},
                                   "id": "00000000-0000-0000-0000-000000000001", "severity": "critical"})
    path.write_text(json.dumps(stored))
    ctx = gx.get_context(mode="file", project_root_dir=tmp_path)
    ctx.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    cp = ctx.checkpoints.get("cp")
    df = pd.DataFrame({"pred": ["a", "a", "b", "b"]})  # passes both loaded expectations
    with pytest.raises(UnregisteredExpectationError, match="expect_something_from_another_plugin"):
        cp.run(batch_parameters={"dataframe": df})
    # without the unknown type the same checkpoint passes
    path.write_text(json.dumps({**stored, "expectations": stored["expectations"][:-1]}))
    ctx = gx.get_context(mode="file", project_root_dir=tmp_path)
    ctx.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    res = ctx.checkpoints.get("cp").run(batch_parameters={"dataframe": df})
    assert res.success is True


# -- suite parameters, strict bounds ------------------------------------------------------------

def test_suite_parameters_fill_bounds_at_validation(context):
    df = _frame()
    rate = erx.summarize(df, cluster="pred")["matching_rate"]

    def exp():
        return ExpectMatchingRateToBeBetween(prediction_column="pred", min_value={"$PARAMETER": "lo"},
                                             max_value={"$PARAMETER": "hi"})

    res = _run(context, df, [exp()], parameters={"lo": rate - 0.01, "hi": rate + 0.01})
    assert res.results[0].success is True
    assert res.results[0].expectation_config.kwargs["min_value"] == pytest.approx(rate - 0.01)
    res = _run(context, df, [exp()], parameters={"lo": rate + 0.01, "hi": 1.0})
    assert res.results[0].success is False
    est = erx.estimate(df, prediction="pred", reference="ref", metrics=["pairwise_recall"]).iloc[0]

    def rec():
        return ExpectEstimatedPairwiseRecallToBeBetween(prediction_column="pred", reference_column="ref",
                                                        min_value={"$PARAMETER": "min_recall"}, decision="estimate")

    ok = _run(context, df, [rec()], parameters={"min_recall": float(est.estimate) - 1e-9})
    bad = _run(context, df, [rec()], parameters={"min_recall": float(est.estimate) + 1e-9})
    assert (ok.results[0].success, bad.results[0].success) == (True, False)


def test_a_missing_suite_parameter_is_an_error_not_a_pass(context):
    exp = ExpectMatchingRateToBeBetween(prediction_column="pred", min_value={"$PARAMETER": "lo"})
    with pytest.raises(Exception, match="lo"):
        res = _run(context, _frame(), [exp], parameters={})
        assert res.results[0].success is False  # pragma: no cover  (GX raises before)


def test_parameter_bounds_render_and_still_need_one_bound():
    exp = ExpectMatchingRateToBeBetween(prediction_column="pred", min_value={"$PARAMETER": "lo"},
                                        strict_min=True)
    template, params = exp._sentence_for(exp.configuration.kwargs)
    text = template
    for k in sorted(params, key=len, reverse=True):
        text = text.replace(f"${k}", str(params[k]))
    assert "greater than the suite parameter lo" in text
    with pytest.raises(Exception, match="min_value"):
        ExpectMatchingRateToBeBetween(prediction_column="pred", strict_min=True)


def test_strict_bounds_exclude_the_bound_itself(context):
    df = _frame(seed=1)
    size = erx.summarize(df, cluster="pred")["average_cluster_size"]
    cases = [
        ExpectAverageClusterSizeToBeBetween(prediction_column="pred", min_value=size),
        ExpectAverageClusterSizeToBeBetween(prediction_column="pred", min_value=size, strict_min=True),
        ExpectAverageClusterSizeToBeBetween(prediction_column="pred", max_value=size),
        ExpectAverageClusterSizeToBeBetween(prediction_column="pred", max_value=size, strict_max=True),
    ]
    res = _run(context, df, cases)
    assert [r.success for r in res.results] == [True, False, True, False]
    est = erx.estimate(df, prediction="pred", reference="ref", metrics=["pairwise_precision"]).iloc[0]
    common = {"prediction_column": "pred", "reference_column": "ref"}
    res = _run(context, df, [
        ExpectEstimatedPairwisePrecisionToBeBetween(**common, min_value=float(est.ci_lower), bound="interval"),
        ExpectEstimatedPairwisePrecisionToBeBetween(**common, min_value=float(est.ci_lower), bound="interval",
                                                    strict_min=True),
        ExpectEstimatedPairwisePrecisionToBeBetween(**common, max_value=float(est.estimate), decision="estimate",
                                                    strict_max={"$PARAMETER": "strict"}),
    ], parameters={"strict": True})
    assert [r.success for r in res.results] == [True, False, False]


def test_strict_equal_bounds_are_refused():
    with pytest.raises(Exception, match="strict"):
        ExpectMatchingRateToBeBetween(prediction_column="p", min_value=0.5, max_value=0.5, strict_min=True)


# -- result_format -----------------------------------------------------------------------------

def _failing_recall(df):
    return ExpectEstimatedPairwiseRecallToBeBetween(prediction_column="pred", reference_column="ref",
                                                    min_value=0.999)


@pytest.mark.parametrize("level", ["BOOLEAN_ONLY", "BASIC", "SUMMARY", "COMPLETE"])
def test_result_format_levels(context, level):
    df = _frame(seed=2)
    res = _run(context, df, [_failing_recall(df)], result_format=level)
    r = res.results[0]
    assert r.success is False
    est = erx.estimate(df, prediction="pred", reference="ref", metrics=["pairwise_recall"]).iloc[0]
    if level == "BOOLEAN_ONLY":
        assert not r.result
        return
    assert r.result["observed_value"] == pytest.approx(est.estimate, rel=1e-12)
    details = r.result["details"]
    assert details["std_error"] == pytest.approx(est.std_error, rel=1e-12)
    assert details["ci_lower"] == pytest.approx(est.ci_lower, rel=1e-12)
    if level == "BASIC":
        assert "top_clusters" not in details
    else:
        assert details["top_clusters"], "the error table belongs to SUMMARY and COMPLETE"


# -- row_condition, engines ------------------------------------------------------------------------

def test_row_condition_is_refused_with_the_reason():
    with pytest.raises(Exception, match="row_condition") as info:
        ExpectMatchingRateToBeBetween(prediction_column="p", min_value=0.1, row_condition='p=="a"',
                                      condition_parser="pandas")
    assert "population" in str(info.value)
    with pytest.raises(Exception, match="row_condition"):
        ExpectStatisticToMatchBenchmarkEstimate(prediction_column="p", reference_column="r",
                                                statistic="matching_rate", row_condition='p=="a"',
                                                condition_parser="pandas")


def test_an_unsupported_engine_gets_one_clear_message():
    """The provider behind every expectation on an engine without an ``er.release``."""
    from er_expectations.gx.metrics.release import UnsupportedEngineMetric

    with pytest.raises(InputError, match=r"runs on pandas, Spark and SQL.*uses MadeUpEngine"):
        UnsupportedEngineMetric._any_engine(UnsupportedEngineMetric, execution_engine=None, metric_domain_kwargs={},
                                            metric_value_kwargs={"expectation": "expect_x", "engine": "MadeUpEngine"},
                                            metrics={}, runtime_configuration={})


def test_the_documented_module_exports_every_expectation():
    import er_expectations.gx.expectations as mod

    names = erx.gx.expectation_names()
    assert len(mod.__all__) == len(names)
    for cls_name in mod.__all__:
        assert getattr(mod, cls_name).__module__.startswith("er_expectations.gx.expectations")


# -- the dependency domain (the GX example of the docs is run by tests/e2e/test_docs_site.py) --------

def test_our_dependency_domain_is_the_one_gx_computes():
    from great_expectations.expectations.registry import get_metric_kwargs

    from er_expectations.gx.metrics.release import ESTIMATE

    exp = ExpectEstimatedPairwiseRecallToBeBetween(prediction_column="p", reference_column="r", min_value=0.5,
                                                   batch_id="b-1")
    deps = exp.get_validation_dependencies(execution_engine=None, runtime_configuration={})
    ours = deps.get_metric_configuration(ESTIMATE).metric_domain_kwargs
    gx_domain = get_metric_kwargs(metric_name=ESTIMATE, configuration=exp.configuration)["metric_domain_kwargs"]
    assert ours == gx_domain and ours.to_id() == gx_domain.to_id()
    assert deps.result_format["result_format"] == "BASIC"


def test_record_id_column_turns_duplicated_records_into_an_error():
    """Without a record id a duplicated row silently changes the statistics; with
    ``record_id_column`` the expectation raises and names the column (SPEC 2.1)."""
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig

    from er_expectations.gx.expectations import (
        ExpectEstimatedPairwisePrecisionToBeBetween,
        ExpectMatchingRateToBeBetween,
    )

    ctx = gx.get_context(mode="ephemeral")
    ctx.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    df = pd.DataFrame({"rid": [f"r{i}" for i in range(12)], "p": list("aabbbcddeeff"),
                       "t": list("aaabbccddeef")})
    dup = pd.concat([df, df.head(3)], ignore_index=True)
    batch = (ctx.data_sources.add_pandas("dups").add_dataframe_asset("a")
             .add_batch_definition_whole_dataframe("w"))
    common = {"prediction_column": "p", "min_value": 0.0}
    suite = ctx.suites.add(gx.ExpectationSuite(name="dups", expectations=[
        ExpectEstimatedPairwisePrecisionToBeBetween(**common, reference_column="t", record_id_column="rid"),
        ExpectMatchingRateToBeBetween(**common, record_id_column="rid"),
        ExpectMatchingRateToBeBetween(**common),
    ]))
    res = batch.get_batch(batch_parameters={"dataframe": dup}).validate(suite)
    raised = [r.exception_info for r in res.results]
    for info in raised[:2]:
        messages = " ".join(str(v.get("exception_message")) for v in info.values() if isinstance(v, dict))
        messages += str(info.get("exception_message") or "")
        assert "record_id column 'rid' has 3 duplicated ids" in messages, info
    assert res.results[2].success is True  # without the id nobody can tell
    clean = batch.get_batch(batch_parameters={"dataframe": df}).validate(suite)
    assert all(r.success for r in clean.results)
