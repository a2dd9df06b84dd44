"""Checkpoints on a database or Spark (``data.engine``): bad input is refused before anything
is written, with a message naming the source, and no password is ever shown.

Exit codes: 2 for what the checkpoint file or the data gets wrong (a missing table or column,
duplicated ids, an unset variable), 7 for a source that cannot be reached (a scheduler may
retry), see ``er_expectations/cli/main.py``.
"""

from __future__ import annotations

import re

import pandas as pd
import pytest
from support.enginetools import postgres_url, spark_available
from support.sourcetools import (
    postgres_warehouse,
    project_text,
    sqlite_warehouse,
    toy_tables,
    write_checkpoint,
)

from er_expectations.cli.common import EXIT_CODES, EXIT_SOURCE, EXIT_USAGE
from er_expectations.cli.main import main
from er_expectations.engines.sql import batch as sql_batch

SENTINEL = "Sentinel-Pw-7c21"
UNREACHABLE = f"postgresql+psycopg://erx:{SENTINEL}@127.0.0.1:9/warehouse"


@pytest.fixture
def warehouse(tmp_path, monkeypatch):
    """A SQLite warehouse with the toy tables; WAREHOUSE_URL points at it."""

    def make(**tables: pd.DataFrame) -> str:
        url = sqlite_warehouse(tmp_path / "warehouse.db", {**toy_tables(), **tables})
        monkeypatch.setenv("WAREHOUSE_URL", url)
        return url

    return make


