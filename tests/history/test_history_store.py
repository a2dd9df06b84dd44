"""The history store (issue #10 item 1): hostile cases first, on SQLite and on PostgreSQL.

Every test taking ``url`` runs on an embedded SQLite file and, marked ``postgres``, on the
PostgreSQL server named by ``ER_TEST_POSTGRES_URL`` (``.ci/run`` starts one), each test in
a fresh schema. Outside CI the PostgreSQL cases skip when the variable is not set; under
``CI=true`` they fail instead.
"""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import sqlalchemy as sa
from support.historytools import postgres_schema_url
from support.paths import REPO

from er_expectations.core.errors import InputError
from er_expectations.history import (
    HistoryError,
    HistoryStore,
    ReleaseRun,
    ResultRecord,
    identifying_kwargs,
    kwargs_key,
    mask_url,
    resolve_url,
)
from er_expectations.history.schema import METADATA, VERSION_TABLE

SECRET = "Pa55:w@rd/with'quote"  # a password with URL-special characters


def result(value=1.0, *, suite="s", kind="expect_average_cluster_size_to_be_between", success=True, **extra):
    kwargs = extra.pop("kwargs", {"prediction_column": "p", "min_value": 1.0})
    return ResultRecord(suite=suite, expectation_type=kind, kwargs=kwargs, label=extra.pop("label", "avg"),
                        severity=extra.pop("severity", "critical"), success=success,
                        metric=extra.pop("metric", "average_cluster_size"), column="p", value=value, **extra)


def run(release, position, *results, checkpoint="cp", status="passed"):
    return ReleaseRun(checkpoint=checkpoint, release=release, position=position, status=status,
                      results=results or (result(),), gx_run_name=checkpoint)


# -- hostile: concurrent writers -------------------------------------------------------------

WRITER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from er_expectations.history import HistoryStore, ReleaseRun, ResultRecord
    url, name, go, n = sys.argv[1], sys.argv[2], Path(sys.argv[3]), int(sys.argv[4])
    store = HistoryStore.open(url)
    while not go.exists():
        time.sleep(0.005)
    for i in range(n):
        release = f"r{i % 5}"
        rows = [ResultRecord(suite="s", expectation_type="expect_x", kwargs={"k": j}, label=f"x{j}",
                             severity="critical", success=True, metric="x", value=float(i))
                for j in range(3)]
        store.record(ReleaseRun(checkpoint="cp", release=release, position=i % 5, status="passed",
                                results=rows, gx_run_name=name))
    store.close()
    print("done", name)
