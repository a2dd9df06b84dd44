"""Agreement of two labellers (issue 19), worked by hand on a six-record release."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import er_expectations as erx
from er_expectations.labelling.agreement import agreement, jaccard
from er_expectations.labelling.project import init_project
from er_expectations.labelling.store import Decision

#: clusters A = {1, 2, 3}, B = {4, 5}, C = {6}
RECORDS = pd.DataFrame({"id": ["r1", "r2", "r3", "r4", "r5", "r6"], "pred": ["A", "A", "A", "B", "B", "C"]})


@pytest.fixture()
def project(tmp_path):
    RECORDS.to_parquet(tmp_path / "records.parquet")
    pd.DataFrame({"draw": [1, 2, 3], "record_id": ["r1", "r4", "r6"]}).to_parquet(tmp_path / "sheet.parquet")
    p = init_project(tmp_path / "p", records=tmp_path / "records.parquet", record_id="id", prediction="pred",
                     sample=tmp_path / "sheet.parquet", double_label_share=1.0)
    yield p
    p.close()


def test_jaccard():
    assert jaccard(set(), set()) == 1.0 and jaccard({1}, {1, 2}) == 0.5 and jaccard({1}, {2}) == 0.0


def test_two_labellers_worked_by_hand(project):
    store = project.store
    assert all(d.double for d in store.draws())
    # ann: c(1) = {r1, r2}; bob: c(1) = {r1}; both: c(2) = {r4, r5}, c(3) = {r6}
    store.save(1, "ann", Decision(removed=["r3"]), expected_version=0)
    store.save(1, "bob", Decision(removed=["r2", "r3"]), expected_version=0)
    for who in ("ann", "bob"):
        store.save(2, who, Decision(), expected_version=0)
        store.save(3, who, Decision(), expected_version=0)
    got = agreement(store, project)
    assert got.pairs == 3
    first = got.draws[0]
    assert (first.draw, first.labellers) == (1, ("ann", "bob"))
    assert (first.removed_jaccard, first.added_jaccard) == (0.5, 1.0)
    assert (first.removed_equal, first.added_equal, first.same_true_cluster) == (False, True, False)
    assert got.removed_jaccard == pytest.approx((0.5 + 1 + 1) / 3)
    assert got.same_true_cluster_rate == pytest.approx(2 / 3) and got.disagreements == [1]
    assert got.removed_equal_rate == pytest.approx(2 / 3) and got.added_equal_rate == 1.0
    # each labeller's estimates: erx.estimate on the benchmark written out by hand
    truth = {"ann": {"r1": "T1", "r2": "T1", "r4": "T2", "r5": "T2", "r6": "T3"},
             "bob": {"r1": "T1", "r4": "T2", "r5": "T2", "r6": "T3"}}
    assert [e.labeller for e in got.estimates] == ["ann", "bob"]
    for est in got.estimates:
        df = RECORDS.assign(ref=RECORDS["id"].map(truth[est.labeller]))
        df["draws"] = np.where(df["ref"].notna(), 1, np.nan)
        want = erx.estimate(df, prediction="pred", reference="ref", draws="draws",
                            metrics=["pairwise_precision", "pairwise_recall"])
        assert est.error is None and est.draws == 3
        np.testing.assert_allclose(est.estimates["estimate"].to_numpy(), want["estimate"].to_numpy(), atol=1e-12)
    ann = got.estimates[0].estimates["estimate"]
    # ann: only true pair (r1, r2) of A predicted together; r3 wrongly with them → precision < 1, recall 1
    assert ann["pairwise_recall"] == pytest.approx(1.0) and ann["pairwise_precision"] < 1


def test_without_the_project_and_with_a_broken_version(project):
    store = project.store
    store.save(1, "ann", Decision(removed=["r9"]), expected_version=0)  # r9 is no record: rule 4
    store.save(1, "bob", Decision(), expected_version=0)
    quick = agreement(store)
    assert quick.pairs == 1 and not quick.draws[0].same_true_cluster and quick.estimates == []
    exact = agreement(store, project)
    assert exact.draws[0].same_true_cluster  # removing an unknown id changes nothing
    ann = next(e for e in exact.estimates if e.labeller == "ann")
    assert ann.estimates is None and "rule 4" in ann.error
    assert agreement(store, project).estimates[1].error is None


def test_no_pairs(project):
    got = agreement(project.store, project)
    assert got.pairs == 0 and got.same_true_cluster_rate is None and got.estimates == []


@pytest.fixture()
def mixed(tmp_path):
    """Draws 1–4 of the six records: 1 and 2 labelled twice, blind; 3 and 4 labelled once."""
    RECORDS.to_parquet(tmp_path / "records.parquet")
    pd.DataFrame({"draw": [1, 2, 3, 4], "record_id": ["r1", "r4", "r6", "r2"]}).to_parquet(tmp_path / "sheet.parquet")
    p = init_project(tmp_path / "p", records=tmp_path / "records.parquet", record_id="id", prediction="pred",
                     sample=tmp_path / "sheet.parquet", double_label_share=0)
    with p.store.transaction() as db:
        db.execute("UPDATE draws SET double = (draw <= 2)")
    yield p
    p.close()


def test_a_second_answer_that_saw_the_first_is_not_counted(mixed):
    store = mixed.store
    assert [d.double for d in store.draws()] == [True, True, False, False]
    # blind doubles, worked by hand: draw 1 agrees (c = {r1, r2, r3} twice); draw 2 disagrees
    # (ann {r4, r5}, bob {r4}: A Jaccard |∅ ∩ {r5}| / |{r5}| = 0)
    for who in ("ann", "bob"):
        store.save(1, who, Decision(), expected_version=0)
    store.save(2, "ann", Decision(), expected_version=0)
    store.save(2, "bob", Decision(removed=["r5"]), expected_version=0)
    # draws labelled once, then answered again by a second labeller who saw the first answer
    # ("keep mine" after the conflict): draw 3 the same answer, draw 4 a different one
    for who in ("ann", "cy"):
        store.save(3, who, Decision(), expected_version=0)
    store.save(4, "ann", Decision(), expected_version=0)
    store.save(4, "cy", Decision(removed=["r3"]), expected_version=0)
    got = agreement(store, mixed)
    assert [(d.draw, d.blind) for d in got.draws] == [(1, True), (2, True), (3, False), (4, False)]
    assert got.pairs == 2 and got.seen_pairs == 2
    # the rates: two blind pairs, one the same, one not (draws 3 and 4 would make them 2/4 and 0.75)
    assert got.same_true_cluster_rate == 0.5 and got.removed_equal_rate == 0.5
    assert got.removed_jaccard == pytest.approx((1.0 + 0.0) / 2) and got.added_jaccard == 1.0
    assert got.disagreements == [2, 4]  # both still to reconcile: the export needs one answer per draw
    assert all(e.draws == 2 for e in got.estimates)  # each labeller's estimates: the blind draws only
    assert [e.labeller for e in got.estimates] == ["ann", "bob"]
