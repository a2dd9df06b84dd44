"""The labels store's tables, their versions and the upgrade of an older store (docs/dev/workbench.md).

:data:`SCHEMA` makes a new store at :data:`SCHEMA_VERSION`; :data:`UPGRADES` holds the step
from each older version to the next. A step only adds tables and fills them from the rows
already there: nothing is dropped or rewritten, so no answer is lost. The versions:

1. draws, decisions (A_r, B_r, versions), the append-only history of saves, error tags,
   labellers and the queue;
2. reconciliations (SPEC 2.2: which answer of a draw answered twice is the draw's answer);
3. the tables of a top-up project (``topup_*``, SPEC 14.3);
4. the progress counts (``progress``, ``labeller_answers``), kept up to date by each save so
   that counting the progress reads two small tables instead of every decision (issue 31);
5. the records each answer adds (``added_records``, kept by triggers on ``decisions``) and an
   index of the draws by predicted cluster, so that the earlier answer of a drawn record's
   entity (:func:`~er_expectations.labelling.qc.earlier_answer`) is two indexed look-ups, not a
   read of every decision (issue 31).

:func:`connect` opens the SQLite file (read-only when asked, immutably on read-only media),
:func:`check` reads it without writing and refuses what is not a current store with a message
naming the file, and :func:`upgrade` brings an older store to :data:`SCHEMA_VERSION` in one
transaction.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path
from urllib.parse import quote

from er_expectations.core.errors import InputError, ProjectBusyError

__all__ = ["APPLICATION", "APPLICATION_ID", "COUNT_PROGRESS", "SCHEMA", "SCHEMA_VERSION", "UPGRADES", "check",
           "connect", "is_busy", "is_disk_full", "read_only_problem", "statements", "upgrade"]

#: Version of the store's tables; a store with a higher version is refused, an older one upgraded.
SCHEMA_VERSION = 5
#: What a store writes in ``meta.application``: a SQLite file without it is no store.
APPLICATION = "er-expectations labelling workbench"
#: SQLite's ``PRAGMA application_id`` of a store ("ERXW").
APPLICATION_ID = 0x45525857

_V1 = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE draws (draw INTEGER PRIMARY KEY, record TEXT NOT NULL, predicted_cluster TEXT NOT NULL,
                    double INTEGER NOT NULL DEFAULT 0);
CREATE TABLE decisions (draw INTEGER NOT NULL REFERENCES draws(draw), labeller TEXT NOT NULL,
                        status TEXT NOT NULL, removed TEXT NOT NULL, added TEXT NOT NULL, true_cluster TEXT,
                        note TEXT NOT NULL, reason TEXT NOT NULL, version INTEGER NOT NULL,
                        saved_at TEXT NOT NULL, first_edit INTEGER NOT NULL, PRIMARY KEY (draw, labeller));
CREATE TABLE edits (id INTEGER PRIMARY KEY AUTOINCREMENT, draw INTEGER NOT NULL, labeller TEXT NOT NULL,
                    at TEXT NOT NULL, before TEXT, after TEXT NOT NULL);
CREATE INDEX edits_draw ON edits (draw);
CREATE TABLE tags (id INTEGER PRIMARY KEY AUTOINCREMENT, cluster TEXT NOT NULL, tag TEXT NOT NULL,
                   kind TEXT NOT NULL, records TEXT NOT NULL, labeller TEXT NOT NULL, at TEXT NOT NULL);
CREATE TABLE labellers (name TEXT PRIMARY KEY, first_seen TEXT NOT NULL);
CREATE TABLE queue (draw INTEGER NOT NULL, labeller TEXT NOT NULL, taken_at TEXT NOT NULL,
                    PRIMARY KEY (draw, labeller));
"""
#: Version 2: the reconciliations (append-only; the latest of a draw counts).
_V2 = """CREATE TABLE IF NOT EXISTS reconciliations (id INTEGER PRIMARY KEY AUTOINCREMENT,
    draw INTEGER NOT NULL REFERENCES draws(draw), labeller TEXT NOT NULL, versions TEXT NOT NULL,
    by TEXT NOT NULL, at TEXT NOT NULL, note TEXT NOT NULL);
"""
#: Version 3: a top-up project's tasks (one per sampled entity, with its known records), their
#: candidates, one answer per task (versioned like a decision) and the history of its saves.
_V3 = """CREATE TABLE IF NOT EXISTS topup_tasks (task INTEGER PRIMARY KEY, entity TEXT NOT NULL UNIQUE,
    known TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS topup_candidates (task INTEGER NOT NULL REFERENCES topup_tasks(task),
    record TEXT NOT NULL, predicted_cluster TEXT NOT NULL, reason TEXT NOT NULL, PRIMARY KEY (task, record));
CREATE TABLE IF NOT EXISTS topup_answers (task INTEGER PRIMARY KEY REFERENCES topup_tasks(task),
    labeller TEXT NOT NULL, belongs TEXT NOT NULL, found TEXT NOT NULL, version INTEGER NOT NULL,
    saved_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS topup_edits (id INTEGER PRIMARY KEY AUTOINCREMENT, task INTEGER NOT NULL,
    labeller TEXT NOT NULL, at TEXT NOT NULL, before TEXT, after TEXT NOT NULL);
"""
#: Counting the progress from the draws and decisions (the one time a store is made or upgraded;
#: afterwards each save adds its change): a draw is ``done`` with an answer labelled or unsure,
#: ``skipped`` when every answer skips it, ``unsure`` with an unsure answer, and a double draw
#: ``doubles_done`` with two answers labelled or unsure; ``labeller_answers`` counts each
#: labeller's decisions, skips included (:class:`~er_expectations.labelling.store.Progress`).
COUNT_PROGRESS = """DELETE FROM progress;
DELETE FROM labeller_answers;
INSERT INTO progress (id, draws, done, skipped, unsure, doubles, doubles_done) SELECT 1,
    (SELECT COUNT(*) FROM draws),
    (SELECT COUNT(DISTINCT draw) FROM decisions WHERE status IN ('labelled', 'unsure')),
    (SELECT COUNT(*) FROM (SELECT draw FROM decisions GROUP BY draw HAVING SUM(status <> 'skipped') = 0)),
    (SELECT COUNT(DISTINCT draw) FROM decisions WHERE status = 'unsure'),
    (SELECT COUNT(*) FROM draws WHERE double = 1),
    (SELECT COUNT(*) FROM (SELECT x.draw FROM decisions x JOIN draws d ON d.draw = x.draw
                           WHERE d.double = 1 AND x.status IN ('labelled', 'unsure')
                           GROUP BY x.draw HAVING COUNT(*) >= 2));
INSERT INTO labeller_answers (labeller, answers) SELECT labeller, COUNT(*) FROM decisions GROUP BY labeller;
"""
#: Version 4: the progress counts, one row (``id = 1``) and one row per labeller with answers.
_V4 = """CREATE TABLE IF NOT EXISTS progress (id INTEGER PRIMARY KEY CHECK (id = 1), draws INTEGER NOT NULL,
    done INTEGER NOT NULL, skipped INTEGER NOT NULL, unsure INTEGER NOT NULL, doubles INTEGER NOT NULL,
    doubles_done INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS labeller_answers (labeller TEXT PRIMARY KEY, answers INTEGER NOT NULL);
""" + COUNT_PROGRESS
#: Version 5: B_r by record (one row per record an answer adds), kept by the triggers on
#: ``decisions`` (an answer saved again replaces its rows; a deleted answer takes them away),
#: filled from the answers already there; the draws by predicted cluster.
_V5 = """CREATE INDEX IF NOT EXISTS draws_cluster ON draws (predicted_cluster);
CREATE TABLE IF NOT EXISTS added_records (draw INTEGER NOT NULL, labeller TEXT NOT NULL, record TEXT NOT NULL,
    PRIMARY KEY (draw, labeller, record)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS added_records_record ON added_records (record);
CREATE TRIGGER IF NOT EXISTS decisions_added AFTER INSERT ON decisions BEGIN
    DELETE FROM added_records WHERE draw = NEW.draw AND labeller = NEW.labeller;
    INSERT OR IGNORE INTO added_records SELECT NEW.draw, NEW.labeller, value FROM json_each(NEW.added);
END;
CREATE TRIGGER IF NOT EXISTS decisions_added_gone AFTER DELETE ON decisions BEGIN
    DELETE FROM added_records WHERE draw = OLD.draw AND labeller = OLD.labeller;
END;
INSERT OR IGNORE INTO added_records SELECT x.draw, x.labeller, j.value FROM decisions x, json_each(x.added) j;
"""
#: The tables of a new store (the counts are made after its draws are written).
SCHEMA = _V1 + _V2 + _V3 + _V4[:_V4.index("DELETE FROM progress")] + _V5
#: The step from version v - 1 to v.
UPGRADES = {2: _V2, 3: _V3, 4: _V4, 5: _V5}


