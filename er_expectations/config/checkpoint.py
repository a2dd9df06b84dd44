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

Relative paths are resolved against the folder of the checkpoint file. Loading checks
the file's own content and that the files it names exist; whether the named suites
and columns exist is checked by :func:`check_checkpoint_references`, which needs the
suites and a way to list a file's columns.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..names import name_problem
from .errors import IssueCollector, close_matches, did_you_mean, quote_list
from .schema import ParamSpec
from .values import ValueProblem, convert_param
from .yamlnodes import Node, compose_file, describe, key_name

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

#: Top-level keys of a checkpoint file.
CHECKPOINT_KEYS: tuple[str, ...] = (
    "checkpoint",
    "project_dir",
    "data",
    "releases",
    "suites",
    "suite_paths",
    "actions",
)
_DATA_KEYS: tuple[str, ...] = ("records", "predictions", "benchmark", "name")
_RECORDS_KEYS: tuple[str, ...] = ("path", "id_column", "format")
_PREDICTIONS_KEYS: tuple[str, ...] = (
    "path",
    "files",
    "id_column",
    "columns",
    "prediction_column",
    "batch_column",
    "format",
)
_BENCHMARK_KEYS: tuple[str, ...] = ("path", "id_column", "reference_column", "format")
_NAME_KEYS: tuple[str, ...] = ("columns", "separator", "output_column")

#: File suffix -> table format.
TABLE_FORMATS: dict[str, str] = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv"}
_FORMATS: tuple[str, ...] = ("parquet", "csv")
#: Action name -> the options it accepts.
ACTIONS: dict[str, tuple[str, ...]] = {"build_data_docs": ("site_name",)}
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
    """Validate a composed checkpoint document; problems go to ``issues``."""
    return _Reader(path, issues).checkpoint(root)


