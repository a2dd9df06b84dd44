"""Hostile round 3 item 7 (issue 29): the workbench never answers a bare "Internal Server Error".
A store locked by another process, a full disk, draw numbers in non-ASCII digits, a body nested
too deep and an unexpected failure each get a clear answer, quickly, with nothing lost."""

from __future__ import annotations

import sqlite3
import time

import pytest
from support.workbench_web import JSON, save, web_app, web_client

from er_expectations.labelling.store import Decision
from er_expectations.web.errors import LOCK_WAIT, RETRY_AFTER, whole_number


@pytest.fixture
def web(hostile_project):
    return web_app(hostile_project)


@pytest.fixture
def client(web):
    return web_client(web, token="tok", name="ann", raise_server_exceptions=False)


def test_whole_number_takes_ascii_digits_only():
    assert whole_number(" 12 ") == 12 and whole_number("0") == 0
    for text in ("²", "①", "1²", "١", "𝟏", "٣٤", "", "-1", "+1", "1e3", "1_0", "9" * 19, "1.0"):
        assert whole_number(text) is None, text


@pytest.mark.parametrize("n", ["²", "①", "1²", "١", "𝟏"])
def test_draw_numbers_in_other_digits_are_a_clear_404(client, n):
    for r in (client.get(f"/api/draw/{n}"), save(client, n), client.get(f"/api/draw/{n}/findings"),
              client.get(f"/api/search?draw={n}&q=smith"), client.get(f"/api/expand?draw={n}&name=x"),
              client.post(f"/api/review/{n}/tag", content='{"tag": "x", "kind": "over", "records": []}',
                          headers=JSON)):
        assert r.status_code == 404, (n, r.request.url, r.text)
        assert "digits 0-9" in r.json()["error"]
    for path in (f"/draw/{n}", f"/review/{n}"):
        r = client.get(path)
        assert r.status_code == 404 and "digits 0-9" in r.text
    r = client.get(f"/api/search?draw=1&q=smith&limit={n}")
    assert r.status_code == 422 and "limit" in r.json()["error"]


def test_a_content_length_in_other_digits_is_refused(client):
    r = client.post("/api/draw/1/save", content=b"{}", headers={**JSON, "Content-Length": "²".encode("latin-1")})
    assert r.status_code in (400, 413), r.text


def test_a_deeply_nested_body_is_a_400_and_nothing_saved(client, hostile_project):
    for body in ("[" * 100_000 + "]" * 100_000, '{"a":' * 40_000 + "1" + "}" * 40_000):
        r = client.post("/api/draw/1/save", content=body, headers=JSON)
        assert r.status_code == 400 and "too deep" in r.json()["error"], r.text[:200]
    assert hostile_project.store.decision(1, "ann") is None
    assert save(client).status_code == 200


def test_a_store_locked_by_another_process_is_a_quick_503_and_nothing_lost(client, hostile_project):
    path = hostile_project.store.path
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        t = time.perf_counter()
        r = save(client, note="kept on the page")
        waited = time.perf_counter() - t
        assert r.status_code == 503 and r.headers["retry-after"] == str(RETRY_AFTER), r.text
        assert "busy" in r.json()["error"] and "try again" in r.json()["error"]
        assert waited < LOCK_WAIT + 5  # not SQLite's 30 s
        assert client.get("/draw/1").status_code == 200  # reading goes on meanwhile (WAL)
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert hostile_project.store.decision(1, "ann") is None
    r = save(client, note="kept on the page")
    assert r.status_code == 200 and hostile_project.store.decision(1, "ann").note == "kept on the page"


def test_a_full_disk_is_a_507_and_every_earlier_save_kept(client, hostile_project):
    store = hostile_project.store
    assert save(client, "1", note="first").status_code == 200
    db = store._db  # SQLite's own size limit gives the error a full disk gives (SQLITE_FULL)
    pages = db.execute("PRAGMA page_count").fetchone()[0]
    db.execute(f"PRAGMA max_page_count = {pages}")
    try:
        r = save(client, "2", note="x" * 20_000)
        assert r.status_code == 507, r.text
        assert "full" in r.json()["error"] and "NOT saved" in r.json()["error"]
    finally:
        db.execute("PRAGMA max_page_count = 1073741823")
    assert store.decision(1, "ann").note == "first" and store.decision(2, "ann") is None
    assert store.progress().done == 1
    assert save(client, "2", note="x" * 20_000).status_code == 200


def test_a_read_that_finds_the_store_locked_is_a_503_page(client, hostile_project, monkeypatch):
    def locked():
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(hostile_project.store, "progress", locked)
    r = client.get("/")
    assert r.status_code == 503 and r.headers["retry-after"] == str(RETRY_AFTER)
    assert "busy" in r.text and "try again" in r.text and r.headers["content-type"].startswith("text/html")


def test_an_unexpected_failure_is_a_clear_500(client, hostile_project, monkeypatch):
    def broken():
        raise RuntimeError("boom")

    monkeypatch.setattr(hostile_project.store, "progress", broken)
    for r in (client.get("/api/progress"), client.get("/")):
        assert r.status_code == 500
        assert "RuntimeError" in r.text and "Reload" in r.text and "Internal Server Error" not in r.text
    assert hostile_project.store.decisions() == []
    monkeypatch.undo()
    assert save(client).status_code == 200 and hostile_project.store.decision(1, "ann") == \
        hostile_project.store.decisions()[0]
    assert isinstance(Decision(), Decision)
