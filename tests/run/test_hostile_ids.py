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
import sqlite3
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from support.toyproject import CHECKPOINT as SIZE_CHECKPOINT
from support.toyproject import make_toy

import er_expectations
from er_expectations.cli.common import EXIT_USAGE
from er_expectations.cli.main import main
from er_expectations.core.errors import InputError
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


LABELS_CHECKPOINT = """\
checkpoint: toy_labels
project_dir: ../project
data:
  records: {path: ../data/records.parquet, id_column: rid}
  predictions: {path: ../data/predictions.parquet, id_column: rid, columns: "pred_*", batch_column: prediction}
  name: {columns: [first, last]}
  labels:
    path: ../data/labels.parquet
    release: alpha
    id_column: record_id
    draw_column: draw
    removed_column: removed
    added_column: added
    predicted_cluster_column: predicted_cluster
    true_cluster_column: true_cluster
suites: [toy_labels]
suite_paths: [../suites]
"""

LABELS_SUITE = """\
suite: toy_labels
defaults:
  record_id_column: rid
  prediction_column: prediction
  draw_column: draw
  removed_column: removed
  added_column: added
expectations:
  - expectation: expect_labels_removed_within_predicted_cluster
  - expectation: expect_labels_sampled_record_not_removed
  - expectation: expect_labels_added_outside_predicted_cluster
  - expectation: expect_labels_record_ids_to_exist
  - expectation: expect_labels_consistent_across_draws
  - expectation: expect_labels_true_cluster_to_match
"""


def labels_project(root: Path, predicted: list, *, csv: bool = False) -> Path:
    """The toy with release ``alpha`` of BIG ids and clean labels of three draws (r00, r04, r08:
    true clusters E0, E1, E2, nothing removed or added) whose ``predicted_cluster`` is ``predicted``."""
    checkpoint = LABELS_CHECKPOINT.replace("labels.parquet", "labels.csv") if csv else LABELS_CHECKPOINT
    path = make_toy(root, suite=LABELS_SUITE, checkpoint=checkpoint)
    (root / "suites" / "toy.yml").unlink()
    (root / "suites" / "toy_labels.yml").write_text(LABELS_SUITE, encoding="utf-8")
    big_id_predictions(root / "data" / "predictions.parquet")
    labels = pd.DataFrame({"draw": [1, 2, 3], "record_id": ["r00", "r04", "r08"], "removed": [[], [], []],
                           "added": [[], [], []], "predicted_cluster": predicted,
                           "true_cluster": ["E0", "E1", "E2"]})
    if csv:
        labels.assign(removed="", added="").to_csv(root / "data" / "labels.csv", index=False)
    else:
        labels.to_parquet(root / "data" / "labels.parquet", index=False)
    return path


@pytest.mark.parametrize("csv", [False, True], ids=["parquet", "csv"])
def test_int64_cluster_ids_above_2_53_in_the_labelling_batch(tmp_path, csv):
    path = labels_project(tmp_path, [BIG, BIG + 1, BIG + 2], csv=csv)
    report = run_checkpoint(path, progress=False, out=io.StringIO())
    (release,) = report.releases
    assert release.success, [(e.label, e.observed) for e in release.expectations]
    assert release.evaluated == 6 and release.successful == 6


def test_a_wrong_big_predicted_cluster_is_still_another_release(tmp_path, capsys):
    # BIG + 3 is r08's neighbour cluster: float64 would have called them equal
    path = labels_project(tmp_path, [BIG, BIG + 1, BIG + 3])
    code = main(["run", str(path), "--no-progress"])
    err = capsys.readouterr().err
    assert code == EXIT_USAGE, err
    assert f"draw 3, column 'predicted_cluster': {BIG + 3}, but record 'r08' is in cluster {BIG + 2}" in err


def test_a_text_predicted_cluster_against_an_integer_release_is_an_input_error(tmp_path, capsys):
    path = labels_project(tmp_path, [str(BIG), str(BIG + 1), str(BIG + 2)])
    code = main(["run", str(path), "--no-progress"])
    err = capsys.readouterr().err
    assert code == EXIT_USAGE, err
    assert "labels.parquet: column 'predicted_cluster'" in err
    assert "holds text cluster ids" in err and "integer cluster ids" in err
    assert "another release" not in err


# -- a database: the same ids, the same answers ------------------------------------------------


