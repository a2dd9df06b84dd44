"""Review mode (issue 19, item 5): a labelled true cluster laid out against the predicted clusters.

The method's picture of an entity: its true cluster c(r) = (ĉ(r) \\ A_r) ∪ B_r (SPEC 2.2), and
one row per predicted cluster that meets it, with the members it shares with c(r) and the
members it holds beyond (records wrongly put with the entity). A row's shared members that
are not all of c(r) show the entity split (under-clustering), its other members a merge
(over-clustering). Auditors tag the errors they see (:meth:`LabelStore.add_tag`) on the
cluster's key: the labeller's true cluster id, else ``draw-<n>`` as ``benchmark_from_labels``
names it.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from er_expectations.core.errors import InputError
from er_expectations.labelling.project import Project
from er_expectations.labelling.store import ANSWERED, Tag

__all__ = ["Picture", "PictureRow", "picture"]


@dataclass(frozen=True, slots=True)
class PictureRow:
    """One predicted cluster meeting the true cluster: its id, its size, its members in the true
    cluster (``shared``) and beyond it (``beyond``), ids in the records' type, sorted."""

    predicted_cluster: object
    size: int
    shared: tuple
    beyond: tuple


@dataclass(frozen=True)
class Picture:
    """A draw's true cluster against the prediction: ``true_cluster`` (ids, sorted), ``rows`` (ĉ(r)
    first, then by shared members, most first), ``key`` (what its tags are saved on), ``tags``,
    and whose answer it is (``labeller``)."""

    draw: int
    labeller: str
    key: str
    true_cluster: tuple
    rows: list[PictureRow]
    tags: list[Tag]

    @property
    def split(self) -> bool:
        """The entity is spread over several predicted clusters (under-clustering)."""
        return sum(1 for r in self.rows if r.shared) > 1

    @property
    def merged(self) -> bool:
        """A predicted cluster holds records of other entities (over-clustering)."""
        return any(r.beyond for r in self.rows if r.shared)


def picture(project: Project, draw: int, *, labeller: str | None = None) -> Picture:
    """The picture of ``draw``'s true cluster from ``labeller``'s answer (default: the draw's first
    answer); a draw without an answer raises :class:`InputError`."""
    store = project.store
    info = store.draw(draw)
    answers = [d for d in store.decisions(draw) if d.status in ANSWERED
               and (labeller is None or d.labeller == labeller.strip())]
    if not answers:
        who = f" by {labeller!r}" if labeller is not None else ""
        raise InputError(f"draw {draw} has no answer{who} yet: label it before reviewing its cluster")
    answer = answers[0]
    cfg = project.config
    ik, ck = store.id_kind, store.cluster_kind
    typed = (lambda t: int(t)) if ik == "integer" else (lambda t: t)
    cluster = int(info.predicted_cluster) if ck == "integer" else info.predicted_cluster
    added = [typed(a) for a in answer.added if ik != "integer" or a.lstrip("-").isdigit()]
    looked = project.qc_records(added)
    pred_of = dict(zip(looked[cfg.record_id].tolist(), looked[cfg.prediction].tolist(), strict=True))
    hat = project.cluster_rows([cluster])[cfg.record_id].tolist()
    removed = {typed(r) for r in answer.removed if ik != "integer" or r.lstrip("-").isdigit()}
    # records outside the release (no predicted cluster) are not in a true cluster (rule 4)
    in_release = [a for a in added if a in pred_of and not pd.isna(pred_of[a])]
    truth = sorted(set(hat) - removed | set(in_release))
    clusters = list(dict.fromkeys([cluster, *(pred_of[a] for a in in_release)]))
    rows_frame = project.cluster_rows(clusters)
    members: dict[object, list] = {}
    for rid, pid in zip(rows_frame[cfg.record_id].tolist(), rows_frame[cfg.prediction].tolist(), strict=True):
        members.setdefault(pid, []).append(rid)
    truth_set = set(truth)
    rows = []
    for c in clusters:
        mine = sorted(members.get(c, []))
        rows.append(PictureRow(predicted_cluster=c, size=len(mine), shared=tuple(m for m in mine if m in truth_set),
                               beyond=tuple(m for m in mine if m not in truth_set)))
    rows = [rows[0], *sorted(rows[1:], key=lambda r: -len(r.shared))]
    key = answer.true_cluster if answer.true_cluster is not None else f"draw-{draw}"
    return Picture(draw=draw, labeller=str(answer.labeller), key=key, true_cluster=tuple(truth), rows=rows,
                   tags=store.tags(key))
