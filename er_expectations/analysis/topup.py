"""Top-up labelling (SPEC 14.3): extend a benchmark to the records of a later release.

A benchmark knows the records of the release it was labelled on (its rows, column
``benchmark_version``). A later release t holds records added since; for every sampled entity
(true cluster) c, the **candidates** are the added records that sit in a predicted cluster of
t holding a record of c, and (with a name column) the added records carrying one of c's names.
:func:`topup_candidates` lists them as the rows of a top-up worksheet (one row per entity and
candidate, ``belongs`` left empty); a labeller answers ``yes`` or ``no``;
:func:`apply_topup` checks the answers and returns version v + 1 of the benchmark, in which
every record of t is known and the records answered ``yes`` belong to their entity.

The worksheet's columns (the contract shared with the workbench's top-up mode):
``entity`` (the benchmark's reference id), the record id column (named like the
benchmark's), ``predicted_cluster``, ``reason`` (:data:`REASON_PREDICTED`,
:data:`REASON_NAME`, or :data:`REASON_SEARCH` on a row a labeller added), ``belongs``
(``yes``/``no``), ``release`` (the prediction column's name) and ``benchmark_version`` (v,
the version the worksheet extends), then display columns. Rows are numbered from 1 below the
header in the messages (row n is line n + 1 of a CSV file).

Pure pandas/numpy: the caller reads and writes the files.
"""

from __future__ import annotations

import contextlib
from collections.abc import Hashable, Sequence

import numpy as np
import pandas as pd

from er_expectations.analysis.labels import int64_text
from er_expectations.core.errors import InputError
from er_expectations.core.io import id_kind
from er_expectations.core.name_keys import name_key
from er_expectations.engines.base import KNOWN_COLUMN

__all__ = ["BELONGS", "ENTITY", "REASON_NAME", "REASON_PREDICTED", "REASON_SEARCH", "WORKSHEET_COLUMNS",
           "align_record_ids", "apply_topup", "topup_candidates"]

ENTITY, PREDICTED, REASON, BELONGS, RELEASE = "entity", "predicted_cluster", "reason", "belongs", "release"
#: Why a record is a candidate of an entity.
REASON_PREDICTED = "predicted with the entity"
REASON_NAME = "same name as the entity"
REASON_SEARCH = "found by search"
#: The worksheet's columns besides the record id column (which follows ``entity``).
WORKSHEET_COLUMNS = (ENTITY, PREDICTED, REASON, BELONGS, RELEASE, KNOWN_COLUMN)
#: How many rows a message lists before "… and N more".
_SHOWN = 5


def _shown(rows: Sequence[str], total: int | None = None) -> str:
    total = len(rows) if total is None else total
    more = f" … and {total - _SHOWN} more" if total > _SHOWN else ""
    return ", ".join(rows[:_SHOWN]) + more


def _plain(value: object) -> str:
    """A value for a message: ``'a3'``, ``12``, ``empty`` (no numpy reprs)."""
    if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)):
        return "empty"
    return repr(value.item() if isinstance(value, np.generic) else value)


def align_record_ids(values: pd.Series, like: pd.Series, *, where: str) -> pd.Series:
    """``values`` (record ids of a benchmark or a worksheet) in the id type of ``like`` (the
    release's ids): a CSV file holds every id as text, so integer ids are read back from it."""
    want, have = id_kind(like), id_kind(values)
    if want == have or values.isna().all():
        return values
    if want == "integer":
        out = []
        for i, v in enumerate(values.tolist()):
            if v is None or (isinstance(v, float) and np.isnan(v)):
                out.append(None)
                continue
            number = int(v) if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) \
                else int64_text(v) if isinstance(v, str) else None
            if number is None:
                raise InputError(f"{where}, row {i + 1}: the record id {_plain(v)} is not an integer, but the release's "
                                 "record ids are; give the ids as the records file writes them")
            out.append(number)
        converted = pd.Series(out, index=values.index, dtype=object)
        return converted.astype("int64") if converted.notna().all() else converted.astype("Int64")
    if want == "text" and have == "integer":
        return values.map(lambda v: v if v is None or v is pd.NA else str(int(v))).astype(object)
    raise InputError(f"{where}: record ids are {have}, but the release's are {want}, so no record would match; "
                     "write the ids with one type in every file")