def statements(script: str) -> list[str]:
    """The statements of ``script`` (``executescript`` would commit the transaction around them);
    a trigger's body, whose statements end in ``;`` too, stays in its ``CREATE TRIGGER``."""
    out: list[str] = []
    pending = ""
    for part in script.split(";"):
        pending += part + ";"
        if sqlite3.complete_statement(pending):
            if pending.strip(" \n;"):
                out.append(pending.strip().removesuffix(";").strip())
            pending = ""
    if pending.strip(" \n;"):
        out.append(pending.strip().removesuffix(";").strip())
    return out


def read_only_problem(p: Path) -> str | None:
    """Why the store ``p`` cannot be written (read-only media, or no write permission on the
    file or its folder), or None when it can."""
    for target in (p, p.parent):
        if not os.access(target, os.W_OK):
            try:
                readonly_fs = os.statvfs(target).f_flag & os.ST_RDONLY
            except OSError:
                readonly_fs = 0
            where = "on read-only media" if readonly_fs else "without write permission for this user"
            return f"{'the file' if target == p else 'its folder'} is {where}"
    return None


def _stamp(p: Path) -> tuple[int, ...] | None:
    """What changes when a file is written (``os.stat``: no descriptor opened, so no SQLite lock dropped)."""
    try:
        st = p.stat()
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def _snapshot(p: Path, uri: str) -> sqlite3.Connection | None:
    """The store ``p`` copied into memory through an immutable read (SQLite then makes no
    ``-wal``/``-shm`` file beside it, as a ``mode=ro`` reader of a WAL store does), or None when
    it cannot be had that way. Only called when no log or shared-memory file exists (no
    connection has the store open, every save is in the file); the copy counts only when the
    file is unchanged and still has no log afterwards (a writer that came meanwhile makes a log,
    and its checkpoint changes the file): then the read is tried again, at most three times."""
    wal, shm = p.with_name(p.name + "-wal"), p.with_name(p.name + "-shm")
    for _ in range(3):
        before = _stamp(p)
        memory = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        try:
            source = sqlite3.connect(uri + "?immutable=1", uri=True, isolation_level=None)
            try:
                source.backup(memory)
            finally:
                source.close()
        except sqlite3.DatabaseError:  # not a database, or torn by a writer: the checked reading says which
            memory.close()
            if _stamp(p) == before:
                return None
            continue
        if before is not None and _stamp(p) == before and not wal.exists() and not shm.exists():
            return memory
        memory.close()
    return None


