"""Offline Data Docs: post-processing, the checkpoint action, escaping and atomic writes.

A tiny file context is built once per module: a pandas dataframe asset, core GX expectations, a
column whose name is ``<script>alert(1)</script>``, a data value with the same text, and two
checkpoint runs (one passing, one failing under a hostile run name) through a checkpoint with
``UpdateDataDocsAction`` + ``OfflineDataDocsAction``. No browser is needed here.
"""

from __future__ import annotations

import logging
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

import pandas as pd
import pytest

pytestmark = pytest.mark.pandas

gx = pytest.importorskip("great_expectations")

from great_expectations.checkpoint import UpdateDataDocsAction  # noqa: E402
from great_expectations.core.run_identifier import RunIdentifier  # noqa: E402
from great_expectations.data_context.types.base import ProgressBarsConfig  # noqa: E402

from er_expectations.gx import offline_docs  # noqa: E402
from er_expectations.gx.actions import OfflineDataDocsAction  # noqa: E402
from chromium import page_problems, visible_text  # noqa: E402
from er_expectations.gx.offline_docs import (  # noqa: E402
    MARKER,
    NOTE_TEXT,
    local_site_dir,
    make_site_offline,
    offline_page,
)

HOSTILE = "<script>alert(1)</script>"
# Run names become folder names, so GX forbids "/" in them: this one has no slash but is live HTML.
HOSTILE_RUN = "release_2022<img src=x onerror=alert(1)>"
GOOD_RUN = "release_2021"
SUITE = "er_offline_checks"
CHECKPOINT = "er_offline_checkpoint"

FETCH_ATTRS = ("src", "href", "srcset", "poster", "data", "action", "formaction", "background")


def _frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    good = pd.DataFrame({
        "record_id": [1, 2, 3, 4],
        "cluster_id": ["c1", "c1", "c2", "c3"],
        HOSTILE: ["a", "b", "c", "d"],
    })
    bad = pd.DataFrame({
        "record_id": [1, 2, 3, 4],
        "cluster_id": ["c1", HOSTILE, "c2", "c3"],
        HOSTILE: ["a", None, "c", "d"],
    })
    return good, bad


def build_demo_site(root: Path) -> dict:
    """File context in ``root`` with two checkpoint runs; returns what the tests need."""
    import great_expectations.expectations as gxe

    logging.getLogger("great_expectations").setLevel(logging.WARNING)
    ctx = gx.get_context(mode="file", project_root_dir=root)
    ctx.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    ctx.variables.save()
    asset = ctx.data_sources.add_pandas("frames").add_dataframe_asset("records")
    batch_definition = asset.add_batch_definition_whole_dataframe("whole_frame")
    suite = ctx.suites.add(gx.ExpectationSuite(name=SUITE))
    suite.add_expectation(gxe.ExpectColumnValuesToNotBeNull(column="record_id"))
    suite.add_expectation(gxe.ExpectColumnValuesToNotBeNull(column="cluster_id"))
    suite.add_expectation(gxe.ExpectColumnValuesToBeInSet(column="cluster_id",
                                                          value_set=["c1", "c2", "c3"]))
    suite.add_expectation(gxe.ExpectColumnValuesToNotBeNull(column=HOSTILE))
    vd = ctx.validation_definitions.add(
        gx.ValidationDefinition(name="er_offline_vd", data=batch_definition, suite=suite))
    checkpoint = ctx.checkpoints.add(gx.Checkpoint(
        name=CHECKPOINT,
        validation_definitions=[vd],
        actions=[UpdateDataDocsAction(name="update_data_docs"),
                 OfflineDataDocsAction(name="offline_data_docs")],
    ))
    good, bad = _frames()
    first = checkpoint.run(batch_parameters={"dataframe": good},
                           run_id=RunIdentifier(run_name=GOOD_RUN))
    # the second run goes through the checkpoint re-loaded from its JSON file
    reloaded = gx.get_context(project_root_dir=root)
    second = reloaded.checkpoints.get(CHECKPOINT).run(
        batch_parameters={"dataframe": bad}, run_id=RunIdentifier(run_name=HOSTILE_RUN))
    site = local_site_dir(ctx)
    pages = {}
    for result, run in ((first, GOOD_RUN), (second, HOSTILE_RUN)):
        (key,) = result.run_results
        pages[run] = site.joinpath("validations", *key.to_tuple()[:-1], key.to_tuple()[-1] + ".html")
    return {"root": root, "ctx": ctx, "site": site, "first": first, "second": second,
            "pages": pages}


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> dict:
    return build_demo_site(tmp_path_factory.mktemp("offline_docs"))


