"""Reading the history store with the standard library: what ``er-expectations history`` needs.

The store's URLs (:func:`default_url`, :func:`resolve_url`, :func:`mask_url`), its error
(:class:`HistoryError`), the columns and order of its rows, and :class:`SqliteHistory`, which
reads a SQLite store of the current schema with :mod:`sqlite3` alone. Importing this module
imports neither SQLAlchemy nor pandas (issue 29 item 6: ``history`` took 10 s for 15 rows, most
of it imports); :class:`~er_expectations.history.store.HistoryStore` (SQLAlchemy, every
database, schema upgrades) uses the same row logic, so both give the same rows.
"""

from __future__ import annotations

import json
import math
import os
import re
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

from er_expectations.core.errors import InputError
from er_expectations.history.identity import identifying_kwargs

TYPE_CHECKING = False  # typing is not imported when the program starts (issue 29 item 6)
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "ALERT_COLUMNS",
    "FLOAT_COLUMNS",
    "HISTORY_FILE",
    "HistoryError",
    "RESULT_COLUMNS",
    "SCHEMA_HEAD",
    "SERIES_COLUMNS",
    "SqliteHistory",
    "VERSION_TABLE",
    "default_url",
    "in_release_order",
    "latest_versions",
    "mask_url",
    "naming_types",
    "resolve_url",
    "scrub_url",
    "sorted_alerts",
    "sqlite_uri_mode",
    "today_identity",
    "typed_alerts",
    "typed_results",
    "utc",
]

#: Table where Alembic keeps the schema version (not ``alembic_version``: a shared
#: database may hold another application's migrations).
VERSION_TABLE = "er_history_schema_version"
#: The newest schema version (the head migration of ``migrations/versions``; a test checks it
#: against Alembic). A SQLite store at another version is read through SQLAlchemy, which
#: upgrades an older one and refuses a newer one.
SCHEMA_HEAD = "0004"
_SQLITE_READ_TIMEOUT = 60.0  # seconds a reader may wait for a lock (a writer checkpointing)

#: File name of the embedded store inside the GX project folder (``project_dir``).
HISTORY_FILE = "er_history.sqlite"
# patterns matched through re's cache: nothing compiled when the module is imported
_ENV_REFERENCE = r"\$\{([^}]*)\}"
_ENV_NAME = r"[A-Za-z_][A-Za-z0-9_]*"


class HistoryError(InputError):
    """The history store cannot be opened, read or written (the message names it, password masked)."""


# -- URLs ---------------------------------------------------------------------------------


def mask_url(url: str) -> str:
    """``url`` with its password replaced by ``***`` (any text if it is no URL)."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        return make_url(url).render_as_string(hide_password=True)
    except (ArgumentError, ValueError, TypeError):
        return re.sub(r"(://[^:/@]*:)[^@]*@", r"\1***@", str(url))


def scrub_url(text: str, url: str) -> str:
    """``text`` without the password of ``url`` (a driver may quote the connection string)."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        password = make_url(url).password
    except (ArgumentError, ValueError, TypeError):
        password = None
    text = text.replace(url, mask_url(url))
    if password:
        from urllib.parse import quote

        for secret in {str(password), quote(str(password), safe="")}:
            text = text.replace(secret, "***")
    return text


def default_url(project_dir: str | os.PathLike) -> str:
    """The embedded store of a GX project: ``sqlite:///<project_dir>/er_history.sqlite``."""
    return f"sqlite:///{Path(project_dir).resolve() / HISTORY_FILE}"


