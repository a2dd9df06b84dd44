"""``run_checkpoint``: release tables, GX project, results, and no writes on bad input.

A small synthetic project (three releases "alpha", "beta", "gamma") covers the behaviour;
one test runs the bundled PatentsView demo end to end.
"""

from __future__ import annotations

import io
import json
import shutil
import time
from pathlib import Path

import great_expectations as gx
import pandas as pd
import pytest
from support.toyproject import CHECKPOINT, PV_DATA, REPO, SUITE, make_toy, snapshot

import er_expectations  # noqa: F401  registers the expectations before any context use
from er_expectations.config import ConfigError
from er_expectations.core.errors import InputError
from er_expectations.core.names import safe_name
from er_expectations.run.runner import (
    DATA_FOLDER,
    expectation_label,
    prepare_run,
    run_checkpoint,
)


@pytest.fixture()
def toy(tmp_path) -> Path:
    return make_toy(tmp_path)


@pytest.fixture(scope="module")
def toy_run(tmp_path_factory):
    """The toy project run twice (the second run must be an in-place update)."""
    root = tmp_path_factory.mktemp("toyrun")
    path = make_toy(root)
    first = run_checkpoint(path, progress=False, out=io.StringIO())
    out = io.StringIO()
    second = run_checkpoint(path, progress=False, out=out)
    return root, path, first, second, out.getvalue()


# -- outcome ---------------------------------------------------------------------------


def test_report_counts_and_critical_only_success(toy_run):
    _, _, _, report, _ = toy_run
    by_label = {r.label: r for r in report.releases}
    assert list(by_label) == ["alpha", "beta", "gamma"]
    alpha, beta, gamma = by_label["alpha"], by_label["beta"], by_label["gamma"]
    assert alpha.success and gamma.success and not beta.success
    assert not report.success
    assert [e.label for e in beta.critical_failures] == ["pairwise_precision"]
    assert all(e.severity == "critical" for e in beta.critical_failures)
    for release in report.releases:
        assert release.evaluated == 5
        assert release.successful + release.failed == release.evaluated
    # a failed warning does not fail a release, and it is listed apart
    homonymy = [e for e in beta.expectations if e.expectation == "expect_homonymy_rate_to_be_between"]
    assert homonymy and homonymy[0].severity == "warning"
    assert all("(warning)" in w or "(info)" in w for w in report.warnings)


def test_summary_printed_with_index_path(toy_run):
    root, _, _, report, text = toy_run
    assert report.data_docs_index is not None and report.data_docs_index.is_file()
    assert report.data_docs_index.is_absolute()
    assert f"Data Docs: {report.data_docs_index}" in text
    assert "alpha" in text and "beta" in text and "FAILED" in text
    assert "pairwise_precision" in text
    assert "2 of 3 release(s) passed" in text


def test_release_tables_written_into_the_project(toy_run):
    root, _, _, _, _ = toy_run
    folder = root / "project" / DATA_FOLDER / "toy"
    assert sorted(p.name for p in folder.iterdir()) == ["alpha.parquet", "beta.parquet", "gamma.parquet"]
    gamma = pd.read_parquet(folder / "gamma.parquet")
    assert sorted(gamma.columns) == ["full_name", "prediction", "rid", "truth"]
    assert gamma["prediction"].isna().sum() == 1  # the record outside the release
    assert gamma.loc[gamma.rid == "r05", "full_name"].item() == "Bo Name1"


def test_result_json_holds_our_estimates(toy_run):
    _, _, _, report, _ = toy_run
    beta = next(r for r in report.releases if r.label == "beta")
    assert len(beta.result_files) == 1 and beta.result_files[0].is_file()
    stored = json.loads(beta.result_files[0].read_text())
    results = {r["expectation_config"]["type"]: r for r in stored["results"]}
    precision = results["expect_estimated_pairwise_precision_to_be_between"]
    assert precision["success"] is False
    assert precision["expectation_config"]["severity"] == "critical"
    assert precision["result"]["observed_value"] == pytest.approx(3 / 7, abs=1e-6)
    assert json.dumps(precision["result"]).count("estimate") >= 1
    assert stored["meta"]["run_id"]["run_name"] == "toy"


