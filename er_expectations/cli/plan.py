"""Command line: ``simulate`` and ``plan``, for planning a benchmark's size (issue #8 item 6).

* ``er-expectations simulate FILE --prediction P --truth T`` replays the sampling designs
  on a table whose truth is known and prints bias, RMSE and coverage per metric, design
  and size (:func:`er_expectations.simulate`); ``--chart out.svg|out.png`` draws them.
* ``er-expectations plan FILE --prediction P --reference R --target-se 0.02`` says how
  many draws a benchmark needs, from a pilot benchmark
  (:func:`er_expectations.plan_sample_size`).

Both read tables like ``estimate`` (``--join``, ``--on``, ``--name``…) and print a table,
JSON or CSV.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import pandas as pd

from er_expectations.analysis.expected_errors import DEFAULT_FLOOR
from er_expectations.cli.common import (
    EXIT_OK,
    add_table_args,
    check_output,
    clean,
    emit,
    fmt,
    input_files,
    json_default,
    load_frame,
    name_arg,
    needed_name_cols,
    read_match_probabilities,
)
from er_expectations.core.chart_extra import require_charts
from er_expectations.core.errors import InputError
from er_expectations.core.io import csv_text
from er_expectations.stats import DEFAULT_N_BOOT, MAX_N_BOOT

__all__ = ["add_planning_commands", "cmd_plan", "cmd_simulate", "parse_targets"]


def _check_chart_path(path: str | None) -> None:
    """``--chart`` must end in .svg or .png and sit in an existing folder (checked before any work)."""
    if not path:
        return
    from er_expectations.core.charts import CHART_FORMATS

    p = Path(path)
    if p.suffix.lower() not in CHART_FORMATS:
        raise InputError(f"--chart {path}: give a file ending in .svg or .png")
    if p.is_dir() or not p.parent.is_dir():
        raise InputError(f"--chart {path}: the folder {p.parent} does not exist (or the path is a folder)")
    require_charts(f"--chart {path}: drawing the chart")


def _table(head: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(head)]
    out = ["  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)),
           "  ".join("-" * w for w in widths)]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return out


def _count(x: object) -> str:
    """A number of draws, or "—" when there is none (None, NaN or pandas' NA)."""

    return "—" if x is None or pd.isna(x) else f"{int(x):,}"  # type: ignore[call-overload]


def _num(x: float, fmt: str) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)


def cmd_simulate(args: argparse.Namespace) -> int:
    from er_expectations.analysis.planning import simulate

    name = name_arg(args)
    check_output(args.output, [*input_files(args), *([args.match_probabilities] if args.match_probabilities else [])])
    _check_chart_path(args.chart)
    needed = [args.prediction, args.truth, *needed_name_cols(args)] + ([args.record_id] if args.record_id else [])
    needed += [c for c in (args.group_column, args.baseline) if c]
    df = load_frame(args, needed)
    pairs = read_match_probabilities(args.match_probabilities)
    frame = simulate(df, prediction=args.prediction, truth=args.truth, sizes=args.sizes, designs=args.designs, reps=args.reps,
                     seed=args.seed, metrics=args.metrics, ci_level=args.ci_level, beta=args.beta,
                     bias_adjust=not args.no_bias_adjust, name=name, record_id=args.record_id,
                     ci_methods=args.ci_methods, n_boot=args.n_boot, group_column=args.group_column,
                     baseline=args.baseline, match_probabilities=pairs, floor=args.floor,
                     slice_power=args.slice_power, slice_share=args.slice_share, slice_lift=args.slice_lift,
                     slice_reps=args.slice_reps)
    if args.chart:
        from er_expectations.analysis.planning_charts import simulation_chart
        from er_expectations.core.charts import write_chart

        plain = frame[(frame["target"] == "estimate") & (frame["ci_method"] == "linearization")]
        write_chart(simulation_chart(plain if len(plain) else frame), args.chart)
    if args.format == "json":
        payload = {"attrs": {k: clean(v) for k, v in frame.attrs.items()},
                   "rows": [{k: clean(v) for k, v in row.items()} for row in frame.to_dict(orient="records")]}
        emit(json.dumps(payload, indent=2, default=json_default) + "\n", args.output)
    elif args.format == "csv":
        emit(csv_text(frame), args.output)
    else:
        a = frame.attrs
        head = ["metric", "design", "size", "truth", "mean", "bias", "rmse", "coverage", "sd", "mean se"]
        several = len(a.get("ci_methods", ())) > 1 or bool(frame["target"].ne("estimate").any())
        if several:
            head[1:1] = ["target", "interval"]
        rows = [[r.metric, *((r.target, r.ci_method) if several else ()), r.design, str(r.size),
                 _num(r.truth, ".4f"), _num(r.mean, ".4f"), _num(r.bias, "+.4f"), _num(r.rmse, ".4f"),
                 _num(r.coverage, ".3f"), _num(r.sd, ".4f"), _num(r.mean_se, ".4f")]
                for r in frame.itertuples()]
        lines = [f"Simulation of {args.prediction!r} against truth {args.truth!r} in {args.file}: "
                 f"{a['n_records']:,} records, {a['true_clusters']:,} true clusters; "
                 f"{int(frame['reps'].max())} replications per design and size, seed {a['seed']}, "
                 f"coverage of {a['ci_level'] * 100:g} % intervals"]
        lines += _table(head, rows)
        undefined = frame[frame["undefined"] > 0]
        for r in undefined.itertuples():
            lines.append(f"note: {r.metric} ({r.design}, {r.size} draws) is undefined in {r.undefined} of {r.reps} "
                         "replications; they are left out of mean, bias and rmse and count as not covering")
        lines += _power_lines(a.get("slice_power"))
        if args.chart:
            lines.append(f"chart written to {args.chart}")
        emit("\n".join(lines) + "\n", args.output)
    return EXIT_OK


