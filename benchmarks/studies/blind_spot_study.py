"""How the blind spot and Cochran's rule of SPEC 6.1 read on the two populations of the coverage
study (issue 28).

Not a timed test. For the heavy-tailed population and RLdata10000, under the size-proportional
and the uniform design at ``--sizes`` draws, ``--reps`` samples: the blind spot of pairwise
precision and F (k, the drop, how far the interval reaches below), how often it is a warning,
and the coverage of the recommended interval (BCa) split by warning / note. The blind spot is
what the release's sizes allow, not a detector of errors: the split shows whether the warning
marks the samples whose intervals miss.

    .venv/bin/python benchmarks/studies/blind_spot_study.py --reps 300 --sizes 200 800
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent  # benchmarks/studies/
BENCH = HERE.parent
sys.path[:0] = [str(HERE), str(BENCH)]

from coverage_methods import (  # noqa: E402
    Population,
    cluster_values,
    draw_counts,
    group_truth,
    groupings,
    heavy_frame,
    rldata_frame,
    second_predictions,
    truth_of,
)

from er_expectations.stats import estimate_metrics  # noqa: E402
from er_expectations.stats.blind_spot import (  # noqa: E402
    change_blind_spot,
    group_blind_spots,
    sample_blind_spots,
    skewed_sizes,
)
from er_expectations.stats.drift import paired_changes  # noqa: E402
from er_expectations.stats.subgroups import Membership, estimate_groups  # noqa: E402

STUDY_SEED = 20261127  # coverage_methods.py's default seed: its groupings

METRICS = ("pairwise_precision", "pairwise_f", "pairwise_recall")
#: every metric of the coverage study; Cochran's rule (uniform design) is read for those of SIZE_WEIGHTED
ALL = ("pairwise_precision", "pairwise_recall", "pairwise_f", "cluster_precision", "cluster_recall", "cluster_f",
       "b_cubed_precision", "b_cubed_recall", "b_cubed_f", "homogeneity", "average_cluster_size", "matching_rate")


def cell(name, df, design, size, reps, n_boot, seed):
    pop = Population(df["truth"].to_numpy(), df["pred"].to_numpy())
    m = df.groupby("pred").size().to_numpy()
    hist = np.unique(m, return_counts=True)
    truth = truth_of(df)
    rng = np.random.default_rng(seed)
    out = {m: {"warn": [0, 0], "note": [0, 0], "k": [], "change": [], "below": []} for m in METRICS[:2]}
    covered_all = dict.fromkeys(ALL, 0)
    for _ in range(reps):
        sample = replace(pop.sample(draw_counts(rng, pop, design, size), design), size_histogram=hist)
        res = estimate_metrics(sample, list(ALL), ci_method="recommended", n_boot=n_boot,
                               seed=int(rng.integers(2**31)))
        for metric in ALL:
            covered_all[metric] += int(res[metric].ci_lower <= truth[metric] <= res[metric].ci_upper)
        spots = sample_blind_spots(sample, res)
        for metric, spot in spots.items():
            r = res[metric]
            covered = r.ci_lower <= truth[metric] <= r.ci_upper
            slot = out[metric]["warn" if spot.warning else "note"]
            slot[0] += 1
            slot[1] += int(covered)
            out[metric]["k"].append(spot.records)
            out[metric]["change"].append(spot.change)
            out[metric]["below"].append(spot.below)
    summary = {}
    for metric, o in out.items():
        w, n = o["warn"], o["note"]
        summary[metric] = {
            "samples": reps, "warnings": w[0], "notes": n[0],
            "coverage_warned": w[1] / w[0] if w[0] else None, "coverage_not_warned": n[1] / n[0] if n[0] else None,
            "coverage_all": (w[1] + n[1]) / max(1, w[0] + n[0]),
            "k_median": float(np.median(o["k"])) if o["k"] else None,
            "change_median": float(np.median(o["change"])) if o["change"] else None,
            "below_median": float(np.median(o["below"])) if o["below"] else None,
        }
    rule = {}
    for metric in ALL:  # Cochran's rule: the same for every sample of a cell (release sizes and n)
        skew = skewed_sizes(*hist, design=design, draws=size, metric=metric)
        rule[metric] = {"coverage": covered_all[metric] / reps,
                        "needed": skew.needed if skew else None, "warning": bool(skew and skew.warning)}
    return {"population": name, "design": design, "size": size, "metrics": summary, "cochran": rule}


def group_cell(name, df, size, reps, n_boot, seed):
    """Size-proportional draws; each group of the null and random groupings (and its rest):
    coverage of its pairwise precision and F split by the group blind spot's warning."""
    pop = Population(df["truth"].to_numpy(), df["pred"].to_numpy())
    values = cluster_values(pop)
    hist = np.unique(df.groupby("pred").size().to_numpy(), return_counts=True)
    rng = np.random.default_rng(seed)
    sides = {}
    for gname, (member, known) in groupings(pop, values, STUDY_SEED).items():
        if gname == "correlated":
            continue
        sides[f"{gname}/group"] = (member & known, known)
        sides[f"{gname}/rest"] = (~member & known, known)
    truths = {side: group_truth(values, m) for side, (m, _) in sides.items()}
    tally = {(side, metric): {"warn": [0, 0], "note": [0, 0]} for side in sides for metric in METRICS[:2]}
    for _ in range(reps):
        counts = draw_counts(rng, pop, "cluster_size", size)
        sample = replace(pop.sample(counts, "cluster_size"), size_histogram=hist)
        keep = np.flatnonzero(counts)
        for side, (member, known) in sides.items():
            mb = Membership(groups=("G",), pi=member[keep].astype(float)[:, None], known=known[keep])
            rows = estimate_groups(sample, mb, list(METRICS[:2]), ci_method="recommended", n_boot=n_boot,
                                   seed=int(rng.integers(2**31)), min_draws=2)
            spots = group_blind_spots(sample, mb, rows)
            for row in rows:
                spot = spots.get(("G", row.metric))
                if spot is None or not row.estimate.has_interval:
                    continue
                t = truths[side][row.metric]
                slot = tally[(side, row.metric)]["warn" if spot.warning else "note"]
                slot[0] += 1
                slot[1] += int(row.estimate.ci_lower <= t <= row.estimate.ci_upper)
    out = {}
    for (side, metric), tl in tally.items():
        w, n = tl["warn"], tl["note"]
        out[f"{side}/{metric}"] = {"warned": w[0], "not_warned": n[0],
                                   "coverage_warned": w[1] / w[0] if w[0] else None,
                                   "coverage_not_warned": n[1] / n[0] if n[0] else None,
                                   "coverage_all": (w[1] + n[1]) / max(1, w[0] + n[0])}
    return {"population": name, "design": "cluster_size", "size": size, "groups": out}


