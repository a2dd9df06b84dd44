"""A Data Docs site that cannot be written is found before anything is validated (issue 18,
item 16): one line naming the folder, exit 2, and it is true that nothing was validated (no new
result, no history version); never GX's tracebacks."""

from __future__ import annotations

import json

from support.readonly import read_only
from support.toyproject import make_toy

from er_expectations.cli.common import EXIT_FAILED, EXIT_USAGE
from er_expectations.cli.main import main


def results(root) -> list:
    return sorted((root / "project" / "gx" / "uncommitted" / "validations").rglob("*.json"))


def test_a_read_only_data_docs_site_is_refused_before_validating(tmp_path, capsys):
    path = make_toy(tmp_path)
    assert main(["run", str(path), "--no-progress"]) == EXIT_FAILED
    capsys.readouterr()
    before = results(tmp_path)
    store = tmp_path / "project" / "er_history.sqlite"
    history = store.read_bytes()
    site = tmp_path / "project" / "gx" / "uncommitted" / "data_docs" / "local_site"
    with read_only(site):
        code = main(["run", str(path), "--no-progress"])
        captured = capsys.readouterr()
    assert code == EXIT_USAGE, captured.err
    assert "Traceback" not in captured.err + captured.out
    assert "An unexpected Exception occurred" not in captured.err + captured.out
    lines = [line for line in captured.err.splitlines() if line.strip()]
    assert len(lines) == 1 and str(site) in lines[0] and "cannot be written" in lines[0]
    assert results(tmp_path) == before and store.read_bytes() == history
    # writable again: the run works
    assert main(["run", str(path), "--no-progress"]) == EXIT_FAILED
    assert len(results(tmp_path)) == len(before) + 3
    assert json.loads(results(tmp_path)[-1].read_text())["meta"]["run_id"]["run_name"] == "toy"
