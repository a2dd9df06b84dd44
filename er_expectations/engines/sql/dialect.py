"""What differs between the SQL databases, in one place (issue 32): every rule of the SQL engine
and of a checkpoint's SQL data (``run/data/sql.py``) that depends on the SQLAlchemy dialect.

* **text values** (:func:`text_value`): a plain literal, or written by its code points (SQLite
  ``char(...)``, PostgreSQL and DuckDB ``chr(...) || ...``) when it holds a colon or a control
  character: GX reads a query asset through ``sqlalchemy.text()``, where ``:word`` is a bind
  parameter (:data:`BIND_PARAMETER`);
* **white space** (:func:`strip`): ``btrim`` on PostgreSQL, ``trim`` elsewhere, of the
  characters Python's ``str.strip`` removes (:data:`WHITESPACE`);
* **order** (:func:`python_order`): ids as Python's ``sorted`` orders them: ``COLLATE BINARY`` on
  SQLite (any column may hold text), ``COLLATE "C"`` on PostgreSQL text;
* **functions** (:func:`sqlite_ln`): ``ln`` registered on a SQLite built without its math functions;
* **types** (:func:`has_storage_classes`): SQLite keeps each value's own type (1 and '1');
* **reflection** (:func:`reflect_table`): DuckDB (duckdb-engine derives from SQLAlchemy's
  PostgreSQL dialect, whose reflection reads ``pg_catalog.pg_collation``, which DuckDB lacks)
  reads a table's columns from an empty ``SELECT *``;
* **temporary tables** (:data:`TEMP_TABLE_DIALECTS`, :func:`in_memory`, :func:`analyzes_copies`): where
  an ordinary user may create one, a database in memory (its connections share no table), and
  PostgreSQL's ``ANALYZE`` of a copied batch;
* **database files** (:func:`missing_database_file`): a SQLite URL naming a file that does not
  exist (SQLite would create an empty database);
* **GX's datasource** (:func:`gx_datasource_type`): ``sqlite`` and ``postgres`` for theirs, else ``sql``.

SQLAlchemy is imported when a rule is used, so that importing this module costs nothing.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["BIND_PARAMETER", "TEMP_TABLE_DIALECTS", "WHITESPACE", "analyzes_copies", "in_memory", "gx_datasource_type", "has_storage_classes", "missing_database_file",
           "python_order", "reflect_table", "sqlite_ln", "strip", "text_value"]

#: What ``str.strip()`` (and pandas' ``.str.strip()``) removes: every white-space character
#: (all lie below U+3001).
WHITESPACE = "".join(c for c in map(chr, range(0x3001)) if c.isspace())

#: What ``sqlalchemy.text()`` reads as a bind parameter: ``:word`` after no word character,
#: colon or backslash, and not followed by a colon (``::`` casts are not parameters).
BIND_PARAMETER = re.compile(r"(?<![:\w\\]):\w+(?!:)")


# -- text values ---------------------------------------------------------------------------
def _code_points_class() -> Any:
    """A SQL text value written with its code points (SQLite ``char(...)``, PostgreSQL
    ``chr(...) || ...``): no control character and no colon in the query text. GX reads a
    query asset through ``sqlalchemy.text()`` (more than once), where ``:word`` would be a
    bind parameter, so a separator or label holding one cannot be a plain literal."""
    from sqlalchemy.ext.compiler import compiles
    from sqlalchemy.sql.expression import ColumnElement
    from sqlalchemy.sql.visitors import InternalTraversal
    from sqlalchemy.types import String

    class CodePoints(ColumnElement):
        inherit_cache = True
        type = String()
        _traverse_internals = [("text", InternalTraversal.dp_string)]

        def __init__(self, text: str) -> None:
            self.text = text

    @compiles(CodePoints)
    def _default(element: Any, compiler: Any, **kw: Any) -> str:
        return "'" + element.text.replace("'", "''") + "'"

    @compiles(CodePoints, "sqlite")
    def _sqlite(element: Any, compiler: Any, **kw: Any) -> str:
        return f"char({', '.join(str(ord(c)) for c in element.text)})" if element.text else "''"

    @compiles(CodePoints, "postgresql")
    @compiles(CodePoints, "duckdb")
    def _postgresql(element: Any, compiler: Any, **kw: Any) -> str:
        return "(" + " || ".join(f"chr({ord(c)})" for c in element.text) + ")" if element.text else "''"

    return CodePoints


_CODE_POINTS: Any = None


def text_value(sa: Any, text: str, *, always: bool = False) -> Any:
    """``text`` as a SQL value: a plain literal, or by code points when it holds a colon or
    a control character (``always``: every time, as for :data:`WHITESPACE`)."""
    global _CODE_POINTS  # noqa: PLW0603 - one compiled element class per process
    if not always and ":" not in text and text.isprintable():
        return sa.literal(text, sa.String)
    if _CODE_POINTS is None:
        _CODE_POINTS = _code_points_class()
    return _CODE_POINTS(text)


def strip(sa: Any, dialect: str, expr: Any) -> Any:
    """``expr`` without the white space at its ends, as ``str.strip`` removes it."""
    function = sa.func.btrim if dialect == "postgresql" else sa.func.trim
    return function(expr, text_value(sa, WHITESPACE, always=True), type_=sa.String)


# -- order ---------------------------------------------------------------------------------
def python_order(sa: Any, dialect: str, expr: Any, is_text: Any) -> Any:
    """``expr`` in the order of Python's ``sorted``; ``is_text()`` says whether its column holds
    text (asked on PostgreSQL only). Other databases order by their default collation."""
    if dialect == "sqlite":  # any column may hold text there; typed as text for SQLAlchemy only (no CAST)
        return sa.collate(sa.type_coerce(expr, sa.String), "BINARY")
    if dialect == "postgresql" and is_text():
        return sa.collate(expr, "C")
    return expr


# -- functions and types -------------------------------------------------------------------
def _ln(x: float | None) -> float | None:
    """Natural logarithm for SQLite (NULL for NULL or x ≤ 0, as SQLite's own ``ln``)."""
    return None if x is None or x <= 0 else math.log(x)


def _add_ln(dbapi_connection: Any) -> None:
    """Register ``ln`` on a sqlite3 connection that does not have a working one."""
    try:
        dbapi_connection.execute("SELECT ln(2.0)").fetchone()
    except Exception:  # noqa: BLE001 - "no such function" (or any failure of it): use Python's
        dbapi_connection.create_function("ln", 1, _ln, deterministic=True)


def _on_checkout(dbapi_connection: Any, record: Any, proxy: Any) -> None:
    if not record.info.get("er_ln"):
        _add_ln(dbapi_connection)
        record.info["er_ln"] = True


def sqlite_ln(bind: Any) -> None:
    """Make ``ln`` available on every connection of a SQLite engine (or on a connection).

    SQLite has ``ln`` only when built with its math functions (3.35+, on by default in
    recent builds); elsewhere Python's ``math.log`` is registered on the raw DBAPI
    connection when it is checked out of the pool.
    """
    if bind.dialect.name != "sqlite":
        return
    import sqlalchemy as sa

    if isinstance(bind, sa.engine.Connection):
        _add_ln(bind.connection.driver_connection)
    elif not sa.event.contains(bind, "checkout", _on_checkout):
        sa.event.listen(bind, "checkout", _on_checkout)


def has_storage_classes(dialect: str) -> bool:
    """Whether a column without a type keeps each value's own type (SQLite: 1 and '1')."""
    return dialect == "sqlite"


# -- reflection and GX -----------------------------------------------------------------------
def reflect_table(sa: Any, bind: Any, name: str, schema: str | None) -> Any:
    """The table ``name`` with its columns. DuckDB (duckdb-engine) derives from SQLAlchemy's
    PostgreSQL dialect, whose reflection reads ``pg_catalog.pg_collation``, which DuckDB lacks:
    there the columns are read from an empty ``SELECT *`` (their values' kinds are checked on
    the data), and a missing table is told from the catalog."""
    if bind.dialect.name != "duckdb":
        with bind.connect() as conn:
            return sa.Table(name, sa.MetaData(), schema=schema, autoload_with=conn)
    known = sa.inspect(bind)
    if name not in [*known.get_table_names(schema=schema), *known.get_view_names(schema=schema)]:
        raise sa.exc.NoSuchTableError(name)
    probe = sa.table(name, schema=schema)
    with bind.connect() as conn:
        names = list(conn.execute(sa.select(sa.text("*")).select_from(probe).limit(0)).keys())
    return sa.table(name, *[sa.column(n) for n in names], schema=schema)


def gx_datasource_type(backend: str) -> str:
    """GX's datasource type for a database of SQLAlchemy's ``backend``: ``sqlite`` and
    ``postgres`` have theirs, every other database GX's generic ``sql``."""
    return {"sqlite": "sqlite", "postgresql": "postgres"}.get(backend, "sql")


def missing_database_file(url: Any, uri_mode: Callable[[], bool]) -> str | None:
    """The file a SQLite ``url`` (parsed) names when it does not exist, where SQLite would create
    an empty database; ``None`` for another database, an in-memory one or an existing file.
    ``uri_mode()``: whether the URL is SQLite's URI form (``?uri=true``, the path as ``file:...``)."""
    if url.get_backend_name() != "sqlite":
        return None
    database = url.database or ""
    if uri_mode():
        database = database.removeprefix("file:")  # ?uri=true: resolve_url wrote the file: form
    if database in ("", ":memory:") or database.startswith("file:") or Path(database).is_file():
        return None
    return database


# -- temporary tables ------------------------------------------------------------------------
#: dialects on which an ordinary user may create temporary tables
TEMP_TABLE_DIALECTS = frozenset({"postgresql", "sqlite", "duckdb"})


def in_memory(engine: Any) -> bool:
    """Whether ``engine``'s database lives in memory (SQLite, DuckDB): its connections share no table."""
    return engine.dialect.name in {"sqlite", "duckdb"} and engine.url.database in (None, "", ":memory:")


def analyzes_copies(dialect: str) -> bool:
    """Whether a batch copied into a temporary table is analysed for the planner (PostgreSQL:
    a new table has no statistics until autovacuum gets to it)."""
    return dialect == "postgresql"
