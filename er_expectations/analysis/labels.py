"""Labelling: the labels table (SPEC 2.2) and its quality control (SPEC 9).

A labeller starts from the predicted cluster ĉ(r) of a drawn record r and writes down
A_r (``removed``: members of ĉ(r) that are not r's entity) and B_r (``added``: records
outside ĉ(r) that are). The true cluster is c(r) = (ĉ(r) \\ A_r) ∪ B_r. This module reads
such a table and checks it against the starting prediction with the seven rules of
SPEC 9.

**The prediction contract.** ``records`` is the record table of the release the labels
were made against (one row per record); ``record_id`` names its record id column and
``prediction`` its predicted cluster column (null = the record is not in that release,
SPEC 2.1). Ids in the labels are converted to the type of ``records[record_id]``
(integers or text) before they are compared.

**Cost.** The record table is touched in at most three vectorised passes (the records
the labels name, the members of the drawn records' predicted clusters, nothing else):
no Python loop runs over records, only over draws and the few records they name.
"""

from __future__ import annotations

import math
import re
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace

import numpy as np
import pandas as pd

from er_expectations.core.errors import InputError

__all__ = [
    "CRITICAL_RULES",
    "LABEL_COLUMNS",
    "RULES",
    "VIOLATION_COLUMNS",
    "LabelColumns",
    "Labels",
    "Rule",
    "parse_labels",
]


# -- the rules -------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Rule:
    """One quality-control rule of SPEC 9."""

    number: int
    name: str
    critical: bool
    text: str


#: The seven rules of SPEC 9, by number. ``name`` is the short name (the GX expectation
#: ``expect_labels_<name>`` checks it); rule 5 is soft (a ``mostly`` fraction).
RULES: dict[int, Rule] = {
    1: Rule(1, "removed_within_predicted_cluster", True, "A_r ⊂ ĉ(r): every removed record belongs to the predicted cluster"),
    2: Rule(2, "sampled_record_not_removed", True, "r ∉ A_r: the drawn record is never removed from its own cluster"),
    3: Rule(3, "added_outside_predicted_cluster", True, "B_r ∩ ĉ(r) = ∅: an added record is not already in the predicted cluster"),
    4: Rule(4, "record_ids_exist", True, "every id in A_r and B_r exists in the records of the release"),
    5: Rule(5, "added_records_resemble_sampled_record", False, "added records look like r: same block and/or a similar name"),
    6: Rule(6, "consistent_across_draws", True, "two draws whose true clusters share a record have identical true clusters"),
    7: Rule(7, "true_cluster_matches", True, "a true cluster id names one set (ĉ(r) \\ A_r) ∪ B_r, and one set has one id"),
}
#: Rules that stop a benchmark from being built (all but the soft rule 5).
CRITICAL_RULES: tuple[int, ...] = tuple(n for n, r in RULES.items() if r.critical)
#: Columns of the violations frame of :func:`check_labels`.
VIOLATION_COLUMNS = ("draw", "rule", "rule_name", "records", "message")


# -- the labels table (SPEC 2.2) -------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class LabelColumns:
    """Column names of a labels table (SPEC 2.2); every name is configurable.

    ``predicted_cluster``, ``true_cluster``, ``labeller`` and ``labelled_at`` are optional
    columns: they are used when the table has them.
    """

    draw: str = "draw"
    record_id: str = "record_id"
    removed: str = "removed"
    added: str = "added"
    predicted_cluster: str = "predicted_cluster"
    true_cluster: str = "true_cluster"
    labeller: str = "labeller"
    labelled_at: str = "labelled_at"

    @classmethod
    def of(cls, columns: LabelColumns | Mapping[str, str] | None) -> LabelColumns:
        """``columns`` as a :class:`LabelColumns` (a mapping overrides some defaults)."""
        if columns is None:
            return cls()
        if isinstance(columns, LabelColumns):
            return columns
        if not isinstance(columns, Mapping):
            raise InputError(f"columns={columns!r}: give a mapping such as {{'record_id': 'mention_id'}}")
        known = [f.name for f in fields(cls)]
        for key, value in columns.items():
            if key not in known:
                from er_expectations.core.hints import did_you_mean

                hint = did_you_mean(str(key), known)
                raise InputError(f"columns: unknown labels column role {key!r}{' (' + hint + ')' if hint else ''}; "
                                 f"the roles are {', '.join(known)}")
            if not isinstance(value, str) or not value:
                raise InputError(f"columns[{key!r}]={value!r}: give the name of a column")
        return replace(cls(), **dict(columns))


