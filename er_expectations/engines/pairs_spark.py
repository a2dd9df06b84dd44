"""A release and its baseline, two columns of one Spark DataFrame (SPEC 10), aggregated by Spark.

Everything is computed by Spark from the contingency cells of the two clusterings on the
records in both releases (a ``groupBy`` of both columns) joined with their per-cluster
margins. What comes back to the driver: the sums of the exact metrics of the agreement
and the totals of the release diff (one row each), the few after clusters a diff shows
(chosen by their rank in id order, ``row_number`` over a window per class) with their
largest sources, the size histograms of each release on the common records
(:class:`~er_expectations.engines.spark.SparkRelease` on the filtered DataFrame), the names
of the shown clusters and one value of the baseline's label column. Never the records
(no ``toPandas()``, no ``collect()`` of them), nor a row per cluster. Spark orders text by
its UTF-8 bytes, that is by code point, as Python's ``sorted``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..stats.drift import ChangeCounts
from ..stats.exact import ContingencySums
from .pairs import AggregatedPair, ChangedCluster, totals_from_row
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

    def _cells(self) -> Any:
        """(a: current cluster, b: baseline cluster, n: common records), one row per cell."""
        F = self.F  # noqa: N806
        return self._common().groupBy(self.cur.alias("a"), self.base.alias("b")).agg(F.count(F.lit(1)).alias("n"))

    def _margin(self, cells: Any, side: str) -> Any:
        """Per cluster of one side: its common records ``size`` and its cells ``pieces``."""
        F = self.F  # noqa: N806
        return cells.groupBy(side).agg(F.sum("n").alias("size"), F.count(F.lit(1)).alias("pieces"))

    def _kinds(self, cells: Any, before: Any) -> Any:
        """Per after (current) cluster its class code and size, from the cells and the before
        margin (SPEC 10, :func:`~er_expectations.stats.drift.classify_clusters`)."""
        F = self.F  # noqa: N806
        after = (cells.join(before.select("b", F.col("pieces").alias("b_pieces")), "b").groupBy("a")
                 .agg(F.count(F.lit(1)).alias("sources"), F.sum("n").alias("size"),
                      F.max(F.when(F.col("b_pieces") >= 2, 1).otherwise(0)).alias("split")))
        split = F.col("split") == 1
        kind = F.when(F.col("sources") >= 2, F.when(split, 3).otherwise(1)).otherwise(F.when(split, 2).otherwise(0))
        return after.select("a", "size", kind.alias("kind"))

    def _totals(self) -> tuple[ContingencySums, ChangeCounts]:
        """One collect, one row: the sums of the agreement and the totals of the diff (the
        values of :func:`~.pairs.totals_from_row`)."""
        F = self.F  # noqa: N806
        cells = self._cells()
        before = self._margin(cells, "b")
        cur = self._margin(cells, "a").select("a", F.col("size").cast("double").alias("m"),
                                              F.col("pieces").alias("ka"))
        base = before.select("b", F.col("size").cast("double").alias("s"), F.col("pieces").alias("kb"))
        total = cells.agg(F.sum("n").cast("double").alias("total"))
        joined = (cells.join(cur, "a").join(base, "b")
                  .select("b", F.col("n").cast("double").alias("n"), "m", "ka", "s", "kb"))
        n, m, s, big_n = F.col("n"), F.col("m"), F.col("s"), F.col("total")
        over_cells = joined.crossJoin(total).agg(
            F.sum(F.col("n")).alias("records"), F.sum(n * (n - 1.0) / 2.0).alias("cell_pairs"),
            F.sum(F.when((F.col("ka") == 1) & (F.col("kb") == 1), 1).otherwise(0)).alias("exact"),
            (-F.sum(n / big_n * F.log(n / m))).alias("conditional_entropy"))
        over_pred = cur.agg(F.count(F.lit(1)).alias("pred_clusters"), F.sum(m * (m - 1.0) / 2.0).alias("pred_pairs"))
        over_true = base.crossJoin(total).agg(
            F.count(F.lit(1)).alias("true_clusters"), F.sum(s * (s - 1.0) / 2.0).alias("true_pairs"),
            (-F.sum(s / big_n * F.log(s / big_n))).alias("true_entropy"),
            F.sum(F.when(F.col("kb") >= 2, 1).otherwise(0)).alias("split_before"))
        bcubed = (joined.groupBy("b").agg((F.sum(n * (n / m)) / F.max(s)).alias("bp"),
                                          (F.sum(n * (n / s)) / F.max(s)).alias("br"))
                  .agg(F.sum("bp").alias("bp"), F.sum("br").alias("br")))
        kind = F.col("kind")
        classes = self._kinds(cells, before).agg(
            *[F.sum(F.when(kind == k, 1).otherwise(0)).alias(f"c{k}") for k in range(4)],
            *[F.sum(F.when(kind == k, F.col("size")).otherwise(0)).alias(f"r{k}") for k in range(4)])
        (row,) = collect(over_cells.crossJoin(over_pred).crossJoin(over_true).crossJoin(bcubed).crossJoin(classes)
                         .select("records", "true_clusters", "pred_clusters", "cell_pairs", "pred_pairs",
                                 "true_pairs", "exact", "bp", "br", "true_entropy", "conditional_entropy",
                                 *[f"c{k}" for k in range(4)], *[f"r{k}" for k in range(4)], "split_before"))
        return totals_from_row(row)

    def _changed_clusters(self, picks: Mapping[int, Sequence[int]], max_sources: int) -> list[ChangedCluster]:
        from pyspark.sql import Window

        F = self.F  # noqa: N806
        cells = self._cells()
        before = self._margin(cells, "b")
        kinds = self._kinds(cells, before)
        ranked = (kinds.where(F.col("kind").isin(sorted(picks)))
                  .withColumn("rk", F.row_number().over(Window.partitionBy("kind").orderBy(F.col("a").asc()))))
        wanted = None
        for k, positions in picks.items():
            this = (F.col("kind") == k) & F.col("rk").isin([p + 1 for p in positions])
            wanted = this if wanted is None else wanted | this
        chosen = ranked.where(wanted)
        by_size = Window.partitionBy("a").orderBy(F.col("n").desc(), F.col("b").asc())
        sources = (chosen.join(cells, "a").join(before.select("b", F.col("size").alias("before_size")), "b")
                   .withColumn("j", F.row_number().over(by_size)).where(F.col("j") <= max_sources)
                   .select("kind", "rk", "a", "size", "b", "n", "before_size", "j"))
        out: dict[tuple[int, int], ChangedCluster] = {}
        for kind, rk, a, size, b, n, before_size, _j in sorted(collect(sources),
                                                                key=lambda r: (int(r[0]), int(r[1]), int(r[7]))):
            key = (int(kind), int(rk) - 1)
            if key not in out:
                out[key] = ChangedCluster(key[0], key[1], a, int(size), [])
            out[key].sources.append((b, int(n), int(before_size)))
        return list(out.values())

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
