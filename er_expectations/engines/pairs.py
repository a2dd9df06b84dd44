"""Two releases of the same records side by side (SPEC 10): the common records and their cells.

A release pair holds the current release and its baseline, both columns of one record
table (one row per record; a null prediction means the record is outside that release).
The drift functions (:mod:`er_expectations.drift`) read only this interface:

* ``current`` / ``baseline``: the two releases (``n_records``, ``prediction``);
* ``n_common``: the number of records present in both;
* ``restricted()``: each release restricted to the common records (the fixed subset), with
  the ``clustering_table`` of its engine;
* ``cells()``: the contingency cells of the two clusterings on the common records;
* ``current_labels(codes)`` / ``baseline_labels(codes)``: the cluster ids of cluster codes,
  and ``current_order(codes)``, the order of codes by their cluster id (so that sampled
  examples do not depend on the row order of the table);
* ``name_counts(name, codes)``: (code, name, records) of the common records of some
  current clusters (the names shown in a diff);
* ``column_value(column)``: a non-null value of a column (the baseline release's label).

:class:`ReleasePair` is the pandas pair, derived from the two factorisations the releases
already hold. :class:`AggregatedPair` is what the SQL and Spark pairs share
(:mod:`.pairs_sql`, :mod:`.pairs_spark`): the database aggregates the cells (one row per
(current cluster, baseline cluster) with common records) and a few per-cluster counts;
nothing of the record table itself comes back.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError
from ..hints import did_you_mean
from .pandas import PandasRelease, contingency_from_codes

__all__ = ["AggregatedPair", "ReleasePair", "label_order"]


def _check_columns(current: Any, baseline: Any) -> None:
    if current.prediction == baseline.prediction:
        raise InputError(f"the release and its baseline are the same column {current.prediction!r}; "
                         "compare two different prediction columns")


def label_order(labels: Sequence) -> np.ndarray:
    """Positions of ``labels`` sorted by cluster id (ids of one column share one type; other
    ids sort by type name, then text)."""
    items = list(labels)
    try:
        return np.asarray(sorted(range(len(items)), key=items.__getitem__), dtype=np.int64)
    except TypeError:
        return np.asarray(sorted(range(len(items)), key=lambda i: (type(items[i]).__name__, str(items[i]))),
                          dtype=np.int64)


def _sorted_codes(values: list) -> tuple[np.ndarray, list]:
    """Codes of ``values`` numbering the distinct values in the order of :func:`label_order`."""
    column = np.empty(len(values), dtype=object)
    column[:] = values
    try:
        codes, uniques = pd.factorize(column, sort=True)  # the same order as sorted() on one type
        return np.asarray(codes, dtype=np.int64), list(uniques)
    except TypeError:  # ids of several types: label_order's fallback
        distinct = list(dict.fromkeys(values))
        distinct = [distinct[i] for i in label_order(distinct)]
        index = {v: i for i, v in enumerate(distinct)}
        return np.fromiter((index[v] for v in values), dtype=np.int64, count=len(values)), distinct


class ReleasePair:
    """The current release and its baseline on the same rows of a pandas frame; aggregates are
    computed once."""

    def __init__(self, current: PandasRelease, baseline: PandasRelease) -> None:
        if current.df is not baseline.df and len(current.df) != len(baseline.df):
            raise InputError("the two releases of a comparison must be columns of the same table")
        _check_columns(current, baseline)
        self.current = current
        self.baseline = baseline
        self._common: np.ndarray | None = None
        self._restricted: tuple[PandasRelease, PandasRelease] | None = None
        self._cells: tuple[np.ndarray, ...] | None = None

    @property
    def common(self) -> np.ndarray:
        """Rows present in both releases (non-null prediction in both)."""
        if self._common is None:
            self._common = (self.current.pred_codes >= 0) & (self.baseline.pred_codes >= 0)
        return self._common

    @property
    def n_common(self) -> int:
        return int(self.common.sum())

    def restricted(self) -> tuple[PandasRelease, PandasRelease]:
        """(current, baseline), each restricted to the common records (the fixed subset)."""
        if self._restricted is None:
            keep = self.common
            self._restricted = (self.current.restrict(keep), self.baseline.restrict(keep))
        return self._restricted

    def cells(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Contingency cells on the common records: (current index, baseline index, count,
        current codes, baseline codes) as :func:`~er_expectations.engines.pandas.contingency_from_codes`."""
        if self._cells is None:
            self._cells = contingency_from_codes(self.current.pred_codes, self.baseline.pred_codes)
        return self._cells  # type: ignore[return-value]

    def current_labels(self, codes: np.ndarray) -> np.ndarray:
        """The current release's cluster ids of prediction codes ``codes`` (object array)."""
        self.current.pred_codes  # noqa: B018 - codes the column if not done yet
        return np.asarray(self.current._pred_uniques.take(np.asarray(codes, dtype=np.int64)), dtype=object)  # noqa: SLF001

    def baseline_labels(self, codes: np.ndarray) -> np.ndarray:
        """The baseline release's cluster ids of prediction codes ``codes`` (object array)."""
        self.baseline.pred_codes  # noqa: B018
        return np.asarray(self.baseline._pred_uniques.take(np.asarray(codes, dtype=np.int64)), dtype=object)  # noqa: SLF001

    def current_order(self, codes: np.ndarray) -> np.ndarray:
        """Positions of ``codes`` sorted by their cluster id."""
        return label_order(self.current_labels(codes).tolist())

    def name_counts(self, name: Hashable, codes: Sequence[int]) -> list[tuple[int, str, int]]:
        """(current code, name as text, common records) of the current clusters ``codes``."""
        df = self.current.df
        if name not in df.columns:
            close = did_you_mean(str(name), [str(c) for c in df.columns])
            raise InputError(f"name={name!r}: no such column in the table" + (f"; {close}" if close else ""))
        pcodes = self.current.pred_codes
        rows = np.flatnonzero(self.common & np.isin(pcodes, np.asarray(codes, dtype=np.int64)))
        part = pd.DataFrame({"c": pcodes[rows], "name": df[name].iloc[rows].to_numpy(dtype=object)}).dropna()
        part["name"] = part["name"].astype(str)
        counts = part.groupby(["c", "name"], sort=False).size()
        return [(int(c), str(n), int(k)) for (c, n), k in counts.items()]

    def column_value(self, column: Hashable) -> object | None:
        """The first non-null value of ``column`` (None when the table has no such column)."""
        df = self.current.df
        if column not in df.columns:
            return None
        values = df[column]
        if len(values) and not pd.isna(values.iloc[0]):
            return values.iloc[0]
        values = values.dropna()
        return values.iloc[0] if len(values) else None


