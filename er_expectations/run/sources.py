"""Release batches built inside a database or Spark (checkpoint ``data.engine: sql | spark``).

With ``engine: pandas`` (the default) :class:`~.releases.ReleaseData` reads the files and
joins them in Python. With ``engine: sql`` or ``engine: spark`` the tables stay where they
are: each release's batch is a query (SQLAlchemy Core, compiled for the database's dialect)
or a Spark DataFrame with the same rows and columns as :meth:`ReleaseData.frame` gives, and
GX validates it there (``gx/metrics.py`` aggregates it in the engine). The record table never
comes into Python; only counts, a few example ids and the release labels do, and for a
labelling checkpoint (``data.labels``, SPEC 9) the rows of the records its labels refer to,
fetched by id from the release's batch (:meth:`Source.labelling`).

The batch of a release (SPEC 2.1), as for files:

* the ids of the records table and of the release's predictions, outer-joined: a record
  without a prediction is outside the release (null prediction); the benchmark is
  left-joined on the id;
* the name, built from ``data.name.columns`` as :func:`~.io.combine_name` does: each part
  cast to text and stripped of white space (:data:`WHITESPACE`, what Python's
  ``str.strip`` removes), a null part counting as empty, joined by the separator, the whole
  stripped again, and null when empty;
* the benchmark and record columns the suites name, and the baseline columns of the drift
  checks (:mod:`.baselines`).

Before anything is written the source is checked: the connection (an unreachable database
or a Spark session that cannot start raises :class:`~.errors.SourceUnreachableError`, exit
code 7, its URL masked), every table, query and column (a :class:`~.config.ConfigError` at
the key of the checkpoint file, with did-you-mean), and, counted in the engine, null and
duplicated ids, benchmark ids that are not records and id types that cannot be joined
(:class:`~.errors.InputError`).
"""

from __future__ import annotations

import abc
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from er_expectations.core.errors import InputError, SourceUnreachableError
from er_expectations.core.hints import did_you_mean, quote_list
from er_expectations.run.releases import BatchLayout, ReleaseSource, release_label

if TYPE_CHECKING:  # pragma: no cover
    from er_expectations.config import CheckpointConfig
    from er_expectations.config.checkpoint import EngineData, EngineTable

__all__ = ["WHITESPACE", "EngineReleases", "SparkSource", "SqlSource", "open_source"]

#: What ``str.strip()`` (and pandas' ``.str.strip()``) removes: every white-space character
#: (all lie below U+3001).
WHITESPACE = "".join(c for c in map(chr, range(0x3001)) if c.isspace())
_ROLES = ("records", "predictions", "benchmark")
_ID, _PRED, _NAME, _REF = "__er_id", "__er_pred", "__er_name", "__er_ref"


def _within(seconds: float, call: Callable[[], object]) -> bool:
    """Run ``call`` in a daemon thread; ``False`` if it has not returned within ``seconds``.

    Drivers differ in how (and whether) they bound a connection attempt, so the first
    contact with a database is bounded here, the same way for every driver; an exception of
    ``call`` is raised again. A thread left waiting on a silent server is a daemon: it does
    not keep the process alive once the run has reported the error.
    """
    outcome: list[BaseException | None] = []

    def target() -> None:
        try:
            call()
        except BaseException as error:  # noqa: BLE001 - handed to the caller
            outcome.append(error)
        else:
            outcome.append(None)

    worker = threading.Thread(target=target, name="er-expectations-connect", daemon=True)
    worker.start()
    worker.join(seconds)
    if not outcome:
        return False
    if outcome[0] is not None:
        raise outcome[0]
    return True


def _one_line(error: BaseException) -> str:
    text = str(getattr(error, "orig", None) or error).strip().splitlines()
    return text[0].strip() if text else type(error).__name__


