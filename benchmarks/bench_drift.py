"""Cost of the drift checks of one batch (SPEC 10), as ratios measured side by side.

On a synthetic release of N records and its baseline (the same records, 5 % of them moved
to other clusters, 2 % new), in one process and on one DataFrame, best of ``--repeat``
interleaved rounds:

* (a) one ``df.groupby(prediction).size()`` — the unit;
* (s) the release's own summary statistics: ``PandasRelease(df, prediction)`` + its
  clustering table (what a suite of summary checks costs already);
* (d) everything the drift checks of the batch compute: the baseline's ``PandasRelease``
  (the one extra aggregation), the pair (common records, contingency cells), the
  fixed-subset average cluster size, the agreement metrics and the release diff.

Reported: d/a, s/a and (d − s)/s, the extra cost of the drift checks relative to the
release's own aggregation. Results go to ``benchmarks/results/drift-<date>.json``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

from er_expectations.analysis.drift import agreement_of, diff_of, statistic_change_of
from er_expectations.engines.pandas.pairs import ReleasePair
from er_expectations.engines.pandas.release import PandasRelease


def make_frame(n: int, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    sizes = np.minimum(rng.zipf(2.0, n), 5000)
    base = np.repeat(np.arange(sizes.size), sizes)[:n]
    current = base.copy()
    moved = rng.random(n) < 0.05
    current[moved] = rng.integers(0, base.max() + 1, int(moved.sum()))
    baseline = pd.array(base, dtype="Int64")
    new = rng.random(n) < 0.02
    baseline[new] = pd.NA  # records new in this release
    return pd.DataFrame({"prediction": current, "prediction__baseline": baseline})


def unit(df: pd.DataFrame) -> None:
    df.groupby("prediction").size()


def own(df: pd.DataFrame) -> None:
    PandasRelease(df, prediction="prediction").clustering_table()


def drift(df: pd.DataFrame) -> None:
    cur = PandasRelease(df, prediction="prediction")
    cur.clustering_table()
    pair = ReleasePair(cur, PandasRelease(df, prediction="prediction__baseline"))
    statistic_change_of(pair, "average_cluster_size")
    agreement_of(pair)
    diff_of(pair, examples=5, seed=0)


def best(fns: dict, df: pd.DataFrame, repeat: int) -> dict[str, float]:
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            started = time.perf_counter()
            fn(df)
            times[name].append(time.perf_counter() - started)
    return {k: min(v) for k, v in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", type=float, default=[1e6, 5e6])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    rows = []
    for size in args.sizes:
        df = make_frame(int(size))
        t = best({"a": unit, "s": own, "d": drift}, df, args.repeat)
        row = {"n": int(size), **{k: round(v, 4) for k, v in t.items()},
               "d/a": round(t["d"] / t["a"], 2), "s/a": round(t["s"] / t["a"], 2),
               "(d-s)/s": round((t["d"] - t["s"]) / t["s"], 2)}
        rows.append(row)
        print(json.dumps(row), flush=True)
    out = Path(args.out) if args.out else (Path(__file__).parent / "results" /
                                           f"drift-{dt.date.today().isoformat()}.json")
    out.write_text(json.dumps({"benchmark": "drift", "rows": rows}, indent=2) + "\n", encoding="utf-8")
    print(f"written {out}")


if __name__ == "__main__":
    main()
