"""A release and its baseline, two columns of one database table (SPEC 10), aggregated in SQL.

Everything is computed by the database from the contingency cells of the two clusterings
on the records in both releases (a ``GROUP BY`` of both columns, a CTE), joined with their
per-cluster margins (group-bys of the cells). What comes back to Python:

* the sums of the exact metrics of the agreement (one row,
  :class:`~er_expectations.stats.exact.ContingencySums`);
* the totals of the release diff (one row, :class:`~er_expectations.stats.drift.ChangeCounts`);
* the few after clusters a diff shows, chosen by their rank in id order
  (``ROW_NUMBER() OVER (PARTITION BY class ORDER BY id)``), with their largest sources;
* the size histograms of each release on the common records
  (:class:`~er_expectations.engines.sql.release.SqlRelease` on a filtered subquery), the names of
  the shown clusters and one value of the baseline's label column.

Never the records, nor a row per cluster. Ids are ordered as Python's ``sorted`` orders
them: text by code point, with ``COLLATE "C"`` on PostgreSQL and ``COLLATE BINARY`` on
SQLite (whatever the column's own collation); other databases order by their default
collation, which for text ids may differ from pandas' choice of examples (not the counts). The entropies need ``ln``: a SQLite built
without its math functions gets it registered on each connection. The dialect rules are in
:mod:`er_expectations.engines.sql.dialect`.
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
from er_expectations.engines.sql.dialect import python_order, sqlite_ln
from er_expectations.engines.sql.labelling import CHUNK
from er_expectations.engines.sql.release import SqlRelease
from er_expectations.stats.drift import ChangeCounts
from er_expectations.stats.exact import ContingencySums

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
        self._text: dict[str, bool] = {}

    def _both(self) -> Any:
        return self.sa.and_(self.cur.is_not(None), self.base.is_not(None))

    def _rows(self, query: Any) -> list[tuple]:
        return self.current._rows(query)  # noqa: SLF001 - same package

    # -- the cells and their margins (CTEs) ------------------------------------------------
    def _cells(self) -> Any:
        """CTE: one row per (current cluster a, baseline cluster b) with its common records n."""
        sa = self.sa
        return (sa.select(self.cur.label("a"), self.base.label("b"), sa.func.count().label("n"))
                .where(self._both()).group_by(self.cur, self.base).cte("cells"))

    def _margin(self, cells: Any, side: str, name: str) -> Any:
        """CTE: per cluster of one side, its common records ``size`` and its cells ``pieces``."""
        sa = self.sa
        key = cells.c[side]
        return (sa.select(key.label(side), sa.func.sum(cells.c.n).label("size"), sa.func.count().label("pieces"))
                .group_by(key).cte(name))

    def _float(self, x: Any) -> Any:
        return self.sa.cast(x, self.current.float_type)

    def _order(self, expr: Any, column: Any) -> Any:
        """``expr`` (values of ``column``) in the order of Python's ``sorted``."""
        return python_order(self.sa, self.current.bind.dialect.name, expr, lambda: self._is_text(column))

    def _is_text(self, column: Any) -> bool:
        """Whether ``column`` holds text (its type, or one non-null value when the relation
        does not say)."""
        if column.name not in self._text:
            sa = self.sa
            if isinstance(column.type, sa.String):
                self._text[column.name] = True
            elif not isinstance(column.type, sa.types.NullType):
                self._text[column.name] = False
            else:
                rows = self._rows(sa.select(column).where(column.is_not(None)).limit(1))
                self._text[column.name] = bool(rows) and isinstance(rows[0][0], str)
        return self._text[column.name]

    # -- the pair interface ------------------------------------------------------------------
    def _kinds(self, cells: Any, before: Any) -> Any:
        """CTE: per after (current) cluster its class code and size, from the cells and the
        before margin (SPEC 10, :func:`~er_expectations.stats.drift.classify_clusters`)."""
        sa = self.sa
        after = (sa.select(cells.c.a, sa.func.count().label("sources"), sa.func.sum(cells.c.n).label("size"),
                           sa.func.max(sa.case((before.c.pieces >= 2, 1), else_=0)).label("split"))
                 .select_from(cells.join(before, cells.c.b == before.c.b)).group_by(cells.c.a).cte("after_kind"))
        kind = sa.case((after.c.sources >= 2, sa.case((after.c.split == 1, 3), else_=1)),
                       else_=sa.case((after.c.split == 1, 2), else_=0))
        return sa.select(after.c.a, after.c.size, kind.label("kind")).cte("kinds")

    def _totals(self) -> tuple[ContingencySums, ChangeCounts]:
        """One query, one row: the sums of the agreement and the totals of the diff, from the
        cells and their margins (the cells are aggregated once)."""
        sa = self.sa
        f = self._float
        cells = self._cells()
        cur = self._margin(cells, "a", "current_margin")
        base = self._margin(cells, "b", "baseline_margin")
        total = sa.select(f(sa.func.sum(cells.c.n)).label("total")).cte("total")
        joined = (sa.select(cells.c.b, f(cells.c.n).label("n"), f(cur.c.size).label("m"), cur.c.pieces.label("ka"),
                            f(base.c.size).label("s"), base.c.pieces.label("kb"))
                  .select_from(cells.join(cur, cells.c.a == cur.c.a).join(base, cells.c.b == base.c.b))
                  .cte("cells_margins"))
        n, m, s = joined.c.n, joined.c.m, joined.c.s
        per_true = (sa.select((sa.func.sum(n * (n / m)) / sa.func.max(s)).label("bp"),
                              (sa.func.sum(n * (n / s)) / sa.func.max(s)).label("br"))
                    .group_by(joined.c.b).cte("baseline_bcubed"))
        big_n = total.c.total
        bs, cs = f(base.c.size), f(cur.c.size)
        kinds = self._kinds(cells, base)
        classes = (sa.select(*[sa.func.sum(sa.case((kinds.c.kind == k, 1), else_=0)).label(f"c{k}") for k in range(4)],
                             *[sa.func.sum(sa.case((kinds.c.kind == k, kinds.c.size), else_=0)).label(f"r{k}")
                               for k in range(4)])
                   .cte("classes"))

        def one(query: Any) -> Any:
            return query.scalar_subquery()

        query = sa.select(
            one(sa.select(sa.func.sum(cells.c.n))),
            one(sa.select(sa.func.count()).select_from(base)),
            one(sa.select(sa.func.count()).select_from(cur)),
            one(sa.select(sa.func.sum(n * (n - 1.0) / 2.0))),
            one(sa.select(sa.func.sum(cs * (cs - 1.0) / 2.0))),
            one(sa.select(sa.func.sum(bs * (bs - 1.0) / 2.0))),
            one(sa.select(sa.func.count()).select_from(joined).where(joined.c.ka == 1, joined.c.kb == 1)),
            one(sa.select(sa.func.sum(per_true.c.bp))),
            one(sa.select(sa.func.sum(per_true.c.br))),
            one(sa.select(-sa.func.sum(bs / big_n * sa.func.ln(bs / big_n))).select_from(base.join(total, sa.true()))),
            one(sa.select(-sa.func.sum(n / big_n * sa.func.ln(n / m))).select_from(joined.join(total, sa.true()))),
            *classes.c,
            one(sa.select(sa.func.count()).select_from(base).where(base.c.pieces >= 2)),
        ).select_from(classes)
        sqlite_ln(self.current.bind)
        if self.current.batch is not None:  # a copied batch is read on a connection of its own
            with self.current.batch.connection() as conn:
                sqlite_ln(conn)
        (row,) = self._rows(query)
        return totals_from_row(row)

    def _changed_clusters(self, picks: Mapping[int, Sequence[int]], max_sources: int) -> list[ChangedCluster]:
        sa = self.sa
        cells = self._cells()
        before = self._margin(cells, "b", "before_margin")
        kinds = self._kinds(cells, before)
        ranked = (sa.select(kinds.c.a, kinds.c.kind, kinds.c.size,
                            sa.func.row_number().over(partition_by=kinds.c.kind,
                                                      order_by=self._order(kinds.c.a, self.cur)).label("rk"))
                  .where(kinds.c.kind.in_(sorted(picks))).cte("ranked"))
        chosen = (sa.select(ranked).where(sa.or_(*(sa.and_(ranked.c.kind == k, ranked.c.rk.in_([p + 1 for p in ps]))
                                                   for k, ps in picks.items())))
                  .cte("chosen"))
        sources = (sa.select(chosen.c.kind, chosen.c.rk, chosen.c.a, chosen.c.size, cells.c.b, cells.c.n,
                             before.c.size.label("before_size"),
                             sa.func.row_number().over(partition_by=chosen.c.a,
                                                       order_by=(cells.c.n.desc(), self._order(cells.c.b, self.base)))
                             .label("j"))
                   .select_from(chosen.join(cells, chosen.c.a == cells.c.a).join(before, cells.c.b == before.c.b))
                   .subquery("sources"))
        rows = self._rows(sa.select(sources).where(sources.c.j <= max_sources))
        return changed_from_rows(rows)

    def _count_common(self) -> int:
        sa = self.sa
        return int(self._rows(sa.select(sa.func.count()).select_from(self.rel).where(self._both()))[0][0])

    def _restrict(self) -> tuple[SqlRelease, SqlRelease]:
        common = self.sa.select(*self.rel.c).where(self._both()).subquery("common_records")
        release = type(self.current)  # the dialect's release (engines/duckdb: DuckDbRelease)
        batch = self.current.batch  # a copied batch is read on its own connection
        return (release(self.current.bind, common, prediction=self.current.prediction, batch=batch),
                release(self.current.bind, common, prediction=self.baseline.prediction, batch=batch))

    def _name_rows(self, name: str, labels: list) -> Sequence[Sequence]:
        sa = self.sa
        nm = self.current._column(name, "name")  # noqa: SLF001
        out: list = []
        for start in range(0, len(labels), CHUNK):  # bounded IN lists
            chunk = labels[start:start + CHUNK]
            out += self._rows(sa.select(self.cur, nm, sa.func.count())
                              .where(self._both(), nm.is_not(None), self.cur.in_(chunk))
                              .group_by(self.cur, nm))
        return out

    def column_value(self, column: str) -> object | None:
        if column not in [c.name for c in self.rel.columns]:
            return None
        col = self.rel.c[column]
        rows = self._rows(self.sa.select(col).where(col.is_not(None)).limit(1))
        return rows[0][0] if rows else None
