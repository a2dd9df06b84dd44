"""Coverage of the confidence intervals of ``erx.estimate`` by simulation (SPEC 6).

Two populations with the whole true clustering known:

* ``rldata``: RLdata10000 (../shared/data/rldata, 10,000 records, 1,000 true pairs) with
  the paper's prediction: two records are linked when they agree on at least four of
  fname_c1, lname_c1, by, bm, bd (transitive closure); pairwise precision 0.914,
  recall 0.969.
* ``heavy``: a synthetic release of ``benchmarks/synthetic.py`` (power-law cluster sizes,
  exponent 2, up to 3,000 records) with 3 % of the records misplaced.

Each replication draws ``--draws`` records uniformly with replacement and labels their
true clusters (size-proportional design, SPEC 1), then estimates the metrics with the
linearised interval and with the percentile bootstrap. Reported per metric: coverage of
the true value and mean width of

* ``collapsed``: θ̂ ± z·SE as before the zero-event interval (a point when V̂ = 0);
* ``linearization``: the default interval (zero-event interval when no error is drawn);
* ``bootstrap``: percentile bootstrap (zero-event interval when no error is drawn);

and the share of degenerate samples (no error of the metric's kind drawn), with the
coverage of the zero-event interval on those samples.

    .venv/bin/python benchmarks/studies/coverage_intervals.py                 # both, 2000 replications
    .venv/bin/python benchmarks/studies/coverage_intervals.py --reps 200      # quick

Writes ``benchmarks/results/coverage-<date>.json``.
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
import pandas as pd

from er_expectations.analysis import examples
from er_expectations.engines.pandas.release import PandasRelease, contingency
from er_expectations.stats import BenchmarkSample, estimate_metrics, exact_metrics_from_contingency
from er_expectations.stats.estimator import z_value

HERE = Path(__file__).resolve().parent  # benchmarks/studies/
BENCH = HERE.parent  # benchmarks/: synthetic.py and results/
sys.path[:0] = [str(HERE), str(BENCH)]

DATA = BENCH.parent.parent / "shared" / "data"
METRICS = ("pairwise_precision", "pairwise_recall", "pairwise_f", "cluster_recall", "b_cubed_precision",
           "b_cubed_recall")


def rldata_frame(data: Path = DATA) -> pd.DataFrame:
    """RLdata10000 with its truth and the paper's ≥4-of-5 agreement prediction."""
    return examples.rldata_frame(data / "rldata")[["truth", "pred"]]


def heavy_frame(seed: int = 7, n_records: int = 20_000) -> pd.DataFrame:
    from synthetic import make_release

    df = make_release(n_records, seed=seed, misplaced=0.03, n_draws=1)
    return pd.DataFrame({"truth": df["true_id"].to_numpy(), "pred": df["inventor_id"].to_numpy()})


class Population:
    """The whole true clustering as one aggregated sample, to subsample by draw counts."""

    def __init__(self, df: pd.DataFrame) -> None:
        self.truth_values = exact_metrics_from_contingency(*contingency(df, prediction="pred", reference="truth"))[0]
        full = PandasRelease(df, prediction="pred").benchmark_sample(reference="truth", weights="cluster_size")
        self.full = full
        # record -> index of its true cluster in the full sample
        order = {lab: i for i, lab in enumerate(full.labels.tolist())}
        self.record_cluster = np.array([order[t] for t in df["truth"].tolist()], dtype=np.int64)

    def sample(self, rng: np.random.Generator, n_draws: int) -> BenchmarkSample:
        drawn = self.record_cluster[rng.integers(0, self.record_cluster.size, size=n_draws)]
        return subsample(self.full, np.bincount(drawn, minlength=self.full.labels.size))


