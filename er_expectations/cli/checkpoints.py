"""Command line: ``run``, ``validate`` and ``init``, the commands built on YAML and GX.

* ``er-expectations run CHECKPOINT [--release R ...] [--no-progress]`` validates the
  releases of a checkpoint file and builds Data Docs. Exit code 0 when every critical
  expectation passed, 1 when one failed, 2 on a configuration, data or usage error.
* ``er-expectations validate FILE ...`` checks suite and checkpoint files (for a
  checkpoint: its suites, files and columns too) without running anything.
* ``er-expectations init --records FILE --id-column COL ...`` writes a starting suite and
  checkpoint.

Configuration problems are printed one per line as ``file:line:column: message; hint``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from er_expectations.cli.common import (
    EXIT_CODES,
    EXIT_DOCS,
    EXIT_FAILED,
    EXIT_HISTORY,
    EXIT_INCOMPLETE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_TERMINATED,
    EXIT_USAGE,
)
from er_expectations.config import ConfigError, ConfigIssue, PredictionsSource
from er_expectations.core.errors import InputError

if TYPE_CHECKING:
    from er_expectations.run.benchmark_design import BenchmarkWiring

__all__ = ["add_gx_commands", "cmd_init", "cmd_run", "cmd_validate", "publish_usage_error"]

_GLOB_CHARACTERS = set("*?[")


def _shown(issue: ConfigIssue) -> ConfigIssue:
    """The issue with its file relative to the current folder when it lies below it."""
    path = Path(issue.file)
    if path.is_absolute():
        try:
            relative = path.relative_to(Path.cwd())
        except ValueError:
            return issue
        return ConfigIssue(str(relative), issue.line, issue.column, issue.message, issue.hint)
    return issue


def _print_issues(issues: Iterable[ConfigIssue], *, what: str) -> None:
    unique = list(dict.fromkeys(_shown(issue) for issue in issues))
    for issue in unique:
        print(str(issue), file=sys.stderr)
    plural = "s" if len(unique) != 1 else ""
    print(f"er-expectations: {len(unique)} configuration problem{plural}; {what}", file=sys.stderr)


# -- run ---------------------------------------------------------------------------------


#: The JSON document ``run --format json`` prints (docs/run-report.md): its schema and version.
RUN_REPORT_SCHEMA = "er-expectations/run-report"
RUN_REPORT_VERSION = 2  # 2: evaluated leaves skipped checks out, successful = passed (issue 29)


def run_document(report: Any, code: int) -> dict[str, Any]:
    """The run report as the documented JSON document (docs/run-report.md)."""
    from er_expectations.core.version import __version__

    return {"schema": RUN_REPORT_SCHEMA, "version": RUN_REPORT_VERSION, "er_expectations": __version__,
            "exit_code": code, "exit_meaning": EXIT_CODES[code], **report.to_dict(),
            "elapsed_seconds": round(report.elapsed, 3)}


def stopped_document(checkpoint_file: str | None, code: int, message: str,
                     issues: Sequence[ConfigIssue] = ()) -> dict[str, Any]:
    """The run report of a run that stopped before its end (docs/run-report.md): a configuration
    or input error, a busy project, an unreachable source, an interruption or a bug."""
    from er_expectations.core.version import __version__

    return {"schema": RUN_REPORT_SCHEMA, "version": RUN_REPORT_VERSION, "er_expectations": __version__,
            "exit_code": code, "exit_meaning": EXIT_CODES[code], "checkpoint": None,
            "checkpoint_file": checkpoint_file, "success": False, "status": "stopped", "releases": [],
            "error": {"message": message,
                      "issues": [{"file": i.file, "line": i.line, "column": i.column, "message": i.message,
                                  "hint": i.hint} for i in issues]}}


def _publish(document: dict[str, Any], *, to_stdout: bool, report: str | None) -> None:
    """The run report on one line: on stdout (``--format json``) and in ``--report FILE``."""
    import json

    from er_expectations.cli.common import json_default

    line = json.dumps(document, default=json_default) + "\n"  # one line: a scheduler reads the last line
    if report:
        from er_expectations.core.io import atomic_write_text

        try:
            atomic_write_text(report, line)
        except OSError as error:
            print(f"er-expectations: error: --report {report}: cannot write: {error.strerror or error}",
                  file=sys.stderr)
    if to_stdout:
        sys.stdout.write(line)
        sys.stdout.flush()


def publish_usage_error(argv: Sequence[str]) -> None:
    """After a usage error of the options (argparse, exit code 2): the stopped run report on
    stdout when the command line is ``run ... --format json``, so that a scheduler reading stdout
    gets a document for every exit code (the message itself is on stderr)."""
    argv = list(argv)
    if "run" not in argv:
        return
    rest = argv[argv.index("run") + 1:]
    as_json = "--format=json" in rest or any(a == "--format" and b == "json" for a, b in zip(rest, rest[1:], strict=False))
    if as_json:
        _publish(stopped_document(None, EXIT_USAGE, "usage error of the command line options (see stderr)"),
                 to_stdout=True, report=None)


def cmd_run(args: argparse.Namespace) -> int:
    """``run``: validate the releases of a checkpoint file.

    ``--format json`` prints the run report as one JSON document on one line on stdout; what the
    run says along the way (and the summary) goes to stderr then. ``--report FILE`` writes the
    same document to FILE. A run that stops early (any exit code but 0, 1, 3, 6, 8) gets a
    document too, with ``status: "stopped"`` and the ``error``.
    """
    from er_expectations.cli.common import check_output, classify_error
    from er_expectations.config.parameters import load_parameters_file, parse_param_options
    from er_expectations.core.errors import Terminated
    from er_expectations.run.runner import run_checkpoint

    as_json = args.format == "json"
    report_file = getattr(args, "report", None)
    try:
        check_output(report_file, [args.checkpoint, *([args.params] if args.params else [])], option="--report")
        parameters = load_parameters_file(args.params) if args.params else {}
        parameters.update(parse_param_options(args.param or []))  # --param wins over the file
        report = run_checkpoint(
            args.checkpoint, releases=args.release, progress=not args.no_progress,
            lock_timeout=args.lock_timeout, parameters=parameters, out=sys.stderr if as_json else None,
        )
    except ConfigError as error:
        _print_issues(error.issues, what="nothing was run and nothing was written")
        if as_json or report_file:
            n = len(error.issues)
            message = f"{n} configuration problem{'s' if n != 1 else ''}; nothing was run and nothing was written"
            _publish(stopped_document(args.checkpoint, EXIT_USAGE, message, error.issues),
                     to_stdout=as_json, report=report_file)
        return EXIT_USAGE
    except (Exception, KeyboardInterrupt, Terminated) as error:
        if as_json or report_file:  # the one line on stderr and the exit code come from main()
            if isinstance(error, KeyboardInterrupt):
                code, message = EXIT_INTERRUPTED, "interrupted"
            elif isinstance(error, Terminated):
                code, message = EXIT_TERMINATED, EXIT_CODES[EXIT_TERMINATED]
            else:
                code, message = classify_error(error)
                message = message.removeprefix("error: ")
            _publish(stopped_document(args.checkpoint, code, message), to_stdout=as_json, report=report_file)
        raise
    code = {"failed": EXIT_FAILED, "error": EXIT_INCOMPLETE}.get(report.status, EXIT_OK)
    if report.history_problem is not None:
        print(f"er-expectations: error: the history was not recorded: {report.history_problem}",
              file=sys.stderr)
        if code == EXIT_OK:  # a failed or broken release says more; the message says both
            code = EXIT_HISTORY
    if report.data_docs_problem is not None:
        print(f"er-expectations: error: Data Docs not complete: {report.data_docs_problem}", file=sys.stderr)
        if code == EXIT_OK:
            code = EXIT_DOCS
    if as_json or report_file:
        _publish(run_document(report, code), to_stdout=as_json, report=report_file)
    return code


# -- validate ----------------------------------------------------------------------------


def _validate_one(path: str) -> tuple[str | None, list[ConfigIssue]]:
    """``(description, [])`` when the file is fine, ``(None, issues)`` otherwise."""
    from er_expectations.config import CheckpointConfig, load_any

    try:
        loaded = load_any(path)
    except ConfigError as error:
        return None, list(error.issues)
    if not isinstance(loaded, CheckpointConfig):
        count = len(loaded.expectations)
        return f"suite '{loaded.name}', {count} expectation{'s' if count != 1 else ''}", []
    from er_expectations.run.preflight import prepare_run

    try:
        prepared = prepare_run(path, check_environment=False)  # ${NAME} variables: checked by `run`
        engine = prepared.checkpoint.data.engine
        # a database or Spark is not opened here (no environment): its releases show when run
        releases = prepared.data.select() if prepared.data.connected else None
    except ConfigError as error:
        return None, list(error.issues)
    except InputError as error:
        return None, [ConfigIssue(str(path), None, None, str(error))]
    suites = ", ".join(s.name for s in prepared.suites)
    shown = (f"{len(releases)} release{'s' if len(releases) != 1 else ''}" if releases is not None
             else f"tables in {engine} (not opened by validate)")
    return f"checkpoint '{prepared.checkpoint.name}', {shown}, suites: {suites}", []


def cmd_validate(args: argparse.Namespace) -> int:
    """``validate``: lint suite and checkpoint files; exit 2 listing every problem."""
    problems: list[ConfigIssue] = []
    for path in args.files:
        description, issues = _validate_one(path)
        if issues:
            problems.extend(issues)
        else:
            print(f"{path}: ok ({description})")
    if problems:
        _print_issues(problems, what="fix them and validate again")
        return EXIT_USAGE
    return EXIT_OK


# -- init --------------------------------------------------------------------------------


def _columns(path: str, what: str, errors: list[str]) -> list[str] | None:
    from er_expectations.core.io import table_columns

    try:
        return table_columns(path)
    except InputError as error:
        errors.append(f"{what}: {error}")
        return None


def _require(columns: list[str] | None, column: str, path: str, option: str, errors: list[str]) -> None:
    if columns is None or column in columns:
        return
    from er_expectations.config.errors import did_you_mean

    hint = did_you_mean(column, columns)
    shown = ", ".join(columns[:12]) + (" ..." if len(columns) > 12 else "")
    errors.append(
        f"{option}: no column '{column}' in {path}"
        + (f"; {hint}" if hint else f"; the file has: {shown}")
    )


def _relative(path: str, start: Path) -> str:
    """``path`` relative to ``start`` (as the checkpoint file will resolve it).

    Files that share no folder with ``start`` but the file-system root keep their
    absolute path: ``../../../../data/x.parquet`` helps nobody.
    """
    target = Path(path).resolve()
    base = start.resolve()
    try:
        common = Path(os.path.commonpath([target, base]))
    except ValueError:  # another drive on Windows
        return target.as_posix()
    if common == Path(common.anchor):
        return target.as_posix()
    return Path(os.path.relpath(target, base)).as_posix()


def _parse_files(items: Sequence[str], errors: list[str]) -> dict[str, str]:
    files: dict[str, str] = {}
    for item in items:
        label, sep, file = item.partition("=")
        if not sep or not label or not file:
            errors.append(f"--prediction-files: expected LABEL=FILE, got '{item}'")
            continue
        if label in files:
            errors.append(f"--prediction-files: release '{label}' is given twice")
            continue
        files[label] = file
    return files


def _default_name(records: str) -> str:
    from er_expectations.core.names import safe_name

    folder = Path(records).resolve().parent.name
    return safe_name(folder, fallback="er_checks")


def _init_option_errors(args: argparse.Namespace, name: str) -> list[str]:
    """The options of ``init`` that do not go together (nothing read yet)."""
    from er_expectations.core.names import name_problem

    errors: list[str] = []
    problem = name_problem(name, what="suite and checkpoint")
    if problem is not None:
        errors.append(f"--name: {problem[0]}; {problem[1]}")
    if (args.predictions is None) == (not args.prediction_files):
        errors.append("give either --predictions FILE (one column per release) or "
                      "--prediction-files LABEL=FILE ... (one file per release)")
    if args.prediction_files and not args.prediction_column:
        errors.append("--prediction-files needs --prediction-column COL (the column of each file)")
    if args.prediction_columns and args.predictions is None:
        errors.append("--prediction-columns goes with --predictions")
    if (args.benchmark is None) != (args.reference_column is None):
        errors.append("--benchmark FILE and --reference-column COL go together")
    return errors


def _check_records_columns(args: argparse.Namespace, errors: list[str]) -> None:
    records_columns = _columns(args.records, "--records", errors)
    _require(records_columns, args.id_column, args.records, "--id-column", errors)
    for column in args.name_columns or ():
        _require(records_columns, column, args.records, "--name-columns", errors)


def _check_prediction_columns(args: argparse.Namespace, errors: list[str]
                              ) -> tuple[str | list[str] | None, dict[str, str]]:
    """The prediction columns (a list or one glob) or files the checkpoint will name."""
    prediction_columns: str | list[str] | None = None
    files: dict[str, str] = {}
    if args.predictions is not None:
        available = _columns(args.predictions, "--predictions", errors)
        _require(available, args.id_column, args.predictions, "--id-column", errors)
        chosen = list(args.prediction_columns or ())
        if len(chosen) == 1 and _GLOB_CHARACTERS & set(chosen[0]):
            prediction_columns = chosen[0]
            if available is not None:
                from er_expectations.config import PredictionsSource

                source = PredictionsSource(id_column=args.id_column, columns=chosen[0])
                if not source.match_columns(available):
                    errors.append(
                        f"--prediction-columns: '{chosen[0]}' matches no column of {args.predictions}"
                    )
        elif chosen:
            prediction_columns = chosen
            for column in chosen:
                _require(available, column, args.predictions, "--prediction-columns", errors)
    elif args.prediction_files:
        files = _parse_files(args.prediction_files, errors)
        for label, file in files.items():
            available = _columns(file, f"--prediction-files {label}", errors)
            _require(available, args.id_column, file, "--id-column", errors)
            if args.prediction_column:
                _require(available, args.prediction_column, file, "--prediction-column", errors)
    return prediction_columns, files


def _check_benchmark_columns(args: argparse.Namespace, errors: list[str]) -> BenchmarkWiring | None:
    """The benchmark's columns checked, and what the suite must say of its draws and design."""
    if args.benchmark is None or args.reference_column is None:
        return None
    from er_expectations.run.benchmark_design import benchmark_wiring, read_benchmark_design

    available = _columns(args.benchmark, "--benchmark", errors)
    bench_id = args.benchmark_id_column or args.id_column
    _require(available, bench_id, args.benchmark, "--benchmark-id-column", errors)
    _require(available, args.reference_column, args.benchmark, "--reference-column", errors)
    if available is None or args.reference_column not in available:
        return None
    try:
        return benchmark_wiring(read_benchmark_design(args.benchmark, reference_column=args.reference_column))
    except InputError as error:
        errors.append(f"--benchmark: {error}")
        return None


