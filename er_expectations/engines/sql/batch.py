"""A filtered SQL batch read once: copied into a temporary table, then aggregated as a table.

GX's partitioned batches (``add_batch_definition_daily`` and the other partitioners, or a
sampler) select a release from a larger table with a ``WHERE`` clause that a planner often
estimates badly (``EXTRACT(year ...) = 2021 AND ...``: one row). The release's aggregates are
several scans of the batch (cluster sizes, names, benchmark counts, contingency, name flags,
labelling universe); each scan of a filter over a table of 15 releases reads all of them.
Copying the batch once into a temporary table (``CREATE TEMPORARY TABLE ... AS SELECT``; on
PostgreSQL then ``ANALYZE``) makes every later scan a scan of the release alone
(``benchmarks/bench_sql_partitioned.py``: issue 30 item 4).

A temporary table lives on one connection. Each database engine (an SQLAlchemy ``Engine``)
has one slot: one connection of its own, holding the temporary table of at most one batch at a
time. A release whose batch is not the slot's present one copies it again (after dropping the
other), so a release stays correct whatever ran in between, and a checkpoint of many batches
holds one extra connection per database, not one per batch. At most ``MAX_SLOTS`` engines keep
a slot (a process that makes many GX contexts holds a bounded number of connections): the
least recently used slot drops its table and gives its connection back to the pool.

Only batches that a real filter selects are copied (GX writes a whole table as
``WHERE true`` or ``WHERE 1 = 1``), and only on dialects known to allow temporary tables to an
ordinary user: PostgreSQL, SQLite (on a file; an in-memory database is already in memory) and
DuckDB. Elsewhere, or when the database refuses (no ``TEMPORARY`` privilege), the batch is
queried where it is, with the same results.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections import OrderedDict
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.expression import ClauseElement, Executable

from er_expectations.engines.sql.dialect import TEMP_TABLE_DIALECTS, analyzes_copies, in_memory

__all__ = ["BATCH_PREFIX", "MaterialisedBatch", "allow_copy", "materialise", "never_copy", "release_all"]

log = logging.getLogger(__name__)

#: the name of every temporary batch table starts with this
BATCH_PREFIX = "erx_batch_"
#: how many database engines keep a connection with a batch table
MAX_SLOTS = 4


class _CreateTempAs(Executable, ClauseElement):
    """``CREATE TEMPORARY TABLE name AS <select>``, the select's parameters bound as usual."""

    inherit_cache = False

    def __init__(self, name: str, select: Any) -> None:
        self.name = name
        self.select = select


@compiles(_CreateTempAs)
def _compile_create_temp_as(element: _CreateTempAs, compiler: Any, **kw: Any) -> str:
    name = compiler.preparer.quote(element.name)
    return f"CREATE TEMPORARY TABLE {name} AS {compiler.process(element.select, **kw)}"


def _root_select(table: Any) -> Any:
    """The ``Select`` a batch selectable stands for (itself, or the element of a subquery)."""
    if isinstance(table, sa.sql.Select):
        return table
    element = getattr(table, "element", None)
    return element if isinstance(element, sa.sql.Select) else None


def _filtered(table: Any) -> bool:
    """Whether a batch selectable selects its rows with a real ``WHERE`` clause."""
    select = _root_select(table)
    if select is None or select.whereclause is None:
        return False
    where = select.whereclause
    while isinstance(where, sa.sql.elements.AsBoolean | sa.sql.elements.Grouping):
        where = where.element
    if isinstance(where, sa.sql.elements.True_):
        return False
    if isinstance(where, sa.sql.elements.TextClause) and where.text.replace(" ", "").lower() in {"1=1", "true"}:
        return False
    # a copy already (ours, or GX's own temporary table, which lives on GX's connection)
    names = [str(getattr(f, "name", "")) for f in select.get_final_froms()]
    return not any(n.startswith((BATCH_PREFIX, "gx_temp_")) for n in names)


def _engine_of(bind: Any) -> Any:
    return bind.engine if isinstance(bind, sa.engine.Connection) else bind


def _database_key(url: Any) -> tuple[str, str, str, str]:
    """One database whatever the driver or password in its URL: backend, host, port, database."""
    url = sa.engine.make_url(str(url)) if not isinstance(url, sa.engine.URL) else url
    return (url.get_backend_name(), str(url.host or ""), str(url.port or ""), str(url.database or ""))


#: databases whose batches are never copied (a checkpoint's ``temp_table: false``)
_NEVER: set[tuple[str, str, str, str]] = set()


def never_copy(url: Any) -> None:
    """Never copy the batches of the database at ``url`` into temporary tables.

    A checkpoint that writes ``data.connection.temp_table: false`` (a role without the
    ``TEMPORARY`` privilege, a read-only replica, a team's rule) says so for its database: every
    check then queries the release where it is, as the checkpoint's documentation promises.
    """
    _NEVER.add(_database_key(url))


def allow_copy(url: Any) -> None:
    """Copy the filtered batches of the database at ``url`` again (undo :func:`never_copy`).

    The setting is the checkpoint's, not the process's: a checkpoint that keeps
    ``temp_table`` (the default) calls this when it connects, so that a ``temp_table: false``
    of an earlier checkpoint in the same process (a test run, a long-lived orchestrator worker)
    does not leave its database unmaterialised.
    """
    _NEVER.discard(_database_key(url))


