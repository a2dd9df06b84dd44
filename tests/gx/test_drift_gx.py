"""Drift expectations in GX and through the checkpoint runner (SPEC 10).

Hostile and failing cases first: unknown or misspelt baselines, bad parameters in suite files
(reported at file:line:column), hostile cluster ids and names in the Data Docs diff table.
Then: GX results equal the Python computation (``er_expectations.analysis.drift``), the first release
is skipped with "no baseline", a pinned baseline, and the runner's baseline columns.
"""

from __future__ import annotations

import io
import math
import textwrap
from pathlib import Path

import great_expectations as gx
import pandas as pd
import pytest
from support.chromium import page_problems, visible_text
from support.toyproject import CHECKPOINT, make_toy, snapshot

import er_expectations.gx  # noqa: F401  (registers the expectations)
from er_expectations.analysis.drift import (
    agreement_of,
    estimate_change,
    release_agreement,
    statistic_change,
)
from er_expectations.config import ConfigError, load_suite
from er_expectations.gx.expectations import (
    ExpectEstimateChangeToBeBelow,
    ExpectReleaseAgreementToBeBetween,
    ExpectStatisticChangeToBeBelow,
)
from er_expectations.run.runner import prepare_run, run_checkpoint

HOSTILE_ID = "<img src=x onerror=alert(1)>"
HOSTILE_NAME = "<script>alert(1)</script>"

DRIFT_SUITE = """\
suite: toy_checks
defaults:
  prediction_column: prediction
  reference_column: truth
  record_id_column: rid
  name_column: full_name
expectations:
  - expectation: expect_statistic_change_to_be_below
    statistic: average_cluster_size
    max_relative_change: 0.1
  - expectation: expect_release_agreement_to_be_between
    metric: pairwise_precision
    min_value: 0.9
    baseline: {pinned}
    severity: warning
  - expectation: expect_estimate_change_to_be_below
    metric: pairwise_precision
    max_change: 0.05
    severity: info
"""


def validate(context, df: pd.DataFrame, expectations: list, name: str):
    suite = context.suites.add(gx.ExpectationSuite(name=name, expectations=expectations))
    batch = (context.data_sources.add_pandas(f"ds_{name}").add_dataframe_asset("asset")
             .add_batch_definition_whole_dataframe("whole").get_batch(batch_parameters={"dataframe": df}))
    return batch.validate(suite, result_format="SUMMARY")


def releases_frame() -> pd.DataFrame:
    """Ten entities of four records; the baseline is right, the release merges them two by two."""
    ids = [f"r{i:02d}" for i in range(40)]
    return pd.DataFrame({
        "rid": ids,
        "truth": [f"E{i // 4}" for i in range(40)],
        "prediction": [f"b{i // 8}" if i != 39 else None for i in range(40)],
        "prediction__baseline": [f"a{i // 4}" for i in range(40)],
        "full_name": [f"Name{i // 4}" for i in range(40)],
    })


# -- suite files: bad parameters at file:line:column ------------------------------------------


