"""Coverage of every metric under the expected-errors design, by floor λ (issue 28 items 1, 4, 5).

Not a timed test: a simulation. The two populations of the coverage studies, each with the
match probabilities of its earlier study (no use of the truth):

* ``rldata``: RLdata10000 with the all-but-one prediction and the Fellegi–Sunter pair model
  of ``bench_expected_errors.py`` (candidate pairs agreeing on ≥ 3 of 5 fields);
* ``heavy``: the heavy-tailed synthetic release of ``coverage_methods.py`` with the crude name
  model of ``heavy_tail_design.py`` (every pair inside a predicted cluster).

For every floor λ of ``--floors`` and number of draws of ``--sizes``, ``erx.simulate`` replays
``--reps`` benchmarks drawn by expected errors (SPEC 12.3) and reports the coverage of the 95 %
interval of every metric for the linearised, logit and BCa intervals (``recommended`` is BCa
for every estimate), all on the same replicates. Each cell (population, λ, draws) is appended
to ``--out`` (JSON lines) as soon as it is done, so a long run can be stopped and resumed:
cells already in the file are skipped.

    nice -n 10 .venv/bin/python benchmarks/studies/coverage_design_floor.py --populations heavy --sizes 800 --reps 500
    .venv/bin/python benchmarks/studies/coverage_design_floor.py --report results/coverage-design-floor-*.jsonl

The size-proportional and uniform designs are not re-run: ``coverage_methods.py`` measured them
on the same populations (2,000 replications at 800 draws, results/coverage-methods-*-singles-*).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent  # benchmarks/studies/
BENCH = HERE.parent  # benchmarks/: synthetic.py and results/
sys.path[:0] = [str(HERE), str(BENCH)]

import bench_expected_errors as rl  # noqa: E402
import heavy_tail_design as ht  # noqa: E402
from synthetic import make_release  # noqa: E402

import er_expectations as erx  # noqa: E402
from er_expectations.analysis.examples import rldata_frame  # noqa: E402

METRICS = ht.METRICS
METHODS = ("linearization", "logit", "bca")


POPULATIONS = ("rldata", "rldata_share", "rldata_oracle", "heavy")


def population(name: str) -> tuple[pd.DataFrame, dict[str, str], pd.DataFrame]:
    """The release, its column names and its scored pairs (``rldata``: Fellegi–Sunter;
    ``rldata_share``: the share of agreeing fields; ``rldata_oracle``: the noisy oracle of
    ``bench_expected_errors.py``, a well-calibrated system made from the truth, its seed 20)."""
    if name.startswith("rldata"):
        df = rldata_frame(rl.DATA / "rldata")
        df["rid"] = np.arange(len(df))
        a, b, agree = rl.candidate_pairs(df)
        if name == "rldata_share":
            p = agree / 5.0
        elif name == "rldata_oracle":
            truth = df["truth"].to_numpy()
            noise = np.random.default_rng(20).normal(0.0, 0.05, size=len(a))
            p = np.clip(np.where(truth[a] == truth[b], 0.9, 0.1) + noise, 0.0, 1.0)
        else:
            p = rl.fellegi_sunter(df, a, b)
        pairs = pd.DataFrame({"record_a": a, "record_b": b, "p": p})
        return df, {"prediction": "pred", "truth": "truth", "record_id": "rid"}, pairs
    df = make_release(20_000, seed=7, misplaced=0.03, n_draws=1)
    return df, {"prediction": "inventor_id", "truth": "true_id", "record_id": "mention_id"}, ht.within_cluster_pairs(df)


def done_cells(out: Path) -> set[tuple[str, float, int]]:
    if not out.is_file():
        return set()
    cells = set()
    for line in out.read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            cells.add((row["population"], float(row["floor"]), int(row["size"])))
    return cells


def run(args: argparse.Namespace) -> int:
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    done = done_cells(out)
    for pop in args.populations:
        cells = [(f, n, r) for n, r in zip(args.sizes, args.reps, strict=True) for f in args.floors
                 if (pop, float(f), int(n)) not in done]
        if not cells:
            continue
        df, cols, pairs = population(pop)
        for floor, size, reps in cells:
            t0 = time.time()
            seed = args.seed + int(size) + int(round(floor * 1000))
            sim = erx.simulate(df, cols["prediction"], cols["truth"], sizes=[size], designs=["expected_errors"],
                               reps=reps, seed=seed, metrics=list(METRICS), record_id=cols["record_id"],
                               ci_methods=list(METHODS), n_boot=args.n_boot, match_probabilities=pairs,
                               floor=floor)
            sim = sim[sim["target"] == "estimate"]
            with out.open("a") as handle:
                for r in sim.itertuples(index=False):
                    handle.write(json.dumps({
                        "population": pop, "design": "expected_errors", "floor": float(floor), "size": int(size),
                        "metric": r.metric, "ci_method": r.ci_method, "reps": int(r.reps), "truth": float(r.truth),
                        "bias": float(r.bias), "sd": float(r.sd), "mean_se": float(r.mean_se),
                        "coverage": float(r.coverage), "n_boot": args.n_boot, "seed": seed,
                        "seconds": round(time.time() - t0, 1)}) + "\n")
            print(f"{pop} λ={floor} n={size} reps={reps}: {time.time() - t0:.0f} s", flush=True)
    return 0


def mc(p: float, reps: int) -> float:
    return 100.0 * math.sqrt(max(p * (1 - p), 1e-12) / reps)


def earlier_cells() -> list[dict]:
    """The cells earlier studies measured on the same populations: the size-proportional and
    uniform designs (``coverage_methods.py``, singles) and the heavy population's floors 0.1 and
    0.5 at 800 draws (``heavy_tail_design.py``, the same name model)."""
    rows = []
    for f in sorted((BENCH / "results").glob("coverage-methods-2026-11-26-singles-*.json")):
        for cell in json.loads(f.read_text())["cells"]:
            for metric, by_method in cell["results"]["singles"].items():
                for method, r in by_method.items():
                    if method in METHODS:
                        rows.append({"population": cell["population"], "design": cell["design"], "floor": None,
                                     "size": cell["draws"], "metric": metric, "ci_method": method,
                                     "reps": r["reps"], "coverage": r["coverage"]["rate"], "source": f.name})
    for floor in (0.1, 0.5):
        f = BENCH / "results" / f"heavy-tail-design-2026-11-27-floor-{floor}.json"
        for r in json.loads(f.read_text())["rows"]:
            if r["design"] == "expected_errors" and r["ci_method"] in METHODS:
                rows.append({"population": "heavy", "design": "expected_errors", "floor": floor, "size": r["size"],
                             "metric": r["metric"], "ci_method": r["ci_method"], "reps": 2000,
                             "coverage": r["coverage"], "source": f.name})
    return rows


def report(files: list[str], *, markdown: bool = False) -> int:
    """Per population and number of draws: each metric's coverage by design (and floor), for
    the default interval and the linearised one; then the lowest over the metrics."""
    rows = [{**r, "source": Path(f).name} for f in files
            for r in map(json.loads, Path(f).read_text().splitlines()) if r]
    table = pd.DataFrame(earlier_cells() + rows)
    table = table[table["ci_method"].isin(METHODS)]
    table["where"] = [d if d != "expected_errors" else f"λ={f:g}" for d, f in zip(table["design"], table["floor"],
                                                                                    strict=True)]
    # runs of the same cell with other seeds (other --out files) are pooled, weighted by replications
    key = ["population", "where", "size", "metric", "ci_method"]
    table["hits"] = table["coverage"] * table["reps"]
    table = table.groupby(key, as_index=False, dropna=False).agg(
        design=("design", "first"), floor=("floor", "first"), hits=("hits", "sum"), reps=("reps", "sum"))
    table["coverage"] = table["hits"] / table["reps"]
    order = ["cluster_size", "uniform"] + [f"λ={f:g}" for f in sorted(table["floor"].dropna().unique())]
    table["cell"] = [f"{100 * c:.1f}" for c in table["coverage"]]
    for (pop, size), part in table.groupby(["population", "size"]):
        reps = part.groupby("where")["reps"].max().reindex(order).dropna().astype(int)
        print(f"\n{pop}, {size} draws; BCa (linearised) coverage %, replications: "
              + ", ".join(f"{w} {r}" for w, r in reps.items()))
        bca = part[part["ci_method"] == "bca"].pivot_table(index="metric", columns="where", values="cell",
                                                           aggfunc="first")
        lin = part[part["ci_method"] == "linearization"].pivot_table(index="metric", columns="where", values="cell",
                                                                     aggfunc="first")
        both = bca.combine(lin, lambda a, b: a.astype(str) + " (" + b.astype(str) + ")")
        cols = [c for c in order if c in both.columns]
        shown = both.reindex(index=list(METRICS), columns=cols)
        if markdown:
            print("| metric | " + " | ".join(cols) + " |\n| --- |" + " ---: |" * len(cols))
            for metric, row in shown.iterrows():
                print(f"| {metric} | " + " | ".join("—" if pd.isna(v) else str(v) for v in row) + " |")
        else:
            print(shown.to_string())
    low = table.groupby(["population", "size", "where", "ci_method"])["coverage"].min().unstack("where")
    print("\nlowest coverage over the metrics, %")
    print((100 * low[[c for c in order if c in low.columns]]).round(1).to_string())
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--populations", nargs="+", default=["rldata", "heavy"], choices=POPULATIONS)
    ap.add_argument("--floors", type=float, nargs="+", default=[0.1, 0.2, 0.3, 0.5, 1.0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[800, 400, 200])
    ap.add_argument("--reps", type=int, nargs="+", default=[1000, 500, 500], help="one per size, in order")
    ap.add_argument("--n-boot", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=20261128)
    ap.add_argument("--out", default=str(BENCH / "results" / "coverage-design-floor-2026-11-28.jsonl"))
    ap.add_argument("--report", nargs="+", default=None, metavar="FILE")
    ap.add_argument("--markdown", action="store_true", help="with --report: Markdown tables")
    args = ap.parse_args()
    if args.report:
        return report(args.report, markdown=args.markdown)
    return run(args)


if __name__ == "__main__":
    raise SystemExit(main())