def resolve_url(text: str, *, base: str | os.PathLike | None = None,
                environ: Mapping[str, str] | None = None, where: str = "history.url") -> str:
    """The SQLAlchemy URL written as ``text``: ``${VAR}`` replaced from the environment; a
    text without ``://`` is a SQLite file (relative to ``base``, the checkpoint's folder).

    Raises :class:`HistoryError` naming ``where`` for a variable that is not set or a text
    that is not a URL.
    """
    env = os.environ if environ is None else environ

    def substitute(match: re.Match[str]) -> str:
        name = match.group(1)
        if not re.fullmatch(_ENV_NAME, name):
            raise HistoryError(f"{where}: '${{{name}}}' is not an environment variable reference; "
                               "write ${NAME} with letters, digits and underscores")
        value = env.get(name)
        if value is None or value == "":
            raise HistoryError(f"{where}: the environment variable {name} is not set; export it with the "
                               f"database URL (e.g. {name}=postgresql+psycopg://user:password@host/db)")
        return value

    url = re.sub(_ENV_REFERENCE, substitute, text).strip()
    if not url:
        raise HistoryError(f"{where}: empty database URL")
    if "://" not in url:  # a file path: the embedded SQLite store
        path = Path(url).expanduser()
        if not path.is_absolute() and base is not None:
            path = Path(base) / path
        return f"sqlite:///{path.resolve()}"
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError) as error:
        raise HistoryError(scrub_url(f"{where}: {mask_url(url)} is not a database URL ({error}); write e.g. "
                                  "postgresql+psycopg://user@host/db or sqlite:///path/history.sqlite",
                                  url)) from None
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        uri = sqlite_uri_mode(parsed) is not None or _is_true(parsed.query.get("uri"))
        database = parsed.database.removeprefix("file:") if uri else parsed.database
        path = Path(database).expanduser()
        if not path.is_absolute() and base is not None:
            path = (Path(base) / path).resolve()
        # with uri=true SQLite reads the name as a URI only when it starts with 'file:'; without
        # it '?mode=ro' became part of a new file's name (SQLAlchemy's documented form is file:)
        resolved = f"file:{path}" if uri else str(path)
        if resolved != parsed.database:
            return parsed.set(database=resolved).render_as_string(hide_password=False)
    return url


def _is_true(value: object) -> bool:
    return str(value).strip().lower() in ("true", "1", "yes", "on")


def sqlite_uri_mode(url: Any) -> str | None:
    """The ``mode`` of a SQLite URL opened as a URI (``?mode=ro&uri=true``: ``"ro"``), else None."""
    from sqlalchemy.engine import make_url

    parsed = make_url(url) if isinstance(url, str) else url
    if parsed.get_backend_name() != "sqlite" or not _is_true(parsed.query.get("uri")):
        return None
    mode = parsed.query.get("mode")
    return str(mode) if mode else "rwc"


# -- rows -------------------------------------------------------------------------------

#: The columns of :meth:`HistoryStore.series` and :meth:`HistoryStore.results`.
SERIES_COLUMNS: tuple[str, ...] = (
    "release", "position", "version", "value", "estimate", "std_error", "ci_lower", "ci_upper", "ci_level",
    "success", "outcome", "severity", "error", "status", "gx_run_name", "gx_run_time", "recorded_at", "suite",
    "expectation_type", "metric", "column", "kwargs_key", "kwargs_json", "label", "observed_text",
    "details_json",
)
#: The columns of :meth:`HistoryStore.alerts`.
ALERT_COLUMNS: tuple[str, ...] = ("gx_run_name", "gx_run_time", "recorded_at", "position", "action", "target",
                                  "outcome", "error")
#: The columns of numbers (floats, NaN for none).
FLOAT_COLUMNS: tuple[str, ...] = ("value", "estimate", "std_error", "ci_lower", "ci_upper", "ci_level")



#: What a result row holds as read (a join of the run and the result; ``column`` is
#: ``column_name`` in the table).
RESULT_COLUMNS: tuple[str, ...] = (
    "release", "position", "version", "status", "gx_run_name", "gx_run_time", "recorded_at", "id", "suite",
    "expectation_type", "metric", "column_name", "kwargs_key", "kwargs_json", "label", "severity", "success",
    "error", "value", "estimate", "std_error", "ci_lower", "ci_upper", "ci_level", "observed_text",
    "details_json", "outcome",
)


def utc(value: datetime | None) -> datetime | None:
    """A time as UTC (a time without a zone, as SQLite keeps them, is taken as UTC)."""
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def latest_versions(rows: list[dict[str, Any]], key: tuple[str, ...]) -> list[dict[str, Any]]:
    """The row of the highest version for each ``key``."""
    best: dict[tuple[Any, ...], dict[str, Any]] = {}
    for row in rows:
        k = tuple(row[name] for name in key)
        if k not in best or row["version"] > best[k]["version"]:
            best[k] = row
    return list(best.values())


