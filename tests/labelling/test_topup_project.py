"""Top-up projects (SPEC 14.3): the store's schema step 2 → 3 (no answer lost), the tasks made
from a worksheet, the answers' rules and the export of the filled worksheet."""

from __future__ import annotations

import json
import sqlite3

import pandas as pd
import pytest
from support.topup_data import LOST, RELEASE, population, truth_of, write_all

from er_expectations.core.errors import InputError
from er_expectations.labelling.project import open_project
from er_expectations.labelling.store import SCHEMA_VERSION, Decision, LabelStore, Saved
from er_expectations.labelling.topup_project import init_topup_project, topup_export
from er_expectations.labelling.topup_store import TopupConflict, TopupSaved, TopupStore

#: The tables of a version-2 store, as er-expectations wrote them before top-up projects.
V2_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE draws (draw INTEGER PRIMARY KEY, record TEXT NOT NULL, predicted_cluster TEXT NOT NULL,
                    double INTEGER NOT NULL DEFAULT 0);
CREATE TABLE decisions (draw INTEGER NOT NULL REFERENCES draws(draw), labeller TEXT NOT NULL,
                        status TEXT NOT NULL, removed TEXT NOT NULL, added TEXT NOT NULL, true_cluster TEXT,
                        note TEXT NOT NULL, reason TEXT NOT NULL, version INTEGER NOT NULL,
                        saved_at TEXT NOT NULL, first_edit INTEGER NOT NULL, PRIMARY KEY (draw, labeller));
CREATE TABLE edits (id INTEGER PRIMARY KEY AUTOINCREMENT, draw INTEGER NOT NULL, labeller TEXT NOT NULL,
                    at TEXT NOT NULL, before TEXT, after TEXT NOT NULL);
CREATE INDEX edits_draw ON edits (draw);
CREATE TABLE tags (id INTEGER PRIMARY KEY AUTOINCREMENT, cluster TEXT NOT NULL, tag TEXT NOT NULL,
                   kind TEXT NOT NULL, records TEXT NOT NULL, labeller TEXT NOT NULL, at TEXT NOT NULL);
CREATE TABLE labellers (name TEXT PRIMARY KEY, first_seen TEXT NOT NULL);
CREATE TABLE queue (draw INTEGER NOT NULL, labeller TEXT NOT NULL, taken_at TEXT NOT NULL,
                    PRIMARY KEY (draw, labeller));
CREATE TABLE IF NOT EXISTS reconciliations (id INTEGER PRIMARY KEY AUTOINCREMENT,
    draw INTEGER NOT NULL REFERENCES draws(draw), labeller TEXT NOT NULL, versions TEXT NOT NULL,
    by TEXT NOT NULL, at TEXT NOT NULL, note TEXT NOT NULL);
