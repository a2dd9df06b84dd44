"""Kish's design effect of the expected-errors weights, by floor, on the coverage populations (issue 28).

The design effect of drawing records with q_r (SPEC 12.3) against drawing them uniformly, for
a weighted mean over the records: each draw of true cluster c weighs v_c = |c| / (N π_c),
π_c = Σ_{r∈c} q_r, so over one draw E[v] = 1 and deff = E[v²] = Σ_c (|c|/N)² / π_c (Kish
1965: 1 + CV² of the weights). ``er-expectations benchmark`` prints the same quantity for a
sample (its draws' v_c) and warns above ``DEFF_WARNING``; this script gives its value on the
populations whose coverage benchmarks/README.md reports, so the threshold can be read
against coverage. No sampling: seconds.

    nice -n 19 .venv/bin/python benchmarks/studies/design_effect_floor.py

Writes ``benchmarks/results/design-effect-floor-<date>.json``.
"""

from __future__ import annotations

import datetime as _dt
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent  # benchmarks/studies/
BENCH = HERE.parent  # benchmarks/: synthetic.py and results/
sys.path[:0] = [str(HERE), str(BENCH)]

import bench_expected_errors as rl  # noqa: E402
import heavy_tail_design as ht  # noqa: E402
from synthetic import make_release  # noqa: E402

from er_expectations.analysis.examples import rldata_frame  # noqa: E402
from er_expectations.analysis.expected_errors import expected_error_probabilities  # noqa: E402

FLOORS = (0.05, 0.1, 0.2, 0.3, 0.5, 1.0)


def population_deff(df: pd.DataFrame, prediction: str, truth: str, record_id: str, pairs: pd.DataFrame,
                    floor: float) -> float:
    """Σ_c (|c|/N)² / π_c over the true clusters of the release (SPEC 12.3's q_r summed per cluster)."""
    q = expected_error_probabilities(df, prediction=prediction, record_id=record_id, match_probabilities=pairs, floor=floor)
    release = df[df[prediction].notna()]
    qr = pd.Series(q["inclusion"].to_numpy(), index=q[record_id].to_numpy()).reindex(release[record_id].to_numpy())
    by_cluster = pd.DataFrame({"c": release[truth].to_numpy(), "q": qr.to_numpy()}).groupby("c")["q"]
    share = by_cluster.size() / len(release)
    return float((share ** 2 / by_cluster.sum()).sum())


def main() -> int:
    rows = []
    df = rldata_frame(rl.DATA / "rldata")
    df["rid"] = np.arange(len(df))
    a, b, agree = rl.candidate_pairs(df)
    truth = df["truth"].to_numpy()
    noise = np.random.default_rng(20).normal(0.0, 0.05, size=len(a))  # bench_expected_errors.py's seed
    oracle = np.clip(np.where(truth[a] == truth[b], 0.9, 0.1) + noise, 0.0, 1.0)
    for model, p in {"share": agree / 5.0, "fellegi_sunter": rl.fellegi_sunter(df, a, b),
                     "noisy_oracle": oracle}.items():
        pairs = pd.DataFrame({"record_a": a, "record_b": b, "p": p})
        for floor in FLOORS:
            rows.append({"population": "rldata", "model": model, "floor": floor,
                         "deff": population_deff(df, "pred", "truth", "rid", pairs, floor)})
    heavy = make_release(20_000, seed=7, misplaced=0.03, n_draws=1)  # heavy_tail_design.py's population
    pairs = ht.within_cluster_pairs(heavy)
    for floor in FLOORS:
        rows.append({"population": "heavy", "model": "name", "floor": floor,
                     "deff": population_deff(heavy, "inventor_id", "true_id", "mention_id", pairs, floor)})
    table = pd.DataFrame(rows).pivot_table(index=["population", "model"], columns="floor", values="deff")
    print(table.round(2).to_string())
    out = BENCH / "results" / f"design-effect-floor-{_dt.date.today().isoformat()}.json"
    out.write_text(json.dumps({"floors": FLOORS, "rows": rows}, indent=1))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