def test_rerun_is_idempotent_and_gx_can_reopen_the_project(toy_run):
    root, _, first, second, _ = toy_run
    assert [r.success for r in first.releases] == [r.success for r in second.releases]
    assert [r.successful for r in first.releases] == [r.successful for r in second.releases]
    ctx = gx.get_context(project_root_dir=str(root / "project"))
    assert [s.name for s in ctx.suites.all()] == ["toy_checks"]
    assert len(ctx.suites.get("toy_checks").expectations) == 5
    assert sorted(v.name for v in ctx.validation_definitions.all()) == [
        "toy__alpha__toy_checks",
        "toy__beta__toy_checks",
        "toy__gamma__toy_checks",
    ]
    # one checkpoint per release, and the one over all releases that the run executes
    assert sorted(c.name for c in ctx.checkpoints.all()) == ["toy", "toy__alpha", "toy__beta", "toy__gamma"]
    assert len(ctx.checkpoints.get("toy").validation_definitions) == 3
    source = ctx.data_sources.get("toy")
    asset = source.get_asset("releases")
    assert sorted(b.name for b in asset.batch_definitions) == [
        "release_alpha",
        "release_beta",
        "release_gamma",
    ]
    # GX's own API runs a stored checkpoint (the plugin is imported)
    result = ctx.checkpoints.get("toy__beta").run()
    assert result.success is False
    batch_ids = {key.batch_identifier for key in result.run_results}
    assert batch_ids == {"toy-releases-release_beta"}


def test_two_suites_on_one_checkpoint(tmp_path):
    checkpoint = CHECKPOINT.replace("suites: [toy_checks]", "suites: [toy_checks, sizes]")
    path = make_toy(tmp_path, checkpoint=checkpoint)
    (tmp_path / "suites" / "sizes.yml").write_text(
        "suite: sizes\n"
        "expectations:\n"
        "  - expectation: expect_average_cluster_size_to_be_between\n"
        "    prediction_column: prediction\n"
        "    max_value: 5\n"
    )
    report = run_checkpoint(path, releases=["alpha", "beta"], progress=False, out=io.StringIO())
    alpha, beta = report.releases
    assert alpha.evaluated == 6 and len(alpha.result_files) == 2
    assert {e.suite for e in beta.critical_failures} == {"toy_checks", "sizes"}
    ctx = gx.get_context(project_root_dir=str(tmp_path / "project"))
    assert len(ctx.checkpoints.get("toy__beta").validation_definitions) == 2


def test_batch_ids_unique_per_release(toy_run):
    _, _, _, report, _ = toy_run
    names = [f.name for r in report.releases for f in r.result_files]
    assert len(set(names)) == len(names) == 3


def test_release_selection_by_label_and_by_column(tmp_path):
    path = make_toy(tmp_path)
    report = run_checkpoint(path, releases=["alpha", "pred_gamma"], progress=False, out=io.StringIO())
    assert [r.label for r in report.releases] == ["alpha", "gamma"]
    assert report.success
    written = sorted(p.name for p in (tmp_path / "project" / DATA_FOLDER / "toy").iterdir())
    assert written == ["alpha.parquet", "gamma.parquet"]


def test_unknown_release_suggests_and_writes_nothing(toy):
    project = toy.parent.parent / "project"
    with pytest.raises(InputError, match="did you mean 'beta'"):
        run_checkpoint(toy, releases=["betta"], progress=False, out=io.StringIO())
    assert not project.exists()


# -- bad configuration: every issue located, nothing written ------------------------------


def _break(root: Path, case: str) -> None:
    cp = root / "checkpoints" / "toy.yml"
    suite = root / "suites" / "toy.yml"
    text = cp.read_text()
    if case == "malformed_yaml":
        cp.write_text(text.replace("releases: all", "releases: [all"))
    elif case == "unknown_key":
        cp.write_text(text.replace("releases: all", "releasez: all"))
    elif case == "missing_file":
        cp.write_text(text.replace("../data/benchmark.parquet", "../data/nope.parquet"))
    elif case == "missing_column":
        cp.write_text(text.replace("reference_column: truth", "reference_column: truht"))
    elif case == "unknown_suite":
        cp.write_text(text.replace("suites: [toy_checks]", "suites: [toy_check]"))
    elif case == "suite_column":
        suite.write_text(SUITE.replace("name_column: full_name", "name_column: name"))
    elif case == "bad_suite":
        suite.write_text(SUITE.replace("min_value: 0.9", "min_value: high"))
    else:  # pragma: no cover
        raise AssertionError(case)


