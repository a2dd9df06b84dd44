"""The ``data:`` section of a checkpoint file: record, prediction, benchmark and labels tables,
as files or in a database or Spark (``data.engine``)."""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, NamedTuple

from pydantic import (
    AfterValidator,
    Discriminator,
    Field,
    Tag,
    ValidationInfo,
    field_validator,
    model_validator,
)

from er_expectations.config.errors import quote_list
from er_expectations.config.history import database_url
from er_expectations.config.models import (
    ConfigModel,
    Text,
    name_list,
    problem,
)
from er_expectations.engines.registry import ENGINES, CheckpointKeys, engines_with

#: File suffix -> table format.
TABLE_FORMATS: dict[str, str] = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv"}


class CheckpointContext:
    """What the validators of one checkpoint file share: the file, its folder, the
    positions of its values and the release labels."""

    def __init__(self, path: Path, locations: dict[str, tuple[int, int]]) -> None:
        self.path = path
        self.base = path.absolute().parent
        self.locations = locations
        self.file_labels: list[str] | None = None  # keys of data.predictions.files

    def resolve(self, text: str) -> Path:
        path = Path(text).expanduser()
        return (path if path.is_absolute() else self.base / path).resolve()


def checkpoint_context(info: ValidationInfo) -> CheckpointContext:
    return info.context["checkpoint"]  # type: ignore[index]


def _table_format(path: Path, info: ValidationInfo) -> str | None:
    """The format of a table file: ``format`` if given, else from the suffix."""
    return info.data.get("format") or TABLE_FORMATS.get(path.suffix.lower())


def _table_file(value: str, info: ValidationInfo) -> Path:
    """An existing table file, as its resolved path."""
    ctx = checkpoint_context(info)
    path = ctx.resolve(value)
    fmt = _table_format(path, info)
    if fmt is None and "format" in info.data:  # a wrong 'format' is reported by itself
        shown = f"'{path.suffix}'" if path.suffix else "no suffix"
        raise problem(
            f"{{where}}: unknown table type ({shown}) for {path}",
            "use a .parquet or .csv file, or add 'format: parquet' or 'format: csv'",
        )
    if not path.exists():
        raise problem(
            f"{{where}}: file not found: {path}",
            f"relative paths are resolved against {ctx.base}",
        )
    if path.is_dir() and fmt != "parquet":
        raise problem(
            f"{{where}}: {path} is a folder, not a {fmt or 'table'} file",
            "point to a file; a folder is accepted only as a parquet dataset",
        )
    return path


#: A table file: text in the file, its absolute :class:`~pathlib.Path` once validated.
_TableFile = Annotated[Text, AfterValidator(_table_file)]


_Format = Literal["parquet", "csv"]


class TableSource(ConfigModel):
    """A table file (the records): absolute ``path``, ``format`` (by default from the
    file's suffix) and its id column."""

    example: ClassVar[str] = "records: {path: <file>, id_column: <column>}"
    format: _Format | None = None  # before 'path': the path's validator reads it
    path: _TableFile
    id_column: Text

    @model_validator(mode="before")
    @classmethod
    def _format_from_suffix(cls, data: Any, info: ValidationInfo) -> Any:
        if isinstance(data, dict) and data.get("format") is None and isinstance(data.get("path"), str):
            try:  # the suffix of the resolved file, as the path's validator sees it
                found = TABLE_FORMATS.get(checkpoint_context(info).resolve(data["path"]).suffix.lower())
            except ValueError:  # e.g. a NUL character: reported by the path's validator
                found = None
            if found:
                return {**data, "format": found}
        return data


class BenchmarkSource(TableSource):
    """The benchmark table: record id and true cluster id of the benchmark records."""

    example: ClassVar[str] = "benchmark: {path: <file>, id_column: <column>, reference_column: <column>}"
    reference_column: Text