"""


def _v2_store(path):
    """A version-2 store written by hand (the old schema): two draws, three answers, a reconciliation."""
    db = sqlite3.connect(path)
    db.executescript(V2_SCHEMA)
    db.execute(f"PRAGMA application_id = {0x45525857}")
    db.executemany("INSERT INTO meta VALUES (?, ?)", [("application", "er-expectations labelling workbench"),
                                                      ("schema_version", "2"), ("id_kind", "integer"),
                                                      ("cluster_kind", "text"), ("created_at", "2024-01-01")])
    db.executemany("INSERT INTO draws VALUES (?, ?, ?, ?)", [(1, "10", "c1", 1), (2, "20", "c2", 0)])
    for n, (draw, who, removed) in enumerate([(1, "ann", ["11"]), (1, "bob", []), (2, "ann", ["21", "22"])], 1):
        after = json.dumps({"status": "labelled", "removed": removed, "added": [], "true_cluster": None,
                            "note": "", "reason": "", "version": 1})
        db.execute("INSERT INTO edits (draw, labeller, at, before, after) VALUES (?, ?, ?, NULL, ?)",
                   (draw, who, f"2024-01-0{n}", after))
        db.execute("INSERT INTO decisions VALUES (?, ?, 'labelled', ?, '[]', NULL, '', '', 1, ?, ?)",
                   (draw, who, json.dumps(removed), f"2024-01-0{n}", n))
        db.execute("INSERT OR IGNORE INTO labellers VALUES (?, ?)", (who, f"2024-01-0{n}"))
    db.execute("INSERT INTO reconciliations (draw, labeller, versions, by, at, note) VALUES "
               "(1, 'bob', '{\"ann\": 1, \"bob\": 1}', 'lead', '2024-01-09', 'checked')")
    db.commit()
    db.close()


def _dump(path, tables):
    db = sqlite3.connect(path)
    try:
        return {t: db.execute(f"SELECT * FROM {t} ORDER BY rowid").fetchall() for t in tables}
    finally:
        db.close()


def test_a_version_2_store_is_upgraded_when_opened_and_keeps_every_answer(tmp_path):
    path = tmp_path / "workbench.sqlite"
    _v2_store(path)
    kept = ("draws", "decisions", "edits", "labellers", "reconciliations", "tags")
    before = _dump(path, kept)
    with LabelStore.open(path) as store:
        assert [(d.draw, d.labeller, d.removed) for d in store.decisions()] == [
            (1, "ann", ("11",)), (1, "bob", ()), (2, "ann", ("21", "22"))]
        assert [r.labeller for r in store.reconciliations()] == ["bob"]
        assert TopupStore(store).tasks() == [] and TopupStore(store).answers() == {}
    after = _dump(path, kept)
    assert after == before  # nothing rewritten or lost
    db = sqlite3.connect(path)
    assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == str(SCHEMA_VERSION) == "5"
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    db.close()
    assert {"topup_tasks", "topup_candidates", "topup_answers", "topup_edits"} <= tables
    with LabelStore.open(path) as again:  # opening an upgraded store again changes nothing
        assert len(again.decisions()) == 3
    assert _dump(path, kept) == after
    with LabelStore.open(path) as again:  # and it takes new answers as before
        saved = again.save(2, "ann", Decision(removed=("21",)), expected_version=1)
        assert isinstance(saved, Saved) and saved.decision.version == 2
        assert len(again.history(2)) == 2


@pytest.mark.parametrize("step", [3, 4])
def test_a_failed_upgrade_writes_nothing(tmp_path, monkeypatch, step):
    import er_expectations.labelling.store_schema as schema

    path = tmp_path / "workbench.sqlite"
    _v2_store(path)
    before = path.read_bytes()
    monkeypatch.setitem(schema.UPGRADES, step, schema.UPGRADES[step] + "\nCREATE TABLE decisions (x);")
    with pytest.raises(InputError, match="cannot open the labels store"):
        LabelStore.open(path)
    db = sqlite3.connect(path)
    assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == "2"
    assert not {"topup_tasks", "progress"} & {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
    assert db.execute("SELECT COUNT(*) FROM decisions").fetchone()[0] == 3
    db.close()
    assert before  # the file was a store and stays one


# -- top-up projects -------------------------------------------------------------------------------


@pytest.fixture
def files(tmp_path):
    return write_all(tmp_path / "data")


def _init(tmp_path, files, **kw):
    args = dict(topup=files["worksheet"], benchmark=files["benchmark"], records=files["records"], record_id="rid",
                prediction=RELEASE, name="name", block="block", attributes=["name", "block"])
    return init_topup_project(tmp_path / "project", **{**args, **kw})


def test_the_tasks_are_the_worksheets_entities_with_their_known_records(tmp_path, files):
    project = _init(tmp_path, files)
    try:
        sheet = pd.read_parquet(files["worksheet"])
        bench = pd.read_parquet(files["benchmark"])
        tasks = TopupStore(project.store).tasks()
        assert [t.entity for t in tasks] == list(dict.fromkeys(sheet["entity"]))
        for t in tasks:
            assert set(t.known) == set(bench.loc[bench["reference"] == t.entity, "rid"].astype(str))
            rows = sheet[sheet["entity"] == t.entity]
            assert [c.record for c in t.candidates] == rows["rid"].astype(str).tolist()
            assert [c.reason for c in t.candidates] == rows["reason"].tolist()
        assert project.config.topup and project.config.benchmark
    finally:
        project.close()
    again = open_project(tmp_path / "project")  # workbench.yml reads back
    assert again.config.reference == "reference" and again.config.prediction == RELEASE
    again.close()


@pytest.mark.parametrize(("edit", "message"), [
    (lambda s, b: s.assign(release="other"), "give -p other"),
    (lambda s, b: s.assign(benchmark_version=2), "latest version is 1"),
    (lambda s, b: s.assign(belongs="yes"), "line 2: 'belongs' is filled already"),
    (lambda s, b: s.assign(entity=s["entity"].where(s.index > 0, "nobody")), "line 2: entity 'nobody' is no reference"),
    (lambda s, b: s.assign(rid=s["rid"].where(s.index > 0, int(b["rid"].iloc[0]))), "known to the benchmark already"),
    (lambda s, b: s.assign(rid=s["rid"].where(s.index > 0, 99999)), "'99999' is not in the records"),
    (lambda s, b: s.assign(predicted_cluster=s["predicted_cluster"].where(s.index > 0, "t-zz")), "not 't-zz'"),
    (lambda s, b: s.assign(reason=s["reason"].where(s.index > 0, "found by search")), "are added in the workbench"),
    (lambda s, b: pd.concat([s, s.iloc[:1]]), "listed twice"),
    (lambda s, b: s.drop(columns="benchmark_version"), "no column 'benchmark_version'"),
])
def test_a_bad_worksheet_is_refused_naming_the_line_and_the_fix(tmp_path, files, edit, message):
    sheet = pd.read_parquet(files["worksheet"])
    edit(sheet, pd.read_parquet(files["benchmark"])).to_parquet(files["worksheet"])
    with pytest.raises(InputError, match=message):
        _init(tmp_path, files)
    assert not (tmp_path / "project" / "workbench.sqlite").exists()
    assert not (tmp_path / "project" / "workbench.yml").exists()


def _answer_from_truth(project, *, skip: int = 0):
    topups = TopupStore(project.store)
    person = dict(zip(population()["rid"].astype(str), population()["person"], strict=True))
    for t in topups.tasks()[skip:]:
        belongs = {c.record: "yes" if f"p{person[c.record]}" == t.entity else "no" for c in t.candidates}
        found = [str(LOST)] if t.entity == f"p{person[str(LOST)]}" else []
        assert isinstance(topups.save(t.task, "ann", belongs=belongs, found=found, expected_version=0), TopupSaved)


def test_export_writes_the_truth_and_the_found_record_and_refuses_unanswered(tmp_path, files):
    project = _init(tmp_path, files)
    try:
        _answer_from_truth(project, skip=1)
        with pytest.raises(InputError, match=r"\d+ candidates of 1 entity are not answered.*'p0'.*--unanswered no"):
            topup_export(project)
        lenient = topup_export(project, unanswered="no")
        first = TopupStore(project.store).tasks()[0]
        assert lenient.unanswered_as_no == len(first.candidates)
        topups = TopupStore(project.store)
        person = dict(zip(population()["rid"].astype(str), population()["person"], strict=True))
        topups.save(first.task, "bob", belongs={c.record: "yes" if f"p{person[c.record]}" == first.entity else "no"
                                                for c in first.candidates}, expected_version=0)
        done = topup_export(project)
    finally:
        project.close()
    sheet = pd.read_parquet(files["worksheet"])
    out = done.frame
    assert out.iloc[:len(sheet)].drop(columns="belongs").equals(sheet.drop(columns="belongs"))
    assert out["belongs"].iloc[:len(sheet)].tolist() == truth_of(population(), sheet)
    extra = out.iloc[len(sheet):]
    assert extra["rid"].tolist() == [LOST] and extra["reason"].tolist() == ["found by search"]
    assert extra["belongs"].tolist() == ["yes"] and extra["entity"].tolist() == ["p3"]
    assert extra["predicted_cluster"].tolist() == ["t-lost"] and extra["name"].tolist() == ["Dnia Baranovv"]
    assert out["rid"].dtype == "int64" and set(out["release"]) == {RELEASE} and set(out["benchmark_version"]) == {1}
    assert (done.yes, done.no, done.found) == (truth_of(population(), sheet).count("yes"),
                                               truth_of(population(), sheet).count("no"), 1)


def test_answers_are_versioned_checked_and_a_record_joins_one_entity(tmp_path, files):
    project = _init(tmp_path, files)
    topups = TopupStore(project.store)
    try:
        t1, t2 = topups.tasks()[:2]
        c = t1.candidates[0].record
        with pytest.raises(InputError, match="is not a candidate of entity"):
            topups.save(t1.task, "ann", belongs={t2.candidates[0].record: "yes"}, expected_version=0)
        with pytest.raises(InputError, match="give 'yes' or 'no'"):
            topups.save(t1.task, "ann", belongs={c: "maybe"}, expected_version=0)
        with pytest.raises(InputError, match="is a candidate of entity .* already"):
            topups.save(t1.task, "ann", belongs={}, found=[c], expected_version=0)
        assert isinstance(topups.save(t1.task, "ann", belongs={c: "yes"}, expected_version=0), TopupSaved)
        stale = topups.save(t1.task, "bob", belongs={c: "no"}, expected_version=0)
        assert isinstance(stale, TopupConflict) and stale.current.belongs == {c: "yes"}
        with pytest.raises(InputError, match=f"record '{c}' belongs to entity '{t1.entity}' already"):
            topups.save(t2.task, "bob", belongs={}, found=[c], expected_version=0)
        assert topups.save(t1.task, "bob", belongs={c: "no"}, expected_version=1).answer.version == 2
        assert [h["after"]["belongs"] for h in topups.history(t1.task)] == [{c: "yes"}, {c: "no"}]
        assert topups.history(t1.task)[1]["before"]["belongs"] == {c: "yes"}
    finally:
        project.close()


def test_export_summary_counts_in_the_right_number():
    """Issue 31: "1 candidate", "1 record", never "1 records" or "record(s)"."""
    from er_expectations.labelling.topup_project import TopupExport

    one = TopupExport(frame=pd.DataFrame(), yes=1, no=0, unanswered_as_no=0, found=1)
    assert one.summary() == "1 candidate: 1 belongs, 0 do not; 1 record found by search added"
    many = TopupExport(frame=pd.DataFrame(), yes=2, no=1, unanswered_as_no=2, found=0)
    assert many.summary() == ("5 candidates: 2 belong, 1 does not, 2 unanswered written 'no' (--unanswered no); "
                              "0 records found by search added")
