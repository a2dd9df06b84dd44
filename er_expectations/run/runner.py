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
table: phase 1 opens and checks the source (:mod:`er_expectations.run.data.engine`) and builds each
release's batch there, a SQL query (one GX query asset per release) or a Spark DataFrame (one
GX dataframe asset per release, passed to ``Checkpoint.run`` as ``batch_parameters``).

Everything in phase 2 is "add or update", so running the same file again updates the
project in place. Configuration problems raise :class:`ConfigError` (every issue with
file, line and hint); data problems raise :class:`InputError`.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from er_expectations.config import (
    ConfigError,
)
from er_expectations.core.errors import InputError
from er_expectations.core.io import remove_stale_temporaries
from er_expectations.core.names import ensure_inside
from er_expectations.core.release_names import release_file_names
from er_expectations.gx.outcome import ExpectationOutcome, expectation_label, restate_statistics
from er_expectations.gx.outcome import outcome as read_outcome
from er_expectations.run.data.parquet import ASSET_NAME
from er_expectations.run.ownership import check_owner
from er_expectations.run.preflight import PreparedRun, check_batch_columns, prepare_run
from er_expectations.run.project import (
    CONFIG_BACKUP,
    DATA_FOLDER,
    LOCK_FILE,
    Project,
    check_project,
    check_project_dir,
    check_written_paths,
    keep_config_copy,
    open_project,
    project_lock,
    set_aside_damaged_results,
)
from er_expectations.run.provenance import release_provenance, run_provenance
from er_expectations.run.report import ReleaseOutcome, RunReport, print_done, print_summary

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


log = logging.getLogger(__name__)


# -- the report --------------------------------------------------------------------------








# -- phase 1: checks ---------------------------------------------------------------------




















# -- the existing project -----------------------------------------------------------------










# -- phase 2: writes ---------------------------------------------------------------------




















def run_checkpoint(
    path: str | os.PathLike,
    *,
    releases: Sequence[str] | None = None,
    progress: bool = True,
    out: TextIO | None = None,
    lock_timeout: float | None = None,
    parameters: Mapping[str, Any] | None = None,
    err: TextIO | None = None,
) -> RunReport:
    """Validate the releases of a checkpoint file with Great Expectations.

    ``releases`` picks releases by label (``2022-06-30``) or column/key; ``None`` runs
    those of the checkpoint. ``progress`` shows a progress bar over releases on stderr
    (only on a terminal). A summary table and the path of the Data Docs index are printed
    to ``out`` (default ``sys.stdout``), warnings (alerts not delivered) to ``err`` (default
    ``sys.stderr``). Raises :class:`ConfigError` or :class:`InputError`
    before anything is written when the configuration or the data is bad.

    Runs on one project are serialised by a lock file in the project folder
    (:func:`project_lock`): a second run waits for the first (``lock_timeout`` seconds at
    most, ``None`` = as long as it takes) and raises :class:`ProjectBusyError` on timeout.

    ``parameters`` gives the suite parameters (``{$PARAMETER: name}`` in the suites) their
    values, by name (``run --param`` / ``--params``); a value no suite uses, a used parameter
    without one or a value the parameter refuses is a :class:`ConfigError` before anything
    is written.
    """
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    started = time.perf_counter()

    # (a) configuration, (b) releases, project guard, tables: nothing written yet
    prepared = prepare_run(path)
    checkpoint = prepared.checkpoint
    expectation_parameters = _expectation_parameters(prepared, parameters)
    from er_expectations.run.history import check_history

    unset = check_history(checkpoint)  # history.url: ${VAR} not set (when run; validate skips it)
    if unset:
        raise ConfigError(unset)
    selected = prepared.data.select(list(releases) if releases else None)
    project_dir = checkpoint.project_dir
    check_project_dir(project_dir, checkpoint)
    check_owner(project_dir, checkpoint)  # a GX project of the user's own: refused, left as it is
    names = release_file_names(r.label for r in selected)
    _check_gx_names(checkpoint.name, selected, names, [s.name for s in prepared.suites])
    # each batch checked and built (with the drift checks' baseline columns): Parquet bytes of
    # files, a query in the database, a DataFrame in Spark
    tables = prepared.data.batches(selected, prepared.baselines)
    if not project_dir.exists():  # a new project: check before the lock creates its folder
        check_project(project_dir, prepared.site_name, checkpoint)
    with project_lock(project_dir, timeout=lock_timeout, out=out):
        try:
            return _run_locked(prepared, selected, names, tables, progress=progress, out=out, err=err,
                               started=started, parameters=expectation_parameters)
        except OSError as error:
            if error.filename is not None:  # the message names the file already
                raise
            # GX's stores write their files without naming them in the error (a full disk)
            raise InputError(f"{project_dir}: cannot write the Great Expectations project: "
                             f"{error.strerror or error}; free space or fix the folder, then run again "
                             "(the next run repairs what this one left)") from error