""")


def test_two_processes_writing_at_once_lose_nothing(url, tmp_path):
    script = tmp_path / "writer.py"
    script.write_text(WRITER, encoding="utf-8")
    HistoryStore.open(url).close()  # both find the schema (creation races are the next test)
    go = tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [subprocess.Popen([sys.executable, str(script), url, name, str(go), "20"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for name in ("A", "B")]
    time.sleep(0.5)
    go.touch()
    outputs = [p.communicate(timeout=180) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    with HistoryStore.open(url) as store:
        runs = store.runs("cp", all_versions=True)
        assert len(runs) == 40
        assert sorted(runs["gx_run_name"].value_counts().to_dict().items()) == [("A", 20), ("B", 20)]
        for _, group in runs.groupby("release"):  # every release: versions 1..8, none twice
            assert sorted(group["version"]) == list(range(1, len(group) + 1))
        rows = store.results(checkpoint="cp", all_versions=True)
        assert len(rows) == 120


def test_two_processes_creating_the_schema_at_once(url, tmp_path):
    script = tmp_path / "writer.py"
    script.write_text(WRITER, encoding="utf-8")
    go = tmp_path / "go"
    go.touch()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [subprocess.Popen([sys.executable, str(script), url, name, str(go), "3"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for name in ("A", "B")]
    outputs = [p.communicate(timeout=180) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    with HistoryStore.open(url) as store:
        assert len(store.runs("cp", all_versions=True)) == 6
        assert store.schema_version() == HistoryStore.code_schema_version()


@pytest.mark.postgres
def test_a_writer_that_loses_the_race_for_a_version_retries():
    """PostgreSQL does not serialise writers: two that read the same highest version collide
    on the unique (checkpoint, release, version) and the later one counts again."""
    import threading
    from contextlib import contextmanager

    with postgres_schema_url() as url, HistoryStore.open(url) as slow, HistoryStore.open(url) as fast:
        selected, proceed = threading.Event(), threading.Event()
        original = slow._transaction

        class Paused:
            def __init__(self, conn):
                self.conn, self.calls = conn, 0

            def execute(self, *args, **kwargs):
                out = self.conn.execute(*args, **kwargs)
                self.calls += 1
                if self.calls == 1 and not selected.is_set():  # after reading the highest version
                    selected.set()
                    assert proceed.wait(30)
                return out

        @contextmanager
        def paused(what, **options):
            with original(what, **options) as conn:
                yield Paused(conn)

        slow._transaction = paused
        versions = {}
        thread = threading.Thread(target=lambda: versions.update(slow=slow.record(run("r", 0, result(1.0)))))
        thread.start()
        assert selected.wait(30)
        versions["fast"] = fast.record(run("r", 0, result(2.0)))  # commits version 1 meanwhile
        proceed.set()
        thread.join(60)
        assert versions == {"fast": 1, "slow": 2}
        every = fast.series(checkpoint="cp", metric="average_cluster_size", all_versions=True)
        assert list(zip(every["version"], every["value"], strict=True)) == [(1, 2.0), (2, 1.0)]


# -- hostile: a writer killed in the middle of its transaction --------------------------------

KILLED = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    import sqlalchemy.engine.base as base
    from er_expectations.history import HistoryStore, ReleaseRun, ResultRecord
    url, ready = sys.argv[1], Path(sys.argv[2])
    store = HistoryStore.open(url)
    original = base.Connection.execute
    def execute(self, statement, *args, **kwargs):
        out = original(self, statement, *args, **kwargs)
        table = getattr(statement, "table", None)
        if getattr(table, "name", None) == "er_history_results":
            ready.touch()  # the run row and its results are written, not committed
            time.sleep(600)
        return out
    base.Connection.execute = execute
    rows = [ResultRecord(suite="s", expectation_type="expect_x", kwargs={}, label="x",
                         severity="critical", success=True, value=2.0)]
    store.record(ReleaseRun(checkpoint="cp", release="r1", position=1, status="passed", results=rows))
""")


def test_a_writer_killed_mid_transaction_leaves_nothing_and_corrupts_nothing(url, tmp_path):
    with HistoryStore.open(url) as store:
        store.record(run("r0", 0, result(1.0)))
    script = tmp_path / "killed.py"
    script.write_text(KILLED, encoding="utf-8")
    ready = tmp_path / "ready"
    proc = subprocess.Popen([sys.executable, str(script), url, str(ready)],
                            env={**os.environ, "PYTHONPATH": str(REPO)},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not ready.exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the writer never reached its results"
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=30)  # reaps it and closes its pipes
    assert proc.returncode == -signal.SIGKILL
    with HistoryStore.open(url) as store:
        runs = store.runs("cp", all_versions=True)
        assert list(runs["release"]) == ["r0"]  # the killed run left no row
        assert len(store.results(checkpoint="cp", all_versions=True)) == 1
        assert store.record(run("r1", 1, result(3.0))) == 1  # and the store still takes writes
        assert list(store.series(checkpoint="cp", metric="average_cluster_size")["value"]) == [1.0, 3.0]
    if url.startswith("sqlite"):
        with sa.create_engine(url).connect() as conn:
            assert conn.exec_driver_sql("PRAGMA integrity_check").scalar() == "ok"


# -- hostile: schema newer than the code, unreachable and broken databases ---------------------


