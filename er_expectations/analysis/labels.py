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
    "LabelsQC",
    "Rule",
    "benchmark_from_labels",
    "check_labels",
    "parse_labels",
    "qc_labels",
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


def _id_parser(kind: str):
    """A function turning one id as read from the labels into the records' id type."""
    if kind == "integer":
        def parse(value: object) -> int:
            if isinstance(value, (bool, np.bool_)):
                raise ValueError("true/false is not a record id")
            if isinstance(value, (int, np.integer)):
                return int(value)
            if isinstance(value, (float, np.floating)) and float(value).is_integer():
                return int(value)
            if isinstance(value, str):
                text = value.strip()
                if text.lstrip("+-").isdigit():
                    return int(text)
            raise ValueError("is not an integer record id (the records' ids are integers)")
        return parse

    def parse_text(value: object) -> object:
        if isinstance(value, str):
            return value.strip()
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
        items: Sequence[object] = [t for t in (s.strip() for s in text.split(separator)) if t]
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


def _whole_number(value: object) -> int | None:
    """``value`` as an int when it is a whole number (int, integral float or digits), else None."""
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)) and math.isfinite(value) and float(value).is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("+-").isdigit():
        return int(value.strip())
    return None


def _parse_draws(values: pd.Series, column: str) -> np.ndarray:
    out = np.empty(len(values), dtype=np.int64)
    for i, v in enumerate(values.tolist()):
        number = _whole_number(v)
        if number is None:
            raise InputError(f"labels column {column!r}, row {i + 1}: draw number {v!r} is not a whole number; "
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
    if column not in frame.columns:
        return None
    return [None if _is_null(v) else v for v in frame[column].tolist()]


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


def _by_draw(parsed: Labels) -> Labels:
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
def _check_records(records: object, record_id: Hashable, prediction: Hashable,
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
class _Lookup:
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


def _lookup(records: pd.DataFrame, *, record_id: Hashable, prediction: Hashable, ids: list,
            drawn: list, block: Hashable | None = None, name: Hashable | None = None) -> _Lookup:
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
    return _Lookup(cluster=cluster, outside=outside, member_ids=mrows[record_id].to_numpy(),
                   member_cluster=mrows[prediction].to_numpy(), **attrs)


# -- the result ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class LabelsQC:
    """Result of the labelling quality control (SPEC 9).

    ``violations`` has one row per (draw, rule) that fails, columns :data:`VIOLATION_COLUMNS`
    (``records`` a list of the record ids involved); ``checked[r]`` is the number of draws
    rule r applies to (0 when it was not evaluated; ``notes[r]`` says why); ``draws`` the
    number of draws in the labels.
    """

    violations: pd.DataFrame
    checked: dict[int, int]
    draws: int
    notes: dict[int, str] = field(default_factory=dict)

    def failing(self, rule: int) -> pd.DataFrame:
        """The violations of one rule."""
        return self.violations[self.violations["rule"] == rule].reset_index(drop=True)

    def failed(self, rule: int) -> int:
        """Number of draws that fail ``rule``."""
        return int(self.failing(rule)["draw"].nunique())

    def summary(self) -> pd.DataFrame:
        """One row per rule: rule, rule_name, critical, checked, failed, note."""
        return pd.DataFrame(
            [{"rule": n, "rule_name": r.name, "critical": r.critical, "checked": self.checked.get(n, 0),
              "failed": self.failed(n), "note": self.notes.get(n)} for n, r in RULES.items()]
        )

    @property
    def critical_violations(self) -> pd.DataFrame:
        """Violations of the critical rules (all but rule 5)."""
        return self.violations[self.violations["rule"].isin(CRITICAL_RULES)].reset_index(drop=True)


def _ids_text(ids: Iterable[object], limit: int = 8) -> str:
    items = list(ids)
    text = ", ".join(repr(i) for i in items[:limit])
    return text + (f" and {len(items) - limit} more" if len(items) > limit else "")


def _empty_violations() -> pd.DataFrame:
    return pd.DataFrame({
        "draw": pd.Series([], dtype="int64"), "rule": pd.Series([], dtype="int64"),
        "rule_name": pd.Series([], dtype="object"), "records": pd.Series([], dtype="object"),
        "message": pd.Series([], dtype="object"),
    })


SCORERS = ("token_sort_ratio", "ratio", "token_set_ratio", "jaro_winkler")


def _scorer(name: str):
    """A name-similarity function with values in [0, 1] (rapidfuzz), by name."""
    if name not in SCORERS:
        from er_expectations.core.hints import did_you_mean

        hint = did_you_mean(str(name), list(SCORERS))
        raise InputError(f"scorer={name!r} is not known{' (' + hint + ')' if hint else ''}; use one of {', '.join(SCORERS)}")
    from rapidfuzz import fuzz, utils
    from rapidfuzz.distance import JaroWinkler

    if name == "jaro_winkler":
        return lambda a, b: JaroWinkler.normalized_similarity(a, b, processor=utils.default_process)
    scorer = getattr(fuzz, name)
    return lambda a, b: scorer(a, b, processor=utils.default_process) / 100.0


def _check_rules(rules: Iterable[int] | None) -> tuple[int, ...]:
    if rules is None:
        return tuple(RULES)
    if isinstance(rules, (int, np.integer)) and not isinstance(rules, bool):
        rules = (int(rules),)
    out = []
    for r in rules:
        if isinstance(r, bool) or not isinstance(r, (int, np.integer)) or int(r) not in RULES:
            raise InputError(f"rules: {r!r} is not a rule of SPEC 9; give numbers from 1 to 7")
        out.append(int(r))
    return tuple(sorted(set(out)))


def _check_similarity(similarity: float) -> float:
    if isinstance(similarity, bool) or not isinstance(similarity, (int, float, np.floating, np.integer)) \
            or not 0.0 <= float(similarity) <= 1.0:
        raise InputError(f"similarity={similarity!r}: give a name-similarity threshold between 0 and 1 (e.g. 0.8)")
    return float(similarity)


def _same_cluster_id(a: object, b: object) -> bool:
    """Cluster ids from a labels file (text in CSV) against the prediction's ids."""
    return a == b or str(a) == str(b)


def qc_labels(
    labels: pd.DataFrame | Labels,
    records: pd.DataFrame,
    prediction: Hashable,
    *,
    record_id: Hashable,
    block: Hashable | None = None,
    name: Hashable | None = None,
    similarity: float = 0.8,
    scorer: str = "token_sort_ratio",
    rules: Iterable[int] | None = None,
    columns: LabelColumns | Mapping[str, str] | None = None,
    separator: str = ";",
) -> LabelsQC:
    """Check a labels table against the starting prediction: the rules of SPEC 9.

    ``records`` holds the release the labels were made against: ``record_id`` and the
    predicted cluster column ``prediction`` (null = not in the release). Rule 5 (soft)
    needs ``block`` and/or ``name`` (columns of ``records``): an added record resembles
    the drawn record when it has the same block, or when the ``scorer`` similarity
    (rapidfuzz, in [0, 1]) of their names is at least ``similarity``. ``rules`` limits the
    check to some rule numbers.

    Problems that make the whole table unusable raise :class:`InputError`: a drawn record
    that is not in the release, a ``predicted_cluster`` column that disagrees with the
    prediction (labels made against another release), and the table errors of
    :func:`parse_labels`. Everything else is a violation row.
    """
    wanted = _check_rules(rules)
    similarity = _check_similarity(similarity)
    need_5 = 5 in wanted and (block is not None or name is not None)
    if rules is not None and 5 in wanted and not need_5:
        raise InputError("rule 5 compares added records with the drawn record: give block= and/or name= "
                         "(columns of the records)")
    score = _scorer(scorer) if need_5 and name is not None else None
    parsed, look = _prepare(labels, records, prediction, record_id=record_id, block=block if need_5 else None,
                            name=name if need_5 else None, columns=columns, separator=separator)
    return _evaluate(parsed, look, wanted, block=block if need_5 else None, name=name if need_5 else None,
                     score=score, similarity=similarity)


def _prepare(labels: pd.DataFrame | Labels, records: pd.DataFrame, prediction: Hashable, *, record_id: Hashable,
             block: Hashable | None, name: Hashable | None, columns: LabelColumns | Mapping[str, str] | None,
             separator: str) -> tuple[Labels, _Lookup]:
    """Parse the labels and look up the records they name; refuse labels of another release."""
    frame = _check_records(records, record_id, prediction, (("block", block), ("name", name)))
    kind = records_id_kind(frame[record_id])
    parsed = labels if isinstance(labels, Labels) else parse_labels(labels, id_kind=kind, columns=columns,
                                                                     separator=separator)
    parsed = _by_draw(parsed)
    cols = parsed.columns
    ids = list(dict.fromkeys([*parsed.record, *(i for t in parsed.removed for i in t), *(i for t in parsed.added for i in t)]))
    look = _lookup(frame, record_id=record_id, prediction=prediction, ids=ids, drawn=parsed.record,
                   block=block, name=name)

    # -- the table as a whole: every drawn record in the release, same release as the labels
    absent = [(d, r) for d, r in zip(parsed.draw.tolist(), parsed.record, strict=True) if r not in look.cluster]
    if absent:
        d, r = absent[0]
        where = "has no prediction (it is not in this release)" if r in look.outside else "is not in the records"
        raise InputError(
            f"draw {d}, column {cols.record_id!r}: drawn record {r!r} {where}"
            + (f" ({len(absent)} draws like this)" if len(absent) > 1 else "")
            + f"; the labels must be checked against the release they were drawn from (prediction={prediction!r})"
        )
    if parsed.predicted_cluster is not None:
        wrong = [(d, r, p, look.cluster[r]) for d, r, p in
                 zip(parsed.draw.tolist(), parsed.record, parsed.predicted_cluster, strict=True)
                 if p is not None and not _same_cluster_id(p, look.cluster[r])]
        if wrong:
            d, r, p, c = wrong[0]
            raise InputError(
                f"draw {d}, column {cols.predicted_cluster!r}: {p!r}, but record {r!r} is in cluster {c!r} of "
                f"prediction {prediction!r} ({len(wrong)} of {len(parsed)} draws disagree); the labels were made "
                "against another release: pass the prediction they were drawn from"
            )

    return parsed, look


def _evaluate(parsed: Labels, look: _Lookup, wanted: tuple[int, ...], *, block: Hashable | None,
              name: Hashable | None, score, similarity: float, truth: _Truth | None = None) -> LabelsQC:
    """Run the rules ``wanted`` on parsed labels (SPEC 9); ``truth`` if already built."""
    cols = parsed.columns
    need_5 = 5 in wanted and (block is not None or name is not None)
    rows: list[tuple] = []
    checked = {n: 0 for n in RULES}
    notes: dict[int, str] = {}

    def add(draw: int, rule: int, recs: Iterable[object], message: str) -> None:
        rows.append((draw, rule, RULES[rule].name, list(recs), message))

    in_release = look.cluster
    for d, r, removed, added in zip(parsed.draw.tolist(), parsed.record, parsed.removed, parsed.added, strict=True):
        cid = in_release[r]
        known_removed = [i for i in removed if i in in_release]
        known_added = [i for i in added if i in in_release]
        if 1 in wanted:
            checked[1] += 1
            bad = [i for i in known_removed if in_release[i] != cid]
            if bad:
                add(d, 1, bad, f"draw {d}: removed record(s) {_ids_text(bad)} (column {cols.removed!r}) are not in "
                               f"the predicted cluster {cid!r} of record {r!r}; only its members can be removed")
        if 2 in wanted:
            checked[2] += 1
            if r in removed:
                add(d, 2, [r], f"draw {d}: the drawn record {r!r} is in its own column {cols.removed!r}; "
                               "a record is never removed from its own cluster")
        if 3 in wanted:
            checked[3] += 1
            bad = [i for i in known_added if in_release[i] == cid]
            if bad:
                add(d, 3, bad, f"draw {d}: added record(s) {_ids_text(bad)} (column {cols.added!r}) are already in "
                               f"the predicted cluster {cid!r} of record {r!r}; add only records from other clusters")
        if 4 in wanted:
            checked[4] += 1
            for column, values in ((cols.removed, removed), (cols.added, added)):
                unknown = [i for i in values if i not in in_release]
                if unknown:
                    gone = [i for i in unknown if i in look.outside]
                    why = (" (in the records but not in this release)" if gone else "")
                    add(d, 4, unknown, f"draw {d}: record id(s) {_ids_text(unknown)} in column {column!r} do not "
                                       f"exist in the records of the release{why}; fix the id(s)")
        if need_5:
            outside_members = [i for i in known_added if in_release[i] != cid]
            if outside_members:
                checked[5] += 1
                unlike, why = [], []
                for i in outside_members:
                    reasons = []
                    if block is not None:
                        b_r, b_i = look.block.get(r), look.block.get(i)
                        if b_r is not None and b_i is not None and b_r == b_i:
                            continue
                        reasons.append(f"block {b_i!r}, not {b_r!r}")
                    if score is not None:
                        n_r, n_i = look.name.get(r), look.name.get(i)
                        s = score(str(n_r), str(n_i)) if n_r is not None and n_i is not None else None
                        if s is not None and s >= similarity:
                            continue
                        reasons.append(f"name {n_i!r} vs {n_r!r}" + (f", similarity {s:.2f} < {similarity:g}"
                                                                     if s is not None else ", a name is missing"))
                    unlike.append(i)
                    why.append(f"{i!r} ({'; '.join(reasons)})")
                if unlike:
                    shown = "; ".join(why[:5]) + (f" and {len(why) - 5} more" if len(why) > 5 else "")
                    add(d, 5, unlike, f"draw {d}: added record(s) (column {cols.added!r}) do not look like record "
                                      f"{r!r}: {shown}; check that they are the same entity")
    if 5 in wanted and not need_5:
        notes[5] = "not checked: give block= and/or name= to compare added records with the drawn record"

    if 6 in wanted or 7 in wanted:
        truth = truth if truth is not None else _truth(parsed, look)
        if 6 in wanted:
            checked[6] = len(parsed)
            _rule_6(parsed, truth, cols, add)
        if 7 in wanted:
            _rule_7(parsed, truth, cols, add, checked)
            if parsed.true_cluster is None:
                notes[7] = f"not checked: the labels have no column {cols.true_cluster!r}"
    if not rows:
        violations = _empty_violations()
    else:
        violations = pd.DataFrame(rows, columns=list(VIOLATION_COLUMNS)).astype({"draw": "int64", "rule": "int64"})
        violations = violations.sort_values(["draw", "rule"], kind="stable").reset_index(drop=True)
    for n in RULES:
        if n not in wanted:
            notes.setdefault(n, "not evaluated (rules=…)")
    violations.attrs["checked"] = dict(checked)
    return LabelsQC(violations=violations, checked=checked, draws=len(parsed), notes=notes)


@dataclass(frozen=True)
class _Truth:
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


def _sorted_unique(values: np.ndarray) -> np.ndarray:
    """Distinct values of an int64 array, sorted (one sort; no hash table)."""
    out = np.sort(values, kind="stable")
    if out.size:
        out = out[np.concatenate(([True], out[1:] != out[:-1]))]
    return out


def _in_sorted(values: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    """``values ∈ sorted_set`` elementwise, by binary search."""
    if sorted_set.size == 0:
        return np.zeros(values.shape, dtype=bool)
    pos = np.minimum(np.searchsorted(sorted_set, values), sorted_set.size - 1)
    return sorted_set[pos] == values


def _truth(parsed: Labels, look: _Lookup) -> _Truth:
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
        keys = keys[~_in_sorted(keys, _sorted_unique(rkeys))]
    if added:
        akeys = np.asarray([i for i, _ in added], dtype=np.int64) * n_codes + a_codes
        keys = np.concatenate([keys, akeys])
    keys = _sorted_unique(keys)
    draw = keys // n_codes
    rec = keys % n_codes
    start = np.searchsorted(draw, np.arange(k + 1, dtype=np.int64))
    seen: dict[bytes, int] = {}
    set_id = np.empty(k, dtype=np.int64)
    for i in range(k):
        set_id[i] = seen.setdefault(rec[start[i]:start[i + 1]].tobytes(), len(seen))
    return _Truth(ids=ids, codes=rec, start=start, set_id=set_id)


def _rule_6(parsed: Labels, truth: _Truth, cols: LabelColumns, add) -> None:
    """Draws whose true clusters share a record but differ (SPEC 9, rule 6).

    A record that sits in two distinct sets is found from the unique (record, set) pairs;
    only the draws involved are then described.
    """
    lengths = np.diff(truth.start)
    pair_set = np.repeat(truth.set_id, lengths)
    n_sets = np.int64(int(truth.set_id.max()) + 1 if len(truth.set_id) else 1)
    pairs = _sorted_unique(truth.codes * n_sets + pair_set)
    p_rec, p_set = pairs // n_sets, pairs % n_sets
    n_sets_of_rec = np.bincount(p_rec)
    clash = n_sets_of_rec[p_rec] > 1
    if not clash.any():
        return
    frame = pd.DataFrame({"rec": p_rec[clash], "set": p_set[clash]})
    both = frame.merge(frame, on="rec", suffixes=("", "_other"))
    both = both[both["set"] != both["set_other"]][["set", "set_other"]].drop_duplicates()
    partners = both.groupby("set")["set_other"].agg(list).to_dict()
    draws = parsed.draw.tolist()
    draws_of_set: dict[int, list[int]] = {}
    for i, sid in enumerate(truth.set_id.tolist()):
        draws_of_set.setdefault(sid, []).append(i)
    for i in sorted((i for i, sid in enumerate(truth.set_id.tolist()) if sid in partners), key=lambda j: draws[j]):
        mine = truth.of(i)
        others = sorted((j for sid in partners[int(truth.set_id[i])] for j in draws_of_set[sid]), key=lambda j: draws[j])
        firsts = [draws_of_set[sid][0] for sid in partners[int(truth.set_id[i])]]
        shared = truth.named(np.unique(np.concatenate([np.intersect1d(mine, truth.of(j)) for j in firsts])))
        differ = truth.named(np.unique(np.concatenate([np.setxor1d(mine, truth.of(j)) for j in firsts])))
        add(draws[i], 6, differ,
            f"draw {draws[i]}: its true cluster shares record(s) {_ids_text(shared)} with draw(s) "
            f"{', '.join(str(draws[j]) for j in others)}, but the clusters differ on {_ids_text(differ)}; "
            f"one entity must be labelled the same way every time (check columns {cols.removed!r} and {cols.added!r})")


def _rule_7(parsed: Labels, truth: _Truth, cols: LabelColumns, add, checked: dict[int, int]) -> None:
    """A true cluster id names one set, and one set has one id (SPEC 9, rule 7)."""
    if parsed.true_cluster is None:
        return
    draws = parsed.draw.tolist()
    given = [i for i, t in enumerate(parsed.true_cluster) if t is not None]
    checked[7] = len(given)
    by_id: dict[str, list[int]] = {}
    by_set: dict[int, list[int]] = {}
    for i in given:
        by_id.setdefault(str(parsed.true_cluster[i]), []).append(i)
        by_set.setdefault(int(truth.set_id[i]), []).append(i)
    problems: dict[int, list[tuple[list, str]]] = {}
    for idx in by_id.values():
        if len({int(truth.set_id[i]) for i in idx}) > 1:
            for i in idx:
                others = [j for j in idx if truth.set_id[j] != truth.set_id[i]]
                differ = truth.named(np.unique(np.concatenate([np.setxor1d(truth.of(i), truth.of(j)) for j in others])))
                problems.setdefault(i, []).append((differ, (
                    f"column {cols.true_cluster!r} gives {parsed.true_cluster[i]!r} to draw(s) "
                    f"{', '.join(str(draws[j]) for j in others)} too, whose records differ on {_ids_text(differ)}")))
    for idx in by_set.values():
        names = {str(parsed.true_cluster[i]) for i in idx}
        if len(names) > 1:
            for i in idx:
                others = [j for j in idx if str(parsed.true_cluster[j]) != str(parsed.true_cluster[i])]
                problems.setdefault(i, []).append(([parsed.record[i]], (
                    f"column {cols.true_cluster!r} is {parsed.true_cluster[i]!r} but draw(s) "
                    f"{', '.join(f'{draws[j]} ({parsed.true_cluster[j]!r})' for j in others)} label the same records "
                    "with another id")))
    for i in sorted(problems, key=lambda j: draws[j]):
        recs = list(dict.fromkeys(rec for recs, _ in problems[i] for rec in recs))
        add(draws[i], 7, recs, f"draw {draws[i]}: " + "; ".join(text for _, text in problems[i])
            + "; one true cluster id must name one set (ĉ(r) \\ A_r) ∪ B_r")


def check_labels(
    labels: pd.DataFrame,
    records: pd.DataFrame,
    prediction: Hashable,
    *,
    record_id: Hashable,
    block: Hashable | None = None,
    name: Hashable | None = None,
    similarity: float = 0.8,
    scorer: str = "token_sort_ratio",
    rules: Iterable[int] | None = None,
    columns: LabelColumns | Mapping[str, str] | None = None,
    separator: str = ";",
) -> pd.DataFrame:
    """Violations of the labelling rules of SPEC 9: one row per (draw, rule) that fails.

    Columns ``draw``, ``rule`` (SPEC 9 number), ``rule_name``, ``records`` (list of the ids
    involved) and ``message``; an empty frame with these columns when the labels are
    clean. ``attrs['checked']`` maps each rule to the number of draws it applies to.
    Arguments as :func:`qc_labels` (which also returns per-rule counts).
    """
    return qc_labels(labels, records, prediction, record_id=record_id, block=block, name=name,
                     similarity=similarity, scorer=scorer, rules=rules, columns=columns,
                     separator=separator).violations


def _reference_ids(parsed: Labels, groups: list[list[int]]) -> list[object]:
    """The reference id of every true cluster: the labeller's ``true_cluster`` when given,
    else ``"draw-<first draw>"`` (then every id is text, so that ids keep one type)."""
    given = []
    for idx in groups:
        names = [parsed.true_cluster[i] for i in idx if parsed.true_cluster[i] is not None] \
            if parsed.true_cluster is not None else []
        given.append(names[0] if names else None)
    if all(g is not None for g in given):
        return given
    draws = parsed.draw.tolist()
    out = [str(g) if g is not None else f"draw-{min(draws[i] for i in idx)}" for g, idx in zip(given, groups, strict=True)]
    if len(set(out)) < len(out):
        dup = pd.Series(out)[pd.Series(out).duplicated()].iloc[0]
        raise InputError(f"column {parsed.columns.true_cluster!r}: the id {dup!r} names a true cluster and is also the "
                         "id made up for an unnamed one; give every draw a true cluster id, or none")
    return out


def benchmark_from_labels(
    labels: pd.DataFrame,
    records: pd.DataFrame,
    prediction: Hashable,
    *,
    record_id: Hashable,
    design: str = "cluster_size",
    reference: str = "reference",
    columns: LabelColumns | Mapping[str, str] | None = None,
    separator: str = ";",
) -> pd.DataFrame:
    """The benchmark built from labels that pass the critical rules (SPEC 2.1, 2.2, 9).

    Each draw gives a true cluster c(r) = (ĉ(r) \\ A_r) ∪ B_r; draws with the same set are
    one benchmark cluster drawn several times. Returns one row per benchmark record with
    columns ``record_id`` (named like the ``record_id`` argument, so that it joins onto the
    records), ``reference`` (the labeller's ``true_cluster`` id, else ``"draw-<first
    draw>"``), ``draws`` (how many draws gave that cluster) and ``weight`` w_c = 1/p_c of the
    design: ``"cluster_size"`` (records drawn uniformly, p_c ∝ |c|: w = 1/|c|, |c| counted
    in the labelled release) or ``"uniform"`` (w = 1).

    Join it onto a release and estimate with ``erx.estimate(df, prediction=…,
    reference="reference", weights="cluster_size", draws="draws")`` (the size design is
    recomputed on each release's population, SPEC 2.1) or ``weights="weight"`` for a
    design given by the weight column. Labels that break a critical rule (all but rule 5)
    raise :class:`InputError` listing the violations.
    """
    if design not in ("cluster_size", "uniform"):
        raise InputError(f"design={design!r}: give 'cluster_size' (records drawn uniformly) or 'uniform' "
                         "(true clusters drawn uniformly)")
    if not isinstance(reference, str) or not reference:
        raise InputError(f"reference={reference!r}: give the name of the reference column to write")
    if reference in ("draws", "weight", record_id):
        raise InputError(f"reference={reference!r}: the name is taken by another output column; pick another")
    parsed, look = _prepare(labels, records, prediction, record_id=record_id, block=None, name=None,
                            columns=columns, separator=separator)
    if len(parsed) == 0:
        raise InputError("the labels table has no draws: there is no benchmark to build")
    truth = _truth(parsed, look)
    qc = _evaluate(parsed, look, CRITICAL_RULES, block=None, name=None, score=None, similarity=1.0, truth=truth)
    bad = qc.violations
    if not bad.empty:
        lines = [f"  draw {row.draw}, rule {row.rule} ({row.rule_name}): {row.message.removeprefix(f'draw {row.draw}: ')}"
                 for row in bad.head(10).itertuples()]
        more = f"\n  … and {len(bad) - 10} more" if len(bad) > 10 else ""
        raise InputError(
            f"the labels break {len(bad)} critical rule check(s) on {bad['draw'].nunique()} draw(s) (SPEC 9); "
            "fix them before building the benchmark:\n" + "\n".join(lines) + more
        )
    order = np.argsort(truth.set_id, kind="stable")
    sets, first = np.unique(truth.set_id, return_index=True)
    sets = sets[np.argsort(first, kind="stable")]  # in the order of their first draw
    groups = {int(sid): [] for sid in sets}
    for i in order.tolist():
        groups[int(truth.set_id[i])].append(i)
    members = [groups[int(sid)] for sid in sets]
    ids = _reference_ids(parsed, members)
    reps = np.asarray([idx[0] for idx in members], dtype=np.int64)
    lengths = truth.start[reps + 1] - truth.start[reps]
    within = np.arange(int(lengths.sum()), dtype=np.int64) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    codes = truth.codes[np.repeat(truth.start[reps], lengths) + within]
    ref_col = np.repeat(np.asarray(ids, dtype=object), lengths)
    draws_col = np.repeat(np.asarray([len(idx) for idx in members], dtype=np.int64), lengths)
    weight_col = np.repeat(1.0 / lengths if design == "cluster_size" else np.ones(len(reps)), lengths)
    rec_col = truth.ids[codes]
    id_dtype = records[record_id].dtype
    out = pd.DataFrame({
        record_id: pd.Series(rec_col, dtype=id_dtype if len(rec_col) else object),
        reference: ref_col,
        "draws": draws_col,
        "weight": np.asarray(weight_col, dtype=np.float64),
    })
    out.attrs.update({"design": design, "draws": len(parsed), "clusters": len(sets), "prediction": prediction})
    return out
