"""The ``run``, ``validate`` and ``init`` commands: exit codes, messages, files written."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from support.paths import REPO
from support.toyproject import CHECKPOINT, SUITE, make_toy, snapshot

from er_expectations.cli.main import main

ISSUE_LINE = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+)(:(?P<col>\d+))?: .+", re.M)


# -- run ---------------------------------------------------------------------------------


def test_run_exit_1_when_a_critical_expectation_fails(tmp_path, capsys):
    path = make_toy(tmp_path)
    assert main(["run", str(path), "--no-progress"]) == 1
    out = capsys.readouterr().out
    assert "beta" in out and "FAILED" in out
    index = re.search(r"^Data Docs: (.+)$", out, re.M)
    assert index and Path(index.group(1)).is_file()


def test_run_exit_0_when_the_selected_releases_pass(tmp_path, capsys):
    path = make_toy(tmp_path)
    assert main(["run", str(path), "--release", "alpha", "--release", "gamma", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "All 2 release(s) passed" in out
    assert "beta" not in out.split("release ", 1)[1]


def test_run_exit_0_when_only_warnings_fail(tmp_path, capsys):
    # alpha passes every critical check; a tightened warning (matching rate <= 0.6) fails
    # on it and must not change the exit code
    suite = SUITE.replace("    max_value: 1.0\n    severity: warning", "    max_value: 0.6\n    severity: warning")
    path = make_toy(tmp_path, suite=suite)
    assert main(["run", str(path), "--release", "alpha", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "matching_rate" in out and "warning/info expectation(s) failed" in out


def test_run_unknown_release_exit_2_did_you_mean(tmp_path, capsys):
    path = make_toy(tmp_path)
    assert main(["run", str(path), "--release", "gama", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "did you mean 'gamma'" in err
    assert not (tmp_path / "project").exists()


@pytest.mark.parametrize(
    "edit",
    [
        pytest.param(("checkpoint", "releases: all", "releases: all\nsuites: [again]"), id="duplicate_key"),
        pytest.param(("checkpoint", "id_column: rid}", "id_column: ride}"), id="missing_column"),
        pytest.param(("checkpoint", "../data/records.parquet", "../data/gone.parquet"), id="missing_file"),
        pytest.param(("checkpoint", "releases: all", "release: all"), id="unknown_key"),
        pytest.param(("checkpoint", "suites: [toy_checks]", "suites: [other]"), id="unknown_suite"),
        pytest.param(("suite", "  reference_column: truth", "  reference_column: benchmark_id"), id="suite_column"),
    ],
)
def test_run_bad_configuration_exit_2_every_issue_located(tmp_path, capsys, edit):
    path = make_toy(tmp_path)
    which, old, new = edit
    target = path if which == "checkpoint" else tmp_path / "suites" / "toy.yml"
    text = target.read_text()
    assert old in text
    target.write_text(text.replace(old, new, 1))
    assert main(["run", str(path), "--no-progress"]) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if not line.startswith("er-expectations:")]
    assert lines, err
    for line in lines:
        assert ISSUE_LINE.match(line), line
    assert "nothing was run and nothing was written" in err
    assert not (tmp_path / "project").exists()


def test_run_bad_configuration_leaves_existing_project_untouched(tmp_path, capsys):
    path = make_toy(tmp_path)
    assert main(["run", str(path), "--release", "alpha", "--no-progress"]) == 0
    before = snapshot(tmp_path / "project")
    path.write_text(CHECKPOINT.replace("columns: \"pred_*\"", "columns: \"guess_*\""))
    assert main(["run", str(path), "--no-progress"]) == 2
    assert "selects no release column" in capsys.readouterr().err
    assert snapshot(tmp_path / "project") == before


# -- validate ----------------------------------------------------------------------------


def test_validate_ok_per_file(capsys):
    files = [str(REPO / "suites" / "patentsview.yml"), str(REPO / "checkpoints" / "patentsview.yml")]
    assert main(["validate", *files]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 and all(": ok" in line for line in out)
    assert "15 releases" in out[1]


def test_validate_reports_every_issue_of_every_file(tmp_path, capsys):
    path = make_toy(tmp_path)
    suite = tmp_path / "suites" / "toy.yml"
    suite.write_text(SUITE.replace("min_value: 0.9", "min_vaule: 0.9"))
    other = tmp_path / "other.yml"
    other.write_text("suite: x\nexpectations:\n  - expectation: expect_nothing\n")
    assert main(["validate", str(other), str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err
    assert "unknown expectation 'expect_nothing'" in err
    assert "did you mean 'min_value'" in err
    assert f"{suite}:" in err and f"{other}:3:" in err


def test_validate_checks_checkpoint_references(tmp_path, capsys):
    path = make_toy(tmp_path, checkpoint=CHECKPOINT.replace("[toy_checks]", "[toy_chekcs]"))
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:" in err and "did you mean 'toy_checks'" in err


# -- init --------------------------------------------------------------------------------


def _init_args(root: Path, *extra: str) -> list[str]:
    data = root / "data"
    return [
        "init",
        "--records", str(data / "records.parquet"),
        "--id-column", "rid",
        "--predictions", str(data / "predictions.parquet"),
        "--prediction-columns", "pred_*",
        "--benchmark", str(data / "benchmark.parquet"),
        "--reference-column", "truth",
        "--name-columns", "first", "last",
        "--dir", str(root / "new"),
        "--name", "scaffolded",
        *extra,
    ]


def test_init_writes_files_that_validate_and_run(tmp_path, capsys):
    make_toy(tmp_path)
    assert main(_init_args(tmp_path)) == 0
    out = capsys.readouterr().out
    suite = tmp_path / "new" / "suites" / "scaffolded.yml"
    checkpoint = tmp_path / "new" / "checkpoints" / "scaffolded.yml"
    assert suite.is_file() and checkpoint.is_file()
    assert f"wrote {suite}" in out and f"er-expectations run {checkpoint}" in out
    assert main(["validate", str(suite), str(checkpoint)]) == 0
    assert "3 releases" in capsys.readouterr().out
    # three releases and a benchmark: both drift checks against the previous release
    assert "expect_statistic_change_to_be_below" in suite.read_text()
    assert "metric: pairwise_recall" in suite.read_text()
    assert main(["run", str(checkpoint), "--release", "alpha", "--no-progress"]) in (0, 1)
    assert (tmp_path / "new" / "gx_project" / "gx" / "great_expectations.yml").is_file()


def test_init_refuses_to_overwrite_without_force(tmp_path, capsys):
    make_toy(tmp_path)
    assert main(_init_args(tmp_path)) == 0
    suite = tmp_path / "new" / "suites" / "scaffolded.yml"
    suite.write_text(suite.read_text() + "# my edits\n")
    edited = suite.read_text()
    capsys.readouterr()
    assert main(_init_args(tmp_path)) == 2
    err = capsys.readouterr().err
    assert "already exist" in err and "--force" in err
    assert suite.read_text() == edited
    assert main(_init_args(tmp_path, "--force")) == 0
    assert "# my edits" not in suite.read_text()


def test_init_checks_columns_before_writing(tmp_path, capsys):
    make_toy(tmp_path)
    args = _init_args(tmp_path)
    args[args.index("truth")] = "truht"
    args[args.index("pred_*")] = "guess_*"
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "did you mean 'truth'" in err
    assert "'guess_*' matches no column" in err
    assert not (tmp_path / "new").exists()


def test_init_prediction_files_layout(tmp_path, capsys):
    make_toy(tmp_path)
    data = tmp_path / "data"
    import pandas as pd

    wide = pd.read_parquet(data / "predictions.parquet")
    for label in ("alpha", "beta"):
        wide[["rid", f"pred_{label}"]].rename(columns={f"pred_{label}": "cluster"}).to_parquet(
            data / f"{label}.parquet", index=False
        )
    assert main([
        "init", "--records", str(data / "records.parquet"), "--id-column", "rid",
        "--prediction-files", f"2021-01={data / 'alpha.parquet'}", f"2021-02={data / 'beta.parquet'}",
        "--prediction-column", "cluster", "--dir", str(tmp_path / "files"),
    ]) == 0
    checkpoint = tmp_path / "files" / "checkpoints" / "data.yml"  # named after the data folder
    assert checkpoint.is_file()
    capsys.readouterr()
    assert main(["validate", str(checkpoint)]) == 0
    assert "2 releases" in capsys.readouterr().out
    # no benchmark: the summary statistics, whose placeholder bounds pass, and (two releases)
    # the drift of the average cluster size against the previous release: skipped on the first
    suite = (tmp_path / "files" / "suites" / "data.yml").read_text()
    assert "expect_statistic_change_to_be_below" in suite and "expect_estimate_change" not in suite
    alpha, beta = (wide[f"pred_{label}"] for label in ("alpha", "beta"))
    both = alpha.notna() & beta.notna()
    change = (both.sum() / beta[both].nunique()) / (both.sum() / alpha[both].nunique()) - 1
    assert abs(change) > 0.15  # the toy's beta moves the average cluster size beyond the placeholder
    assert main(["run", str(checkpoint), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^2021-01 +3/3 +ok +1 ", out, re.M), out
    assert re.search(r"^2021-02 +3/4 +ok \(warnings\) .* average_cluster_size_change$", out, re.M), out


def test_demo_checkpoint_is_valid_from_another_folder(tmp_path, capsys, monkeypatch):
    copy = tmp_path / "repo"
    shutil.copytree(REPO / "suites", copy / "suites")
    shutil.copytree(REPO / "checkpoints", copy / "checkpoints")
    (copy / "er_expectations").symlink_to(REPO / "er_expectations")
    monkeypatch.chdir(tmp_path)
    assert main(["validate", "repo/checkpoints/patentsview.yml"]) == 0
    assert "checkpoint 'patentsview', 15 releases" in capsys.readouterr().out


# -- suite parameters: run --param / --params (issue 18 item 8) ----------------------------------

#: The toy suite with the precision threshold as a suite parameter (beta's precision is 3/7 = 0.4286).
PARAM_SUITE = SUITE.replace("    min_value: 0.9\n    note:", "    min_value: {$PARAMETER: min_precision}\n    note:")


def test_run_fills_in_suite_parameters_from_param_and_params(tmp_path, capsys):
    assert PARAM_SUITE != SUITE
    path = make_toy(tmp_path, suite=PARAM_SUITE)
    assert main(["run", str(path), "--release", "beta", "--no-progress", "--param", "min_precision=0.5"]) == 1
    assert main(["run", str(path), "--release", "beta", "--no-progress", "--param", "min_precision=0.4"]) == 0
    file = tmp_path / "params.yml"
    file.write_text("min_precision: 0.5\n", encoding="utf-8")
    assert main(["run", str(path), "--release", "beta", "--no-progress", "--params", str(file)]) == 1
    # --param wins over the file
    assert main(["run", str(path), "--release", "beta", "--no-progress", "--params", str(file),
                 "--param", "min_precision=0.4"]) == 0


def test_run_parameter_problems_exit_2_before_anything_is_written(tmp_path, capsys):
    path = make_toy(tmp_path, suite=PARAM_SUITE)
    suite_file = next((tmp_path / "suites").glob("*.yml"))
    assert main(["run", str(path), "--no-progress"]) == 2
    err = capsys.readouterr().err
    line = next(i + 1 for i, text in enumerate(suite_file.read_text().splitlines()) if "$PARAMETER" in text)
    assert (f"{suite_file.name}:{line}:16: min_value: suite parameter 'min_precision' has no value; give it "
            "with --param min_precision=VALUE or in a --params file") in err
    assert main(["run", str(path), "--no-progress", "--param", "min_precision=0.5", "--param", "min_precison=1"]) == 2
    err = capsys.readouterr().err
    assert ("--param min_precison=1: suite parameter 'min_precison' is used by no suite of the checkpoint; "
            "did you mean 'min_precision'?") in err
    assert main(["run", str(path), "--no-progress", "--param", "min_precision=90"]) == 2
    err = capsys.readouterr().err
    assert "the value of suite parameter 'min_precision' (--param min_precision=90) must be <= 1, got 90" in err
    assert main(["run", str(path), "--no-progress", "--params", str(tmp_path / "nope.yml")]) == 2
    assert "nope.yml: file not found" in capsys.readouterr().err
    assert not (tmp_path / "project").exists()  # nothing written


def test_run_parameters_for_a_suite_without_any_exit_2(tmp_path, capsys):
    path = make_toy(tmp_path)
    assert main(["run", str(path), "--no-progress", "--param", "x=1"]) == 2
    assert "the suites use no suite parameter; remove it" in capsys.readouterr().err
    assert not (tmp_path / "project").exists()