def test_a_newer_schema_is_refused_with_a_clear_error(url):
    HistoryStore.open(url).close()
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.execute(sa.text(f"UPDATE {VERSION_TABLE} SET version_num = '0099_from_the_future'"))
    engine.dispose()
    for create in (True, False):
        with pytest.raises(HistoryError) as caught:
            HistoryStore.open(url, create=create)
        message = str(caught.value)
        assert "schema version '0099_from_the_future'" in message
        assert "newer than this er-expectations knows" in message
        assert f"'{HistoryStore.code_schema_version()}'" in message
        assert "upgrade er-expectations" in message
    engine = sa.create_engine(url)
    with engine.connect() as conn:  # the refusal changed nothing
        assert conn.execute(sa.text(f"SELECT version_num FROM {VERSION_TABLE}")).scalar() == "0099_from_the_future"
    engine.dispose()


def test_an_unreachable_server_names_the_url_with_the_password_masked():
    url = f"postgresql+psycopg://erx:{SECRET.replace('@', '%40').replace('/', '%2F').replace(':', '%3A')}@127.0.0.1:9/db"
    started = time.monotonic()
    with pytest.raises(HistoryError) as caught:
        HistoryStore.open(url)
    message = str(caught.value)
    assert isinstance(caught.value, InputError)
    assert message.startswith("cannot reach the history database postgresql+psycopg://erx:***@127.0.0.1:9/db")
    assert "Pa55" not in message and "rd/with" not in message and "%40" not in message
    assert time.monotonic() - started < 30


def test_a_file_that_is_not_a_database_and_a_folder_are_refused(tmp_path):
    junk = tmp_path / "junk.sqlite"
    junk.write_text("this is not SQLite\n" * 100, encoding="utf-8")
    with pytest.raises(HistoryError, match=r"history database sqlite:///.*junk.sqlite: .*not a database"):
        HistoryStore.open(f"sqlite:///{junk}")
    assert junk.read_text(encoding="utf-8").startswith("this is not SQLite")
    with pytest.raises(HistoryError, match="is a folder, not a SQLite file"):
        HistoryStore.open(f"sqlite:///{tmp_path}")


def test_reading_a_store_that_does_not_exist_creates_nothing(tmp_path):
    path = tmp_path / "sub" / "none.sqlite"
    with pytest.raises(HistoryError, match="no history store at .*none.sqlite: nothing was recorded yet"):
        HistoryStore.open(f"sqlite:///{path}", create=False)
    assert not path.exists() and not path.parent.exists()


def test_an_empty_database_is_not_read_as_history(url):
    engine = sa.create_engine(url)
    with engine.begin() as conn:  # an existing database without the store's tables
        conn.execute(sa.text("CREATE TABLE other_app (x INTEGER)"))
    engine.dispose()
    with pytest.raises(HistoryError, match="holds no history yet"):
        HistoryStore.open(url, create=False)


def test_unknown_driver_and_bad_url():
    with pytest.raises(HistoryError, match="no database driver for 'nosuchdb'"):
        HistoryStore.open("nosuchdb://u:pw@h/db")
    with pytest.raises(HistoryError, match="not a database URL"):
        resolve_url("://::nonsense")


# -- passwords --------------------------------------------------------------------------------


@pytest.mark.parametrize("url, shown", [
    ("postgresql+psycopg://erx:s3cret@db.example:5432/hist", "postgresql+psycopg://erx:***@db.example:5432/hist"),
    ("postgresql://erx:p%40ss%2Fw@h/db?sslmode=require", "postgresql://erx:***@h/db?sslmode=require"),
    ("mysql+pymysql://root@h/db", "mysql+pymysql://root@h/db"),
    ("sqlite:////tmp/x.sqlite", "sqlite:////tmp/x.sqlite"),
    ("not a url://u:pw@x", "not a url://u:***@x"),
])
def test_mask_url(url, shown):
    assert mask_url(url) == shown


@pytest.mark.parametrize("url", ["://u:Sekr1t@h/db", "postgresql://u:Sekr1t@h:notaport/db"])
def test_a_malformed_url_is_refused_without_its_password(url):
    for attempt in (lambda: resolve_url(url), lambda: HistoryStore.open(url)):
        with pytest.raises(HistoryError, match="not a database URL") as caught:
            attempt()
        assert "Sekr1t" not in str(caught.value) and "u:***@h" in str(caught.value)


