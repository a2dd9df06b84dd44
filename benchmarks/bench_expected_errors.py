"""The expected-errors design against the size-proportional design on RLdata10000 (SPEC 12.3; issue 20).

RLdata10000 (../shared/data/rldata) with the paper's all-but-one prediction (two records
linked when they agree on ≥ 4 of fname_c1, lname_c1, by, bm, bd) and its whole truth. The
"ER system's" match probabilities come from two simple models on the candidate pairs that
agree on at least 3 of the 5 fields (each 3-field subset is a blocking key):

* ``share``: p = the share of agreeing fields (3/5, 4/5 or 1);
* ``fellegi_sunter``: p = posterior match probability of a Fellegi–Sunter model with
  m = 0.95 per field, u = the chance that two random records agree on the field
  (Σ_v freq(v)², from the data) and a prior of 1,000 matches among the candidate pairs —
  no use of the truth;
* ``noisy_oracle``: what a well-calibrated system would give, made from the truth for the
  comparison only: p = 0.9 for the true pairs among the candidates, 0.1 for the others,
  plus N(0, 0.05) noise, clipped to [0, 1].

``erx.simulate`` then replays ``--reps`` benchmarks of ``--draws`` draws under the
size-proportional design and under the expected-errors design (floors λ of ``--floors``) and
reports, per metric: the bias (mean − truth), its Monte Carlo error, the standard deviation
of the estimates (the real SE), the mean estimated SE and the coverage of the linearised
95 % interval.

    nice -n 19 .venv/bin/python benchmarks/bench_expected_errors.py              # 4000 reps
    nice -n 19 .venv/bin/python benchmarks/bench_expected_errors.py --reps 500   # quick

Writes ``benchmarks/results/expected-errors-<date>.json``.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import itertools
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

import er_expectations as erx
from er_expectations.analysis.examples import RLDATA_FIELDS, rldata_frame

HERE = Path(__file__).resolve().parent
DATA = HERE.parent.parent / "shared" / "data"
METRICS = ["pairwise_precision", "pairwise_recall", "cluster_recall", "b_cubed_precision", "b_cubed_recall"]


def candidate_pairs(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pairs of rows agreeing on some 3 of the 5 fields, and their number of agreeing fields."""
    text = df[list(RLDATA_FIELDS)].astype("string").fillna("")
    found = []
    for subset in itertools.combinations(RLDATA_FIELDS, 3):
        codes, _ = pd.factorize(pd.MultiIndex.from_frame(text[list(subset)]))
        g = pd.DataFrame({"row": np.arange(len(df)), "key": codes})
        m = g.merge(g, on="key")
        m = m[m["row_x"] < m["row_y"]]
        found.append(m[["row_x", "row_y"]].to_numpy())
    pairs = np.unique(np.vstack(found), axis=0)
    a, b = pairs[:, 0], pairs[:, 1]
    agree = np.zeros(len(a))
    for f in RLDATA_FIELDS:
        v = text[f].to_numpy()
        agree += v[a] == v[b]
    return a, b, agree


def fellegi_sunter(df: pd.DataFrame, a: np.ndarray, b: np.ndarray, *, m: float = 0.95,
                   matches: float = 1000.0) -> np.ndarray:
    text = df[list(RLDATA_FIELDS)].astype("string").fillna("")
    log_ratio = np.zeros(len(a))
    for f in RLDATA_FIELDS:
        v = text[f].to_numpy()
        freq = text[f].value_counts(normalize=True)
        u = float((freq**2).sum())
        same = v[a] == v[b]
        log_ratio += np.where(same, np.log(m / u), np.log((1 - m) / (1 - u)))
    prior = matches / len(a)
    odds = np.exp(log_ratio) * prior / (1 - prior)
    return odds / (1 + odds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=4000)
    parser.add_argument("--draws", type=int, nargs="+", default=[200])
    parser.add_argument("--floors", type=float, nargs="+", default=[0.1, 0.5])
    parser.add_argument("--seed", type=int, default=20)
    args = parser.parse_args()
    df = rldata_frame(DATA / "rldata")
    df["rid"] = np.arange(len(df))
    t0 = time.perf_counter()
    a, b, agree = candidate_pairs(df)
    truth = df["truth"].to_numpy()
    noise = np.random.default_rng(args.seed).normal(0.0, 0.05, size=len(a))
    oracle = np.clip(np.where(truth[a] == truth[b], 0.9, 0.1) + noise, 0.0, 1.0)
    models = {"share": agree / 5.0, "fellegi_sunter": fellegi_sunter(df, a, b), "noisy_oracle": oracle}
    print(f"{len(a):,} candidate pairs in {time.perf_counter() - t0:.1f} s")
    result: dict = {"reps": args.reps, "draws": args.draws, "pairs": int(len(a)), "rows": []}
    base = erx.simulate(df, prediction="pred", truth="truth", sizes=args.draws, designs=("cluster_size",), reps=args.reps,
                        seed=args.seed, record_id="rid", metrics=METRICS)
    frames = [base.assign(model="-", floor=np.nan)]
    for name, p in models.items():
        pairs = pd.DataFrame({"record_a": a, "record_b": b, "p": p})
        true_pair = truth[a] == truth[b]
        print(f"model {name}: mean p on true pairs {p[true_pair].mean():.3f}, on others {p[~true_pair].mean():.3f}")
        for floor in args.floors:
            t = time.perf_counter()
            sim = erx.simulate(df, prediction="pred", truth="truth", sizes=args.draws, designs=("expected_errors",), reps=args.reps,
                               seed=args.seed, record_id="rid", metrics=METRICS, match_probabilities=pairs,
                               floor=floor)
            print(f"  floor {floor}: {time.perf_counter() - t:.1f} s")
            frames.append(sim.assign(model=name, floor=floor))
    table = pd.concat(frames, ignore_index=True)
    table["bias_mc"] = table["sd"] / np.sqrt(table["reps"])
    cols = ["metric", "design", "model", "floor", "size", "truth", "bias", "bias_mc", "sd", "mean_se", "coverage"]
    with pd.option_context("display.width", 200, "display.precision", 4):
        print(table[cols].sort_values(["metric", "size", "design", "model", "floor"]).to_string(index=False))
    result["rows"] = table[cols].to_dict(orient="records")
    out = HERE / "results" / f"expected-errors-{_dt.date.today().isoformat()}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=1, default=float))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