class TagsSource(TableSource):
    """The error tags of the benchmark clusters (SPEC 12.1): one row per (cluster, kind, tag).

    ``id_column`` is the column of the benchmark (true) cluster id, ``kind_column`` holds
    over/under, ``tag_column`` the cause, ``records_column`` (optional) the records concerned
    (a list, or ids joined by ``separator``); ``known_tags`` (optional) the causes reviewers choose
    from. Each release batch gets the tags of each benchmark cluster on its records in the
    column ``column`` (default ``error_tags``), which ``expect_error_cause_rate_to_be_below``
    names as its ``tags_column``.
    """

    example: ClassVar[str] = "tags: {path: <file>, id_column: <cluster id column>, tag_column: tag}"
    id_column: Text = "cluster"
    kind_column: Text = "kind"
    tag_column: Text = "tag"
    records_column: Text | None = None
    separator: Text = ";"
    known_tags: list[Text] | None = None
    column: Text = "error_tags"


class ReleaseFile(NamedTuple):
    """The prediction file of one release, in the one-file-per-release layout."""

    label: str
    path: Path
    format: str


#: ``columns`` of the wide layout: a glob over the column names, or a list of them.
_Columns = Annotated[
    Annotated[Text, Tag("glob")] | Annotated[name_list("column name"), Tag("list")],
    Discriminator(lambda value: "glob" if isinstance(value, str) else "list"),
]


_PREDICTIONS_EXAMPLE = (
    'predictions: {path: <file>, id_column: <column>, columns: "<glob>"} or '
    "predictions: {files: {<release>: <file>}, id_column: <column>, prediction_column: <column>}"
)


class _Releases:
    """What both layouts of ``data.predictions`` answer, from their ``id_column``,
    ``columns``, ``files``, ``prediction_column`` and ``batch_column``."""

    @property
    def target_column(self) -> str:
        """Name of the prediction column in every release batch (what suites call ``prediction_column``).

        Wide layout: ``batch_column`` (default ``prediction``); file layout: the files' own
        ``prediction_column`` unless ``batch_column`` renames it.
        """
        return self.batch_column or self.prediction_column or "prediction"

    @property
    def layout(self) -> str:
        """``"wide"`` or ``"files"``."""
        return "files" if self.files else "wide"

    def match_columns(self, available: Sequence[str]) -> list[str]:
        """The release columns of the wide file among ``available``, in file order."""
        candidates = [name for name in available if name != self.id_column]
        if self.columns is None:
            return candidates
        if isinstance(self.columns, str):
            return [name for name in candidates if fnmatch.fnmatchcase(name, self.columns)]
        return [name for name in self.columns if name in available]


class PredictionsSource(_Releases, TableSource):
    """Where the predicted clusterings are, in the wide layout: one file ``path`` with a
    column per release, selected by ``columns`` (a glob, an explicit tuple, or ``None`` for
    every column but the id). The other layout is :class:`FilePredictions`; both have the
    attributes of either (``files`` is empty here).
    """

    example: ClassVar[str] = _PREDICTIONS_EXAMPLE
    misplaced: ClassVar[dict[str, tuple[str, str]]] = {
        "prediction_column": (
            "'prediction_column' goes with 'files'; with 'path' the release columns are chosen "
            "by 'columns'",
            "replace it by 'columns: \"<glob>\"' or a list of column names",
        ),
    }
    files: ClassVar[tuple[ReleaseFile, ...]] = ()
    prediction_column: ClassVar[None] = None
    path: _TableFile | None = None  # given: 'data.predictions' has 'path' or 'files'
    columns: _Columns | None = None
    batch_column: Text | None = None


def _release_files(files: dict[str, Path], info: ValidationInfo) -> tuple[ReleaseFile, ...]:
    if not files:
        raise problem("{where}: no release files given", "list one file per release")
    return tuple(
        ReleaseFile(label, path, _table_format(path, info)) for label, path in files.items()  # type: ignore[arg-type]
    )