def test_environment_references_are_resolved_and_unset_ones_named(tmp_path):
    env = {"ER_HISTORY_URL": "postgresql+psycopg://u:pw@h/db", "PW": "x"}
    assert resolve_url("${ER_HISTORY_URL}", environ=env) == env["ER_HISTORY_URL"]
    assert resolve_url("postgresql+psycopg://u:${PW}@h/db", environ=env) == "postgresql+psycopg://u:x@h/db"
    with pytest.raises(HistoryError, match="history.url: the environment variable MISSING_URL is not set"):
        resolve_url("${MISSING_URL}", environ=env)
    with pytest.raises(HistoryError, match="not an environment variable reference"):
        resolve_url("${not valid}", environ=env)
    assert resolve_url("hist/h.sqlite", base=tmp_path) == f"sqlite:///{tmp_path / 'hist' / 'h.sqlite'}"
    assert resolve_url("sqlite:///rel.sqlite", base=tmp_path) == f"sqlite:///{tmp_path / 'rel.sqlite'}"


# -- hostile text stored and read back verbatim ----------------------------------------------

HOSTILE = [
    "2020-09-29",
    "<script>alert('x')</script>",
    "O'Brien \"quoted\" release",
    "'; DROP TABLE er_history_runs; --",
    "Ünïcødé ✓ 發布",
    "  spaces  ",
    "010",
]


def test_hostile_labels_and_suite_names_round_trip_verbatim(url):
    suite = "<b>suite</b> 'quoted' \"double\" & ; --"
    with HistoryStore.open(url) as store:
        for i, label in enumerate(HOSTILE):
            store.record(run(label, i, result(float(i), suite=suite, label=f"<i>{label}</i>",
                                              kwargs={"prediction_column": "c'; --<x>", "note": "</td>"}),
                             checkpoint="cp'<x>"))
        frame = store.series(checkpoint="cp'<x>", suite=suite, metric="average_cluster_size")
        assert list(frame["release"]) == HOSTILE
        assert set(frame["suite"]) == {suite}
        assert list(frame["label"]) == [f"<i>{label}</i>" for label in HOSTILE]
        assert list(frame["value"]) == [float(i) for i in range(len(HOSTILE))]
        assert store.checkpoints() == ["cp'<x>"]
        same = store.series(checkpoint="cp'<x>", metric="average_cluster_size",
                            kwargs={"prediction_column": "c'; --<x>"})
        assert list(same["release"]) == HOSTILE
        assert set(same["kwargs_json"]) == {'{"note": "</td>", "prediction_column": "c\'; --<x>"}'}
        assert store.series(checkpoint="cp'<x>", metric="average_cluster_size",
                            kwargs={"prediction_column": "c"}).empty
        before = store.series(checkpoint="cp'<x>", metric="average_cluster_size",
                              before_release="'; DROP TABLE er_history_runs; --")
        assert list(before["release"]) == HOSTILE[:3]
        assert len(store.runs("cp'<x>")) == len(HOSTILE)


def test_the_chart_escapes_hostile_labels(tmp_path):
    import pandas as pd

    from er_expectations.core.charts import to_svg
    from er_expectations.history.chart import series_chart

    with HistoryStore.open(f"sqlite:///{tmp_path / 'h.sqlite'}") as store:
        for i, label in enumerate(HOSTILE):
            store.record(run(label, i, result(float(i), success=i != 1, std_error=0.1, ci_lower=i - 0.2,
                                              ci_upper=i + 0.2, ci_level=0.95)))
        frame = store.series(checkpoint="cp", metric="average_cluster_size")
    svg = to_svg(series_chart(frame))
    assert "<script" not in svg
    from er_expectations.history.chart import series_data_uri

    assert series_data_uri(frame, title="t").startswith("data:image/svg+xml;base64,")
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in svg or "&lt;script&gt;" in svg
    assert isinstance(frame, pd.DataFrame)


# -- round trip, versions, order, filters ----------------------------------------------------


