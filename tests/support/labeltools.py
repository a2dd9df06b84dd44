"""The labelling cases (SPEC 9) of the analysis, GX and engine tests: the demo labels (the
bundled PatentsView labels of release 2021-12-30) with errors injected into them, one per
rule; random labels with errors of every rule (:func:`labels_case`); the whole table a
database would hold (:func:`whole_table`) and the seven expectations (:func:`label_suite`).

``demo`` is a module-scoped pytest fixture: a test module uses it with ``demo = labeltools.demo``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from er_expectations.analysis.labelqc import qc_labels
from er_expectations.core.io import combine_name
from support.paths import PV_DATA

DATA = PV_DATA
#: the release the demo labels were made against
RELEASE = "inventor_id_20211230"
#: the label columns besides the record id
LABEL_ROLES = ("draw", "removed", "added", "predicted_cluster", "true_cluster")


def load_demo() -> tuple[pd.DataFrame, pd.DataFrame]:
    """The demo labels and the records of every release (with a ``name`` column)."""
    lab = pd.read_parquet(DATA / "labels.parquet")
    rec = pd.read_parquet(DATA / "records.parquet").merge(pd.read_parquet(DATA / "predictions.parquet"),
                                                          on="mention_id")
    rec["name"] = combine_name(rec, ["name_first", "name_last"])
    return lab, rec


@pytest.fixture(scope="module")
def demo():
    return load_demo()


def qc(lab, rec, **kw):
    return qc_labels(lab, rec, RELEASE, record_id="mention_id", block="block", name="name", **kw)


def context_of(lab, rec):
    """Lookups used to inject errors: the cluster of each record and the members of each cluster."""
    release = rec.dropna(subset=[RELEASE])
    cluster = dict(zip(release["mention_id"], release[RELEASE], strict=True))
    members = release.groupby(RELEASE)["mention_id"].agg(set).to_dict()
    truth = [(members[cluster[r]] - set(a)) | set(b) for r, a, b in zip(lab.record_id, lab.removed, lab.added, strict=True)]
    in_truth = set().union(*truth)
    return release, cluster, members, truth, in_truth


def injected(lab, rec, rule):
    """A copy of the demo labels with one error of ``rule``'s kind; returns it and the bad draw."""
    lab = lab.copy()
    lab["removed"] = lab["removed"].map(list)
    lab["added"] = lab["added"].map(list)
    release, cluster, members, truth, in_truth = context_of(lab, rec)
    clean5 = set(qc(lab, rec).failing(5)["draw"])
    i = 17
    r = lab.at[i, "record_id"]
    if rule == 1:  # remove a record of another predicted cluster, outside every true cluster
        other = next(m for m in release["mention_id"] if cluster[m] != cluster[r] and m not in in_truth)
        lab.at[i, "removed"] = [*lab.at[i, "removed"], other]
    elif rule == 2:
        lab.at[i, "removed"] = [*lab.at[i, "removed"], r]
    elif rule == 3:
        i = next(j for j in lab.index if len(members[cluster[lab.at[j, "record_id"]]] - set(lab.at[j, "removed"])) >= 2)
        r = lab.at[i, "record_id"]
        m = sorted(members[cluster[r]] - set(lab.at[i, "removed"]) - {r})[0]
        lab.at[i, "added"] = [*lab.at[i, "added"], m]
    elif rule == 4:
        lab.at[i, "added"] = [*lab.at[i, "added"], "US0000000-9"]
    elif rule == 5:  # a stranger: other block, unlike name, in no true cluster
        row = rec.set_index("mention_id")
        i = next(j for j in lab.index if lab.at[j, "draw"] not in clean5)
        r = lab.at[i, "record_id"]
        stranger = next(m for m in release["mention_id"]
                        if m not in in_truth and cluster[m] != cluster[r]
                        and row.at[m, "block"] != row.at[r, "block"]
                        and row.at[m, "name_last"][:1] != row.at[r, "name_last"][:1])
        lab.at[i, "added"] = [*lab.at[i, "added"], stranger]
    elif rule == 6:  # the same record drawn again, labelled differently (no true cluster id given)
        i = next(j for j in lab.index if len(members[cluster[lab.at[j, "record_id"]]] - set(lab.at[j, "removed"])) >= 2)
        r = lab.at[i, "record_id"]
        m = sorted(members[cluster[r]] - set(lab.at[i, "removed"]) - {r})[0]
        extra = lab.loc[[i]].copy()
        extra["draw"] = lab["draw"].max() + 1
        extra["removed"] = [[*lab.at[i, "removed"], m]]
        extra["true_cluster"] = None
        lab = pd.concat([lab, extra], ignore_index=True)
        return lab, {int(lab.at[i, "draw"]), int(extra["draw"].iloc[0])}
    elif rule == 7:  # the id of another draw's cluster
        lab.at[i, "true_cluster"] = lab.at[i + 1, "true_cluster"]
        return lab, {int(lab.at[i, "draw"]), int(lab.at[i + 1, "draw"])}
    return lab, {int(lab.at[i, "draw"])}