def sqlite_tables(path: Path, predictions_sql: str) -> str:
    """The toy's records and benchmark in a SQLite file, the predictions made by ``predictions_sql``
    (an untyped table: SQLite keeps each value's own type); returns the URL."""
    from support.sourcetools import sqlite_warehouse

    toy = tmp_toy = path.parent / "toy_src"
    make_toy(tmp_toy)
    url = sqlite_warehouse(path, {"records": pd.read_parquet(toy / "data" / "records.parquet"),
                                  "benchmark": pd.read_parquet(toy / "data" / "benchmark.parquet")})
    con = sqlite3.connect(path)
    try:
        con.executescript(predictions_sql)
    finally:
        con.close()
    return url


SQL_CHECKPOINT = """\
checkpoint: toy
project_dir: ../project
data:
  engine: sql
  connection: {url: "${WAREHOUSE_URL}"}
  records: {table: records, id_column: rid}
  predictions: {table: predictions, id_column: rid, columns: "pred_*", batch_column: prediction}
  benchmark: {table: benchmark, id_column: rid, reference_column: truth}
  name: {columns: [first, last]}
releases: all
suites: [toy_checks]
suite_paths: [../suites]
"""


def untyped_predictions(values: dict[str, list]) -> str:
    columns = list(values)
    rows = ",\n".join("(" + ", ".join(["'" + rid + "'", *(repr(values[c][i]) if values[c][i] is not None else "NULL"
                                                            for c in columns)]) + ")"
                      for i, rid in enumerate(IDS[:39]))
    return (f"CREATE TABLE predictions (rid, {', '.join(columns)});\n"
            f"INSERT INTO predictions VALUES\n{rows};\n")