class _Reader:
    """Reads a checkpoint document, recording problems and the position of every reference."""

    def __init__(self, path: Path, issues: IssueCollector) -> None:
        self.path = path
        self.base = path.absolute().parent
        self.issues = issues
        self.locations: dict[str, tuple[int, int]] = {}
        self.file_labels: list[str] | None = None  # release labels of data.predictions.files

    # -- generic pieces ----------------------------------------------------------------
    def note(self, key: str, node: Node) -> None:
        self.locations[key] = (node.line, node.column)

    def mapping(
        self, node: Node, where: str, allowed: Sequence[str], required: Sequence[str], example: str
    ) -> Node | None:
        """Check that ``node`` is a mapping with known keys and the required ones."""
        if node.kind != "mapping":
            if node.kind != "invalid":
                self.issues.add(
                    node,
                    f"{where}: expected a mapping, got {describe(node)}",
                    f"write it as {example}",
                )
            return None
        misspelt: set[str] = set()
        for key, key_node, _ in node.items():
            if key not in allowed:
                misspelt.update(close_matches(key, allowed))
                self.issues.add(
                    key_node,
                    f"unknown key '{key}' in {where}",
                    did_you_mean(key, allowed, list_all_below=12),
                )
        for key in required:
            value = node.get(key)
            if (value is None and key not in misspelt) or (value is not None and value.is_null):
                self.issues.add(
                    value or node,
                    f"{where}: missing required key '{key}'",
                    f"write it as {example}",
                )
        return node

    def text(self, parent: Node, key: str, where: str, *, allow_empty: bool = False) -> str | None:
        """The text value of ``parent[key]`` (``None`` if absent, null or wrong)."""
        node = parent.get(key)
        if node is None or node.is_null:
            return None
        return self.text_node(node, where, allow_empty=allow_empty)

    def text_node(self, node: Node, where: str, *, allow_empty: bool = False) -> str | None:
        self.note(where, node)
        if allow_empty and node.is_str:
            return node.value  # type: ignore[return-value]
        try:
            return convert_param(ParamSpec(where, "str"), node)  # type: ignore[return-value]
        except ValueProblem as problem:
            if node.kind != "invalid":
                self.issues.add(node, problem.message, problem.hint)
            return None

    def names(self, node: Node, where: str, what: str) -> tuple[str, ...] | None:
        """A list of names (a single name is accepted); positions go to ``locations``."""
        if node.kind == "scalar" and not node.is_null:
            single = self.label(node, where, what)
            if single is None:
                return None
            self.note(f"{where}[0]", node)
            return (single,)
        if node.kind != "sequence":
            if node.kind != "invalid":
                self.issues.add(
                    node,
                    f"{where}: expected a list of {what}s, got {describe(node)}",
                    f"write {where.rsplit('.', 1)[-1]}: [<{what}>, ...]",
                )
            return None
        result: list[str] = []
        for index, item in enumerate(node.elements()):
            label = self.label(item, f"{where}[{index}]", what)
            if label is None:
                continue
            if label in result:
                self.issues.add(item, f"{where}: '{label}' is listed twice", "list it once")
                continue
            self.note(f"{where}[{index}]", item)
            result.append(label)
        if not result and not node.elements():
            self.issues.add(node, f"{where}: the list is empty", f"name at least one {what}")
        return tuple(result)

    def label(self, node: Node, where: str, what: str) -> str | None:
        """A name written as a scalar; numbers and dates are taken as written."""
        if node.kind != "scalar" or node.is_null:
            if node.kind != "invalid":
                self.issues.add(
                    node,
                    f"{where}: expected a {what}, got {describe(node)}",
                    f"write the {what} as text",
                )
            return None
        value = node.value if isinstance(node.value, str) else node.text
        if not value.strip():
            self.issues.add(node, f"{where}: expected a {what}, got an empty string")
            return None
        return value

    def resolve(self, text: str) -> Path:
        path = Path(text).expanduser()
        return (path if path.is_absolute() else self.base / path).resolve()

    def table_format(self, path: Path, explicit: str | None, node: Node, where: str) -> str | None:
        if explicit is not None:
            return explicit
        fmt = TABLE_FORMATS.get(path.suffix.lower())
        if fmt is None:
            shown = f"'{path.suffix}'" if path.suffix else "no suffix"
            self.issues.add(
                node,
                f"{where}: unknown table type ({shown}) for {path}",
                "use a .parquet or .csv file, or add 'format: parquet' or 'format: csv'",
            )
        return fmt

    def file(
        self, node: Node | None, where: str, explicit_format: str | None
    ) -> tuple[Path, str] | None:
        """An existing table file: resolved path and format, or ``None`` after an issue."""
        if node is None or node.is_null:
            return None
        text = self.text_node(node, where)
        if text is None:
            return None
        self.note(where, node)
        path = self.resolve(text)
        fmt = self.table_format(path, explicit_format, node, where)
        if not path.exists():
            self.issues.add(
                node,
                f"{where}: file not found: {path}",
                f"relative paths are resolved against {self.base}",
            )
            return None
        if path.is_dir() and fmt != "parquet":
            self.issues.add(
                node,
                f"{where}: {path} is a folder, not a {fmt or 'table'} file",
                "point to a file; a folder is accepted only as a parquet dataset",
            )
            return None
        return (path, fmt) if fmt is not None else None

    def format_key(self, section: Node, where: str) -> str | None:
        node = section.get("format")
        if node is None or node.is_null:
            return None
        self.note(f"{where}.format", node)
        try:
            return convert_param(ParamSpec(f"{where}.format", "choice", choices=_FORMATS), node)  # type: ignore[return-value]
        except ValueProblem as problem:
            self.issues.add(node, problem.message, problem.hint)
            return None

    # -- sections ----------------------------------------------------------------------
    def checkpoint(self, root: Node) -> CheckpointConfig | None:
        if root.kind != "mapping":
            if root.kind != "invalid":
                self.issues.add(
                    root,
                    f"a checkpoint file must be a mapping, got {describe(root)}",
                    "start the file with 'checkpoint: <name>'",
                )
            return None
        self.mapping(
            root,
            "the checkpoint file",
            CHECKPOINT_KEYS,
            ("checkpoint", "data", "suites"),
            "'checkpoint: <name>', 'data: ...' and 'suites: [...]'",
        )
        name = self.text(root, "checkpoint", "checkpoint")
        if name is not None and (problem := name_problem(name, what="checkpoint")) is not None:
            self.issues.add(root.get("checkpoint"), *problem)
            name = None
        project_dir = self.project_dir(root)
        data = self.data(root.get("data"))
        releases = self.releases(root.get("releases"))
        suites_node = root.get("suites")
        suites = None
        if suites_node is not None and not suites_node.is_null:
            self.note("suites", suites_node)
            suites = self.names(suites_node, "suites", "suite name")
        suite_paths = self.suite_paths(root.get("suite_paths"))
        actions = self.actions(root.get("actions"))
        if self.issues or None in (name, data, releases, suites, suite_paths, actions):
            return None
        if not (name is not None and data is not None and releases is not None):  # invariant, kept under python -O
            raise RuntimeError("er-expectations internal error: expected name is not None and data is not None and releases is not None")
        if not (suites is not None and suite_paths is not None and actions is not None):  # invariant, kept under python -O
            raise RuntimeError("er-expectations internal error: expected suites is not None and suite_paths is not None and actions is not None")
        return CheckpointConfig(
            name=name,
            path=self.path,
            project_dir=project_dir,
            data=data,
            releases=releases,
            suites=suites,
            suite_paths=suite_paths,
            actions=actions,
            locations=self.locations,
        )

    def project_dir(self, root: Node) -> Path:
        text = self.text(root, "project_dir", "project_dir")
        path = self.resolve(text if text is not None else _DEFAULT_PROJECT_DIR)
        node = root.get("project_dir")
        if node is not None and text is not None and path.exists() and not path.is_dir():
            self.issues.add(
                node,
                f"project_dir: {path} is a file, not a folder",
                "point project_dir to the folder of the Great Expectations project",
            )
        return path

    def data(self, node: Node | None) -> DataSources | None:
        if node is None or node.is_null:
            return None  # reported as a missing required key
        example = "data: {records: {...}, predictions: {...}, benchmark: {...}}"
        if self.mapping(node, "data", _DATA_KEYS, ("records", "predictions"), example) is None:
            return None
        records = self.records(node.get("records"))
        predictions = self.predictions(node.get("predictions"))
        benchmark = self.benchmark(node.get("benchmark"))
        name = self.name_spec(node.get("name"))
        if records is None or predictions is None:
            return None
        return DataSources(records=records, predictions=predictions, benchmark=benchmark, name=name)

    def records(self, node: Node | None) -> TableSource | None:
        if node is None or node.is_null:
            return None
        example = "records: {path: <file>, id_column: <column>}"
        if (
            self.mapping(node, "data.records", _RECORDS_KEYS, ("path", "id_column"), example)
            is None
        ):
            return None
        fmt = self.format_key(node, "data.records")
        file = self.file(node.get("path"), "data.records.path", fmt)
        id_column = self.text(node, "id_column", "data.records.id_column")
        if file is None or id_column is None:
            return None
        return TableSource(path=file[0], format=file[1], id_column=id_column)

    def predictions(self, node: Node | None) -> PredictionsSource | None:
        if node is None or node.is_null:
            return None
        where = "data.predictions"
        example = (
            'predictions: {path: <file>, id_column: <column>, columns: "<glob>"} or '
            "predictions: {files: {<release>: <file>}, id_column: <column>, prediction_column: <column>}"
        )
        if self.mapping(node, where, _PREDICTIONS_KEYS, ("id_column",), example) is None:
            return None
        path_node, files_node = node.get("path"), node.get("files")
        has_path = path_node is not None and not path_node.is_null
        has_files = files_node is not None and not files_node.is_null
        fmt = self.format_key(node, where)
        id_column = self.text(node, "id_column", f"{where}.id_column")
        if has_path and has_files:
            self.issues.add(
                node.key("files"),
                f"{where}: give either 'path' (one wide file) or "
                "'files' (one file per release), not both",
                "remove one of them",
            )
            return None
        if not has_path and not has_files:
            self.issues.add(
                node,
                f"{where}: missing 'path' (one wide file) or 'files' (one file per release)",
                f"write it as {example}",
            )
            return None
        if has_path:
            return self.wide_predictions(node, id_column, fmt)
        return self.file_predictions(node, id_column, fmt)

    def wide_predictions(
        self, node: Node, id_column: str | None, fmt: str | None
    ) -> PredictionsSource | None:
        where = "data.predictions"
        misplaced = node.key("prediction_column")
        if misplaced is not None:
            self.issues.add(
                misplaced,
                f"{where}: 'prediction_column' goes with 'files'; with 'path' "
                "the release columns are chosen by 'columns'",
                "replace it by 'columns: \"<glob>\"' or a list of column names",
            )
        file = self.file(node.get("path"), f"{where}.path", fmt)
        columns: str | tuple[str, ...] | None = None
        columns_node = node.get("columns")
        ok = True
        if columns_node is not None and not columns_node.is_null:
            self.note(f"{where}.columns", columns_node)
            if columns_node.kind == "scalar":
                columns = self.text(node, "columns", f"{where}.columns")
                ok = columns is not None
            else:
                columns = self.names(columns_node, f"{where}.columns", "column name")
                ok = bool(columns)
        batch_column = self.text(node, "batch_column", f"{where}.batch_column")
        if file is None or id_column is None or misplaced is not None or not ok:
            return None
        return PredictionsSource(id_column=id_column, path=file[0], format=file[1], columns=columns,
                                 batch_column=batch_column)

    def file_predictions(
        self, node: Node, id_column: str | None, fmt: str | None
    ) -> PredictionsSource | None:
        where = "data.predictions"
        misplaced = node.key("columns")
        if misplaced is not None:
            self.issues.add(
                misplaced,
                f"{where}: 'columns' goes with 'path' (one wide file); with "
                "'files' each file has its prediction in 'prediction_column'",
                "replace it by 'prediction_column: <column>'",
            )
        prediction_column = self.text(node, "prediction_column", f"{where}.prediction_column")
        if prediction_column is None and node.get("prediction_column") is None:
            self.issues.add(
                node,
                f"{where}: missing required key 'prediction_column' (needed with 'files')",
                "add 'prediction_column: <column with the predicted cluster id>'",
            )
        files_node = node.get("files")
        if not (files_node is not None):  # invariant, kept under python -O
            raise RuntimeError("er-expectations internal error: expected files_node is not None")
        self.note(f"{where}.files", files_node)
        files: list[ReleaseFile] = []
        ok = True
        if files_node.kind != "mapping":
            if files_node.kind != "invalid":
                self.issues.add(
                    files_node,
                    f"{where}.files: expected a mapping of release label: file, "
                    f"got {describe(files_node)}",
                    'write files: {"2022-06-30": <file>, "2021-12-30": <file>}',
                )
            ok = False
        else:
            self.file_labels = [label for label, _, _ in files_node.items()]
            for _, key_node, value in files_node.items():
                label = key_name(key_node)
                spot = f"{where}.files.{label}"
                self.note(f"{spot}.label", key_node)
                found = self.file(value, spot, fmt)
                if found is None:
                    ok = False
                    continue
                files.append(ReleaseFile(label=label, path=found[0], format=found[1]))
            if not files_node.value:
                self.issues.add(
                    files_node,
                    f"{where}.files: no release files given",
                    "list one file per release",
                )
                ok = False
        if not ok or id_column is None or prediction_column is None or misplaced is not None:
            return None
        batch_column = self.text(node, "batch_column", f"{where}.batch_column")
        return PredictionsSource(
            id_column=id_column, files=tuple(files), prediction_column=prediction_column, format=fmt,
            batch_column=batch_column,
        )

    def benchmark(self, node: Node | None) -> BenchmarkSource | None:
        if node is None or node.is_null:
            return None
        where = "data.benchmark"
        example = "benchmark: {path: <file>, id_column: <column>, reference_column: <column>}"
        if (
            self.mapping(
                node, where, _BENCHMARK_KEYS, ("path", "id_column", "reference_column"), example
            )
            is None
        ):
            return None
        fmt = self.format_key(node, where)
        file = self.file(node.get("path"), f"{where}.path", fmt)
        id_column = self.text(node, "id_column", f"{where}.id_column")
        reference_column = self.text(node, "reference_column", f"{where}.reference_column")
        if file is None or id_column is None or reference_column is None:
            return None
        return BenchmarkSource(
            path=file[0], format=file[1], id_column=id_column, reference_column=reference_column
        )

    def name_spec(self, node: Node | None) -> NameSpec | None:
        if node is None or node.is_null:
            return None
        where = "data.name"
        example = 'name: {columns: [<first name column>, <last name column>], separator: " "}'
        if self.mapping(node, where, _NAME_KEYS, ("columns",), example) is None:
            return None
        columns_node = node.get("columns")
        columns = None
        if columns_node is not None and not columns_node.is_null:
            self.note(f"{where}.columns", columns_node)
            columns = self.names(columns_node, f"{where}.columns", "column name")
        separator = " "
        separator_node = node.get("separator")
        if separator_node is not None and not separator_node.is_null:
            found = self.text(node, "separator", f"{where}.separator", allow_empty=True)
            if found is None:
                return None
            separator = found
        output = self.text(node, "output_column", f"{where}.output_column")
        if not columns:
            return None
        return NameSpec(columns=columns, separator=separator, output_column=output or "full_name")

    def releases(self, node: Node | None) -> str | tuple[str, ...] | None:
        if node is None or node.is_null:
            return "all"
        self.note("releases", node)
        if node.kind == "scalar":
            if node.value == "all":
                return "all"
            hint = did_you_mean(str(node.text), ("all",))
            self.issues.add(
                node,
                f"releases: expected 'all' or a list of release labels, got {describe(node)}",
                hint or f"write releases: [{node.text}] for a single release",
            )
            return None
        labels = self.names(node, "releases", "release label")
        if labels is None:
            return None
        if self.file_labels is not None:
            known = self.file_labels
            for index, label in enumerate(labels):
                if label not in known:
                    spot = node.elements()[index] if index < len(node.elements()) else node
                    self.issues.add(
                        spot,
                        f"releases: '{label}' is not a key of data.predictions.files",
                        did_you_mean(label, known, list_all_below=20),
                    )
        return labels

    def suite_paths(self, node: Node | None) -> tuple[Path, ...] | None:
        default = self.resolve(_DEFAULT_SUITE_PATH)
        if node is None or node.is_null:
            return (default,)
        self.note("suite_paths", node)
        texts = self.names(node, "suite_paths", "path")
        if texts is None:
            return None
        items = node.elements() if node.kind == "sequence" else (node,)
        paths: list[Path] = []
        ok = True
        for index, text in enumerate(texts):
            path = self.resolve(text)
            spot = items[index] if index < len(items) else node
            if not path.exists():
                self.issues.add(
                    spot,
                    f"suite_paths: not found: {path}",
                    f"relative paths are resolved against {self.base}",
                )
                ok = False
            paths.append(path)
        if default.exists() and default not in paths:
            paths.append(default)
        return tuple(paths) if ok else None

    def actions(self, node: Node | None) -> tuple[ActionConfig, ...] | None:
        if node is None or node.is_null:
            return ()
        if node.kind != "sequence":
            if node.kind != "invalid":
                self.issues.add(
                    node,
                    f"actions: expected a list, got {describe(node)}",
                    "write actions: [build_data_docs]",
                )
            return None
        actions: list[ActionConfig] = []
        ok = True
        for index, item in enumerate(node.elements()):
            action = self.action(item, index)
            if action is None:
                ok = False
            else:
                actions.append(action)
        return tuple(actions) if ok else None

    def action(self, item: Node, index: int) -> ActionConfig | None:
        where = f"actions[{index}]"
        options_node: Node | None = None
        if item.kind == "mapping":
            entries = list(item.items())
            if len(entries) != 1:
                self.issues.add(
                    item,
                    f"{where}: an action with options is a mapping with one key, "
                    f"the action name; got {len(entries)} keys",
                    "write '- build_data_docs: {site_name: local_site}'",
                )
                return None
            name, name_node, options_node = entries[0]
        elif item.is_str:
            name, name_node = str(item.value), item
        else:
            if item.kind != "invalid":
                self.issues.add(
                    item,
                    f"{where}: expected an action name, got {describe(item)}",
                    f"write one of {quote_list(ACTIONS)}",
                )
            return None
        self.note(where, name_node)
        if name in RESERVED_ACTIONS:
            self.issues.add(
                name_node,
                f"action '{name}' is not available yet in this version",
                f"remove it; available actions: {quote_list(ACTIONS)}",
            )
            return None
        if name not in ACTIONS:
            self.issues.add(
                name_node,
                f"unknown action '{name}'",
                did_you_mean(name, tuple(ACTIONS), list_all_below=10),
            )
            return None
        options: dict[str, object] = {}
        if options_node is not None and not options_node.is_null:
            allowed = ACTIONS[name]
            if options_node.kind != "mapping":
                if options_node.kind != "invalid":
                    self.issues.add(
                        options_node,
                        f"{where}: the options of {name} must be a mapping, "
                        f"got {describe(options_node)}",
                        f"write '- {name}: {{{allowed[0]}: ...}}'",
                    )
                return None
            ok = True
            for key, key_node, value in options_node.items():
                if key not in allowed:
                    self.issues.add(
                        key_node,
                        f"unknown option '{key}' for action {name}",
                        did_you_mean(key, allowed, list_all_below=10),
                    )
                    ok = False
                    continue
                text = self.text(options_node, key, f"{where}.{key}")
                if text is None and not value.is_null:
                    ok = False
                elif text is not None:
                    options[key] = text
            if not ok:
                return None
        return ActionConfig(name=name, options=options, line=name_node.line)


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
