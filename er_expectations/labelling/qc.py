"""Quality control of one draw while it is labelled (SPEC 9), and the earlier answer of its entity.

:func:`check_draw` runs the rules of SPEC 9 through the one implementation of
:mod:`er_expectations.analysis.labelqc` on the project's labels table with this draw's
decision in place of its stored one: rules 1–5 and 7 on the draw, rule 6 against the other
draws. Its findings are exactly the rows of ``erx.check_labels`` for this draw on that table.

:func:`earlier_answer` finds another draw, already answered, whose true cluster holds this
draw's record: the same entity labelled before. Its answer, translated to this draw's
predicted cluster (A_r = ĉ(r) \\ c, B_r = c \\ ĉ(r)), is what rule 6 will demand.

A finding's ``message`` is the auditors' (``erx.check_labels``, with SPEC's columns and symbols);
its ``plain`` is the same finding in the labeller's words (:func:`plain_words`): what the page
shows, with no column names or symbols and counted nouns in the right number (issue 31).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from er_expectations.analysis.labels import RULES, int64_text
from er_expectations.labelling.project import Project
from er_expectations.labelling.store import ANSWERED, Decision, LabelStore, checked_decision

__all__ = ["EarlierAnswer", "Finding", "check_draw", "earlier_answer", "labels_with", "plain_words", "related_draws"]


@dataclass(frozen=True, slots=True)
class Finding:
    """One rule of SPEC 9 the draw breaks: its number and short name, whether it is critical
    (all but rule 5), the record ids involved (in the records' type), the auditors' message
    (as ``erx.check_labels`` words it) and ``plain``, the labeller's words (:func:`plain_words`)."""

    draw: int
    rule: int
    rule_name: str
    critical: bool
    records: tuple
    message: str
    plain: str = ""


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
                        records=tuple(v.records), message=str(v.message),
                        plain=plain_words(int(v.rule), tuple(v.records), str(v.message)))
                for v in mine.itertuples()]
    if bad:
        findings.append(Finding(draw=draw, rule=4, rule_name=RULES[4].name, critical=True, records=tuple(bad),
                                message=f"draw {draw}: {', '.join(map(repr, bad[:8]))} cannot be record ids: the "
                                        f"records' ids are whole numbers; fix the id(s)",
                                plain=f"{_listing(bad)} cannot be {_n(len(bad), 'a record id', 'record ids')}: the "
                                      f"records' ids are whole numbers; take {_them(len(bad))} out"))
        findings.sort(key=lambda f: f.rule)
    return findings


def _n(count: int, one: str, many: str) -> str:
    return one if count == 1 else many


def _them(count: int) -> str:
    return _n(count, "it", "them")


def _listing(ids: Sequence, limit: int = 8) -> str:
    """``ids`` as the page lists them: "record 'a'", "records 'a', 'b' and 'c'", "… and 4 more"."""
    shown = [repr(i) if isinstance(i, str) else str(i) for i in ids[:limit]]
    rest = len(ids) - len(shown)
    if rest:
        text = ", ".join(shown) + f" and {rest:,} more"
    elif len(shown) > 1:
        text = ", ".join(shown[:-1]) + " and " + shown[-1]
    else:
        text = "".join(shown)
    return _n(len(ids), "record ", "records ") + text


#: What the auditors' messages of rules 5 and 6 carry beyond the records (draws, reasons).
_UNLIKE = re.compile(r"do not look like record .*?: (?P<why>.*); check that")
_SHARED = re.compile(r"shares record\(s\) (?P<shared>.*) with draw\(s\) (?P<draws>[0-9][0-9, ]*), but")


