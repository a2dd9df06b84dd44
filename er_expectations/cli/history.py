"""``er-expectations history CHECKPOINT --expectation X``: one expectation over the releases.

Prints the recorded value of the expectation for each release (latest run of each, or
every run with ``--all-versions``) with its standard error and interval, as a table, CSV
or JSON, and with ``--chart FILE.svg|png`` draws it (:mod:`.chart`). ``--expectation``
is a label as the run's summary shows it (``pairwise_precision``, ``hill_number(q=2)``), a
metric or statistic id, or an expectation type (``expect_...``).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path

from er_expectations.cli.exits import EXIT_OK
from er_expectations.core.chart_extra import require_charts
from er_expectations.core.errors import InputError
from er_expectations.core.hints import did_you_mean
from er_expectations.core.text import printable
from er_expectations.history.reading import HistoryError, SqliteHistory, typed_alerts, typed_results
from er_expectations.run.history_location import history_url, project_key, read_history_place

TYPE_CHECKING = False  # typing is not imported when the program starts (issue 29 item 6)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["add_history_command", "cmd_history", "select_expectation"]

#: The chart formats of ``--chart`` (those of :mod:`er_expectations.core.charts`; a test checks it).
CHART_SUFFIXES = (".svg", ".png")


def select_expectation(rows: Sequence[dict[str, Any]], wanted: str, *, checkpoint: str,
                       where: str) -> list[dict[str, Any]]:
    """The rows (:meth:`HistoryStore.result_rows`) of the ONE expectation ``wanted`` names;
    raises :class:`HistoryError` with the choices when it names none or several."""
    if not rows:
        raise HistoryError(f"checkpoint '{checkpoint}' has no recorded results in {where}; "
                           f"run 'er-expectations run' on it first")
    match = [r for r in rows if r["label"] == wanted]  # a label names one check; a metric id may name several
    if not match:
        match = [r for r in rows if r["metric"] == wanted or r["expectation_type"] == wanted]
    if not match:
        labels = sorted({r["label"] for r in rows})
        hint = did_you_mean(wanted, labels + sorted({r["expectation_type"] for r in rows}))
        raise HistoryError(f"--expectation '{wanted}': no such expectation in the history of checkpoint "
                           f"'{checkpoint}'; " + (hint + "; " if hint else "")
                           + f"recorded: {', '.join(labels)}")
    keys: dict[tuple[Any, ...], dict[str, Any]] = {}
    for r in match:
        keys.setdefault((r["suite"], r["expectation_type"], r["kwargs_json"]), r)
    if len(keys) > 1:
        choices = "; ".join(f"suite '{r['suite']}': {r['label']} {r['kwargs_json']}" for r in keys.values())
        raise HistoryError(f"--expectation '{wanted}' matches {len(keys)} expectations ({choices}); "
                           "narrow it with --suite or --column, or give the label")
    return list(match)


def fmt(value: Any, digits: int = 4) -> str:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return "-"
    if math.isnan(number):
        return "-"
    if math.isinf(number):
        return "inf" if number > 0 else "-inf"
    return f"{number:.{digits}g}"


def _table(rows: Sequence[dict[str, Any]]) -> str:
    levels = {r["ci_level"] for r in rows if not math.isnan(r["ci_level"])}
    ci_head = f"{next(iter(levels)) * 100:g}% CI" if len(levels) == 1 else "CI"
    head = ("release", "version", "value", "std error", ci_head, "result", "run")
    lines_of = []
    for r in rows:
        ci = "-" if math.isnan(r["ci_lower"]) or math.isnan(r["ci_upper"]) else \
            f"{fmt(r['ci_lower'])} - {fmt(r['ci_upper'])}"
        outcome = r.get("outcome")
        if not isinstance(outcome, str):
            outcome = "error" if isinstance(r["error"], str) and r["error"] else "passed" if r["success"] else "failed"
        state = {"passed": "ok", "failed": "FAILED", "error": "ERROR", "skipped": "skipped"}.get(outcome, outcome)
        when = r["gx_run_time"] if r["gx_run_time"] is not None else r["recorded_at"]
        lines_of.append((str(r["release"]), str(r["version"]), fmt(r["value"]), fmt(r["std_error"], 3), ci,
                         state, f"{r['gx_run_name'] or ''} {when:%Y-%m-%d %H:%M:%S}Z".strip()))
    widths = [max(len(h), *(len(row[i]) for row in lines_of)) for i, h in enumerate(head)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
             for row in (head, *lines_of)]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


_SHOWN = ["release", "position", "version", "value", "estimate", "std_error", "ci_lower", "ci_upper", "ci_level",
          "success", "outcome", "severity", "error", "gx_run_name", "gx_run_time", "recorded_at", "suite",
          "expectation_type", "metric", "column", "label", "kwargs_json", "details_json"]


def _json_value(value: Any) -> Any:
    """A value as JSON shows it: times in ISO 8601, NaN as null."""
    if isinstance(value, float) and math.isnan(value):
        return None
    return value.isoformat() if hasattr(value, "isoformat") else value


def _read(url: str, checkpoint: Any, args: argparse.Namespace) -> tuple[list[dict[str, Any]], list[dict[str, Any]], str]:
    """The result rows and alert rows of the checkpoint, and how the store is named: a SQLite
    store of the current schema read with sqlite3 (:class:`SqliteHistory`), any other through
    SQLAlchemy (:class:`HistoryStore`: server databases, older schemas, and the errors)."""
    project = project_key(checkpoint)
    source = SqliteHistory.open(url, project=project)
    if source is None:
        from er_expectations.history.store import (
            HistoryStore,  # SQLAlchemy and pandas, only for these
        )

        source = HistoryStore.open(url, create=False, project=project)
    wanted = args.expectation
    with source:
        rows = source.result_rows(checkpoint=checkpoint.name, suite=args.suite, column=args.column,
                                  all_versions=args.all_versions, naming=wanted)
        if not any(wanted in (r["label"], r["metric"], r["expectation_type"]) for r in rows):
            # nothing named so: every row, for the message listing what is recorded
            rows = source.result_rows(checkpoint=checkpoint.name, suite=args.suite, column=args.column,
                                      all_versions=args.all_versions)
        rows = select_expectation(rows, wanted, checkpoint=checkpoint.name, where=source.where)
        alerts = source.alert_rows(checkpoint.name)
    return typed_results(rows), typed_alerts(alerts), source.where


def cmd_history(args: argparse.Namespace) -> int:
    """``history``: print (and draw) one expectation's series of a checkpoint."""
    checkpoint = read_history_place(args.checkpoint)
    if checkpoint is None:  # not of the simple form: the full loader reads it or names its problems
        from er_expectations.config import load_checkpoint

        checkpoint = load_checkpoint(args.checkpoint)
    if args.chart:
        _check_chart_path(args.chart)
    url = history_url(checkpoint)
    if url is None:
        raise HistoryError(f"{args.checkpoint}: the history of checkpoint '{checkpoint.name}' is disabled "
                           "(history: {enabled: false}); nothing was recorded")
    rows, alerts, where = _read(url, checkpoint, args)
    if args.release:
        known = list(dict.fromkeys(r["release"] for r in rows))
        unknown = [r for r in args.release if r not in known]
        if unknown:
            hint = did_you_mean(unknown[0], known)
            raise HistoryError(f"--release {', '.join(unknown)}: not recorded for this expectation"
                               + (f" ({hint})" if hint else "") + f"; recorded: {', '.join(known)}")
        rows = [r for r in rows if r["release"] in args.release]
    if args.last:
        keep = set(list(dict.fromkeys(r["release"] for r in rows))[-args.last:])
        rows = [r for r in rows if r["release"] in keep]
    first = rows[0]
    run_times = {r["gx_run_time"] for r in rows if r["gx_run_time"] is not None}
    alerts = [a for a in alerts if a["gx_run_time"] in run_times]
    if args.format == "json":
        records = [{k: _json_value(r[k]) for k in _SHOWN} for r in rows]
        sys.stdout.write(json.dumps({"checkpoint": checkpoint.name, "expectation": first["label"],
                                     "series": records, "alerts": _alert_records(alerts)},
                                    indent=2, default=str) + "\n")
    elif args.format == "csv":
        sys.stdout.write(_csv(rows))
    else:
        print(f"{first['label']} ({first['expectation_type']}, suite '{first['suite']}') of checkpoint "
              f"'{checkpoint.name}' over {len({r['release'] for r in rows})} release(s); store {where}")
        print(_table(rows))
        for line in _alert_lines(alerts):
            print(line)
    if args.chart:
        from er_expectations.core.charts import write_chart  # altair and pandas, only for a chart
        from er_expectations.history.chart import series_spec
        from er_expectations.history.frames import history_frame
        from er_expectations.history.reading import SERIES_COLUMNS

        frame = history_frame(rows, SERIES_COLUMNS)
        path = write_chart(series_spec(frame, title=f"{first['label']} — {checkpoint.name}"), args.chart)
        print(f"Chart: {path}", file=sys.stderr if args.format != "table" else sys.stdout)
    return EXIT_OK


