"""Two releases of the same records side by side (SPEC 10): the common records and their cells.

A release pair holds the current release and its baseline, both columns of one record
table (one row per record; a null prediction means the record is outside that release).
The drift functions (:mod:`er_expectations.analysis.drift`) read only this interface, whose answers
are small whatever the number of records or clusters:

* ``current`` / ``baseline``: the two releases (``n_records``, ``prediction``);
* ``n_common``: the number of records present in both;
* ``restricted()``: each release restricted to the common records (the fixed subset), with
  the ``clustering_table`` of its engine;
* ``contingency_sums()``: the sufficient sums of the exact metrics (SPEC 5) of the current
  release against the baseline (:class:`~er_expectations.stats.exact.ContingencySums`);
* ``change_counts()``: the totals of the release diff
  (:class:`~er_expectations.stats.drift.ChangeCounts`);
* ``changed_clusters(picks, max_sources=…)``: the after clusters at given positions of
  each change class (positions in the order of their ids, as Python's ``sorted``), with
  their largest sources (:class:`ChangedCluster`);
* ``name_counts(name, labels)``: (cluster id, name, records) of the common records of some
  current clusters (the names shown in a diff);
* ``column_value(column)``: a non-null value of a column (the baseline release's label).

:class:`ReleasePair` is the pandas pair, derived from the contingency cells of the two
factorisations the releases already hold. :class:`AggregatedPair` is what the SQL and
Spark pairs share (:mod:`.pairs_sql`, :mod:`.pairs_spark`): they compute the same answers
where the data lives (the cells, their per-cluster margins and their sums are group-bys
and joins there), and only one-row sums and the few example clusters come back.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from er_expectations.core.errors import InputError
from er_expectations.stats.drift import ChangeCounts
from er_expectations.stats.exact import ContingencySums

__all__ = ["AggregatedPair", "ChangedCluster", "changed_from_rows", "label_order", "totals_from_row"]


@dataclass(frozen=True, slots=True)
class ChangedCluster:
    """One after cluster of a release diff (SPEC 10): its class code, its position among the
    clusters of that class in id order, its id, its common records and its largest sources
    (before cluster id, records taken from it, its common records), by records taken, then id."""

    kind: int
    position: int
    label: object
    size: int
    sources: list[tuple[object, int, int]]


def check_pair_columns(current: Any, baseline: Any) -> None:
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


def _int(value: Any) -> int:
    return 0 if value is None else int(value)


def _float(value: Any) -> float:
    return 0.0 if value is None else float(value)


def totals_from_row(row: Sequence) -> tuple[ContingencySums, ChangeCounts]:
    """The agreement sums and the diff totals of one row of the totals query (the SQL and
    the Spark pair ask for the same 20 values, in this order: the fields of
    :class:`ContingencySums`, clusters and records per change class, before clusters split;
    the number of before clusters is that of true clusters). NULL sums (no common record)
    are zeros."""
    if not _int(row[0]):
        return ContingencySums.empty(), ChangeCounts((0, 0, 0, 0), (0, 0, 0, 0), 0, 0)
    sums = ContingencySums(_int(row[0]), _int(row[1]), _int(row[2]), _float(row[3]), _float(row[4]),
                           _float(row[5]), _int(row[6]), _float(row[7]), _float(row[8]), _float(row[9]),
                           _float(row[10]))
    counts = [_int(v) for v in row[11:20]]
    return sums, ChangeCounts(tuple(counts[0:4]), tuple(counts[4:8]), sums.true_clusters,  # type: ignore[arg-type]
                              counts[8])


def changed_from_rows(rows: Sequence[Sequence]) -> list[ChangedCluster]:
    """The chosen clusters of a diff from the rows the SQL and the Spark pair fetch: (class
    code, rank in id order from 1, cluster id, its common records, before cluster id, records
    taken from it, its common records, rank of this source from 1), in any order."""
    out: dict[tuple[int, int], ChangedCluster] = {}
    for kind, rk, a, size, b, n, before_size, _j in sorted(rows, key=lambda r: (int(r[0]), int(r[1]), int(r[7]))):
        key = (int(kind), int(rk) - 1)
        if key not in out:
            out[key] = ChangedCluster(key[0], key[1], a, int(size), [])
        out[key].sources.append((b, int(n), int(before_size)))
    return list(out.values())




class AggregatedPair(ABC):
    """What the SQL and Spark pairs share: the answers of the pair interface computed where
    the data lives, each one query, cached.

    A subclass implements the queries: :meth:`_totals` (the agreement sums and the diff
    totals, one row), :meth:`_changed_clusters` (a row per source of the chosen clusters),
    :meth:`_count_common`, :meth:`_restrict` (the engine's releases on the common records),
    :meth:`_name_rows` and :meth:`column_value`. Cluster ids are ordered as Python's
    ``sorted`` orders them (:func:`label_order`): numbers numerically, text by code point
    (binary collation), whatever the database's default collation.
    """

    current: Any
    baseline: Any

    def __init__(self, current: Any, baseline: Any) -> None:
        check_pair_columns(current, baseline)
        self.current = current
        self.baseline = baseline
        self._sums: ContingencySums | None = None
        self._counts: ChangeCounts | None = None
        self._restricted: tuple[Any, Any] | None = None
        self._n_common: int | None = None

    @abstractmethod
    def _totals(self) -> tuple[ContingencySums, ChangeCounts]:
        """The sums of the exact metrics (current release predicted, baseline true) and the
        totals of the diff (current release after, baseline before): one query."""

    @abstractmethod
    def _changed_clusters(self, picks: Mapping[int, Sequence[int]], max_sources: int) -> list[ChangedCluster]:
        """:meth:`ReleasePair.changed_clusters` (any order; sorted here)."""

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

    def contingency_sums(self) -> ContingencySums:
        if self._sums is None:
            self._sums, self._counts = self._totals()
        return self._sums

    def change_counts(self) -> ChangeCounts:
        if self._counts is None:
            self._sums, self._counts = self._totals()
        return self._counts

    def changed_clusters(self, picks: Mapping[int, Sequence[int]], *, max_sources: int) -> list[ChangedCluster]:
        wanted = {int(k): sorted({int(p) for p in v}) for k, v in picks.items() if len(v)}
        if not wanted:
            return []
        found = {(c.kind, c.position): c for c in self._changed_clusters(wanted, int(max_sources))}
        return [found[(k, p)] for k, positions in wanted.items() for p in positions]

    @property
    def n_common(self) -> int:
        """Records in both releases: from the sums or the diff totals when computed, else
        counted where the data lives."""
        if self._sums is not None:
            return self._sums.records
        if self._counts is not None:
            return self._counts.common_records
        if self._n_common is None:
            self._n_common = int(self._count_common())
        return self._n_common

    def name_counts(self, name: Hashable, labels: Sequence) -> list[tuple[object, str, int]]:
        if not isinstance(name, str):
            raise InputError(f"name={name!r}: give the name of a column")
        return [(c, str(n), int(k)) for c, n, k in self._name_rows(name, list(labels))]
