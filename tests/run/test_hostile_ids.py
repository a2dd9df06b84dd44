"""Cluster and record ids that used to give silent wrong answers (issue 18, item 13).

Each case checks the values themselves against what was written by hand: 64-bit cluster ids
above 2**53 keep their exact value through the runner's release table, the GX results and
the history, on files and on a database; a text id where the release holds integers, mixed
types in an untyped SQLite column, CSV ids such as "NA", ragged CSV rows and ids with
surrounding spaces are input errors that name the file, the column or the line.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from support.toyproject import make_toy

import er_expectations  # noqa: F401  registers the expectations
from er_expectations.cli.common import EXIT_USAGE
from er_expectations.cli.main import main
from er_expectations.run.runner import DATA_FOLDER, run_checkpoint

BIG = 2**62 + 1  # a hashed / snowflake id: float64 cannot tell BIG from BIG + 1
IDS = [f"r{i:02d}" for i in range(40)]

SIZE_SUITE = """\
suite: toy_checks
defaults:
  prediction_column: prediction
  reference_column: truth
  name_column: full_name
expectations:
  - expectation: expect_average_cluster_size_to_be_between
    min_value: 3.5
    max_value: 4.5
  - expectation: expect_estimated_pairwise_precision_to_be_between
    min_value: 0.9
"""


def big_id_predictions(path: Path) -> dict[str, list]:
    """Predictions written by pyarrow (no pandas metadata), clusters of 4 ids BIG, BIG+1, ...

    ``alpha`` is perfect, ``beta`` merges two true clusters into one (BIG+k for k//2), ``gamma``
    leaves r00 out (a null), and the file has no row for r39 (the outer join adds a null).
    """
    columns = {
        "pred_alpha": [BIG + i // 4 for i in range(39)],
        "pred_beta": [BIG + i // 8 for i in range(39)],
        "pred_gamma": [BIG + i // 4 if i else None for i in range(39)],
    }
    table = pa.table({"rid": IDS[:39], **{k: pa.array(v, pa.int64()) for k, v in columns.items()}})
    pq.write_table(table, path)
    return columns


def result_of(report, label: str, expectation: str) -> dict:
    release = next(r for r in report.releases if r.label == label)
    stored = json.loads(release.result_files[0].read_text())
    return next(r for r in stored["results"] if r["expectation_config"]["type"] == expectation)


def test_int64_cluster_ids_above_2_53_keep_their_value_on_files(tmp_path):
    path = make_toy(tmp_path, suite=SIZE_SUITE)
    written = big_id_predictions(tmp_path / "data" / "predictions.parquet")
    report = run_checkpoint(path, progress=False, out=io.StringIO())

    folder = tmp_path / "project" / DATA_FOLDER / "toy"
    for label in ("alpha", "beta", "gamma"):
        table = pd.read_parquet(folder / f"{label}.parquet").set_index("rid")
        assert pd.api.types.is_integer_dtype(table["prediction"].dtype), table["prediction"].dtype
        expected = dict(zip(IDS[:39], written[f"pred_{label}"], strict=True))
        got = {rid: (None if pd.isna(v) else int(v)) for rid, v in table["prediction"].items()}
        assert got == {**expected, "r39": None}  # every id exact; r39 is outside the release
    # alpha: 10 clusters, 39 records in the release (r39 has no prediction) -> 3.9;
    # beta: 5 clusters of 8 (the last of 7) -> 39 / 5 = 7.8; gamma: 38 records in 10 clusters
    sizes = {label: result_of(report, label, "expect_average_cluster_size_to_be_between")["result"]["observed_value"]
             for label in ("alpha", "beta", "gamma")}
    assert sizes == pytest.approx({"alpha": 3.9, "beta": 7.8, "gamma": 3.8})
    assert [r.success for r in report.releases] == [True, False, True]
    # the history holds the same values
    from er_expectations.history.store import HistoryStore

    store = HistoryStore.open(f"sqlite:///{tmp_path / 'project' / 'er_history.sqlite'}", create=False)
    try:
        series = store.results(checkpoint="toy", expectation_type="expect_average_cluster_size_to_be_between")
    finally:
        store.close()
    assert dict(zip(series["release"], series["value"], strict=True)) == pytest.approx(
        {"alpha": 3.9, "beta": 7.8, "gamma": 3.8})