def _power_lines(rows: list[dict] | None) -> list[str]:
    """The slice-power table of ``simulate --slice-power`` (SPEC 12.2 "Power")."""
    if not rows:
        return []
    r0 = rows[0]
    out = ["", f"Slice search power: a planted slice of {100 * r0['share']:g} % of entities with {r0['lift']:g}× the "
           f"error rate (EI; population rate {_num(r0['base_rate'], '.4f')}: slice {_num(r0['slice_rate'], '.4f')}, "
           f"rest {_num(r0['rest_rate'], '.4f')}), found by the honest search of find_slices"]
    out += _table(["design", "size", "found", "power", "MC SE", "note"],
                  [[r["design"], str(r["size"]), f"{r['found']}/{r['reps']}", _num(r["power"], ".3f"),
                    _num(r["mc_se"], ".3f"), r["note"]] for r in rows])
    return out


def parse_targets(values: list[str] | None, *, option: str) -> float | dict[str, float] | None:
    """``0.02`` (every metric) or ``metric=0.02 ...`` (one target per metric)."""
    if not values:
        return None

    def number(text: str) -> float:
        try:
            return float(text)
        except ValueError:
            raise InputError(f"{option} {text!r}: not a number; give e.g. {option} 0.02 or "
                             f"{option} pairwise_precision=0.02") from None

    if len(values) == 1 and "=" not in values[0]:
        return number(values[0])
    out: dict[str, float] = {}
    for v in values:
        metric, sep, value = v.partition("=")
        if not sep or not metric:
            raise InputError(f"{option} {v!r}: give one number for every metric, or METRIC=VALUE for each")
        out[metric.strip()] = number(value)
    return out


