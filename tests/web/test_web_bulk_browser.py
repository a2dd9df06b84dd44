"""Bulk actions, the layout and the labeller's words in a real browser (issue 31 items 2 and 3):
Debian's chromium driven by Playwright, network cut, on the demo project (PatentsView, release
2021-12-30), one server for the module.

* Draw 292 (Junyi Li, 1,033 members): the 244 members the filter "Bedminster" shows are ticked
  in one action (one repaint) and untouched rows stay unticked; undo restores them; Shift-click
  and Shift+x tick ranges; draw 31: "Toshiba" then the key a ticks exactly the rows shown, saved.
  The expected rows are counted from the records table, not from the page.
* At 1000 × 768, 1280 × 900 and 1366 × 768, after a search: the answer's buttons are inside the
  window and not covered at the top, middle and bottom of the page, no column needs a sideways
  scroll, no name breaks inside a word, the search placeholder fits; Save is clicked with the
  mouse at 1000 × 768 and the answer is in the store.
* No request for /favicon.ico is answered 404; no page shows "A_r", "B_r" or "ĉ(r)".
"""

from __future__ import annotations

import pandas as pd
import pytest
from support.workbench_web import DATA, RELEASE, Served, make_demo_project
from test_web_browser import labels_of, new_page, open_draw

pytestmark = [pytest.mark.browser]

COLUMNS = ["name_first", "name_last", "block", "patent_date", "city", "country", "assignee_organization",
           "patent_title"]
SIZES = [(1000, 768), (1280, 900), (1366, 768)]
JARGON = ("A_r", "B_r", "ĉ(r)", "ĉ")


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    folder = tmp_path_factory.mktemp("demo-bulk") / "project"
    make_demo_project(folder).close()
    s = Served(folder).start()
    yield s
    s.kill()


def member_rows(draw: int) -> tuple[str, dict[str, str]]:
    """The drawn record and, for each member of its predicted cluster, the text of its row (id and
    the shown columns, lower case), read from the demo's files."""
    labels = pd.read_parquet(DATA / "labels.parquet").set_index("draw")
    pred = pd.read_parquet(DATA / "predictions.parquet", columns=["mention_id", RELEASE])
    ids = set(pred.loc[pred[RELEASE] == labels.loc[draw, "predicted_cluster"], "mention_id"])
    rec = pd.read_parquet(DATA / "records.parquet", columns=["mention_id", *COLUMNS])
    rec = rec[rec["mention_id"].isin(ids)]
    rows = {r[0]: " ".join(["" if pd.isna(v) else str(v) for v in r]).lower()
            for r in rec.itertuples(index=False)}
    return labels.loc[draw, "record_id"], rows


def renders(page) -> int:
    return int(page.evaluate("document.body.dataset.renders"))


def ticked(page) -> set[str]:
    return set(page.eval_on_selector_all("#members tbody input:checked", "els => els.map(e => e.closest('tr').dataset.id)"))


