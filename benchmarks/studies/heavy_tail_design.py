"""Does drawing by expected errors lift the heavy-tailed floor? (issue 21, after issue 20)

Not a timed test: a simulation. On the heavy-tailed population of ``coverage_methods.py``
(whose false pairs come mostly from records misplaced into the largest predicted clusters,
see ``heavy_tail_floor.py``), compare the coverage of pairwise precision and F at the same
number of draws under the size-proportional design and under the expected-errors design of
SPEC 12.3, with ``erx.simulate`` (same replicates for every interval method).

The expected-errors design needs match probabilities from an ER system. The synthetic
population has none, so this script scores every pair of records *inside each predicted
cluster* with a crude name model written here, without the truth:

* same full name: p = 0.95;
* same last word of the name (surname), different first part: p = 0.6;
* otherwise (or a missing name): p = 0.05.

A record moved into a large predicted cluster usually carries another entity's name, so
its expected number of records to remove, E|A_r| = Σ (1 − p), is about the size of that
cluster. Name variants and homonyms make the model noisy, as a real one would be.

    .venv/bin/python benchmarks/studies/heavy_tail_design.py --reps 2000 --sizes 400 800 --floor 0.1
    .venv/bin/python benchmarks/studies/heavy_tail_design.py --reps 2000 --sizes 800 --floor 0.5
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent  # benchmarks/studies/
BENCH = HERE.parent  # benchmarks/: synthetic.py and results/
sys.path[:0] = [str(HERE), str(BENCH)]

from synthetic import make_release  # noqa: E402

import er_expectations as erx  # noqa: E402

METRICS = ("pairwise_precision", "pairwise_recall", "pairwise_f", "cluster_precision", "cluster_recall", "cluster_f",
           "b_cubed_precision", "b_cubed_recall", "b_cubed_f", "homogeneity", "average_cluster_size",
           "matching_rate")


def within_cluster_pairs(df: pd.DataFrame) -> pd.DataFrame:
    """Every unordered pair of records of the same predicted cluster, scored by the name model."""
    ids = df["mention_id"].to_numpy()
    names = df["name"].astype("string").fillna("").to_numpy(dtype=object)
    surname = np.array([n.rsplit(" ", 1)[-1] if n else "" for n in names], dtype=object)
    codes, _ = pd.factorize(df["inventor_id"])
    order = np.argsort(codes, kind="stable")
    bounds = np.flatnonzero(np.diff(codes[order])) + 1
    a_parts, b_parts = [], []
    for members in np.split(order, bounds):
        if members.size < 2:
            continue
        i, j = np.triu_indices(members.size, k=1)
        a_parts.append(members[i])
        b_parts.append(members[j])
    a, b = np.concatenate(a_parts), np.concatenate(b_parts)
    same_name = (names[a] == names[b]) & (names[a] != "")
    same_surname = (surname[a] == surname[b]) & (surname[a] != "")
    p = np.where(same_name, 0.95, np.where(same_surname, 0.6, 0.05))
    return pd.DataFrame({"record_a": ids[a], "record_b": ids[b], "p": p})


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--sizes", type=int, nargs="+", default=[800])
    ap.add_argument("--n-boot", type=int, default=1000)
    ap.add_argument("--floor", type=float, default=0.1, help="λ of SPEC 12.3 (default 0.1)")
    ap.add_argument("--seed", type=int, default=20261129)
    ap.add_argument("--out", default=None)
    ap.add_argument("--groups", action="store_true",
                    help="also a random grouping of the entities (each with probability 1/2): group estimates and gaps")
    args = ap.parse_args()
    df = make_release(20_000, seed=7, misplaced=0.03, n_draws=1)  # the heavy population of coverage_methods.py
    t0 = time.time()
    pairs = within_cluster_pairs(df)
    print(f"{len(pairs):,} scored pairs in {time.time() - t0:.1f} s")
    t0 = time.time()
    extra = {}
    if args.groups:  # an entity-level attribute unrelated to the errors
        entities = pd.unique(df["true_id"])
        chosen = np.random.default_rng(args.seed + 1).random(entities.size) < 0.5
        df["grp"] = df["true_id"].map(dict(zip(entities.tolist(), np.where(chosen, "a", "b").tolist(), strict=True)))
        extra = {"group_column": "grp"}
    methods = ["linearization", "bca", "studentized"] + (["hull", "recommended"] if args.groups else [])
    out = erx.simulate(df, prediction="inventor_id", truth="true_id", sizes=args.sizes, designs=["cluster_size", "expected_errors"],
                       reps=args.reps, seed=args.seed, metrics=list(METRICS), record_id="mention_id",
                       ci_methods=methods, n_boot=args.n_boot, match_probabilities=pairs, floor=args.floor, **extra)
    print(f"simulated in {time.time() - t0:.0f} s")
    cols = ["target", "metric", "design", "size", "ci_method", "truth", "bias", "sd", "mean_se", "coverage"]
    table = out[cols].sort_values(["target", "metric", "size", "ci_method", "design"])
    with pd.option_context("display.width", 200, "display.max_rows", 200):
        print(table.to_string(index=False))
    if args.out:
        Path(args.out).write_text(json.dumps({
            "reps": args.reps, "sizes": args.sizes, "n_boot": args.n_boot, "floor": args.floor, "seed": args.seed,
            "pairs": len(pairs), "rows": table.to_dict(orient="records")}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