def _check_release(release: pd.DataFrame, *, prediction: Hashable, record_id: Hashable) -> np.ndarray:
    """The release's checks; returns the mask of its records (prediction not null, SPEC 2.1)."""
    if not isinstance(release, pd.DataFrame):
        raise InputError(f"release: expected a pandas DataFrame of records, got {type(release).__name__}")
    for role, col in (("prediction", prediction), ("record_id", record_id)):
        if col not in release.columns:
            raise InputError(f"{role}={col!r}: no such column in the records; the records have: "
                             f"{', '.join(map(str, list(release.columns)[:20]))}")
    ids = release[record_id]
    if ids.isna().any():
        raise InputError(f"record_id column {record_id!r} of the records is null on {int(ids.isna().sum())} row(s); "
                         "every record needs an id")
    dup = ids.duplicated(keep=False)
    if dup.any():
        raise InputError(f"record_id column {record_id!r} of the records has duplicated ids (e.g. "
                         f"{_plain(ids[dup].iloc[0])}); each record must appear once")
    in_release = release[prediction].notna().to_numpy()
    if not in_release.any():
        raise InputError(f"prediction column {prediction!r} is null on every row: the release is empty")
    return in_release


def _check_benchmark(benchmark: pd.DataFrame, release: pd.DataFrame, *, record_id: Hashable,
                     reference: Hashable) -> tuple[pd.Series, int]:
    """The benchmark's checks; returns its record ids in the release's id type and its version v."""
    if not isinstance(benchmark, pd.DataFrame):
        raise InputError(f"benchmark: expected a pandas DataFrame, got {type(benchmark).__name__}")
    for role, col in (("record_id", record_id), ("reference", reference)):
        if col not in benchmark.columns:
            raise InputError(f"{role}={col!r}: no such column in the benchmark; the benchmark has: "
                             f"{', '.join(map(str, list(benchmark.columns)[:20]))}")
    if KNOWN_COLUMN not in benchmark.columns:
        raise InputError(f"the benchmark has no {KNOWN_COLUMN!r} column, so it does not say which records its "
                         "labellers could see (it was made before SPEC 14): rebuild it from its labels with "
                         "er-expectations benchmark on the release it was labelled on, then top it up")
    ids = align_record_ids(benchmark[record_id], release[record_id], where="the benchmark")
    if ids.isna().any():
        raise InputError(f"the benchmark's record id column {record_id!r} is null on {int(ids.isna().sum())} row(s); "
                         "restore the file written by er-expectations benchmark")
    dup = ids.duplicated(keep=False)
    if dup.any():
        raise InputError(f"the benchmark lists the record {_plain(ids[dup].iloc[0])} twice; a benchmark has one row per "
                         "record: restore the file written by er-expectations benchmark")
    raw = benchmark[KNOWN_COLUMN]
    version = pd.to_numeric(raw, errors="coerce")
    bad = raw.isna().to_numpy() | version.isna().to_numpy() | (version.fillna(0) < 1).to_numpy() | \
        (version.fillna(0) != np.floor(version.fillna(0))).to_numpy()
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(f"the benchmark's {KNOWN_COLUMN!r} is {_plain(raw.iloc[i])} for the record {_plain(ids.iloc[i])}; every "
                         "row of a benchmark is a known record with a whole version ≥ 1: restore the file written by "
                         "er-expectations benchmark (or topup apply)")
    return ids, int(version.max())


