"""Worksheets and benchmarks written as CSV reach people's spreadsheets (issue 18, item 17).

A text cell that a spreadsheet would run as a formula (``=1+1``, ``+cmd``, ``-2+3``, ``@SUM(A1)``)
is neutralised with a leading apostrophe, by the function the diff CSV uses; a number such as
``-5`` stays a number. An id is never changed: an id that would be a formula, or that holds
the list separator, is refused for CSV with the way out (Parquet, another separator).
"""

from __future__ import annotations

import csv

import pandas as pd
import pytest

from er_expectations.analysis.labels import parse_labels
from er_expectations.analysis.sampling import draw_sample, write_frame
from er_expectations.cli.main import main
from er_expectations.core.errors import InputError
from er_expectations.core.text import spreadsheet_safe

NAMES = ["=1+1", "+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)", "-5", "Ann", "\tTab", "\rCR"]


def records(ids=None, names=NAMES) -> pd.DataFrame:
    ids = ids or [f"r{i}" for i in range(len(names))]
    return pd.DataFrame({"id": ids, "pred": ["A"] * len(names), "name": names})


def rows(path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def test_spreadsheet_safe_prefixes_formulas_only():
    assert [spreadsheet_safe(n) for n in NAMES] == [
        "'=1+1", "'+cmd|' /C calc'!A0", "'-2+3", "'@SUM(A1)", "-5", "Ann", "'\tTab", "'\rCR"]
    assert spreadsheet_safe("") == "" and spreadsheet_safe("1e5") == "1e5" and spreadsheet_safe("+3.5") == "+3.5"


def test_worksheet_names_are_neutralised_and_ids_kept(tmp_path):
    sheet = draw_sample(records(), prediction="pred", n=8, seed=1, record_id="id", columns=["name"])
    path = write_frame(sheet, tmp_path / "sheet.csv")
    written = rows(path)
    by_id = {r["record_id"]: r["name"] for r in written}
    expected = {f"r{i}": spreadsheet_safe(n) for i, n in enumerate(NAMES)}
    assert by_id == {k: v for k, v in expected.items() if k in by_id}
    assert all(r["members_name"].startswith("'=1+1 | ") for r in written)  # one cluster: all names, "=1+1" first
    assert {r["members"] for r in written} == {";".join(f"r{i}" for i in range(8))}
    # Parquet holds the values themselves
    back = pd.read_parquet(write_frame(sheet, tmp_path / "sheet.parquet"))
    assert set(back["name"]) <= set(NAMES)


def test_an_id_a_spreadsheet_would_run_is_refused_for_csv_only(tmp_path):
    frame = records(ids=["=HYPERLINK(\"http://x\")", "r1", "r2"], names=["a", "b", "c"])
    sheet = draw_sample(frame, prediction="pred", n=3, seed=0, record_id="id")
    with pytest.raises(InputError) as info:
        write_frame(sheet, tmp_path / "sheet.csv")
    message = str(info.value)
    assert "'=HYPERLINK(\"http://x\")'" in message and "formula" in message and ".parquet" in message
    assert not (tmp_path / "sheet.csv").exists()
    back = pd.read_parquet(write_frame(sheet, tmp_path / "sheet.parquet"))
    assert "=HYPERLINK(\"http://x\")" in back["members"].iloc[0].tolist()


def test_an_id_holding_the_separator_is_refused_then_written_with_another(tmp_path):
    frame = records(ids=["a;b", "c", "d"], names=["x", "y", "z"])
    sheet = draw_sample(frame, prediction="pred", n=2, seed=0, record_id="id")
    with pytest.raises(InputError) as info:
        write_frame(sheet, tmp_path / "sheet.csv")
    message = str(info.value)
    assert "'a;b'" in message and "separator ';'" in message and "members" in message
    assert not (tmp_path / "sheet.csv").exists()
    path = write_frame(sheet, tmp_path / "sheet.csv", separator="|")
    written = rows(path)
    assert written[0]["members"] == "a;b|c|d"
    labels = pd.DataFrame({"draw": [1], "record_id": ["c"], "removed": ["a;b|d"], "added": [""]})
    assert parse_labels(labels, separator="|").removed == [("a;b", "d")]


def test_the_sample_command_refuses_with_exit_2(tmp_path, capsys):
    path = tmp_path / "records.csv"
    records(ids=["a;b", "c", "d"], names=["x", "y", "z"]).to_csv(path, index=False)
    out = tmp_path / "sheet.csv"
    code = main(["sample", str(path), "-p", "pred", "--record-id", "id", "-n", "2", "--seed", "0", "-o", str(out)])
    assert code == 2
    assert "separator ';'" in capsys.readouterr().err and not out.exists()
