"""What the pages of the workbench show, read once from a labelling project (docs/dev/workbench.md).

:class:`Workspace` holds the opened :class:`~er_expectations.labelling.project.Project`, its
records table with an index from the exact id text to the row, the members of every predicted
cluster ĉ (SPEC 1: records with the same prediction; null = outside the release), the columns
shown to the labeller and the record search (:class:`~er_expectations.labelling.search.RecordSearch`).
Every value leaves here as text: the pages escape it (Jinja2 autoescape, ``textContent`` in
the JavaScript) and ids stay exact (an id beyond 2^53 is never a JavaScript number).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from er_expectations.core.errors import InputError
from er_expectations.labelling.project import Project
from er_expectations.labelling.store import Decision, Draw
from er_expectations.labelling.topup_project import benchmark_ids
from er_expectations.labelling.topup_store import TopupStore
from er_expectations.web.errors import whole_number

__all__ = ["FOLD_AT", "Member", "Workspace", "decision_json", "text_of"]

#: Cells longer than this many characters are folded behind a "show all" button (never cut).
FOLD_AT = 160


def text_of(value: object) -> str:
    """A cell as the page shows it: empty for a missing value, else its text."""
    if value is None:
        return ""
    if isinstance(value, float) and math.isnan(value):
        return ""
    if value is pd.NA or value is pd.NaT:
        return ""
    if isinstance(value, np.generic):
        value = value.item()
    return str(value)


@dataclass(frozen=True, slots=True)
class Member:
    """One record as a table row: its exact id text, its name and its shown cells."""

    id: str
    name: str
    cells: tuple[str, ...]


def decision_json(decision: Decision | None) -> dict | None:
    """A stored decision as the page's JSON (ids as text)."""
    if decision is None:
        return None
    return {"status": decision.status, "removed": list(decision.removed), "added": list(decision.added),
            "note": decision.note, "reason": decision.reason, "version": decision.version,
            "labeller": decision.labeller, "saved_at": decision.saved_at}


