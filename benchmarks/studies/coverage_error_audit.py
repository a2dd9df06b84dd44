"""Coverage of the error audit's intervals by simulation (SPEC 12.1, 6; issue 20).

RLdata10000 (../shared/data/rldata) with the paper's all-but-one prediction and its whole
truth. Every erroneous true cluster is tagged by rule: ``typo`` when its records carry more
than one first name, ``twins`` on a seeded random 30 % of them; the rest are the untagged
errors. The true shares (of records, of entities, among erroneous entities) are counted on
the full truth. Each replication draws ``--draws`` records uniformly with replacement
(size-proportional design, SPEC 1), labels their true clusters, and runs the audit's
estimator (:func:`er_expectations.stats.error_audit.tag_shares`, what ``erx.error_audit``
calls) with the linearised and the logit interval. Reported per (tag, share): the true
value, the mean estimate (bias), the coverage of both intervals and their mean width.

    nice -n 19 .venv/bin/python benchmarks/studies/coverage_error_audit.py            # 1000 replications
    nice -n 19 .venv/bin/python benchmarks/studies/coverage_error_audit.py --reps 200 # quick

Writes ``benchmarks/results/coverage-error-audit-<date>.json``.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from er_expectations.analysis.error_audit import UNTAGGED
from er_expectations.analysis.examples import rldata_frame
from er_expectations.stats.error_audit import SHARES, share_values, tag_shares
from er_expectations.stats.resample import draw_clusters

HERE = Path(__file__).resolve().parent  # benchmarks/studies/
BENCH = HERE.parent  # benchmarks/: synthetic.py and results/
sys.path[:0] = [str(HERE), str(BENCH)]
DATA = BENCH.parent.parent / "shared" / "data"


def population(seed: int = 7) -> tuple[pd.DataFrame, dict[str, np.ndarray], np.ndarray]:
    """Per true cluster: size and error flag; the tag memberships (erroneous clusters only)."""
    df = rldata_frame(DATA / "rldata")
    truth, pred = df["truth"].to_numpy(), df["pred"].to_numpy()
    t_codes, t_uni = pd.factorize(truth)
    p_codes, _ = pd.factorize(pred)
    size = np.bincount(t_codes)
    p_size = np.bincount(p_codes)
    pieces = pd.DataFrame({"t": t_codes, "p": p_codes}).drop_duplicates()
    n_pieces = np.bincount(pieces["t"].to_numpy(), minlength=len(t_uni))
    first_p = np.zeros(len(t_uni), dtype=np.int64)
    first_p[t_codes] = p_codes
    err = ~((n_pieces == 1) & (p_size[first_p] == size))
    names = pd.DataFrame({"t": t_codes, "f": df["fname_c1"].to_numpy()}).groupby("t")["f"].nunique().to_numpy()
    rng = np.random.default_rng(seed)
    members = {"typo": err & (names > 1), "twins": err & (rng.random(len(t_uni)) < 0.3)}
    tagged = members["typo"] | members["twins"]
    members[UNTAGGED] = err & ~tagged
    return pd.DataFrame({"size": size, "err": err}), members, size


def run(reps: int, draws_list: list[int], seed: int, methods: tuple[str, ...] = ("linearization", "logit"),
        n_boot: int = 500) -> dict:
    pop, members, size = population()
    err = pop["err"].to_numpy()
    ones = np.ones(len(size))
    truth = {t: {s: float(np.divide(*(x.sum() for x in share_values(size, ones, err, m, s))))
                 for s in SHARES} for t, m in members.items()}
    out = {"population": {"records": int(size.sum()), "entities": int(len(size)), "erroneous": int(err.sum())},
           "truth": truth, "cells": []}
    for k in draws_list:
        rng = np.random.default_rng([seed, k])
        idx = draw_clusters(rng, design="cluster_size", sizes=size, draws=k, replicates=reps)
        acc: dict[tuple[str, str, str], list] = {}
        t0 = time.perf_counter()
        for r in range(reps):
            counts = np.bincount(idx[r], minlength=len(size))
            use = np.flatnonzero(counts)
            mem = {t: m[use] for t, m in members.items()}
            for method in methods:
                res = tag_shares(size[use], 1.0 / size[use], counts[use], err[use], mem, ci_method=method,
                                 n_boot=n_boot, seed=seed + r)
                for t, row in res.items():
                    for s, e in row.items():
                        acc.setdefault((t, s, method), []).append((e.estimate, e.ci_lower, e.ci_upper))
        for (t, s, method), vals in acc.items():
            a = np.asarray(vals, dtype=np.float64)
            ok = ~np.isnan(a[:, 1])
            covered = (a[ok, 1] <= truth[t][s]) & (truth[t][s] <= a[ok, 2])
            out["cells"].append({"draws": k, "tag": t, "share": s, "method": method, "truth": truth[t][s],
                                 "mean": float(np.nanmean(a[:, 0])), "bias": float(np.nanmean(a[:, 0]) - truth[t][s]),
                                 "coverage": float(covered.mean()) if ok.any() else None,
                                 "width": float((a[ok, 2] - a[ok, 1]).mean()) if ok.any() else None,
                                 "no_interval": int((~ok).sum()), "reps": reps})
        print(f"{k} draws: {reps} replications in {time.perf_counter() - t0:.1f} s", flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--draws", type=int, nargs="+", default=[200, 800])
    parser.add_argument("--seed", type=int, default=20)
    parser.add_argument("--methods", nargs="+", default=["linearization", "logit"],
                        help="interval methods (SPEC 6); the first two are printed side by side")
    parser.add_argument("--n-boot", type=int, default=500, help="bootstrap resamples for bca/bootstrap")
    args = parser.parse_args()
    result = run(args.reps, args.draws, args.seed, tuple(args.methods), args.n_boot)
    print(f"population: {result['population']}")
    first, second = (args.methods + args.methods)[:2]
    print(f"{'draws':>5} {'tag':<16} {'share':<9} {'truth':>7} {'bias':>8} {first[:9]:>9} {second[:9]:>9} "
          f"{'width':>9}")
    cells = {(c["draws"], c["tag"], c["share"], c["method"]): c for c in result["cells"]}
    for (k, t, s, m), c in cells.items():
        if m != first:
            continue
        other = cells[(k, t, s, second)]
        print(f"{k:>5} {t:<16} {s:<9} {c['truth']:7.4f} {c['bias']:+8.4f} {c['coverage']:9.3f} "
              f"{other['coverage']:9.3f} {c['width']:9.4f}")
    tag = "" if tuple(args.methods) == ("linearization", "logit") else "-" + "-".join(args.methods)
    out = BENCH / "results" / f"coverage-error-audit{tag}-{_dt.date.today().isoformat()}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
