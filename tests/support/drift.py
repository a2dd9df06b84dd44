"""The drift cases several test folders run (SPEC 10): a release and its baseline as two
columns of one frame (:func:`drift_frame`, with a benchmark and names; :func:`frame` and
:func:`shaped_frame`, current ``pred`` and baseline ``base`` with ids from a hostile alphabet)
and every drift check of the three expectations (:func:`drift_suite`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from er_expectations.gx.expectations import (
    ExpectEstimateChangeToBeBelow,
    ExpectReleaseAgreementToBeBetween,
    ExpectStatisticChangeToBeBelow,
)


def drift_frame(seed: int, *, n: int = 500, ids: str = "str") -> pd.DataFrame:
    """A baseline release and a current one derived from it (merges, splits, moves), nulls on
    both sides, a benchmark column and names; text or integer cluster ids."""
    rng = np.random.default_rng(seed)
    sizes = rng.zipf(2.0, size=n).clip(max=25)
    truth = np.repeat(np.arange(sizes.size), sizes)[:n]
    base = np.where(rng.random(n) < 0.92, truth, rng.integers(0, truth.max() + 1, n))
    merge = rng.integers(0, truth.max() + 1, truth.max() + 1)
    cur = np.where(rng.random(n) < 0.15, merge[base], base)
    cur = np.where(rng.random(n) < 0.08, cur + 10_000, cur)  # split off
    base_null = rng.random(n) < 0.1
    cur_null = rng.random(n) < 0.1
    sampled = rng.choice(np.unique(truth), size=max(5, truth.max() // 5), replace=False)
    if ids == "str":
        cur_col = pd.Series([f"c{x}" for x in cur], dtype=object).where(~cur_null, None)
        base_col = pd.Series([f"b{x}" for x in base], dtype=object).where(~base_null, None)
        ref_col = pd.Series([f"t{x}" for x in truth], dtype=object).where(np.isin(truth, sampled), None)
        record = [f"r{i}" for i in range(n)]
    else:
        cur_col = pd.Series(cur, dtype="Int64").where(~cur_null, pd.NA)
        base_col = pd.Series(base + 7, dtype="Int64").where(~base_null, pd.NA)
        ref_col = pd.Series(truth, dtype="Int64").where(np.isin(truth, sampled), pd.NA)
        record = np.arange(n)
    names = pd.Series([f"name{k % 40}" for k in truth], dtype=object).where(rng.random(n) > 0.05, None)
    return pd.DataFrame({"record": record, "pred": cur_col, "pred__baseline": base_col,
                         "pred__baseline__release": "2020-06-30", "ref": ref_col, "name": names})


def drift_suite(*, pred: str = "pred", record: str | None = "record", ref: str = "ref", name: str = "name",
                baseline_column: str | None = None, strict: bool = True, short: bool = False) -> list:
    """Every drift check; ``strict``: thresholds that fail, so that the diff is computed too;
    ``short``: one check of each kind (the hostile cases, to keep Spark's share short)."""
    common = {"prediction_column": pred, "record_id_column": record, "diff_examples": 3, "seed": 5}
    if baseline_column is not None:
        common["baseline_column"] = baseline_column
    rel = {"max_relative_change": 0.0 if strict else 10.0}
    out = [ExpectStatisticChangeToBeBelow(**common, statistic=s, **rel)
           for s in ("average_cluster_size", "n_clusters", "matching_rate")]
    out += [ExpectStatisticChangeToBeBelow(**common, statistic="hill_number", q=q, **rel) for q in (0, 2, "inf")]
    out += [ExpectStatisticChangeToBeBelow(**common, statistic=s, name_column=name, **rel)
            for s in ("homonymy_rate", "name_variation_rate")]
    out += [ExpectReleaseAgreementToBeBetween(**common, metric=m, min_value=0.999 if strict else 0.0)
            for m in ("pairwise_precision", "pairwise_f", "cluster_recall", "b_cubed_f", "homogeneity")]
    out += [ExpectEstimateChangeToBeBelow(**common, reference_column=ref, metric=m, max_change=0.001 if strict else 1.0)
            for m in ("pairwise_recall", "b_cubed_precision")]
    out += [ExpectEstimateChangeToBeBelow(**common, reference_column=ref, metric="pairwise_precision",
                                          max_change=0.001, weights="uniform", ci_level=0.8)]
    if short:
        keep = {("statistic", "average_cluster_size"), ("statistic", "homonymy_rate"), ("metric", "b_cubed_f"),
                ("metric", "pairwise_recall")}
        out = [e for e in out if (("statistic", getattr(e, "statistic", None)) in keep
                                  or ("metric", getattr(e, "metric", None)) in keep)]
    return out


#: Cluster ids that a locale (or case-insensitive) collation orders differently from Python.
HOSTILE = ["a", "A", "b", "B", "é", "e", "E", "É", "z", "Z", "ä", "1", "10", "9", "_x", " x", "x y", "aB", "Ab",
           "ß", "ss", "Ω", "日本", "a-b", "a_b"]


def frame(cur: list, base: list, names: list | None = None, *, ids: str = "str") -> pd.DataFrame:
    n = len(cur)
    if ids == "int":
        cur_col, base_col = pd.Series(cur, dtype="Int64"), pd.Series(base, dtype="Int64")
    else:
        cur_col, base_col = pd.Series(cur, dtype=object), pd.Series(base, dtype=object)
    names = names if names is not None else [f"n{i % 3}" for i in range(n)]
    return pd.DataFrame({"record": np.arange(n), "pred": cur_col, "base": base_col,
                         "name": pd.Series(names, dtype=object)})


def shaped_frame(seed: int, *, ids: str, n: int = 400) -> pd.DataFrame:
    """A baseline and a current release derived from it (merges, splits, moves), nulls, ids
    from the hostile alphabet (text) or spread integers."""
    rng = np.random.default_rng(seed)
    base = rng.permutation(np.arange(n) // 5)  # 80 clusters of 5
    cur = np.where(base % 4 < 2, 1000 + base // 4, base)  # clusters 4k and 4k + 1 merged
    cur = np.where((base % 5 == 2) & (rng.random(n) < 0.5), cur + 2000, cur)  # split
    cur = np.where(rng.random(n) < 0.03, rng.integers(0, 80, n), cur)  # a few records moved
    if ids == "str":
        def label(x):
            return HOSTILE[x % len(HOSTILE)] + str(x // len(HOSTILE))

        cur_l, base_l = [label(x) for x in cur], [label(x) for x in base]
    else:
        cur_l, base_l = [int(x) * 7 - 300 for x in cur], [int(x) * 13 - 5 for x in base]
    cur_l = [None if rng.random() < 0.08 else v for v in cur_l]
    base_l = [None if rng.random() < 0.08 else v for v in base_l]
    names = [None if rng.random() < 0.05 else HOSTILE[int(x) % 7] for x in base]
    return frame(cur_l, base_l, names, ids=ids)
