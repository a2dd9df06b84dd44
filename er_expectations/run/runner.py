"""Run a checkpoint file end to end: release tables, GX validation, Data Docs.

:func:`run_checkpoint` works in two phases so that a bad configuration or bad data
leaves the Great Expectations project untouched:

1. *Checks, read-only.* Load the checkpoint and its suites, check every reference
   (suites, files, columns), check that every column a suite names is a column the
   release tables will have, select the releases, check the existing project (every
   expectation type of its stored suites must be registered, see the GX notes, surprise
   1) and build every release table in memory.
2. *Writes.* Write each release table as Parquet under
   ``<project_dir>/er_data/<checkpoint>/<release>.parquet`` (atomically), open or create
   the GX file context, add or update the datasource, asset, batch definitions, suites,
   validation definitions and one GX checkpoint per release, run them one release at a
   time under one run name, and make the Data Docs readable offline.

A checkpoint whose tables are in a database or Spark (``data.engine: sql | spark``) writes no
table: phase 1 opens and checks the source (:mod:`er_expectations.run.sources`) and builds each
release's batch there, a SQL query (one GX query asset per release) or a Spark DataFrame (one
GX dataframe asset per release, passed to ``Checkpoint.run`` as ``batch_parameters``).

Everything in phase 2 is "add or update", so running the same file again updates the
project in place. Configuration problems raise :class:`ConfigError` (every issue with
file, line and hint); data problems raise :class:`InputError`.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import re
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from er_expectations.config import (
    CheckpointConfig,
    ConfigError,
    ConfigIssue,
    ExpectationConfig,
    SuiteConfig,
    check_checkpoint_references,
    load_checkpoint,
    load_suites,
)
from er_expectations.config.checkpoint import DataSources, EngineData
from er_expectations.config.errors import IssueCollector, did_you_mean, quote_list
from er_expectations.core.errors import InputError, ProjectBusyError
from er_expectations.core.io import atomic_write, remove_stale_temporaries, table_columns
from er_expectations.core.names import ensure_inside, release_file_names
from er_expectations.core.severity import Status, status_of, worst_status
from er_expectations.gx.expectations import (
    COLUMN_PARAMETERS as _COLUMN_PARAMS,  # as the expectation models mark them
)
from er_expectations.gx.expectations import RECORD_COLUMN_PARAMETERS as _RECORD_PARAMS
from er_expectations.gx.outcome import ExpectationOutcome, expectation_label
from er_expectations.gx.outcome import outcome as read_outcome
from er_expectations.run.alerts.targets import AlertTarget, resolve_alerts
from er_expectations.run.baselines import (
    BaselineNeed,
    baseline_needs,
    check_baselines,
    release_frames,
)
from er_expectations.run.labelling import (
    LabelsData,
    labels_checkpoint_issues,
    labels_column_hint,
    suite_kind_issues,
)
from er_expectations.run.releases import ReleaseData
from er_expectations.run.sources import EngineReleases

__all__ = [
    "ASSET_NAME",
    "DATA_FOLDER",
    "CONFIG_BACKUP",
    "LOCK_FILE",
    "ExpectationOutcome",
    "PreparedRun",
    "ReleaseOutcome",
    "RunReport",
    "check_batch_columns",
    "expectation_label",
    "open_project",
    "prepare_run",
    "project_lock",
    "run_checkpoint",
]

#: Folder of the project (next to ``gx/``) that holds the release tables.
DATA_FOLDER = "er_data"
#: Lock file of a project (one run at a time, see :func:`project_lock`).
LOCK_FILE = ".er-expectations.lock"
#: Name of the Parquet asset of every checkpoint datasource.
ASSET_NAME = "releases"
_DEFAULT_SITE = "local_site"

log = logging.getLogger(__name__)


# -- the report --------------------------------------------------------------------------




@dataclass(slots=True)
class ReleaseOutcome:
    """What GX found on one release, all suites of the checkpoint together."""

    label: str
    key: str
    gx_checkpoint: str
    evaluated: int = 0
    successful: int = 0
    failed: int = 0
    expectations: list[ExpectationOutcome] = field(default_factory=list)
    result_files: list[Path] = field(default_factory=list)
    pages: list[str] = field(default_factory=list)

    @property
    def errors(self) -> list[ExpectationOutcome]:
        """Expectations that raised (could not be computed), whatever their severity."""
        return [e for e in self.expectations if e.error]

    @property
    def failures(self) -> list[ExpectationOutcome]:
        """Every failed expectation that did not raise, whatever its severity."""
        return [e for e in self.expectations if not e.success and not e.error]

    @property
    def critical_failures(self) -> list[ExpectationOutcome]:
        """Failed expectations of severity ``critical``: these fail the release."""
        return [e for e in self.failures if e.severity == "critical"]

    @property
    def warnings(self) -> list[ExpectationOutcome]:
        """Failed expectations of severity ``warning`` or ``info``: reported, not failing."""
        return [e for e in self.failures if e.severity != "critical"]

    @property
    def status(self) -> Status:
        """``failed``, ``error``, ``warnings`` or ``passed`` by the severity rule (:mod:`er_expectations.core.severity`)."""
        return status_of(critical_failed=len(self.critical_failures), errors=len(self.errors),
                         warnings_failed=len(self.warnings))

    @property
    def success(self) -> bool:
        """True when no critical expectation failed and no expectation raised."""
        return self.status in ("passed", "warnings")


@dataclass(slots=True)
class RunReport:
    """The outcome of :func:`run_checkpoint`."""

    checkpoint: str
    checkpoint_path: Path
    project_dir: Path
    run_name: str
    run_time: datetime
    suites: tuple[str, ...]
    releases: list[ReleaseOutcome] = field(default_factory=list)
    data_docs_index: Path | None = None
    elapsed: float = 0.0
    #: What became of each alert action (sent, not needed, or not delivered and why).
    alerts: list[Any] = field(default_factory=list)
    #: What one batch is: a "release", or the "labels file" of a labelling checkpoint.
    unit: str = "release"

    #: One line on the history store (``None`` when disabled); ``history_problem`` when it
    #: could not be written (the results and Data Docs are kept; exit code 6).
    history: str | None = None
    history_problem: str | None = None

    @property
    def status(self) -> Status:
        """The worst status of its releases (``passed`` for none)."""
        return worst_status(r.status for r in self.releases)

    @property
    def success(self) -> bool:
        """True when every release passed all its critical expectations and none raised."""
        return all(r.success for r in self.releases)

    @property
    def errors(self) -> list[str]:
        """Expectations that raised, one line each (``release: label (severity): error: ...``)."""
        return [f"{r.label}: {e.describe()}" for r in self.releases for e in r.errors]

    @property
    def failed_releases(self) -> list[ReleaseOutcome]:
        return [r for r in self.releases if not r.success]

    @property
    def warnings(self) -> list[str]:
        """Failed expectations of severity warning or info, one line each (not failures)."""
        return [f"{r.label}: {e.describe()}" for r in self.releases for e in r.warnings]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe summary (for scripts and tests)."""
        return {
            "checkpoint": self.checkpoint,
            "project_dir": str(self.project_dir),
            "run_name": self.run_name,
            "run_time": self.run_time.isoformat(),
            "success": self.success,
            "status": self.status,
            "data_docs_index": str(self.data_docs_index) if self.data_docs_index else None,
            "history": self.history,
            "history_problem": self.history_problem,
            "releases": [
                {
                    "label": r.label,
                    "success": r.success,
                    "status": r.status,
                    "evaluated": r.evaluated,
                    "successful": r.successful,
                    "failed": r.failed,
                    "critical_failures": [e.label for e in r.critical_failures],
                    "errors": [e.describe() for e in r.errors],
                    "warnings": [e.describe() for e in r.warnings],
                }
                for r in self.releases
            ],
            "alerts": [alert.to_dict() for alert in self.alerts],
        }

    def summary_table(self) -> str:
        """One line per release: passed/evaluated, status, failed critical and other checks."""
        head = (self.unit, "passed", "status", "failed critical", "errors", "failed warning/info")
        shown = {"passed": "ok", "warnings": "ok (warnings)", "failed": "FAILED", "error": "ERROR"}
        rows = [
            (
                r.label,
                f"{r.successful}/{r.evaluated}",
                shown[r.status],
                ", ".join(e.label for e in r.critical_failures) or "-",
                ", ".join(e.label for e in r.errors) or "-",
                ", ".join(e.label for e in r.warnings) or "-",
            )
            for r in self.releases
        ]
        widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(head[:-1])]
        lines = []
        for row in (head, *rows):
            cells = [c.ljust(w) for c, w in zip(row[:-1], widths, strict=True)]
            lines.append("  ".join([*cells, row[-1]]).rstrip())
        return "\n".join(lines)


