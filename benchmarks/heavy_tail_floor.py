"""Why no interval covers pairwise precision 90 % of the time on the heavy-tailed population (issue 21).

Not a timed test: a measurement of a floor. The heavy-tailed population of
``coverage_methods.py`` makes most of its false pairs from a few records misplaced into the
largest predicted clusters. Under the size-proportional design a true cluster is drawn
with probability |c|/N per draw, and its share of the false pairs is (pp_c − tp_c)/Σ(pp − tp)
(pp: ordered predicted pairs with a record of c, tp: those inside c). This script:

1. ranks the true clusters by share of the false pairs per draw probability and reports,
   for the top k, their share of the false pairs and the chance that 800 draws contain
   none of them;
2. draws ``--reps`` samples of ``--size`` clusters, computes every interval method of the
   statistics layer for pairwise precision and F, and splits coverage by whether the
   sample holds one of the top-k clusters.

A sample without them shows fewer false pairs than the population, and nothing in it
tells how many it lacks: the population with those clusters error-free gives the same
samples with the same chance. An interval built from the draws covers both populations
on those samples only by being wide enough to hold both true values.

    .venv/bin/python benchmarks/heavy_tail_floor.py --reps 2000 --size 800
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from coverage_methods import Population, cluster_values, draw_counts, heavy_frame, truth_of  # noqa: E402

from er_expectations.stats import INTERVAL_METHODS, estimate_methods  # noqa: E402

METRICS = ("pairwise_precision", "pairwise_f")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--size", type=int, default=800)
    ap.add_argument("--n-boot", type=int, default=1000)
    ap.add_argument("--top", type=int, nargs="+", default=[1, 3, 10, 30])
    ap.add_argument("--seed", type=int, default=20261128)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    df = heavy_frame()
    pop = Population(df["truth"].to_numpy(), df["pred"].to_numpy())
    v = cluster_values(pop)
    truth = truth_of(df)
    false_pairs = (v["pp"] - v["tp"]).to_numpy()
    share = false_pairs / false_pairs.sum()
    p_draw = v["s"].to_numpy() / pop.n_records
    order = np.argsort(-share / p_draw, kind="stable")
    rows = []
    for k in args.top:
        top = order[:k]
        p_none = float((1.0 - p_draw[top].sum()) ** args.size)
        rows.append({"top": k, "share_of_false_pairs": round(float(share[top].sum()), 4),
                     "records": int(v["s"].to_numpy()[top].sum()), "p_none_in_sample": round(p_none, 4)})
        print(f"top {k:3d} clusters: {100 * share[top].sum():5.1f} % of the false pairs, "
              f"{int(v['s'].to_numpy()[top].sum())} records; P(none in {args.size} draws) = {100 * p_none:.1f} %")
    rng = np.random.default_rng(args.seed)
    tally = {k: {m: {meth: [0, 0, 0, 0] for meth in INTERVAL_METHODS} for m in METRICS} for k in args.top}
    t0 = time.time()
    for r in range(args.reps):
        counts = draw_counts(rng, pop, "cluster_size", args.size)
        sample = pop.sample(counts, "cluster_size")
        res = estimate_methods(sample, METRICS, methods=INTERVAL_METHODS, n_boot=args.n_boot,
                               seed=int(rng.integers(0, 2**31)))
        for k in args.top:
            seen = bool(counts[order[:k]].sum() > 0)
            for meth, by in res.items():
                for m, e in by.items():
                    t = tally[k][m][meth]
                    cover = e.ci_lower <= truth[m] <= e.ci_upper
                    t[0 if seen else 2] += 1
                    t[1 if seen else 3] += int(cover)
        if r % 200 == 0:
            print(f"{r} reps, {time.time() - t0:.0f} s", flush=True)
    out = {"size": args.size, "reps": args.reps, "n_boot": args.n_boot, "seed": args.seed, "truth":
           {m: truth[m] for m in METRICS}, "top": rows, "coverage": {}}
    for k in args.top:
        print(f"\nsplit by the top {k} cluster(s): coverage with / without one of them in the sample")
        for m in METRICS:
            for meth in INTERVAL_METHODS:
                n_seen, c_seen, n_not, c_not = tally[k][m][meth]
                total = (c_seen + c_not) / args.reps
                line = {"samples_with": n_seen, "coverage_with": round(c_seen / n_seen, 4) if n_seen else None,
                        "samples_without": n_not, "coverage_without": round(c_not / n_not, 4) if n_not else None,
                        "coverage": round(total, 4)}
                out["coverage"].setdefault(str(k), {}).setdefault(m, {})[meth] = line
                print(f"  {m:20s} {meth:14s} all {100 * total:5.1f} %   with {n_seen:5d}: "
                      f"{100 * c_seen / max(n_seen, 1):5.1f} %   without {n_not:5d}: {100 * c_not / max(n_not, 1):5.1f} %")
    if args.out:
        Path(args.out).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
