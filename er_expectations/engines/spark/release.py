"""Spark engine: the small tables of the statistics layer, aggregated by Spark.

The record table stays a Spark DataFrame. What comes back to the driver:

- the benchmark records (the rows with a reference id), every column, once per batch:
  the benchmark's contingency with each release, its weights, draws and names and the
  subgroup attributes of SPEC 8 are read from them on the driver (they are few: their number
  grows with the benchmark, never with the records);
- per release, ONE aggregation of the whole table (a union of group-bys collected at once):
  the cluster-size histogram (one row per distinct cluster size), the sizes of the predicted
  clusters the benchmark touches, the number of records of each benchmark name, and, when a
  statistic needs them, three name counts (:class:`~er_expectations.stats.ClusteringTable`,
  SPEC 3).

No ``toPandas()`` or ``collect()`` of the record table. The rules and messages are those of
the pandas engine; the rows are assembled by the helpers of :mod:`.base`, shared with the SQL
engine.

**One aggregation per batch.** Every release and release pair built on one DataFrame share
what was collected from it (:func:`batch_facts`): GX's metrics build a release of the current
prediction and one of its baseline on the same batch, and both read the one collect of the
benchmark records. The code that builds a batch can say what it already knows
(:func:`describe_batch`): that its record ids were checked (a release then does not count
them again) and which columns hold the benchmark's reference and the names (a release then
collects the benchmark records and the name counts with its first aggregation, instead of
on demand).

pyspark is imported when a Spark release is built, not when this module is.
"""

from __future__ import annotations

import weakref
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from er_expectations.core.errors import InputError
from er_expectations.core.hints import did_you_mean
from er_expectations.engines.base import (
    FIRST_VERSION,
    KNOWN_AUTO,
    AggregatedRelease,
    KnownCounts,
    WeightsSpec,
    cluster_values,
    drawable_size_weights,
    name_flags,
    parse_weights,
    pieces_from_rows,
    resolve_known,
    version_number,
    weights_for,
)
from er_expectations.stats import BenchmarkSample, ClusteringTable

__all__ = ["BatchFacts", "SparkRelease", "batch_facts", "benchmark_sample", "clustering_table", "describe_batch"]


def _functions():
    try:
        from pyspark.sql import functions as F  # noqa: N812 - the usual name
    except ImportError as exc:
        raise InputError("the Spark engine needs pyspark: pip install 'er-expectations[spark]'") from exc
    return F


@dataclass
class BatchFacts:
    """What is known about one Spark DataFrame, shared by every release and pair built on it.

    ``checked_ids``: record-id columns known to be non-null and unique; ``reference`` and
    ``name``: the benchmark's reference column and the name column, collected with a release's
    first aggregation; ``benchmark``: the benchmark records collected, by reference column
    (the column names and the rows).
    """

    checked_ids: frozenset[str] = frozenset()
    reference: str | None = None
    name: str | None = None
    benchmark: dict[str, tuple[list[str], list[tuple]]] = field(default_factory=dict)


_FACTS: weakref.WeakKeyDictionary[Any, BatchFacts] = weakref.WeakKeyDictionary()


def batch_facts(df: Any) -> BatchFacts:
    """The facts of ``df`` (an empty record for a DataFrame nothing was said of)."""
    try:
        facts = _FACTS.get(df)
        if facts is None:
            facts = _FACTS[df] = BatchFacts()
    except TypeError:  # not weakly referenceable: nothing is shared
        return BatchFacts()
    return facts


def describe_batch(df: Any, *, checked_ids: Iterable[str] = (), reference: str | None = None,
                   name: str | None = None) -> None:
    """Say what the code that built the batch ``df`` knows about it.

    ``checked_ids``: columns whose record ids were checked non-null and unique (a batch
    built by joining tables on an id that was checked in each of them); a release of ``df``
    then does not count them again. ``reference`` and ``name``: the benchmark's reference
    column and the name column the suites read; the first aggregation of a release of ``df``
    then collects the benchmark records and the counts of the benchmark's names with it.
    """
    facts = batch_facts(df)
    facts.checked_ids = facts.checked_ids | frozenset(checked_ids)
    facts.reference = reference if reference in df.columns else facts.reference
    facts.name = name if name in df.columns else facts.name


