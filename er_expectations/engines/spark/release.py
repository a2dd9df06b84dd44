"""Spark engine: the small tables of the statistics layer, aggregated by Spark.

The record table stays a Spark DataFrame; every pass is a ``groupBy`` (or a join of
group-bys) executed by Spark, and only these come back to the driver:

- the cluster-size histogram (one row per distinct cluster size) and three name counts,
  for :class:`~er_expectations.stats.ClusteringTable` (SPEC 3);
- one row per (benchmark cluster, predicted cluster) intersection, the benchmark
  clusters' weights, draws and name flags, for
  :class:`~er_expectations.stats.BenchmarkSample` (SPEC 2.1, 4, 7).

Their size grows with the number of distinct cluster sizes and with the benchmark, never
with the number of records (no ``toPandas()`` or ``collect()`` of the record table). The
rules and messages are those of the pandas engine; the rows are assembled by the helpers
of :mod:`.base`, shared with the SQL engine.

pyspark is imported when a Spark release is built, not when this module is.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from er_expectations.core.errors import InputError
from er_expectations.core.hints import did_you_mean
from er_expectations.engines.base import (
    AggregatedRelease,
    WeightsSpec,
    cluster_values,
    name_flags,
    parse_weights,
    pieces_from_rows,
    weights_for,
)
from er_expectations.stats import BenchmarkSample, ClusteringTable

__all__ = ["SparkRelease", "benchmark_sample", "clustering_table"]


def _functions():
    try:
        from pyspark.sql import functions as F  # noqa: N812 - the usual name
    except ImportError as exc:
        raise InputError("the Spark engine needs pyspark: pip install 'er-expectations[spark]'") from exc
    return F


class SparkRelease(AggregatedRelease):
    """One release of a record table held in a Spark DataFrame (SPEC 2.1).

    ``prediction`` is the column of predicted cluster ids (null: the record is not in the
    release).
    """

    @classmethod
    def from_batch(cls, table: Any, *, connection: object = None, prediction: str,
                   record_id: str | None = None) -> SparkRelease:
        """The release of a batch's DataFrame (the engine registry's constructor; no connection)."""
        return cls(table, prediction=prediction, record_id=record_id)

    def __init__(self, df: Any, *, prediction: str, record_id: str | None = None) -> None:
        self.F = _functions()
        if not (hasattr(df, "groupBy") and hasattr(df, "columns")):
            raise InputError(f"expected a Spark DataFrame with one row per record, got {type(df).__name__}")
        self.df = df
        self.prediction = prediction
        self.pred = self._column(prediction, "prediction")
        if record_id is not None:
            self._check_record_ids(self._column(record_id, "record_id"), record_id)

    def _column(self, name: Any, parameter: str) -> Any:
        cols = list(self.df.columns)
        if not isinstance(name, str) or name not in cols:
            close = did_you_mean(str(name), cols)
            hint = f" {close[0].upper()}{close[1:]}" if close else ""
            raise InputError(f"{parameter}={name!r}: no such column in the table.{hint} "
                             f"Available columns: {', '.join(cols[:20])}{' …' if len(cols) > 20 else ''}")
        if cols.count(name) > 1:
            raise InputError(f"{parameter}={name!r}: the table has {cols.count(name)} columns with this name; "
                             "rename them so that each name is used once")
        # quoted as one name part: dots stay in the name, backticks are doubled
        return self.F.col("`" + name.replace("`", "``") + "`")

    def _check_record_ids(self, col: Any, name: str) -> None:
        F = self.F
        row = self.df.agg(F.count(F.lit(1)).alias("n"), F.count(col).alias("present"),
                          F.countDistinct(col).alias("distinct")).first()
        n_null = row["n"] - row["present"]
        if n_null:
            raise InputError(f"record_id column {name!r} has {n_null} null ids; every record needs an id")
        if row["distinct"] != row["present"]:
            dups = self.df.where(col.isNotNull()).groupBy(col.alias("id")).count().where(F.col("count") > 1)
            examples = ", ".join(repr(r["id"]) for r in dups.limit(5).collect())
            raise InputError(f"record_id column {name!r} has {dups.count()} duplicated ids (e.g. {examples}); each "
                             "record must appear once: drop duplicate rows or fix the id")

    def _cluster_sizes(self) -> Any:
        return self.df.where(self.pred.isNotNull()).groupBy(self.pred.alias("p")).agg(
            self.F.count(self.F.lit(1)).alias("m"))

    # -- summary of the predicted clustering (SPEC 3) -------------------------------------
    def _size_rows(self) -> list[tuple]:
        F = self.F
        rows = self._cluster_sizes().groupBy("m").agg(F.count(F.lit(1)).alias("k")).collect()
        return [(r["m"], r["k"]) for r in rows]

    def clustering_table(self, *, name: str | None = None) -> ClusteringTable:
        sizes, counts = self.nonempty_histogram()
        if name is None:
            return ClusteringTable(sizes=sizes, counts=counts)
        F = self.F
        nm = self._column(name, "name")
        pairs = (self.df.where(self.pred.isNotNull() & nm.isNotNull())
                 .select(self.pred.alias("p"), nm.alias("n")).distinct())
        shared = pairs.groupBy("n").agg(F.count(F.lit(1)).alias("c")).where(F.col("c") > 1).select("n")
        per_cluster = (pairs.join(shared.withColumn("shared", F.lit(1)), "n", "left")
                       .groupBy("p").agg(F.count(F.lit(1)).alias("k"), F.max("shared").alias("shared")))
        row = per_cluster.agg(
            F.count(F.lit(1)).alias("named"),
            F.sum(F.when(F.col("k") > 1, 1).otherwise(0)).alias("varied"),
            F.sum(F.coalesce(F.col("shared"), F.lit(0))).alias("homonymous"),
        ).first()
        return ClusteringTable(sizes=sizes, counts=counts, n_named_clusters=int(row["named"]),
                               n_homonymous_clusters=int(row["homonymous"] or 0),
                               n_varied_clusters=int(row["varied"] or 0))

    # -- benchmark (SPEC 2.1, 4, 7) -------------------------------------------------------
    def benchmark_sample(self, *, reference: str, weights: str | dict | WeightsSpec = "cluster_size",
                         draws: str | None = None, name: str | None = None) -> BenchmarkSample:
        F = self.F
        ref = self._column(reference, "reference")
        spec = parse_weights(weights, list(self.df.columns))
        wcol = self._column(spec.column, "weights") if spec.kind == "column" else None
        self.check_draws_argument(draws)
        dcol = self._column(draws, "draws") if draws is not None else None
        pred = self.pred

        # The benchmark's records are few: they are filtered out of the table once and kept
        # (cached) while the sample is built; two countDistinct over the whole table would
        # expand and shuffle every record.
        labelled = self.df.where(ref.isNotNull()).cache()
        try:
            per_ref = labelled.groupBy(ref.alias("c")).agg(
                F.count(F.lit(1)).alias("k"),
                F.sum(F.when(pred.isNull(), 1).otherwise(0)).alias("aside"),
                F.max(F.when(pred.isNotNull(), 1).otherwise(0)).alias("inside"))
            counts = per_ref.agg(
                F.sum("k").alias("bench"), F.sum("aside").alias("aside"),
                F.count(F.lit(1)).alias("clusters_all"), F.sum("inside").alias("clusters_in")).first()
            self.check_benchmark_counts(reference, int(counts["bench"] or 0), int(counts["clusters_in"] or 0))
            return self._sample(labelled.where(pred.isNotNull()), ref, spec, wcol, draws, dcol, name, counts)
        finally:
            labelled.unpersist()

    def _sample(self, bench: Any, ref: Any, spec: WeightsSpec, wcol: Any, draws: str | None, dcol: Any,
                name: str | None, counts: Any) -> BenchmarkSample:
        F = self.F
        pred = self.pred
        # sorted here, not by Spark (a sort is one more job; the pieces are few, and a column's
        # ids share one type, whose Python order is Spark's: numbers, and text by code point)
        pieces_rows = sorted(bench.groupBy(ref.alias("c"), pred.alias("p")).agg(F.count(F.lit(1)).alias("n"))
                             .collect(), key=lambda r: (r["c"], r["p"]))
        # sizes of the predicted clusters the benchmark touches, and only those: a broadcast
        # semi-join shuffles their records instead of every cluster of the release
        touched = self.df.sparkSession.createDataFrame(
            [(p,) for p in dict.fromkeys(r["p"] for r in pieces_rows)],
            schema=self.df.select(pred.alias("p")).schema)
        sizes = dict(
            tuple(r) for r in self.df.where(pred.isNotNull())
            .join(F.broadcast(touched), pred == touched["p"], "left_semi")
            .groupBy(pred.alias("p")).agg(F.count(F.lit(1)).alias("m")).collect())
        rows = [(r["c"], r["p"], r["n"], sizes[r["p"]]) for r in pieces_rows]
        pieces = pieces_from_rows([tuple(r) for r in rows])

        values = None
        if wcol is not None:
            values = cluster_values(self._cluster_minmax(bench, ref, wcol, spec.column, "weights"), pieces,
                                    column=spec.column, what="weights", integer=False)
        weight = weights_for(spec, pieces.size, pieces.labels, values)
        n_draws = np.ones(len(pieces.labels), dtype=np.int64)
        if dcol is not None:
            n_draws = cluster_values(self._cluster_minmax(bench, ref, dcol, draws, "draws"), pieces,
                                     column=draws, what="draws", integer=True).astype(np.int64)
        homonym = variation = has_name = None
        if name is not None:
            homonym, variation, has_name = name_flags(self._name_rows(bench, ref, self._column(name, "name")),
                                                      pieces)
        return BenchmarkSample(
            labels=pieces.labels, size=pieces.size, weight=np.asarray(weight, dtype=np.float64), draws=n_draws,
            piece_cluster=pieces.piece_cluster, piece_n=pieces.piece_n, piece_m=pieces.piece_m,
            piece_label=pieces.piece_label, n_records=self.n_records, n_clusters=self.n_clusters,
            design=spec.design, homonym=homonym, name_variation=variation, has_name=has_name,
            records_set_aside=int(counts["aside"]),
            clusters_set_aside=int(counts["clusters_all"]) - int(counts["clusters_in"]),
        )

    def benchmark_rows(self, *, reference: str, columns: dict[str, str]) -> Any:
        """The benchmark records with ``reference`` and ``columns`` ({parameter: column}) as a
        small pandas frame (SPEC 8: per-entity attributes and names)."""
        import pandas as pd

        ref = self._column(reference, "reference")
        for parameter, column in columns.items():
            self._column(column, parameter)
        wanted = list(dict.fromkeys([reference, *columns.values()]))
        rows = self.df.where(ref.isNotNull()).select(*(self._column(c, c) for c in wanted)).collect()
        return pd.DataFrame([tuple(r) for r in rows], columns=wanted)

    def _cluster_minmax(self, bench: Any, ref: Any, col: Any, column: str, what: str) -> list[tuple]:
        """Rows (benchmark cluster, min, max, nulls) of a per-cluster column (weights, draws)."""
        F = self.F
        dtype = dict(self.df.dtypes)[column]
        if dtype == "boolean":
            raise InputError(f"{what} column {column!r} holds true/false values; {what} are numbers "
                             f"({'w_c = 1/p_c > 0' if what == 'weights' else 'how many times each cluster was drawn'})")
        if dtype == "string":
            bad = bench.where(col.isNotNull() & col.cast("double").isNull()).select(col.alias("v")).first()
            if bad is not None:
                raise InputError(f"{what} column {column!r}: value {bad['v']!r} is not a number")
        num = col.cast("double")
        rows = bench.groupBy(ref.alias("c")).agg(
            F.min(num).alias("lo"), F.max(num).alias("hi"),
            (F.count(F.lit(1)) - F.count(col)).alias("nulls")).collect()
        return [tuple(r) for r in rows]

    def _name_rows(self, bench: Any, ref: Any, nm: Any) -> list[tuple]:
        """Rows (benchmark cluster, distinct names, shared) for :func:`.base.name_flags` (SPEC 7)."""
        F = self.F
        in_c = (bench.where(nm.isNotNull()).groupBy(ref.alias("c"), nm.alias("n"))
                .agg(F.count(F.lit(1)).alias("k")))
        names = in_c.select("n").distinct()
        pop = (self.df.where(self.pred.isNotNull()).select(nm.alias("n")).join(names, "n")
               .groupBy("n").agg(F.count(F.lit(1)).alias("total")))
        rows = (in_c.join(pop, "n").groupBy("c")
                .agg(F.count(F.lit(1)).alias("names"),
                     F.max(F.when(F.col("total") > F.col("k"), 1).otherwise(0)).alias("shared"))
                .collect())
        return [tuple(r) for r in rows]


def clustering_table(df: Any, *, cluster: str, name: str | None = None,
                     record_id: str | None = None) -> ClusteringTable:
    """Size table (and name counts) of the clustering in column ``cluster`` of a Spark DataFrame."""
    return SparkRelease(df, prediction=cluster, record_id=record_id).clustering_table(name=name)


def benchmark_sample(df: Any, *, prediction: str, reference: str,
                     weights: str | dict | WeightsSpec = "cluster_size", draws: str | None = None,
                     name: str | None = None, record_id: str | None = None) -> BenchmarkSample:
    """The benchmark restricted to the release, aggregated per sampled cluster, by Spark."""
    rel = SparkRelease(df, prediction=prediction, record_id=record_id)
    return rel.benchmark_sample(reference=reference, weights=weights, draws=draws, name=name)
