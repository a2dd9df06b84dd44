"""Phase 1 of a run: every check that can fail before anything is written (files, columns,
suites, baselines, history, alerts, the database or Spark reached)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

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
from er_expectations.config.errors import IssueCollector, did_you_mean, quote_list
from er_expectations.core.io import table_columns
from er_expectations.engines.base import KNOWN_AUTO, KNOWN_COLUMN
from er_expectations.gx.expectations import (
    COLUMN_PARAMETERS as _COLUMN_PARAMS,  # as the expectation models mark them
)
from er_expectations.gx.expectations import RECORD_COLUMN_PARAMETERS as _RECORD_PARAMS
from er_expectations.run.alerts.targets import AlertTarget, resolve_alerts
from er_expectations.run.baselines import (
    baseline_needs,
    check_baselines,
)
from er_expectations.run.data.base import CheckpointData
from er_expectations.run.data.factory import tables_of
from er_expectations.run.data.labels import (
    labels_checkpoint_issues,
    labels_column_hint,
    suite_kind_issues,
)
from er_expectations.run.project import (
    PreparedRun,
)


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
    kind = tables_of(checkpoint)  # files, or tables in a database or Spark
    formats = kind.declared_formats(checkpoint)
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
    tables = kind(checkpoint)
    tables.open(issues, connect=check_environment)  # a database or Spark: opened when run, not by validate
    benchmark_columns = tables.benchmark_columns()
    extras = _referenced_extra_columns(suites, benchmark_columns)
    issues.extend(suite_kind_issues(checkpoint, suites))
    data: CheckpointData
    if checkpoint.data.labels is not None:  # one labelling batch instead of the releases
        data = tables.labels_data()
        record_columns = tables.record_columns(None)
        issues.extend(labels_checkpoint_issues(checkpoint, data))
    else:
        wanted = [column for suite in suites for cfg in suite.expectations for param, column in _column_refs(cfg)
                  if param in _RECORD_PARAMS and column not in extras]
        record_columns = tables.record_columns(wanted)
        # a source not opened (validate): the columns the suites name are taken as they are
        record_extras = [column for column in wanted if record_columns is None or column in record_columns]
        data = tables.release_data(extras, record_extras)
    issues.extend(check_batch_columns(checkpoint, suites, data.batch_columns(), benchmark_columns or [],
                                      record_columns=record_columns))
    if bench is not None and checkpoint.data.labels is None:
        issues.extend(tables.benchmark_design_issues(suites, benchmark_columns))
    alerts: tuple[AlertTarget, ...] = ()
    if check_environment:
        alerts, alert_issues = resolve_alerts(checkpoint)  # unset variables, malformed URLs
        issues.extend(alert_issues)
    needs = baseline_needs(suites) if data.compares_releases else []  # releases only, not labels
    if tables.connected:  # the releases of an unopened source are not known
        issues.extend(check_baselines(needs, data, checkpoint.name, checkpoint.path, suites))
    if issues:
        raise ConfigError(issues)
    return PreparedRun(checkpoint=checkpoint, suites=suites, data=data, alerts=alerts, baselines=tuple(needs))


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
        elif param == "known_column" and value == KNOWN_AUTO:
            continue  # the benchmark's own column when it has one (SPEC 14), carried by the run
        elif isinstance(value, str):
            yield param, value
        elif isinstance(value, list):  # a list of columns (feature_columns)
            yield from ((param, column) for column in value if isinstance(column, str))


def _referenced_extra_columns(
    suites: Sequence[SuiteConfig], benchmark_columns: Sequence[str] | None
) -> list[str]:
    """Weight, draws and known-record columns the suites name that the benchmark file has
    (``None``: a benchmark not opened, whose columns are taken as named), and the benchmark's
    column of the records known at labelling whenever it has one (SPEC 14: every checkpoint
    applies it with no configuration)."""
    wanted: list[str] = []
    for suite in suites:
        for cfg in suite.expectations:
            for param, column in _column_refs(cfg):
                if benchmark_columns is None:
                    if param in ("weights", "draws_column", "known_column"):
                        wanted.append(column)
                elif param in ("weights", "draws_column", "group_column", "known_column") and column in benchmark_columns:
                    wanted.append(column)
    if benchmark_columns is not None and KNOWN_COLUMN in benchmark_columns:
        wanted.append(KNOWN_COLUMN)
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
    kind = tables_of(checkpoint)
    records, bench_where = f"records {kind.word}", f"benchmark {kind.word}"
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
        source = kind.shown(data.records)
        return (
            f"{param.replace('_column', '').replace('_', ' ')} columns are taken from the {records} "
            f"{source}" + (f" (or, for group_column, the {bench_where})" if param == "group_column" else "")
            + f", which has no column '{column}'" + (f"; {close}" if close else "")
        )
    if data.benchmark is None:
        return "weight and draws columns are taken from data.benchmark, which the checkpoint lacks"
    close = did_you_mean(column, [c for c in benchmark_columns if c != data.benchmark.id_column])
    source = kind.shown(data.benchmark)
    return (
        f"weight and draws columns are taken from the {bench_where} {source}, "
        f"which has no column '{column}'" + (f"; {close}" if close else "")
    )
