"""The labels store's versions and progress counts (issue 31 item 5): stores written by older
releases open, upgrade and keep every row; a save does constant work and keeps the counts right;
a read-only store is read, never written, and said to be read-only."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from er_expectations import InputError
from er_expectations.labelling.store import ANSWERED, Decision, LabelStore, Progress, Saved
from er_expectations.labelling.store_schema import COUNT_PROGRESS, SCHEMA_VERSION, statements

OLD = Path(__file__).parent / "old_stores"
BIG = 2**62 + 1
#: The tables of each version (a later version only adds tables).
TABLES = {1: ("meta", "draws", "decisions", "edits", "tags", "labellers", "queue")}
TABLES[2] = (*TABLES[1], "reconciliations")
TABLES[3] = (*TABLES[2], "topup_tasks", "topup_candidates", "topup_answers", "topup_edits")
TABLES[4] = (*TABLES[3], "progress", "labeller_answers")


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _rows(path: Path, tables) -> dict[str, list[tuple]]:
    """Every row of ``tables``, read with the standard library (immutable: the file is not touched)."""
    db = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
    try:
        return {t: db.execute(f"SELECT * FROM {t} ORDER BY rowid").fetchall() for t in tables}
    finally:
        db.close()


def brute_progress(store: LabelStore) -> Progress:
    """The progress counted the slow way, from every draw and decision (the rule of SPEC 2.2 as
    the store's docstring states it), to check the counts the saves keep."""
    by_draw: dict[int, list[Decision]] = {}
    for d in store.decisions():
        by_draw.setdefault(int(d.draw), []).append(d)
    draws = store.draws()
    per: dict[str, int] = {}
    for ds in by_draw.values():
        for d in ds:
            per[str(d.labeller)] = per.get(str(d.labeller), 0) + 1
    doubles = [d.draw for d in draws if d.double]
    return Progress(
        draws=len(draws), done=sum(any(d.status in ANSWERED for d in ds) for ds in by_draw.values()),
        skipped=sum(bool(ds) and all(d.status == "skipped" for d in ds) for ds in by_draw.values()),
        unsure=sum(any(d.status == "unsure" for d in ds) for ds in by_draw.values()), doubles=len(doubles),
        doubles_done=sum(sum(x.status in ANSWERED for x in by_draw.get(n, [])) >= 2 for n in doubles),
        per_labeller=dict(sorted(per.items())))


# -- stores written by older releases -------------------------------------------------------------
@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_a_store_of_every_older_version_opens_upgrades_and_keeps_every_row(tmp_path, version):
    fixture = OLD / f"v{version}.sqlite"
    digest = _digest(fixture)
    path = tmp_path / "workbench.sqlite"
    shutil.copyfile(fixture, path)
    before = _rows(path, TABLES[version])
    assert dict(before["meta"])["schema_version"] == str(version)
    assert len(before["decisions"]) == 34 and len(before["edits"]) == 41 and len(before["tags"]) == 2
    with LabelStore.open(path) as store:
        # every decision as the old release stored it, read back through the store
        raw = sorted((r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9]) for r in before["decisions"])
        got = sorted((d.draw, d.labeller, d.status, *(str(list(x)).replace("'", '"') for x in (d.removed, d.added)),
                      d.true_cluster, d.note, d.reason, d.version, d.saved_at) for d in store.decisions())
        assert got == raw
        assert store.progress() == brute_progress(store)
        assert store.progress().per_labeller == {"ann": 10, "bob": 10, "cé dric": 10, "dora": 4}
        frame = store.labels_frame()
        assert frame["record_id"].dtype == "int64" and (frame["record_id"] > 2**62).all()  # exact beyond 2^53
        assert len(store.reconciliations()) == (0 if version == 1 else 1)
        assert [t.tag for t in store.tags()] == ["twins", "<b>typo</b>"]
    after = _rows(path, TABLES[version])
    assert {t: v for t, v in after.items() if t != "meta"} == {t: v for t, v in before.items() if t != "meta"}
    assert dict(after["meta"]) == {**dict(before["meta"]), "schema_version": str(SCHEMA_VERSION)}
    with LabelStore.open(path) as again:  # opened again: nothing more changes; it takes new answers
        assert _rows(path, TABLES[version]) == after
        saved = again.save(31, "erin", Decision(removed=[str(BIG + 31)]), expected_version=0)
        assert isinstance(saved, Saved) and again.progress() == brute_progress(again)
    assert _digest(fixture) == digest


@pytest.mark.parametrize("version", [1, 3])
def test_an_older_store_read_only_is_upgraded_in_memory_and_left_as_it_is(tmp_path, version):
    path = tmp_path / "workbench.sqlite"
    shutil.copyfile(OLD / f"v{version}.sqlite", path)
    digest = _digest(path)
    with LabelStore.open(path, read_only=True) as store:
        assert store.progress() == brute_progress(store) and store.progress().done == 28
        assert len(store.labels_frame()) == 28
    assert _digest(path) == digest
    assert sorted(p.name for p in tmp_path.iterdir()) == ["workbench.sqlite"]  # no -wal, no -shm left


