"""Per-replicate record of subgroup gap intervals and tail diagnostics (issue 21, research).

Writes, for each replication and grouping and metric, the gap interval of several methods,
the true gap, and each side's effective number of error draws, so that a rule choosing the
method from the draws can be calibrated on one run and evaluated on another.

    .venv/bin/python benchmarks/gap_rule_study.py --population rldata --size 400 --reps 500 --out /tmp/x.npz
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from coverage_methods import (  # noqa: E402
    GROUP_METRICS,
    Population,
    cluster_values,
    draw_counts,
    group_truth,
    groupings,
    heavy_frame,
    rldata_frame,
)

from er_expectations.stats import Membership, estimate_groups_methods  # noqa: E402
from er_expectations.stats.metrics import error_contributions  # noqa: E402


def side_diagnostics(contrib: np.ndarray, draws: np.ndarray, pi: np.ndarray) -> tuple[float, float]:
    """(effective number of error draws, number of error draws) of one domain."""
    c = contrib * pi
    total = c.sum()
    sq = (c * c / draws).sum()
    k = float(draws[c > 0].sum())
    return (float(total * total / sq) if sq > 0 else 0.0), k


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--population", choices=["rldata", "heavy"], required=True)
    ap.add_argument("--size", type=int, default=800)
    ap.add_argument("--reps", type=int, default=500)
    ap.add_argument("--n-boot", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--groupings", nargs="+", default=["null", "random", "correlated"])
    ap.add_argument("--methods", nargs="+", default=["linearization", "logit", "bca_mover", "bca"])
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    df = rldata_frame() if args.population == "rldata" else heavy_frame()
    pop = Population(df["truth"].to_numpy(), df["pred"].to_numpy())
    values = cluster_values(pop)
    grouping = {g: v for g, v in groupings(pop, values, seed=20261127 + 2).items() if g in args.groupings}
    gaps = {}
    for g, (member, known) in grouping.items():
        a, b = group_truth(values, member & known), group_truth(values, ~member & known)
        gaps[g] = np.array([a[m] - b[m] for m in GROUP_METRICS])
    rng = np.random.default_rng([args.seed, args.size, 0 if args.population == "rldata" else 1])
    methods = tuple(args.methods)
    G, M, K = len(grouping), len(GROUP_METRICS), len(methods)
    lo = np.full((args.reps, G, M, K), np.nan)
    hi = np.full((args.reps, G, M, K), np.nan)
    pv = np.full((args.reps, G, M, K), np.nan)
    diag = np.full((args.reps, G, M, 4), np.nan)  # neff group, neff rest, k group, k rest
    t0 = time.time()
    for r in range(args.reps):
        counts = draw_counts(rng, pop, "cluster_size", args.size)
        sample = pop.sample(counts, "cluster_size")
        keep = counts > 0
        d = sample.draws.astype(float)
        contrib = {m: error_contributions(sample, m) for m in GROUP_METRICS}
        seed = int(rng.integers(0, 2**31))
        for gi, (member, known) in enumerate(grouping.values()):
            pi_g = member[keep].astype(float)
            pi_r = (1.0 - pi_g) * known[keep]
            membership = Membership(groups=("G",), pi=pi_g[:, None], known=known[keep])
            res = estimate_groups_methods(sample, membership, GROUP_METRICS, methods=methods, compare_to="rest",
                                          min_draws=30, adjust="none", n_boot=args.n_boot, seed=seed)
            for ki, method in enumerate(methods):
                for row in res[method]:
                    mi = GROUP_METRICS.index(row.metric)
                    if row.status != "ok":
                        continue
                    lo[r, gi, mi, ki] = row.disparity.ci_lower
                    hi[r, gi, mi, ki] = row.disparity.ci_upper
                    pv[r, gi, mi, ki] = row.p_value
            for mi, m in enumerate(GROUP_METRICS):
                ng, kg = side_diagnostics(contrib[m], d, pi_g)
                nr, kr = side_diagnostics(contrib[m], d, pi_r)
                diag[r, gi, mi] = (ng, nr, kg, kr)
        if r % 50 == 0:
            print(f"{r} reps, {time.time() - t0:.0f} s", flush=True)
    np.savez_compressed(args.out, lo=lo, hi=hi, pv=pv, diag=diag, gaps=np.array([gaps[g] for g in grouping]),
                        groupings=np.array(list(grouping)), metrics=np.array(GROUP_METRICS),
                        methods=np.array(methods))
    print(f"done in {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
