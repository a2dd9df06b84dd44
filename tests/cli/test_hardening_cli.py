"""Hostile cases of the command line and the runner (issue 6, items 1–3).

Names that would become paths outside the project, bad input files, exit codes that mean
one thing each, one severity rule, and concurrent or killed runs on one project.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pandas as pd
import pytest
from support.paths import REPO
from support.toyproject import CHECKPOINT, SUITE, make_toy, snapshot

from er_expectations.cli.common import EXIT_CODES
from er_expectations.cli.main import main
from er_expectations.core.errors import InputError
from er_expectations.core.names import ensure_inside, name_problem, safe_name
from er_expectations.core.release_names import release_file_names
from er_expectations.core.severity import severity_of, status_of, worst_status


def _no_traceback(err: str) -> None:
    assert "Traceback" not in err
    assert err.strip(), "an error must say something"


# -- 1. names that become paths -------------------------------------------------------------

HOSTILE_NAMES = [".tmp.{u}.y", "..", ".", "a/b", "..{u}", "a b", "<script>x</script>", "é", "x" * 101,
                 "a.b", "-lead", "_lead", "/abs", "C:\\x"]


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_name_rule_refuses_names_that_become_paths(name):
    problem = name_problem(name.format(u="u"), what="suite")
    assert problem is not None
    message, hint = problem
    assert "suite name" in message and "try '" in hint
    assert name_problem(safe_name(name.format(u="u")), what="suite") is None  # the hint is valid


@pytest.mark.parametrize("name", ["toy", "toy_checks", "2022-06-30", "A1", "x" * 100])
def test_name_rule_accepts_plain_names(name):
    assert name_problem(name, what="suite") is None


@pytest.mark.parametrize("hostile", [".tmp.{u}.y", "..", "a/b", "..{u}"])
def test_hostile_suite_name_is_refused_by_validate_and_run_alike(tmp_path, capsys, hostile):
    unique = uuid.uuid4().hex
    name = hostile.format(u=unique)
    suite = SUITE.replace("suite: toy_checks", f"suite: '{name}'")
    checkpoint = CHECKPOINT.replace("suites: [toy_checks]", f"suites: ['{name}']")
    path = make_toy(tmp_path, suite=suite, checkpoint=checkpoint)
    suite_file = tmp_path / "suites" / "toy.yml"
    assert main(["validate", str(suite_file)]) == 2
    err = capsys.readouterr().err
    assert re.search(r"toy\.yml:1:\d+: suite name", err), err
    assert main(["run", str(path), "--no-progress"]) == 2
    err = capsys.readouterr().err
    _no_traceback(err)
    assert "suite name" in err
    assert not (tmp_path / "project").exists()
    assert not Path(f"/tmp/{unique}").exists()


@pytest.mark.parametrize("hostile", ["..", ".", ".hidden", "a/../../b"])
def test_hostile_checkpoint_name_is_refused(tmp_path, capsys, hostile):
    path = make_toy(tmp_path, checkpoint=CHECKPOINT.replace("checkpoint: toy", f"checkpoint: '{hostile}'"))
    assert main(["validate", str(path)]) == 2
    assert "checkpoint name" in capsys.readouterr().err
    assert main(["run", str(path), "--no-progress"]) == 2
    _no_traceback(capsys.readouterr().err)
    assert not (tmp_path / "project").exists()


@pytest.mark.parametrize("hostile", [".tmp.x", "..", "a/b", "a b"])
def test_init_refuses_hostile_names(tmp_path, capsys, hostile):
    make_toy(tmp_path / "t")
    data = tmp_path / "t" / "data"
    code = main(["init", "--records", str(data / "records.parquet"), "--id-column", "rid",
                 "--predictions", str(data / "predictions.parquet"), "--name", hostile,
                 "--dir", str(tmp_path / "out")])
    assert code == 2
    err = capsys.readouterr().err
    assert "--name" in err and "nothing was written" in err
    assert not (tmp_path / "out").exists()


def test_ensure_inside():
    root = Path("/tmp/proj-x")
    assert ensure_inside(root, root / "a" / "b.parquet") == (root / "a" / "b.parquet").resolve()
    for bad in (root / ".." / "x", Path("/etc/passwd"), root.parent / "proj-x2" / "f"):
        with pytest.raises(InputError, match="outside the project"):
            ensure_inside(root, bad)


def test_release_tables_never_leave_the_project_through_a_symlink(tmp_path, capsys):
    path = make_toy(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "er_data").symlink_to(outside, target_is_directory=True)
    assert main(["run", str(path), "--no-progress"]) == 2
    err = capsys.readouterr().err
    _no_traceback(err)
    assert "outside the project" in err
    assert list(outside.rglob("*")) == []


def test_release_labels_that_clean_up_alike_get_distinct_stable_names():
    labels = ["a b", "a_b", "é", "ü", "2022-06-30", "v1.2", "A", "a"]
    names = release_file_names(labels)
    assert len(set(n.casefold() for n in names.values())) == len(labels)
    assert names["2022-06-30"] == "2022-06-30"
    assert all(name_problem(n, what="release") is None for n in names.values())
    # stable: a label's name does not depend on the other labels or their order
    for label in labels:
        assert release_file_names([label, "zzz"])[label] == release_file_names(["zzz", label])[label] or label in (
            "A", "a")
    assert names["a_b"] == "a_b" and names["a b"].startswith("a_b-")
    assert names["é"].startswith("e-") and names["ü"].startswith("u-")


def test_colliding_release_labels_keep_their_own_tables_and_labels(tmp_path, capsys):
    path = make_toy(tmp_path)
    data = tmp_path / "data"
    pred = pd.read_parquet(data / "predictions.parquet")
    pred = pred.rename(columns={"pred_alpha": "pred_a b", "pred_beta": "pred_a_b", "pred_gamma": "pred_é"})
    pred["pred_ü"] = pred["pred_a_b"]
    pred.to_parquet(data / "predictions.parquet", index=False)
    assert main(["run", str(path), "--no-progress"]) == 1
    out = capsys.readouterr().out
    rows = {line.split()[0]: line for line in out.splitlines() if re.match(r"^(a b|a_b|é|ü)\s", line)}
    rows.update({"a b": next(line for line in out.splitlines() if line.startswith("a b "))})
    assert "ok" in rows["a b"] and "FAILED" in rows["a_b"] and "ok" in rows["é"] and "FAILED" in rows["ü"]
    files = sorted(p.name for p in (tmp_path / "project" / "er_data" / "toy").glob("*.parquet"))
    assert len(files) == 4, files
    # each table holds its own release
    for label, column in (("a b", "pred_a b"), ("a_b", "pred_a_b")):
        name = release_file_names(["a b", "a_b", "é", "ü"])[label]
        table = pd.read_parquet(tmp_path / "project" / "er_data" / "toy" / f"{name}.parquet")
        assert table.set_index("rid")["prediction"].to_dict() == pred.set_index("rid")[column].to_dict()


# -- 2. exit codes -------------------------------------------------------------------------

def _table(tmp_path: Path) -> Path:
    path = tmp_path / "ok.csv"
    path.write_text("rid,pred\nr1,a\nr2,a\nr3,b\n", encoding="utf-8")
    return path


def _bad_files(tmp_path: Path) -> dict[str, Path]:
    good = tmp_path / "good.parquet"
    pd.DataFrame({"rid": ["r1", "r2"], "pred": ["a", "a"]}).to_parquet(good)
    raw = good.read_bytes()
    files = {
        "truncated.parquet": raw[: len(raw) // 2],
        "empty.parquet": b"",
        "garbage.parquet": b"PAR1 this is not parquet at all PAR1",
        "text.parquet": b"rid,pred\nr1,a\n",
        "utf16.csv": "rid,pred\nr1,a\n".encode("utf-16"),
        "latin1_header.csv": "r\xe9f,pred\nr1,a\n".encode("latin-1"),
        "latin1_body.csv": "rid,pred\nr1,caf\xe9\n".encode("latin-1"),
        "empty.csv": b"",
        "blank.csv": b"\n\n",
        "binary.csv": bytes(range(256)) * 4,
    }
    out = {}
    for name, payload in files.items():
        (tmp_path / name).write_bytes(payload)
        out[name] = tmp_path / name
    return out


@pytest.mark.parametrize("which", ["truncated.parquet", "empty.parquet", "garbage.parquet", "text.parquet",
                                   "utf16.csv", "latin1_header.csv", "latin1_body.csv", "empty.csv",
                                   "blank.csv", "binary.csv"])
def test_bad_files_give_one_line_and_exit_2(tmp_path, capsys, which):
    path = _bad_files(tmp_path)[which]
    code = main(["summarize", str(path), "--cluster", "pred"])
    err = capsys.readouterr().err
    assert code == 2, err
    _no_traceback(err)
    assert len(err.strip().splitlines()) == 1, err
    assert str(path) in err


def test_output_into_a_missing_folder_or_onto_a_folder(tmp_path, capsys):
    table = _table(tmp_path)
    assert main(["summarize", str(table), "--cluster", "pred", "-o", str(tmp_path / "nope" / "x.json")]) == 2
    err = capsys.readouterr().err
    assert "does not exist" in err
    _no_traceback(err)
    assert main(["summarize", str(table), "--cluster", "pred", "-o", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "is a folder" in err
    assert not (tmp_path / "nope").exists()


def test_internal_errors_exit_4_without_traceback_unless_debug(tmp_path, capsys, monkeypatch):
    import er_expectations.analysis.release as api

    def boom(*args, **kwargs):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(api.Release, "summarize", boom)
    table = _table(tmp_path)
    assert main(["summarize", str(table), "--cluster", "pred"]) == 4
    err = capsys.readouterr().err
    _no_traceback(err)
    assert "internal error: ZeroDivisionError" in err and "--debug" in err
    assert main(["summarize", str(table), "--cluster", "pred", "--debug"]) == 4
    assert "Traceback" in capsys.readouterr().err
    assert main(["--debug", "summarize", str(table), "--cluster", "pred"]) == 4
    assert "Traceback" in capsys.readouterr().err


def test_exit_codes_are_documented_in_help(capsys):
    with pytest.raises(SystemExit):
        from er_expectations.cli.main import build_parser

        build_parser().parse_args(["--help"])
    out = capsys.readouterr().out
    for code in EXIT_CODES:
        assert re.search(rf"\b{code} ", out)


def test_unwritable_data_docs_site_is_exit_2_with_a_message(tmp_path, capsys):
    path = make_toy(tmp_path)
    assert main(["run", str(path), "--no-progress", "--release", "alpha"]) == 0
    capsys.readouterr()
    site = tmp_path / "project" / "gx" / "uncommitted" / "data_docs" / "local_site"
    before = snapshot(tmp_path / "project" / "gx" / "uncommitted" / "validations")
    import shutil

    shutil.rmtree(site)
    site.write_text("not a folder")  # as unwritable as a read-only folder, even for root
    code = main(["run", str(path), "--no-progress", "--release", "alpha"])
    err = capsys.readouterr().err
    assert code == 2, err
    _no_traceback(err)
    assert "local_site" in err
    after = snapshot(tmp_path / "project" / "gx" / "uncommitted" / "validations")
    assert set(before) <= set(after)  # earlier results are kept


# -- one severity rule ---------------------------------------------------------------------

def test_severity_rule():
    assert severity_of(None) == "critical" and severity_of("WARNING ") == "warning"
    assert severity_of("fatal") == "critical" and severity_of("") == "critical"
    assert status_of(critical_failed=1, errors=1, warnings_failed=1) == "failed"
    assert status_of(critical_failed=0, errors=1, warnings_failed=1) == "error"
    assert status_of(critical_failed=0, errors=0, warnings_failed=1) == "warnings"
    assert status_of(critical_failed=0, errors=0, warnings_failed=0) == "passed"
    assert worst_status(["passed", "warnings", "error"]) == "error" and worst_status([]) == "passed"


ERROR_SUITE = SUITE.replace(
    """  - expectation: expect_estimated_pairwise_recall_to_be_between
    min_value: 0.8
