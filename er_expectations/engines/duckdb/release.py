"""DuckDB engine: the SQL engine's release, with the queries DuckDB plans best.

DuckDB is reached through SQLAlchemy (``duckdb:///path.db``, the duckdb-engine driver), and the
SQL engine's queries run there unchanged (:class:`~er_expectations.engines.sql.release.SqlRelease`).
They are written for databases whose planner may turn a join of two aggregates of a filtered
batch into a nested loop (PostgreSQL, SQLite): every total is a window function over grouped
rows. DuckDB joins aggregates with hash joins and filters with hash semi-joins, whatever its
row estimates, and its window functions sort. Three queries are
written for it here, each one scan of the release plus work on its grouped rows:

- the summary of the predicted clustering (SPEC 3), sizes and names together: the release
  grouped by (predicted cluster, name), the names' number of clusters grouped from those
  pairs and joined back to them, then one row per cluster size with the number of clusters,
  of named, varied and homonymous clusters (when the sizes are known already, as in a GX
  validation, the distinct named pairs only, and a semi-join to the shared names);
- the benchmark's contingency with the prediction (SPEC 4): the benchmark records grouped by
  (benchmark cluster, predicted cluster), the sizes of only the predicted clusters they meet
  (a semi-join), joined;
- the name flags of the benchmark clusters (SPEC 7): the benchmark's (cluster, name) counts,
  and the release's count of only the names they carry (a semi-join), joined.

Floating-point casts are ``DOUBLE`` (:attr:`DuckDbRelease.float_type`): SQLAlchemy writes
``FLOAT``, which DuckDB reads as single precision (weights and drift sums off by 1e-8).
A table given by name is not reflected (duckdb-engine derives from SQLAlchemy's PostgreSQL
dialect, whose reflection reads ``pg_catalog.pg_collation``, which DuckDB lacks): its columns
are read from an empty ``SELECT *``. The rules, results and error messages are the SQL
engine's, and equal the pandas engine's (``tests/engines/test_common.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import sqlalchemy as sa

from er_expectations.core.errors import InputError
from er_expectations.core.hints import did_you_mean
from er_expectations.engines.sql.batch import MaterialisedBatch
from er_expectations.engines.sql.release import SqlRelease
from er_expectations.stats import ClusteringTable

__all__ = ["DuckDbRelease"]


def _named(bind: Any, table: Any) -> Any:
    """A table named by text (``"schema.table"`` allowed) as a table clause, without reflection;
    an :class:`InputError` with did-you-mean when it does not exist."""
    if not isinstance(table, str):
        return table
    schema, _, name = table.rpartition(".")
    inspector = sa.inspect(bind)
    known = [*inspector.get_table_names(schema=schema or None), *inspector.get_view_names(schema=schema or None)]
    if name not in known:
        close = did_you_mean(name, known)
        hint = f" {close[0].upper()}{close[1:]}" if close else ""
        raise InputError(f"table {table!r} does not exist in the database.{hint} "
                         f"Tables: {', '.join(sorted(known)[:20]) or '(none)'}")
    return sa.table(name, schema=schema or None)


class DuckDbRelease(SqlRelease):
    """One release of a record table in DuckDB (SPEC 2.1); see :class:`SqlRelease` for the
    arguments. ``bind`` is an SQLAlchemy engine or connection on a ``duckdb:///`` URL."""

    float_type: Any = sa.Double

    @classmethod
    def from_batch(cls, table: Any, *, connection: Any, prediction: str,
                   record_id: str | None = None) -> DuckDbRelease:
        """The release of a batch's selectable (or table name) on ``connection`` (the registry's
        constructor); a filtered batch is copied once into a temporary table, as on SQL."""
        return super().from_batch(_named(connection, table), connection=connection, prediction=prediction,
                                  record_id=record_id)

    def __init__(self, bind: Any, table: Any, *, prediction: str, record_id: str | None = None,
                 batch: MaterialisedBatch | None = None) -> None:
        super().__init__(bind, _named(bind, table), prediction=prediction, record_id=record_id, batch=batch)
        self._pieces: dict[str, list[tuple]] = {}

    # -- summary of the predicted clustering (SPEC 3) -------------------------------------
    def clustering_table(self, *, name: str | None = None) -> ClusteringTable:
        if name is None:
            return super().clustering_table()
        if self._hist is not None:  # the sizes are known: the named pairs only
            return self._name_counts(self._column(name, "name"))
        sa = self.sa
        nm = self._column(name, "name")
        pred = self.pred
        # one scan: the release grouped by (cluster, name or null), c records each; from these
        # pairs, a name's clusters (more than one: the name is shared), joined back to them
        pairs = (sa.select(pred.label("p"), nm.label("n"), sa.func.count().label("c"))
                 .where(pred.is_not(None)).group_by(pred, nm).cte("cluster_names").prefix_with("MATERIALIZED"))
        names = (sa.select(pairs.c.n, (sa.func.count() > 1).label("s"))
                 .where(pairs.c.n.is_not(None)).group_by(pairs.c.n).cte("names"))
        per_cluster = (sa.select(sa.cast(sa.func.sum(pairs.c.c), sa.BigInteger).label("m"),
                                 sa.func.count(pairs.c.n).label("k"),
                                 sa.func.max(sa.case((names.c.s, 1), else_=0)).label("h"))
                       .select_from(pairs.outerjoin(names, pairs.c.n == names.c.n))
                       .group_by(pairs.c.p).cte("per_cluster"))
        k, h = per_cluster.c.k, per_cluster.c.h
        rows = self._rows(sa.select(per_cluster.c.m, sa.func.count(),
                                    sa.func.sum(sa.case((k > 0, 1), else_=0)),
                                    sa.func.sum(sa.case((k > 1, 1), else_=0)), sa.func.sum(h))
                          .group_by(per_cluster.c.m))
        if self._hist is None:  # the size histogram came with the names: not asked again
            self._hist_from(rows)
        sizes, counts = self.nonempty_histogram()
        n_named, n_varied, n_homonymous = (sum(int(r[i]) for r in rows) for i in (2, 3, 4))
        return ClusteringTable(sizes=sizes, counts=counts, n_named_clusters=n_named,
                               n_homonymous_clusters=n_homonymous, n_varied_clusters=n_varied)

    def _name_counts(self, nm: Any) -> ClusteringTable:
        """The name counts when the size histogram is known: one scan for the distinct (cluster,
        name) pairs; a cluster is homonymous when one of its names is among the names of more
        than one cluster (a semi-join of the pairs to those names), varied with two names."""
        sa = self.sa
        pred = self.pred
        pairs = (sa.select(pred.label("p"), nm.label("n")).where(pred.is_not(None), nm.is_not(None))
                 .distinct().cte("named_pairs").prefix_with("MATERIALIZED"))
        shared = sa.select(pairs.c.n).group_by(pairs.c.n).having(sa.func.count() > 1)
        per_cluster = (sa.select(sa.func.count().label("k"),
                                 sa.func.max(sa.case((pairs.c.n.in_(shared), 1), else_=0)).label("h"))
                       .group_by(pairs.c.p).cte("per_cluster"))
        (n_named, n_varied, n_homonymous), = self._rows(sa.select(
            sa.func.count(), sa.func.coalesce(sa.func.sum(sa.case((per_cluster.c.k > 1, 1), else_=0)), 0),
            sa.func.coalesce(sa.func.sum(per_cluster.c.h), 0)))
        sizes, counts = self.nonempty_histogram()
        return ClusteringTable(sizes=sizes, counts=counts, n_named_clusters=int(n_named),
                               n_homonymous_clusters=int(n_homonymous), n_varied_clusters=int(n_varied))

    def _hist_from(self, rows: list[tuple]) -> None:
        ordered = sorted((int(r[0]), int(r[1])) for r in rows)
        self._hist = (np.array([r[0] for r in ordered], dtype=np.int64),
                      np.array([r[1] for r in ordered], dtype=np.int64))

    # -- benchmark (SPEC 2.1, 4, 7) -------------------------------------------------------
    def _contingency_rows(self, ref: Any) -> list[tuple]:
        """See :meth:`SqlRelease._contingency_rows`: the benchmark's pieces, and the sizes of
        the predicted clusters they meet (a semi-join of the release to the pieces). Kept per
        reference column: a suite asks for the sample with and without names, weights or draws,
        whose pieces are the same."""
        rows = self._pieces.get(ref.name)
        if rows is None:
            rows = self._pieces[ref.name] = self._query_contingency(ref)
        return rows

    def _query_contingency(self, ref: Any) -> list[tuple]:
        sa = self.sa
        pred = self.pred
        pieces = (sa.select(ref.label("c"), pred.label("p"), sa.func.count().label("n"))
                  .where(ref.is_not(None), pred.is_not(None)).group_by(ref, pred).cte("pieces"))
        sizes = (sa.select(pred.label("p"), sa.cast(sa.func.count(), sa.BigInteger).label("m"))
                 .where(pred.in_(sa.select(pieces.c.p))).group_by(pred).cte("piece_sizes"))
        return self._rows(sa.select(pieces.c.c, pieces.c.p, pieces.c.n, sizes.c.m)
                          .select_from(pieces.join(sizes, pieces.c.p == sizes.c.p))
                          .order_by(pieces.c.c, pieces.c.p))

    def _name_rows(self, nm: Any, ref: Any) -> list[tuple]:
        """See :meth:`SqlRelease._name_rows`: the benchmark's (cluster, name) counts, and each of
        their names' count in the release (a semi-join of the release to those names)."""
        sa = self.sa
        pred = self.pred
        bench = (sa.select(ref.label("c"), nm.label("n"), sa.func.count().label("k"))
                 .where(ref.is_not(None), pred.is_not(None), nm.is_not(None)).group_by(ref, nm).cte("bench_names"))
        totals = (sa.select(nm.label("n"), sa.func.count().label("total"))
                  .where(pred.is_not(None), nm.in_(sa.select(bench.c.n))).group_by(nm).cte("name_totals"))
        return self._rows(sa.select(bench.c.c, sa.func.count(),
                                    sa.func.max(sa.case((totals.c.total > bench.c.k, 1), else_=0)))
                          .select_from(bench.join(totals, bench.c.n == totals.c.n)).group_by(bench.c.c))