def connect(p: Path, *, read_only: bool, timeout: float) -> sqlite3.Connection:
    """An SQLite connection to the store ``p``: read-write, or read-only. A read-only store with
    no write-ahead log beside it is copied into memory through an immutable read (:func:`_snapshot`:
    no ``-wal``/``-shm`` file is left beside it, issue 31); one that another connection has open
    is read with ``mode=ro`` (its files exist already), and on read-only media, where SQLite
    cannot make the shared-memory file a read needs, immutably: nothing else can write there.
    Refuses immutable reading when a write-ahead log holds saves not yet in the file (they would
    be missed)."""
    uri = "file:" + quote(str(p.absolute()))
    try:
        if not read_only:
            return sqlite3.connect(p, isolation_level=None, timeout=timeout, check_same_thread=False)
        if not p.with_name(p.name + "-wal").exists() and not p.with_name(p.name + "-shm").exists():
            copied = _snapshot(p, uri)
            if copied is not None:
                return copied
        db = sqlite3.connect(uri + "?mode=ro", uri=True, isolation_level=None, timeout=timeout,
                             check_same_thread=False)
        try:
            db.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
            return db
        except sqlite3.OperationalError:
            db.close()
            if read_only_problem(p) is None:
                raise
        wal = p.with_name(p.name + "-wal")
        if wal.exists() and wal.stat().st_size > 0:
            raise InputError(f"{p}: the labels store is on read-only media and its write-ahead log {wal.name} "
                             "holds saves not yet in the store's file; copy the project folder to writable storage "
                             "and run the command there (opening it there folds the log in)")
        return sqlite3.connect(uri + "?immutable=1", uri=True, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as exc:
        raise InputError(f"{p}: cannot open the labels store: {exc}") from exc


def check(p: Path, db: sqlite3.Connection) -> int:
    """Read the store without writing to it: a store of this application, not newer, intact;
    returns its schema version.

    Only SQLite reads the file: a Python ``open()``/``close()`` of it would drop the locks
    SQLite holds on it through other connections of the process (POSIX locks are per process)."""
    try:
        app_id = db.execute("PRAGMA application_id").fetchone()[0]
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        meta = dict(db.execute("SELECT key, value FROM meta").fetchall()) if "meta" in tables else {}
        result = db.execute("PRAGMA quick_check").fetchone()[0]
    except sqlite3.OperationalError as exc:
        if is_busy(exc):
            raise ProjectBusyError(f"{p}: the labels store is locked by another process; it was left as it is: "
                                   "try again when that process is done (a 'label' command, or a workbench "
                                   "serving the project)") from exc
        why = read_only_problem(p)
        if why is not None and "unable to open" in str(exc):
            raise InputError(f"{p}: the labels store cannot be opened for writing: {why}. Copy the project folder "
                             "to writable storage (or fix the permissions); 'er-expectations label export' reads "
                             "a read-only store") from exc
        raise _corrupt(p, exc) from exc
    except sqlite3.DatabaseError as exc:
        raise _corrupt(p, exc) from exc
    if app_id != APPLICATION_ID or meta.get("application") != APPLICATION:
        raise InputError(f"{p}: is an SQLite database but not a labels store of er-expectations; it was "
                         "left as it is: give the project's workbench.sqlite")
    if result != "ok":
        raise InputError(f"{p}: the labels store is corrupt (SQLite's check says {result!r}); it was "
                         "left as it is: restore it from a backup")
    try:
        version = int(meta.get("schema_version", ""))
    except ValueError:
        raise InputError(f"{p}: the labels store has no readable schema_version; it was left as it is") from None
    if version > SCHEMA_VERSION:
        raise InputError(f"{p}: the labels store has schema version {version}, written by a newer "
                         f"er-expectations (this one reads up to {SCHEMA_VERSION}); upgrade er-expectations. "
                         "The store was left as it is")
    return version


def _corrupt(p: Path, exc: sqlite3.Error) -> InputError:
    return InputError(f"{p}: is not a labels store, or the store is corrupt ({exc}); it was left as it "
                      "is: give the project's workbench.sqlite, or restore it from a backup")


def upgrade(db: sqlite3.Connection) -> None:
    """Bring an older store to :data:`SCHEMA_VERSION`: the steps of :data:`UPGRADES` after its
    version, in one transaction (two processes opening it at once upgrade it once)."""
    read = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if int(read[0]) >= SCHEMA_VERSION:
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        version = int(db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0])
        for step in range(version + 1, SCHEMA_VERSION + 1):
            for statement in statements(UPGRADES[step]):
                db.execute(statement)
        db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version' AND CAST(value AS INTEGER) < ?",
                   (str(SCHEMA_VERSION), SCHEMA_VERSION))
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise


def is_disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` says the disk (or the store's size limit) is full."""
    if isinstance(exc, sqlite3.OperationalError):
        return "full" in str(exc)
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)


def is_busy(exc: BaseException) -> bool:
    """Whether ``exc`` is SQLite saying another connection holds the store locked."""
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in str(exc) or "busy" in str(exc))
