"""The tables of a top-up project in the labels store (schema version 3, SPEC 14.3).

A top-up project asks, for each sampled entity of a benchmark, which of the release's new
records (the *candidates* of a top-up worksheet, docs/SPEC.md 14.3) belong to it. Each entity
is one *task*: its reference id, its known records (the benchmark's rows of that reference)
and its candidates, stored when the project is made. A task has one answer, saved like a
draw's decision (:meth:`~er_expectations.labelling.store.LabelStore.save`): one transaction,
a version (a save naming a stale one writes nothing and returns :class:`TopupConflict`), and
every save appended to ``topup_edits``. An answer says ``yes`` or ``no`` for candidates
(unanswered ones are absent) and lists the records *found* by search (they belong: reason
``found by search``). A record belongs to at most one entity: a save that would say so of a
record another entity's answer claims is refused, naming the entity.
"""

from __future__ import annotations

import datetime as _dt
import json
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from er_expectations.core.errors import InputError
from er_expectations.labelling.store import MAX_IDS, LabelStore, id_text, labeller_name

__all__ = ["ANSWERS", "Candidate", "TopupAnswer", "TopupConflict", "TopupSaved", "TopupStore", "TopupTask",
           "insert_tasks"]

#: What a candidate may be answered: it belongs to the entity, or it does not.
ANSWERS = ("yes", "no")


@dataclass(frozen=True, slots=True)
class Candidate:
    """A candidate record of a task (a row of the worksheet): id, predicted cluster and why it is asked."""

    record: str
    predicted_cluster: str
    reason: str


@dataclass(frozen=True, slots=True)
class TopupTask:
    """One sampled entity: its number, reference id (text), known records and candidates."""

    task: int
    entity: str
    known: tuple[str, ...]
    candidates: tuple[Candidate, ...]


@dataclass(frozen=True, slots=True)
class TopupAnswer:
    """The answer of a task: ``belongs`` maps candidate ids to ``yes``/``no`` (unanswered ones
    absent), ``found`` lists the records added by search; who saved it, when, its version."""

    task: int
    labeller: str
    belongs: dict[str, str]
    found: tuple[str, ...]
    version: int
    saved_at: str

    def content(self) -> dict:
        """What the labeller answered, as JSON-ready data."""
        return {"belongs": dict(self.belongs), "found": list(self.found)}

    def claimed(self) -> set[str]:
        """The records this answer says belong to the entity."""
        return {r for r, a in self.belongs.items() if a == "yes"} | set(self.found)


@dataclass(frozen=True, slots=True)
class TopupSaved:
    """The answer was written; ``answer`` carries its new version."""

    answer: TopupAnswer


@dataclass(frozen=True, slots=True)
class TopupConflict:
    """Nothing was written: the stored answer (``current``) has another version than ``expected_version``."""

    current: TopupAnswer | None
    expected_version: int


def insert_tasks(db: sqlite3.Connection, tasks: Sequence[TopupTask]) -> None:
    """Write ``tasks`` into a store being made (``LabelStore.create(..., fill=...)``)."""
    db.executemany("INSERT INTO topup_tasks VALUES (?, ?, ?)",
                   [(t.task, t.entity, json.dumps(list(t.known))) for t in tasks])
    db.executemany("INSERT INTO topup_candidates VALUES (?, ?, ?, ?)",
                   [(t.task, c.record, c.predicted_cluster, c.reason) for t in tasks for c in t.candidates])


def _answer(row: sqlite3.Row) -> TopupAnswer:
    return TopupAnswer(int(row["task"]), row["labeller"], dict(json.loads(row["belongs"])),
                       tuple(json.loads(row["found"])), int(row["version"]), row["saved_at"])