BAD_CASES = {
    "malformed_yaml": ("toy.yml", None),
    "unknown_key": ("toy.yml", "releasez"),
    "missing_file": ("toy.yml", "nope.parquet"),
    "missing_column": ("toy.yml", "truht"),
    "unknown_suite": ("toy.yml", "did you mean 'toy_checks'"),
    "suite_column": ("toy.yml", "name_column 'name' is not a column of the release batches"),
    "bad_suite": ("toy.yml", "min_value"),
}


@pytest.mark.parametrize("existing", [False, True], ids=["new_project", "existing_project"])
@pytest.mark.parametrize("case", sorted(BAD_CASES))
def test_bad_configuration_is_located_and_writes_nothing(tmp_path, case, existing, toy_run):
    path = make_toy(tmp_path)
    project = tmp_path / "project"
    if existing:  # a project from an earlier good run
        shutil.copytree(toy_run[0] / "project", project)
    _break(tmp_path, case)
    before = snapshot(project)
    with pytest.raises(ConfigError) as caught:
        run_checkpoint(path, progress=False, out=io.StringIO())
    assert snapshot(project) == before
    issues = caught.value.issues
    assert issues
    file_name, needle = BAD_CASES[case]
    for issue in issues:
        assert issue.line is not None, str(issue)
        assert str(issue).startswith(issue.file + ":")
    assert any(Path(i.file).name == file_name for i in issues)
    if needle:
        assert any(needle in str(i) for i in issues), [str(i) for i in issues]


def test_suite_column_issue_points_at_the_line_that_names_it(tmp_path):
    suite = SUITE.replace(
        "  - expectation: expect_estimated_pairwise_recall_to_be_between\n",
        "  - expectation: expect_estimated_pairwise_recall_to_be_between\n"
        "    prediction_column: inventor_id\n"
        "    draws_column: draws\n",
    )
    path = make_toy(tmp_path, suite=suite)
    with pytest.raises(ConfigError) as caught:
        prepare_run(path)
    issues = {i.message.split(":")[1].split()[0]: i for i in caught.value.issues}
    lines = suite.splitlines()
    assert lines[issues["prediction_column"].line - 1].strip() == "prediction_column: inventor_id"
    assert lines[issues["draws_column"].line - 1].strip() == "draws_column: draws"
    assert "write prediction_column: prediction" in issues["prediction_column"].hint
    assert "benchmark file" in issues["draws_column"].hint


def test_name_column_from_defaults_points_at_defaults(tmp_path):
    checkpoint = CHECKPOINT.replace("  name: {columns: [first, last]}\n", "")
    path = make_toy(tmp_path, checkpoint=checkpoint)
    with pytest.raises(ConfigError) as caught:
        prepare_run(path)
    (issue,) = caught.value.issues  # one place: the defaults line, reported once
    assert issue.line == SUITE.splitlines().index("  name_column: full_name") + 1
    assert "has no data.name" in issue.hint


def test_batch_columns_must_not_clash(tmp_path):
    checkpoint = CHECKPOINT.replace('    columns: "pred_*"\n', '    columns: "pred_*"\n    batch_column: truth\n')
    path = make_toy(tmp_path, checkpoint=checkpoint)
    with pytest.raises(ConfigError) as caught:
        prepare_run(path)
    clash = [i for i in caught.value.issues if "already their prediction column" in i.message]
    assert clash and clash[0].line == checkpoint.splitlines().index("  benchmark: {path: ../data/benchmark.parquet, id_column: rid, reference_column: truth}") + 1


def test_weights_column_is_carried_from_the_benchmark(tmp_path):
    suite = SUITE.replace("  name_column: full_name\n", "  name_column: full_name\n  weights: {column: w}\n")
    path = make_toy(tmp_path, suite=suite)
    bench = pd.read_parquet(tmp_path / "data" / "benchmark.parquet")
    bench["w"] = 0.25
    bench.to_parquet(tmp_path / "data" / "benchmark.parquet", index=False)
    prepared = prepare_run(path)
    assert sorted(prepared.data.batch_columns()) == ["full_name", "prediction", "rid", "truth", "w"]
    report = run_checkpoint(path, releases=["alpha"], progress=False, out=io.StringIO())
    assert report.success


def test_unregistered_type_in_existing_project_is_refused(tmp_path, toy_run):
    path = make_toy(tmp_path)
    project = tmp_path / "project"
    shutil.copytree(toy_run[0] / "project", project)
    stored = project / "gx" / "expectations" / "other.json"
    stored.write_text(json.dumps({"name": "other", "expectations": [{"type": "expect_made_up_thing", "kwargs": {}}]}))
    before = snapshot(project)
    with pytest.raises(ConfigError, match="expect_made_up_thing"):
        run_checkpoint(path, progress=False, out=io.StringIO())
    assert snapshot(project) == before