def _kind_of_value(value: object) -> str | None:
    """'integer', 'number', 'text' (as :func:`~.io.id_kind` names them) for a sampled value."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, str):
        return "text"
    import decimal

    if isinstance(value, float | decimal.Decimal):
        return "number"
    return type(value).__name__


class Source(abc.ABC):
    """The tables of a checkpoint in one engine: opened (columns known) and checked.

    ``connected`` is False for ``validate`` (no environment): then nothing is opened and
    :meth:`columns` is ``None``.
    """

    engine: str

    def __init__(self, checkpoint: CheckpointConfig) -> None:
        from er_expectations.config.errors import IssueCollector

        self.checkpoint = checkpoint
        self.data: EngineData = checkpoint.data  # type: ignore[assignment]
        self.issues = IssueCollector(str(checkpoint.path))
        self.handles: dict[str, Any] = {}
        self.table_columns: dict[str, list[str]] = {}
        self.connected = False

    # -- opening --------------------------------------------------------------------------
    def open(self) -> None:
        """Connect and open every table; raises :class:`ConfigError` listing every problem."""
        self.connect()
        for role in _ROLES:
            config = getattr(self.data, role)
            if config is None:
                continue
            opened = self.open_table(role, config)
            if opened is not None:
                self.handles[role], self.table_columns[role] = opened
        if not self.issues.issues:
            self.check_columns()
        self.issues.raise_if_any()
        self.connected = True

    @abc.abstractmethod
    def connect(self) -> None:
        """Reach the database or start Spark; raises :class:`SourceUnreachableError`."""

    @abc.abstractmethod
    def open_table(self, role: str, config: EngineTable) -> tuple[Any, list[str]] | None:
        """The handle and the columns of a table, or ``None`` after adding an issue."""

    def add(self, key: str, message: str, hint: str | None = None) -> None:
        """An issue at the key of the checkpoint file (or its closest written parent)."""
        where = key
        while where and where not in self.checkpoint.locations:
            where = where.rpartition(".")[0]
        self.issues.add(self.checkpoint.location(where or "data"), message, hint)

    def columns(self, role: str) -> list[str] | None:
        """The columns of ``records``, ``predictions`` or ``benchmark`` (``None`` when not opened)."""
        return self.table_columns.get(role)

    def shown(self, role: str) -> str:
        """``data.records (table 'mentions')``: how messages name a table."""
        return f"data.{role} ({getattr(self.data, role).shown})"

    # -- columns --------------------------------------------------------------------------
    def _require(self, role: str, column: str, key: str) -> bool:
        available = self.table_columns[role]
        if column in available:
            return True
        hint = did_you_mean(column, available)
        if hint is None:
            hint = f"{getattr(self.data, role).shown} has the columns {quote_list(available[:10], conjunction='and')}" \
                + (" ..." if len(available) > 10 else "")
        self.add(key, f"{key}: column '{column}' not found in {getattr(self.data, role).shown}", hint)
        return False

    def check_columns(self) -> None:
        data = self.data
        self._require("records", data.records.id_column, "data.records.id_column")
        if data.name is not None:
            for index, column in enumerate(data.name.columns):
                if self._require("records", column, f"data.name.columns[{index}]"):
                    kind = self.value_kind("records", column)
                    if kind not in (None, "text"):
                        self.add(f"data.name.columns[{index}]",
                                 f"data.name.columns[{index}]: column '{column}' of {data.records.shown} holds "
                                 f"{kind} values; a name is built from text columns",
                                 "cast it to text in a query (records: {query: \"select ...\"})")
        pred = data.predictions
        self._require("predictions", pred.id_column, "data.predictions.id_column")
        if pred.layout == "long":
            self._require("predictions", str(pred.release_column), "data.predictions.release_column")
            self._require("predictions", str(pred.prediction_column), "data.predictions.prediction_column")
        else:
            self._check_wide()
        if data.benchmark is not None:
            self._require("benchmark", data.benchmark.id_column, "data.benchmark.id_column")
            self._require("benchmark", data.benchmark.reference_column, "data.benchmark.reference_column")
        if data.labels is not None and data.labels.block_column is not None:
            self._require("records", data.labels.block_column, "data.labels.block_column")

    def _check_wide(self) -> None:
        pred = self.data.predictions
        available = self.table_columns["predictions"]
        if isinstance(pred.columns, tuple):
            for index, column in enumerate(pred.columns):
                self._require("predictions", column, f"data.predictions.columns[{index}]")
        selected = pred.match_columns(available)
        if not selected:
            what = f"the pattern '{pred.columns}'" if isinstance(pred.columns, str) else "data.predictions"
            self.add("data.predictions.columns",
                     f"data.predictions.columns: {what} selects no release column of {pred.shown}",
                     did_you_mean(str(pred.columns or ""), available)
                     or f"{pred.shown} has the columns {quote_list(available[:10], conjunction='and')}")
            return
        releases = self.checkpoint.releases
        if isinstance(releases, tuple):
            labels = [release_label(c, pred.columns) for c in selected]
            for index, label in enumerate(releases):
                if label not in selected and label not in labels:
                    self.add(f"releases[{index}]", f"releases: '{label}' is not a release column of {pred.shown}",
                             did_you_mean(label, labels + selected) or
                             f"releases: {quote_list(labels[:8], conjunction='and')}")

    # -- the data ---------------------------------------------------------------------------
    def check_data(self) -> None:
        """Ids null or duplicated, of types that cannot be joined, benchmark ids that are not
        records; counted in the engine. Raises :class:`InputError`."""
        data = self.data
        pred = data.predictions
        ids = {"records": data.records.id_column, "predictions": pred.id_column}
        if data.benchmark is not None:
            ids["benchmark"] = data.benchmark.id_column
        for role, column in ids.items():
            group = (str(pred.release_column),) if role == "predictions" and pred.layout == "long" else ()
            n_null, n_dup, examples = self.id_counts(role, column, group)
            if n_null:
                raise InputError(f"{self.shown(role)}: column '{column}' has {n_null} null record ids; every "
                                 "record needs an id")
            if n_dup:
                per = " within a release" if group else ""
                raise InputError(
                    f"{self.shown(role)}: column '{column}' has {n_dup} duplicated record ids{per} (e.g. "
                    f"{', '.join(repr(v) for v in examples)}); each record must appear once: drop the "
                    "duplicate rows or fix the id")
        kinds = {role: self.value_kind(role, column) for role, column in ids.items()}
        base = kinds["records"]
        for role, kind in kinds.items():
            if base is not None and kind is not None and kind != base:
                raise InputError(
                    f"record ids have different types in data.records ({data.records.shown}, column "
                    f"'{ids['records']}': {base}) and data.{role} ({getattr(data, role).shown}, column "
                    f"'{ids[role]}': {kind}), so no record would match; write the ids with one type in every "
                    "table (e.g. cast them in a query)")
        if data.benchmark is not None:
            missing, examples = self.orphans()
            if missing:
                raise InputError(
                    f"{self.shown('benchmark')}: {missing} benchmark record ids are not in the records "
                    f"({self.shown('records')}) (e.g. {', '.join(repr(v) for v in examples)}); the benchmark "
                    "must label records of the table")

    @abc.abstractmethod
    def id_counts(self, role: str, column: str, group: tuple[str, ...]) -> tuple[int, int, list[Any]]:
        """(null ids, duplicated ids, up to 3 duplicated examples), counted in the engine."""

    @abc.abstractmethod
    def value_kind(self, role: str, column: str) -> str | None:
        """The kind of a column's values ('integer', 'number', 'text', ...), ``None`` if all null."""

    @abc.abstractmethod
    def orphans(self) -> tuple[int, list[Any]]:
        """(benchmark ids not in the records, up to 3 of them)."""

    @abc.abstractmethod
    def release_values(self) -> list[Any]:
        """The distinct values of the long layout's release column, sorted."""

    @abc.abstractmethod
    def batch(self, layout: BatchLayout, release: ReleaseSource,
              baselines: Mapping[str, ReleaseSource | None]) -> Any:
        """The release's batch: SQL text (engine sql) or a Spark DataFrame."""

    @abc.abstractmethod
    def labelling(self, layout: BatchLayout, release: ReleaseSource) -> Any:
        """The release's batch, whose records a labelling checkpoint fetches by id (SPEC 9):
        an :class:`~.engines.labelling_sql.SqlLabelling` or a
        :class:`~.engines.labelling_spark.SparkLabelling`."""


