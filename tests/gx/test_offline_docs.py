"""Offline Data Docs built through GX's site extension points: the site configuration, the
checkpoint action, the pages and the index, escaping of hostile text, the index cache.

A tiny file context is built once per module: a pandas dataframe asset, core GX expectations, a
column whose name is ``<script>alert(1)</script>``, a data value with the same text, and two
checkpoint runs (one passing, one failing under a hostile run name) through a checkpoint with
``UpdateDataDocsAction`` + ``OfflineDataDocsAction``. No browser is needed here.
"""

from __future__ import annotations

import copy
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
from support.chromium import page_problems, visible_text  # noqa: E402
from support.datadocs import (  # noqa: E402
    CHECKPOINT,
    CRIT_RUN,
    GOOD_RUN,
    HOSTILE,
    HOSTILE_RUN,
    PAYLOADS,
    SUITE,
    WARN_RUN,
    build_demo_site,
    build_severity_site,
    parse_fetches,
    remote_refs,
)

from er_expectations.gx.actions import OfflineDataDocsAction  # noqa: E402
from er_expectations.gx.docs import data_docs  # noqa: E402
from er_expectations.gx.docs.data_docs import (  # noqa: E402
    CSP,
    NOTE_TEXT,
    configure_site,
    local_site_dir,
    render_string_template,
    verdict_of,
    write_index,
)


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> dict:
    return build_demo_site(tmp_path_factory.mktemp("offline_docs"))


def _html_files(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))


def _snapshot(site: Path) -> dict[str, bytes]:
    return {str(p.relative_to(site)): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}


def _write_test_site_config(root: Path, site: dict) -> None:
    """Put ``site`` back as the project's local_site in great_expectations.yml (old-kind sites)."""
    from ruamel.yaml import YAML

    yaml = YAML(typ="safe", pure=True)
    path = root / "gx" / "great_expectations.yml"
    config = yaml.load(path.read_text(encoding="utf-8"))
    config["data_docs_sites"]["local_site"] = site
    with path.open("w", encoding="utf-8") as handle:
        yaml.dump(config, handle)


GX_DEFAULT_SITE = {"class_name": "SiteBuilder", "show_how_to_buttons": True,
                   "store_backend": {"class_name": "TupleFilesystemStoreBackend",
                                     "base_directory": "uncommitted/data_docs/local_site/"},
                   "site_index_builder": {"class_name": "DefaultSiteIndexBuilder"}}


# ---- the site configuration and the action -----------------------------------------------------


def test_checkpoint_round_trips_the_action(demo):
    text = (demo["root"] / "gx" / "checkpoints" / f"{CHECKPOINT}.json").read_text()
    assert '"er_offline_data_docs"' in text
    reloaded = gx.get_context(project_root_dir=demo["root"]).checkpoints.get(CHECKPOINT)
    actions = {type(a).__name__: a for a in reloaded.actions}
    assert set(actions) == {"UpdateDataDocsAction", "OfflineDataDocsAction"}
    assert actions["OfflineDataDocsAction"].site_name == "local_site"
    assert actions["OfflineDataDocsAction"].type == "er_offline_data_docs"


def test_the_site_is_configured_with_our_view_renderer_and_index_builder(demo):
    from er_expectations.config.yamlnodes import read_yaml

    config = read_yaml((demo["root"] / "gx" / "great_expectations.yml").read_text())
    site = config["data_docs_sites"]["local_site"]
    module = "er_expectations.gx.docs.data_docs"
    assert site["site_index_builder"] == {"module_name": module, "class_name": "OfflineSiteIndexBuilder"}
    sections = site["site_section_builders"]
    for name in ("expectations", "validations", "profiling"):
        assert sections[name]["view"] == {"module_name": module, "class_name": "OfflinePageView"}
    assert sections["validations"]["renderer"]["class_name"] == "SeverityValidationResultsPageRenderer"
    assert site["store_backend"] == {"class_name": "AtomicSiteStoreBackend",
                                     "module_name": "er_expectations.gx.docs.site_store",
                                     "base_directory": "uncommitted/data_docs/local_site/"}
    assert configure_site(demo["ctx"]) is False  # already ours: nothing to change


