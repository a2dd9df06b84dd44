"""A labelling checkpoint (``data.labels``, SPEC 9) whose records and predictions stay in a
database or Spark (``data.engine: sql | spark``).

The labels file is read with pandas; from the engine come only the record rows the rules
read (the ids the labels name and the members of the drawn records' predicted clusters),
fetched by id from the release's batch. The run must equal the same labels checked from
files: the same labelling batch, row for row, and the same GX results (every observed
value, message and failing draw listed), on SQLite, PostgreSQL and Spark local mode, with
the demo labels against 2021-12-30. Hostile: labels naming ids the database does not have
(rule 4 still reports them), a missing table or column (exit 2, at its key), an
unreachable database (exit 7), the rows brought back counted.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest
from support.enginetools import postgres_url, spark_available
from support.paths import REPO
from support.sourcetools import count_fetched_rows, postgres_warehouse, sqlite_warehouse

import er_expectations  # noqa: F401 - registers the expectations
from er_expectations.cli.common import EXIT_SOURCE, EXIT_USAGE
from er_expectations.cli.main import main
from er_expectations.run.runner import prepare_run, run_checkpoint

DATA = REPO / "er_expectations" / "data" / "patentsview"
DEMO = REPO / "checkpoints" / "labelling_qc.yml"
RELEASES = ("inventor_id_20211230", "inventor_id_20220630")
RECORD_COLUMNS = ["mention_id", "block", "name_first", "name_last"]
GHOST = "US0000000-9"  # a mention id that no table holds


def demo_tables() -> dict[str, pd.DataFrame]:
    """The demo records (id, block, name parts) and two releases of the wide predictions."""
    return {"mentions": pd.read_parquet(DATA / "records.parquet", columns=RECORD_COLUMNS),
            "predictions": pd.read_parquet(DATA / "predictions.parquet", columns=["mention_id", *RELEASES])}


def labelling_checkpoint(root: Path, name: str, data_section: str | None = None, *,
                         labels: Path = DATA / "labels.parquet") -> Path:
    """checkpoints/labelling_qc.yml with its records and predictions replaced by
    ``data_section`` (``None``: the files, as shipped) and the labels file ``labels``."""
    text = DEMO.read_text(encoding="utf-8")
    if data_section is not None:
        text = text[:text.index("data:")] + data_section + text[text.index("  name:"):]
    text = text.replace("../er_expectations/data/patentsview/labels.parquet", str(labels))
    text = text.replace("../er_expectations/", f"{REPO / 'er_expectations'}/")
    text = text.replace("suite_paths: [../suites]", f"suite_paths: [{REPO / 'suites'}]")
    text = text.replace("project_dir: ../build/labelling_qc", f"project_dir: {root / ('project_' + name)}")
    path = root / f"{name}.yml"
    path.write_text(text, encoding="utf-8")
    return path


def sql_section(url: str, mentions: str = "mentions", predictions: str = "predictions") -> str:
    return f"""data:
  engine: sql
  connection: {{url: "{url}"}}
  records: {{table: {mentions}, id_column: mention_id}}
  predictions: {{table: {predictions}, id_column: mention_id, columns: "inventor_id_*", batch_column: inventor_id}}
"""


def spark_section(folder: Path) -> str:
    return f"""data:
  engine: spark
  spark: {{master: "local[2]", config: {{spark.sql.shuffle.partitions: "4", spark.ui.enabled: "false"}}}}
  records: {{path: {folder / 'mentions.parquet'}, id_column: mention_id}}
  predictions: {{path: {folder / 'predictions.parquet'}, id_column: mention_id, columns: "inventor_id_*", batch_column: inventor_id}}
