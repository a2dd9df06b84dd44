"""The history store: every release a checkpoint validates, with what each expectation observed.

One row per *release run* (checkpoint, release label, its position among the checkpoint's
releases, a ``version`` that counts reruns of the release, the GX run id, the time and the
release's status) and one row per *expectation result* (suite, expectation type, the
identifying parameters, the observed value or estimate with its standard error and
interval, success, severity). Drift checks (SPEC 10) read a statistic's series over
releases back with :meth:`HistoryStore.series`.

Where it lives: by default one SQLite file in the GX project,
``<project_dir>/er_history.sqlite`` (:func:`default_url`); any SQLAlchemy URL gives a
shared database (``history: {url: ${ER_HISTORY_URL}}`` in the checkpoint file).

Guarantees:

* a release run is written in ONE transaction (run row and all its results), so a failed,
  killed or concurrent writer leaves either the whole release run or nothing; SQLite
  writers take the database's write lock when the transaction begins (``BEGIN
  IMMEDIATE``) and wait for each other (``busy timeout``); on a server database two
  writers of the same release that pick the same ``version`` collide on a unique
  constraint and the later one retries;
* the schema is created and upgraded by the Alembic migrations shipped in the package
  (``migrations/``), under a lock; a database whose schema is newer than this version of
  er-expectations knows is refused with a clear error;
* every message names the database by its URL with the password masked (:func:`mask_url`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from er_expectations.history.frames import history_frame
from er_expectations.history.reading import (
    ALERT_COLUMNS,
    HISTORY_FILE,
    SERIES_COLUMNS,
    HistoryError,
    default_url,
    in_release_order,
    latest_versions,
    mask_url,
    naming_types,
    resolve_url,
    scrub_url,
    sorted_alerts,
    sqlite_uri_mode,
    today_identity,
    utc,
)
from er_expectations.history.records import (
    CHANGE_KIND,
    CHECK_ID_KWARG,
    NON_IDENTIFYING_KWARGS,
    AlertRecord,
    ReleaseRun,
    ResultRecord,
    identifying_kwargs,
    json_safe,
    kwargs_key,
)
from er_expectations.history.schema import ALERTS, RESULTS, RUNS, VERSION_TABLE

__all__ = [
    "ALERT_COLUMNS",
    "HISTORY_FILE",
    "AlertRecord",
    "CHANGE_KIND",
    "CHECK_ID_KWARG",
    "NON_IDENTIFYING_KWARGS",
    "HistoryError",
    "HistoryStore",
    "ReleaseRun",
    "ResultRecord",
    "SERIES_COLUMNS",
    "default_url",
    "identifying_kwargs",
    "kwargs_key",
    "mask_url",
    "scrub_url",
    "resolve_url",
]

_MIGRATIONS = Path(__file__).resolve().parent / "migrations"
_SQLITE_BUSY_TIMEOUT = 60.0  # seconds a SQLite writer waits for another one
_WRITE_ATTEMPTS = 8  # a server database: retries when two writers picked the same version


# -- the store ----------------------------------------------------------------------------


def _first_line(error: BaseException) -> str:
    inner = getattr(error, "orig", None) or error
    text = str(inner).strip().splitlines()
    return text[0] if text else type(inner).__name__


class HistoryStore:
    """An open history database (:meth:`open`); use as a context manager or :meth:`close` it.

    ``url`` is the SQLAlchemy URL (with the password); :attr:`display_url` is what messages
    show. Opening upgrades an older schema; with ``create=True`` it also creates the SQLite
    file and the schema of an empty database. Reading writes no rows.
    """

    def __init__(self, engine: Any, url: str, *, project: str | None = None) -> None:
        self._engine = engine
        self.url = url
        #: The project this store reads and writes for (a shared database keeps each project's
        #: series and control limits apart); ``None`` reads every project's rows.
        self.project = project
        self.display_url = mask_url(url)
        #: How messages name the store: the file of a SQLite store, else the masked URL.
        self.where = url.removeprefix("sqlite:///") if url.startswith("sqlite:///") else self.display_url

    # -- opening ------------------------------------------------------------------------
    @classmethod
    def open(cls, url: str, *, create: bool = True, project: str | None = None) -> HistoryStore:
        """Connect to the store at ``url``, creating or upgrading its schema (Alembic).

        ``project`` is the key of the project the store is used for: its runs are written with
        it, and only its runs (and those recorded before projects were, which have none) are
        read. ``None`` reads every project's runs and writes runs without a project.

        With ``create=False`` a SQLite file that does not exist is an error (nothing is
        created) and an empty database is refused. Raises :class:`HistoryError`.
        """
        from sqlalchemy.engine import make_url
        from sqlalchemy.exc import ArgumentError, NoSuchModuleError

        shown = mask_url(url)
        try:
            parsed = make_url(url)
        except (ArgumentError, ValueError) as error:
            raise HistoryError(scrub_url(f"history store {shown}: not a database URL ({error})", url)) from None
        backend = parsed.get_backend_name()
        if backend == "sqlite":
            mode = sqlite_uri_mode(parsed)  # ro and rw open an existing file only
            db = parsed.database.removeprefix("file:") if mode is not None and parsed.database else parsed.database
            if mode is not None and db and not parsed.database.startswith("file:"):  # a URI only with file:
                parsed = parsed.set(database=f"file:{db}")
                url = parsed.render_as_string(hide_password=False)
            if db and db != ":memory:" and not db.startswith("file:"):
                path = Path(db)
                if not path.exists():
                    if not create or mode in ("ro", "rw"):
                        raise HistoryError(
                            f"no history store at {path}: nothing was recorded yet; "
                            "run 'er-expectations run <checkpoint>' first (or check history.url)")
                    try:
                        path.parent.mkdir(parents=True, exist_ok=True)
                    except OSError as error:
                        raise HistoryError(f"history store {shown}: cannot create the folder "
                                           f"{path.parent}: {error.strerror or error}") from None
                elif path.is_dir():
                    raise HistoryError(f"history store {shown}: {path} is a folder, not a SQLite file")
        if backend == "postgresql" and parsed.drivername == "postgresql":
            parsed = parsed.set(drivername=_postgres_driver())
            url = parsed.render_as_string(hide_password=False)
        try:
            engine = _make_engine(parsed)
        except (NoSuchModuleError, ImportError) as error:
            raise HistoryError(
                f"history store {shown}: no database driver for '{parsed.drivername}' ({_first_line(error)}); "
                "install it (PostgreSQL: pip install 'er-expectations[postgres]', i.e. psycopg)") from None
        store = cls(engine, url, project=project)
        try:
            store._ensure_schema(create=create)
        except BaseException:
            engine.dispose()
            raise
        return store

    def close(self) -> None:
        """Release the database connections."""
        self._engine.dispose()

    def __enter__(self) -> HistoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"HistoryStore({self.display_url!r})"

    @contextmanager
    def _transaction(self, what: str, *, write: bool = False) -> Iterator[Any]:
        """One transaction; database errors become :class:`HistoryError` naming the store.

        ``write``: on SQLite the transaction takes the write lock when it begins (``BEGIN
        IMMEDIATE``), so that two writers queue instead of failing to upgrade a read lock;
        reads begin deferred and never wait for a writer (write-ahead log)."""
        from sqlalchemy.exc import DBAPIError, IntegrityError, SQLAlchemyError

        try:
            engine = self._engine.execution_options(er_write=True) if write else self._engine
            with engine.begin() as conn:
                yield conn
        except (HistoryError, IntegrityError):
            raise  # IntegrityError: the writer decides (another writer took the version)
        except DBAPIError as error:
            if error.connection_invalidated or _unreachable(error.orig):
                message = f"cannot reach the history database {self.display_url}"
            else:
                message = f"history database {self.display_url}: {what} failed"
            raise HistoryError(scrub_url(f"{message}: {_first_line(error)}", self.url)) from None
        except SQLAlchemyError as error:
            raise HistoryError(scrub_url(f"history database {self.display_url}: {what} failed: "
                                      f"{_first_line(error)}", self.url)) from None

    # -- schema -------------------------------------------------------------------------
    def _alembic_config(self, conn: Any) -> Any:
        from alembic.config import Config

        config = Config()
        config.set_main_option("script_location", str(_MIGRATIONS))
        config.attributes["connection"] = conn
        config.attributes["version_table"] = VERSION_TABLE
        return config

    def schema_version(self) -> str | None:
        """The schema version (Alembic revision) of the database, ``None`` when empty."""
        from alembic.runtime.migration import MigrationContext

        with self._transaction("reading the schema version") as conn:
            heads = MigrationContext.configure(conn, opts={"version_table": VERSION_TABLE}).get_current_heads()
        return heads[0] if heads else None

    @staticmethod
    def code_schema_version() -> str:
        """The newest schema version this er-expectations knows (the head migration)."""
        from alembic.config import Config
        from alembic.script import ScriptDirectory

        config = Config()
        config.set_main_option("script_location", str(_MIGRATIONS))
        return str(ScriptDirectory.from_config(config).get_current_head())

    def _ensure_schema(self, *, create: bool) -> None:
        from alembic import command
        from alembic.runtime.migration import MigrationContext
        from alembic.script import ScriptDirectory
        from alembic.util.exc import CommandError

        with self._transaction("checking the schema", write=True) as conn:
            if conn.dialect.name == "postgresql":  # one migrating process at a time
                from sqlalchemy import text

                conn.execute(text("SELECT pg_advisory_xact_lock(8134127701)"))
            config = self._alembic_config(conn)
            script = ScriptDirectory.from_config(config)
            heads = tuple(MigrationContext.configure(conn, opts={"version_table": VERSION_TABLE})
                          .get_current_heads())
            code_head = script.get_current_head()
            if heads == (code_head,):
                return
            for head in heads:
                try:
                    script.get_revision(head)
                except CommandError:
                    raise HistoryError(
                        f"the history database {self.display_url} has schema version '{head}', newer than "
                        f"this er-expectations knows (up to '{code_head}'); upgrade er-expectations "
                        "(pip install -U er-expectations) before writing or reading it") from None
            if not heads and not create:
                raise HistoryError(f"the history database {self.display_url} holds no history yet; "
                                   "run 'er-expectations run <checkpoint>' first (or check history.url)")
            command.upgrade(config, "head")

    # -- writing ------------------------------------------------------------------------
    def record(self, run: ReleaseRun) -> int:
        """Write one release run and all its results in ONE transaction; returns its version.

        The version is 1 + the highest version of the same checkpoint and release (a rerun
        keeps the older rows). Raises :class:`HistoryError`; nothing is written then.
        """
        from sqlalchemy import func, insert, select
        from sqlalchemy.exc import IntegrityError

        from er_expectations.core.version import __version__

        rows = [r.row() for r in run.results]
        for attempt in range(_WRITE_ATTEMPTS):
            try:
                with self._transaction("writing the release run", write=True) as conn:
                    latest = conn.execute(
                        select(func.max(RUNS.c.version)).where(
                            RUNS.c.checkpoint == run.checkpoint, RUNS.c.release == run.release)
                    ).scalar()
                    version = int(latest or 0) + 1
                    run_id = conn.execute(insert(RUNS).values(
                        checkpoint=run.checkpoint, release=run.release, position=run.position,
                        version=version, status=run.status, success=run.success,
                        gx_run_name=run.gx_run_name, gx_run_time=utc(run.gx_run_time),
                        recorded_at=datetime.now(UTC), tool_version=__version__,
                        project=self.project,
                        provenance_json=(json.dumps(json_safe(dict(run.provenance)), sort_keys=True,
                                                    ensure_ascii=False) if run.provenance else None),
                    )).inserted_primary_key[0]
                    if rows:
                        conn.execute(insert(RESULTS), [{**row, "run_id": run_id} for row in rows])
                return version
            except IntegrityError as error:
                if attempt + 1 < _WRITE_ATTEMPTS:
                    continue  # another writer took this version of the release: count again
                raise HistoryError(scrub_url(f"history database {self.display_url}: writing the release run "
                                          f"failed: {_first_line(error)}", self.url)) from None
        raise AssertionError("unreachable")  # pragma: no cover

    def record_alerts(self, *, checkpoint: str, run_name: str | None, run_time: datetime | None,
                      alerts: Sequence[AlertRecord]) -> int:
        """Write what became of each alert of one checkpoint run (one transaction); returns the
        number of rows. ``run_time`` is the run's GX run time, the one its release runs carry.
        Error texts are stored without local absolute paths (issue 18, item 12); the caller
        masks secrets. Raises :class:`HistoryError`; nothing is written then."""
        from sqlalchemy import insert

        from er_expectations.core.text import without_local_paths

        now = datetime.now(UTC)
        rows = [{"checkpoint": checkpoint, "project": self.project, "gx_run_name": run_name,
                 "gx_run_time": utc(run_time), "recorded_at": now, "position": index,
                 "action": a.action, "target": without_local_paths(a.target), "outcome": a.outcome,
                 "error": None if a.error is None else without_local_paths(a.error)}
                for index, a in enumerate(alerts)]
        if rows:
            with self._transaction("writing the alert deliveries", write=True) as conn:
                conn.execute(insert(ALERTS), rows)
        return len(rows)

    def alerts(self, checkpoint: str, *, run_times: Sequence[Any] | None = None) -> Any:
        """The alert deliveries recorded for ``checkpoint`` (every run, or the runs whose GX run
        time is in ``run_times``), oldest run first, each run's targets in the checkpoint
        file's order: a DataFrame with the columns :data:`ALERT_COLUMNS`."""
        return history_frame(self.alert_rows(checkpoint, run_times=run_times), ALERT_COLUMNS)

    def alert_rows(self, checkpoint: str, *, run_times: Sequence[Any] | None = None) -> list[dict[str, Any]]:
        """The rows of :meth:`alerts` as dicts (times in UTC), in the same order."""
        from sqlalchemy import select

        mine = () if self.project is None else (ALERTS.c.project.is_(None) | (ALERTS.c.project == self.project),)
        query = select(ALERTS).where(ALERTS.c.checkpoint == checkpoint, *mine)
        with self._transaction("reading the alert deliveries") as conn:
            rows = [dict(r) for r in conn.execute(query).mappings()]
        return sorted_alerts(rows, run_times)

    # -- reading ------------------------------------------------------------------------
    def checkpoints(self) -> list[str]:
        """The checkpoints with recorded runs."""
        from sqlalchemy import select

        with self._transaction("reading the checkpoints") as conn:
            return sorted(conn.execute(select(RUNS.c.checkpoint).distinct()).scalars())

    def _mine(self) -> tuple[Any, ...]:
        """The condition on the runs this store's project may read (none without a project)."""
        if self.project is None:
            return ()
        return (RUNS.c.project.is_(None) | (RUNS.c.project == self.project),)

    def runs(self, checkpoint: str, *, all_versions: bool = False) -> Any:
        """The release runs of a checkpoint in release order (latest version of each by default)."""
        from sqlalchemy import select

        with self._transaction("reading the release runs") as conn:
            rows = [dict(r) for r in conn.execute(
                select(RUNS).where(RUNS.c.checkpoint == checkpoint, *self._mine())).mappings()]
        if not all_versions:
            rows = latest_versions(rows, ("release",))
        return history_frame(in_release_order(rows), [c.name for c in RUNS.columns])

    def _result_rows(self, *, checkpoint: str, expectation_type: str | None, metric: str | None,
                     column: str | None, suite: str | None, kwargs: Mapping[str, Any] | None,
                     all_versions: bool, naming: str | None = None) -> list[dict[str, Any]]:
        from sqlalchemy import select

        query = (select(RUNS.c.release, RUNS.c.position, RUNS.c.version, RUNS.c.status,
                        RUNS.c.gx_run_name, RUNS.c.gx_run_time, RUNS.c.recorded_at,
                        *[c for c in RESULTS.columns if c.name != "run_id"])
                 .select_from(RESULTS.join(RUNS, RESULTS.c.run_id == RUNS.c.id))
                 .where(RUNS.c.checkpoint == checkpoint, *self._mine()))
        for column_obj, wanted in ((RESULTS.c.expectation_type, expectation_type), (RESULTS.c.metric, metric),
                                   (RESULTS.c.column_name, column), (RESULTS.c.suite, suite)):
            if wanted is not None:
                query = query.where(column_obj == wanted)
        with self._transaction("reading the history") as conn:
            rows = [dict(r) for r in conn.execute(query).mappings()]
        return today_identity(naming_types(rows, naming), kwargs=kwargs, all_versions=all_versions, key=kwargs_key)

    def result_rows(self, *, checkpoint: str, suite: str | None = None, column: str | None = None,
                    kwargs: Mapping[str, Any] | None = None, all_versions: bool = False,
                    naming: str | None = None) -> list[dict[str, Any]]:
        """The rows of :meth:`results` as dicts, as read (before the DataFrame's types), in the
        same order; what ``er-expectations history`` reads (as :class:`SqliteHistory` does).
        ``naming``: only the expectation types of which a row has it as label, metric or type
        (:func:`~.reading.naming_types`: every check it names, with all its rows)."""
        return self._result_rows(checkpoint=checkpoint, expectation_type=None, metric=None, column=column,
                                 suite=suite, kwargs=kwargs, all_versions=all_versions, naming=naming)

    def results(self, *, checkpoint: str, expectation_type: str | None = None, metric: str | None = None,
                column: str | None = None, suite: str | None = None,
                kwargs: Mapping[str, Any] | None = None, all_versions: bool = False) -> Any:
        """Every recorded result matching the filters, one row per release run and expectation.

        ``kwargs`` keeps the expectations whose identifying parameters include these
        values (e.g. ``{"q": 2}``). Latest version of each release by default. Same
        columns as :meth:`series`.
        """
        rows = self._result_rows(checkpoint=checkpoint, expectation_type=expectation_type, metric=metric,
                                 column=column, suite=suite, kwargs=kwargs, all_versions=all_versions)
        return history_frame(rows, SERIES_COLUMNS)

    def series(self, *, checkpoint: str, expectation_type: str | None = None, metric: str | None = None,
               column: str | None = None, suite: str | None = None, kwargs: Mapping[str, Any] | None = None,
               last: int | None = None, before_release: str | None = None,
               before_position: int | None = None, all_versions: bool = False) -> Any:
        """ONE expectation's values over the releases of a checkpoint, in release order.

        A :class:`pandas.DataFrame` with one row per release (the latest run of each;
        every run with ``all_versions=True``) and the columns :data:`SERIES_COLUMNS`:
        ``release``, ``position``, ``version``, ``value``, ``estimate``, ``std_error``,
        ``ci_lower``, ``ci_upper``, ``ci_level``, ``success``, ``outcome`` (passed, failed,
        skipped or error: SPEC 13), ``severity``, ``error``,
        ``status`` (of the release run), ``gx_run_name``, ``gx_run_time``, ``recorded_at``
        (UTC), ``suite``, ``expectation_type``, ``metric``, ``column``, ``kwargs_key``,
        ``kwargs_json``, ``label``, ``observed_text``, ``details_json`` (the result's scalar
        details: counts, design, note). ``value`` is NaN for a run where the expectation
        raised (``error`` says why).

        ``before_release`` keeps the releases before that one (by its recorded position,
        or ``before_position`` when it is not recorded yet, e.g. while it is validated);
        the release itself is never included. ``last`` keeps the last n of them.
        Raises :class:`HistoryError` when the filters match several expectations (add
        ``suite``, ``column`` or ``kwargs``) or name a release that is not recorded.
        """
        if last is not None and (isinstance(last, bool) or not isinstance(last, int) or last < 1):
            raise HistoryError(f"last: expected a whole number >= 1, got {last!r}")
        rows = self._result_rows(checkpoint=checkpoint, expectation_type=expectation_type, metric=metric,
                                 column=column, suite=suite, kwargs=kwargs, all_versions=all_versions)
        keys = {(r["suite"], r["expectation_type"], r["kwargs_key"]): r["kwargs_json"] for r in rows}
        if len(keys) > 1:
            choices = "; ".join(f"suite '{s}', {kind} {text}" for (s, kind, _), text in keys.items())
            raise HistoryError(
                f"checkpoint '{checkpoint}': the filters match {len(keys)} expectations ({choices}); "
                "narrow them with suite, column or kwargs")
        if before_release is not None or before_position is not None:
            rows = self._before(rows, checkpoint, before_release, before_position)
        if last is not None:
            keep = set(list(dict.fromkeys(r["release"] for r in rows))[-last:])
            rows = [r for r in rows if r["release"] in keep]
        return history_frame(rows, SERIES_COLUMNS)

    def _before(self, rows: list[dict[str, Any]], checkpoint: str, release: str | None,
                position: int | None) -> list[dict[str, Any]]:
        if position is None:
            mine = [r for r in rows if r["release"] == release]
            if mine:  # the latest run of the release, as the series has it
                position = max(mine, key=lambda r: r["version"])["position"]
            else:
                runs = self.runs(checkpoint)
                known = runs[runs["release"] == release]
                if known.empty:
                    raise HistoryError(
                        f"before_release: release '{release}' of checkpoint '{checkpoint}' is not in the "
                        f"history {self.display_url}; give before_position, or record it first")
                position = known["position"].iloc[0]
            if _missing(position):  # recorded without a position: by time
                order = list(dict.fromkeys(r["release"] for r in rows))
                earlier = set(order[: order.index(release)]) if release in order else set()
                return [r for r in rows if r["release"] in earlier]
        limit = int(position)
        return [r for r in rows if not _missing(r["position"]) and r["position"] < limit
                and r["release"] != release]