def change_cell(name, df, size, reps, n_boot, seed):
    """Size-proportional draws; the change to the study's ``common`` second release (the current
    one): coverage of the change of pairwise precision and F split by its blind spot's warning."""
    pop = Population(df["truth"].to_numpy(), df["pred"].to_numpy())
    pred2 = second_predictions(df, seed=STUDY_SEED + 1)["common"]
    pop2 = Population(df["truth"].to_numpy(), pred2, labels=pop.labels)
    hist2 = np.unique(pd.Series(pred2).value_counts().to_numpy(), return_counts=True)
    truth, truth2 = truth_of(df), truth_of(df, pred2)
    rng = np.random.default_rng(seed)
    tally = {m: {"warn": [0, 0], "note": [0, 0]} for m in METRICS[:2]}
    for _ in range(reps):
        counts = draw_counts(rng, pop, "cluster_size", size)
        current = replace(pop2.sample(counts, "cluster_size"), size_histogram=hist2)
        changes = paired_changes(current, pop.sample(counts, "cluster_size"), list(METRICS[:2]),
                                 methods=("recommended",), n_boot=n_boot, seed=int(rng.integers(2**31)))
        for metric in METRICS[:2]:
            ch = changes[metric]["recommended"].change
            spot = change_blind_spot(current, ch.estimate, ch.ci_lower, metric=metric)
            if spot is None or not ch.has_interval:
                continue
            t = truth2[metric] - truth[metric]
            slot = tally[metric]["warn" if spot.warning else "note"]
            slot[0] += 1
            slot[1] += int(ch.ci_lower <= t <= ch.ci_upper)
    out = {}
    for metric, tl in tally.items():
        w, n = tl["warn"], tl["note"]
        out[metric] = {"warned": w[0], "not_warned": n[0], "coverage_warned": w[1] / w[0] if w[0] else None,
                       "coverage_not_warned": n[1] / n[0] if n[0] else None,
                       "coverage_all": (w[1] + n[1]) / max(1, w[0] + n[0])}
    return {"population": name, "design": "cluster_size", "size": size, "changes": out}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--sizes", type=int, nargs="+", default=[200, 800])
    ap.add_argument("--n-boot", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=20261129)
    ap.add_argument("--out", default=None)
    ap.add_argument("--groups", action="store_true", help="only the group blind spots (size-proportional)")
    ap.add_argument("--changes", action="store_true", help="only the changes' blind spots (size-proportional)")
    args = ap.parse_args()
    rows = []
    split = {"changes": change_cell, "groups": group_cell}
    for kind in [k for k in split if getattr(args, k)][:1]:  # one split study per run
        for name, df in (("heavy", heavy_frame()), ("rldata", rldata_frame())):
            for size in args.sizes:
                row = split[kind](name, df, size, args.reps, args.n_boot, args.seed)
                rows.append(row)
                for key, g in row[kind].items():
                    print(f"{name:6} {size:4} {kind} {key:40} warned {g['warned']:3} cov warned {g['coverage_warned']} "
                          f"not {g['coverage_not_warned']} all {g['coverage_all']:.3f}", flush=True)
        if args.out:
            Path(args.out).write_text(json.dumps({"reps": args.reps, "n_boot": args.n_boot, "seed": args.seed,
                                                  kind: rows}, indent=1) + "\n")
        return 0
    for name, df in (("heavy", heavy_frame()), ("rldata", rldata_frame())):
        for design in ("cluster_size", "uniform"):
            for size in args.sizes:
                t0 = time.perf_counter()
                row = cell(name, df, design, size, args.reps, args.n_boot, args.seed)
                row["seconds"] = round(time.perf_counter() - t0, 1)
                rows.append(row)
                for metric, r in row["cochran"].items():
                    print(f"{name:6} {design:12} {size:4} {metric:20} coverage {r['coverage']:.3f} "
                          f"Cochran needed {r['needed']} warning {r['warning']}", flush=True)
                for metric, s in row["metrics"].items():
                    print(f"{name:6} {design:12} {size:4} {metric:18} warned {s['warnings']:3}/{s['samples']} "
                          f"cov warned {s['coverage_warned']} not {s['coverage_not_warned']} all {s['coverage_all']:.3f} "
                          f"k {s['k_median']} drop {s['change_median']} below {s['below_median']}", flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps({"reps": args.reps, "n_boot": args.n_boot, "seed": args.seed,
                                              "cells": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