def _entity_names(release: pd.DataFrame, rel_ref: pd.Series, name: Hashable) -> pd.DataFrame:
    """(entity, name key) of every record of an entity that the records table names."""
    rows = rel_ref.notna().to_numpy()
    keys = release.loc[rows, name].map(name_key)
    pairs = pd.DataFrame({ENTITY: rel_ref[rows].to_numpy(), "key": keys.to_numpy()})
    return pairs[pairs["key"] != ""].drop_duplicates()


def _references(benchmark: pd.DataFrame, ids: pd.Series, release: pd.DataFrame, *, record_id: Hashable,
                reference: Hashable) -> pd.Series:
    """The reference (entity) of each record of ``release`` (null when it is in no sampled entity)."""
    bench = benchmark[reference].notna().to_numpy()
    pos = pd.Index(ids[bench]).get_indexer(pd.Index(release[record_id]))
    values = benchmark[reference].to_numpy(dtype=object)[bench]
    return pd.Series(np.where(pos >= 0, values[np.maximum(pos, 0)], None), index=release.index, dtype=object)


def _prediction_candidates(release: pd.DataFrame, rel_ref: pd.Series, unknown: np.ndarray, *,
                           prediction: Hashable) -> tuple[pd.DataFrame, int]:
    """(entity, row) of every unknown record in a predicted cluster holding a record of the entity,
    and the number of unknown records in such clusters."""
    in_release = release[prediction].notna().to_numpy()
    sampled = in_release & rel_ref.notna().to_numpy()
    pairs = pd.DataFrame({"cluster": release[prediction].to_numpy()[sampled],
                          ENTITY: rel_ref.to_numpy()[sampled]}).drop_duplicates()
    rows = np.flatnonzero(unknown)
    new = pd.DataFrame({"cluster": release[prediction].to_numpy()[rows], "row": rows})
    found = new.merge(pairs, on="cluster", how="inner")
    return found[[ENTITY, "row"]], int(new["cluster"].isin(pairs["cluster"]).sum())