def in_release_order(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows ordered by their release's latest recorded position (a release without one
    last, by time), then by version and by the order they were written."""
    latest: dict[str, dict[str, Any]] = {}
    for row in rows:
        seen = latest.get(row["release"])
        if seen is None or row["version"] > seen["version"]:
            latest[row["release"]] = row

    def order(release: str) -> tuple[bool, int, Any]:
        row = latest[release]
        missing = row["position"] is None
        return (missing, 0 if missing else int(row["position"]), utc(row["recorded_at"]))

    rank = {release: i for i, release in enumerate(sorted(latest, key=order))}
    return sorted(rows, key=lambda r: (rank[r["release"]], r["version"], r.get("id") or 0))



def today_identity(rows: list[dict[str, Any]], *, kwargs: Mapping[str, Any] | None, all_versions: bool,
                   key: Callable[[Mapping[str, Any]], str] | None = None) -> list[dict[str, Any]]:
    """Result rows as read (:data:`RESULT_COLUMNS`) identified as today (whatever identified a
    check when it was recorded: ``kwargs_json`` rewritten, and ``kwargs_key`` recomputed with
    ``key``, :func:`~.records.kwargs_key`, or ``None`` without it), kept when their identifying
    parameters include ``kwargs``, the latest version of each release unless ``all_versions``,
    in release order. A check is its suite, its type and its identifying parameters (their JSON
    text: one text per key)."""
    known: dict[str, tuple[str, str | None, dict[str, Any]]] = {}  # a check's rows share their parameters' text
    for row in rows:
        text = row["kwargs_json"] or "{}"
        if text not in known:
            ident = identifying_kwargs(json.loads(text))
            known[text] = (json.dumps(ident, sort_keys=True, ensure_ascii=False),
                           None if key is None else key(ident), ident)
        row["kwargs_json"], row["kwargs_key"], row["_ident"] = known[text]
    if kwargs:
        wanted_kwargs = identifying_kwargs(kwargs)
        rows = [r for r in rows if all(r["_ident"].get(k) == v for k, v in wanted_kwargs.items())]
    for row in rows:
        del row["_ident"]
        row["column"] = row.pop("column_name")
    if not all_versions:
        rows = latest_versions(rows, ("release", "suite", "kwargs_json", "expectation_type"))
    return in_release_order(rows)


def naming_types(rows: list[dict[str, Any]], naming: str | None) -> list[dict[str, Any]]:
    """The rows (as read) of the expectation types of which some row has ``naming`` as its label,
    metric or type (every row when ``naming`` is ``None``). The latest version of a check and its
    older ones share their type, so these rows hold every check ``naming`` names, whole."""
    if naming is None:
        return rows
    types = {r["expectation_type"] for r in rows if naming in (r["label"], r["metric"], r["expectation_type"])}
    return [r for r in rows if r["expectation_type"] in types]


def sorted_alerts(rows: list[dict[str, Any]], run_times: Iterable[Any] | None = None) -> list[dict[str, Any]]:
    """Alert rows as read, times in UTC, only the runs whose GX run time is in ``run_times``
    (all when ``None``), oldest first and each run's targets in the checkpoint file's order."""
    for row in rows:
        row["gx_run_time"], row["recorded_at"] = utc(row["gx_run_time"]), utc(row["recorded_at"])
    if run_times is not None:
        wanted = {utc(t.to_pydatetime() if hasattr(t, "to_pydatetime") else t) for t in run_times}
        rows = [r for r in rows if r["gx_run_time"] in wanted]
    rows.sort(key=lambda r: (r["recorded_at"], r["id"]))
    return rows


def _number(value: Any) -> float:
    return math.nan if value is None else float(value)


def _whole(value: Any) -> int | None:
    return None if value is None else int(value)


def typed_results(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Result rows with the columns :data:`SERIES_COLUMNS` and fixed types, as the DataFrame of
    :meth:`HistoryStore.results` holds them: times as UTC, numbers as floats (NaN for none),
    position and version as whole numbers (``None`` for none), success as bool."""
    out = []
    for row in rows:
        typed = {name: row.get(name) for name in SERIES_COLUMNS}
        for name in ("gx_run_time", "recorded_at"):
            typed[name] = utc(typed[name])
        for name in FLOAT_COLUMNS:
            typed[name] = _number(typed[name])
        typed["position"], typed["version"] = _whole(typed["position"]), _whole(typed["version"])
        typed["success"] = bool(typed["success"])
        out.append(typed)
    return out


