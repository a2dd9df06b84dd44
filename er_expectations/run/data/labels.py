"""The labelling checkpoint (``data.labels`` of a checkpoint file, SPEC 9): its one batch.

:class:`LabelsData` reads the labels file and the release it names and builds its one batch
(:func:`er_expectations.analysis.labelling_batch.labelling_batch`), with the interface of
:class:`~er_expectations.run.data.files.ReleaseData` that the runner uses. With ``data.engine: sql |
spark`` the labels stay a file but the records and predictions stay in the engine: from the
release's batch there (:meth:`~er_expectations.run.data.source.Source.labelling`) only the record rows
the rules read are fetched by id (:func:`~er_expectations.analysis.labelling_batch.fetch_rule_records`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from er_expectations.analysis.labelling_batch import fetch_rule_records, labelling_batch
from er_expectations.analysis.labels import (
    LabelColumns,
    parse_labels,
)
from er_expectations.core.errors import InputError
from er_expectations.run.data.parquet import ParquetBatches, parquet_tables


@dataclass(frozen=True, slots=True)
class LabelsSourceRef:
    """The one batch of a labelling checkpoint (same fields the runner reads on a release)."""

    label: str
    key: str
    path: Path
    format: str | None = None


class LabelsData(ParquetBatches):
    """The labelling batch of a checkpoint with ``data.labels`` (a :class:`~.base.CheckpointData`:
    one batch, written as a Parquet file like a release of files)."""

    #: What one batch of the checkpoint is, as the run's summary names it.
    unit = "labels file"
    #: A labelling batch is no release: drift checks have nothing to compare it with.
    compares_releases = False

    def __init__(self, checkpoint, engine_source=None) -> None:
        from er_expectations.run.data.files import ReleaseData

        self.checkpoint = checkpoint
        self.source = checkpoint.data.labels
        if engine_source is None:
            self.releases = ReleaseData(checkpoint)
        else:  # records and predictions in a database or Spark (data.engine: sql | spark)
            from er_expectations.run.data.engine import EngineReleases

            block = self.source.block_column
            self.releases = EngineReleases(checkpoint, engine_source,
                                           extra_record_columns=[block] if block is not None else [])
        self.id_column = self.releases.id_column
        self.prediction_column = self.releases.prediction_column
        self.name_column = self.releases.name_column

    def batches(self, selected: Sequence[LabelsSourceRef], needs: Sequence[object]) -> dict[str, bytes]:
        """The labelling batch (:meth:`frame`) as Parquet bytes."""
        return parquet_tables((ref.label, self.frame(ref)) for ref in selected)

    def provenance_inputs(self, base: Path) -> list[dict]:
        """The release's inputs (files, or the tables of a database or Spark) and the labels file."""
        from er_expectations.run.provenance import file_fact  # deferred: imports gx/ (GX)

        return [*self.releases.provenance_inputs(base), file_fact("labels", self.source.path, base=base)]

    @property
    def columns(self) -> LabelColumns:
        """The labels column names of ``data.labels`` (optional ones used when the file has them)."""
        src = self.source
        return LabelColumns.of({"draw": src.draw_column, "record_id": src.id_column, "removed": src.removed_column,
                                "added": src.added_column, "predicted_cluster": src.predicted_cluster_column,
                                "true_cluster": src.true_cluster_column})

    def batch_columns(self) -> list[str]:
        """The columns of the labelling batch (labels columns, then record columns)."""
        from er_expectations.core.io import table_columns

        src = self.source
        present = table_columns(src.path, format=src.format)
        out = [src.draw_column, src.removed_column, src.added_column]
        out += [c for c in (src.predicted_cluster_column, src.true_cluster_column) if c in present]
        out += [self.id_column, self.prediction_column]
        return out + [c for c in (src.block_column, self.name_column) if c is not None]

    @property
    def connected(self) -> bool:
        """Whether the releases can be listed: files, or a database or Spark opened (``run``, not ``validate``)."""
        return getattr(self.releases, "connected", True)

    def release(self):
        """The release the labels were made against (``data.labels.release``)."""
        releases = self.releases.all_releases()
        wanted = self.source.release
        if wanted is None:
            if len(releases) != 1:
                raise InputError(
                    f"data.labels.release: the checkpoint has {len(releases)} releases; name the one the labels "
                    "were made against (its label, e.g. 2022-06-30, or its column)")
            return releases[0]
        for release in releases:
            if wanted in (release.label, release.key):
                return release
        from er_expectations.core.hints import did_you_mean

        hint = did_you_mean(wanted, [r.label for r in releases])
        raise InputError(f"data.labels.release: '{wanted}' is not a release of the checkpoint"
                         + (f" ({hint})" if hint else "") + f"; releases: {', '.join(r.label for r in releases[:8])}")

    def history_positions(self, selected: Sequence[LabelsSourceRef]) -> list[str]:
        """The history's release order: a labelling batch is its own."""
        return [r.label for r in selected]

    def select(self, wanted: Sequence[str] | None = None) -> list[LabelsSourceRef]:
        """The one batch, labelled ``<labels file stem>``; ``wanted`` must name it (or be empty)."""
        release = self.release()
        ref = LabelsSourceRef(label=self.source.path.stem, key=release.key, path=self.source.path,
                              format=self.source.format)
        if wanted and not set(wanted) & {ref.label, release.label, release.key}:
            raise InputError(f"--release {', '.join(wanted)}: checkpoint {self.checkpoint.name!r} validates the "
                             f"labels {ref.label!r} made against release {release.label!r}; leave --release out")
        return [ref]

    def frame(self, ref: LabelsSourceRef) -> pd.DataFrame:
        """The labelling batch: the labels file against its release (see the module docstring)."""
        from er_expectations.core.io import read_table

        release = self.release()
        src = self.source
        if not hasattr(self.releases, "frame"):  # a database or Spark: only the records the rules read
            return self._engine_frame(release)
        table = self.releases.frame(release)
        if src.block_column is not None:
            rec = self.checkpoint.data.records
            blocks = read_table(rec.path, [rec.id_column, src.block_column], format=rec.format)
            table = table.merge(blocks, on=rec.id_column, how="left", validate="one_to_one")
        labels = read_table(src.path, format=src.format)
        from er_expectations.core.io import id_kind

        clusters = table[self.prediction_column].dropna()
        self._same_cluster_kind(labels, id_kind(clusters) if len(clusters) else None)
        try:
            return labelling_batch(labels, table, prediction=self.prediction_column, record_id=self.id_column,
                                   block=src.block_column, name=self.name_column, columns=self.columns,
                                   separator=src.separator)
        except InputError as error:
            raise InputError(f"{src.path}: {error}") from error

    def _same_cluster_kind(self, labels: pd.DataFrame, theirs: str | None) -> None:
        """A typed labels file (Parquet) writes ``predicted_cluster`` with the release's type:
        text '3' never equals the integer cluster 3, as record ids of two files never match
        across types. A CSV file is all text: its digits are read as the release's integers."""
        from er_expectations.core.io import file_kind, id_kind

        src = self.source
        column = src.predicted_cluster_column
        if column not in labels.columns or file_kind(src.path, src.format) == "csv":
            return
        given = labels[column].dropna()
        if given.empty or theirs is None:
            return
        mine = id_kind(given)
        if (mine == "integer") != (theirs == "integer"):
            raise InputError(
                f"{src.path}: column {column!r} (data.labels.predicted_cluster_column) holds {mine} cluster ids "
                f"(e.g. {given.iloc[0]!r}) but release {self.source.release or ''!s} has {theirs} cluster ids in "
                f"column {self.checkpoint.data.predictions.target_column!r}, so no draw would match its cluster; "
                "write the column with the release's type")

    def _engine_frame(self, release) -> pd.DataFrame:
        """The labelling batch of a checkpoint whose records and predictions are in a database
        or Spark: the labels file (pandas) and only the record rows the rules read, fetched
        from the release's batch in the engine by id (:func:`fetch_rule_records`): the same
        rows, columns and order as :func:`labelling_batch` keeps from the whole release on
        files (the release's records in the order of their ids, as the files' outer join
        gives them)."""
        from er_expectations.core.io import read_table

        src = self.source
        releases = self.releases
        releases.check_data()  # null, duplicated and unjoinable ids, counted in the engine
        record_id, prediction = self.id_column, self.prediction_column
        kind = releases.source.value_kind("records", self.checkpoint.data.records.id_column)
        if kind == "number":
            raise InputError(f"{releases.source.shown('records')}: column {self.checkpoint.data.records.id_column!r} "
                             "holds floating-point numbers; record ids must be integers or text (cast the column "
                             "in a query)")
        labels = read_table(src.path, format=src.format)
        pred = self.checkpoint.data.predictions
        self._same_cluster_kind(labels, releases.source.value_kind(
            "predictions", release.key if pred.layout == "wide" else str(pred.prediction_column)))
        try:
            parsed = parse_labels(labels, id_kind="integer" if kind == "integer" else "text",
                                  columns=self.columns, separator=src.separator)
            names = [c for c in dict.fromkeys((record_id, prediction, src.block_column, self.name_column))
                     if c is not None]
            _, named, members = fetch_rule_records(releases.labelling(release), parsed, names, draw=None)
            rows = sorted(named + members, key=lambda r: r[0])
            frame = pd.DataFrame(rows, columns=names, dtype=object)
            if kind == "integer":
                frame[record_id] = frame[record_id].astype("int64")
            return labelling_batch(parsed, frame, prediction=prediction, record_id=record_id, block=src.block_column,
                                   name=self.name_column, columns=self.columns, separator=src.separator)
        except InputError as error:
            raise InputError(f"{src.path}: {error}") from error


