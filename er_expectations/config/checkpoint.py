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

The structure is the pydantic model ``_Checkpoint`` (one field per section; a new section
is a new field), validated in one call so that every problem of the file is reported
together (see :mod:`.models`). Relative paths are resolved against the folder of the
checkpoint file. Loading checks
the file's own content and that the files it names exist; whether the named suites
and columns exist is checked by :func:`check_checkpoint_references`, which needs the
suites and a way to list a file's columns.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Discriminator,
    Field,
    Tag,
    ValidationInfo,
    field_validator,
)

from ..names import name_problem
from .errors import IssueCollector, did_you_mean, quote_list
from .models import ConfigModel, Text, name_list, node_locations, problem, validate_node
from .yamlnodes import Node, compose_file

__all__ = [
    "ACTIONS",
    "CHECKPOINT_KEYS",
    "RESERVED_ACTIONS",
    "TABLE_FORMATS",
    "ActionConfig",
    "BenchmarkSource",
    "CheckpointConfig",
    "DataSources",
    "NameSpec",
    "PredictionsSource",
    "ReleaseFile",
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


# -- models ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TableSource:
    """A table file (the records): absolute ``path``, ``format`` and its id column."""

    path: Path
    format: str
    id_column: str


@dataclass(frozen=True, slots=True)
class ReleaseFile:
    """The prediction file of one release, in the one-file-per-release layout."""

    label: str
    path: Path
    format: str


@dataclass(frozen=True, slots=True)
class PredictionsSource:
    """Where the predicted clusterings are.

    Wide layout (``layout == "wide"``): one file ``path`` with a column per release,
    selected by ``columns`` (a glob, an explicit tuple, or ``None`` for every column
    but the id). File layout (``layout == "files"``): ``files`` holds one file per
    release, each with the prediction in ``prediction_column``.
    """

    id_column: str
    path: Path | None = None
    format: str | None = None
    columns: str | tuple[str, ...] | None = None
    files: tuple[ReleaseFile, ...] = ()
    prediction_column: str | None = None
    batch_column: str | None = None

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


@dataclass(frozen=True, slots=True)
class BenchmarkSource:
    """The benchmark table: record id and true cluster id of the benchmark records."""

    path: Path
    format: str
    id_column: str
    reference_column: str


@dataclass(frozen=True, slots=True)
class NameSpec:
    """How the name column is built from the records: ``columns`` joined by ``separator``."""

    columns: tuple[str, ...]
    separator: str = " "
    output_column: str = "full_name"


@dataclass(frozen=True, slots=True)
class DataSources:
    """The ``data`` section of a checkpoint."""

    records: TableSource
    predictions: PredictionsSource
    benchmark: BenchmarkSource | None = None
    name: NameSpec | None = None


@dataclass(frozen=True, slots=True)
class ActionConfig:
    """An action to run after validation (e.g. ``build_data_docs``) and its options."""

    name: str
    options: dict[str, object] = field(default_factory=dict, hash=False)
    line: int | None = None


@dataclass(frozen=True, slots=True)
class CheckpointConfig:
    """A loaded checkpoint file.

    ``path`` is the file as given to the loader; every other path is absolute.
    ``releases`` is ``"all"`` or a tuple of release labels (wide layout: column names;
    file layout: keys of ``files``). ``suite_paths`` are the files and folders where the
    suites are looked up. ``locations`` maps a dotted key such as
    ``"data.records.id_column"`` or ``"suites[0]"`` to its ``(line, column)`` in the
    file, so later checks can point at the reference.
    """

    name: str
    path: Path
    project_dir: Path
    data: DataSources
    releases: str | tuple[str, ...]
    suites: tuple[str, ...]
    suite_paths: tuple[Path, ...]
    actions: tuple[ActionConfig, ...] = ()
    locations: dict[str, tuple[int, int]] = field(
        default_factory=dict, hash=False, compare=False, repr=False
    )

    def location(self, key: str) -> tuple[int | None, int | None]:
        """``(line, column)`` of a dotted key, or ``(None, None)`` if unknown."""
        return self.locations.get(key, (None, None))


# -- the file's structure ----------------------------------------------------------------


class _Context:
    """What the validators of one checkpoint file share: its folder and the release labels."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.file_labels: list[str] | None = None  # keys of data.predictions.files

    def resolve(self, text: str) -> Path:
        path = Path(text).expanduser()
        return (path if path.is_absolute() else self.base / path).resolve()


def _ctx(info: ValidationInfo) -> _Context:
    return info.context["checkpoint"]  # type: ignore[index]


def _table_file(value: str, info: ValidationInfo) -> tuple[Path, str | None]:
    """An existing table file: its resolved path and its format (from ``format`` or the suffix)."""
    ctx = _ctx(info)
    path = ctx.resolve(value)
    fmt = info.data.get("format") or TABLE_FORMATS.get(path.suffix.lower())
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
    return path, fmt


_TableFile = Annotated[Text, AfterValidator(_table_file)]
_Format = Literal["parquet", "csv"]


class _Records(ConfigModel):
    example: ClassVar[str] = "records: {path: <file>, id_column: <column>}"
    format: _Format | None = None  # before 'path': the path's validator reads it
    path: _TableFile
    id_column: Text


class _Benchmark(ConfigModel):
    example: ClassVar[str] = "benchmark: {path: <file>, id_column: <column>, reference_column: <column>}"
    format: _Format | None = None
    path: _TableFile
    id_column: Text
    reference_column: Text


#: ``columns`` of the wide layout: a glob over the column names, or a list of them.
_Columns = Annotated[
    Annotated[Text, Tag("glob")] | Annotated[name_list("column name"), Tag("list")],
    Discriminator(lambda value: "glob" if isinstance(value, str) else "list"),
]


_PREDICTIONS_EXAMPLE = (
    'predictions: {path: <file>, id_column: <column>, columns: "<glob>"} or '
    "predictions: {files: {<release>: <file>}, id_column: <column>, prediction_column: <column>}"
)


class _WidePredictions(ConfigModel):
    """One file with a column per release."""

    example: ClassVar[str] = _PREDICTIONS_EXAMPLE
    misplaced: ClassVar[dict[str, tuple[str, str]]] = {
        "prediction_column": (
            "'prediction_column' goes with 'files'; with 'path' the release columns are chosen "
            "by 'columns'",
            "replace it by 'columns: \"<glob>\"' or a list of column names",
        ),
    }
    format: _Format | None = None
    path: _TableFile
    id_column: Text
    columns: _Columns | None = None
    batch_column: Text | None = None


def _some_files(files: dict[str, Any]) -> dict[str, Any]:
    if not files:
        raise problem("{where}: no release files given", "list one file per release")
    return files


class _FilePredictions(ConfigModel):
    """One file per release, the prediction in ``prediction_column``."""

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
    format: _Format | None = None
    files: Annotated[dict[str, _TableFile], AfterValidator(_some_files)]
    id_column: Text
    prediction_column: Text = Field(description="needed with 'files'")
    batch_column: Text | None = None


class _Name(ConfigModel):
    example: ClassVar[str] = 'name: {columns: [<first name column>, <last name column>], separator: " "}'
    columns: name_list("column name")
    separator: str = " "
    output_column: Text = "full_name"


def _layout(data: Any) -> str:
    return "one file per release" if isinstance(data, dict) and "files" in data else "one wide file"


class _Data(ConfigModel):
    example: ClassVar[str] = "data: {records: {...}, predictions: {...}, benchmark: {...}}"
    records: _Records
    predictions: Annotated[
        Annotated[_WidePredictions, Tag("one wide file")]
        | Annotated[_FilePredictions, Tag("one file per release")],
        Discriminator(_layout),
    ]
    benchmark: _Benchmark | None = None
    name: _Name | None = None

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


def _release(label: str, info: ValidationInfo) -> str:
    known = _ctx(info).file_labels
    if known is not None and label not in known:
        raise problem(
            f"releases: '{label}' is not a key of data.predictions.files",
            did_you_mean(label, known, list_all_below=20),
        )
    return label


def _all_or_list(value: Any) -> Any:
    if value == "all":
        return None
    if not isinstance(value, list | dict):
        hint = did_you_mean(str(value), ("all",))
        raise problem(
            "{where}: expected 'all' or a list of release labels, got {got}",
            hint or f"write releases: [{value}] for a single release",
        )
    return value


def _suite_path(text: str, info: ValidationInfo) -> str:
    ctx = _ctx(info)
    path = ctx.resolve(text)
    if not path.exists():
        raise problem(
            f"suite_paths: not found: {path}", f"relative paths are resolved against {ctx.base}"
        )
    return text


def _checkpoint_name(name: str) -> str:
    found = name_problem(name, what="checkpoint")
    if found is not None:
        raise problem(*found)
    return name


def _project_dir(text: str, info: ValidationInfo) -> str:
    path = _ctx(info).resolve(text)
    if path.exists() and not path.is_dir():
        raise problem(
            f"project_dir: {path} is a file, not a folder",
            "point project_dir to the folder of the Great Expectations project",
        )
    return text


class _BuildDataDocs(ConfigModel):
    """Options of the ``build_data_docs`` action."""

    unknown_key: ClassVar[str] = "unknown option '{key}' for action build_data_docs"
    site_name: Text | None = None


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


class _Action(ConfigModel):
    """One entry of ``actions``: a field per action, holding its options."""

    unknown_key: ClassVar[str] = "unknown action '{key}'"
    build_data_docs: _BuildDataDocs | None = None


class _Checkpoint(ConfigModel):
    """A checkpoint file. A new section of the file is a new field here."""

    section: ClassVar[str] = "the checkpoint file"
    example: ClassVar[str] = "'checkpoint: <name>', 'data: ...' and 'suites: [...]'"
    checkpoint: Annotated[Text, AfterValidator(_checkpoint_name)]
    project_dir: Annotated[Text, AfterValidator(_project_dir)] = _DEFAULT_PROJECT_DIR
    data: _Data
    releases: Annotated[
        name_list("release label", check=_release) | None, BeforeValidator(_all_or_list)
    ] = None
    suites: name_list("suite name")
    suite_paths: name_list("path", check=_suite_path) | None = None
    actions: list[Annotated[_Action, BeforeValidator(_action_entry)]] = []


#: Top-level keys of a checkpoint file.
CHECKPOINT_KEYS: tuple[str, ...] = tuple(_Checkpoint.model_fields)
#: Action name -> the options it accepts.
ACTIONS: dict[str, tuple[str, ...]] = {
    name: tuple(field.annotation.__args__[0].model_fields)  # type: ignore[union-attr]
    for name, field in _Action.model_fields.items()
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
    ctx = _Context(path.absolute().parent)
    model = validate_node(_Checkpoint, root, issues, context={"checkpoint": ctx})
    if not isinstance(model, _Checkpoint) or issues:
        return None
    locations = node_locations(root)
    data = model.data
    predictions = data.predictions
    if isinstance(predictions, _WidePredictions):
        source = PredictionsSource(
            id_column=predictions.id_column,
            path=predictions.path[0],
            format=predictions.path[1],
            columns=predictions.columns,
            batch_column=predictions.batch_column,
        )
    else:
        source = PredictionsSource(
            id_column=predictions.id_column,
            files=tuple(
                ReleaseFile(label=label, path=file[0], format=file[1])  # type: ignore[arg-type]
                for label, file in predictions.files.items()
            ),
            prediction_column=predictions.prediction_column,
            format=predictions.format,
            batch_column=predictions.batch_column,
        )
    records, bench, name = data.records, data.benchmark, data.name
    default_suites = ctx.resolve(_DEFAULT_SUITE_PATH)
    suite_paths = [ctx.resolve(text) for text in model.suite_paths or ()] or [default_suites]
    if default_suites.exists() and default_suites not in suite_paths:
        suite_paths.append(default_suites)
    return CheckpointConfig(
        name=model.checkpoint,
        path=path,
        project_dir=ctx.resolve(model.project_dir),
        data=DataSources(
            records=TableSource(
                path=records.path[0], format=records.path[1], id_column=records.id_column  # type: ignore[arg-type]
            ),
            predictions=source,
            benchmark=None
            if bench is None
            else BenchmarkSource(
                path=bench.path[0],
                format=bench.path[1],  # type: ignore[arg-type]
                id_column=bench.id_column,
                reference_column=bench.reference_column,
            ),
            name=None
            if name is None
            else NameSpec(
                columns=name.columns, separator=name.separator, output_column=name.output_column
            ),
        ),
        releases="all" if model.releases is None else model.releases,
        suites=model.suites,
        suite_paths=tuple(suite_paths),
        actions=tuple(
            ActionConfig(
                name=(chosen := next(iter(action.model_fields_set))),
                options=getattr(action, chosen).model_dump(exclude_none=True),
                line=locations.get(f"actions[{index}]", (None, None))[0],
            )
            for index, action in enumerate(model.actions)
        ),
        locations=locations,
    )


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