def subsample(full: BenchmarkSample, counts: np.ndarray) -> BenchmarkSample:
    """The clusters of ``full`` drawn ``counts`` times (> 0), as the aggregated sample
    ``erx.estimate`` would build for that benchmark."""
    keep = np.flatnonzero(counts)
    new_index = np.full(full.labels.size, -1, dtype=np.int64)
    new_index[keep] = np.arange(keep.size)
    pieces = new_index[full.piece_cluster] >= 0
    return BenchmarkSample(
        labels=full.labels[keep], size=full.size[keep], weight=full.weight[keep], draws=counts[keep],
        piece_cluster=new_index[full.piece_cluster[pieces]], piece_n=full.piece_n[pieces],
        piece_m=full.piece_m[pieces], piece_label=full.piece_label[pieces], n_records=full.n_records,
        n_clusters=full.n_clusters, design=full.design,
    )


def simulate(pop: Population, *, reps: int, n_draws: int, n_boot: int, level: float, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    z = z_value(level)
    rows: dict[str, dict[str, list]] = {m: {k: [] for k in ("degenerate", "defined", "col_cov", "col_w", "lin_cov",
                                                            "lin_w", "boot_cov", "boot_w")} for m in METRICS}
    t_lin = t_boot = 0.0
    for r in range(reps):
        sample = pop.sample(rng, n_draws)
        t0 = time.perf_counter()
        lin = estimate_metrics(sample, METRICS, ci_level=level)
        t1 = time.perf_counter()
        boot = estimate_metrics(sample, METRICS, ci_level=level, ci_method="bootstrap", n_boot=n_boot,
                                seed=seed * 100_003 + r)
        t2 = time.perf_counter()
        t_lin += t1 - t0
        t_boot += t2 - t1
        for m in METRICS:
            truth = pop.truth_values[m]
            a, b = lin[m], boot[m]
            acc = rows[m]
            ok = a.has_interval
            acc["defined"].append(ok)
            acc["degenerate"].append(a.interval == "zero_event")
            if not ok:
                continue
            # the interval before this change: θ̂ ± z·SE clipped to [0, 1] (a point when V̂ = 0)
            if a.has_std_error:
                clo, chi = max(a.estimate - z * a.std_error, 0.0), min(a.estimate + z * a.std_error, 1.0)
                acc["col_cov"].append(clo <= truth <= chi)
                acc["col_w"].append(chi - clo)
            for tag, e in (("lin", a), ("boot", b)):
                acc[f"{tag}_cov"].append(e.ci_lower <= truth <= e.ci_upper)
                acc[f"{tag}_w"].append(e.ci_upper - e.ci_lower)
    out = {"reps": reps, "draws": n_draws, "n_boot": n_boot, "ci_level": level,
           "seconds_linearization": round(t_lin, 2), "seconds_bootstrap": round(t_boot, 2), "metrics": {}}
    for m in METRICS:
        acc = rows[m]
        deg = np.array(acc["degenerate"])
        lin_cov = np.array(acc["lin_cov"])
        defined = np.array(acc["defined"])
        deg_among_defined = deg[defined]
        out["metrics"][m] = {
            "true_value": round(float(pop.truth_values[m]), 4),
            "share_with_interval": round(float(defined.mean()), 4),
            "share_degenerate": round(float(deg.mean()), 4),
            "coverage_collapsed": round(float(np.mean(acc["col_cov"])), 4) if acc["col_cov"] else None,
            "coverage_linearization": round(float(lin_cov.mean()), 4),
            "coverage_bootstrap": round(float(np.mean(acc["boot_cov"])), 4),
            "coverage_zero_event_on_degenerate": (round(float(lin_cov[deg_among_defined].mean()), 4)
                                                  if deg_among_defined.any() else None),
            "width_collapsed": round(float(np.mean(acc["col_w"])), 4) if acc["col_w"] else None,
            "width_linearization": round(float(np.mean(acc["lin_w"])), 4),
            "width_bootstrap": round(float(np.mean(acc["boot_w"])), 4),
            "width_zero_event_on_degenerate": (round(float(np.array(acc["lin_w"])[deg_among_defined].mean()), 4)
                                               if deg_among_defined.any() else None),
            "width_ratio_bootstrap_to_linearization": round(float(np.mean(acc["boot_w"]) / np.mean(acc["lin_w"])),
                                                            4),
        }
    return out


def _print(name: str, res: dict) -> None:
    print(f"\n{name}: {res['reps']} replications of {res['draws']} draws, B = {res['n_boot']}, "
          f"level {res['ci_level']:g} (linearization {res['seconds_linearization']} s, "
          f"bootstrap {res['seconds_bootstrap']} s)")
    head = ("metric", "truth", "degen.", "cov coll.", "cov lin", "cov boot", "cov 0-ev", "w coll.", "w lin",
            "w boot", "w 0-ev", "w boot/lin")
    print("  ".join(f"{h:>9}" if i else f"{h:<18}" for i, h in enumerate(head)))
    for m, v in res["metrics"].items():
        vals = (v["true_value"], v["share_degenerate"], v["coverage_collapsed"], v["coverage_linearization"],
                v["coverage_bootstrap"], v["coverage_zero_event_on_degenerate"], v["width_collapsed"],
                v["width_linearization"], v["width_bootstrap"], v["width_zero_event_on_degenerate"],
                v["width_ratio_bootstrap_to_linearization"])
        print(f"{m:<18}  " + "  ".join("        —" if x is None else f"{x:9.4f}" for x in vals))


def speed(*, n_records: int = 200_000, n_draws: int = 4000, n_boot: int = 2000, repeat: int = 3) -> dict:
    """Time of all metrics with the bootstrap over the linearisation, side by side, on a sample
    of a few thousand clusters (best of ``repeat``)."""
    pop = Population(heavy_frame(n_records=n_records))
    sample = pop.sample(np.random.default_rng(0), n_draws)
    best = {"linearization": math.inf, "bootstrap": math.inf}
    for _ in range(repeat):
        for method in best:
            t0 = time.perf_counter()
            estimate_metrics(sample, None, ci_method=method, n_boot=n_boot, seed=1)
            best[method] = min(best[method], time.perf_counter() - t0)
    out = {"clusters": int(sample.labels.size), "draws": int(sample.k), "n_boot": n_boot,
           "seconds": {k: round(v, 4) for k, v in best.items()},
           "ratio_bootstrap_to_linearization": round(best["bootstrap"] / best["linearization"], 1)}
    print(f"\nspeed, all metrics, {out['clusters']} clusters / {out['draws']} draws, B = {n_boot}: "
          f"linearization {out['seconds']['linearization']} s, bootstrap {out['seconds']['bootstrap']} s")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--draws", type=int, default=200)
    ap.add_argument("--n-boot", type=int, default=2000)
    ap.add_argument("--level", type=float, default=0.95)
    ap.add_argument("--seed", type=int, default=20261126)
    ap.add_argument("--populations", nargs="+", default=["rldata", "heavy"], choices=["rldata", "heavy"])
    ap.add_argument("--out", default=None)
    ap.add_argument("--no-speed", action="store_true", help="skip the timing of the bootstrap")
    args = ap.parse_args(argv)
    results = {}
    for name in args.populations:
        df = rldata_frame() if name == "rldata" else heavy_frame()
        pop = Population(df)
        res = simulate(pop, reps=args.reps, n_draws=args.draws, n_boot=args.n_boot, level=args.level,
                       seed=args.seed)
        res["population"] = {"records": int(len(df)), "true_clusters": int(df["truth"].nunique()),
                             "predicted_clusters": int(df["pred"].nunique())}
        results[name] = res
        _print(name, res)
    if not args.no_speed:
        results["speed"] = speed()
    out = Path(args.out) if args.out else BENCH / "results" / f"coverage-{_dt.date.today().isoformat()}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nwritten {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
