"""A suite's ``id:`` names a check (issue 18 item 4): unique, validated, its label and its history identity."""

from __future__ import annotations

import io

import pytest
from support.toyproject import CHECKPOINT, make_toy

from er_expectations.config import ConfigError, load_suite
from er_expectations.run.runner import run_checkpoint

TWO_SAME = """\
suite: toy_checks
defaults:
  prediction_column: prediction
expectations:
  - expectation: expect_average_cluster_size_to_be_between
    max_value: 100
    id: size_loose
  - expectation: expect_average_cluster_size_to_be_between
    min_value: 3
    max_value: 5
    id: {second}
"""


def test_a_duplicated_id_is_located(tmp_path):
    path = tmp_path / "s.yml"
    path.write_text(TWO_SAME.replace("{second}", "size_loose"), encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_suite(path)
    text = str(err.value)
    assert f"{path}:11:9" in text and "already the id of another check" in text


@pytest.mark.parametrize("bad", ["'has space'", "'<b>x</b>'", "''", "'-lead'"])
def test_a_bad_id_is_refused_at_its_place(tmp_path, bad):
    path = tmp_path / "s.yml"
    path.write_text(TWO_SAME.replace("{second}", bad), encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_suite(path)
    assert f"{path}:11:" in str(err.value) and "id" in str(err.value)


def test_ids_label_the_checks_and_keep_two_series(tmp_path):
    suite = TWO_SAME.replace("{second}", "size_tight")
    path = make_toy(tmp_path, suite=suite, checkpoint=CHECKPOINT)
    report = run_checkpoint(path, progress=False, out=io.StringIO())
    labels = {e.label for r in report.releases for e in r.expectations}
    assert labels == {"size_loose", "size_tight"}
    import contextlib
    import json

    from er_expectations.cli.main import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["history", str(path), "-e", "size_tight", "--format", "json"])
    assert code == 0
    data = json.loads(out.getvalue())
    assert data["expectation"] == "size_tight" and [r["release"] for r in data["series"]] == ["alpha", "beta", "gamma"]