def plain_words(rule: int, records: Sequence, message: str) -> str:
    """A finding of SPEC 9 in the labeller's words: what is wrong with the answer on the page and
    what to do, without the SPEC's symbols (ĉ(r), A_r, B_r) or the labels table's column names.

    Parameters
    ----------
    rule : int
        The rule broken (SPEC 9, 1–7).
    records : sequence
        The records the finding names (the ``records`` of ``erx.check_labels``' row).
    message : str
        The auditors' message of the same finding, for the details rules 5–7 carry (the
        reasons an added record looks unlike the drawn one; the other draws).
    """
    n, ids = len(records), _listing(records)
    are = _n(n, "is", "are")
    if rule == 1:
        return (f"removed {ids} {are} not in this draw's predicted cluster; only its members can be removed: "
                f"untick {_them(n)}")
    if rule == 2:
        return f"the drawn record ({ids}) is ticked as removed; it always belongs to its own entity: untick it"
    if rule == 3:
        return (f"added {ids} {are} already in this draw's predicted cluster; add only records from other "
                f"clusters: take {_them(n)} back")
    if rule == 4:
        return (f"{ids} {are} not in the records of the release being labelled (or have no predicted cluster "
                f"there): take {_them(n)} out")
    if rule == 5:
        why = _UNLIKE.search(message)
        return (f"added {ids} {_n(n, 'does', 'do')} not look like the drawn record"
                f"{' — ' + why.group('why') if why else ' (another block or a dissimilar name)'}: check that "
                f"{_n(n, 'it is', 'they are')} the same entity")
    if rule == 6:
        found = _SHARED.search(message)
        if found is None:
            return (f"another draw's answer holds some of these records but differs on {ids}; one entity must be "
                    "labelled the same way every time")
        draws = [d.strip() for d in found.group("draws").split(",") if d.strip()]
        return (f"{_n(len(draws), 'draw', 'draws')} {', '.join(draws)} labelled this entity differently: the answers "
                f"share the records {found.group('shared')} but differ on {ids}; one entity must be labelled the same way every "
                f"time (open {_n(len(draws), 'that draw', 'those draws')} or use its answer)")
    text = re.sub(r"^draw \d+: ", "", message)
    text = text.replace("column 'true_cluster'", "the true cluster id").replace(
        "one true cluster id must name one set (ĉ(r) \\ A_r) ∪ B_r", "one true cluster id must name one set of records")
    return text.replace("draw(s)", "draws")


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
    answer for this draw; None when its entity was not labelled yet. The candidates (the draws of
    the same predicted cluster that keep the record, and the draws that add it) come from
    :meth:`LabelStore.entity_answers`: indexed look-ups, never a read of every decision."""
    info = store.draw(draw)
    config = project.config

    def typed(values, kind: str) -> list:
        return [int(v) for v in values] if kind == "integer" else list(values)

    candidates = [(d, x) for d, x in store.entity_answers(info.record, info.predicted_cluster)
                  if d.draw != draw and ((d.predicted_cluster == info.predicted_cluster and info.record not in x.removed)
                                         or info.record in x.added)]
    if not candidates:
        return None
    [record] = typed([info.record], store.id_kind)
    [cluster] = typed([info.predicted_cluster], store.cluster_kind)
    records = project.qc_records([])  # the members of every drawn cluster: all this needs
    mine = _members(records, config.prediction, config.record_id, cluster)
    for other, answer in candidates:  # by draw number
        [theirs] = typed([other.predicted_cluster], store.cluster_kind)
        members = mine if theirs == cluster else _members(records, config.prediction, config.record_id, theirs)
        removed, added = typed(answer.removed, store.id_kind), typed(answer.added, store.id_kind)
        gone, member_set = set(removed), set(members)
        truth = [m for m in members if m not in gone] + [a for a in added if a not in member_set]
        if record not in truth:
            continue
        truth_set, mine_set = set(truth), set(mine)
        return EarlierAnswer(draw=int(other.draw), labeller=str(answer.labeller), true_cluster=tuple(truth),
                             removed=tuple(m for m in mine if m not in truth_set),
                             added=tuple(t for t in truth if t not in mine_set))
    return None
