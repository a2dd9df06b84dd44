"""``er-expectations history`` reads its store light and prints what it printed before (issue 29 item 6).

The command used to read the store through SQLAlchemy into pandas frames (and to load the whole
checkpoint through pydantic): ~1 s of imports, 10 s while it imported GX. It now reads a SQLite
store of the current schema with ``sqlite3`` (:class:`SqliteHistory`) and the checkpoint's few
history keys without a YAML library (:func:`read_history_place`), falling back to SQLAlchemy and
the full loader for everything else. These tests check, on a toy project run twice (a rerun:
version 2) with alert deliveries recorded:

* the light path and the SQLAlchemy path print the same bytes, every format and filter;
* the JSON and CSV equal what the former code built from :meth:`HistoryStore.results` with
  pandas (reproduced here, independently of the command's own row code);
* the checkpoint reader agrees with the full loader, or leaves the file to it;
* the light path imports neither pandas, SQLAlchemy, pydantic, ruamel.yaml nor GX.

The speed is measured by ``benchmarks/bench_history_cli.py`` (side by side with the standard library).
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from datetime import UTC, datetime

import pytest
from support.toyproject import CHECKPOINT, make_toy

from er_expectations.cli.history import _SHOWN, CHART_SUFFIXES
from er_expectations.cli.main import build_parser, main
from er_expectations.config import load_checkpoint
from er_expectations.config.checkpoint import CHECKPOINT_KEYS as CONFIG_KEYS
from er_expectations.core.charts import CHART_FORMATS
from er_expectations.core.io import csv_text
from er_expectations.history.reading import SCHEMA_HEAD, SqliteHistory
from er_expectations.history.records import AlertRecord
from er_expectations.history.store import HistoryStore
from er_expectations.run.history_location import (
    CHECKPOINT_KEYS,
    history_url,
    project_key,
    read_history_place,
)
from er_expectations.run.runner import run_checkpoint

ARGVS = [
    ["-e", "pairwise_precision"],
    ["-e", "pairwise_precision", "--all-versions"],
    ["-e", "pairwise_precision", "--format", "json"],
    ["-e", "pairwise_precision", "--format", "csv"],
    ["-e", "pairwise_precision", "--all-versions", "--format", "json"],
    ["-e", "pairwise_precision", "--all-versions", "--format", "csv"],
    ["-e", "pairwise_precision", "--release", "gamma", "alpha"],
    ["-e", "pairwise_precision", "--last", "2"],
    ["-e", "hill_number(q=2)", "--format", "json"],
    ["-e", "expect_estimated_pairwise_recall_to_be_between"],
    ["-e", "matching_rate", "--format", "csv", "--last", "1"],
    ["-e", "nosuch"],
    ["-e", "pairwise_precisoin"],
    ["-e", "pairwise_precision", "--release", "delta"],
    ["-e", "pairwise_precision", "--suite", "other"],
]


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    """A toy project run twice (gamma rerun: version 2), with alert deliveries of the rerun
    recorded (one failed, its error holding a terminal escape)."""
    path = make_toy(tmp_path_factory.mktemp("light"))
    run_checkpoint(path, progress=False, out=io.StringIO())
    run_checkpoint(path, releases=["gamma"], progress=False, out=io.StringIO())
    checkpoint = load_checkpoint(path)
    with HistoryStore.open(history_url(checkpoint), project=project_key(checkpoint)) as store:
        when = store.runs("toy")["gx_run_time"].iloc[-1].to_pydatetime()
        store.record_alerts(checkpoint="toy", run_name="toy", run_time=when, alerts=[
            AlertRecord(action="webhook", target="https://hooks.example/x", outcome="failed",
                        error="HTTP 500 \x1b[31mred\x1b[0m"),
            AlertRecord(action="email", target="ops@example.org", outcome="sent")])
        store.record_alerts(checkpoint="toy", run_name="other", run_time=datetime(2001, 1, 1, tzinfo=UTC),
                            alerts=[AlertRecord(action="email", target="x@example.org", outcome="sent")])
    return path


def _run(argv, capsys):
    code = main(["history", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_light_reader_and_sqlalchemy_print_the_same(toy, capsys, monkeypatch):
    opened = []
    real_open = SqliteHistory.open.__func__

    def spy(cls, url, *, project=None):
        found = real_open(cls, url, project=project)
        opened.append(found is not None)
        return found

    monkeypatch.setattr(SqliteHistory, "open", classmethod(spy))
    light = [_run([str(toy), *argv], capsys) for argv in ARGVS]
    assert opened and all(opened)  # every one read with sqlite3
    monkeypatch.setattr(SqliteHistory, "open", classmethod(lambda cls, url, *, project=None: None))
    heavy = [_run([str(toy), *argv], capsys) for argv in ARGVS]
    for argv, a, b in zip(ARGVS, light, heavy, strict=True):
        assert a == b, argv
    codes = [code for code, _, _ in light]
    assert codes == [0] * 11 + [2] * 4
    table = light[0][1]
    assert [line.split()[:2] for line in table.splitlines()[3:6]] == [["alpha", "1"], ["beta", "1"],
                                                                      ["gamma", "2"]]  # the rerun's version
    assert "NOT DELIVERED: HTTP 500 red" in table and "\x1b" not in table
    assert "x@example.org" not in table  # another run's alerts are not shown
    assert "did you mean 'pairwise_precision'" in light[12][2]


def _old_frame(toy, *, label, all_versions=False):
    """What the former command built: HistoryStore.results (pandas) of one label."""
    checkpoint = load_checkpoint(toy)
    with HistoryStore.open(history_url(checkpoint), create=False, project=project_key(checkpoint)) as store:
        frame = store.results(checkpoint="toy", all_versions=all_versions)
    return frame[frame["label"] == label].reset_index(drop=True)


@pytest.mark.parametrize("all_versions", [False, True])
def test_json_and_csv_equal_what_the_pandas_frames_gave(toy, capsys, all_versions):
    extra = ["--all-versions"] if all_versions else []
    frame = _old_frame(toy, label="pairwise_precision", all_versions=all_versions)
    assert len(frame) == (4 if all_versions else 3)
    shown = frame[_SHOWN].astype(object).where(frame[_SHOWN].notna(), None)
    expected = [{k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in row.items()}
                for row in shown.to_dict(orient="records")]
    code, out, _ = _run([str(toy), "-e", "pairwise_precision", "--format", "json", *extra], capsys)
    assert code == 0
    assert json.loads(out)["series"] == json.loads(json.dumps(expected, default=str))
    code, out, _ = _run([str(toy), "-e", "pairwise_precision", "--format", "csv", *extra], capsys)
    assert code == 0 and out == csv_text(frame[_SHOWN])


def test_the_table_reads_the_stored_values(toy, capsys):
    frame = _old_frame(toy, label="pairwise_precision")
    _, out, _ = _run([str(toy), "-e", "pairwise_precision"], capsys)
    lines = out.splitlines()
    assert lines[0].startswith("pairwise_precision (expect_estimated_pairwise_precision_to_be_between, "
                               "suite 'toy_checks') of checkpoint 'toy' over 3 release(s); store ")
    for (_, row), line in zip(frame.iterrows(), lines[3:6], strict=True):
        cells = line.split()
        assert cells[0] == row["release"] and int(cells[1]) == row["version"]
        assert float(cells[2]) == pytest.approx(row["value"], rel=1e-3)
        assert cells[-4] == ("ok" if row["success"] else "FAILED")
        assert line.endswith(f"{row['gx_run_time']:%Y-%m-%d %H:%M:%S}Z")


def test_the_constants_the_light_path_copies_agree_with_their_sources():
    from er_expectations.config.yamlnodes import MAX_FILE_BYTES
    from er_expectations.run import history_location

    assert history_location.MAX_FILE_BYTES == MAX_FILE_BYTES
    assert HistoryStore.code_schema_version() == SCHEMA_HEAD
    assert CHECKPOINT_KEYS == CONFIG_KEYS
    assert tuple(CHART_FORMATS) == CHART_SUFFIXES


def test_the_light_parser_prints_the_same_help(monkeypatch, capsys):
    for columns in ("40", "100", "200"):
        monkeypatch.setenv("COLUMNS", columns)
        helps = []
        for only in (None, "history"):
            with pytest.raises(SystemExit):
                build_parser(only).parse_args(["history", "--help"])
            helps.append(capsys.readouterr().out)
        assert helps[0] == helps[1] and "--expectation" in helps[0]
    assert main(["history", "x.yml"]) == 2  # -e missing: argparse's usage error, the same way
    assert "the following arguments are required: --expectation/-e" in capsys.readouterr().err


# -- the checkpoint file, read without pydantic or a YAML library -------------------------------

HISTORY_VARIANTS = {
    "plain": CHECKPOINT,
    "comments and quotes": "# a comment\n" + CHECKPOINT.replace("checkpoint: toy", "checkpoint: 'toy'  # its name")
    .replace("project_dir: ../project", 'project_dir: "../project" # where'),
    "history block": CHECKPOINT + "history:\n  # the store\n  url: ../store/h.sqlite\n  project: team-a.x\n",
    "history disabled": CHECKPOINT + "history:\n    enabled: false\n",
    "no project_dir": CHECKPOINT.replace("project_dir: ../project\n", ""),
    "absolute project_dir": CHECKPOINT.replace("project_dir: ../project", "project_dir: {root}/elsewhere"),
    "CRLF": CHECKPOINT.replace("\n", "\r\n"),
}
LEFT_TO_THE_LOADER = {
    "flow history": CHECKPOINT + "history: {enabled: true}\n",
    "anchor": CHECKPOINT.replace("checkpoint: toy", "checkpoint: &n toy"),
    "escape": CHECKPOINT.replace("checkpoint: toy", 'checkpoint: "t\\x6fy"'),
    "url with a variable": CHECKPOINT + "history:\n  url: ${{HOME}}/h.sqlite\n",
    "database URL": CHECKPOINT + "history:\n  url: sqlite:///{root}/h.sqlite\n",
    "enabled as text": CHECKPOINT + "history:\n  enabled: 'no'\n",
    "number name": CHECKPOINT.replace("checkpoint: toy", "checkpoint: 2024"),
    "document marker": "---\n" + CHECKPOINT,
    "duplicate key": CHECKPOINT + "checkpoint: other\n",
    "unknown key": CHECKPOINT + "histroy:\n  enabled: false\n",
    "multi-line name": CHECKPOINT.replace("checkpoint: toy", "checkpoint: \"toy\n  x\""),
    "empty history": CHECKPOINT + "history:\n",
    "nested too deep": CHECKPOINT + "history:\n  url:\n    x: 1\n",
    "document end": CHECKPOINT + "...\n",
    "a sequence for the name": CHECKPOINT.replace("checkpoint: toy", "checkpoint:\n- toy"),
}


def _write(toy, name, text):
    """The variant ``text`` as a checkpoint file next to the toy's (its data files exist)."""
    path = toy.parent / f"variant_{name.replace(' ', '_')}.yml"
    path.write_text(text.replace("{root}", str(toy.parent.parent)).replace("{{", "{").replace("}}", "}"),
                    encoding="utf-8", newline="")
    return path