# -- phase 1: checks ---------------------------------------------------------------------


@dataclass(slots=True)
class PreparedRun:
    """A checkpoint whose configuration passed every check (nothing written yet)."""

    checkpoint: CheckpointConfig
    suites: tuple[SuiteConfig, ...]
    data: ReleaseData | LabelsData | EngineReleases
    #: The alert actions, their environment variables checked (see :mod:`..config.alerts`).
    alerts: tuple[AlertTarget, ...] = ()
    #: baseline columns of the drift expectations (SPEC 10), added to every release table
    baselines: tuple[BaselineNeed, ...] = ()

    @property
    def site_name(self) -> str | None:
        """The Data Docs site to build, or ``None`` without a ``build_data_docs`` action."""
        for action in self.checkpoint.actions:
            if action.name == "build_data_docs":
                return str(action.options.get("site_name") or _DEFAULT_SITE)
        return None


def prepare_run(path: str | os.PathLike, *, check_environment: bool = True) -> PreparedRun:
    """Load and check a checkpoint file, its suites and the columns its suites name.

    ``check_environment=False`` (``validate``) leaves out what depends on the environment of
    the run, the variables the alert actions reference (``${NAME}``), as the history URL is:
    a CI lint step without the secrets still checks everything written in the files.

    Raises :class:`ConfigError` with every problem found at the first stage that has
    any (the checkpoint file itself, then the suite files, then the references).
    """
    checkpoint = load_checkpoint(path)
    problems: list[ConfigIssue] = []
    all_suites: dict[str, SuiteConfig] | None
    try:
        all_suites = load_suites(checkpoint.suite_paths)
    except ConfigError as error:
        problems.extend(error.issues)
        all_suites = None
    # the checkpoint's own references are checked even when a suite file is broken, so
    # that one run reports every problem (a missing suite shows once the files load)
    known: Mapping[str, object] = (
        all_suites if all_suites is not None else dict.fromkeys(checkpoint.suites)
    )
    formats = _declared_formats(checkpoint)
    try:
        check_checkpoint_references(checkpoint, known,
                                    lambda path: table_columns(path, format=formats.get(Path(path))))
    except ConfigError as error:
        problems.extend(error.issues)
    if problems or all_suites is None:
        raise ConfigError(problems)
    suites = tuple(all_suites[name] for name in checkpoint.suites)

    issues: list[ConfigIssue] = []
    where = IssueCollector(str(checkpoint.path))
    _check_batch_layout(checkpoint, where)
    issues.extend(where.issues)
    bench = checkpoint.data.benchmark
    source = None
    benchmark_columns: list[str] | None
    record_columns: list[str] | None = None
    if isinstance(checkpoint.data, EngineData):  # a database or Spark: opened when run, not by validate
        if issues:
            raise ConfigError(issues)
        from er_expectations.run.sources import open_source

        source = open_source(checkpoint, connect=check_environment)  # ConfigError, SourceUnreachableError
        benchmark_columns = source.columns("benchmark") if bench else []
        record_columns = source.columns("records")
    else:
        benchmark_columns = table_columns(bench.path, format=bench.format) if bench else []
    extras = _referenced_extra_columns(suites, benchmark_columns)
    issues.extend(suite_kind_issues(checkpoint, suites))
    data: ReleaseData | LabelsData | EngineReleases
    if checkpoint.data.labels is not None:  # one labelling batch instead of the releases
        data = LabelsData(checkpoint, source)  # source: records in a database or Spark, else None
        issues.extend(labels_checkpoint_issues(checkpoint, data))
    else:
        wanted = [column for suite in suites for cfg in suite.expectations for param, column in _column_refs(cfg)
                  if param in _RECORD_PARAMS and column not in extras]
        if source is None:
            records = checkpoint.data.records
            record_columns = table_columns(records.path, format=records.format) if wanted else []
        # a source not opened (validate): the columns the suites name are taken as they are
        record_extras = [column for column in wanted if record_columns is None or column in record_columns]
        if source is not None:
            from er_expectations.run.sources import EngineReleases

            data = EngineReleases(checkpoint, source, extra_benchmark_columns=extras,
                                  extra_record_columns=record_extras)
        else:
            data = ReleaseData(checkpoint, extra_benchmark_columns=extras, extra_record_columns=record_extras)
    issues.extend(check_batch_columns(checkpoint, suites, data.batch_columns(), benchmark_columns or [],
                                      record_columns=record_columns))
    alerts: tuple[AlertTarget, ...] = ()
    if check_environment:
        alerts, alert_issues = resolve_alerts(checkpoint)  # unset variables, malformed URLs
        issues.extend(alert_issues)
    needs = baseline_needs(suites) if not isinstance(data, LabelsData) else []  # releases only, not labels
    if source is None or source.connected:  # the releases of an unopened source are not known
        issues.extend(check_baselines(needs, data, checkpoint.name, checkpoint.path, suites))
    if issues:
        raise ConfigError(issues)
    return PreparedRun(checkpoint=checkpoint, suites=suites, data=data, alerts=alerts, baselines=tuple(needs))


