"""``erx.simulate`` on RLdata10000: the paper's simulation study, its time, and a side-by-side
ratio against estimating every replicate one by one (issue #8 item 6).

RLdata10000 (../shared/data/rldata) with the paper's all-but-one prediction (two records
linked when they agree on at least four of fname_c1, lname_c1, by, bm, bd; connected
components). ``simulate`` draws ``--reps`` benchmarks of 200, 400 and 800 draws under both
designs and estimates every metric on each.

Reported:

* the time of the whole simulation (all metrics, 3 sizes × 2 designs; best of
  ``--repeat``), against the target of one minute on two cores;
* the ratio to the per-replicate path: a loop that builds each replicate's
  ``BenchmarkSample`` and calls ``estimate_metrics`` (what ``erx.estimate`` runs after
  aggregation), timed on ``--loop-reps`` replicates per cell and scaled to ``--reps``,
  measured in the same process;
* the paper's figures: true pairwise precision and recall; bias, RMSE and coverage of
  both per design and size.

    .venv/bin/python benchmarks/bench_simulate.py               # 1,000 replications
    .venv/bin/python benchmarks/bench_simulate.py --reps 200    # quick

Writes ``benchmarks/results/simulate-<date>.json``.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

import er_expectations as erx
from er_expectations.analysis.examples import rldata_frame
from er_expectations.analysis.planning import Population, design_rng
from er_expectations.stats import estimate_metrics

# benchmarks/studies/coverage_intervals.py: the replicate as erx.estimate aggregates it
sys.path.insert(0, str(Path(__file__).resolve().parent / "studies"))
from coverage_intervals import subsample  # noqa: E402

from er_expectations.stats.resample import draw_clusters

HERE = Path(__file__).resolve().parent
DATA = HERE.parent.parent / "shared" / "data"

SIZES = (200, 400, 800)
DESIGNS = ("cluster_size", "uniform")
PAPER_RMSE = {200: 0.047, 400: 0.035, 800: 0.024}


def loop_seconds(df, *, reps: int, seed: int) -> float:
    """Seconds for ``reps`` replicates per cell, estimated one by one (all metrics)."""
    pop = Population(df, prediction="pred", truth="truth", name=None, record_id=None, beta=1.0)
    t0 = time.perf_counter()
    for design in DESIGNS:
        sample = pop.design_sample(design)
        for size in SIZES:
            idx = draw_clusters(design_rng(seed, design, size), design=design, sizes=sample.size, draws=size,
                                replicates=reps)
            for row in idx:
                counts = np.bincount(row, minlength=sample.labels.size)
                estimate_metrics(subsample(sample, counts), None)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=20261126)
    ap.add_argument("--repeat", type=int, default=3, help="best of this many runs of the simulation")
    ap.add_argument("--loop-reps", type=int, default=30, help="replicates per cell for the per-replicate path")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)

    df = rldata_frame(DATA / "rldata")[["pred", "truth"]]
    best = math.inf
    frame = None
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        frame = erx.simulate(df, prediction="pred", truth="truth", sizes=SIZES, designs=DESIGNS, reps=args.reps, seed=args.seed)
        best = min(best, time.perf_counter() - t0)
    loop = loop_seconds(df, reps=args.loop_reps, seed=args.seed) * args.reps / args.loop_reps
    print(f"RLdata10000, all {frame['metric'].nunique()} metrics, {len(SIZES)} sizes × {len(DESIGNS)} designs, "
          f"{args.reps} replications: simulate {best:.2f} s (best of {args.repeat}; target < 60 s on 2 cores)")
    print(f"per-replicate estimate_metrics loop, scaled from {args.loop_reps} to {args.reps} replications: "
          f"{loop:.1f} s  → simulate is {loop / best:.0f}× faster")

    truth = frame.groupby("metric")["truth"].first()
    print(f"\ntrue pairwise precision {truth['pairwise_precision']:.4f}, recall {truth['pairwise_recall']:.4f} "
          "(paper: 0.914, 0.969)")
    pr = frame[frame["metric"].isin(["pairwise_precision", "pairwise_recall"])]
    head = f"{'metric':<20}{'design':<14}{'size':>5}{'mean':>9}{'bias':>9}{'rmse':>8}{'paper':>7}{'cover':>7}"
    print(head)
    for r in pr.itertuples():
        paper = PAPER_RMSE.get(r.size) if (r.metric == "pairwise_precision" and r.design == "cluster_size") else None
        print(f"{r.metric:<20}{r.design:<14}{r.size:>5}{r.mean:>9.4f}{r.bias:>+9.4f}{r.rmse:>8.4f}"
              f"{'' if paper is None else f'{paper:.3f}':>7}{r.coverage:>7.3f}")
    mc = math.sqrt(0.9 * 0.1 / args.reps)
    print(f"(Monte Carlo standard error: coverage ±{mc:.3f}; bias ±sd/√reps ≤ "
          f"{pr['sd'].max() / math.sqrt(args.reps):.4f})")

    out = {
        "reps": args.reps, "seed": args.seed, "sizes": SIZES, "designs": DESIGNS,
        "seconds_simulate": round(best, 3), "seconds_loop_scaled": round(loop, 1),
        "ratio_loop_to_simulate": round(loop / best, 1), "loop_reps": args.loop_reps,
        "true": {m: round(float(v), 6) for m, v in truth.items()},
        "rows": [{k: (round(v, 6) if isinstance(v, float) else v) for k, v in row.items()}
                 for row in frame.to_dict(orient="records")],
    }
    path = Path(args.out) if args.out else HERE / "results" / f"simulate-{_dt.date.today().isoformat()}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=2, default=lambda o: o.item() if hasattr(o, "item") else str(o)) + "\n")
    print(f"\nwritten {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