def _expectation_parameters(prepared: PreparedRun, parameters: Mapping[str, Any] | None) -> dict[str, Any]:
    """The values of the suites' parameters for GX (``expectation_parameters``), checked first."""
    from er_expectations.config.parameters import ParameterValue, check_parameters

    values = {name: value if isinstance(value, ParameterValue) else ParameterValue(value, f"parameters[{name!r}]")
              for name, value in (parameters or {}).items()}
    problems = check_parameters(prepared.suites, values)
    if problems:
        raise ConfigError(problems)
    return {name: value.value for name, value in values.items()}


def _check_gx_names(checkpoint: str, selected: Sequence[Any], names: Mapping[str, str],
                    suites: Sequence[str]) -> None:
    """GX names a validation definition ``<checkpoint>__<release>__<suite>``: release 'a' with
    suite 'x__s' and release 'a__x' with suite 's' would be one, and GX would run the wrong
    batch. Refused before anything is written."""
    seen: dict[str, tuple[str, str]] = {}
    for release in selected:
        for suite in suites:
            name = f"{checkpoint}__{names[release.label]}__{suite}"
            other = seen.setdefault(name.casefold(), (release.label, suite))
            if other != (release.label, suite):
                raise InputError(
                    f"release '{other[0]}' with suite '{other[1]}' and release '{release.label}' with suite "
                    f"'{suite}' would share the Great Expectations name '{name}'; rename a release or a suite "
                    "so that neither holds '__' (GX's separator)")


def _run_locked(prepared: PreparedRun, selected: Sequence[Any], names: Mapping[str, str],
                tables: dict[str, Any], *, progress: bool, out: TextIO, err: TextIO, started: float,
                parameters: Mapping[str, Any]) -> RunReport:
    """Phase 1 checks of the existing project and phase 2, under the project's lock.

    ``tables`` holds each release's Parquet bytes (files), its SQL query (engine sql) or its
    Spark DataFrame (engine spark). The phases, in order: (c) the release tables, (d) the GX
    project and one validation per release, each recorded in the history right after it,
    (e) Data Docs, then the summary and, last, the alerts.
    """
    checkpoint = prepared.checkpoint
    check_written_paths(checkpoint.project_dir, checkpoint.name)  # nothing written through a link
    _repair_project(prepared, out=out)
    folder = _write_release_tables(prepared, selected, names, tables)

    suite_names = tuple(s.name for s in prepared.suites)
    unit = prepared.data.unit
    print(
        f"Checkpoint '{checkpoint.name}' ({checkpoint.path}): {len(selected)} {unit}(s), "
        f"suite(s) {', '.join(suite_names)}; project {checkpoint.project_dir}",
        file=out,
        flush=True,
    )
    project = Project(prepared, checkpoint.project_dir, folder, out=out)
    project.check_writable(prepared.site_name)
    project.check_site()
    run_time = datetime.now(UTC)
    report = RunReport(
        checkpoint=checkpoint.name,
        checkpoint_path=Path(checkpoint.path),
        project_dir=checkpoint.project_dir,
        run_name=checkpoint.name,
        run_time=run_time,
        suites=suite_names,
        unit=unit,
    )
    per_release, combined, positions = _stored_checkpoints(project, prepared, selected, names, tables)
    charts = _chart_prewarm(project, prepared)
    try:
        labels_by_result = _validate_releases(project, prepared, selected, tables, per_release, combined, positions,
                                              report, names, run_time=run_time, progress=progress,
                                              out=out, charts=charts, parameters=parameters)
        _build_docs(project, prepared, report, labels_by_result, charts)
    finally:
        if charts is not None:
            charts.close()
    keep_config_copy(checkpoint.project_dir)  # the configuration as this run left it, for the next run
    report.elapsed = time.perf_counter() - started
    print_summary(report, out)
    if prepared.alerts:  # last: results, Data Docs and history are saved whatever happens here
        from er_expectations.run.alerts.actions import send_alerts

        report.alerts = send_alerts(prepared.alerts, report, project.ctx, labels_by_result,
                                    combined, out=out, err=err)
        if report.history_problem is None:
            from er_expectations.run.history import record_alerts

            record_alerts(checkpoint, run_time=run_time, deliveries=report.alerts, err=err)
        report.elapsed = time.perf_counter() - started
    print_done(report, out)
    return report


def _chart_prewarm(project: Project, prepared: PreparedRun) -> Any:
    """The charts of the Data Docs drawn in worker processes while the releases are validated
    (None without Data Docs)."""
    if prepared.site_name is None:
        return None
    from er_expectations.gx.docs.chart_prewarm import ChartPrewarm

    return ChartPrewarm(project.ctx)


def _repair_project(prepared: PreparedRun, *, out: TextIO) -> None:
    """Phase 1 on the existing project: unreadable stored suites (an interrupted run) are
    replaced from the suite files, stale temporary files removed."""
    project_dir = prepared.checkpoint.project_dir
    damaged = check_project(project_dir, prepared.site_name, prepared.checkpoint)
    for file in damaged:
        print(f"Replacing the unreadable stored suite {file} (an interrupted run?) from the suite files.",
              file=out, flush=True)
        file.unlink()
    remove_stale_temporaries(project_dir)
    for what, file, target, why in set_aside_damaged_results(project_dir):
        again = ("its release is not in Data Docs until it is run again" if what == "validation result"
                 else "this run writes it again")
        print(f"Moved the unreadable {what} {file} ({why}; a full disk or a killed run leaves this) to "
              f"{target}; {again}.", file=out, flush=True)


