"""Team mode over HTTP (issue 31 item 4; issue 29 hostile round 3 items 4 and 5): the project keeps
its port and secret, personal links name their labeller and can be revoked or renewed, the
secret rotates, the lead's view reconciles what the export then uses, a blind double stays
blind in review mode, and the "someone else answered" check holds under racing saves."""

from __future__ import annotations

import json
import os
import stat
import threading
import time

import httpx2 as httpx
import pandas as pd
import pytest
from starlette.testclient import TestClient
from support.workbench_web import BASE, FORM, JSON, PORT, save, web_app, web_client

from er_expectations.cli.main import main
from er_expectations.core.errors import InputError
from er_expectations.labelling.access import (
    ACCESS_FILE,
    add_link,
    digest,
    ensure_access,
    load_access,
    revoke_link,
    rotate_secret,
    set_address,
)
from er_expectations.labelling.decide import decide, export_labels
from er_expectations.labelling.store import Decision
from er_expectations.web.guard import cookie_name
from er_expectations.web.server import open_server, workbench


@pytest.fixture
def team(hostile_project):
    """The hostile project's web app in team mode: (app, folder, lead's token, alice's, bob's)."""
    folder = hostile_project.folder
    access = ensure_access(folder)
    _, alice = add_link(folder, "alice")
    _, bob = add_link(folder, "bob")
    return web_app(hostile_project, token=access.secret, folder=folder), folder, access.secret, alice, bob


def client(app, token: str) -> TestClient:
    return web_client(app, token=token)


def signed_in_lead(app, token: str, name: str = "lead") -> TestClient:
    return web_client(app, token=token, name=name)


# -- the access file ---------------------------------------------------------------------------------------------
def test_the_access_file_keeps_digests_only_and_is_private(team):
    app, folder, lead, alice, bob = team
    path = folder / ACCESS_FILE
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    text = path.read_text()
    assert alice not in text and bob not in text and digest(alice) in text  # only digests of personal tokens
    assert lead in text  # the project's secret: the lead's link is printed again on request
    access = load_access(folder)
    assert access.who(alice).name == "alice" and access.who(lead).lead and access.who("nope") is None
    with pytest.raises(InputError, match="has a personal link already.*--renew"):
        add_link(folder, "alice")
    with pytest.raises(InputError, match="'carol' has no personal link"):
        revoke_link(folder, "carol")
    with pytest.raises(InputError, match="labeller"):
        add_link(folder, "   ")
    with pytest.raises(InputError, match="control characters"):
        add_link(folder, "\x1b[31mred\x1b[0m")


@pytest.mark.parametrize("content", ["{not json", '{"format": 1}', '{"format": 1, "secret": "short", "links": []}',
                                     '{"format": 1, "secret": "' + "a" * 20 + '", "port": 70000, "links": []}',
                                     '{"format": 1, "secret": "' + "a" * 20 + '", "links": [{"name": "x"}]}',
                                     '{"format": 1, "secret": "' + "a;b" * 10 + '", "links": []}'])
def test_a_damaged_access_file_is_named_and_left_alone(hostile_project, content):
    path = hostile_project.folder / ACCESS_FILE
    path.write_text(content)
    with pytest.raises(InputError, match=ACCESS_FILE):
        load_access(hostile_project.folder)
    with pytest.raises(InputError, match=ACCESS_FILE):
        add_link(hostile_project.folder, "alice")
    assert path.read_text() == content


def test_a_restart_keeps_the_port_and_the_links(hostile_project):
    folder = hostile_project.folder
    hostile_project.close()
    bench = workbench(folder)
    try:
        first, port = bench.url, bench.port
        _, token = add_link(folder, "alice")
        with httpx.Client(follow_redirects=False) as c:  # issued while it runs: counts at once
            assert c.get(f"http://127.0.0.1:{port}/?token={token}").status_code == 303
    finally:
        bench.stop()
    bench = workbench(folder)
    try:
        assert (bench.url, bench.port) == (first, port)  # same address, same lead's link
        with httpx.Client(follow_redirects=False) as c:
            assert c.get(f"http://127.0.0.1:{port}/?token={token}").status_code == 303
            assert c.get(f"http://127.0.0.1:{port}/").status_code == 200  # alice's page, no sign-in
        with pytest.raises(InputError, match="this project's port.*running already"):
            open_server(folder)  # the kept port is taken: said so, with the way out
    finally:
        bench.stop()


