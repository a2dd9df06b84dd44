"""Labelling QC on a large release: ``qc_labels`` of 1,000 draws vs one ``groupby().size()`` (issue 8).

Target: checking the labels of 1,000 draws against a 10M-record release costs at most 3×
one ``df.groupby(prediction).size()`` of that release, measured side by side in
interleaved rounds (best of ``--repeat``) on the same DataFrame. Also reported (no
target): ``benchmark_from_labels`` and ``draw_sample`` of 1,000 draws, same unit.

The labels are what a perfect labeller writes for 1,000 records drawn uniformly from the
release (A = ĉ(r) \\ c(r), B = c(r) \\ ĉ(r) from the synthetic truth), with a few injected
errors (unknown ids, a drawn record removed) so that the rules have something to report.

    .venv/bin/python benchmarks/bench_labels.py                 # 1e7 records, int and str ids
    .venv/bin/python benchmarks/bench_labels.py --sizes 1e6 --kinds int --repeat 2

Results go to ``benchmarks/results/labels-<date>.json``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

# synthetic and bench_core: modules of benchmarks/ (the folder of the script is on sys.path)
import synthetic
from bench_core import environment, interleaved_best_of

from er_expectations.analysis.benchmark import benchmark_from_labels
from er_expectations.analysis.labelqc import qc_labels
from er_expectations.analysis.sampling import draw_sample
from er_expectations.core.io import atomic_write_text

HERE = Path(__file__).resolve().parent

TARGET = 3.0
PREDICTION, ID, TRUTH, NAME = synthetic.PREDICTION, "mention_id", synthetic.TRUTH, synthetic.NAME


def perfect_labels(df: pd.DataFrame, n_draws: int, *, seed: int, errors: int = 10) -> pd.DataFrame:
    """Labels of ``n_draws`` uniformly drawn records, built from the truth (setup, not timed)."""
    rng = np.random.default_rng(seed)
    population = np.flatnonzero(df[PREDICTION].notna().to_numpy())
    picks = population[rng.integers(0, population.size, size=n_draws)]
    drawn = df.iloc[picks]
    rel = df[df[PREDICTION].notna()]
    pred_members = rel.loc[rel[PREDICTION].isin(pd.unique(drawn[PREDICTION])), [ID, PREDICTION]]
    true_members = rel.loc[rel[TRUTH].isin(pd.unique(drawn[TRUTH])), [ID, TRUTH]]
    chat = pred_members.groupby(PREDICTION)[ID].agg(set).to_dict()
    truth = true_members.groupby(TRUTH)[ID].agg(set).to_dict()
    rows = []
    for d, (r, p, t) in enumerate(zip(drawn[ID].tolist(), drawn[PREDICTION].tolist(), drawn[TRUTH].tolist(),
                                      strict=True), start=1):
        rows.append({"draw": d, "record_id": r, "removed": sorted(chat[p] - truth[t]),
                     "added": sorted(truth[t] - chat[p])})
    labels = pd.DataFrame(rows)
    unknown = "no-such-id" if labels["record_id"].dtype == object or not np.issubdtype(labels["record_id"].dtype,
                                                                                        np.integer) else -1
    for i in range(min(errors, n_draws)):
        if i % 2:
            labels.at[i, "removed"] = [*labels.at[i, "removed"], labels.at[i, "record_id"]]
        else:
            labels.at[i, "added"] = [*labels.at[i, "added"], unknown]
    return labels


def run(n: int, kind: str, *, draws: int, repeat: int) -> dict:
    df = synthetic.load_release(n, seed=0, id_kind=kind)
    labels = perfect_labels(df, draws, seed=1)
    clean = perfect_labels(df, draws, seed=1, errors=0)
    fns = {
        "groupby_size": lambda: df.groupby(PREDICTION).size(),
        "qc_labels": lambda: qc_labels(labels, df, PREDICTION, record_id=ID, name=NAME),
        "benchmark_from_labels": lambda: benchmark_from_labels(clean, df, prediction=PREDICTION, record_id=ID),
        "draw_sample": lambda: draw_sample(df, prediction=PREDICTION, n=draws, seed=2, record_id=ID, columns=[NAME]),
    }
    best, runs = interleaved_best_of(fns, repeat)
    q = qc_labels(labels, df, PREDICTION, record_id=ID, name=NAME)
    bench = benchmark_from_labels(clean, df, prediction=PREDICTION, record_id=ID)
    ratios = {k: best[k] / best["groupby_size"] for k in fns if k != "groupby_size"}
    result = {
        "records": n, "ids": kind, "draws": draws, "repeat": repeat, "best_s": best, "runs_s": runs,
        "ratio_to_groupby": ratios, "target_qc_ratio": TARGET, "qc_within_target": ratios["qc_labels"] <= TARGET,
        "violations": q.summary()[["rule", "checked", "failed"]].to_dict(orient="records"),
        "benchmark_records": len(bench), "benchmark_clusters": bench.attrs["clusters"],
        "labelled_member_records": int(sum(len(a) for a in clean["added"])),
    }
    print(f"{n:>12,} records, {kind} ids: groupby {best['groupby_size']:.3f} s; "
          + "; ".join(f"{k} {best[k]:.3f} s ({ratios[k]:.2f}x)" for k in ratios), flush=True)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", nargs="+", type=float, default=[1e7])
    parser.add_argument("--kinds", nargs="+", choices=("int", "str"), default=["int", "str"])
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    runs = [run(int(n), kind, draws=args.draws, repeat=args.repeat) for n in args.sizes for kind in args.kinds]
    out = Path(args.out) if args.out else HERE / "results" / f"labels-{dt.date.today().isoformat()}.json"
    payload = {"environment": environment(), "runs": runs}
    atomic_write_text(out, json.dumps(payload, indent=2, default=str) + "\n")
    print(f"written {out}")
    return 0 if all(r["qc_within_target"] for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