def topup_candidates(
    benchmark: pd.DataFrame,
    release: pd.DataFrame,
    *,
    prediction: Hashable,
    record_id: Hashable,
    reference: Hashable = "reference",
    name: Hashable | None = None,
    columns: Sequence[Hashable] = (),
) -> pd.DataFrame:
    """The rows of a top-up worksheet for ``release`` (SPEC 14.3).

    ``benchmark`` is a benchmark written by ``er-expectations benchmark`` or
    ``erx.apply_topup`` (one row per known record, column ``benchmark_version``);
    ``release`` has one row per record, ``prediction`` null outside the release. For every
    sampled entity c (a ``reference`` id), the candidates are the records of the release that
    the benchmark does not know and that sit in a predicted cluster holding a record of c
    (reason ``"predicted with the entity"``), and, with ``name`` (a column of ``release``), those
    carrying one of c's names, compared as normalised names (case, accents, punctuation and
    word order ignored, as the workbench's search compares names; reason
    ``"same name as the entity"``). A record may be a candidate of two entities (two rows).

    Returns one row per (entity, candidate), ordered by entity (in the benchmark's order) and
    reason, with the columns ``entity`` (the reference id), the record id (named
    ``record_id``), ``predicted_cluster``, ``reason``, ``belongs`` (empty: the labeller writes
    yes or no), ``release`` (the name of ``prediction``) and ``benchmark_version`` (v, the
    version the worksheet extends), then ``columns`` of the candidate record. ``attrs``: ``release``, ``benchmark_version``
    (v), ``records_added`` (records of the release the benchmark does not know),
    ``records_added_in_sampled`` (those in a predicted cluster holding a record of a sampled
    entity), ``entities`` (entities with a candidate), ``entities_by_prediction``,
    ``candidates`` (rows), ``candidates_by_name`` and ``display_columns``.


    Parameters
    ----------
    benchmark : pandas.DataFrame
        The benchmark, one row per known record, with ``benchmark_version``.
    release : pandas.DataFrame
        The later release, one row per record.
    prediction : hashable
        The column of ``release`` with the predicted cluster ids.
    record_id : hashable
        The record id column (of both tables).
    reference : hashable
        The benchmark's column of entity (true cluster) ids.
    name : hashable, optional
        A name column of ``release``: adds the candidates with one of the entity's names.
    columns : sequence of hashable
        Columns of ``release`` shown to the labeller.

    Returns
    -------
    pandas.DataFrame
        One row per (entity, candidate), above.

    Examples
    --------
    Record ``e``, new in the later release, sits in the predicted cluster of entity ``draw-1``:

    >>> import pandas as pd
    >>> import er_expectations as erx
    >>> records = pd.DataFrame({"id": ["a", "b", "c", "d"], "pred": ["P1", "P1", "P2", "P2"]})
    >>> labels = pd.DataFrame({"draw": [1], "record_id": ["a"], "removed": [""], "added": [""]})
    >>> bench = erx.benchmark_from_labels(labels, records, prediction="pred", record_id="id")
    >>> later = pd.DataFrame({"id": ["a", "b", "c", "d", "e"], "pred": ["P1", "P1", "P2", "P2", "P1"]})
    >>> sheet = erx.topup_candidates(bench, later, prediction="pred", record_id="id")
    >>> sheet[["entity", "id", "reason"]].values.tolist()
    [['draw-1', 'e', 'predicted with the entity']]
    """
    in_release = _check_release(release, prediction=prediction, record_id=record_id)
    ids, version = _check_benchmark(benchmark, release, record_id=record_id, reference=reference)
    if name is not None and name not in release.columns:
        raise InputError(f"name={name!r}: no such column in the records; give the column of the records' names")
    if isinstance(columns, (str, bytes)):
        columns = [columns]
    columns = list(dict.fromkeys(columns))
    taken = {*WORKSHEET_COLUMNS, str(record_id)}
    for c in columns:
        if c not in release.columns:
            raise InputError(f"columns: {c!r} is not a column of the records")
        if str(c) in taken:
            raise InputError(f"columns: {c!r} is also a worksheet column; rename it in the records first")
    rel_ref = _references(benchmark, ids, release, record_id=record_id, reference=reference)
    unknown = in_release & ~release[record_id].isin(pd.Index(ids)).to_numpy()
    by_pred, in_sampled = _prediction_candidates(release, rel_ref, unknown, prediction=prediction)
    by_pred = by_pred.assign(reason=0)
    found = [by_pred]
    if name is not None:
        entity_names = _entity_names(release, rel_ref, name)
        rows = np.flatnonzero(unknown)
        new = pd.DataFrame({"key": release[name].to_numpy()[rows], "row": rows})
        new["key"] = new["key"].map(name_key)
        by_name = new[new["key"] != ""].merge(entity_names, on="key", how="inner")[[ENTITY, "row"]]
        found.append(by_name.assign(reason=1))
    cand = pd.concat(found, ignore_index=True).drop_duplicates([ENTITY, "row"], keep="first")
    refs = benchmark[reference]
    order = pd.Index(pd.unique(refs[refs.notna()]))
    cand["order"] = order.get_indexer(pd.Index(cand[ENTITY]))
    cand = cand.sort_values(["order", "reason", "row"], kind="stable")
    rows = cand["row"].to_numpy(dtype=np.int64)
    out = pd.DataFrame({
        ENTITY: pd.Series(cand[ENTITY].to_numpy(), dtype=object),
        record_id: release[record_id].to_numpy()[rows],
        PREDICTED: release[prediction].to_numpy()[rows],
        REASON: np.where(cand["reason"].to_numpy() == 0, REASON_PREDICTED, REASON_NAME).astype(object),
        BELONGS: pd.Series([None] * len(cand), dtype=object),
        RELEASE: pd.Series([str(prediction)] * len(cand), dtype=object),
        KNOWN_COLUMN: np.full(len(cand), version, dtype=np.int64),
    })
    if len(out):
        out[record_id] = out[record_id].astype(release[record_id].dtype)
    for c in columns:
        out[c] = release[c].to_numpy()[rows]
    out.attrs.update({
        "release": str(prediction), "benchmark_version": version, "records_added": int(unknown.sum()),
        "records_added_in_sampled": in_sampled, "entities": int(out[ENTITY].nunique()),
        "entities_by_prediction": int(by_pred[ENTITY].nunique()), "candidates": len(out),
        "candidates_by_name": int((cand["reason"] == 1).sum()), "display_columns": [str(c) for c in columns],
    })
    return out


