"""Command line for labelling: ``er-expectations sample`` and ``er-expectations benchmark``.

``sample`` draws records uniformly with replacement from a release and writes the
labelling worksheet; ``benchmark`` checks the filled-in labels (SPEC 9, critical rules)
and writes the benchmark (one row per benchmark record: id, reference, draws, weight).
Errors exit with code 2 and write nothing (see :mod:`er_expectations.cli.main`).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

from er_expectations.analysis.expected_errors import DEFAULT_FLOOR, LEGACY_FLOOR
from er_expectations.cli.common import add_join_args, read_match_probabilities, record_id_column
from er_expectations.core.errors import InputError

__all__ = ["add_label_commands", "cmd_benchmark", "cmd_sample", "draw_count"]


def _check_target(args: argparse.Namespace, *, force: bool = True) -> None:
    """The output names a .parquet/.csv file in an existing folder, not one of the inputs, and
    (without ``force``) not an existing file (checked before any work)."""
    from er_expectations.cli.common import check_output, input_files
    from er_expectations.core.io import file_kind

    check_output(args.output, input_files(args), force=force)
    file_kind(Path(args.output))


def draw_count(value: str) -> int:
    """``-n``: a whole number of draws from 1 to :data:`MAX_DRAWS` (checked before any work)."""
    from er_expectations.analysis.sampling import MAX_DRAWS

    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number of draws (e.g. 200)") from None
    if not 1 <= n <= MAX_DRAWS:
        raise argparse.ArgumentTypeError(f"{value}: give from 1 to {MAX_DRAWS:,} draws (each draw is a row "
                                         "someone labels)")
    return n


def _label_columns(items: list[str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items or []:
        role, sep, column = item.partition("=")
        if not sep or not role or not column:
            raise InputError(f"--label-column {item!r}: write ROLE=COLUMN, e.g. --label-column record_id=mention_id")
        out[role.strip()] = column.strip()
    return out


def _records(args: argparse.Namespace, needed: list[str]):
    from er_expectations.cli.common import load_frame

    return load_frame(args, list(dict.fromkeys(needed)))


def cmd_sample(args: argparse.Namespace) -> int:
    from er_expectations.analysis.sample_design import SampleDesign, write_design
    from er_expectations.analysis.sampling import draw_sample, write_frame

    _check_target(args, force=args.force)
    record_id = record_id_column(args)
    columns = list(args.columns or [])
    df = _records(args, [record_id, args.prediction, *columns])
    sheet = draw_sample(df, prediction=args.prediction, n=args.n, seed=args.seed, record_id=record_id, columns=columns,
                        design=args.design, match_probabilities=read_match_probabilities(args.match_probabilities),
                        floor=args.floor)
    design = SampleDesign.drawn(name=args.design, release=args.prediction, record_id=record_id,
                                population=sheet.attrs["population"], draws=len(sheet), seed=args.seed,
                                floor=sheet.attrs.get("floor"), match_probabilities=args.match_probabilities)
    # a worksheet never stands without its own design (issue 27 leftover 4: the weights of one
    # without it are recomputed from a default): an older worksheet of that name goes first, then
    # the design, then the worksheet, each written whole; a run killed between them leaves a design
    # with no worksheet, which nothing reads
    Path(args.output).unlink(missing_ok=True)
    where = write_design(args.output, design)
    try:
        write_frame(sheet, args.output, separator=args.separator)
    except Exception:
        where.unlink(missing_ok=True)
        raise
    clusters = sheet["predicted_cluster"].nunique()
    print(f"{len(sheet)} draws ({clusters} distinct predicted clusters, seed {args.seed}) from "
          f"{sheet.attrs['population']:,} records of {args.prediction!r} written to {args.output}, the design "
          f"({design.describe()}) to {where}; fill in 'removed' and 'added' for each draw, keeping the design "
          "file beside the labels (er-expectations benchmark reads it)")
    return 0


def _contradiction(option: str, given: object, recorded: object, where: object) -> InputError:
    return InputError(f"{option} {given}: the sample was drawn with {recorded} (recorded in {where}); the weights "
                      f"must be those of the draws: leave {option} out, or give {option} {recorded}")


def resolve_design(args: argparse.Namespace, records) -> tuple[str, float, str | None, object]:
    """The design, floor and pairs file the weights are recomputed with (SPEC 1, 12.3; issue 28),
    and the recorded design (or None): the record beside the labels wins over the defaults, an
    option contradicting it is refused, and an unrecorded sample gets a warning naming what is used."""
    from er_expectations.analysis.sample_design import design_path, file_sha256, read_design

    where = Path(args.sample_design) if args.sample_design else design_path(args.labels)
    if args.sample_design and not where.is_file():
        raise InputError(f"--sample-design {where}: no such file; give the design file 'er-expectations sample' "
                         "wrote beside the worksheet (WORKSHEET.design.json)")
    recorded = read_design(args.labels, file=where)
    if recorded is None:
        design = args.design or "cluster_size"
        floor = LEGACY_FLOOR if args.floor is None else args.floor
        given = "as given with --floor" if args.floor is not None else "the default of the versions that did not record it"
        how = (f"and floor {floor:g} ({given})"
               if design == "expected_errors" else "(records drawn uniformly)")
        print(f"warning: {args.labels}: the sample's design is not recorded (no {where}: labels from a sample of an "
              f"older version, or moved without that file); the weights are computed with design {design} {how}. "
              "If the draws were made otherwise the weights are wrong: give --design, --match-probabilities and "
              "--floor as the sample was drawn, or --sample-design WORKSHEET.design.json",
              file=sys.stderr, flush=True)
        return design, floor, args.match_probabilities, None
    if args.design is not None and args.design != recorded.name:
        raise _contradiction("--design", args.design, recorded.name, where)
    if recorded.name != "expected_errors":
        for option, value in (("--floor", args.floor), ("--match-probabilities", args.match_probabilities)):
            if value is not None:
                raise InputError(f"{option} {value}: the sample was drawn with design {recorded.name} (recorded in "
                                 f"{where}), which uses no {option}; leave it out")
        return recorded.name, DEFAULT_FLOOR, None, recorded
    if args.floor is not None and args.floor != recorded.floor:
        raise _contradiction("--floor", args.floor, recorded.floor, where)
    pairs = args.match_probabilities or recorded.match_probabilities_path
    if not Path(pairs).is_file():
        raise InputError(f"{where}: the sample was drawn with the match probabilities {recorded.match_probabilities} "
                         f"({pairs}), which is not there; give that file with --match-probabilities FILE")
    if file_sha256(pairs) != recorded.match_probabilities_sha256:
        raise InputError(f"--match-probabilities {pairs}: not the file the sample was drawn with (its SHA-256 differs "
                         f"from {recorded.match_probabilities_sha256[:12]}… recorded in {where} for "
                         f"{recorded.match_probabilities}); the weights would be wrong: give the pairs file the "
                         "sample was drawn with")
    population = int(records[args.prediction].notna().sum())
    if population != recorded.population:
        raise InputError(f"{args.file}: release {args.prediction!r} has {population:,} records, the sample was drawn "
                         f"from {recorded.population:,} (recorded in {where}); the weights depend on them: give the "
                         "records the sample was drawn from")
    return recorded.name, float(recorded.floor), pairs, recorded


def check_worksheet_inclusion(labels, inclusion, *, args: argparse.Namespace, design: str, floor: float,
                              pairs_file: str | None, record_id: str) -> None:
    """The worksheet's own ``inclusion`` column (q_r of each drawn record, written by ``sample`` for the
    expected-errors design, SPEC 12.3) against the q_r recomputed for the benchmark's weights: a sample
    drawn with another floor or other pair probabilities, or by expected errors while the benchmark is
    built with another design, is refused (hostile round 3, item 1) instead of weighting it wrongly."""
    import numpy as np
    import pandas as pd

    column = "inclusion"
    if column not in labels.columns:
        return
    given = pd.to_numeric(labels[column], errors="coerce").to_numpy(dtype=np.float64)
    if not np.isfinite(given).any():
        return
    how = ("give the --design, --match-probabilities and --floor the sample was drawn with (or keep the sample's "
           "design file WORKSHEET.design.json beside the labels)")
    if inclusion is None:
        raise InputError(f"{args.labels}, column '{column}': the sample was drawn by expected errors (the worksheet "
                         f"holds each drawn record's inclusion probability), but the benchmark would be built with "
                         f"design {design}: the weights would be wrong; {how}")
    id_column = _label_columns(args.label_column).get("record_id", "record_id")
    if id_column not in labels.columns:
        return  # the labels' own check names the missing column
    recomputed = dict(zip(map(str, inclusion[record_id]), inclusion["inclusion"].to_numpy(dtype=np.float64),
                          strict=True))
    draws = labels["draw"].tolist() if "draw" in labels.columns else list(range(1, len(labels) + 1))
    for draw, record, q in zip(draws, labels[id_column].tolist(), given, strict=True):
        want = recomputed.get(str(record))
        if want is None or not np.isfinite(q) or np.isclose(q, want, rtol=1e-6, atol=1e-15):
            continue
        raise InputError(
            f"{args.labels}, column '{column}', draw {draw} (record {record!r}): the sample drew it with inclusion "
            f"probability {q:.6g}, but --floor {floor:g} and --match-probabilities {pairs_file} give {want:.6g}: "
            f"the sample was drawn with another floor or other pair probabilities and the weights would be wrong; "
            f"{how}")


def cmd_benchmark(args: argparse.Namespace) -> int:
    from er_expectations.analysis.benchmark import benchmark_from_labels
    from er_expectations.analysis.benchmark_life import new_manifest, write_manifest
    from er_expectations.analysis.sample_design import design_effect
    from er_expectations.analysis.sampling import write_frame
    from er_expectations.core.io import read_table

    _check_target(args)
    record_id = record_id_column(args)
    labels = read_table(args.labels)
    df = _records(args, [record_id, args.prediction])
    name, floor, pairs_file, recorded = resolve_design(args, df)
    inclusion = None
    if name == "expected_errors" or pairs_file:
        from er_expectations.analysis.expected_errors import expected_error_probabilities

        pairs = read_match_probabilities(pairs_file)
        if pairs is None:
            raise InputError("--design expected_errors needs --match-probabilities FILE and the --floor the "
                             "sample was drawn with: the weights are recomputed from them (SPEC 12.3)")
        inclusion = expected_error_probabilities(df, prediction=args.prediction, record_id=record_id,
                                                 match_probabilities=pairs, floor=floor, source=str(pairs_file))
    check_worksheet_inclusion(labels, inclusion, args=args, design=name, floor=floor, pairs_file=pairs_file,
                              record_id=record_id)
    bench = benchmark_from_labels(labels, df, prediction=args.prediction, record_id=record_id, design=name,
                                  reference=args.reference, columns=_label_columns(args.label_column),
                                  separator=args.separator, inclusion=inclusion)
    effect = design_effect(bench, reference=args.reference)
    design: dict[str, object] = {"name": name}
    if name == "expected_errors":
        design.update({"floor": floor, "match_probabilities": file_fact(pairs_file)})
    design.update({"recorded": None if recorded is None else recorded.as_dict(),  # type: ignore[attr-defined]
                   "design_effect": round(effect.value, 6) if effect.draws else None})
    built_from = answers_built_from(labels)
    manifest = new_manifest(bench, record_id=record_id, reference=args.reference, release=args.prediction,
                            design=design, source={"labels": file_fact(args.labels), "records": file_fact(args.file),
                                                   "answers": built_from})
    write_frame(bench, args.output)
    where = write_manifest(args.output, manifest)
    made_of = ""
    if built_from:
        made_of = " (answers: " + ", ".join(f"{n} {kind.replace('_', ' ')}" for kind, n in built_from.items()) + ")"
    if name == "expected_errors" and effect.draws:
        print(f"design effect of the weights {effect.value:.2f} (Kish: the {effect.draws:,} draws weigh like "
              f"{effect.effective_draws:,.0f} records drawn uniformly)")
        warning = effect.warning()
        if warning:
            print(f"warning: {warning}", file=sys.stderr, flush=True)
    print(f"benchmark of {bench.attrs['clusters']} true clusters ({bench.attrs['benchmark_records']:,} records) from "
          f"{bench.attrs['draws']} draws{made_of}, design {name}"
          f"{'' if recorded is None else ' (as recorded with the sample)'}, written to {args.output}, with the "
          f"{bench.attrs['known_records']:,} records of {args.prediction!r} the labellers could see (a later release "
          f"is evaluated on them; records added since are set aside and counted, SPEC 14) and its manifest {where}; "
          f"estimate with --reference {args.reference} --draws draws")
    return 0


def answers_built_from(labels) -> dict[str, int]:
    """How the answers of an exported labels table were decided (its ``answer`` column), as counts."""
    if "answer" not in labels.columns:
        return {}
    counts = labels["answer"].astype("string").fillna("not stated").value_counts(sort=False)
    return {str(kind): int(n) for kind, n in counts.items()}


def file_fact(path) -> dict[str, object]:
    """The path and SHA-256 of an input file (its provenance in the manifest)."""
    p = Path(path)
    digest = hashlib.sha256()
    with p.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return {"path": str(path), "bytes": p.stat().st_size, "sha256": digest.hexdigest()}


def _design_args(p: argparse.ArgumentParser, *, recorded: bool = False) -> None:
    """``--match-probabilities`` and ``--floor`` of the expected-errors design (SPEC 12.3); for
    ``benchmark`` (``recorded``) both default to what the sample's design file records."""
    p.add_argument("--match-probabilities", default=None, metavar="FILE",
                   help="for --design expected_errors: the ER system's pair probabilities (columns record_a, "
                        "record_b, p; ids of the record id column)"
                        + ("; default: the file the sample's design records (its SHA-256 is checked)"
                           if recorded else ""))
    if recorded:
        p.add_argument("--floor", type=float, default=None,
                       help="for --design expected_errors: the floor the sample was drawn with (default: the one "
                            f"its design file records; without one {LEGACY_FLOOR:g}, the default of the versions that did not "
                            "record it, with a warning)")
    else:
        p.add_argument("--floor", type=float, default=DEFAULT_FLOOR,
                       help=f"for --design expected_errors: the uniform floor λ in (0, 1] (default {DEFAULT_FLOOR:g})")


