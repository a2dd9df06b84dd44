"""Every workbench page fits the three window sizes of issue 31 (1000 × 768, 1280 × 900 and
1366 × 768), in a real browser: Debian's chromium driven by Playwright, network cut. The demo
project (PatentsView, release 2021-12-30: long names, organisations and titles) in team mode,
its 401 draws answered with the demo's true labels by two labellers, with blind doubles that
agree and disagree, an unsure and a skipped draw and a second answer that saw the first; the
lead's link opens the queue, the lead's view, the agreement (QC) page, the estimates, a review,
a draw page, the sign-in page and an error page. At each size, no page scrolls sideways and no box on it does (a table that
needs its own sideways scroll to show its columns fails too)."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest
from support.workbench_web import DATA, make_demo_project

from er_expectations.labelling.access import lead_url, load_access
from er_expectations.labelling.store import Decision, LabelStore

pytestmark = [pytest.mark.browser]

SIZES = [(1000, 768), (1280, 900), (1366, 768)]
#: the pages, and what shows each is laid out (its script done or its main heading there)
PAGES = {"queue": "/", "lead": "/lead", "agreement": "/agreement", "estimates": "/estimates",
         "review": "/review/21", "draw": "/draw/292", "sign-in": "/signin", "no such draw": "/draw/99999"}
#: what sticks out sideways: the page itself, or a box whose content is wider than it and scrolls
OVERFLOW = """() => {
  const W = window.innerWidth;
  const out = {window: W, page: document.documentElement.scrollWidth, boxes: []};
  for (const e of document.querySelectorAll('body *')) {
    const s = getComputedStyle(e);
    if (s.display === 'none' || e.closest('[hidden]') || e.closest('.overlay')) continue;
    const scrolls = (s.overflowX === 'auto' || s.overflowX === 'scroll') && e.scrollWidth > e.clientWidth + 1;
    const r = e.getBoundingClientRect();
    if (scrolls || (r.width > 0 && r.right > W + 1)) {
      out.boxes.push({tag: e.tagName.toLowerCase(), id: e.id, cls: String(e.className).slice(0, 40),
                      why: scrolls ? 'scrolls sideways by ' + (e.scrollWidth - e.clientWidth) : 'right edge at ' + Math.round(r.right),
                      text: (e.innerText || '').trim().slice(0, 60)});
    }
  }
  return out;
}"""


def shot(page, name: str) -> None:
    folder = os.environ.get("ER_WORKBENCH_SHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"))


@pytest.fixture(scope="module")
def team_demo(tmp_path_factory):
    """The demo project answered with its true labels; draws 1–6, 10 and 31 labelled twice, blind."""
    folder = tmp_path_factory.mktemp("pages") / "project"
    make_demo_project(folder, sample=None).close()
    labels = pd.read_parquet(DATA / "labels.parquet").set_index("draw")
    with LabelStore.open(folder / "workbench.sqlite") as store:
        with store.transaction() as db:
            db.execute("UPDATE draws SET double = (draw <= 6 OR draw IN (10, 31))")
        for n in [d.draw for d in store.draws()]:
            row = labels.loc[n]
            truth = Decision(removed=[str(i) for i in row["removed"]], added=[str(i) for i in row["added"]],
                             note="as the demo's labels say")
            if n == 8:
                truth = Decision(status="skipped", reason="the titles are in a language I cannot read")
            elif n == 9:
                truth = Decision(status="unsure", removed=truth.removed, added=truth.added, note="two Smiths?")
            store.save(n, "ann-marie-long-labeller-name", truth, expected_version=0)
            if n <= 7 or n in (10, 31):  # blind doubles (6, 10 and 31 disagree); 7: a second answer that saw the first
                other = Decision(removed=truth.removed[:1 if n == 6 else 100] if n in (6, 31) else truth.removed,
                                 added=truth.added[:5] if n == 10 else truth.added)
                store.save(n, "bob", other, expected_version=0)
    return folder


def test_every_page_fits_each_window_size(chromium, team_demo, serve):
    served = serve(team_demo)
    assert served.url == lead_url(load_access(team_demo))
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(served.url)  # the lead's link: every page, the lead's view included
    page.wait_for_url("**/signin")
    page.fill("#name", "Lea")
    page.click("button[type=submit]")
    page.wait_for_url(served.base + "/")
    # the measurement itself finds what sticks out: a 3,000 px box put on the page is reported
    page.evaluate("() => { const d = document.createElement('div'); d.id = 'probe'; d.style.width = '3000px';"
                  " d.textContent = 'x'; document.querySelector('main').append(d); }")
    probe = page.evaluate(OVERFLOW)
    assert probe["page"] > 1280 and any(b["id"] == "probe" for b in probe["boxes"])
    problems = []
    for name, path in PAGES.items():
        page.goto(served.base + path)
        page.wait_for_selector("h1")
        if name == "draw":
            page.wait_for_selector("body[data-ready='1']")
        for width, height in SIZES:
            page.set_viewport_size({"width": width, "height": height})
            page.wait_for_timeout(50)
            got = page.evaluate(OVERFLOW)
            shot(page, f"{name}-{width}x{height}")
            if got["page"] > width or got["boxes"]:
                problems.append((name, width, height, got["page"], got["boxes"][:5]))
    assert not problems, "\n".join(map(str, problems))