""",
    """  - expectation: expect_estimated_pairwise_recall_to_be_between
    min_value: 0.8
    severity: warning
""",
)


def test_an_expectation_that_raised_with_severity_warning_is_an_error_everywhere(tmp_path, capsys):
    path = make_toy(tmp_path, suite=ERROR_SUITE.replace("min_value: 0.9\n", "min_value: 0.9\n    severity: info\n"))
    data = tmp_path / "data"
    pred = pd.read_parquet(data / "predictions.parquet")
    pred["pred_delta"] = pd.Series([None] * len(pred), dtype="string")  # an empty release: estimates raise
    pred.to_parquet(data / "predictions.parquet", index=False)
    code = main(["run", str(path), "--no-progress", "--release", "delta"])
    captured = capsys.readouterr()
    assert code == 3, captured.out + captured.err
    assert "ERROR" in captured.out and "All 1 release(s) passed" not in captured.out
    assert "could not be computed" in captured.out
    index = re.search(r"^Data Docs: (.+)$", captured.out, re.M)
    text = Path(index.group(1)).read_text(encoding="utf-8")
    assert "raised an error" in text


# -- 3. concurrent and killed runs ---------------------------------------------------------

def _cli(*args: str, **kwargs) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    return subprocess.Popen([sys.executable, "-m", "er_expectations.cli.main", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, **kwargs)


@pytest.mark.slow
def test_three_concurrent_runs_take_turns_and_all_results_are_built(tmp_path):
    path = make_toy(tmp_path)
    procs = [_cli("run", str(path), "--no-progress") for _ in range(3)]
    outs = [p.communicate(timeout=600) for p in procs]
    codes = [p.returncode for p in procs]
    assert codes == [1, 1, 1], outs
    for _out, err in outs:
        assert "Traceback" not in err, err
    assert sum("waiting for it to finish" in out for out, _ in outs) >= 1
    index = tmp_path / "project" / "gx" / "uncommitted" / "data_docs" / "local_site" / "index.html"
    text = index.read_text(encoding="utf-8")
    assert "not built" not in text
    results = list((tmp_path / "project" / "gx" / "uncommitted" / "validations").rglob("*.json"))
    assert len(results) == 9  # 3 runs × 3 releases × 1 suite
    assert not list((tmp_path / "project").rglob("*.tmp"))


@pytest.mark.slow
def test_a_killed_run_releases_the_lock_and_leaves_no_half_written_table(tmp_path):
    path = make_toy(tmp_path)
    proc = _cli("run", str(path), "--no-progress", start_new_session=True)
    lock = tmp_path / "project" / ".er-expectations.lock"
    deadline = time.time() + 120
    while not (tmp_path / "project" / "gx").exists() and time.time() < deadline:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()
    assert lock.exists()
    for table in (tmp_path / "project" / "er_data" / "toy").glob("*.parquet"):
        pd.read_parquet(table)  # complete files only (atomic writes)
    again = _cli("run", str(path), "--no-progress", "--lock-timeout", "60")
    out, err = again.communicate(timeout=600)
    assert again.returncode == 1, out + err
    assert "waiting" not in out


def test_lock_timeout_is_exit_5(tmp_path, capsys):
    from filelock import FileLock

    path = make_toy(tmp_path)
    (tmp_path / "project").mkdir()
    with FileLock(str(tmp_path / "project" / ".er-expectations.lock")):
        proc = _cli("run", str(path), "--no-progress", "--lock-timeout", "0.5")
        out, err = proc.communicate(timeout=300)
    assert proc.returncode == 5, out + err
    _no_traceback(err)
    assert "--lock-timeout" in err
    assert not (tmp_path / "project" / "gx").exists()


def test_a_run_heals_what_a_killed_run_left_behind(tmp_path, capsys):
    path = make_toy(tmp_path)
    assert main(["run", str(path), "--no-progress"]) == 1
    capsys.readouterr()
    gx_dir = tmp_path / "project" / "gx"
    suite_json = gx_dir / "expectations" / "toy_checks.json"
    suite_json.write_text(suite_json.read_text()[:40])  # killed while GX wrote the suite
    site = gx_dir / "uncommitted" / "data_docs" / "local_site"
    pages = sorted((site / "validations").rglob("*.html"))
    pages[0].unlink()  # killed after storing a result, before building its page
    stale = site / ".index.html.er-expectations-abcd_123.tmp"
    stale.write_text("half")
    other = tmp_path / "project" / "notes.tmp"  # not one of ours: kept
    other.write_text("mine")
    assert main(["run", str(path), "--no-progress"]) == 1
    out = capsys.readouterr().out
    assert "Replacing the unreadable stored suite" in out
    assert pages[0].is_file() and not stale.exists() and other.exists()
    text = (site / "index.html").read_text(encoding="utf-8")
    assert "not built" not in text


def test_an_unreadable_suite_of_another_checkpoint_still_stops_the_run(tmp_path, capsys):
    path = make_toy(tmp_path)
    assert main(["run", str(path), "--no-progress", "--release", "alpha"]) == 0
    capsys.readouterr()
    foreign = tmp_path / "project" / "gx" / "expectations" / "someone_else.json"
    foreign.write_text("{not json")
    assert main(["run", str(path), "--no-progress", "--release", "alpha"]) == 2
    err = capsys.readouterr().err
    assert "someone_else.json" in err and "cannot read this stored expectation suite" in err
    assert foreign.read_text() == "{not json"  # never touched


@pytest.mark.parametrize("which", ["records", "predictions", "benchmark"])
def test_duplicated_record_rows_in_any_checkpoint_file_are_exit_2(tmp_path, capsys, which):
    path = make_toy(tmp_path)
    file = tmp_path / "data" / f"{which}.parquet"
    frame = pd.read_parquet(file)
    pd.concat([frame, frame.iloc[[3]]]).to_parquet(file, index=False)
    assert main(["run", str(path), "--no-progress"]) == 2
    err = capsys.readouterr().err
    _no_traceback(err)
    assert f"{which}.parquet" in err and "duplicated record ids" in err and "'r03'" in err
    assert not (tmp_path / "project").exists()


@pytest.mark.parametrize("which", ["predictions", "benchmark"])
def test_record_ids_of_different_types_across_files_are_exit_2(tmp_path, capsys, which):
    path = make_toy(tmp_path)
    file = tmp_path / "data" / f"{which}.parquet"
    frame = pd.read_parquet(file)
    frame["rid"] = frame["rid"].str[1:].astype("int64")  # 1 never equals 'r01' nor '1'
    frame.to_parquet(file, index=False)
    assert main(["run", str(path), "--no-progress"]) == 2
    err = capsys.readouterr().err
    _no_traceback(err)
    assert "record ids have different types" in err and f"{which}.parquet" in err and "integer" in err


def test_cli_join_on_ids_of_different_types_is_exit_2(tmp_path, capsys):
    (tmp_path / "a.csv").write_text("rid,pred\n1,a\n2,a\n", encoding="utf-8")
    pd.DataFrame({"rid": [1, 2], "t": ["x", "x"]}).to_parquet(tmp_path / "b.parquet")
    code = main(["estimate", str(tmp_path / "a.csv"), "--join", str(tmp_path / "b.parquet"), "--on", "rid",
                 "-p", "pred", "-r", "t"])
    err = capsys.readouterr().err
    assert code == 2 and "record ids have different types" in err
    _no_traceback(err)


def test_strict_bounds_from_yaml_reach_gx(tmp_path, capsys):
    strict = SUITE.replace("""  - expectation: expect_estimated_pairwise_recall_to_be_between
    min_value: 0.8