def run(path, capsys, *args) -> tuple[int, str, str]:
    code = main(["run", str(path), "--no-progress", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def located(err: str, path, key_line: str) -> bool:
    """``err`` has ``<path>:<line>:<col>:`` where ``line`` is the line holding ``key_line``."""
    lines = path.read_text().splitlines()
    number = next(i for i, line in enumerate(lines, 1) if key_line in line)
    return re.search(rf"{re.escape(str(path))}:{number}:\d+: ", err) is not None


def test_exit_code_7_is_documented():
    assert EXIT_SOURCE == 7 and "cannot be reached" in EXIT_CODES[7]


def test_a_password_written_in_the_url_is_refused_at_its_line(tmp_path, capsys):
    path = write_checkpoint(tmp_path, url=f"postgresql+psycopg://erx:{SENTINEL}@db.example.org/w")
    for command in ("run", "validate"):
        code = main([command, str(path)])
        err = capsys.readouterr().err
        assert code == EXIT_USAGE, err
        assert "data.connection.url: the URL holds a password, written in the file" in err
        assert "${WAREHOUSE_URL}" in err and SENTINEL not in err
        assert located(err, path, "connection:")
    assert not (tmp_path / "project").exists()


def test_an_unset_variable_is_named_by_run_and_skipped_by_validate(tmp_path, capsys, monkeypatch, warehouse):
    warehouse()
    monkeypatch.delenv("WAREHOUSE_URL")
    path = write_checkpoint(tmp_path)
    code, out, err = run(path, capsys)
    assert code == EXIT_USAGE, err
    assert "data.connection.url: the environment variable WAREHOUSE_URL is not set" in err
    assert located(err, path, "connection:")
    assert main(["validate", str(path)]) == 0, capsys.readouterr().err  # no environment needed
    assert not (tmp_path / "project").exists()


def test_an_unreachable_database_exits_7_with_the_url_masked(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("WAREHOUSE_URL", UNREACHABLE)
    path = write_checkpoint(tmp_path)
    code, out, err = run(path, capsys)
    assert code == EXIT_SOURCE, err
    assert "cannot reach the database of data.connection.url" in err
    assert "postgresql+psycopg://erx:***@127.0.0.1:9/warehouse" in err
    assert SENTINEL not in out + err
    assert not (tmp_path / "project").exists()


def test_a_database_that_never_answers_exits_7_after_connect_timeout(tmp_path, capsys, monkeypatch):
    # a port that accepts the TCP connection (kernel backlog) and never speaks: without a
    # timeout the driver would wait for the server's greeting for ever
    import socket
    import time

    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    port = silent.getsockname()[1]
    try:
        monkeypatch.setenv("WAREHOUSE_URL", f"postgresql+psycopg://erx:{SENTINEL}@127.0.0.1:{port}/warehouse")
        path = write_checkpoint(tmp_path)
        path.write_text(path.read_text().replace('connection: {url: "${WAREHOUSE_URL}"}',
                                                 'connection: {url: "${WAREHOUSE_URL}", connect_timeout: 2}'))
        started = time.monotonic()
        code, out, err = run(path, capsys)
        elapsed = time.monotonic() - started
    finally:
        silent.close()
    assert code == EXIT_SOURCE, err
    assert "did not answer within 2 s (data.connection.connect_timeout)" in err
    assert f"postgresql+psycopg://erx:***@127.0.0.1:{port}/warehouse" in err and SENTINEL not in out + err
    assert located(err, path, "connection:")
    assert elapsed < 30
    assert not (tmp_path / "project").exists()


def test_connect_timeout_must_be_a_positive_number(tmp_path, capsys, warehouse):
    warehouse()
    path = write_checkpoint(tmp_path)
    for bad in ("0", "-1", "soon", "true"):
        path.write_text(path.read_text().split("\n", 1)[0] + "\n" + "\n".join(
            line if "connection:" not in line else f'  connection: {{url: "${{WAREHOUSE_URL}}", connect_timeout: {bad}}}'
            for line in path.read_text().split("\n")[1:]))
        code = main(["validate", str(path)])
        err = capsys.readouterr().err
        assert code == EXIT_USAGE, (bad, err)
        assert "connect_timeout" in err and located(err, path, "connection:"), (bad, err)


def test_a_missing_sqlite_file_is_not_created(tmp_path, capsys, monkeypatch):
    missing = tmp_path / "nowhere.db"
    monkeypatch.setenv("WAREHOUSE_URL", f"sqlite:///{missing}")
    path = write_checkpoint(tmp_path)
    code, out, err = run(path, capsys)
    assert code == EXIT_USAGE, err
    assert f"the SQLite file {missing} does not exist" in err
    assert not missing.exists() and not (tmp_path / "project").exists()


def test_a_missing_table_or_column_says_did_you_mean_at_its_line(tmp_path, capsys, warehouse):
    warehouse()
    path = write_checkpoint(tmp_path, records="table: record")
    code, out, err = run(path, capsys)
    assert code == EXIT_USAGE, err
    assert "data.records.table: table 'record' does not exist in the database" in err
    assert "did you mean 'records'?" in err and located(err, path, "records:")

    path = write_checkpoint(tmp_path, benchmark="table: benchmark")
    text = path.read_text().replace("reference_column: truth", "reference_column: trut")
    path.write_text(text)
    code, out, err = run(path, capsys)
    assert code == EXIT_USAGE, err
    assert "data.benchmark.reference_column: column 'trut' not found in table 'benchmark'" in err
    assert "did you mean 'truth'?" in err and located(err, path, "benchmark:")

    path.write_text(text.replace("trut}", "truth}").replace("[first, last]", "[first, lats]"))
    code, out, err = run(path, capsys)
    assert "data.name.columns[1]: column 'lats' not found in table 'records'" in err, err
    assert "did you mean 'last'?" in err
    assert not (tmp_path / "project").exists()


def test_a_query_that_fails_names_the_query(tmp_path, capsys, warehouse):
    warehouse()
    path = write_checkpoint(tmp_path, records='query: "select rid, first, last from recordz"')
    code, out, err = run(path, capsys)
    assert code == EXIT_USAGE, err
    assert "data.records.query: the database refused the query" in err and "recordz" in err
    assert located(err, path, "records:")


@pytest.mark.parametrize("role", ["records", "predictions", "benchmark"])
def test_duplicated_and_null_ids_are_counted_in_the_database(tmp_path, capsys, warehouse, role):
    tables = toy_tables()
    frame = tables[role]
    dup = pd.concat([frame, frame.iloc[[0, 1, 1]]], ignore_index=True)
    warehouse(**{role: dup})
    path = write_checkpoint(tmp_path)
    code, out, err = run(path, capsys)
    assert code == EXIT_USAGE, err
    first, second = frame["rid"].iloc[0], frame["rid"].iloc[1]
    assert f"data.{role} (table '{role}'): column 'rid' has 2 duplicated record ids" in err
    assert repr(first) in err and repr(second) in err and "each record must appear once" in err

    nulls = frame.copy()
    nulls.loc[[2, 3, 4], "rid"] = None
    warehouse(**{role: nulls})
    code, out, err = run(path, capsys)
    assert code == EXIT_USAGE, err
    assert f"data.{role} (table '{role}'): column 'rid' has 3 null record ids" in err
    assert not (tmp_path / "project").exists()


def test_benchmark_ids_outside_the_records_are_refused(tmp_path, capsys, warehouse):
    tables = toy_tables()
    bench = pd.concat([tables["benchmark"], pd.DataFrame({"rid": ["zz1", "zz2"], "truth": ["t0", "t0"]})])
    warehouse(benchmark=bench)
    path = write_checkpoint(tmp_path)
    code, out, err = run(path, capsys)
    assert code == EXIT_USAGE, err
    assert "data.benchmark (table 'benchmark'): 2 benchmark record ids are not in the records" in err
    assert "'zz1'" in err


def test_ids_that_cannot_be_joined_are_refused(tmp_path, capsys, warehouse):
    tables = toy_tables()
    records = tables["records"].assign(rid=range(len(tables["records"])))  # integers against text
    warehouse(records=records)
    path = write_checkpoint(tmp_path)
    code, out, err = run(path, capsys)
    assert code == EXIT_USAGE, err
    assert "record ids have different types in data.records (table 'records', column 'rid': integer)" in err
    assert "data.predictions (table 'predictions', column 'rid': text)" in err


def test_a_glob_selecting_no_release_column_is_refused(tmp_path, capsys, warehouse):
    warehouse()
    path = write_checkpoint(tmp_path)
    path.write_text(path.read_text().replace('"pred_*"', '"inventor_*"'))
    code, out, err = run(path, capsys)
    assert code == EXIT_USAGE, err
    assert "data.predictions.columns: the pattern 'inventor_*' selects no release column of table 'predictions'" in err


def test_labels_with_a_database_are_a_file_checked_at_its_key(tmp_path, capsys):
    """A labelling checkpoint may keep its records in a database (tests/run/test_labels_engines.py
    runs it); its labels stay a file, which must exist and have the labels columns."""
    path = write_checkpoint(tmp_path)
    path.write_text(path.read_text().replace("  name:", "  labels: {path: labels.parquet}\n  name:"))
    assert main(["validate", str(path)]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "data.labels.path: file not found" in err and "labels.parquet" in err, err
    assert located(err, path, "labels:")
    pd.DataFrame({"draw": [1], "record": ["r0001"], "removed": [""], "added": [""]}).to_parquet(
        tmp_path / "checkpoints" / "labels.parquet")
    assert main(["validate", str(path)]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "data.labels.id_column: column 'record_id' not found" in err, err


def test_engine_options_belong_to_their_engine(tmp_path, capsys):
    path = write_checkpoint(tmp_path, engine="spark", records="path: records.parquet")
    path.write_text(path.read_text().replace("  records:", '  connection: {url: "${WAREHOUSE_URL}"}\n  records:'))
    assert main(["validate", str(path)]) == EXIT_USAGE
    assert "'connection' goes with engines sql and duckdb" in capsys.readouterr().err
    path = write_checkpoint(tmp_path, records="path: records.parquet")
    assert main(["validate", str(path)]) == EXIT_USAGE
    assert "data.records: 'path' (files read in place) is for engines duckdb and spark" in capsys.readouterr().err


@pytest.mark.spark
@pytest.mark.skipif(not spark_available(), reason="pyspark is not installed")
def test_spark_sources_that_cannot_be_read(tmp_path, capsys):
    tables = toy_tables()
    for role, frame in tables.items():
        frame.to_parquet(tmp_path / f"{role}.parquet", index=False)
    spark_options = '  spark: {master: "local[1]", config: {spark.ui.enabled: false}}\n'

    def checkpoint(records: str) -> object:
        path = write_checkpoint(tmp_path, engine="spark", records=records,
                                predictions=f"path: {tmp_path / 'predictions.parquet'}",
                                benchmark=f"path: {tmp_path / 'benchmark.parquet'}")
        path.write_text(path.read_text().replace("  records:", spark_options + "  records:"))
        return path

    path = checkpoint(f"path: {tmp_path / 'recods.parquet'}")
    code, out, err = run(path, capsys)
    assert code == EXIT_USAGE, err
    assert "data.records.path: Spark cannot read" in err and "recods.parquet" in err
    path = checkpoint("table: default.recods")
    code, out, err = run(path, capsys)
    assert code == EXIT_USAGE, err
    assert "data.records.table: table 'default.recods' is not in the Spark catalog" in err
    assert not (tmp_path / "project").exists()


@pytest.mark.postgres
def test_secrets_never_reach_the_project(tmp_path, capsys, monkeypatch):
    """The password of a real PostgreSQL URL: in no file of the project (configuration, results,
    Data Docs), nor on the console; GX keeps ${WAREHOUSE_URL} in its configuration."""

    from sqlalchemy.engine import make_url

    url = postgres_url()
    password = make_url(url).password
    assert password and len(password) >= 6
    names = postgres_warehouse(url, toy_tables())
    monkeypatch.setenv("WAREHOUSE_URL", url)
    path = write_checkpoint(tmp_path, records=f"table: {names['records']}",
                            predictions=f"table: {names['predictions']}", benchmark=f"table: {names['benchmark']}")
    code, out, err = run(path, capsys, "--release", "alpha")
    assert code in (0, 1), err
    assert "Data Docs:" in out
    assert password not in out + err + project_text(tmp_path)
    assert "${WAREHOUSE_URL}" in (tmp_path / "project" / "gx" / "great_expectations.yml").read_text()
    # only the password from the environment: GX stores the reference inside the URL
    monkeypatch.setenv("ERX_TEST_PASSWORD", password)
    only = make_url(url).set(password="PLACEHOLDER").render_as_string(hide_password=False)
    path.write_text(path.read_text().replace('"${WAREHOUSE_URL}"', '"' + only.replace("PLACEHOLDER", "${ERX_TEST_PASSWORD}") + '"'))
    code, out, err = run(path, capsys, "--release", "alpha")
    assert code in (0, 1), err
    assert password not in out + err + project_text(tmp_path)
    assert ":${ERX_TEST_PASSWORD}@" in (tmp_path / "project" / "gx" / "great_expectations.yml").read_text()
    # a failing check on the same server: the message has the masked URL only
    path.write_text(path.read_text().replace(names["records"], names["records"] + "_x"))
    code, out, err = run(path, capsys)
    assert code == EXIT_USAGE and "does not exist in the database" in err, err
    assert password not in out + err


def test_running_again_updates_the_project_in_place(tmp_path, capsys, warehouse):
    """A second run reuses the datasource and assets; a changed query replaces its asset."""
    warehouse()
    path = write_checkpoint(tmp_path)
    code, out, err = run(path, capsys, "--release", "alpha")
    assert code == 0, err
    config = tmp_path / "project" / "gx" / "great_expectations.yml"
    first = config.read_text()
    assert "type: sqlite" in first and "connection_string: ${WAREHOUSE_URL}" in first
    code, out, err = run(path, capsys, "--release", "alpha")
    assert code == 0, err
    assert config.read_text() == first
    path.write_text(path.read_text().replace("[first, last]}", '[last, first], separator: ":and"}'))
    code, out, err = run(path, capsys, "--release", "alpha")  # ':and' is no bind parameter of GX's text()
    assert code == 0, err
    text = config.read_text()
    assert text != first and text.count("type: query") == 1
    assert not (tmp_path / "project" / "er_data").exists()


def test_an_unknown_engine_or_a_missing_connection_is_named(tmp_path, capsys):
    path = write_checkpoint(tmp_path, engine="spqrk")
    assert main(["validate", str(path)]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "data.engine: expected one of 'sql', 'duckdb' or 'spark', got the string 'spqrk'; did you mean 'spark'?" in err
    assert located(err, path, "engine:")
    path.write_text(path.read_text().replace("engine: spqrk", "engine: sql").replace(
        '  connection: {url: "${WAREHOUSE_URL}"}\n', ""))
    assert main(["validate", str(path)]) == EXIT_USAGE
    assert "data: engine sql needs 'connection'" in capsys.readouterr().err


@pytest.mark.postgres
def test_a_database_refusing_temporary_tables_names_temp_table(tmp_path, capsys, monkeypatch):
    """A read-only session (a hot-standby replica refuses temporary tables the same way) cannot
    materialise the batches: exit 2 at data.connection before anything is written, the fix
    named; with ``temp_table: false`` the same checks run on the release queries themselves."""
    from sqlalchemy.engine import make_url

    url = postgres_url()
    names = postgres_warehouse(url, toy_tables())
    read_only = make_url(url).update_query_dict({"options": "-c default_transaction_read_only=on"})
    monkeypatch.setenv("WAREHOUSE_URL", read_only.render_as_string(hide_password=False))
    path = write_checkpoint(tmp_path, records=f"table: {names['records']}",
                            predictions=f"table: {names['predictions']}", benchmark=f"table: {names['benchmark']}")
    code, out, err = run(path, capsys, "--release", "alpha")
    assert code == EXIT_USAGE, err
    assert "data.connection.temp_table: the database refused to create a temporary table" in err
    assert "temp_table: false" in err and "TEMPORARY" in err
    assert located(err, path, "connection:")
    assert make_url(url).password not in out + err
    assert not (tmp_path / "project").exists()
    path.write_text(path.read_text().replace('url: "${WAREHOUSE_URL}"}', 'url: "${WAREHOUSE_URL}", temp_table: false}'))
    code, out, err = run(path, capsys, "--release", "alpha")
    assert code == 0, err
    assert "create_temp_table: false" in (tmp_path / "project" / "gx" / "great_expectations.yml").read_text()


def test_temp_table_false_is_the_checkpoints_setting_not_the_processs(tmp_path, capsys, warehouse):
    """``temp_table: false`` stops the SQL engine copying the batches of that checkpoint's
    database; a later checkpoint of the same process on the same database that keeps the
    default copies them again (it stayed off for the whole process, and a later partitioned
    batch on PostgreSQL ran on the filtered table: a test order broke four tests)."""
    url = warehouse()
    path = write_checkpoint(tmp_path)
    default = path.read_text()
    key = sql_batch._database_key(url)
    path.write_text(default.replace('url: "${WAREHOUSE_URL}"}', 'url: "${WAREHOUSE_URL}", temp_table: false}'))
    code, out, err = run(path, capsys)
    assert code in (0, 1), err
    assert key in sql_batch._NEVER
    path.write_text(default)
    code, out, err = run(path, capsys)
    assert code in (0, 1), err
    assert key not in sql_batch._NEVER


def test_temp_table_must_be_a_boolean(tmp_path, capsys, warehouse):
    warehouse()
    path = write_checkpoint(tmp_path)
    path.write_text(path.read_text().replace('url: "${WAREHOUSE_URL}"}', 'url: "${WAREHOUSE_URL}", temp_table: "no"}'))
    assert main(["validate", str(path)]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "data.connection.temp_table" in err and located(err, path, "temp_table")


@pytest.mark.parametrize("temp_table", [True, False])
def test_a_name_gx_would_read_as_a_bind_parameter_is_refused(tmp_path, capsys, warehouse, temp_table):
    """GX reads a query asset through ``sqlalchemy.text()``, where `` :word`` is a bind
    parameter, whatever the quotes around it: a column (or query) holding one cannot be part
    of a release's query. Refused with its name and the fix (exit 2, nothing written), not an
    internal error; a colon inside a word (``r:id``) is fine."""
    tables = toy_tables()
    for role in ("records", "predictions", "benchmark"):
        tables[role] = tables[role].rename(columns={"rid": "r :id"})
    warehouse(**tables)
    path = write_checkpoint(tmp_path)
    text = path.read_text().replace("id_column: rid", 'id_column: "r :id"')
    if not temp_table:
        text = text.replace('url: "${WAREHOUSE_URL}"}', 'url: "${WAREHOUSE_URL}", temp_table: false}')
    path.write_text(text)
    suite = tmp_path / "suites" / "warehouse_checks.yml"
    suite.write_text(suite.read_text().replace("record_id_column: rid", 'record_id_column: "r :id"'))
    code, out, err = run(path, capsys)
    assert code == EXIT_USAGE, err
    assert "internal error" not in err
    assert "'r :id'" in err and "bind parameter" in err and "view" in err
    assert not (tmp_path / "project").exists()


def test_a_colon_inside_a_name_is_fine(tmp_path, capsys, warehouse):
    tables = toy_tables()
    for role in ("records", "predictions", "benchmark"):
        tables[role] = tables[role].rename(columns={"rid": "r:id"})
    tables["predictions"] = tables["predictions"].rename(columns={"pred_alpha": "pred_al:pha"})
    warehouse(**tables)
    path = write_checkpoint(tmp_path)
    path.write_text(path.read_text().replace("id_column: rid", 'id_column: "r:id"'))
    (tmp_path / "suites" / "warehouse_checks.yml").write_text(
        (tmp_path / "suites" / "warehouse_checks.yml").read_text().replace("record_id_column: rid",
                                                                           'record_id_column: "r:id"'))
    code, out, err = run(path, capsys)
    assert code == 0, err
    assert "al:pha" in out


def test_a_query_holding_a_bind_parameter_is_named_at_its_line(tmp_path, capsys, warehouse):
    warehouse()
    path = write_checkpoint(tmp_path, records="query: \"select rid, first, last, ' :x' as junk from records\"")
    code, out, err = run(path, capsys)
    assert code == EXIT_USAGE, err
    assert "data.records.query: the query holds ':x', which GX would read as a bind parameter" in err
    assert located(err, path, "records:")
    assert not (tmp_path / "project").exists()