def label_suite(*, record: str = "record", pred: str = "pred", block: str = "block", name: str = "name",
                columns: dict | None = None) -> list:
    # GX only when a GX test asks
    from er_expectations.gx.expectations.labels import LABEL_EXPECTATIONS

    cols = {f"{role}_column": col for role, col in (columns or {}).items()}
    out = []
    for rule, cls in sorted(LABEL_EXPECTATIONS.items()):
        extra = {"block_column": block, "name_column": name, "mostly": 0.95} if rule == 5 else {}
        out.append(cls(record_id_column=record, prediction_column=pred, **cols, **extra))
    # rule 5 once more with the name alone and another scorer: a second rule-5 metric
    out.append(LABEL_EXPECTATIONS[5](record_id_column=record, prediction_column=pred, **cols, name_column=name,
                                     scorer="jaro_winkler", min_similarity=0.9, mostly=0.5))
    return out


def whole_table(batch: pd.DataFrame, records: pd.DataFrame, *, draw: str, record_columns: list[str],
                lists: str) -> pd.DataFrame:
    """The label rows of ``batch`` over *every* record (the table a database would hold);
    ``lists``: "text" writes removed/added as ids separated by ';' (SQL has no list type)."""
    labels = batch[batch[draw].notna()].drop(columns=[c for c in record_columns if c != record_columns[0]])
    if lists == "text":
        for col in labels.columns:
            if labels[col].map(lambda v: isinstance(v, list)).any():
                labels[col] = labels[col].map(lambda v: ";".join(str(i) for i in v))
    out = pd.concat([labels, records[record_columns]], ignore_index=True)
    out[draw] = out[draw].astype("Int64")
    return out


def labels_case(seed: int, *, ids: str = "str", n: int = 300) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Records of a release (nulls: outside it) and labels with errors of every rule."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 7, size=n)
    truth = np.repeat(np.arange(n), sizes)[:n]
    pred = np.where(rng.random(n) < 0.85, truth, rng.integers(0, truth.max() + 1, n))
    inside = rng.random(n) > 0.08
    rid = [f"r{i}" for i in range(n)] if ids == "str" else [i * 3 + 1 for i in range(n)]
    pid = [f"p{x}" for x in pred] if ids == "str" else [int(x) for x in pred]
    records = pd.DataFrame({
        "record": pd.Series(rid, dtype=object if ids == "str" else "int64"),
        "pred": pd.Series(pid, dtype=object if ids == "str" else "Int64").where(inside, None),
        "block": [f"b{t % 9}" for t in truth],
        "name": pd.Series([f"name {t} {'x' if rng.random() < 0.2 else ''}".strip() for t in truth],
                          dtype=object).where(rng.random(n) > 0.05, None),
    })
    in_release = np.flatnonzero(inside)
    rows = []
    drawn = rng.choice(in_release, size=30, replace=True)  # repeats: rule 6 compares them
    for d, r in enumerate(drawn, start=1):
        members = [i for i in in_release if pred[i] == pred[r]]
        removed = [rid[i] for i in members if truth[i] != truth[r]]
        added = [rid[i] for i in in_release if truth[i] == truth[r] and pred[i] != pred[r]]
        u = rng.random(8)
        if u[0] < 0.1:
            removed.append(rid[r])  # rule 2
        if u[1] < 0.1:
            removed.append(rid[int(rng.choice(in_release))])  # rule 1 (mostly)
        if u[2] < 0.1 and len(members) > 1:
            added.append(rid[members[-1]])  # rule 3
        if u[3] < 0.1:
            added.append("nope" if ids == "str" else 10**6)  # rule 4
        if u[4] < 0.1 and (~inside).any():
            added.append(rid[int(np.flatnonzero(~inside)[0])])  # rule 4, outside the release
        if u[5] < 0.15:
            added.append(rid[int(rng.choice(in_release))])  # rule 5 (a stranger), maybe 6
        true = f"T{truth[r]}" if u[6] > 0.1 else f"T{truth[r] + 1}"  # rule 7
        rows.append({"draw": d, "record_id": rid[r], "removed": removed, "added": added,
                     "predicted_cluster": pid[r], "true_cluster": true if u[7] > 0.05 else None})
    labels = pd.DataFrame(rows)
    return labels, records
