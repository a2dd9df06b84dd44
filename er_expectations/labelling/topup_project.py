"""Top-up projects of the workbench: a labelling project made from a top-up worksheet (SPEC 14.3).

``label init PROJECT --topup WORKSHEET --benchmark BENCHMARK`` makes one: each sampled entity of
the worksheet is a task (:mod:`.topup_store`) holding the entity's known records (the
benchmark's rows of its reference) and its candidates (the worksheet's rows), checked against
the release (every candidate a record of it, in the predicted cluster the worksheet says,
unknown to the benchmark) and the benchmark (the entity one of its references, the worksheet's
``benchmark_version`` its latest). ``label export`` writes the worksheet back with ``belongs``
filled (``yes``/``no``) and a row per record found by search (reason ``found by search``,
belongs ``yes``): the contract of /work/briefs/topup-format.md that ``er-expectations topup
apply`` reads.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from er_expectations.core.errors import InputError
from er_expectations.labelling.decide import plural
from er_expectations.labelling.project import (
    CONFIG_FILE,
    STORE_FILE,
    Project,
    new_project_folder,
    read_records,
    write_config,
)
from er_expectations.labelling.store import LabelStore, id_text
from er_expectations.labelling.topup_store import Candidate, TopupStore, TopupTask, insert_tasks

__all__ = ["FOUND", "REASONS", "UNANSWERED", "TopupExport", "addable", "benchmark_ids", "init_topup_project",
           "topup_export"]

#: Why a worksheet asks about a candidate (SPEC 14.3), and the reason of a record found by search.
REASONS = ("predicted with the entity", "same name as the entity")
FOUND = "found by search"
#: The fixed columns of a top-up worksheet, after the record id column (placed second).
FIXED = ("entity", "predicted_cluster", "reason", "belongs", "release", "benchmark_version")
#: What ``label export`` may do with a candidate nobody answered.
UNANSWERED = ("refuse", "no")


def _text(value: object) -> str:
    return id_text(value.item() if isinstance(value, np.generic) else value)


def read_worksheet(path: Path, *, record_id: str) -> pd.DataFrame:
    """The top-up worksheet at ``path``, its columns checked (each named with the fix)."""
    from er_expectations.core.io import read_table

    if not path.is_file():
        raise InputError(f"{path}: no such worksheet; give the file 'er-expectations topup list' wrote")
    sheet = read_table(path)
    missing = [c for c in ("entity", record_id, *FIXED[1:]) if c not in sheet.columns]
    if missing:
        raise InputError(f"{path}: no column {missing[0]!r}; a top-up worksheet has the columns entity, "
                         f"{record_id} (the --record-id), {', '.join(FIXED[1:])} (docs/workbench.md, Top-up)")
    if len(sheet) == 0:
        raise InputError(f"{path}: the worksheet has no rows: no entity has a new record to ask about")
    return sheet


def benchmark_ids(path: Path, *, record_id: str, reference: str) -> pd.DataFrame:
    """The benchmark's record id, reference and ``benchmark_version`` columns, ids as text."""
    from er_expectations.core.io import read_table, table_columns

    if not path.is_file():
        raise InputError(f"{path}: no such benchmark file; give the benchmark the worksheet extends")
    columns = table_columns(path)
    for column, fix in ((record_id, "--record-id"), (reference, "--reference"),
                        ("benchmark_version", "a benchmark written by 'er-expectations benchmark'")):
        if column not in columns:
            raise InputError(f"{path}: no column {column!r}; give {fix}")
    frame = read_table(path, [record_id, reference, "benchmark_version"])
    return pd.DataFrame({"record": frame[record_id].map(_text),
                         "reference": frame[reference].map(lambda v: None if pd.isna(v) else _text(v)),
                         "version": frame["benchmark_version"]})


