"""A labelling batch held in a Spark DataFrame (SPEC 9): the label rows and chosen record rows.

The Spark twin of :mod:`.labelling_sql`: the label rows (draw column filled) and the record
rows (draw column null) whose id or predicted cluster is one of given values are selected by
Spark (a broadcast join with the small list of wanted values) and only they reach the
driver. :func:`er_expectations.analysis.labelling_batch.fetch_labelling_batch` decides which records
the rules read.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from er_expectations.engines.spark.release import SparkRelease

__all__ = ["SparkLabelling"]


class SparkLabelling:
    """Queries of a labelling batch in a Spark DataFrame; ``release`` is its :class:`SparkRelease`."""

    def __init__(self, release: SparkRelease) -> None:
        self.release = release
        self.F = release.F
        self.df = release.df

    def columns(self) -> list[str]:
        return list(self.df.columns)

    def column(self, name: str, parameter: str) -> Any:
        """The column ``name`` (quoted); an :class:`InputError` naming ``parameter`` when it does not exist."""
        return self.release._column(name, parameter)  # noqa: SLF001 - same package

    def _select(self, frame: Any, names: Sequence[str]) -> list[tuple]:
        cols = [self.column(n, n).alias(f"c{i}") for i, n in enumerate(names)]
        return [tuple(r) for r in frame.select(*cols).collect()]

    def label_rows(self, draw: str, names: Sequence[str]) -> list[tuple]:
        """Columns ``names`` of the label rows (draw not null)."""
        return self._select(self.df.where(self.column(draw, "draw_column").isNotNull()), names)

    def record_rows(self, draw: str | None, names: Sequence[str], key: str, values: Sequence) -> list[tuple]:
        """Columns ``names`` of the record rows (draw null) whose ``key`` is one of ``values``;
        ``draw=None``: a DataFrame of records only (a release's batch, no label rows)."""
        values = list(dict.fromkeys(values))
        if not values:
            return []
        k = self.column(key, key)
        records = self.df if draw is None else self.df.where(self.column(draw, "draw_column").isNull())
        spark = self.df.sparkSession
        wanted = spark.createDataFrame([(v,) for v in values], schema=records.select(k.alias("wanted")).schema)
        joined = records.join(self.F.broadcast(wanted), k == wanted["wanted"], "left_semi")
        return self._select(joined, names)
