"""Command line: ``er-expectations summarize|estimate|simulate|plan|run|validate|init|diff|history``.

Exit codes, one meaning each (:data:`EXIT_CODES`):

* 0 success (for ``run``: no critical expectation failed and none raised);
* 1 a critical expectation failed (``run``);
* 2 a usage, configuration or input error: nothing was validated (the message names the
  file, line, column or option and the fix);
* 3 an expectation could not be computed (it raised; ``run``): the results are written and
  Data Docs show the error, but the release was not fully checked;
* 4 an internal error of er-expectations (a bug: please report it; ``--debug`` shows the
  traceback);
* 5 the GX project stayed locked by another run longer than ``--lock-timeout``;
* 6 (``run``) every release passed, but the history store could not be written: the
  validation results and Data Docs are kept, the message names the store;
* 7 (``run``) the database or Spark of a checkpoint (``data.engine: sql | spark``) cannot be
  reached: nothing was validated or written; a scheduler may retry later;
* 130 interrupted (Ctrl-C).

Problems are printed as one line each on stderr, never as a traceback unless ``--debug``
(or ``ER_EXPECTATIONS_DEBUG=1``) is given.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import warnings
from collections.abc import Sequence

import pandas as pd

from er_expectations.core.errors import InputError

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INCOMPLETE, EXIT_INTERNAL, EXIT_BUSY = 0, 1, 2, 3, 4, 5
EXIT_HISTORY = 6
EXIT_SOURCE = 7
EXIT_INTERRUPTED = 130
#: What every exit code means (documented in ``--help`` and the README).
EXIT_CODES: dict[int, str] = {
    EXIT_OK: "success",
    EXIT_FAILED: "a critical expectation failed",
    EXIT_USAGE: "usage, configuration or input error (nothing was validated)",
    EXIT_INCOMPLETE: "an expectation could not be computed (it raised an error)",
    EXIT_INTERNAL: "internal error of er-expectations (a bug; --debug shows the traceback)",
    EXIT_BUSY: "the project stayed locked by another run longer than --lock-timeout",
    EXIT_HISTORY: "the releases passed but the history store could not be written (results and Data Docs kept)",
    EXIT_SOURCE: "the database or Spark of the checkpoint cannot be reached (nothing validated; retry later)",
    EXIT_INTERRUPTED: "interrupted",
}


def _load_frame(args: argparse.Namespace, needed: list[str]) -> pd.DataFrame:
    from er_expectations.core.io import combine_name, read_table, same_id_kind, table_columns

    main_cols = table_columns(args.file)
    join_frames = []
    for path in args.join or []:
        cols = table_columns(path)
        if args.on not in cols:
            raise InputError(f"{path}: no column {args.on!r} to join on (--on); the file has: {', '.join(cols[:20])}")
        join_frames.append((path, cols))
    if (args.join) and args.on not in main_cols:
        raise InputError(f"{args.file}: no column {args.on!r} to join on (--on)")
    want = set(needed) | ({args.on} if args.join else set())
    df = read_table(args.file, [c for c in main_cols if c in want])
    for path, cols in join_frames:
        extra = [c for c in cols if c in want and (c == args.on or c not in df.columns)]
        other = read_table(path, extra)
        same_id_kind(df, args.file, other, path, args.on)
        if other[args.on].duplicated().any():
            raise InputError(f"{path}: column {args.on!r} has duplicated ids; a joined file needs one row per record")
        df = df.merge(other, on=args.on, how="left", validate="many_to_one")
    missing = [c for c in needed if c not in df.columns]
    if missing:
        from er_expectations.core.hints import did_you_mean

        known = list(dict.fromkeys(main_cols + [c for _, cols in join_frames for c in cols]))
        hints = []
        for m in missing:
            hint = did_you_mean(m, known)
            hints.append(f"'{m}'" + (f" ({hint})" if hint else ""))
        raise InputError(f"column(s) {', '.join(hints)} not found in {args.file} or the joined files")
    if args.name_columns:
        df["__name__"] = combine_name(df, args.name_columns, separator=args.name_separator)
    return df


def _name_arg(args: argparse.Namespace) -> str | None:
    if args.name and args.name_columns:
        raise InputError("give either --name COLUMN or --name-columns COL [COL ...], not both")
    if args.name_columns:
        return "__name__"
    return args.name


def _needed_name_cols(args: argparse.Namespace) -> list[str]:
    if args.name_columns:
        return list(args.name_columns)
    return [args.name] if args.name else []


def _fmt(x: float, digits: int = 4) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    if isinstance(x, float) and math.isinf(x):
        return "∞"
    if isinstance(x, float) and float(x).is_integer() and abs(x) >= 1000:
        return f"{int(x):,}"
    return f"{x:.{digits}g}" if isinstance(x, float) else str(x)


def _check_output(output: str | None) -> None:
    """``-o`` must name a file in an existing folder (checked before any work is done)."""
    if not output:
        return
    from pathlib import Path

    path = Path(output)
    if path.is_dir():
        raise InputError(f"--output {output}: is a folder; give a file name, e.g. {path / 'result.txt'}")
    if not path.parent.is_dir():
        raise InputError(f"--output {output}: the folder {path.parent} does not exist; create it first")


def _emit(text: str, output: str | None) -> None:
    if output:
        from er_expectations.core.io import atomic_write_text

        try:
            atomic_write_text(output, text)
        except OSError as error:
            raise InputError(f"--output {output}: cannot write: {error.strerror or error}") from error
    else:
        sys.stdout.write(text)


def _json_default(o: object) -> object:
    if hasattr(o, "item"):
        return o.item()
    return str(o)


def _clean(v: object) -> object:
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return None if math.isnan(v) else ("inf" if v > 0 else "-inf")
    return v


def cmd_summarize(args: argparse.Namespace) -> int:
    from er_expectations.analysis.release import summarize

    name = _name_arg(args)
    _check_output(args.output)
    df = _load_frame(args, [args.cluster, *_needed_name_cols(args)] + ([args.record_id] if args.record_id else []))
    s = summarize(df, cluster=args.cluster, name=name, hill_orders=args.hill_orders, record_id=args.record_id)
    if args.format == "json":
        _emit(json.dumps({k: _clean(float(v)) for k, v in s.items()}, indent=2, default=_json_default) + "\n", args.output)
    elif args.format == "csv":
        _emit(s.rename("value").rename_axis("statistic").to_csv(), args.output)
    else:
        width = max(len(str(k)) for k in s.index)
        lines = [f"Summary of clustering {args.cluster!r} in {args.file}"]
        lines += [f"  {str(k).ljust(width)}  {_fmt(float(v), 6)}" for k, v in s.items()]
        _emit("\n".join(lines) + "\n", args.output)
    return EXIT_OK


def cmd_estimate(args: argparse.Namespace) -> int:
    from er_expectations.analysis.release import estimate

    name = _name_arg(args)
    _check_output(args.output)
    needed = [args.prediction, args.reference, *_needed_name_cols(args)]
    weights: object = args.weights
    if args.weights not in ("cluster_size", "uniform"):
        needed.append(args.weights)
    if args.draws:
        needed.append(args.draws)
    if args.record_id:
        needed.append(args.record_id)
    df = _load_frame(args, needed)
    est = estimate(df, prediction=args.prediction, reference=args.reference, weights=weights, draws=args.draws,
                   name=name, metrics=args.metrics, beta=args.beta, ci_level=args.ci_level,
                   bias_adjust=not args.no_bias_adjust, record_id=args.record_id,
                   ci_method=args.ci_method, n_boot=args.n_boot, seed=args.seed)
    if args.format == "json":
        payload = {
            "attrs": {k: _clean(v) for k, v in est.attrs.items()},
            "estimates": {m: {k: _clean(v) for k, v in row.items()} for m, row in est.to_dict(orient="index").items()},
        }
        _emit(json.dumps(payload, indent=2, default=_json_default) + "\n", args.output)
    elif args.format == "csv":
        _emit(est.to_csv(), args.output)
    else:
        lvl = f"{est.attrs['ci_level'] * 100:g}% CI"
        if est.attrs.get("ci_method") == "bootstrap":
            lvl = f"{est.attrs['ci_level'] * 100:g}% bootstrap CI"
        head = ["metric", "estimate", "std error", lvl, "draws", "clusters"]
        rows = []
        notes = []
        for mid, r in est.iterrows():
            ci = "—" if math.isnan(r.ci_lower) else f"{r.ci_lower:.3f} – {r.ci_upper:.3f}"
            mark = ""
            if r.note:
                notes.append(r.note)
                mark = f" [{len(notes)}]"
            rows.append([str(mid) + mark, _fmt(r.estimate), _fmt(r.std_error, 3), ci, str(r.draws), str(r.clusters)])
        widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(head)]
        out = [f"Estimates for {args.prediction!r} from benchmark {args.reference!r} "
               f"(design {est.attrs['design']}, {est.attrs['records_set_aside']} benchmark records not in the release set aside)"]
        out.append("  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)))
        out.append("  ".join("-" * w for w in widths))
        out += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in rows]
        if est.attrs.get("ci_method") == "bootstrap":
            out.append(f"Intervals: percentile bootstrap, {est.attrs['n_boot']} resamples of the draws, "
                       f"seed {est.attrs['seed']}.")
        out += [f"[{i}] {n}" for i, n in enumerate(notes, 1)]
        _emit("\n".join(out) + "\n", args.output)
    return EXIT_OK


def _add_table_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="record table (.parquet or .csv), one row per record")
    p.add_argument("--join", action="append", metavar="FILE",
                   help="another table to left-join on --on (e.g. the benchmark or the names); repeatable")
    p.add_argument("--on", default="mention_id", help="record id column used by --join (default: mention_id)")
    p.add_argument("--record-id", default=None, help="record id column; duplicated ids are reported as an error")
    p.add_argument("--name", default=None, help="column with the name used for homonymy and name variation")
    p.add_argument("--name-columns", nargs="+", default=None, metavar="COL",
                   help="build the name from several columns, e.g. --name-columns name_first name_last")
    p.add_argument("--name-separator", default=" ", help="separator for --name-columns (default: a space)")
    p.add_argument("--format", choices=("table", "json", "csv"), default="table", help="output format")
    p.add_argument("--output", "-o", default=None, help="write to this file (atomically) instead of stdout")


def _hill(value: str) -> float:
    from er_expectations.stats import parse_hill_orders

    try:
        return parse_hill_orders((value,), parameter="--hill-orders")[0]
    except InputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="er-expectations",
        description="Quality checks for entity-resolution outputs (Great Expectations plugin).",
    )
    from er_expectations import __version__

    parser.add_argument("--version", action="version", version=f"er-expectations {__version__}")
    parser.add_argument("--debug", action="store_true", help="print the traceback of an error")
    parser.epilog = "exit codes: " + "; ".join(f"{code} {meaning}" for code, meaning in EXIT_CODES.items())
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("summarize", help="summary statistics of a predicted clustering (SPEC 3)")
    _add_table_args(p)
    p.add_argument("--cluster", "-c", required=True, help="predicted cluster id column")
    p.add_argument("--hill-orders", nargs="+", type=_hill, default=[0, 1, 2, math.inf], metavar="Q",
                   help="Hill number orders q >= 0 ('inf' allowed); default 0 1 2 inf")
    p.set_defaults(func=cmd_summarize)

    p = sub.add_parser("estimate", help="performance estimates from a benchmark sample (SPEC 5-7)")
    _add_table_args(p)
    p.add_argument("--prediction", "-p", required=True, help="predicted cluster id column")
    p.add_argument("--reference", "-r", required=True, help="true (benchmark) cluster id column")
    p.add_argument("--weights", default="cluster_size",
                   help="'cluster_size' (default), 'uniform', or a column with w = 1/p_c")
    p.add_argument("--draws", default=None, help="column with the number of draws of each cluster")
    p.add_argument("--metrics", nargs="+", default=None, help="metric ids (default: all)")
    p.add_argument("--beta", type=float, default=1.0, help="β of the F scores (default 1)")
    p.add_argument("--ci-level", type=float, default=0.95, help="confidence level in (0, 1) (default 0.95)")
    p.add_argument("--no-bias-adjust", action="store_true", help="plain ratio estimator, no bias adjustment")
    p.add_argument("--ci-method", default="linearization", metavar="METHOD",
                   help="interval: 'linearization' (estimate ± z·SE, default) or 'bootstrap' "
                        "(percentile bootstrap over the draws, SPEC 6)")
    p.add_argument("--n-boot", type=int, default=2000, help="bootstrap resamples (default 2000, at least 100)")
    p.add_argument("--seed", type=int, default=None,
                   help="seed of the bootstrap (default: a fresh one, printed with the result)")
    p.set_defaults(func=cmd_estimate)

    from er_expectations.cli.plan import add_planning_commands

    add_planning_commands(sub)

    try:
        from er_expectations.cli.checkpoints import add_gx_commands
    except ImportError:  # pragma: no cover - the GX commands ship with the package
        add_gx_commands = None
    if add_gx_commands is not None:
        add_gx_commands(sub)
    from er_expectations.cli.labels import add_label_commands

    add_label_commands(sub)
    from er_expectations.cli.drift import add_drift_commands

    add_drift_commands(sub)

    from er_expectations.cli.history import add_history_command

    add_history_command(sub)
    for command in sub.choices.values():  # --debug after the command name too
        command.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                             help="print the traceback of an error")
    return parser


def _debug_requested(argv: Sequence[str]) -> bool:
    import os

    return "--debug" in argv or os.environ.get("ER_EXPECTATIONS_DEBUG", "") not in ("", "0")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (see :data:`EXIT_CODES`)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = _debug_requested(argv)
    # pyspark (the spark extra), imported by GX, warns on every run about the pandas version
    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas",
                            category=FutureWarning)
    try:
        parser = build_parser()
        try:
            args = parser.parse_args(argv)
        except SystemExit as exc:  # usage errors (exit 2) and --help/--version (exit 0)
            return int(exc.code or 0) if not isinstance(exc.code, str) else EXIT_USAGE
        return int(args.func(args))
    except KeyboardInterrupt:
        print("er-expectations: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - the one place that turns errors into exit codes
        if debug:
            import traceback

            traceback.print_exc()
        code, message = classify_error(exc)
        print(f"er-expectations: {message}", file=sys.stderr)
        return code


def classify_error(exc: BaseException) -> tuple[int, str]:
    """The exit code and the one-line message for an exception that reached the command line."""
    from er_expectations.config import ConfigError
    from er_expectations.core.errors import ProjectBusyError, SourceUnreachableError

    if isinstance(exc, SourceUnreachableError):
        return EXIT_SOURCE, f"error: {exc}"
    if isinstance(exc, ConfigError):
        lines = [str(issue) for issue in exc.issues]
        return EXIT_USAGE, "\n".join(lines) + f"\ner-expectations: {len(lines)} configuration problem(s)"
    if isinstance(exc, InputError):
        return EXIT_USAGE, f"error: {exc}"
    if isinstance(exc, ProjectBusyError):
        return EXIT_BUSY, f"error: {exc}"
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        return EXIT_USAGE, f"error: {where}{exc.strerror or exc}"
    if isinstance(exc, MemoryError):
        return EXIT_INTERNAL, "error: out of memory"
    detail = str(exc).splitlines()[0] if str(exc) else ""
    return EXIT_INTERNAL, (
        f"internal error: {type(exc).__name__}{': ' + detail if detail else ''} "
        "(this is a bug in er-expectations; run again with --debug for the traceback and report it)"
    )


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
