"""The power of the slice search on a population with known truth (SPEC 12.2 "Power"; issue 28):
``erx.simulate(..., slice_power=True)`` and ``er-expectations simulate --slice-power``.

For every design and number of draws, ``reps`` benchmarks are drawn from the population exactly
as :func:`~er_expectations.analysis.planning.simulate` draws them; in each, a slice is planted
(:mod:`er_expectations.stats.slice_power`: every drawn entity joins it with chance ``share``, the
slice's error chance is ``lift`` times the rest's, the population's error rate kept) and the
honest search of ``erx.find_slices`` (:func:`~er_expectations.stats.slices.search_slices`, its
default options) runs on the derived feature ``cluster_size`` and the planted membership. The
share of benchmarks in which it reports a significant slice made mostly of the planted entities
is the power, with its Monte Carlo standard error.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from er_expectations.core.errors import InputError
from er_expectations.stats import BenchmarkSample
from er_expectations.stats.slice_power import check_power_options, planted_rates, replicate_found
from er_expectations.stats.slices import Features, check_metric, minimum_draws
from er_expectations.stats.subgroups import DEFAULT_MIN_DRAWS

__all__ = ["SLICE_POWER_COLUMNS", "population_slice_power"]

#: Columns of the slice-power table (``attrs["slice_power"]`` of ``erx.simulate``).
SLICE_POWER_COLUMNS = ("design", "size", "metric", "share", "lift", "base_rate", "slice_rate", "rest_rate", "reps",
                       "found", "power", "mc_se", "note")


def population_slice_power(sample: BenchmarkSample, y: np.ndarray, draw: Any, *, designs: Sequence[str],
                           sizes: Sequence[int], share: float, lift: float, reps: int, seed: int,
                           weights: dict[str, np.ndarray], metric: str = "EI") -> pd.DataFrame:
    """The power table: one row per (design, size).

    ``sample`` is the population's per-true-cluster table, ``y`` the metric of every true
    cluster (its error rate, the share of entities with y > 0, is the truth the slice keeps),
    ``draw(rng, design, size)`` the cluster indices of one benchmark, ``weights[design]`` the
    weight w_c each design gives (SPEC 2.1).
    """
    share, lift, reps = check_power_options(share, lift, reps)
    metric = check_metric(metric, parameter="slice_metric")
    if metric == "SDE":
        raise InputError("slice_metric='SDE': the power is for a rate of errors; SDE is signed. Use EI, OCE, UCE, "
                         "ROCE or RUCE")
    y = np.asarray(y, dtype=np.float64)
    err = y > 0
    base = float(err.mean()) if err.size else math.nan
    pool = y[err]
    r_s, r_r, note = planted_rates(base, share, lift)
    options = {"metric": metric, "min_draws": DEFAULT_MIN_DRAWS}
    rows = []
    for design in designs:
        for size in sizes:
            row: dict[str, Any] = {"design": design, "size": int(size), "metric": metric, "share": share, "lift": lift,
                                   "base_rate": base, "slice_rate": r_s, "rest_rate": r_r, "reps": reps, "found": 0,
                                   "power": math.nan, "mc_se": math.nan, "note": note}
            need = minimum_draws(DEFAULT_MIN_DRAWS, 0.5)
            if not note and size < need:
                row["note"] = f"{size} draws are too few to split (the search needs at least {need})"
            if not row["note"]:
                rng = np.random.default_rng([seed, 12, int(size), list(weights).index(design)])
                found = 0
                for _ in range(reps):
                    idx = draw(rng, design, int(size))
                    labels, counts = np.unique(idx, return_counts=True)
                    feats = Features(("cluster_size",), (True,), (sample.size[labels].astype(np.float64),), ((),))
                    found += replicate_found(rng, weights[design][labels], counts.astype(np.int64), labels, feats,
                                             pool, share=share, slice_rate=r_s, rest_rate=r_r, options=options)
                p = found / reps
                row.update(found=found, power=p, mc_se=math.sqrt(p * (1 - p) / reps))
            rows.append(row)
    return pd.DataFrame(rows, columns=list(SLICE_POWER_COLUMNS))
