"""``er-expectations summarize`` and ``estimate``: statistics of one record table (SPEC 3, 5-7)."""

from __future__ import annotations

import argparse
import json
import math

from er_expectations.cli.common import (
    EXIT_OK,
    add_table_args,
    check_output,
    clean,
    emit,
    fmt,
    hill_order,
    input_files,
    json_default,
    load_frame,
    name_arg,
    needed_name_cols,
)
from er_expectations.core.io import csv_text, table_columns
from er_expectations.engines.base import KNOWN_AUTO, KNOWN_COLUMN
from er_expectations.stats import (
    DEFAULT_CI_METHOD,
    DEFAULT_N_BOOT,
    DEFAULT_SEED,
    MAX_N_BOOT,
    MIN_N_BOOT,
)


def _n_boot(value: str) -> int:
    """``--n-boot``: a whole number up to :data:`~er_expectations.stats.MAX_N_BOOT` (checked before any work)."""

    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number of resamples (e.g. 2000)") from None
    if n > MAX_N_BOOT:
        raise argparse.ArgumentTypeError(f"n_boot={value} is too large: give at most {MAX_N_BOOT:,} bootstrap "
                                         "resamples (the interval does not get better beyond that; the run "
                                         "would not end)")
    return n


def cmd_summarize(args: argparse.Namespace) -> int:
    from er_expectations.analysis.release import summarize

    name = name_arg(args)
    check_output(args.output, input_files(args))
    df = load_frame(args, [args.cluster, *needed_name_cols(args)] + ([args.record_id] if args.record_id else []))
    s = summarize(df, cluster=args.cluster, name=name, hill_orders=args.hill_orders, record_id=args.record_id)
    if args.format == "json":
        emit(json.dumps({k: clean(float(v)) for k, v in s.items()}, indent=2, default=json_default) + "\n", args.output)
    elif args.format == "csv":
        emit(csv_text(s.rename("value").rename_axis("statistic").to_frame(), index=True), args.output)
    else:
        width = max(len(str(k)) for k in s.index)
        lines = [f"Summary of clustering {args.cluster!r} in {args.file}"]
        lines += [f"  {str(k).ljust(width)}  {fmt(float(v), 6)}" for k, v in s.items()]
        emit("\n".join(lines) + "\n", args.output)
    return EXIT_OK


def cmd_estimate(args: argparse.Namespace) -> int:
    from er_expectations.analysis.release import estimate

    name = name_arg(args)
    check_output(args.output, input_files(args))
    needed = [args.prediction, args.reference, *needed_name_cols(args)]
    weights: object = args.weights
    if args.weights not in ("cluster_size", "uniform"):
        needed.append(args.weights)
    if args.draws:
        needed.append(args.draws)
    if args.record_id:
        needed.append(args.record_id)
    known = known_arg(args)
    if known is not None:
        needed.append(known)
    df = load_frame(args, needed)
    est = estimate(df, prediction=args.prediction, reference=args.reference, weights=weights, draws=args.draws,
                   name=name, metrics=args.metrics, beta=args.beta, ci_level=args.ci_level,
                   bias_adjust=not args.no_bias_adjust, record_id=args.record_id,
                   ci_method=args.ci_method, n_boot=args.n_boot, seed=args.seed, known=known)
    if args.format == "json":
        payload = {
            "attrs": {k: clean(v) for k, v in est.attrs.items()},
            "estimates": {m: {k: clean(v) for k, v in row.items()} for m, row in est.to_dict(orient="index").items()},
        }
        emit(json.dumps(payload, indent=2, default=json_default) + "\n", args.output)
    elif args.format == "csv":
        emit(csv_text(est, index=True), args.output)
    else:
        lvl = f"{est.attrs['ci_level'] * 100:g}% CI"
        head = ["metric", "estimate", "std error", lvl, "interval", "draws", "clusters"]
        rows = []
        notes = []
        for mid, r in est.iterrows():
            ci = "—" if math.isnan(r.ci_lower) else f"{r.ci_lower:.3f} – {r.ci_upper:.3f}"
            mark = ""
            if r.note:
                notes.append(r.note)
                mark = f" [{len(notes)}]"
            rows.append([str(mid) + mark, fmt(r.estimate), fmt(r.std_error, 3), ci, str(r.ci_method), str(r.draws),
                         str(r.clusters)])
        widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(head)]
        out = [f"Estimates for {args.prediction!r} from benchmark {args.reference!r} "
               f"(design {est.attrs['design']}, {est.attrs['records_set_aside']} benchmark records not in the release set aside)",
               universe_line(est.attrs, turned_off=args.known == "none")]
        out.append("  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)))
        out.append("  ".join("-" * w for w in widths))
        out += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in rows]
        if "n_boot" in est.attrs:
            out.append(f"Intervals: {est.attrs['ci_method']}, {est.attrs['n_boot']} bootstrap resamples of the "
                       f"draws, seed {est.attrs['seed']}.")
        out += [f"[{i}] {n}" for i, n in enumerate(notes, 1)]
        # what the draws cannot show (SPEC 6.1); a warning is already among the notes
        out += [f"{metric}: {spot['text']}" for metric, spot in est.attrs.get("blind_spots", {}).items()
                if not spot["warning"]]
        emit("\n".join(out) + "\n", args.output)
    return EXIT_OK