def _declared_formats(checkpoint: CheckpointConfig) -> dict[Path, str]:
    """The table format of every file of a checkpoint (its ``format:``, else from its suffix)."""
    data = checkpoint.data
    if isinstance(data, EngineData):  # only the labels are a file
        labels = data.labels
        return {Path(labels.path): labels.format} if labels is not None and labels.format else {}
    sources: list[Any] = [data.records, data.predictions, *(data.predictions.files or ())]
    if data.benchmark is not None:
        sources.append(data.benchmark)
    if data.labels is not None:
        sources.append(data.labels)
    return {Path(src.path): src.format for src in sources if getattr(src, "path", None) and src.format}


def _check_batch_layout(checkpoint: CheckpointConfig, issues: IssueCollector) -> None:
    """The id, prediction, reference and name columns of a batch must be four distinct names."""
    data = checkpoint.data
    predictions = data.predictions
    target_key = (
        "data.predictions.batch_column"
        if predictions.batch_column
        else "data.predictions.prediction_column"
    )
    roles: list[tuple[str, str, str]] = [
        ("record id", data.records.id_column, "data.records.id_column"),
        ("prediction", predictions.target_column, target_key),
    ]
    if data.benchmark is not None:
        roles.append(("reference", data.benchmark.reference_column, "data.benchmark.reference_column"))
    if data.name is not None:
        roles.append(("name", data.name.output_column, "data.name.output_column"))
    seen: dict[str, str] = {}
    for role, column, key in roles:
        if column in seen:
            line, col = checkpoint.location(key)
            if line is None:
                line, col = checkpoint.location("data")
            issues.add(
                (line, col),
                f"the {role} column of the release batches would be '{column}', "
                f"which is already their {seen[column]} column",
                f"give {key} another name",
            )
        else:
            seen[column] = role


def _weights_column(value: object) -> str | None:
    if isinstance(value, Mapping):
        column = value.get("column")
        return str(column) if column is not None else None
    return None


def _column_refs(cfg: ExpectationConfig) -> Iterable[tuple[str, str]]:
    """``(parameter, column)`` for every parameter of ``cfg`` that names a batch column."""
    for param in _COLUMN_PARAMS:
        value = cfg.kwargs.get(param)
        if param == "weights":
            column = _weights_column(value)
            if column is not None:
                yield param, column
        elif isinstance(value, str):
            yield param, value


def _referenced_extra_columns(
    suites: Sequence[SuiteConfig], benchmark_columns: Sequence[str] | None
) -> list[str]:
    """Weight and draws columns the suites name that the benchmark file has (``None``: a
    benchmark not opened, whose weight and draws columns are taken as named)."""
    wanted: list[str] = []
    for suite in suites:
        for cfg in suite.expectations:
            for param, column in _column_refs(cfg):
                if benchmark_columns is None:
                    if param in ("weights", "draws_column"):
                        wanted.append(column)
                elif param in ("weights", "draws_column", "group_column") and column in benchmark_columns:
                    wanted.append(column)
    return list(dict.fromkeys(wanted))