def _row(i: int, entity: object, record: object, record_id: Hashable) -> str:
    return f"row {i + 1} (entity {_plain(entity)}, {record_id} {_plain(record)})"


def _check_made_for(answers: pd.DataFrame, *, prediction: Hashable, version: int) -> None:
    """The worksheet was made for this release and this version of the benchmark (not a stale one)."""
    said = answers[RELEASE].dropna().astype(str).str.strip()
    other = said[said != str(prediction)]
    if len(other):
        i = int(answers.index.get_loc(other.index[0]))
        raise InputError(f"the worksheet was made for release {other.iloc[0]!r} (row {i + 1}, column {RELEASE!r}), "
                         f"not for {str(prediction)!r} (--prediction): give the records and prediction of release "
                         f"{other.iloc[0]!r}, or make a worksheet for {str(prediction)!r} with er-expectations topup list")
    cells = answers[KNOWN_COLUMN].dropna()
    for i, v in zip(cells.index, cells.tolist(), strict=True):
        number = int(v) if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) else \
            int64_text(v.strip()) if isinstance(v, str) else \
            int(v) if isinstance(v, float) and v.is_integer() else None
        row = int(answers.index.get_loc(i)) + 1
        if number is None:
            raise InputError(f"row {row} of the worksheet: {KNOWN_COLUMN!r} is {_plain(v)}, not a version number; the "
                             "worksheet says which benchmark version it extends: restore the value topup list wrote")
        if number < version:
            raise InputError(
                f"the worksheet was made for version {number} of the benchmark (row {row}), but the benchmark is at "
                f"version {version}: it was topped up since, and the worksheet's answers may be about records it "
                "already knows (a stale worksheet); make a new worksheet with er-expectations topup list on this "
                "benchmark")
        if number > version:
            raise InputError(
                f"the worksheet was made for version {number} of the benchmark (row {row}), but this benchmark is at "
                f"version {version}: give the benchmark the worksheet was made from (its newest version)")


def _belongs(answers: pd.DataFrame, ents: list, recs: list, record_id: Hashable) -> np.ndarray:
    """``belongs`` as booleans; unanswered rows and other values are errors naming the rows."""
    values, unanswered, wrong = [], [], []
    for i, v in enumerate(answers[BELONGS].tolist()):
        if isinstance(v, (bool, np.bool_)):
            values.append(bool(v))
            continue
        text = "" if v is None or v is pd.NA or (isinstance(v, float) and np.isnan(v)) else str(v).strip().casefold()
        if text == "":
            unanswered.append(i)
        elif text in ("yes", "no"):
            values.append(text == "yes")
            continue
        else:
            wrong.append(i)
        values.append(False)
    if wrong:
        shown = [f"{_row(i, ents[i], recs[i], record_id)}: {_plain(answers[BELONGS].iloc[i])}" for i in wrong]
        raise InputError(f"{len(wrong)} row(s) of the worksheet answer something other than yes or no in "
                         f"{BELONGS!r}: {_shown(shown)}; write yes (the record is this entity's) or no")
    if unanswered:
        shown = [_row(i, ents[i], recs[i], record_id) for i in unanswered]
        raise InputError(f"{len(unanswered)} of the worksheet's {len(answers)} rows are not answered: "
                         f"{_shown(shown)}; fill {BELONGS!r} with yes or no on every row (SPEC 14.3: every candidate "
                         "is answered), then apply it again")
    return np.asarray(values, dtype=bool)


