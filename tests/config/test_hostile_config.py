"""Hostile configuration files (issue 18, item 15): bounds checked before any work starts.

A bootstrap of 1e8 resamples, a FIFO given as a suite, and a suite of 20,004 expectations
each end at once with an error naming the file, line and column (or the file) and the fix.
"""

from __future__ import annotations

import os
import textwrap
import time
from pathlib import Path

import pytest

from er_expectations.config import ConfigError, load_suite, yamlnodes
from er_expectations.config.loading import load_any
from er_expectations.config.yamlnodes import MAX_FILE_BYTES


def _write(tmp_path: Path, text: str, name: str = "s.yml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def _issues(path: Path, loader=load_suite):
    with pytest.raises(ConfigError) as caught:
        loader(path)
    return caught.value.issues


@pytest.mark.parametrize("value", ["1e8", "100000000", "20001"])
def test_n_boot_beyond_the_bound_is_refused_where_written(tmp_path, value):
    path = _write(tmp_path, f"""
        suite: s
        expectations:
          - expectation: expect_estimated_pairwise_precision_to_be_between
            prediction_column: p
            reference_column: r
            min_value: 0.5
            ci_method: bootstrap
            n_boot: {value}
        """)
    (issue,) = _issues(path)
    assert (issue.line, issue.column) == (8, 13)
    assert issue.message.startswith("n_boot: must be <= 20000, got ")


def test_n_boot_at_the_bound_is_accepted(tmp_path):
    path = _write(tmp_path, """
        suite: s
        defaults:
          n_boot: 20000
        expectations:
          - expectation: expect_estimated_pairwise_precision_to_be_between
            prediction_column: p
            reference_column: r
            min_value: 0.5
        """)
    (expectation,) = load_suite(path).expectations
    assert expectation.kwargs["n_boot"] == 20000


def test_n_boot_in_defaults_beyond_the_bound_points_at_defaults(tmp_path):
    path = _write(tmp_path, """
        suite: s
        defaults:
          n_boot: 1e8
        expectations:
          - expectation: expect_estimated_pairwise_precision_to_be_between
            prediction_column: p
            reference_column: r
            min_value: 0.5
        """)
    (issue,) = _issues(path)
    assert issue.line == 3 and "<= 20000" in issue.message


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_is_refused_before_it_is_opened(tmp_path):
    fifo = tmp_path / "suite.yml"
    os.mkfifo(fifo)
    started = time.monotonic()
    (issue,) = _issues(fifo, load_any)  # opening a FIFO with no writer would block forever
    assert time.monotonic() - started < 5
    assert "not a regular file" in issue.message and issue.file == str(fifo)


def test_a_huge_suite_is_refused_at_once_with_its_size(tmp_path):
    entry = "  - expectation: expect_matching_rate_to_be_between\n    prediction_column: p\n    min_value: 0.1\n"
    path = tmp_path / "big.yml"
    path.write_text("suite: big\nexpectations:\n" + entry * 20_004, encoding="utf-8")
    assert path.stat().st_size > MAX_FILE_BYTES
    started = time.monotonic()
    (issue,) = _issues(path, load_any)
    assert time.monotonic() - started < 2
    assert "MB" in issue.message and "split" in (issue.hint or "")


def test_too_many_values_blames_aliases_only_when_there_are_some(tmp_path, monkeypatch):
    monkeypatch.setattr(yamlnodes, "_NODE_LIMIT", 50)  # the bound, made small to keep the test fast
    path = tmp_path / "many.yml"
    path.write_text("suite: s\nexpectations: [" + ",".join(["0"] * 60) + "]\n", encoding="utf-8")
    issue = next(i for i in _issues(path, load_any) if "values" in i.message)
    assert "more than 50 values" in issue.message and "alias" not in issue.message + (issue.hint or "")
    assert "split" in (issue.hint or "")
    path.write_text("a: &a [0, 0, 0, 0, 0, 0, 0, 0, 0, 0]\nb: &b [*a, *a, *a, *a, *a, *a]\nsuite: s\n",
                    encoding="utf-8")
    issue = next(i for i in _issues(path, load_any) if "values" in i.message)
    assert "through its aliases" in issue.message and "aliases" in (issue.hint or "")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_validate_refuses_a_fifo_suite_and_a_fifo_table(tmp_path, capsys):
    import sys

    sys.path.insert(0, str(Path(__file__).parents[1]))
    from support.toyproject import make_toy

    from er_expectations.cli.main import main

    checkpoint = make_toy(tmp_path)
    suite = tmp_path / "suites" / "toy.yml"
    suite.unlink()
    os.mkfifo(suite)
    started = time.monotonic()
    assert main(["validate", str(checkpoint)]) == 2
    assert "not a regular file" in capsys.readouterr().err
    suite.unlink()
    make_toy(tmp_path / "again")
    (tmp_path / "again" / "suites" / "toy.yml").rename(suite)
    records = tmp_path / "data" / "records.parquet"
    records.unlink()
    os.mkfifo(records)
    assert main(["validate", str(checkpoint)]) == 2
    err = capsys.readouterr().err
    assert "records.parquet" in err and "not a regular file" in err
    assert time.monotonic() - started < 30
