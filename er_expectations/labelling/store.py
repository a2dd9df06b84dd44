"""The labels store of a labelling project: one SQLite file (docs/dev/workbench.md, SPEC 2.2).

Every decision is one transaction (WAL journal, ``synchronous=FULL``): a killed server or a
power cut loses at most the decision not yet sent. A decision carries a version; a save that
names a stale version returns :class:`Conflict` and writes nothing, so that two tabs or two
labellers never overwrite each other silently. Every save is appended to ``edits`` (who,
when, before, after), never rewritten.

Record and cluster ids are stored as their exact text (JSON strings inside the lists), so that
ids beyond 2^53 survive; the kind of the records' ids (``integer`` or ``text``) is kept in the
``meta`` table and :meth:`LabelStore.labels_frame` gives the ids back in that kind.

A file that is not a store, or a store written by a newer version of er-expectations, is
refused with a message naming the file, and never written (it is first read read-only). The
tables, their versions and the upgrade of an older store are in :mod:`.store_schema`; the
progress counts are kept by each save, so that :meth:`LabelStore.progress` reads two small
tables, never the decisions.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import math
import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from er_expectations.core.errors import InputError, ProjectBusyError
from er_expectations.labelling import store_schema as schema
from er_expectations.labelling.store_schema import SCHEMA_VERSION

__all__ = [
    "SCHEMA_VERSION",
    "STATUSES",
    "Conflict",
    "Decision",
    "Draw",
    "Edit",
    "LabelStore",
    "Progress",
    "Reconciliation",
    "Saved",
    "Tag",
]

#: What a labeller may answer for a draw.
STATUSES = ("labelled", "unsure", "skipped")
#: The statuses whose A_r and B_r make a label (SPEC 2.2): a skipped draw has none.
ANSWERED = ("labelled", "unsure")
#: How long a draw taken from the queue stays reserved for its labeller (seconds).
TAKE_SECONDS = 30 * 60
#: Longest labeller name, note or reason, in characters.
MAX_NAME, MAX_TEXT = 100, 20_000
#: Most ids in A_r or B_r of one decision.
MAX_IDS = 100_000

# -- typed results ---------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Draw:
    """One draw of the sample (SPEC 1): its number, the drawn record r and ĉ(r)'s id, as text;
    ``double``: the draw is labelled twice, blind, by two labellers."""

    draw: int
    record: str
    predicted_cluster: str
    double: bool


@dataclass(frozen=True, slots=True)
class Decision:
    """A labeller's answer for one draw (SPEC 2.2): A_r (``removed``) and B_r (``added``) as ids
    in their exact text, the status, the optional true cluster id, a note and, for ``skipped``,
    the reason.

    Build one with keyword arguments to :meth:`LabelStore.save` it (``draw``, ``labeller``,
    ``version`` and ``saved_at`` are then ignored); the store returns it with them filled in.
    """

    status: str = "labelled"
    removed: tuple[str, ...] = ()
    added: tuple[str, ...] = ()
    true_cluster: str | None = None
    note: str = ""
    reason: str = ""
    draw: int | None = None
    labeller: str | None = None
    version: int = 0
    saved_at: str | None = None

    def content(self) -> dict:
        """What the labeller wrote (no draw, labeller or time), as JSON-ready data."""
        return {"status": self.status, "removed": list(self.removed), "added": list(self.added),
                "true_cluster": self.true_cluster, "note": self.note, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class Saved:
    """:meth:`LabelStore.save` wrote the decision: ``decision`` carries its new version."""

    decision: Decision


@dataclass(frozen=True, slots=True)
class Conflict:
    """:meth:`LabelStore.save` wrote nothing: the stored decision (``current``, None when it was
    deleted) has another version than the one the labeller started from."""

    current: Decision | None
    expected_version: int


@dataclass(frozen=True, slots=True)
class Edit:
    """One save, as the append-only history keeps it: who, when, before (None: the first save)
    and after (:meth:`Decision.content` plus ``version``)."""

    id: int
    draw: int
    labeller: str
    at: str
    before: dict | None
    after: dict


@dataclass(frozen=True, slots=True)
class Tag:
    """A review-mode error tag on a true cluster (issue 20 reads them): ``kind`` is ``over``
    (records wrongly put together) or ``under`` (records wrongly kept apart)."""

    id: int
    cluster: str
    tag: str
    kind: str
    records: tuple[str, ...]
    labeller: str
    at: str


@dataclass(frozen=True, slots=True)
class Reconciliation:
    """Which answer of a draw answered more than once is the draw's answer: ``labeller``'s,
    decided by ``by`` at ``at``; ``versions`` are the versions of the draw's answers then (a
    later save of any of them makes the reconciliation out of date). Answers are never changed."""

    draw: int
    labeller: str
    versions: dict[str, int]
    by: str
    at: str
    note: str = ""


@dataclass(frozen=True)
class Progress:
    """How far the labelling is: ``done`` of ``draws`` draws have an answer (labelled or unsure)
    from at least one labeller, ``skipped`` draws only skipped; ``doubles`` draws are to be
    labelled twice, ``doubles_done`` of them have two answers; ``per_labeller`` counts each
    labeller's answers (skips included) and ``unsure`` the draws with an unsure answer."""

    draws: int
    done: int
    skipped: int
    unsure: int
    doubles: int
    doubles_done: int
    per_labeller: dict[str, int] = field(default_factory=dict)

    @property
    def remaining(self) -> int:
        """Draws with no answer yet."""
        return self.draws - self.done - self.skipped