def _init_targets(args: argparse.Namespace, name: str, errors: list[str]) -> tuple[Path, Path]:
    """The suite and checkpoint files ``init`` writes (existing ones only with ``--force``)."""
    base = Path(args.dir)
    suite_file = base / "suites" / f"{name}.yml"
    checkpoint_file = base / "checkpoints" / f"{name}.yml"
    existing = [p for p in (suite_file, checkpoint_file) if p.exists()]
    if existing and not args.force:
        errors.append(
            f"{' and '.join(str(p) for p in existing)} already exist"
            f"{'s' if len(existing) == 1 else ''}; pass --force to overwrite, "
            "or choose another --name or --dir"
        )
    return suite_file, checkpoint_file


def _release_count(args: argparse.Namespace, prediction_columns: str | list[str] | None,
                   files: dict[str, str]) -> int:
    """How many releases the checkpoint will validate (its columns or files)."""
    from er_expectations.core.io import table_columns  # pandas, for init only

    if args.predictions is None:
        return len(files)
    source = PredictionsSource(id_column=args.id_column, columns=prediction_columns)
    return len(source.match_columns(table_columns(args.predictions)))


def _scaffolds(args: argparse.Namespace, name: str, checkpoint_file: Path,
               prediction_columns: str | list[str] | None, files: dict[str, str],
               wiring: BenchmarkWiring | None = None) -> tuple[str, str]:
    """The text of the suite and of the checkpoint file."""
    from er_expectations.config import scaffold_checkpoint, scaffold_suite

    target = "prediction" if args.predictions is not None else args.prediction_column
    name_column = "full_name" if args.name_columns else None
    suite_text = scaffold_suite(
        name=name,
        prediction_column=target,
        record_id_column=args.id_column,
        reference_column=args.reference_column,
        name_column=name_column,
        draws_column=wiring.draws_column if wiring else None,
        weights_column=wiring.weights_column if wiring else None,
        benchmark_notes=wiring.notes if wiring else None,
        releases=_release_count(args, prediction_columns, files),
    )
    folder = checkpoint_file.parent
    checkpoint_text = scaffold_checkpoint(
        name=name,
        records_path=_relative(args.records, folder),
        id_column=args.id_column,
        suites=[name],
        predictions_path=_relative(args.predictions, folder) if args.predictions else None,
        prediction_columns=prediction_columns,
        prediction_files={k: _relative(v, folder) for k, v in files.items()} if files else None,
        prediction_column=args.prediction_column if files else None,
        benchmark_path=_relative(args.benchmark, folder) if args.benchmark else None,
        reference_column=args.reference_column,
        benchmark_id_column=args.benchmark_id_column,
        name_columns=tuple(args.name_columns or ()),
        name_separator=args.name_separator,
        benchmark_note=wiring.checkpoint_note if wiring else None,
    )
    return suite_text, checkpoint_text


