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
from typing import Any

from er_expectations.core.text import printable
from er_expectations.history.store import HistoryError, HistoryStore

__all__ = ["add_history_command", "cmd_history", "select_expectation"]


def select_expectation(frame: Any, wanted: str, *, checkpoint: str, where: str) -> Any:
    """The rows of ``frame`` (:meth:`HistoryStore.results`) of the ONE expectation ``wanted``
    names; raises :class:`HistoryError` with the choices when it names none or several."""
    if frame.empty:
        raise HistoryError(f"checkpoint '{checkpoint}' has no recorded results in {where}; "
                           f"run 'er-expectations run' on it first")
    by_label = frame[frame["label"] == wanted]  # a label names one check; a metric id may name several
    match = by_label if not by_label.empty else frame[(frame["metric"] == wanted)
                                                      | (frame["expectation_type"] == wanted)]
    if match.empty:
        from er_expectations.core.hints import did_you_mean

        labels = sorted(set(frame["label"]))
        hint = did_you_mean(wanted, labels + sorted(set(frame["expectation_type"])))
        raise HistoryError(f"--expectation '{wanted}': no such expectation in the history of checkpoint "
                           f"'{checkpoint}'; " + (hint + "; " if hint else "")
                           + f"recorded: {', '.join(labels)}")
    keys = match[["suite", "expectation_type", "kwargs_key"]].drop_duplicates()
    if len(keys) > 1:
        choices = "; ".join(f"suite '{match.loc[i, 'suite']}': {match.loc[i, 'label']} "
                            f"{match.loc[i, 'kwargs_json']}" for i in keys.index)
        raise HistoryError(f"--expectation '{wanted}' matches {len(keys)} expectations ({choices}); "
                           "narrow it with --suite or --column, or give the label")
    return match.reset_index(drop=True)


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


def _table(frame: Any) -> str:
    level = frame["ci_level"].dropna()
    ci_head = f"{level.iloc[0] * 100:g}% CI" if len(level) and level.nunique() == 1 else "CI"
    head = ("release", "version", "value", "std error", ci_head, "result", "run")
    rows = []
    for _, r in frame.iterrows():
        ci = "-" if math.isnan(r["ci_lower"]) or math.isnan(r["ci_upper"]) else \
            f"{fmt(r['ci_lower'])} - {fmt(r['ci_upper'])}"
        outcome = r.get("outcome")
        if not isinstance(outcome, str):
            outcome = "error" if isinstance(r["error"], str) and r["error"] else "passed" if r["success"] else "failed"
        state = {"passed": "ok", "failed": "FAILED", "error": "ERROR", "skipped": "skipped"}.get(outcome, outcome)
        when = r["gx_run_time"] if r["gx_run_time"] is not None and str(r["gx_run_time"]) != "NaT" \
            else r["recorded_at"]
        rows.append((str(r["release"]), str(r["version"]), fmt(r["value"]), fmt(r["std_error"], 3), ci,
                     state, f"{r['gx_run_name'] or ''} {when:%Y-%m-%d %H:%M:%S}Z".strip()))
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(head)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in (head, *rows)]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


_SHOWN = ["release", "position", "version", "value", "estimate", "std_error", "ci_lower", "ci_upper", "ci_level",
          "success", "outcome", "severity", "error", "gx_run_name", "gx_run_time", "recorded_at", "suite",
          "expectation_type", "metric", "column", "label", "kwargs_json", "details_json"]


