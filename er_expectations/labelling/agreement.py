"""Agreement of two labellers on the draws labelled twice, blind (issue 19; SPEC 2.2, 5, 6).

For each draw labelled twice, blind (a *double*: the second labeller saw no other answer before
answering; the first two labellers by their first save, answers labelled or unsure): the Jaccard index of their A_r (``removed``) and of their B_r (``added``), 1 when both
sets are empty, whether each set is identical, and whether the true clusters
c(r) = (ĉ(r) \\ A_r) ∪ B_r are identical (computed with ĉ(r)'s members when the project is
given; else from A_r and B_r, which is the same when rules 1 and 3 of SPEC 9 hold).

Only the blind doubles make the rates and the estimates: a second answer to a draw labelled
once was given after seeing the first (a conflict, "keep mine"), so it is no independent
measurement. Such draws are still compared (``blind=False``) and listed among the
disagreements to reconcile, since the export needs one answer per draw (issue 31).

With the project, the estimates of pairwise precision and recall (``erx.estimate``, SPEC 6)
are computed from each labeller's version of the doubly labelled draws: the benchmark built
from that labeller's answers (``benchmark_from_labels``) joined onto the release.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from er_expectations.labelling.project import Project
from er_expectations.labelling.store import ANSWERED, Decision, LabelStore

__all__ = ["Agreement", "DrawAgreement", "LabellerEstimates", "agreement", "jaccard", "predicted_members",
           "same_true_cluster"]

#: The metrics estimated from each labeller's version.
METRICS = ("pairwise_precision", "pairwise_recall")


def jaccard(a: set, b: set) -> float:
    """|a ∩ b| / |a ∪ b|, and 1 for two empty sets (they agree)."""
    union = a | b
    return 1.0 if not union else len(a & b) / len(union)


@dataclass(frozen=True, slots=True)
class DrawAgreement:
    """Two labellers' answers on one draw, compared."""

    draw: int
    labellers: tuple[str, str]
    removed_jaccard: float
    added_jaccard: float
    removed_equal: bool
    added_equal: bool
    same_true_cluster: bool
    #: labelled twice blind (a double); False: the second answer saw the first (not counted in the rates)
    blind: bool = True


@dataclass(frozen=True)
class LabellerEstimates:
    """Estimates from one labeller's answers to the doubly labelled draws: one row per metric
    (``erx.estimate``'s columns), or ``error`` when their labels break a critical rule."""

    labeller: str
    draws: int
    estimates: pd.DataFrame | None = None
    error: str | None = None


@dataclass(frozen=True)
class Agreement:
    """Agreement over the doubly labelled draws: per draw (``draws``, every draw with two
    answers), and as rates over the blind doubles only (None with no blind pair)."""

    draws: list[DrawAgreement]
    estimates: list[LabellerEstimates] = field(default_factory=list)

    @property
    def blind_draws(self) -> list[DrawAgreement]:
        """The draws labelled twice, blind: the ones the rates count."""
        return [d for d in self.draws if d.blind]

    @property
    def pairs(self) -> int:
        """Draws labelled twice, blind, with two answers."""
        return len(self.blind_draws)

    @property
    def seen_pairs(self) -> int:
        """Draws labelled once with a second answer given after seeing the first (not counted)."""
        return len(self.draws) - self.pairs

    def _mean(self, values: list[float]) -> float | None:
        return sum(values) / len(values) if values else None

    @property
    def removed_jaccard(self) -> float | None:
        """Mean Jaccard index of A_r."""
        return self._mean([d.removed_jaccard for d in self.blind_draws])

    @property
    def added_jaccard(self) -> float | None:
        """Mean Jaccard index of B_r."""
        return self._mean([d.added_jaccard for d in self.blind_draws])

    @property
    def removed_equal_rate(self) -> float | None:
        """Share of the pairs with identical A_r."""
        return self._mean([float(d.removed_equal) for d in self.blind_draws])

    @property
    def added_equal_rate(self) -> float | None:
        """Share of the pairs with identical B_r."""
        return self._mean([float(d.added_equal) for d in self.blind_draws])

    @property
    def same_true_cluster_rate(self) -> float | None:
        """Share of the pairs with identical true clusters."""
        return self._mean([float(d.same_true_cluster) for d in self.blind_draws])

    @property
    def disagreements(self) -> list[int]:
        """Draws whose true clusters differ, blind or not (the reconciliation screen's list)."""
        return [d.draw for d in self.draws if not d.same_true_cluster]