def test_bulk_ticks_ranges_and_undo(chromium, served):
    drawn, rows = member_rows(292)
    assert len(rows) == 1033
    want = {i for i, text in rows.items() if "bedminster" in text} - {drawn}
    assert len(want) >= 200
    page = new_page(chromium, served, "bulk")
    open_draw(page, served, 292)
    page.fill("#filter", "Bedminster")
    assert page.locator("#members tbody tr:visible").count() == sum("bedminster" in t for t in rows.values())
    before = renders(page)
    page.click("#tick-shown")  # one action for all the rows shown
    assert renders(page) == before + 1
    assert ticked(page) == want
    assert page.inner_text("#truth-count").startswith(
        f"{1033 - len(want):,} records = 1,033 predicted − {len(want)} removed + 0 added")
    assert page.inner_text("#removed-n") == str(len(want))
    assert page.locator("#removed li .mono").count() == 100  # the last 100 listed, the rest counted
    assert f"{len(want) - 100} more" in page.inner_text("#removed li.none")
    page.keyboard.press("Escape")  # leave the filter box: keys act on the page
    page.keyboard.press("z")  # undo: every row back, in one repaint
    assert renders(page) == before + 2 and ticked(page) == set()
    assert page.inner_text("#truth-count").startswith("1,033 records = 1,033 predicted − 0 removed")
    page.keyboard.press("a")  # the key for "tick all shown", then "untick all shown"
    assert ticked(page) == want and renders(page) == before + 3
    page.keyboard.press("u")
    assert ticked(page) == set() and renders(page) == before + 4
    # ranges on the unfiltered table: click row 3, Shift-click row 12, Shift+x at row 20
    page.fill("#filter", "")
    page.keyboard.press("Escape")
    order = page.eval_on_selector_all("#members tbody tr", "els => els.map(e => e.dataset.id)")
    tickable = lambda a, b: {i for i in order[a:b + 1] if i != drawn}  # noqa: E731
    page.click(f"tr[data-id='{order[3]}'] input")
    page.click(f"tr[data-id='{order[12]}'] input", modifiers=["Shift"])
    assert ticked(page) == tickable(3, 12)
    mark = renders(page)
    for _ in range(21):
        page.keyboard.press("j")
    page.keyboard.press("Shift+X")
    assert ticked(page) == tickable(3, 20) and renders(page) == mark + 1
    page.keyboard.press("z")
    assert ticked(page) == tickable(3, 12)
    page.keyboard.press("s")  # saved as shown (and the page may be left without a question)
    page.wait_for_selector("#status.ok")
    assert set(labels_of(served.folder, "bulk").set_index("draw").loc[292, "removed"]) == tickable(3, 12)
    # draw 31: "Toshiba", then the key a: exactly the rows the filter shows, saved
    drawn31, rows31 = member_rows(31)
    toshiba = {i for i, text in rows31.items() if "toshiba" in text} - {drawn31}
    assert len(toshiba) >= 20
    open_draw(page, served, 31)
    for width, height in SIZES:  # its titles hold 46-letter chemical words: still no sideways scroll
        page.set_viewport_size({"width": width, "height": height})
        assert page.evaluate(GEOMETRY)["sideways"] <= 0, (width, height)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.fill("#filter", "Toshiba")
    assert page.inner_text("#tick-shown") == f"Tick all {len(toshiba)} shown (a)"
    page.keyboard.press("Escape")
    page.keyboard.press("a")
    assert ticked(page) == toshiba
    page.keyboard.press("s")
    page.wait_for_selector("#status.ok")
    row = labels_of(served.folder, "bulk").set_index("draw").loc[31]
    assert set(row["removed"]) == toshiba and list(row["added"]) == []
    # the search results: add all shown (one action, undone), then a Shift-click range of add buttons
    page.fill("#search", "Watanabe")
    page.locator("#hits li[data-id] button.add").first.wait_for()
    offered = page.eval_on_selector_all("#hits li[data-id]:has(button.add)", "els => els.map(e => e.dataset.id)")
    assert len(offered) >= 5
    mark = renders(page)
    page.click("#add-shown")
    added = lambda: set(page.eval_on_selector_all("#added li .mono", "els => els.map(e => e.textContent)"))  # noqa: E731
    assert added() == set(offered) and renders(page) == mark + 1
    page.keyboard.press("Escape")
    page.keyboard.press("z")
    assert added() == set() and renders(page) == mark + 2
    page.locator(f"#hits li[data-id='{offered[0]}'] button.add").wait_for()
    page.click(f"#hits li[data-id='{offered[0]}'] button.add")
    page.locator(f"#hits li[data-id='{offered[3]}'] button.add").click(modifiers=["Shift"])
    assert added() == set(offered[:4])