def cmd_init(args: argparse.Namespace) -> int:
    """``init``: write ``suites/<name>.yml`` and ``checkpoints/<name>.yml``.

    Every problem of the options and files is reported before anything is written."""
    from er_expectations.core.io import atomic_write_text
    from er_expectations.run.preflight import prepare_run

    name = args.name or _default_name(args.records)
    errors = _init_option_errors(args, name)
    _check_records_columns(args, errors)
    prediction_columns, files = _check_prediction_columns(args, errors)
    wiring = _check_benchmark_columns(args, errors)
    suite_file, checkpoint_file = _init_targets(args, name, errors)
    if errors:
        for message in errors:
            print(f"er-expectations: error: {message}", file=sys.stderr)
        print("er-expectations: nothing was written", file=sys.stderr)
        return EXIT_USAGE

    suite_text, checkpoint_text = _scaffolds(args, name, checkpoint_file, prediction_columns, files, wiring)
    atomic_write_text(suite_file, suite_text)
    print(f"wrote {suite_file}")
    atomic_write_text(checkpoint_file, checkpoint_text)
    print(f"wrote {checkpoint_file}")
    try:
        prepare_run(checkpoint_file)
    except ConfigError as error:  # pragma: no cover - the scaffolds are tested to load
        _print_issues(error.issues, what="the files were written but need fixing")
        return EXIT_USAGE
    print(f"Review the placeholder thresholds in {suite_file}, then run:")
    print(f"  er-expectations run {checkpoint_file}")
    return EXIT_OK