def _tasks(sheet: pd.DataFrame, bench: pd.DataFrame, records: pd.DataFrame, *, where: Path, record_id: str,
           prediction: str) -> list[TopupTask]:
    """The tasks of the worksheet, every row checked against the release and the benchmark."""
    releases = sorted(set(map(str, sheet["release"].dropna())))
    if releases != [prediction]:
        raise InputError(f"{where}: column 'release' says {', '.join(releases) or 'nothing'}; the worksheet is "
                         f"for one release: give -p {releases[0] if releases else '<its release>'} (or the "
                         "worksheet of this release)")
    latest = int(bench["version"].max())
    versions = sorted(set(sheet["benchmark_version"].dropna().astype("int64").tolist()))
    if versions != [latest]:
        raise InputError(f"{where}: column 'benchmark_version' says {versions}; the benchmark's latest version is "
                         f"{latest}: make the worksheet again from this benchmark ('er-expectations topup list')")
    filled = sheet["belongs"].map(lambda v: not (v is None or (isinstance(v, float) and np.isnan(v)) or v == ""))
    if filled.any():
        raise InputError(f"{where}: line {int(np.flatnonzero(filled)[0]) + 2}: 'belongs' is filled already; the "
                         "workbench starts from an unanswered worksheet (apply a filled one with "
                         "'er-expectations topup apply')")
    ids = pd.Index(records[record_id].map(_text), dtype=object)
    clusters = records[prediction].map(lambda v: None if pd.isna(v) else _text(v)).to_numpy(dtype=object)
    known = set(bench["record"])
    by_entity = bench.dropna(subset=["reference"]).groupby("reference", sort=False)["record"].agg(tuple).to_dict()
    tasks: dict[str, list[Candidate]] = {}
    for line, (entity, record, cluster, reason) in enumerate(zip(
            sheet["entity"], sheet[record_id], sheet["predicted_cluster"], sheet["reason"], strict=True), start=2):
        at = f"{where}: line {line}"
        if pd.isna(entity) or pd.isna(record):
            raise InputError(f"{at}: an empty entity or {record_id}; every row names both")
        ent, rid = _text(entity), _text(record)
        if ent not in by_entity:
            raise InputError(f"{at}: entity {ent!r} is no reference of the benchmark; give the worksheet made "
                             "from this benchmark")
        if reason not in REASONS:
            raise InputError(f"{at}: reason {reason!r}; a worksheet's rows say {' or '.join(map(repr, REASONS))} "
                             f"(records {FOUND!r} are added in the workbench)")
        row = ids.get_indexer([rid])[0]
        if row < 0:
            raise InputError(f"{at}: record {rid!r} is not in the records; give the records of release "
                             f"{prediction}")
        if clusters[row] is None:
            raise InputError(f"{at}: record {rid!r} is not in release {prediction} (no predicted cluster)")
        if pd.isna(cluster) or _text(cluster) != clusters[row]:
            raise InputError(f"{at}: record {rid!r} is in predicted cluster {clusters[row]!r} of {prediction}, "
                             f"not {cluster!r}; give the worksheet of this release")
        if rid in known:
            raise InputError(f"{at}: record {rid!r} is known to the benchmark already; a candidate is a new record")
        same = tasks.setdefault(ent, [])
        if any(c.record == rid for c in same):
            raise InputError(f"{at}: record {rid!r} is listed twice for entity {ent!r}; once is enough")
        same.append(Candidate(rid, clusters[row], str(reason)))
    return [TopupTask(n, ent, tuple(by_entity[ent]), tuple(cands))
            for n, (ent, cands) in enumerate(tasks.items(), start=1)]