def typed_alerts(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Alert rows (:func:`sorted_alerts`) with the columns :data:`ALERT_COLUMNS`."""
    return [{name: row.get(name) for name in ALERT_COLUMNS} for row in rows]


# -- the SQLite store, read with sqlite3 ------------------------------------------------------


def _stored_time(value: Any) -> datetime | None:
    """A time as SQLAlchemy keeps it in SQLite (``2026-11-29 02:03:11.227062``, UTC)."""
    if value is None or isinstance(value, datetime):
        return value
    return datetime.fromisoformat(str(value))


class SqliteHistory:
    """A SQLite history store of the current schema, read with :mod:`sqlite3` (no SQLAlchemy).

    :meth:`open` returns ``None`` for anything else (a server database, a URL with options, a
    missing file, an older or newer schema, a file that is no database): those are opened with
    :class:`~er_expectations.history.store.HistoryStore`, which names the problem or upgrades
    the schema. Reading writes nothing. Use as a context manager or :meth:`close` it.
    """

    def __init__(self, connection: sqlite3.Connection, path: str, *, project: str | None = None) -> None:
        self._connection = connection
        #: The SQLite file.
        self.where = path
        #: The project whose runs are read (with those recorded without one); ``None``: every run.
        self.project = project

    @classmethod
    def open(cls, url: str, *, project: str | None = None) -> SqliteHistory | None:
        """The store at ``url`` when it is a SQLite file of schema :data:`SCHEMA_HEAD`, else ``None``."""
        if not url.startswith("sqlite:///") or "?" in url:
            return None
        path = url.removeprefix("sqlite:///")
        if not os.path.isfile(path):
            return None
        try:
            connection = sqlite3.connect(path, timeout=_SQLITE_READ_TIMEOUT, isolation_level=None)
        except sqlite3.Error:
            return None
        try:
            version = connection.execute(f"SELECT version_num FROM {VERSION_TABLE}").fetchall()
        except sqlite3.Error:
            version = None
        if version != [(SCHEMA_HEAD,)]:
            connection.close()
            return None
        return cls(connection, path, project=project)

    def close(self) -> None:
        """Close the file."""
        self._connection.close()

    def __enter__(self) -> SqliteHistory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _mine(self, table: str) -> tuple[str, tuple[str, ...]]:
        if self.project is None:
            return "", ()
        return f" AND ({table}.project IS NULL OR {table}.project = ?)", (self.project,)

    def result_rows(self, *, checkpoint: str, suite: str | None = None, column: str | None = None,
                    kwargs: Mapping[str, Any] | None = None, all_versions: bool = False,
                    naming: str | None = None) -> list[dict[str, Any]]:
        """What :meth:`HistoryStore.result_rows` gives for the same filters, read with sqlite3, but
        for ``kwargs_key`` (``None``: hashing it would load hashlib; ``kwargs_json`` identifies a
        check as well)."""
        mine, params = self._mine("r")
        where = ["r.checkpoint = ?"]
        values: list[Any] = [checkpoint]
        if naming is not None:
            where.append("x.expectation_type IN (SELECT y.expectation_type FROM er_history_results y "
                         "JOIN er_history_runs s ON y.run_id = s.id WHERE s.checkpoint = ? "
                         "AND (y.label = ? OR y.metric = ? OR y.expectation_type = ?))")
            values += [checkpoint, naming, naming, naming]
        for name, wanted in (("x.suite", suite), ("x.column_name", column)):
            if wanted is not None:
                where.append(f"{name} = ?")
                values.append(wanted)
        run_columns = ", ".join(f"r.{c}" for c in RESULT_COLUMNS[:7])
        result_columns = ", ".join(f"x.{c}" for c in RESULT_COLUMNS[7:])
        query = (f"SELECT {run_columns}, {result_columns} FROM er_history_results x "
                 f"JOIN er_history_runs r ON x.run_id = r.id WHERE {' AND '.join(where)}{mine}")
        rows = [dict(zip(RESULT_COLUMNS, found, strict=True))
                for found in self._read(query, (*values, *params))]
        for row in rows:
            row["gx_run_time"], row["recorded_at"] = _stored_time(row["gx_run_time"]), _stored_time(row["recorded_at"])
            row["success"] = bool(row["success"])
        return today_identity(rows, kwargs=kwargs, all_versions=all_versions)

    def alert_rows(self, checkpoint: str, *, run_times: Iterable[Any] | None = None) -> list[dict[str, Any]]:
        """What :meth:`HistoryStore.alert_rows` gives, read with sqlite3."""
        mine, params = self._mine("a")
        names = ("id", "checkpoint", "project", *ALERT_COLUMNS)
        query = f"SELECT {', '.join(f'a.{c}' for c in names)} FROM er_history_alerts a WHERE a.checkpoint = ?{mine}"
        rows = [dict(zip(names, found, strict=True)) for found in self._read(query, (checkpoint, *params))]
        for row in rows:
            row["gx_run_time"], row["recorded_at"] = _stored_time(row["gx_run_time"]), _stored_time(row["recorded_at"])
        return sorted_alerts(rows, run_times)

    def _read(self, query: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        try:
            return self._connection.execute(query, params).fetchall()
        except sqlite3.Error as error:
            raise HistoryError(f"history database sqlite:///{self.where}: reading the history failed: "
                               f"{str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__}"
                               ) from None