def _entities(answers: pd.DataFrame, benchmark: pd.DataFrame, *, reference: Hashable) -> list:
    """The worksheet's entities as the benchmark's reference ids (matched as text: a CSV worksheet
    holds every id as text)."""
    refs = pd.unique(benchmark[reference].dropna())
    by_text: dict[str, object] = {}
    for r in refs:
        if str(r) in by_text and by_text[str(r)] != r:
            raise InputError(f"the benchmark's references {_plain(by_text[str(r)])} and {_plain(r)} read the same as text; "
                             "give every true cluster a distinct id")
        by_text[str(r)] = r
    out = []
    for i, e in enumerate(answers[ENTITY].tolist()):
        if e is None or e is pd.NA or (isinstance(e, float) and np.isnan(e)):
            raise InputError(f"row {i + 1} of the worksheet has no {ENTITY!r}; write the entity the record is "
                             "answered for (a reference id of the benchmark)")
        key = e if isinstance(e, str) else str(e)
        if key not in by_text:
            raise InputError(f"row {i + 1} of the worksheet: the entity {_plain(e)} is not a true cluster of the benchmark "
                             f"(column {reference!r}); correct the id, or delete the row")
        out.append(by_text[key])
    return out


def apply_topup(
    benchmark: pd.DataFrame,
    answers: pd.DataFrame,
    release: pd.DataFrame,
    *,
    prediction: Hashable,
    record_id: Hashable,
    reference: Hashable = "reference",
) -> pd.DataFrame:
    """Version v + 1 of the benchmark from a filled top-up worksheet (SPEC 14.3).

    Every record of ``release`` (``prediction`` not null) that the benchmark does not know
    becomes known, with ``benchmark_version`` v + 1; a record answered ``yes`` joins its
    entity's true cluster with the entity's ``reference``, ``draws`` and ``weight`` (and
    ``inclusion`` 0 when the benchmark has the column: a record added after the draws could not
    be drawn, so π_c is unchanged). The rows of version v are kept as they are. The record ids
    are returned in the release's id type.

    The answers are checked first, and any problem raises :class:`InputError` naming the
    worksheet's rows and the fix: a worksheet made for another release or another version of
    the benchmark (stale), an unknown entity, a record id that is not the release's type,
    duplicated (entity, record) rows, values of ``belongs`` other than yes/no, unanswered rows,
    records the benchmark already knows, records not in the release, a record answered yes for
    two entities, and candidates that ``erx.topup_candidates`` lists (by prediction) but the
    worksheet lacks.

    ``attrs``: ``benchmark_version`` (v + 1), ``previous_version``, ``release``,
    ``records_added`` (records that became known), ``joined`` (answered yes),
    ``answered_no``, ``rows`` (worksheet rows), ``found_by_search``, ``entities_grown``,
    ``benchmark_records``, ``clusters``, ``draws`` (Σ draws of the clusters) and
    ``known_records``.


    Parameters
    ----------
    benchmark : pandas.DataFrame
        The benchmark of version v.
    answers : pandas.DataFrame
        The filled worksheet of :func:`topup_candidates` (``belongs`` yes or no).
    release : pandas.DataFrame
        The release the worksheet was made for.
    prediction : hashable
        The column of ``release`` with the predicted cluster ids.
    record_id : hashable
        The record id column (of the three tables).
    reference : hashable
        The benchmark's column of entity (true cluster) ids.

    Returns
    -------
    pandas.DataFrame
        The benchmark of version v + 1.

    Examples
    --------
    Continuing the example of :func:`topup_candidates`, with ``e`` answered yes:

    >>> import pandas as pd
    >>> import er_expectations as erx
    >>> records = pd.DataFrame({"id": ["a", "b", "c", "d"], "pred": ["P1", "P1", "P2", "P2"]})
    >>> labels = pd.DataFrame({"draw": [1], "record_id": ["a"], "removed": [""], "added": [""]})
    >>> bench = erx.benchmark_from_labels(labels, records, prediction="pred", record_id="id")
    >>> later = pd.DataFrame({"id": ["a", "b", "c", "d", "e"], "pred": ["P1", "P1", "P2", "P2", "P1"]})
    >>> sheet = erx.topup_candidates(bench, later, prediction="pred", record_id="id")
    >>> sheet["belongs"] = "yes"
    >>> v2 = erx.apply_topup(bench, sheet, later, prediction="pred", record_id="id")
    >>> v2[["id", "reference", "benchmark_version"]].values.tolist()[-1]
    ['e', 'draw-1', 2]
    """
    in_release = _check_release(release, prediction=prediction, record_id=record_id)
    ids, version = _check_benchmark(benchmark, release, record_id=record_id, reference=reference)
    if not isinstance(answers, pd.DataFrame):
        raise InputError(f"answers: expected a pandas DataFrame (the filled worksheet), got {type(answers).__name__}")
    missing = [c for c in (ENTITY, record_id, BELONGS, RELEASE, KNOWN_COLUMN) if c not in answers.columns]
    if missing:
        raise InputError(f"the worksheet has no column {', '.join(map(repr, missing))}: it is not a top-up worksheet "
                         f"for record id {record_id!r}; make one with er-expectations topup list")
    answers = answers.reset_index(drop=True)
    _check_made_for(answers, prediction=prediction, version=version)
    ents = _entities(answers, benchmark, reference=reference)
    raw = answers[record_id]
    if raw.isna().any():
        i = int(np.flatnonzero(raw.isna().to_numpy())[0])
        raise InputError(f"row {i + 1} of the worksheet has no record id in {record_id!r}; write the record's id or "
                         "delete the row")
    recs = align_record_ids(raw, release[record_id], where="the worksheet").tolist()
    pairs = pd.DataFrame({"e": [str(e) for e in ents], "r": recs})
    dup = pairs.duplicated(keep=False).to_numpy()
    if dup.any():
        shown = [_row(i, ents[i], recs[i], record_id) for i in np.flatnonzero(dup).tolist()]
        raise InputError(f"the worksheet answers the same entity and record twice: {_shown(shown)}; keep one row "
                         "of each")
    yes = _belongs(answers, ents, recs, record_id)
    rec_index = pd.Index(recs)
    known_at = pd.Index(ids).get_indexer(rec_index)
    if (known_at >= 0).any():
        shown = [f"{_row(i, ents[i], recs[i], record_id)} known since version "
                 f"{int(pd.to_numeric(benchmark[KNOWN_COLUMN]).iloc[known_at[i]])}"
                 for i in np.flatnonzero(known_at >= 0).tolist()]
        raise InputError(f"{int((known_at >= 0).sum())} row(s) of the worksheet are about records the benchmark "
                         f"already knows: {_shown(shown)}; only records added since can be answered: delete "
                         "those rows")
    release_ids = pd.Index(release[record_id].to_numpy()[in_release])
    outside = ~rec_index.isin(release_ids)
    if outside.any():
        shown = [_row(i, ents[i], recs[i], record_id) for i in np.flatnonzero(outside).tolist()]
        raise InputError(f"{int(outside.sum())} row(s) of the worksheet are about records that are not in release "
                         f"{str(prediction)!r} (no predicted cluster): {_shown(shown)}; only records of the release "
                         "can be added: correct the record id or delete the row")
    joined = pd.Series(recs)[yes]
    twice = joined[joined.duplicated(keep=False)]
    if len(twice):
        r = twice.iloc[0]
        rows = [i for i in np.flatnonzero(yes).tolist() if recs[i] == r]
        raise InputError(f"the record {_plain(r)} is answered yes for {len(rows)} entities (rows "
                         f"{', '.join(str(i + 1) for i in rows)}: {', '.join(_plain(ents[i]) for i in rows)}); a record "
                         "belongs to at most one entity: answer no for all but one")
    # every candidate topup list writes by prediction is answered (rows deleted, other records)
    rel_ref = _references(benchmark, ids, release, record_id=record_id, reference=reference)
    unknown = in_release & ~release[record_id].isin(pd.Index(ids)).to_numpy()
    by_pred, _ = _prediction_candidates(release, rel_ref, unknown, prediction=prediction)
    listed = set(zip(pairs["e"], recs, strict=True))
    lacking = [(e, release[record_id].iloc[r]) for e, r in zip(by_pred[ENTITY], by_pred["row"], strict=True)
               if (str(e), release[record_id].iloc[r]) not in listed]
    if lacking:
        shown = [f"entity {_plain(e)}, {record_id} {_plain(r)}" for e, r in lacking]
        raise InputError(f"the worksheet lacks {len(lacking)} candidate(s) of release {str(prediction)!r}: "
                         f"{_shown(shown)}; rows were deleted, or the worksheet was made for other records: make it "
                         "again with er-expectations topup list and answer every row")
    return _next_version(benchmark, ids, release, unknown, answers, ents, recs, yes, record_id=record_id,
                         reference=reference, prediction=prediction, version=version)


