"""Coverage of later-release estimates under the benchmark's-life rule (SPEC 14; issue 27).

Not a timed test: a simulation study. One synthetic population with its whole truth known
(``benchmarks/synthetic.py``: power-law entity sizes with exponent 1.8 and an exponential
cutoff at 100, the ``patentsview`` shape, names with homonyms and variants), in two releases:

* the **labelling release L** holds 80 % of the records; the other 20 % arrive later: every
  record of a random set of **new entities** (``--new-entities`` of all records) and random
  **new records of existing entities** (the rest; every existing entity keeps at least one
  record in L, so a large entity gains more records, as a prolific inventor does);
* the **later release T** holds every record.

Two predictions of each release: ``perfect`` (prediction = truth) and ``imperfect``
(``--misplaced`` of the records misplaced, in equal parts: lumping of two true clusters of
at most 20 records each, records split off their cluster, records moved to the predicted
cluster of a random other record). The imperfect predictions of L and T are **independent
runs** of the same error process, so T's prediction restricted to L's records differs from
L's prediction (its errors are its own): the T estimate is not a copy of the L estimate.
With the perfect prediction, T restricted to L's records *is* L's prediction, and the
script checks in every replication that both estimates are equal.

Each replication draws ``k`` records of L uniformly with replacement (the ``cluster_size``
design), labels the drawn entities' true clusters restricted to L (``benchmark_id``, with the
number of ``draws``), and marks every record of L with ``benchmark_version`` = 1 (the
benchmark file holds one row per record known at labelling; joined onto T the column is null
on the records added since). Estimated, per prediction:

* ``L``: ``benchmark_sample`` of L;
* ``T``: ``benchmark_sample`` of T with ``known="auto"`` (the records known at labelling);
* ``T_all``: ``benchmark_sample`` of T with ``known=None`` (the behaviour before SPEC 14: a
  new record in a sampled entity's predicted cluster counts as a false link);

each with the default interval (``linearization``) and ``ci_method="recommended"`` (BCa,
``--n-boot`` resamples), by ``er_expectations.stats.estimate_methods`` on the sample that
``erx.estimate`` builds (``er_expectations.engines.pandas.release.benchmark_sample``, the same
call); in the first replication of each cell the script checks that ``erx.estimate`` gives
the same numbers and the counts in ``attrs``.

Targets (``erx.exact_metrics`` on the whole truth, independent of the estimator):
``L``: L's prediction on L's records; ``T`` (the new rule): T's prediction restricted to the
records known at labelling (L's records), each record in its predicted cluster of T minus
the records added since; ``T_full``: T's prediction on all its records (reported as the
distance between the two; ``T`` and ``T_all`` are also scored against it).

Once per run, the SQL engine (SQLite through sqlalchemy,
``er_expectations.engines.sql.release.benchmark_sample``) is checked to give the same
``BenchmarkSample`` as pandas on one replication of T (when sqlalchemy is installed).

    nice -n 19 .venv/bin/python benchmarks/studies/coverage_later_release.py                 # 1000 replications
    nice -n 19 .venv/bin/python benchmarks/studies/coverage_later_release.py --reps 100      # quick
    .venv/bin/python benchmarks/studies/coverage_later_release.py --report results/coverage-later-release-*.json

Writes ``benchmarks/results/coverage-later-release-<date>.json``.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import er_expectations as erx
from er_expectations.engines.pandas.release import benchmark_sample
from er_expectations.stats import DEFAULT_N_BOOT, estimate_methods

HERE = Path(__file__).resolve().parent  # benchmarks/studies/
BENCH = HERE.parent  # benchmarks/: synthetic.py and results/
sys.path[:0] = [str(HERE), str(BENCH)]
from synthetic import make_release  # noqa: E402

METRICS = ("pairwise_precision", "pairwise_recall", "pairwise_f",
           "b_cubed_precision", "b_cubed_recall", "b_cubed_f")
METHODS = ("linearization", "recommended")
PREDICTIONS = ("perfect", "imperfect", "rerun")
# (estimate, release frame, known)
ESTIMATES = (("L", "L", "auto"), ("T", "T", "auto"), ("T_all", "T", None))
# "rerun": a second run of the imperfect error process on L, estimated on L only (a control:
# how much coverage differs between two predictions of the same process, with no later release)
ESTIMATES_OF = {"perfect": ESTIMATES, "imperfect": ESTIMATES, "rerun": ESTIMATES[:1]}
# which targets each estimate is scored against (the first is its own)
TARGETS = {"L": ("L",), "T": ("T", "T_full"), "T_all": ("T", "T_full")}


# --------------------------------------------------------------------------- population


def late_records(true: np.ndarray, rng: np.random.Generator, *, late: float, new_entities: float) -> np.ndarray:
    """Which records arrive after labelling: whole new entities, then new records of the others.

    New entities are drawn at random until they hold ``new_entities`` of the records; the rest
    of the ``late`` share are records of the other entities, drawn uniformly among all their
    records but one (a random record of each entity stays in L).
    """
    n = len(true)
    n_ent = int(true.max()) + 1
    size = np.bincount(true, minlength=n_ent)
    order = rng.permutation(n_ent)
    cum = np.cumsum(size[order])
    new = np.zeros(n_ent, dtype=bool)
    new[order[: int(np.searchsorted(cum, new_entities * n))]] = True
    is_late = new[true].copy()
    # one anchor record per existing entity stays in L
    perm = rng.permutation(n)
    first = np.full(n_ent, -1, dtype=np.int64)
    first[true[perm[::-1]]] = perm[::-1]  # the last write wins: the first record of perm per entity
    anchor = np.zeros(n, dtype=bool)
    anchor[first[~new & (first >= 0)]] = True
    candidates = np.flatnonzero(~is_late & ~anchor)
    want = int(round(late * n)) - int(is_late.sum())
    is_late[rng.choice(candidates, size=want, replace=False)] = True
    return is_late


def noisy(true: np.ndarray, rng: np.random.Generator, *, misplaced: float) -> np.ndarray:
    """A prediction with lumping and splitting errors: about ``misplaced`` of the records.

    ``true`` holds entity codes 0..E-1 (some may be absent). In equal parts: pairs of true
    clusters of at most 20 records lumped together; records split off their cluster (those of
    one entity form one new predicted cluster); records moved to the predicted cluster of a
    random other record (large clusters attract more false links). Returns predicted codes.
    """
    n = len(true)
    n_ent = int(true.max()) + 1
    size = np.bincount(true, minlength=n_ent)
    budget = int(round(misplaced * n))
    third = budget // 3
    remap = np.arange(n_ent, dtype=np.int64)
    small = rng.permutation(np.flatnonzero((size >= 1) & (size <= 20)))
    take = int(np.searchsorted(np.cumsum(size[small]), 2 * third)) + 1
    take = min(take + take % 2, len(small) - len(small) % 2)
    pairs = small[:take].reshape(-1, 2)
    remap[pairs[:, 1]] = pairs[:, 0]
    pred = remap[true]
    candidates = np.flatnonzero(size[true] >= 2)
    chosen = rng.choice(candidates, size=min(third, len(candidates)), replace=False)
    _, group_of = np.unique(true[chosen], return_inverse=True)
    pred[chosen] = n_ent + group_of
    movers = rng.choice(n, size=budget - 2 * third, replace=False)
    pred[movers] = pred[rng.integers(0, n, size=len(movers))]
    return pred


def population(records: int, *, seed: int, late: float, new_entities: float, misplaced: float) -> dict:
    """The records of T (the ones of L marked), the predictions and the exact targets."""
    base = make_release(records, seed=seed, misplaced=0.0, n_draws=1, exponent=1.8, max_size=3000, cutoff=100.0)
    true = pd.factorize(base["true_id"])[0].astype(np.int64)
    rng = np.random.default_rng([seed, 1])
    is_late = late_records(true, rng, late=late, new_entities=new_entities)
    in_l = ~is_late
    pred_t = noisy(true, np.random.default_rng([seed, 2]), misplaced=misplaced)
    pred_l = np.full(len(true), -1, dtype=np.int64)
    pred_l[in_l] = noisy(true[in_l], np.random.default_rng([seed, 3]), misplaced=misplaced)
    frame_t = pd.DataFrame({"mention_id": base["mention_id"].to_numpy(), "true_id": true,
                            "name": base["name"].array,
                            "perfect": true, "imperfect": pred_t,
                            "benchmark_version": pd.array(np.where(in_l, 1, 0), dtype="Int64")})
    frame_t.loc[is_late, "benchmark_version"] = pd.NA
    frame_l = frame_t.loc[in_l].reset_index(drop=True)
    frame_l["imperfect"] = pred_l[in_l]
    frame_l["rerun"] = noisy(true[in_l], np.random.default_rng([seed, 4]), misplaced=misplaced)
    exact = {"rerun": {"L": erx.exact_metrics(frame_l, prediction="rerun", reference="true_id")}}
    for p in PREDICTIONS[:2]:
        exact[p] = {
            "L": erx.exact_metrics(frame_l, prediction=p, reference="true_id"),
            "T": erx.exact_metrics(frame_t.loc[in_l], prediction=p, reference="true_id"),
            "T_full": erx.exact_metrics(frame_t, prediction=p, reference="true_id"),
        }
    late_ent = np.unique(true[is_late])
    new_ent = np.setdiff1d(late_ent, np.unique(true[in_l]))
    size_t = np.bincount(true)
    info = {"records_T": int(len(true)), "records_L": int(in_l.sum()), "records_added": int(is_late.sum()),
            "entities_T": int(len(size_t)), "entities_L": int(len(np.unique(true[in_l]))),
            "new_entities": int(len(new_ent)), "records_of_new_entities": int(np.isin(true, new_ent).sum()),
            "largest_entity": int(size_t.max()), "misplaced": misplaced, "seed": seed}
    return {"T": frame_t, "L": frame_l, "true_L": true[in_l], "in_l": in_l, "exact": exact, "info": info}


# --------------------------------------------------------------------------- one replication


def with_benchmark(frame: pd.DataFrame, entity_draws: np.ndarray, known_mask: np.ndarray) -> pd.DataFrame:
    """``frame`` with ``benchmark_id`` and ``draws`` on the known records of drawn entities."""
    d = entity_draws[frame["true_id"].to_numpy()]
    on = (d > 0) & known_mask
    out = frame.copy(deep=False)
    out["benchmark_id"] = pd.arrays.IntegerArray(frame["true_id"].to_numpy(), ~on)
    out["draws"] = pd.arrays.IntegerArray(d, ~on)
    return out


def replicate(pop: dict, k: int, rng: np.random.Generator, *, predictions: tuple[str, ...], n_boot: int, seed: int,
              check: bool) -> dict:
    """Estimates of every (prediction, estimate, method, metric) for one benchmark of k draws."""
    true_l = pop["true_L"]
    n_ent = int(pop["T"]["true_id"].max()) + 1
    entity_draws = np.bincount(true_l[rng.integers(0, len(true_l), size=k)], minlength=n_ent)
    frames = {"L": with_benchmark(pop["L"], entity_draws, np.ones(len(pop["L"]), dtype=bool)),
              "T": with_benchmark(pop["T"], entity_draws, pop["in_l"])}
    out: dict = {}
    counts: dict = {}
    for p in predictions:
        for est, rel, known in ESTIMATES_OF[p]:
            sample = benchmark_sample(frames[rel], prediction=p, reference="benchmark_id", draws="draws", known=known)
            if est == "T":  # the rule is the release with the added records removed
                same_sample(sample, benchmark_sample(frames["T"].loc[pop["in_l"]], prediction=p,
                                                     reference="benchmark_id", draws="draws", known=None))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = estimate_methods(sample, METRICS, methods=METHODS, n_boot=n_boot, seed=seed)
            out[(p, est)] = {m: {mid: (r.estimate, r.ci_lower, r.ci_upper) for mid, r in res[m].items()}
                             for m in METHODS}
            counts[(p, est)] = (sample.records_added, sample.records_added_in_sampled, sample.records_set_aside)
            if check:
                check_api(frames[rel], p, known, res, sample, n_boot=n_boot, seed=seed)
        if p == "perfect":  # T restricted to L's records is L's prediction: the same estimate
            for method in METHODS:
                np.testing.assert_array_equal(np.array(list(out[(p, "T")][method].values())),
                                              np.array(list(out[(p, "L")][method].values())),
                                              err_msg="perfect prediction: T (known records) differs from L")
    return {"estimates": out, "counts": counts, "sampled_entities": int((entity_draws > 0).sum())}


def same_sample(a, b) -> None:
    """Two samples of one release and benchmark are equal (both engines order them alike)."""
    for f in ("labels", "size", "weight", "draws", "piece_cluster", "piece_n", "piece_m", "piece_label"):
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f), err_msg=f)
    assert (a.n_records, a.n_clusters, a.records_set_aside) == (b.n_records, b.n_clusters, b.records_set_aside)


def check_api(frame: pd.DataFrame, prediction: str, known, res: dict, sample, *, n_boot: int, seed: int) -> None:
    """``erx.estimate`` gives what the study measures (same numbers, counts in attrs)."""
    for method in METHODS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            api = erx.estimate(frame, prediction=prediction, reference="benchmark_id", draws="draws",
                               metrics=list(METRICS), ci_method=method, n_boot=n_boot, seed=seed, known=known)
        for mid in METRICS:
            r = res[method][mid]
            got = api.loc[mid, ["estimate", "ci_lower", "ci_upper"]].to_numpy(dtype=float)
            np.testing.assert_allclose(got, [r.estimate, r.ci_lower, r.ci_upper], rtol=1e-12, atol=1e-12)
        assert api.attrs["records_added"] == sample.records_added
        assert api.attrs["records_added_in_sampled"] == sample.records_added_in_sampled
        assert api.attrs["known_column"] == (None if known is None else "benchmark_version")


def sql_check(pop: dict, k: int, seed: int) -> dict:
    """The SQL engine (SQLite) gives pandas' BenchmarkSample on one replication of T."""
    try:
        import sqlalchemy as sa  # optional: only for this check
    except ImportError:
        return {"skipped": "sqlalchemy is not installed"}
    from er_expectations.engines.sql.release import benchmark_sample as sql_benchmark_sample

    rng = np.random.default_rng([seed, 99])
    true_l = pop["true_L"]
    entity_draws = np.bincount(true_l[rng.integers(0, len(true_l), size=k)],
                               minlength=int(pop["T"]["true_id"].max()) + 1)
    frame = with_benchmark(pop["T"], entity_draws, pop["in_l"]).drop(columns=["name"])
    engine = sa.create_engine("sqlite://")
    try:
        frame.to_sql("records", engine, index=False)
        out = {}
        for p in PREDICTIONS[:2]:
            a = benchmark_sample(frame, prediction=p, reference="benchmark_id", draws="draws")
            b = sql_benchmark_sample(engine, "records", prediction=p, reference="benchmark_id", draws="draws")
            same = {f: bool(np.array_equal(*(pd.Series(np.asarray(getattr(s, f))).sort_values().to_numpy()
                                             for s in (a, b))))
                    for f in ("size", "draws", "piece_n", "piece_m")}
            scalars = {f: (getattr(a, f), getattr(b, f)) for f in
                       ("n_records", "n_clusters", "records_added", "records_added_in_sampled", "benchmark_version",
                        "known_column", "records_set_aside", "clusters_set_aside")}
            out[p] = {"pieces": [int(len(a.piece_n)), int(len(b.piece_n))],
                      "clusters": [int(len(a.labels)), int(len(b.labels))],
                      "arrays_equal": same,
                      "scalars": {f: [v if v is None or isinstance(v, str) else int(v) for v in pair]
                                  for f, pair in scalars.items()}}
            if not all(same.values()) or any(x != y for x, y in scalars.values()) or len(a.piece_n) != len(b.piece_n):
                raise AssertionError(f"SQL and pandas samples differ ({p}): {out[p]}")
    finally:
        engine.dispose()
    return out