"""


def batch_of(path: Path) -> pd.DataFrame:
    """The labelling batch the run validates, its cells as Python values (``None`` for nulls)."""
    prepared = prepare_run(path)
    (ref,) = prepared.data.select()
    frame = prepared.data.frame(ref)
    return frame.astype(object).where(frame.notna(), None)


def results_of(path: Path) -> list:
    """Every GX result of the run (expectation, its arguments, success, result), in order."""
    with open(os.devnull, "w") as sink:
        report = run_checkpoint(path, progress=False, out=sink)
    (batch,) = report.releases
    assert batch.errors == [], batch.errors
    out = []
    for file in batch.result_files:
        for r in json.loads(Path(file).read_text(encoding="utf-8"))["results"]:
            cfg = r["expectation_config"]
            kwargs = {k: v for k, v in cfg["kwargs"].items() if k != "batch_id"}
            out.append((cfg["type"], kwargs, r["success"], r["result"], r["exception_info"].get("raised_exception")))
    assert len(out) == 7, out
    return out


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> tuple[pd.DataFrame, list]:
    """The demo labelling checkpoint from files: its batch and its results."""
    path = labelling_checkpoint(tmp_path_factory.mktemp("files"), "files")
    return batch_of(path), results_of(path)


@pytest.fixture(scope="module")
def sqlite_db(tmp_path_factory) -> str:
    return sqlite_warehouse(tmp_path_factory.mktemp("sqlite") / "warehouse.db", demo_tables())


def assert_same_run(path: Path, files: tuple[pd.DataFrame, list]) -> pd.DataFrame:
    want_batch, want_results = files
    got = batch_of(path)
    pd.testing.assert_frame_equal(got, want_batch)
    assert results_of(path) == want_results
    return got


@pytest.mark.sqlite
def test_sqlite_equals_files_and_fetches_only_the_records_the_rules_read(tmp_path, files, sqlite_db):
    path = labelling_checkpoint(tmp_path, "sqlite", sql_section(sqlite_db))
    with count_fetched_rows() as fetched:
        got = assert_same_run(path, files)
    n_records = len(demo_tables()["mentions"])
    n_rows = int(got["draw"].isna().sum())  # record rows of the batch
    assert 0 < n_rows < n_records / 5
    # per result: a count, a probe, the named records (IN lists of 1,000 ids), the cluster
    # members (a named record in a drawn cluster comes twice); the batch is built twice (above,
    # then by the run): bounded by the batch's record rows, never the record table
    assert max(fetched) <= n_rows, sorted(fetched)[-5:]
    assert sum(fetched) <= 2 * 2 * n_rows < n_records / 2, sum(fetched)
    # the clean demo labels: every critical rule passes
    assert [success for _, _, success, _, _ in files[1]].count(True) >= 6


@pytest.mark.postgres
def test_postgres_equals_files(tmp_path, files, monkeypatch):
    url = postgres_url()
    names = postgres_warehouse(url, demo_tables())
    monkeypatch.setenv("WAREHOUSE_URL", url)
    path = labelling_checkpoint(tmp_path, "postgres",
                                sql_section("${WAREHOUSE_URL}", names["mentions"], names["predictions"]))
    with count_fetched_rows() as fetched:
        got = assert_same_run(path, files)
    assert max(fetched) <= int(got["draw"].isna().sum())


@pytest.mark.spark
@pytest.mark.skipif(not spark_available(), reason="pyspark is not installed")
def test_spark_equals_files_and_collects_only_the_records_the_rules_read(tmp_path, files):
    for name, frame in demo_tables().items():
        frame.to_parquet(tmp_path / f"{name}.parquet", index=False)
    path = labelling_checkpoint(tmp_path, "spark", spark_section(tmp_path))
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false").getOrCreate()
    DataFrame = type(spark.range(1))  # noqa: N806 - the session's DataFrame class (classic or Connect)
    collect = DataFrame.collect
    fetched: list[int] = []

    def counted(self):
        rows = collect(self)
        fetched.append(len(rows))
        return rows

    DataFrame.collect = counted
    try:
        got = assert_same_run(path, files)
    finally:
        DataFrame.collect = collect
    assert fetched and max(fetched) <= int(got["draw"].isna().sum()) < len(demo_tables()["mentions"]) / 5


def ghost_labels(folder: Path) -> Path:
    """The demo labels with an id no table holds removed in draw 1 and added in draw 2."""
    labels = pd.read_parquet(DATA / "labels.parquet")
    labels.at[0, "removed"] = [*labels.at[0, "removed"], GHOST]
    labels.at[1, "added"] = [*labels.at[1, "added"], GHOST]
    path = folder / "ghost_labels.parquet"
    labels.to_parquet(path, index=False)
    return path


@pytest.mark.sqlite
def test_labels_naming_ids_the_database_lacks_are_reported_by_rule_4(tmp_path, sqlite_db):
    labels = ghost_labels(tmp_path)
    file_path = labelling_checkpoint(tmp_path, "files", labels=labels)
    sql_path = labelling_checkpoint(tmp_path, "sqlite", sql_section(sqlite_db), labels=labels)
    want = results_of(file_path)
    assert results_of(sql_path) == want
    rule_4 = [r for r in want if r[0] == "expect_labels_record_ids_to_exist"]
    assert len(rule_4) == 1 and rule_4[0][2] is False
    assert GHOST in json.dumps(rule_4[0][3])


@pytest.mark.sqlite
@pytest.mark.parametrize(("old", "new", "key", "message"), [
    ("table: mentions", "table: mention", "data.records.table", "table 'mention' does not exist"),
    ("table: predictions", "table: prediction", "data.predictions.table", "table 'prediction' does not exist"),
    ("block_column: block", "block_column: blok", "data.labels.block_column", "column 'blok' not found"),
    ("id_column: record_id", "id_column: record", "data.labels.id_column", "column 'record' not found"),
])
def test_a_missing_table_or_column_is_named_at_its_key(tmp_path, capsys, sqlite_db, old, new, key, message):
    path = labelling_checkpoint(tmp_path, "sqlite", sql_section(sqlite_db))
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")
    assert main(["run", str(path), "--no-progress"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert f"{key}: " in err and message in err, err
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if new in t)
    assert f"{path}:{line}:" in err, err
    assert not (tmp_path / "project_sqlite").exists()


def test_an_unreachable_database_exits_7_and_validate_needs_no_database(tmp_path, capsys, monkeypatch):
    secret = "Labels-Pw-91b3"
    monkeypatch.setenv("WAREHOUSE_URL", f"postgresql+psycopg://erx:{secret}@127.0.0.1:9/warehouse")
    path = labelling_checkpoint(tmp_path, "down", sql_section("${WAREHOUSE_URL}"))
    assert main(["run", str(path), "--no-progress"]) == EXIT_SOURCE
    captured = capsys.readouterr()
    assert "cannot reach the database of data.connection.url" in captured.err, captured.err
    assert secret not in captured.out + captured.err
    assert not (tmp_path / "project_down").exists()
    # validate checks what the files say (the labels file's columns), not the database
    assert main(["validate", str(path)]) == 0, capsys.readouterr().err


@pytest.mark.sqlite
def test_a_release_the_database_lacks_is_named_at_data_labels_release(tmp_path, capsys, sqlite_db):
    path = labelling_checkpoint(tmp_path, "sqlite", sql_section(sqlite_db))
    path.write_text(path.read_text().replace('release: "2021-12-30"', 'release: "2021-12-31"'))
    assert main(["run", str(path), "--no-progress"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "data.labels.release: '2021-12-31' is not a release of the checkpoint" in err, err
    assert "2021-12-30" in err


@pytest.mark.sqlite
def test_integer_ids_and_clusters_in_another_order_equal_files(tmp_path):
    """The demo data with integer mention ids numbered against their text order and integer
    cluster ids: the fetched records are put in the order of the ids (as the files' outer
    join gives them), integers stay integers."""
    tables = demo_tables()
    ids = {m: i for i, m in enumerate(sorted(tables["mentions"]["mention_id"], reverse=True))}
    clusters: dict[str, int] = {}

    def code(value):
        return None if value is None or value != value else clusters.setdefault(value, 10_000 + len(clusters))

    records = tables["mentions"].assign(mention_id=tables["mentions"]["mention_id"].map(ids).astype("int64"))
    predictions = tables["predictions"].assign(mention_id=tables["predictions"]["mention_id"].map(ids).astype("int64"))
    for column in RELEASES:
        predictions[column] = pd.array([code(v) for v in predictions[column]], dtype="Int64")
    labels = pd.read_parquet(DATA / "labels.parquet")
    labels["record_id"] = labels["record_id"].map(ids).astype("int64")
    for column in ("removed", "added"):
        labels[column] = [[ids[i] for i in cell] for cell in labels[column]]
    labels["predicted_cluster"] = pd.array([code(v) for v in labels["predicted_cluster"]], dtype="Int64")
    labels.to_parquet(tmp_path / "labels.parquet", index=False)
    records.to_parquet(tmp_path / "records.parquet", index=False)
    predictions.to_parquet(tmp_path / "predictions.parquet", index=False)
    url = sqlite_warehouse(tmp_path / "warehouse.db", {"mentions": records, "predictions": predictions})
    section = f"""data:
  records: {{path: {tmp_path / 'records.parquet'}, id_column: mention_id}}
  predictions: {{path: {tmp_path / 'predictions.parquet'}, id_column: mention_id, columns: "inventor_id_*", batch_column: inventor_id}}
