"""The labels store of the workbench (docs/dev/workbench.md, issue 19): nothing lost, nothing
overwritten silently, nothing written to a file that is not a current store."""

from __future__ import annotations

import contextlib
import hashlib
import multiprocessing as mp
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from er_expectations import InputError
from er_expectations.analysis.benchmark import benchmark_from_labels
from er_expectations.analysis.labelqc import check_labels
from er_expectations.labelling.decide import export_labels
from er_expectations.labelling.store import SCHEMA_VERSION, Conflict, Decision, LabelStore, Saved

BIG = 2**62 + 1  # beyond 2^53: a float would make it 2**62


def _store(tmp_path: Path, n: int = 4, *, doubles: tuple[int, ...] = (), id_kind: str = "text") -> LabelStore:
    draws = [(i, f"r{i}" if id_kind == "text" else BIG + i, f"c{i}", i in doubles) for i in range(1, n + 1)]
    return LabelStore.create(tmp_path / "workbench.sqlite", draws=draws, id_kind=id_kind)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- saving, versions, history -----------------------------------------------------------------
def test_save_read_and_history(tmp_path):
    store = _store(tmp_path)
    first = store.save(1, "ann", Decision(removed=["r9", "r9", "r8"], note="<script>x</script>"), expected_version=0)
    assert isinstance(first, Saved) and first.decision.version == 1
    assert first.decision.removed == ("r9", "r8")  # duplicates dropped, order kept
    again = store.save(1, "ann", Decision(added=["r7"]), expected_version=1)
    assert isinstance(again, Saved) and again.decision.version == 2
    got = store.decision(1, "ann")
    assert got is not None and got.added == ("r7",) and got.removed == () and got.version == 2
    history = store.history(1)
    assert [e.labeller for e in history] == ["ann", "ann"]
    assert history[0].before is None and history[0].after["removed"] == ["r9", "r8"]
    assert history[1].before["removed"] == ["r9", "r8"] and history[1].after["added"] == ["r7"]
    assert history[1].after["version"] == 2 and history[1].at >= history[0].at


def test_a_stale_version_is_a_conflict_and_writes_nothing(tmp_path):
    store = _store(tmp_path)
    store.save(2, "ann", Decision(removed=["a"]), expected_version=0)
    before = store.history()
    out = store.save(2, "ann", Decision(removed=["b"]), expected_version=0)  # a second tab, started before
    assert isinstance(out, Conflict) and out.current is not None and out.current.removed == ("a",)
    assert store.history() == before and store.decision(2, "ann").removed == ("a",)


@pytest.mark.parametrize(("decision", "match"), [
    (Decision(status="done"), "status='done'"),
    (Decision(status="skipped"), "reason for skipping"),
    (Decision(removed="r1;r2"), "list of record ids"),
    (Decision(added=[None]), "not an id"),
    (Decision(added=[2.0**60]), "lost digits"),
    (Decision(note="x" * 20_001), "at most 20,000"),
    (Decision(note="bad \ud800"), "lone surrogate"),
    (Decision(added=["r\udfff"]), "Unicode"),
])
def test_bad_decisions_are_refused_before_writing(tmp_path, decision, match):
    store = _store(tmp_path)
    with pytest.raises(InputError, match=match):
        store.save(1, "ann", decision, expected_version=0)
    assert store.history() == []


def test_unknown_draw_and_blank_labeller_are_refused(tmp_path):
    store = _store(tmp_path)
    with pytest.raises(InputError, match="draw 99 is not a draw"):
        store.save(99, "ann", Decision(), expected_version=0)
    with pytest.raises(InputError, match="labeller"):
        store.save(1, "  ", Decision(), expected_version=0)


# -- two processes, one draw -----------------------------------------------------------------
def _race(path: str, who: str, barrier, out) -> None:
    store = LabelStore.open(path)
    barrier.wait()
    result = store.save(1, "ann", Decision(removed=[who]), expected_version=0)
    out.put((who, type(result).__name__))


