"""Quality control of one draw while it is labelled (SPEC 9), and the earlier answer of its entity.

:func:`check_draw` runs the rules of SPEC 9 through the one implementation of
:mod:`er_expectations.analysis.labelqc` on the project's labels table with this draw's
decision in place of its stored one: rules 1–5 and 7 on the draw, rule 6 against the other
draws. Its findings are exactly the rows of ``erx.check_labels`` for this draw on that table.

:func:`earlier_answer` finds another draw, already answered, whose true cluster holds this
draw's record: the same entity labelled before. Its answer, translated to this draw's
predicted cluster (A_r = ĉ(r) \\ c, B_r = c \\ ĉ(r)), is what rule 6 will demand.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from er_expectations.analysis.labels import RULES, int64_text
from er_expectations.labelling.project import Project
from er_expectations.labelling.store import ANSWERED, Decision, LabelStore, checked_decision

__all__ = ["EarlierAnswer", "Finding", "check_draw", "earlier_answer", "labels_with", "related_draws"]


@dataclass(frozen=True, slots=True)
class Finding:
    """One rule of SPEC 9 the draw breaks: its number and short name, whether it is critical
    (all but rule 5), the record ids involved (in the records' type) and the message."""

    draw: int
    rule: int
    rule_name: str
    critical: bool
    records: tuple
    message: str


@dataclass(frozen=True, slots=True)
class EarlierAnswer:
    """An answered draw whose true cluster ``true_cluster`` holds this draw's record, by
    ``labeller``; ``removed``/``added`` are that answer for this draw's predicted cluster."""

    draw: int
    labeller: str
    true_cluster: tuple
    removed: tuple
    added: tuple


def _typed(ids: tuple[str, ...], kind: str) -> tuple[list, list[str]]:
    """Ids as the records type them; ids an integer table cannot hold are returned apart."""
    if kind != "integer":
        return list(ids), []
    good, bad = [], []
    for i in ids:
        number = int64_text(i)
        if number is None:
            bad.append(i)
        else:
            good.append(number)
    return good, bad


def labels_with(store: LabelStore, draw: int, decision: Decision | None) -> tuple[pd.DataFrame, list[str]]:
    """The project's labels table (SPEC 2.2, :meth:`LabelStore.labels_frame`) with ``draw``'s row
    replaced by ``decision`` (dropped when None or skipped), and the ids of ``decision`` that
    cannot be record ids of the table (text in an integer-id project)."""
    frame = store.labels_frame()
    frame = frame[frame["draw"] != draw]
    if decision is None or decision.status not in ANSWERED:
        return frame.reset_index(drop=True), []
    info = store.draw(draw)
    removed, bad_r = _typed(decision.removed, store.id_kind)
    added, bad_a = _typed(decision.added, store.id_kind)
    record = int(info.record) if store.id_kind == "integer" else info.record
    cluster = int(info.predicted_cluster) if store.cluster_kind == "integer" else info.predicted_cluster
    row = pd.DataFrame({"draw": [draw], "record_id": [record], "predicted_cluster": [cluster], "removed": [removed],
                        "added": [added], "true_cluster": [decision.true_cluster], "labeller": [decision.labeller],
                        "labelled_at": [decision.saved_at], "status": [decision.status], "note": [decision.note],
                        "reason": [decision.reason]})
    row = row.astype({c: frame[c].dtype for c in ("record_id", "predicted_cluster") if len(frame)})
    out = pd.concat([frame, row], ignore_index=True) if len(frame) else row
    return out.sort_values("draw", kind="stable").reset_index(drop=True), bad_r + bad_a


def check_draw(project: Project, store: LabelStore, draw: int, decision: Decision | None = None) -> list[Finding]:
    """The findings of SPEC 9 for ``draw`` with ``decision`` (default: its stored first answer).

    Rules 1–5 and 7 on the draw, rule 6 against the other draws (their first labellers'
    answers). Ids that cannot be ids of the records (text where the records' ids are integers)
    are findings of rule 4. A skipped draw has no findings.
    """
    from er_expectations.analysis.labelqc import qc_labels

    if decision is None:
        stored = store.decisions(draw)
        decision = next((d for d in stored if d.status in ANSWERED), None)
    else:
        decision = checked_decision(decision)
    if decision is None or decision.status not in ANSWERED:
        return []
    labels, bad = labels_with(store, draw, decision)
    labels = related_draws(project, labels, draw)
    config = project.config
    named = [*labels["record_id"].tolist(), *(i for ids in labels["removed"] for i in ids),
             *(i for ids in labels["added"] for i in ids)]
    records = project.qc_records(named)
    qc = qc_labels(labels, records, config.prediction, record_id=config.record_id, block=config.block,
                   name=project.name_column, similarity=config.similarity)
    mine = qc.violations[qc.violations["draw"] == draw]
    findings = [Finding(draw=draw, rule=int(v.rule), rule_name=str(v.rule_name), critical=RULES[int(v.rule)].critical,
                        records=tuple(v.records), message=str(v.message)) for v in mine.itertuples()]
    if bad:
        findings.append(Finding(draw=draw, rule=4, rule_name=RULES[4].name, critical=True, records=tuple(bad),
                                message=f"draw {draw}: {', '.join(map(repr, bad[:8]))} cannot be record ids: the "
                                        f"records' ids are whole numbers; fix the id(s)"))
        findings.sort(key=lambda f: f.rule)
    return findings


def related_draws(project: Project, labels: pd.DataFrame, draw: int) -> pd.DataFrame:
    """The rows of ``labels`` that can change the findings of ``draw``: the draw itself, every draw
    whose true cluster may share a record with c(r) (its predicted cluster holds a record of
    c(r), or it adds one), and every draw with the same true cluster id. The rules give ``draw``
    the same findings on them as on the whole table (rule 6 compares c(r) only with the draws
    it meets; rule 7 with the draws of its id or its set); an empty c(r) keeps every draw."""
    config = project.config
    mine = labels[labels["draw"] == draw]
    if mine.empty:
        return labels
    row = mine.iloc[0]
    added = list(row["added"])
    sub = project.qc_records(added)
    ids, preds = sub[config.record_id], sub[config.prediction]
    in_cluster = (preds == row["predicted_cluster"]).to_numpy(dtype=bool, na_value=False)
    inside = preds.notna().to_numpy(dtype=bool)
    outside_members = (ids.isin(pd.Index(added, dtype=ids.dtype)).to_numpy(dtype=bool) & inside) if added \
        else inside & False
    truth = (set(ids[in_cluster].tolist()) - set(row["removed"])) | set(ids[outside_members].tolist())
    if not truth:
        return labels
    clusters = {row["predicted_cluster"], *preds[outside_members].tolist()}
    keep = labels["predicted_cluster"].isin(pd.Index(list(clusters), dtype=object)).to_numpy(dtype=bool).copy()
    keep |= labels["added"].map(lambda xs: not truth.isdisjoint(xs)).to_numpy(dtype=bool)
    if row["true_cluster"] is not None:
        keep |= (labels["true_cluster"].map(lambda t: t is not None and str(t) == str(row["true_cluster"]))
                 .to_numpy(dtype=bool))
    keep |= (labels["draw"] == draw).to_numpy()
    return labels[keep].reset_index(drop=True)


def _members(records: pd.DataFrame, prediction: str, record_id: str, cluster: object) -> list:
    return records.loc[(records[prediction] == cluster).to_numpy(dtype=bool, na_value=False), record_id].tolist()


def earlier_answer(project: Project, store: LabelStore, draw: int) -> EarlierAnswer | None:
    """The lowest-numbered other answered draw whose true cluster holds this draw's record, as an
    answer for this draw; None when its entity was not labelled yet."""
    info = store.draw(draw)
    config = project.config
    ik, ck = store.id_kind, store.cluster_kind
    record = int(info.record) if ik == "integer" else info.record
    cluster = int(info.predicted_cluster) if ck == "integer" else info.predicted_cluster
    labels = store.labels_frame()
    labels = labels[labels["draw"] != draw]
    candidates = [row for row in labels.itertuples()
                  if (row.predicted_cluster == cluster and record not in row.removed) or record in row.added]
    if not candidates:
        return None
    records = project.qc_records([])  # the members of every drawn cluster: all this needs
    mine = _members(records, config.prediction, config.record_id, cluster)
    for row in candidates:  # by draw number
        members = mine if row.predicted_cluster == cluster else \
            _members(records, config.prediction, config.record_id, row.predicted_cluster)
        gone = set(row.removed)
        truth = [m for m in members if m not in gone] + [a for a in row.added if a not in set(members)]
        if record not in truth:
            continue
        truth_set, mine_set = set(truth), set(mine)
        return EarlierAnswer(draw=int(row.draw), labeller=str(row.labeller), true_cluster=tuple(truth),
                             removed=tuple(m for m in mine if m not in truth_set),
                             added=tuple(t for t in truth if t not in mine_set))
    return None