class FilePredictions(_Releases, ConfigModel):
    """One file per release (``files``), the prediction in ``prediction_column``."""

    example: ClassVar[str] = _PREDICTIONS_EXAMPLE
    misplaced: ClassVar[dict[str, tuple[str, str]]] = {
        "columns": (
            "'columns' goes with 'path' (one wide file); with 'files' each file has its "
            "prediction in 'prediction_column'",
            "replace it by 'prediction_column: <column>'",
        ),
    }
    missing_hints: ClassVar[dict[str, str]] = {
        "prediction_column": "add 'prediction_column: <column with the predicted cluster id>'"
    }
    path: ClassVar[None] = None
    columns: ClassVar[None] = None
    format: _Format | None = None
    files: Annotated[dict[str, _TableFile], AfterValidator(_release_files)]
    id_column: Text
    prediction_column: Text = Field(description="needed with 'files'")
    batch_column: Text | None = None


class NameSpec(ConfigModel):
    """How the name column is built from the records: ``columns`` joined by ``separator``."""

    example: ClassVar[str] = 'name: {columns: [<first name column>, <last name column>], separator: " "}'
    columns: name_list("column name")
    separator: str = " "
    output_column: Text = "full_name"


class LabelsSource(TableSource):
    """A labels table (SPEC 2.2) and the release it was labelled against (``data.labels``).

    ``id_column`` is the drawn record's column; ``removed`` / ``added`` hold lists of record
    ids (Arrow list columns, or text split on ``separator``). ``block_column`` names a column
    of the records carried into the labelling batch for rule 5 (see
    :mod:`er_expectations.analysis.labelling_batch`).
    """

    example: ClassVar[str] = "labels: {path: <file>, release: <release label>}"
    id_column: Text = "record_id"
    release: Text | None = Field(None, description="the release the labels were made against")
    draw_column: Text = "draw"
    removed_column: Text = "removed"
    added_column: Text = "added"
    predicted_cluster_column: Text = "predicted_cluster"  # optional columns: used when the file has them
    true_cluster_column: Text = "true_cluster"
    separator: Text = ";"
    block_column: Text | None = None


def _layout(data: Any) -> str:
    return "one file per release" if isinstance(data, dict) and "files" in data else "one wide file"


class DataSources(ConfigModel):
    """The ``data`` section of a checkpoint that reads files (``engine: pandas``, the default)."""

    example: ClassVar[str] = "data: {records: {...}, predictions: {...}, benchmark: {...}}"
    engine: Literal["pandas"] = "pandas"
    records: TableSource
    predictions: Annotated[
        Annotated[PredictionsSource, Tag("one wide file")]
        | Annotated[FilePredictions, Tag("one file per release")],
        Discriminator(_layout),
    ]
    benchmark: BenchmarkSource | None = None
    tags: TagsSource | None = None
    name: NameSpec | None = None
    labels: LabelsSource | None = None

    @model_validator(mode="after")
    def _tags_need_a_benchmark(self) -> DataSources:
        if self.tags is not None and self.benchmark is None:
            raise problem("data.tags: error tags belong to benchmark clusters, but the checkpoint has no "
                          "data.benchmark", "add data.benchmark, or remove data.tags", at=("tags",))
        if self.tags is not None:
            taken = self._batch_columns()
            if self.tags.column in taken:
                raise problem(f"data.tags.column: '{self.tags.column}' is already a column of every release batch "
                              f"({taken[self.tags.column]}); the tags would replace it",
                              "give data.tags.column another name (the default is 'error_tags') and the same name "
                              "as tags_column of expect_error_cause_rate_to_be_below", at=("tags", "column"))
        return self

    def _batch_columns(self) -> dict[str, str]:
        """The columns every release batch has, each with the key that names it."""
        predictions = self.predictions
        prediction_key = ("data.predictions.batch_column" if predictions.batch_column is not None
                          else "data.predictions.prediction_column" if predictions.prediction_column is not None
                          else "data.predictions.batch_column, default 'prediction'")
        taken = {predictions.target_column: f"the prediction, {prediction_key}"}
        if self.name is not None:
            taken.setdefault(self.name.output_column, "the name, data.name.output_column")
        if self.benchmark is not None:
            taken.setdefault(self.benchmark.reference_column, "the true cluster, data.benchmark.reference_column")
            taken.setdefault(self.benchmark.id_column, "the benchmark's record id, data.benchmark.id_column")
        taken[self.records.id_column] = "the record id, data.records.id_column"
        return taken

    @field_validator("predictions", mode="before")
    @classmethod
    def _one_layout(cls, data: Any, info: ValidationInfo) -> Any:
        """Exactly one of 'path' (wide layout) and 'files' (one file per release)."""
        if not isinstance(data, dict):
            return data
        has_path, has_files = data.get("path") is not None, data.get("files") is not None
        if has_path and has_files:
            raise problem(
                "data.predictions: give either 'path' (one wide file) or 'files' (one file per release), "
                "not both",
                "remove one of them",
                at=("files",),
            )
        if not has_path and not has_files:
            raise problem(
                "{where}: missing 'path' (one wide file) or 'files' (one file per release)",
                f"write it as {_PREDICTIONS_EXAMPLE}",
            )
        if has_files and isinstance(data["files"], dict):
            checkpoint_context(info).file_labels = list(data["files"])  # for the check of 'releases'
        return data