def test_configure_site_keeps_the_store_and_adds_a_missing_site(tmp_path):
    ctx = gx.get_context(mode="file", project_root_dir=tmp_path)
    custom = dict(GX_DEFAULT_SITE, store_backend={"class_name": "TupleFilesystemStoreBackend",
                                                  "base_directory": "elsewhere/docs/"})
    ctx.update_data_docs_site("local_site", custom)
    assert configure_site(ctx) is True
    assert configure_site(ctx) is False
    site = gx.get_context(project_root_dir=tmp_path).variables.data_docs_sites["local_site"]
    assert site["store_backend"]["base_directory"] == "elsewhere/docs/"
    assert site["site_index_builder"]["class_name"] == "OfflineSiteIndexBuilder"
    assert configure_site(ctx, "second_site") is True
    assert local_site_dir(ctx, "second_site").parts[-3:] == ("uncommitted", "data_docs", "local_site")


def test_action_run_directly(demo, tmp_path):
    action = OfflineDataDocsAction(name="offline")
    action.bind(demo["ctx"])  # an action run outside a checkpoint
    before = _snapshot(demo["site"])
    assert action.run(checkpoint_result=None) == {"site_dir": str(demo["site"]), "rebuilt": False}
    assert _snapshot(demo["site"]) == before
    # build=True with no result to build writes the index only (GX reads [] as "everything")
    action.build = True
    assert action.run(checkpoint_result=None) == {"site_dir": str(demo["site"]), "rebuilt": False}
    assert _snapshot(demo["site"]) == before
    action.build = False
    # a new project: the site is configured and built (an empty index)
    empty = gx.get_context(mode="file", project_root_dir=tmp_path)
    action.bind(empty)
    out = action.run(checkpoint_result=None)
    assert out["rebuilt"] is True
    text = visible_text((Path(out["site_dir"]) / "index.html").read_text(encoding="utf-8"))
    assert "No validation results yet." in text and "0 validation results" in text


def test_runs_produced_both_pages(demo):
    assert demo["first"].success is True
    assert demo["second"].success is False
    for page in demo["pages"].values():
        assert page.is_file(), page


# ---- the pages ----------------------------------------------------------------------------------


def test_no_external_resources_remain(demo):
    site = demo["site"]
    pages = _html_files(site)
    assert len(pages) >= 4  # index, suite page, two validation pages
    for page in pages:
        text = page.read_text(encoding="utf-8")
        remote, scripts = remote_refs(text)
        assert remote == [], f"{page.relative_to(site)} still fetches {remote}"
        assert scripts == 0, f"{page.relative_to(site)} still has <script> elements"
        # the only stylesheet is inline: GX's static CSS (copied by GX) is never loaded
        assert "<link" not in text and "<img" not in text, page


def test_every_page_has_the_policy_note_and_stylesheet(demo):
    for page in _html_files(demo["site"]):
        text = page.read_text(encoding="utf-8")
        policies = [attrs.get("content") for tag, attrs in _tags(text).tags
                    if tag == "meta" and attrs.get("http-equiv") == "Content-Security-Policy"]
        assert policies == [CSP], page
        assert "default-src 'none'" in CSP and "script-src" not in CSP
        assert text.count("<style>") == 1 and ".er-status" in text
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
    hrefs = [h for h in re.findall(r'href="([^"]+)"', index) if h != "index.html"]
    assert len(hrefs) == 3  # two validation pages and the suite page
    for href in hrefs:
        assert not href.startswith(("http", "/", "file:"))
        assert (site / unquote(href.replace("&amp;", "&"))).is_file(), href


