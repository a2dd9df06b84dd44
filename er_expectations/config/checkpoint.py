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
``prediction_column``); see :class:`EngineData` and :mod:`er_expectations.run.data.engine`. A
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

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, ClassVar
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
    model_validator,
)

from er_expectations.config.alerts import EmailAlert, SlackAlert, TeamsAlert, WebhookAlert
from er_expectations.config.data import (
    ENGINES,
    TABLE_FORMATS,
    BenchmarkSource,
    CheckpointContext,
    ConnectionConfig,
    DataSources,
    EngineBenchmark,
    EngineData,
    EnginePredictions,
    EngineTable,
    FilePredictions,
    LabelsSource,
    NameSpec,
    PredictionsSource,
    ReleaseFile,
    SparkConfig,
    TableSource,
    checkpoint_context,
    data_kind,
)
from er_expectations.config.errors import IssueCollector, did_you_mean, quote_list
from er_expectations.config.history import HistoryConfig
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

#: Action names kept for later versions.
RESERVED_ACTIONS: tuple[str, ...] = ("alert",)
_DEFAULT_PROJECT_DIR = "../gx_project"  # GX keeps its own files in gx/ inside it
_DEFAULT_SUITE_PATH = "../suites"


# -- a database or Spark instead of files (data.engine: sql | spark) ----------------------


def _release(label: str, info: ValidationInfo) -> str:
    known = checkpoint_context(info).file_labels
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
    ctx = checkpoint_context(info)
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
    ctx = checkpoint_context(info)
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
        return checkpoint_context(info).resolve(_DEFAULT_PROJECT_DIR)
    path = checkpoint_context(info).resolve(handler(value))
    if path.exists() and not path.is_dir():
        raise problem(
            f"project_dir: {path} is a file, not a folder",
            "point project_dir to the folder of the Great Expectations project",
        )
    return path


#: Characters a URL holds only percent-encoded (RFC 3986); '"' or '<' would end an HTML attribute
#: or open a tag in the pages and messages that link to the site.
_URL_UNSAFE = frozenset('"<>`{}|\\^')


def _base_url(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https", "file") or (parts.scheme != "file" and not parts.netloc):
        raise problem("{where}: expected an http(s) or file URL (where the Data Docs site is published), got {got}",
                      'write it as base_url: "https://docs.example.org/er/"')
    bad = sorted({c for c in value if c in _URL_UNSAFE or c.isspace() or not c.isprintable()})
    if bad:
        raise problem("{where}: expected an http(s) or file URL (where the Data Docs site is published); it holds "
                      f"{', '.join(repr(c) for c in bad)}, characters a URL holds only percent-encoded",
                      "percent-encode them (a space is %20, '\"' is %22, '<' is %3C) or fix the URL")
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
        action._line = checkpoint_context(info).locations.get(f"actions[{index}]", (None, None))[0]
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
        Discriminator(data_kind),
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
        self._path, self._locations = checkpoint_context(info).path, checkpoint_context(info).locations
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
    ctx = CheckpointContext(path, node_locations(root))
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
    if isinstance(data, EngineData):  # tables of a database or Spark (er_expectations.run.data.engine); labels: a file
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
    tags = getattr(data, "tags", None)
    if tags is not None:
        for key in ("id_column", "kind_column", "tag_column", "records_column"):
            if getattr(tags, key) is not None:
                require(tags.path, "data.tags.path", getattr(tags, key), f"data.tags.{key}")
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
