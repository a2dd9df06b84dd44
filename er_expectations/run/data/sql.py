"""A checkpoint's data in a database (``data.engine: sql``): checks and release batches as SQL."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from er_expectations.core.errors import InputError, SourceUnreachableError
from er_expectations.core.hints import did_you_mean, quote_list
from er_expectations.engines.registry import engine_named
from er_expectations.engines.sql.dialect import (
    BIND_PARAMETER,
    gx_datasource_type,
    has_storage_classes,
    missing_database_file,
    reflect_table,
    strip,
    text_value,
)
from er_expectations.run.data.base import BatchLayout, ReleaseSource

if TYPE_CHECKING:  # pragma: no cover
    from er_expectations.config import CheckpointConfig
    from er_expectations.config.checkpoint import EngineTable
from er_expectations.run.data.source import (
    ID_COLUMN,
    NAME_COLUMN,
    PRED_COLUMN,
    REF_COLUMN,
    ROLES,
    Source,
    kind_of_value,
    one_line,
    within,
)


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
        return gx_datasource_type(self.sa.engine.make_url(str(self.url)).get_backend_name())

    @property
    def temp_table(self) -> bool:
        """Whether GX materialises each release's batch in a temporary table (``data.connection.temp_table``)."""
        return bool(self.data.connection.temp_table)  # type: ignore[union-attr]

    @property
    def connect_timeout(self) -> float:
        """Seconds the run waits for the database's first answer (``data.connection.connect_timeout``)."""
        return float(self.data.connection.connect_timeout)  # type: ignore[union-attr]

    @property
    def written_url(self) -> str:
        """The URL as the checkpoint writes it (``${NAME}`` references not yet substituted)."""
        return str(self.data.connection.url)  # type: ignore[union-attr]

    @property
    def gx_url(self) -> str:
        """The connection string GX stores: the URL as written when it references the
        environment (GX substitutes ``${NAME}`` when it connects), else the resolved URL."""
        written = self.written_url
        return written if "${" in written else str(self.url)

    def gx_options(self) -> dict[str, Any]:
        """GX's SQL datasource: the URL as written (``${NAME}`` substituted by GX when it connects,
        so no secret is stored) and whether it copies each batch into a temporary table."""
        return {"connection_string": self.gx_url, "create_temp_table": self.temp_table}

    def gx_asset(self, datasource: Any, name: str, batch: Any) -> Any:
        """A query asset of the release's query (replaced when the query changed)."""
        try:
            asset = datasource.get_asset(name)
        except (KeyError, LookupError, ValueError):
            asset = None
        if asset is not None and getattr(asset, "query", None) != batch:
            datasource.delete_asset(name)
            asset = None
        if asset is None:
            asset = datasource.add_query_asset(name, query=batch)
        return asset

    def gx_batch_definition(self, asset: Any) -> Any:
        try:
            return asset.get_batch_definition("all")
        except (KeyError, LookupError, ValueError):
            return asset.add_batch_definition_whole_table("all")

    def resolved(self, url: str) -> str:
        """The URL the run connects to, from the written one with its variables substituted."""
        return url

    def masked(self, text: str) -> str:
        from er_expectations.history.store import scrub_url

        return scrub_url(text, self.url) if self.url else text

    def connect(self) -> None:
        from er_expectations.history.store import (
            HistoryError,
            mask_url,
            resolve_url,
            sqlite_uri_mode,
        )

        sa = self.sa
        written = self.written_url
        base = None if "${" in written else Path(self.checkpoint.path).absolute().parent
        try:
            self.url = self.resolved(resolve_url(written, base=base, where="data.connection.url"))
        except HistoryError as error:
            message, _, hint = str(error).partition("; ")
            self.add("data.connection.url", message, hint or None)
            self.issues.raise_if_any()
        url = str(self.url)
        parsed = sa.engine.make_url(url)
        database = missing_database_file(parsed, lambda: sqlite_uri_mode(parsed) is not None)
        if database is not None:
            self.add("data.connection.url", f"data.connection.url: the SQLite file {database} does not exist",
                     "check the path (a relative path in the file is resolved against the checkpoint's folder)")
            self.issues.raise_if_any()
        timeout = self.connect_timeout
        try:
            self.bind = sa.create_engine(url)
            answered = within(timeout, self._ping)
        except (ImportError, sa.exc.NoSuchModuleError, sa.exc.ArgumentError) as error:
            self.add("data.connection.url",
                     self.masked(f"data.connection.url: cannot use {mask_url(url)}: {one_line(error)}"),
                     "install the database driver (e.g. pip install 'er-expectations[sql]' for PostgreSQL)")
            self.issues.raise_if_any()
        except Exception as error:  # noqa: BLE001 - any driver error: the database cannot be reached
            line, column = self.checkpoint.location("data.connection.url")
            raise SourceUnreachableError(self.masked(
                f"{self.checkpoint.path}:{line}:{column}: cannot reach the database of data.connection.url, "
                f"{mask_url(url)}: {one_line(error)}; check that it runs and accepts the URL, then run again"
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
        # the SQL engine copies a filtered batch into a temporary table only if the checkpoint
        # allows it (imported here: SQLAlchemy); the setting is this checkpoint's, whatever an
        # earlier checkpoint of the process said for the same database
        from er_expectations.engines.sql.batch import allow_copy, never_copy

        if not self.temp_table:
            never_copy(self.url)
            return
        allow_copy(self.url)
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
                f"each release's batch is materialised: {one_line(error)}"),
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
                table = reflect_table(sa, self.bind, name, schema or None)  # DuckDB: no pg_catalog
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
                                                           f"'{config.table}': {one_line(error)}"))
                return None
            return table, [c.name for c in table.columns]
        return self.open_query(role, str(config.query).strip().rstrip(";"))

    def open_query(self, role: str, query: str, *, key: str = "query",
                   refused: tuple[str, str] = ("the database refused the query",
                                               "run the query in the database's own client to fix it")
                   ) -> tuple[Any, list[str]] | None:
        """A ``select`` as a table: its columns read from an empty result; an issue at
        ``data.<role>.<key>`` (``refused``: the message's start and the hint) when the database
        refuses it."""
        sa = self.sa
        found = BIND_PARAMETER.search(query)
        if found is not None:
            self.add(f"data.{role}.{key}", f"data.{role}.{key}: the query holds '{found.group(0)}', which GX would "
                     "read as a bind parameter (it reads a query asset through sqlalchemy.text(), quotes or not)",
                     "write no colon right before a letter: split the text value (' :' || 'x') or rename the "
                     "column in a view")
            return None
        probe = sa.select(sa.text("*")).select_from(sa.text(f"({query}) AS er_probe")).limit(0)
        try:
            with self.bind.connect() as conn:
                names = list(conn.execute(probe).keys())
        except sa.exc.StatementError as error:  # the database's refusal (DBAPIError) or SQLAlchemy's
            self.add(f"data.{role}.{key}", self.masked(f"data.{role}.{key}: {refused[0]}: {one_line(error)}"),
                     refused[1])
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

    def check_data(self) -> None:
        """See :meth:`Source.check_data`; on SQLite also one storage class per id column."""
        super().check_data()
        if has_storage_classes(self.bind.dialect.name):
            data = self.data
            pred = data.predictions
            columns = [("records", data.records.id_column), ("predictions", pred.id_column)]
            if pred.layout == "wide":
                columns += [("predictions", c) for c in pred.match_columns(self.columns("predictions") or [])]
            else:
                columns.append(("predictions", str(pred.prediction_column)))
            if data.benchmark is not None:
                columns += [("benchmark", data.benchmark.id_column), ("benchmark", data.benchmark.reference_column)]
            for role, column in dict.fromkeys(columns):
                self._one_storage_class(role, column)

    def _one_storage_class(self, role: str, column: str) -> None:
        """A SQLite column without a type keeps each value's own (1 and '1'): refuse a mix, as a
        file's mixed column is refused (they would be two clusters or two records)."""
        sa = self.sa
        col = self.handles[role].c[column]
        kinds = self._run(sa.select(sa.func.typeof(col), sa.func.min(col)).where(col.is_not(None))
                          .group_by(sa.func.typeof(col)).order_by(sa.func.typeof(col)).limit(2))
        if len(kinds) > 1:
            examples = " and ".join(f"{value!r} ({kind})" for kind, value in kinds)
            raise InputError(
                f"{self.shown(role)}: column '{column}' mixes value types (e.g. {examples}); ids that print "
                "alike, such as 1 and '1', would count as different clusters (a file with this column is "
                f"refused too). Give the column one type, e.g. a query with CAST({column} AS TEXT)")

    def value_kind(self, role: str, column: str) -> str | None:
        sa = self.sa
        col = self.handles[role].c[column]
        rows = self._run(sa.select(col).where(col.is_not(None)).limit(1))
        return kind_of_value(rows[0][0]) if rows else None

    def orphans(self) -> tuple[int, list[Any]]:
        sa = self.sa
        b, r = self.handles["benchmark"], self.handles["records"]
        bid, rid = b.c[self.data.benchmark.id_column], r.c[self.data.records.id_column]  # type: ignore[union-attr]
        # a set difference: sorted or hashed by the database, never one probe per benchmark row
        outside = sa.except_(sa.select(bid.label(ID_COLUMN)), sa.select(rid.label(ID_COLUMN))).subquery("er_outside")
        (n,), = self._run(sa.select(sa.func.count()).select_from(outside))
        examples = self._run(sa.select(outside.c[ID_COLUMN]).order_by(outside.c[ID_COLUMN]).limit(3)) if n else []
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
            return sa.select(p.c[pred.id_column].label(ID_COLUMN), p.c[release.key].label(PRED_COLUMN)).subquery(alias)
        col = p.c[str(pred.release_column)]
        value = release.value
        test = (col == text_value(sa, value) if isinstance(value, str) else col == value if isinstance(value, int)
                else sa.cast(col, sa.String) == text_value(sa, release.label))
        return (sa.select(p.c[pred.id_column].label(ID_COLUMN), p.c[str(pred.prediction_column)].label(PRED_COLUMN))
                .where(test).subquery(alias))

    def _name(self, r: Any) -> Any:
        sa = self.sa
        spec = self.data.name
        dialect = self.bind.dialect.name
        parts = [sa.func.coalesce(strip(sa, dialect, sa.cast(r.c[c], sa.String)), "") for c in spec.columns]  # type: ignore[union-attr]
        joined = parts[0]
        for part in parts[1:]:
            joined = joined + text_value(sa, spec.separator) + part  # type: ignore[union-attr]
        return sa.func.nullif(strip(sa, dialect, joined), "")

    def batch(self, layout: BatchLayout, release: ReleaseSource,
              baselines: Mapping[str, ReleaseSource | None]) -> str:
        """The release's batch as SQL text for the connection's dialect (a GX query asset)."""
        statement = self.batch_select(layout, release, baselines)
        query = str(statement.compile(dialect=self.bind.dialect, compile_kwargs={"literal_binds": True}))
        self._refuse_bind_parameters(query)
        return query

    def labelling(self, layout: BatchLayout, release: ReleaseSource) -> Any:
        """The release's batch as a :class:`~er_expectations.engines.sql.labelling.SqlLabelling`: the
        records the labels refer to are selected from it by id (SPEC 9)."""
        entry = engine_named(self.engine)  # the engine's release and labelling classes
        statement = self.batch_select(layout, release, {})
        return entry.load("labelling")(entry.load("release")(self.bind, statement,
                                                              prediction=layout.prediction_column))

    def batch_select(self, layout: BatchLayout, release: ReleaseSource,
                     baselines: Mapping[str, ReleaseSource | None]) -> Any:
        """The release's batch as an SQLAlchemy ``select`` (see :meth:`batch`)."""
        sa = self.sa
        data = self.data
        r = self.handles["records"]
        pred = self._predictions(release, "er_pred")
        rec_cols = [r.c[data.records.id_column].label(ID_COLUMN)]
        if data.name is not None:
            rec_cols.append(self._name(r).label(NAME_COLUMN))
        rec_cols += [r.c[c].label(c) for c in layout.record_columns]
        rec = sa.select(*rec_cols).subquery("er_rec")
        ids = sa.union(sa.select(rec.c[ID_COLUMN]), sa.select(pred.c[ID_COLUMN])).subquery("er_ids")
        joined = ids.outerjoin(pred, pred.c[ID_COLUMN] == ids.c[ID_COLUMN]).outerjoin(rec, rec.c[ID_COLUMN] == ids.c[ID_COLUMN])
        out = [ids.c[ID_COLUMN].label(layout.id_column), pred.c[PRED_COLUMN].label(layout.prediction_column)]
        if data.benchmark is not None:
            b = self.handles["benchmark"]
            bench = sa.select(b.c[data.benchmark.id_column].label(ID_COLUMN),
                              b.c[data.benchmark.reference_column].label(REF_COLUMN),
                              *[b.c[c].label(c) for c in layout.extra_columns]).subquery("er_bench")
            joined = joined.outerjoin(bench, bench.c[ID_COLUMN] == ids.c[ID_COLUMN])
            out.append(bench.c[REF_COLUMN].label(layout.reference_column))
        if data.name is not None:
            out.append(rec.c[NAME_COLUMN].label(layout.name_column))
        if data.benchmark is not None:
            out += [bench.c[c].label(c) for c in layout.extra_columns]
        out += [rec.c[c].label(c) for c in layout.record_columns]
        from er_expectations.analysis.baseline_columns import baseline_label_column

        for index, (column, base) in enumerate(baselines.items()):
            if base is None:  # the first release under 'previous': null, typed as the prediction when known
                typed = pred.c[PRED_COLUMN].type
                null = sa.null() if isinstance(typed, sa.types.NullType) else sa.cast(sa.null(), typed)
                out += [null.label(column),
                        sa.cast(sa.null(), sa.String).label(baseline_label_column(column))]
                continue
            other = self._predictions(base, f"er_base_{index}")
            joined = joined.outerjoin(other, other.c[ID_COLUMN] == ids.c[ID_COLUMN])
            out += [other.c[PRED_COLUMN].label(column), text_value(sa, base.label).label(baseline_label_column(column))]
        return sa.select(*out).select_from(joined)

    def _refuse_bind_parameters(self, query: str) -> None:
        """GX reads a query asset through ``sqlalchemy.text()``, where ``:word`` not preceded
        by a word character, a colon or a backslash is a bind parameter, even inside quotes:
        text values are written by code points (:func:`~er_expectations.engines.sql.dialect.text_value`), but a column or table
        name, or the text of a ``query``, holding one cannot be part of the release's query."""
        found = BIND_PARAMETER.search(query)
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
        for role in ROLES:
            config = getattr(self.data, role)
            if config is None:
                continue
            names.append((f"data.{role}", f"'{config.table}'" if config.table is not None else str(config.query)))
            names += [(f"data.{role}", f"column '{c}'") for c in self.table_columns.get(role, [])]
        return names
