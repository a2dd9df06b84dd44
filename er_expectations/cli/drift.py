"""``er-expectations diff``: how the clusters of one release differ from another's (SPEC 10).

Two ways to name the releases:

* a record table with a column per release: ``er-expectations diff predictions.parquet
  --before inventor_id_20200630 --after inventor_id_20200929 --record-id mention_id``
  (``--join``/``--name-columns`` as for ``summarize``);
* a checkpoint file and release labels: ``er-expectations diff --checkpoint
  checkpoints/patentsview.yml --before 2020-06-30 --after 2020-09-29`` (the checkpoint's
  record ids and names are used).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import pandas as pd

from er_expectations.core.errors import InputError
from er_expectations.core.io import csv_text

__all__ = ["add_drift_commands", "cmd_diff", "diff_text"]


def diff_text(diff: Any) -> str:
    """The diff as plain text: the sentence, the counts and the sampled examples."""
    lines = [f"Clusters of {diff.after} against {diff.before}", diff.summary(), ""]
    frame = diff.to_frame()
    lines.append(f"{'change':<10}  {'clusters':>10}  {'records':>10}")
    lines += [f"{kind:<10}  {int(row.clusters):>10,}  {int(row.records):>10,}" for kind, row in frame.iterrows()]
    if diff.examples:
        lines += ["", f"Sampled changed clusters (seed {diff.seed}):"]
        for e in diff.examples:
            sources = "; ".join(f"{c} ({k} of {s})" for c, k, s in e.sources)
            names = f"  names: {'; '.join(e.names)}" if e.names else ""
            records = "1 record" if e.size == 1 else f"{e.size:,} records"
            lines.append(f"  {e.kind:<6} {e.cluster} ({records}) from {sources}{names}")
    return "\n".join(lines) + "\n"


def _from_checkpoint(args: argparse.Namespace) -> tuple[pd.DataFrame, str, str, str, str | None]:
    from er_expectations.config import load_checkpoint
    from er_expectations.run.data.files import ReleaseData

    checkpoint = load_checkpoint(args.checkpoint)
    data = ReleaseData(checkpoint)
    releases = data.select(None)
    known = {r.label: r for r in releases} | {r.key: r for r in releases}
    for option, value in (("--before", args.before), ("--after", args.after)):
        if value not in known:
            from er_expectations.core.hints import did_you_mean

            close = did_you_mean(value, [r.label for r in releases])
            raise InputError(f"{option} '{value}'{f' ({close})' if close else ''}: not a release of checkpoint "
                             f"'{checkpoint.name}'; known: {', '.join(r.label for r in releases)}")
    before, after = [known[args.before]], [known[args.after]]
    frame_b, frame_a = data.frame(before[0]), data.frame(after[0])
    pred, rid = data.prediction_column, data.id_column
    keep = [rid] + ([data.name_column] if data.name_column else [])
    df = frame_a[keep + [pred]].rename(columns={pred: "__after__"})
    df["__before__"] = df[rid].map(frame_b.set_index(rid)[pred])
    return df, "__before__", "__after__", rid, data.name_column


def cmd_diff(args: argparse.Namespace) -> int:
    from er_expectations.analysis.drift import diff_releases
    from er_expectations.cli.common import (
        EXIT_OK,
        check_output,
        emit,
        input_files,
        json_default,
        load_frame,
        name_arg,
        needed_name_cols,
    )

    check_output(args.output, input_files(args))
    if args.checkpoint:
        if args.file:
            raise InputError("give either a record table or --checkpoint, not both")
        df, before, after, rid, name = _from_checkpoint(args)
        labels = (args.before, args.after)
    else:
        if not args.file:
            raise InputError("give the record table with a column per release, or --checkpoint FILE")
        name = name_arg(args)
        needed = [args.before, args.after, *needed_name_cols(args)] + ([args.record_id] if args.record_id else [])
        df = load_frame(args, needed)
        before, after, rid, labels = args.before, args.after, args.record_id, (args.before, args.after)
    diff = diff_releases(df, before=before, after=after, record_id=rid, name=name, examples=args.examples, seed=args.seed)
    if labels != (diff.before, diff.after):
        from dataclasses import replace

        diff = replace(diff, before=labels[0], after=labels[1])
    if args.format == "json":
        emit(json.dumps(diff.to_dict(), indent=2, default=json_default) + "\n", args.output)
    elif args.format == "csv":
        emit(csv_text(diff.to_frame(), index=True), args.output)
    else:
        emit(diff_text(diff), args.output)
    return EXIT_OK


def add_drift_commands(sub: Any) -> None:
    """Add ``diff`` to the command line's subparsers."""
    from er_expectations.cli.common import add_table_args

    p = sub.add_parser("diff", help="clusters merged, split or unchanged between two releases (SPEC 10)")
    add_table_args(p)
    file_arg = next(a for a in p._actions if a.dest == "file")
    file_arg.nargs, file_arg.required, file_arg.default = "?", False, None  # optional with --checkpoint
    p.add_argument("--checkpoint", default=None, metavar="FILE",
                   help="take the releases from this checkpoint file (then --before/--after are release labels)")
    p.add_argument("--before", required=True, help="the earlier release (a column, or a label with --checkpoint)")
    p.add_argument("--after", required=True, help="the later release (a column, or a label with --checkpoint)")
    p.add_argument("--examples", type=int, default=5, help="sampled clusters per kind of change (default 5)")
    p.add_argument("--seed", type=int, default=0, help="seed of the sampled examples (default 0)")
    p.set_defaults(func=cmd_diff)
