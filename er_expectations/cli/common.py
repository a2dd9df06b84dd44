"""What every command of the command line shares: exit codes, reading a record table, writing the output."""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Sequence

import pandas as pd

from er_expectations.cli.exits import (  # noqa: F401 - the exit codes, re-exported for the commands
    EXIT_BUSY,
    EXIT_CODES,
    EXIT_DOCS,
    EXIT_FAILED,
    EXIT_HISTORY,
    EXIT_INCOMPLETE,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_SOURCE,
    EXIT_TERMINATED,
    EXIT_USAGE,
    classify_error,
)
from er_expectations.core.errors import InputError


def join_column(args: argparse.Namespace) -> str | None:
    """The column ``--join`` joins on: ``--on``; else ``--record-id`` when every file has it;
    else the one column every file shares. ``None`` without ``--join``. Sets ``args.on``."""
    from er_expectations.core.io import table_columns

    if args.on or not args.join:
        return args.on
    files = [args.file, *args.join]
    columns = [table_columns(path) for path in files]
    shared = [c for c in columns[0] if all(c in cols for cols in columns[1:])]
    if args.record_id is not None and args.record_id in shared:
        args.on = args.record_id
    elif len(shared) == 1:
        args.on = shared[0]
    else:
        what = (f"share the columns {', '.join(repr(c) for c in shared[:10])}" if shared
                else "share no column")
        raise InputError(f"--join: {', '.join(files)} {what}; give the record id column they are joined "
                         "on with --on COLUMN (or --record-id COLUMN)")
    return args.on


def record_id_column(args: argparse.Namespace) -> str:
    """The record id column of a command that needs one: ``--record-id``, else the join column."""
    record_id = args.record_id or join_column(args)
    if record_id is None:
        raise InputError("give the column that names each record with --record-id COLUMN")
    return record_id


def load_frame(args: argparse.Namespace, needed: list[str]) -> pd.DataFrame:
    from er_expectations.core.io import combine_name, read_table, same_id_kind, table_columns

    join_column(args)
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


def name_arg(args: argparse.Namespace) -> str | None:
    if args.name and args.name_columns:
        raise InputError("give either --name COLUMN or --name-columns COL [COL ...], not both")
    if args.name_columns:
        return "__name__"
    return args.name


def needed_name_cols(args: argparse.Namespace) -> list[str]:
    if args.name_columns:
        return list(args.name_columns)
    return [args.name] if args.name else []


def fmt(x: float, digits: int = 4) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    if isinstance(x, float) and math.isinf(x):
        return "∞"
    if isinstance(x, float) and float(x).is_integer() and abs(x) >= 1000:
        return f"{int(x):,}"
    return f"{x:.{digits}g}" if isinstance(x, float) else str(x)


def input_files(args: argparse.Namespace) -> list[str]:
    """The files a command reads (its positional tables, ``--join`` and ``--checkpoint``)."""
    files = [getattr(args, name, None) for name in ("file", "labels", "checkpoint")]
    return [str(f) for f in [*files, *(getattr(args, "join", None) or [])] if f]


def _same_file(a: str, b: str) -> bool:
    from pathlib import Path

    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet): compare the resolved paths
        return Path(a).resolve() == Path(b).resolve()


def check_output(output: str | None, inputs: Sequence[str] = (), *, force: bool = True,
                 option: str = "--output") -> None:
    """``-o`` must name a file in an existing folder (checked before any work is done).

    It must not be one of the command's ``inputs`` (compared with symlinks resolved and by
    inode, so no alias, ``..`` or hard link overwrites an input), and without ``force`` it
    must not exist yet (a filled-in worksheet is never replaced silently).
    """
    if not output:
        return
    from pathlib import Path

    path = Path(output)
    if path.is_dir():
        raise InputError(f"{option} {output}: is a folder; give a file name, e.g. {path / 'result.txt'}")
    if not path.parent.is_dir():
        raise InputError(f"{option} {output}: the folder {path.parent} does not exist; create it first")
    for source in inputs:
        if _same_file(output, source):
            raise InputError(f"{option} {output}: is also an input of the command ({source}); writing it would "
                             "destroy the input: give another file name")
    if not force and (path.exists() or path.is_symlink()):
        raise InputError(f"{option} {output}: the file exists (it may hold labels already filled in); give "
                         "another file name, or add --force to replace it")


def emit(text: str, output: str | None) -> None:
    if output:
        from er_expectations.core.io import atomic_write_text

        try:
            atomic_write_text(output, text)
        except OSError as error:
            raise InputError(f"--output {output}: cannot write: {error.strerror or error}") from error
    else:
        sys.stdout.write(text)


def json_default(o: object) -> object:
    if hasattr(o, "item"):
        return o.item()
    return str(o)


def clean(v: object) -> object:
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return None if math.isnan(v) else ("inf" if v > 0 else "-inf")
    return v


def add_join_args(p: argparse.ArgumentParser, *, joined: str) -> None:
    """``--join``, ``--on`` and ``--record-id`` (resolved by :func:`join_column`, :func:`record_id_column`)."""
    p.add_argument("--join", action="append", metavar="FILE",
                   help=f"another table to left-join on --on (e.g. {joined}); repeatable")
    p.add_argument("--on", default=None,
                   help="record id column used by --join (default: --record-id, or the one column the files share)")
    p.add_argument("--record-id", default=None,
                   help="record id column (default: the --on column); duplicated ids are reported as an error")


def add_table_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="record table (.parquet or .csv), one row per record")
    add_join_args(p, joined="the benchmark or the names")
    p.add_argument("--name", default=None, help="column with the name used for homonymy and name variation")
    p.add_argument("--name-columns", nargs="+", default=None, metavar="COL",
                   help="build the name from several columns, e.g. --name-columns name_first name_last")
    p.add_argument("--name-separator", default=" ", help="separator for --name-columns (default: a space)")
    p.add_argument("--format", choices=("table", "json", "csv"), default="table", help="output format")
    p.add_argument("--output", "-o", default=None, help="write to this file (atomically) instead of stdout")


def hill_order(value: str) -> float:
    from er_expectations.stats import parse_hill_orders

    try:
        return parse_hill_orders((value,), parameter="--hill-orders")[0]
    except InputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def read_match_probabilities(path: str | None) -> pd.DataFrame | None:
    """The pairs file of ``--match-probabilities`` (columns record_a, record_b, p; SPEC 12.3). A CSV
    file is all text: p is read as a number where every cell is one (else the table's check says
    which row is not)."""
    if path is None:
        return None
    from er_expectations.core.io import read_table

    pairs = read_table(path)
    if "p" in pairs.columns and not pd.api.types.is_numeric_dtype(pairs["p"]):
        converted = pd.to_numeric(pairs["p"], errors="coerce")
        if converted.notna().sum() == pairs["p"].notna().sum():
            pairs["p"] = converted
    return pairs