def test_round_trip_of_every_field(url):
    estimate = ResultRecord(
        suite="quality", expectation_type="expect_estimated_pairwise_precision_to_be_between",
        kwargs={"prediction_column": "inventor_id", "reference_column": "truth", "min_value": 0.9,
                "ci_level": 0.9, "severity": "warning", "weights": {"column": "w"}},
        label="pairwise_precision", severity="warning", success=False, metric="pairwise_precision",
        column="inventor_id", value=0.875, estimate=0.875, std_error=0.0125, ci_lower=0.85, ci_upper=0.9,
        ci_level=0.9, observed_text="0.875 (SE 0.0125)")
    broken = ResultRecord(suite="quality", expectation_type="expect_hill_number_to_be_between",
                          kwargs={"prediction_column": "inventor_id", "q": math.inf}, label="hill_number(q=inf)",
                          severity="critical", success=False, metric="hill_number", column="inventor_id",
                          value=math.nan, error="division by zero")
    from datetime import UTC, datetime

    when = datetime(2022, 6, 30, 12, 0, 5, tzinfo=UTC)
    with HistoryStore.open(url) as store:
        version = store.record(ReleaseRun(checkpoint="pv", release="2022-06-30", position=14, status="error",
                                          results=(estimate, broken), gx_run_name="pv", gx_run_time=when))
        assert version == 1
        frame = store.series(checkpoint="pv", expectation_type=estimate.expectation_type)
        row = frame.iloc[0]
        assert (row["release"], row["position"], row["version"]) == ("2022-06-30", 14, 1)
        assert (row["value"], row["estimate"], row["std_error"]) == (0.875, 0.875, 0.0125)
        assert (row["ci_lower"], row["ci_upper"], row["ci_level"]) == (0.85, 0.9, 0.9)
        assert (row["success"], row["severity"], row["suite"]) == (False, "warning", "quality")
        assert (row["metric"], row["column"], row["label"]) == ("pairwise_precision", "inventor_id",
                                                               "pairwise_precision")
        assert row["gx_run_name"] == "pv" and row["gx_run_time"] == when
        assert row["recorded_at"].tzinfo is not None
        # thresholds, severity and interval options do not identify the series
        assert row["kwargs_json"] == '{"prediction_column": "inventor_id", "reference_column": "truth", ' \
                                     '"weights": {"column": "w"}}'
        assert row["kwargs_key"] == kwargs_key({**estimate.kwargs, "min_value": 0.5, "ci_level": 0.95})
        bad = store.series(checkpoint="pv", metric="hill_number").iloc[0]
        assert math.isnan(bad["value"]) and bad["error"] == "division by zero"
        assert bad["kwargs_json"] == '{"prediction_column": "inventor_id", "q": "inf"}'
        runs = store.runs("pv")
        assert list(runs["status"]) == ["error"] and not runs["success"].iloc[0]


def test_reruns_are_versioned_and_the_latest_is_read_by_default(url):
    with HistoryStore.open(url) as store:
        assert [store.record(run("a", 0, result(v))) for v in (1.0, 2.0, 3.0)] == [1, 2, 3]
        assert store.record(run("b", 1, result(10.0))) == 1
        latest = store.series(checkpoint="cp", metric="average_cluster_size")
        assert list(zip(latest["release"], latest["version"], latest["value"], strict=True)) == [
            ("a", 3, 3.0), ("b", 1, 10.0)]
        every = store.series(checkpoint="cp", metric="average_cluster_size", all_versions=True)
        assert list(every["value"]) == [1.0, 2.0, 3.0, 10.0]
        assert list(store.runs("cp", all_versions=True)["version"]) == [1, 2, 3, 1]
        other = store.record(run("a", 0, result(5.0), checkpoint="other"))
        assert other == 1  # versions count per checkpoint and release


def test_series_order_and_windows(url):
    with HistoryStore.open(url) as store:
        # recorded out of order: the release order is the recorded position
        for label, position in (("2021", 2), ("2019", 0), ("2022", 3), ("2020", 1)):
            store.record(run(label, position, result(float(position))))
        s = store.series(checkpoint="cp", metric="average_cluster_size")
        assert list(s["release"]) == ["2019", "2020", "2021", "2022"]
        before = store.series(checkpoint="cp", metric="average_cluster_size", before_release="2022", last=2)
        assert list(before["release"]) == ["2020", "2021"]
        # the release under validation is not recorded yet: by its position
        assert list(store.series(checkpoint="cp", metric="average_cluster_size", before_position=1)["release"]) \
            == ["2019"]
        assert store.series(checkpoint="cp", metric="average_cluster_size", before_release="2019").empty
        with pytest.raises(HistoryError, match="release '2030' of checkpoint 'cp' is not in the history"):
            store.series(checkpoint="cp", metric="average_cluster_size", before_release="2030")
        with pytest.raises(HistoryError, match="last: expected a whole number >= 1"):
            store.series(checkpoint="cp", metric="average_cluster_size", last=0)
        assert store.series(checkpoint="nope", metric="average_cluster_size").empty


