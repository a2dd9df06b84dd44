"""Per-sampled-cluster group attributes for subgroup estimates (SPEC 8), pandas engine.

A subgroup is a set of entities, so a group attribute belongs to the true cluster: every
benchmark record of a cluster must carry the same value. This module reads such a column
on the benchmark records of the release and returns one value per sampled cluster, in the
order of :attr:`BenchmarkSample.labels`.
"""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np
import pandas as pd

from ..errors import InputError
from ..stats import BenchmarkSample
from .pandas import PandasRelease, _check_column

__all__ = ["benchmark_rows", "cluster_attribute"]


def benchmark_rows(rel: PandasRelease, sample: BenchmarkSample, reference: Hashable) -> tuple[np.ndarray, np.ndarray]:
    """Positions of the benchmark records of the release and the index of their sampled cluster.

    The clusters are those of ``sample`` (built by ``rel.benchmark_sample(reference=...)``),
    so the second array indexes ``sample.labels``.
    """
    ref = rel.df[reference]
    rows = np.flatnonzero(ref.notna().to_numpy() & (rel.pred_codes >= 0))
    where = pd.Index(sample.labels).get_indexer(ref.iloc[rows])
    if (where < 0).any():  # the sample was built from another reference column or table
        raise InputError(f"reference column {reference!r} does not match the benchmark sample's clusters")
    return rows, where


def _show(value: object) -> str:
    return "null" if value is None or (isinstance(value, float) and np.isnan(value)) or value is pd.NA else repr(value)


def cluster_attribute(rel: PandasRelease, sample: BenchmarkSample, *, reference: Hashable, column: Hashable,
                      parameter: str = "group_column") -> np.ndarray:
    """The value of ``column`` for every sampled cluster (object array; None when null).

    Raises :class:`InputError` naming the cluster and two of its values when the column
    varies within a true cluster (a null next to a value counts as varying).
    """
    _check_column(rel.df, column, parameter)
    rows, where = benchmark_rows(rel, sample, reference)
    values = rel.df[column].iloc[rows]
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    codes = np.asarray(codes, dtype=np.int64)
    k = sample.labels.shape[0]
    lo = np.full(k, np.iinfo(np.int64).max)
    hi = np.full(k, np.iinfo(np.int64).min)
    np.minimum.at(lo, where, codes)
    np.maximum.at(hi, where, codes)
    varying = lo != hi
    if varying.any():
        i = int(np.flatnonzero(varying)[0])
        a = uniques[lo[i]] if lo[i] >= 0 else None
        b = uniques[hi[i]] if hi[i] >= 0 else None
        raise InputError(
            f"{parameter}={column!r} varies within benchmark cluster {sample.labels[i]!r} (values {_show(a)} and "
            f"{_show(b)}); a group is a set of entities, so every record of a true cluster needs the same value. "
            f"Fix the column (e.g. fill it from the cluster's other records), or use an entity-level attribute"
        )
    out = np.empty(k, dtype=object)
    out[:] = [uniques[c] if c >= 0 else None for c in lo]
    return out
