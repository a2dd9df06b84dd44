"""SQL engine: the small tables of the statistics layer, aggregated inside the database.

The record table stays in the database. Every pass is one scan of the batch: a ``GROUP BY``
written with SQLAlchemy Core, followed where a total is needed (a predicted cluster's size, a
name's count in the release) by a window function over the grouped rows, never by a join of
two aggregates of the batch. A batch that a filter selects (GX's daily batches: ``EXTRACT(...)
= ...``, estimated by the planner at one row) then cannot turn into a nested loop of the
batch against itself (issue 30: 43× slower on PostgreSQL). It runs on any database SQLAlchemy
speaks with window functions (SQLite ≥ 3.25, PostgreSQL, DuckDB, warehouses); only these come
back to Python:

- the cluster-size histogram (one row per distinct cluster size) and three name counts,
  for :class:`~er_expectations.stats.ClusteringTable` (SPEC 3);
- one row per (benchmark cluster, predicted cluster) intersection, the benchmark
  clusters' weights, draws and name flags, for
  :class:`~er_expectations.stats.BenchmarkSample` (SPEC 2.1, 4, 7).

Their size grows with the number of distinct cluster sizes and with the benchmark, never
with the number of records. The rules are those of the pandas engine (SPEC 2.1: a null
prediction puts the record outside the release; a benchmark cluster is restricted to the
release), and so are the error messages.
"""

from __future__ import annotations

from collections.abc import Hashable
from contextlib import nullcontext
from typing import Any

import numpy as np
import pandas as pd
import sqlalchemy as sa

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
from er_expectations.engines.sql.batch import MaterialisedBatch, materialise
from er_expectations.stats import BenchmarkSample, ClusteringTable

__all__ = ["SqlRelease", "benchmark_sample", "clustering_table"]

def _relation(sa: Any, bind: Any, table: Any) -> Any:
    """A selectable for ``table``: a Table/subquery as given, or a table name reflected."""
    if isinstance(table, str):
        schema, _, name = table.rpartition(".")
        try:
            return sa.Table(name, sa.MetaData(), schema=schema or None, autoload_with=bind)
        except sa.exc.NoSuchTableError:
            names = sa.inspect(bind).get_table_names(schema=schema or None)
            close = did_you_mean(name, names)
            hint = f" {close[0].upper()}{close[1:]}" if close else ""
            raise InputError(f"table {table!r} does not exist in the database.{hint} "
                             f"Tables: {', '.join(names[:20]) or '(none)'}") from None
    if isinstance(table, sa.sql.Select):
        table = table.subquery("records")
    columns = list(getattr(table, "columns", ()))
    if not columns or any(c.name == "*" for c in columns):
        # a table clause without column information (as GX's table assets give) or a raw
        # query: ask the database for the column names, then select them by name
        with _connect(bind) as conn:
            names = list(conn.execute(sa.select(sa.text("*")).select_from(table).limit(0)).keys())
        table = sa.select(*[sa.column(n) for n in names]).select_from(table).subquery("records")
    return table


def _connect(bind: Any):
    """A connection context for an engine, or the connection itself (left open)."""
    return nullcontext(bind) if isinstance(bind, sa.engine.Connection) else bind.connect()


