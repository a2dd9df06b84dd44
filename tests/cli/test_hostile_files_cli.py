"""Hostile cases of the file-writing commands (issue 18, items 14 and 15).

An output that is one of the command's inputs, a filled-in worksheet overwritten without
``--force``, and bounds (draws, bootstrap resamples) refused before any work starts.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pandas as pd
import pytest

from er_expectations.cli.common import EXIT_OK, EXIT_USAGE
from er_expectations.cli.main import main


@pytest.fixture()
def release(tmp_path) -> Path:
    """36 records in 9 predicted clusters of 4."""
    path = tmp_path / "records.parquet"
    pd.DataFrame({"mention_id": [f"m{i:02d}" for i in range(36)],
                  "pred": [f"c{i // 4}" for i in range(36)],
                  "ref": [f"t{i // 4}" for i in range(36)]}).to_parquet(path, index=False)
    return path


def _sample(release: Path, out: Path, *extra: str) -> int:
    return main(["sample", str(release), "--record-id", "mention_id", "-p", "pred", "-n", "5", "--seed", "1",
                 "-o", str(out), *extra])


def test_sample_does_not_overwrite_a_worksheet_without_force(release, tmp_path, capsys):
    sheet = tmp_path / "sheet.csv"
    assert _sample(release, sheet) == EXIT_OK
    sheet.write_text(sheet.read_text() + "filled,in,by,hand\n")
    before = sheet.read_bytes()
    capsys.readouterr()
    assert _sample(release, sheet) == EXIT_USAGE
    err = capsys.readouterr().err
    assert str(sheet) in err and "--force" in err and "Traceback" not in err
    assert sheet.read_bytes() == before
    assert _sample(release, sheet, "--force") == EXIT_OK
    assert sheet.read_bytes() != before


def test_sample_refuses_a_huge_number_of_draws_before_reading(tmp_path, capsys):
    started = time.monotonic()
    # the file does not even exist: the bound is checked before any work
    code = main(["sample", str(tmp_path / "absent.parquet"), "-p", "pred", "-n", "1000000000",
                 "--seed", "1", "-o", str(tmp_path / "s.csv")])
    err = capsys.readouterr().err
    assert code == EXIT_USAGE and time.monotonic() - started < 5
    assert "-n" in err and "100,000" in err and "absent" not in err


@pytest.mark.parametrize("value", ["1e9", "1000000000"])
def test_sample_n_in_any_spelling_is_bounded(release, tmp_path, capsys, value):
    code = main(["sample", str(release), "-p", "pred", "-n", value, "--seed", "1", "-o", str(tmp_path / "s.csv")])
    assert code == EXIT_USAGE
    assert "-n" in capsys.readouterr().err
    assert not (tmp_path / "s.csv").exists()


def test_estimate_refuses_a_huge_n_boot_before_reading(tmp_path, capsys):
    code = main(["estimate", str(tmp_path / "absent.parquet"), "-p", "pred", "-r", "ref",
                 "--ci-method", "bootstrap", "--n-boot", "1000000000"])
    err = capsys.readouterr().err
    assert code == EXIT_USAGE and "--n-boot" in err and "20,000" in err and "absent" not in err


def test_benchmark_refuses_to_overwrite_its_labels(release, tmp_path, capsys):
    sheet = tmp_path / "labels.parquet"
    assert _sample(release, sheet) == EXIT_OK
    before = sheet.read_bytes()
    capsys.readouterr()
    code = main(["benchmark", str(sheet), str(release), "--record-id", "mention_id", "-p", "pred", "-o", str(sheet)])
    err = capsys.readouterr().err
    assert code == EXIT_USAGE and "is also an input" in err and str(sheet) in err
    assert sheet.read_bytes() == before


def test_summarize_refuses_to_overwrite_its_input_also_through_a_link(release, tmp_path, capsys):
    before = release.read_bytes()
    link = tmp_path / "alias.csv"
    os.symlink(release, link)
    for output in (str(release), str(tmp_path / "." / release.name), str(link)):
        code = main(["summarize", str(release), "-c", "pred", "-o", output])
        err = capsys.readouterr().err
        assert code == EXIT_USAGE and "is also an input" in err, output
    assert release.read_bytes() == before
    hard = tmp_path / "hard.csv"
    os.link(release, hard)
    assert main(["summarize", str(release), "-c", "pred", "-o", str(hard)]) == EXIT_USAGE
    assert release.read_bytes() == before
    assert main(["summarize", str(release), "-c", "pred", "-o", str(tmp_path / "ok.txt")]) == EXIT_OK
