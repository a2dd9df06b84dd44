"""A labelling batch held in a database (SPEC 9): the label rows and chosen record rows, by SQL.

The batch has the layout of :mod:`er_expectations.analysis.labelling_batch` (label rows: the draw
column filled; record rows: the draw column null), but its records part may be the whole
release. Two kinds of query run, each a ``SELECT`` of a few columns with a ``WHERE``:

* :meth:`SqlLabelling.label_rows`: the label rows (one per draw, a labels table is small);
* :meth:`SqlLabelling.record_rows`: the record rows whose id, or predicted cluster, is one
  of given values (``IN`` lists of at most :data:`CHUNK` values per query).

:func:`er_expectations.analysis.labelling_batch.fetch_labelling_batch` decides which records the rules
read and asks for them; nothing else of the record table comes back.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from er_expectations.engines.sql.release import SqlRelease

__all__ = ["CHUNK", "SqlLabelling"]

#: Values per ``IN`` list: databases limit a statement's bound parameters (SQL Server 2,100)
#: and some the length of an ``IN`` list (Oracle 1,000).
CHUNK = 1000


class SqlLabelling:
    """Queries of a labelling batch in a database table; ``release`` is its :class:`SqlRelease`
    (the batch's prediction column is the release the labels were made against)."""

    def __init__(self, release: SqlRelease) -> None:
        self.release = release
        self.sa = release.sa

    def columns(self) -> list[str]:
        return [c.name for c in self.release.rel.columns]

    def column(self, name: str, parameter: str) -> Any:
        """The column ``name``; an :class:`InputError` naming ``parameter`` when it does not exist."""
        return self.release._column(name, parameter)  # noqa: SLF001 - same package

    def label_rows(self, draw: str, names: Sequence[str]) -> list[tuple]:
        """Columns ``names`` of the label rows (draw not null)."""
        d = self.column(draw, "draw_column")
        return self.release._rows(self.sa.select(*(self.column(n, n) for n in names))  # noqa: SLF001
                                  .where(d.is_not(None)))

    def record_rows(self, draw: str | None, names: Sequence[str], key: str, values: Sequence) -> list[tuple]:
        """Columns ``names`` of the record rows (draw null) whose ``key`` is one of ``values``;
        ``draw=None``: a table of records only (a release's batch, no label rows)."""
        k = self.column(key, key)
        records = [] if draw is None else [self.column(draw, "draw_column").is_(None)]
        out: list[tuple] = []
        values = list(values)
        for start in range(0, len(values), CHUNK):
            out += self.release._rows(self.sa.select(*(self.column(n, n) for n in names))  # noqa: SLF001
                                      .where(*records, k.in_(values[start:start + CHUNK])))
        return out