def check_batch_columns(
    checkpoint: CheckpointConfig,
    suites: Sequence[SuiteConfig],
    batch_columns: Sequence[str],
    benchmark_columns: Sequence[str] = (),
    *,
    record_columns: Sequence[str] | None = None,
) -> list[ConfigIssue]:
    """Issues for suite parameters that name a column the release batches will not have.

    Each issue points at the suite file, at the line where the column is written (the
    expectation, or the suite's ``defaults``), and its hint says which column to use.
    ``record_columns`` are the records' columns when known (a database or Spark table), else
    the records file is read for the hint.
    """
    issues: list[ConfigIssue] = []
    available = list(batch_columns)
    for suite in suites:
        for cfg in suite.expectations:
            for param, column in _column_refs(cfg):
                if column in available:
                    continue
                line, col = cfg.locations.get(param, (cfg.line, None))
                issues.append(
                    ConfigIssue(
                        str(suite.path),
                        line,
                        col,
                        f"{cfg.name}: {param} '{column}' is not a column of the release batches "
                        f"of checkpoint '{checkpoint.name}' ({checkpoint.path}), which have "
                        f"{quote_list(available, conjunction='and')}",
                        _column_hint(checkpoint, param, column, available, benchmark_columns, record_columns),
                    )
                )
    return issues


def _column_hint(
    checkpoint: CheckpointConfig,
    param: str,
    column: str,
    available: Sequence[str],
    benchmark_columns: Sequence[str],
    record_columns: Sequence[str] | None = None,
) -> str:
    data = checkpoint.data
    records = "records file" if isinstance(data, DataSources) else "records table"
    bench_where = "benchmark file" if isinstance(data, DataSources) else "benchmark table"
    if data.labels is not None:
        return labels_column_hint(checkpoint, param, column, available)
    if param == "record_id_column":
        return (
            f"the record id column of the batches is '{data.records.id_column}' "
            f"(data.records.id_column); write record_id_column: {data.records.id_column}"
        )
    if param == "prediction_column":
        target = data.predictions.target_column
        return (
            f"each release's prediction is called '{target}' in its batch "
            f"(data.predictions.batch_column of the checkpoint); write prediction_column: {target}"
        )
    if param == "reference_column":
        if data.benchmark is None:
            return "the checkpoint has no data.benchmark; add one, or remove this expectation"
        reference = data.benchmark.reference_column
        return (
            f"the benchmark's cluster id is called '{reference}' in the batches "
            f"(data.benchmark.reference_column); write reference_column: {reference}"
        )
    if param == "name_column":
        if data.name is None:
            return (
                "the checkpoint has no data.name; add 'name: {columns: [<first>, <last>]}' "
                "under data: its output_column (default 'full_name') is the name column"
            )
        return (
            f"the name column of the batches is '{data.name.output_column}' "
            f"(data.name.output_column); write name_column: {data.name.output_column}"
        )
    if param in _RECORD_PARAMS:
        if record_columns is None:
            record_columns = table_columns(data.records.path, format=data.records.format)
        close = did_you_mean(column, [c for c in record_columns if c != data.records.id_column])
        source = data.records.path if isinstance(data, DataSources) else data.records.shown
        return (
            f"{param.replace('_column', '').replace('_', ' ')} columns are taken from the {records} "
            f"{source}" + (f" (or, for group_column, the {bench_where})" if param == "group_column" else "")
            + f", which has no column '{column}'" + (f"; {close}" if close else "")
        )
    if data.benchmark is None:
        return "weight and draws columns are taken from data.benchmark, which the checkpoint lacks"
    close = did_you_mean(column, [c for c in benchmark_columns if c != data.benchmark.id_column])
    source = data.benchmark.path if isinstance(data, DataSources) else data.benchmark.shown
    return (
        f"weight and draws columns are taken from the {bench_where} {source}, "
        f"which has no column '{column}'" + (f"; {close}" if close else "")
    )


# -- the existing project -----------------------------------------------------------------


def _check_project_dir(project_dir: Path, checkpoint: CheckpointConfig) -> None:
    """``project_dir`` must be a folder or not exist yet; raises :class:`ConfigError`."""
    if project_dir.exists() and not project_dir.is_dir():
        line, column = checkpoint.location("project_dir")
        raise ConfigError([
            ConfigIssue(
                str(checkpoint.path),
                line,
                column,
                f"project_dir: {project_dir} is a file, not a folder",
                "point project_dir to the folder of the Great Expectations project",
            )
        ])


@contextlib.contextmanager
def project_lock(project_dir: Path, *, timeout: float | None = None,
                 out: TextIO | None = None) -> Iterator[None]:
    """Hold the project's lock file (``<project_dir>/.er-expectations.lock``) while running.

    GX's file stores are not safe for concurrent writers (two runs raise "suite has changed
    since it was last saved" and leave Data Docs half built), so runs on one project take
    turns. The lock is an OS-level lock (``filelock``): a killed run releases it at once.
    Waits up to ``timeout`` seconds (``None``: no limit), printing once that it waits.
    """
    from filelock import FileLock, Timeout

    try:
        project_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise InputError(f"project_dir: cannot create {project_dir}: {error.strerror or error}") from error
    lock = FileLock(str(project_dir / LOCK_FILE))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        if out is not None:
            print(f"Another run is using the project {project_dir}; waiting for it to finish ...",
                  file=out, flush=True)
        try:
            lock.acquire(timeout=-1 if timeout is None else timeout)
        except Timeout:
            raise ProjectBusyError(
                f"another run kept the project {project_dir} busy for more than {timeout:g} s "
                f"(lock file {project_dir / LOCK_FILE}); try again later or raise --lock-timeout"
            ) from None
    except OSError as error:
        raise InputError(f"project_dir: cannot create the lock file in {project_dir}: "
                         f"{error.strerror or error}") from error
    try:
        yield
    finally:
        lock.release()