def test_a_read_only_open_leaves_no_log_beside_the_store_and_sees_an_open_writers_saves(tmp_path):
    path = tmp_path / "workbench.sqlite"
    shutil.copyfile(OLD / "v4.sqlite", path)
    with LabelStore.open(path) as store:  # a WAL store, as the workbench leaves it
        store.save(32, "ann", Decision(removed=[str(BIG + 132)]), expected_version=0)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["workbench.sqlite"]
    digest = _digest(path)
    with LabelStore.open(path, read_only=True) as store:
        assert store.decision(32, "ann").removed == (str(BIG + 132),) and store.progress() == brute_progress(store)
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            store.save(33, "ann", Decision(), expected_version=0)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["workbench.sqlite"] and _digest(path) == digest
    # a writer has it open (its log and shared memory exist): read through them, its saves seen
    with LabelStore.open(path) as writer:
        writer.save(33, "bob", Decision(), expected_version=0)
        names = sorted(p.name for p in tmp_path.iterdir())
        assert names == ["workbench.sqlite", "workbench.sqlite-shm", "workbench.sqlite-wal"]
        with LabelStore.open(path, read_only=True) as reader:
            assert reader.decision(33, "bob") is not None
            writer.save(34, "bob", Decision(), expected_version=0)
            assert reader.decision(34, "bob") is not None  # read live, not a copy
    assert sorted(p.name for p in tmp_path.iterdir()) == ["workbench.sqlite"]


# -- the progress counts ----------------------------------------------------------------------------
SAVES = st.lists(st.tuples(st.integers(1, 6), st.sampled_from(["ann", "bob", "cy"]),
                           st.sampled_from(["labelled", "unsure", "skipped"])), max_size=40)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(saves=SAVES)
def test_the_counts_each_save_keeps_equal_a_count_of_every_decision(tmp_path_factory, saves):
    folder = tmp_path_factory.mktemp("counts")
    with LabelStore.create(folder / "w.sqlite", draws=[(n, f"r{n}", f"c{n}", n % 2 == 0) for n in range(1, 7)],
                           id_kind="text") as store:
        for draw, who, status in saves:
            current = store.decision(draw, who)
            out = store.save(draw, who, Decision(status=status, reason="unsure who" if status == "skipped" else ""),
                             expected_version=current.version if current else 0)
            assert isinstance(out, Saved)
            assert store.progress() == brute_progress(store)
        kept = store.progress()
        with store.transaction() as db:  # counted again from scratch (as an upgrade does): the same
            for statement in statements(COUNT_PROGRESS):
                db.execute(statement)
        assert store.progress() == kept


def _cost(store: LabelStore, call) -> tuple[int, int]:
    """The SQL statements the store sends and SQLite virtual-machine steps (in tens) that
    ``call`` runs (SQLite traces a statement once more per trigger program it runs: schema 5's
    trigger on ``decisions`` is part of the one INSERT, its steps counted in the VM steps)."""
    run: list[str] = []
    steps = [0]

    def tick() -> int:
        steps[0] += 1
        return 0

    store._db.set_trace_callback(run.append)
    store._db.set_progress_handler(tick, 10)
    try:
        call()
    finally:
        store._db.set_trace_callback(None)
        store._db.set_progress_handler(None, 0)
    sent = [sql for i, sql in enumerate(run) if i == 0 or sql != run[i - 1]]
    return len(sent), steps[0]


def test_a_save_does_the_same_work_in_a_small_and_a_large_store(tmp_path):
    costs = {}
    for n in (20, 4000):
        with LabelStore.create(tmp_path / f"{n}.sqlite", draws=[(i, f"r{i}", f"c{i}", i % 10 == 0)
                                                               for i in range(1, n + 1)], id_kind="text") as store:
            with store.transaction() as db:  # the other answers written at once (one save each is slow)
                db.executemany("INSERT INTO decisions VALUES (?, ?, 'labelled', ?, '[]', NULL, '', '', 1, 't', ?)",
                               [(i, "ann" if i % 2 else "bob", f'["x{i}"]', i) for i in range(2, n + 1)])
                for statement in statements(COUNT_PROGRESS):
                    db.execute(statement)
            first = _cost(store, lambda s=store: s.save(1, "cy", Decision(removed=["a"]), expected_version=0))
            again = _cost(store, lambda s=store: s.save(1, "cy", Decision(removed=["b"]), expected_version=1))
            progress = _cost(store, store.progress)
            assert store.progress() == brute_progress(store)
            costs[n] = (first, again, progress)
            # the earlier answer's candidates (schema 5): the draws of ĉ(r) and those adding r, indexed
            assert [d.draw for d, _ in store.entity_answers("r5", "c7")] == [7]
            costs[n, "entity"] = _cost(store, lambda s=store: s.entity_answers("r5", "c7"))
            # all decisions read once: what counting the progress cost before (issue 31)
            costs[n, "scan"] = _cost(store, store.decisions)
    small, large = costs[20], costs[4000]
    assert [c[0] for c in large] == [c[0] for c in small]  # statements: the same count at any size
    assert large[0][0] <= 9 and large[1][0] <= 7 and large[2][0] == 1  # BEGIN … COMMIT included
    assert all(big[1] <= 1.5 * small_[1] + 5 for big, small_ in zip(large, small, strict=True))  # VM steps: constant
    assert costs[4000, "scan"][1] > 100 * max(large[0][1], large[2][1])  # a scan at this size is far dearer
    assert costs[4000, "entity"][0] == 1 and costs[4000, "entity"][1] <= 1.5 * costs[20, "entity"][1] + 5