def test_a_result_without_a_page_is_listed_as_not_built(demo, tmp_path):
    root = tmp_path / "copy"
    shutil.copytree(demo["root"], root)
    ctx = gx.get_context(project_root_dir=root)
    site = local_site_dir(ctx)
    (key,) = [k for k in ctx.validation_results_store.list_keys() if k.run_id.run_name == GOOD_RUN]
    page = site.joinpath("validations", *key.to_tuple()[:-1], key.to_tuple()[-1] + ".html")
    page.unlink()
    assert data_docs.results_without_pages(ctx, site) == [key]
    write_index(ctx)
    index = (site / "index.html").read_text(encoding="utf-8")
    row = next(visible_text(cells) for cells in re.findall(r"<tr class=\"er-row-\w+\">(.*?)</tr>",
                                                           index, re.S) if GOOD_RUN in visible_text(cells))
    assert row.endswith("not built")
    # the next build of the action heals it
    action = OfflineDataDocsAction(name="offline", build=True)
    action.bind(ctx)
    action.run(checkpoint_result=demo["second"])
    assert page.is_file() and data_docs.results_without_pages(ctx, site) == []


def test_index_of_a_site_not_on_this_filesystem_links_without_checking(demo):
    index = data_docs.index_html(demo["ctx"], data_docs._REMOTE_SITE)
    hrefs = [h for h in re.findall(r'href="([^"]+)"', index) if h != "index.html"]
    local = (demo["site"] / "index.html").read_text(encoding="utf-8")
    assert sorted(hrefs) == sorted(h for h in re.findall(r'href="([^"]+)"', local) if h != "index.html")


def test_status_is_real_text_on_validation_pages(demo):
    failed = demo["pages"][HOSTILE_RUN].read_text(encoding="utf-8")
    passed = demo["pages"][GOOD_RUN].read_text(encoding="utf-8")
    assert failed.count('<span class="er-status er-fail">failed</span>') == 2
    assert failed.count('<span class="er-status er-pass">passed</span>') == 2
    assert passed.count('<span class="er-status er-pass">passed</span>') == 4
    assert 'class="er-status er-fail"' not in passed
    assert "failed" in visible_text(failed) and "passed" in visible_text(passed)
    # the CSS-only "failed only" filter hides rows by their class
    assert len(re.findall(r'<tr class="er-row-passed">', failed)) == 2
    assert 'id="er-failed-only"' in failed


def test_hostile_text_is_escaped_and_inert(demo):
    site = demo["site"]
    for page in _html_files(site):
        text = page.read_text(encoding="utf-8")
        assert HOSTILE not in text, page
        assert "<img src=x" not in text, page
        assert parse_fetches(text).handlers == [], page
        assert page_problems(text) == [], (page, page_problems(text))
    failed = demo["pages"][HOSTILE_RUN].read_text(encoding="utf-8")
    escaped = "&lt;script&gt;alert(1)&lt;/script&gt;"
    # column header, table of contents and the unexpected value are all shown as text
    assert failed.count(escaped) >= 3
    shown = visible_text(failed)
    assert HOSTILE in shown and HOSTILE_RUN in shown
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "release_2022&lt;img src=x onerror=alert(1)&gt;" in index


def test_building_again_changes_nothing(demo):
    site = demo["site"]
    before = _snapshot(site)
    demo["ctx"].build_data_docs()
    assert _snapshot(site) == before


def test_nothing_half_written(demo):
    leftovers = [p for p in demo["root"].rglob("*") if p.name.endswith(".tmp")]
    assert leftovers == []


def _old_kind_copy(demo, tmp_path) -> tuple[object, Path]:
    """A copy of the demo project whose site is GX's default again, rebuilt by GX (CDN pages)."""
    root = tmp_path / "copy"
    shutil.copytree(demo["root"], root)
    _write_test_site_config(root, GX_DEFAULT_SITE)
    ctx = gx.get_context(project_root_dir=root)
    ctx.build_data_docs()
    site = local_site_dir(ctx)
    raw = (site / "index.html").read_text(encoding="utf-8")
    assert "cdn.jsdelivr.net" in raw or "unpkg.com" in raw  # GX really wrote online pages
    return ctx, site