def _records_args(p: argparse.ArgumentParser) -> None:
    add_join_args(p, joined="the predictions")
    p.add_argument("--prediction", "-p", required=True, help="predicted cluster column of the release")
    p.add_argument("--separator", default=";", help="separator of ids in list cells of CSV files (default ';')")
    p.add_argument("--output", "-o", required=True, help="file to write (.parquet or .csv), atomically")
    p.set_defaults(name_columns=None, name_separator=" ")


def add_label_commands(sub: argparse._SubParsersAction) -> None:
    """Add ``sample`` and ``benchmark`` to the ``er-expectations`` sub-commands."""
    p = sub.add_parser(
        "sample", help="draw records for labelling and write the worksheet (SPEC 1, 2.2)",
        description="Draw N records uniformly with replacement from the release (the 'cluster_size' "
        "design) and write a worksheet: one row per draw with the drawn record, its predicted cluster "
        "and the members' attributes, and empty 'removed'/'added' columns to fill in.",
    )
    p.add_argument("file", help="record table (.parquet or .csv), one row per record")
    _records_args(p)
    p.add_argument("-n", type=draw_count, required=True, help="number of draws (at most 100,000)")
    p.add_argument("--force", action="store_true", help="replace the output file if it exists (a worksheet "
                   "already filled in is lost)")
    p.add_argument("--seed", type=int, required=True, help="random seed (the same seed gives the same draws)")
    p.add_argument("--columns", nargs="+", default=None, metavar="COL",
                   help="record columns to show the labeller (e.g. name, block)")
    p.add_argument("--design", choices=("cluster_size", "expected_errors"), default="cluster_size",
                   help="cluster_size (default: records drawn uniformly) or expected_errors (records drawn by "
                        "their expected errors from --match-probabilities, SPEC 12.3)")
    _design_args(p)
    p.set_defaults(func=cmd_sample)

    p = sub.add_parser(
        "benchmark", help="build the benchmark from checked labels (SPEC 2.1, 9)",
        description="Check the labels against the release they were drawn from (critical rules of "
        "SPEC 9) and write one row per benchmark record: the record id, 'reference' (true cluster), "
        "'draws' and 'weight', then one row per other record of that release (the records the labellers "
        "could see), all with 'benchmark_version' 1, and the manifest FILE.manifest.json beside it "
        "(SPEC 14). Labels that break a rule are listed and nothing is written.",
    )
    p.add_argument("labels", help="labels table (.parquet or .csv), one row per draw (SPEC 2.2)")
    p.add_argument("file", help="record table of the release the labels were drawn from")
    _records_args(p)
    p.add_argument("--design", choices=("cluster_size", "uniform", "expected_errors"), default=None,
                   help="sampling design of the draws (default: the one recorded beside the labels in "
                        "LABELS.design.json; without one cluster_size, records drawn uniformly, with a warning; "
                        "expected_errors: weights 1/π_c recomputed from --match-probabilities and --floor)")
    _design_args(p, recorded=True)
    p.add_argument("--sample-design", default=None, metavar="FILE",
                   help="the design file written by 'er-expectations sample' (WORKSHEET.design.json), when the "
                        "labels were saved under another name (default: LABELS.design.json)")
    p.add_argument("--reference", default="reference", help="name of the reference column to write")
    p.add_argument("--label-column", action="append", metavar="ROLE=COLUMN",
                   help="name of a labels column, e.g. record_id=mention_id (roles: draw, record_id, "
                        "removed, added, predicted_cluster, true_cluster); repeatable")
    p.set_defaults(func=cmd_benchmark)