def _csv(rows: list[dict[str, Any]]) -> str:
    """The rows as CSV, written as every CSV of the package is (pandas, formula cells neutralised)."""
    from er_expectations.core.io import csv_text  # pandas, only for CSV
    from er_expectations.history.frames import history_frame
    from er_expectations.history.reading import SERIES_COLUMNS

    return csv_text(history_frame(rows, SERIES_COLUMNS)[_SHOWN])


def _alert_records(alerts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The alert deliveries of the runs shown, JSON-ready (times in ISO 8601)."""
    return [{k: (v.isoformat() if hasattr(v, "isoformat") else printable(v, limit=None) if k == "error" and v else v)
             for k, v in row.items()} for row in alerts]


def _alert_lines(alerts: list[dict[str, Any]]) -> list[str]:
    """What became of the alerts of the runs shown: one line per target, failures with their error."""
    if not alerts:
        return []
    lines = ["", "Alerts of these runs:"]
    for a in alerts:
        when = f"{a['gx_run_time']:%Y-%m-%d %H:%M:%S}Z" if a["gx_run_time"] is not None else "-"
        outcome = "NOT DELIVERED" if a["outcome"] == "failed" else a["outcome"]
        error = f": {printable(a['error'])}" if isinstance(a["error"], str) and a["error"] else ""
        lines.append(f"  run {when}  {a['action']} {a['target']}: {outcome}{error}")
    return lines


def _check_chart_path(chart: str) -> None:
    path = Path(chart)
    if path.suffix.lower() not in CHART_SUFFIXES:
        raise InputError(f"--chart {chart}: give a file ending in .svg or .png")
    if path.is_dir():
        raise InputError(f"--chart {chart}: is a folder; give a file name, e.g. {path / 'history.svg'}")
    if not path.absolute().parent.is_dir():
        raise InputError(f"--chart {chart}: the folder {path.absolute().parent} does not exist; create it first")
    require_charts(f"--chart {chart}: drawing the chart")


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"'{text}': give a number >= 1")
    return value


def add_history_command(sub: argparse._SubParsersAction) -> None:
    """Add ``history`` to the ``er-expectations`` sub-commands."""
    p = sub.add_parser(
        "history",
        help="one expectation of a checkpoint over its releases, from the history store",
        description="Print the value recorded for one expectation of a checkpoint over its releases "
        "(latest run of each release), with standard error and interval, and optionally draw it "
        "(values with their intervals; failed releases marked).",
    )
    p.add_argument("checkpoint", help="checkpoint file (checkpoints/<name>.yml); its history: section "
                   "names the store (default <project_dir>/er_history.sqlite)")
    p.add_argument("--expectation", "-e", required=True, metavar="X",
                   help="label as in the run summary (pairwise_precision, hill_number(q=2)), "
                        "metric id, or expectation type")
    p.add_argument("--release", action="extend", nargs="+", default=None, metavar="R",
                   help="only these releases; repeatable")
    p.add_argument("--last", type=_positive, default=None, metavar="N", help="only the last N releases")
    p.add_argument("--suite", default=None, help="the suite, when several have the expectation")
    p.add_argument("--column", default=None, help="the prediction column, when several are checked")
    p.add_argument("--all-versions", action="store_true",
                   help="every run of each release (reruns), not only the latest")
    p.add_argument("--format", choices=("table", "csv", "json"), default="table", help="output format")
    p.add_argument("--chart", default=None, metavar="FILE",
                   help="also write a chart (.svg or .png) of the values with their intervals")
    p.set_defaults(func=cmd_history)