def _pairs(store: LabelStore) -> dict[int, tuple[Decision, Decision]]:
    out: dict[int, list[Decision]] = {}
    for d in store.decisions():  # each draw's labellers in the order of their first save
        if d.status in ANSWERED:
            out.setdefault(int(d.draw or 0), []).append(d)
    return {draw: (ds[0], ds[1]) for draw, ds in sorted(out.items()) if len(ds) >= 2}


def predicted_members(store: LabelStore, project: Project, draws: list[int]) -> dict[str, set[str]]:
    """The members of ``draws``' predicted clusters ĉ(r) (ids as text), by the cluster's id as text."""
    members: dict[str, set[str]] = {}
    if not draws:
        return members
    records = project.records()
    cfg = project.config
    wanted = {store.draw(n).predicted_cluster for n in draws}
    pred = records[cfg.prediction]
    inside = pred.notna().to_numpy()
    texts = pred[inside].astype(str)
    hit = texts.isin(wanted).to_numpy()
    ids = records.loc[inside, cfg.record_id].to_numpy()[hit]
    for cluster, rid in zip(texts.to_numpy()[hit].tolist(), ids.tolist(), strict=True):
        members.setdefault(cluster, set()).add(str(rid))
    return members


def same_true_cluster(a: Decision, b: Decision, chat: set[str] | None = None) -> bool:
    """Whether two answers give the same true cluster c(r) = (ĉ(r) \\ A_r) ∪ B_r (SPEC 2.2):
    exactly with ĉ(r)'s members ``chat``, else by identical A_r and B_r (the same when rules 1
    and 3 of SPEC 9 hold)."""
    ra, rb, aa, ab = set(a.removed), set(b.removed), set(a.added), set(b.added)
    if chat is None:
        return ra == rb and aa == ab
    return (chat - ra) | aa == (chat - rb) | ab


def agreement(store: LabelStore, project: Project | None = None) -> Agreement:
    """The agreement of the draws answered twice (see the module: the rates and estimates count
    the blind doubles only); with ``project`` the true clusters are compared exactly and each
    labeller's estimates are computed."""
    pairs = _pairs(store)
    members = predicted_members(store, project, list(pairs)) if project is not None else {}
    rows = []
    for n, (a, b) in pairs.items():
        ra, rb, aa, ab = set(a.removed), set(b.removed), set(a.added), set(b.added)
        info = store.draw(n)
        chat = members.get(info.predicted_cluster, set()) if project is not None else None
        same = same_true_cluster(a, b, chat)
        rows.append(DrawAgreement(draw=n, labellers=(str(a.labeller), str(b.labeller)),
                                  removed_jaccard=jaccard(ra, rb), added_jaccard=jaccard(aa, ab),
                                  removed_equal=ra == rb, added_equal=aa == ab, same_true_cluster=same,
                                  blind=info.double))
    blind = sorted(r.draw for r in rows if r.blind)
    estimates = _estimates(store, project, blind) if project is not None and blind else []
    return Agreement(draws=rows, estimates=estimates)


def _estimates(store: LabelStore, project: Project, draws: list[int]) -> list[LabellerEstimates]:
    """Pairwise precision and recall from each labeller's answers to ``draws`` (SPEC 6)."""
    from er_expectations.core.errors import InputError
    from er_expectations.labelling.estimates import estimates_from_labels

    every = store.labels_frame(every=True)
    every = every[every["draw"].isin(draws)]
    out = []
    for name in sorted(every["labeller"].unique().tolist()):
        labels = every[every["labeller"] == name].reset_index(drop=True)
        try:
            est = estimates_from_labels(project, labels, metrics=METRICS)
        except InputError as exc:
            out.append(LabellerEstimates(labeller=str(name), draws=len(labels), error=str(exc)))
            continue
        out.append(LabellerEstimates(labeller=str(name), draws=len(labels), estimates=est))
    return out
