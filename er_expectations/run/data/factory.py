"""From a checkpoint's ``data`` section to its data object (:class:`~.base.CheckpointData`).

Each kind of ``data`` section (its config model) has its tables class, in :data:`KINDS`:
:class:`FileTables` (``DataSources``: files read with pandas) and :class:`EngineTables`
(``EngineData``: tables in a database or Spark, reached through the engine's
:class:`~.source.Source`). Phase 1 of a run (``run/preflight.py``) asks it what it needs
before the batches are known (the formats of the files, the columns of the benchmark and
records, the benchmark's design) and then for the data object: a checkpoint's releases
(:meth:`release_data`) or its labelling batch (:meth:`labels_data`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from er_expectations.config import CheckpointConfig, ConfigError, ConfigIssue, SuiteConfig
from er_expectations.config.checkpoint import DataSources, EngineData
from er_expectations.core.errors import InputError
from er_expectations.core.io import table_columns
from er_expectations.run.benchmark_design import (
    benchmark_use_issues,
    columns_design,
    read_benchmark_design,
)
from er_expectations.run.data.base import CheckpointData
from er_expectations.run.data.engine import EngineReleases, open_source
from er_expectations.run.data.files import ReleaseData
from er_expectations.run.data.labels import LabelsData
from er_expectations.run.data.source import Source

__all__ = ["KINDS", "EngineTables", "FileTables", "tables_of"]


class FileTables:
    """The tables of a checkpoint that reads files (``data.engine: pandas``, the default)."""

    #: How a message names one of its tables ("records file").
    word = "file"
    #: Files are read as the run needs them: nothing to open, every release known.
    connected = True

    def __init__(self, checkpoint: CheckpointConfig) -> None:
        self.checkpoint = checkpoint

    @staticmethod
    def declared_formats(checkpoint: CheckpointConfig) -> dict[Path, str]:
        """The table format of every file of a checkpoint (its ``format:``, else from its suffix)."""
        data = checkpoint.data
        sources: list[Any] = [data.records, data.predictions, *(data.predictions.files or ())]
        if data.benchmark is not None:
            sources.append(data.benchmark)
        if data.labels is not None:
            sources.append(data.labels)
        return {Path(src.path): src.format for src in sources if getattr(src, "path", None) and src.format}

    @staticmethod
    def shown(table: Any) -> Any:
        """How a message names the table: its path."""
        return table.path

    def open(self, issues: Sequence[ConfigIssue], *, connect: bool) -> None:
        """Nothing to open: the files are read when needed."""

    def benchmark_columns(self) -> list[str] | None:
        bench = self.checkpoint.data.benchmark
        return table_columns(bench.path, format=bench.format) if bench else []

    def record_columns(self, wanted: Sequence[str] | None) -> list[str] | None:
        """The records file's columns when the suites name some (``wanted``), ``[]`` when they
        name none, ``None`` for a labelling checkpoint (``wanted`` is None)."""
        if wanted is None:
            return None
        records = self.checkpoint.data.records
        return table_columns(records.path, format=records.format) if wanted else []

    def release_data(self, extras: Sequence[str], record_extras: Sequence[str]) -> CheckpointData:
        return ReleaseData(self.checkpoint, extra_benchmark_columns=extras, extra_record_columns=record_extras)

    def labels_data(self) -> LabelsData:
        return LabelsData(self.checkpoint, None)

    def benchmark_design_issues(self, suites: Sequence[SuiteConfig],
                                benchmark_columns: Sequence[str] | None) -> list[ConfigIssue]:
        """The suites against the draws and design the benchmark file records (:mod:`..benchmark_design`)."""
        checkpoint = self.checkpoint
        bench = checkpoint.data.benchmark
        try:
            design = read_benchmark_design(bench.path, reference_column=bench.reference_column, format=bench.format)
        except InputError as error:
            line, column = checkpoint.location("data.benchmark.path")
            if line is None:
                line, column = checkpoint.location("data.benchmark")
            return [ConfigIssue(str(checkpoint.path), line, column, str(error))]
        return benchmark_use_issues(checkpoint, suites, design, shown=str(bench.path))


class EngineTables:
    """The tables of a checkpoint in a database or Spark (``data.engine: sql | duckdb | spark``):
    opened by ``run``, not by ``validate`` (no environment)."""

    word = "table"

    def __init__(self, checkpoint: CheckpointConfig) -> None:
        self.checkpoint = checkpoint
        self.source: Source | None = None

    @property
    def connected(self) -> bool:
        """Whether the source is open (its releases known)."""
        return self.source is not None and self.source.connected

    @staticmethod
    def declared_formats(checkpoint: CheckpointConfig) -> dict[Path, str]:
        """Only the labels are a file."""
        labels = checkpoint.data.labels
        return {Path(labels.path): labels.format} if labels is not None and labels.format else {}

    @staticmethod
    def shown(table: Any) -> Any:
        """How a message names the table: ``table 'mentions'``, ``query ...``."""
        return table.shown

    def open(self, issues: Sequence[ConfigIssue], *, connect: bool) -> None:
        """The source, opened and checked when ``connect`` (``run``); the issues found so far
        first (a database is not reached for a checkpoint that cannot run)."""
        if issues:
            raise ConfigError(list(issues))
        self.source = open_source(self.checkpoint, connect=connect)  # ConfigError, SourceUnreachableError

    def benchmark_columns(self) -> list[str] | None:
        return self.source.columns("benchmark") if self.checkpoint.data.benchmark else []

    def record_columns(self, wanted: Sequence[str] | None) -> list[str] | None:
        """The records table's columns (``None`` when not opened)."""
        return self.source.columns("records")

    def release_data(self, extras: Sequence[str], record_extras: Sequence[str]) -> CheckpointData:
        return EngineReleases(self.checkpoint, self.source, extra_benchmark_columns=extras,
                              extra_record_columns=record_extras)

    def labels_data(self) -> LabelsData:
        return LabelsData(self.checkpoint, self.source)  # the records in the engine

    def benchmark_design_issues(self, suites: Sequence[SuiteConfig],
                                benchmark_columns: Sequence[str] | None) -> list[ConfigIssue]:
        """The suites against the design the benchmark table's columns record."""
        if benchmark_columns is None:  # not opened (validate): its columns are not known
            return []
        design = columns_design(benchmark_columns)
        return benchmark_use_issues(self.checkpoint, suites, design, shown=self.checkpoint.data.benchmark.shown)


#: The tables of each kind of ``data`` section, by its config model.
KINDS: dict[type, type[FileTables] | type[EngineTables]] = {DataSources: FileTables, EngineData: EngineTables}


def tables_of(checkpoint: CheckpointConfig) -> type[FileTables] | type[EngineTables]:
    """The tables class of the checkpoint's kind of ``data`` section."""
    return KINDS[type(checkpoint.data)]