def labels_checkpoint_issues(checkpoint, data: LabelsData | None = None) -> list:
    """Problems of a checkpoint with ``data.labels``, each at its line: a ``releases`` key (the
    labels name their release in ``data.labels.release``) and a release that is not there."""
    from er_expectations.config import ConfigIssue

    issues = []
    if checkpoint.releases != "all":
        line, column = checkpoint.location("releases")
        issues.append(ConfigIssue(
            str(checkpoint.path), line, column,
            "releases: a checkpoint with data.labels validates its labels file against one release, "
            "data.labels.release", "remove 'releases' and name the release in data.labels.release"))
    try:
        if data is None:
            data = LabelsData(checkpoint)
        if data.connected:  # the releases of a database or Spark are listed when it runs
            data.release()
    except InputError as error:
        line, column = checkpoint.location("data.labels.release")
        if line is None:
            line, column = checkpoint.location("data.labels")
        message, _, hint = str(error).partition("; ")
        issues.append(ConfigIssue(str(checkpoint.path), line, column, message, hint or None))
    return issues


def labels_column_hint(checkpoint, param: str, column: str, available: Sequence[str]) -> str:
    """How to fix a suite parameter naming a column the labelling batch does not have."""
    from er_expectations.core.hints import did_you_mean

    labels = checkpoint.data.labels
    sources = {
        "record_id_column": f"the record id column is '{checkpoint.data.records.id_column}' "
                            "(data.records.id_column; the drawn record goes there too)",
        "prediction_column": f"the prediction column is '{checkpoint.data.predictions.target_column}' "
                             "(data.predictions.batch_column)",
        "name_column": "the name column is data.name.output_column" if checkpoint.data.name is not None
                       else "the checkpoint has no data.name; add one to compare names",
        "block_column": f"the block column is '{labels.block_column}' (data.labels.block_column)"
                        if labels.block_column else "add data.labels.block_column (a column of the records)",
    }
    default = (f"the labels columns are named in data.labels ({param.removesuffix('_column')}_column); "
               f"the optional ones are in the batch only when {labels.path.name} has them")
    close = did_you_mean(column, list(available))
    return sources.get(param, default) + (f"; {close}" if close else "")


