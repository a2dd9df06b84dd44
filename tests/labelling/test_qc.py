"""Per-draw QC of the workbench (SPEC 9): the rules of analysis/labelqc.py on one draw, equal to
erx.check_labels on the same labels; the earlier answer of an entity already labelled."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.older_store import without_release_guard

from er_expectations.analysis.labelqc import check_labels
from er_expectations.labelling.project import init_project
from er_expectations.labelling.qc import check_draw, earlier_answer
from er_expectations.labelling.store import Decision

BIG = 2**62 + 1
#: clusters 10 = {0, 1, 2}, 11 = {3, 4}, 12 = {5}, 13 = {6, 7}; record 8 outside the release
PRED = [10, 10, 10, 11, 11, 12, 13, 13, None]
NAMES = ["Ann Lee", "Ann Lee", "Bob Ray", "Ann Lea", "Ann Lee", "Zed Q", "Cy Ng", "Cy Ng", "Ann Lee"]
BLOCK = ["lee", "lee", "ray", "lee", "lee", "q", "ng", "ng", "lee"]


def rid(i: int) -> int:
    return BIG + i


@pytest.fixture()
def project(tmp_path):
    frame = pd.DataFrame({"id": pd.Series([rid(i) for i in range(9)], dtype="int64"),
                          "pred": pd.Series(PRED, dtype="Int64"), "name": NAMES, "block": BLOCK})
    frame.to_parquet(tmp_path / "records.parquet")
    sheet = pd.DataFrame({"draw": [1, 2, 3, 4], "record_id": [rid(0), rid(3), rid(5), rid(1)],
                          "predicted_cluster": [10, 11, 12, 10]})
    sheet.to_parquet(tmp_path / "sheet.parquet")
    p = init_project(tmp_path / "p", records=tmp_path / "records.parquet", record_id="id", prediction="pred",
                     name="name", block="block", sample=tmp_path / "sheet.parquet", double_label_share=0)
    yield p
    p.close()


def _rules(findings):
    return sorted(f.rule for f in findings)


def test_each_rule_on_one_draw(project):
    store = project.store
    d = lambda **kw: Decision(**{k: [str(rid(i)) for i in v] if isinstance(v, list) else v for k, v in kw.items()})  # noqa: E731
    assert check_draw(project, store, 1, d()) == []
    assert _rules(check_draw(project, store, 1, d(removed=[3]))) == [1]          # not in ĉ(r)
    assert _rules(check_draw(project, store, 1, d(removed=[0]))) == [2]          # the drawn record
    assert _rules(check_draw(project, store, 1, d(added=[1]))) == [3]            # already in ĉ(r)
    assert _rules(check_draw(project, store, 1, d(added=[8]))) == [4]            # outside the release
    assert _rules(check_draw(project, store, 1, Decision(added=["not-a-number"]))) == [4]
    assert _rules(check_draw(project, store, 1, d(added=[6]))) == [5]            # other block, other name
    assert check_draw(project, store, 1, d(added=[3])) == []                      # same block: fine
    # rule 6: draw 1 says {0, 1, 2, 3}; draw 2 (record 3) says {3, 4}
    store.save(2, "ann", d(), expected_version=0)
    findings = check_draw(project, store, 1, d(added=[3]))
    assert _rules(findings) == [6] and "draw(s) 2" in findings[0].message and findings[0].critical
    # rule 7: one true cluster id for two sets
    store.save(3, "ann", Decision(true_cluster="E1"), expected_version=0)
    assert _rules(check_draw(project, store, 1, Decision(true_cluster="E1"))) == [7]
    assert check_draw(project, store, 1, Decision(status="skipped", reason="x")) == []


JARGON = ("ĉ", "A_r", "B_r", "column", "(s)", "\\")


def test_each_rule_in_plain_words(project):
    """What the labeller reads (issue 31): no SPEC symbols or column names, nouns in the right
    number, the records named; the auditors' message is kept as erx.check_labels gives it."""
    store = project.store
    d = lambda **kw: Decision(**{k: [str(rid(i)) for i in v] if isinstance(v, list) else v for k, v in kw.items()})  # noqa: E731
    cases = {1: d(removed=[3]), 2: d(removed=[0]), 3: d(added=[1, 2]), 4: d(added=[8]), 5: d(added=[6])}
    plain = {}
    for rule, decision in cases.items():
        (f,) = check_draw(project, store, 1, decision)
        assert f.rule == rule and "column" in f.message  # the auditors' text, unchanged
        plain[rule] = f.plain
    (bad,) = check_draw(project, store, 1, Decision(added=["not-a-number"]))
    plain["bad id"] = bad.plain
    store.save(2, "ann", d(), expected_version=0)
    (six,) = check_draw(project, store, 1, d(added=[3]))
    plain[6] = six.plain
    store.save(3, "ann", Decision(true_cluster="E1"), expected_version=0)
    (seven,) = check_draw(project, store, 1, Decision(true_cluster="E1"))
    plain[7] = seven.plain
    for rule, text in plain.items():
        assert text and not any(j in text for j in JARGON), (rule, text)
    assert plain[1].startswith(f"removed record {rid(3)} is not in this draw's predicted cluster")
    assert plain[3].startswith(f"added records {rid(1)} and {rid(2)} are already in")
    assert plain[4].startswith(f"record {rid(8)} is not in the records")
    assert f"does not look like the drawn record — {rid(6)} (block 'ng', not 'lee'" in plain[5]
    assert plain[6].startswith("draw 2 labelled this entity differently") and str(rid(4)) in plain[6]
    assert "draws 3" in plain[7] and "one set of records" in plain[7]
    assert "'not-a-number' cannot be a record id" in plain["bad id"]