# -- SQL ------------------------------------------------------------------------------------------


#: What ``sqlalchemy.text()`` reads as a bind parameter: ``:word`` after no word character,
#: colon or backslash, and not followed by a colon (``::`` casts are not parameters).
_BIND_PARAMETER = re.compile(r"(?<![:\w\\]):\w+(?!:)")


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
    def _postgresql(element: Any, compiler: Any, **kw: Any) -> str:
        return "(" + " || ".join(f"chr({ord(c)})" for c in element.text) + ")" if element.text else "''"

    return CodePoints


_CODE_POINTS: Any = None


def _text_value(sa: Any, text: str, *, always: bool = False) -> Any:
    """``text`` as a SQL value: a plain literal, or by code points when it holds a colon or
    a control character (``always``: every time, as for :data:`WHITESPACE`)."""
    global _CODE_POINTS  # noqa: PLW0603 - one compiled element class per process
    if not always and ":" not in text and text.isprintable():
        return sa.literal(text, sa.String)
    if _CODE_POINTS is None:
        _CODE_POINTS = _code_points_class()
    return _CODE_POINTS(text)


def _strip(sa: Any, dialect: str, expr: Any) -> Any:
    function = sa.func.btrim if dialect == "postgresql" else sa.func.trim
    return function(expr, _text_value(sa, WHITESPACE, always=True), type_=sa.String)