def test_duplicate_record_ids_are_a_data_error_before_any_write(toy):
    records = pd.read_parquet(toy.parent.parent / "data" / "records.parquet")
    pd.concat([records, records.head(1)]).to_parquet(toy.parent.parent / "data" / "records.parquet")
    with pytest.raises(InputError, match="duplicated record ids"):
        run_checkpoint(toy, progress=False, out=io.StringIO())
    assert not (toy.parent.parent / "project").exists()


def test_names_and_labels():
    assert safe_name("2022/06 final") == "2022_06_final"
    assert safe_name("***") == "release"
    assert expectation_label("expect_estimated_pairwise_f_to_be_between", {}) == "pairwise_f"
    assert expectation_label("expect_hill_number_to_be_between", {"q": "inf"}) == "hill_number(q=inf)"
    assert (
        expectation_label("expect_statistic_to_match_benchmark_estimate", {"statistic": "matching_rate"})
        == "matching_rate_vs_benchmark"
    )
    assert expectation_label("expect_subgroup_disparity_to_be_below", {"metric": "b_cubed_f"}) == "b_cubed_f_gap_by_group"


# -- the bundled demo --------------------------------------------------------------------


def test_patentsview_demo_end_to_end(tmp_path):
    """The 15 bundled releases: the low-precision 2017 releases, the split 2020-09-29, and the
    releases whose average cluster size moves by more than 15 % on the mentions they share with
    the previous release (2017-12-26, 2020-09-29, 2020-12-29, 2022-06-30) fail.

    About 12 s on an idle 2-core machine (not marked slow: under the 20 s limit).
    """
    (tmp_path / "checkpoints").mkdir()
    shutil.copytree(REPO / "suites", tmp_path / "suites")
    text = (REPO / "checkpoints" / "patentsview.yml").read_text()
    text = text.replace("../er_expectations/data/patentsview", PV_DATA.as_posix())
    path = tmp_path / "checkpoints" / "patentsview.yml"
    path.write_text(text)
    started = time.perf_counter()
    out = io.StringIO()
    report = run_checkpoint(path, progress=False, out=out)
    elapsed = time.perf_counter() - started
    assert len(report.releases) == 15
    failed = {r.label for r in report.failed_releases}
    assert failed == {"2017-08-08", "2017-10-03", "2017-12-26", "2020-09-29", "2020-12-29", "2022-06-30"}
    assert {e.label for e in report.releases[0].critical_failures} == {
        "pairwise_precision",
        "pairwise_f",
    }
    september = next(r for r in report.releases if r.label == "2020-09-29")
    assert [e.label for e in september.critical_failures] == ["pairwise_recall", "average_cluster_size_change"]
    drift = {r.label: [e for e in r.expectations if e.label == "average_cluster_size_change"][0]
             for r in report.releases}
    assert drift["2017-08-08"].success and drift["2017-08-08"].observed is None  # no previous release
    moved = {label: e.observed for label, e in drift.items() if not e.success}
    assert set(moved) == {"2017-12-26", "2020-09-29", "2020-12-29", "2022-06-30"}
    assert all(abs(v) > 0.15 for v in moved.values())
    assert all(abs(e.observed) < 0.15 for label, e in drift.items() if e.success and e.observed is not None)
    assert report.data_docs_index is not None and report.data_docs_index.is_file()
    assert elapsed < 90, f"the demo took {elapsed:.1f} s"


def test_missing_weights_column_points_at_the_column_name(tmp_path):
    """Positions come from the loaded suite (no second parse of the file): for
    ``weights: {column: w}`` the issue points at ``w``."""
    line = "  weights: {column: nope}\n"
    suite = SUITE.replace("  name_column: full_name\n", "  name_column: full_name\n" + line)
    path = make_toy(tmp_path, suite=suite)
    with pytest.raises(ConfigError) as caught:
        prepare_run(path)
    issues = [i for i in caught.value.issues if "weights 'nope'" in i.message]
    assert len(issues) == 2, [str(i) for i in caught.value.issues]  # both estimates inherit it
    for issue in issues:
        assert issue.line == suite.splitlines(keepends=True).index(line) + 1
        assert issue.column == line.index("nope") + 1
