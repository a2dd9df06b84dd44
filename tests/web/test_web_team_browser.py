"""Team mode in a real browser (issue 31 item 4): Debian's chromium driven by Playwright, network cut.

Three labellers open their personal links (no sign-in), label a set of draws, disagree on a
blind double and, through "keep mine", on a draw labelled once; the lead reconciles both on
the lead's view and the export holds the reconciled answers. A revoked link gets the page
that says to ask the lead; a restart keeps the port and every link; a rotation ends the
lead's old link only. One browser, few page loads.
"""

from __future__ import annotations

import os
import signal
import sqlite3
from pathlib import Path

import pandas as pd
import pytest
from support.workbench_web import make_hostile_project

from er_expectations.cli.main import main
from er_expectations.labelling.access import lead_url, load_access

pytestmark = [pytest.mark.browser]


def shot(page, name: str) -> None:
    """A 1280 px screenshot into ``ER_WORKBENCH_SHOTS`` when set (to look at the pages)."""
    folder = os.environ.get("ER_WORKBENCH_SHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=True)


def link(folder, name: str, capsys) -> str:
    assert main(["label", "links", str(folder), "add", name]) == 0
    return capsys.readouterr().out.split()[-1]


def open_link(chromium, url: str):
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(url)
    assert "token" not in page.url
    return page


def label(page, base: str, n: int, remove: tuple[str, ...] = ()) -> None:
    """Open draw ``n``, tick the members in ``remove`` and click Save."""
    page.goto(f"{base}/draw/{n}")
    page.wait_for_selector("body[data-ready='1']")
    for rid in remove:
        page.check(f"tr[data-id='{rid}'] input[type=checkbox]")
    page.click("#save")
    page.wait_for_selector("#status.ok")


def test_three_labellers_disagree_and_the_lead_reconciles(chromium, tmp_path, serve, capsys):
    folder = tmp_path / "project"
    make_hostile_project(tmp_path).close()
    with sqlite3.connect(folder / "workbench.sqlite") as db:  # draws 1 and 2 labelled twice, blind
        db.execute("UPDATE draws SET double = 1 WHERE draw IN (1, 2)")
    links = {name: link(folder, name, capsys) for name in ("alice", "bob", "carol")}
    served = serve(folder)
    access = load_access(folder)
    assert served.url == lead_url(access) and served.base == f"http://127.0.0.1:{access.port}"
    assert all(u.startswith(served.base + "/?token=") for u in links.values())  # issued before the first serve

    alice = open_link(chromium, links["alice"])
    assert alice.url == served.base + "/" and "labelling as alice" in alice.inner_text("header")  # no sign-in
    label(alice, served.base, 1, remove=("2",))
    label(alice, served.base, 2)

    bob = open_link(chromium, links["bob"])
    bob.goto(f"{served.base}/review/1")  # blind: alice's answer is not shown before bob's
    assert "Answer it first" in bob.inner_text("h1") and "alice" not in bob.content()
    label(bob, served.base, 1, remove=("3",))
    label(bob, served.base, 2)  # agrees with alice

    carol = open_link(chromium, links["carol"])
    alice.goto(f"{served.base}/draw/3")  # alice opens draw 3 before carol saves it
    alice.wait_for_selector("body[data-ready='1']")
    label(carol, served.base, 3, remove=("4",))
    alice.click("#save")
    alice.wait_for_selector("#conflict:not([hidden])")
    assert "carol saved an answer" in alice.inner_text("#conflict") and "the lead then chooses" in \
        alice.inner_text("#conflict")
    alice.click("#keep-mine")
    alice.wait_for_selector("#status.ok")

    lead = open_link(chromium, served.url)
    lead.wait_for_url("**/signin")
    lead.fill("#name", "Lea")
    lead.click("button[type=submit]")
    lead.click("#lead-link")
    differ = lead.locator("#differ tbody tr")
    assert [differ.nth(i).get_attribute("data-draw") for i in range(differ.count())] == ["1", "3"]
    assert "refused until you choose" in lead.inner_text("#differ")
    shot(lead, "team-1-lead")
    assert lead.locator("#twice tbody tr").count() == 3  # draws 1, 2 and 3
    lead.click("#draw-1 button[data-use='bob']")
    lead.wait_for_url("**/lead#draw-1")
    lead.click("#draw-3 button[data-use='carol']")
    lead.wait_for_url("**/lead#draw-3")
    text = lead.inner_text("#differ")
    assert "bob's (chosen by Lea)" in text and "carol's (chosen by Lea)" in text

    assert main(["label", "links", str(folder), "revoke", "carol"]) == 0
    carol.reload()
    assert "revoked by the lead" in carol.inner_text("body") and "Ask the lead" in carol.inner_text("body")
    shot(carol, "team-2-revoked")

    out = tmp_path / "labels.parquet"
    capsys.readouterr()
    assert main(["label", "export", str(folder), "-o", str(out)]) == 0
    assert "2 reconciled" in capsys.readouterr().out
    exported = pd.read_parquet(out).set_index("draw")
    assert exported.loc[1, "labeller"] == "bob" and list(exported.loc[1, "removed"]) == [3]
    assert exported.loc[1, "answer"] == "reconciled" and exported.loc[2, "answer"] == "agreed"
    assert exported.loc[3, "labeller"] == "carol" and list(exported.loc[3, "removed"]) == [4]
    assert exported.loc[3, "answer"] == "reconciled"

    # a restart keeps the port and every link: the cookies of the open pages still work
    assert served.kill(signal.SIGTERM) == 0
    again = serve(folder)
    assert (again.url, again.base) == (served.url, served.base)
    alice.goto(served.base + "/")
    assert "labelling as alice" in alice.inner_text("header")
    # a rotation ends the lead's old link, not the labellers'
    assert main(["label", "links", str(folder), "rotate"]) == 0
    lead.goto(served.base + "/lead")
    assert "needs its token" in lead.inner_text("body")
    bob.goto(served.base + "/")
    assert "labelling as bob" in bob.inner_text("header")
