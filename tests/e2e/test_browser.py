"""The offline Data Docs seen through headless Chromium, with every remote host blocked.

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
