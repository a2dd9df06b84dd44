"""``run --format json`` and ``--report FILE`` for orchestrators (issue 30 item 8): the run report
on one line, and a document for every early exit; the BashOperator recipe of
docs/orchestrators.md run as Airflow would (its last stdout line parsed as JSON)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from support.paths import REPO
from support.toyproject import make_toy

from er_expectations.cli.common import EXIT_CODES
from er_expectations.cli.main import main

SCHEMA = "er-expectations/run-report"


def _one_line(out: str) -> dict:
    lines = out.splitlines()
    assert len(lines) == 1, out[:500]  # one document, one line
    return json.loads(lines[0])


def test_the_run_report_is_one_line_on_stdout_and_in_the_report_file(tmp_path, capsys):
    path = make_toy(tmp_path)
    report = tmp_path / "report.json"
    assert main(["run", str(path), "--no-progress", "--format", "json", "--report", str(report)]) == 1
    out = capsys.readouterr().out
    document = _one_line(out)
    assert document["schema"] == SCHEMA and document["exit_code"] == 1 and document["status"] == "failed"
    assert [r["label"] for r in document["releases"] if not r["success"]] == ["beta"]
    assert report.read_text(encoding="utf-8") == out  # the same line, byte for byte
    # --report with the text format: the text on stdout, the document in the file
    assert main(["run", str(path), "--no-progress", "--release", "alpha", "--report", str(report)]) == 0
    assert not capsys.readouterr().out.lstrip().startswith("{")
    assert json.loads(report.read_text(encoding="utf-8"))["exit_code"] == 0


def test_a_configuration_error_prints_a_stopped_document_with_the_issues(tmp_path, capsys):
    path = make_toy(tmp_path)
    path.write_text(path.read_text().replace("releases: all", "releases: all\nbogus_key: 1"))
    report = tmp_path / "report.json"
    assert main(["run", str(path), "--format", "json", "--report", str(report)]) == 2
    captured = capsys.readouterr()
    document = _one_line(captured.out)
    assert document["status"] == "stopped" and document["success"] is False and document["exit_code"] == 2
    assert document["exit_meaning"] == EXIT_CODES[2] and document["checkpoint_file"] == str(path)
    line = path.read_text().splitlines().index("bogus_key: 1") + 1
    (issue,) = document["error"]["issues"]
    assert issue["file"] == str(path) and "bogus_key" in issue["message"] and issue["line"] == line
    assert "bogus_key" in captured.err  # the message is on stderr as always
    assert json.loads(report.read_text()) == document
    assert not (tmp_path / "project").exists()  # nothing written


def test_input_errors_and_bad_options_print_a_document_too(tmp_path, capsys):
    path = make_toy(tmp_path)
    assert main(["run", str(path), "--format", "json", "--release", "nope"]) == 2
    document = _one_line(capsys.readouterr().out)
    assert document["status"] == "stopped" and "nope" in document["error"]["message"]
    assert main(["run", str(path), "--format", "json", "--lock-timeout", "soon"]) == 2  # argparse
    captured = capsys.readouterr()
    document = _one_line(captured.out)
    assert document["status"] == "stopped" and document["checkpoint_file"] is None
    assert "soon" in captured.err
    # --report into a missing folder: refused before the run
    assert main(["run", str(path), "--report", str(tmp_path / "no" / "r.json")]) == 2
    assert "--report" in capsys.readouterr().err and not (tmp_path / "project").exists()
    # --report must not overwrite an input
    assert main(["run", str(path), "--report", str(path)]) == 2
    assert "is also an input" in capsys.readouterr().err


@pytest.mark.slow
def test_the_bash_operator_recipe_gives_a_json_last_line(tmp_path):
    """The command of docs/orchestrators.md, run by bash as Airflow's BashOperator runs it."""
    page = (REPO / "docs" / "orchestrators.md").read_text(encoding="utf-8")
    command = next(line for line in page.splitlines()
                   if line.startswith("er-expectations run checkpoints/patentsview.yml --release 2017-08-08"))
    (tmp_path / "checkpoints").mkdir()
    text = (REPO / "checkpoints" / "patentsview.yml").read_text(encoding="utf-8")
    text = text.replace("../er_expectations/", f"{REPO}/er_expectations/").replace("../suites", f"{REPO}/suites")
    (tmp_path / "checkpoints" / "patentsview.yml").write_text(text, encoding="utf-8")
    program = Path(sys.executable).with_name("er-expectations")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    done = subprocess.run(["bash", "-c", f"{shlex.quote(str(program))} {command.removeprefix('er-expectations ')}"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    last = done.stdout.strip().splitlines()[-1]
    document = json.loads(last)
    assert done.returncode == 1 == document["exit_code"]  # 2017-08-08 fails
    assert document["releases"][0]["label"] == "2017-08-08"
    assert set(document["releases"][0]["critical_failures"]) == {"pairwise_precision", "pairwise_f"}
    suite = (REPO / "suites" / "patentsview.yml").read_text(encoding="utf-8")
    first = document["releases"][0]
    assert first["evaluated"] + len(first["skipped"]) == suite.count("\n  - expectation:") == 20
    assert len(first["skipped"]) == 3  # the drift checks: no earlier release
    assert json.loads((tmp_path / "report.json").read_text()) == document