#: The default column names, in table order.
LABEL_COLUMNS = LabelColumns()


@dataclass(frozen=True)
class Labels:
    """A parsed labels table: one entry per draw, ids in the type of the records' ids.

    ``removed``/``added`` hold tuples of ids (duplicates within a cell dropped, order kept);
    ``predicted_cluster``/``true_cluster`` are None when the table lacks the column, and
    hold None for an empty cell.
    """

    draw: np.ndarray
    record: list
    removed: list[tuple]
    added: list[tuple]
    predicted_cluster: list | None
    true_cluster: list | None
    columns: LabelColumns

    def __len__(self) -> int:
        return int(self.draw.shape[0])


def _is_null(value: object) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, float) and math.isnan(value)


#: A whole number as text: ASCII digits with one optional sign ('²', '٣' and '--5' are not).
_DIGITS = re.compile(r"[+-]?[0-9]+", re.ASCII)
_INT64 = (-(2**63), 2**63 - 1)


def int64_text(text: str) -> int | None:
    """``text`` as an int when it is a whole number (ASCII digits, one optional sign) that fits
    in 64 bits, else None: what a draw number or an integer id written as text may be."""
    if not _DIGITS.fullmatch(text):
        return None
    number = int(text)
    return number if _INT64[0] <= number <= _INT64[1] else None


def _id_parser(kind: str):
    """A function turning one id as read from the labels into the records' id type."""
    if kind == "integer":
        def parse(value: object) -> int:
            if isinstance(value, (bool, np.bool_)):
                raise ValueError("true/false is not a record id")
            number = _whole_number(value, strip=False)  # a CSV cell: no spaces around
            if number is not None:
                return number
            raise ValueError("is not an integer record id (the records' ids are 64-bit integers)")
        return parse

    def parse_text(value: object) -> object:
        if isinstance(value, str):  # exactly as the records write it: ' r1' is not 'r1'
            return value
        if isinstance(value, (bool, np.bool_)):
            raise ValueError("true/false is not a record id")
        if isinstance(value, (int, np.integer)):
            return str(int(value))
        raise ValueError("is not a text record id (the records' ids are text)")
    return parse_text


def records_id_kind(ids: pd.Series) -> str:
    """'integer' or 'text': the type label ids are converted to (read from the dtype, no scan)."""
    if pd.api.types.is_integer_dtype(ids.dtype) and not pd.api.types.is_bool_dtype(ids.dtype):
        return "integer"
    if pd.api.types.is_float_dtype(ids.dtype):
        raise InputError(f"record_id column {ids.name!r} holds floating-point numbers; record ids must be "
                         "integers or text (e.g. records[col] = records[col].astype('Int64'))")
    return "text"


def _list_cell(value: object, *, draw: object, column: str, separator: str, parse) -> tuple:
    """One ``removed``/``added`` cell as a tuple of ids; raises naming draw, column and value."""
    if _is_null(value):
        return ()
    if isinstance(value, str):
        text = value.strip()
        if text.startswith(("[", "{", "(")):
            raise InputError(
                f"draw {draw}, column {column!r}: cannot read {value!r} as a list of record ids; write the ids "
                f"separated by {separator!r} (e.g. 'a{separator}b') or use a list column"
            )
        # ids exactly as written between the separators (spaces included, as in the records);
        # an empty or blank item (a doubled or trailing separator) is no id
        items: Sequence[object] = [t for t in value.split(separator) if t.strip()]
    elif isinstance(value, (list, tuple, np.ndarray)):
        items = list(value)
    else:
        raise InputError(
            f"draw {draw}, column {column!r}: value {value!r} ({type(value).__name__}) is not a list of record ids; "
            f"give a list column or ids separated by {separator!r}"
        )
    out: dict[object, None] = {}
    for item in items:
        if _is_null(item):
            raise InputError(f"draw {draw}, column {column!r}: the list {value!r} holds an empty (null) id; remove it")
        try:
            out[parse(item)] = None
        except ValueError as exc:
            raise InputError(f"draw {draw}, column {column!r}: {item!r} {exc}; fix the cell {value!r}") from None
    return tuple(out)


