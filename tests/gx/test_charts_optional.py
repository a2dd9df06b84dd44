"""Without vl-convert (the ``charts`` extra not installed), nothing but the charts changes.

Each run is a script in its own interpreter, one with ``vl_convert`` hidden
(``sys.modules["vl_convert"] = None``: every import of it fails, as when the package is not
installed) and one without the hiding. Hidden, every Data Docs page shows a visible note where
a chart would be, naming the extra, escaped and with no script or outside resource; a command
asked for a chart file says which extra to install and exits with the usage code before
writing anything; and the validation results are those of the run that drew its charts.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from support.datadocs import parse_fetches, remote_refs

from er_expectations.cli.exits import EXIT_USAGE

pytestmark = pytest.mark.slow

TESTS = Path(__file__).resolve().parents[1]
HOSTILE = "<script>alert(1)</script>"
LABELS = ["a1", "a2", HOSTILE, "a4", "a5", "a6"]
NOTE = "Chart not drawn: install er-expectations[charts] to draw it"
IMAGE = re.compile(r'<img src="data:image/svg\+xml;base64,')

HIDE = 'import sys\nsys.modules["vl_convert"] = None  # as if vl-convert-python were not installed\n'

RUN = """
import io, json, re, sys
from pathlib import Path
sys.path[:0] = [{gx_tests!r}, {tests!r}]
from test_drift_history import make_project
from er_expectations.core.chart_extra import charts_available
from er_expectations.run.runner import run_checkpoint

root = Path({root!r})
report = run_checkpoint(make_project(root, pinned="a1", labels={labels!r}), progress=False, out=io.StringIO())
results = {{}}
for release in report.releases:
    for file in release.result_files:
        data = json.loads(Path(file).read_text(encoding="utf-8"))
        results.setdefault(release.label, []).extend(
            [r["expectation_config"]["type"], r["expectation_config"]["kwargs"], r["success"], r["result"]]
            for r in data["results"])
pages = {{re.sub(r"\\d{{8}}T\\d{{6}}\\.\\d{{6}}Z", "<t>", str(p.relative_to(root))): p.read_text(encoding="utf-8")
          for p in sorted(report.data_docs_index.parent.glob("validations/**/*.html"))}}
print(json.dumps({{"charts": charts_available(), "status": str(report.status), "success": report.success, "results": results, "pages": pages}}))
"""


def run_script(body: str, *, hide: bool, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``body`` as a script file run by this interpreter (``python -c`` can end silently once
    GX imports pyspark), with ``vl_convert`` hidden or not."""
    script = cwd / ("hidden.py" if hide else "plain.py")
    script.write_text((HIDE if hide else "") + textwrap.dedent(body), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=600, check=False)


def run_project(root: Path, *, hide: bool) -> dict:
    root.mkdir(parents=True)
    done = run_script(RUN.format(gx_tests=str(TESTS / "gx"), tests=str(TESTS), root=str(root), labels=LABELS),
                      hide=hide, cwd=root)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("charts_optional")
    return {"drawn": run_project(root / "drawn", hide=False), "hidden": run_project(root / "hidden", hide=True),
            "root": root}


def test_the_results_are_the_same_without_the_charts_extra(runs):
    drawn, hidden = runs["drawn"], runs["hidden"]
    assert drawn["charts"] is True and hidden["charts"] is False
    assert (hidden["status"], hidden["success"]) == (drawn["status"], drawn["success"])
    assert hidden["results"] == drawn["results"]
    assert sum(len(v) for v in hidden["results"].values()) >= 12


def test_pages_show_a_note_where_a_chart_would_be(runs):
    drawn, hidden = runs["drawn"], runs["hidden"]
    assert drawn["pages"].keys() == hidden["pages"].keys()
    charts_drawn = notes = 0
    for name, html in hidden["pages"].items():
        images = len(IMAGE.findall(drawn["pages"][name]))
        charts_drawn += images
        assert not IMAGE.search(html), name
        assert html.count(NOTE) == images, name  # one note in the place of each chart
        notes += html.count(NOTE)
        assert NOTE not in drawn["pages"][name]
        assert "<script" not in html.lower()
        assert HOSTILE not in html  # the release labels the note names are escaped
        assert parse_fetches(html).handlers == [] and remote_refs(html) == ([], 0)
    assert charts_drawn >= 10 and notes == charts_drawn
    assert any("&lt;script&gt;alert(1)&lt;/script&gt;" in html and NOTE in html for html in hidden["pages"].values())


CLI = """
import sys
from er_expectations.cli import program
sys.exit(program(sys.argv[1:] if len(sys.argv) > 1 else {argv!r}))
"""


@pytest.mark.parametrize("command", [
    ["history", "{checkpoint}", "-e", "average_cluster_size", "--chart", "{out}"],
    ["simulate", "{records}", "--prediction", "pred_a1", "--truth", "pred_a2", "--sizes", "5", "--reps", "2",
     "--metrics", "pairwise_precision", "--chart", "{out}"],
    ["plan", "{records}", "--prediction", "pred_a1", "--reference", "pred_a2", "--target-se", "0.05",
     "--metrics", "pairwise_precision", "--chart", "{out}"],
])
@pytest.mark.parametrize("suffix", [".svg", ".png"])
def test_a_chart_file_asked_for_names_the_extra_and_exits_with_the_usage_code(runs, command, suffix):
    root = runs["root"] / "hidden"
    out = root / f"asked-{command[0]}{suffix}"
    argv = [a.format(checkpoint=root / "checkpoints" / "hist.yml", records=root / "data" / "predictions.parquet",
                     out=out) for a in command]
    done = run_script(CLI.format(argv=argv), hide=True, cwd=root)
    assert done.returncode == EXIT_USAGE, (done.stdout, done.stderr)
    assert "er-expectations[charts]" in done.stderr and "vl-convert-python" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert not out.exists()
