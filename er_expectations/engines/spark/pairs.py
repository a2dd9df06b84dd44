"""A release and its baseline, two columns of one Spark DataFrame (SPEC 10), aggregated by Spark.

Everything is computed by Spark from the contingency cells of the two clusterings on the
records in both releases (a ``groupBy`` of both columns) joined with their per-cluster
margins. What comes back to the driver: the sums of the exact metrics of the agreement
and the totals of the release diff (one row each), the few after clusters a diff shows
(chosen by their rank in id order, ``row_number`` over a window per class) with their
largest sources, the size histograms of both releases on the common records, in one job
(:class:`~er_expectations.engines.spark.release.SparkRelease` on the filtered DataFrame; the number
of common records is their sum), the names of the shown clusters and one value of the
baseline's label column (read from the benchmark records the batch's releases collected, when
they hold one). Never the records
(no ``toPandas()``, no ``collect()`` of them), nor a row per cluster. Spark orders text by
its UTF-8 bytes, that is by code point, as Python's ``sorted``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from er_expectations.engines.pairs import (
    AggregatedPair,
    ChangedCluster,
    changed_from_rows,
    totals_from_row,
)
from er_expectations.engines.spark.release import SparkRelease, batch_facts
from er_expectations.stats.drift import ChangeCounts
from er_expectations.stats.exact import ContingencySums

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
        self._common_rows: list[tuple] | None = None

    def _common(self) -> Any:
        return self.df.where(self.cur.isNotNull() & self.base.isNotNull())

    def _cells(self) -> Any:
        """(a: current cluster, b: baseline cluster, n: common records), one row per cell."""
        F = self.F  # noqa: N806
        return self._common().groupBy(self.cur.alias("a"), self.base.alias("b")).agg(F.count(F.lit(1)).alias("n"))

    def _marked(self) -> Any:
        """The cells with the margins of their two clusters, by two windows: ``m`` (records)
        and ``ka`` (cells) of the current cluster a, ``s`` and ``kb`` of the baseline cluster b;
        counts as doubles."""
        from pyspark.sql import Window

        F = self.F  # noqa: N806
        by_a, by_b = Window.partitionBy("a"), Window.partitionBy("b")
        return (self._cells()
                .withColumn("m", F.sum("n").over(by_a).cast("double")).withColumn("ka", F.count(F.lit(1)).over(by_a))
                .withColumn("s", F.sum("n").over(by_b).cast("double")).withColumn("kb", F.count(F.lit(1)).over(by_b))
                .withColumn("n", F.col("n").cast("double")))

    def _kinds(self, marked: Any) -> Any:
        """Per after (current) cluster a: its ``size`` (common records) and class code ``kind``
        (SPEC 10, :func:`~er_expectations.stats.drift.classify_clusters`)."""
        F = self.F  # noqa: N806
        per_a = marked.groupBy("a").agg(F.max("m").alias("size"), F.max("ka").alias("sources"),
                                        F.max(F.when(F.col("kb") >= 2, 1).otherwise(0)).alias("split"))
        split = F.col("split") == 1
        kind = F.when(F.col("sources") >= 2, F.when(split, 3).otherwise(1)).otherwise(F.when(split, 2).otherwise(0))
        return per_a.select("a", "size", kind.alias("kind"))

    def _totals(self) -> tuple[ContingencySums, ChangeCounts]:
        """One collect, one row: the sums of the agreement and the totals of the diff (the
        values of :func:`~.pairs.totals_from_row`).

        Each cell gets the margins of its two clusters by two windows (m, ka over its current
        cluster a; s, kb over its baseline cluster b); one group-by per side and one global
        aggregate of the cells then give every sum. The cells with their margins are kept
        (``persist``) while the one row is computed, and released.
        """
        cells = self._marked().persist()
        try:
            return self._totals_of(cells)
        finally:
            cells.unpersist()

    def _totals_of(self, cells: Any) -> tuple[ContingencySums, ChangeCounts]:
        F = self.F  # noqa: N806
        n, m, s, big_n = F.col("n"), F.col("m"), F.col("s"), F.col("total")
        total = cells.agg(F.sum("n").alias("total"))
        over_cells = cells.crossJoin(total).agg(
            F.sum(n).alias("records"), F.sum(n * (n - 1.0) / 2.0).alias("cell_pairs"),
            F.sum(F.when((F.col("ka") == 1) & (F.col("kb") == 1), 1).otherwise(0)).alias("exact"),
            (-F.sum(n / big_n * F.log(n / m))).alias("conditional_entropy"))
        per_b = cells.groupBy("b").agg(F.max(s).alias("s"), F.max("kb").alias("kb"),
                                       (F.sum(n * (n / m)) / F.max(s)).alias("bp"),
                                       (F.sum(n * (n / s)) / F.max(s)).alias("br"))
        over_true = per_b.crossJoin(total).agg(
            F.count(F.lit(1)).alias("true_clusters"), F.sum(s * (s - 1.0) / 2.0).alias("true_pairs"),
            (-F.sum(s / big_n * F.log(s / big_n))).alias("true_entropy"),
            F.sum(F.when(F.col("kb") >= 2, 1).otherwise(0)).alias("split_before"),
            F.sum("bp").alias("bp"), F.sum("br").alias("br"))
        size = F.col("size")
        over_pred = self._kinds(cells).agg(
            F.count(F.lit(1)).alias("pred_clusters"), F.sum(size * (size - 1.0) / 2.0).alias("pred_pairs"),
            *[F.sum(F.when(F.col("kind") == k, 1).otherwise(0)).alias(f"c{k}") for k in range(4)],
            *[F.sum(F.when(F.col("kind") == k, size).otherwise(0.0)).alias(f"r{k}") for k in range(4)])
        # the three one-row aggregates gathered into one row through a union (a cross join of
        # them would broadcast two of them, a Spark job each), their values as doubles (counts
        # stay exact)
        parts = {"cells": (over_cells, ("records", "cell_pairs", "exact", "conditional_entropy")),
                 "pred": (over_pred, ("pred_clusters", "pred_pairs", *[f"c{k}" for k in range(4)],
                                      *[f"r{k}" for k in range(4)])),
                 "true": (over_true, ("true_clusters", "true_pairs", "true_entropy", "split_before", "bp", "br"))}
        union = None
        for kind, (frame, names) in parts.items():
            part = frame.select(F.lit(kind).alias("kind"), F.array(*[F.col(n).cast("double") for n in names]).alias("v"))
            union = part if union is None else union.unionByName(part)
        (row,) = collect(union.agg(*[F.max(F.when(F.col("kind") == kind, F.col("v"))).alias(kind) for kind in parts]))
        values: dict[str, object] = {}
        for kind, got in zip(parts, row, strict=True):
            values.update(zip(parts[kind][1], got, strict=True))
        return totals_from_row([values[n] for n in (
            "records", "true_clusters", "pred_clusters", "cell_pairs", "pred_pairs", "true_pairs", "exact", "bp", "br",
            "true_entropy", "conditional_entropy", *[f"c{k}" for k in range(4)], *[f"r{k}" for k in range(4)],
            "split_before")])

    def _changed_clusters(self, picks: Mapping[int, Sequence[int]], max_sources: int) -> list[ChangedCluster]:
        marked = self._marked().persist()  # read twice below; released after the collect
        try:
            rows = self._sources(marked, picks, max_sources)
        finally:
            marked.unpersist()
        return changed_from_rows(rows)

    def _sources(self, marked: Any, picks: Mapping[int, Sequence[int]], max_sources: int) -> list[tuple]:
        """Rows (kind, rank, a, size, b, n, before size, j) of the chosen clusters' largest sources."""
        from pyspark.sql import Window

        F = self.F  # noqa: N806
        ranked = (self._kinds(marked).where(F.col("kind").isin(sorted(picks)))
                  .withColumn("rk", F.row_number().over(Window.partitionBy("kind").orderBy(F.col("a").asc()))))
        wanted = None
        for k, positions in picks.items():
            this = (F.col("kind") == k) & F.col("rk").isin([p + 1 for p in positions])
            wanted = this if wanted is None else wanted | this
        chosen = ranked.where(wanted)
        by_size = Window.partitionBy("a").orderBy(F.col("n").desc(), F.col("b").asc())
        sources = (chosen.join(marked.select("a", "b", "n", F.col("s").alias("before_size")), "a")
                   .withColumn("j", F.row_number().over(by_size)).where(F.col("j") <= max_sources)
                   .select("kind", "rk", "a", "size", "b", "n", "before_size", "j"))
        return collect(sources)

    def _common_counts(self) -> list[tuple]:
        """One job: the size histogram of each release on the records in both, rows (kind, size,
        clusters), kind "c" (current) or "b" (baseline)."""
        if self._common_rows is None:
            F = self.F  # noqa: N806
            common = self._common()

            def histogram(col: Any, kind: str) -> Any:
                per_cluster = common.groupBy(col.alias("p")).agg(F.count(F.lit(1)).alias("m"))
                return per_cluster.groupBy("m").agg(F.count(F.lit(1)).alias("k")).select(
                    F.lit(kind).alias("kind"), F.col("m").cast("long").alias("a"), F.col("k").cast("long").alias("b"))

            self._common_rows = collect(histogram(self.cur, "c").unionByName(histogram(self.base, "b")))
        return self._common_rows

    def _count_common(self) -> int:
        """The records in both releases: the records of the current release's histogram on them."""
        return sum(int(size) * int(clusters) for kind, size, clusters in self._common_counts() if kind == "c")

    def _restrict(self) -> tuple[SparkRelease, SparkRelease]:
        common, rows = self._common(), self._common_counts()
        return (SparkRelease(common, prediction=self.current.prediction,
                             histogram=[(a, b) for kind, a, b in rows if kind == "c"]),
                SparkRelease(common, prediction=self.baseline.prediction,
                             histogram=[(a, b) for kind, a, b in rows if kind == "b"]))

    def _name_rows(self, name: str, labels: list) -> Sequence[Sequence]:
        F = self.F  # noqa: N806
        nm = self.current._column(name, "name")  # noqa: SLF001
        return collect(self._common().where(nm.isNotNull() & self.cur.isin(labels))
                       .groupBy(self.cur.alias("c"), nm.alias("n")).agg(F.count(F.lit(1)).alias("k")))

    def column_value(self, column: str) -> object | None:
        if column not in self.df.columns:
            return None
        for names, rows in batch_facts(self.df).benchmark.values():  # the batch's collected records
            at = names.index(column)
            found = next((r[at] for r in rows if r[at] is not None), None)
            if found is not None:
                return found
        col = self.current._column(column, "column")  # noqa: SLF001
        row = self.df.where(col.isNotNull()).select(col.alias("v")).first()
        return None if row is None else row["v"]
