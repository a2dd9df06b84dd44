"""What every kind of checkpoint data shares: the protocol the runner asks
(:class:`CheckpointData`), the columns of a release batch and the choice of releases
(:class:`BatchLayout`), one release (:class:`ReleaseSource`) and its label.

The runner (``run/runner.py``) and its helpers never ask which kind of data a checkpoint has
(files, a database, Spark, a labelling batch): they ask its data object. One implementation per
kind: :class:`~.files.ReleaseData` (files, pandas), :class:`~.engine.EngineReleases` (SQL,
DuckDB, Spark: one :class:`~.source.Source` per engine) and :class:`~.labels.LabelsData`;
:func:`~.factory.checkpoint_data` picks it from the checkpoint's ``data`` section.
"""

from __future__ import annotations

import abc
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from er_expectations.config.checkpoint import CheckpointConfig
from er_expectations.core.errors import InputError

__all__ = ["BatchLayout", "CheckpointData", "ReleaseSource", "release_label"]


class CheckpointData(Protocol):
    """What the runner asks a checkpoint's data, whatever holds it (issue 32).

    A run (``run/runner.py``) selects the batches (:meth:`select`), builds them
    (:meth:`batches`: Parquet bytes, a SQL query or a Spark DataFrame each), writes what is
    written (:meth:`write_batches`), declares them to GX (:meth:`batch_definitions`), runs each
    with its :meth:`batch_parameters`, records its provenance (:meth:`provenance_inputs`,
    :meth:`table_file`) and its place in the history (:meth:`history_positions`).
    """

    #: What one batch of the checkpoint is, as the run's summary names it ("release", "labels file").
    unit: str
    #: Whether its batches are releases a drift check compares with a baseline release.
    compares_releases: bool

    @property
    def connected(self) -> bool:
        """Whether the batches can be listed: files, or a database or Spark opened (``run``, not ``validate``)."""

    def batch_columns(self) -> list[str]:
        """The columns of every batch (what a suite may name)."""

    def select(self, wanted: Sequence[str] | None = None) -> list[Any]:
        """The batches a run validates: the checkpoint's, then those ``wanted`` (labels or keys)."""

    def history_positions(self, selected: Sequence[Any]) -> list[str]:
        """The history's release order."""

    def batches(self, selected: Sequence[Any], needs: Sequence[Any]) -> dict[str, Any]:
        """Each selected batch by label, with the baseline columns of ``needs`` (drift checks),
        checked and built: nothing is written yet."""

    def write_batches(self, folder: Path, selected: Sequence[Any], names: Mapping[str, str],
                      batches: dict[str, Any]) -> None:
        """Write what GX reads from the project's ``folder`` (file name ``names[label]``)."""

    def batch_definitions(self, ctx: Any, datasource: str, folder: Path, names: Mapping[str, str],
                          batches: Mapping[str, Any]) -> dict[str, Any]:
        """GX's datasource ``datasource`` and one batch definition per batch, by label."""

    def batch_parameters(self, batch: Any) -> dict[str, Any] | None:
        """The ``batch_parameters`` of ``Checkpoint.run`` for ``batch``."""

    def table_file(self, folder: Path, name: str) -> Path | None:
        """The file GX reads for the batch written as ``name`` (``None``: no file)."""

    def provenance_inputs(self, base: Path) -> list[dict[str, Any]]:
        """Each input table as provenance records it (paths relative to ``base``)."""


def release_label(column: str, pattern: str | Sequence[str] | None) -> str:
    """Display label of a release column: the part a '*' glob matched, dates as YYYY-MM-DD."""
    label = column
    if isinstance(pattern, str) and pattern.count("*") == 1:
        head, tail = pattern.split("*")
        if column.startswith(head) and column.endswith(tail) and len(column) > len(head) + len(tail):
            label = column[len(head): len(column) - len(tail)]
    if re.fullmatch(r"\d{8}", label):
        label = f"{label[:4]}-{label[4:6]}-{label[6:]}"
    return label


