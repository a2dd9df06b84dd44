"""The workbench's top-up mode over HTTP (SPEC 14.3; starlette's TestClient, no browser): the
pages, the state, the search of the release's new records and the save, with every hostile
request refused with a 4xx and its reason, nothing written."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient
from support.topup_data import LOST, RELEASE, make_topup_project, population

from er_expectations.labelling.topup_store import TopupStore
from er_expectations.web.app import build_app
from er_expectations.web.model import Workspace

PORT = 8766
BASE = f"http://127.0.0.1:{PORT}"
ORIGIN = {"Origin": BASE}


@pytest.fixture
def project(tmp_path):
    p = make_topup_project(tmp_path)
    yield p
    p.close()


@pytest.fixture
def client(project):
    app = build_app(Workspace(project), token="secret")
    app.guard.bind("127.0.0.1", PORT)
    c = TestClient(app.guard, base_url=BASE, follow_redirects=False)
    assert c.get("/?token=secret").status_code == 303
    r = c.post("/signin", content="name=ann", headers={**ORIGIN, "Content-Type": "application/x-www-form-urlencoded"})
    assert r.status_code == 303
    return c


def _save(client, task, body):
    return client.post(f"/api/entity/{task}/save", json=body, headers=ORIGIN)


def _lost_task(project):
    return next(t for t in TopupStore(project.store).tasks() if t.entity == "p3")


def test_home_lists_the_people_and_a_page_asks_in_plain_words(client, project):
    tasks = TopupStore(project.store).tasks()
    home = client.get("/")
    assert home.status_code == 200 and f"Top-up of release {RELEASE}" in home.text
    assert home.text.count("<tr data-task=") == len(tasks)
    assert f"0 of {len(tasks)} entities answered" in home.text
    page = client.get("/entity/1")
    assert page.status_code == 200
    assert "Is this the same person as the records above?" in page.text
    assert "All yes" in page.text and "All no" in page.text
    for jargon in ("ĉ(r)", "A_r", "B_r"):
        assert jargon not in page.text
    state = client.get("/api/entity/1").json()
    assert [k["id"] for k in state["known"]] == list(tasks[0].known)
    assert [c["id"] for c in state["candidates"]] == [c.record for c in tasks[0].candidates]
    assert client.get("/draw/1").status_code == 404  # no draws in a top-up project
    assert client.get("/entity/999").status_code == 404 and client.get("/api/entity/x").status_code == 404


def test_a_save_is_versioned_and_progress_follows(client, project):
    task = TopupStore(project.store).tasks()[0]
    belongs = {c.record: "no" for c in task.candidates}
    r = _save(client, task.task, {"belongs": belongs, "found": [], "expected_version": 0})
    assert r.status_code == 200, r.text
    assert r.json()["saved"]["version"] == 1 and r.json()["progress"]["done"] == 1
    stale = _save(client, task.task, {"belongs": belongs, "found": [], "expected_version": 0})
    assert stale.status_code == 409 and stale.json()["theirs"]["version"] == 1
    assert TopupStore(project.store).answer(task.task).belongs == belongs
    assert client.get(f"/api/entity/{task.task}").json()["belongs"] == belongs


def test_a_candidate_not_in_the_worksheet_is_refused(client, project):
    t1, t2 = TopupStore(project.store).tasks()[:2]
    for bad, reason in ((t2.candidates[0].record, "is not a candidate of entity"),
                        ("123456789", "is not a candidate of entity"), (t1.known[0], "is not a candidate")):
        r = _save(client, t1.task, {"belongs": {bad: "yes"}, "found": [], "expected_version": 0})
        assert r.status_code == 422 and reason in r.json()["error"], r.text
    r = _save(client, t1.task, {"belongs": {t1.candidates[0].record: "perhaps"}, "found": [], "expected_version": 0})
    assert r.status_code == 422 and "'yes' or 'no'" in r.json()["error"]
    for body, reason in (({"belongs": [], "expected_version": 0}, "belongs: give an object"),
                         ({"belongs": {}, "found": [1], "expected_version": 0}, "found: give a list"),
                         ({"belongs": {}, "expected_version": "0"}, "expected_version"),
                         ({"belongs": {}, "expected_version": 0, "draw": 1}, "give the answer as a JSON object")):
        r = _save(client, t1.task, body)
        assert r.status_code == 422 and reason in r.json()["error"], r.text
    assert client.post(f"/api/entity/{t1.task}/save", content="x", headers={**ORIGIN, "Content-Type": "text/plain"}
                       ).status_code == 415
    assert TopupStore(project.store).answers() == {}


def test_search_offers_new_records_of_the_release_and_greys_the_others(client, project):
    task = _lost_task(project)
    hits = client.get(f"/api/entity/{task.task}/search", params={"q": "Dnia Baranovv"}).json()["hits"]
    lost = next(h for h in hits if h["id"] == str(LOST))
    assert lost["addable"] and lost["reason"] == ""
    known = [h for h in hits if h["id"] in task.known]
    assert known and all(not h["addable"] and h["reason"] == "already in the benchmark" for h in known)
    order = [h["addable"] for h in hits]
    assert order == sorted(order, reverse=True)  # the addable records first
    assert client.get(f"/api/entity/{task.task}/search", params={"q": "x", "limit": "0"}).status_code == 422


def test_a_search_hit_known_to_the_benchmark_or_outside_the_release_cannot_be_added(client, project, tmp_path):
    task = _lost_task(project)
    r = _save(client, task.task, {"belongs": {}, "found": [task.known[0]], "expected_version": 0})
    assert r.status_code == 422 and "already in the benchmark" in r.json()["error"], r.text
    r = _save(client, task.task, {"belongs": {}, "found": ["no-such-record"], "expected_version": 0})
    assert r.status_code == 422 and "not a record of this project" in r.json()["error"]
    r = _save(client, task.task, {"belongs": {}, "found": [task.candidates[0].record], "expected_version": 0})
    assert r.status_code == 422 and "answer it 'yes' among the candidates" in r.json()["error"]
    assert TopupStore(project.store).answers() == {}
    ok = _save(client, task.task, {"belongs": {}, "found": [str(LOST)], "expected_version": 0})
    assert ok.status_code == 200 and ok.json()["saved"]["found"] == [str(LOST)]
    other = next(t for t in TopupStore(project.store).tasks() if t.task != task.task)
    r = _save(client, other.task, {"belongs": {}, "found": [str(LOST)], "expected_version": 0})
    assert r.status_code == 422 and "belongs to entity 'p3' already" in r.json()["error"]


def test_a_record_outside_the_release_is_greyed_and_refused(tmp_path):
    from support.topup_data import write_all

    from er_expectations.labelling.topup_project import init_topup_project

    paths = write_all(tmp_path / "data")
    records = population().drop(columns=["in_l"])
    gone = records.index[records["rid"] == LOST][0]
    records = records.astype({RELEASE: object})
    records.loc[gone, RELEASE] = None  # the lost record is outside the release now
    records.to_parquet(paths["records"])
    project = init_topup_project(tmp_path / "p", topup=paths["worksheet"], benchmark=paths["benchmark"],
                                 records=paths["records"], record_id="rid", prediction=RELEASE, name="name")
    try:
        app = build_app(Workspace(project), token="secret")
        app.guard.bind("127.0.0.1", PORT)
        c = TestClient(app.guard, base_url=BASE, follow_redirects=False)
        c.get("/?token=secret")
        c.post("/signin", content="name=ann", headers={**ORIGIN, "Content-Type": "application/x-www-form-urlencoded"})
        task = _lost_task(project)
        hit = next(h for h in c.get(f"/api/entity/{task.task}/search", params={"q": "Dnia Baranovv"}).json()["hits"]
                   if h["id"] == str(LOST))
        assert not hit["addable"] and hit["reason"] == f"not in release {RELEASE}"
        r = _save(c, task.task, {"belongs": {}, "found": [str(LOST)], "expected_version": 0})
        assert r.status_code == 422 and f"not in release {RELEASE}" in r.json()["error"]
    finally:
        project.close()