# -- personal links ------------------------------------------------------------------------------------------------
def test_a_personal_link_names_its_labeller(team, hostile_project):
    app, folder, lead, alice, bob = team
    c = client(app, alice)
    r = c.get("/")
    assert r.status_code == 200 and "labelling as <b>alice</b>" in r.text and "sign out" not in r.text
    assert c.get("/signin").headers["location"] == "/"  # no typed name
    assert c.post("/signin", content="name=mallory", headers=FORM).headers["location"] == "/"
    c.cookies.set("erx-labeller-8766", "mallory")  # a typed-name cookie does not override the link
    assert save(c, "1", removed=["2"]).status_code == 200
    assert hostile_project.store.decision(1, "alice").removed == ("2",)
    assert hostile_project.store.decision(1, "mallory") is None
    assert c.get("/lead").status_code == 403 and "opens only with the lead" in c.get("/lead").text
    assert 'id="lead-link"' not in c.get("/").text


def test_revoking_renewing_and_rotating(team):
    app, folder, lead, alice, bob = team
    a, b, boss = client(app, alice), client(app, bob), signed_in_lead(app, lead)
    revoke_link(folder, "alice")
    for r in (a.get("/"), a.get("/draw/1"), save(a, "1"), TestClient(app.guard, base_url=BASE).get(f"/?token={alice}")):
        assert r.status_code == 403
        assert "revoked" in r.text and "Ask the lead" in r.text
    assert save(a, "1").json()["error"].startswith("This personal link (of alice) was revoked")
    assert b.get("/").status_code == 200 and boss.get("/").status_code == 200  # the others go on
    _, again = add_link(folder, "alice")  # a revoked name gets a new link
    assert client(app, again).get("/").status_code == 200
    assert a.get("/").status_code == 403  # the old one stays dead
    _, renewed = add_link(folder, "bob", renew=True)
    assert b.get("/").status_code == 403 and client(app, renewed).get("/").status_code == 200
    rotate_secret(folder)  # the lead's old link and cookie stop working, the personal links do not
    assert boss.get("/").status_code == 403 and "revoked" not in boss.get("/").text
    assert TestClient(app.guard, base_url=BASE).get(f"/?token={lead}").status_code == 403
    assert client(app, load_access(folder).secret).get("/").status_code == 303  # the new one: on to sign-in
    assert client(app, renewed).get("/").status_code == 200


def test_the_public_address_of_a_reverse_proxy(team):
    app, folder, lead, alice, bob = team
    proxied = TestClient(app.guard, base_url="https://label.example.org", follow_redirects=False)
    assert proxied.get(f"/?token={alice}").status_code == 403  # not this workbench's Host yet
    set_address(folder, public_url="https://label.example.org")
    r = proxied.get(f"/?token={alice}")
    assert r.status_code == 303 and "Secure" in r.headers["set-cookie"]
    good = save(proxied, "1", removed=["2"])
    assert good.status_code == 403  # Origin http://127.0.0.1:PORT is not the proxy's
    r = proxied.post("/api/draw/1/save", content=json.dumps({"expected_version": 0}),
                     headers={"Origin": "https://label.example.org", "Content-Type": "application/json"})
    assert r.status_code == 200, r.text
    r = proxied.post("/api/draw/2/save", content="{}", headers={"Origin": "https://evil.example",
                                                                  "Content-Type": "application/json"})
    assert r.status_code == 403
    with pytest.raises(InputError, match="--public-url"):
        set_address(folder, public_url="https://label.example.org/sub?x=1")


