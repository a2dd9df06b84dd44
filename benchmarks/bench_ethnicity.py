"""Benchmark of ``erx.impute_ethnicity`` on the PatentsView benchmark (401 clusters).

    python benchmarks/bench_ethnicity.py [--repeat 3] [--out PATH]

Issue 9's target: imputing (and estimating) for 400 benchmark clusters adds under 2 s to a
run, ethnicolr's import included, and nothing when no disparity check is declared.
Measured side by side, in interleaved rounds (a, b, a, b, ...), each in a fresh process:

(a) ``import er_expectations``, read the bundled PatentsView tables, ``erx.estimate`` on
    the 2021-12-30 release;
(b) the same plus ``erx.impute_ethnicity(..., first_name="name_first")`` (cold: the
    Census tables are read in that process);
added = best(b) - best(a), ratio = best(b) / best(a). Also, in one warm process: the time
of a second ``impute_ethnicity`` call (tables cached) over one ``erx.estimate``, and, for
information, what ``import ethnicolr`` alone costs (the Census path never pays it).
Results are printed and written to benchmarks/results/ethnicity-<date>.json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

SCRIPT = """
import sys, time
t0 = time.perf_counter()
import pandas as pd
import er_expectations as erx
root = "er_expectations/data/patentsview/"
records = pd.read_parquet(root + "records.parquet", columns=["mention_id", "name_first", "name_last"])
pred = pd.read_parquet(root + "predictions.parquet", columns=["mention_id", "inventor_id_20211230"])
bench = pd.read_parquet(root + "benchmark.parquet")
df = records.merge(pred, on="mention_id").merge(bench, on="mention_id", how="left")
if sys.argv[1] == "b":
    out = erx.impute_ethnicity(df, "benchmark_id", "name_last", first_name="name_first")
erx.estimate(df, prediction="inventor_id_20211230", reference="benchmark_id")
total = time.perf_counter() - t0
warm = {}
if sys.argv[1] == "b":
    t = time.perf_counter(); erx.impute_ethnicity(df, "benchmark_id", "name_last", first_name="name_first")
    warm["impute"] = time.perf_counter() - t
    t = time.perf_counter(); erx.estimate(df, prediction="inventor_id_20211230", reference="benchmark_id")
    warm["estimate"] = time.perf_counter() - t
    warm["ethnicolr_or_torch_imported"] = "ethnicolr" in sys.modules or "torch" in sys.modules
    warm["abstention_rate"] = out.attrs["abstention_rate"]
print(__import__("json").dumps({"total": total, **warm}))
"""

IMPORT_ETHNICOLR = """
import time
t = time.perf_counter()
import ethnicolr
print(time.perf_counter() - t)
"""


def run(kind: str) -> dict:
    done = subprocess.run([sys.executable, "-c", SCRIPT, kind], capture_output=True, text=True,
                          cwd=REPO, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    a, b = [], []
    for _ in range(args.repeat):
        a.append(run("a"))
        b.append(run("b"))
    best_a = min(r["total"] for r in a)
    best_b = min(r["total"] for r in b)
    warm_impute = min(r["impute"] for r in b)
    warm_estimate = min(r["estimate"] for r in b)
    ethnicolr_import = float(subprocess.run([sys.executable, "-c", IMPORT_ETHNICOLR], capture_output=True,
                                            text=True, cwd=REPO, check=True).stdout.strip().splitlines()[-1])
    result = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "repeat": args.repeat,
        "a_import_read_estimate_s": round(best_a, 3),
        "b_plus_impute_cold_s": round(best_b, 3),
        "added_s": round(best_b - best_a, 3),
        "ratio_b_over_a": round(best_b / best_a, 3),
        "warm_impute_s": round(warm_impute, 4),
        "warm_estimate_s": round(warm_estimate, 4),
        "warm_ratio_impute_over_estimate": round(warm_impute / warm_estimate, 3),
        "import_ethnicolr_alone_s": round(ethnicolr_import, 3),
        "ethnicolr_or_torch_imported": any(r["ethnicolr_or_torch_imported"] for r in b),
        "abstention_rate": b[0]["abstention_rate"],
        "target": "added_s < 2",
    }
    for key, value in result.items():
        print(f"{key:36s} {value}")
    out = args.out or HERE / "results" / f"ethnicity-{dt.date.today().isoformat()}.json"
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"written to {out}")


if __name__ == "__main__":
    main()
