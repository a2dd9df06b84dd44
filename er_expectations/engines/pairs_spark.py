"""A release and its baseline, two columns of one Spark DataFrame (SPEC 10), aggregated by Spark.

What comes back to the driver: the contingency cells of the two clusterings on the records
in both releases (one row per (current cluster, baseline cluster) pair with common records),
the size histograms of each release on those records (:class:`~er_expectations.engines.spark.SparkRelease`
on the filtered DataFrame), the names of the few clusters a diff shows, and one value of the
baseline's label column. Never the records (no ``toPandas()``, no ``collect()`` of them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .pairs import AggregatedPair
from .spark import SparkRelease

__all__ = ["SparkReleasePair"]


def collect(frame: Any) -> list[tuple]:
    """The rows of a (small, aggregated) Spark DataFrame as tuples; the one place this module
    brings rows to the driver."""
    return [tuple(r) for r in frame.collect()]


class SparkReleasePair(AggregatedPair):
    """Two :class:`SparkRelease` of the same DataFrame: the current release and its baseline."""

    def __init__(self, current: SparkRelease, baseline: SparkRelease) -> None:
        super().__init__(current, baseline)
        self.F = current.F
        self.df = current.df
        self.cur = current.pred
        self.base = current._column(baseline.prediction, "baseline_column")  # noqa: SLF001 - same package

    def _common(self) -> Any:
        return self.df.where(self.cur.isNotNull() & self.base.isNotNull())

    def _cell_rows(self) -> Sequence[Sequence]:
        F = self.F  # noqa: N806
        return collect(self._common().groupBy(self.cur.alias("c"), self.base.alias("b"))
                       .agg(F.count(F.lit(1)).alias("n")))

    def _count_common(self) -> int:
        return int(self._common().count())

    def _restrict(self) -> tuple[SparkRelease, SparkRelease]:
        common = self._common()
        return (SparkRelease(common, prediction=self.current.prediction),
                SparkRelease(common, prediction=self.baseline.prediction))

    def _name_rows(self, name: str, labels: list) -> Sequence[Sequence]:
        F = self.F  # noqa: N806
        nm = self.current._column(name, "name")  # noqa: SLF001
        return collect(self._common().where(nm.isNotNull() & self.cur.isin(labels))
                       .groupBy(self.cur.alias("c"), nm.alias("n")).agg(F.count(F.lit(1)).alias("k")))

    def column_value(self, column: str) -> object | None:
        if column not in self.df.columns:
            return None
        col = self.current._column(column, "column")  # noqa: SLF001
        row = self.df.where(col.isNotNull()).select(col.alias("v")).first()
        return None if row is None else row["v"]