def cmd_plan(args: argparse.Namespace) -> int:
    from er_expectations.analysis.sample_size import plan_sample_size

    name = name_arg(args)
    check_output(args.output, input_files(args))
    _check_chart_path(args.chart)
    target_se = parse_targets(args.target_se, option="--target-se")
    target_width = parse_targets(args.target_width, option="--target-width")
    needed = [args.prediction, args.reference, *needed_name_cols(args)]
    if args.weights not in ("cluster_size", "uniform"):
        needed.append(args.weights)
    if args.draws:
        needed.append(args.draws)
    if args.record_id:
        needed.append(args.record_id)
    df = load_frame(args, needed)
    frame = plan_sample_size(df, prediction=args.prediction, reference=args.reference, target_se=target_se, target_width=target_width,
                             weights=args.weights, draws=args.draws, metrics=args.metrics, reps=args.reps,
                             seed=args.seed, ci_level=args.ci_level, beta=args.beta,
                             bias_adjust=not args.no_bias_adjust, max_draws=args.max_draws, name=name,
                             record_id=args.record_id, slice_power=args.slice_power, slice_share=args.slice_share,
                             slice_lift=args.slice_lift, slice_reps=args.slice_reps)
    if args.chart:
        from er_expectations.analysis.planning_charts import plan_chart
        from er_expectations.core.charts import write_chart

        write_chart(plan_chart(frame), args.chart)
    if args.format == "json":
        rows = [{k: (None if v is None or (not isinstance(v, str) and v != v) else clean(v)) for k, v in row.items()}
                for row in frame.astype(object).to_dict(orient="records")]
        payload = {"attrs": {k: clean(v) for k, v in frame.attrs.items() if k != "curves"}, "rows": rows}
        emit(json.dumps(payload, indent=2, default=json_default) + "\n", args.output)
    elif args.format == "csv":
        emit(csv_text(frame), args.output)
    else:
        a = frame.attrs
        head = ["metric", "pilot estimate", "pilot SE", "target SE", "draws needed", "SE there",
                "k·(SE/target)²"]
        rows, notes = [], []
        for r in frame.itertuples():
            mark = ""
            if r.note:
                notes.append(r.note)
                mark = f" [{len(notes)}]"
            rows.append([r.metric + mark, fmt(r.pilot_estimate), fmt(r.pilot_std_error, 3), fmt(r.target_std_error, 3),
                         _count(r.draws_needed), fmt(r.std_error_at_draws, 3), _count(r.draws_extrapolated)])
        k = int(frame["pilot_draws"].iloc[0]) if len(frame) else 0
        lines = [f"Draws needed for {args.prediction!r}, from a pilot of {k:,} draws of {args.reference!r} "
                 f"(design {a['design']}): {a['reps']} resamples per size, seed {a['seed']}"]
        if target_width is not None:
            lines.append(f"target width {a['ci_level'] * 100:g} % interval = 2·z·SE")
        lines += _table(head, rows)
        lines += [f"[{i}] {n}" for i, n in enumerate(notes, 1)]
        if a.get("slice_power"):
            lines.append("Slice search power, planted in the pilot: " + str(a["slice_power"]["sentence"]))
        if args.chart:
            lines.append(f"chart written to {args.chart}")
        emit("\n".join(lines) + "\n", args.output)
    return EXIT_OK