def _same(place, full):
    assert (place.name, place.project_dir, place.history.enabled, place.history.url, place.history.project) == (
        full.name, full.project_dir, full.history.enabled, full.history.url, full.history.project)
    assert history_url(place) == history_url(full) and project_key(place) == project_key(full)


@pytest.mark.parametrize("name", sorted(HISTORY_VARIANTS))
def test_the_checkpoint_reader_agrees_with_the_full_loader(toy, name):
    path = _write(toy, name, HISTORY_VARIANTS[name])
    place = read_history_place(path)
    assert place is not None, name
    _same(place, load_checkpoint(path))


@pytest.mark.parametrize("name", sorted(LEFT_TO_THE_LOADER))
def test_what_the_reader_does_not_know_it_leaves_to_the_full_loader(toy, name):
    assert read_history_place(_write(toy, name, LEFT_TO_THE_LOADER[name])) is None


def test_every_checkpoint_file_of_the_repository_reads_the_same(toy):
    from support.paths import REPO

    files = sorted((REPO / "checkpoints").glob("*.yml")) + [toy]
    assert len(files) >= 2
    for path in files:
        place = read_history_place(path)
        assert place is not None, path
        _same(place, load_checkpoint(path))


def test_a_checkpoint_left_to_the_loader_still_prints_its_history(toy, tmp_path, capsys):
    text = toy.read_text(encoding="utf-8")
    other = toy.parent / "flow.yml"
    other.write_text(text + "history: {enabled: true}\n", encoding="utf-8")
    assert read_history_place(other) is None
    assert _run([str(other), "-e", "pairwise_precision"], capsys) == _run([str(toy), "-e", "pairwise_precision"],
                                                                          capsys)
    broken = toy.parent / "broken.yml"
    broken.write_text(text.replace("checkpoint: toy", "checkpoint: 'toy x'"), encoding="utf-8")
    code, _, err = _run([str(broken), "-e", "pairwise_precision"], capsys)
    assert code == 2 and "broken.yml" in err and "checkpoint name 'toy x' may only use" in err