def _html_files(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))


def _snapshot(site: Path) -> dict[str, bytes]:
    return {str(p.relative_to(site)): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}


class _Fetches(HTMLParser):
    """Every URL the browser would fetch (not plain <a href> links), plus <script> tags."""

    def __init__(self) -> None:
        super().__init__()
        self.remote: list[str] = []
        self.scripts = 0
        self.handlers: list[str] = []
        self.in_style = False
        self.css: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "script":
            self.scripts += 1
        self.in_style = tag == "style"
        for name, value in attrs:
            if name.startswith("on"):
                self.handlers.append(f"<{tag} {name}={value}>")
            if name == "style":
                self.css.append(value or "")
        if tag == "a":
            return
        for name, value in attrs:
            value = (value or "").strip().lower()
            if name in FETCH_ATTRS and value.startswith(("http:", "https:", "//")):
                self.remote.append(f"<{tag} {name}={value}>")

    def handle_endtag(self, tag):
        if tag == "style":
            self.in_style = False

    def handle_data(self, data):
        if self.in_style:
            self.css.append(data)


_REMOTE_CSS = re.compile(r"url\(\s*['\"]?\s*(?:https?:)?//[^)]*\)|@import[^;]*//", re.I)


def _parse(text: str) -> _Fetches:
    parser = _Fetches()
    parser.feed(text)
    parser.close()
    return parser


def _remote_refs(text: str) -> tuple[list[str], int]:
    """Remote fetches of a page (tags, inline CSS) and its number of <script> elements."""
    parser = _parse(text)
    css = [m for chunk in parser.css for m in _REMOTE_CSS.findall(chunk)]
    return parser.remote + css, parser.scripts


# ----------------------------------------------------------------------------------------------


def test_checkpoint_round_trips_the_action(demo):
    text = (demo["root"] / "gx" / "checkpoints" / f"{CHECKPOINT}.json").read_text()
    assert '"er_offline_data_docs"' in text
    reloaded = gx.get_context(project_root_dir=demo["root"]).checkpoints.get(CHECKPOINT)
    actions = {type(a).__name__: a for a in reloaded.actions}
    assert set(actions) == {"UpdateDataDocsAction", "OfflineDataDocsAction"}
    assert actions["OfflineDataDocsAction"].site_name == "local_site"
    assert actions["OfflineDataDocsAction"].type == "er_offline_data_docs"


def test_action_run_directly(demo, tmp_path):
    action = OfflineDataDocsAction(name="offline")
    action._data_context = demo["ctx"]  # what a Checkpoint sets before running its actions
    assert action.run(checkpoint_result=None) == {"site_dir": str(demo["site"]),
                                                  "offline_pages": []}
    empty = gx.get_context(mode="file", project_root_dir=tmp_path)
    action._data_context = empty
    out = action.run(checkpoint_result=None)
    assert out["skipped"] == "site not built" and out["offline_pages"] == []


def test_runs_produced_both_pages(demo):
    assert demo["first"].success is True
    assert demo["second"].success is False
    for page in demo["pages"].values():
        assert page.is_file(), page


def test_no_external_resources_remain(demo):
    site = demo["site"]
    pages = _html_files(site)
    assert len(pages) >= 4  # index, suite page, two validation pages
    for page in pages:
        remote, scripts = _remote_refs(page.read_text(encoding="utf-8"))
        assert remote == [], f"{page.relative_to(site)} still fetches {remote}"
        assert scripts == 0, f"{page.relative_to(site)} still has <script> elements"
    for css in site.rglob("*.css"):
        remote = _REMOTE_CSS.findall(css.read_text(encoding="utf-8"))
        assert remote == [], f"{css.relative_to(site)} still fetches {remote}"