# --------------------------------------------------------------------------- the study


def run(args: argparse.Namespace) -> dict:
    started = time.perf_counter()
    pop = population(args.records, seed=args.seed, late=args.late, new_entities=args.new_entities,
                     misplaced=args.misplaced)
    exact = {p: {t: {mid: float(s[mid]) for mid in METRICS} for t, s in by.items()} for p, by in pop["exact"].items()}
    print("population:", pop["info"], flush=True)
    result = {"population": pop["info"], "exact": exact, "cells": [], "timing": {},
              "sql_check": sql_check(pop, args.draws[0], args.seed)}
    print("SQL check:", json.dumps(result["sql_check"]), flush=True)
    for k in args.draws:
        rng = np.random.default_rng([args.seed, k])
        t0 = time.perf_counter()
        acc: dict = {}
        counts: dict = {}
        sampled = []
        for r in range(args.reps):
            rep = replicate(pop, k, rng, predictions=tuple(args.predictions), n_boot=args.n_boot, seed=args.seed * 100_003 + k * 1_009 + r, check=r == 0)
            sampled.append(rep["sampled_entities"])
            for key, by_method in rep["estimates"].items():
                for method, vals in by_method.items():
                    for mid, v in vals.items():
                        acc.setdefault((*key, method, mid), []).append(v)
            for key, c in rep["counts"].items():
                counts.setdefault(key, []).append(c)
            if r == 9:
                per = (time.perf_counter() - t0) / 10
                print(f"{k} draws: {per:.3f} s per replication, {per * args.reps / 60:.1f} min for {args.reps}",
                      flush=True)
        seconds = time.perf_counter() - t0
        result["timing"][str(k)] = {"seconds": round(seconds, 1), "per_replication": round(seconds / args.reps, 4)}
        for (p, est, method, mid), vals in acc.items():
            a = np.asarray(vals, dtype=np.float64)
            for target in TARGETS[est]:
                truth = exact[p][target][mid]
                ok = ~np.isnan(a[:, 1])
                below = a[ok, 2] < truth
                above = a[ok, 1] > truth
                cov = float(1 - below.mean() - above.mean()) if ok.any() else math.nan
                n_ok = int(ok.sum())
                result["cells"].append({
                    "draws": k, "prediction": p, "estimate": est, "target": target, "method": method, "metric": mid,
                    "truth": truth, "mean": float(np.nanmean(a[:, 0])), "bias": float(np.nanmean(a[:, 0]) - truth),
                    "coverage": cov, "mc_se": math.sqrt(cov * (1 - cov) / n_ok) if n_ok else math.nan,
                    "below": float(below.mean()) if n_ok else math.nan,
                    "above": float(above.mean()) if n_ok else math.nan,
                    "width": float((a[ok, 2] - a[ok, 1]).mean()) if n_ok else math.nan,
                    "no_interval": int((~ok).sum()), "reps": args.reps})
        for (p, est), c in counts.items():
            c = np.asarray(c, dtype=np.float64)
            result.setdefault("counts", []).append({
                "draws": k, "prediction": p, "estimate": est, "records_added": float(c[:, 0].mean()),
                "records_added_in_sampled_mean": float(c[:, 1].mean()),
                "records_added_in_sampled_range": [int(c[:, 1].min()), int(c[:, 1].max())],
                "records_set_aside_mean": float(c[:, 2].mean())})
        result.setdefault("sampled_entities", {})[str(k)] = {"mean": float(np.mean(sampled)),
                                                            "min": int(np.min(sampled)), "max": int(np.max(sampled))}
        print(f"{k} draws: {args.reps} replications in {seconds:.1f} s", flush=True)
    result.update({"created": _dt.datetime.now().isoformat(timespec="seconds"), "commit": _commit(),
                   "argv": sys.argv[1:], "numpy": np.__version__, "pandas": pd.__version__,
                   "load_average": list(os.getloadavg()), "seconds": round(time.perf_counter() - started, 1)})
    return result