def test_an_old_kind_site_is_reconfigured_and_rebuilt_once(demo, tmp_path):
    ctx, site = _old_kind_copy(demo, tmp_path)
    action = OfflineDataDocsAction(name="offline")
    action.bind(ctx)
    assert action.run(checkpoint_result=None)["rebuilt"] is True
    for page in _html_files(site):
        text = page.read_text(encoding="utf-8")
        assert remote_refs(text) == ([], 0), page
        assert "Content-Security-Policy" in text, page
    assert action.run(checkpoint_result=None)["rebuilt"] is False


#: The module paths er-expectations 0.2.0 and earlier wrote into great_expectations.yml (the site's
#: classes moved into er_expectations.gx.docs after 0.2.0; the modules at these paths stay).
FORMER_MODULES = {"er_expectations.gx.docs.data_docs": "er_expectations.gx.data_docs",
                  "er_expectations.gx.docs.site_store": "er_expectations.gx.site_store"}


def _module_names(value) -> list[str]:
    if isinstance(value, dict):
        return [v for k, v in value.items() if k == "module_name"] + \
            [n for v in value.values() for n in _module_names(v)]
    return []


def test_a_site_configured_by_0_2_0_builds_through_the_former_module_paths(demo, tmp_path):
    """A project written by er-expectations 0.2.0 names the site's classes by their former module
    paths: GX loads them there (its own loader, its own build) and writes the same pages; the next
    configure_site (every run, the action) writes the current paths without rebuilding the site."""
    from great_expectations.data_context.util import instantiate_class_from_config
    from great_expectations.util import load_class

    from er_expectations.config.yamlnodes import read_yaml
    from er_expectations.gx.docs import site_store

    root = tmp_path / "copy"
    shutil.copytree(demo["root"], root)
    config_file = root / "gx" / "great_expectations.yml"
    current = read_yaml(config_file.read_text(encoding="utf-8"))["data_docs_sites"]["local_site"]
    assert set(_module_names(current)) == set(FORMER_MODULES)
    former = copy.deepcopy(current)
    for config in [former["store_backend"], former["site_index_builder"],
                   *(part for section in former["site_section_builders"].values() for part in section.values())]:
        module = config["module_name"]
        config["module_name"] = FORMER_MODULES[module]
        assert load_class(config["class_name"], config["module_name"]) is load_class(config["class_name"], module)
    assert set(_module_names(former)) == set(FORMER_MODULES.values())
    _write_test_site_config(root, former)

    ctx = gx.get_context(project_root_dir=root)
    site = local_site_dir(ctx)
    pages = {path: text for path, text in _snapshot(site).items() if path.endswith(".html")}
    shutil.rmtree(site)
    ctx.build_data_docs()  # GX alone, through the paths of great_expectations.yml
    assert {path: text for path, text in _snapshot(site).items() if path.endswith(".html")} == pages
    backend = instantiate_class_from_config(former["store_backend"], {"root_directory": str(root / "gx")})
    assert type(backend) is site_store.AtomicSiteStoreBackend

    assert configure_site(ctx) is False  # the same classes wrote the pages: nothing to rebuild
    written = read_yaml(config_file.read_text(encoding="utf-8"))["data_docs_sites"]["local_site"]
    assert written == current
    action = OfflineDataDocsAction(name="offline")
    action.bind(gx.get_context(project_root_dir=root))
    assert action.run(checkpoint_result=None)["rebuilt"] is False


def test_a_crash_while_writing_the_index_leaves_the_old_one(demo, tmp_path, monkeypatch):
    import er_expectations.core.io as erio

    root = tmp_path / "copy"
    shutil.copytree(demo["root"], root)
    ctx = gx.get_context(project_root_dir=root)
    site = local_site_dir(ctx)
    (site / "index.html").write_text("old index", encoding="utf-8")

    def failing_replace(src, dst):
        raise OSError("disk full (simulated)")

    monkeypatch.setattr(erio.os, "replace", failing_replace)
    with pytest.raises(OSError, match="simulated"):
        write_index(ctx)
    monkeypatch.undo()
    assert (site / "index.html").read_text(encoding="utf-8") == "old index"
    assert [p for p in site.rglob("*") if p.name.endswith(".tmp")] == []
    write_index(ctx)
    assert "2 validation results" in visible_text((site / "index.html").read_text(encoding="utf-8"))