class SqlRelease(AggregatedRelease):
    """One release of a record table held in a database (SPEC 2.1).

    ``bind`` is an SQLAlchemy engine or connection; ``table`` a table name
    (``"schema.table"`` allowed), a :class:`sqlalchemy.Table` or a ``select()`` whose rows are
    the records. ``prediction`` is the column of predicted cluster ids (null: the record
    is not in the release).

    A dialect whose SQL differs subclasses it (``engines/duckdb``): :attr:`float_type`, and the
    queries of :meth:`clustering_table`, :meth:`_contingency_rows` and :meth:`_name_rows`.
    """

    #: the SQL type of the floating-point casts (weights, the drift sums): ``FLOAT`` is double
    #: precision on PostgreSQL and SQLite, but single precision on DuckDB (its subclass: ``DOUBLE``)
    float_type: Any = sa.Float

    @classmethod
    def from_batch(cls, table: Any, *, connection: Any, prediction: str, record_id: str | None = None) -> SqlRelease:
        """The release of a batch's selectable on ``connection`` (the engine registry's constructor).

        A batch that a real filter selects (GX's partitioned batches) is first copied into a
        temporary table (:mod:`.batch`); the release then reads the copy, on its connection.
        """
        batch = materialise(connection, table, _relation(sa, connection, table))
        if batch is None:
            return cls(connection, table, prediction=prediction, record_id=record_id)
        return cls(connection, batch.table, prediction=prediction, record_id=record_id, batch=batch)

    def __init__(self, bind: Any, table: Any, *, prediction: str, record_id: str | None = None,
                 batch: MaterialisedBatch | None = None) -> None:
        self.sa = sa
        self.bind = bind
        self.rel = _relation(self.sa, bind, table)
        #: the batch's temporary copy (:meth:`from_batch`) that this release, and the releases
        #: derived from it, read on the copy's connection; ``None``: queried where it is
        self.batch = batch
        self.prediction = prediction
        self.pred = self._column(prediction, "prediction")
        if record_id is not None:
            self._check_record_ids(self._column(record_id, "record_id"), record_id)

    # -- plumbing -------------------------------------------------------------------------
    def _column(self, name: Hashable, parameter: str) -> Any:
        cols = [c.name for c in self.rel.columns]
        if not isinstance(name, str) or name not in cols:
            close = did_you_mean(str(name), cols)
            hint = f" {close[0].upper()}{close[1:]}" if close else ""
            raise InputError(f"{parameter}={name!r}: no such column in the table.{hint} "
                             f"Available columns: {', '.join(cols[:20])}{' …' if len(cols) > 20 else ''}")
        return self.rel.c[name]

    def _rows(self, query: Any) -> list[tuple]:
        with self._connection() as conn:
            return [tuple(r) for r in conn.execute(query)]

    def _connection(self):
        return self.batch.connection() if self.batch is not None else _connect(self.bind)

    def _check_record_ids(self, col: Any, name: str) -> None:
        sa = self.sa
        (n, n_null, n_distinct), = self._rows(
            sa.select(sa.func.count(), sa.func.count() - sa.func.count(col), sa.func.count(sa.distinct(col)))
            .select_from(self.rel))
        if n_null:
            raise InputError(f"record_id column {name!r} has {n_null} null ids; every record needs an id")
        if n_distinct != n - n_null:
            dup = (sa.select(col).where(col.is_not(None)).group_by(col).having(sa.func.count() > 1).limit(5))
            examples = ", ".join(repr(r[0]) for r in self._rows(dup))
            n_dup = self._rows(sa.select(sa.func.count()).select_from(
                sa.select(col).where(col.is_not(None)).group_by(col).having(sa.func.count() > 1).subquery()))[0][0]
            raise InputError(f"record_id column {name!r} has {n_dup} duplicated ids (e.g. {examples}); each record "
                             "must appear once: drop duplicate rows or fix the id")

    def _cluster_sizes(self) -> Any:
        """Subquery: one row per predicted cluster of the release with its size ``m``."""
        sa = self.sa
        return (sa.select(self.pred.label("p"), sa.func.count().label("m"))
                .where(self.pred.is_not(None)).group_by(self.pred).subquery("cluster_sizes"))

    # -- summary of the predicted clustering (SPEC 3) -------------------------------------
    def _size_rows(self) -> list[tuple]:
        sa = self.sa
        cs = self._cluster_sizes()
        return self._rows(sa.select(cs.c.m, sa.func.count()).group_by(cs.c.m))

    def clustering_table(self, *, name: str | None = None) -> ClusteringTable:
        sizes, counts = self.nonempty_histogram()
        if name is None:
            return ClusteringTable(sizes=sizes, counts=counts)
        sa = self.sa
        nm = self._column(name, "name")
        pred = self.pred
        # one scan: the distinct (cluster, name) pairs; a window counts the clusters of each
        # name (shared by more than one: the cluster is homonymous), a group-by the names of
        # each cluster (more than one: varied)
        named = (sa.select(pred.label("p"), nm.label("n"))
                 .where(pred.is_not(None), nm.is_not(None)).distinct().subquery("pairs"))
        shared = (sa.select(named.c.p, sa.case((sa.func.count().over(partition_by=named.c.n) > 1, 1), else_=0)
                            .label("shared")).subquery("name_users"))
        per_cluster = (sa.select(shared.c.p, sa.func.count().label("k"), sa.func.max(shared.c.shared).label("h"))
                       .group_by(shared.c.p).subquery("per_cluster"))
        (n_named, n_varied, n_homonymous), = self._rows(sa.select(
            sa.func.count(), sa.func.coalesce(sa.func.sum(sa.case((per_cluster.c.k > 1, 1), else_=0)), 0),
            sa.func.coalesce(sa.func.sum(per_cluster.c.h), 0)).select_from(per_cluster))
        return ClusteringTable(sizes=sizes, counts=counts, n_named_clusters=int(n_named),
                               n_homonymous_clusters=int(n_homonymous), n_varied_clusters=int(n_varied))

    # -- benchmark (SPEC 2.1, 4, 7) -------------------------------------------------------
    def benchmark_sample(self, *, reference: str, weights: str | dict | WeightsSpec = "cluster_size",
                         draws: str | None = None, name: str | None = None,
                         known: str | None = KNOWN_AUTO) -> BenchmarkSample:
        sa = self.sa
        ref = self._column(reference, "reference")
        column = resolve_known(known, [c.name for c in self.rel.columns])
        if column is not None:
            counts = self._known_counts(self._column(column, "known"), ref)
            counts.check(known=column, reference=reference)
            part = type(self)(self.bind, sa.select(*self.rel.c).where(self.rel.c[column].is_not(None))
                              .subquery("known_records"), prediction=self.prediction, batch=self.batch)
            sample = part.benchmark_sample(reference=reference, weights=weights, draws=draws, name=name, known=None)
            if counts.topped_up:
                sample = drawable_size_weights(sample, self._drawable(self._column(column, "known"), ref))
            return counts.apply(sample, known=column)
        spec = parse_weights(weights, [c.name for c in self.rel.columns])
        wcol = self._column(spec.column, "weights") if spec.kind == "column" else None
        self.check_draws_argument(draws)
        dcol = self._column(draws, "draws") if draws is not None else None
        pred = self.pred

        (n_bench, aside, clusters_all, clusters_in), = self._rows(sa.select(
            sa.func.count(ref),
            sa.func.coalesce(sa.func.sum(sa.case((sa.and_(ref.is_not(None), pred.is_(None)), 1), else_=0)), 0),
            sa.func.count(sa.distinct(ref)),
            sa.func.count(sa.distinct(sa.case((pred.is_not(None), ref), else_=None))),
        ).select_from(self.rel))
        self.check_benchmark_counts(reference, n_bench, clusters_in)

        bench = sa.and_(ref.is_not(None), pred.is_not(None))
        pieces = pieces_from_rows(self._contingency_rows(ref))
        values = None
        if spec.kind == "column":
            values = cluster_values(self._cluster_minmax(wcol, ref, bench, "weights"), pieces, column=spec.column,
                                    what="weights", integer=False)
        weight = weights_for(spec, pieces.size, pieces.labels, values)
        n_draws = np.ones(len(pieces.labels), dtype=np.int64)
        if dcol is not None:
            n_draws = cluster_values(self._cluster_minmax(dcol, ref, bench, "draws"), pieces, column=draws,
                                     what="draws", integer=True).astype(np.int64)
        homonym = variation = has_name = None
        if name is not None:
            homonym, variation, has_name = name_flags(
                self._name_rows(self._column(name, "name"), ref), pieces)

        n_records, n_clusters = self.n_records, self.n_clusters
        return BenchmarkSample(
            labels=pieces.labels, size=pieces.size, weight=np.asarray(weight, dtype=np.float64), draws=n_draws,
            piece_cluster=pieces.piece_cluster, piece_n=pieces.piece_n, piece_m=pieces.piece_m,
            piece_label=pieces.piece_label,
            n_records=n_records, n_clusters=n_clusters, design=spec.design,
            homonym=homonym, name_variation=variation, has_name=has_name,
            records_set_aside=int(aside), clusters_set_aside=int(clusters_all) - int(clusters_in),
            size_histogram=self.size_histogram(),
        )

    def _contingency_rows(self, ref: Any) -> list[tuple]:
        """Rows ``(benchmark cluster, predicted cluster, n, m)`` of the benchmark's contingency with
        the prediction (SPEC 4), ordered by cluster: in one scan, the release grouped by
        (predicted cluster, benchmark cluster or null), the predicted cluster's size ``m`` the
        window sum of its groups."""
        sa = self.sa
        pred = self.pred
        groups = (sa.select(pred.label("p"), ref.label("c"), sa.func.count().label("n"))
                  .where(pred.is_not(None)).group_by(pred, ref).subquery("groups"))
        sized = (sa.select(groups.c.c, groups.c.p, groups.c.n,
                           sa.cast(sa.func.sum(groups.c.n).over(partition_by=groups.c.p), sa.BigInteger).label("m"))
                 .subquery("sized"))
        return self._rows(sa.select(sized.c.c, sized.c.p, sized.c.n, sized.c.m)
                          .where(sized.c.c.is_not(None)).order_by(sized.c.c, sized.c.p))

    def _drawable(self, known: Any, ref: Any) -> dict[object, int]:
        """Per benchmark cluster, its records of the release known at the first version (the
        records a draw could pick, SPEC 14.3): one group-by of the benchmark's rows."""
        sa = self.sa
        first = sa.cast(known, self.float_type) == FIRST_VERSION  # a version column of text too
        rows = self._rows(sa.select(ref, sa.func.count()).select_from(self.rel)
                          .where(ref.is_not(None), self.pred.is_not(None), first).group_by(ref))
        return {label: int(n) for label, n in rows}

    def _known_counts(self, known: Any, ref: Any) -> KnownCounts:
        """Records added after labelling (in all, and in predicted clusters holding a benchmark
        record), unmarked benchmark records and the latest version (SPEC 14): one group-by of the
        release by predicted cluster (no join) and one plain scan."""
        sa = self.sa
        pred = self.pred
        per_cluster = (sa.select(sa.func.sum(sa.case((known.is_(None), 1), else_=0)).label("added"),
                                 sa.func.max(sa.case((ref.is_not(None), 1), else_=0)).label("sampled"))
                       .where(pred.is_not(None)).group_by(pred).subquery("per_cluster"))
        (n_added, n_in), = self._rows(sa.select(
            sa.func.coalesce(sa.func.sum(per_cluster.c.added), 0),
            sa.func.coalesce(sa.func.sum(per_cluster.c.added * per_cluster.c.sampled), 0),
        ).select_from(per_cluster))
        (unmarked, top), = self._rows(sa.select(
            sa.func.coalesce(sa.func.sum(sa.case((sa.and_(ref.is_not(None), known.is_(None)), 1), else_=0)), 0),
            sa.func.max(known)).select_from(self.rel))
        return KnownCounts(added=int(n_added), added_in_sampled=int(n_in), unmarked_benchmark=int(unmarked),
                           version=version_number(top))

    def benchmark_rows(self, *, reference: str, columns: dict[str, str]) -> pd.DataFrame:
        """The benchmark records with ``reference`` and ``columns`` ({parameter: column}) as a
        small pandas frame (SPEC 8: per-entity attributes and names)."""
        ref = self._column(reference, "reference")
        for parameter, column in columns.items():
            self._column(column, parameter)
        wanted = list(dict.fromkeys([reference, *columns.values()]))
        rows = self._rows(self.sa.select(*(self.rel.c[c] for c in wanted)).where(ref.is_not(None)))
        return pd.DataFrame(rows, columns=wanted)

    def _cluster_minmax(self, col: Any, ref: Any, bench: Any, what: str) -> list[tuple]:
        """Rows (benchmark cluster, min, max, nulls) of a per-cluster column (weights, draws)."""
        sa = self.sa
        column = col.name
        try:
            is_bool = col.type.python_type is bool
        except NotImplementedError:  # pragma: no cover - exotic types
            is_bool = False
        if is_bool:
            raise InputError(f"{what} column {column!r} holds true/false values; {what} are numbers "
                             f"({'w_c = 1/p_c > 0' if what == 'weights' else 'how many times each cluster was drawn'})")
        num = sa.cast(col, self.float_type)
        return self._rows(sa.select(ref, sa.func.min(num), sa.func.max(num), sa.func.count() - sa.func.count(col))
                          .where(bench).group_by(ref))

    def _name_rows(self, nm: Any, ref: Any) -> list[tuple]:
        """Rows (benchmark cluster, distinct names, shared) for :func:`.base.name_flags` (SPEC 7).

        ``shared``: one of the cluster's names occurs on more records of the release than
        inside the cluster. One scan: the release grouped by (name, benchmark cluster or null);
        a name's count in the release is the window sum of its groups (no join of the batch
        with itself, which a database without hash joins, or a planner that thinks the batch
        holds one row, runs as a loop).
        """
        sa = self.sa
        groups = (sa.select(nm.label("n"), ref.label("c"), sa.func.count().label("k"))
                  .where(self.pred.is_not(None), nm.is_not(None)).group_by(nm, ref).subquery("name_groups"))
        totals = (sa.select(groups.c.c, groups.c.k,
                            sa.func.sum(groups.c.k).over(partition_by=groups.c.n).label("total"))
                  .subquery("name_totals"))
        return self._rows(sa.select(totals.c.c, sa.func.count(),
                                    sa.func.max(sa.case((totals.c.total > totals.c.k, 1), else_=0)))
                          .where(totals.c.c.is_not(None)).group_by(totals.c.c))

def clustering_table(bind: Any, table: Any, *, cluster: str, name: str | None = None,
                     record_id: str | None = None) -> ClusteringTable:
    """Size table (and name counts) of the clustering in column ``cluster`` of a database table."""
    return SqlRelease(bind, table, prediction=cluster, record_id=record_id).clustering_table(name=name)


def benchmark_sample(bind: Any, table: Any, *, prediction: str, reference: str,
                     weights: str | dict | WeightsSpec = "cluster_size", draws: str | None = None,
                     name: str | None = None, record_id: str | None = None,
                     known: str | None = KNOWN_AUTO) -> BenchmarkSample:
    """The benchmark restricted to the release (and to the records known at labelling, SPEC 14),
    aggregated per sampled cluster, in the database."""
    rel = SqlRelease(bind, table, prediction=prediction, record_id=record_id)
    return rel.benchmark_sample(reference=reference, weights=weights, draws=draws, name=name, known=known)
