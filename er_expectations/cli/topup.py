"""Command line for top-up labelling (SPEC 14.3): ``er-expectations topup list|apply``.

``topup list`` writes the worksheet of a later release: for every sampled entity of the
benchmark, the records added since labelling that sit in its predicted clusters (or carry its
names), with an empty ``belongs`` column to fill with yes or no. ``topup apply`` checks the
filled worksheet and writes the next version of the benchmark to a new file, with its
manifest; the benchmark it was made from is never changed. Errors exit with code 2 and write
nothing (see :mod:`er_expectations.cli.main`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from er_expectations.cli.common import (
    add_join_args,
    check_output,
    input_files,
    load_frame,
    name_arg,
    needed_name_cols,
    record_id_column,
)
from er_expectations.core.errors import InputError

__all__ = ["add_topup_commands", "cmd_topup_apply", "cmd_topup_list"]


def _inputs(args: argparse.Namespace) -> list[str]:
    return [args.benchmark, *([args.worksheet] if getattr(args, "worksheet", None) else []), *input_files(args)]


def _check_target(args: argparse.Namespace) -> None:
    """The output is a .parquet/.csv file in an existing folder, none of the inputs (nor the input
    benchmark's manifest), and not an existing file unless ``--force`` (checked before any work)."""
    from er_expectations.analysis.benchmark_life import manifest_path
    from er_expectations.core.io import file_kind

    check_output(args.output, _inputs(args), force=args.force)
    file_kind(Path(args.output))
    if getattr(args, "worksheet", None) is not None:  # apply: the manifest written beside the output
        check_output(str(manifest_path(args.output)), [str(manifest_path(args.benchmark)), *_inputs(args)],
                     force=args.force)


def _benchmark(args: argparse.Namespace, record_id: str, records):
    """The benchmark file (its record ids in the type of the ``records``' ids: a CSV file holds them
    as text), checked against its manifest when it has one; its manifest and reference column."""
    from er_expectations.analysis.benchmark_life import check_manifest, read_manifest
    from er_expectations.analysis.topup import align_record_ids
    from er_expectations.core.io import read_table

    bench = read_table(args.benchmark)
    manifest = read_manifest(args.benchmark)
    if record_id in bench.columns and record_id in records.columns:
        bench[record_id] = align_record_ids(bench[record_id], records[record_id], where=str(args.benchmark))
    reference = args.reference
    if manifest is not None:
        said = manifest.get("record_id")
        if said is not None and said != record_id:
            raise InputError(f"{args.benchmark}: its manifest says the record id column is {said!r}, not {record_id!r}; "
                             f"give --record-id {said}")
        if record_id not in bench.columns:
            raise InputError(f"{args.benchmark}: no record id column {record_id!r}; give --record-id")
        check_manifest(manifest, bench, record_id=record_id, where=args.benchmark)
        reference = reference or manifest.get("reference")
    return bench, manifest, reference or "reference"


def cmd_topup_list(args: argparse.Namespace) -> int:
    from er_expectations.analysis.sampling import write_frame
    from er_expectations.analysis.topup import topup_candidates

    _check_target(args)
    record_id = record_id_column(args)
    name = name_arg(args)
    columns = list(args.columns or [])
    df = load_frame(args, list(dict.fromkeys([record_id, args.prediction, *needed_name_cols(args), *columns])))
    bench, _, reference = _benchmark(args, record_id, df)
    sheet = topup_candidates(bench, df, prediction=args.prediction, record_id=record_id, reference=reference,
                             name=name, columns=columns)
    a = sheet.attrs
    release = f"release {args.prediction!r}"
    if a["records_added"] == 0:
        print(f"every record of {release} is known to the benchmark (version {a['benchmark_version']}): there is "
              "nothing to top up; no worksheet written")
        return 0
    write_frame(sheet, args.output)
    by_name = f" ({a['candidates_by_name']} of them by name)" if name is not None else ""
    what = (f"{a['candidates']} candidates{by_name} written to {args.output}: fill 'belongs' with yes or no, then "
            "run er-expectations topup apply" if a["candidates"] else
            f"no candidate to answer: an empty worksheet written to {args.output}; run er-expectations topup apply "
            "with it to make the release's records known")
    print(f"{a['records_added']:,} records of {release} are unknown to the benchmark (version "
          f"{a['benchmark_version']}): not in the release it was labelled or topped up on; "
          f"{a['records_added_in_sampled']:,} of them sit in the predicted "
          f"clusters of {a['entities_by_prediction']:,} sampled entities; {what}")
    return 0


def cmd_topup_apply(args: argparse.Namespace) -> int:
    from er_expectations.analysis.benchmark_life import (
        MANIFEST_FORMAT,
        version_entry,
        write_manifest,
    )
    from er_expectations.analysis.sampling import write_frame
    from er_expectations.analysis.topup import apply_topup
    from er_expectations.cli.benchmark import file_fact
    from er_expectations.core.io import read_table

    _check_target(args)
    record_id = record_id_column(args)
    df = load_frame(args, [record_id, args.prediction])
    bench, manifest, reference = _benchmark(args, record_id, df)
    answers = read_table(args.worksheet)
    new = apply_topup(bench, answers, df, prediction=args.prediction, record_id=record_id, reference=reference)
    a = new.attrs
    known = new[record_id]
    entry = version_entry(version=a["benchmark_version"], release=args.prediction, known=known,
                          added=a["records_added"], benchmark_records=a["benchmark_records"], clusters=a["clusters"],
                          draws=a["draws"], source={
                              "benchmark": file_fact(args.benchmark), "worksheet": file_fact(args.worksheet),
                              "records": file_fact(args.file),
                              "answers": {"yes": a["joined"], "no": a["answered_no"],
                                          "found_by_search": a["found_by_search"]}})
    if manifest is None:
        manifest = {"format": MANIFEST_FORMAT, "record_id": record_id, "reference": reference, "design": {},
                    "note": f"topped up from {args.benchmark}, which had no manifest: its earlier versions are not "
                            "recorded", "versions": []}
    manifest = {**manifest, "versions": [*manifest["versions"], entry]}
    write_frame(new, args.output)
    where = write_manifest(args.output, manifest)
    print(f"benchmark version {a['benchmark_version']} written to {args.output} (manifest {where}); "
          f"{args.benchmark} (version {a['previous_version']}) is unchanged. The {a['records_added']:,} records of "
          f"release {args.prediction!r} added since are now known: {a['joined']:,} of {a['rows']:,} answers joined "
          f"{a['entities_grown']:,} entities ({a['answered_no']:,} answered no, {a['found_by_search']:,} found by "
          f"search); the benchmark holds {a['benchmark_records']:,} records of {a['clusters']:,} true clusters. "
          f"Join {args.output} onto release {args.prediction!r}: every one of its records is evaluated again")
    return 0


def _common(p: argparse.ArgumentParser) -> None:
    add_join_args(p, joined="the predictions")
    p.add_argument("--prediction", "-p", required=True,
                   help="predicted cluster column of the release to top up for")
    p.add_argument("--reference", default=None,
                   help="the benchmark's reference column (default: as its manifest says, else 'reference')")
    p.add_argument("--force", action="store_true", help="replace the output file if it exists")


def add_topup_commands(sub: argparse._SubParsersAction) -> None:
    """Add ``topup`` (``list``, ``apply``) to the ``er-expectations`` sub-commands."""
    topup = sub.add_parser("topup", help="top up a benchmark for a later release (SPEC 14.3)",
                           description="Extend a benchmark to the records a later release added since it was "
                           "labelled: 'topup list' writes the records to answer, 'topup apply' writes the next "
                           "version of the benchmark from the answers.")
    commands = topup.add_subparsers(dest="topup_command", required=True)

    p = commands.add_parser(
        "list", help="write the worksheet of the records to answer",
        description="List, for every sampled entity of the benchmark, the records of the release that the benchmark "
        "does not know and that sit in one of the entity's predicted clusters (or carry one of its names, with "
        "--name); write them to a worksheet with an empty 'belongs' column to fill with yes or no.")
    p.add_argument("benchmark", help="the benchmark (from er-expectations benchmark or topup apply)")
    p.add_argument("file", help="record table of the release to top up for (.parquet or .csv)")
    _common(p)
    p.add_argument("--name", default=None, help="name column: records carrying one of an entity's names are also "
                   "listed (case, accents and word order ignored)")
    p.add_argument("--name-columns", nargs="+", default=None, metavar="COL",
                   help="build the name from several columns, e.g. --name-columns name_first name_last")
    p.add_argument("--name-separator", default=" ", help="separator for --name-columns (default: a space)")
    p.add_argument("--columns", nargs="+", default=None, metavar="COL",
                   help="record columns to show the labeller (e.g. name, block)")
    p.add_argument("--output", "-o", required=True, help="the worksheet to write (.parquet or .csv), atomically")
    p.set_defaults(func=cmd_topup_list)

    p = commands.add_parser(
        "apply", help="write the next version of the benchmark from a filled worksheet",
        description="Check the filled worksheet (every row answered yes or no, a record yes for one entity at most, "
        "only records the release added since the benchmark) and write the next version of the benchmark to a new "
        "file: every record of the release becomes known, the records answered yes join their entity. Its manifest "
        "is written beside it; the input benchmark is never changed. Nothing is written if a check fails.")
    p.add_argument("benchmark", help="the benchmark the worksheet was made from")
    p.add_argument("worksheet", help="the filled worksheet (from topup list)")
    p.add_argument("file", help="record table of the release (the one the worksheet was made from)")
    _common(p)
    p.add_argument("--output", "-o", required=True,
                   help="the new benchmark to write (.parquet or .csv), atomically; a file other than the input "
                   "benchmark, so that the previous version is kept")
    p.set_defaults(func=cmd_topup_apply, name_columns=None, name_separator=" ")