def _write_release_tables(prepared: PreparedRun, selected: Sequence[Any], names: Mapping[str, str],
                          tables: dict[str, Any]) -> Path:
    """(c) The release tables inside the project, as the data writes them (files: Parquet; a
    database's or Spark's batches are queries and DataFrames, nothing is written); the folder
    that holds them."""
    checkpoint = prepared.checkpoint
    project_dir = checkpoint.project_dir
    folder = ensure_inside(project_dir, project_dir / DATA_FOLDER / checkpoint.name)
    prepared.data.write_batches(folder, selected, names, tables)
    return folder


def _stored_checkpoints(project: Project, prepared: PreparedRun, selected: Sequence[Any],
                        names: Mapping[str, str], tables: Mapping[str, Any]
                        ) -> tuple[dict[str, Any], Any, list[str]]:
    """(d) One stored GX checkpoint per release, run here with ``Checkpoint.run`` without
    actions; the checkpoint over all the selected releases is stored too, with the Data Docs
    and history actions, for GX's own tools. Returns those and the history's release order."""
    from er_expectations.run.history import history_action

    checkpoint = prepared.checkpoint
    definitions = project.batch_definitions({r.label: names[r.label] for r in selected}, tables)
    suites = project.suites()
    per_release = {}
    for release in selected:
        name = names[release.label]
        vds = project.validation_definitions(name, definitions[release.label], suites)
        per_release[release.label] = project.checkpoint(f"{project.name}__{name}", vds, actions=False)
    # the history's release order: every release of the predictions (a labelling batch: itself)
    positions = prepared.data.history_positions(selected)
    recording = history_action(checkpoint, {names[r.label]: r.label for r in selected}, positions)
    combined = project.checkpoint(project.name, [vd for cp in per_release.values() for vd in cp.validation_definitions],
                                  extra=[recording] if recording is not None else [])
    return per_release, combined, positions


def _validate_releases(project: Project, prepared: PreparedRun, selected: Sequence[Any], tables: Mapping[str, Any],
                       per_release: Mapping[str, Any], combined: Any, positions: Sequence[str], report: RunReport,
                       names: Mapping[str, str], *, run_time: datetime, progress: bool,
                       out: TextIO, parameters: Mapping[str, Any], charts: Any = None) -> dict[Any, str]:
    """(d) Validate each release under a progress bar and record it in the history right after
    (one transaction); returns each GX result identifier's release label. ``charts`` (a
    :class:`~er_expectations.gx.docs.chart_prewarm.ChartPrewarm`) starts drawing the charts of each
    release's pages."""
    from great_expectations.core.run_identifier import RunIdentifier
    from tqdm.auto import tqdm

    from er_expectations.run.history import HistoryRecorder

    checkpoint = prepared.checkpoint
    run_id = RunIdentifier(run_name=checkpoint.name, run_time=run_time)
    provenance = run_provenance(checkpoint, prepared.suites, prepared.data, run_name=checkpoint.name,
                                run_time=run_time)
    report.provenance = provenance
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
                batch = prepared.data.batch_parameters(tables.get(release.label))  # Spark: its DataFrame
                result = per_release[release.label].run(run_id=run_id, batch_parameters=batch,
                                                        expectation_parameters=dict(parameters))
            if charts is not None:
                charts.add(result.run_results.values())
            outcome = ReleaseOutcome(label=release.label, key=release.key, gx_checkpoint=combined.name)
            table = prepared.data.table_file(project.folder, names[release.label])  # the file GX read
            outcome.provenance = release_provenance(provenance, label=release.label, table=table,
                                                    project_dir=checkpoint.project_dir)
            for identifier, validation in result.run_results.items():
                restate_statistics(validation)  # a skipped check is not successful (SPEC 13); stored below
                project.add_provenance(identifier, validation, outcome.provenance)
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
    return labels_by_result


def _build_docs(project: Project, prepared: PreparedRun, report: RunReport, labels_by_result: Mapping[Any, str],
                charts: Any = None) -> None:
    """(e) Data Docs: this run's pages, the pages an interrupted run missed and the index
    (their charts from ``charts`` when drawn there)."""
    site = prepared.site_name
    if site is None:
        return
    from er_expectations.run.docs_problem import DataDocsError

    try:
        report.data_docs_index = project.build_docs(site, list(labels_by_result),
                                                    charts.pending if charts is not None else None)
    except DataDocsError as error:  # the results and history are written: say so, keep going
        report.data_docs_problem = str(error)
        return
    by_label = {o.label: o for o in report.releases}
    for identifier, label in labels_by_result.items():
        page = project.page(identifier, site)
        if page:
            by_label[label].pages.append(page)