def _check_project(project_dir: Path, site_name: str | None, checkpoint: CheckpointConfig) -> list[Path]:
    """Read-only checks of an existing GX project; raises :class:`ConfigError`.

    Returns the stored suites of this checkpoint that a killed run left unreadable: they are
    written from the suite files anyway, so the run replaces them instead of refusing to run.
    """
    from great_expectations.expectations.registry import get_expectation_impl

    issues: list[ConfigIssue] = []
    gx_dir = project_dir / "gx"
    suites_dir = gx_dir / "expectations"
    damaged: list[Path] = []
    for file in sorted(suites_dir.glob("*.json")) if suites_dir.is_dir() else ():
        try:
            stored = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            if file.stem in checkpoint.suites and not isinstance(error, OSError):
                damaged.append(file)
                continue
            issues.append(
                ConfigIssue(
                    str(file),
                    None,
                    None,
                    f"cannot read this stored expectation suite: {error}",
                    "repair or delete the file; the next run writes it again",
                )
            )
            continue
        unknown: list[str] = []
        for item in stored.get("expectations", []) if isinstance(stored, dict) else []:
            kind = item.get("type") or item.get("expectation_type") if isinstance(item, dict) else None
            if not kind:
                continue
            try:
                get_expectation_impl(kind)
            except Exception:  # noqa: BLE001 - GX's registry raises its own error type
                unknown.append(kind)
        if unknown:
            issues.append(
                ConfigIssue(
                    str(file),
                    None,
                    None,
                    f"the stored suite uses expectation types that are not registered: "
                    f"{quote_list(sorted(set(unknown)), conjunction='and')}; Great Expectations "
                    "would drop them without a word and report success",
                    "install and import the plugin that defines them, or delete this suite file",
                )
            )
    if site_name is not None and site_name != _DEFAULT_SITE:
        sites = _project_sites(gx_dir / "great_expectations.yml")
        if site_name not in sites:
            action = next((a for a in checkpoint.actions if a.name == "build_data_docs"), None)
            issues.append(
                ConfigIssue(
                    str(checkpoint.path),
                    action.line if action else None,
                    None,
                    f"build_data_docs: the project has no Data Docs site '{site_name}'",
                    did_you_mean(site_name, sorted(sites))
                    or f"sites of the project: {quote_list(sorted(sites) or [_DEFAULT_SITE], conjunction='and')}",
                )
            )
    if issues:
        raise ConfigError(issues)
    return damaged


def _project_sites(config_file: Path) -> set[str]:
    if not config_file.is_file():
        return {_DEFAULT_SITE}
    from ruamel.yaml.error import YAMLError

    from er_expectations.config.yamlnodes import read_yaml

    try:
        config = read_yaml(config_file.read_text(encoding="utf-8")) or {}
    except (OSError, YAMLError):
        return set()
    sites = config.get("data_docs_sites") if isinstance(config, dict) else None
    return set(sites) if isinstance(sites, dict) else set()


# -- phase 2: writes ---------------------------------------------------------------------


def _parquet_bytes(frame: Any) -> bytes:
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    return buffer.getvalue()










#: Where a run keeps the copy of the GX project configuration it opened (see :func:`open_project`).
CONFIG_BACKUP = Path(".er-expectations") / "great_expectations.yml"


def open_project(project_dir: Path, *, out: TextIO | None = None) -> Any:
    """The GX file context of ``project_dir``, safe against runs killed while GX writes.

    GX writes its project configuration (``gx/great_expectations.yml``) in place, and rewrites
    it whenever a datasource, asset or batch definition changes, so a run killed at that moment
    leaves it truncated. Hence: a new project is created in a temporary folder and moved into
    place whole; every run that opens the project keeps a copy of the configuration
    (``<project_dir>/.er-expectations/great_expectations.yml``, atomically, again when it ends),
    and a run that finds the configuration unreadable restores that copy and says so. Call it
    under the project lock.
    """
    import shutil

    import great_expectations as gx

    gx_dir = project_dir / "gx"
    config = gx_dir / "great_expectations.yml"
    backup = project_dir / CONFIG_BACKUP
    for stale in project_dir.glob(".er-new-project-*"):  # left by a run killed while creating
        shutil.rmtree(stale, ignore_errors=True)
    if not gx_dir.exists():
        staging = Path(tempfile.mkdtemp(prefix=".er-new-project-", dir=project_dir))
        try:
            gx.get_context(mode="file", project_root_dir=str(staging))
            os.rename(staging / "gx", gx_dir)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    try:
        context = gx.get_context(mode="file", project_root_dir=str(project_dir))
    except Exception as error:  # noqa: BLE001 - GX raises many error types here
        if not backup.is_file():
            raise InputError(
                f"{config}: cannot open the Great Expectations project ({type(error).__name__}: "
                f"{str(error).splitlines()[0] if str(error) else ''}); repair the file, or delete "
                f"the folder {gx_dir} to start a new project"
            ) from error
        atomic_write(config, backup.read_bytes())
        if out is not None:
            print(f"Restored {config}, which an interrupted run left unreadable, from the copy "
                  f"taken when the project was last opened ({backup}).", file=out, flush=True)
        try:
            context = gx.get_context(mode="file", project_root_dir=str(project_dir))
        except Exception as again:  # noqa: BLE001
            raise InputError(f"{config}: cannot open the Great Expectations project even from "
                             f"its copy {backup}: {again}") from again
    keep_config_copy(project_dir)
    return context


def keep_config_copy(project_dir: Path) -> None:
    """Copy the project's GX configuration to :data:`CONFIG_BACKUP` (atomically)."""
    atomic_write(project_dir / CONFIG_BACKUP, (project_dir / "gx" / "great_expectations.yml").read_bytes())


