"""The error audit in checkpoints (SPEC 12.1; issue 20): ``data.tags`` names a tags file next to the
benchmark, its rows are checked with located errors, and each release batch carries the tags of each
benchmark cluster so that ``expect_error_cause_rate_to_be_below`` runs end to end."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest
from support.toyproject import CHECKPOINT, SUITE, make_toy

from er_expectations.config import ConfigError
from er_expectations.core.errors import InputError
from er_expectations.run.runner import prepare_run, run_checkpoint

AUDIT = """\
  - expectation: expect_error_cause_rate_to_be_below
    tags_column: error_tags
    tag: twins merged
    max_rate: 0.1
    decision: estimate  # 10 entities: the point estimate, so that the toy's 0.2 fails
"""
TAGS_LINE = "  tags: {path: ../data/tags.csv, id_column: cluster}\n"


def _project(tmp_path, tags: pd.DataFrame, *, tags_line: str = TAGS_LINE):
    checkpoint = CHECKPOINT.replace("  name: {columns: [first, last]}\n",
                                    "  name: {columns: [first, last]}\n" + tags_line)
    path = make_toy(tmp_path, suite=SUITE + AUDIT, checkpoint=checkpoint)
    tags.to_csv(tmp_path / "data" / "tags.csv", index=False)
    return path


def good_tags() -> pd.DataFrame:
    return pd.DataFrame({"cluster": ["E0", "E1", "E2"], "kind": ["over", "over", "under"],
                         "tag": ["twins merged", "twins merged", "<b>typo</b>"]})


def test_tags_reach_the_batches_and_the_check_runs(tmp_path):
    path = _project(tmp_path, good_tags())
    prepared = prepare_run(path)
    assert "error_tags" in prepared.data.batch_columns()
    frame = prepared.data.frame(prepared.data.select(["beta"])[0])
    e0 = frame.loc[frame["truth"] == "E0", "error_tags"]
    assert len(e0) == 4 and json.loads(e0.iloc[0]) == [["over", "twins merged", []]]
    assert frame.loc[frame["truth"] == "E5", "error_tags"].isna().all()
    report = run_checkpoint(path, releases=["alpha", "beta"], progress=False, out=io.StringIO())
    by_release = {r.label: next(e for e in r.expectations if "error_cause" in e.expectation)
                  for r in report.releases}
    alpha, beta = by_release["alpha"], by_release["beta"]
    assert alpha.error is None and beta.error is None, (alpha.error, beta.error)
    # alpha is perfect: no error, the share is 0; beta merges every entity: E0, E1 tagged, 8 of 40 records
    assert alpha.success and not beta.success
    assert beta.observed == pytest.approx(0.2)
    # the Data Docs page of beta: the rates, the chart and the examples, every tag escaped
    release = next(r for r in report.releases if r.label == "beta")
    pages = [p for p in release.pages if p.endswith(".html")]
    assert pages, release.pages
    from urllib.parse import unquote, urlparse

    html = "".join(Path(unquote(urlparse(p).path)).read_text(encoding="utf-8") for p in pages)
    assert "Example clusters per tag" in html and "by cause" in html and "data:image/svg+xml" in html
    assert "&lt;b&gt;typo&lt;/b&gt;" in html and "<b>typo</b>" not in html


@pytest.mark.parametrize("change, message", [
    (lambda t: t.assign(cluster=["E0", "E1", "E77"]), r"tags.csv, row 3, column 'cluster'.*'E77' is not in the benchmark"),
    (lambda t: t.assign(kind=["over", "ovr", "under"]), r"tags.csv, row 2, column 'kind'.*'ovr'"),
    (lambda t: pd.concat([t, t.iloc[[0]]]), r"tags.csv, row 4, column 'tag'.*repeats row 1"),
])
def test_bad_tags_files_are_located(tmp_path, change, message):
    path = _project(tmp_path, change(good_tags()))
    with pytest.raises(InputError, match=message):
        run_checkpoint(path, releases=["alpha"], progress=False, out=io.StringIO())
    assert not (tmp_path / "project").exists()  # a data error before any write


def test_tags_config_errors(tmp_path):
    path = _project(tmp_path, good_tags(), tags_line="  tags: {path: ../data/tags.csv, id_column: clustr}\n")
    with pytest.raises(ConfigError) as caught:
        prepare_run(path)
    assert "clustr" in str(caught.value)
    (tmp_path / "x").mkdir()
    path = _project(tmp_path / "x", good_tags(), tags_line="  tags: {path: ../data/nope.csv}\n")
    with pytest.raises(ConfigError) as caught:
        prepare_run(path)
    assert "nope.csv" in str(caught.value)


def test_tags_need_a_benchmark(tmp_path):
    no_bench = CHECKPOINT.replace("  benchmark: {path: ../data/benchmark.parquet, id_column: rid, reference_column: truth}\n",
                                  "  tags: {path: ../data/tags.csv}\n")
    path = make_toy(tmp_path / "a", checkpoint=no_bench)
    good_tags().to_csv(tmp_path / "a" / "data" / "tags.csv", index=False)
    with pytest.raises(ConfigError) as caught:
        prepare_run(path)
    assert "data.tags: error tags belong to benchmark clusters" in str(caught.value)
    assert f"{path}:" in str(caught.value)


@pytest.mark.parametrize("engine", ["sql", "spark"])
def test_tags_on_an_engine_checkpoint_are_refused_with_the_reason(tmp_path, engine):
    """The error audit reads its tags with the files engine: on SQL or Spark the checkpoint says
    so, at the line of data.tags, instead of a generic unknown key."""
    from support.sourcetools import write_checkpoint

    from er_expectations.cli.main import main

    path = write_checkpoint(tmp_path, engine=engine, url="sqlite:///warehouse.db",
                            **({"records": "path: r.parquet", "predictions": "path: p.parquet",
                                "benchmark": "path: b.parquet"} if engine == "spark" else {}))
    text = path.read_text(encoding="utf-8").replace("  name: {columns: [first, last]}\n",
                                                    "  name: {columns: [first, last]}\n"
                                                    "  tags: {path: ../data/tags.csv}\n")
    path.write_text(text, encoding="utf-8")
    line = text.splitlines().index("  tags: {path: ../data/tags.csv}") + 1
    err = io.StringIO()
    from contextlib import redirect_stderr, redirect_stdout
    with redirect_stderr(err), redirect_stdout(io.StringIO()):
        assert main(["validate", str(path)]) == 2
    said = err.getvalue()
    assert f"{path}:{line}:" in said and "files engine only" in said and f"engine {engine}" in said


@pytest.mark.parametrize("taken, role", [("truth", "the true cluster, data.benchmark.reference_column"),
                                         ("rid", "the record id, data.records.id_column"),
                                         ("prediction", "the prediction, data.predictions.batch_column, default 'prediction'"),
                                         ("full_name", "the name, data.name.output_column")])
def test_a_tags_column_naming_a_column_the_batch_has_is_a_config_error(tmp_path, taken, role):
    """Hostile round 3, item 2: ``data.tags.column`` naming the reference column made every release
    fail (exit 1); the record id or the prediction a MergeError (exit 4). Now: exit 2 at the line of
    data.tags, naming the clash and the fix, nothing validated or written."""
    from contextlib import redirect_stderr, redirect_stdout

    from er_expectations.cli.main import main

    line_text = f"  tags: {{path: ../data/tags.csv, id_column: cluster, column: {taken}}}"
    path = _project(tmp_path, good_tags(), tags_line=line_text + "\n")
    line = path.read_text(encoding="utf-8").splitlines().index(line_text) + 1
    err = io.StringIO()
    with redirect_stderr(err), redirect_stdout(io.StringIO()):
        assert main(["run", str(path)]) == 2
    said = err.getvalue()
    assert f"{path}:{line}:" in said, said
    assert f"data.tags.column: '{taken}' is already a column of every release batch ({role})" in said, said
    assert "give data.tags.column another name" in said
    assert not (tmp_path / "project").exists()