# -- wiring ------------------------------------------------------------------------------


def _seconds(text: str) -> float:
    import math

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number of seconds") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"'{text}': give a number of seconds >= 0") from None
    return value


def add_gx_commands(sub: argparse._SubParsersAction) -> None:
    """Add ``run``, ``validate`` and ``init`` to the ``er-expectations`` sub-commands."""
    p = sub.add_parser(
        "run",
        help="validate the releases of a checkpoint file with Great Expectations",
        description="Validate every release of a checkpoint file and build Data Docs. Exit codes: "
        + "; ".join(f"{code} {meaning}" for code, meaning in EXIT_CODES.items()) + ".",
    )
    p.add_argument("checkpoint", help="checkpoint file (checkpoints/<name>.yml)")
    p.add_argument(
        "--release",
        action="extend",
        nargs="+",
        default=None,
        metavar="R",
        help="only these releases (labels such as 2022-06-30, or prediction columns); repeatable",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="text (default), or json: the run report as one JSON document on one line on "
                   "stdout, the messages on stderr (docs/run-report.md); a run that stops early prints "
                   "one too")
    p.add_argument("--report", metavar="FILE",
                   help="also write the run report (one line of JSON, docs/run-report.md) to FILE, "
                   "atomically, whatever --format; its folder must exist")
    p.add_argument(
        "--param",
        action="append",
        metavar="NAME=VALUE",
        help="the value of a suite parameter ({$PARAMETER: NAME} in a suite); repeatable; "
        "wins over --params",
    )
    p.add_argument(
        "--params",
        metavar="FILE",
        help="a YAML or JSON file of suite parameter values (name: value per line)",
    )
    p.add_argument(
        "--lock-timeout",
        type=_seconds,
        default=None,
        metavar="SECONDS",
        help="runs on one project take turns; wait at most this long for another run "
        "(default: no limit; exit code 5 on timeout)",
    )
    p.set_defaults(func=cmd_run)

    p = sub.add_parser(
        "validate",
        help="check suite and checkpoint files without running them",
        description="Check suite and checkpoint files: syntax, parameters, and for a "
        "checkpoint its suites, files and columns. Prints 'ok' per good file; exit 2 with "
        "every problem otherwise.",
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="suite or checkpoint files")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser(
        "init",
        help="write a starting suite and checkpoint for your data",
        description="Write suites/<name>.yml and checkpoints/<name>.yml for a records table, "
        "the predictions of one or more releases and an optional benchmark.",
    )
    p.add_argument("--records", required=True, metavar="FILE", help="records table (.parquet or .csv)")
    p.add_argument("--id-column", required=True, metavar="COL", help="record id column (in every file)")
    p.add_argument("--predictions", metavar="FILE", help="one file with a prediction column per release")
    p.add_argument(
        "--prediction-columns",
        nargs="+",
        metavar="GLOB",
        help="release columns of --predictions: a glob such as 'inventor_id_*' or a list "
        "(default: every column but the id)",
    )
    p.add_argument(
        "--prediction-files",
        nargs="+",
        metavar="LABEL=FILE",
        help="one prediction file per release, e.g. 2022-06=pred_2022_06.parquet",
    )
    p.add_argument("--prediction-column", metavar="COL", help="prediction column of --prediction-files")
    p.add_argument("--benchmark", metavar="FILE", help="benchmark table (record id, true cluster id)")
    p.add_argument("--reference-column", metavar="COL", help="true cluster id column of --benchmark")
    p.add_argument(
        "--benchmark-id-column", metavar="COL", help="record id column of --benchmark (default: --id-column)"
    )
    p.add_argument(
        "--name-columns", nargs="+", metavar="COL", help="record columns that make the name, e.g. first last"
    )
    p.add_argument("--name-separator", default=" ", help="separator for --name-columns (default: a space)")
    p.add_argument("--name", help="name of the suite and checkpoint (default: the records' folder name)")
    p.add_argument("--dir", default=".", help="where to create suites/ and checkpoints/ (default: .)")
    p.add_argument("--force", action="store_true", help="overwrite existing files")
    p.set_defaults(func=cmd_init)