class SqlSource(Source):
    """The tables in a database reached by a SQLAlchemy URL (``data.connection.url``)."""

    engine = "sql"

    def __init__(self, checkpoint: CheckpointConfig) -> None:
        super().__init__(checkpoint)
        import sqlalchemy as sa

        self.sa = sa
        self.url: str | None = None
        self.bind: Any = None

    @property
    def gx_kind(self) -> str:
        """The GX datasource type: ``sqlite`` and ``postgres`` for theirs, else ``sql``."""
        backend = self.sa.engine.make_url(str(self.url)).get_backend_name()
        return {"sqlite": "sqlite", "postgresql": "postgres"}.get(backend, "sql")

    @property
    def temp_table(self) -> bool:
        """Whether GX materialises each release's batch in a temporary table (``data.connection.temp_table``)."""
        return bool(self.data.connection.temp_table)  # type: ignore[union-attr]

    @property
    def gx_url(self) -> str:
        """The connection string GX stores: the URL as written when it references the
        environment (GX substitutes ``${NAME}`` when it connects), else the resolved URL."""
        written = str(self.data.connection.url)  # type: ignore[union-attr]
        return written if "${" in written else str(self.url)

    def masked(self, text: str) -> str:
        from er_expectations.history.store import scrub_url

        return scrub_url(text, self.url) if self.url else text

    def connect(self) -> None:
        from er_expectations.history.store import HistoryError, mask_url, resolve_url

        sa = self.sa
        written = str(self.data.connection.url)  # type: ignore[union-attr]
        base = None if "${" in written else Path(self.checkpoint.path).absolute().parent
        try:
            self.url = resolve_url(written, base=base, where="data.connection.url")
        except HistoryError as error:
            message, _, hint = str(error).partition("; ")
            self.add("data.connection.url", message, hint or None)
            self.issues.raise_if_any()
        url = str(self.url)
        parsed = sa.engine.make_url(url)
        database = parsed.database or ""
        if (parsed.get_backend_name() == "sqlite" and database not in ("", ":memory:")
                and not database.startswith("file:") and not Path(database).is_file()):
            self.add("data.connection.url", f"data.connection.url: the SQLite file {database} does not exist",
                     "check the path (a relative path in the file is resolved against the checkpoint's folder)")
            self.issues.raise_if_any()
        timeout = self.data.connection.connect_timeout  # type: ignore[union-attr]
        try:
            self.bind = sa.create_engine(url)
            answered = _within(timeout, self._ping)
        except (ImportError, sa.exc.NoSuchModuleError, sa.exc.ArgumentError) as error:
            self.add("data.connection.url",
                     self.masked(f"data.connection.url: cannot use {mask_url(url)}: {_one_line(error)}"),
                     "install the database driver (e.g. pip install 'er-expectations[sql]' for PostgreSQL)")
            self.issues.raise_if_any()
        except Exception as error:  # noqa: BLE001 - any driver error: the database cannot be reached
            line, column = self.checkpoint.location("data.connection.url")
            raise SourceUnreachableError(self.masked(
                f"{self.checkpoint.path}:{line}:{column}: cannot reach the database of data.connection.url, "
                f"{mask_url(url)}: {_one_line(error)}; check that it runs and accepts the URL, then run again"
            )) from None
        if not answered:
            line, column = self.checkpoint.location("data.connection.url")
            raise SourceUnreachableError(self.masked(
                f"{self.checkpoint.path}:{line}:{column}: the database of data.connection.url, {mask_url(url)}, "
                f"did not answer within {timeout:g} s (data.connection.connect_timeout); check that it runs "
                "and is not overloaded, or raise connect_timeout, then run again"))

        self._check_temp_table()

    def _check_temp_table(self) -> None:
        """With ``temp_table`` (the default) each batch is materialised by GX in a temporary
        table: check, before anything is written, that the database lets the role create one
        (a read-only session or a hot-standby replica does not). Nothing stays behind: the
        probe is created and dropped in a transaction that is rolled back."""
        if not self.temp_table:
            return
        sa = self.sa
        probe = sa.Table("er_temp_table_probe", sa.MetaData(), sa.Column("x", sa.Integer), prefixes=["TEMPORARY"])
        try:
            with self.bind.connect() as conn:
                probe.create(conn)
                probe.drop(conn)
                conn.rollback()
        except sa.exc.DBAPIError as error:
            self.add("data.connection.temp_table", self.masked(
                "data.connection.temp_table: the database refused to create a temporary table, in which "
                f"each release's batch is materialised: {_one_line(error)}"),
                "grant the role TEMPORARY on the database (PostgreSQL: GRANT TEMPORARY ON DATABASE <db> TO "
                "<role>), or write temp_table: false under data.connection (every check then re-runs the "
                "release's query)")
            self.issues.raise_if_any()

    def _ping(self) -> None:
        with self.bind.connect() as conn:
            conn.execute(self.sa.select(self.sa.literal(1)))

    def _run(self, query: Any) -> list[tuple]:
        with self.bind.connect() as conn:
            return [tuple(row) for row in conn.execute(query)]

    def open_table(self, role: str, config: EngineTable) -> tuple[Any, list[str]] | None:
        sa = self.sa
        if config.table is not None:
            schema, _, name = config.table.rpartition(".")
            try:
                with self.bind.connect() as conn:
                    table = sa.Table(name, sa.MetaData(), schema=schema or None, autoload_with=conn)
            except sa.exc.NoSuchTableError:
                inspector = sa.inspect(self.bind)
                known = [*inspector.get_table_names(schema=schema or None),
                         *inspector.get_view_names(schema=schema or None)]
                self.add(f"data.{role}.table", f"data.{role}.table: table '{config.table}' does not exist in the "
                         "database", did_you_mean(name, known) or
                         f"tables: {quote_list(sorted(known)[:20], conjunction='and') or '(none)'}")
                return None
            except sa.exc.DBAPIError as error:
                self.add(f"data.{role}.table", self.masked(f"data.{role}.table: cannot read table "
                                                           f"'{config.table}': {_one_line(error)}"))
                return None
            return table, [c.name for c in table.columns]
        query = str(config.query).strip().rstrip(";")
        found = _BIND_PARAMETER.search(query)
        if found is not None:
            self.add(f"data.{role}.query", f"data.{role}.query: the query holds '{found.group(0)}', which GX would "
                     "read as a bind parameter (it reads a query asset through sqlalchemy.text(), quotes or not)",
                     "write no colon right before a letter: split the text value (' :' || 'x') or rename the "
                     "column in a view")
            return None
        probe = sa.select(sa.text("*")).select_from(sa.text(f"({query}) AS er_probe")).limit(0)
        try:
            with self.bind.connect() as conn:
                names = list(conn.execute(probe).keys())
        except sa.exc.StatementError as error:  # the database's refusal (DBAPIError) or SQLAlchemy's
            self.add(f"data.{role}.query", self.masked(f"data.{role}.query: the database refused the query: "
                                                       f"{_one_line(error)}"),
                     "run the query in the database's own client to fix it")
            return None
        subquery = sa.text(query).columns(*[sa.column(n) for n in names]).subquery(f"er_{role}")
        return subquery, names

    def id_counts(self, role: str, column: str, group: tuple[str, ...]) -> tuple[int, int, list[Any]]:
        sa = self.sa
        t = self.handles[role]
        col = t.c[column]
        keys = [t.c[g] for g in group]
        (n_null,), = self._run(sa.select(sa.func.count() - sa.func.count(col)).select_from(t))
        dup = sa.select(*keys, col).where(col.is_not(None)).group_by(*keys, col).having(sa.func.count() > 1)
        (n_dup,), = self._run(sa.select(sa.func.count()).select_from(dup.subquery()))
        examples = [row[-1] for row in self._run(dup.order_by(col).limit(3))] if n_dup else []
        return int(n_null), int(n_dup), examples

    def value_kind(self, role: str, column: str) -> str | None:
        sa = self.sa
        col = self.handles[role].c[column]
        rows = self._run(sa.select(col).where(col.is_not(None)).limit(1))
        return _kind_of_value(rows[0][0]) if rows else None

    def orphans(self) -> tuple[int, list[Any]]:
        sa = self.sa
        b, r = self.handles["benchmark"], self.handles["records"]
        bid, rid = b.c[self.data.benchmark.id_column], r.c[self.data.records.id_column]  # type: ignore[union-attr]
        # a set difference: sorted or hashed by the database, never one probe per benchmark row
        outside = sa.except_(sa.select(bid.label(_ID)), sa.select(rid.label(_ID))).subquery("er_outside")
        (n,), = self._run(sa.select(sa.func.count()).select_from(outside))
        examples = self._run(sa.select(outside.c[_ID]).order_by(outside.c[_ID]).limit(3)) if n else []
        return int(n), [row[0] for row in examples]

    def release_values(self) -> list[Any]:
        sa = self.sa
        p = self.handles["predictions"]
        col = p.c[str(self.data.predictions.release_column)]
        return [row[0] for row in self._run(sa.select(col).where(col.is_not(None)).distinct().order_by(col))]

    # -- the batch ----------------------------------------------------------------------------
    def _predictions(self, release: ReleaseSource, alias: str) -> Any:
        sa = self.sa
        pred = self.data.predictions
        p = self.handles["predictions"]
        if pred.layout == "wide":
            return sa.select(p.c[pred.id_column].label(_ID), p.c[release.key].label(_PRED)).subquery(alias)
        col = p.c[str(pred.release_column)]
        value = release.value
        test = (col == _text_value(sa, value) if isinstance(value, str) else col == value if isinstance(value, int)
                else sa.cast(col, sa.String) == _text_value(sa, release.label))
        return (sa.select(p.c[pred.id_column].label(_ID), p.c[str(pred.prediction_column)].label(_PRED))
                .where(test).subquery(alias))

    def _name(self, r: Any) -> Any:
        sa = self.sa
        spec = self.data.name
        dialect = self.bind.dialect.name
        parts = [sa.func.coalesce(_strip(sa, dialect, sa.cast(r.c[c], sa.String)), "") for c in spec.columns]  # type: ignore[union-attr]
        joined = parts[0]
        for part in parts[1:]:
            joined = joined + _text_value(sa, spec.separator) + part  # type: ignore[union-attr]
        return sa.func.nullif(_strip(sa, dialect, joined), "")

    def batch(self, layout: BatchLayout, release: ReleaseSource,
              baselines: Mapping[str, ReleaseSource | None]) -> str:
        """The release's batch as SQL text for the connection's dialect (a GX query asset)."""
        statement = self.batch_select(layout, release, baselines)
        query = str(statement.compile(dialect=self.bind.dialect, compile_kwargs={"literal_binds": True}))
        self._refuse_bind_parameters(query)
        return query

    def labelling(self, layout: BatchLayout, release: ReleaseSource) -> Any:
        """The release's batch as a :class:`~.engines.labelling_sql.SqlLabelling`: the
        records the labels refer to are selected from it by id (SPEC 9)."""
        from er_expectations.engines.sql.labelling import SqlLabelling
        from er_expectations.engines.sql.release import SqlRelease

        statement = self.batch_select(layout, release, {})
        return SqlLabelling(SqlRelease(self.bind, statement, prediction=layout.prediction_column))

    def batch_select(self, layout: BatchLayout, release: ReleaseSource,
                     baselines: Mapping[str, ReleaseSource | None]) -> Any:
        """The release's batch as an SQLAlchemy ``select`` (see :meth:`batch`)."""
        sa = self.sa
        data = self.data
        r = self.handles["records"]
        pred = self._predictions(release, "er_pred")
        rec_cols = [r.c[data.records.id_column].label(_ID)]
        if data.name is not None:
            rec_cols.append(self._name(r).label(_NAME))
        rec_cols += [r.c[c].label(c) for c in layout.record_columns]
        rec = sa.select(*rec_cols).subquery("er_rec")
        ids = sa.union(sa.select(rec.c[_ID]), sa.select(pred.c[_ID])).subquery("er_ids")
        joined = ids.outerjoin(pred, pred.c[_ID] == ids.c[_ID]).outerjoin(rec, rec.c[_ID] == ids.c[_ID])
        out = [ids.c[_ID].label(layout.id_column), pred.c[_PRED].label(layout.prediction_column)]
        if data.benchmark is not None:
            b = self.handles["benchmark"]
            bench = sa.select(b.c[data.benchmark.id_column].label(_ID),
                              b.c[data.benchmark.reference_column].label(_REF),
                              *[b.c[c].label(c) for c in layout.extra_columns]).subquery("er_bench")
            joined = joined.outerjoin(bench, bench.c[_ID] == ids.c[_ID])
            out.append(bench.c[_REF].label(layout.reference_column))
        if data.name is not None:
            out.append(rec.c[_NAME].label(layout.name_column))
        if data.benchmark is not None:
            out += [bench.c[c].label(c) for c in layout.extra_columns]
        out += [rec.c[c].label(c) for c in layout.record_columns]
        from er_expectations.analysis.baseline_columns import baseline_label_column

        for index, (column, base) in enumerate(baselines.items()):
            if base is None:  # the first release under 'previous': null, typed as the prediction when known
                typed = pred.c[_PRED].type
                null = sa.null() if isinstance(typed, sa.types.NullType) else sa.cast(sa.null(), typed)
                out += [null.label(column),
                        sa.cast(sa.null(), sa.String).label(baseline_label_column(column))]
                continue
            other = self._predictions(base, f"er_base_{index}")
            joined = joined.outerjoin(other, other.c[_ID] == ids.c[_ID])
            out += [other.c[_PRED].label(column), _text_value(sa, base.label).label(baseline_label_column(column))]
        return sa.select(*out).select_from(joined)

    def _refuse_bind_parameters(self, query: str) -> None:
        """GX reads a query asset through ``sqlalchemy.text()``, where ``:word`` not preceded
        by a word character, a colon or a backslash is a bind parameter, even inside quotes:
        text values are written by code points (:func:`_text_value`), but a column or table
        name, or the text of a ``query``, holding one cannot be part of the release's query."""
        found = _BIND_PARAMETER.search(query)
        if found is None:
            return
        token = found.group(0)
        named = [f"{key} ({what})" for key, what in self._written_names() if token in what]
        where = "; ".join(named) if named else "a name of the tables"
        raise InputError(
            f"the release's query holds '{token}', from {where}, which GX would read as a bind parameter "
            "(it reads a query asset through sqlalchemy.text()); rename it in a view of the table, without "
            "a colon before a letter, and point the checkpoint at the view, or write the query without it, "
            "then run again")

    def _written_names(self) -> list[tuple[str, str]]:
        """(key, text) of every table, query and column name the release's query is built from."""
        names = []
        for role in _ROLES:
            config = getattr(self.data, role)
            if config is None:
                continue
            names.append((f"data.{role}", f"'{config.table}'" if config.table is not None else str(config.query)))
            names += [(f"data.{role}", f"column '{c}'") for c in self.table_columns.get(role, [])]
        return names