class _Slot:
    """One database engine's connection and the batch its temporary table holds."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.lock = threading.RLock()
        self.conn: Any = None
        self.key: str | None = None

    def hold(self, key: str, name: str, select: Any) -> Any:
        """The connection on which table ``name`` holds ``select``'s rows (copied now if needed)."""
        with self.lock:
            if self.key == key and self.conn is not None and not self.conn.closed:
                return self.conn
            self.drop()
            if self.conn is None or self.conn.closed:
                self.conn = self.engine.connect()
            try:
                self.conn.execute(_CreateTempAs(name, select))
                if analyzes_copies(self.engine.dialect.name):
                    self.conn.execute(sa.text(f"ANALYZE {self.conn.dialect.identifier_preparer.quote(name)}"))
                self.conn.commit()
            except Exception:
                self.conn.rollback()
                raise
            self.key = key
            return self.conn

    def drop(self) -> None:
        """Drop the present batch's table (the connection stays for the next)."""
        if self.key is None or self.conn is None or self.conn.closed:
            self.key = None
            return
        name = self.key.split(":", 1)[0]
        try:
            self.conn.rollback()
            self.conn.execute(sa.text(f"DROP TABLE IF EXISTS {self.conn.dialect.identifier_preparer.quote(name)}"))
            self.conn.commit()
        except sa.exc.SQLAlchemyError:  # a broken connection: give it back, its session ends
            self.conn.invalidate()
            self.conn.close()
            self.conn = None
        self.key = None


    def close(self) -> None:
        """Drop the table and give the connection back to its pool."""
        with self.lock:
            self.drop()
            if self.conn is not None and not self.conn.closed:
                self.conn.close()
            self.conn = None


_SLOTS: OrderedDict[int, _Slot] = OrderedDict()
_SLOTS_LOCK = threading.Lock()


def _slot(engine: Any) -> _Slot:
    """The engine's slot (the slot holds the engine, so its id is not reused meanwhile)."""
    with _SLOTS_LOCK:
        slot = _SLOTS.get(id(engine))
        if slot is None or slot.engine is not engine:
            slot = _SLOTS[id(engine)] = _Slot(engine)
        _SLOTS.move_to_end(id(engine))
        old = [_SLOTS.popitem(last=False)[1] for _ in range(len(_SLOTS) - MAX_SLOTS)]
    for stale in old:
        stale.close()
    return slot


def release_all() -> None:
    """Drop every batch table and give every slot's connection back (tests, long-lived hosts)."""
    with _SLOTS_LOCK:
        slots = list(_SLOTS.values())
        _SLOTS.clear()
    for slot in slots:
        slot.close()


class MaterialisedBatch:
    """A filtered batch as a temporary table: ``table`` to select from, ``connection()`` to run on."""

    def __init__(self, engine: Any, key: str, name: str, select: Any, columns: list[Any]) -> None:
        self._engine = engine
        self._key = key
        self._name = name
        self._select = select
        self.table = sa.table(name, *[sa.column(c.name, c.type) for c in columns])

    @contextmanager
    def connection(self):
        """The slot's connection with this batch's table in place; a failed query rolls back."""
        slot = _slot(self._engine)
        with slot.lock:
            conn = slot.hold(self._key, self._name, self._select)
            try:
                yield conn
            except Exception:
                conn.rollback()  # the table was committed: it stays for the next query
                raise


def materialise(bind: Any, table: Any, relation: Any) -> MaterialisedBatch | None:
    """The batch ``table`` (a GX batch selectable) copied into a temporary table, or ``None``.

    Parameters
    ----------
    bind : sqlalchemy.engine.Engine or sqlalchemy.engine.Connection
        Where the batch lives. A connection's engine is used: the copy runs on a connection of
        its own, never inside the caller's transaction.
    table : selectable
        The batch as GX (or a caller) gives it; copied only when a real ``WHERE`` selects it.
    relation : selectable
        The same batch with named columns (what the release selects from); its rows and column
        names become the temporary table's.

    Returns
    -------
    MaterialisedBatch or None
        ``None`` when the batch is a whole table (or a copy already), the dialect is not known to
        allow temporary tables, the database is in memory, its checkpoint forbids temporary tables
        (:func:`never_copy`), or the database refused the copy (then the batch is queried where it
        is).
    """
    engine = _engine_of(bind)
    if (engine.dialect.name not in TEMP_TABLE_DIALECTS or in_memory(engine) or not _filtered(table)
            or _database_key(engine.url) in _NEVER):
        return None
    select = sa.select(*relation.columns)
    compiled = select.compile(dialect=engine.dialect)
    digest = hashlib.sha256(f"{compiled}\n{sorted(compiled.params.items(), key=str)!r}".encode()).hexdigest()
    name = f"{BATCH_PREFIX}{digest[:20]}"
    batch = MaterialisedBatch(engine, f"{name}:{digest}", name, select, list(relation.columns))
    try:
        with batch.connection():
            pass
    except sa.exc.SQLAlchemyError as exc:
        log.warning("the batch could not be copied into a temporary table (%s); it is queried in place",
                    str(exc).splitlines()[0])
        return None
    return batch