""", """  - expectation: expect_estimated_pairwise_recall_to_be_between
    min_value: 0.0
    max_value: 1.0
    decision: estimate
    strict_max: true
""")
    path = make_toy(tmp_path, suite=strict)
    # alpha is perfect: recall 1.0 equals max_value, which a strict bound excludes (on the point estimate)
    assert main(["run", str(path), "--no-progress", "--release", "alpha"]) == 1
    assert "pairwise_recall" in capsys.readouterr().out
    path.write_text(path.read_text())  # the same files without the strict flag pass
    (tmp_path / "suites" / "toy.yml").write_text(strict.replace("    strict_max: true\n", ""))
    assert main(["run", str(path), "--no-progress", "--release", "alpha"]) == 0


def test_strict_bounds_that_exclude_everything_are_a_config_error(tmp_path, capsys):
    suite = tmp_path / "s.yml"
    suite.write_text("""suite: s
defaults: {prediction_column: p}
expectations:
  - expectation: expect_matching_rate_to_be_between
    min_value: 0.5
    max_value: 0.5
    strict_min: true
""")
    assert main(["validate", str(suite)]) == 2
    assert "s.yml:7:17: min_value = max_value = 0.5 with strict_min: no value can pass" in capsys.readouterr().err


def test_record_id_column_of_a_suite_must_be_the_checkpoints_id(tmp_path, capsys):
    suite = SUITE.replace("  prediction_column: prediction\n", "  prediction_column: prediction\n  record_id_column: mention\n")
    path = make_toy(tmp_path, suite=suite)
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert re.search(r"toy\.yml:\d+:\d+: .*record_id_column 'mention' is not a column of the release batches", err)
    assert "write record_id_column: rid" in err
    good = make_toy(tmp_path / "good", suite=suite.replace("record_id_column: mention", "record_id_column: rid"))
    assert main(["run", str(good), "--no-progress", "--release", "alpha"]) == 0


def test_a_project_config_left_truncated_by_a_killed_run_is_restored(tmp_path, capsys):
    path = make_toy(tmp_path)
    assert main(["run", str(path), "--no-progress", "--release", "alpha"]) == 0
    capsys.readouterr()
    project = tmp_path / "project"
    config = project / "gx" / "great_expectations.yml"
    good = config.read_text()
    assert (project / ".er-expectations" / "great_expectations.yml").read_text() == good
    config.write_text(good[: len(good) // 3])  # GX rewrites it in place: a kill leaves this
    assert main(["run", str(path), "--no-progress"]) == 1
    out = capsys.readouterr().out
    assert "Restored" in out and "great_expectations.yml" in out
    assert "data_docs_sites" in config.read_text()
    # without the copy: one clear line naming the file and the fix, exit 2
    (project / ".er-expectations" / "great_expectations.yml").unlink()
    config.write_text(good[: len(good) // 3])
    assert main(["run", str(path), "--no-progress"]) == 2
    err = capsys.readouterr().err
    _no_traceback(err)
    # where the cut falls decides whether YAML names a line and column: both are clear
    assert re.search(r"great_expectations\.yml(:\d+:\d+)?: cannot open the Great Expectations project", err)
    assert "delete the folder" in err


def test_a_new_project_appears_whole(tmp_path, capsys):
    path = make_toy(tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    (project / ".er-new-project-x1abcdef").mkdir()  # left by a run killed while creating the project
    (project / ".er-new-project-x1abcdef" / "gx").mkdir()
    assert main(["run", str(path), "--no-progress", "--release", "alpha"]) == 0
    assert not list(project.glob(".er-new-project-*"))
    assert (project / "gx" / "great_expectations.yml").is_file()


def test_a_folder_given_as_the_checkpoint_file(tmp_path, capsys):
    assert main(["run", str(tmp_path), "--no-progress"]) == 2
    err = capsys.readouterr().err
    _no_traceback(err)
    assert "is a folder, not a YAML file" in err and "checkpoints/<name>.yml" in err
    assert main(["validate", str(tmp_path)]) == 2
    assert "is a folder" in capsys.readouterr().err


def test_a_declared_format_is_used_to_read_the_file(tmp_path, capsys):
    """``format:`` of a checkpoint file overrides its suffix (it used to be parsed, then ignored)."""
    data = tmp_path / "data"
    checkpoint = CHECKPOINT.replace(
        "records: {path: ../data/records.parquet, id_column: rid}",
        "records: {path: ../data/records.table, format: parquet, id_column: rid}",
    ).replace(
        "benchmark: {path: ../data/benchmark.parquet, id_column: rid, reference_column: truth}",
        "benchmark: {path: ../data/benchmark.txt, format: csv, id_column: rid, reference_column: truth}",
    )
    path = make_toy(tmp_path, checkpoint=checkpoint)
    (data / "records.parquet").rename(data / "records.table")
    pd.read_parquet(data / "benchmark.parquet").to_csv(data / "benchmark.txt", index=False)
    assert main(["validate", str(path)]) == 0, capsys.readouterr().err
    assert main(["run", str(path), "--no-progress", "--release", "alpha"]) == 0, capsys.readouterr().err