def cmd_history(args: argparse.Namespace) -> int:
    """``history``: print (and draw) one expectation's series of a checkpoint."""
    from er_expectations.cli.common import EXIT_OK
    from er_expectations.config import load_checkpoint
    from er_expectations.run.history_location import history_url, project_key

    checkpoint = load_checkpoint(args.checkpoint)
    if args.chart:
        from er_expectations.core.charts import CHART_FORMATS

        _check_chart_path(args.chart, CHART_FORMATS)
    url = history_url(checkpoint)
    if url is None:
        raise HistoryError(f"{args.checkpoint}: the history of checkpoint '{checkpoint.name}' is disabled "
                           "(history: {enabled: false}); nothing was recorded")
    with HistoryStore.open(url, create=False, project=project_key(checkpoint)) as store:
        frame = store.results(checkpoint=checkpoint.name, suite=args.suite, column=args.column,
                              all_versions=args.all_versions)
        frame = select_expectation(frame, args.expectation, checkpoint=checkpoint.name,
                                   where=store.where)
        alerts = store.alerts(checkpoint.name)
    if args.release:
        known = list(dict.fromkeys(frame["release"]))
        unknown = [r for r in args.release if r not in known]
        if unknown:
            from er_expectations.core.hints import did_you_mean

            hint = did_you_mean(unknown[0], known)
            raise HistoryError(f"--release {', '.join(unknown)}: not recorded for this expectation"
                               + (f" ({hint})" if hint else "") + f"; recorded: {', '.join(known)}")
        frame = frame[frame["release"].isin(args.release)].reset_index(drop=True)
    if args.last:
        keep = list(dict.fromkeys(frame["release"]))[-args.last:]
        frame = frame[frame["release"].isin(keep)].reset_index(drop=True)
    first = frame.iloc[0]
    alerts = alerts[alerts["gx_run_time"].isin(set(frame["gx_run_time"].dropna()))].reset_index(drop=True)
    if args.format == "json":
        shown = frame[_SHOWN].astype(object).where(frame[_SHOWN].notna(), None)
        records = [{k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in row.items()}
                   for row in shown.to_dict(orient="records")]
        sys.stdout.write(json.dumps({"checkpoint": checkpoint.name, "expectation": first["label"],
                                     "series": records, "alerts": _alert_records(alerts)},
                                    indent=2, default=str) + "\n")
    elif args.format == "csv":
        from er_expectations.core.io import csv_text

        sys.stdout.write(csv_text(frame[_SHOWN]))
    else:
        print(f"{first['label']} ({first['expectation_type']}, suite '{first['suite']}') of checkpoint "
              f"'{checkpoint.name}' over {frame['release'].nunique()} release(s); store {store.where}")
        print(_table(frame))
        for line in _alert_lines(alerts):
            print(line)
    if args.chart:
        from er_expectations.core.charts import write_chart
        from er_expectations.history.chart import series_spec

        path = write_chart(series_spec(frame, title=f"{first['label']} — {checkpoint.name}"), args.chart)
        print(f"Chart: {path}", file=sys.stderr if args.format != "table" else sys.stdout)
    return EXIT_OK


def _alert_records(alerts: Any) -> list[dict[str, Any]]:
    """The alert deliveries of the runs shown, JSON-ready (times in ISO 8601)."""
    shown = alerts.astype(object).where(alerts.notna(), None)
    return [{k: (v.isoformat() if hasattr(v, "isoformat") else printable(v, limit=None) if k == "error" and v else v)
             for k, v in row.items()} for row in shown.to_dict(orient="records")]


def _alert_lines(alerts: Any) -> list[str]:
    """What became of the alerts of the runs shown: one line per target, failures with their error."""
    if alerts.empty:
        return []
    lines = ["", "Alerts of these runs:"]
    for _, a in alerts.iterrows():
        when = f"{a['gx_run_time']:%Y-%m-%d %H:%M:%S}Z" if str(a["gx_run_time"]) != "NaT" else "-"
        outcome = "NOT DELIVERED" if a["outcome"] == "failed" else a["outcome"]
        error = f": {printable(a['error'])}" if isinstance(a["error"], str) and a["error"] else ""
        lines.append(f"  run {when}  {a['action']} {a['target']}: {outcome}{error}")
    return lines


def _check_chart_path(chart: str, formats: dict[str, str]) -> None:
    from pathlib import Path

    from er_expectations.core.errors import InputError

    path = Path(chart)
    if path.suffix.lower() not in formats:
        raise InputError(f"--chart {chart}: give a file ending in .svg or .png")
    if path.is_dir():
        raise InputError(f"--chart {chart}: is a folder; give a file name, e.g. {path / 'history.svg'}")
    if not path.absolute().parent.is_dir():
        raise InputError(f"--chart {chart}: the folder {path.absolute().parent} does not exist; create it first")


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