@dataclass(frozen=True, slots=True)
class ReleaseSource:
    """One release: its display ``label`` and where its prediction comes from (``key``: a
    column of the wide layout, a key of ``files``); ``path`` and ``format`` of its file, or
    ``value`` of the release column (a database's or Spark's long layout)."""

    label: str
    key: str
    path: Path | None = None
    format: str | None = None
    value: object = None



class BatchLayout(abc.ABC):
    """The columns of a checkpoint's release batches and the choice of releases, whatever
    holds the tables (files: :class:`ReleaseData`; a database or Spark:
    :class:`~er_expectations.run.data.engine.EngineReleases`); ``all_releases`` is theirs."""

    def __init__(
        self,
        checkpoint: CheckpointConfig,
        *,
        extra_benchmark_columns: Sequence[str] = (),
        extra_record_columns: Sequence[str] = (),
    ) -> None:
        self.checkpoint = checkpoint
        self.data = checkpoint.data
        self.id_column = self.data.records.id_column
        self.prediction_column = self.data.predictions.target_column
        self.reference_column = self.data.benchmark.reference_column if self.data.benchmark else None
        self.name_column = self.data.name.output_column if self.data.name else None
        core = {self.id_column, self.prediction_column, self.reference_column, self.name_column}
        if self.data.benchmark is not None:
            core.add(self.data.benchmark.id_column)
        self.extra_columns = (
            tuple(c for c in dict.fromkeys(extra_benchmark_columns) if c not in core)
            if self.data.benchmark is not None
            else ()
        )
        # the error tags of the benchmark clusters (SPEC 12.1), carried on their records
        tags = getattr(self.data, "tags", None)
        self.tags_column = tags.column if tags is not None else None
        self.extra_columns = tuple(c for c in self.extra_columns if c != self.tags_column)
        # record columns the suites name (surnames and group attributes for SPEC 8 subgroups)
        self.record_columns = tuple(
            c for c in dict.fromkeys(extra_record_columns)
            if c not in core and c not in self.extra_columns and c != self.tags_column
        )

    def batch_columns(self) -> list[str]:
        """The columns of every release table: id, prediction, reference, name, extras."""
        columns = [self.id_column, self.prediction_column]
        columns += [c for c in (self.reference_column, self.name_column) if c is not None]
        tags = [self.tags_column] if self.tags_column is not None else []
        return columns + list(self.extra_columns) + tags + list(self.record_columns)

    #: What one batch of the checkpoint is, as the run's summary names it.
    unit = "release"
    #: A release batch: a drift check compares it with its baseline release.
    compares_releases = True

    @abc.abstractmethod
    def all_releases(self) -> list[ReleaseSource]:
        """Every release of the predictions, in the checkpoint's order."""

    def history_positions(self, selected: Sequence[ReleaseSource]) -> list[str]:
        """The history's release order: every release of the predictions."""
        return [r.label for r in self.all_releases()]

    def select(self, wanted: Sequence[str] | None = None) -> list[ReleaseSource]:
        """Releases chosen by the checkpoint's ``releases`` and then by ``wanted`` (labels or keys)."""
        releases = self.all_releases()
        if self.checkpoint.releases != "all":
            chosen = set(self.checkpoint.releases)
            releases = [r for r in releases if r.key in chosen or r.label in chosen]
        if wanted:
            known = {r.label for r in releases} | {r.key for r in releases}
            unknown = [w for w in wanted if w not in known]
            if unknown:
                from er_expectations.core.hints import did_you_mean

                hints = []
                for w in unknown:
                    hint = did_you_mean(w, sorted(known))
                    hints.append(f"'{w}'" + (f" ({hint})" if hint else ""))
                raise InputError(
                    f"--release {', '.join(hints)}: not a release of checkpoint {self.checkpoint.name!r}; "
                    f"known: {', '.join(r.label for r in releases)}"
                )
            releases = [r for r in releases if r.label in wanted or r.key in wanted]
        if not releases:
            raise InputError(f"checkpoint {self.checkpoint.name!r} selects no release")
        return releases
