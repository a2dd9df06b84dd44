"""What the export decides per draw (issue 27 item 4): unsure answers, answers that differ,
reconciliations; worked by hand on a six-record release."""

from __future__ import annotations

import sqlite3

import pandas as pd
import pytest

import er_expectations as erx
from er_expectations import InputError
from er_expectations.labelling.decide import (
    ANSWER_KINDS,
    decide,
    export_labels,
    labels_frame,
    plural,
    reconcile,
)
from er_expectations.labelling.project import STORE_FILE, init_project, open_project
from er_expectations.labelling.store import SCHEMA_VERSION, Decision, LabelStore

#: clusters A = {r1, r2, r3}, B = {r4, r5}, C = {r6}
RECORDS = pd.DataFrame({"id": ["r1", "r2", "r3", "r4", "r5", "r6"], "pred": ["A", "A", "A", "B", "B", "C"]})


@pytest.fixture()
def project(tmp_path):
    RECORDS.to_parquet(tmp_path / "records.parquet")
    pd.DataFrame({"draw": [1, 2, 3, 4, 5, 6], "record_id": ["r1", "r4", "r6", "r2", "r5", "r3"]}).to_parquet(
        tmp_path / "sheet.parquet")
    p = init_project(tmp_path / "p", records=tmp_path / "records.parquet", record_id="id", prediction="pred",
                     sample=tmp_path / "sheet.parquet", double_label_share=0.0)
    yield p
    p.close()


def _fill(store: LabelStore) -> None:
    """Draw 1: ann c = {r1, r2}, bob c = {r1} (differ); draw 2: ann unsure, c = {r4};
    draw 3: ann and bob agree (c = {r6}); draw 4: skipped by ann; draw 5: ann, c = {r4, r5};
    draw 6: not answered."""
    store.save(1, "ann", Decision(removed=["r3"]), expected_version=0)
    store.save(1, "bob", Decision(removed=["r2", "r3"]), expected_version=0)
    store.save(2, "ann", Decision(status="unsure", removed=["r5"], note="same person?"), expected_version=0)
    store.save(3, "ann", Decision(), expected_version=0)
    store.save(3, "bob", Decision(), expected_version=0)
    store.save(4, "ann", Decision(status="skipped", reason="unreadable"), expected_version=0)
    store.save(5, "ann", Decision(), expected_version=0)


def _rows(frame: pd.DataFrame) -> dict[int, tuple]:
    return {int(r.draw): (set(r.removed), set(r.added), r.labeller, r.answer) for r in frame.itertuples()}


def test_unsure_and_differing_answers_are_refused_without_a_choice_and_nothing_is_written(project):
    store = project.store
    _fill(store)
    for kwargs in ({}, {"unsure": "skip"}, {"first_answer": True}):
        with pytest.raises(InputError) as err:
            decide(store, project, **kwargs)
        message = str(err.value)
        assert "nothing was written" in message
        if "unsure" not in kwargs:
            assert "draw 2" in message and "--unsure skip" in message and "--unsure keep" in message
        else:
            assert "marked unsure" not in message
        if not kwargs.get("first_answer"):
            assert "draw 1 (ann, bob)" in message and "--first-answer" in message and "label reconcile" in message
            assert "draw 3" not in message  # the two answers of draw 3 agree: no choice needed
        else:
            assert "--first-answer" not in message
    with pytest.raises(InputError):
        export_labels(store, "labels.parquet", project)
    assert not (project.folder / "labels.parquet").exists()


def test_each_choice_writes_exactly_the_chosen_answers(project):
    store = project.store
    _fill(store)
    got = _rows(labels_frame(store, decide(store, project, unsure="skip", first_answer=True)))
    assert got == {1: ({"r3"}, set(), "ann", "first_of_two"), 3: (set(), set(), "ann", "agreed"),
                   5: (set(), set(), "ann", "single")}
    kept = decide(store, project, unsure="keep", first_answer=True)
    got = _rows(labels_frame(store, kept))
    assert got[2] == ({"r5"}, set(), "ann", "unsure_kept") and set(got) == {1, 2, 3, 5}
    assert kept.skipped == [4] and kept.unlabelled == [6] and kept.unsure_skipped == []
    # reconciled to bob's answer: bob's A_r, whatever --first-answer says
    reconcile(store, 1, use="bob", by="lead", note="r2 is another inventor", project=project)
    for first in (False, True):
        got = _rows(labels_frame(store, decide(store, project, unsure="skip", first_answer=first)))
        assert got[1] == ({"r2", "r3"}, set(), "bob", "reconciled") and set(got) == {1, 3, 5}
    # the answers themselves are untouched
    assert [(d.labeller, d.removed) for d in store.decisions(1)] == [("ann", ("r3",)), ("bob", ("r2", "r3"))]


def test_the_summary_counts_with_singular_and_plural(project):
    store = project.store
    _fill(store)
    assert decide(store, project, unsure="skip", first_answer=True).summary() == (
        "3 draws exported: 1 single answer, 1 double that agrees, 1 first-of-two (--first-answer); "
        "1 unsure skipped, 1 skipped by labellers, 1 not yet labelled")
    reconcile(store, 1, use="ann", by="lead", project=project)
    assert decide(store, project, unsure="keep").summary() == (
        "4 draws exported: 1 single answer, 1 double that agrees, 1 reconciled, 1 unsure kept; "
        "1 skipped by labellers, 1 not yet labelled")
    assert plural(1, "draw") == "1 draw" and plural(0, "draw") == "0 draws" and plural(2, "draw") == "2 draws"
    assert plural(1_234, "double that agrees", "doubles that agree") == "1,234 doubles that agree"


