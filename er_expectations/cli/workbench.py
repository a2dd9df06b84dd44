"""Command line of the labelling workbench: ``er-expectations label init|export|reconcile|serve|links`` (issue 19;
``links``, the team mode of issue 31, in :mod:`er_expectations.cli.workbench_links`).

``label init PROJECT --topup WORKSHEET --benchmark FILE`` makes a top-up project instead (SPEC
14.3, :mod:`er_expectations.labelling.topup_project`), whose ``label export`` writes the filled
worksheet (refusing unanswered candidates unless ``--unanswered no``).

``label init PROJECT`` makes a labelling project (docs/dev/workbench.md): ``workbench.yml``
and the labels store in the folder PROJECT, with the draws of a ``sample`` worksheet or drawn
from the release (SPEC 1). ``label export PROJECT -o FILE`` writes the labels table (SPEC 2.2)
that ``er-expectations benchmark`` and the labelling checks read; it refuses unsure answers and
answers that differ and are not reconciled unless told how (``--unsure``, ``--first-answer``;
:mod:`er_expectations.labelling.decide`), and prints what it decided. ``label reconcile PROJECT
--draw N --use NAME --by YOU`` records which answer of a draw answered twice is its answer.
Errors exit with code 2 and write nothing (see :mod:`er_expectations.cli.main`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from er_expectations.cli.benchmark import draw_count
from er_expectations.cli.common import check_output
from er_expectations.cli.workbench_links import add_links_command
from er_expectations.core.errors import InputError

__all__ = ["add_workbench_commands", "cmd_label_export", "cmd_label_init", "cmd_label_reconcile",
           "cmd_label_serve"]


def _share(value: str) -> float:
    try:
        share = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number; give a share from 0 to 1 (e.g. 0.1)") from None
    if not 0.0 <= share <= 1.0:
        raise argparse.ArgumentTypeError(f"{value}: give a share from 0 to 1 (e.g. 0.1)")
    return share


def _init_topup(args: argparse.Namespace) -> int:
    from er_expectations.labelling.topup_project import init_topup_project
    from er_expectations.labelling.topup_store import TopupStore

    given = [f for f, v in (("--sample", args.sample), ("--draws", args.draws), ("--seed", args.seed),
                            ("--tags", args.tags)) if v is not None]
    if given:
        raise InputError(f"{given[0]}: a top-up project (--topup) asks about the worksheet's candidates, it has no "
                         f"draws or tags; leave {given[0]} out")
    if args.benchmark is None:
        raise InputError("--topup needs --benchmark FILE: the benchmark the worksheet extends")
    project = init_topup_project(args.project, topup=args.topup, benchmark=args.benchmark, records=args.records,
                                 predictions=args.predictions, record_id=args.record_id, prediction=args.prediction,
                                 reference=args.reference, name=args.name, block=args.block,
                                 attributes=args.attributes or ())
    try:
        tasks = TopupStore(project.store).tasks()
        print(f"top-up project {args.project}: {len(tasks):,} entities with {sum(len(t.candidates) for t in tasks):,} "
              f"candidate records of release {args.prediction!r}; answer them with 'er-expectations label serve "
              f"{args.project}', then 'er-expectations label export {args.project} -o FILE'")
    finally:
        project.close()
    return 0


def cmd_label_init(args: argparse.Namespace) -> int:
    from er_expectations.labelling.project import init_project

    if args.topup is not None:
        return _init_topup(args)
    if args.benchmark is not None:

        raise InputError("--benchmark is for a top-up project: give --topup WORKSHEET too (or leave it out)")
    if args.sample is None and args.draws is None:

        raise InputError("give --sample FILE (a worksheet from 'er-expectations sample') or --draws N --seed S, "
                         "or --topup WORKSHEET --benchmark FILE")
    project = init_project(args.project, records=args.records, predictions=args.predictions, record_id=args.record_id,
                           prediction=args.prediction, name=args.name, block=args.block,
                           attributes=args.attributes or (), sample=args.sample, draws=args.draws, seed=args.seed,
                           double_label_share=args.double_share, **({"tags": args.tags} if args.tags else {}))
    try:
        draws = project.store.draws()
        doubles = sum(d.double for d in draws)
        print(f"labelling project {args.project}: {len(draws)} draws ({doubles} to be labelled twice, blind) of "
              f"prediction {args.prediction!r}; label them with 'er-expectations label serve {args.project}'")
    finally:
        project.close()
    return 0


def cmd_label_export(args: argparse.Namespace) -> int:
    from er_expectations.analysis.sample_design import write_design
    from er_expectations.analysis.sampling import write_frame
    from er_expectations.core.io import file_kind
    from er_expectations.labelling.access import ACCESS_FILE
    from er_expectations.labelling.decide import decide, labels_frame, plural
    from er_expectations.labelling.project import open_project, project_inputs
    from er_expectations.labelling.tags import tags_frame

    folder = Path(args.project)
    inputs = [*(str(p) for p in project_inputs(folder)), str(folder / ACCESS_FILE)]  # --force never overwrites what the project reads
    check_output(args.output, inputs, force=args.force)
    file_kind(Path(args.output))
    if args.tags is not None:
        if Path(args.tags).resolve() == Path(args.output).resolve():
            raise InputError(f"--tags {args.tags}: the same file as --output; give the tags their own file")
        check_output(args.tags, inputs, force=args.force)
        file_kind(Path(args.tags))
    project = open_project(folder, read_only=True)  # only read: works from read-only media
    if project.config.topup is not None:
        try:
            return _export_topup(args, project)
        finally:
            project.close()
    if args.unanswered is not None:
        project.close()
        raise InputError("--unanswered is for a top-up project; this project has draws (see --unsure, "
                         "--first-answer)")
    try:
        decided = decide(project.store, project, unsure=args.unsure, first_answer=args.first_answer,
                         labeller=args.labeller)  # refuses before anything is written
        frame = labels_frame(project.store, decided)
        tags = None if args.tags is None else tags_frame(project, labels=frame)  # checked before anything is written
        design = project.config.sample_design()
        write_frame(frame, args.output)
        design_file = write_design(args.output, design)  # None removes one an earlier file left there
        if tags is not None:
            write_frame(tags, args.tags, id_lists=("records",))
    finally:
        project.close()
    print(decided.summary() + (f" (labeller {args.labeller!r})" if args.labeller else ""))
    print(f"{plural(len(frame), 'draw')} of {decided.draws:,} written to {args.output} (column 'answer' says how "
          f"each was decided); build the benchmark with 'er-expectations benchmark {args.output} RECORDS "
          "--prediction ...'")
    if design is not None:
        print(f"the sample's design ({design.describe()}) written to {design_file}: 'er-expectations benchmark' "
              "recomputes the weights from it")
    else:
        print("warning: the project does not record how its draws were made (a worksheet of an older version): "
              "give 'er-expectations benchmark' the --design and --floor the sample was drawn with",
              file=sys.stderr, flush=True)
    if tags is not None:
        print(f"{len(tags)} error tag(s) written to {args.tags}, by the benchmark's cluster ids: the tags table of "
              "erx.error_audit (SPEC 12.1)")
    return 0


def _export_topup(args: argparse.Namespace, project) -> int:
    from er_expectations.analysis.sampling import write_frame
    from er_expectations.labelling.topup_project import topup_export

    given = [f for f, v in (("--tags", args.tags), ("--unsure", args.unsure), ("--labeller", args.labeller),
                            ("--first-answer", args.first_answer or None)) if v is not None]
    if given:
        raise InputError(f"{given[0]}: a top-up project has no draws; leave {given[0]} out (--unanswered says what "
                         "to do with unanswered candidates)")
    done = topup_export(project, unanswered=args.unanswered or "refuse")  # refuses before anything is written
    write_frame(done.frame, args.output, id_lists=())
    print(done.summary())
    cfg = project.config
    join = f" --join {project.path(cfg.predictions)}" if cfg.predictions else ""
    print(f"{len(done.frame):,} row(s) written to {args.output}; extend the benchmark with 'er-expectations topup "
          f"apply {project.path(cfg.benchmark)} {args.output} {project.path(cfg.records)}{join} --on {cfg.record_id} "
          f"-p {cfg.prediction} -o <new benchmark file>'")
    return 0


def cmd_label_reconcile(args: argparse.Namespace) -> int:
    from er_expectations.labelling.decide import reconcile
    from er_expectations.labelling.project import open_project

    project = open_project(Path(args.project))
    try:
        done = reconcile(project.store, args.draw, use=args.use, by=args.by, note=args.note, project=project)
        others = [str(d.labeller) for d in project.store.decisions(done.draw)
                  if d.labeller != done.labeller and d.status != "skipped"]
    finally:
        project.close()
    print(f"draw {done.draw}: {done.labeller}'s answer is the draw's answer (reconciled by {done.by}; "
          f"{', '.join(others)}'s kept in the store); 'label export' uses it until an answer of the draw is "
          "saved again")
    return 0


def _draw_number(value: str) -> int:
    text = value.strip()
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{value!r}: give a draw number (1, 2, 3, ...)")
    return int(text)


def _port(value: str) -> int:
    if not value.isdigit() or int(value) > 65535:
        raise argparse.ArgumentTypeError(f"{value!r}: give a port from 1 to 65535, or 0 for any free port")
    return int(value)


def cmd_label_serve(args: argparse.Namespace) -> int:
    from er_expectations.web.server import serve

    return serve(args.project, host=args.host, port=args.port, open_browser=args.browser,
                 public_url=args.public_url, show_link=not args.no_link, say=lambda text: print(text, flush=True),
                 warn=lambda text: print(f"warning: {text}", file=sys.stderr, flush=True))


def add_workbench_commands(sub: argparse._SubParsersAction) -> None:
    """Add ``label`` (``init``, ``export``, ``reconcile``, ``serve``) to the ``er-expectations`` sub-commands."""
    label = sub.add_parser("label", help="the labelling workbench: make a project, export its labels (docs/workbench.md)",
                           description="A labelling project is a folder with workbench.yml and the labels store "
                           "(docs/dev/workbench.md).")
    commands = label.add_subparsers(dest="label_command", required=True)

    p = commands.add_parser("init", help="make a labelling project",
                            description="Make a labelling project in PROJECT: the draws of a worksheet (--sample) or "
                            "N records drawn uniformly with replacement from the release (--draws, --seed); or a "
                            "top-up project from a top-up worksheet (--topup, --benchmark).")
    p.add_argument("project", help="the project folder (created; its parent must exist)")
    p.add_argument("--records", required=True, help="record table (.parquet or .csv), one row per record")
    p.add_argument("--predictions", default=None, help="a table with the prediction column, joined on --record-id")
    p.add_argument("--record-id", required=True, help="record id column")
    p.add_argument("--prediction", "-p", required=True, help="predicted cluster column of the release")
    p.add_argument("--name", nargs="+", default=None, metavar="COL",
                   help="name column(s) searched and compared (QC rule 5); several are joined with spaces")
    p.add_argument("--block", default=None, help="block column (ranks search candidates; QC rule 5)")
    p.add_argument("--attributes", nargs="+", default=None, metavar="COL", help="columns shown to the labeller")
    p.add_argument("--sample", default=None, help="the draws: a worksheet from 'er-expectations sample'")
    p.add_argument("--draws", type=draw_count, default=None, help="the draws: this many records drawn from the release")
    p.add_argument("--seed", type=int, default=None, help="random seed of --draws and of the doubly labelled draws")
    p.add_argument("--double-share", type=_share, default=0.1,
                   help="share of the draws labelled twice, blind (default 0.1)")
    p.add_argument("--tags", nargs="+", default=None, metavar="TAG", help="error tags of review mode")
    p.add_argument("--topup", default=None, metavar="WORKSHEET",
                   help="a top-up project instead of draws: the worksheet of 'er-expectations topup list' (each "
                   "sampled entity's new records to answer, SPEC 14.3); needs --benchmark")
    p.add_argument("--benchmark", default=None, metavar="FILE",
                   help="with --topup: the benchmark the worksheet extends (its entities' known records)")
    p.add_argument("--reference", default="reference",
                   help="with --topup: the benchmark's true cluster column (default reference)")
    p.set_defaults(func=cmd_label_init)

    p = commands.add_parser("export", help="write the labels table (SPEC 2.2)",
                            description="Write the project's labels table (one row per answered draw) to a "
                            ".parquet or .csv file, atomically, and print how each draw's answer was decided: "
                            "a single answer, answers that agree, the reconciled answer, or as --unsure and "
                            "--first-answer say. A top-up project writes its filled worksheet instead (belongs "
                            "yes/no, records found by search added), refusing unanswered candidates unless "
                            "--unanswered no.")
    p.add_argument("project", help="the project folder")
    p.add_argument("--output", "-o", required=True, help="file to write (.parquet or .csv)")
    p.add_argument("--labeller", default=None, help="only this labeller's answers")
    p.add_argument("--tags", default=None, metavar="FILE",
                   help="also write review mode's error tags (.parquet or .csv), named by the benchmark's cluster "
                   "ids: the tags table of erx.error_audit and of a checkpoint's data.tags (SPEC 12.1)")
    p.add_argument("--unsure", choices=("skip", "keep"), default=None,
                   help="what to do with answers marked unsure: skip (leave the draw out of the labels) or keep "
                   "(use the answer as given); without it a project with an unsure answer is refused")
    p.add_argument("--first-answer", action="store_true",
                   help="use the earlier answer of a draw answered twice with different true clusters and not "
                   "reconciled ('label reconcile'); without it such a project is refused")
    p.add_argument("--unanswered", choices=("refuse", "no"), default=None,
                   help="a top-up project: what to do with candidates nobody answered: refuse (the default: "
                   "nothing is written) or no (write them 'no')")
    p.add_argument("--force", action="store_true", help="replace the output file(s) if they exist")
    p.set_defaults(func=cmd_label_export)

    p = commands.add_parser("reconcile", help="choose the answer of a draw answered twice that disagree",
                            description="Record that one labeller's answer is the answer of a draw answered twice "
                            "(or more) with different true clusters; 'label export' then uses it. Every answer "
                            "stays in the store; a new answer is first saved on the draw's page by whoever "
                            "reconciles, then chosen here. Reconcile again to change the choice.")
    p.add_argument("project", help="the project folder")
    p.add_argument("--draw", type=_draw_number, required=True, help="the draw number")
    p.add_argument("--use", required=True, metavar="LABELLER", help="the labeller whose answer is the draw's answer")
    p.add_argument("--by", required=True, metavar="NAME", help="who reconciles (kept with the choice)")
    p.add_argument("--note", default="", help="why (kept with the choice)")
    p.set_defaults(func=cmd_label_reconcile)

    p = commands.add_parser("serve", help="serve the labelling page (local web server with a token)",
                            description="Serve the project's labelling page on a local web server until Ctrl+C or "
                            "SIGTERM. The printed URL carries the project's token (as Jupyter's does): open it in a "
                            "browser; requests without it are refused. The port and the token are kept in the "
                            "project (workbench-access.json), so links keep working across restarts; 'label links' "
                            "issues personal links for a team and rotates the token.")
    p.add_argument("project", help="the project folder")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1; another one is reachable by other machines)")
    p.add_argument("--port", type=_port, default=None,
                   help="port (default: the project's port, kept from its first serve; 0: any free port). A new "
                   "port is kept, and changes every link")
    p.add_argument("--public-url", default=None, metavar="URL",
                   help="the address labellers open through a reverse proxy (e.g. https://label.example.org): "
                   "kept, used in the links, accepted as Host and Origin; '' forgets it")
    p.add_argument("--no-link", action="store_true",
                   help="print the address without the lead's token (for a service whose output is logged)")
    p.add_argument("--browser", action="store_true", help="open the page in the default browser")
    p.set_defaults(func=cmd_label_serve)
    add_links_command(commands)