def test_local_site_dir(demo):
    assert local_site_dir(demo["ctx"]) == demo["site"]
    assert (demo["site"] / "index.html").is_file()
    with pytest.raises(LookupError, match="no Data Docs site named"):
        local_site_dir(demo["ctx"], "nope")


# ---- escaping by construction: hostile strings in every position ------------------------------

ALLOWED_TAGS = {"span", "div", "p", "h1", "h2", "h3", "h4", "h5", "h6", "i", "b", "strong", "em",
                "code", "pre", "small", "li", "ul", "ol", "a", "u", "sub", "sup", "br"}


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.comments: list[str] = []
        self.repeated: list[str] = []  # an attribute given twice in one tag

    def handle_starttag(self, tag, attrs):
        names = [name for name, _ in attrs]
        self.repeated += [n for n in set(names) if names.count(n) > 1]
        self.tags.append((tag, dict(attrs)))

    def handle_comment(self, data):
        self.comments.append(data)

    def unknown_decl(self, data):
        self.comments.append(data)


def _tags(markup: str) -> _Tags:
    parser = _Tags()
    parser.feed(markup)
    parser.close()
    return parser


def _assert_inert(markup: str) -> _Tags:
    parsed = _tags(markup)
    assert parsed.comments == [] and parsed.repeated == [], markup
    for tag, attrs in parsed.tags:
        assert tag in ALLOWED_TAGS, markup
        assert set(attrs) <= {"class", "title", "href", "role", "aria-hidden"}, markup
        href = attrs.get("href")
        if href is not None:
            assert ":" not in href.split("/")[0] and not href.startswith(("/", "\\")), markup
            assert not re.search(r"[\s\"'<>`]", href), markup
    return parsed


@pytest.mark.parametrize("payload", PAYLOADS)
def test_a_hostile_parameter_or_template_text_is_shown_as_text(payload):
    for st in ({"template": "value: $v", "params": {"v": payload}},
               {"template": "value: $v", "params": {"v": payload},
                "styling": {"default": {"classes": ["badge"]}}},
               {"template": "value: " + payload.replace("$", "$$")},
               {"template": "value: ${v}", "params": {"v": payload}, "tag": "h6"}):
        out = str(render_string_template(st))
        _assert_inert(out)
        assert visible_text(out) == "value: " + payload


@pytest.mark.parametrize("payload", PAYLOADS)
def test_hostile_styling_cannot_add_elements_or_attributes(payload):
    st = {"template": "$v", "params": {"v": "cell", "html_success_icon": payload},
          "tag": payload, "tooltip": {"content": payload},
          "styling": {"classes": [payload, "ok-class"],
                      "attributes": {"title": payload, "href": payload, "onclick": "alert(1)",
                                     "style": "background:url(https://evil.example.org/)",
                                     payload: "x", "src": "https://evil.example.org/x.png"},
                      "params": {"v": {"tag": "a", "classes": [payload],
                                       "attributes": {"href": payload, "title": payload}}}}}
    out = str(render_string_template(st))
    parsed = _assert_inert(out)
    assert visible_text(out) == "cell"
    outer = parsed.tags[0]
    assert outer[0] == "span" and outer[1]["class"] == "ok-class"
    assert outer[1]["title"] == payload  # round-trips exactly: the attribute was not broken out of


@pytest.mark.parametrize(("href", "kept"), [
    ("javascript:alert(1)", None), ("JaVaScRiPt:alert(1)", None), (" javascript:alert(1)", None),
    ("java\tscript:alert(1)", None), ("&#106;avascript:alert(1)", None), ("data:text/html,x", None),
    ("vbscript:x", None), ("//evil.example.org/x", None), ("https://evil.example.org/", None),
    ("/etc/passwd", None), ("\\\\evil\\x", None),
    ("../../expectations/s.html", "../../expectations/s.html"),
    ('../a"b<c> d.html', "../a%22b%3Cc%3E%20d.html"), ("#section-1", "#section-1"),
])
def test_only_relative_links_survive(href, kept):
    out = str(render_string_template({"template": "$v", "params": {"v": "x"}, "styling": {
        "params": {"v": {"tag": "a", "attributes": {"href": href}}}}}))
    hrefs = [a.get("href") for tag, a in _tags(out).tags if tag == "a"]
    assert hrefs == ([kept] if kept else [])
    assert visible_text(out) == "x"