class ConnectionConfig(ConfigModel):
    """``data.connection``: the SQLAlchemy URL of the database (engine ``sql``; engine
    ``duckdb``: a ``duckdb:///path.db`` URL), its password only as ``${NAME}`` (the whole URL from
    the environment, or the password); or, engine ``duckdb`` only, the ``database`` file."""

    example: ClassVar[str] = "connection: {url: ${WAREHOUSE_URL}}"
    #: required with engine sql (checked by :class:`EngineData`)
    url: database_url("WAREHOUSE_URL") | None = None
    #: engine duckdb: the DuckDB database file (relative to the checkpoint's folder), instead of
    #: ``url``; with neither, an in-memory database reads the tables' ``path`` files
    database: Text | None = None
    #: seconds the run waits for the database's first answer before giving up (exit 7)
    connect_timeout: Annotated[float, Field(gt=0, le=3600)] = 30.0
    #: materialise each release's batch once in a temporary table (GX's ``create_temp_table``)
    #: so that the checks aggregate it, not the joins that build it; ``false`` for a role
    #: that may not create temporary tables (every check then re-runs the release's query)
    temp_table: bool = True


def _spark_setting(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | str):
        return getattr(value, "text", None) or str(value)
    raise problem("{where}: expected a text or a number, got {got}", 'write it as key: "value"')


class SparkConfig(ConfigModel):
    """``data.spark`` (engine ``spark``): the master and settings of the session the run
    creates; an active session (a notebook, ``spark-submit``) is used as it is."""

    example: ClassVar[str] = 'spark: {master: "local[2]", config: {spark.sql.shuffle.partitions: "4"}}'
    master: Text | None = None
    config: dict[str, Annotated[Any, AfterValidator(_spark_setting)]] = Field(default_factory=dict)


_SOURCE_EXAMPLE = "{table: <table>, id_column: <column>} or {query: \"select ...\", id_column: <column>}"


class EngineTable(ConfigModel):
    """A table of the database or of Spark: ``table`` (a name, ``schema.table`` allowed; for
    Spark a table of the session's catalog), ``query`` (a ``select``) or, for Spark and DuckDB,
    ``path`` (Parquet files read by Spark; Parquet or CSV files, globs allowed, queried in place
    by DuckDB); and its id column."""

    example: ClassVar[str] = f"records: {_SOURCE_EXAMPLE}"
    table: Text | None = None
    query: Text | None = None
    path: Text | None = None
    id_column: Text

    @model_validator(mode="before")
    @classmethod
    def _one_place(cls, data: Any) -> Any:
        if isinstance(data, dict):
            given = [key for key in ("table", "query", "path") if data.get(key) is not None]
            if len(given) != 1:
                raise problem(
                    "{where}: give exactly one of 'table', 'query' and 'path' (Spark and DuckDB)"
                    + (f", not {quote_list(given, conjunction='and')}" if given else ""),
                    f"write it as {_SOURCE_EXAMPLE}",
                )
        return data

    @property
    def kind(self) -> str:
        """``table``, ``query`` or ``path``."""
        return "table" if self.table is not None else "query" if self.query is not None else "path"

    @property
    def shown(self) -> str:
        """How messages name the source: ``table 'x'``, ``the query`` or ``Parquet path 'p'``."""
        if self.table is not None:
            return f"table '{self.table}'"
        return "the query" if self.query is not None else f"path '{self.path}'"