# -- Spark ----------------------------------------------------------------------------------------


def _spark_kind(dtype: Any) -> str:
    name = type(dtype).__name__
    if name in ("ByteType", "ShortType", "IntegerType", "LongType"):
        return "integer"
    if name in ("FloatType", "DoubleType", "DecimalType"):
        return "number"
    if name in ("StringType", "VarcharType", "CharType"):
        return "text"
    return dtype.simpleString()


class SparkSource(Source):
    """The tables in Spark: catalog tables, queries (``spark.sql``) or Parquet paths."""

    engine = "spark"
    gx_kind = "spark"

    def __init__(self, checkpoint: CheckpointConfig) -> None:
        super().__init__(checkpoint)
        self.spark: Any = None

    def connect(self) -> None:
        try:
            from pyspark.sql import SparkSession
        except ImportError:
            self.add("data.engine", "data.engine: engine spark needs pyspark",
                     "pip install 'er-expectations[spark]'")
            self.issues.raise_if_any()
        try:
            session = SparkSession.getActiveSession()
            if session is None:
                builder = SparkSession.builder
                settings = self.data.spark
                if settings is not None and settings.master:
                    builder = builder.master(settings.master)
                for key, value in (settings.config if settings is not None else {}).items():
                    builder = builder.config(key, value)
                session = builder.appName(f"er-expectations {self.checkpoint.name}").getOrCreate()
        except Exception as error:  # noqa: BLE001 - Java missing, master unreachable, ...
            line, column = self.checkpoint.location("data.spark" if self.data.spark else "data.engine")
            raise SourceUnreachableError(
                f"{self.checkpoint.path}:{line}:{column}: cannot start Spark: {_one_line(error)}; check "
                "data.spark.master and that Java runs (java -version), then run again") from None
        self.spark = session

    def _path(self, text: str) -> str:
        if "://" in text:
            return text
        path = Path(text).expanduser()
        return str(path if path.is_absolute() else (Path(self.checkpoint.path).absolute().parent / path).resolve())

    def open_table(self, role: str, config: EngineTable) -> tuple[Any, list[str]] | None:
        try:
            if config.table is not None:
                if not self.spark.catalog.tableExists(config.table):
                    database, _, name = config.table.rpartition(".")
                    try:
                        known = [t.name for t in self.spark.catalog.listTables(database or None)]
                    except Exception:  # noqa: BLE001 - an unknown database
                        known = []
                    self.add(f"data.{role}.table", f"data.{role}.table: table '{config.table}' is not in the Spark "
                             "catalog", did_you_mean(name, known) or
                             f"tables: {quote_list(sorted(known)[:20], conjunction='and') or '(none)'}")
                    return None
                frame = self.spark.table(config.table)
            elif config.query is not None:
                frame = self.spark.sql(config.query)
            else:
                frame = self.spark.read.parquet(self._path(str(config.path)))
            return frame, list(frame.columns)
        except Exception as error:  # noqa: BLE001 - AnalysisException, ParseException, ...
            what = {"table": f"Spark cannot read table '{config.table}'", "query": "Spark refused the query",
                    "path": f"Spark cannot read {self._path(str(config.path))}"}[config.kind]
            self.add(f"data.{role}.{config.kind}", f"data.{role}.{config.kind}: {what}: {_one_line(error)}",
                     "check the path (a relative path is resolved against the checkpoint's folder)"
                     if config.kind == "path" else None)
            return None

    def _col(self, name: str) -> Any:
        from pyspark.sql import functions as F  # noqa: N812

        return F.col("`" + name.replace("`", "``") + "`")

    def id_counts(self, role: str, column: str, group: tuple[str, ...]) -> tuple[int, int, list[Any]]:
        from pyspark.sql import functions as F  # noqa: N812

        df = self.handles[role]
        col = self._col(column)
        (n_null,) = df.agg(F.count(F.lit(1)) - F.count(col)).first()
        dup = (df.where(col.isNotNull()).groupBy(*[self._col(g) for g in group], col).count()
               .where(F.col("count") > 1))
        n_dup = dup.count()
        examples = [row[column] for row in dup.orderBy(col).limit(3).collect()] if n_dup else []
        return int(n_null), int(n_dup), examples

    def value_kind(self, role: str, column: str) -> str | None:
        return _spark_kind(self.handles[role].schema[column].dataType)

    def orphans(self) -> tuple[int, list[Any]]:
        b, r = self.handles["benchmark"], self.handles["records"]
        bid, rid = self.data.benchmark.id_column, self.data.records.id_column  # type: ignore[union-attr]
        outside = (b.select(self._col(bid).alias(_ID))
                   .join(r.select(self._col(rid).alias(_ID)), on=_ID, how="left_anti"))
        n = outside.count()
        return int(n), [row[_ID] for row in outside.orderBy(_ID).limit(3).collect()] if n else []

    def release_values(self) -> list[Any]:
        col = self._col(str(self.data.predictions.release_column))
        frame = self.handles["predictions"]
        return [row[0] for row in frame.select(col).where(col.isNotNull()).distinct().orderBy(col).collect()]

    def _predictions(self, release: ReleaseSource, name: str) -> Any:
        pred = self.data.predictions
        p = self.handles["predictions"]
        if pred.layout == "wide":
            return p.select(self._col(pred.id_column).alias(_ID), self._col(release.key).alias(name))
        return (p.where(self._col(str(pred.release_column)) == release.value)
                .select(self._col(pred.id_column).alias(_ID), self._col(str(pred.prediction_column)).alias(name)))

    def _name(self, r: Any) -> Any:
        from pyspark.sql import functions as F  # noqa: N812

        spec = self.data.name

        def strip(expr: Any) -> Any:
            return F.call_function("btrim", expr, F.lit(WHITESPACE))

        parts = [F.coalesce(strip(self._col(c).cast("string")), F.lit("")) for c in spec.columns]  # type: ignore[union-attr]
        joined = parts[0]
        for part in parts[1:]:
            joined = F.concat(joined, F.lit(spec.separator), part)  # type: ignore[union-attr]
        return F.nullif(strip(joined), F.lit(""))

    def labelling(self, layout: BatchLayout, release: ReleaseSource) -> Any:
        """The release's batch as a :class:`~.engines.labelling_spark.SparkLabelling` (SPEC 9)."""
        from er_expectations.engines.spark.labelling import SparkLabelling
        from er_expectations.engines.spark.release import SparkRelease

        return SparkLabelling(SparkRelease(self.batch(layout, release, {}), prediction=layout.prediction_column))

    def batch(self, layout: BatchLayout, release: ReleaseSource,
              baselines: Mapping[str, ReleaseSource | None]) -> Any:
        """The release's batch as a Spark DataFrame (lazy: nothing is computed here)."""
        from pyspark.sql import functions as F  # noqa: N812

        data = self.data
        r = self.handles["records"]
        rec_cols = [self._col(data.records.id_column).alias(_ID)]
        if data.name is not None:
            rec_cols.append(self._name(r).alias(_NAME))
        rec_cols += [self._col(c).alias(f"__er_r_{i}") for i, c in enumerate(layout.record_columns)]
        frame = self._predictions(release, _PRED).join(r.select(*rec_cols), on=_ID, how="full_outer")
        out = [F.col(_ID).alias(layout.id_column), F.col(_PRED).alias(layout.prediction_column)]
        if data.benchmark is not None:
            b = self.handles["benchmark"]
            bench = b.select(self._col(data.benchmark.id_column).alias(_ID),
                             self._col(data.benchmark.reference_column).alias(_REF),
                             *[self._col(c).alias(f"__er_b_{i}") for i, c in enumerate(layout.extra_columns)])
            frame = frame.join(bench, on=_ID, how="left")
            out.append(F.col(_REF).alias(str(layout.reference_column)))
        if data.name is not None:
            out.append(F.col(_NAME).alias(str(layout.name_column)))
        out += [F.col(f"__er_b_{i}").alias(c) for i, c in enumerate(layout.extra_columns)]
        out += [F.col(f"__er_r_{i}").alias(c) for i, c in enumerate(layout.record_columns)]
        from er_expectations.analysis.baseline_columns import baseline_label_column

        for index, (column, base) in enumerate(baselines.items()):
            if base is None:
                dtype = frame.schema[_PRED].dataType
                out += [F.lit(None).cast(dtype).alias(column), F.lit(None).cast("string").alias(baseline_label_column(column))]
                continue
            name = f"__er_base_{index}"
            frame = frame.join(self._predictions(base, name), on=_ID, how="left")
            out += [F.col(name).alias(column), F.lit(base.label).cast("string").alias(baseline_label_column(column))]
        return frame.select(*out)