def test_the_page_view_escapes_titles_sections_blocks_and_notes():
    from great_expectations.render import (
        CollapseContent,
        RenderedDocumentContent,
        RenderedGraphContent,
        RenderedMarkdownContent,
        RenderedSectionContent,
        RenderedStringTemplateContent,
        RenderedTableContent,
    )

    def st(text):
        return RenderedStringTemplateContent(content_block_type="string_template",
                                             string_template={"template": "$t", "params": {"t": text}})

    blocks = [
        RenderedTableContent(header=st(PAYLOADS[0]), header_row=[PAYLOADS[1], st(PAYLOADS[2])],
                             table=[[PAYLOADS[3], st(PAYLOADS[4]), 12.5], [st(PAYLOADS[7]), None, 0]]),
        CollapseContent(collapse_toggle_link=PAYLOADS[8], collapse=[RenderedMarkdownContent(
            markdown="\n\n".join(PAYLOADS[9:]))]),
        RenderedGraphContent(graph={"$schema": PAYLOADS[5]}, header=st(PAYLOADS[6])),
    ]
    doc = RenderedDocumentContent(
        sections=[RenderedSectionContent(content_blocks=blocks, section_name=PAYLOADS[8])],
        renderer_type="ValidationResultsPageRenderer", page_title=PAYLOADS[8],
        expectation_suite_name="suite")
    page = data_docs.OfflinePageView().render(doc)
    assert remote_refs(page) == ([], 0)
    assert parse_fetches(page).handlers == [] and page_problems(page) == []
    assert page.count("<title>") == 1 and "<title>&lt;/title&gt;&lt;script&gt;" in page
    shown = visible_text(page)
    for payload in PAYLOADS[:9]:
        assert payload in shown, payload
    # markdown (notes) is decoded once, as markdown would, and shown as text
    assert "&lt;script&gt;" not in shown and "<script>alert(1)</script>" in shown
    assert "chart not shown" in shown
    assert 'href="../../../../index.html"' in page  # the way home from a validation page


# ---- a hostile ER project: names, notes, cluster ids and columns flow into the pages -----------

HOSTILE_SUITE = "er_<svg onload=alert(1)>"
HOSTILE_PRED = '<img title="a>b" src="https://evil.example.org/x.png">'
HOSTILE_REF = '<div title="x>y" onmouseover=alert(1)>'
HOSTILE_NOTE = "Note with </title><script>alert(1)</script> and `x` & \"q\" 'a'"
HOSTILE_CLUSTERS = ["</title><script>alert(1)</script>", "<svg onload=alert(1)>",
                    '" onmouseover="alert(1)', "javascript:alert(1)"]


@pytest.fixture(scope="module")
def hostile_er(tmp_path_factory) -> dict:
    import er_expectations.gx.expectations as erx_gx

    root = tmp_path_factory.mktemp("hostile_er")
    logging.getLogger("great_expectations").setLevel(logging.WARNING)
    ctx = gx.get_context(mode="file", project_root_dir=root)
    ctx.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    ctx.variables.save()
    batch_definition = (ctx.data_sources.add_pandas("frames").add_dataframe_asset("records")
                        .add_batch_definition_whole_dataframe("whole_frame"))
    suite = ctx.suites.add(gx.ExpectationSuite(name=HOSTILE_SUITE))
    suite.add_expectation(erx_gx.ExpectEstimatedPairwisePrecisionToBeBetween(
        prediction_column=HOSTILE_PRED, reference_column=HOSTILE_REF, weights="uniform",
        min_value=0.99, notes=HOSTILE_NOTE))
    vd = ctx.validation_definitions.add(
        gx.ValidationDefinition(name="hostile_vd", data=batch_definition, suite=suite))
    checkpoint = ctx.checkpoints.add(gx.Checkpoint(
        name="hostile_cp", validation_definitions=[vd],
        actions=[UpdateDataDocsAction(name="docs"), OfflineDataDocsAction(name="offline")]))
    refs = [c for c in HOSTILE_CLUSTERS for _ in range(3)]
    frame = pd.DataFrame({HOSTILE_PRED: ["p1"] * 6 + ["p2"] * 6, HOSTILE_REF: refs})
    result = checkpoint.run(batch_parameters={"dataframe": frame},
                            run_id=RunIdentifier(run_name="hostile_er_run"))
    site = local_site_dir(ctx)
    (key,) = result.run_results
    page = site.joinpath("validations", *key.to_tuple()[:-1], key.to_tuple()[-1] + ".html")
    return {"ctx": ctx, "site": site, "result": result, "page": page}