def _quoted(F: Any, name: str) -> Any:
    """The column ``name`` quoted as one name part: dots stay in the name, backticks are doubled."""
    return F.col("`" + name.replace("`", "``") + "`")


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

    def __init__(self, df: Any, *, prediction: str, record_id: str | None = None,
                 histogram: Sequence[tuple[int, int]] | None = None) -> None:
        self.F = _functions()
        if not (hasattr(df, "groupBy") and hasattr(df, "columns")):
            raise InputError(f"expected a Spark DataFrame with one row per record, got {type(df).__name__}")
        self.df = df
        self.columns = list(df.columns)
        self.prediction = prediction
        self.pred = self._column(prediction, "prediction")
        self.facts = batch_facts(df)
        self._hist_rows = list(histogram) if histogram is not None else None
        self._sizes: dict[Any, int] = {}
        self._sized: set[str] = set()  # references whose touched clusters are sized
        # (reference, name column) -> records of the release carrying each benchmark name
        self._totals: dict[tuple[str, str], dict[Any, int]] = {}
        self._named: dict[str, tuple[int, int, int]] = {}
        if record_id is not None:
            col = self._column(record_id, "record_id")
            if record_id not in self.facts.checked_ids:
                self._check_record_ids(col, record_id)

    def _column(self, name: Any, parameter: str) -> Any:
        cols = self.columns
        if not isinstance(name, str) or name not in cols:
            close = did_you_mean(str(name), cols)
            hint = f" {close[0].upper()}{close[1:]}" if close else ""
            raise InputError(f"{parameter}={name!r}: no such column in the table.{hint} "
                             f"Available columns: {', '.join(cols[:20])}{' …' if len(cols) > 20 else ''}")
        if cols.count(name) > 1:
            raise InputError(f"{parameter}={name!r}: the table has {cols.count(name)} columns with this name; "
                             "rename them so that each name is used once")
        return _quoted(self.F, name)

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

    # -- the benchmark records (one collect per batch and reference column) -----------------
    def _benchmark_records(self, reference: str) -> tuple[list[str], list[tuple]]:
        """The rows of the batch with a ``reference`` id, every column: (column names, rows)."""
        self._column(reference, "reference")
        found = self.facts.benchmark.get(reference)
        if found is None:
            rows = self.df.where(_quoted(self.F, reference).isNotNull()).collect()
            found = self.facts.benchmark[reference] = (self.columns, [tuple(r) for r in rows])
        return found

    def _benchmark_in_release(self, reference: str) -> list[tuple]:
        columns, rows = self._benchmark_records(reference)
        p = columns.index(self.prediction)
        return [r for r in rows if r[p] is not None]

    # -- one aggregation of the whole table ------------------------------------------------
    def _aggregate(self, *, names: str | None = None, totals: str | None = None,
                   reference: str | None = None) -> None:
        """Collect, in one Spark job, whatever of the histogram, the sizes of the clusters the
        benchmark touches, the counts of the benchmark's names and the name counts of
        ``names`` is still missing (with what the batch's description asks for)."""
        F = self.F
        facts = self.facts
        reference = reference or (facts.reference if facts.reference and facts.reference in self.columns else None)
        totals = totals or (facts.name if reference is not None else None)
        want_hist = self._hist_rows is None
        want_sizes = reference is not None and reference not in self._sized
        want_totals = totals is not None and reference is not None and (reference, totals) not in self._totals
        want_names = names is not None and names not in self._named
        if not (want_hist or want_sizes or want_totals or want_names):
            return
        bench = self._benchmark_in_release(reference) if reference is not None else []
        columns = self.columns
        schema = self.df.schema
        pred_type = schema[self.prediction].dataType
        name_type = schema[totals].dataType if want_totals else "string"
        in_release = self.df.where(self.pred.isNotNull())
        per_cluster = in_release.groupBy(self.pred.alias("p")).agg(F.count(F.lit(1)).alias("m"))
        parts = []

        def part(kind: str, frame: Any, *, p: Any = None, n: Any = None, a: Any = None, b: Any = None,
                 c: Any = None) -> None:
            parts.append(frame.select(
                F.lit(kind).alias("kind"),
                (p if p is not None else F.lit(None)).cast(pred_type).alias("p"),
                (n if n is not None else F.lit(None)).cast(name_type).alias("n"),
                *[(x if x is not None else F.lit(None)).cast("long").alias(k) for k, x in (("a", a), ("b", b),
                                                                                           ("c", c))]))

        if want_hist:
            hist = per_cluster.groupBy("m").agg(F.count(F.lit(1)).alias("k"))
            part("h", hist, a=F.col("m"), b=F.col("k"))
        touched = list(dict.fromkeys(r[columns.index(self.prediction)] for r in bench)) if want_sizes else []
        if touched:
            part("s", self._among(per_cluster, "p", touched), p=F.col("p"), a=F.col("m"))
        bench_names: list = []
        if want_totals:
            t = columns.index(totals)
            bench_names = list(dict.fromkeys(r[t] for r in bench if r[t] is not None))
        if bench_names:
            nm = self._column(totals, "name")
            counted = (self._among(in_release.select(nm.alias("n")), "n", bench_names).groupBy("n")
                       .agg(F.count(F.lit(1)).alias("total")))
            part("t", counted, n=F.col("n"), a=F.col("total"))
        if want_names:
            # a name is shared when its records lie in two clusters (smallest and largest cluster
            # id differ, a window over the name); a cluster varies when its smallest and largest
            # names differ: two group-bys, no de-duplication of (cluster, name) pairs
            nm = self._column(names, "name")
            from pyspark.sql import Window

            by_name = Window.partitionBy("n")
            named = in_release.where(nm.isNotNull()).select(self.pred.alias("p"), nm.alias("n"))
            flagged = named.select("p", "n", (F.min("p").over(by_name) != F.max("p").over(by_name)).alias("shared"))
            per_named = flagged.groupBy("p").agg(F.min("n").alias("lo"), F.max("n").alias("hi"),
                                                 F.max(F.col("shared").cast("int")).alias("shared"))
            counts = per_named.agg(
                F.count(F.lit(1)).alias("named"),
                F.sum(F.when(F.col("lo") != F.col("hi"), 1).otherwise(0)).alias("varied"),
                F.sum("shared").alias("homonymous"))
            part("x", counts, a=F.col("named"), b=F.col("varied"), c=F.col("homonymous"))
        rows = []
        if parts:
            union = parts[0]
            for other in parts[1:]:
                union = union.unionByName(other)
            rows = union.collect()
        got = Counter(r["kind"] for r in rows)
        if want_hist:
            self._hist_rows = [(r["a"], r["b"]) for r in rows if r["kind"] == "h"]
        if want_sizes:
            self._sizes.update({r["p"]: int(r["a"]) for r in rows if r["kind"] == "s"})
            self._sized.add(reference)
        if want_totals:
            counted_names = {r["n"]: int(r["a"]) for r in rows if r["kind"] == "t"}
            self._totals[(reference, totals)] = {v: counted_names.get(v, 0) for v in bench_names}
        if want_names:
            if got["x"]:
                (x,) = [r for r in rows if r["kind"] == "x"]
                self._named[names] = (int(x["a"]), int(x["b"] or 0), int(x["c"] or 0))
            else:
                self._named[names] = (0, 0, 0)

    def _among(self, frame: Any, column: str, values: list) -> Any:
        """The rows of ``frame`` whose ``column`` is one of ``values`` (a few: the benchmark's): a
        semi-join with a small table of them, built in one call (a filter ``isin(values)`` costs
        one call from Python to Spark per value); Spark broadcasts it as it sees fit."""
        wanted = self.df.sparkSession.createDataFrame([(v,) for v in values], schema=frame.select(column).schema)
        return frame.join(wanted, column, "left_semi")

    def _size_rows(self) -> list[tuple]:
        self._aggregate()
        return list(self._hist_rows or [])

    # -- summary of the predicted clustering (SPEC 3) -------------------------------------
    def clustering_table(self, *, name: str | None = None) -> ClusteringTable:
        if name is not None:
            self._column(name, "name")
            self._aggregate(names=name)
        sizes, counts = self.nonempty_histogram()
        if name is None:
            return ClusteringTable(sizes=sizes, counts=counts)
        named, varied, homonymous = self._named[name]
        return ClusteringTable(sizes=sizes, counts=counts, n_named_clusters=named,
                               n_homonymous_clusters=homonymous, n_varied_clusters=varied)

    # -- benchmark (SPEC 2.1, 4, 7) -------------------------------------------------------
    def benchmark_sample(self, *, reference: str, weights: str | dict | WeightsSpec = "cluster_size",
                         draws: str | None = None, name: str | None = None,
                         known: str | None = KNOWN_AUTO) -> BenchmarkSample:
        self._column(reference, "reference")
        column = resolve_known(known, self.columns)
        if column is not None:
            counts = self._known_counts(column, reference)
            counts.check(known=column, reference=reference)
            part_df = self.df.where(self._column(column, "known").isNotNull())
            facts = self.facts
            describe_batch(part_df, checked_ids=facts.checked_ids, reference=reference, name=facts.name)
            part = SparkRelease(part_df, prediction=self.prediction)
            sample = part.benchmark_sample(reference=reference, weights=weights, draws=draws, name=name, known=None)
            if counts.topped_up:
                sample = drawable_size_weights(sample, self._drawable(column, reference))
            return counts.apply(sample, known=column)
        spec = parse_weights(weights, self.columns)
        if spec.kind == "column":
            self._column(spec.column, "weights")
        self.check_draws_argument(draws)
        if draws is not None:
            self._column(draws, "draws")
        if name is not None:
            self._column(name, "name")
        columns, rows = self._benchmark_records(reference)
        c, p = columns.index(reference), columns.index(self.prediction)
        in_release = [r for r in rows if r[p] is not None]
        clusters_all = len({r[c] for r in rows})
        clusters_in = len({r[c] for r in in_release})
        self.check_benchmark_counts(reference, len(rows), clusters_in)
        self._aggregate(reference=reference, totals=name)  # sizes, name counts (and histogram): one job
        # the pieces, sorted as Python sorts them (a column's ids share one type)
        pieces_n = Counter((r[c], r[p]) for r in in_release)
        pieces = pieces_from_rows([(a, b, n, self._sizes[b]) for (a, b), n in sorted(pieces_n.items())])

        values = None
        if spec.kind == "column":
            values = cluster_values(self._cluster_minmax(reference, spec.column, "weights"), pieces,
                                    column=spec.column, what="weights", integer=False)
        weight = weights_for(spec, pieces.size, pieces.labels, values)
        n_draws = np.ones(len(pieces.labels), dtype=np.int64)
        if draws is not None:
            n_draws = cluster_values(self._cluster_minmax(reference, draws, "draws"), pieces,
                                     column=draws, what="draws", integer=True).astype(np.int64)
        homonym = variation = has_name = None
        if name is not None:
            homonym, variation, has_name = name_flags(
                self._name_rows(in_release, c, columns.index(name), self._totals[(reference, name)]), pieces)
        return BenchmarkSample(
            labels=pieces.labels, size=pieces.size, weight=np.asarray(weight, dtype=np.float64), draws=n_draws,
            piece_cluster=pieces.piece_cluster, piece_n=pieces.piece_n, piece_m=pieces.piece_m,
            piece_label=pieces.piece_label, n_records=self.n_records, n_clusters=self.n_clusters,
            design=spec.design, homonym=homonym, name_variation=variation, has_name=has_name,
            records_set_aside=len(rows) - len(in_release),
            clusters_set_aside=clusters_all - clusters_in,
            size_histogram=self.size_histogram(),
        )

    def _drawable(self, known: str, reference: str) -> dict[object, int]:
        """Per benchmark cluster, its records of the release known at the first version (the
        records a draw could pick, SPEC 14.3), from the benchmark's records (a small table)."""
        columns, rows = self._benchmark_records(reference)
        ki, p, ri = columns.index(known), columns.index(self.prediction), columns.index(reference)
        out: dict[object, int] = {}
        for r in rows:
            if r[p] is not None and version_number(r[ki]) == FIRST_VERSION:
                out[r[ri]] = out.get(r[ri], 0) + 1
        return out

    def _known_counts(self, known: str, reference: str) -> KnownCounts:
        """Records added after labelling (in all, and in predicted clusters holding a benchmark
        record), unmarked benchmark records and the latest version (SPEC 14): one job over the
        table and one over the added records of the benchmark's clusters."""
        F = self.F
        k = self._column(known, "known")
        columns, rows = self._benchmark_records(reference)
        ki, p = columns.index(known), columns.index(self.prediction)
        sampled = sorted({r[p] for r in rows if r[p] is not None})
        added = self.df.where(self.pred.isNotNull() & k.isNull())
        row = self.df.agg(F.sum(F.when(self.pred.isNotNull() & k.isNull(), 1).otherwise(0)).alias("added"),
                          F.max(k).alias("top")).first()
        n_added = int(row["added"] or 0)
        n_in = self._among(added, self.prediction, sampled).count() if sampled and n_added else 0
        return KnownCounts(added=n_added, added_in_sampled=int(n_in),
                           unmarked_benchmark=sum(1 for r in rows if r[ki] is None), version=version_number(row["top"]))

    def benchmark_rows(self, *, reference: str, columns: dict[str, str]) -> Any:
        """The benchmark records with ``reference`` and ``columns`` ({parameter: column}) as a
        small pandas frame (SPEC 8: per-entity attributes and names)."""
        import pandas as pd

        self._column(reference, "reference")
        for parameter, column in columns.items():
            self._column(column, parameter)
        wanted = list(dict.fromkeys([reference, *columns.values()]))
        names, rows = self._benchmark_records(reference)
        at = [names.index(c) for c in wanted]
        return pd.DataFrame([tuple(r[i] for i in at) for r in rows], columns=wanted)

    def _cluster_minmax(self, reference: str, column: str, what: str) -> list[tuple]:
        """Rows (benchmark cluster, min, max, nulls) of a per-cluster column (weights, draws),
        the values read as numbers by Spark."""
        F = self.F
        ref, col = self._column(reference, "reference"), self._column(column, what)
        bench = self.df.where(ref.isNotNull() & self.pred.isNotNull())
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

    @staticmethod
    def _name_rows(in_release: list[tuple], c: int, n: int, totals: dict[Any, int]) -> list[tuple]:
        """Rows (benchmark cluster, distinct names, shared) for :func:`.base.name_flags` (SPEC 7):
        a name is shared when more records of the release carry it (``totals``) than the
        cluster holds."""
        in_c = Counter((r[c], r[n]) for r in in_release if r[n] is not None)
        per_cluster: dict[Any, list[int]] = {}
        for (cluster, value), k in in_c.items():
            entry = per_cluster.setdefault(cluster, [0, 0])
            entry[0] += 1
            entry[1] = max(entry[1], 1 if totals.get(value, 0) > k else 0)
        return [(cluster, names, shared) for cluster, (names, shared) in per_cluster.items()]


def clustering_table(df: Any, *, cluster: str, name: str | None = None,
                     record_id: str | None = None) -> ClusteringTable:
    """Size table (and name counts) of the clustering in column ``cluster`` of a Spark DataFrame."""
    return SparkRelease(df, prediction=cluster, record_id=record_id).clustering_table(name=name)


def benchmark_sample(df: Any, *, prediction: str, reference: str,
                     weights: str | dict | WeightsSpec = "cluster_size", draws: str | None = None,
                     name: str | None = None, record_id: str | None = None,
                     known: str | None = KNOWN_AUTO) -> BenchmarkSample:
    """The benchmark restricted to the release (and to the records known at labelling, SPEC 14),
    aggregated per sampled cluster, by Spark."""
    rel = SparkRelease(df, prediction=prediction, record_id=record_id)
    return rel.benchmark_sample(reference=reference, weights=weights, draws=draws, name=name, known=known)