def _check_labels_frame(labels: object, cols: LabelColumns) -> pd.DataFrame:
    if not isinstance(labels, pd.DataFrame):
        raise InputError(f"labels: expected a pandas DataFrame with one row per draw, got {type(labels).__name__}")
    present = [str(c) for c in labels.columns]
    missing = [c for c in (cols.draw, cols.record_id, cols.removed, cols.added) if c not in labels.columns]
    if missing:
        from er_expectations.core.hints import did_you_mean

        parts = []
        for m in missing:
            hint = did_you_mean(m, present)
            parts.append(f"{m!r}" + (f" ({hint})" if hint else ""))
        raise InputError(f"labels: no column {', '.join(parts)}; the table has {', '.join(present[:20])}. "
                         "Name the columns with columns={'record_id': ..., ...} (SPEC 2.2)")
    for c in {f.name: getattr(cols, f.name) for f in fields(cols)}.values():
        if c in labels.columns and int((labels.columns == c).sum()) > 1:
            raise InputError(f"labels: {int((labels.columns == c).sum())} columns are named {c!r}; rename them")
    return labels


def _whole_number(value: object, *, strip: bool = True) -> int | None:
    """``value`` as an int when it is a whole number that fits in 64 bits (int, integral float
    or ASCII digits), else None."""
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, str):
        return int64_text(value.strip() if strip else value)
    whole = isinstance(value, (int, np.integer)) or (
        isinstance(value, (float, np.floating)) and math.isfinite(value) and float(value).is_integer())
    number = int(value) if whole else None  # type: ignore[call-overload]
    return number if number is not None and _INT64[0] <= number <= _INT64[1] else None


def _is_big_whole(value: object) -> bool:
    """A whole number that does not fit in 64 bits (``_whole_number`` gives None for it)."""
    if isinstance(value, str):
        return re.fullmatch(r"[+-]?[0-9]+", value.strip()) is not None
    if isinstance(value, (bool, np.bool_)):
        return False
    return isinstance(value, (int, np.integer)) or (
        isinstance(value, (float, np.floating)) and math.isfinite(value) and float(value).is_integer())


def _parse_draws(values: pd.Series, column: str) -> np.ndarray:
    out = np.empty(len(values), dtype=np.int64)
    for i, v in enumerate(values.tolist()):
        number = _whole_number(v)
        if number is None:
            what = ("is beyond the 64-bit range" if _is_big_whole(v)
                    else "is not a whole number")
            raise InputError(f"labels column {column!r}, row {i + 1}: draw number {v!r} {what}; "
                             "number the draws 1, 2, 3, …")
        out[i] = number
    dup = pd.Series(out).duplicated(keep=False).to_numpy()
    if dup.any():
        values_ = sorted(set(out[dup].tolist()))
        shown = ", ".join(str(v) for v in values_[:10])
        raise InputError(f"labels column {column!r}: draw number(s) {shown} appear more than once; every draw "
                         "has its own number (a record drawn twice gets two draw numbers)")
    return out


def _optional(frame: pd.DataFrame, column: str) -> list | None:
    """An optional column's cells; an empty or blank text cell is not filled in (None), not an id."""
    if column not in frame.columns:
        return None
    return [None if _is_null(v) or (isinstance(v, str) and not v.strip()) else v for v in frame[column].tolist()]


def parse_labels(labels: pd.DataFrame, *, id_kind: str = "text", columns: LabelColumns | Mapping[str, str] | None = None,
                 separator: str = ";") -> Labels:
    """Read and validate a labels table (SPEC 2.2).

    ``removed``/``added`` are list columns (Arrow/Parquet lists, Python lists) or strings of
    ids separated by ``separator``; an empty or null cell is an empty set. Ids are converted
    to ``id_kind`` ("integer" or "text", the type of the records' ids). A cell that does not
    parse, a null drawn record, a draw number that is not a whole number or that appears
    twice raise :class:`InputError` naming the draw, the column and the value.
    """
    cols = LabelColumns.of(columns)
    if not isinstance(separator, str) or not separator or separator.strip() == "":
        raise InputError(f"separator={separator!r}: give a non-blank separator of list cells, such as ';'")
    if id_kind not in ("integer", "text"):
        raise InputError(f"id_kind={id_kind!r}: give 'integer' or 'text'")
    frame = _check_labels_frame(labels, cols)
    draws = _parse_draws(frame[cols.draw], cols.draw)
    parse = _id_parser(id_kind)
    record: list = []
    for d, v in zip(draws.tolist(), frame[cols.record_id].tolist(), strict=True):
        if _is_null(v):
            raise InputError(f"draw {d}, column {cols.record_id!r}: the drawn record is empty; every draw names its record")
        try:
            record.append(parse(v))
        except ValueError as exc:
            raise InputError(f"draw {d}, column {cols.record_id!r}: {v!r} {exc}") from None
    removed = [_list_cell(v, draw=d, column=cols.removed, separator=separator, parse=parse)
               for d, v in zip(draws.tolist(), frame[cols.removed].tolist(), strict=True)]
    added = [_list_cell(v, draw=d, column=cols.added, separator=separator, parse=parse)
             for d, v in zip(draws.tolist(), frame[cols.added].tolist(), strict=True)]
    return Labels(draw=draws, record=record, removed=removed, added=added,
                  predicted_cluster=_optional(frame, cols.predicted_cluster),
                  true_cluster=_optional(frame, cols.true_cluster), columns=cols)