def test_series_refuses_to_mix_expectations(url):
    q2 = result(2.0, kind="expect_hill_number_to_be_between", metric="hill_number", label="hill_number(q=2)",
                kwargs={"prediction_column": "p", "q": 2.0})
    q1 = result(3.0, kind="expect_hill_number_to_be_between", metric="hill_number", label="hill_number(q=1)",
                kwargs={"prediction_column": "p", "q": 1.0})
    with HistoryStore.open(url) as store:
        store.record(run("a", 0, q2, q1))
        with pytest.raises(HistoryError, match="the filters match 2 expectations .*narrow them"):
            store.series(checkpoint="cp", metric="hill_number")
        assert list(store.series(checkpoint="cp", metric="hill_number", kwargs={"q": 2})["value"]) == [2.0]
        assert len(store.results(checkpoint="cp", metric="hill_number")) == 2


def test_identifying_kwargs_leave_out_acceptance_parameters():
    kwargs = {"prediction_column": "p", "q": 2, "min_value": 1, "max_value": 3, "strict_min": True,
              "severity": "warning", "bound": "interval", "ci_level": 0.9, "meta": {"x": 1}, "record_id_column": None}
    assert identifying_kwargs(kwargs) == {"prediction_column": "p", "q": 2}


# -- schema and migrations --------------------------------------------------------------------


def test_schema_from_an_empty_database_matches_the_tables_the_code_queries(url):
    with HistoryStore.open(url) as store:
        assert store.schema_version() == HistoryStore.code_schema_version() == "0004"
    engine = sa.create_engine(url)
    inspector = sa.inspect(engine)
    tables = set(inspector.get_table_names())
    assert {"er_history_runs", "er_history_results", VERSION_TABLE} <= tables
    assert "alembic_version" not in tables  # a shared database keeps its own Alembic table
    for table in METADATA.sorted_tables:
        found = {c["name"]: c for c in inspector.get_columns(table.name)}
        assert set(found) == {c.name for c in table.columns}, table.name
        for column in table.columns:
            assert found[column.name]["nullable"] == column.nullable, (table.name, column.name)
    uniques = inspector.get_unique_constraints("er_history_runs")
    assert any(set(u["column_names"]) == {"checkpoint", "release", "version"} for u in uniques)
    engine.dispose()


def test_a_database_at_the_previous_version_is_upgraded_keeping_its_rows(url):
    """A store written at schema version 0001 (no details column) opens at 0002: its rows are
    kept, read back with empty details, and new rows carry them."""
    from alembic import command

    engine = sa.create_engine(url)
    with engine.begin() as conn:  # the 0001 schema, made by the 0001 migration itself
        config = HistoryStore(engine, url)._alembic_config(conn)
        command.upgrade(config, "0001")
        run_id = conn.execute(sa.text(
            "INSERT INTO er_history_runs (checkpoint, release, position, version, status, success, "
            "gx_run_name, recorded_at) VALUES ('cp', 'old', 0, 1, 'passed', :t, 'cp', :now) RETURNING id"),
            {"t": True, "now": "2026-01-01 00:00:00"}).scalar()
        conn.execute(sa.text(
            "INSERT INTO er_history_results (run_id, suite, expectation_type, metric, column_name, kwargs_key, "
            "kwargs_json, label, severity, success, value) VALUES (:run, 's', "
            "'expect_average_cluster_size_to_be_between', 'average_cluster_size', 'p', :key, "
            "'{\"prediction_column\": \"p\"}', 'avg', 'critical', :t, 6.5)"),
            {"run": run_id, "key": kwargs_key({"prediction_column": "p"}), "t": True})
        columns = {c["name"] for c in sa.inspect(conn).get_columns("er_history_results")}
        assert "details_json" not in columns
    engine.dispose()
    with HistoryStore.open(url, create=False) as store:
        assert store.schema_version() == "0004"
        store.record(run("new", 1, result(7.5, details={"n_records": 100, "n_clusters": 13,
                                                      "top_clusters": [{"c": 1}], "observed_text": "x"})))
        s = store.series(checkpoint="cp", metric="average_cluster_size")
        assert list(s["release"]) == ["old", "new"] and list(s["value"]) == [6.5, 7.5]
        assert s["details_json"].tolist() == [None, '{"n_clusters": 13, "n_records": 100}']


