"""Per-replicate record of subgroup gap intervals and tail diagnostics (issue 21, research).

Writes, for each replication and grouping and metric, the gap interval of several methods,
the true gap, and each side's effective number of error draws, so that a rule choosing the
method from the draws can be calibrated on one run and evaluated on another.

    .venv/bin/python benchmarks/studies/gap_rule_study.py --population rldata --size 800 --reps 2000 --out /tmp/x.npz
    .venv/bin/python benchmarks/studies/gap_rule_study.py --report /tmp/x.npz --json results/gap-rule-<date>-rldata.json

The report gives each method's coverage (and, under the null grouping, its false-positive
rate), the hull of the paired normal interval with the logit and the BCa MOVER ones, and
the **count floor** of the null test: the size of the exact conditional binomial test of
the same null on the number of error draws in the group and the rest (p = share of the
error draws expected in the group, ½ under the null grouping's balanced split), averaged
over the samples. With few error draws no non-randomised test can reach the nominal level.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent  # benchmarks/studies/
BENCH = HERE.parent  # benchmarks/: synthetic.py and results/
sys.path[:0] = [str(HERE), str(BENCH)]

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


def exact_split_size(k: int, *, p: float = 0.5, level: float = 0.95) -> float:
    """Size of the two-sided exact binomial test of a Bin(k, p) split at 1 − ``level``: the
    probability, under the null, of the splits whose p-value (twice the smaller tail, at
    most 1) is at most 1 − level."""
    if k <= 0:
        return 0.0
    x = np.arange(k + 1)
    pmf = np.array([math.comb(k, int(i)) for i in x], dtype=float) * p ** x * (1 - p) ** (k - x)
    lower, upper = np.cumsum(pmf), np.cumsum(pmf[::-1])[::-1]
    p_value = np.minimum(1.0, 2.0 * np.minimum(lower, upper))
    return float(pmf[p_value <= 1.0 - level + 1e-12].sum())


def report(paths: list[str], out: str | None) -> int:
    summary = {}
    for path in paths:
        z = np.load(path)
        lo, hi, pv, gaps, diag = z["lo"], z["hi"], z["pv"], z["gaps"], z["diag"]
        gs, ms, meth = list(z["groupings"]), list(z["metrics"]), list(z["methods"])
        k_of = {m: i for i, m in enumerate(meth)}
        cols = {m: (lo[..., k_of[m]], hi[..., k_of[m]], pv[..., k_of[m]] < 0.05) for m in meth}
        lin = k_of["linearization"]
        for other in ("logit", "bca_mover"):
            if other in k_of:
                o = k_of[other]
                cols[f"hull_{other}"] = (np.fmin(lo[..., lin], lo[..., o]), np.fmax(hi[..., lin], hi[..., o]),
                                         (pv[..., lin] < 0.05) & (pv[..., o] < 0.05))
        print(path)
        print("grouping metric".ljust(32) + "".join(n[:14].rjust(15) for n in cols))
        cell = summary.setdefault(path, {})
        for gi, g in enumerate(gs):
            for mi, m in enumerate(ms):
                t = gaps[gi, mi]
                row = []
                for name, (lo_, hi_, rej) in cols.items():
                    lo1, hi1 = lo_[:, gi, mi], hi_[:, gi, mi]
                    ok = ~np.isnan(lo1)
                    cov = float(np.mean((lo1[ok] <= t + 1e-12) & (t - 1e-12 <= hi1[ok]))) if ok.any() else math.nan
                    entry = {"coverage": round(cov, 4)}
                    if g == "null":
                        entry["false_positive_rate"] = round(float(np.mean(rej[:, gi, mi][ok])), 4)
                    cell.setdefault(g, {}).setdefault(m, {})[name] = entry
                    row.append(f"{100 * cov:5.1f}" + (f"/{100 * entry['false_positive_rate']:4.1f}"
                                                       if g == "null" else ""))
                print(f"{g} {m}".ljust(32) + "".join(x.rjust(15) for x in row))
        if "null" in gs:
            gi = gs.index("null")
            print("count floor of the null test (exact conditional binomial test, p = 1/2):")
            for mi, m in enumerate(ms):
                k = (diag[:, gi, mi, 2] + diag[:, gi, mi, 3]).astype(int)
                size = float(np.mean([exact_split_size(int(x)) for x in k]))
                cell["null"][m]["count_floor"] = {"median_error_draws": float(np.median(k)),
                                                  "p10": float(np.percentile(k, 10)),
                                                  "p90": float(np.percentile(k, 90)), "size": round(size, 4)}
                print(f"  {m:20s} error draws median {np.median(k):4.0f} (10 %: {np.percentile(k, 10):.0f}, "
                      f"90 %: {np.percentile(k, 90):.0f}); exact test size {100 * size:.2f} %")
    if out:
        Path(out).write_text(json.dumps(summary, indent=1))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--report", nargs="+", metavar="NPZ", help="summarise result files and exit")
    ap.add_argument("--json", default=None, help="with --report: write the summary here")
    ap.add_argument("--population", choices=["rldata", "heavy"])
    ap.add_argument("--size", type=int, default=800)
    ap.add_argument("--reps", type=int, default=500)
    ap.add_argument("--n-boot", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--groupings", nargs="+", default=["null", "random", "correlated"])
    ap.add_argument("--methods", nargs="+", default=["linearization", "logit", "bca_mover", "bca"])
    ap.add_argument("--out")
    args = ap.parse_args()
    if args.report:
        return report(args.report, args.json)
    if not (args.population and args.out):
        ap.error("--population and --out are required to run the study")
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