def by_draw(parsed: Labels) -> Labels:
    """The draws in the order of their numbers: the rules then read the same labels whatever
    the row order of the table (a database or Spark returns rows in no particular order)."""
    order = np.argsort(parsed.draw, kind="stable")
    if np.array_equal(order, np.arange(order.size)):
        return parsed

    def pick(values: list | None) -> list | None:
        return None if values is None else [values[i] for i in order]

    return Labels(draw=parsed.draw[order], record=pick(parsed.record), removed=pick(parsed.removed),
                  added=pick(parsed.added), predicted_cluster=pick(parsed.predicted_cluster),
                  true_cluster=pick(parsed.true_cluster), columns=parsed.columns)


# -- the records the labels need -----------------------------------------------------------------
def check_records(records: object, record_id: Hashable, prediction: Hashable,
                   extra: Iterable[tuple[str, Hashable | None]] = ()) -> pd.DataFrame:
    from er_expectations.engines.pandas.release import check_column, check_frame

    frame = check_frame(records)
    check_column(frame, record_id, "record_id")
    check_column(frame, prediction, "prediction")
    for parameter, column in extra:
        if column is not None:
            check_column(frame, column, parameter)
    return frame


@dataclass(frozen=True)
class RecordLookup:
    """The records the labels name (their cluster and attributes) and the drawn clusters' members."""

    cluster: dict              # record id -> predicted cluster id (records in the release only)
    outside: set               # ids present in the records but outside the release (null prediction)
    member_ids: np.ndarray     # ids of the members of the drawn records' predicted clusters
    member_cluster: np.ndarray  # their predicted cluster ids
    block: dict = field(default_factory=dict)
    name: dict = field(default_factory=dict)


def _isin(values: pd.Series, wanted: list) -> np.ndarray:
    """Vectorised membership of a (possibly huge) column in a small set of values."""
    if not wanted:
        return np.zeros(len(values), dtype=bool)
    return values.isin(pd.Index(wanted)).to_numpy(dtype=bool)


def _no_duplicates(ids: pd.Series, record_id: Hashable) -> None:
    """The labelled records and the drawn clusters' members must each appear once."""
    dup = ids.duplicated(keep=False)
    if dup.any():
        shown = ", ".join(repr(v) for v in ids[dup].unique()[:5])
        raise InputError(f"record_id column {record_id!r} has duplicated ids among the labelled records and the "
                         f"members of the drawn clusters (e.g. {shown}); each record must appear once")


def lookup_records(records: pd.DataFrame, *, record_id: Hashable, prediction: Hashable, ids: list,
            drawn: list, block: Hashable | None = None, name: Hashable | None = None) -> RecordLookup:
    """One pass for the named ids, one for the members of the drawn records' clusters."""
    from er_expectations.engines.pandas.release import check_id_types

    rows = records.loc[_isin(records[record_id], ids)]
    rid = rows[record_id]
    _no_duplicates(rid, record_id)
    pred = rows[prediction]
    check_id_types(pred, "prediction")
    inside = pred.notna().to_numpy()
    cluster = dict(zip(rid[inside].tolist(), pred[inside].tolist(), strict=True))
    outside = set(rid[~inside].tolist())
    wanted = list(dict.fromkeys(cluster[r] for r in drawn if r in cluster))
    mrows = records.loc[_isin(records[prediction], wanted), [record_id, prediction]]
    _no_duplicates(mrows[record_id], record_id)
    attrs: dict[str, dict] = {}
    for key, column in (("block", block), ("name", name)):
        if column is not None:
            vals = rows[column]
            attrs[key] = {r: (None if _is_null(v) else v) for r, v in zip(rid.tolist(), vals.tolist(), strict=True)}
    return RecordLookup(cluster=cluster, outside=outside, member_ids=mrows[record_id].to_numpy(),
                   member_cluster=mrows[prediction].to_numpy(), **attrs)