def test_earlier_answer(project):
    store = project.store
    assert earlier_answer(project, store, 4) is None
    # draw 1 (record 0): record 2 is someone else, record 3 belongs
    store.save(1, "ann", Decision(removed=[str(rid(2))], added=[str(rid(3))]), expected_version=0)
    answer = earlier_answer(project, store, 4)  # record 1, same predicted cluster 10
    assert answer is not None and answer.draw == 1 and answer.labeller == "ann"
    assert set(answer.true_cluster) == {rid(0), rid(1), rid(3)}
    assert answer.removed == (rid(2),) and answer.added == (rid(3),)
    answer2 = earlier_answer(project, store, 2)  # record 3 was added by draw 1
    assert set(answer2.true_cluster) == {rid(0), rid(1), rid(3)}
    assert set(answer2.removed) == {rid(4)} and set(answer2.added) == {rid(0), rid(1)}
    # following the earlier answer leaves no rule-6 finding
    follow = Decision(removed=[str(i) for i in answer2.removed], added=[str(i) for i in answer2.added])
    assert 6 not in _rules(check_draw(project, store, 2, follow))
    assert earlier_answer(project, store, 3) is None


def _save_answers(store, answers) -> None:
    """Save each (draw, removed, added, true cluster) as labeller "ann", over any earlier answer.

    The answers may add records outside the release, as a store written before the save-time
    refusal holds them: the per-draw checks must still find them (rule 4)."""
    with without_release_guard(store):
        for draw, removed, added, true in answers:
            cur = store.decision(draw, "ann")
            store.save(draw, "ann", Decision(removed=removed, added=added, true_cluster=true),
                       expected_version=cur.version if cur else 0)


_IDS = st.lists(st.integers(0, 8), max_size=3).map(lambda xs: [str(rid(i)) for i in xs])


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(answers=st.lists(st.tuples(st.integers(1, 4), _IDS, _IDS, st.sampled_from([None, "E1", "E2"])),
                        min_size=1, max_size=6))
def test_findings_equal_check_labels(project, answers):
    store = project.store
    with _Reset(store):
        _save_answers(store, answers)
        labels = store.labels_frame()
        records = project.records()
        want = check_labels(labels, records, prediction="pred", record_id="id", block="block", name="name")
        for draw in labels["draw"].tolist():
            got = [(f.rule, f.rule_name, list(f.records), f.message) for f in check_draw(project, store, draw)]
            rows = want[want["draw"] == draw]
            assert got == [(int(r.rule), r.rule_name, list(r.records), r.message) for r in rows.itertuples()]


class _Reset:
    """Start every hypothesis example from an empty store."""

    def __init__(self, store):
        self.store = store

    def __enter__(self):
        import contextlib
        import sqlite3

        with contextlib.closing(sqlite3.connect(self.store.path)) as db, db:
            db.execute("DELETE FROM decisions")

    def __exit__(self, *exc):
        return False


