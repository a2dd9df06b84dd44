"""False discoveries of the slice search (SPEC 12.2, issue 20): how often it reports a slice
when the errors depend on no feature.

A fixed synthetic population of a million true clusters (sizes 2–60, a country, a year
unknown for 10 %, a block key) is simulated once. Each replication draws a size-proportional
sample of ``--draws`` draws with replacement, gives every drawn entity an error with
probability ``--error-rate`` independently of everything (an erroneous entity has one record
split off into its own predicted cluster) and names to its records (a few spellings, at
random), and runs:

* ``honest``: ``erx.find_slices`` as a user calls it (search on a random half of the draws,
  tests on the other half, Holm), with features country, year, the derived cluster_size,
  name_length, name_spellings and block_size;
* ``naive``: the same tree on the same sample and features, searched *and* tested on all
  the draws without adjustment (``search_slices(..., inference="naive")``): the mistake the
  split exists to avoid.

A run "reports a slice" when at least one slice is significant. Under this null the honest
share must be at most α = 0.05: the script prints each share with its exact (Clopper–Pearson)
95 % interval and writes them to ``results/slices-fdr-<date>.json``. ``--power`` adds
replications with a planted slice (errors 3× as frequent in clusters of size ≥ 10) to show
that the honest search still finds it.

    nice -n 19 .venv/bin/python benchmarks/bench_slices_fdr.py [--reps 1000] [--power 100]
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import time
from pathlib import Path

import numpy as np
import pandas as pd

import er_expectations as erx
from er_expectations.analysis.slices import cluster_features, slice_inputs
from er_expectations.engines.pandas.release import PandasRelease
from er_expectations.stats.slices import search_slices

ROOT = Path(__file__).resolve().parent
FEATURES = ["country", "year"]
OPTIONS = dict(max_depth=2, min_share=0.05, min_draws=30, alpha=0.05)


def population(n_clusters: int, seed: int) -> dict[str, np.ndarray]:
    """The fixed population of true clusters: one value per cluster (records are made only for
    the clusters a replication draws)."""
    rng = np.random.default_rng(seed)
    sizes = np.minimum(2 + rng.geometric(0.18, n_clusters), 60)
    country = rng.choice(np.array(["US", "JP", "DE", "FR", "KR", "CN"]), n_clusters, p=[.4, .2, .15, .1, .1, .05])
    year = rng.integers(1976, 2021, n_clusters).astype(np.float64)
    year[rng.random(n_clusters) < 0.1] = np.nan  # unknown for 10 % of the entities
    block = rng.integers(0, n_clusters // 20, n_clusters)
    return {"sizes": sizes, "cum": np.cumsum(sizes), "country": country, "year": year, "block": block}


def replicate(pop: dict[str, np.ndarray], rng: np.random.Generator, *, draws: int, error_rate: float,
              planted: float = 1.0, seed: int) -> tuple[bool, bool, int]:
    """One replication: (honest reports a slice, naive reports a slice, slices tested by honest).

    Only the drawn clusters get records: errors are splits inside a true cluster, so the other
    clusters change no EI, and a population of a million clusters makes the slices' rates in
    the population those of the model (a small finite population has, by chance, slices whose
    error rate really differs, which an honest test may rightly find)."""
    sizes, cum = pop["sizes"], pop["cum"]
    picked = np.searchsorted(cum, rng.integers(0, int(cum[-1]), draws), side="right")  # size-proportional
    labels, counts = np.unique(picked, return_counts=True)
    s = sizes[labels]
    p = np.where(s >= 10, planted * error_rate, error_rate)
    err = rng.random(labels.size) < p
    true = np.repeat(labels, s)
    first = np.r_[0, np.cumsum(s)[:-1]]
    pred = true.copy()
    pred[first[err]] = -1 - np.arange(int(err.sum()))  # one record split off: its own predicted cluster
    spelling = rng.integers(0, 3, true.size) * (rng.random(true.size) < 0.3)
    name = np.char.add(np.char.add("name", true.astype(str)), np.array(["", "x", "xx"])[spelling])
    df = pd.DataFrame({"pred": pred, "bench": true, "d": np.repeat(counts, s), "country": pop["country"][true],
                       "year": pop["year"][true], "name": name, "block": pop["block"][true]})
    args = dict(draws="d", features=FEATURES, name="name", block="block")
    honest = erx.find_slices(df, prediction="pred", reference="bench", seed=seed, **args, **OPTIONS)
    rel = PandasRelease(df, prediction="pred")
    sample = rel.benchmark_sample(reference="bench", draws="d")
    feats, _ = cluster_features(df, sample, prediction="pred", reference="bench", features=FEATURES,
                                name="name", block="block")
    y, g = slice_inputs(sample, "EI", "entity")
    naive = search_slices(y, g, sample.draws, sample.labels, feats, seed=seed, inference="naive", **OPTIONS)
    return bool(honest["significant"].any()), bool(naive.significant), int(honest["p_value"].notna().sum())


def clopper_pearson(x: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Exact binomial interval by bisection on the binomial distribution function."""
    a = (1 - level) / 2

    def cdf(k: int, p: float) -> float:  # in logs: n choose i overflows a float from n ≈ 1030
        if p <= 0.0 or p >= 1.0:
            return 1.0 if p <= 0.0 or k >= n else 0.0
        lp, lq = math.log(p), math.log1p(-p)
        return sum(math.exp(math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * lp + (n - i) * lq)
                   for i in range(k + 1))

    def solve(f, lo: float = 0.0, hi: float = 1.0) -> float:
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if f(mid) > 0 else (lo, mid)
        return (lo + hi) / 2

    lower = 0.0 if x == 0 else solve(lambda p: a - (1 - cdf(x - 1, p)))
    upper = 1.0 if x == n else solve(lambda p: cdf(x, p) - a)
    return lower, upper


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--power", type=int, default=100, help="replications with a planted slice (0: none)")
    ap.add_argument("--clusters", type=int, default=1_000_000)
    ap.add_argument("--draws", type=int, default=600)
    ap.add_argument("--error-rate", type=float, default=0.15)
    ap.add_argument("--seed", type=int, default=20)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    pop = population(args.clusters, args.seed)
    rng = np.random.default_rng(args.seed + 1)
    out: dict[str, object] = {"reps": args.reps, "clusters": args.clusters, "records": int(pop["cum"][-1]),
                              "draws": args.draws, "error_rate": args.error_rate, "options": OPTIONS,
                              "features": FEATURES + ["cluster_size", "name_length", "name_spellings", "block_size"]}
    t0 = time.perf_counter()
    found = np.zeros((args.reps, 2), dtype=bool)
    tested = []
    for r in range(args.reps):
        h, n, t = replicate(pop, rng, draws=args.draws, error_rate=args.error_rate, seed=r)
        found[r] = h, n
        tested.append(t)
    elapsed = time.perf_counter() - t0
    for j, what in enumerate(("honest", "naive")):
        x = int(found[:, j].sum())
        lo, hi = clopper_pearson(x, args.reps)
        out[what] = {"runs_with_a_slice": x, "share": x / args.reps, "ci95": [lo, hi]}
        print(f"{what:7s} share of runs reporting a slice: {x}/{args.reps} = {x / args.reps:.3f} "
              f"(95 % CI {lo:.3f}–{hi:.3f})")
    out["mean_slices_tested_honest"] = float(np.mean(tested))
    out["seconds"] = elapsed
    print(f"mean slices tested per honest run {np.mean(tested):.2f}; {elapsed:.0f} s for {args.reps} replications")
    if args.power:
        hits = sum(replicate(pop, rng, draws=args.draws, error_rate=0.08, planted=3.0, seed=10_000 + r)[0]
                   for r in range(args.power))
        lo, hi = clopper_pearson(hits, args.power)
        out["power"] = {"planted": "EI 0.24 in clusters of size >= 10, 0.08 elsewhere", "reps": args.power,
                        "runs_with_a_slice": hits, "share": hits / args.power, "ci95": [lo, hi]}
        print(f"power (planted lift 3 at size >= 10): {hits}/{args.power} = {hits / args.power:.2f} "
              f"(95 % CI {lo:.2f}–{hi:.2f})")
    path = args.out or ROOT / "results" / f"slices-fdr-{_dt.date.today().isoformat()}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(out, indent=2))
    tmp.replace(path)
    print(f"written {path}")


if __name__ == "__main__":
    main()