def _commit() -> str | None:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def report(results: list[dict]) -> str:
    """The coverage table (Markdown) of one or more result files of the same population (the
    cells of a prediction run twice must agree): per cell L | T (new rule) | T with
    known=None, and the second run of L's prediction (the control), in %."""
    cells: dict = {}
    exact: dict = {}
    for result in results:
        for p, by in result["exact"].items():
            exact.setdefault(p, {}).update(by)
        for c in result["cells"]:
            key = (c["draws"], c["prediction"], c["estimate"], c["target"], c["method"], c["metric"])
            if key in cells and cells[key]["coverage"] != c["coverage"]:
                raise ValueError(f"two result files disagree on {key}: not the same study")
            cells[key] = c

    def cov(key) -> str:
        c = cells.get(key)
        if c is None or c["coverage"] != c["coverage"]:
            return "—"
        return f"{100 * c['coverage']:.1f} ±{100 * c['mc_se']:.1f}"

    lines = ["| prediction | draws | method | metric | truth L | truth T (known) | truth T (all) | L | T, new rule "
             "| T, new rule vs all records | T, known=None | T, known=None vs all records | L, 2nd run (truth) |",
             "| --- | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    draws = sorted({key[0] for key in cells})
    methods = [m for m in METHODS if any(key[4] == m for key in cells)]
    gaps: dict = {}
    for p in PREDICTIONS[:2]:
        if p not in exact or "T" not in exact[p]:
            continue
        for k in draws:
            for method in methods:
                for mid in METRICS:
                    ex = exact[p]
                    rerun = "—"
                    if p == "imperfect" and (k, "rerun", "L", "L", method, mid) in cells:
                        rerun = f"{cov((k, 'rerun', 'L', 'L', method, mid))} ({exact['rerun']['L'][mid]:.4f})"
                    lines.append(
                        f"| {p} | {k} | {method} | {mid} | {ex['L'][mid]:.4f} | {ex['T'][mid]:.4f} | "
                        f"{ex['T_full'][mid]:.4f} | {cov((k, p, 'L', 'L', method, mid))} | "
                        f"{cov((k, p, 'T', 'T', method, mid))} | {cov((k, p, 'T', 'T_full', method, mid))} | "
                        f"{cov((k, p, 'T_all', 'T', method, mid))} | {cov((k, p, 'T_all', 'T_full', method, mid))} | "
                        f"{rerun} |")
                    if p == "imperfect":
                        base = cells.get((k, p, "L", "L", method, mid))
                        for name, key in (("T - L", (k, p, "T", "T", method, mid)),
                                          ("2nd run - L", (k, "rerun", "L", "L", method, mid))):
                            if base is not None and key in cells:
                                gaps.setdefault(name, []).append(cells[key]["coverage"] - base["coverage"])
    for name, values in gaps.items():
        a = 100 * np.asarray(values)
        lines.append(f"\n{name} (imperfect, {len(a)} cells): mean {a.mean():+.2f}, mean |.| {np.abs(a).mean():.2f}, "
                     f"range {a.min():+.1f} to {a.max():+.1f} points")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--draws", type=int, nargs="+", default=[200, 800])
    parser.add_argument("--records", type=int, default=30_000)
    parser.add_argument("--late", type=float, default=0.2, help="share of T's records added after labelling")
    parser.add_argument("--new-entities", type=float, default=0.05,
                        help="share of T's records that belong to entities wholly added after labelling")
    parser.add_argument("--misplaced", type=float, default=0.06, help="share of records misplaced (imperfect)")
    parser.add_argument("--n-boot", type=int, default=DEFAULT_N_BOOT,
                        help="resamples of the recommended (BCa) interval (default: erx.estimate's)")
    parser.add_argument("--seed", type=int, default=27)
    parser.add_argument("--predictions", nargs="+", choices=PREDICTIONS, default=list(PREDICTIONS),
                        help="which predictions to evaluate (the draws do not depend on it: same seed, same "
                             "benchmarks)")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--report", type=Path, nargs="+", default=None, help="print the table of result files")
    args = parser.parse_args()
    if args.report:
        print(report([json.loads(path.read_text()) for path in args.report]))
        return
    result = run(args)
    print(report([result]))
    out = args.out or BENCH / "results" / f"coverage-later-release-{_dt.date.today().isoformat()}.json"
    out.parent.mkdir(exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(result, indent=1))
    os.replace(tmp, out)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