def open_source(checkpoint: CheckpointConfig, *, connect: bool = True) -> Source:
    """The source of a checkpoint with ``data.engine: sql | spark``, opened and checked when
    ``connect`` (``run``); not opened for ``validate``."""
    source: Source = SqlSource(checkpoint) if checkpoint.data.engine == "sql" else SparkSource(checkpoint)
    if connect:
        source.open()
    return source


class EngineReleases(BatchLayout):
    """The releases of a checkpoint whose tables are in a database or Spark: the runner's
    counterpart of :class:`~.releases.ReleaseData` (same columns, batches built in the engine)."""

    def __init__(self, checkpoint: CheckpointConfig, source: Source, *,
                 extra_benchmark_columns: Sequence[str] = (), extra_record_columns: Sequence[str] = ()) -> None:
        super().__init__(checkpoint, extra_benchmark_columns=extra_benchmark_columns,
                         extra_record_columns=extra_record_columns)
        self.source = source
        self._releases: list[ReleaseSource] | None = None

    @property
    def engine(self) -> str:
        return self.source.engine

    @property
    def connected(self) -> bool:
        return self.source.connected

    def all_releases(self) -> list[ReleaseSource]:
        """Wide layout: the selected columns, in table order; long: the release column's values, sorted."""
        if self._releases is None:
            if not self.source.connected:
                raise InputError("the releases of a checkpoint on a database or Spark are listed when it runs")
            pred = self.data.predictions
            if pred.layout == "wide":
                columns = pred.match_columns(self.source.columns("predictions") or [])
                self._releases = [ReleaseSource(release_label(c, pred.columns), c) for c in columns]
            else:
                self._releases = [ReleaseSource(_label(v), _label(v), value=v) for v in self.source.release_values()]
        return self._releases

    def check_data(self) -> None:
        """See :meth:`Source.check_data`."""
        self.source.check_data()

    def batch(self, release: ReleaseSource, baselines: Mapping[str, ReleaseSource | None] | None = None) -> Any:
        """The batch of ``release`` in the engine, with the baseline columns ``baselines``
        (column -> baseline release, ``None`` for none)."""
        return self.source.batch(self, release, baselines or {})

    def labelling(self, release: ReleaseSource) -> Any:
        """The batch of ``release`` as the engine's labelling queries (see :meth:`Source.labelling`)."""
        return self.source.labelling(self, release)


def _label(value: Any) -> str:
    text = value.isoformat() if hasattr(value, "isoformat") else str(value)
    return text[:10] if hasattr(value, "hour") and text[10:] in ("T00:00:00", "") else text


def release_batches(data: EngineReleases, needs: Sequence[Any]) -> Any:
    """``batch(release)`` with the baseline columns the drift checks read (as
    :func:`~.baselines.release_frames` does for files)."""
    from er_expectations.run.baselines import baseline_releases

    baselines_of = baseline_releases(data, needs)
    return lambda release: data.batch(release, baselines_of(release))