def test_two_processes_saving_one_draw_at_once(tmp_path):
    _store(tmp_path).close()
    path = str(tmp_path / "workbench.sqlite")
    ctx = mp.get_context("spawn")
    for _ in range(3):
        with contextlib.closing(sqlite3.connect(path)) as db, db:  # start again from no decision
            db.execute("DELETE FROM decisions")
        barrier, out = ctx.Barrier(2), ctx.Queue()
        procs = [ctx.Process(target=_race, args=(path, who, barrier, out)) for who in ("p1", "p2")]
        for p in procs:
            p.start()
        for p in procs:
            p.join(60)
            assert p.exitcode == 0
        results = dict(out.get(timeout=5) for _ in procs)
        assert sorted(results.values()) == ["Conflict", "Saved"]
        winner = next(w for w, r in results.items() if r == "Saved")
        with LabelStore.open(path) as store:
            assert store.decision(1, "ann").removed == (winner,)


# -- killed in the middle ------------------------------------------------------------------------
_SAVER = """
import sys
from er_expectations.labelling.store import Decision, LabelStore
store = LabelStore.open(sys.argv[1])
for i in range(10**6):
    out = store.save(1 + i % 4, "ann", Decision(added=[str(i)]), expected_version=i // 4)
    print(i, flush=True)
"""


def test_a_process_killed_mid_loop_leaves_every_committed_decision(tmp_path):
    _store(tmp_path).close()
    path = tmp_path / "workbench.sqlite"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.Popen([sys.executable, "-c", _SAVER, str(path)], stdout=subprocess.PIPE, text=True, env=env)
    printed = []
    deadline = time.monotonic() + 60
    while len(printed) < 60 and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        printed.append(int(line.split()[0]))
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    # the saves it reported after the 60th, still in the pipe when it was killed
    printed += [int(line.split()[0]) for line in proc.stdout.read().splitlines() if line.strip()]
    assert len(printed) >= 60, "the saver did not run"
    store = LabelStore.open(path)
    edits = store.history()
    # every save it reported is there (and at most the one it was making when killed)
    assert len(edits) in (printed[-1] + 1, printed[-1] + 2)
    assert [int(e.after["added"][0]) for e in edits] == list(range(len(edits)))
    for draw in range(1, 5):
        last = [e for e in edits if e.draw == draw][-1]
        assert store.decision(draw, "ann").added == tuple(last.after["added"])


# -- files that are not a current store --------------------------------------------------------
def test_a_newer_schema_is_refused_and_left_unchanged(tmp_path):
    _store(tmp_path).close()
    path = tmp_path / "workbench.sqlite"
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),))
    digest = _digest(path)
    with pytest.raises(InputError, match=rf"{path}.*schema version {SCHEMA_VERSION + 1}.*newer"):
        LabelStore.open(path)
    assert _digest(path) == digest