GEOMETRY = """() => {
  const box = (el) => { const b = el.getBoundingClientRect(); return b; };
  const inside = (el) => { const b = box(el); const x = b.left + b.width / 2, y = b.top + b.height / 2;
    const top = document.elementFromPoint(x, y);
    return b.top >= 0 && b.left >= 0 && b.bottom <= innerHeight && b.right <= innerWidth && top !== null &&
      (top === el || el.contains(top) || top.contains(el) && top.tagName === "LABEL"); };
  const out = {};
  for (const sel of ["#save", "#skip", "#note", "#unsure", "#reason", "#next", "#search", ".actionbar .truth"])
    out[sel] = inside(document.querySelector(sel));
  const scrolls = Array.from(document.querySelectorAll(".scroll")).map((s) => s.scrollWidth - s.clientWidth);
  const side = document.querySelector(".side").getBoundingClientRect();
  // a word of a name on two lines has two client rects
  let broken = [];
  const names = [...document.querySelectorAll("#members tbody tr:not([hidden]) td.nm")].slice(0, 300)
    .concat([...document.querySelectorAll("#hits .name")]);
  for (const cell of names) {
    const node = cell.firstChild;
    if (!node || node.nodeType !== 3) continue;
    const text = node.textContent;
    for (const m of text.matchAll(/\\S+/g)) {
      const r = document.createRange(); r.setStart(node, m.index); r.setEnd(node, m.index + m[0].length);
      const lines = new Set([...r.getClientRects()].map((q) => Math.round(q.top)));
      if (lines.size > 1) broken.push(m[0]);
    }
  }
  const input = document.getElementById("search"), css = getComputedStyle(input);
  const ctx = document.createElement("canvas").getContext("2d");
  ctx.font = css.font;
  const room = input.clientWidth - parseFloat(css.paddingLeft) - parseFloat(css.paddingRight);
  return {inside: out, sideways: Math.max(...scrolls, document.documentElement.scrollWidth - innerWidth),
          side_height: side.height, window: innerHeight, broken: broken,
          placeholder: [ctx.measureText(input.placeholder).width, room]};
}"""


def test_layout_fits_and_save_is_clicked_at_1000x768(chromium, served):
    page = new_page(chromium, served, "layout")
    page.set_viewport_size({"width": 1000, "height": 768})
    open_draw(page, served, 292)
    drawn, rows = member_rows(292)
    page.fill("#search", "Junyi Li")
    page.locator("#hits li[data-id] button.add").first.wait_for()
    added = page.locator("#hits li[data-id]:has(button.add)").first.get_attribute("data-id")
    page.locator(f"#hits li[data-id='{added}'] button.add").click()
    gone = next(i for i in page.eval_on_selector_all("#members tbody tr", "els => els.map(e => e.dataset.id)")
                if i != drawn)
    page.check(f"tr[data-id='{gone}'] input")
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        for where in ("0", "document.documentElement.scrollHeight / 2", "document.documentElement.scrollHeight"):
            page.evaluate(f"window.scrollTo(0, {where})")
            page.evaluate("() => new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok)))")
            g = page.evaluate(GEOMETRY)
            assert all(g["inside"].values()), (width, height, where, g["inside"])
            assert g["sideways"] <= 0, (width, height, g["sideways"])
            assert g["side_height"] <= g["window"], (width, height, g)
            assert g["broken"] == [], (width, height, g["broken"][:5])
            assert g["placeholder"][0] <= g["placeholder"][1], (width, height, g["placeholder"])
        if (width, height) == (1000, 768):  # Save with the mouse, at the bottom of 1,033 rows
            b = page.locator("#save").bounding_box()
            page.mouse.click(b["x"] + b["width"] / 2, b["y"] + b["height"] / 2)
            page.wait_for_selector("#status.ok")
            row = labels_of(served.folder, "layout").set_index("draw").loc[292]
            assert list(row["removed"]) == [gone] and list(row["added"]) == [added]
    assert len(rows) == 1033


def test_no_favicon_404_and_no_spec_symbols(chromium, served):
    page = new_page(chromium, served, "words")
    answers: list[tuple[str, int]] = []
    page.on("response", lambda r: answers.append((r.url, r.status)))
    for path in ("/", "/draw/154", "/agreement", "/review/154", "/no-such-page"):
        page.goto(served.base + path)
        page.wait_for_load_state()
        text = page.inner_text("body")
        assert not [j for j in JARGON if j in text], (path, [j for j in JARGON if j in text])
        icon = page.get_attribute("link[rel=icon]", "href")
        assert icon == "/static/favicon.svg"
    for url in (served.base + "/favicon.ico", served.base + "/static/favicon.svg"):
        got = page.request.get(url)
        assert got.status == 200 and got.headers["content-type"].startswith("image/svg+xml")
        assert "default-src 'none'" in got.headers["content-security-policy"]
    assert [u for u, s in answers if u.endswith("/favicon.ico") and s == 404] == []
    assert [s for u, s in answers if "/static/" in u and s != 200] == []
