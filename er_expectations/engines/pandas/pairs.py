"""A release and its baseline, two columns of one pandas frame (SPEC 10), aggregated by pandas."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

import numpy as np
import pandas as pd

from er_expectations.core.errors import InputError
from er_expectations.core.hints import did_you_mean
from er_expectations.engines.pairs import ChangedCluster, check_pair_columns, label_order
from er_expectations.engines.pandas.release import PandasRelease, contingency_from_codes
from er_expectations.stats.drift import ChangeCounts, ClusterChanges, classify_clusters
from er_expectations.stats.exact import ContingencySums, contingency_sums


class ReleasePair:
    """The current release and its baseline on the same rows of a pandas frame; aggregates are
    computed once."""

    def __init__(self, current: PandasRelease, baseline: PandasRelease) -> None:
        if current.df is not baseline.df and len(current.df) != len(baseline.df):
            raise InputError("the two releases of a comparison must be columns of the same table")
        check_pair_columns(current, baseline)
        self.current = current
        self.baseline = baseline
        self._common: np.ndarray | None = None
        self._restricted: tuple[PandasRelease, PandasRelease] | None = None
        self._cells: tuple[np.ndarray, ...] | None = None
        self._classes: ClusterChanges | None = None
        self._code_of: dict[object, int] = {}

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
        current codes, baseline codes) as :func:`~er_expectations.engines.pandas.release.contingency_from_codes`."""
        if self._cells is None:
            self._cells = contingency_from_codes(self.current.pred_codes, self.baseline.pred_codes)
        return self._cells  # type: ignore[return-value]

    def contingency_sums(self) -> ContingencySums:
        """The sums of the exact metrics of the current release (predicted) against the
        baseline (true), from the cells."""
        cur_idx, base_idx, n, _, _ = self.cells()
        return contingency_sums(base_idx, cur_idx, n)

    def _changes(self) -> ClusterChanges:
        if self._classes is None:
            after_idx, before_idx, n, after_codes, before_codes = self.cells()
            self._classes = classify_clusters(after_idx, before_idx, n, n_after=after_codes.size,
                                              n_before=before_codes.size)
        return self._classes

    def change_counts(self) -> ChangeCounts:
        """The totals of the diff of the current release (after) against the baseline (before)."""
        return self._changes().totals()

    def changed_clusters(self, picks: Mapping[int, Sequence[int]], *, max_sources: int) -> list[ChangedCluster]:
        """The after clusters at positions ``picks[kind]`` (0-based, in the order of their ids)
        of each change class, in the order of ``picks``, with their ``max_sources`` largest
        sources."""
        after_idx, before_idx, n, after_codes, before_codes = self.cells()
        changes = self._changes()
        before_sizes = np.bincount(before_idx, weights=n, minlength=before_codes.size).astype(np.int64)
        out = []
        for code, positions in picks.items():
            members = np.flatnonzero(changes.kind == code)
            members = members[self.current_order(after_codes[members])]  # in the order of their ids
            for position in positions:
                a = int(members[position])
                cells = np.flatnonzero(after_idx == a)
                labels = self.baseline_labels(before_codes[before_idx[cells]])
                order = np.lexsort((label_order(labels.tolist()).argsort(), -n[cells]))[:max_sources]
                sources = [(labels[i], int(n[cells[i]]), int(before_sizes[before_idx[cells[i]]])) for i in order]
                label = self.current_labels(after_codes[[a]])[0]
                self._code_of[label] = int(after_codes[a])
                out.append(ChangedCluster(int(code), int(position), label, int(changes.size[a]), sources))
        return out

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

    def name_counts(self, name: Hashable, labels: Sequence) -> list[tuple[object, str, int]]:
        """(current cluster id, name as text, common records) of the current clusters ``labels``."""
        df = self.current.df
        if name not in df.columns:
            close = did_you_mean(str(name), [str(c) for c in df.columns])
            raise InputError(f"name={name!r}: no such column in the table" + (f"; {close}" if close else ""))
        pcodes = self.current.pred_codes
        labels = list(labels)
        known = [self._code_of.get(label, -1) for label in labels]  # the ids changed_clusters gave
        if min(known, default=0) < 0:
            uniques = self.current._pred_uniques  # noqa: SLF001 - coded above
            known = uniques.get_indexer(pd.Index(labels, dtype=object)).tolist()
        codes = np.asarray(known, dtype=np.int64)
        label_of = dict(zip(codes.tolist(), labels, strict=True))
        rows = np.flatnonzero(self.common & np.isin(pcodes, codes[codes >= 0]))
        part = pd.DataFrame({"c": pcodes[rows], "name": df[name].iloc[rows].to_numpy(dtype=object)}).dropna()
        part["name"] = part["name"].astype(str)
        counts = part.groupby(["c", "name"], sort=False).size()
        return [(label_of[int(c)], str(n), int(k)) for (c, n), k in counts.items()]

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
