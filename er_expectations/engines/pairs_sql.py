"""A release and its baseline, two columns of one database table (SPEC 10), aggregated in SQL.

What comes back to Python: the contingency cells of the two clusterings on the records in
both releases (one row per (current cluster, baseline cluster) pair with common records,
``GROUP BY`` of both columns), the size histograms of each release on those records
(:class:`~er_expectations.engines.sql.SqlRelease` on a filtered subquery), the names of
the few clusters a diff shows, and one value of the baseline's label column. Never the
records.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .labelling_sql import CHUNK
from .pairs import AggregatedPair
from .sql import SqlRelease

__all__ = ["SqlReleasePair"]


class SqlReleasePair(AggregatedPair):
    """Two :class:`SqlRelease` of the same table: the current release and its baseline."""

    def __init__(self, current: SqlRelease, baseline: SqlRelease) -> None:
        super().__init__(current, baseline)
        self.sa = current.sa
        self.rel = current.rel
        self.cur = current.pred
        # the baseline column of the current release's relation: one FROM in every query
        self.base = current._column(baseline.prediction, "baseline_column")  # noqa: SLF001 - same package

    def _both(self) -> Any:
        return self.sa.and_(self.cur.is_not(None), self.base.is_not(None))

    def _cell_rows(self) -> Sequence[Sequence]:
        sa = self.sa
        return self.current._rows(sa.select(self.cur, self.base, sa.func.count())  # noqa: SLF001
                                  .where(self._both()).group_by(self.cur, self.base))

    def _count_common(self) -> int:
        sa = self.sa
        return int(self.current._rows(sa.select(sa.func.count()).select_from(self.rel)  # noqa: SLF001
                                      .where(self._both()))[0][0])

    def _restrict(self) -> tuple[SqlRelease, SqlRelease]:
        common = self.sa.select(*self.rel.c).where(self._both()).subquery("common_records")
        return (SqlRelease(self.current.bind, common, prediction=self.current.prediction),
                SqlRelease(self.current.bind, common, prediction=self.baseline.prediction))

    def _name_rows(self, name: str, labels: list) -> Sequence[Sequence]:
        sa = self.sa
        nm = self.current._column(name, "name")  # noqa: SLF001
        out: list = []
        for start in range(0, len(labels), CHUNK):  # bounded IN lists
            chunk = labels[start:start + CHUNK]
            out += self.current._rows(sa.select(self.cur, nm, sa.func.count())  # noqa: SLF001
                                      .where(self._both(), nm.is_not(None), self.cur.in_(chunk))
                                      .group_by(self.cur, nm))
        return out

    def column_value(self, column: str) -> object | None:
        if column not in [c.name for c in self.rel.columns]:
            return None
        col = self.rel.c[column]
        rows = self.current._rows(self.sa.select(col).where(col.is_not(None)).limit(1))  # noqa: SLF001
        return rows[0][0] if rows else None