def test_every_page_has_marker_note_and_stylesheet(demo):
    for page in _html_files(demo["site"]):
        text = page.read_text(encoding="utf-8")
        assert text.count(MARKER) == 1, page
        assert "Content-Security-Policy" in text
        assert "er-offline:style" in text
        assert NOTE_TEXT in visible_text(text), page


def test_index_is_a_static_table_of_the_runs(demo):
    site = demo["site"]
    index = (site / "index.html").read_text(encoding="utf-8")
    text = visible_text(index)
    assert "Validation results" in text
    assert GOOD_RUN in text and HOSTILE_RUN in text  # the hostile run name shown as text
    assert SUITE in text
    assert "2 validation results: 1 passed, 1 failed" in text
    rows = [(status, visible_text(cells)) for status, cells
            in re.findall(r'<tr class="er-row-(\w+)">(.*?)</tr>', index, re.S)]
    assert len(rows) == 2
    good = next(row for row in rows if GOOD_RUN in row[1])
    bad = next(row for row in rows if HOSTILE_RUN in row[1])
    assert good[0] == "passed" and "✔ passed" in good[1] and "4 / 4" in good[1]
    assert bad[0] == "failed" and "✘ failed" in bad[1] and "2 / 4" in bad[1]
    assert rows[0] == bad  # newest first
    # every link of the index is relative and points at an existing page
    hrefs = re.findall(r'href="([^"]+)"', index)
    assert len(hrefs) == 3  # two validation pages and the suite page
    for href in hrefs:
        assert not href.startswith(("http", "/", "file:"))
        assert (site / unquote(href.replace("&amp;", "&"))).is_file(), href


def test_status_is_real_text_on_validation_pages(demo):
    failed = demo["pages"][HOSTILE_RUN].read_text(encoding="utf-8")
    passed = demo["pages"][GOOD_RUN].read_text(encoding="utf-8")
    assert failed.count('<span class="er-status er-fail">failed</span>') == 2
    assert failed.count('<span class="er-status er-pass">passed</span>') == 2
    assert passed.count('<span class="er-status er-pass">passed</span>') == 4
    assert 'class="er-status er-fail"' not in passed
    assert "failed" in visible_text(failed) and "passed" in visible_text(passed)


def test_hostile_text_is_escaped_and_inert(demo):
    site = demo["site"]
    for page in _html_files(site):
        text = page.read_text(encoding="utf-8")
        assert HOSTILE not in text, page
        assert "<img src=x" not in text, page
        assert _parse(text).handlers == [], page
        assert page_problems(text) == [], (page, page_problems(text))
    failed = demo["pages"][HOSTILE_RUN].read_text(encoding="utf-8")
    escaped = "&lt;script&gt;alert(1)&lt;/script&gt;"
    # column header, table of contents and the unexpected value are all shown as text
    assert failed.count(escaped) >= 3
    shown = visible_text(failed)
    assert HOSTILE in shown and HOSTILE_RUN in shown
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "release_2022&lt;img src=x onerror=alert(1)&gt;" in index


def test_second_run_is_idempotent(demo):
    site = demo["site"]
    before = _snapshot(site)
    assert make_site_offline(site, demo["ctx"]) == []
    assert make_site_offline(site, demo["ctx"]) == []
    assert _snapshot(site) == before


def test_nothing_half_written(demo):
    leftovers = [p for p in demo["root"].rglob("*") if p.name.endswith(".tmp")]
    assert leftovers == []


def _fresh_copy(demo, tmp_path) -> tuple[object, Path]:
    """A copy of the demo project whose Data Docs are rebuilt by GX (CDN pages again)."""
    root = tmp_path / "copy"
    shutil.copytree(demo["root"], root)
    ctx = gx.get_context(project_root_dir=root)
    ctx.build_data_docs()
    site = local_site_dir(ctx)
    raw = (site / "index.html").read_text(encoding="utf-8")
    assert "cdn.jsdelivr.net" in raw or "unpkg.com" in raw  # GX really wrote online pages
    return ctx, site