def init_topup_project(folder: str | os.PathLike, *, topup: str | os.PathLike, benchmark: str | os.PathLike,
                       records: str | os.PathLike, record_id: str, prediction: str,
                       predictions: str | os.PathLike | None = None, reference: str = "reference",
                       name: str | Sequence[str] | None = None, block: str | None = None,
                       attributes: Sequence[str] = ()) -> Project:
    """Make a top-up project in ``folder`` from the worksheet ``topup`` of release ``prediction``
    (SPEC 14.3): one task per entity with its known records (``benchmark``'s rows of its
    ``reference``) and its candidates. Writes only ``workbench.yml`` and the store in the folder."""
    root, relative = new_project_folder(folder)
    names = [name] if isinstance(name, str) else list(name or [])
    frame = read_records(Path(records), record_id=record_id, prediction=prediction, name=names, block=block,
                         attributes=attributes, predictions=None if predictions is None else Path(predictions))
    bench = benchmark_ids(Path(benchmark), record_id=record_id, reference=reference)
    tasks = _tasks(read_worksheet(Path(topup), record_id=record_id), bench, frame, where=Path(topup),
                   record_id=record_id, prediction=prediction)
    values: dict[str, Any] = {
        "records": relative(records), "predictions": None if predictions is None else relative(predictions),
        "record_id": record_id, "prediction": prediction, "name": names or None, "block": block,
        "attributes": list(attributes) or None, "topup": relative(topup), "benchmark": relative(benchmark),
        "reference": reference, "double_label_share": 0.0}
    kind = "integer" if pd.api.types.is_integer_dtype(frame[record_id].dtype) else "text"
    root.mkdir(exist_ok=True)
    store = LabelStore.create(root / STORE_FILE, draws=[], id_kind=kind, fill=lambda db: insert_tasks(db, tasks))
    try:
        config = write_config(root, values)
    except BaseException:
        store.close()
        (root / STORE_FILE).unlink(missing_ok=True)
        (root / CONFIG_FILE).unlink(missing_ok=True)
        raise
    return Project(folder=root.resolve(), config=config, store=store, _records=frame)


def addable(project: Project, ids: Sequence[str], *, known: set[str] | None = None) -> dict[str, str]:
    """Why each record of ``ids`` (id texts) cannot be added by search to a top-up entity: not a
    record, not in the release, or known to the benchmark already (absent: it can be added)."""
    cfg = project.config
    frame = project.records()
    index = pd.Index(frame[cfg.record_id].map(_text), dtype=object)
    if known is None:
        known = set(benchmark_ids(project.path(str(cfg.benchmark)), record_id=cfg.record_id,
                                  reference=cfg.reference)["record"])
    rows = index.get_indexer(pd.Index(list(ids), dtype=object))
    inside = frame[cfg.prediction].notna().to_numpy(dtype=bool)
    out = {}
    for rid, row in zip(ids, rows.tolist(), strict=True):
        if row < 0:
            out[rid] = "not a record of this project"
        elif not inside[row]:
            out[rid] = f"not in release {cfg.prediction}"
        elif rid in known:
            out[rid] = "already in the benchmark"
    return out


@dataclass(frozen=True)
class TopupExport:
    """The filled worksheet and what the export decided: candidates answered yes and no, left
    unanswered and written ``no`` (``--unanswered no``), and records found by search."""

    frame: pd.DataFrame
    yes: int
    no: int
    unanswered_as_no: int
    found: int

    def summary(self) -> str:
        """One line for the command's output."""
        extra = f", {self.unanswered_as_no:,} unanswered written 'no' (--unanswered no)" if self.unanswered_as_no \
            else ""
        return (f"{plural(self.yes + self.no + self.unanswered_as_no, 'candidate')}: {self.yes:,} "
                f"{'belongs' if self.yes == 1 else 'belong'}, {self.no:,} {'does' if self.no == 1 else 'do'} "
                f"not{extra}; {plural(self.found, 'record')} found by search added")