def test_agreeing_doubles_need_no_choice_and_compare_true_clusters(project):
    store = project.store
    store.save(3, "ann", Decision(), expected_version=0)
    store.save(3, "bob", Decision(), expected_version=0)
    # draw 1: bob also lists r1's own cluster-mate r2 under added (already in ĉ): the same true cluster
    store.save(1, "ann", Decision(removed=["r3"]), expected_version=0)
    store.save(1, "bob", Decision(removed=["r3"], added=["r2"]), expected_version=0)
    decided = decide(store, project)
    assert [(d.draw, k) for d, k in decided.rows] == [(1, "agreed"), (3, "agreed")]
    # an agreeing pair with one unsure answer takes the sure one
    store.save(5, "ann", Decision(status="unsure"), expected_version=0)
    store.save(5, "bob", Decision(), expected_version=0)
    assert {d.draw: (d.labeller, k) for d, k in decide(store, project).rows}[5] == ("bob", "agreed")
    # without the project, answers are compared by A_r and B_r: draw 1 differs then
    with pytest.raises(InputError, match=r"draw 1 \(ann, bob\)"):
        decide(store)


def test_reconcile_refuses_what_is_not_a_choice(project):
    store = project.store
    _fill(store)
    with pytest.raises(InputError, match="draw 5 has 1 answer .by ann.: only a draw answered twice"):
        reconcile(store, 5, use="ann", by="lead", project=project)
    with pytest.raises(InputError, match="draw 6 has 0 answers"):
        reconcile(store, 6, use="ann", by="lead", project=project)
    with pytest.raises(InputError, match="'carol' did not answer draw 1; give one of ann, bob"):
        reconcile(store, 1, use="carol", by="lead", project=project)
    with pytest.raises(InputError, match="no such draw"):
        reconcile(store, 2**63, use="ann", by="lead", project=project)
    with pytest.raises(InputError, match="not a draw of this project"):
        reconcile(store, 99, use="ann", by="lead", project=project)
    with pytest.raises(InputError, match="same true cluster; nothing to reconcile"):
        reconcile(store, 3, use="ann", by="lead", project=project)
    store.save(2, "bob", Decision(removed=["r4"]), expected_version=0)
    with pytest.raises(InputError, match="marked unsure"):
        reconcile(store, 2, use="ann", by="lead", project=project)
    with pytest.raises(InputError, match="labeller"):
        reconcile(store, 1, use="ann", by="  ", project=project)
    assert store.reconciliations() == []


def test_a_reconciliation_survives_a_reopen_and_goes_out_of_date_when_an_answer_changes(project, tmp_path):
    store = project.store
    _fill(store)
    reconcile(store, 1, use="bob", by="lead", project=project)
    project.close()
    again = open_project(project.folder)
    try:
        got = _rows(labels_frame(again.store, decide(again.store, again, unsure="skip")))
        assert got[1] == ({"r2", "r3"}, set(), "bob", "reconciled")
        (rec,) = again.store.reconciliations()
        assert (rec.draw, rec.labeller, rec.by, rec.versions) == (1, "bob", "lead", {"ann": 1, "bob": 1})
        # ann saves her answer again: the reconciliation no longer stands
        again.store.save(1, "ann", Decision(removed=["r3"], note="checked"), expected_version=1)
        with pytest.raises(InputError, match="reconciled before an answer was saved again"):
            decide(again.store, again, unsure="skip")
        reconcile(again.store, 1, use="ann", by="lead", project=again)
        got = _rows(labels_frame(again.store, decide(again.store, again, unsure="skip")))
        assert got[1] == ({"r3"}, set(), "ann", "reconciled")
        assert [r.labeller for r in again.store.reconciliations(every=True)] == ["bob", "ann"]
    finally:
        again.close()


def test_a_version_1_store_is_upgraded_when_opened_and_reconciled_as_any(project):
    store = project.store
    _fill(store)
    path = store.path
    project.close()
    db = sqlite3.connect(path)
    db.execute("DROP TABLE reconciliations")
    db.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    db.commit()
    db.close()
    with LabelStore.open(path) as old:
        assert old.reconciliations() == []
        assert len(decide(old, unsure="skip", first_answer=True).rows) == 3
        old.reconcile(1, use="bob", by="lead")
        assert [r.labeller for r in old.reconciliations()] == ["bob"]
    db = sqlite3.connect(path)
    assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == str(SCHEMA_VERSION)
    db.close()


def test_the_answer_column_is_read_by_the_labels_readers_like_any_extra_column(project):
    store = project.store
    _fill(store)
    frame = labels_frame(store, decide(store, project, unsure="skip", first_answer=True))
    assert frame.columns[-1] == "answer" and set(frame["answer"]) <= set(ANSWER_KINDS)
    bare = frame.drop(columns="answer")
    records = RECORDS
    pd.testing.assert_frame_equal(erx.check_labels(frame, records, prediction="pred", record_id="id"),
                                  erx.check_labels(bare, records, prediction="pred", record_id="id"))
    pd.testing.assert_frame_equal(erx.benchmark_from_labels(frame, records, prediction="pred", record_id="id"),
                                  erx.benchmark_from_labels(bare, records, prediction="pred", record_id="id"))


def test_the_workbench_export_applies_the_same_rule(project):
    store = project.store
    _fill(store)
    with pytest.raises(InputError, match="--unsure"):
        export_labels(store, "exports/labels.parquet", project, first_answer=True)
    assert not (project.folder / "exports" / "labels.parquet").exists()
    path, decided = export_labels(store, "exports/labels.parquet", project, unsure="skip", first_answer=True)
    back = pd.read_parquet(path)
    assert back["draw"].tolist() == [1, 3, 5] and back["answer"].tolist() == ["first_of_two", "agreed", "single"]
    assert decided.unsure_skipped == [2]
    assert (project.folder / STORE_FILE).exists()