def test_int64_cluster_ids_above_2_53_on_sqlite_agree_with_files(tmp_path, monkeypatch):
    root = tmp_path / "sql"
    path = make_toy(root, suite=SIZE_SUITE, checkpoint=SQL_CHECKPOINT)
    written = {"pred_alpha": [BIG + i // 4 for i in range(39)], "pred_beta": [BIG + i // 8 for i in range(39)],
               "pred_gamma": [BIG + i // 4 if i else None for i in range(39)]}
    monkeypatch.setenv("WAREHOUSE_URL", sqlite_tables(tmp_path / "w.db", untyped_predictions(written)))
    report = run_checkpoint(path, progress=False, out=io.StringIO())
    sizes = {label: result_of(report, label, "expect_average_cluster_size_to_be_between")["result"]["observed_value"]
             for label in ("alpha", "beta", "gamma")}
    assert sizes == pytest.approx({"alpha": 3.9, "beta": 7.8, "gamma": 3.8})
    assert [r.success for r in report.releases] == [True, False, True]


def test_an_untyped_sqlite_column_with_1_and_text_1_is_refused_as_files_refuse_it(tmp_path, monkeypatch, capsys):
    root = tmp_path / "sql"
    path = make_toy(root, checkpoint=SQL_CHECKPOINT)
    # alpha's first cluster written once as the integer 1, three times as the text '1'
    alpha = [1 if i == 0 else "1" if i < 4 else f"a{i // 4}" for i in range(39)]
    beta = [f"b{i // 8}" for i in range(39)]
    monkeypatch.setenv("WAREHOUSE_URL", sqlite_tables(tmp_path / "w.db", untyped_predictions(
        {"pred_alpha": alpha, "pred_beta": beta})))
    code = main(["run", str(path), "--no-progress"])
    err = capsys.readouterr().err
    assert code == EXIT_USAGE, err
    assert "data.predictions (table 'predictions'): column 'pred_alpha' mixes value types" in err
    assert "1 (integer)" in err and "'1' (text)" in err
    assert not (root / "project").exists()
    # the same values in a pandas frame (the files' engine) are refused too: the engines agree
    frame = pd.DataFrame({"rid": IDS[:39], "pred_alpha": pd.Series(alpha, dtype=object)})
    with pytest.raises(InputError, match="column 'pred_alpha' mixes value types"):
        er_expectations.summarize(frame, cluster="pred_alpha")


# -- names that Great Expectations would confuse -------------------------------------------------------


def test_releases_and_suites_whose_gx_names_collide_are_refused_before_writing(tmp_path, capsys):
    """'a' + 'x__s' and 'a__x' + 's' both make the validation definition 'toy__a__x__s'."""
    suite_s = SIZE_SUITE.replace("suite: toy_checks", "suite: s")
    suite_xs = SIZE_SUITE.replace("suite: toy_checks", "suite: x__s")
    path = make_toy(tmp_path, suite=suite_s, checkpoint=SIZE_CHECKPOINT.replace(
        "suites: [toy_checks]", "suites: [s, x__s]"))
    (tmp_path / "suites" / "xs.yml").write_text(suite_xs, encoding="utf-8")
    predictions = pd.read_parquet(tmp_path / "data" / "predictions.parquet")
    predictions = predictions.rename(columns={"pred_alpha": "pred_a", "pred_beta": "pred_a__x"}).drop(
        columns="pred_gamma")
    predictions.to_parquet(tmp_path / "data" / "predictions.parquet", index=False)
    code = main(["run", str(path), "--no-progress"])
    err = capsys.readouterr().err
    assert code == EXIT_USAGE, err
    assert "toy__a__x__s" in err and "release 'a' with suite 'x__s'" in err and "release 'a__x' with suite 's'" in err
    assert not (tmp_path / "project").exists()


@pytest.mark.parametrize(("kind", "values"), [
    ("list", pa.array([[i // 4] for i in range(39)], pa.list_(pa.int64()))),
    ("struct", pa.array([{"c": i // 4} for i in range(39)], pa.struct([("c", pa.int64())]))),
], ids=["list", "struct"])
def test_a_nested_prediction_column_is_one_input_error(tmp_path, capsys, kind, values):
    path = make_toy(tmp_path)
    table = pa.table({"rid": IDS[:39], "pred_alpha": pa.array([f"a{i // 4}" for i in range(39)]),
                      "pred_beta": values})
    pq.write_table(table, tmp_path / "data" / "predictions.parquet")
    code = main(["run", str(path), "--no-progress"])
    err = capsys.readouterr().err
    assert code == EXIT_USAGE, err
    assert err.count("error") == 1 and "predictions.parquet: column 'pred_beta' holds " + kind in err
    assert not (tmp_path / "project").exists()


def test_categorical_ids_in_one_file_and_text_in_another_give_the_same_results(tmp_path):
    """The README allows categorical ids: the predictions' rid and clusters as categoricals
    (Parquet dictionaries) against text record ids give exactly the all-text results."""
    text_root, cat_root = tmp_path / "text", tmp_path / "categorical"
    reports = {}
    for root in (text_root, cat_root):
        path = make_toy(root, suite=SIZE_SUITE)
        if root is cat_root:
            predictions = pd.read_parquet(root / "data" / "predictions.parquet")
            predictions = predictions.astype({c: "category" for c in predictions.columns})
            predictions.to_parquet(root / "data" / "predictions.parquet", index=False)
            assert isinstance(pd.read_parquet(root / "data" / "predictions.parquet")["rid"].dtype, pd.CategoricalDtype)
        reports[root.name] = run_checkpoint(path, progress=False, out=io.StringIO())
    values = {name: [(r.label, r.success, [(e.label, e.observed) for e in r.expectations]) for r in report.releases]
              for name, report in reports.items()}
    assert values["categorical"] == values["text"]
    sizes = {label: result_of(reports["categorical"], label, "expect_average_cluster_size_to_be_between")
             ["result"]["observed_value"] for label in ("alpha", "beta", "gamma")}
    assert sizes == pytest.approx({"alpha": 4.0, "beta": 8.0, "gamma": 39 / 10})


@pytest.mark.parametrize("predicted", ["integers", "text"])
def test_the_labelling_batch_on_sqlite_agrees_with_files(tmp_path, capsys, monkeypatch, predicted):
    from support.sourcetools import sqlite_warehouse

    values = [BIG, BIG + 1, BIG + 2]
    files = labels_project(tmp_path / "files", values if predicted == "integers" else [str(v) for v in values])
    data = tmp_path / "files" / "data"
    url = sqlite_warehouse(tmp_path / "w.db", {"records": pd.read_parquet(data / "records.parquet"),
                                               "predictions": pd.read_parquet(data / "predictions.parquet")})
    monkeypatch.setenv("WAREHOUSE_URL", url)
    text = files.read_text().replace(
        "  records: {path: ../data/records.parquet, id_column: rid}\n"
        "  predictions: {path: ../data/predictions.parquet,",
        "  engine: sql\n  connection: {url: \"${WAREHOUSE_URL}\"}\n"
        "  records: {table: records, id_column: rid}\n  predictions: {table: predictions,")
    sql = files.with_name("sql.yml")
    sql.write_text(text.replace("project_dir: ../project", "project_dir: ../project_sql"), encoding="utf-8")
    codes = {}
    for name, path in (("files", files), ("sql", sql)):
        codes[name] = main(["run", str(path), "--no-progress"])
        err = capsys.readouterr().err
        if predicted == "text":
            assert "column 'predicted_cluster' (data.labels.predicted_cluster_column) holds text" in err, err
    assert codes == ({"files": 0, "sql": 0} if predicted == "integers" else {"files": EXIT_USAGE, "sql": EXIT_USAGE})