PROBE = """
import json, sys
from er_expectations.cli import program
code = program(sys.argv[1:])
heavy = ("pandas", "numpy", "sqlalchemy", "pydantic", "ruamel", "great_expectations", "alembic", "altair")
print(json.dumps({"code": code, "heavy": sorted({m.split(".")[0] for m in sys.modules} & set(heavy))}))
"""


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_the_light_path_imports_no_heavy_library(toy, fmt):
    done = subprocess.run([sys.executable, "-c", PROBE, "history", str(toy), "-e", "pairwise_precision",
                           "--format", fmt], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}, check=False)
    assert done.returncode == 0, done.stderr
    probe = json.loads(done.stdout.strip().splitlines()[-1])
    assert probe == {"code": 0, "heavy": []}


@pytest.mark.postgres
def test_a_postgresql_store_prints_the_series_the_sqlite_store_prints(toy, tmp_path, capsys, monkeypatch):
    """A PostgreSQL store (``history.url: ${VAR}``: the full loader, then SQLAlchemy) prints the
    same series as the same runs recorded in SQLite (the light path), times and store aside."""
    from support.historytools import postgres_schema_url

    def series(path):
        code, out, err = _run([str(path), "-e", "pairwise_precision", "--all-versions", "--format", "json"], capsys)
        assert code == 0, err
        times = ("gx_run_time", "recorded_at")
        return [{k: v for k, v in row.items() if k not in times} for row in json.loads(out)["series"]]

    with postgres_schema_url() as url:
        monkeypatch.setenv("ER_HISTORY_URL", url)
        path = make_toy(tmp_path, checkpoint=CHECKPOINT + "history:\n  url: ${ER_HISTORY_URL}\n")
        assert read_history_place(path) is None  # a database URL: the full loader reads the file
        run_checkpoint(path, progress=False, out=io.StringIO())
        run_checkpoint(path, releases=["gamma"], progress=False, out=io.StringIO())
        assert series(path) == series(toy)


def test_a_pipe_or_a_huge_file_as_checkpoint_is_named_not_read(toy, tmp_path, capsys):
    """Hostile: a FIFO would block a reader for ever, a huge file take minutes; the light reader
    leaves both to the full loader, which names them (exit 2)."""
    fifo = tmp_path / "pipe.yml"
    os.mkfifo(fifo)
    assert read_history_place(fifo) is None
    code, _, err = _run([str(fifo), "-e", "pairwise_precision"], capsys)
    assert code == 2 and "is not a regular file (a pipe, socket or device)" in err
    huge = toy.parent / "huge.yml"
    huge.write_text(toy.read_text(encoding="utf-8") + "#" * 1_000_001 + "\n", encoding="utf-8")
    assert read_history_place(huge) is None
    code, _, err = _run([str(huge), "-e", "pairwise_precision"], capsys)
    assert code == 2 and "configuration files are read up to 1 MB" in err