def _missing(value: Any) -> bool:
    """``None``, NaN or ``pandas.NA``."""
    if value is None:
        return True
    return bool(pd.isna(value))


# -- engines ------------------------------------------------------------------------------


def _postgres_driver() -> str:
    """``postgresql+psycopg`` (v3) unless psycopg2 is installed (SQLAlchemy's default)."""
    import importlib.util

    if importlib.util.find_spec("psycopg2") is None and importlib.util.find_spec("psycopg") is not None:
        return "postgresql+psycopg"
    return "postgresql"


def _unreachable(error: BaseException | None) -> bool:
    """Whether a driver error means the database cannot be reached (or the file opened)."""
    import sqlite3

    if isinstance(error, sqlite3.OperationalError):
        return "unable to open" in str(error)
    return isinstance(error, _connect_errors())


def _connect_errors() -> tuple[type[BaseException], ...]:
    """Server drivers' exceptions that mean "the server cannot be reached"."""
    found: list[type[BaseException]] = []
    try:
        import psycopg

        found.append(psycopg.OperationalError)
    except ImportError:  # pragma: no cover - optional driver
        pass
    try:
        import psycopg2

        found.append(psycopg2.OperationalError)
    except ImportError:
        pass
    return tuple(found)


def _make_engine(url: Any) -> Any:
    """An engine for ``url``; SQLite writers lock at BEGIN and wait for each other."""
    from sqlalchemy import create_engine, event

    if url.get_backend_name() == "sqlite":
        engine = create_engine(url, connect_args={"timeout": _SQLITE_BUSY_TIMEOUT})

        @event.listens_for(engine, "connect")
        def _sqlite_connect(dbapi_connection: Any, _record: Any) -> None:
            # let SQLAlchemy's "begin" emit BEGIN itself (pysqlite would defer it), with
            # foreign keys enforced
            dbapi_connection.isolation_level = None
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA foreign_keys = ON")
            # write-ahead log, synced at every commit: one fsync per release run instead of
            # the rollback journal's three, readers never wait for a writer, and a killed
            # writer's frames are discarded on the next open
            cursor.execute("PRAGMA journal_mode = WAL")
            cursor.execute("PRAGMA synchronous = FULL")
            cursor.close()

        @event.listens_for(engine, "begin")
        def _sqlite_begin(conn: Any) -> None:
            conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get("er_write") else "BEGIN")

        return engine
    connect_args: dict[str, Any] = {}
    if url.get_backend_name() == "postgresql":
        connect_args["connect_timeout"] = 10
    return create_engine(url, pool_pre_ping=True, connect_args=connect_args)