def test_crash_while_writing_leaves_whole_files(demo, tmp_path, monkeypatch):
    ctx, site = _fresh_copy(demo, tmp_path)
    before = _snapshot(site)
    real_replace = offline_docs.os.replace
    calls = {"n": 0}

    def flaky_replace(src, dst):
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError("disk full (simulated)")
        return real_replace(src, dst)

    monkeypatch.setattr(offline_docs.os, "replace", flaky_replace)
    with pytest.raises(OSError, match="simulated"):
        make_site_offline(site, ctx)
    monkeypatch.setattr(offline_docs.os, "replace", real_replace)
    assert [p for p in site.rglob("*") if p.name.endswith(".tmp")] == []
    after = _snapshot(site)
    assert set(after) == set(before)
    changed = [name for name in after if after[name] != before[name]]
    assert len(changed) == 2  # two files replaced whole before the failure
    for name in changed:
        assert MARKER.encode() in after[name] or name.endswith(".css")
    # a later run finishes the job
    make_site_offline(site, ctx)
    for page in _html_files(site):
        assert MARKER in page.read_text(encoding="utf-8")


def test_stale_temp_files_are_removed(demo, tmp_path):
    ctx, site = _fresh_copy(demo, tmp_path)
    stale = site / "validations" / ".er-offline-abc123.tmp"
    stale.write_text("<html>half")
    make_site_offline(site, ctx)
    assert not stale.exists()


def test_without_context_the_index_comes_from_the_pages(demo, tmp_path):
    _, site = _fresh_copy(demo, tmp_path)
    changed = make_site_offline(site)
    assert site / "index.html" in changed
    index = (site / "index.html").read_text(encoding="utf-8")
    text = visible_text(index)
    assert GOOD_RUN in text and HOSTILE_RUN in text
    assert "2 validation results: 1 passed, 1 failed" in text
    assert "4 / 4" in text and "2 / 4" in text
    for page in _html_files(site):
        body = page.read_text(encoding="utf-8")
        remote, scripts = _remote_refs(body)
        assert remote == [] and scripts == 0, page
        assert HOSTILE_RUN not in body, page  # breadcrumb and run-name cell re-escaped
        assert page_problems(body) == [], (page, page_problems(body))
    assert make_site_offline(site) == []


def test_local_site_dir(demo):
    assert local_site_dir(demo["ctx"]) == demo["site"]
    assert (demo["site"] / "index.html").is_file()
    with pytest.raises(LookupError, match="no Data Docs site named"):
        local_site_dir(demo["ctx"], "nope")


def test_missing_site_dir_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="build the docs first"):
        make_site_offline(tmp_path / "missing")


# ---- offline_page on small hand-written pages ----------------------------------------------


PAGE = """<!DOCTYPE html><html><head><title>t</title>
<link rel="stylesheet" href="https://cdn.example.org/x.css">
<link rel="icon" href="static/images/favicon.ico">
<script src="https://cdn.example.org/jquery.js"></script>
<script>$(function(){ init(); });</script>
<style>@import url("https://fonts.example.org/f.css"); .a{background:url('https://x.org/b.png')}</style>
</head><body>
<img src="https://img.example.org/logo.png?d=1&id=2" alt="The &amp; logo">
<img src='//img.example.org/other.png'>
<iframe src="https://evil.example.org/"></iframe>
<a href="https://greatexpectations.io" onclick="alert(1)">GX</a>
<a href="javascript:alert(2)">js</a>
<div style="background:url(https://x.org/c.png)">styled</div>
<p>lone <script> opener</p>
<td>url(https://kept.example.org) is data, not CSS</td>
<span><i class="fas fa-times text-danger" ></i></span>
</body></html>"""


def test_offline_page_removes_every_fetch_and_keeps_links():
    out = offline_page(PAGE)
    remote, scripts = _remote_refs(out)
    assert remote == [] and scripts == 0
    assert '<a href="https://greatexpectations.io">GX</a>' in out  # hyperlink kept, handler gone
    assert "javascript:" not in out
    assert "static/images/favicon.ico" in out  # local resources stay
    assert '<span class="er-logo">The &amp; logo</span>' in out
    assert "<iframe" not in out
    assert "&lt;script> opener" in out
    assert "url(https://kept.example.org) is data" in out  # text content is not rewritten
    assert '<span class="er-status er-fail">failed</span>' in out
    assert page_problems(out) == []
    assert offline_page(out) == out