"""
    file_path = labelling_checkpoint(tmp_path, "files", section, labels=tmp_path / "labels.parquet")
    sql_path = labelling_checkpoint(tmp_path, "sqlite", sql_section(url), labels=tmp_path / "labels.parquet")
    want = batch_of(file_path)
    got = batch_of(sql_path)
    pd.testing.assert_frame_equal(got, want)
    rows = got[got["draw"].isna()]
    assert rows["mention_id"].is_monotonic_increasing and isinstance(rows["mention_id"].iloc[0], int)
    assert isinstance(rows["inventor_id"].dropna().iloc[0], int)
    assert results_of(sql_path) == results_of(file_path)


@pytest.mark.sqlite
def test_a_drawn_record_the_database_lacks_is_the_error_of_files(tmp_path, capsys, sqlite_db):
    labels = pd.read_parquet(DATA / "labels.parquet")
    labels.at[3, "record_id"] = GHOST
    labels.to_parquet(tmp_path / "labels.parquet", index=False)
    messages = []
    for name, section in (("files", None), ("sqlite", sql_section(sqlite_db))):
        path = labelling_checkpoint(tmp_path, name, section, labels=tmp_path / "labels.parquet")
        assert main(["run", str(path), "--no-progress"]) == EXIT_USAGE
        err = capsys.readouterr().err
        assert GHOST in err and "labels.parquet" in err, err
        messages.append(err.replace(str(path), "<checkpoint>"))
        assert not (tmp_path / f"project_{name}").exists()
    assert messages[0] == messages[1]