# -- helpers -----------------------------------------------------------------------------------
def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="microseconds")


def _encodable(text: str) -> bool:
    """Whether ``text`` is valid Unicode (a lone surrogate, possible in a Python str, is not)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def id_text(value: object, *, what: str = "record id") -> str:
    """An id as the exact text the store keeps: text as it is, a whole number as its digits
    (an int, a numpy integer or an integral float below 2^53); anything else is refused."""
    if isinstance(value, str):
        if not value or "\x00" in value or not _encodable(value):
            raise InputError(f"{what} {value!r}: an id is a non-empty text of Unicode characters, without NUL")
        return value
    if isinstance(value, (bool, np.bool_)) or value is None:
        raise InputError(f"{what} {value!r}: not an id; give the id as text or a whole number")
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)) and math.isfinite(value) and float(value).is_integer() \
            and abs(value) <= 2**53:
        return str(int(value))
    raise InputError(f"{what} {value!r}: not an id; give the id as text or a whole number "
                     "(a float above 2^53 has lost digits already)")


def _ids(values: Iterable[object], what: str) -> tuple[str, ...]:
    if isinstance(values, (str, bytes)):
        raise InputError(f"{what}: give a list of record ids, not the text {values!r}")
    out = tuple(dict.fromkeys(id_text(v, what=f"{what}: record id") for v in values))
    if len(out) > MAX_IDS:
        raise InputError(f"{what}: {len(out):,} ids; one decision lists at most {MAX_IDS:,}")
    return out


def _text(value: object, what: str, limit: int) -> str:
    if not isinstance(value, str):
        raise InputError(f"{what}={value!r}: give text")
    if len(value) > limit:
        raise InputError(f"{what}: {len(value):,} characters; at most {limit:,}")
    if "\x00" in value:
        raise InputError(f"{what}: holds a NUL character; remove it")
    if not _encodable(value):
        raise InputError(f"{what}: holds a lone surrogate (not a Unicode character); remove it")
    return value


def labeller_name(name: object) -> str:
    """A labeller's name: non-blank text of at most :data:`MAX_NAME` characters, spaces trimmed."""
    if not isinstance(name, str) or not name.strip():
        raise InputError(f"labeller={name!r}: give the labeller's name (non-blank text)")
    return _text(name.strip(), "labeller", MAX_NAME)


def checked_decision(decision: Decision) -> Decision:
    """``decision`` with its ids as text, de-duplicated in order; bad values raise InputError."""
    if not isinstance(decision, Decision):
        raise InputError(f"decision: expected a Decision, got {type(decision).__name__}")
    if decision.status not in STATUSES:
        raise InputError(f"status={decision.status!r}: give one of {', '.join(STATUSES)}")
    reason = _text(decision.reason, "reason", MAX_TEXT)
    if decision.status == "skipped" and not reason.strip():
        raise InputError("status='skipped': give the reason for skipping the draw (reason=...)")
    true_cluster = None if decision.true_cluster is None or decision.true_cluster == "" \
        else id_text(decision.true_cluster, what="true_cluster")
    return Decision(status=decision.status, removed=_ids(decision.removed, "removed"),
                    added=_ids(decision.added, "added"), true_cluster=true_cluster,
                    note=_text(decision.note, "note", MAX_TEXT), reason=reason)


def _draw_counts(double: bool, statuses: Iterable[str]) -> tuple[int, int, int, int]:
    """What one draw adds to the progress counts (done, skipped, unsure, doubles_done), from
    the statuses of its answers (the rule of :data:`~.store_schema.COUNT_PROGRESS`)."""
    seen = list(statuses)
    answered = sum(s in ANSWERED for s in seen)
    return (int(answered > 0), int(bool(seen) and all(s == "skipped" for s in seen)), int("unsure" in seen),
            int(double and answered >= 2))


def _count_change(db: sqlite3.Connection, before: tuple[int, ...], after: tuple[int, ...]) -> None:
    """Move the progress counts by a draw's change (no statement when nothing changes)."""
    delta = [a - b for a, b in zip(after, before, strict=True)]
    if any(delta):
        db.execute("UPDATE progress SET done = done + ?, skipped = skipped + ?, unsure = unsure + ?, "
                   "doubles_done = doubles_done + ? WHERE id = 1", delta)