def test_offline_page_uses_the_local_logo_when_the_site_has_it(tmp_path):
    (tmp_path / "static" / "images").mkdir(parents=True)
    (tmp_path / "static" / "images" / "logo.png").write_bytes(b"png")
    out = offline_page(PAGE, static_prefix="../../", site=tmp_path)
    assert 'src="../../static/images/logo.png"' in out
    assert offline_page(out, static_prefix="../../", site=tmp_path) == out


def test_offline_page_escapes_known_raw_strings():
    page = ("<html><head></head><body><h5>\n  <script>alert(1)</script>\n</h5>"
            "<td><div>a<b>c</div></td><td><div><br></div></td><td><div><DATAFRAME></div></td>"
            "</body></html>")
    out = offline_page(page, strings=[HOSTILE, "a<b>c", "<br>", "<DATAFRAME>"])
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in out
    assert "<div>a&lt;b&gt;c</div>" in out
    assert "<div><br></div>" in out  # a lone ordinary tag could be GX markup: left alone
    assert "<div>&lt;DATAFRAME&gt;</div>" in out  # not an element GX emits: escaped
    assert offline_page(out, strings=[HOSTILE, "a<b>c", "<br>", "<DATAFRAME>"]) == out


def test_an_expectation_that_raised_shows_as_error(tmp_path):
    import great_expectations.expectations as gxe

    ctx = gx.get_context(mode="file", project_root_dir=tmp_path)
    ctx.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    ctx.variables.save()
    batch_definition = (ctx.data_sources.add_pandas("frames").add_dataframe_asset("records")
                        .add_batch_definition_whole_dataframe("whole_frame"))
    suite = ctx.suites.add(gx.ExpectationSuite(name="broken"))
    suite.add_expectation(gxe.ExpectColumnValuesToNotBeNull(column="no_such_column"))
    vd = ctx.validation_definitions.add(
        gx.ValidationDefinition(name="broken_vd", data=batch_definition, suite=suite))
    checkpoint = ctx.checkpoints.add(gx.Checkpoint(
        name="broken_cp", validation_definitions=[vd],
        actions=[UpdateDataDocsAction(name="docs"), OfflineDataDocsAction(name="offline")]))
    checkpoint.run(batch_parameters={"dataframe": pd.DataFrame({"x": [1, 2]})},
                   run_id=RunIdentifier(run_name="broken_run"))
    text = visible_text((local_site_dir(ctx) / "index.html").read_text(encoding="utf-8"))
    assert "⚠ error" in text
    assert "1 expectation raised an error" in text
    assert "0 passed, 0 failed, 1 error" in text


# ---- severity: only a failed critical expectation fails a result ------------------------------

SEVERITY_SUITE = "er_severity_checks"
WARN_RUN = "only_warnings_fail"
CRIT_RUN = "critical_fails"


def _status_cells(page: str) -> list[tuple[str, str]]:
    """(status word, severity badge) of every expectation row of a processed validation page."""
    return re.findall(r'<span class="er-status er-\w+">(\w+)</span>'
                      r'<span class="er-sev er-sev-\w+"[^<>]*>(\w+)</span>', page)


def build_severity_site(root: Path) -> dict:
    """Two runs of a suite with a critical, a warning and an info expectation: the first fails
    only the warning one, the second also the critical one."""
    import great_expectations.expectations as gxe

    logging.getLogger("great_expectations").setLevel(logging.WARNING)
    ctx = gx.get_context(mode="file", project_root_dir=root)
    ctx.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    ctx.variables.save()
    batch_definition = (ctx.data_sources.add_pandas("frames").add_dataframe_asset("records")
                        .add_batch_definition_whole_dataframe("whole_frame"))
    suite = ctx.suites.add(gx.ExpectationSuite(name=SEVERITY_SUITE))
    suite.add_expectation(gxe.ExpectColumnValuesToNotBeNull(column="record_id"))  # critical
    suite.add_expectation(gxe.ExpectColumnValuesToBeInSet(column="cluster_id", value_set=["c1", "c2"],
                                                          severity="warning"))
    suite.add_expectation(gxe.ExpectTableRowCountToBeBetween(min_value=1, max_value=10,
                                                             severity="info"))
    vd = ctx.validation_definitions.add(
        gx.ValidationDefinition(name="severity_vd", data=batch_definition, suite=suite))
    checkpoint = ctx.checkpoints.add(gx.Checkpoint(
        name="severity_cp", validation_definitions=[vd],
        actions=[UpdateDataDocsAction(name="docs"), OfflineDataDocsAction(name="offline")]))
    warn_only = pd.DataFrame({"record_id": [1, 2, 3], "cluster_id": ["c1", "c2", "c9"]})
    critical = pd.DataFrame({"record_id": [1, None, 3], "cluster_id": ["c1", "c2", "c9"]})
    results = {}
    for run, frame in ((WARN_RUN, warn_only), (CRIT_RUN, critical)):
        results[run] = checkpoint.run(batch_parameters={"dataframe": frame},
                                      run_id=RunIdentifier(run_name=run))
    site = local_site_dir(ctx)
    pages = {}
    for run, result in results.items():
        (key,) = result.run_results
        pages[run] = site.joinpath("validations", *key.to_tuple()[:-1], key.to_tuple()[-1] + ".html")
    return {"root": root, "ctx": ctx, "site": site, "results": results, "pages": pages}


