"""Every CSV the package writes goes through ONE writer, :func:`er_expectations.core.io.csv_text`,
which neutralises formula-leading cells (=, +, -, @, tab, CR) the same way everywhere (issue 18,
item 17): worksheets, labels and benchmark files, diffs, history exports, summaries, estimates
and plans.
"""

from __future__ import annotations

import csv
import io
import re
import sqlite3

import pandas as pd
from support.paths import REPO
from support.toyproject import make_toy

from er_expectations.cli.main import main
from er_expectations.core.io import csv_text
from er_expectations.core.text import runs_as_formula

HOSTILE = ["=1+1", "+1+1", "-x", "@SUM(A1:A2)", "\t=1", "\r=1", "=HYPERLINK(\"http://x\",\"y\")"]


def _read(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


def test_csv_text_neutralises_every_formula_cell_index_and_header_and_keeps_numbers():
    frame = pd.DataFrame({"name": HOSTILE, "=col": [-5, 1, 2, 3, 4, 5, 6], "ok": ["a;b", "x,y", "q\"q", "-", "1e5",
                                                                                "-0.5", "+3"]},
                         index=pd.Index([f"@r{i}" for i in range(7)], name="=idx"))
    rows = _read(csv_text(frame, index=True))
    head, body = rows[0], rows[1:]
    assert head == ["'=idx", "name", "'=col", "ok"]
    for row, hostile in zip(body, HOSTILE, strict=True):
        assert row[0].startswith("'@r")
        assert row[1] == "'" + hostile  # the whole cell kept after the apostrophe
        assert not runs_as_formula(row[1]) and not runs_as_formula(row[0])
    assert [r[2] for r in body] == ["-5", "1", "2", "3", "4", "5", "6"]  # numbers stay numbers
    # "-" alone would run as a formula in some spreadsheets; numbers written as text stay as they are
    assert [r[3] for r in body] == ["a;b", "x,y", "q\"q", "'-", "1e5", "-0.5", "+3"]


def test_no_module_writes_csv_but_the_one_writer():
    """A new CSV writer must use csv_text: any other to_csv or csv.writer in the package fails here."""
    offenders = []
    for path in sorted((REPO / "er_expectations").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for number, line in enumerate(text.splitlines(), 1):
            if re.search(r"\.to_csv\(|csv\.writer\(|csv\.DictWriter\(", line) and path.name != "io.py":
                offenders.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    io_text = (REPO / "er_expectations/core/io.py").read_text(encoding="utf-8")
    assert io_text.count(".to_csv(") == 1  # inside csv_text
    assert offenders == []


def test_a_history_export_neutralises_a_hostile_release_label(tmp_path, capsys):
    path = make_toy(tmp_path)
    assert main(["run", str(path), "--no-progress", "--release", "alpha"]) == 0
    with sqlite3.connect(tmp_path / "project" / "er_history.sqlite") as db:
        db.execute("UPDATE er_history_runs SET release = ? WHERE release = 'alpha'", ("=2+3",))
    capsys.readouterr()
    assert main(["history", str(path), "-e", "pairwise_precision", "--format", "csv"]) == 0
    rows = _read(capsys.readouterr().out)
    release = rows[0].index("release")
    assert [r[release] for r in rows[1:]] == ["'=2+3"]
    assert not any(runs_as_formula(cell) for row in rows for cell in row)


def test_summary_and_estimate_csv_go_through_the_writer(tmp_path, capsys):
    frame = pd.DataFrame({"=pred": ["=a", "=a", "-b", "c"], "truth": ["t1", "t1", "t2", "t3"]})
    file = tmp_path / "r.parquet"
    frame.to_parquet(file)
    assert main(["summarize", str(file), "--cluster", "=pred", "--format", "csv"]) == 0
    out = capsys.readouterr().out
    rows = _read(out)
    assert rows[0] == ["statistic", "value"] and "\r\n" in out
    assert dict(r for r in rows[1:])["n_clusters"] in ("3", "3.0")  # three clusters: =a, -b, c