class _Project:
    """The GX side of a run: context, datasource, suites, validation definitions, checkpoints."""

    def __init__(self, prepared: PreparedRun, project_dir: Path, folder: Path, *, out: TextIO) -> None:
        import great_expectations as gx
        from great_expectations.data_context.types.base import ProgressBarsConfig

        self.gx = gx
        self.prepared = prepared
        self.name = prepared.checkpoint.name
        self.folder = folder
        self.ctx = open_project(project_dir, out=out)
        quiet = ProgressBarsConfig(globally=False, metric_calculations=False)
        current = self.ctx.variables.progress_bars
        if current is None or dict(current) != dict(quiet):
            self.ctx.variables.progress_bars = quiet
            self.ctx.variables.save()

    # datasource / asset / batch definitions ------------------------------------------
    def batch_definitions(self, names: Mapping[str, str], batches: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """A batch definition per release (label -> its file name ``names[label]``): of the
        release's Parquet file, or with ``batches`` of the release's SQL query or Spark
        DataFrame (one asset per release, named ``release_<name>``)."""
        data = self.prepared.data
        if batches is not None and isinstance(data, EngineReleases):
            return self._engine_definitions(names, data, batches)
        from great_expectations.core.partitioners import FileNamePartitionerPath

        sources = self.ctx.data_sources
        base = str(self.folder)
        try:
            source = sources.get(self.name)
        except (KeyError, LookupError, ValueError):
            source = None
        if source is not None and (
            getattr(source, "type", None) != "pandas_filesystem"
            or str(getattr(source, "base_directory", "")) != base
        ):
            sources.delete(self.name)
            source = None
        if source is None:
            source = sources.add_pandas_filesystem(self.name, base_directory=base)
        try:
            asset = source.get_asset(ASSET_NAME)
        except (KeyError, LookupError, ValueError):
            asset = source.add_parquet_asset(ASSET_NAME)
        result: dict[str, Any] = {}
        for label, name in names.items():
            regex = re.compile(rf"^(?P<release>{re.escape(name)})\.parquet$")
            batch_name = f"release_{name}"
            try:
                definition = asset.get_batch_definition(batch_name)
            except (KeyError, LookupError, ValueError):
                definition = None
            if definition is not None:
                current = getattr(definition.partitioner, "regex", None)
                if current is None or current.pattern != regex.pattern:
                    asset.delete_batch_definition(batch_name)
                    definition = None
            if definition is None:
                definition = asset.add_batch_definition(
                    name=batch_name, partitioner=FileNamePartitionerPath(regex=regex)
                )
            result[label] = definition
        return result

    def _engine_definitions(self, names: Mapping[str, str], data: EngineReleases,
                            batches: Mapping[str, Any]) -> dict[str, Any]:
        """The datasource of a database (``sql``, its URL as written: ``${NAME}`` is substituted
        by GX when it connects, so no secret is stored) or of Spark, a query asset (SQL) or
        dataframe asset (Spark) per release, and its whole-table batch definition."""
        sources = self.ctx.data_sources
        kind = data.source.gx_kind  # type: ignore[attr-defined]
        options: dict[str, Any] = {} if kind == "spark" else {
            "connection_string": data.source.gx_url,  # type: ignore[attr-defined]
            "create_temp_table": data.source.temp_table}  # type: ignore[attr-defined]
        try:
            source = sources.get(self.name)
        except (KeyError, LookupError, ValueError):
            source = None
        if source is not None and (
            getattr(source, "type", None) != kind
            or any(str(getattr(source, key, None)) != str(value) for key, value in options.items())
        ):
            sources.delete(self.name)
            source = None
        if source is None:
            source = getattr(sources, f"add_{kind}")(self.name, **options)
        result: dict[str, Any] = {}
        for label, name in names.items():
            asset_name = f"release_{name}"
            query = batches[label] if kind != "spark" else None
            try:
                asset = source.get_asset(asset_name)
            except (KeyError, LookupError, ValueError):
                asset = None
            if asset is not None and kind != "spark" and getattr(asset, "query", None) != query:
                source.delete_asset(asset_name)
                asset = None
            if asset is None:
                asset = (source.add_query_asset(asset_name, query=query) if kind != "spark"
                         else source.add_dataframe_asset(asset_name))
            try:
                definition = asset.get_batch_definition("all")
            except (KeyError, LookupError, ValueError):
                definition = (asset.add_batch_definition_whole_table("all") if kind != "spark"
                              else asset.add_batch_definition_whole_dataframe("all"))
            result[label] = definition
        return result

    # suites ----------------------------------------------------------------------------
    def suites(self) -> dict[str, Any]:
        from er_expectations.run.suites import suite_from_config

        stored: dict[str, Any] = {}
        for config in self.prepared.suites:
            suite = self.ctx.suites.add_or_update(suite_from_config(config))
            wanted = {cfg.name for cfg in config.expectations}
            found = {e.expectation_type for e in suite.expectations}
            if wanted - found:
                raise InputError(
                    f"{config.path}: Great Expectations dropped "
                    f"{quote_list(sorted(wanted - found), conjunction='and')} from suite "
                    f"'{config.name}'; is the plugin that defines them imported?"
                )
            stored[config.name] = suite
        return stored

    # validation definitions and checkpoints ----------------------------------------------
    def validation_definitions(self, name: str, definition: Any, suites: Mapping[str, Any]) -> list[Any]:
        """One validation definition per suite for the release batch ``definition``."""
        gx = self.gx
        return [
            self.ctx.validation_definitions.add_or_update(
                gx.ValidationDefinition(
                    name=f"{self.name}__{name}__{suite_name}", data=definition, suite=suite
                )
            )
            for suite_name, suite in suites.items()
        ]

    def _actions(self) -> list[Any]:
        site = self.prepared.site_name
        if site is None:
            return []
        from er_expectations.gx.actions import OfflineDataDocsAction

        # one action builds the run's pages and the index in a single GX build through the
        # site's offline view and index builder (GX's UpdateDataDocsAction builds once per result)
        return [OfflineDataDocsAction(name="data_docs", site_name=site, build=True)]

    def checkpoint(self, name: str, definitions: Sequence[Any], *, actions: bool = True,
                   extra: Sequence[Any] = ()) -> Any:
        """A stored GX checkpoint over ``definitions``, with the YAML's actions (Data Docs) or
        none, and the ``extra`` actions."""
        return self.ctx.checkpoints.add_or_update(
            self.gx.Checkpoint(
                name=name,
                validation_definitions=list(definitions),
                actions=[*(self._actions() if actions else []), *extra],
                result_format={"result_format": "SUMMARY"},
            )
        )

    def result_file(self, identifier: Any) -> Path | None:
        backend = getattr(self.ctx.validation_results_store, "store_backend", None)
        try:
            url = backend.get_url_for_key(identifier.to_tuple())  # type: ignore[union-attr]
        except Exception:  # noqa: BLE001 - only a convenience for the report
            return None
        return Path(url.removeprefix("file://")) if isinstance(url, str) else None

    def page(self, identifier: Any, site: str) -> str | None:
        try:
            urls = self.ctx.get_docs_sites_urls(resource_identifier=identifier, site_name=site)
        except Exception:  # noqa: BLE001 - only a convenience for the report
            return None
        return urls[0].get("site_url") if urls else None

    def build_docs(self, site: str, results: list[Any]) -> Path:
        """One Data Docs build for the run's ``results``; returns the index page."""
        from er_expectations.gx.data_docs import build_site, local_site_dir

        build_site(self.ctx, site, results)
        return (Path(local_site_dir(self.ctx, site)) / "index.html").resolve()


def run_checkpoint(
    path: str | os.PathLike,
    *,
    releases: Sequence[str] | None = None,
    progress: bool = True,
    out: TextIO | None = None,
    lock_timeout: float | None = None,
) -> RunReport:
    """Validate the releases of a checkpoint file with Great Expectations.

    ``releases`` picks releases by label (``2022-06-30``) or column/key; ``None`` runs
    those of the checkpoint. ``progress`` shows a progress bar over releases on stderr
    (only on a terminal). A summary table and the path of the Data Docs index are printed
    to ``out`` (default ``sys.stdout``). Raises :class:`ConfigError` or :class:`InputError`
    before anything is written when the configuration or the data is bad.

    Runs on one project are serialised by a lock file in the project folder
    (:func:`project_lock`): a second run waits for the first (``lock_timeout`` seconds at
    most, ``None`` = as long as it takes) and raises :class:`ProjectBusyError` on timeout.
    """
    out = sys.stdout if out is None else out
    started = time.perf_counter()

    # (a) configuration, (b) releases, project guard, tables: nothing written yet
    prepared = prepare_run(path)
    checkpoint = prepared.checkpoint
    from er_expectations.run.history import check_history

    unset = check_history(checkpoint)  # history.url: ${VAR} not set (when run; validate skips it)
    if unset:
        raise ConfigError(unset)
    selected = prepared.data.select(list(releases) if releases else None)
    project_dir = checkpoint.project_dir
    _check_project_dir(project_dir, checkpoint)
    names = release_file_names(r.label for r in selected)
    tables: dict[str, Any]
    if isinstance(prepared.data, EngineReleases):  # built in the database or Spark, never fetched
        from er_expectations.run.sources import release_batches

        prepared.data.check_data()  # ids counted in the engine
        batch = release_batches(prepared.data, prepared.baselines)
        tables = {r.label: batch(r) for r in selected}
    else:
        frame = release_frames(prepared.data, prepared.baselines)  # with the drift checks' baseline columns
        tables = {r.label: _parquet_bytes(frame(r)) for r in selected}
    if not project_dir.exists():  # a new project: check before the lock creates its folder
        _check_project(project_dir, prepared.site_name, checkpoint)
    with project_lock(project_dir, timeout=lock_timeout, out=out):
        return _run_locked(prepared, selected, names, tables, progress=progress, out=out, started=started)


def _run_locked(prepared: PreparedRun, selected: Sequence[Any], names: Mapping[str, str],
                tables: dict[str, Any], *, progress: bool, out: TextIO, started: float) -> RunReport:
    """Phase 1 checks of the existing project and phase 2, under the project's lock.

    ``tables`` holds each release's Parquet bytes (files), its SQL query (engine sql) or its
    Spark DataFrame (engine spark).
    """
    checkpoint = prepared.checkpoint
    project_dir = checkpoint.project_dir
    damaged = _check_project(project_dir, prepared.site_name, checkpoint)
    for file in damaged:
        print(f"Replacing the unreadable stored suite {file} (an interrupted run?) from the suite files.",
              file=out, flush=True)
        file.unlink()
    remove_stale_temporaries(project_dir)

    # (c) the release tables, each checked to stay inside the project (files only: a database's
    # or Spark's batches are queries and DataFrames)
    folder = ensure_inside(project_dir, project_dir / DATA_FOLDER / checkpoint.name)
    engine = prepared.data.engine if isinstance(prepared.data, EngineReleases) else "pandas"
    if engine == "pandas":
        targets = {r.label: ensure_inside(folder, folder / f"{names[r.label]}.parquet") for r in selected}
        try:
            for release in selected:
                atomic_write(targets[release.label], tables.pop(release.label))
        except OSError as error:
            raise InputError(f"cannot write the release tables under {folder}: {error}") from error

    # (d) the GX project and the runs
    from great_expectations.core.run_identifier import RunIdentifier
    from tqdm.auto import tqdm

    suite_names = tuple(s.name for s in prepared.suites)
    unit = "labels file" if isinstance(prepared.data, LabelsData) else "release"
    print(
        f"Checkpoint '{checkpoint.name}' ({checkpoint.path}): {len(selected)} {unit}(s), "
        f"suite(s) {', '.join(suite_names)}; project {project_dir}",
        file=out,
        flush=True,
    )
    project = _Project(prepared, project_dir, folder, out=out)
    definitions = project.batch_definitions({r.label: names[r.label] for r in selected},
                                            tables if engine != "pandas" else None)
    suites = project.suites()
    run_time = datetime.now(UTC)
    run_id = RunIdentifier(run_name=checkpoint.name, run_time=run_time)
    report = RunReport(
        checkpoint=checkpoint.name,
        checkpoint_path=Path(checkpoint.path),
        project_dir=project_dir,
        run_name=checkpoint.name,
        run_time=run_time,
        suites=suite_names,
        unit=unit,
    )
    site = prepared.site_name
    # One stored GX checkpoint per release, run here with ``Checkpoint.run`` under a progress
    # bar, without actions; then ONE Data Docs build for the whole run. The checkpoint over all
    # the selected releases is stored too, with the Data Docs action, for GX's own tools.
    per_release = {}
    for release in selected:
        name = names[release.label]
        vds = project.validation_definitions(name, definitions[release.label], suites)
        per_release[release.label] = project.checkpoint(f"{project.name}__{name}", vds, actions=False)
    from er_expectations.run.history import HistoryRecorder, history_action

    # the history's release order: every release of the predictions (a labelling batch: itself)
    positions = ([r.label for r in prepared.data.all_releases()] if not isinstance(prepared.data, LabelsData)
                 else [r.label for r in selected])
    recording = history_action(checkpoint, {names[r.label]: r.label for r in selected}, positions)
    combined = project.checkpoint(project.name, [vd for cp in per_release.values() for vd in cp.validation_definitions],
                                  extra=[recording] if recording is not None else [])
    labels_by_result: dict[Any, str] = {}
    history = HistoryRecorder.start(checkpoint, positions, out=out)
    bar = tqdm(
        selected,
        desc=f"validating {checkpoint.name}",
        unit="release",
        file=sys.stderr,
        disable=True if not progress else None,
        leave=True,
    )
    try:
        for release in bar:
            bar.set_postfix_str(release.label, refresh=False)
            with history.validating(release.label, run_id.run_name):
                parameters = {"dataframe": tables[release.label]} if engine == "spark" else None
                result = per_release[release.label].run(run_id=run_id, batch_parameters=parameters)
            outcome = ReleaseOutcome(label=release.label, key=release.key, gx_checkpoint=combined.name)
            for identifier, validation in result.run_results.items():
                labels_by_result[identifier] = release.label
                stats = validation.statistics or {}
                outcome.evaluated += int(stats.get("evaluated_expectations", 0))
                outcome.successful += int(stats.get("successful_expectations", 0))
                outcome.failed += int(stats.get("unsuccessful_expectations", 0))
                suite_name = getattr(validation, "suite_name", None) or str(identifier)
                outcome.expectations.extend(read_outcome(suite_name, evr) for evr in validation.results)
                result_file = project.result_file(identifier)
                if result_file is not None:
                    outcome.result_files.append(result_file)
            report.releases.append(outcome)
            history.record(release.label, result, status=outcome.status)  # one transaction
    finally:
        bar.close()
        history.close()
    report.history, report.history_problem = history.summary(), history.problem

    # (e) Data Docs: this run's pages, the pages an interrupted run missed and the index
    if site is not None:
        report.data_docs_index = project.build_docs(site, list(labels_by_result))
        by_label = {o.label: o for o in report.releases}
        for identifier, label in labels_by_result.items():
            page = project.page(identifier, site)
            if page:
                by_label[label].pages.append(page)
    keep_config_copy(project_dir)  # the configuration as this run left it, for the next run
    report.elapsed = time.perf_counter() - started
    _print_summary(report, out)
    if prepared.alerts:  # last: results, Data Docs and history are saved whatever happens here
        from er_expectations.run.alerts.actions import send_alerts

        report.alerts = send_alerts(prepared.alerts, report, project.ctx, labels_by_result,
                                    combined, out=out)
    return report


def _print_summary(report: RunReport, out: TextIO) -> None:
    print("", file=out)
    print(report.summary_table(), file=out)
    print("", file=out)
    total = len(report.releases)
    failed = report.failed_releases
    errored = [r for r in failed if r.status == "error"]
    failed = [r for r in failed if r.status == "failed"]
    if failed or errored:
        bits = []
        if failed:
            bits.append(f"{len(failed)} failed a critical expectation: {', '.join(r.label for r in failed)}")
        if errored:
            bits.append(f"{len(errored)} had expectations that could not be computed: "
                        f"{', '.join(r.label for r in errored)}")
        passed = total - len(failed) - len(errored)
        print(f"{passed} of {total} {report.unit}(s) passed; " + "; ".join(bits) + ".", file=out)
    else:
        print(f"All {total} {report.unit}(s) passed every critical expectation.", file=out)
    for line in report.errors:
        print(f"error: {line}", file=out)
    warnings = report.warnings
    if warnings:
        print(
            f"{len(warnings)} warning/info expectation(s) failed (reported, not failing the run).",
            file=out,
        )
    if report.history is not None:
        print(report.history, file=out)
    if report.data_docs_index is not None:
        print(f"Data Docs: {report.data_docs_index}", file=out)
    else:
        results = report.project_dir / "gx" / "uncommitted" / "validations"
        print(f"Validation results: {results.resolve()}", file=out)
    print(f"Done in {report.elapsed:.1f} s.", file=out, flush=True)
