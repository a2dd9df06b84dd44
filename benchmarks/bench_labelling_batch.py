"""The GX path of labelling QC on a large release: building the labelling batch, then the rules on it.

A labelling checkpoint builds the labelling batch (``erx.labelling_batch``: the labels stacked
over the records the rules read) from the whole release, then GX runs the rules on that small
batch (``er.label_checks``: split + ``qc_labels``). Both are measured side by side with one
``df.groupby(prediction).size()`` of the release and with ``qc_labels`` on the whole release
(the Python API), in interleaved rounds (best of ``--repeat``), same labels as
``bench_labels.py`` (1,000 draws, a few injected errors). No target: the batch build is
reported as a ratio to the groupby, the rules on the batch as a ratio to the rules on the
whole release.

    .venv/bin/python benchmarks/bench_labelling_batch.py --sizes 1e6 --kinds int str

Results go to ``benchmarks/results/labelling-batch-<date>.json``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from pathlib import Path

# synthetic, bench_core and bench_labels: modules of benchmarks/ (the folder of the script is on sys.path)
import synthetic
from bench_core import environment, interleaved_best_of
from bench_labels import ID, NAME, PREDICTION, perfect_labels

from er_expectations.analysis.labelling_batch import labelling_batch, split_labelling_batch
from er_expectations.analysis.labelqc import qc_labels
from er_expectations.core.io import atomic_write_text

HERE = Path(__file__).resolve().parent


def rules_on_batch(batch):
    """What the ``er.label_checks`` metric does with a batch (strict rules)."""
    labels, records, columns = split_labelling_batch(batch, record_id=ID, prediction=PREDICTION)
    return qc_labels(labels, records, PREDICTION, record_id=ID, name=NAME, columns=columns,
                     rules=(1, 2, 3, 4, 6, 7))


def run(n: int, kind: str, *, draws: int, repeat: int) -> dict:
    df = synthetic.load_release(n, seed=0, id_kind=kind)
    labels = perfect_labels(df, draws, seed=1)
    batch = labelling_batch(labels, df, prediction=PREDICTION, record_id=ID, name=NAME)
    fns = {
        "groupby_size": lambda: df.groupby(PREDICTION).size(),
        "qc_labels_whole_release": lambda: qc_labels(labels, df, PREDICTION, record_id=ID, name=NAME,
                                                     rules=(1, 2, 3, 4, 6, 7)),
        "labelling_batch": lambda: labelling_batch(labels, df, prediction=PREDICTION, record_id=ID, name=NAME),
        "rules_on_batch": lambda: rules_on_batch(batch),
    }
    best, runs = interleaved_best_of(fns, repeat)
    same = rules_on_batch(batch).violations.equals(
        qc_labels(labels, df, PREDICTION, record_id=ID, name=NAME, rules=(1, 2, 3, 4, 6, 7)).violations)
    result = {
        "records": n, "ids": kind, "draws": draws, "repeat": repeat, "best_s": best, "runs_s": runs,
        "batch_rows": len(batch), "same_violations": bool(same),
        "batch_build_to_groupby": best["labelling_batch"] / best["groupby_size"],
        "rules_on_batch_to_whole_release": best["rules_on_batch"] / best["qc_labels_whole_release"],
    }
    print(f"{n:>12,} records, {kind} ids: batch of {len(batch):,} rows built in {best['labelling_batch']:.3f} s "
          f"({result['batch_build_to_groupby']:.2f}x groupby); rules on it {best['rules_on_batch']:.3f} s "
          f"({result['rules_on_batch_to_whole_release']:.3f}x the whole release); same answer: {same}", flush=True)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", nargs="+", type=float, default=[1e6])
    parser.add_argument("--kinds", nargs="+", choices=("int", "str"), default=["int", "str"])
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    runs = [run(int(n), kind, draws=args.draws, repeat=args.repeat) for n in args.sizes for kind in args.kinds]
    out = Path(args.out) if args.out else HERE / "results" / f"labelling-batch-{dt.date.today().isoformat()}.json"
    atomic_write_text(out, json.dumps({"environment": environment(), "runs": runs}, indent=2, default=str) + "\n")
    print(f"written {out}")
    return 0 if all(r["same_violations"] for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