@pytest.mark.parametrize("entry, line, column, words", [
    ("    statistic: average_cluster_size\n    max_change: 1\n    max_relative_change: 0.1\n", 7, 26,
     ["exactly one of 'max_change'", "not both"]),
    ("    statistic: average_cluster_size\n", 3, 5, ["exactly one of 'max_change'"]),
    ("    statistic: average_size\n    max_change: 1\n", 5, 16, ["statistic", "did you mean 'average_cluster_size'"]),
    ("    statistic: hill_number\n    max_change: 1\n", 5, 16, ["needs its order q", "q: 2"]),
    ("    statistic: homonymy_rate\n    max_change: 0.1\n", 5, 16, ["'name_column' is required"]),
    ("    statistic: average_cluster_size\n    max_change: -1\n", 6, 17, ["max_change", ">= 0"]),
    ("    statistic: average_cluster_size\n    max_change: 1\n    diff_examples: -2\n", 7, 20,
     ["diff_examples", ">= 0"]),
    ("    statistic: average_cluster_size\n    max_change: 1\n    baseline: 2020-06-30\n", 7, 15,
     ["baseline: expected text, got the date 2020-06-30", 'put it in quotes: "2020-06-30"']),
])
def test_bad_statistic_change_parameters_are_located(tmp_path, entry, line, column, words):
    path = tmp_path / "suite.yml"
    path.write_text("suite: s\nexpectations:\n  - expectation: expect_statistic_change_to_be_below\n"
                    "    prediction_column: p\n" + entry, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_suite(path)
    (issue,) = info.value.issues
    assert (issue.file, issue.line, issue.column) == (str(path), line, column)
    assert str(issue).startswith(f"{path}:{line}:{column}")
    for word in words:
        assert word in str(issue), str(issue)


def test_two_thresholds_point_at_the_second_and_a_typo_at_its_value(tmp_path):
    path = tmp_path / "suite.yml"
    path.write_text(textwrap.dedent("""\
        suite: s
        expectations:
          - expectation: expect_statistic_change_to_be_below
            prediction_column: p
            statistic: average_cluster_size
            max_change: 1
            max_relative_change: 0.1
          - expectation: expect_estimate_change_to_be_below
            prediction_column: p
            reference_column: t
            metric: pairwise_recal
            max_change: 0.02
        """), encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_suite(path)
    where = {(i.line, i.column): str(i) for i in info.value.issues}
    assert (7, 26) in where and "not both" in where[(7, 26)], where
    assert (11, 13) in where and "did you mean 'pairwise_recall'" in where[(11, 13)], where


def test_unknown_pinned_baseline_lists_the_releases_and_writes_nothing(tmp_path):
    path = make_toy(tmp_path, suite=DRIFT_SUITE.format(pinned="alpah"))
    before = snapshot(tmp_path / "project")
    with pytest.raises(ConfigError) as info:
        run_checkpoint(path, progress=False, out=io.StringIO())
    (issue,) = info.value.issues
    suite_text = (tmp_path / "suites" / "toy.yml").read_text().splitlines()
    assert issue.file.endswith("toy.yml") and suite_text[issue.line - 1].strip() == "baseline: alpah"
    assert issue.column == suite_text[issue.line - 1].index("alpah") + 1
    assert "baseline 'alpah' is not a release of checkpoint 'toy'" in issue.message
    assert "'alpha', 'beta' and 'gamma'" in issue.message
    assert "did you mean 'alpha'?" in (issue.hint or "")
    assert snapshot(tmp_path / "project") == before


def test_same_baseline_column_for_two_baselines_is_refused(tmp_path):
    suite = DRIFT_SUITE.format(pinned="alpha") + "    baseline_column: prediction__baseline\n"
    suite = suite.replace("    baseline: alpha\n", "    baseline: alpha\n    baseline_column: prediction__baseline\n")
    path = make_toy(tmp_path, suite=suite)
    with pytest.raises(ConfigError, match="would hold two baselines"):
        prepare_run(path)


# -- GX = Python ---------------------------------------------------------------------------------


def test_gx_results_equal_the_python_computation(context):
    df = releases_frame()
    exps = [
        ExpectStatisticChangeToBeBelow(prediction_column="prediction", record_id_column="rid",
                                       statistic="average_cluster_size", max_relative_change=0.5),
        ExpectStatisticChangeToBeBelow(prediction_column="prediction", statistic="hill_number", q=2,
                                       max_change=100),
        ExpectReleaseAgreementToBeBetween(prediction_column="prediction", metric="pairwise_precision",
                                          min_value=0.9),
        ExpectEstimateChangeToBeBelow(prediction_column="prediction", reference_column="truth",
                                      metric="pairwise_precision", max_change=0.2),
    ]
    res = validate(context, df, exps, "gx_equals_python")
    size, hill, agree, est = (r.result["details"] for r in res.results)
    py = statistic_change(df, "prediction", "prediction__baseline")
    assert (size["current"], size["baseline_value"], size["common_records"]) == (py.current, py.baseline, 39)
    assert res.results[0].result["observed_value"] == pytest.approx(py.relative_change)
    assert res.results[0].success is False and size["relative_change"] == pytest.approx(39 / 5 / (39 / 10) - 1)
    hill_py = statistic_change(df, "prediction", "prediction__baseline", "hill_number", q=2)
    assert hill["change"] == pytest.approx(hill_py.change) and res.results[1].success
    agree_py = release_agreement(df, "prediction", "prediction__baseline")
    assert agree["values"] == pytest.approx(agree_py.to_dict())
    assert res.results[2].result["observed_value"] == pytest.approx(agree_py["pairwise_precision"])
    est_py = estimate_change(df, prediction="prediction", baseline="prediction__baseline", metric="pairwise_precision", reference="truth")
    assert est["change"] == pytest.approx(est_py.change.estimate)
    assert est["std_error"] == pytest.approx(est_py.change.std_error)
    assert est["naive_std_error"] == pytest.approx(est_py.naive_std_error)
    # the test is stated, and the decision follows it
    assert est["decision"] == "significant" and "whole interval is beyond the limit (±0.2)" in est["test"]
    beyond = est_py.change.ci_upper < -0.2 or est_py.change.ci_lower > 0.2
    assert res.results[3].success is (not beyond)
    # failures carry the release diff (SUMMARY results)
    assert size["diff"]["clusters"] == {"unchanged": 0, "merged": 5, "split": 0, "both": 0}
    assert "diff" not in hill


def test_point_change_beyond_threshold_but_within_sampling_error_passes(context):
    """Only one of ten entities changes (the release lumps E0 with E1): the change is noisy, and
    a threshold just below it is exceeded by the point change but not by the whole interval."""
    df = releases_frame()
    df["prediction"] = ["m" if i < 8 else f"a{i // 4}" for i in range(40)]
    py = estimate_change(df, prediction="prediction", baseline="prediction__baseline", metric="pairwise_precision", reference="truth")
    limit = round(abs(py.change.estimate) - py.change.std_error / 2, 4)
    assert py.change.ci_lower < py.change.estimate < -limit < py.change.ci_upper < 0
    exp = ExpectEstimateChangeToBeBelow(prediction_column="prediction", reference_column="truth",
                                        metric="pairwise_precision", max_change=limit)
    res = validate(context, df, [exp], "within_error").results[0]
    d = res.result["details"]
    assert d["change"] == pytest.approx(py.change.estimate) and abs(d["change"]) > limit
    assert res.success and "sampling error can explain it" in d["verdict"]
    tighter = ExpectEstimateChangeToBeBelow(prediction_column="prediction", reference_column="truth",
                                            metric="pairwise_precision", max_change=round(-py.change.ci_upper / 2, 4))
    assert validate(context, df, [tighter], "beyond_error").results[0].success is False


def test_no_baseline_is_skipped_not_failed(context):
    df = releases_frame().assign(prediction__baseline=None)
    exps = [
        ExpectStatisticChangeToBeBelow(prediction_column="prediction", statistic="average_cluster_size",
                                       max_change=0.0),
        ExpectReleaseAgreementToBeBetween(prediction_column="prediction", metric="pairwise_recall", min_value=1.0),
        ExpectEstimateChangeToBeBelow(prediction_column="prediction", reference_column="truth",
                                      metric="pairwise_recall", max_change=0.01),
    ]
    res = validate(context, df, exps, "no_baseline")
    for r in res.results:
        assert r.success and not r.exception_info.get("raised_exception")
        assert r.result["details"]["skipped"] is True
        assert "no baseline release" in r.result["details"]["note"]


def test_missing_baseline_column_is_a_clear_error(context):
    df = releases_frame().drop(columns="prediction__baseline")
    exp = ExpectStatisticChangeToBeBelow(prediction_column="prediction", statistic="average_cluster_size",
                                         max_change=1.0)
    r = validate(context, df, [exp], "missing_column").results[0]
    assert r.success is False
    assert "prediction__baseline" in str(r.exception_info)


def test_the_baseline_is_aggregated_once_per_batch(context, monkeypatch):
    """Six drift checks of three kinds read one baseline column: its release (the factorisation
    of the column) is built once, and the benchmark restricted to it once."""
    from er_expectations.engines.pandas import release as engine

    built: list[object] = []
    samples: list[object] = []
    init, sample = engine.PandasRelease.__init__, engine.PandasRelease.benchmark_sample

    def counting_init(self, df, *, prediction, record_id=None):
        built.append(prediction)
        init(self, df, prediction=prediction, record_id=record_id)

    def counting_sample(self, **kwargs):
        samples.append(self.prediction)
        return sample(self, **kwargs)

    monkeypatch.setattr(engine.PandasRelease, "__init__", counting_init)
    monkeypatch.setattr(engine.PandasRelease, "benchmark_sample", counting_sample)
    exps = [
        ExpectStatisticChangeToBeBelow(prediction_column="prediction", statistic="average_cluster_size",
                                       max_change=10),
        ExpectStatisticChangeToBeBelow(prediction_column="prediction", statistic="matching_rate", max_change=1),
        ExpectReleaseAgreementToBeBetween(prediction_column="prediction", metric="pairwise_recall", min_value=0),
        ExpectReleaseAgreementToBeBetween(prediction_column="prediction", metric="cluster_f", min_value=0),
        ExpectEstimateChangeToBeBelow(prediction_column="prediction", reference_column="truth",
                                      metric="pairwise_recall", max_change=1),
        ExpectEstimateChangeToBeBelow(prediction_column="prediction", reference_column="truth",
                                      metric="b_cubed_f", max_change=1),
    ]
    res = validate(context, releases_frame(), exps, "aggregated_once")
    assert res.success
    assert built.count("prediction__baseline") == 1 and built.count("prediction") == 1
    assert samples.count("prediction__baseline") == 1 and samples.count("prediction") == 1


# -- the runner: baselines in the release tables ---------------------------------------------------


@pytest.fixture(scope="module")
def drift_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("driftrun")
    path = make_toy(root, suite=DRIFT_SUITE.format(pinned="alpha"))
    report = run_checkpoint(path, progress=False, out=io.StringIO())
    return root, report


def _results(report, label: str) -> dict:
    import json

    release = next(r for r in report.releases if r.label == label)
    (file,) = release.result_files
    data = json.loads(Path(file).read_text())
    return {r["expectation_config"]["type"] + ":" + str(r["expectation_config"]["kwargs"].get("baseline", "")):
            r for r in data["results"]}


def test_first_release_is_skipped_with_no_baseline(drift_run):
    _, report = drift_run
    alpha = _results(report, "alpha")
    change = alpha["expect_statistic_change_to_be_below:"]
    assert change["success"] is True and change["result"]["details"]["skipped"] is True
    assert change["result"]["details"]["baseline"] is None
    pinned = alpha["expect_release_agreement_to_be_between:alpha"]  # alpha against itself
    assert pinned["result"]["observed_value"] == 1.0


def test_previous_and_pinned_baselines_match_python(drift_run):
    root, report = drift_run
    pred = pd.read_parquet(root / "data" / "predictions.parquet")
    for label, previous in (("beta", "alpha"), ("gamma", "beta")):
        res = _results(report, label)
        change = res["expect_statistic_change_to_be_below:"]["result"]
        py = statistic_change(pred, f"pred_{label}", f"pred_{previous}")
        assert change["details"]["baseline"] == previous
        assert change["details"]["current"] == pytest.approx(py.current)
        assert change["details"]["baseline_value"] == pytest.approx(py.baseline)
        assert change["details"]["common_records"] == py.common_records
        agreement = res["expect_release_agreement_to_be_between:alpha"]["result"]
        assert agreement["details"]["baseline"] == "alpha"
        assert agreement["observed_value"] == pytest.approx(
            release_agreement(pred, f"pred_{label}", "pred_alpha")["pairwise_precision"])
    outcome = {r.label: r for r in report.releases}
    assert [e.label for e in outcome["beta"].critical_failures] == ["average_cluster_size_change"]
    assert outcome["alpha"].success and not outcome["beta"].success


def test_release_tables_carry_the_baseline_columns(drift_run):
    root, _ = drift_run
    table = pd.read_parquet(next((root / "project" / "er_data" / "toy").glob("gamma*.parquet")))
    assert {"prediction__baseline", "prediction__baseline__release",
            "prediction__baseline__alpha", "prediction__baseline__alpha__release"} <= set(table.columns)
    assert set(table["prediction__baseline__release"]) == {"beta"}
    pred = pd.read_parquet(root / "data" / "predictions.parquet").set_index("rid")
    assert (table.set_index("rid")["prediction__baseline"] == pred["pred_beta"]).all()


def test_previous_is_taken_in_the_checkpoint_order_whatever_the_run_selects(tmp_path):
    path = make_toy(tmp_path, suite=DRIFT_SUITE.format(pinned="alpha"))
    report = run_checkpoint(path, releases=["gamma"], progress=False, out=io.StringIO())
    change = _results(report, "gamma")["expect_statistic_change_to_be_below:"]["result"]["details"]
    assert change["baseline"] == "beta" and change["skipped"] is False


def test_per_release_files_get_their_baseline_by_record_id(tmp_path):
    """One file per release, rows in different orders and a record missing from one file."""
    checkpoint = CHECKPOINT.replace(
        '    path: ../data/predictions.parquet\n    id_column: rid\n    columns: "pred_*"',
        "    files: {alpha: ../data/alpha.parquet, beta: ../data/beta.parquet, gamma: ../data/gamma.parquet}\n"
        "    id_column: rid\n    prediction_column: prediction")
    assert "files:" in checkpoint
    path = make_toy(tmp_path, suite=DRIFT_SUITE.format(pinned="alpha"), checkpoint=checkpoint)
    pred = pd.read_parquet(tmp_path / "data" / "predictions.parquet")
    for i, label in enumerate(("alpha", "beta", "gamma")):
        part = pred[["rid", f"pred_{label}"]].rename(columns={f"pred_{label}": "prediction"}).dropna()
        part.sample(frac=1.0, random_state=i).to_parquet(tmp_path / "data" / f"{label}.parquet", index=False)
    report = run_checkpoint(path, progress=False, out=io.StringIO())
    for label, previous in (("beta", "alpha"), ("gamma", "beta")):
        change = _results(report, label)["expect_statistic_change_to_be_below:"]["result"]["details"]
        py = statistic_change(pred, f"pred_{label}", f"pred_{previous}")
        assert (change["baseline"], change["current"], change["baseline_value"], change["common_records"]) == (
            previous, pytest.approx(py.current), pytest.approx(py.baseline), py.common_records)


def test_runner_without_drift_checks_adds_no_column(tmp_path):
    path = make_toy(tmp_path)
    prepared = prepare_run(path)
    assert prepared.baselines == ()


# -- hostile ids and names in the Data Docs diff table ---------------------------------------------


def test_hostile_ids_and_names_are_escaped_in_the_diff_table(tmp_path):
    path = make_toy(tmp_path, suite=DRIFT_SUITE.format(pinned="alpha"))
    data = tmp_path / "data"
    pred = pd.read_parquet(data / "predictions.parquet")
    pred["pred_beta"] = [HOSTILE_ID + str(i // 8) for i in range(40)]
    pred.to_parquet(data / "predictions.parquet", index=False)
    records = pd.read_parquet(data / "records.parquet")
    records["first"] = HOSTILE_NAME
    records.to_parquet(data / "records.parquet", index=False)
    report = run_checkpoint(path, progress=False, out=io.StringIO())
    site = report.data_docs_index.parent
    page = next(site.glob("validations/**/*release_beta.html"))
    html = page.read_text(encoding="utf-8")
    assert page_problems(html) == []
    assert "<script>alert" not in html and "<img src=x" not in html
    text = visible_text(html)
    assert "Release diff on the 40 records in both releases" in text
    assert HOSTILE_ID + "0" in text and HOSTILE_NAME in text  # shown as text, escaped in the HTML


def test_agreement_of_empty_pair_is_undefined_with_reason():
    from er_expectations.engines.pandas.pairs import ReleasePair
    from er_expectations.engines.pandas.release import PandasRelease

    df = pd.DataFrame({"a": ["x", None], "b": [None, "y"]})
    res = agreement_of(ReleasePair(PandasRelease(df, prediction="a"), PandasRelease(df, prediction="b")))
    assert all(math.isnan(v) for v in res.values.values()) and "no record in common" in res.notes["pairwise_recall"]


def test_drift_checks_run_on_a_sql_datasource(tmp_path, context):
    """The drift metrics aggregate in the database (tests/engines/test_common.py compares every
    engine in depth): the same result as on pandas, the release diff of the failure included."""
    from support.gxtools import quiet_context

    sa = pytest.importorskip("sqlalchemy")
    url = f"sqlite:///{tmp_path / 'releases.db'}"
    releases_frame().to_sql("release", sa.create_engine(url), index=False)
    ctx = quiet_context()
    batch = (ctx.data_sources.add_sqlite("sql", connection_string=url).add_table_asset("release", table_name="release")
             .add_batch_definition_whole_table("all").get_batch())

    def check():
        return ExpectStatisticChangeToBeBelow(prediction_column="prediction", statistic="average_cluster_size",
                                              max_change=1.0)

    suite = ctx.suites.add(gx.ExpectationSuite(name="sql_drift", expectations=[check()]))
    (result,) = batch.validate(suite, result_format="SUMMARY").results
    (want,) = validate(context, releases_frame(), [check()], "pandas_drift").results
    assert not result.exception_info.get("raised_exception"), result.exception_info
    assert result.success is want.success is False
    assert result.result["observed_value"] == pytest.approx(want.result["observed_value"], rel=1e-12)
    assert result.result["details"]["diff"] == want.result["details"]["diff"]
    assert result.result["details"]["diff"]["clusters"]["merged"] == 5