# -- the lead's view: reconcile what the export uses -------------------------------------------------------------
def test_keep_mine_on_a_single_draw_is_reconciled_by_the_lead_and_exported(team, hostile_project):
    """Hostile round 3 item 5: 'keep mine' on a draw not labelled twice gives two answers the
    lead sees and chooses between; until then the export refuses the draw, then uses the choice."""
    app, folder, lead, alice, bob = team
    a, b = client(app, alice), client(app, bob)
    assert save(b, "2", removed=["6"], seen={}).status_code == 200
    r = save(a, "2", removed=["7"], seen={})
    assert r.status_code == 409 and r.json()["conflict"] == "other" and r.json()["seen"] == {"bob": 1}
    assert save(a, "2", removed=["7"], seen=r.json()["seen"]).status_code == 200  # keep mine
    assert save(a, "3", status="unsure", seen={}).status_code == 200
    assert save(b, "1", status="skipped", reason="cannot tell <b>why</b>", seen={}).status_code == 200
    boss = signed_in_lead(app, lead, name="Lea")
    html = boss.get("/lead").text
    differ = html[html.index('id="differ"'):html.index('id="unsure"')]
    assert 'data-draw="2"' in differ and "refused until you choose" in differ
    assert 'data-use="alice"' in differ and 'data-use="bob"' in differ
    unsure = html[html.index('id="unsure"'):html.index('id="skipped"')]
    assert 'data-draw="3"' in unsure and "asks what to do" in unsure
    assert "cannot tell &lt;b&gt;why&lt;/b&gt;" in html  # escaped
    with pytest.raises(InputError, match=r"draw 2 \(bob, alice\)"):
        export_labels(hostile_project.store, "labels.parquet", hostile_project, unsure="skip")
    r = boss.post("/lead/reconcile", content="draw=2&use=alice", headers=FORM)
    assert r.status_code == 303 and r.headers["location"] == "/lead#draw-2"
    html = boss.get("/lead").text
    assert "uses the chosen answer: alice's (chosen by Lea)" in html
    rows = {d.draw: (d.labeller, d.removed, k) for d, k in decide(hostile_project.store, hostile_project,
                                                                    unsure="skip").rows}
    assert rows == {2: ("alice", ("7",), "reconciled")}
    path, _ = export_labels(hostile_project.store, "labels.parquet", hostile_project, unsure="skip")
    exported = pd.read_parquet(path)
    assert exported["labeller"].tolist() == ["alice"] and exported["answer"].tolist() == ["reconciled"]
    # refusals: the store's and decide's, as the CLI's
    for body, needle in (("draw=1&use=bob", "only a draw answered twice"), ("draw=2&use=carol", "did not answer"),
                         ("draw=%C2%B2&use=bob", "give a draw number"), ("draw=99&use=bob", "not a draw")):
        r = boss.post("/lead/reconcile", content=body, headers=FORM)
        assert r.status_code == 422 and needle in r.text, (body, r.text[:300])
    assert boss.post("/lead/reconcile", content="draw=2&use=bob", headers={"Content-Type": FORM["Content-Type"]}
                     ).status_code == 403  # no Origin: refused by the guard
    assert client(app, alice).post("/lead/reconcile", content="draw=2&use=alice", headers=FORM).status_code == 403


def test_the_lead_signs_in_before_reconciling(team):
    app, folder, lead, alice, bob = team
    c = client(app, lead)
    assert c.get("/lead").headers["location"] == "/signin"
    assert c.post("/lead/reconcile", content="draw=2&use=bob", headers=FORM).headers["location"] == "/signin"


# -- hostile round 3 item 4: blind doubles stay blind in review mode -------------------------------------------------
def test_review_of_a_blind_double_waits_for_my_answer(team, hostile_project):
    app, folder, lead, alice, bob = team
    store = hostile_project.store
    store._db.execute("UPDATE draws SET double = 1 WHERE draw = 2")
    store.save(2, "bob", Decision(removed=["6"], true_cluster="bobs-cluster"), expected_version=0)
    a = client(app, alice)
    r = a.get("/review/2")
    assert r.status_code == 403 and "answer it on its page first" in r.text
    assert "bob" not in r.text and "bobs-cluster" not in r.text and "Maria Nunez" not in r.text
    r = a.post("/api/review/2/tag", content=json.dumps({"tag": "other", "kind": "over", "records": ["6"]}),
               headers=JSON)
    assert r.status_code == 403 and store.tags() == []
    assert save(a, "2", status="skipped", reason="later").status_code == 200  # a skip is no answer
    assert a.get("/review/2").status_code == 403 and a.get("/api/draw/2").json()["others"] == []
    assert save(a, "2", removed=["7"], expected_version=1).status_code == 200
    r = a.get("/review/2")
    assert r.status_code == 200 and "alice" in r.text  # my own answer's picture


# -- hostile round 3 item 5: the check runs inside the save transaction ------------------------------------------------
@pytest.fixture
def twelve(tmp_path):
    """A project of 12 draws, none labelled twice (24 records in 12 predicted clusters of 2)."""
    from er_expectations.labelling.project import init_project

    ids = list(range(1, 25))
    pd.DataFrame({"rid": ids, "pred": [f"c{(i + 1) // 2}" for i in ids], "name": [f"n{i}" for i in ids]}
                 ).to_parquet(tmp_path / "records.parquet")
    pd.DataFrame({"draw": range(1, 13), "record_id": list(range(1, 24, 2)),
                  "predicted_cluster": [f"c{k}" for k in range(1, 13)], "removed": [[]] * 12, "added": [[]] * 12}
                 ).to_parquet(tmp_path / "sheet.parquet")
    init_project(tmp_path / "p", records=tmp_path / "records.parquet", record_id="rid", prediction="pred",
                 name="name", sample=tmp_path / "sheet.parquet", double_label_share=0).close()
    return tmp_path / "p"


