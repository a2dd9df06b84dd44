"""Per-sampled-cluster group attributes for subgroup estimates (SPEC 8), any engine.

A subgroup is a set of entities, so a group attribute belongs to the true cluster: every
benchmark record of a cluster must carry the same value. The engines hand over the
benchmark records (``benchmark_rows`` of a pandas, SQL or Spark release: a few thousand
rows); this module turns a column of them into one value per sampled cluster, in the order
of :attr:`BenchmarkSample.labels`.
"""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np
import pandas as pd

from er_expectations.core.errors import InputError

__all__ = ["cluster_attribute"]


def _show(value: object) -> str:
    return "null" if value is None or (isinstance(value, float) and np.isnan(value)) or value is pd.NA else repr(value)


def cluster_attribute(rows: pd.DataFrame, labels: np.ndarray, *, reference: Hashable, column: Hashable,
                      parameter: str = "group_column") -> np.ndarray:
    """The value of ``column`` for every sampled cluster ``labels`` (object array; None when null).

    ``rows`` are the benchmark records (``benchmark_rows`` of a release: reference and
    column); records of clusters outside the sample are ignored. Raises
    :class:`InputError` naming the cluster and two of its values when the column varies
    within a true cluster (a null next to a value counts as varying).
    """
    where = pd.Index(labels).get_indexer(rows[reference])
    keep = where >= 0
    where = where[keep]
    values = rows[column][keep]
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    codes = np.asarray(codes, dtype=np.int64)
    k = labels.shape[0]
    lo = np.full(k, np.iinfo(np.int64).max)
    hi = np.full(k, np.iinfo(np.int64).min)
    np.minimum.at(lo, where, codes)
    np.maximum.at(hi, where, codes)
    varying = (lo != hi) & (hi > np.iinfo(np.int64).min)
    if varying.any():
        i = int(np.flatnonzero(varying)[0])
        a = uniques[lo[i]] if lo[i] >= 0 else None
        b = uniques[hi[i]] if hi[i] >= 0 else None
        raise InputError(
            f"{parameter}={column!r} varies within benchmark cluster {labels[i]!r} (values {_show(a)} and "
            f"{_show(b)}); a group is a set of entities, so every record of a true cluster needs the same value. "
            f"Fix the column (e.g. fill it from the cluster's other records), or use an entity-level attribute"
        )
    out = np.empty(k, dtype=object)
    out[:] = [uniques[c] if 0 <= c < len(uniques) else None for c in lo]
    return out