def _next_version(benchmark: pd.DataFrame, ids: pd.Series, release: pd.DataFrame, unknown: np.ndarray,
                  answers: pd.DataFrame, ents: list, recs: list, yes: np.ndarray, *, record_id: Hashable,
                  reference: Hashable, prediction: Hashable, version: int) -> pd.DataFrame:
    """The benchmark with one row per newly known record (the checks are done)."""
    old = benchmark.copy()
    old[record_id] = ids
    new_ids = release[record_id].to_numpy()[unknown]
    entity_of = dict(zip([recs[i] for i in np.flatnonzero(yes)], [ents[i] for i in np.flatnonzero(yes)],
                         strict=True))
    new_ref = [entity_of.get(r) for r in new_ids.tolist()]
    bench_rows = old[reference].notna()
    first = old[bench_rows].drop_duplicates(reference).set_index(reference)
    new = pd.DataFrame({c: pd.Series([None] * len(new_ids), dtype=object) for c in old.columns})
    new[record_id] = new_ids
    new[reference] = pd.Series(new_ref, dtype=object)
    joins = np.asarray([e is not None for e in new_ref], dtype=bool)
    for c in ("draws", "weight"):
        if c in old.columns:
            new[c] = pd.Series([first.at[e, c] if e is not None else None for e in new_ref], dtype=object)
    if "inclusion" in old.columns:
        new["inclusion"] = np.where(joins, 0.0, np.nan)
    new[KNOWN_COLUMN] = version + 1
    out = pd.concat([old, new], ignore_index=True)
    out[record_id] = out[record_id].astype(release[record_id].dtype)
    with contextlib.suppress(TypeError, ValueError):  # references keep their type (text stays text) if they can
        out[reference] = out[reference].astype(old[reference].dtype)
    if "draws" in out.columns:
        out["draws"] = pd.to_numeric(out["draws"]).astype("Int64")
    for c in ("weight", "inclusion"):
        if c in out.columns:
            out[c] = pd.to_numeric(out[c]).astype(np.float64)
    out[KNOWN_COLUMN] = pd.to_numeric(out[KNOWN_COLUMN]).astype(np.int64)
    in_bench = out[reference].notna()
    clusters = out.loc[in_bench].drop_duplicates(reference)
    reasons = answers[REASON].astype(str) if REASON in answers.columns else pd.Series([""] * len(answers))
    out.attrs.update({
        "benchmark_version": version + 1, "previous_version": version, "release": str(prediction),
        "records_added": len(new_ids), "joined": int(yes.sum()), "answered_no": int((~yes).sum()),
        "rows": len(answers), "found_by_search": int((reasons.str.strip() == REASON_SEARCH).sum()),
        "entities_grown": len({str(ents[i]) for i in np.flatnonzero(yes)}),
        "benchmark_records": int(in_bench.sum()), "clusters": len(clusters),
        "draws": int(clusters["draws"].sum()) if "draws" in out.columns else 0, "known_records": len(out),
    })
    return out