class AggregatedPair(ABC):
    """What the SQL and Spark pairs share: cells, labels and counts from aggregated rows.

    A subclass implements the queries: :meth:`_cell_rows` (current cluster, baseline
    cluster, common records) of every non-empty cell, :meth:`_count_common`,
    :meth:`_restrict` (the engine's releases on the common records), :meth:`_name_rows` and
    :meth:`column_value`. Cluster codes number the clusters with common records in the order
    of their ids (sorted here, not by the database, whose collation may differ from Python's).
    """

    current: Any
    baseline: Any

    def __init__(self, current: Any, baseline: Any) -> None:
        _check_columns(current, baseline)
        self.current = current
        self.baseline = baseline
        self._cells: tuple[np.ndarray, ...] | None = None
        self._labels: tuple[list, list] | None = None
        self._restricted: tuple[Any, Any] | None = None
        self._n_common: int | None = None

    @abstractmethod
    def _cell_rows(self) -> Sequence[Sequence]:
        """Rows (current cluster, baseline cluster, records) on the records in both releases."""

    @abstractmethod
    def _count_common(self) -> int:
        """The number of records in both releases (one count where the data lives)."""

    @abstractmethod
    def _restrict(self) -> tuple[Any, Any]:
        """The engine's (current, baseline) releases on the records in both releases."""

    @abstractmethod
    def _name_rows(self, name: str, labels: list) -> Sequence[Sequence]:
        """Rows (current cluster, name, records) of the common records of clusters ``labels``
        (null names left out)."""

    @abstractmethod
    def column_value(self, column: str) -> object | None:
        """A non-null value of ``column`` (None when the table has no such column)."""

    def restricted(self) -> tuple[Any, Any]:
        if self._restricted is None:
            self._restricted = self._restrict()
        return self._restricted

    def cells(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Contingency cells on the common records, as :meth:`ReleasePair.cells` (codes are
        the positions of the ids in sorted order)."""
        if self._cells is None:
            rows = self._cell_rows()
            a, cur = _sorted_codes([r[0] for r in rows])
            b, base = _sorted_codes([r[1] for r in rows])
            n = np.fromiter((int(r[2]) for r in rows), dtype=np.int64, count=len(rows))
            order = np.lexsort((b, a))
            self._labels = (cur, base)
            self._cells = (a[order], b[order], n[order], np.arange(len(cur), dtype=np.int64),
                           np.arange(len(base), dtype=np.int64))
        return self._cells  # type: ignore[return-value]

    @property
    def n_common(self) -> int:
        """Records in both releases: from the cells when fetched, else counted where the data
        lives (a statistic change needs no cells)."""
        if self._cells is not None:
            return int(self._cells[2].sum())
        if self._n_common is None:
            self._n_common = int(self._count_common())
        return self._n_common

    def _label_lists(self) -> tuple[list, list]:
        self.cells()
        return self._labels  # type: ignore[return-value]

    def current_labels(self, codes: np.ndarray) -> np.ndarray:
        labels = self._label_lists()[0]
        out = np.empty(len(codes), dtype=object)
        out[:] = [labels[int(c)] for c in codes]
        return out

    def baseline_labels(self, codes: np.ndarray) -> np.ndarray:
        labels = self._label_lists()[1]
        out = np.empty(len(codes), dtype=object)
        out[:] = [labels[int(c)] for c in codes]
        return out

    def current_order(self, codes: np.ndarray) -> np.ndarray:
        return np.argsort(np.asarray(codes, dtype=np.int64), kind="stable")

    def name_counts(self, name: Hashable, codes: Sequence[int]) -> list[tuple[int, str, int]]:
        if not isinstance(name, str):
            raise InputError(f"name={name!r}: give the name of a column")
        labels = self._label_lists()[0]
        wanted = [labels[int(c)] for c in codes]
        index = {v: int(c) for v, c in zip(wanted, codes, strict=True)}
        return [(index[c], str(n), int(k)) for c, n, k in self._name_rows(name, wanted)]
