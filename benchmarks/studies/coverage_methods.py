"""Coverage of every interval method for estimates, subgroup gaps and paired changes (issue 21).

Not a timed test: a simulation study. Populations with the whole true clustering known:

* ``rldata``: RLdata10000 (../shared/data/rldata, 10,000 records, 9,000 entities) with the
  paper's all-but-one prediction (two records linked when they agree on at least four of
  fname_c1, lname_c1, by, bm, bd; transitive closure): pairwise precision 0.914, recall 0.969.
* ``heavy``: a synthetic release of ``benchmarks/synthetic.py`` (power-law cluster sizes,
  exponent 2, up to 3,000 records; 20,000 records, 3 % misplaced), heavy-tailed: under the
  size-proportional design one draw in seven is the largest cluster.

Each replication draws ``n`` clusters with replacement by the design (``cluster_size``:
records uniformly, each bringing its true cluster, SPEC 1; ``uniform``: clusters
uniformly) and evaluates, with every interval method of the statistics layer
(``linearization``, ``logit``, ``bootstrap`` = percentile, ``bca``, ``studentized``; the
bootstraps on one set of ``--n-boot`` resamples; ``recommended`` is a copy of the method
``ci_method="recommended"`` takes for the metric and quantity):

* ``singles``: every metric (``er_expectations.stats.metrics.estimate_methods``);
* ``groups``: subgroup estimates, their comparison (the rest) and the gap
  (``er_expectations.stats.subgroups.estimate_groups_methods``) for three groupings of
  the entities: ``null`` (within each stratum of entities with the same error pattern —
  same size and same pieces (|c ∩ ĉ|, |ĉ|) — alternately in the group and in the rest,
  the odd one out of unknown membership, so that every true gap is exactly 0: for the
  false-positive rate; on the heavy population the odd ones out are the largest clusters,
  whose patterns are unique), ``random`` (unrelated to errors: each entity in the group
  with probability 0.5, all known) and ``correlated`` (an entity whose cluster has an
  error is in the group with probability 0.5, others with 0.15);
* ``changes``: the paired change to a second prediction
  (``er_expectations.stats.drift.paired_changes``): ``common`` (10 % of the predicted
  clusters of 2+ records lose one record to a cluster of its own, 0.5 % of the records
  move to the predicted cluster of another random record) and ``few`` (4 correctly
  linked pairs of records split: the change comes from 4 pairs).

True values are computed independently of the estimator: ``erx.exact_metrics`` for whole
populations and changes, and pair / record counting in pandas for the groups. Reported per
cell (population × design × n × part × quantity × method): two-sided coverage, the share
of intervals entirely below the truth (``below``: upper limit < truth) and entirely above
it (``above``: lower limit > truth), each with its Monte Carlo standard error
√(p(1 − p)/R), the mean width, the share of replications with an interval and with a
zero-event interval, the number of zero-width intervals; for the null grouping the false-positive rate of the disparity test
(the rows tested, p < 1 − level, which is the interval excluding 0).

Uses only the public API (``import er_expectations as erx`` and ``er_expectations.stats``)
plus ``benchmarks/synthetic.py`` for the heavy-tailed population.

    .venv/bin/python benchmarks/studies/coverage_methods.py --reps 2000                        # everything (hours)
    .venv/bin/python benchmarks/studies/coverage_methods.py --populations rldata --designs cluster_size \\
        --sizes 800 --parts singles --reps 2000                                       # one cell
    .venv/bin/python benchmarks/studies/coverage_methods.py --report results/coverage-methods-*.json   # tables

Writes ``benchmarks/results/coverage-methods-<date>-<tag>.json``.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import itertools
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

HERE = Path(__file__).resolve().parent  # benchmarks/studies/
BENCH = HERE.parent  # benchmarks/: synthetic.py and results/
sys.path[:0] = [str(HERE), str(BENCH)]

import er_expectations as erx  # noqa: E402
from er_expectations.stats import (  # noqa: E402
    GAP_METHODS,
    INTERVAL_METHODS,
    RECOMMENDED,
    RECOMMENDED_CHANGE_METHOD,
    RECOMMENDED_CI_METHOD,
    RECOMMENDED_GAP_METHOD,
    BenchmarkSample,
    Membership,
    estimate_groups_methods,
    estimate_methods,
    paired_changes,
)
from er_expectations.stats.subgroups import DEFAULT_SUBGROUP_METRICS  # noqa: E402

DATA = BENCH.parent.parent / "shared" / "data"
SINGLE_METRICS = ("pairwise_precision", "pairwise_recall", "pairwise_f", "cluster_precision", "cluster_recall",
                  "cluster_f", "b_cubed_precision", "b_cubed_recall", "b_cubed_f", "homogeneity",
                  "average_cluster_size", "matching_rate")
GROUP_METRICS = DEFAULT_SUBGROUP_METRICS
CHANGE_METRICS = ("pairwise_precision", "pairwise_recall", "pairwise_f", "cluster_recall", "b_cubed_precision",
                  "b_cubed_recall", "b_cubed_f", "homogeneity")
FIELDS = ("fname_c1", "lname_c1", "by", "bm", "bd")


# -- populations ---------------------------------------------------------------------------------


def rldata_frame(folder: Path = DATA / "rldata") -> pd.DataFrame:
    """RLdata10000 with ``truth`` and ``pred``: linked when ≥ 4 of the 5 fields agree
    (as text, missing = empty), connected components (written here, not imported)."""
    records = pd.read_csv(folder / "RLdata10000.tsv", sep="\t", keep_default_na=False)
    truth = pd.read_csv(folder / "identity.RLdata10000.tsv", sep="\t").iloc[:, 0].to_numpy()
    text = records[list(FIELDS)].astype("string").fillna("")
    n = len(records)
    parent = np.arange(n)

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for subset in itertools.combinations(FIELDS, 4):
        codes = pd.factorize(pd.MultiIndex.from_frame(text[list(subset)]))[0]
        order = np.argsort(codes, kind="stable")
        same = np.flatnonzero(codes[order][1:] == codes[order][:-1])
        for j in same:
            a, b = find(int(order[j])), find(int(order[j + 1]))
            if a != b:
                parent[max(a, b)] = min(a, b)
    pred = np.array([find(i) for i in range(n)])
    return pd.DataFrame({"truth": truth, "pred": pred})


def heavy_frame(seed: int = 7, n_records: int = 20_000) -> pd.DataFrame:
    from synthetic import make_release

    df = make_release(n_records, seed=seed, misplaced=0.03, n_draws=1)
    return pd.DataFrame({"truth": df["true_id"].to_numpy(), "pred": df["inventor_id"].to_numpy()})


def second_predictions(df: pd.DataFrame, seed: int) -> dict[str, np.ndarray]:
    """The two second releases of the change study (see the module docstring)."""
    rng = np.random.default_rng(seed)
    pred = pd.factorize(df["pred"])[0].astype(np.int64)
    truth = pd.factorize(df["truth"])[0]
    n = pred.size
    size = np.bincount(pred)
    # common: one record of 10 % of the predicted clusters of 2+ records goes alone; 0.5 % move
    common = pred.copy()
    multi = np.flatnonzero(size >= 2)
    chosen = rng.choice(multi, size=max(1, len(multi) // 10), replace=False)
    first = pd.Series(np.arange(n)).groupby(pred).first().to_numpy()  # first record of each cluster
    next_id = int(pred.max()) + 1
    common[first[chosen]] = np.arange(next_id, next_id + chosen.size)
    movers = rng.choice(n, size=max(1, n // 200), replace=False)
    common[movers] = common[rng.integers(0, n, movers.size)]
    # few: 4 predicted clusters of exactly 2 records that are a true pair are split
    pair_clusters = [c for c in np.flatnonzero(size == 2)]
    members = pd.Series(np.arange(n)).groupby(pred).agg(list)
    good = [c for c in pair_clusters if truth[members[c][0]] == truth[members[c][1]]
            and (truth == truth[members[c][0]]).sum() == 2]
    few = pred.copy()
    for j, c in enumerate(rng.choice(good, size=4, replace=False)):
        few[members[c][1]] = int(pred.max()) + 1 + j
    return {"common": common, "few": few}


class Population:
    """The whole true clustering of one prediction as a per-cluster table (draws = 1)."""

    def __init__(self, truth: np.ndarray, pred: np.ndarray, *, labels: np.ndarray | None = None) -> None:
        t_codes, t_uniques = pd.factorize(pd.Series(truth))
        if labels is not None:  # the same cluster order as another population of the same truth
            position = {lab: i for i, lab in enumerate(labels.tolist())}
            t_codes = np.array([position[x] for x in t_uniques.tolist()])[t_codes]
            t_uniques = labels
        p_codes = pd.factorize(pd.Series(pred))[0]
        self.labels = np.asarray(t_uniques)
        k = self.labels.size
        self.size = np.bincount(t_codes, minlength=k)
        m = np.bincount(p_codes)
        cells = pd.DataFrame({"t": t_codes, "p": p_codes}).value_counts().reset_index(name="n")
        cells = cells.sort_values(["t", "p"], kind="stable")
        self.piece_cluster = cells["t"].to_numpy(np.int64)
        self.piece_n = cells["n"].to_numpy(np.int64)
        self.piece_label = cells["p"].to_numpy(np.int64)
        self.piece_m = m[self.piece_label]
        self.n_records = int(truth.size)
        self.n_clusters = int(m.size)

    def sample(self, counts: np.ndarray, design: str) -> BenchmarkSample:
        """The clusters drawn ``counts`` times (> 0), weighted for ``design`` (SPEC 2.1)."""
        keep = np.flatnonzero(counts)
        new_index = np.full(self.labels.size, -1, dtype=np.int64)
        new_index[keep] = np.arange(keep.size)
        pieces = new_index[self.piece_cluster] >= 0
        size = self.size[keep]
        weight = 1.0 / size if design == "cluster_size" else np.ones(keep.size)
        return BenchmarkSample(
            labels=self.labels[keep], size=size, weight=weight, draws=counts[keep],
            piece_cluster=new_index[self.piece_cluster[pieces]], piece_n=self.piece_n[pieces],
            piece_m=self.piece_m[pieces], piece_label=self.piece_label[pieces], n_records=self.n_records,
            n_clusters=self.n_clusters, design=design)


def cluster_values(pop: Population) -> pd.DataFrame:
    """Per true cluster, the counts the metrics are made of (pair and record counting)."""
    n = pop.piece_n.astype(float)
    m = pop.piece_m.astype(float)
    c = pop.piece_cluster
    k = pop.labels.size
    s = pop.size.astype(float)

    def per_cluster(x: np.ndarray) -> np.ndarray:
        return np.bincount(c, weights=x, minlength=k)

    pieces = np.bincount(c, minlength=k)
    return pd.DataFrame({
        "s": s,
        "tp": per_cluster(n * (n - 1)),  # ordered pairs of the cluster linked by the prediction
        "pp": per_cluster(n * (m - 1)),  # ordered predicted pairs with a record of the cluster
        "tt": s * (s - 1),
        "exact": ((pieces == 1) & (per_cluster(m) == s)).astype(float),
        "bp": per_cluster(n * n / m) / s,  # mean over the records of |ĉ ∩ c|/|ĉ|
        "br": per_cluster(n * n) / (s * s),  # mean over the records of |ĉ ∩ c|/|c|
        "hl": per_cluster(n * np.log(n / m)),  # Σ_r log(|ĉ(r) ∩ c|/|ĉ(r)|)
        "hs": s * np.log(s / pop.n_records),
    })


def group_truth(v: pd.DataFrame, member: np.ndarray) -> dict[str, float]:
    """The metrics of the entities with ``member`` (SPEC 8: θ_G = E[f·1_G]/E[g·1_G] over the
    population, i.e. the sums over the group's clusters), counted directly."""
    g = v[member]
    tp, pp, tt = g["tp"].sum(), g["pp"].sum(), g["tt"].sum()
    bp, br = g["bp"].mean(), g["br"].mean()
    with np.errstate(divide="ignore", invalid="ignore"):
        return {
            "pairwise_precision": tp / pp, "pairwise_recall": tp / tt, "pairwise_f": 2 * tp / (pp + tt),
            "cluster_recall": g["exact"].mean(), "b_cubed_precision": bp, "b_cubed_recall": br,
            "b_cubed_f": 2 * bp * br / (bp + br), "homogeneity": 1.0 - g["hl"].sum() / g["hs"].sum(),
        }


def groupings(pop: Population, values: pd.DataFrame, seed: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """(member, known) per true cluster for the ``null``, ``random`` and ``correlated`` groupings."""
    rng = np.random.default_rng(seed)
    k = pop.labels.size
    order = np.argsort(pop.piece_cluster, kind="stable")
    sig = pd.Series([tuple(x) for x in np.column_stack([pop.piece_n, pop.piece_m])[order].tolist()])
    signature = sig.groupby(pop.piece_cluster[order]).agg(lambda x: tuple(sorted(x))).reindex(range(k))
    stratum = pd.factorize(signature)[0]
    perm = rng.permutation(k)
    rank = pd.Series(perm).groupby(stratum[perm]).cumcount().to_numpy()
    count = np.bincount(stratum)
    pos = np.empty(k, dtype=np.int64)
    pos[perm] = rank
    odd_out = (count[stratum] % 2 == 1) & (pos == count[stratum] - 1)
    null_member = (pos % 2 == 0) & ~odd_out
    error = values["exact"].to_numpy() == 0
    correlated = rng.random(k) < np.where(error, 0.5, 0.15)
    random = rng.random(k) < 0.5
    everyone = np.ones(k, dtype=bool)
    return {"null": (null_member, ~odd_out), "random": (random, everyone), "correlated": (correlated, everyone)}


def draw_counts(rng: np.random.Generator, pop: Population, design: str, n: int) -> np.ndarray:
    k = pop.labels.size
    if design == "cluster_size":
        end = np.cumsum(pop.size)
        drawn = np.searchsorted(end, rng.integers(0, int(end[-1]), n), side="right")
    else:
        drawn = rng.integers(0, k, n)
    return np.bincount(drawn, minlength=k)


def truth_of(df: pd.DataFrame, prediction: np.ndarray | None = None) -> dict[str, float]:
    frame = df if prediction is None else df.assign(pred=prediction)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = {k: float(v) for k, v in erx.exact_metrics(frame, prediction="pred", reference="truth").items()}
    sizes = frame.groupby("truth").size().to_numpy()
    out["average_cluster_size"] = float(sizes.mean())
    out["matching_rate"] = float(sizes[sizes > 1].sum() / sizes.sum())
    return out


# -- accumulation --------------------------------------------------------------------------------


class Tally:
    """Coverage counts of one quantity under one method."""

    __slots__ = ("n", "defined", "cover", "below", "above", "width", "zero_event", "zero_width")

    def __init__(self) -> None:
        self.n = self.defined = self.cover = self.below = self.above = self.zero_event = self.zero_width = 0
        self.width = 0.0

    def add(self, lo: float, hi: float, truth: float, zero_event: bool) -> None:
        self.n += 1
        if math.isnan(lo) or math.isnan(hi) or math.isnan(truth):
            return
        self.defined += 1
        self.cover += lo <= truth <= hi
        self.below += hi < truth
        self.above += lo > truth
        self.width += hi - lo
        self.zero_event += bool(zero_event)
        self.zero_width += hi <= lo

    def summary(self) -> dict:
        d = self.defined
        if d == 0:
            return {"reps": self.n, "defined": 0}

        def rate(x: int) -> dict:
            p = x / d
            return {"rate": round(p, 4), "mc_se": round(math.sqrt(p * (1 - p) / d), 4)}

        return {"reps": self.n, "defined": d, "coverage": rate(self.cover), "below": rate(self.below),
                "above": rate(self.above), "mean_width": round(self.width / d, 5),
                "zero_event": round(self.zero_event / d, 4), "zero_width": self.zero_width}


class Rate:
    """A share (false-positive rate) with its Monte Carlo SE."""

    __slots__ = ("n", "hits")

    def __init__(self) -> None:
        self.n = self.hits = 0

    def add(self, hit: bool) -> None:
        self.n += 1
        self.hits += bool(hit)

    def summary(self) -> dict:
        if not self.n:
            return {"tested": 0}
        p = self.hits / self.n
        return {"tested": self.n, "rate": round(p, 4), "mc_se": round(math.sqrt(p * (1 - p) / self.n), 4)}


def _tally(store: dict, *keys: str) -> Tally:
    node = store
    for key in keys[:-1]:
        node = node.setdefault(key, {})
    return node.setdefault(keys[-1], Tally())


def _summarise(node):
    if isinstance(node, (Tally, Rate)):
        return node.summary()
    return {k: _summarise(v) for k, v in node.items()}


# -- one cell ----------------------------------------------------------------------------------------


def run_cell(name: str, df: pd.DataFrame, design: str, size: int, *, reps: int, n_boot: int, level: float,
             seed: int, parts: tuple[str, ...], methods: tuple[str, ...],
             grouping_names: tuple[str, ...] = ("null", "random", "correlated")) -> dict:
    pop = Population(df["truth"].to_numpy(), df["pred"].to_numpy())
    values = cluster_values(pop)
    truth = truth_of(df)
    second = second_predictions(df, seed=seed + 1)
    pops2 = {v: Population(df["truth"].to_numpy(), p2, labels=pop.labels) for v, p2 in second.items()}
    truth2 = {v: truth_of(df, p2) for v, p2 in second.items()}
    change_truth = {v: {m: truth2[v][m] - truth[m] for m in CHANGE_METRICS} for v in second}
    grouping = {g: v for g, v in groupings(pop, values, seed=seed + 2).items() if g in grouping_names}
    g_truth = {}
    for gname, (member, known) in grouping.items():
        g_truth[gname] = {"group": group_truth(values, member & known),
                          "comparison": group_truth(values, ~member & known)}
        g_truth[gname]["gap"] = {m: g_truth[gname]["group"][m] - g_truth[gname]["comparison"][m]
                                 for m in GROUP_METRICS}
    rng = np.random.default_rng([seed, 0 if design == "cluster_size" else 1, size])
    tallies: dict = {}
    fpr: dict = {}
    seconds = dict.fromkeys(parts, 0.0)
    for _ in range(reps):
        counts = draw_counts(rng, pop, design, size)
        sample = pop.sample(counts, design)
        boot_seed = int(rng.integers(0, 2**31))
        if "singles" in parts:
            t0 = time.perf_counter()
            res = estimate_methods(sample, SINGLE_METRICS, methods=[m for m in methods if m in INTERVAL_METHODS],
                                   ci_level=level, n_boot=n_boot,
                                   seed=boot_seed)
            for method, by_metric in res.items():
                for m, e in by_metric.items():
                    _tally(tallies, "singles", m, method).add(e.ci_lower, e.ci_upper, truth[m],
                                                              e.interval == "zero_event")
            seconds["singles"] += time.perf_counter() - t0
        if "groups" in parts:
            t0 = time.perf_counter()
            for gname, (member, known) in grouping.items():
                keep = counts > 0
                membership = Membership(groups=("G",), pi=member[keep].astype(float)[:, None], known=known[keep])
                res = estimate_groups_methods(sample, membership, GROUP_METRICS, methods=methods, ci_level=level,
                                              compare_to="rest", min_draws=30, adjust="none", n_boot=n_boot,
                                              seed=boot_seed)
                for method, rows in res.items():
                    for row in rows:
                        m = row.metric
                        tt = g_truth[gname]
                        _tally(tallies, "groups", gname, m, "group", method).add(
                            row.estimate.ci_lower, row.estimate.ci_upper, tt["group"][m],
                            row.estimate.interval == "zero_event")
                        _tally(tallies, "groups", gname, m, "comparison", method).add(
                            row.comparison.ci_lower, row.comparison.ci_upper, tt["comparison"][m],
                            row.comparison.interval == "zero_event")
                        gap = row.disparity
                        _tally(tallies, "groups", gname, m, "gap", method).add(gap.ci_lower, gap.ci_upper,
                                                                               tt["gap"][m], gap.zero_event)
                        if gname == "null" and row.status == "ok":
                            node = fpr.setdefault(m, {})
                            node.setdefault(method, Rate()).add(row.p_value < 1.0 - level)
            seconds["groups"] += time.perf_counter() - t0
        if "changes" in parts:
            t0 = time.perf_counter()
            for variant, pop2 in pops2.items():
                res = paired_changes(pop2.sample(counts, design), sample, CHANGE_METRICS,
                                     methods=[m for m in methods if m in INTERVAL_METHODS],
                                     ci_level=level, n_boot=n_boot, seed=boot_seed)
                for m, by_method in res.items():
                    for method, ch in by_method.items():
                        c = ch.change
                        _tally(tallies, "changes", variant, m, method).add(c.ci_lower, c.ci_upper,
                                                                           change_truth[variant][m], c.zero_event)
            seconds["changes"] += time.perf_counter() - t0
    out = {"population": name, "design": design, "draws": size, "reps": reps, "n_boot": n_boot, "ci_level": level,
           "seed": seed, "seconds": {k: round(v, 1) for k, v in seconds.items()},
           "truth": {k: round(v, 6) for k, v in truth.items()}, "results": _summarise(tallies)}
    if "groups" in parts:
        out["group_truth"] = {g: {k: {m: round(float(x), 6) for m, x in d.items()} for k, d in v.items()}
                              for g, v in g_truth.items()}
        out["false_positive_rate"] = _summarise(fpr)
    if "changes" in parts:
        out["change_truth"] = {v: {m: round(x, 6) for m, x in d.items()} for v, d in change_truth.items()}
    return out


# -- report ------------------------------------------------------------------------------------------


def derive_recommended(cell: dict) -> dict:
    """Add (or replace) the ``recommended`` entries of a cell: a copy of the entry of the
    method that ``ci_method="recommended"`` uses for that metric and quantity
    (``RECOMMENDED_CI_METHOD`` for estimates, ``RECOMMENDED_GAP_METHOD`` for gaps and the
    false-positive rate, ``RECOMMENDED_CHANGE_METHOD`` for changes), so they are never
    computed twice."""
    def estimate_method(metric: str) -> str:
        return RECOMMENDED_CI_METHOD.get(metric, "linearization")

    def gap_method(metric: str) -> str:
        return RECOMMENDED_GAP_METHOD.get(metric, "linearization")

    def change_method(metric: str) -> str:
        return RECOMMENDED_CHANGE_METHOD.get(metric, "linearization")

    res = cell["results"]
    for m, by in res.get("singles", {}).items():
        by[RECOMMENDED] = by.get(estimate_method(m), {})
    for by_metric in res.get("groups", {}).values():
        for m, by_q in by_metric.items():
            for q, by in by_q.items():
                by[RECOMMENDED] = by.get(gap_method(m) if q == "gap" else estimate_method(m), {})
    for by_metric in res.get("changes", {}).values():
        for m, by in by_metric.items():
            by[RECOMMENDED] = by.get(change_method(m), {})
    for m, by in cell.get("false_positive_rate", {}).items():
        by[RECOMMENDED] = by.get(gap_method(m), {})
    return cell


def _cell(s: dict) -> str:
    if not s.get("defined"):
        return "—"
    c, b, a = s["coverage"], s["below"], s["above"]
    return f"{100 * c['rate']:.1f} ±{100 * c['mc_se']:.1f} ({100 * b['rate']:.1f}/{100 * a['rate']:.1f})"


def report(paths: list[str]) -> str:
    """Markdown tables from result files: coverage ±MC SE (below/above), in %."""
    cells = []
    for p in paths:
        data = json.loads(Path(p).read_text())
        cells += [derive_recommended(c) for c in data["cells"]]
    lines = []
    methods = [*INTERVAL_METHODS, *GAP_METHODS, RECOMMENDED]
    head = "| population | design | n | metric | " + " | ".join(methods) + " |"
    sep = "|" + " --- |" * 4 + " ---: |" * len(methods)
    singles = [c for c in cells if "singles" in c["results"]]
    if singles:
        lines += ["### Single estimates", "", head, sep]
        for c in singles:
            for m, by in c["results"]["singles"].items():
                lines.append(f"| {c['population']} | {c['design']} | {c['draws']} | {m} | "
                             + " | ".join(_cell(by.get(k, {})) for k in methods) + " |")
        lines.append("")
    groups = [c for c in cells if "groups" in c["results"]]
    if groups:
        lines += ["### Subgroups (group estimate, rest, gap)", "",
                  "| population | design | n | grouping | metric | quantity | " + " | ".join(methods) + " |",
                  "|" + " --- |" * 6 + " ---: |" * len(methods)]
        for c in groups:
            for g, by_metric in c["results"]["groups"].items():
                for m, by_q in by_metric.items():
                    for q, by in by_q.items():
                        lines.append(f"| {c['population']} | {c['design']} | {c['draws']} | {g} | {m} | {q} | "
                                     + " | ".join(_cell(by.get(k, {})) for k in methods) + " |")
        lines += ["", "False-positive rate of the disparity test under the null grouping (level 5 %):", "",
                  "| population | design | n | metric | " + " | ".join(methods) + " |", sep]
        for c in groups:
            for m, by in c.get("false_positive_rate", {}).items():
                vals = []
                for k in methods:
                    s = by.get(k, {})
                    vals.append(f"{100 * s['rate']:.1f} ±{100 * s['mc_se']:.1f} ({s['tested']})" if s.get("tested")
                                else "—")
                lines.append(f"| {c['population']} | {c['design']} | {c['draws']} | {m} | " + " | ".join(vals) + " |")
        lines.append("")
    changes = [c for c in cells if "changes" in c["results"]]
    if changes:
        lines += ["### Paired changes", "",
                  "| population | design | n | second release | metric | " + " | ".join(methods) + " |",
                  "|" + " --- |" * 5 + " ---: |" * len(methods)]
        for c in changes:
            for v, by_metric in c["results"]["changes"].items():
                for m, by in by_metric.items():
                    lines.append(f"| {c['population']} | {c['design']} | {c['draws']} | {v} | {m} | "
                                 + " | ".join(_cell(by.get(k, {})) for k in methods) + " |")
        lines.append("")
    return "\n".join(lines)


def _commit() -> str | None:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=2000, help="replications per cell (default 2000)")
    ap.add_argument("--n-boot", type=int, default=1000, help="bootstrap resamples per replication (default 1000)")
    ap.add_argument("--sizes", type=int, nargs="+", default=[200, 400, 800])
    ap.add_argument("--designs", nargs="+", default=["cluster_size", "uniform"], choices=["cluster_size", "uniform"])
    ap.add_argument("--populations", nargs="+", default=["rldata", "heavy"], choices=["rldata", "heavy"])
    ap.add_argument("--parts", nargs="+", default=["singles", "groups", "changes"],
                    choices=["singles", "groups", "changes"])
    ap.add_argument("--methods", nargs="+", default=[*INTERVAL_METHODS, *GAP_METHODS],
                    choices=[*INTERVAL_METHODS, *GAP_METHODS],
                    help="interval methods (the recommended one is derived from them; bca_mover: gaps only)")
    ap.add_argument("--groupings", nargs="+", default=["null", "random", "correlated"],
                    choices=["null", "random", "correlated"])
    ap.add_argument("--level", type=float, default=0.95)
    ap.add_argument("--seed", type=int, default=20261127)
    ap.add_argument("--tag", default="", help="suffix of the result file name")
    ap.add_argument("--out", default=None)
    ap.add_argument("--report", nargs="+", metavar="JSON", help="print markdown tables of result files and exit")
    args = ap.parse_args(argv)
    if args.report:
        print(report(args.report))
        return 0
    frames = {}
    cells = []
    started = time.perf_counter()
    for name in args.populations:
        frames[name] = rldata_frame() if name == "rldata" else heavy_frame()
        for design in args.designs:
            for size in args.sizes:
                t0 = time.perf_counter()
                cell = run_cell(name, frames[name], design, size, reps=args.reps, n_boot=args.n_boot,
                                level=args.level, seed=args.seed, parts=tuple(args.parts),
                                methods=tuple(args.methods), grouping_names=tuple(args.groupings))
                cells.append(derive_recommended(cell))
                print(f"{name} {design} n={size}: {args.reps} replications in {time.perf_counter() - t0:.0f} s "
                      f"({cell['seconds']})", flush=True)
    out = {"created": _dt.datetime.now().isoformat(timespec="seconds"), "commit": _commit(),
           "argv": sys.argv[1:], "numpy": np.__version__, "pandas": pd.__version__,
           "load_average": list(os.getloadavg()), "seconds": round(time.perf_counter() - started, 1),
           "cells": cells}
    tag = f"-{args.tag}" if args.tag else ""
    path = Path(args.out) if args.out else BENCH / "results" / f"coverage-methods-{_dt.date.today().isoformat()}{tag}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(out, separators=(",", ":")) + "\n")  # compact: a few hundred kB per run
    tmp.replace(path)
    print(report([str(path)]))
    print(f"written {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
