"""Pairwise precision with the release's known denominator: a study (not a timed test).

Pairwise precision is TP / PP: the true pairs the prediction keeps over the pairs it makes.
SPEC 5 estimates both from the sample (a ratio of two means over the draws). But PP is not
unknown: it is Σ m(m − 1) over the release's predicted clusters (m their sizes), one
aggregate of the release. When records are drawn uniformly (the ``cluster_size`` design), the
drawn true cluster c has probability |c|/N per draw and

    g(c) = (1/|c|) Σ_{r ∈ c} (|ĉ(r)| − 1),   E[g] = Σ m(m − 1) / N = G  (known)
    f(c) = (1/|c|) Σ_{r ∈ c} (|ĉ(r) ∩ c| − 1),  E[f] = 2 TP / N

so f̄ / G estimates the precision with the denominator taken from the release. Where the false
pairs sit in a few large predicted clusters that the draws rarely reach (the heavy tail of
benchmarks/README.md, "the heavy-tailed floor"), the ratio estimator's denominator misses them
in most samples and its interval under-covers; f̄ / G reads them from the release. The
variance left is f's, whose values are bounded by the true clusters' sizes.

Also measured: the z-score of the sample's ḡ against the known G, as a warning sign that a
sample under-represents the release's predicted pairs (coverage of the ratio interval by z).

Populations: ``customers`` (built here: 15,000 entities, names with a Zipf law, 8 % of the
entities split in two, 5 % merged into the first entity of their surname: false pairs in a
few large predicted clusters), ``heavy`` (``coverage_methods.heavy_frame``) and ``rldata``
(RLdata10000 with the four-of-five rule of the shared data's README).

    .venv/bin/python benchmarks/studies/precision_known_denominator.py --reps 300 --size 300 800
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from coverage_methods import heavy_frame, rldata_frame  # noqa: E402

import er_expectations as erx  # noqa: E402

Z95 = 1.959963984540054


def customers_frame(seed: int = 7) -> pd.DataFrame:
    """Entities with geometric sizes and a tail; splits and same-surname merges (see the docstring)."""
    rng = np.random.default_rng(seed)
    n_ent = 15_000
    sizes = np.minimum(rng.geometric(0.45, n_ent) + (rng.random(n_ent) < 0.05) * rng.integers(5, 40, n_ent), 60)
    weights = 1 / np.arange(1, 2501) ** 0.9
    surname = rng.choice(2500, n_ent, p=weights / weights.sum())
    ent = np.repeat(np.arange(n_ent), sizes)
    pred = ent.copy()
    split = rng.random(n_ent) < 0.08
    pred = np.where(split[ent] & (rng.random(ent.size) < 0.5), pred + n_ent, pred)
    target = np.arange(n_ent)
    for idx in pd.Series(np.arange(n_ent)).groupby(surname).groups.values():
        idx = np.asarray(idx)
        if idx.size > 1:
            target[idx[rng.random(idx.size) < 0.05]] = idx[0]
    pred = np.where(pred < n_ent, target[np.minimum(pred, n_ent - 1)], pred)
    return pd.DataFrame({"truth": ent, "pred": pred})


def per_cluster(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float]:
    """Each record's true cluster (codes), f and g of every true cluster, G and the true precision."""
    truth = pd.factorize(df["truth"])[0]
    pred = pd.factorize(df["pred"])[0]
    m = np.bincount(pred)[pred]
    both = pd.factorize(pd.MultiIndex.from_arrays([truth, pred]))[0]
    n_both = np.bincount(both)[both]
    s = np.bincount(truth)
    f = np.bincount(truth, weights=n_both - 1.0) / s
    g = np.bincount(truth, weights=m - 1.0) / s
    tp = float((n_both - 1.0).sum())
    pp = float((m - 1.0).sum())
    return truth, f, g, pp / truth.size, tp / pp


def run(name: str, df: pd.DataFrame, size: int, reps: int, seed: int) -> dict:
    truth, f_c, g_c, big_g, precision = per_cluster(df)
    rows = []
    for rep in range(reps):
        rng = np.random.default_rng([seed, rep])
        drawn = truth[rng.integers(0, truth.size, size)]
        f, g = f_c[drawn], g_c[drawn]
        known = f.mean() / big_g
        known_se = f.std(ddof=1) / np.sqrt(size) / big_g
        z = (g.mean() - big_g) / (g.std(ddof=1) / np.sqrt(size))
        counts = np.bincount(drawn, minlength=f_c.size)
        bench = pd.DataFrame({"pred": df["pred"].to_numpy(), "ref": np.where(counts[truth] > 0, truth, -1),
                              "draws": counts[truth]})
        bench["ref"] = bench["ref"].where(bench["ref"] >= 0)
        row = {"known": (known, known - Z95 * known_se, known + Z95 * known_se), "z": z}
        for method in ("linearization", "recommended"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est = erx.estimate(bench, prediction="pred", reference="ref", draws="draws", weights="cluster_size",
                                   metrics=["pairwise_precision"], ci_method=method, seed=rep, known=None)
            r = est.loc["pairwise_precision"]
            row[method] = (float(r["estimate"]), float(r["ci_lower"]), float(r["ci_upper"]))
        rows.append(row)
    out = {"population": name, "size": size, "reps": reps, "truth": precision, "G": big_g}
    for key in ("known", "linearization", "recommended"):
        e = np.array([r[key] for r in rows])
        cover = (e[:, 1] <= precision) & (precision <= e[:, 2])
        out[key] = {"coverage": float(cover.mean()), "mc_se": float(np.sqrt(cover.mean() * (1 - cover.mean()) / reps)),
                    "bias": float(e[:, 0].mean() - precision), "sd": float(e[:, 0].std()),
                    "mean_width": float((e[:, 2] - e[:, 1]).mean())}
    z = np.array([r["z"] for r in rows])
    lin = np.array([r["linearization"] for r in rows])
    lin_cover = (lin[:, 1] <= precision) & (precision <= lin[:, 2])
    out["ratio_coverage_by_z"] = {
        label: {"n": int(mask.sum()), "coverage": float(lin_cover[mask].mean()) if mask.any() else None}
        for label, mask in (("z < -2", z < -2), ("-2 <= z < -1", (z >= -2) & (z < -1)),
                            ("|z| < 1", np.abs(z) < 1), ("z >= 1", z >= 1))}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--size", type=int, nargs="+", default=[300, 800])
    ap.add_argument("--populations", nargs="+", default=["customers", "heavy", "rldata"])
    ap.add_argument("--seed", type=int, default=20261129)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    frames = {"customers": customers_frame, "heavy": heavy_frame, "rldata": rldata_frame}
    results = []
    for name in args.populations:
        df = frames[name]()
        for size in args.size:
            started = time.perf_counter()
            res = run(name, df, size, args.reps, args.seed)
            res["seconds"] = round(time.perf_counter() - started, 1)
            results.append(res)
            cells = "  ".join(f"{k} {res[k]['coverage']:.3f} (bias {res[k]['bias']:+.4f}, sd {res[k]['sd']:.4f}, "
                              f"width {res[k]['mean_width']:.3f})" for k in ("known", "linearization", "recommended"))
            print(f"{name} k={size} truth {res['truth']:.4f}: {cells}", flush=True)
            print(f"    ratio (linearised) coverage by z of g-bar vs G: {res['ratio_coverage_by_z']}", flush=True)
    if args.out:
        args.out.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
