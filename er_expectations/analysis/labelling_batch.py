"""The labelling batch: what Great Expectations validates for labelling QC (SPEC 9).

The seven rules of SPEC 9 compare a labels table (SPEC 2.2, one row per draw) with the
release it was labelled against: the predicted cluster of each drawn record, whether the
removed and added records exist, their block and name. GX validates one table per batch, so
:func:`labelling_batch` stacks the two into one table, and :func:`split_labelling_batch`
takes it apart again for :func:`er_expectations.analysis.labelqc.qc_labels`, the one implementation
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

The checkpoint side (``data.labels`` of a checkpoint file) is :mod:`er_expectations.run.data.labels`.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from er_expectations.analysis.labelqc import qc_labels
from er_expectations.analysis.labels import (
    LabelColumns,
    Labels,
    int64_text,
    parse_labels,
    records_id_kind,
)
from er_expectations.core.deprecation import old_call_forms
from er_expectations.core.errors import InputError
from er_expectations.core.io import nullable_integers

__all__ = [
    "BATCH_LABEL_ROLES",
    "labelling_batch",
    "split_labelling_batch",
    "FetchedLabels",
    "fetch_labelling_batch",
    "fetch_rule_records",
]

#: The labels roles (``LabelColumns`` fields) a labelling batch carries, in column order.
BATCH_LABEL_ROLES: tuple[str, ...] = ("draw", "removed", "added", "predicted_cluster", "true_cluster")


@old_call_forms(data=2, positional=('prediction',))
def labelling_batch(
    labels: pd.DataFrame | Labels,
    records: pd.DataFrame,
    *,
    prediction: Hashable,
    record_id: Hashable,
    block: Hashable | None = None,
    name: Hashable | None = None,
    columns: LabelColumns | Mapping[str, str] | None = None,
    separator: str = ";",
) -> pd.DataFrame:
    """The labelling batch of ``labels`` against ``records`` (see the module docstring).

    Arguments as :func:`er_expectations.analysis.labelqc.qc_labels`: ``records`` is the release the
    labels were made against (``record_id``, the predicted cluster column ``prediction``,
    optional ``block`` and ``name`` columns). The batch has the record id, prediction, block
    and name columns under the records' names, and the labels columns under the labels'
    names (the drawn record goes into the record id column). Raises :class:`InputError` for
    a labels table that cannot be checked at all (cells that do not parse, duplicated draws,
    a drawn record outside the release, labels of another release): the errors of
    ``qc_labels``, before anything is validated.


    Parameters
    ----------
    labels : pandas.DataFrame or Labels
        The labels table (SPEC 2.2), one row per draw.
    records : pandas.DataFrame
        The release the labels were made against, one row per record.
    prediction : hashable
        The column of ``records`` with the predicted cluster ids.
    record_id : hashable
        The record id column of ``records``.
    block : hashable, optional
        A blocking column of ``records`` (labelling QC rule 5).
    name : hashable, optional
        A name column of ``records`` (labelling QC rule 5).
    columns : LabelColumns or mapping, optional
        Names of the labels-table columns.
    separator : str
        The separator of the ids in ``removed`` and ``added``.

    Returns
    -------
    pandas.DataFrame
        One row per draw, then one row per record of the release.

    Examples
    --------
    >>> import pandas as pd
    >>> import er_expectations as erx
    >>> records = pd.DataFrame({"id": ["a", "b", "c", "d"], "pred": ["P1", "P1", "P2", "P2"]})
    >>> labels = pd.DataFrame({"draw": [1, 2], "record_id": ["a", "c"], "removed": ["", "d"],
    ...                        "added": ["", ""]})
    >>> batch = erx.labelling_batch(labels, records, prediction="pred", record_id="id")
    >>> len(batch), batch.columns.tolist()
    (6, ['draw', 'removed', 'added', 'id', 'pred'])
    """
    from er_expectations.engines.pandas.release import check_column, check_frame

    frame = check_frame(records)
    for parameter, column in (("record_id", record_id), ("prediction", prediction), ("block", block),
                              ("name", name)):
        if column is not None:
            check_column(frame, column, parameter)
    parsed = labels if isinstance(labels, Labels) else parse_labels(
        labels, id_kind=records_id_kind(frame[record_id]), columns=columns, separator=separator)
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

    # the label rows leave the record columns empty: integer ids stay exact (not float64)
    rows = nullable_integers(rows, [c for c in record_columns if c != record_id])
    label_rows = pd.DataFrame({label_names["draw"]: pd.array(parsed.draw, dtype="Int64")})
    label_rows[record_id] = pd.Series(parsed.record, dtype=rows[record_id].dtype if len(rows) else object)
    label_rows[label_names["removed"]] = [list(t) for t in parsed.removed]
    label_rows[label_names["added"]] = [list(t) for t in parsed.added]
    if "predicted_cluster" in label_names:
        label_rows[label_names["predicted_cluster"]] = _cluster_ids(parsed, rows[prediction], prediction)
    if "true_cluster" in label_names:
        label_rows[label_names["true_cluster"]] = _true_cluster_ids(parsed.true_cluster)
    batch = pd.concat([label_rows, rows], ignore_index=True)
    batch[label_names["draw"]] = batch[label_names["draw"]].astype("Int64")
    return batch[[*label_names.values(), *record_columns]]


def _true_cluster_ids(values: list) -> pd.Series:
    """The labels' ``true_cluster`` for the batch: integers (none a bool) as nullable Int64, so that ids
    above 2**53 stay exact through the batch's Parquet file (a column of integers with the record rows'
    empty cells would be read back as float64); any other ids as given."""
    ints = [v for v in values if v is not None]
    if ints and all(isinstance(v, int | np.integer) and not isinstance(v, bool | np.bool_) for v in ints) \
            and all(-(2**63) <= int(v) < 2**63 for v in ints):
        return pd.Series(pd.array([None if v is None else int(v) for v in values], dtype="Int64"))
    return pd.Series(values, dtype=object)


def _cluster_ids(parsed: Labels, clusters: pd.Series, prediction: Hashable) -> pd.Series:
    """The labels' ``predicted_cluster`` in the type of the release's cluster ids.

    Integer clusters: integers, or text of digits (a CSV file, where every cell is text), as
    nullable integers so that ids above 2**53 stay exact through the batch's Parquet file;
    anything else is an input error naming the column and the draw. Other clusters as given.
    """
    values = parsed.predicted_cluster
    if not pd.api.types.is_integer_dtype(clusters.dtype) or pd.api.types.is_bool_dtype(clusters.dtype):
        return pd.Series(values, dtype=object)
    column = parsed.columns.predicted_cluster
    out: list[int | None] = []
    for d, v in zip(parsed.draw.tolist(), values, strict=True):
        if v is None or isinstance(v, int | np.integer) and not isinstance(v, bool | np.bool_):
            out.append(None if v is None else int(v))
        elif isinstance(v, str) and int64_text(v) is not None:
            out.append(int64_text(v))
        else:
            raise InputError(
                f"labels column {column!r}, draw {d}: {v!r} ({type(v).__name__}) is not an integer cluster id, but "
                f"the release's clusters (column {prediction!r}) are integers; write {column!r} as the integer "
                "cluster ids the worksheet showed")
    return pd.Series(pd.array(out, dtype=clusters.dtype))  # nullable (Int64, UInt64, …): see nullable_integers


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
    for :func:`~er_expectations.analysis.labelqc.qc_labels`. ``predicted_cluster`` and ``true_cluster``
    are used when the batch has them (SPEC 2.2 optional columns); ``None``: not used."""
    from er_expectations.engines.pandas.release import check_column, check_frame

    frame = check_frame(batch)
    roles = {"draw": draw, "record_id": record_id, "removed": removed, "added": added,
             "predicted_cluster": predicted_cluster, "true_cluster": true_cluster}
    for role in ("predicted_cluster", "true_cluster"):
        if roles[role] is not None and roles[role] not in frame.columns:
            roles[role] = None
    for role, column in roles.items():
        if column is not None:
            check_column(frame, column, f"{role}_column")
    is_label = frame[draw].notna().to_numpy(dtype=bool)
    label_columns = [c for c in roles.values() if c is not None]
    labels = frame.loc[is_label, label_columns].reset_index(drop=True)
    records = frame.loc[~is_label, [c for c in frame.columns if c not in label_columns or c == record_id]]
    # an optional role left out keeps its default name, which the labels frame does not hold
    names = {role: column for role, column in roles.items() if column is not None}
    return labels, records.reset_index(drop=True), LabelColumns.of(names)


def _id_kind_of(values: Sequence, record_id: Hashable) -> str:
    """'integer' or 'text' from the drawn records' ids as a database or Spark returns them
    (the type of the column, as :func:`er_expectations.analysis.labels.records_id_kind` reads it from a
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
        """The records for :func:`~er_expectations.analysis.labelqc.qc_labels` (id, prediction, block, name)."""
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