def test_hostile_names_notes_clusters_and_columns_are_text(hostile_er):
    site = hostile_er["site"]
    assert hostile_er["result"].success is False
    pages = _html_files(site)
    assert hostile_er["page"] in pages and len(pages) >= 3
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert remote_refs(text) == ([], 0), page
        assert parse_fetches(text).handlers == [], page
        assert page_problems(text) == [], (page, page_problems(text))
        assert "<svg" not in text and "<img" not in text and "<div title" not in text, page
    shown = visible_text(hostile_er["page"].read_text(encoding="utf-8"))
    for needle in (HOSTILE_SUITE, HOSTILE_PRED, HOSTILE_REF, HOSTILE_NOTE):
        assert needle in shown, needle
    assert sum(c in shown for c in HOSTILE_CLUSTERS) >= 2  # the table of top clusters
    assert "Sampled clusters that contribute most to the error" in shown
    index = visible_text((site / "index.html").read_text(encoding="utf-8"))
    assert HOSTILE_SUITE in index and "✘ failed" in index
    suite_page = next(p for p in pages if p.parent.name == "expectations")
    assert HOSTILE_NOTE in visible_text(suite_page.read_text(encoding="utf-8"))


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
    result = checkpoint.run(batch_parameters={"dataframe": pd.DataFrame({"x": [1, 2]})},
                            run_id=RunIdentifier(run_name="broken_run"))
    site = local_site_dir(ctx)
    text = visible_text((site / "index.html").read_text(encoding="utf-8"))
    assert "⚠ error" in text
    assert "1 expectation raised an error" in text
    assert "0 passed, 0 failed, 1 error" in text
    (key,) = result.run_results
    page = site.joinpath("validations", *key.to_tuple()[:-1], key.to_tuple()[-1] + ".html")
    html_text = page.read_text(encoding="utf-8")
    assert '<span class="er-status er-error">error</span>' in html_text
    assert "Status: Error (1 expectation raised an error)" in visible_text(html_text)


# ---- severity: only a failed critical expectation fails a result ------------------------------

def _status_cells(page: str) -> list[tuple[str, str]]:
    """(status word, severity badge) of every expectation row of a validation page."""
    return re.findall(r'<span class="er-status er-\w+">(\w+)</span>'
                      r'<span class="er-sev er-sev-\w+"[^<>]*>(\w+)</span>', page)


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
        assert page.count('class="er-overall ') == 1
        assert page_problems(page) == []


def test_verdict_of_hand_worked_results():
    def res(success, severity=None, raised=False):
        config = {"type": "expect_x", "kwargs": {}}
        if severity:
            config["severity"] = severity
        info = {"raised_exception": raised}
        return {"expectation_config": config, "success": success, "exception_info": info}

    assert verdict_of({"results": [res(True), res(True, "info")]}).status == "passed"
    v = verdict_of({"results": [res(True), res(False, "warning"), res(False, "info")]})
    assert (v.status, v.critical_failed, v.warnings_failed, v.errors) == ("warnings", 0, 2, 0)
    v = verdict_of({"results": [res(False), res(False, "warning"), res(False, "bogus")]})
    assert (v.status, v.critical_failed, v.warnings_failed) == ("failed", 2, 1)  # unknown = critical
    v = verdict_of({"results": [res(False, "info", raised=True), res(False, "warning")]})
    assert (v.status, v.errors, v.warnings_failed) == ("error", 1, 1)
    assert v.details() == "1 warning/info expectation failed, 1 expectation raised an error"
    # GX 1.x nests the exception per metric
    nested = res(False, "info")
    nested["exception_info"] = {"('m', (), ())": {"raised_exception": True}}
    assert verdict_of({"results": [nested]}).status == "error"
    assert verdict_of({"results": [], "success": False}).status == "failed"


