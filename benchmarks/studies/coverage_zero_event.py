"""Coverage of the no-error bound under unequal weights (SPEC 6, 12.1; issue 28 item 2).

The error audit's population of ``coverage_error_audit.py`` (RLdata10000, the paper's
all-but-one prediction, causes ``typo``, ``twins`` and the untagged errors). Each replication
draws ``--draws`` true clusters by the design (``uniform``: entities with equal chance, so the
share of records has g = s, heavier on the pairs that carry the errors; ``cluster_size``:
records uniformly, g = 1 for the share of records and 1/s for the entity shares) and runs the
audit's estimator (:func:`er_expectations.stats.error_audit.tag_shares`, linearised and logit
intervals). A sample without the cause gets the no-error bound of SPEC 6; for those samples
the bound is computed twice: *before* (Kish's k* = (Σ d g)²/Σ d g², the bound up to issue 28)
and *after* (k* = Σ d g / max g, what the package computes now). Every other sample's interval
is the same for both. Reported per (design, draws, tag, share, method): the truth, the number
of error-free samples, the mean bound before and after, and the coverage before and after.

For the share of records under the uniform design the chance that a sample is error-free and
its bound misses is also computed exactly (RLdata's clusters have 1 or 2 records, so an
error-free sample is described by its number of pairs; a binomial sum).

    nice -n 19 .venv/bin/python benchmarks/studies/coverage_zero_event.py               # 4000 replications
    nice -n 19 .venv/bin/python benchmarks/studies/coverage_zero_event.py --reps 300    # quick

Writes ``benchmarks/results/coverage-zero-event-<date>.json``.
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
from coverage_error_audit import population

from er_expectations.stats.error_audit import SHARES, share_values, tag_shares
from er_expectations.stats.estimator import zero_event_draws
from er_expectations.stats.resample import draw_clusters

HERE = Path(__file__).resolve().parent  # benchmarks/studies/
BENCH = HERE.parent  # benchmarks/: synthetic.py and results/
sys.path[:0] = [str(HERE), str(BENCH)]
LEVEL = 0.95


def kish_draws(g: np.ndarray, d: np.ndarray) -> float:
    """The old effective number of draws: (Σ d g)² / Σ d g² over the draws with g > 0."""
    use = (g > 0) & (d > 0)
    dg = d[use] * g[use]
    return float(dg.sum() ** 2 / (dg * g[use]).sum()) if use.any() else 0.0


def rule_of_three(k_eff: float) -> float:
    return -math.expm1(math.log1p(-LEVEL) / k_eff) if k_eff > 0 else math.nan


def exact_records_uniform(size: np.ndarray, member: np.ndarray, k: int) -> dict:
    """P(error-free) and P(error-free and bound < truth), before and after, for the share of
    records under the uniform design (clusters of 1 or 2 records only)."""
    clusters = len(size)
    truth = size[member].sum() / size.sum()
    singles = int(((size == 1) & ~member).sum())
    pairs = int(((size == 2) & ~member).sum())
    a, b = pairs / clusters, singles / clusters
    out = {"truth": float(truth), "error_free": (a + b) ** k, "miss_before": 0.0, "miss_after": 0.0}
    for m in range(k + 1):
        p = math.exp(math.lgamma(k + 1) - math.lgamma(m + 1) - math.lgamma(k - m + 1)
                     + (m * math.log(a) if m else 0.0) + (k - m) * math.log(b))
        g, d = np.array([1.0, 2.0]), np.array([k - m, m], dtype=np.float64)
        out["miss_before"] += p * (rule_of_three(kish_draws(g, d)) < truth)
        out["miss_after"] += p * (rule_of_three(float(zero_event_draws(g, d))) < truth)
    return out


def run(reps: int, draws_list: list[int], designs: list[str], seed: int) -> dict:
    _, members, size = population()
    err = np.zeros(len(size), dtype=bool)
    for m in members.values():
        err |= m
    ones = np.ones(len(size))
    truth = {t: {s: float(np.divide(*(x.sum() for x in share_values(size, ones, err, m, s))))
                 for s in SHARES} for t, m in members.items()}
    out = {"population": {"records": int(size.sum()), "entities": int(len(size)), "erroneous": int(err.sum())},
           "truth": truth, "level": LEVEL, "reps": reps, "cells": [], "exact": []}
    for k in draws_list:
        for t, m in members.items():
            if set(np.unique(size)) <= {1, 2}:
                out["exact"].append({"draws": k, "tag": t, "share": "records", "design": "uniform",
                                     **exact_records_uniform(size, m, k)})
    for design in designs:
        weight = ones if design == "uniform" else 1.0 / size
        for k in draws_list:
            rng = np.random.default_rng([seed, k, designs.index(design)])
            idx = draw_clusters(rng, design=design, sizes=size, draws=k, replicates=reps)
            acc: dict[tuple[str, str, str], list] = {}
            t0 = time.perf_counter()
            for r in range(reps):
                counts = np.bincount(idx[r], minlength=len(size))
                use = np.flatnonzero(counts)
                d = counts[use].astype(np.float64)
                mem = {t: m[use] for t, m in members.items()}
                for method in ("linearization", "logit"):
                    res = tag_shares(size[use], weight[use], d, err[use], mem, ci_method=method, ci_level=LEVEL)
                    for t, row in res.items():
                        for s, e in row.items():
                            before = (e.ci_lower, e.ci_upper)
                            if e.interval == "zero_event":
                                _, g = share_values(size[use], weight[use], err[use], mem[t], s)
                                q = rule_of_three(kish_draws(g, d))
                                at_one = e.ci_upper >= 1.0 and e.estimate > 0.0
                                before = (1.0 - q, 1.0) if at_one else (0.0, q)
                            acc.setdefault((t, s, method), []).append(
                                (e.ci_lower, e.ci_upper, *before, e.interval == "zero_event"))
            for (t, s, method), vals in acc.items():
                a = np.asarray(vals, dtype=np.float64)
                ok = ~np.isnan(a[:, 0])
                th = truth[t][s]
                after = (a[:, 0] <= th) & (th <= a[:, 1])
                before = (a[:, 2] <= th) & (th <= a[:, 3])
                zero = a[:, 4] > 0
                out["cells"].append({
                    "design": design, "draws": k, "tag": t, "share": s, "method": method, "truth": th,
                    "error_free": int(zero.sum()), "no_interval": int((~ok).sum()),
                    "coverage_before": float(before[ok].mean()), "coverage_after": float(after[ok].mean()),
                    "bound_before": float(np.mean(np.where(a[zero, 1] >= 1.0, 1.0 - a[zero, 2], a[zero, 3])))
                    if zero.any() else None,
                    "bound_after": float(np.mean(np.where(a[zero, 1] >= 1.0, 1.0 - a[zero, 0], a[zero, 1])))
                    if zero.any() else None,
                    "zero_covered_before": int(before[zero].sum()), "zero_covered_after": int(after[zero].sum())})
            print(f"{design} {k} draws: {reps} replications in {time.perf_counter() - t0:.1f} s", flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=4000)
    parser.add_argument("--draws", type=int, nargs="+", default=[200, 400, 800])
    parser.add_argument("--designs", nargs="+", default=["uniform", "cluster_size"])
    parser.add_argument("--seed", type=int, default=28)
    args = parser.parse_args()
    result = run(args.reps, args.draws, args.designs, args.seed)
    print(f"population: {result['population']}")
    print("exact, share of records, uniform design: P(error-free), P(error-free and missed) before / after")
    for e in result["exact"]:
        print(f"{e['draws']:>5} {e['tag']:<16} truth {e['truth']:.4f}  {e['error_free']:.4f}  "
              f"{e['miss_before']:.4f} / {e['miss_after']:.4f}")
    print(f"{'design':<12} {'draws':>5} {'tag':<16} {'share':<9} {'method':<13} {'truth':>7} {'free':>5} "
          f"{'bound b/a':>15} {'cover b/a':>13}")
    for c in result["cells"]:
        if not c["error_free"]:
            continue
        print(f"{c['design']:<12} {c['draws']:>5} {c['tag']:<16} {c['share']:<9} {c['method']:<13} "
              f"{c['truth']:7.4f} {c['error_free']:>5} {c['bound_before']:7.4f}/{c['bound_after']:7.4f} "
              f"{c['coverage_before']:6.3f}/{c['coverage_after']:6.3f}")
    out = BENCH / "results" / f"coverage-zero-event-{_dt.date.today().isoformat()}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