class Workspace:
    """The project as the web app reads it: records, ĉ members, shown columns and search."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self.store = project.store
        cfg = project.config
        records = project.records()
        self.records = records
        self.ids = records[cfg.record_id].map(text_of).to_numpy(dtype=object)
        # object dtype on both sides of every look-up: under pandas 3 an inferred ``str`` index
        # met by an object target is copied to object, its 133k-id hash table rebuilt per call
        self.index = pd.Index(self.ids, dtype=object)
        #: the release being labelled (the prediction column) and which records are in it (SPEC 2.1:
        #: a null prediction is outside the release; such a record is never added, SPEC 9 rule 4)
        self.release = str(cfg.prediction)
        self.in_release = records[cfg.prediction].notna().to_numpy(dtype=bool)
        name_col = project.name_column
        self.names = records[name_col].map(text_of).to_numpy(dtype=object) if name_col else self.ids
        shown = list(cfg.attributes or [])
        if not shown:
            shown = [c for c in [*(cfg.name or []), cfg.block] if c]
        self.columns: tuple[str, ...] = tuple(dict.fromkeys(shown))
        self._cells = {c: records[c].map(text_of).to_numpy(dtype=object) for c in self.columns}
        self.search = project.search() if name_col else None
        self._last_members: tuple[Draw, list[Member]] | None = None
        #: a top-up project (SPEC 14.3): its tasks and the records the benchmark knows (never added)
        self.topup: TopupStore | None = None
        self.known: frozenset[str] = frozenset()
        if cfg.topup is not None:
            self.topup = TopupStore(self.store)
            self.known = frozenset(benchmark_ids(project.path(str(cfg.benchmark)), record_id=cfg.record_id,
                                                 reference=cfg.reference)["record"])
        if len(self.ids):  # the id look-ups' hash tables, built now rather than in the first request
            self.rows(self.ids[:1].tolist())
            if self.search is not None:
                self.search.row_of(self.ids[0])

    # -- records ------------------------------------------------------------------------------
    def rows(self, ids: list[str]) -> np.ndarray:
        """The rows of record ids' exact texts (-1 where no record has the id), through the
        one index built at start (the ids are looked up as objects, the index's own dtype)."""
        return self.index.get_indexer(pd.Index(ids, dtype=object))

    def row(self, record: str) -> int | None:
        """The row of a record id's exact text, or None when no record has it."""
        loc = self.rows([record])[0]
        return None if loc < 0 else int(loc)

    def unknown(self, ids: list[str]) -> list[str]:
        """The ids of ``ids`` that are not record ids."""
        if not ids:
            return []
        return [i for i, f in zip(ids, self.rows(ids).tolist(), strict=True) if f < 0]

    def outside_release(self, ids: list[str]) -> list[str]:
        """The ids of ``ids`` that are records outside the release (no predicted cluster)."""
        if not ids:
            return []
        return [i for i, f in zip(ids, self.rows(ids).tolist(), strict=True) if f >= 0 and not self.in_release[f]]

    def why_not_added(self, row: int) -> str:
        """Why the record in ``row`` cannot be added by a top-up's search ("" when it can): outside
        the release, or known to the benchmark already (SPEC 14.3: only new records join)."""
        if not self.in_release[row]:
            return self.not_in_release()
        return "already in the benchmark" if self.ids[row] in self.known else ""

    def not_in_release(self) -> str:
        """Why a record outside the release cannot be added, as the page says it."""
        return f"not in release {self.release}"

    def member(self, row: int) -> Member:
        """The record in ``row`` as a table row."""
        return Member(id=self.ids[row], name=self.names[row], cells=tuple(self._cells[c][row] for c in self.columns))

    def members(self, draw: Draw) -> list[Member]:
        """ĉ(r) of ``draw`` as table rows, drawn record first (wb-core's :meth:`Project.members`);
        the last draw's are kept (the page and its rows asked right after it read them once)."""
        kept = self._last_members
        if kept is not None and kept[0] == draw:
            return kept[1]
        rows = self._members(draw)
        self._last_members = (draw, rows)
        return rows

    def _members(self, draw: Draw) -> list[Member]:
        frame = self.project.members(draw.draw)
        cfg = self.project.config
        ids = frame[cfg.record_id].map(text_of).tolist()
        names = frame[self.project.name_column].map(text_of).tolist() if self.project.name_column else ids
        cells = [frame[c].map(text_of).tolist() for c in self.columns]
        return [Member(id=i, name=n, cells=tuple(col[k] for col in cells))
                for k, (i, n) in enumerate(zip(ids, names, strict=True))]

    def _clusters(self, clusters: list[str]) -> pd.DataFrame:
        typed = [int(c) for c in clusters] if self.store.cluster_kind == "integer" else clusters
        return self.project.cluster_rows(typed)

    def member_ids(self, cluster: str) -> list[str]:
        """The ids of the predicted cluster ``cluster`` (its text), as text (wb-core's
        :meth:`Project.cluster_rows`)."""
        return self._clusters([cluster])[self.project.config.record_id].map(text_of).tolist()

    def sizes(self, clusters: list[str]) -> dict[str, int]:
        """The size of each predicted cluster of ``clusters`` (their text)."""
        pred = self._clusters(list(dict.fromkeys(clusters)))[self.project.config.prediction].map(text_of)
        return {str(k): int(v) for k, v in pred.value_counts().items()}

    # -- draws ----------------------------------------------------------------------------------
    def draw(self, text: str) -> Draw:
        """The draw numbered ``text`` (from a URL); a bad or unknown number raises InputError."""
        number = whole_number(text)
        if number is None:
            raise InputError(f"draw {text.strip()[:40]!r}: give a draw number (a whole number from 1, digits 0-9)")
        return self.store.draw(number)

    def drawn_row(self, draw: Draw) -> int:
        """The row of the drawn record (the project checked it is in the records)."""
        row = self.row(draw.record)
        if row is None:
            raise InputError(f"draw {draw.draw}: the drawn record {draw.record!r} is not in the records")
        return row