def known_arg(args: argparse.Namespace) -> str | None:
    """The column of the records known at labelling to read (SPEC 14): ``--known`` as given, or
    with ``auto`` the benchmark's ``benchmark_version`` when an input file has it."""
    if args.known == "none":
        return None
    if args.known != KNOWN_AUTO:
        return args.known
    files = [args.file, *(args.join or [])]
    return KNOWN_COLUMN if any(KNOWN_COLUMN in table_columns(f) for f in files) else None


def universe_line(attrs: dict, *, turned_off: bool = False) -> str:
    """What the labelling universe set aside, in words (SPEC 14)."""
    if turned_off:
        return ("Every record is evaluated (--known none): a record added since labelling to a sampled entity's "
                "predicted cluster counts as an error.")
    if attrs.get("known_column") is None:
        return ("Every record is evaluated: the input does not say which records were known when the benchmark was "
                f"labelled (join the benchmark file written by 'er-expectations benchmark', column {KNOWN_COLUMN!r}); "
                "a record added since labelling to a sampled entity's predicted cluster counts as an error.")
    added, inside = int(attrs.get("records_added") or 0), int(attrs.get("records_added_in_sampled") or 0)
    version = attrs.get("benchmark_version")
    head = f"Benchmark version {version}" if version is not None else f"Records known at labelling ({attrs['known_column']})"
    if not added:
        return f"{head}: every record of the release was known when the benchmark was labelled."
    return (f"{head}: {added:,} record{'s' if added != 1 else ''} of the release unknown to the benchmark (not in "
            f"the release it was labelled or topped up on; {inside:,} in the predicted clusters of sampled records) "
            "are not evaluated; top the benchmark up to evaluate them (er-expectations topup).")


def add_table_commands(sub: argparse._SubParsersAction) -> None:
    """``summarize`` and ``estimate``: statistics of one record table (SPEC 3, 5-7)."""
    p = sub.add_parser("summarize", help="summary statistics of a predicted clustering (SPEC 3)")
    add_table_args(p)
    p.add_argument("--cluster", "-c", required=True, help="predicted cluster id column")
    p.add_argument("--hill-orders", nargs="+", type=hill_order, default=[0, 1, 2, math.inf], metavar="Q",
                   help="Hill number orders q >= 0 ('inf' allowed); default 0 1 2 inf")
    p.set_defaults(func=cmd_summarize)

    p = sub.add_parser("estimate", help="performance estimates from a benchmark sample (SPEC 5-7)")
    add_table_args(p)
    p.add_argument("--prediction", "-p", required=True, help="predicted cluster id column")
    p.add_argument("--reference", "-r", required=True, help="true (benchmark) cluster id column")
    p.add_argument("--weights", default="cluster_size",
                   help="'cluster_size' (default), 'uniform', or a column with w = 1/p_c")
    p.add_argument("--draws", default=None, help="column with the number of draws of each cluster")
    p.add_argument("--known", default=KNOWN_AUTO, metavar="COL|auto|none",
                   help="column marking the records known when the benchmark was labelled (SPEC 14): the others "
                        f"are set aside and counted (default auto: {KNOWN_COLUMN} when an input has it; none: "
                        "evaluate every record)")
    p.add_argument("--metrics", nargs="+", default=None, help="metric ids (default: all)")
    p.add_argument("--beta", type=float, default=1.0, help="β of the F scores (default 1)")
    p.add_argument("--ci-level", type=float, default=0.95, help="confidence level in (0, 1) (default 0.95)")
    p.add_argument("--no-bias-adjust", action="store_true", help="plain ratio estimator, no bias adjustment")
    p.add_argument("--ci-method", default=DEFAULT_CI_METHOD, metavar="METHOD",
                   help="interval (SPEC 6): 'recommended' (per metric, from the coverage study: BCa; the "
                        "default), 'linearization' (estimate ± z·SE), 'logit', 'bootstrap' (percentile), 'bca' or "
                        "'studentized' (bootstraps over the draws)")
    p.add_argument("--n-boot", type=_n_boot, default=DEFAULT_N_BOOT,
                   help=f"bootstrap resamples (default {DEFAULT_N_BOOT}, from {MIN_N_BOOT} to {MAX_N_BOOT})")
    p.add_argument("--seed", type=int, default=None,
                   help=f"seed of the bootstrap (default {DEFAULT_SEED}: the same data give the same interval; "
                        "printed with the result)")
    p.set_defaults(func=cmd_estimate)
