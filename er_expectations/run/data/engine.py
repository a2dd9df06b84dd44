"""Release batches built inside a database or Spark (checkpoint ``data.engine: sql | duckdb | spark``).

With ``engine: pandas`` (the default) :class:`~.files.ReleaseData` reads the files and
joins them in Python. With ``engine: sql`` or ``engine: spark`` the tables stay where they
are: each release's batch is a query (SQLAlchemy Core, compiled for the database's dialect)
or a Spark DataFrame with the same rows and columns as :meth:`ReleaseData.frame` gives, and
GX validates it there (``gx/metrics.py`` aggregates it in the engine). The record table never
comes into Python; only counts, a few example ids and the release labels do, and for a
labelling checkpoint (``data.labels``, SPEC 9) the rows of the records its labels refer to,
fetched by id from the release's batch (:meth:`Source.labelling`).

The batch of a release (SPEC 2.1), as for files:

* the ids of the records table and of the release's predictions, outer-joined: a record
  without a prediction is outside the release (null prediction); the benchmark is
  left-joined on the id;
* the name, built from ``data.name.columns`` as :func:`~.io.combine_name` does: each part
  cast to text and stripped of white space (:data:`WHITESPACE`, what Python's
  ``str.strip`` removes), a null part counting as empty, joined by the separator, the whole
  stripped again, and null when empty;
* the benchmark and record columns the suites name, and the baseline columns of the drift
  checks (:mod:`.baselines`).

Before anything is written the source is checked: the connection (an unreachable database
or a Spark session that cannot start raises :class:`~.errors.SourceUnreachableError`, exit
code 7, its URL masked), every table, query and column (a :class:`~.config.ConfigError` at
the key of the checkpoint file, with did-you-mean), and, counted in the engine, null and
duplicated ids, benchmark ids that are not records and id types that cannot be joined
(:class:`~.errors.InputError`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from er_expectations.core.errors import InputError
from er_expectations.run.data.base import BatchLayout, ReleaseSource, release_label

if TYPE_CHECKING:  # pragma: no cover
    from er_expectations.config import CheckpointConfig
from er_expectations.engines.sql.dialect import WHITESPACE
from er_expectations.run.data.duckdb import DuckDbSource
from er_expectations.run.data.source import Source
from er_expectations.run.data.spark import SparkSource
from er_expectations.run.data.sql import SqlSource

__all__ = ["SOURCES", "WHITESPACE", "DuckDbSource", "EngineReleases", "SparkSource", "SqlSource", "open_source"]

#: The source of each ``data.engine`` whose tables stay where they are.
SOURCES: dict[str, type[Source]] = {"sql": SqlSource, "duckdb": DuckDbSource, "spark": SparkSource}


def open_source(checkpoint: CheckpointConfig, *, connect: bool = True) -> Source:
    """The source of a checkpoint with ``data.engine: sql | duckdb | spark``, opened and checked
    when ``connect`` (``run``); not opened for ``validate``."""
    source: Source = SOURCES[checkpoint.data.engine](checkpoint)
    if connect:
        source.open()
    return source


class EngineReleases(BatchLayout):
    """The releases of a checkpoint whose tables are in a database or Spark: the runner's
    counterpart of :class:`~.files.ReleaseData` (same columns, batches built in the engine)."""

    def __init__(self, checkpoint: CheckpointConfig, source: Source, *,
                 extra_benchmark_columns: Sequence[str] = (), extra_record_columns: Sequence[str] = ()) -> None:
        super().__init__(checkpoint, extra_benchmark_columns=extra_benchmark_columns,
                         extra_record_columns=extra_record_columns)
        self.source = source
        self._releases: list[ReleaseSource] | None = None

    @property
    def engine(self) -> str:
        return self.source.engine

    @property
    def connected(self) -> bool:
        return self.source.connected

    def all_releases(self) -> list[ReleaseSource]:
        """Wide layout: the selected columns, in table order; long: the release column's values, sorted."""
        if self._releases is None:
            if not self.source.connected:
                raise InputError("the releases of a checkpoint on a database or Spark are listed when it runs")
            pred = self.data.predictions
            if pred.layout == "wide":
                columns = pred.match_columns(self.source.columns("predictions") or [])
                self._releases = [ReleaseSource(release_label(c, pred.columns), c) for c in columns]
            else:
                self._releases = [ReleaseSource(_label(v), _label(v), value=v) for v in self.source.release_values()]
        return self._releases

    def check_data(self) -> None:
        """See :meth:`Source.check_data`."""
        self.source.check_data()

    def batch(self, release: ReleaseSource, baselines: Mapping[str, ReleaseSource | None] | None = None) -> Any:
        """The batch of ``release`` in the engine, with the baseline columns ``baselines``
        (column -> baseline release, ``None`` for none)."""
        return self.source.batch(self, release, baselines or {})

    def labelling(self, release: ReleaseSource) -> Any:
        """The batch of ``release`` as the engine's labelling queries (see :meth:`Source.labelling`)."""
        return self.source.labelling(self, release)


    # -- what the runner asks (CheckpointData) ---------------------------------------------
    def batches(self, selected: Sequence[ReleaseSource], needs: Sequence[Any]) -> dict[str, Any]:
        """The ids checked in the engine, then each release's batch there (never fetched)."""
        self.check_data()  # ids counted in the engine
        batch = release_batches(self, needs)
        return {r.label: batch(r) for r in selected}

    def write_batches(self, folder: Path, selected: Sequence[ReleaseSource], names: Mapping[str, str],
                      batches: dict[str, Any]) -> None:
        """Nothing: a database's or Spark's batches are queries and DataFrames."""

    def batch_definitions(self, ctx: Any, datasource: str, folder: Path, names: Mapping[str, str],
                          batches: Mapping[str, Any]) -> dict[str, Any]:
        """The datasource of a database (its URL as written) or of Spark, an asset per release
        (named ``release_<name>``: a query asset, SQL; a dataframe asset, Spark) and its
        whole-table batch definition."""
        source = self.source
        sources = ctx.data_sources
        kind = source.gx_kind
        options = source.gx_options()
        try:
            stored = sources.get(datasource)
        except (KeyError, LookupError, ValueError):
            stored = None
        if stored is not None and (
            getattr(stored, "type", None) != kind
            or any(str(getattr(stored, key, None)) != str(value) for key, value in options.items())
        ):
            sources.delete(datasource)
            stored = None
        if stored is None:
            stored = getattr(sources, f"add_{kind}")(datasource, **options)
        result: dict[str, Any] = {}
        for label, name in names.items():
            asset = source.gx_asset(stored, f"release_{name}", batches[label])
            result[label] = source.gx_batch_definition(asset)
        return result

    def batch_parameters(self, batch: Any) -> dict[str, Any] | None:
        """See :meth:`Source.batch_parameters`."""
        return self.source.batch_parameters(batch)

    def table_file(self, folder: Path, name: str) -> Path | None:
        """None: no release table is written."""
        return None

    def provenance_inputs(self, base: Path) -> list[dict[str, Any]]:
        """The connection as written in the checkpoint file (a password only as ``${NAME}``), or a
        DuckDB file, and each table as the checkpoint names it (no credentials)."""
        data = self.data
        facts: list[dict[str, Any]] = []
        connection = getattr(data, "connection", None)
        if connection is not None:
            written = {key: str(getattr(connection, key)) for key in ("url", "database")
                       if getattr(connection, key, None) is not None}
            facts.append({"role": "connection", "engine": data.engine, **written})
        for role in ("records", "predictions", "benchmark"):
            table = getattr(data, role, None)
            if table is not None:
                facts.append(_table_fact(role, table))
        return facts


def _table_fact(role: str, table: Any) -> dict[str, Any]:
    """A table of a database or Spark as the checkpoint names it (no credentials)."""
    fact: dict[str, Any] = {"role": role}
    for key in ("table", "query", "path"):
        value = getattr(table, key, None)
        if value is not None:
            fact[key] = str(value)
    return fact


def _label(value: Any) -> str:
    text = value.isoformat() if hasattr(value, "isoformat") else str(value)
    return text[:10] if hasattr(value, "hour") and text[10:] in ("T00:00:00", "") else text


def release_batches(data: EngineReleases, needs: Sequence[Any]) -> Any:
    """``batch(release)`` with the baseline columns the drift checks read (as
    :func:`~.baselines.release_frames` does for files)."""
    from er_expectations.run.baselines import baseline_releases

    baselines_of = baseline_releases(data, needs)
    return lambda release: data.batch(release, baselines_of(release))