# -- a store that cannot be written ------------------------------------------------------------------
def _can_mount_read_only() -> bool:
    try:
        return subprocess.run(["unshare", "-rm", "true"], capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


READ_ONLY_SCRIPT = """
import sys
from er_expectations import InputError
from er_expectations.labelling.store import LabelStore
path = sys.argv[1]
try:
    LabelStore.open(path)
except InputError as exc:
    print("REFUSED", exc)
with LabelStore.open(path, read_only=True) as store:
    print("READ", store.progress().done, len(store.labels_frame()))
"""


@pytest.mark.skipif(not _can_mount_read_only(), reason="needs unshare -rm to mount a folder read-only")
def test_a_store_on_read_only_media_is_said_read_only_and_still_read(tmp_path):
    import sys

    media, mount = tmp_path / "media", tmp_path / "mount"
    media.mkdir()
    mount.mkdir()
    shutil.copyfile(OLD / "v3.sqlite", media / "workbench.sqlite")
    digest = _digest(media / "workbench.sqlite")
    script = tmp_path / "read.py"
    script.write_text(READ_ONLY_SCRIPT)
    out = subprocess.run(
        ["unshare", "-rm", "sh", "-c", f'mount --bind -o ro "{media}" "{mount}" && exec "{sys.executable}" '
                                       f'"{script}" "{mount}/workbench.sqlite"'],
        capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "REFUSED" in out.stdout and "read-only media" in out.stdout and "label export" in out.stdout
    assert "corrupt" not in out.stdout and "backup" not in out.stdout
    assert "READ 28 28" in out.stdout
    assert _digest(media / "workbench.sqlite") == digest
    assert sorted(p.name for p in media.iterdir()) == ["workbench.sqlite"]


def test_a_read_only_store_refuses_to_be_written(tmp_path):
    path = tmp_path / "workbench.sqlite"
    shutil.copyfile(OLD / "v3.sqlite", path)
    with LabelStore.open(path) as store:  # brought to the current version first
        store.save(32, "ann", Decision(), expected_version=0)
    digest = _digest(path)
    with LabelStore.open(path, read_only=True) as store:
        assert store.progress().done == 29
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            store.save(33, "ann", Decision(), expected_version=0)
    assert _digest(path) == digest


def test_a_newer_store_read_only_is_refused(tmp_path):
    path = tmp_path / "workbench.sqlite"
    shutil.copyfile(OLD / "v1.sqlite", path)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    db.close()
    with pytest.raises(InputError, match="schema version 99.*newer"):
        LabelStore.open(path, read_only=True)


FULL_DISK_SCRIPT = """
import sqlite3, sys
from er_expectations.labelling.store import Decision, LabelStore, Saved
from er_expectations.labelling.store_schema import is_disk_full
path = sys.argv[1]
store = LabelStore.create(path, draws=[(n, f"r{n}", f"c{n}", False) for n in range(1, 2001)], id_kind="text")
saved = 0
for n in range(1, 2001):
    try:
        out = store.save(n, "ann", Decision(note="x" * 20_000), expected_version=0)
    except Exception as exc:
        print("FULL" if is_disk_full(exc) else f"OTHER {type(exc).__name__}: {exc}")
        break
    assert isinstance(out, Saved)
    saved += 1
print("SAVED", saved, "PROGRESS", store.progress().done, "STORED", len(store.decisions()))
store.close()
with LabelStore.open(path, read_only=True) as again:
    print("REOPENED", len(again.decisions()), again.progress().done)
"""


@pytest.mark.skipif(not _can_mount_read_only(), reason="needs unshare -rm to mount a small tmpfs")
def test_a_full_disk_loses_no_saved_answer(tmp_path):
    import sys

    disk = tmp_path / "disk"
    disk.mkdir()
    script = tmp_path / "fill.py"
    script.write_text(FULL_DISK_SCRIPT)
    out = subprocess.run(
        ["unshare", "-rm", "sh", "-c", f'mount -t tmpfs -o size=2m tmpfs "{disk}" && exec "{sys.executable}" '
                                       f'"{script}" "{disk}/workbench.sqlite"'],
        capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "FULL" in out.stdout, out.stdout
    saved = int(out.stdout.split("SAVED ")[1].split()[0])
    assert saved > 10
    assert f"PROGRESS {saved} STORED {saved}" in out.stdout and f"REOPENED {saved} {saved}" in out.stdout