@pytest.mark.parametrize("damage", ["text", "truncated", "garbled", "other_db", "empty"])
def test_corrupt_or_foreign_files_are_refused_and_left_unchanged(tmp_path, damage):
    _store(tmp_path, n=2000).close()
    path = tmp_path / "workbench.sqlite"
    data = path.read_bytes()
    if damage == "text":
        path.write_text("draw,record\n1,=cmd()\n")
    elif damage == "truncated":
        path.write_bytes(data[: len(data) // 3])
    elif damage == "garbled":
        path.write_bytes(data[:100] + os.urandom(len(data) - 100))
    elif damage == "other_db":
        path.unlink()
        with contextlib.closing(sqlite3.connect(path)) as db, db:
            db.execute("CREATE TABLE meta (key TEXT, value TEXT)")
    else:
        path.write_bytes(b"")
    digest = _digest(path)
    with pytest.raises(InputError, match=str(path)):
        LabelStore.open(path)
    assert _digest(path) == digest
    assert not Path(str(path) + "-wal").exists()


def test_create_refuses_an_existing_file(tmp_path):
    (tmp_path / "workbench.sqlite").write_text("mine")
    with pytest.raises(InputError, match="exists already"):
        _store(tmp_path)
    assert (tmp_path / "workbench.sqlite").read_text() == "mine"
    assert [f.name for f in tmp_path.iterdir()] == ["workbench.sqlite"]  # no temporary file left
    (tmp_path / "new").mkdir()
    _store(tmp_path / "new").close()
    assert sorted(f.name for f in (tmp_path / "new").iterdir()) == ["workbench.sqlite"]


# -- the queue -------------------------------------------------------------------------------------
def test_queue_unlabelled_first_then_blind_doubles_by_another_labeller(tmp_path):
    store = _store(tmp_path, n=3, doubles=(2,))
    assert store.next_draw("ann") == 1
    assert store.next_draw("ann") == 1  # still hers until answered
    assert store.next_draw("bob") == 2  # draw 1 is taken
    store.save(1, "ann", Decision(), expected_version=0)
    assert store.next_draw("ann") == 3
    store.save(3, "ann", Decision(), expected_version=0)
    assert store.next_draw("ann") is None  # draw 2 is bob's
    store.save(2, "bob", Decision(added=["x"]), expected_version=0)
    assert store.next_draw("bob") is None  # the double needs another labeller
    assert store.next_draw("ann") == 2
    store.save(2, "ann", Decision(), expected_version=0)
    assert store.next_draw("ann") is None and store.next_draw("cat") is None
    progress = store.progress()
    assert (progress.draws, progress.done, progress.doubles, progress.doubles_done) == (3, 3, 1, 1)
    assert progress.per_labeller == {"ann": 3, "bob": 1}


# -- the labels table ------------------------------------------------------------------------------
@pytest.fixture()
def release():
    """Integer ids beyond 2^53; clusters A = {1, 2, 3}, B = {4, 5}, C = {6}."""
    ids = [BIG + i for i in range(1, 7)]
    return pd.DataFrame({"id": pd.Series(ids, dtype="int64"), "pred": ["A", "A", "A", "B", "B", "C"]})


def test_labels_frame_is_read_by_check_labels_and_benchmark(tmp_path, release):
    r = [BIG + i for i in range(1, 7)]
    store = LabelStore.create(tmp_path / "s.sqlite", draws=[(1, r[0], "A", True), (2, r[3], "B", False),
                                                           (3, r[5], "C", False)], id_kind="integer")
    store.save(1, "ann", Decision(removed=[str(r[2])]), expected_version=0)
    store.save(1, "bob", Decision(removed=[r[1]]), expected_version=0)  # the blind second label
    store.save(2, "bob", Decision(added=[str(r[2])]), expected_version=0)
    store.save(3, "bob", Decision(status="skipped", reason="unreadable"), expected_version=0)
    frame = store.labels_frame()
    assert frame["draw"].tolist() == [1, 2] and frame["labeller"].tolist() == ["ann", "bob"]
    assert frame["record_id"].dtype == "int64" and frame["removed"].tolist()[0] == [r[2]]
    assert check_labels(frame, release, prediction="pred", record_id="id").empty
    bench = benchmark_from_labels(frame, release, prediction="pred", record_id="id")
    truth = {tuple(sorted(g["id"])) for _, g in bench.groupby("reference")}
    assert truth == {(r[0], r[1]), (r[2], r[3], r[4])}
    assert store.labels_frame(labeller="bob")["draw"].tolist() == [1, 2]
    assert len(store.labels_frame(every=True)) == 3


def test_export_is_atomic_inside_the_project_and_neutralises_csv(tmp_path):
    store = _store(tmp_path)
    store.save(1, "=HYPERLINK(\"http://x\")", Decision(note="@SUM(A1)"), expected_version=0)
    out = export_labels(store, "exports/labels.csv")[0]
    assert out == (tmp_path / "exports" / "labels.csv").resolve()
    text = out.read_text()
    assert "'=HYPERLINK" in text and "'@SUM(A1)" in text
    back = export_labels(store, "exports/labels.parquet")[0]
    assert pd.read_parquet(back)["record_id"].tolist() == ["r1"]
    for bad in ("../labels.csv", tmp_path.parent / "x.csv"):
        with pytest.raises(InputError, match="outside the project folder"):
            export_labels(store, bad)
    assert not (tmp_path.parent / "labels.csv").exists()


def test_an_id_that_would_run_as_a_formula_is_refused_in_csv(tmp_path):
    store = _store(tmp_path)
    store.save(1, "ann", Decision(added=["=cmd|' /C calc'!A0"]), expected_version=0)
    with pytest.raises(InputError, match="formula"):
        export_labels(store, "labels.csv")
    assert not (tmp_path / "labels.csv").exists()


_ID = st.sampled_from(["r1", "r2", "r3", "r4", "x", str(BIG)])
_DECISION = st.builds(Decision, status=st.sampled_from(["labelled", "unsure"]),
                      removed=st.lists(_ID, max_size=3), added=st.lists(_ID, max_size=3),
                      note=st.text(max_size=5).filter(lambda t: "\x00" not in t))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(saves=st.lists(st.tuples(st.integers(1, 3), st.sampled_from(["ann", "bob"]), _DECISION), max_size=12))
def test_labels_frame_is_the_last_save_per_draw_and_labeller(tmp_path_factory, saves):
    store = _store(tmp_path_factory.mktemp("prop"), n=3)
    last: dict[tuple[int, str], Decision] = {}
    for draw, who, decision in saves:
        current = store.decision(draw, who)
        store.save(draw, who, decision, expected_version=current.version if current else 0)
        last[(draw, who)] = decision
    frame = store.labels_frame(every=True)
    got = {(int(row.draw), row.labeller): (row.removed, row.added, row.status, row.note)
           for row in frame.itertuples()}
    want = {k: (list(dict.fromkeys(d.removed)), list(dict.fromkeys(d.added)), d.status, d.note)
            for k, d in last.items()}
    assert got == want
    assert len(store.history()) == len(saves)


def test_export_refuses_a_folder_linked_outside_the_project(tmp_path):
    project, outside = tmp_path / "p", tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    store = _store(project)
    (project / "exports").symlink_to(outside)
    with pytest.raises(InputError, match="outside the project folder"):
        export_labels(store, "exports/labels.parquet")
    (project / "l.parquet").symlink_to(outside / "l.parquet")
    with pytest.raises(InputError, match="symbolic link"):
        export_labels(store, "l.parquet")
    assert list(outside.iterdir()) == []


def test_threads_sharing_a_store_and_stores_sharing_a_file(tmp_path):
    import threading

    store = _store(tmp_path, n=40)
    other = LabelStore.open(tmp_path / "workbench.sqlite")
    taken: dict[str, list[int]] = {"ann": [], "bob": []}
    errors = []

    def work(s: LabelStore, who: str) -> None:
        try:
            while (draw := s.next_draw(who)) is not None:
                taken[who].append(draw)
                assert isinstance(s.save(draw, who, Decision(note=who), expected_version=0), Saved)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(s, who)) for s, who in ((store, "ann"), (other, "bob"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    assert sorted(taken["ann"] + taken["bob"]) == list(range(1, 41))  # every draw once, none twice
    assert store.progress().done == 40 and len(store.history()) == 40


def test_a_store_locked_by_another_process_is_reported_and_nothing_written(tmp_path):
    from er_expectations.core.errors import ProjectBusyError

    store = _store(tmp_path)
    store._db.execute("PRAGMA busy_timeout = 100")  # not 30 s in a test
    blocker = sqlite3.connect(tmp_path / "workbench.sqlite", isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(ProjectBusyError, match="locked by another process"):
            store.save(1, "ann", Decision(), expected_version=0)
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert store.history() == [] and isinstance(store.save(1, "ann", Decision(), expected_version=0), Saved)