def test_rows_written_at_0002_get_their_outcome_skipped_included(url):
    """Schema 0003 adds each result's outcome (SPEC 13). Rows written before it are filled in:
    an error is an error, a success whose details say skipped is skipped (GX reported it as a
    success), other successes passed, the rest failed; the runs get an empty provenance."""
    from alembic import command

    engine = sa.create_engine(url)
    with engine.begin() as conn:
        command.upgrade(HistoryStore(engine, url)._alembic_config(conn), "0002")
        run_id = conn.execute(sa.text(
            "INSERT INTO er_history_runs (checkpoint, release, position, version, status, success, "
            "gx_run_name, recorded_at) VALUES ('cp', 'old', 0, 1, 'error', :f, 'cp', :now) RETURNING id"),
            {"f": False, "now": "2026-01-01 00:00:00"}).scalar()
        cases = [("e", False, "boom", None), ("s", True, None, '{"note": "no baseline", "skipped": true}'),
                 ("p", True, None, '{"skipped": false}'), ("f", False, None, None)]
        for label, success, error, details in cases:
            conn.execute(sa.text(
                "INSERT INTO er_history_results (run_id, suite, expectation_type, metric, column_name, kwargs_key, "
                "kwargs_json, label, severity, success, error, value, details_json) VALUES (:run, 's', "
                "'expect_x', :label, 'p', :key, '{}', :label, 'critical', :success, :error, 1.0, :details)"),
                {"run": run_id, "key": kwargs_key({"m": label}), "label": label, "success": success,
                 "error": error, "details": details})
    engine.dispose()
    with HistoryStore.open(url, create=False) as store:
        assert store.schema_version() == "0004"
        got = {m: store.series(checkpoint="cp", metric=m)["outcome"].iloc[0] for m in "espf"}
        assert got == {"e": "error", "s": "skipped", "p": "passed", "f": "failed"}
    engine = sa.create_engine(url)
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT provenance_json FROM er_history_runs")).scalar() is None
    engine.dispose()


def test_a_database_emptied_by_alembic_is_created_again_on_open(url):
    from alembic import command

    with HistoryStore.open(url) as store:
        store.record(run("a", 0, result(1.0)))
        with store._engine.begin() as conn:  # every migration's downgrade, through Alembic
            command.downgrade(store._alembic_config(conn), "base")
        assert store.schema_version() is None
    with HistoryStore.open(url) as store:
        assert store.schema_version() == HistoryStore.code_schema_version()
        assert store.runs("cp").empty
        store.record(run("a", 0, result(1.0)))
    with HistoryStore.open(url, create=False) as store:
        assert len(store.runs("cp")) == 1


def test_migrations_ship_inside_the_package():
    import er_expectations.history.store as store_module

    migrations = Path(store_module.__file__).parent / "migrations"
    assert (migrations / "env.py").is_file()
    assert sorted(p.name for p in (migrations / "versions").glob("*.py")) == [
        "0001_history_tables.py", "0002_result_details.py", "0003_result_outcome.py",
        "0004_alert_deliveries.py"]
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert '"history/migrations/versions/*.py"' in text and '"history/migrations/*.py"' in text


