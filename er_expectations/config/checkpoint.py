"""Checkpoint files (``checkpoints/*.yml``): which data, which releases, which suites.

.. code-block:: yaml

    checkpoint: patentsview_releases
    project_dir: ../gx_project
    data:
      records: {path: ../data/records.parquet, id_column: mention_id}
      predictions:                       # one wide file, one column per release ...
        path: ../data/predictions.parquet
        id_column: mention_id
        columns: "inventor_id_*"         # a glob over column names, or a list
        batch_column: inventor_id        # the name each release column gets in its batch (default: prediction)
      # ... or one file per release:
      #   files: {"2022-06-30": a.parquet, "2021-12-30": b.parquet}
      #   id_column: mention_id
      #   prediction_column: inventor_id
      benchmark: {path: ../data/benchmark.parquet, id_column: mention_id, reference_column: benchmark_id}
      name: {columns: [name_first, name_last], separator: " "}
    releases: all
    suites: [patentsview_inventor_disambiguation]
    suite_paths: [../suites]
    actions:
      - build_data_docs
      - slack: {webhook: "${SLACK_WEBHOOK}"}   # alerts: see config/alerts.py

With ``engine: sql`` (and ``connection: {url: ${WAREHOUSE_URL}}``) or ``engine: spark`` (and
an optional ``spark: {master: ..., config: {...}}``) the tables stay in the database or Spark:
``records``, ``predictions`` and ``benchmark`` then name a ``table``, a ``query`` or (Spark) a
Parquet ``path``, and the predictions are wide (``columns``) or long (``release_column`` and
``prediction_column``); see :class:`EngineData` and :mod:`er_expectations.run.sources`. A
labelling checkpoint's ``labels`` stay a file there (only the records the rules read are
fetched from the engine: :mod:`er_expectations.analysis.labelling_batch`).

The structure is declared once, as the frozen pydantic models the package uses
(:class:`CheckpointConfig`, one field per section; a new section is a new field),
validated in one call so that every problem of the file is reported together (see
:mod:`.models`); validators turn paths into absolute :class:`~pathlib.Path` objects
resolved against the folder of the checkpoint file. Loading checks
the file's own content and that the files it names exist; whether the named suites
and columns exist is checked by :func:`check_checkpoint_references`, which needs the
suites and a way to list a file's columns.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, NamedTuple
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Discriminator,
    Field,
    PrivateAttr,
    Tag,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    field_validator,
    model_validator,
)

from er_expectations.config.alerts import EmailAlert, SlackAlert, TeamsAlert, WebhookAlert
from er_expectations.config.errors import IssueCollector, did_you_mean, quote_list
from er_expectations.config.history import HistoryConfig, database_url
from er_expectations.config.models import (
    ConfigModel,
    Text,
    name_list,
    node_locations,
    problem,
    validate_node,
)
from er_expectations.config.yamlnodes import Node, compose_file
from er_expectations.core.names import name_problem

__all__ = [
    "ACTIONS",
    "CHECKPOINT_KEYS",
    "RESERVED_ACTIONS",
    "TABLE_FORMATS",
    "ActionConfig",
    "BenchmarkSource",
    "CheckpointConfig",
    "ConnectionConfig",
    "DataSources",
    "ENGINES",
    "EngineBenchmark",
    "EngineData",
    "EnginePredictions",
    "EngineTable",
    "FilePredictions",
    "LabelsSource",
    "NameSpec",
    "PredictionsSource",
    "ReleaseFile",
    "SparkConfig",
    "TableSource",
    "check_checkpoint_references",
    "load_checkpoint",
]

#: File suffix -> table format.
TABLE_FORMATS: dict[str, str] = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv"}
#: Action names kept for later versions.
RESERVED_ACTIONS: tuple[str, ...] = ("alert",)
_DEFAULT_PROJECT_DIR = "../gx_project"  # GX keeps its own files in gx/ inside it
_DEFAULT_SUITE_PATH = "../suites"


# -- the file's structure, which is also what the package uses ---------------------------


class _Context:
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


def _ctx(info: ValidationInfo) -> _Context:
    return info.context["checkpoint"]  # type: ignore[index]


def _table_format(path: Path, info: ValidationInfo) -> str | None:
    """The format of a table file: ``format`` if given, else from the suffix."""
    return info.data.get("format") or TABLE_FORMATS.get(path.suffix.lower())


def _table_file(value: str, info: ValidationInfo) -> Path:
    """An existing table file, as its resolved path."""
    ctx = _ctx(info)
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
                found = TABLE_FORMATS.get(_ctx(info).resolve(data["path"]).suffix.lower())
            except ValueError:  # e.g. a NUL character: reported by the path's validator
                found = None
            if found:
                return {**data, "format": found}
        return data


class BenchmarkSource(TableSource):
    """The benchmark table: record id and true cluster id of the benchmark records."""

    example: ClassVar[str] = "benchmark: {path: <file>, id_column: <column>, reference_column: <column>}"
    reference_column: Text


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
    name: NameSpec | None = None
    labels: LabelsSource | None = None

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
            _ctx(info).file_labels = list(data["files"])  # for the check of 'releases'
        return data


# -- a database or Spark instead of files (data.engine: sql | spark) ----------------------

#: Engines of ``data.engine``: ``pandas`` reads files; ``sql`` and ``spark`` leave the
#: record table where it is (see :mod:`er_expectations.run.sources`).
ENGINES: tuple[str, ...] = ("pandas", "sql", "spark")


class ConnectionConfig(ConfigModel):
    """``data.connection`` (engine ``sql``): the SQLAlchemy URL of the database, its
    password only as ``${NAME}`` (the whole URL from the environment, or the password)."""

    example: ClassVar[str] = "connection: {url: ${WAREHOUSE_URL}}"
    url: database_url("WAREHOUSE_URL")
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
    Spark a table of the session's catalog), ``query`` (a ``select``) or, for Spark,
    ``path`` (Parquet files read by Spark); and its id column."""

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
                    "{where}: give exactly one of 'table', 'query' and 'path' (Spark only)"
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
        return "the query" if self.query is not None else f"Parquet path '{self.path}'"


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
    """The ``data`` section with ``engine: sql`` or ``engine: spark``: the tables stay in the
    database or Spark and each release's batch is built there (:mod:`er_expectations.run.sources`)."""

    example: ClassVar[str] = (
        "data: {engine: sql, connection: {url: ${WAREHOUSE_URL}}, records: {table: ...}, predictions: {...}}"
    )
    engine: Literal["sql", "spark"]  # "pandas" (or no engine) selects DataSources: see _data_kind
    connection: ConnectionConfig | None = None
    spark: SparkConfig | None = None
    records: EngineTable
    predictions: EnginePredictions
    benchmark: EngineBenchmark | None = None
    name: NameSpec | None = None
    #: a labelling checkpoint (SPEC 9): the labels file (small, read with pandas) against a
    #: release whose records stay in the engine (only those the rules read are fetched)
    labels: LabelsSource | None = None

    @model_validator(mode="after")
    def _engine_options(self) -> EngineData:
        if self.engine == "sql":
            if self.connection is None:
                raise problem("data: engine sql needs 'connection'",
                              "add connection: {url: ${WAREHOUSE_URL}} (a SQLAlchemy URL)")
            if self.spark is not None:
                raise problem("data: 'spark' goes with engine spark", "remove it", at=("spark",))
            for key in ("records", "predictions", "benchmark"):
                source = getattr(self, key)
                if source is not None and source.path is not None:
                    raise problem(f"data.{key}: 'path' (Parquet files) is for engine spark",
                                  "name the database table with 'table' or write a 'query'",
                                  at=(key, "path"))
        elif self.connection is not None:
            raise problem("data: 'connection' goes with engine sql; Spark reads its tables itself",
                          "remove it (data.spark sets the session)", at=("connection",))
        return self


