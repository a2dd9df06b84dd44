"""The offline Data Docs seen through headless Chromium, with every remote host blocked.

The demo's index, suite page and three validation pages are also laid out at 1000 and 1400 px through
Playwright (nothing wider than its box outside a scroll container, the suite name never broken
mid-word; issue 29).

Tests marked ``browser`` need Debian's ``chromium`` (``./run test`` installs it); they are skipped
with a reason when it is missing. The HTML helpers of ``tests/support/chromium.py`` are tested
without a browser. Set ``ER_OFFLINE_SHOTS=/some/dir`` to keep a copy of the screenshots.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from support import chromium as browser
from support.chromium import (
    ChromiumNotFoundError,
    chromium_available,
    dump_dom,
    find_chromium,
    page_problems,
    screenshot,
    visible_text,
)

SKIP_REASON = ("headless Chromium is not installed (Debian: apt-get install -y chromium; "
               "./run test installs it when run as root)")
requires_chromium = pytest.mark.skipif(not chromium_available(), reason=SKIP_REASON)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    if not chromium_available():
        pytest.skip(SKIP_REASON)
    from support.datadocs import build_demo_site

    return build_demo_site(tmp_path_factory.mktemp("browser_site"))


def _keep(png: Path) -> None:
    target = os.environ.get("ER_OFFLINE_SHOTS")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copy(png, Path(target) / png.name)


# ---- in the browser ----------------------------------------------------------------------------


@pytest.mark.browser
@requires_chromium
def test_index_in_the_browser(site, tmp_path):
    from support.datadocs import GOOD_RUN, HOSTILE_RUN, SUITE

    index = site["site"] / "index.html"
    dom = dump_dom(index)
    assert "<script" not in dom.lower()
    text = visible_text(dom)
    for needle in (GOOD_RUN, HOSTILE_RUN, SUITE, "passed", "failed",
                   "written by er-expectations for offline reading"):
        assert needle in text, needle
    assert "2 validation results: 1 passed, 1 failed" in text
    assert page_problems(dom) == []
    png = screenshot(index, tmp_path / "offline_index.png", height=900)
    _keep(png)
    assert png.stat().st_size > 10_000


@pytest.mark.browser
@requires_chromium
def test_validation_page_in_the_browser(site, tmp_path):
    from support.datadocs import HOSTILE, HOSTILE_RUN, SUITE

    page = site["pages"][HOSTILE_RUN]
    dom = dump_dom(page)
    assert "<script" not in dom.lower()
    text = visible_text(dom)
    for needle in (SUITE, HOSTILE_RUN, HOSTILE, "Status: Failed", "Show failed expectations only",
                   "written by er-expectations for offline reading"):
        assert needle in text, needle
    # the icon of each result row comes with its status as real text (CSS ::before is not in
    # the DOM): 2 failed and 2 passed expectations
    assert dom.count('<span class="er-status er-fail">failed</span>') == 2
    assert dom.count('<span class="er-status er-pass">passed</span>') == 2
    assert dom.count('class="fas fa-times') >= 2
    assert page_problems(dom) == []
    png = screenshot(page, tmp_path / "offline_validation.png", height=1800)
    _keep(png)
    assert png.stat().st_size > 10_000


@pytest.mark.browser
@requires_chromium
def test_passing_page_and_suite_page_in_the_browser(site):
    from support.datadocs import GOOD_RUN, SUITE

    text = visible_text(dump_dom(site["pages"][GOOD_RUN]))
    assert "Status: Succeeded" in text and GOOD_RUN in text
    # the page's verdicts, without the glossary at its end (collapsed; its definitions name "failed")
    verdicts = text.split("Terms on this page (")[0]
    assert "Terms on this page (" in text and "failed" not in verdicts.replace("Show failed expectations only", "")
    suite_page = site["site"] / "expectations" / f"{SUITE}.html"
    dom = dump_dom(suite_page)
    assert SUITE in visible_text(dom)
    assert page_problems(dom) == []


@pytest.mark.browser
@requires_chromium
def test_severity_in_the_browser(tmp_path_factory, tmp_path):
    from support.datadocs import CRIT_RUN, WARN_RUN, build_severity_site

    built = build_severity_site(tmp_path_factory.mktemp("browser_severity"))
    index_text = visible_text(dump_dom(built["site"] / "index.html"))
    assert "2 validation results: 0 passed, 1 passed with warnings, 1 failed" in index_text
    assert "passed with warnings" in index_text and "Critical failed" in index_text
    dom = dump_dom(built["pages"][WARN_RUN])
    text = visible_text(dom)
    assert "Status: Passed with warnings (1 warning/info expectation failed)" in text
    for badge in ("critical", "warning", "info"):
        assert f'<span class="er-sev er-sev-{badge}"' in dom, badge
    assert page_problems(dom) == []
    assert "Status: Failed (1 critical expectation failed" in visible_text(
        dump_dom(built["pages"][CRIT_RUN]))
    png = screenshot(built["pages"][WARN_RUN], tmp_path / "offline_severity.png", height=1200)
    _keep(png)
    assert png.stat().st_size > 10_000


@pytest.mark.browser
@requires_chromium
def test_remote_hosts_are_blocked(tmp_path):
    # a page that would show a marker if it managed to load a remote script
    page = tmp_path / "remote.html"
    page.write_text('<html><body><p id="p">offline</p>'
                    '<script src="https://cdn.example.org/x.js"></script></body></html>')
    assert "offline" in visible_text(dump_dom(page, timeout=60))


# ---- without a browser -------------------------------------------------------------------------


def test_missing_chromium_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(browser.shutil, "which", lambda name: None)
    assert chromium_available() is False
    with pytest.raises(ChromiumNotFoundError, match="apt-get install -y chromium"):
        find_chromium()
    with pytest.raises(ChromiumNotFoundError):
        dump_dom("about:blank")


def test_missing_page_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="page not found"):
        screenshot(tmp_path / "nope.html", tmp_path / "x.png")


def test_visible_text():
    html = ("<html><head><title>T</title><style>p{color:red}</style></head><body>"
            "<script>var x = 1;</script><p>a&amp;b  &lt;i&gt;</p><table><tr><td>1</td><td>2</td>"
            "</tr></table><span>in</span><b>line</b></body></html>")
    assert visible_text(html) == "a&b <i> 1 2 inline"


@pytest.mark.parametrize(("html", "expected"), [
    ("<p>expect_x(**{'batch_id': 1})</p>",
     ["template marker '**{'", "template marker '(**'", "raw Python dict"]),
    ("<p>must be at least $min_value.</p>", ["unsubstituted template parameter '$min_value'"]),
    ("<p>kwargs (**kwargs)</p>", ["template marker '(**'"]),
    ("<div><script>alert(1)</script></div>", ["live <script> calling alert"]),
    ("<img src=x onerror=alert(1)>", ["live event handler"]),
    ('<a href="javascript:alert(1)">x</a>', ["live event handler"]),
    ("<p>&lt;script&gt;alert(1)&lt;/script&gt; costs $5 {not a dict}</p>", []),
    ("<script>var a = 1;</script><p>fine</p>", []),
])
def test_page_problems(html, expected):
    problems = page_problems(html)
    assert len(problems) == len(expected), problems
    for problem, start in zip(problems, expected, strict=True):
        assert problem.startswith(start), problem


# ---- the demo's pages at 1000 and 1400 px, driven by Playwright (issue 29: nothing overflows) ----

LAYOUT_RELEASES = ["2017-08-08", "2020-09-29", "2022-06-30"]  # skipped checks, failing, passing
DEMO_SUITE = "patentsview_inventor_disambiguation"

#: Run in the page by Playwright (through the DevTools protocol: the pages' CSP forbids their own
#: scripts, not the browser's). Returns the document's widths; every element wider than its box or
#: sticking out of its parent outside an explicit scroll container (a value shortened on purpose,
#: with an ellipsis and the whole value in its title, is no overflow: the hashes of the
#: provenance, copied whole); and every place where the suite name is broken across lines other
#: than after one of its underscores (mid-word).
LAYOUT_SCRIPT = r"""
(name) => {
  const doc = document.documentElement;
  const scrolls = (el) => ['auto', 'scroll'].includes(getComputedStyle(el).overflowX);
  const inScroller = (el) => {
    for (let p = el.parentElement; p && p !== document.body && p !== doc; p = p.parentElement)
      if (scrolls(p)) return true;
    return false;
  };
  const shortened = (el, style) => style.textOverflow === 'ellipsis' && style.overflowX === 'hidden'
    && el.getAttribute('title') === el.textContent;
  const what = (el) => el.tagName.toLowerCase() + (el.className && typeof el.className === 'string'
    ? '.' + el.className.trim().split(/\s+/).join('.') : '') + ' "' +
    (el.innerText || '').trim().replace(/\s+/g, ' ').slice(0, 60) + '"';
  const out = {scroll_width: doc.scrollWidth, client_width: doc.clientWidth, wide: [], broken: [], names: 0};
  for (const el of document.body.querySelectorAll('*')) {
    const style = getComputedStyle(el);
    if (style.display === 'none' || style.display === 'contents' || el.getClientRects().length === 0) continue;
    if (scrolls(el) || inScroller(el)) continue;
    if (style.display !== 'inline' && el.clientWidth > 0 && el.scrollWidth > el.clientWidth + 1
        && !shortened(el, style))
      out.wide.push('content wider than its box by ' + (el.scrollWidth - el.clientWidth) + ' px: ' + what(el));
    const parent = el.parentElement;
    if (parent && parent !== document.body && getComputedStyle(parent).display !== 'inline'
        && style.position !== 'absolute' && style.position !== 'fixed') {
      const r = el.getBoundingClientRect(), p = parent.getBoundingClientRect();
      if (r.width > 0 && (r.right > p.right + 1 || r.left < p.left - 1))
        out.wide.push('sticks out of its parent by ' + Math.round(Math.max(r.right - p.right, p.left - r.left))
                      + ' px: ' + what(el));
    }
  }
  // the suite name, wherever it is written (also split by <wbr>): one range per character
  const texts = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode())
    for (let i = 0; i < node.data.length; i++) texts.push([node, i]);
  const all = texts.map(([node, i]) => node.data[i]).join('');
  for (let at = all.indexOf(name); at !== -1; at = all.indexOf(name, at + 1)) {
    const tops = [];
    for (let k = 0; k < name.length; k++) {
      const [node, i] = texts[at + k];
      const range = document.createRange();
      range.setStart(node, i);
      range.setEnd(node, i + 1);
      const rect = [...range.getClientRects()].find((r) => r.width > 0);
      tops.push(rect ? Math.round(rect.top) : null);
    }
    if (tops.includes(null)) continue;  // not shown (a closed <details>, a title)
    out.names += 1;
    for (let k = 1; k < name.length; k++)
      if (tops[k] !== tops[k - 1] && name[k - 1] !== '_')
        out.broken.push(what(texts[at + k][0].parentElement) + ': broken after "' + name.slice(0, k) + '"');
  }
  return out;
}
"""


@pytest.fixture(scope="module")
def demo_pages(tmp_path_factory) -> dict:
    """The demo checkpoint run on three releases: its Data Docs index, suite page and those
    releases' validation pages."""
    if not chromium_available():
        pytest.skip(SKIP_REASON)
    import io

    from support.paths import REPO

    from er_expectations.run.runner import run_checkpoint

    root = tmp_path_factory.mktemp("demo_layout")
    shutil.copytree(REPO / "suites", root / "suites")
    (root / "checkpoints").mkdir()
    text = (REPO / "checkpoints" / "patentsview.yml").read_text(encoding="utf-8")
    path = root / "checkpoints" / "patentsview.yml"
    path.write_text(text.replace("../er_expectations/data/patentsview",
                                 (REPO / "er_expectations" / "data" / "patentsview").as_posix()), encoding="utf-8")
    report = run_checkpoint(path, releases=LAYOUT_RELEASES, progress=False, out=io.StringIO())
    site = report.data_docs_index.parent
    found = {"index": report.data_docs_index, "suite": site / "expectations" / f"{DEMO_SUITE}.html"}
    found.update({label: next(site.glob(f"validations/**/*release_{label}.html")) for label in LAYOUT_RELEASES})
    return found