def suite_kind_issues(checkpoint, suites: Sequence) -> list:
    """Expectations that do not fit the checkpoint's batches, each at its suite line.

    A checkpoint with ``data.labels`` validates a labelling batch: a release expectation there
    would compute its statistic on the few records the labels refer to. A checkpoint without
    it validates releases, which have no labels for a labelling expectation.
    """
    from er_expectations.config import ConfigIssue
    from er_expectations.gx.expectations import (
        EXPECTATION_TYPES,  # deferred: GX, for the classes' flags
    )

    labelling = checkpoint.data.labels is not None
    issues = []
    for suite in suites:
        for cfg in suite.expectations:
            if getattr(EXPECTATION_TYPES.get(cfg.name), "reads_labels", False) == labelling:
                continue
            if labelling:
                message = (f"{cfg.name} checks a release, but checkpoint '{checkpoint.name}' validates the labels "
                           "file of data.labels (its batch holds only the records the labels refer to)")
                hint = "run this suite from a checkpoint without data.labels, or remove the expectation"
            else:
                message = (f"{cfg.name} checks a labels table, but checkpoint '{checkpoint.name}' has no "
                           "data.labels; its batches are releases")
                hint = "add data.labels to the checkpoint (see checkpoints/labelling_qc.yml), or remove the expectation"
            issues.append(ConfigIssue(str(suite.path), cfg.line, None, message, hint))
    return issues
