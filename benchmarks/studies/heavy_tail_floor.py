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
   sample holds one of the top-k clusters;
3. with ``--groups``, the same split for the subgroup estimates of the study's random and
   null groupings (each side split by its own top-k clusters) and for the paired change
   to the study's ``common`` second release (``coverage_methods.py``), with the recommended
   methods (BCa estimates, the logit MOVER change).

A sample without them shows fewer false pairs than the population, and nothing in it
tells how many it lacks: the population with those clusters error-free gives the same
samples with the same chance. An interval built from the draws covers both populations
on those samples only by being wide enough to hold both true values.

    .venv/bin/python benchmarks/studies/heavy_tail_floor.py --reps 2000 --size 800
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent  # benchmarks/studies/
BENCH = HERE.parent  # benchmarks/: synthetic.py and results/
sys.path[:0] = [str(HERE), str(BENCH)]

from coverage_methods import (  # noqa: E402
    Population,
    cluster_values,
    draw_counts,
    group_truth,
    groupings,
    heavy_frame,
    second_predictions,
    truth_of,
)

from er_expectations.stats import (  # noqa: E402
    INTERVAL_METHODS,
    Membership,
    estimate_groups_methods,
    estimate_methods,
)
from er_expectations.stats.drift import paired_changes  # noqa: E402

STUDY_SEED = 20261127  # coverage_methods.py's default seed: the same groupings and second release

METRICS = ("pairwise_precision", "pairwise_f")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--size", type=int, default=800)
    ap.add_argument("--n-boot", type=int, default=1000)
    ap.add_argument("--top", type=int, nargs="+", default=[1, 3, 10, 30])
    ap.add_argument("--seed", type=int, default=20261128)
    ap.add_argument("--out", default=None)
    ap.add_argument("--groups", action="store_true", help="also subgroup estimates and paired changes")
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
    extra: dict = {}
    if args.groups:
        study_groupings = groupings(pop, v, seed=STUDY_SEED + 2)
        chosen = {g: study_groupings[g] for g in ("random", "null")}
        side_truth = {g: {"group": group_truth(v, mb & kn), "comparison": group_truth(v, ~mb & kn)}
                      for g, (mb, kn) in chosen.items()}
        side_of = {g: {"group": mb & kn, "comparison": ~mb & kn} for g, (mb, kn) in chosen.items()}
        # each side's own ranking: its clusters by share of the side's false pairs per draw probability
        side_order = {g: {side: order[where[order]] for side, where in sides.items()} for g, sides in side_of.items()}
        pred2 = second_predictions(df, seed=STUDY_SEED + 1)["common"]
        pop2 = Population(df["truth"].to_numpy(), pred2, labels=pop.labels)
        truth2 = truth_of(df, pred2)
        change_truth = {m: truth2[m] - truth[m] for m in METRICS}
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
        if args.groups:
            keep = counts > 0
            seed = int(rng.integers(0, 2**31))
            group_rows = {g: estimate_groups_methods(
                sample, Membership(groups=("G",), pi=mb[keep].astype(float)[:, None], known=kn[keep]),
                METRICS, methods=("recommended",), compare_to="rest", min_draws=30, adjust="none", n_boot=args.n_boot,
                seed=seed)["recommended"] for g, (mb, kn) in chosen.items()}
            changes = paired_changes(pop2.sample(counts, "cluster_size"), sample, METRICS, methods=("recommended",),
                                     n_boot=args.n_boot, seed=seed)
            for k in args.top:
                top = order[:k]
                for g, rows_g in group_rows.items():
                    for row in rows_g:
                        for side, e in (("group", row.estimate), ("comparison", row.comparison)):
                            seen = bool(counts[side_order[g][side][:k]].sum() > 0)
                            cover = e.ci_lower <= side_truth[g][side][row.metric] <= e.ci_upper
                            t = extra.setdefault((k, f"{side} ({g} grouping)", row.metric), [0, 0, 0, 0])
                            t[0 if seen else 2] += 1
                            t[1 if seen else 3] += int(cover)
                seen = bool(counts[top].sum() > 0)
                for m in METRICS:
                    c = changes[m]["recommended"].change
                    t = extra.setdefault((k, "change (common)", m), [0, 0, 0, 0])
                    t[0 if seen else 2] += 1
                    t[1 if seen else 3] += int(c.ci_lower <= change_truth[m] <= c.ci_upper)
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
    if extra:
        print("\nrecommended method (BCa estimates, logit MOVER change): coverage with / without a top cluster")
    for (k, target, m), (n_seen, c_seen, n_not, c_not) in sorted(extra.items()):
        total = (c_seen + c_not) / max(n_seen + n_not, 1)
        out.setdefault("recommended", {}).setdefault(str(k), {}).setdefault(target, {})[m] = {
            "samples_with": n_seen, "coverage_with": round(c_seen / n_seen, 4) if n_seen else None,
            "samples_without": n_not, "coverage_without": round(c_not / n_not, 4) if n_not else None,
            "coverage": round(total, 4)}
        print(f"  top {k:3d} {target:28s} {m:20s} all {100 * total:5.1f} %   with {n_seen:5d}: "
              f"{100 * c_seen / max(n_seen, 1):5.1f} %   without {n_not:5d}: {100 * c_not / max(n_not, 1):5.1f} %")
    if args.out:
        Path(args.out).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