@pytest.fixture(scope="module")
def playwright_chromium(request):
    """Debian's chromium driven by Playwright, every host but localhost unresolvable."""
    if not chromium_available():
        pytest.skip(SKIP_REASON)
    p = request.getfixturevalue("playwright_driver")  # the session's one driver (tests/conftest.py)
    args = [flag for flag in browser.BASE_FLAGS if flag != "--headless"] + list(browser.OFFLINE_FLAGS)
    launched = p.chromium.launch(executable_path=find_chromium(), args=args, headless=True)
    yield launched
    launched.close()


@pytest.mark.browser
@requires_chromium
@pytest.mark.parametrize("width", [1000, 1400])
@pytest.mark.parametrize("name", ["index", "suite", *LAYOUT_RELEASES])
def test_demo_pages_fit_their_width_and_keep_the_suite_name_whole(demo_pages, playwright_chromium, tmp_path,
                                                                   name, width):
    context = playwright_chromium.new_context(viewport={"width": width, "height": 900})
    requested: list[str] = []
    context.route("**/*", lambda route: (requested.append(route.request.url), route.continue_())
                  if route.request.url.startswith("file://") else (requested.append(route.request.url), route.abort()))
    try:
        page = context.new_page()
        page.goto(demo_pages[name].as_uri())
        layout = page.evaluate(LAYOUT_SCRIPT, DEMO_SUITE)
        png = tmp_path / f"demo_{name}_{width}.png"
        page.screenshot(path=str(png), full_page=True)
        _keep(png)
    finally:
        context.close()
    assert [url for url in requested if not url.startswith("file://")] == []
    assert layout["client_width"] <= width
    assert layout["scroll_width"] <= layout["client_width"], layout["scroll_width"]
    assert layout["wide"] == []
    assert layout["names"] >= 1  # the suite name is on every one of these pages
    assert layout["broken"] == []