@dataclass(frozen=True)
class TrueClusters:
    """The true cluster c(r) = (ĉ(r) \\ A_r) ∪ B_r of every draw, as sorted integer codes.

    ``ids[code]`` is a record id; draw i's records are ``codes[start[i]:start[i + 1]]``
    (sorted); ``set_id[i]`` numbers the distinct sets (equal sets, equal numbers). Ids
    outside the release are left out (rule 4 reports them).
    """

    ids: np.ndarray
    codes: np.ndarray
    start: np.ndarray
    set_id: np.ndarray

    def of(self, i: int) -> np.ndarray:
        return self.codes[self.start[i]:self.start[i + 1]]

    def named(self, codes: np.ndarray) -> list:
        return self.ids[codes].tolist()


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """Distinct values of an int64 array, sorted (one sort; no hash table)."""
    out = np.sort(values, kind="stable")
    if out.size:
        out = out[np.concatenate(([True], out[1:] != out[:-1]))]
    return out


def in_sorted(values: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    """``values ∈ sorted_set`` elementwise, by binary search."""
    if sorted_set.size == 0:
        return np.zeros(values.shape, dtype=bool)
    pos = np.minimum(np.searchsorted(sorted_set, values), sorted_set.size - 1)
    return sorted_set[pos] == values


def true_clusters(parsed: Labels, look: RecordLookup) -> TrueClusters:
    """Build every draw's true cluster with array operations (no loop over records).

    Members of the drawn clusters are expanded per draw (``np.repeat``), the removed
    (draw, record) pairs dropped and the added ones merged in, all as int64 keys
    ``draw · R + record code``. Equal sets get equal numbers through the bytes of their
    sorted codes (exact, one dictionary lookup per draw).
    """
    k = len(parsed)
    removed = [(i, r) for i, t in enumerate(parsed.removed) for r in t]
    added = [(i, r) for i, t in enumerate(parsed.added) for r in t if r in look.cluster]
    named = [r for _, r in removed] + [r for _, r in added]
    if look.member_ids.dtype.kind in "iu":  # integer ids stay integers: no boxing of the members
        every = np.concatenate([look.member_ids.astype(np.int64, copy=False), np.asarray(named, dtype=np.int64)])
    else:
        extra = np.empty(len(named), dtype=object)
        extra[:] = named
        every = np.concatenate([look.member_ids.astype(object, copy=False), extra])
    # sorted: the codes, and so the order records are listed in, follow the ids, not the rows
    codes, ids = pd.factorize(every, sort=True)
    ids = np.asarray(ids, dtype=object)
    n_codes = np.int64(max(len(ids), 1))
    m_codes = codes[: len(look.member_ids)]
    r_codes = codes[len(look.member_ids): len(look.member_ids) + len(removed)]
    a_codes = codes[len(look.member_ids) + len(removed):]

    clusters = pd.Index(pd.unique(look.member_cluster)) if len(look.member_cluster) else pd.Index([])
    m_cluster = clusters.get_indexer(look.member_cluster)
    d_cluster = clusters.get_indexer(pd.Index([look.cluster[r] for r in parsed.record], dtype=object)) \
        if len(clusters) else np.full(k, -1)
    order = np.argsort(m_cluster, kind="stable")
    sizes = np.bincount(m_cluster, minlength=len(clusters))
    first = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    d_size = np.where(d_cluster >= 0, sizes[np.maximum(d_cluster, 0)] if len(sizes) else 0, 0)
    draw_of = np.repeat(np.arange(k, dtype=np.int64), d_size)
    within = np.arange(draw_of.size, dtype=np.int64) - np.repeat(np.cumsum(d_size) - d_size, d_size)
    pos = order[first[d_cluster[draw_of]] + within] if draw_of.size else np.empty(0, dtype=np.int64)
    keys = draw_of * n_codes + m_codes[pos]
    if removed:
        rkeys = np.asarray([i for i, _ in removed], dtype=np.int64) * n_codes + r_codes
        keys = keys[~in_sorted(keys, sorted_unique(rkeys))]
    if added:
        akeys = np.asarray([i for i, _ in added], dtype=np.int64) * n_codes + a_codes
        keys = np.concatenate([keys, akeys])
    keys = sorted_unique(keys)
    draw = keys // n_codes
    rec = keys % n_codes
    start = np.searchsorted(draw, np.arange(k + 1, dtype=np.int64))
    seen: dict[bytes, int] = {}
    set_id = np.empty(k, dtype=np.int64)
    for i in range(k):
        set_id[i] = seen.setdefault(rec[start[i]:start[i + 1]].tobytes(), len(seen))
    return TrueClusters(ids=ids, codes=rec, start=start, set_id=set_id)