def topup_export(project: Project, *, unanswered: str = "refuse") -> TopupExport:
    """The project's worksheet with ``belongs`` filled (SPEC 14.3). ``unanswered``: ``refuse``
    (the default) refuses a candidate nobody answered, naming the entities; ``no`` writes it
    ``no``. Refuses a worksheet changed since ``label init`` and a found record that cannot be
    added (:func:`addable`)."""
    if unanswered not in UNANSWERED:
        raise InputError(f"unanswered={unanswered!r}: give one of {', '.join(UNANSWERED)}")
    cfg = project.config
    where = project.path(str(cfg.topup))
    sheet = read_worksheet(where, record_id=cfg.record_id)
    topups = TopupStore(project.store)
    tasks = topups.tasks()
    answers = topups.answers()
    number = {t.entity: t.task for t in tasks}
    asked = {(t.entity, c.record) for t in tasks for c in t.candidates}
    rows = list(zip(sheet["entity"].map(_text), sheet[cfg.record_id].map(_text), strict=True))
    if set(rows) != asked or len(rows) != len(asked):
        raise InputError(f"{where}: the worksheet changed since 'label init' (its rows are not the project's "
                         "candidates); put back the worksheet the project was made from")
    belongs, missing = [], {}
    for entity, record in rows:
        answer = answers.get(number[entity])
        value = None if answer is None else answer.belongs.get(record)
        if value is None:
            missing[entity] = missing.get(entity, 0) + 1
        belongs.append(value or "no")
    if missing and unanswered == "refuse":
        shown = ", ".join(f"{e!r} ({n})" for e, n in list(missing.items())[:5])
        raise InputError(f"{plural(sum(missing.values()), 'candidate')} of {plural(len(missing), 'entity', 'entities')} "
                         f"{'is' if sum(missing.values()) == 1 else 'are'} not answered "
                         f"(entity (candidates): {shown}{', …' if len(missing) > 5 else ''}); answer them in the "
                         "workbench, or give --unanswered no to write them 'no'")
    out = sheet.copy()
    out["belongs"] = pd.Series(belongs, index=out.index, dtype=object)
    found = [(t.entity, r) for t in tasks if t.task in answers for r in answers[t.task].found]
    bad = addable(project, [r for _, r in found])
    if bad:
        record, why = next(iter(bad.items()))
        raise InputError(f"record {record!r} found by search cannot join the benchmark: {why}; remove it from its "
                         "entity in the workbench")
    claimed = [r for (_, r), b in zip(rows, belongs, strict=True) if b == "yes"] + [r for _, r in found]
    twice = pd.Series(claimed).duplicated()
    if twice.any():
        raise InputError(f"record {claimed[int(np.flatnonzero(twice)[0])]!r} is said to belong to two entities; "
                         "answer 'no' for one of them")
    if found:
        out = pd.concat([out, _found_rows(project, out, found)], ignore_index=True)
    yes = sum(b == "yes" for b in belongs)
    gaps = sum(missing.values())
    return TopupExport(out, yes=yes, no=len(belongs) - yes - gaps, unanswered_as_no=gaps, found=len(found))


def _found_rows(project: Project, sheet: pd.DataFrame, found: list[tuple[str, str]]) -> pd.DataFrame:
    """The worksheet rows of the records found by search: the entity as the worksheet writes it,
    the record's id and predicted cluster from the records, the display columns it has."""
    cfg = project.config
    frame = project.records()
    by_id = frame.set_index(frame[cfg.record_id].map(_text))
    entity = dict(zip(sheet["entity"].map(_text), sheet["entity"], strict=True))
    rows = []
    for ent, record in found:
        rec = by_id.loc[record]
        row = {c: None for c in sheet.columns}
        row.update({"entity": entity[ent], cfg.record_id: rec[cfg.record_id], "predicted_cluster":
                    rec[cfg.prediction], "reason": FOUND, "belongs": "yes", "release": sheet["release"].iloc[0],
                    "benchmark_version": sheet["benchmark_version"].iloc[0]})
        for column in sheet.columns:
            if column not in row or row[column] is None:
                row[column] = rec[column] if column in by_id.columns else None
        rows.append(row)
    added = pd.DataFrame(rows, columns=sheet.columns)
    for column in sheet.columns:  # the worksheet's types (exact 64-bit ids), not object columns
        if pd.api.types.is_integer_dtype(sheet[column].dtype) and added[column].notna().all():
            added[column] = added[column].astype(sheet[column].dtype)
    return added
