"""The demo labels (the bundled PatentsView labels of release 2021-12-30) and errors injected
into them, one per rule of SPEC 9: the cases of the labelling tests of the analysis, GX and
engine layers.

``demo`` is a module-scoped pytest fixture: a test module uses it with ``demo = labeltools.demo``.
"""

from __future__ import annotations

import pandas as pd
import pytest

from er_expectations.analysis.labelqc import qc_labels
from er_expectations.core.io import combine_name
from support.paths import PV_DATA

DATA = PV_DATA
#: the release the demo labels were made against
RELEASE = "inventor_id_20211230"


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