@pytest.fixture(scope="module")
def wider(tmp_path_factory):
    """30 records in 8 predicted clusters (2 records outside the release), 12 draws."""
    tmp = tmp_path_factory.mktemp("wider")
    rng = np.random.default_rng(5)
    pred = pd.Series(list(rng.integers(0, 8, size=28)) + [None, None], dtype="Int64")
    names = [f"{['Ann', 'Bo', 'Cy', 'Di'][i % 4]} {['Lee', 'Li'][i % 2]}" for i in range(30)]
    frame = pd.DataFrame({"id": [f"r{i}" for i in range(30)], "pred": pred, "name": names,
                          "block": [n.split()[1] for n in names]})
    frame.to_parquet(tmp / "records.parquet")
    p = init_project(tmp / "p", records=tmp / "records.parquet", record_id="id", prediction="pred", name="name",
                     block="block", draws=12, seed=3, double_label_share=0)
    yield p
    p.close()


_WIDE_IDS = st.lists(st.integers(0, 31), max_size=4).map(lambda xs: [f"r{i}" for i in xs])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(answers=st.lists(st.tuples(st.integers(1, 12), _WIDE_IDS, _WIDE_IDS, st.sampled_from([None, "E1", "E2", "E3"])),
                        min_size=1, max_size=14))
def test_findings_equal_check_labels_on_a_wider_release(wider, answers):
    store = wider.store
    with _Reset(store):
        _save_answers(store, answers)
        labels = store.labels_frame()
        want = check_labels(labels, wider.records(), prediction="pred", record_id="id", block="block", name="name")
        for draw in labels["draw"].tolist():
            got = [(f.rule, list(f.records), f.message) for f in check_draw(wider, store, draw)]
            rows = want[want["draw"] == draw]
            assert got == [(int(r.rule), list(r.records), r.message) for r in rows.itertuples()]


def _brute_earlier(project, store, draw):
    """The earlier answer the slow way (issue 31 item 3's reference): every draw's labels-table
    answer read, the lowest other draw whose true cluster (ĉ \\ A) ∪ B holds the record."""
    records = project.records()
    labels = store.labels_frame()
    info = store.draw(draw)
    record = int(info.record)

    def members(cluster):
        return [int(i) for i, c in zip(records["id"], records["pred"], strict=True) if not pd.isna(c) and c == cluster]

    for row in labels.sort_values("draw").itertuples():
        if row.draw == draw:
            continue
        ms = members(row.predicted_cluster)
        truth = [m for m in ms if m not in set(row.removed)] + [a for a in row.added if a not in set(ms)]
        if record in truth:
            mine = members(int(info.predicted_cluster))
            return row.draw, row.labeller, set(truth), {m for m in mine if m not in truth}, \
                {t for t in truth if t not in mine}
    return None


ANSWERS = st.lists(st.tuples(st.integers(1, 4), st.sampled_from(["ann", "bob"]),
                             st.sampled_from(["labelled", "unsure", "skipped"]),
                             st.sets(st.integers(0, 7), max_size=3), st.sets(st.integers(0, 8), max_size=3)),
                   max_size=12)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(answers=ANSWERS)
def test_earlier_answer_equals_a_read_of_every_answer(project, answers):
    store = project.store
    with store.transaction() as db:
        db.execute("DELETE FROM decisions")
    with without_release_guard(store):  # rid(8) is outside the release: an older store's answer
        for draw, who, status, removed, added in answers:
            current = store.decision(draw, who)
            store.save(draw, who, Decision(status=status, removed=[str(rid(i)) for i in removed],
                                           added=[str(rid(i)) for i in added],
                                           reason="?" if status == "skipped" else ""),
                       expected_version=current.version if current else 0)
    for draw in (1, 2, 3, 4):
        got = earlier_answer(project, store, draw)
        want = _brute_earlier(project, store, draw)
        assert (None if got is None else (got.draw, got.labeller, set(got.true_cluster), set(got.removed),
                                          set(got.added))) == want


def test_earlier_answer_reads_no_decision_but_its_entitys(project, monkeypatch):
    store = project.store
    store.save(1, "ann", Decision(added=[str(rid(3))]), expected_version=0)
    project.qc_records([])  # the drawn clusters' members: found once per project, not per draw opened
    for name in ("decisions", "labels_frame", "draws"):  # a read of every decision or draw fails the test
        monkeypatch.setattr(store, name, lambda *a, **k: pytest.fail("earlier_answer read every decision"))
    assert earlier_answer(project, store, 2).draw == 1