def _data_kind(data: Any) -> str:
    engine = data.get("engine") if isinstance(data, dict) else None
    return "tables in files" if engine in (None, "pandas") else "tables in a database or Spark"


def _release(label: str, info: ValidationInfo) -> str:
    known = _ctx(info).file_labels
    if known is not None and label not in known:
        raise problem(
            f"releases: '{label}' is not a key of data.predictions.files",
            did_you_mean(label, known, list_all_below=20),
        )
    return label


def _all_or_list(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    if value == "all":
        return "all"
    if not isinstance(value, list | dict):
        hint = did_you_mean(str(value), ("all",))
        raise problem(
            "{where}: expected 'all' or a list of release labels, got {got}",
            hint or f"write releases: [{value}] for a single release",
        )
    return handler(value)


def _suite_path(text: str, info: ValidationInfo) -> str:
    ctx = _ctx(info)
    path = ctx.resolve(text)
    if not path.exists():
        raise problem(
            f"suite_paths: not found: {path}", f"relative paths are resolved against {ctx.base}"
        )
    return text


def _suite_paths(
    value: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo
) -> tuple[Path, ...]:
    """The resolved suite paths, and ``../suites`` when it exists (or nothing else is given)."""
    ctx = _ctx(info)
    default = ctx.resolve(_DEFAULT_SUITE_PATH)
    paths = [ctx.resolve(text) for text in (() if value is None else handler(value))] or [default]
    if default.exists() and default not in paths:
        paths.append(default)
    return tuple(paths)


def _checkpoint_name(name: str) -> str:
    found = name_problem(name, what="checkpoint")
    if found is not None:
        raise problem(*found)
    return name


def _project_dir(value: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo) -> Path:
    """The resolved project folder (``../gx_project`` when not given); a file is refused."""
    if value is None:
        return _ctx(info).resolve(_DEFAULT_PROJECT_DIR)
    path = _ctx(info).resolve(handler(value))
    if path.exists() and not path.is_dir():
        raise problem(
            f"project_dir: {path} is a file, not a folder",
            "point project_dir to the folder of the Great Expectations project",
        )
    return path


def _base_url(value: str) -> str:
    if urlsplit(value).scheme not in ("http", "https", "file") or any(c.isspace() for c in value):
        raise problem("{where}: expected an http(s) or file URL (where the Data Docs site is published), got {got}",
                      'write it as base_url: "https://docs.example.org/er/"')
    return value


class _BuildDataDocs(ConfigModel):
    """Options of the ``build_data_docs`` action."""

    unknown_key: ClassVar[str] = "unknown option '{key}' for action build_data_docs"
    site_name: Text | None = None
    #: Where the site is published (``https://.../``): alerts link its pages there.
    base_url: Annotated[Text, AfterValidator(_base_url)] | None = None


def _action_entry(value: Any) -> Any:
    """``- name`` or ``- name: {options}`` as ``{name: options}``; reserved names refused."""
    if isinstance(value, dict):
        if len(value) != 1:
            raise problem(
                "{where}: an action with options is a mapping with one key, the action name; "
                f"got {len(value)} keys",
                "write '- build_data_docs: {site_name: local_site}'",
            )
        name, options = next(iter(value.items()))
    elif isinstance(value, str):
        name, options = value, None
    else:
        raise problem(
            "{where}: expected an action name, got {got}", f"write one of {quote_list(ACTIONS)}"
        )
    if name in RESERVED_ACTIONS:
        raise problem(
            f"action '{name}' is not available yet in this version",
            f"remove it; available actions: {quote_list(ACTIONS)}",
        )
    return {name: {} if options is None else options}


class ActionConfig(ConfigModel):
    """An action to run after validation (e.g. ``build_data_docs``): one entry of
    ``actions``, a field per action holding its options. ``name``, ``options`` and ``line``
    (where the entry is) describe the one chosen."""

    unknown_key: ClassVar[str] = "unknown action '{key}'"
    build_data_docs: _BuildDataDocs | None = None
    slack: SlackAlert | None = None
    microsoft_teams: TeamsAlert | None = None
    webhook: WebhookAlert | None = None
    email: EmailAlert | None = None
    _line: int | None = PrivateAttr(None)

    @property
    def name(self) -> str:
        """The action's name."""
        return next(iter(self.model_fields_set))

    @property
    def options(self) -> dict[str, object]:
        """The options written for the action."""
        return getattr(self, self.name).model_dump(exclude_none=True)

    @property
    def line(self) -> int | None:
        """The line of the entry in the checkpoint file."""
        return self._line


def _action_lines(actions: list[ActionConfig], info: ValidationInfo) -> tuple[ActionConfig, ...]:
    for index, action in enumerate(actions):
        action._line = _ctx(info).locations.get(f"actions[{index}]", (None, None))[0]
    return tuple(actions)


class CheckpointConfig(ConfigModel):
    """A loaded checkpoint file; a new section of the file is a new field here.

    ``path`` is the file as given to the loader; every other path is absolute.
    ``releases`` is ``"all"`` or a tuple of release labels (wide layout: column names;
    file layout: keys of ``files``). ``suite_paths`` are the files and folders where the
    suites are looked up. ``locations`` maps a dotted key such as
    ``"data.records.id_column"`` or ``"suites[0]"`` to its ``(line, column)`` in the
    file, so later checks can point at the reference.
    """

    section: ClassVar[str] = "the checkpoint file"
    example: ClassVar[str] = "'checkpoint: <name>', 'data: ...' and 'suites: [...]'"
    checkpoint: Annotated[Text, AfterValidator(_checkpoint_name)]
    project_dir: Annotated[Text, WrapValidator(_project_dir)] = Field(None, validate_default=True)
    data: Annotated[
        Annotated[DataSources, Tag("tables in files")] | Annotated[EngineData, Tag("tables in a database or Spark")],
        Discriminator(_data_kind),
    ]
    releases: Annotated[
        name_list("release label", check=_release), WrapValidator(_all_or_list)
    ] = "all"
    suites: name_list("suite name")
    suite_paths: Annotated[
        name_list("path", check=_suite_path), WrapValidator(_suite_paths)
    ] = Field(None, validate_default=True)
    actions: Annotated[
        list[Annotated[ActionConfig, BeforeValidator(_action_entry)]],
        AfterValidator(_action_lines),
    ] = ()
    history: HistoryConfig = HistoryConfig()
    _path: Path = PrivateAttr()
    _locations: dict[str, tuple[int, int]] = PrivateAttr(default_factory=dict)

    @model_validator(mode="after")
    def _the_file(self, info: ValidationInfo) -> CheckpointConfig:
        self._path, self._locations = _ctx(info).path, _ctx(info).locations
        return self

    @property
    def name(self) -> str:
        """The checkpoint's name (``checkpoint:`` in the file)."""
        return self.checkpoint

    @property
    def path(self) -> Path:
        """The checkpoint file, as given to the loader."""
        return self._path

    @property
    def locations(self) -> dict[str, tuple[int, int]]:
        """``(line, column)`` of every value of the file by dotted key."""
        return self._locations

    def location(self, key: str) -> tuple[int | None, int | None]:
        """``(line, column)`` of a dotted key, or ``(None, None)`` if unknown."""
        return self._locations.get(key, (None, None))


#: Top-level keys of a checkpoint file.
CHECKPOINT_KEYS: tuple[str, ...] = tuple(CheckpointConfig.model_fields)
#: Action name -> the options it accepts.
ACTIONS: dict[str, tuple[str, ...]] = {
    name: tuple(field.annotation.__args__[0].model_fields)  # type: ignore[union-attr]
    for name, field in ActionConfig.model_fields.items()
}


# -- loading -----------------------------------------------------------------------------


def load_checkpoint(path: str | Path) -> CheckpointConfig:
    """Load and validate a checkpoint file; raises :class:`ConfigError` listing every problem."""
    issues = IssueCollector(str(path))
    root = compose_file(path, issues)
    checkpoint = checkpoint_from_node(root, Path(path), issues) if root is not None else None
    issues.raise_if_any()
    if not (checkpoint is not None):  # invariant, kept under python -O
        raise RuntimeError("er-expectations internal error: expected checkpoint is not None")
    return checkpoint


def checkpoint_from_node(root: Node, path: Path, issues: IssueCollector) -> CheckpointConfig | None:
    """Validate a composed checkpoint document (one model validation, every error reported
    at its node); problems go to ``issues``."""
    ctx = _Context(path, node_locations(root))
    model = validate_node(CheckpointConfig, root, issues, context={"checkpoint": ctx})
    return model if isinstance(model, CheckpointConfig) and not issues else None


# -- references --------------------------------------------------------------------------

ColumnLister = Callable[[Path], Sequence[str]]


def check_checkpoint_references(
    checkpoint: CheckpointConfig,
    suites_by_name: Mapping[str, object],
    column_lister: ColumnLister,
) -> None:
    """Check that the suites and columns a checkpoint names exist.

    ``suites_by_name`` holds the suites found (e.g. from :func:`load_suites`);
    ``column_lister(path)`` returns the column names of a table file (for instance from
    ``pyarrow.parquet.read_schema`` or a CSV header) and is called once per file.
    Raises :class:`ConfigError` with every missing suite, column or release, each at
    the line of the checkpoint file where it is named.
    """
    issues = IssueCollector(str(checkpoint.path))
    known_suites = sorted(suites_by_name)
    for index, suite in enumerate(checkpoint.suites):
        if suite not in suites_by_name:
            where = ", ".join(str(path) for path in checkpoint.suite_paths) or "no suite path"
            hint = did_you_mean(suite, known_suites) or (
                f"suites found: {quote_list(known_suites, conjunction='and')}"
                if known_suites
                else f"no suite was found in {where}"
            )
            issues.add(checkpoint.location(f"suites[{index}]"), f"suite '{suite}' not found", hint)

    cache: dict[Path, list[str] | None] = {}

    def columns_of(path: Path, path_key: str) -> list[str] | None:
        if path not in cache:
            try:
                cache[path] = list(column_lister(path))
            except Exception as error:  # noqa: BLE001 - any reader failure becomes an issue
                issues.add(
                    checkpoint.location(path_key),
                    f"cannot read the columns of {path}: {error}",
                    "check that the file is a valid table of the declared format",
                )
                cache[path] = None
        return cache[path]

    def require(path: Path, path_key: str, column: str, column_key: str) -> None:
        available = columns_of(path, path_key)
        if available is None or column in available:
            return
        issues.add(
            checkpoint.location(column_key),
            f"{column_key}: column '{column}' not found in {path}",
            _column_hint(column, available),
        )

    data = checkpoint.data
    if isinstance(data, EngineData):  # tables of a database or Spark (er_expectations.run.sources); labels: a file
        if data.labels is not None:
            _check_labels_file(checkpoint, data.labels, require)
        issues.raise_if_any()
        return
    records = data.records
    require(records.path, "data.records.path", records.id_column, "data.records.id_column")
    if data.name is not None:
        for index, column in enumerate(data.name.columns):
            require(records.path, "data.records.path", column, f"data.name.columns[{index}]")

    predictions = data.predictions
    if predictions.layout == "wide" and predictions.path is not None:
        _check_wide(checkpoint, predictions, columns_of, require, issues)
    else:
        for release in predictions.files:
            spot = f"data.predictions.files.{release.label}"
            require(release.path, spot, predictions.id_column, "data.predictions.id_column")
            if predictions.prediction_column is not None:
                require(
                    release.path,
                    spot,
                    predictions.prediction_column,
                    "data.predictions.prediction_column",
                )

    if data.labels is not None:
        labels = data.labels
        _check_labels_file(checkpoint, labels, require)
        if labels.block_column is not None:
            require(records.path, "data.records.path", labels.block_column, "data.labels.block_column")
    if data.benchmark is not None:
        bench = data.benchmark
        require(bench.path, "data.benchmark.path", bench.id_column, "data.benchmark.id_column")
        require(
            bench.path,
            "data.benchmark.path",
            bench.reference_column,
            "data.benchmark.reference_column",
        )
    issues.raise_if_any()


def _check_labels_file(checkpoint: CheckpointConfig, labels: LabelsSource,
                       require: Callable[[Path, str, str, str], None]) -> None:
    """The labels columns of ``data.labels`` in its file (the block column is the records')."""
    for key in ("id_column", "draw_column", "removed_column", "added_column"):
        require(labels.path, "data.labels.path", getattr(labels, key), f"data.labels.{key}")
    for key in ("predicted_cluster_column", "true_cluster_column"):  # optional: only when written
        if f"data.labels.{key}" in checkpoint.locations:
            require(labels.path, "data.labels.path", getattr(labels, key), f"data.labels.{key}")


def _check_wide(
    checkpoint: CheckpointConfig,
    predictions: PredictionsSource,
    columns_of: Callable[[Path, str], list[str] | None],
    require: Callable[[Path, str, str, str], None],
    issues: IssueCollector,
) -> None:
    if not (predictions.path is not None):  # invariant, kept under python -O
        raise RuntimeError("er-expectations internal error: expected predictions.path is not None")
    path = predictions.path
    require(path, "data.predictions.path", predictions.id_column, "data.predictions.id_column")
    available = columns_of(path, "data.predictions.path")
    if available is None:
        return
    if isinstance(predictions.columns, tuple):
        for index, column in enumerate(predictions.columns):
            require(path, "data.predictions.path", column, f"data.predictions.columns[{index}]")
    selected = predictions.match_columns(available)
    if not selected:
        what = (
            f"the pattern '{predictions.columns}'"
            if isinstance(predictions.columns, str)
            else "data.predictions"
        )
        issues.add(
            checkpoint.location("data.predictions.columns")
            if predictions.columns is not None
            else checkpoint.location("data.predictions.path"),
            f"data.predictions.columns: {what} selects no release column of {path}",
            _column_hint(str(predictions.columns or ""), available),
        )
        return
    if isinstance(checkpoint.releases, tuple):
        for index, label in enumerate(checkpoint.releases):
            if label in selected:
                continue
            if label in available:
                message = f"releases: column '{label}' is not selected by data.predictions.columns"
                hint = "add it to data.predictions.columns"
            else:
                message = f"releases: '{label}' is not a prediction column of {path}"
                hint = did_you_mean(
                    label, selected
                ) or f"release columns: {quote_list(selected[:8], conjunction='and')}" + (
                    " ..." if len(selected) > 8 else ""
                )
            issues.add(checkpoint.location(f"releases[{index}]"), message, hint)


def _column_hint(column: str, available: Sequence[str]) -> str:
    hint = did_you_mean(column, list(available))
    if hint:
        return hint
    shown = quote_list(list(available)[:10], conjunction="and")
    more = " ..." if len(available) > 10 else ""
    return f"the file has the columns {shown}{more}"