def add_planning_commands(sub: argparse._SubParsersAction) -> None:
    """Add ``simulate`` and ``plan`` to the ``er-expectations`` sub-commands."""
    p = sub.add_parser("simulate", help="replay the sampling designs on data with known truth: bias, RMSE, "
                                        "coverage per size (benchmark planning)")
    add_table_args(p)
    p.add_argument("--prediction", "-p", required=True, help="predicted cluster id column")
    p.add_argument("--truth", "-t", required=True, help="true cluster id column (every record of the release)")
    p.add_argument("--sizes", nargs="+", type=int, default=[200, 400, 800], metavar="N",
                   help="numbers of draws per benchmark (default 200 400 800)")
    p.add_argument("--designs", nargs="+", default=["cluster_size", "uniform"], metavar="DESIGN",
                   help="'cluster_size' (records drawn uniformly), 'uniform' (clusters drawn uniformly) and/or "
                        "'expected_errors' (records drawn by their expected errors, SPEC 12.3)")
    p.add_argument("--match-probabilities", default=None, metavar="FILE",
                   help="for 'expected_errors': the ER system's pair probabilities (columns record_a, record_b, "
                        "p; ids of --record-id)")
    p.add_argument("--floor", type=float, default=DEFAULT_FLOOR,
                   help=f"for 'expected_errors': the uniform floor λ in (0, 1] (default {DEFAULT_FLOOR:g})")
    p.add_argument("--reps", type=int, default=1000, help="replications per design and size (default 1000)")
    p.add_argument("--seed", type=int, default=None, help="random seed (default: a fresh one, printed)")
    p.add_argument("--metrics", nargs="+", default=None, help="metric ids (default: all)")
    p.add_argument("--ci-level", type=float, default=0.95, help="level of the intervals whose coverage is measured")
    p.add_argument("--beta", type=float, default=1.0, help="β of the F scores (default 1)")
    p.add_argument("--no-bias-adjust", action="store_true", help="plain ratio estimator, no bias adjustment")
    p.add_argument("--ci-methods", nargs="+", default=["linearization"], metavar="METHOD",
                   help="interval methods whose coverage is reported (SPEC 6): 'all', or some of linearization "
                        "(default), logit, bootstrap, bca, studentized, recommended, and for the gaps of "
                        "--group-column bca_mover and hull")
    p.add_argument("--n-boot", type=int, default=DEFAULT_N_BOOT,
                   help=f"bootstrap resamples per replication for the bootstrap methods (default {DEFAULT_N_BOOT}, "
                        f"at most {MAX_N_BOOT}; a few hundred suffice to compare methods)")
    p.add_argument("--group-column", default=None, metavar="COLUMN",
                   help="entity-level attribute: also the coverage of each group's estimate and gap (SPEC 8)")
    p.add_argument("--baseline", default=None, metavar="COLUMN",
                   help="a second prediction column: also the coverage of the paired change (SPEC 10)")
    _slice_power_args(p, where="per design and size, from fresh benchmarks of the population")
    p.add_argument("--chart", default=None, metavar="FILE", help="also draw bias, RMSE and coverage (.svg or .png)")
    p.set_defaults(func=cmd_simulate)

    p = sub.add_parser("plan", help="draws a benchmark needs for a target standard error, from a pilot benchmark")
    add_table_args(p)
    p.add_argument("--prediction", "-p", required=True, help="predicted cluster id column")
    p.add_argument("--reference", "-r", required=True, help="true (benchmark) cluster id column of the pilot")
    p.add_argument("--weights", default="cluster_size",
                   help="'cluster_size' (default), 'uniform', or a column with w = 1/p_c")
    p.add_argument("--draws", default=None, help="column with the number of draws of each cluster")
    target = p.add_mutually_exclusive_group(required=True)
    target.add_argument("--target-se", nargs="+", metavar="SE",
                        help="target standard error: one number, or METRIC=SE for each metric")
    target.add_argument("--target-width", nargs="+", metavar="WIDTH",
                        help="target full width of the interval (2·z·SE): one number, or METRIC=WIDTH")
    p.add_argument("--metrics", nargs="+", default=None,
                   help="metric ids (default: those given targets, else the performance metrics)")
    p.add_argument("--reps", type=int, default=2000, help="resamples per size (default 2000)")
    p.add_argument("--seed", type=int, default=None, help="random seed (default: a fresh one, printed)")
    p.add_argument("--ci-level", type=float, default=0.95, help="confidence level (for --target-width)")
    p.add_argument("--beta", type=float, default=1.0, help="β of the F scores (default 1)")
    p.add_argument("--no-bias-adjust", action="store_true", help="plain ratio estimator, no bias adjustment")
    p.add_argument("--max-draws", type=int, default=100_000, help="largest benchmark considered (default 100000)")
    _slice_power_args(p, where="planted in the pilot, at its estimated error rate")
    p.add_argument("--chart", default=None, metavar="FILE",
                   help="also draw the standard error against the draws (.svg or .png)")
    p.set_defaults(func=cmd_plan)


def _slice_power_args(p: argparse.ArgumentParser, *, where: str) -> None:
    p.add_argument("--slice-power", action="store_true",
                   help=f"also the chance that the slice search finds a planted slice, {where} (SPEC 12.2 'Power')")
    p.add_argument("--slice-share", type=float, default=0.2,
                   help="share of the entities in the planted slice (default 0.2, at most 0.5)")
    p.add_argument("--slice-lift", type=float, default=3.0,
                   help="the planted slice's error rate as a multiple of the rest's (default 3)")
    p.add_argument("--slice-reps", type=int, default=200,
                   help="simulated searches (default 200: Monte Carlo SE at most 3.5 points)")