def test_a_damaged_schema_is_reported_as_such_not_as_unreachable(url):
    with HistoryStore.open(url) as store:
        store.record(run("a", 0, result(1.0)))
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.execute(sa.text("DROP TABLE er_history_results"))
    engine.dispose()
    with HistoryStore.open(url) as store, pytest.raises(HistoryError) as caught:
        store.series(checkpoint="cp", metric="average_cluster_size")
    message = str(caught.value)
    assert message.startswith(f"history database {mask_url(url)}: reading the history failed: ")
    assert "er_history_results" in message and "cannot reach" not in message


def test_the_chart_marks_failed_and_errored_releases(tmp_path):
    from er_expectations.core.charts import to_svg
    from er_expectations.history.chart import series_chart, series_rows

    with HistoryStore.open(f"sqlite:///{tmp_path / 'h.sqlite'}") as store:
        for i, (value, ok, error) in enumerate([(0.9, True, None), (0.7, False, None), (None, False, "boom"),
                                               (0.92, True, None)]):
            store.record(run(f"r{i}", i, result(value, success=ok, error=error, ci_level=0.95,
                                                ci_lower=None if value is None else value - 0.04,
                                                ci_upper=None if value is None else value + 0.04)))
        frame = store.series(checkpoint="cp", metric="average_cluster_size")
    rows = series_rows(frame)
    assert [r["state"] for r in rows] == ["passed", "failed", "error", "passed"]
    assert rows[2]["value"] is None and rows[1]["ci_lower"] == pytest.approx(0.66)
    spec = series_chart(frame).to_dict()
    assert len(spec["layer"]) == 4  # intervals, line, points, errors
    svg = to_svg(series_chart(frame))
    assert all(f">r{i}<" in svg for i in range(4))  # every release on the axis, r2 too


def test_the_history_command_prefers_an_exact_label_to_a_metric_id(tmp_path):
    from er_expectations.cli.history import select_expectation

    bounds = result(7.0, label="average_cluster_size")
    control = result(7.0, kind="expect_statistic_within_control_limits", label="average_cluster_size_control",
                     kwargs={"prediction_column": "p", "statistic": "average_cluster_size", "k": 3})
    with HistoryStore.open(f"sqlite:///{tmp_path / 'h.sqlite'}") as store:
        store.record(run("a", 0, bounds, control))
        rows = store.result_rows(checkpoint="cp")
    assert {r["label"] for r in select_expectation(rows, "average_cluster_size", checkpoint="cp", where="x")} == {
        "average_cluster_size"}
    assert {r["label"] for r in select_expectation(rows, "expect_statistic_within_control_limits", checkpoint="cp",
                                                   where="x")} == {"average_cluster_size_control"}
    with pytest.raises(HistoryError, match="matches 2 expectations"):
        select_expectation([{**r, "label": "x"} for r in rows], "average_cluster_size", checkpoint="cp", where="x")


def test_a_store_at_0003_opens_at_0004_with_its_runs_and_takes_alert_outcomes(url):
    """Schema 0004 adds the alert outcomes of each run (issue 18, item 12); the release runs
    written before are kept, and a run with no alerts recorded reads back as none."""
    from datetime import UTC, datetime

    from alembic import command

    from er_expectations.history.records import AlertRecord

    engine = sa.create_engine(url)
    with engine.begin() as conn:
        command.upgrade(HistoryStore(engine, url)._alembic_config(conn), "0003")
    engine.dispose()
    when = datetime(2026, 3, 4, 5, 6, 7, 123456, tzinfo=UTC)
    with HistoryStore.open(url) as store:
        assert store.schema_version() == "0004"
        store.record(run("a", 0, result(1.0)))
        assert store.alerts("cp").empty
        assert store.record_alerts(checkpoint="cp", run_name="cp", run_time=when, alerts=[
            AlertRecord("webhook", "webhook http://127.0.0.1:1/***", "failed", "refused at /srv/secret/x.pem"),
            AlertRecord("email", "email b@example.org", "sent")]) == 2
    with HistoryStore.open(url, create=False) as store:
        got = store.alerts("cp", run_times=[when])
        assert len(store.runs("cp")) == 1
    assert list(got["outcome"]) == ["failed", "sent"]
    assert got["error"].iloc[0] == "refused at <local path>" and got["error"].iloc[1] is None
    assert got["gx_run_time"].iloc[0] == when
