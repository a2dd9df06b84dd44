"""The disparity expectation in checkpoints: record and benchmark columns reach the batches."""

from __future__ import annotations

import io

import pandas as pd
import pytest
from support.toyproject import SUITE, make_toy

from er_expectations.config import ConfigError
from er_expectations.run.runner import prepare_run, run_checkpoint

DISPARITY = """\
  - expectation: expect_subgroup_disparity_to_be_below
    {source}
    metric: pairwise_recall
    max_disparity: 0.1
    min_draws: 2
    severity: warning
"""


def _suite(source: str) -> str:
    return SUITE + DISPARITY.format(source=source)


def test_surname_and_first_name_columns_are_kept_in_the_batches(tmp_path):
    path = make_toy(tmp_path, suite=_suite("surname_column: last\n    first_name_column: first"))
    prepared = prepare_run(path)
    assert {"last", "first", "full_name"} <= set(prepared.data.batch_columns())
    release = prepared.data.select(["alpha"])[0]
    frame = prepared.data.frame(release)
    assert {"last", "first"} <= set(frame.columns)
    report = run_checkpoint(path, releases=["alpha"], progress=False, out=io.StringIO())
    outcome = next(e for e in report.releases[0].expectations if "disparity" in e.expectation)
    assert outcome.error is None, outcome.error


def test_a_group_column_may_come_from_the_benchmark_file(tmp_path):
    path = make_toy(tmp_path, suite=_suite("group_column: segment"))
    bench = pd.read_parquet(tmp_path / "data" / "benchmark.parquet")
    bench["segment"] = ["north" if int(t[1:]) % 2 else "south" for t in bench["truth"]]
    bench.to_parquet(tmp_path / "data" / "benchmark.parquet", index=False)
    prepared = prepare_run(path)
    assert "segment" in prepared.data.batch_columns()
    report = run_checkpoint(path, releases=["alpha", "beta"], progress=False, out=io.StringIO())
    for release in report.releases:
        outcome = next(e for e in release.expectations if "disparity" in e.expectation)
        assert outcome.error is None, outcome.error


@pytest.mark.parametrize("source, hint", [
    ("surname_column: lst", "did you mean 'last'"),
    ("group_column: segmnt", "records file"),
])
def test_a_missing_column_points_at_the_suite_line_with_a_hint(tmp_path, source, hint):
    suite = _suite(source)
    path = make_toy(tmp_path, suite=suite)
    with pytest.raises(ConfigError) as caught:
        prepare_run(path)
    (issue,) = caught.value.issues
    assert suite.splitlines()[issue.line - 1].strip() == source
    assert hint in issue.hint
