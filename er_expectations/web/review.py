"""Review mode: the method's picture of one benchmark cluster, and its error tags (issue 19).

For an answered draw, the true cluster is c = (ĉ(r) \\ A_r) ∪ B_r (SPEC 2.2). The picture
lays its records out by predicted cluster: one row per predicted cluster that meets c (and a
row for the records outside the release), one point per record of that predicted cluster,
filled when the record is in c. Points not filled on ĉ(r)'s row are records wrongly merged
with r's entity; rows other than ĉ(r)'s are parts of the entity split off by the release.
Tags (``over``: wrongly merged, ``under``: wrongly split) from the project's list are saved
with the cluster through :meth:`~er_expectations.workbench.store.LabelStore.add_tag`.
"""

from __future__ import annotations

from dataclasses import dataclass

from er_expectations.core.errors import InputError
from er_expectations.web.model import Workspace, text_of
from er_expectations.workbench.store import ANSWERED, Decision, Draw

__all__ = ["Picture", "PictureRow", "cluster_key", "picture"]


@dataclass(frozen=True, slots=True)
class PictureRow:
    """One predicted cluster meeting the true cluster (``cluster`` None: outside the release):
    its members as ``(id, name, in_true)``, drawn cluster first."""

    cluster: str | None
    members: tuple[tuple[str, str, bool], ...]
    drawn: bool

    @property
    def inside(self) -> int:
        """Members in the true cluster."""
        return sum(1 for _, _, inside in self.members if inside)


@dataclass(frozen=True, slots=True)
class Picture:
    """The true cluster of a draw by predicted cluster; ``key`` names it for the tags."""

    draw: Draw
    decision: Decision
    key: str
    true_ids: tuple[str, ...]
    rows: tuple[PictureRow, ...]


def cluster_key(draw: Draw, decision: Decision) -> str:
    """The id the tags of a true cluster carry: its ``true_cluster`` if the labeller gave one,
    else ``draw-N`` (the reference id ``benchmark_from_labels`` gives it)."""
    return decision.true_cluster or f"draw-{draw.draw}"


def picture(space: Workspace, draw: Draw, decision: Decision) -> Picture:
    """The picture of ``draw``'s true cluster under ``decision`` (see the module)."""
    if decision.status not in ANSWERED:
        raise InputError(f"draw {draw.draw} was skipped: there is no true cluster to review")
    members = space.member_ids(draw.predicted_cluster)
    removed = set(decision.removed)
    truth = [m for m in members if m not in removed] + [a for a in decision.added if a not in set(members)]
    true_set = set(truth)
    pred_col = space.records[space.project.config.prediction]
    clusters: dict[str | None, None] = {draw.predicted_cluster: None}
    for rid in truth:
        row = space.row(rid)
        if row is None:
            continue
        value = pred_col.iloc[row]
        clusters.setdefault(None if text_of(value) == "" else text_of(value), None)
    rows = []
    for cluster in clusters:
        if cluster is None:
            ids = [rid for rid in truth if space.row(rid) is not None
                   and text_of(pred_col.iloc[space.row(rid)]) == ""]
        else:
            ids = space.member_ids(cluster)
        rows.append(PictureRow(cluster=cluster, drawn=cluster == draw.predicted_cluster,
                               members=tuple((i, space.names[space.row(i)], i in true_set) for i in ids
                                             if space.row(i) is not None)))
    return Picture(draw=draw, decision=decision, key=cluster_key(draw, decision), true_ids=tuple(truth),
                   rows=tuple(rows))