def test_verdict_of_gx_objects_matches_their_json(severity_site):
    seen = []
    for result in severity_site["results"].values():
        for validation in result.run_results.values():
            seen.append(verdict_of(validation).status)
            assert verdict_of(validation) == verdict_of(validation.to_json_dict())
    assert seen == ["warnings", "failed"]


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


def _copy(demo, tmp_path) -> tuple[object, Path]:
    """A copy of the demo project with its index (and cache) written for the copied files."""
    root = tmp_path / "copy"
    shutil.copytree(demo["root"], root)
    ctx = gx.get_context(project_root_dir=root)
    write_index(ctx)
    return ctx, local_site_dir(ctx)


def test_second_index_reuses_cached_rows(demo, tmp_path, monkeypatch):
    ctx, site = _copy(demo, tmp_path)
    cache = site / ".er-index-cache.json"
    assert cache.is_file()
    assert len(data_docs.json.loads(cache.read_text(encoding="utf-8"))["rows"]) == 2
    reads = _count_reads(monkeypatch, ctx)
    before = _snapshot(site)
    write_index(ctx)
    assert reads == {"backend": 0, "store": 0}
    assert _snapshot(site) == before  # neither the index nor the cache is rewritten


def test_a_changed_result_file_is_read_again(demo, tmp_path, monkeypatch):
    ctx, site = _copy(demo, tmp_path)
    (key,) = [k for k in ctx.validation_results_store.list_keys() if k.run_id.run_name == HOSTILE_RUN]
    backend = ctx.validation_results_store.store_backend
    path = Path(backend.full_base_directory) / backend._convert_key_to_filepath(key.to_tuple())
    doc = data_docs.json.loads(path.read_text(encoding="utf-8"))
    for result in doc["results"]:
        if not result["success"]:
            result["expectation_config"]["severity"] = "warning"
    path.write_text(data_docs.json.dumps(doc), encoding="utf-8")
    reads = _count_reads(monkeypatch, ctx)
    write_index(ctx)
    assert reads == {"backend": 1, "store": 0}
    text = visible_text((site / "index.html").read_text(encoding="utf-8"))
    assert "2 validation results: 1 passed, 1 passed with warnings, 0 failed" in text


def test_a_broken_cache_is_rebuilt(demo, tmp_path, monkeypatch):
    ctx, site = _copy(demo, tmp_path)
    cache = site / ".er-index-cache.json"
    cache.write_text("{not json", encoding="utf-8")
    write_index(ctx)
    assert "2 validation results: 1 passed, 1 failed" in visible_text(
        (site / "index.html").read_text(encoding="utf-8"))
    assert data_docs.json.loads(cache.read_text(encoding="utf-8"))["version"]
    reads = _count_reads(monkeypatch, ctx)
    write_index(ctx)
    assert reads == {"backend": 0, "store": 0}


def test_an_unreadable_result_is_an_error_row_and_the_others_stay(demo, tmp_path):
    ctx, site = _copy(demo, tmp_path)
    (key,) = [k for k in ctx.validation_results_store.list_keys() if k.run_id.run_name == GOOD_RUN]
    backend = ctx.validation_results_store.store_backend
    path = Path(backend.full_base_directory) / backend._convert_key_to_filepath(key.to_tuple())
    path.write_text("{truncated", encoding="utf-8")
    write_index(ctx)
    text = visible_text((site / "index.html").read_text(encoding="utf-8"))
    assert "2 validation results: 0 passed, 1 failed, 1 error" in text
    assert "result could not be read" in text