class TopupStore:
    """The top-up tables of one :class:`~er_expectations.labelling.store.LabelStore`."""

    def __init__(self, store: LabelStore) -> None:
        self.store = store

    def tasks(self) -> list[TopupTask]:
        """Every task, by number, with its candidates in the worksheet's order."""
        candidates: dict[int, list[Candidate]] = {}
        for r in self.store.query("SELECT * FROM topup_candidates ORDER BY task, rowid"):
            candidates.setdefault(int(r["task"]), []).append(Candidate(r["record"], r["predicted_cluster"],
                                                                       r["reason"]))
        return [TopupTask(int(r["task"]), r["entity"], tuple(json.loads(r["known"])),
                          tuple(candidates.get(int(r["task"]), ()))) for r in
                self.store.query("SELECT * FROM topup_tasks ORDER BY task")]

    def task(self, task: int) -> TopupTask:
        """One task; an unknown number raises :class:`InputError`."""
        number = _number(task)
        rows = self.store.query("SELECT * FROM topup_tasks WHERE task = ?", (number,))
        if not rows:
            raise InputError(f"entity {task!r} is not an entity of this top-up project ({self.store.path})")
        found = [Candidate(r["record"], r["predicted_cluster"], r["reason"]) for r in self.store.query(
            "SELECT * FROM topup_candidates WHERE task = ? ORDER BY rowid", (number,))]
        return TopupTask(number, rows[0]["entity"], tuple(json.loads(rows[0]["known"])), tuple(found))

    def answer(self, task: int) -> TopupAnswer | None:
        """The task's answer, or None."""
        rows = self.store.query("SELECT * FROM topup_answers WHERE task = ?", (_number(task),))
        return _answer(rows[0]) if rows else None

    def answers(self) -> dict[int, TopupAnswer]:
        """Every answer, by task."""
        return {int(r["task"]): _answer(r) for r in self.store.query("SELECT * FROM topup_answers ORDER BY task")}

    def history(self, task: int | None = None) -> list[dict]:
        """The saves (of one task when given), oldest first: ``task``, ``labeller``, ``at``,
        ``before`` (None: the first) and ``after``."""
        sql, params = ("SELECT * FROM topup_edits ORDER BY id", ()) if task is None else \
            ("SELECT * FROM topup_edits WHERE task = ? ORDER BY id", (_number(task),))
        return [{"task": int(r["task"]), "labeller": r["labeller"], "at": r["at"],
                 "before": None if r["before"] is None else json.loads(r["before"]), "after": json.loads(r["after"])}
                for r in self.store.query(sql, params)]

    def save(self, task: int, labeller: str, *, belongs: Mapping[str, str], found: Sequence[object] = (),
             expected_version: int) -> TopupSaved | TopupConflict:
        """Save ``labeller``'s answer of ``task`` if the stored one still has ``expected_version``
        (0: none yet). Refused (:class:`InputError`, nothing written): a candidate id not of the
        task, an answer other than yes/no, a found record that is a candidate of the task (answer
        it instead), and a record another entity's answer says belongs to it."""
        info = self.task(task)
        name = labeller_name(labeller)
        if isinstance(expected_version, bool) or not isinstance(expected_version, int) or expected_version < 0:
            raise InputError(f"expected_version={expected_version!r}: give the version the page started from "
                             "(0 when new)")
        if not isinstance(belongs, Mapping):
            raise InputError("belongs: give an object {candidate record id: 'yes' or 'no'}")
        mine = {c.record for c in info.candidates}
        clean: dict[str, str] = {}
        for record, value in belongs.items():
            rid = id_text(record)
            if rid not in mine:
                raise InputError(f"record {rid!r} is not a candidate of entity {info.entity!r}; answer only the "
                                 "records the worksheet lists for it (add others through the search)")
            if value not in ANSWERS:
                raise InputError(f"record {rid!r}: answer {value!r}; give 'yes' or 'no'")
            clean[rid] = value
        if isinstance(found, (str, bytes)):
            raise InputError("found: give a list of record ids")
        extra = tuple(dict.fromkeys(id_text(r, what="found: record id") for r in found))
        if len(extra) > MAX_IDS:
            raise InputError(f"found: {len(extra):,} records; at most {MAX_IDS:,}")
        listed = [r for r in extra if r in mine]
        if listed:
            raise InputError(f"found record {listed[0]!r} is a candidate of entity {info.entity!r} already; answer "
                             "it 'yes' among the candidates instead of adding it")
        claimed = {r for r, a in clean.items() if a == "yes"} | set(extra)
        after = {"belongs": clean, "found": list(extra)}
        with self.store.transaction() as db:
            for row in db.execute("SELECT a.*, t.entity FROM topup_answers a JOIN topup_tasks t USING (task) "
                                  "WHERE a.task != ?", (info.task,)).fetchall():
                both = sorted(claimed & _answer(row).claimed())
                if both:
                    raise InputError(f"record {both[0]!r} belongs to entity {row['entity']!r} already (saved by "
                                     f"{row['labeller']}); a record belongs to one entity at most: answer it 'no' "
                                     "here, or change that entity's answer first")
            row = db.execute("SELECT * FROM topup_answers WHERE task = ?", (info.task,)).fetchone()
            current = _answer(row) if row is not None else None
            if (current.version if current else 0) != expected_version:
                return TopupConflict(current, expected_version)
            version = (current.version if current else 0) + 1
            at = _now()
            before = None if current is None else json.dumps({**current.content(), "version": current.version})
            db.execute("INSERT INTO topup_edits (task, labeller, at, before, after) VALUES (?, ?, ?, ?, ?)",
                       (info.task, name, at, before, json.dumps({**after, "version": version})))
            db.execute("INSERT OR REPLACE INTO topup_answers VALUES (?, ?, ?, ?, ?, ?)",
                       (info.task, name, json.dumps(clean), json.dumps(list(extra)), version, at))
            db.execute("INSERT OR IGNORE INTO labellers VALUES (?, ?)", (name, at))
        return TopupSaved(TopupAnswer(info.task, name, clean, extra, version, at))


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="microseconds")


def _number(task: object) -> int:
    if isinstance(task, bool) or not isinstance(task, int) or not 0 <= task < 2**62:
        raise InputError(f"entity={task!r}: give an entity number (a whole number from 1)")
    return task