@pytest.fixture(scope="module")
def severity_site(tmp_path_factory) -> dict:
    return build_severity_site(tmp_path_factory.mktemp("severity"))


def test_gx_alone_fails_both_runs(severity_site):
    # the reason for the severity rule: GX's own success flag ignores severity
    assert [r.success for r in severity_site["results"].values()] == [False, False]


def test_index_applies_the_severity_rule(severity_site):
    index = (severity_site["site"] / "index.html").read_text(encoding="utf-8")
    rows = {status: visible_text(cells) for status, cells
            in re.findall(r'<tr class="er-row-(\w+)">(.*?)</tr>', index, re.S)}
    assert set(rows) == {"warnings", "failed"}
    assert WARN_RUN in rows["warnings"] and "⚠ passed with warnings" in rows["warnings"]
    assert CRIT_RUN in rows["failed"] and "✘ failed" in rows["failed"]
    # counts: critical failed, warning/info failed, passed / evaluated
    assert "0 1 2 / 3" in rows["warnings"]
    assert "1 1 1 / 3" in rows["failed"]
    text = visible_text(index)
    assert "2 validation results: 0 passed, 1 passed with warnings, 1 failed" in text
    assert "Critical failed" in text and "Warning / info failed" in text
    assert page_problems(index) == []


def test_validation_pages_show_severity_and_a_consistent_status(severity_site):
    warn = severity_site["pages"][WARN_RUN].read_text(encoding="utf-8")
    crit = severity_site["pages"][CRIT_RUN].read_text(encoding="utf-8")
    # GX's order on the page: table-level first, then the columns alphabetically
    assert _status_cells(warn) == [("passed", "info"), ("failed", "warning"), ("passed", "critical")]
    assert _status_cells(crit) == [("passed", "info"), ("failed", "warning"), ("failed", "critical")]
    warn_text, crit_text = visible_text(warn), visible_text(crit)
    assert "Status: Passed with warnings (1 warning/info expectation failed)" in warn_text
    assert "Status: Failed (1 critical expectation failed, 1 warning/info expectation failed)" in crit_text
    assert "Severity rule:" in warn_text
    for page in (warn, crit):
        assert page.count("<!-- er-overall -->") == 1
        assert page_problems(page) == []


def test_severity_markup_is_idempotent(severity_site):
    from er_expectations.gx.offline_docs import PageVerdict

    page = severity_site["pages"][WARN_RUN].read_text(encoding="utf-8")
    verdict = PageVerdict("warnings", 0, 1, 0,
                          ((True, "info"), (False, "warning"), (True, "critical")))
    assert offline_page(page, verdict=verdict) == page
    # a verdict that does not match the page's status icons adds no badge at all
    wrong = PageVerdict("warnings", 0, 1, 0, ((True, "info"), (True, "warning"), (True, "critical")))
    assert _status_cells(offline_page(page, verdict=wrong)) == []


def test_index_without_context_keeps_the_severity_status(severity_site, tmp_path):
    site = tmp_path / "site"
    shutil.copytree(severity_site["site"], site)
    make_site_offline(site)  # read back from the processed pages
    text = visible_text((site / "index.html").read_text(encoding="utf-8"))
    assert "2 validation results: 0 passed, 1 passed with warnings, 1 failed" in text