class EngineBenchmark(EngineTable):
    """The benchmark table of a database or Spark (see :class:`EngineTable`)."""

    example: ClassVar[str] = "benchmark: {table: <table>, id_column: <column>, reference_column: <column>}"
    reference_column: Text


_ENGINE_PREDICTIONS_EXAMPLE = (
    'predictions: {table: <table>, id_column: <column>, columns: "<glob>"} (a column per release) or '
    "{table: <table>, id_column: <column>, release_column: <column>, prediction_column: <column>} "
    "(a row per record and release)"
)


class EnginePredictions(_Releases, EngineTable):
    """The predictions in a database or Spark, wide (a column per release, chosen by
    ``columns``) or long (``release_column`` holds the release of each row and
    ``prediction_column`` its cluster id; the releases are its distinct values, sorted)."""

    example: ClassVar[str] = _ENGINE_PREDICTIONS_EXAMPLE
    files: ClassVar[tuple[ReleaseFile, ...]] = ()
    format: ClassVar[None] = None
    columns: _Columns | None = None
    release_column: Text | None = None
    prediction_column: Text | None = None
    batch_column: Text | None = None

    @model_validator(mode="after")
    def _one_layout(self) -> EnginePredictions:
        if (self.release_column is None) != (self.prediction_column is None):
            raise problem(
                "data.predictions: 'release_column' and 'prediction_column' go together (a row per "
                "record and release)",
                f"write {_ENGINE_PREDICTIONS_EXAMPLE}",
            )
        if self.release_column is not None and self.columns is not None:
            raise problem(
                "data.predictions: 'columns' (a column per release) and 'release_column' (a row per "
                "record and release) are two layouts",
                "keep one of them",
            )
        return self

    @property
    def layout(self) -> str:
        """``"wide"`` or ``"long"``."""
        return "long" if self.release_column is not None else "wide"