def _decision(row: sqlite3.Row) -> Decision:
    return Decision(status=row["status"], removed=tuple(json.loads(row["removed"])),
                    added=tuple(json.loads(row["added"])), true_cluster=row["true_cluster"], note=row["note"],
                    reason=row["reason"], draw=int(row["draw"]), labeller=row["labeller"],
                    version=int(row["version"]), saved_at=row["saved_at"])


# -- the store -----------------------------------------------------------------------------------
class LabelStore:
    """The labels of one project in one SQLite file; open with :meth:`open`, make with :meth:`create`.

    A store is safe to share between threads (one connection behind a lock) and between
    processes (SQLite serialises the writers; each save is one ``BEGIN IMMEDIATE`` transaction).
    """

    def __init__(self, path: Path, connection: sqlite3.Connection) -> None:
        self.path = path
        self._db = connection
        self._lock = threading.RLock()
        self._busy_seconds = 30.0
        #: set by the project that opens the store: the ids of a list that are outside the release
        self.outside_release: Callable[[Sequence[str]], list[str]] | None = None
        meta = dict(self._db.execute("SELECT key, value FROM meta").fetchall())
        self.id_kind: str = meta.get("id_kind", "text")
        self.cluster_kind: str = meta.get("cluster_kind", "text")

    # -- opening ---------------------------------------------------------------------------------
    @classmethod
    def create(cls, path: str | os.PathLike, *, draws: Sequence[tuple[object, object, object, bool]],
               id_kind: str, cluster_kind: str = "text",
               fill: Callable[[sqlite3.Connection], None] | None = None) -> LabelStore:
        """Make a new store at ``path`` holding ``draws`` (draw number, record id, predicted
        cluster id, double); ``fill(connection)`` writes more rows in the same transaction (a
        top-up project's tasks). Refuses an existing file; the file appears whole or not at all."""
        p = Path(path)
        if p.exists() or p.is_symlink():
            raise InputError(f"{p}: the file exists already; open it, or choose another project folder")
        for kind, what in ((id_kind, "id_kind"), (cluster_kind, "cluster_kind")):
            if kind not in ("integer", "text"):
                raise InputError(f"{what}={kind!r}: give 'integer' or 'text'")
        rows = []
        for d, record, cluster, double in draws:
            if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or int(d) < 1:
                raise InputError(f"draw number {d!r}: draws are numbered 1, 2, 3, …")
            rows.append((int(d), id_text(record), id_text(cluster, what="predicted cluster"), int(bool(double))))
        numbers = [r[0] for r in rows]
        if len(set(numbers)) != len(numbers):
            raise InputError("draws: a draw number appears twice; every draw has its own number")
        import uuid

        tmp = p.with_name(f".{p.name}.{uuid.uuid4().hex}.creating")
        try:
            db = sqlite3.connect(tmp, isolation_level=None)
            try:
                db.executescript(schema.SCHEMA)
                db.execute(f"PRAGMA application_id = {schema.APPLICATION_ID}")
                db.execute("BEGIN")
                db.executemany("INSERT INTO meta VALUES (?, ?)", [
                    ("application", schema.APPLICATION), ("schema_version", str(SCHEMA_VERSION)),
                    ("id_kind", id_kind), ("cluster_kind", cluster_kind), ("created_at", _now())])
                db.executemany("INSERT INTO draws VALUES (?, ?, ?, ?)", rows)
                if fill is not None:
                    fill(db)
                for statement in schema.statements(schema.COUNT_PROGRESS):
                    db.execute(statement)
                db.execute("COMMIT")
            finally:
                db.close()
            with open(tmp, "rb+") as fh:  # no SQLite connection holds it any more
                os.fsync(fh.fileno())
            try:
                os.link(tmp, p)  # appears whole, and never over a store made meanwhile
            except FileExistsError:
                raise InputError(f"{p}: the file exists already (made by another process just now); open it") from None
            folder = os.open(p.parent, os.O_RDONLY)
            try:
                os.fsync(folder)
            finally:
                os.close(folder)
        finally:
            tmp.unlink(missing_ok=True)
        return cls.open(p)

    @classmethod
    def open(cls, path: str | os.PathLike, *, read_only: bool = False) -> LabelStore:
        """Open an existing store; a missing file, a file that is not a store, a corrupt store or
        one from a newer version raise :class:`InputError` naming the file (never written), a
        store locked by another process :class:`ProjectBusyError`.

        ``read_only=True`` only reads (``label export``): the file is never written, even on
        read-only media; an older store is upgraded in memory, its file left as it is. A
        read-write open of a store that cannot be written says so (read-only media, permissions).
        """
        p = Path(path)
        if not p.exists():
            raise InputError(f"{p}: no labels store here; make the project with 'er-expectations label init'")
        if not p.is_file():
            raise InputError(f"{p}: is not a regular file; give the project's workbench.sqlite")
        db = schema.connect(p, read_only=read_only, timeout=30.0)
        try:
            db.execute("PRAGMA busy_timeout = 30000")
            version = schema.check(p, db)  # reads only: nothing is written before the store is known good
            if read_only:
                if version < SCHEMA_VERSION:  # upgraded in memory: the file stays as it is
                    memory = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
                    db.backup(memory)
                    db.close()
                    db = memory
                    schema.upgrade(db)
                db.execute("PRAGMA query_only = ON")  # a copy in memory refuses writes as the file does
                db.row_factory = sqlite3.Row
                return cls(p, db)
            why = schema.read_only_problem(p)
            if why is not None:
                raise InputError(f"{p}: the labels store is read-only ({why}): the workbench writes every "
                                 "answer to it. Copy the project folder to writable storage, or fix the "
                                 "permissions; 'er-expectations label export' reads a read-only store")
            db.row_factory = sqlite3.Row
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = FULL")
            db.execute("PRAGMA foreign_keys = ON")
            schema.upgrade(db)
        except sqlite3.Error as exc:
            db.close()
            if schema.is_busy(exc):
                raise ProjectBusyError(f"{p}: the labels store stayed locked by another process for 30 s; it was "
                                       "left as it is: try again") from exc
            raise InputError(f"{p}: cannot open the labels store: {exc}") from exc
        except BaseException:
            db.close()
            raise
        return cls(p, db)

    def wait_for_lock(self, seconds: float) -> None:
        """How long a read or save waits for another process's lock before giving up (30 s when
        opened; the workbench waits less and tells the labeller to try again)."""
        with self._lock:
            self._busy_seconds = float(seconds)
            self._db.execute(f"PRAGMA busy_timeout = {int(self._busy_seconds * 1000)}")

    def close(self) -> None:
        """Close the connection (the store stays consistent whether or not this is called)."""
        with self._lock:
            self._db.close()

    def __enter__(self) -> LabelStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (``BEGIN IMMEDIATE``: other writers wait, readers go on)."""
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                if schema.is_busy(exc):
                    raise ProjectBusyError(f"{self.path}: the labels store stayed locked by another process for "
                                           f"{self._busy_seconds:g} s; nothing was written: try again") from exc
                raise
            try:
                yield self._db
                self._db.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise

    def _rows(self, sql: str, params: Sequence[object] = ()) -> list[sqlite3.Row]:
        with self._lock:
            return self._db.execute(sql, params).fetchall()

    def transaction(self) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        """One write transaction on the store's connection, for the tables of :mod:`.topup_store`."""
        return self._write()

    def query(self, sql: str, params: Sequence[object] = ()) -> list[sqlite3.Row]:
        """The rows of one read (``sqlite3.Row``), for the tables of :mod:`.topup_store`."""
        return self._rows(sql, params)

    # -- draws -------------------------------------------------------------------------------------
    def draws(self) -> list[Draw]:
        """Every draw, by number."""
        return [Draw(int(r["draw"]), r["record"], r["predicted_cluster"], bool(r["double"]))
                for r in self._rows("SELECT * FROM draws ORDER BY draw")]

    def draw(self, draw: int) -> Draw:
        """One draw; an unknown number raises :class:`InputError`."""
        rows = self._rows("SELECT * FROM draws WHERE draw = ?", (self._number(draw),))
        if not rows:
            raise InputError(f"draw {draw!r} is not a draw of this project ({self.path})")
        r = rows[0]
        return Draw(int(r["draw"]), r["record"], r["predicted_cluster"], bool(r["double"]))

    @staticmethod
    def _number(draw: object) -> int:
        if isinstance(draw, bool) or not isinstance(draw, (int, np.integer)):
            raise InputError(f"draw={draw!r}: give a draw number (a whole number)")
        if not -(2**63) <= int(draw) < 2**63:
            raise InputError(f"draw={draw!r}: no such draw")
        return int(draw)

    # -- decisions -----------------------------------------------------------------------------------
    def save(self, draw: int, labeller: str, decision: Decision, *, expected_version: int,
             others: dict[str, int] | None = None) -> Saved | Conflict:
        """Save ``labeller``'s decision for ``draw`` if the stored one still has ``expected_version``
        (0: none yet); otherwise write nothing and return :class:`Conflict` with the stored one.
        ``others``: the other answers' versions the labeller saw; one saved since (checked in the
        same transaction) is returned as the Conflict, its ``current`` another labeller's.

        One transaction of at most 9 statements, each touching the rows of this draw and labeller
        only: the draw and its answers (one read), the history, the decision, the queue and, when
        they change, the progress counts (:meth:`progress` reads them, never the decisions); the
        decision's INSERT keeps its added records (``added_records``, schema 5) by trigger."""
        number = self._number(draw)
        name = labeller_name(labeller)
        clean = checked_decision(decision)
        if isinstance(expected_version, bool) or not isinstance(expected_version, (int, np.integer)) \
                or expected_version < 0:
            raise InputError(f"expected_version={expected_version!r}: give the version the labeller started "
                             "from (0 for a draw they have not saved yet)")
        outside = self.outside_release(list(clean.added)) if self.outside_release and clean.added else []
        if outside:  # SPEC 9 rule 4: it would block the estimates until removed (the web page says the same)
            one = len(outside) == 1
            raise InputError(f"draw {number}: added {'record' if one else 'records'} "
                             f"{', '.join(map(repr, outside[:5]))}{f' and {len(outside) - 5} more' if len(outside) > 5 else ''} "
                             f"{'is' if one else 'are'} not in the release (no predicted cluster), so "
                             f"{'it' if one else 'they'} cannot be in a true cluster of it; take "
                             f"{'it' if one else 'them'} out of the added records and save again")
        at = _now()
        with self._write() as db:
            double, answers, first_edits = self._answers(db, number)
            current = answers.get(name)
            if (current.version if current else 0) != int(expected_version):
                return Conflict(current=current, expected_version=int(expected_version))
            for other in () if others is None else sorted((o for o in answers if o != name), key=first_edits.get):
                if others.get(other) != int(answers[other].version):  # saved since the labeller looked
                    return Conflict(current=answers[other], expected_version=int(expected_version))
            version = (current.version if current else 0) + 1
            after = {**clean.content(), "version": version}
            before = {**current.content(), "version": current.version} if current else None
            cur = db.execute("INSERT INTO edits (draw, labeller, at, before, after) VALUES (?, ?, ?, ?, ?)",
                             (number, name, at, None if before is None else json.dumps(before), json.dumps(after)))
            first_edit = first_edits[name] if current is not None else int(cur.lastrowid)
            db.execute(
                "INSERT OR REPLACE INTO decisions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (number, name, clean.status, json.dumps(list(clean.removed)), json.dumps(list(clean.added)),
                 clean.true_cluster, clean.note, clean.reason, version, at, first_edit))
            if current is None:  # a labeller's first answer to the draw: one more answer of theirs
                db.execute("INSERT OR IGNORE INTO labellers VALUES (?, ?)", (name, at))
                db.execute("INSERT INTO labeller_answers VALUES (?, 1) "
                           "ON CONFLICT (labeller) DO UPDATE SET answers = answers + 1", (name,))
            db.execute("DELETE FROM queue WHERE draw = ? AND labeller = ?", (number, name))
            statuses = {k: v.status for k, v in answers.items()}
            _count_change(db, _draw_counts(double, statuses.values()),
                          _draw_counts(double, {**statuses, name: clean.status}.values()))
        return Saved(Decision(**{**clean.content(), "removed": clean.removed, "added": clean.added},
                              draw=number, labeller=name, version=version, saved_at=at))

    def _answers(self, db: sqlite3.Connection, number: int) -> tuple[bool, dict[str, Decision], dict[str, int]]:
        """Whether draw ``number`` is labelled twice, its answers by labeller and the history id
        of each one's first save (one read; an unknown draw raises :class:`InputError`)."""
        rows = db.execute("SELECT d.double AS double_draw, x.* FROM draws d LEFT JOIN decisions x "
                          "ON x.draw = d.draw WHERE d.draw = ?", (number,)).fetchall()
        if not rows:
            raise InputError(f"draw {number!r} is not a draw of this project ({self.path})")
        answers = {r["labeller"]: _decision(r) for r in rows if r["labeller"] is not None}
        first = {r["labeller"]: int(r["first_edit"]) for r in rows if r["labeller"] is not None}
        return bool(rows[0]["double_draw"]), answers, first

    def entity_answers(self, record: str, predicted_cluster: str) -> list[tuple[Draw, Decision]]:
        """The answers that may hold ``record``'s entity, by draw number: each draw's labels-table
        answer (its first labeller's labelled or unsure decision, as :meth:`labels_frame` picks
        it) among the draws of ``predicted_cluster`` and the draws some answer of which adds
        ``record`` (ids as text). Two indexed look-ups (schema 5: ``draws_cluster``,
        ``added_records``), whatever the number of decisions."""
        rows = self._rows(
            "SELECT d.record AS drawn, d.predicted_cluster AS cluster, d.double AS double_draw, x.* "
            "FROM decisions x JOIN draws d ON d.draw = x.draw WHERE x.status IN ('labelled', 'unsure') "
            "AND x.draw IN (SELECT draw FROM draws WHERE predicted_cluster = ? "
            "UNION SELECT draw FROM added_records WHERE record = ?) ORDER BY x.draw, x.first_edit",
            (id_text(predicted_cluster, what="predicted cluster"), id_text(record)))
        out: dict[int, tuple[Draw, Decision]] = {}
        for r in rows:
            out.setdefault(int(r["draw"]), (Draw(int(r["draw"]), r["drawn"], r["cluster"], bool(r["double_draw"])),
                                            _decision(r)))
        return list(out.values())

    def decision(self, draw: int, labeller: str) -> Decision | None:
        """``labeller``'s decision for ``draw`` with its version, or None."""
        rows = self._rows("SELECT * FROM decisions WHERE draw = ? AND labeller = ?",
                          (self._number(draw), labeller_name(labeller)))
        return _decision(rows[0]) if rows else None

    def decisions(self, draw: int | None = None) -> list[Decision]:
        """Every labeller's decision for ``draw`` (all draws when None), in the order of their first save."""
        if draw is None:
            return [_decision(r) for r in self._rows("SELECT * FROM decisions ORDER BY draw, first_edit")]
        return [_decision(r) for r in self._rows("SELECT * FROM decisions WHERE draw = ? ORDER BY first_edit",
                                                 (self._number(draw),))]

    def history(self, draw: int | None = None) -> list[Edit]:
        """The saves of ``draw`` (all draws when None), oldest first."""
        sql, params = ("SELECT * FROM edits ORDER BY id", ()) if draw is None else \
            ("SELECT * FROM edits WHERE draw = ? ORDER BY id", (self._number(draw),))
        return [Edit(int(r["id"]), int(r["draw"]), r["labeller"], r["at"],
                     None if r["before"] is None else json.loads(r["before"]), json.loads(r["after"]))
                for r in self._rows(sql, params)]

    def labellers(self) -> list[str]:
        """Everyone who saved a decision or took a draw, in the order they first came."""
        return [r["name"] for r in self._rows("SELECT name FROM labellers ORDER BY first_seen, name")]

    # -- reconciliations -------------------------------------------------------------------------------
    def reconcile(self, draw: int, *, use: str, by: str, note: str = "") -> Reconciliation:
        """Record that ``use``'s answer is ``draw``'s answer, decided by ``by`` (SPEC 2.2).

        The draw must have two or more answers (labelled or unsure) and ``use`` one of them,
        labelled (an unsure answer is no decision). Nothing is changed in the answers; the
        reconciliation is appended (a later one of the same draw replaces it) with the versions
        of the draw's answers, so that an answer saved again afterwards shows it out of date.
        """
        number = self._number(draw)
        name, who = labeller_name(use), labeller_name(by)
        text = _text(note, "note", MAX_TEXT)
        self.draw(number)
        at = _now()
        with self._write() as db:
            answers = [_decision(r) for r in db.execute(
                "SELECT * FROM decisions WHERE draw = ? AND status IN (?, ?) ORDER BY first_edit",
                (number, *ANSWERED)).fetchall()]
            names = ", ".join(str(a.labeller) for a in answers) or "nobody"
            if len(answers) < 2:
                raise InputError(f"draw {number} has {len(answers)} answer{'' if len(answers) == 1 else 's'} "
                                 f"(by {names}): only a draw answered twice or more is reconciled")
            chosen = next((a for a in answers if a.labeller == name), None)
            if chosen is None:
                raise InputError(f"--use {name!r}: {name!r} did not answer draw {number}; give one of {names}")
            if chosen.status != "labelled":
                raise InputError(f"--use {name!r}: {name}'s answer to draw {number} is marked unsure; choose a "
                                 "sure answer, or have it answered again (it may be the reconciler's own answer)")
            versions = {str(a.labeller): a.version for a in answers}
            db.execute("INSERT INTO reconciliations (draw, labeller, versions, by, at, note) VALUES (?, ?, ?, ?, ?, ?)",
                       (number, name, json.dumps(versions), who, at, text))
            db.execute("INSERT OR IGNORE INTO labellers VALUES (?, ?)", (who, at))
        return Reconciliation(number, name, versions, who, at, text)

    def reconciliations(self, *, every: bool = False) -> list[Reconciliation]:
        """The reconciliation of each reconciled draw (the latest), by draw; ``every=True`` every
        one ever recorded, oldest first."""
        sql = "SELECT * FROM reconciliations ORDER BY id" if every else (
            "SELECT * FROM reconciliations WHERE id IN (SELECT MAX(id) FROM reconciliations GROUP BY draw) "
            "ORDER BY draw")
        return [Reconciliation(int(r["draw"]), r["labeller"], {str(k): int(v) for k, v in json.loads(r["versions"]).items()},
                               r["by"], r["at"], r["note"]) for r in self._rows(sql)]

    # -- the queue -----------------------------------------------------------------------------------
    def next_draw(self, labeller: str) -> int | None:
        """The draw ``labeller`` should label next, reserved for them (:data:`TAKE_SECONDS`).

        Their own reserved draw first; then the lowest draw nobody answered or holds; then a
        draw to be labelled twice (``double``) that one *other* labeller answered (blind: the
        page does not show that answer). None when nothing is left for them.
        """
        name = labeller_name(labeller)
        now = _dt.datetime.now(_dt.UTC)
        stale = (now - _dt.timedelta(seconds=TAKE_SECONDS)).isoformat(timespec="microseconds")
        with self._write() as db:
            db.execute("INSERT OR IGNORE INTO labellers VALUES (?, ?)", (name, now.isoformat(timespec="microseconds")))
            db.execute("DELETE FROM queue WHERE taken_at < ?", (stale,))
            mine = db.execute("SELECT draw FROM queue WHERE labeller = ? ORDER BY draw LIMIT 1", (name,)).fetchone()
            if mine is not None:
                return int(mine[0])
            row = db.execute(
                "SELECT draw FROM draws WHERE draw NOT IN (SELECT draw FROM decisions) "
                "AND draw NOT IN (SELECT draw FROM queue) ORDER BY draw LIMIT 1").fetchone()
            if row is None:
                row = db.execute(
                    "SELECT d.draw FROM draws d WHERE d.double = 1 "
                    "AND (SELECT COUNT(*) FROM decisions x WHERE x.draw = d.draw) = 1 "
                    "AND NOT EXISTS (SELECT 1 FROM decisions x WHERE x.draw = d.draw AND x.labeller = ?) "
                    "AND NOT EXISTS (SELECT 1 FROM queue q WHERE q.draw = d.draw) ORDER BY d.draw LIMIT 1",
                    (name,)).fetchone()
            if row is None:
                return None
            db.execute("INSERT OR REPLACE INTO queue VALUES (?, ?, ?)",
                       (int(row[0]), name, now.isoformat(timespec="microseconds")))
            return int(row[0])

    def release(self, draw: int, labeller: str) -> None:
        """Give back a draw taken from the queue without answering it."""
        with self._write() as db:
            db.execute("DELETE FROM queue WHERE draw = ? AND labeller = ?", (self._number(draw), labeller_name(labeller)))

    def progress(self) -> Progress:
        """Counts of answered, skipped and doubly labelled draws, and each labeller's answers: one
        read of the counts each save keeps up to date (schema version 4 on), never of the decisions."""
        rows = self._rows("SELECT p.draws, p.done, p.skipped, p.unsure, p.doubles, p.doubles_done, a.labeller, "
                          "a.answers FROM progress p LEFT JOIN labeller_answers a ON a.answers > 0 WHERE p.id = 1")
        first = rows[0]
        per = {str(r["labeller"]): int(r["answers"]) for r in rows if r["labeller"] is not None}
        return Progress(draws=int(first["draws"]), done=int(first["done"]), skipped=int(first["skipped"]),
                        unsure=int(first["unsure"]), doubles=int(first["doubles"]),
                        doubles_done=int(first["doubles_done"]), per_labeller=dict(sorted(per.items())))

    # -- tags (review mode) ----------------------------------------------------------------------------
    def add_tag(self, cluster: object, tag: str, *, kind: str, records: Iterable[object], labeller: str,
                allowed: Sequence[str] | None = None) -> Tag:
        """Save an error tag on a true cluster (``kind`` ``over`` or ``under``); ``allowed`` is the
        project's tag list when the tag must come from it."""
        if kind not in ("over", "under"):
            raise InputError(f"kind={kind!r}: give 'over' (wrongly merged) or 'under' (wrongly split)")
        tag = _text(tag, "tag", MAX_NAME).strip()
        if not tag:
            raise InputError("tag: give the tag's text")
        if allowed is not None and tag not in allowed:
            raise InputError(f"tag {tag!r} is not in the project's tag list ({', '.join(allowed)}); add it to "
                             "'tags:' in workbench.yml")
        ids = _ids(records, "records")
        name, at = labeller_name(labeller), _now()
        cluster_text = id_text(cluster, what="cluster")
        with self._write() as db:
            cur = db.execute("INSERT INTO tags (cluster, tag, kind, records, labeller, at) VALUES (?, ?, ?, ?, ?, ?)",
                             (cluster_text, tag, kind, json.dumps(list(ids)), name, at))
            db.execute("INSERT OR IGNORE INTO labellers VALUES (?, ?)", (name, at))
        return Tag(int(cur.lastrowid), cluster_text, tag, kind, ids, name, at)

    def tags(self, cluster: object | None = None) -> list[Tag]:
        """The error tags (of one cluster when given), oldest first."""
        sql, params = ("SELECT * FROM tags ORDER BY id", ()) if cluster is None else \
            ("SELECT * FROM tags WHERE cluster = ? ORDER BY id", (id_text(cluster, what="cluster"),))
        return [Tag(int(r["id"]), r["cluster"], r["tag"], r["kind"], tuple(json.loads(r["records"])), r["labeller"],
                    r["at"]) for r in self._rows(sql, params)]

    # -- the labels table (SPEC 2.2) -------------------------------------------------------------------
    def _typed(self, text: str | None, kind: str) -> object:
        if text is None:
            return None
        return int(text) if kind == "integer" else text

    def labels_frame(self, *, labeller: str | None = None, every: bool = False,
                     statuses: Sequence[str] = ANSWERED,
                     decided: Sequence[tuple[Decision, str]] | None = None) -> pd.DataFrame:
        """The labels table of SPEC 2.2, readable by ``erx.check_labels`` and
        ``erx.benchmark_from_labels``: ``draw``, ``record_id``, ``predicted_cluster``, ``removed``,
        ``added`` (lists of ids in the records' id kind), ``true_cluster``, ``labeller``,
        ``labelled_at``, then ``status``, ``note``, ``reason``.

        One row per draw: ``labeller``'s decisions when given, else each draw's first labeller's
        decision (the second, blind labels serve :mod:`.agreement`; a reconciliation saves over
        the first). ``every=True`` gives every (draw, labeller) decision instead (draw numbers
        then repeat: not a labels table). Only decisions whose status is in ``statuses``.

        ``decided``: the rows instead, each an answer and how it was decided (the ``answer``
        column, added last; :func:`er_expectations.labelling.decide.decide` makes them).
        """
        bad = [s for s in statuses if s not in STATUSES]
        if bad:
            raise InputError(f"statuses: {bad[0]!r} is not a status; give some of {', '.join(STATUSES)}")
        draws = {d.draw: d for d in self.draws()}
        chosen: dict[object, Decision] = {}
        for d in self.decisions() if decided is None else ():
            if d.status not in statuses:
                continue
            if labeller is not None and d.labeller != labeller_name(labeller):
                continue
            key = (d.draw, d.labeller) if every else d.draw
            chosen.setdefault(key, d)  # decisions() lists each draw's first labeller first
        how = {} if decided is None else {int(d.draw or 0): kind for d, kind in decided}
        rows = sorted(chosen.values() if decided is None else [d for d, _ in decided],
                      key=lambda d: (d.draw, d.labeller))
        ik, ck = self.id_kind, self.cluster_kind
        frame = pd.DataFrame({
            "draw": pd.Series([d.draw for d in rows], dtype="int64"),
            "record_id": pd.Series([self._typed(draws[d.draw].record, ik) for d in rows], dtype=object),
            "predicted_cluster": pd.Series([self._typed(draws[d.draw].predicted_cluster, ck) for d in rows],
                                           dtype=object),
            "removed": pd.Series([[self._typed(i, ik) for i in d.removed] for d in rows], dtype=object),
            "added": pd.Series([[self._typed(i, ik) for i in d.added] for d in rows], dtype=object),
            "true_cluster": pd.Series([d.true_cluster for d in rows], dtype=object),
            "labeller": pd.Series([d.labeller for d in rows], dtype=object),
            "labelled_at": pd.Series([d.saved_at for d in rows], dtype=object),
            "status": pd.Series([d.status for d in rows], dtype=object),
            "note": pd.Series([d.note for d in rows], dtype=object),
            "reason": pd.Series([d.reason for d in rows], dtype=object),
        })
        if decided is not None:
            frame["answer"] = pd.Series([how[int(d.draw or 0)] for d in rows], dtype=object)
        if ik == "integer":  # exact 64-bit integers (Parquet int64), never floats
            frame["record_id"] = frame["record_id"].astype("int64")
        if ck == "integer":
            frame["predicted_cluster"] = frame["predicted_cluster"].astype("int64")
        # shown to people, never read back as ids: a CSV export neutralises their formulas
        frame.attrs["display_columns"] = ["labeller", "labelled_at", "status", "note", "reason"]
        return frame

    def export(self, path: str | os.PathLike, frame: pd.DataFrame) -> Path:
        """Write ``frame`` (a labels table: :func:`er_expectations.labelling.decide.export_labels`
        makes and writes the project's) to Parquet or CSV by suffix, atomically, inside the
        project folder (the store's folder); returns the path."""
        from er_expectations.analysis.sampling import write_frame

        folder = self.path.resolve().parent
        p = Path(path)
        target = (p if p.is_absolute() else folder / p)
        resolved = target.parent.resolve() / target.name
        if not resolved.is_relative_to(folder):
            raise InputError(f"{path}: outside the project folder {folder}; the workbench writes only inside it "
                             "(use 'er-expectations label export -o FILE' to write elsewhere)")
        if resolved.is_symlink():
            raise InputError(f"{path}: is a symbolic link; give a plain file name inside the project")
        resolved.parent.mkdir(parents=True, exist_ok=True)
        return write_frame(frame, resolved)