# ---- the index cache: stored results are read once ---------------------------------------------


def _count_reads(monkeypatch, ctx) -> dict:
    store = ctx.validation_results_store
    backend = store.store_backend
    reads = {"backend": 0, "store": 0}

    def counting(name, real):
        def wrapper(*args, **kwargs):
            reads[name] += 1
            return real(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(backend, "get", counting("backend", backend.get))
    monkeypatch.setattr(store, "get", counting("store", store.get))
    return reads


def test_second_run_reuses_cached_rows(demo, tmp_path, monkeypatch):
    ctx, site = _fresh_copy(demo, tmp_path)
    make_site_offline(site, ctx)
    cache = site / ".er-offline-index-cache.json"
    assert cache.is_file()
    assert len(offline_docs.json.loads(cache.read_text(encoding="utf-8"))["rows"]) == 2
    reads = _count_reads(monkeypatch, ctx)

    def no_page_work(*args, **kwargs):
        raise AssertionError("a page carrying the marker was processed again")

    monkeypatch.setattr(offline_docs, "offline_page", no_page_work)
    before = _snapshot(site)
    assert make_site_offline(site, ctx) == []
    assert reads == {"backend": 0, "store": 0}
    assert _snapshot(site) == before  # the cache is not rewritten either


def test_a_changed_result_file_is_read_again(demo, tmp_path, monkeypatch):
    ctx, site = _fresh_copy(demo, tmp_path)
    make_site_offline(site, ctx)
    (key,) = [k for k in ctx.validation_results_store.list_keys() if k.run_id.run_name == HOSTILE_RUN]
    backend = ctx.validation_results_store.store_backend
    path = Path(backend.full_base_directory) / backend._convert_key_to_filepath(key.to_tuple())
    doc = offline_docs.json.loads(path.read_text(encoding="utf-8"))
    for result in doc["results"]:
        if not result["success"]:
            result["expectation_config"]["severity"] = "warning"
    path.write_text(offline_docs.json.dumps(doc), encoding="utf-8")
    reads = _count_reads(monkeypatch, ctx)
    assert make_site_offline(site, ctx) == [site / "index.html"]
    assert reads == {"backend": 1, "store": 0}
    text = visible_text((site / "index.html").read_text(encoding="utf-8"))
    assert "2 validation results: 1 passed, 1 passed with warnings, 0 failed" in text


def test_a_broken_cache_is_rebuilt(demo, tmp_path, monkeypatch):
    ctx, site = _fresh_copy(demo, tmp_path)
    cache = site / ".er-offline-index-cache.json"
    cache.write_text("{not json", encoding="utf-8")
    make_site_offline(site, ctx)
    assert "2 validation results: 1 passed, 1 failed" in visible_text(
        (site / "index.html").read_text(encoding="utf-8"))
    assert offline_docs.json.loads(cache.read_text(encoding="utf-8"))["version"]
    reads = _count_reads(monkeypatch, ctx)
    make_site_offline(site, ctx)
    assert reads == {"backend": 0, "store": 0}


def test_page_order_follows_gx_layout():
    def res(kind, column=None, observed=None, severity=None):
        kwargs = {"column": column} if column is not None else {}
        config = {"type": kind, "kwargs": kwargs}
        if severity:
            config["severity"] = severity
        return {"expectation_config": config, "success": True,
                "result": {"observed_value": observed} if observed is not None else {}}

    b, a = res("expect_b", "b"), res("expect_a", "a", severity="info")
    table = res("expect_table_row_count_to_be_between")
    # table-level first, then the columns alphabetically
    assert offline_docs._page_order([b, a, table]) == [table, a, b]
    # ... or in the order the ordered-column-list expectation observed
    listed = res("expect_table_columns_to_match_ordered_list", observed=["b", "a"])
    assert offline_docs._page_order([a, listed, b]) == [listed, b, a]
    verdict = offline_docs._verdict({"results": [b, a, table]})
    assert verdict.status == "passed"
    assert verdict.expectations == ((True, "critical"), (True, "info"), (True, "critical"))