def test_racing_saves_never_store_two_answers_without_a_conflict(twelve, monkeypatch):
    """Two labellers save the same 12 draws at once, each having seen no other answer; every read
    of the answers is slowed down (50 ms after it), which widened the window of a check made
    before the save's transaction to every draw. Each draw must end with one answer saved and
    the other labeller told (409), never two answers stored silently."""
    from er_expectations.labelling.store import LabelStore

    slow = LabelStore.decisions

    def decisions(self, draw=None):
        got = slow(self, draw)
        time.sleep(0.05)
        return got

    monkeypatch.setattr(LabelStore, "decisions", decisions)
    _, alice = add_link(twelve, "alice")
    _, bob = add_link(twelve, "bob")
    bench = workbench(twelve)
    base = f"http://127.0.0.1:{bench.port}"
    results: dict[tuple[str, int], int] = {}
    barrier = threading.Barrier(2)

    def label(name: str, token: str) -> None:
        with httpx.Client(base_url=base, follow_redirects=False, timeout=30) as c:
            c.get(f"/?token={token}")
            for n in range(1, 13):
                barrier.wait()
                r = c.post(f"/api/draw/{n}/save", headers={"Origin": base, "Content-Type": "application/json"},
                           content=json.dumps({"removed": [], "added": [], "expected_version": 0, "seen": {},
                                               "note": name}))
                results[name, n] = r.status_code

    try:
        threads = [threading.Thread(target=label, args=x) for x in (("alice", alice), ("bob", bob))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
    finally:
        bench.stop()
    with LabelStore.open(twelve / "workbench.sqlite") as store:
        for n in range(1, 13):
            stored = [d.labeller for d in store.decisions(n)]
            codes = sorted((results["alice", n], results["bob", n]))
            assert len(stored) == 1 and codes == [200, 409], (n, stored, codes)  # one saved, one told


# -- the command line -----------------------------------------------------------------------------------------------
def test_label_links_commands(hostile_project, capsys):
    folder = str(hostile_project.folder)
    assert main(["label", "links", folder]) == 0
    assert "no links yet" in capsys.readouterr().out
    assert main(["label", "links", folder, "add", "alice"]) == 0
    out = capsys.readouterr()
    token = out.out.split("?token=")[1].split()[0]
    access = load_access(folder)
    assert access.who(token).name == "alice" and access.port is not None  # a port kept before the first serve
    assert f"http://127.0.0.1:{access.port}/?token=" in out.out and "--public-url" in out.err
    assert main(["label", "links", folder, "add", "alice"]) == 2
    assert "--renew" in capsys.readouterr().err
    assert main(["label", "links", folder, "lead"]) == 0
    assert access.secret in capsys.readouterr().out
    assert main(["label", "links", folder, "revoke", "alice"]) == 0
    capsys.readouterr()
    assert main(["label", "links", folder]) == 0
    listed = capsys.readouterr().out
    assert "alice: revoked" in listed and token not in listed and access.secret not in listed
    assert main(["label", "links", folder, "rotate"]) == 0
    new = load_access(folder).secret
    assert new != access.secret and new in capsys.readouterr().out
    assert main(["label", "links", folder, "add", "bob", "--public-url", "https://label.example.org"]) == 0
    assert "https://label.example.org/?token=" in capsys.readouterr().out
    assert main(["label", "links", str(hostile_project.folder.parent), "lead"]) == 2
    assert "no workbench.yml" in capsys.readouterr().err


@pytest.mark.parametrize(("argv", "needle"), [(["add"], "give the labeller's name"), (["revoke"], "give the"),
                                              (["lead", "ann"], "takes no name"), (["rotate", "--renew"], "--renew")])
def test_label_links_refusals(hostile_project, capsys, argv, needle):
    before = sorted(p.name for p in hostile_project.folder.iterdir())
    assert main(["label", "links", str(hostile_project.folder), *argv]) == 2
    assert needle in capsys.readouterr().err
    assert sorted(p.name for p in hostile_project.folder.iterdir()) == before  # nothing written


def test_the_single_token_of_one_person_is_the_lead(hostile_project):
    """Backward compatible: without personal links the one token signs in by a typed name, as before,
    and its holder is the lead."""
    app = web_app(hostile_project, token="only-token")
    c = client(app, "only-token")
    assert c.get("/").headers["location"] == "/signin"
    assert c.post("/signin", content="name=solo", headers=FORM).status_code == 303
    assert save(c, "1").status_code == 200 and hostile_project.store.decision(1, "solo") is not None
    page = c.get("/lead")
    assert page.status_code == 200 and "Lead's view" in page.text and 'id="lead-link"' in page.text
    assert c.cookies.get(cookie_name(PORT)) == "only-token"
