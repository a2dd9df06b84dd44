"""The labelling batch: what Great Expectations validates for labelling QC (SPEC 9).

The seven rules of SPEC 9 compare a labels table (SPEC 2.2, one row per draw) with the
release it was labelled against: the predicted cluster of each drawn record, whether the
removed and added records exist, their block and name. GX validates one table per batch, so
:func:`labelling_batch` stacks the two into one table, and :func:`split_labelling_batch`
takes it apart again for :func:`er_expectations.analysis.labels.qc_labels`, the one implementation
of the rules:

* **label rows**, one per draw: the draw number, the drawn record (in the record id column),
  ``removed`` and ``added`` as list columns of record ids, and the optional predicted and
  true cluster ids the labeller wrote; the record columns are empty;
* **record rows**, one per record the rules look at: the record id, its predicted cluster
  (empty = not in the release, SPEC 2.1) and, when given, its block and name; the draw and
  labels columns are empty. The draw column tells the two kinds apart.

The record rows are the records the labels name (drawn, removed or added ids that exist in
the records) and every member of the drawn records' predicted clusters: exactly the records
the rules read, so the rules give the same answer on the batch as on the whole release (a
test checks it) while the batch stays small (a few records per draw, not the 10M-record
release). An id of the labels that is not a record row is not a record of the release
table: rule 4 reports it.

In a database or Spark the records part of a labelling table may be the whole release (the
labels stacked over it): :func:`fetch_labelling_batch` then fetches the label rows and only
the record rows this batch would hold, so the rules see the same records on every engine.

:class:`LabelsData` is the checkpoint side (``data.labels`` of a checkpoint): it reads the
labels file and the release it names and builds its one batch, with the interface of
:class:`~er_expectations.run.releases.ReleaseData` that the runner uses. With ``data.engine: sql |
spark`` the labels stay a file but the records and predictions stay in the engine: from the
release's batch there (:meth:`~er_expectations.run.sources.Source.labelling`) only the record rows
the rules read are fetched by id (:func:`fetch_rule_records`, the queries of
:func:`fetch_labelling_batch`), and :func:`labelling_batch` of them is the batch of the files.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from er_expectations.analysis.labels import (
    LabelColumns,
    Labels,
    _records_id_kind,
    parse_labels,
    qc_labels,
)
from er_expectations.core.errors import InputError

__all__ = [
    "BATCH_LABEL_ROLES",
    "LabelsData",
    "labelling_batch",
    "labels_checkpoint_issues",
    "labels_column_hint",
    "suite_kind_issues",
    "split_labelling_batch",
    "FetchedLabels",
    "fetch_labelling_batch",
    "fetch_rule_records",
]

#: The labels roles (``LabelColumns`` fields) a labelling batch carries, in column order.
BATCH_LABEL_ROLES: tuple[str, ...] = ("draw", "removed", "added", "predicted_cluster", "true_cluster")


def labelling_batch(
    labels: pd.DataFrame | Labels,
    records: pd.DataFrame,
    prediction: Hashable,
    *,
    record_id: Hashable,
    block: Hashable | None = None,
    name: Hashable | None = None,
    columns: LabelColumns | Mapping[str, str] | None = None,
    separator: str = ";",
) -> pd.DataFrame:
    """The labelling batch of ``labels`` against ``records`` (see the module docstring).

    Arguments as :func:`er_expectations.analysis.labels.qc_labels`: ``records`` is the release the
    labels were made against (``record_id``, the predicted cluster column ``prediction``,
    optional ``block`` and ``name`` columns). The batch has the record id, prediction, block
    and name columns under the records' names, and the labels columns under the labels'
    names (the drawn record goes into the record id column). Raises :class:`InputError` for
    a labels table that cannot be checked at all (cells that do not parse, duplicated draws,
    a drawn record outside the release, labels of another release): the errors of
    ``qc_labels``, before anything is validated.
    """
    from er_expectations.engines.pandas.release import _check_column, _check_frame

    frame = _check_frame(records)
    for parameter, column in (("record_id", record_id), ("prediction", prediction), ("block", block),
                              ("name", name)):
        if column is not None:
            _check_column(frame, column, parameter)
    parsed = labels if isinstance(labels, Labels) else parse_labels(
        labels, id_kind=_records_id_kind(frame[record_id]), columns=columns, separator=separator)
    if len(parsed) == 0:
        raise InputError("labels: the table has no draws; there is nothing to check (is it the right file?)")
    # the checks of the table as a whole (drawn records in the release, same release): no rule
    qc_labels(parsed, frame, prediction, record_id=record_id, rules=())
    cols = parsed.columns
    record_columns = [c for c in dict.fromkeys((record_id, prediction, block, name)) if c is not None]
    label_names = {role: getattr(cols, role) for role in BATCH_LABEL_ROLES}
    if parsed.predicted_cluster is None:
        del label_names["predicted_cluster"]
    if parsed.true_cluster is None:
        del label_names["true_cluster"]
    clash = [n for n in label_names.values() if n in record_columns]
    if clash:
        raise InputError(f"labels column {clash[0]!r} has the name of a column of the records; the labelling "
                         "batch holds both: rename it (columns={...}) or the records' column")

    named = pd.Index(list(dict.fromkeys([*parsed.record, *(i for t in parsed.removed for i in t),
                                         *(i for t in parsed.added for i in t)])))
    is_named = frame[record_id].isin(named).to_numpy(dtype=bool)
    drawn = frame.loc[is_named & frame[record_id].isin(pd.Index(parsed.record)).to_numpy(dtype=bool), prediction]
    in_drawn_cluster = frame[prediction].isin(pd.Index(drawn.dropna().unique())).to_numpy(dtype=bool)
    # one mask, so the records keep the order of the release (the rules list ids in that order)
    rows = frame.loc[is_named | in_drawn_cluster, record_columns].reset_index(drop=True)

    label_rows = pd.DataFrame({label_names["draw"]: pd.array(parsed.draw, dtype="Int64")})
    label_rows[record_id] = pd.Series(parsed.record, dtype=rows[record_id].dtype if len(rows) else object)
    label_rows[label_names["removed"]] = [list(t) for t in parsed.removed]
    label_rows[label_names["added"]] = [list(t) for t in parsed.added]
    for role in ("predicted_cluster", "true_cluster"):
        if role in label_names:
            label_rows[label_names[role]] = pd.Series(getattr(parsed, role), dtype=object)
    batch = pd.concat([label_rows, rows], ignore_index=True)
    batch[label_names["draw"]] = batch[label_names["draw"]].astype("Int64")
    return batch[[*label_names.values(), *record_columns]]


def split_labelling_batch(
    batch: pd.DataFrame,
    *,
    record_id: Hashable,
    prediction: Hashable,
    draw: str = "draw",
    removed: str = "removed",
    added: str = "added",
    predicted_cluster: str | None = "predicted_cluster",
    true_cluster: str | None = "true_cluster",
) -> tuple[pd.DataFrame, pd.DataFrame, LabelColumns]:
    """``(labels, records, columns)`` of a labelling batch: the label rows (draw filled) with
    the labels columns, the record rows (draw empty) without them, and the labels column names
    for :func:`~er_expectations.analysis.labels.qc_labels`. ``predicted_cluster`` and ``true_cluster``
    are used when the batch has them (SPEC 2.2 optional columns); ``None``: not used."""
    from er_expectations.engines.pandas.release import _check_column, _check_frame

    frame = _check_frame(batch)
    roles = {"draw": draw, "record_id": record_id, "removed": removed, "added": added,
             "predicted_cluster": predicted_cluster, "true_cluster": true_cluster}
    for role in ("predicted_cluster", "true_cluster"):
        if roles[role] is not None and roles[role] not in frame.columns:
            roles[role] = None
    for role, column in roles.items():
        if column is not None:
            _check_column(frame, column, f"{role}_column")
    is_label = frame[draw].notna().to_numpy(dtype=bool)
    label_columns = [c for c in roles.values() if c is not None]
    labels = frame.loc[is_label, label_columns].reset_index(drop=True)
    records = frame.loc[~is_label, [c for c in frame.columns if c not in label_columns or c == record_id]]
    # an optional role left out keeps its default name, which the labels frame does not hold
    names = {role: column for role, column in roles.items() if column is not None}
    return labels, records.reset_index(drop=True), LabelColumns.of(names)


def _id_kind_of(values: Sequence, record_id: Hashable) -> str:
    """'integer' or 'text' from the drawn records' ids as a database or Spark returns them
    (the type of the column, as :func:`er_expectations.analysis.labels._records_id_kind` reads it from a
    pandas dtype)."""
    present = [v for v in values if v is not None]
    if any(isinstance(v, float) for v in present):
        raise InputError(f"record_id column {record_id!r} holds floating-point numbers; record ids must be "
                         "integers or text (cast the column to an integer or a text type)")
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return "integer"
    return "text"


@dataclass(frozen=True)
class FetchedLabels:
    """The label rows and the records the rules read, fetched from a database or Spark.

    ``named`` are rows (record id, prediction) of the records the labels name (drawn,
    removed, added), ``members`` those of the other members of the drawn records' predicted
    clusters: together the record rows :func:`labelling_batch` keeps. Rule 5 also reads the
    block and name of the named records: :meth:`records` fetches them (few rows) when asked.
    """

    source: object
    labels: Labels
    columns: LabelColumns
    record_id: str
    prediction: str
    draw: str
    kind: str
    wanted: tuple
    named: list
    members: list

    def records(self, *, block: str | None = None, name: str | None = None) -> pd.DataFrame:
        """The records for :func:`~er_expectations.analysis.labels.qc_labels` (id, prediction, block, name)."""
        for parameter, column in (("block", block), ("name", name)):
            if column is not None:
                self.source.column(column, parameter)
        record_columns = [c for c in dict.fromkeys((self.record_id, self.prediction, block, name)) if c is not None]
        named = self.named
        if len(record_columns) > 2:  # the named records again, with their block and name
            named = self.source.record_rows(self.draw, record_columns, self.record_id, list(self.wanted))
        pad = (None,) * (len(record_columns) - 2)
        rows = [tuple(r) for r in named] + [(*r, *pad) for r in self.members]
        if any(r[0] is None for r in rows):
            raise InputError(f"record_id column {self.record_id!r} is null on a record row of a drawn record's "
                             "predicted cluster; every record needs an id")
        frame = pd.DataFrame(rows, columns=record_columns, dtype=object)
        if self.kind == "integer":
            frame[self.record_id] = frame[self.record_id].astype("int64")
        return frame


def fetch_labelling_batch(
    source,
    *,
    record_id: str,
    prediction: str,
    draw: str = "draw",
    removed: str = "removed",
    added: str = "added",
    predicted_cluster: str | None = "predicted_cluster",
    true_cluster: str | None = "true_cluster",
) -> FetchedLabels:
    """:func:`split_labelling_batch` of a batch held in a database or Spark (SPEC 9).

    ``source`` is an :class:`~er_expectations.engines.sql.labelling.SqlLabelling` or
    :class:`~er_expectations.engines.spark.labelling.SparkLabelling`. The records part of such
    a batch may be the whole release, so only what the rules read is fetched: the label rows,
    then the record rows the labels name (drawn, removed and added ids), then the members of
    the drawn records' predicted clusters: the records :func:`labelling_batch` keeps (record
    id and prediction; :meth:`FetchedLabels.records` adds block and name for rule 5).
    """
    present = source.columns()
    roles = {"draw": draw, "record_id": record_id, "removed": removed, "added": added,
             "predicted_cluster": predicted_cluster, "true_cluster": true_cluster}
    for role in ("predicted_cluster", "true_cluster"):
        if roles[role] is not None and roles[role] not in present:
            roles[role] = None
    for role, column in roles.items():
        if column is not None:
            source.column(column, f"{role}_column")
    source.column(prediction, "prediction")
    names = {role: column for role, column in roles.items() if column is not None}
    columns = LabelColumns.of(names)
    label_columns = list(names.values())
    frame = pd.DataFrame(source.label_rows(draw, label_columns), columns=label_columns)
    kind = _id_kind_of(frame[record_id].tolist(), record_id)
    parsed = parse_labels(frame, id_kind=kind, columns=columns)

    wanted, named, members = fetch_rule_records(source, parsed, [record_id, prediction], draw=draw)
    return FetchedLabels(source=source, labels=parsed, columns=columns, record_id=record_id, prediction=prediction,
                         draw=draw, kind=kind, wanted=wanted, named=named, members=members)


def fetch_rule_records(source, labels: Labels, names: Sequence[str], *,
                       draw: str | None) -> tuple[tuple, list[tuple], list[tuple]]:
    """``(wanted, named, members)``: the record rows the rules of SPEC 9 read, fetched by id.

    ``names`` are the columns fetched, the record id and the prediction first; ``source`` an
    :class:`~er_expectations.engines.sql.labelling.SqlLabelling` or
    :class:`~er_expectations.engines.spark.labelling.SparkLabelling` (``draw``: its draw
    column, ``None`` for a table of records only). ``wanted`` are the ids the labels name
    (drawn, removed, added), ``named`` the rows of those that exist, ``members`` the rows of
    the other members of the drawn records' predicted clusters: the records
    :func:`labelling_batch` keeps, in two queries of bounded ``IN`` lists.
    """
    record_id, prediction = names[0], names[1]
    wanted = tuple(dict.fromkeys([*labels.record, *(i for t in labels.removed for i in t),
                                  *(i for t in labels.added for i in t)]))
    named = source.record_rows(draw, list(names), record_id, list(wanted))
    drawn = set(labels.record)
    clusters = list(dict.fromkeys(r[1] for r in named if r[0] in drawn and r[1] is not None))
    known = set(wanted)
    members = [r for r in source.record_rows(draw, list(names), prediction, clusters) if r[0] not in known]
    return wanted, named, members


@dataclass(frozen=True, slots=True)
class LabelsSourceRef:
    """The one batch of a labelling checkpoint (same fields the runner reads on a release)."""

    label: str
    key: str
    path: Path
    format: str | None = None


class LabelsData:
    """The labelling batch of a checkpoint with ``data.labels`` (runner interface of
    :class:`~er_expectations.run.releases.ReleaseData`: ``select``, ``frame``, ``batch_columns``)."""

    def __init__(self, checkpoint, engine_source=None) -> None:
        from er_expectations.run.releases import ReleaseData

        self.checkpoint = checkpoint
        self.source = checkpoint.data.labels
        if engine_source is None:
            self.releases = ReleaseData(checkpoint)
        else:  # records and predictions in a database or Spark (data.engine: sql | spark)
            from er_expectations.run.sources import EngineReleases

            block = self.source.block_column
            self.releases = EngineReleases(checkpoint, engine_source,
                                           extra_record_columns=[block] if block is not None else [])
        self.id_column = self.releases.id_column
        self.prediction_column = self.releases.prediction_column
        self.name_column = self.releases.name_column

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
        try:
            return labelling_batch(labels, table, self.prediction_column, record_id=self.id_column,
                                   block=src.block_column, name=self.name_column, columns=self.columns,
                                   separator=src.separator)
        except InputError as error:
            raise InputError(f"{src.path}: {error}") from error

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
            return labelling_batch(parsed, frame, prediction, record_id=record_id, block=src.block_column,
                                   name=self.name_column, columns=self.columns, separator=src.separator)
        except InputError as error:
            raise InputError(f"{src.path}: {error}") from error


# -- checkpoint checks (the runner's phase 1) -----------------------------------------------


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


#: Name prefix of the labelling expectations (their public names, SPEC 9).
LABELS_PREFIX = "expect_labels_"


def suite_kind_issues(checkpoint, suites: Sequence) -> list:
    """Expectations that do not fit the checkpoint's batches, each at its suite line.

    A checkpoint with ``data.labels`` validates a labelling batch: a release expectation there
    would compute its statistic on the few records the labels refer to. A checkpoint without
    it validates releases, which have no labels for a labelling expectation.
    """
    from er_expectations.config import ConfigIssue

    labelling = checkpoint.data.labels is not None
    issues = []
    for suite in suites:
        for cfg in suite.expectations:
            if cfg.name.startswith(LABELS_PREFIX) == labelling:
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