class EngineData(ConfigModel):
    """The ``data`` section with ``engine: sql``, ``duckdb`` or ``spark``: the tables stay in the
    database, DuckDB or Spark and each release's batch is built there
    (:mod:`er_expectations.run.data.engine`)."""

    example: ClassVar[str] = (
        "data: {engine: sql, connection: {url: ${WAREHOUSE_URL}}, records: {table: ...}, predictions: {...}}"
    )
    #: an engine of the registry that keeps its tables ("pandas", or no engine, selects DataSources)
    engine: Literal[tuple(engines_with(lambda keys: True))]  # type: ignore[valid-type]
    connection: ConnectionConfig | None = None
    spark: SparkConfig | None = None
    records: EngineTable
    predictions: EnginePredictions
    benchmark: EngineBenchmark | None = None
    name: NameSpec | None = None
    #: a labelling checkpoint (SPEC 9): the labels file (small, read with pandas) against a
    #: release whose records stay in the engine (only those the rules read are fetched)
    labels: LabelsSource | None = None
    #: accepted only to be refused with its reason (the error audit reads tags on files)
    tags: Any = None

    @model_validator(mode="after")
    def _engine_options(self) -> EngineData:
        """The keys the engine's line of the registry allows (:class:`CheckpointKeys`)."""
        keys = _CHECKPOINT_KEYS[self.engine]  # ``engine``'s choices are this mapping's keys
        if self.tags is not None:
            raise problem(f"data.tags: the error audit by cause (SPEC 12.1) reads its tags with the files engine "
                          f"only; this checkpoint's data is on engine {self.engine}",
                          "run expect_error_cause_rate_to_be_below in a checkpoint over files (the benchmark and "
                          "the tags are small tables), or remove data.tags", at=("tags",))
        for session in _SESSIONS:  # the engines' own session settings (a field of this model each)
            if getattr(self, session) is not None and keys.session != session:
                owners = engines_with(lambda k, key=session: k.session == key)
                raise problem(f"data: '{session}' goes with {_engines(owners)}", "remove it", at=(session,))
        if keys.connection is None:
            if self.connection is not None:
                raise problem(f"data: 'connection' goes with {_engines(engines_with(lambda k: k.connection))}; "
                              f"engine {self.engine} reads its tables itself",
                              "remove it" + (f" (data.{keys.session} sets the session)" if keys.session else ""),
                              at=("connection",))
        elif keys.connection == "url":
            if self.connection is None or self.connection.url is None:
                raise problem(f"data: engine {self.engine} needs 'connection' with its 'url'",
                              "add connection: {url: ${WAREHOUSE_URL}} (a SQLAlchemy URL)",
                              at=("connection",) if self.connection is not None else ())
            if self.connection.database is not None:
                raise problem("data.connection.database: a database file is for "
                              + _engines(engines_with(lambda k: k.connection == "file")),
                              "write the database's SQLAlchemy URL as connection.url",
                              at=("connection", "database"))
        else:
            self._file_options(keys)
        if not keys.paths:
            for key in ("records", "predictions", "benchmark"):
                source = getattr(self, key)
                if source is not None and source.path is not None:
                    raise problem(f"data.{key}: 'path' (files read in place) is for "
                                  + _engines(engines_with(lambda k: k.paths)),
                                  "name the database table with 'table' or write a 'query'",
                                  at=(key, "path"))
        return self

    def _file_options(self, keys: CheckpointKeys) -> None:
        """A database in a file (``url: duckdb:///path.db`` or ``database: path.db``), or neither
        (an in-memory database, whose tables are all ``path`` files)."""
        connection = self.connection
        if connection is None or (connection.url is None and connection.database is None):
            for key in ("records", "predictions", "benchmark"):
                source = getattr(self, key)
                if source is not None and source.table is not None:
                    raise problem(f"data.{key}.table: engine {self.engine} without a database has no tables",
                                  "add connection: {database: <file." + (keys.url_scheme or "db") + ">}, or read "
                                  "the files in place with path: <file.parquet>", at=(key, "table"))
            return
        scheme = keys.url_scheme or "file"
        if connection.url is not None and connection.database is not None:
            raise problem(f"data.connection: give either 'url' ({scheme}:///path.db) or 'database' (path.db), "
                          "not both", "remove one of them", at=("connection",))
        url = str(connection.url or "")
        if (keys.url_scheme and connection.url is not None and "${" not in url
                and not url.startswith(f"{keys.url_scheme}:")):
            raise problem(f"data.connection.url: engine {self.engine} reads a {keys.database} database, not "
                          f"{url.split(':', 1)[0]}",
                          f"write url: {scheme}:///path/to/file.{scheme} (or database: path/to/file.{scheme}), or "
                          f"use engine: {_first(engines_with(lambda k: k.connection == 'url'))} for another database",
                          at=("connection", "url"))


#: each engine of checkpoint tables and what its ``data`` section holds (the registry's lines)
_CHECKPOINT_KEYS: dict[str, CheckpointKeys] = {e.name: e.checkpoint for e in ENGINES.values() if e.checkpoint}

#: the keys of the engines' own session settings (``spark``), each a field of :class:`EngineData`
_SESSIONS = tuple(dict.fromkeys(k.session for k in _CHECKPOINT_KEYS.values() if k.session))


def _engines(names: list[str]) -> str:
    """``engine sql`` or ``engines duckdb and spark``."""
    if len(names) <= 1:
        return "engine " + "".join(names)
    return f"engines {', '.join(names[:-1])} and {names[-1]}"


def _first(names: list[str]) -> str:
    return names[0] if names else "?"


def data_kind(data: Any) -> str:
    engine = data.get("engine") if isinstance(data, dict) else None
    entry = ENGINES.get(engine) if isinstance(engine, str) else None
    files = engine is None or (entry is not None and entry.checkpoint is None)
    return "tables in files" if files else "tables in a database or Spark"
