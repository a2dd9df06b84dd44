"""Data Docs that read offline, built through Great Expectations' own site extension points.

A GX Data Docs site is configured by ``data_docs_sites`` in ``great_expectations.yml``: each
section (expectation suites, validation results) names a page *renderer* and a *view*, and the
site names an *index builder*. :func:`configure_site` points a filesystem site at the classes of
this module, so every GX build (``context.build_data_docs``, ``UpdateDataDocsAction``, the
er-expectations runner) writes offline pages directly; nothing is rewritten afterwards.

* :class:`OfflinePageView` renders GX's page content tree with Jinja2 templates shipped in
  ``er_expectations/templates/`` with **autoescaping on**: every data or configuration string
  (suite names, run names, column names, observed values, notes, cluster ids) is escaped by
  construction. Pages carry a strict Content-Security-Policy ``<meta>`` (no scripts, no remote
  loads), an inline stylesheet from ``templates/docs.css``, no ``<script>`` and no external
  resource; collapsible sections are native ``<details>``, the "failed only" filter CSS only.
* :class:`SeverityValidationResultsPageRenderer` is GX's validation page renderer whose status
  cells carry the expectation's **severity** and whose overview states the severity-aware status
  of :mod:`er_expectations.core.severity` (failed / error / passed with warnings / passed).
* :class:`OfflineSiteIndexBuilder` writes ``index.html``: every stored validation result, newest
  run first, with its severity-aware status, counts and a link to its page (or "not built").
  The index fields of each result file are cached in ``.er-index-cache.json`` in the site folder
  (valid while the file's modification time, size and inode are unchanged), so the index stays
  cheap as results pile up.
* :mod:`er_expectations.gx.docs.html_view` turns GX's ``string_template`` blocks into escaped HTML
  (the templates' ``string_template``, ``attrs`` and ``paragraphs`` filters).
"""

from __future__ import annotations

import contextlib
import copy
import datetime as _dt
import functools
import hashlib
import html as html_lib
import json
import os
import re
import string
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit
from urllib.request import url2pathname

from great_expectations.data_context.types.resource_identifiers import ExpectationSuiteIdentifier
from great_expectations.render import RenderedComponentContent
from great_expectations.render.renderer.column_section_renderer import (
    ValidationResultsColumnSectionRenderer,
)
from great_expectations.render.renderer.content_block.validation_results_table_content_block import (
    ValidationResultsTableContentBlockRenderer,
)
from great_expectations.render.renderer.page_renderer import (
    ExpectationSuitePageRenderer,
    ValidationResultsPageRenderer,
)
from great_expectations.render.renderer.site_builder import DefaultSiteIndexBuilder
from great_expectations.render.view import DefaultJinjaPageView
from jinja2 import Environment, PackageLoader
from markupsafe import Markup

from er_expectations.core.charts import svg_cache
from er_expectations.core.errors import InputError
from er_expectations.core.io import atomic_write
from er_expectations.core.severity import status_of
from er_expectations.gx.docs.chart_blocks import image_block
from er_expectations.gx.docs.glossary import terms_on
from er_expectations.gx.docs.html_view import (
    class_attrs,
    hashes,
    name_breaks,
    paragraphs,
    render_string_template,
)
from er_expectations.gx.docs.provenance_view import provenance_lines, publishable_meta
from er_expectations.gx.docs.render import DIFF_SHOWN_UNDER, without_severity_badge
from er_expectations.gx.outcome import check_statistics, field_of, outcome, status_and_severity

__all__ = [
    "CSP",
    "DescribedSuitePageRenderer",
    "NOTE_TEXT",
    "OfflinePageView",
    "OfflineSiteIndexBuilder",
    "SeverityValidationResultsPageRenderer",
    "Verdict",
    "build_site",
    "chart_cache_file",
    "write_index",
    "configure_site",
    "image_block",
    "index_html",
    "local_site_dir",
    "render_string_template",
    "results_without_pages",
    "site_config",
    "verdict_of",
]

_MODULE = __name__
_STORE_MODULE = "er_expectations.gx.docs.site_store"
#: The site's modules as er-expectations 0.2.0 and earlier named them in ``great_expectations.yml``
#: (kept: they re-export the classes); :func:`configure_site` writes the current paths over them.
_FORMER_MODULES = {"er_expectations.gx.data_docs": _MODULE, "er_expectations.gx.site_store": _STORE_MODULE}
#: The header line shown at the top of every page.
NOTE_TEXT = (
    "Offline edition: this page was written by er-expectations for offline reading "
    "(no external resources: no scripts, web fonts or remote images)."
)
#: No script may run, nothing may be fetched from another host. Local images and inline styles
#: stay allowed ("file:" because Chromium does not treat file:// pages as 'self').
CSP = (
    "default-src 'none'; img-src 'self' file: data:; style-src 'self' file: 'unsafe-inline'; "
    "font-src 'self' file: data:; base-uri 'none'; form-action 'none'"
)
_CACHE_FILE = ".er-index-cache.json"
_CHART_CACHE_FILE = ".er-chart-cache.json"
_OLD_CACHE_FILE = ".er-offline-index-cache.json"  # written by the post-processor this replaces


# ----------------------------------------------------------------------------------------------
# site configuration


def site_config(base: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``base`` (a ``data_docs_sites`` entry) with this module's renderer, views and index builder.

    GX's filesystem store becomes :class:`~.site_store.AtomicSiteStoreBackend` (pages written atomically); every
    other key of ``base`` is kept; a new entry stores its pages in ``uncommitted/data_docs/local_site/``.
    """
    config = _current_modules(copy.deepcopy(dict(base or {})))
    config.setdefault("class_name", "SiteBuilder")
    backend = config.setdefault("store_backend", {"base_directory": "uncommitted/data_docs/local_site/"})
    if backend.get("class_name", "TupleFilesystemStoreBackend") == "TupleFilesystemStoreBackend":  # atomic pages
        backend.update(class_name="AtomicSiteStoreBackend", module_name=_STORE_MODULE)
    config["show_how_to_buttons"] = False
    view = {"module_name": _MODULE, "class_name": "OfflinePageView"}
    sections = config.get("site_section_builders")
    sections = copy.deepcopy(sections) if isinstance(sections, dict) else {}
    for name in ("expectations", "validations", "profiling"):
        section = sections.get(name)
        section = dict(section) if isinstance(section, dict) else {}
        section["view"] = dict(view)
        if name == "validations":
            section["renderer"] = {"module_name": _MODULE,
                                   "class_name": "SeverityValidationResultsPageRenderer"}
        elif name == "expectations":
            section["renderer"] = {"module_name": _MODULE, "class_name": "DescribedSuitePageRenderer"}
        sections[name] = section
    config["site_section_builders"] = sections
    config["site_index_builder"] = {"module_name": _MODULE, "class_name": "OfflineSiteIndexBuilder"}
    return config


def configure_site(context: Any, site_name: str = "local_site") -> bool:
    """Make the Data Docs site ``site_name`` of ``context`` use this module; True if it changed.

    A site configured by GX (or by an older er-expectations) is updated in
    ``great_expectations.yml``; the caller should then rebuild the whole site, whose pages were
    written by other views. A missing site is added with GX's default local folder. A site that
    names these classes by their former modules (0.2.0, ``_FORMER_MODULES``) gets the current
    paths, and False is returned: the same classes wrote its pages.
    """
    sites = context.variables.data_docs_sites or {}
    current = sites.get(site_name)
    wanted = site_config(current if isinstance(current, Mapping) else None)
    if current == wanted:
        return False
    if current is None:
        context.add_data_docs_site(site_name=site_name, site_config=wanted)
        return True
    context.update_data_docs_site(site_name=site_name, site_config=wanted)
    # a site that differed only by the former module paths has the same classes: its pages stay
    return _current_modules(current) != wanted


def _current_modules(value: Any) -> Any:
    """``value`` (a site's configuration) with each module path of ``_FORMER_MODULES`` replaced."""
    if isinstance(value, Mapping):
        return {key: _FORMER_MODULES.get(item, item) if key == "module_name" and isinstance(item, str)
                else _current_modules(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_current_modules(item) for item in value]
    return value


def local_site_dir(context: Any, site_name: str = "local_site") -> Path:
    """Folder of the filesystem Data Docs site ``site_name`` of ``context`` (it may not exist yet)."""
    sites = context.variables.data_docs_sites or {}
    if site_name not in sites:
        raise LookupError(f"no Data Docs site named {site_name!r}; configured: {sorted(sites)}")
    try:
        url = context.get_docs_sites_urls(site_name=site_name, only_if_exists=False)[0]["site_url"]
    except (FileExistsError, NotADirectoryError) as error:  # GX creates the site's folder: a file is there
        where = Path(str(error.filename or site_name))
        file = next((p for p in (where, *where.parents) if p.is_file()), where)
        raise InputError(
            f"{file}: is a file, not a folder, but the Data Docs site '{site_name}' keeps its pages in "
            f"{where} (data_docs_sites.{site_name}.store_backend.base_directory of great_expectations.yml in "
            f"{getattr(context, 'root_directory', None) or 'the GX project'}); move or delete the file, or "
            "point that key at another folder") from None
    parts = urlsplit(url or "")
    if parts.scheme != "file":
        raise LookupError(f"Data Docs site {site_name!r} is not on the local filesystem: {url}")
    return Path(url2pathname(parts.path)).parent


# ----------------------------------------------------------------------------------------------
# severity (one reading of a stored result, for the pages and the index)


@dataclass(frozen=True)
class Verdict:
    """The severity rule applied to one validation result (see :mod:`er_expectations.core.severity`)."""

    status: str  # "passed" | "warnings" | "failed" | "error"
    critical_failed: int = 0
    warnings_failed: int = 0
    errors: int = 0
    #: Expectations not evaluated (SPEC 13): they neither pass nor fail the validation.
    skipped: int = 0
    #: Expectations evaluated and passed (skipped ones are not).
    passed: int = 0

    @property
    def evaluated(self) -> int:
        """Expectations evaluated: passed, failed or raised (a skipped one is not evaluated)."""
        return self.passed + self.critical_failed + self.warnings_failed + self.errors

    def details(self) -> str:
        """'2 critical expectations failed, 1 warning/info expectation failed, 3 expectations skipped
        (not evaluated)' ('' when none)."""
        bits = []
        if self.critical_failed:
            bits.append(f"{_plural(self.critical_failed, 'critical expectation')} failed")
        if self.warnings_failed:
            bits.append(f"{_plural(self.warnings_failed, 'warning/info expectation')} failed")
        if self.errors:
            bits.append(f"{_plural(self.errors, 'expectation')} raised an error")
        if self.skipped:
            bits.append(f"{_plural(self.skipped, 'expectation')} skipped (not evaluated)")
        return ", ".join(bits)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def verdict_of(doc: Any) -> Verdict:
    """Apply the severity rule to a validation result, given as its JSON dict or GX's object."""
    results = [r for r in (field_of(doc, "results") or []) if r is not None]
    critical = warnings = errors = skipped = passed = 0
    for result in results:
        outcome, severity = status_and_severity(result)
        if outcome == "error":
            errors += 1
        elif outcome == "failed":
            critical += severity == "critical"
            warnings += severity != "critical"
        elif outcome == "skipped":
            skipped += 1
        else:
            passed += 1
    status = status_of(critical_failed=critical, errors=errors, warnings_failed=warnings)
    if not results and field_of(doc, "success") is False:
        status = "failed"
    return Verdict(status, critical, warnings, errors, skipped, passed)


# ----------------------------------------------------------------------------------------------
# renderers: GX's validation page with severity in the status cells and the overview


class _Block(RenderedComponentContent):
    """A content block of this module's own type, carrying plain JSON fields for the templates."""

    def __init__(self, content_block_type: str, **fields: Any) -> None:
        super().__init__(content_block_type=content_block_type)
        self.fields = fields

    def to_json_dict(self) -> dict[str, Any]:
        d = super().to_json_dict()
        d.update(self.fields)
        return d


_NUM = r"(?:[−-]?\d[\d,]*(?:\.\d+)?|[−-]?∞|—)"
_OBSERVED_TEXT = re.compile(
    rf"(?:predicted (?P<predicted>{_NUM}); )?(?P<label>true value estimated )?"
    rf"(?P<value>{_NUM}(?: ± {_NUM})?|undefined)"
    r" \((?P<sub>[^()]*\b(?:clusters|draws|records)\b[^()]*)\)"
)


def plain_text(block: Any) -> str | None:
    """The text of a string-template block (parameters substituted), else None."""
    if isinstance(block, RenderedComponentContent):
        block = block.to_json_dict()
    if isinstance(block, str):
        return block
    st = block.get("string_template") if isinstance(block, dict) else None
    if not isinstance(st, dict):
        return None
    params = {k: "" if v is None else str(v) for k, v in (st.get("params") or {}).items()}
    return string.Template(str(st.get("template", ""))).safe_substitute(params)


def _observed_block(cell: list) -> list:
    """Our estimates ('0.568 ± 0.108 (95 % CI ..., 370 clusters)') as value first, the interval
    and sample size under it; any other observed value unchanged."""
    text = plain_text(cell[0]) if len(cell) == 1 else None
    match = _OBSERVED_TEXT.fullmatch(text.strip()) if text else None
    if match is None:
        return cell
    return [_Block("er_observed", **{k: v or "" for k, v in match.groupdict().items()})]


class SeverityTableRenderer(ValidationResultsTableContentBlockRenderer):
    """GX's expectation table whose status cell states the outcome in words with the severity."""

    @classmethod
    def _get_content_block_fn(cls, expectation_type: str, expectation_config: Any = None) -> Any:
        inner = super()._get_content_block_fn(expectation_type=expectation_type,
                                              expectation_config=expectation_config)

        def row_generator_fn(configuration=None, result=None, runtime_configuration=None, **kwargs):
            rows = inner(configuration=configuration, result=result,
                         runtime_configuration=runtime_configuration, **kwargs)
            outcome, severity = status_and_severity(result)
            for row in rows:
                row[0] = _Block("er_status", status=outcome, severity=severity)
                row[1:2] = [without_severity_badge(row[1])]  # the status cell states the severity
                if len(row) >= 3:
                    row[2:3] = [_observed_block(row[2] if isinstance(row[2], list) else [row[2]])]
            return rows

        return row_generator_fn


class SeverityColumnSectionRenderer(ValidationResultsColumnSectionRenderer):
    """GX's column section renderer with :class:`SeverityTableRenderer` as its table."""

    def __init__(self, table_renderer: Mapping[str, Any] | None = None) -> None:
        super().__init__(table_renderer=dict(table_renderer or {
            "module_name": _MODULE, "class_name": "SeverityTableRenderer"}))


def _diff_once(validation_results: Any) -> Any:
    """``validation_results`` where every failed result whose ``details.diff`` repeats the diff of a
    failed result before it carries ``details.diff_shown_under`` (that check's label) instead; a
    copy when anything changed (the stored result is never touched)."""
    seen: dict[str, str] = {}
    results = list(getattr(validation_results, "results", None) or [])
    changed = False
    for i, evr in enumerate(results):
        body = getattr(evr, "result", None)
        details = body.get("details") if isinstance(body, dict) else None
        diff = details.get("diff") if isinstance(details, dict) else None
        if not diff or getattr(evr, "success", True):
            continue
        key = json.dumps(diff, sort_keys=True, default=str)
        if key not in seen:
            seen[key] = outcome("", evr).label
            continue
        copied = copy.copy(evr)
        copied.result = {**body, "details": {**details, "diff": None, DIFF_SHOWN_UNDER: seen[key]}}
        results[i] = copied
        changed = True
    if not changed:
        return validation_results
    page = copy.copy(validation_results)
    page.results = results
    return page


class SeverityValidationResultsPageRenderer(ValidationResultsPageRenderer):
    """GX's validation page renderer with severity badges and the severity-aware status."""

    def __init__(self, column_section_renderer: Mapping[str, Any] | None = None,
                 run_info_at_end: bool = False, data_context: Any = None) -> None:
        super().__init__(column_section_renderer=dict(column_section_renderer or {
            "module_name": _MODULE, "class_name": "SeverityColumnSectionRenderer"}),
            run_info_at_end=run_info_at_end, data_context=data_context)
        self.er_data_context = data_context  # ours: GX keeps it in a private attribute

    def render(self, validation_results: Any, suite_parameters: Any = None) -> Any:
        """GX's page of ``validation_results`` whose batch description (the batch spec under "Show more
        info") names no absolute local path: a file inside the project relative to it, any other by its
        name (:func:`~.provenance_view.publishable_meta`); the stored result is left as it is. A release
        diff is shown once when several failed drift checks of the page would each show the same one."""
        shown = copy.copy(_diff_once(validation_results))
        root = getattr(self.er_data_context, "root_directory", None)
        shown.meta = publishable_meta(validation_results.meta,
                                      base=Path(root).parent if isinstance(root, str | os.PathLike) else None)
        return super().render(shown, suite_parameters=suite_parameters)

    @classmethod
    def _render_validation_statistics(cls, validation_results: Any) -> Any:
        """GX's "Statistics" box with the counts of the status line and the index (SPEC 13): a
        skipped check is neither evaluated nor successful, whatever GX's stored statistics say."""
        block = super()._render_validation_statistics(validation_results=validation_results)
        stats = check_statistics(validation_results.results)
        verdict = verdict_of(validation_results)
        percent = stats["success_percent"]
        block.table = [
            ["Checks", stats["checks"]],
            ["Evaluated", stats["evaluated_expectations"]],
            ["Passed", stats["successful_expectations"]],
            ["Failed (critical)", verdict.critical_failed],
            ["Failed (warning/info)", verdict.warnings_failed],
            ["Raised an error", verdict.errors],
            ["Skipped (not evaluated, not passed)", stats["skipped_expectations"]],
            ["Passed, % of evaluated", "–" if percent is None else f"{percent:.1f} %"],
        ]
        return block

    @classmethod
    def _render_validation_header(cls, validation_results: Any) -> _Block:
        verdict = verdict_of(validation_results)
        suite = str(validation_results.suite_name)
        parts = suite.split(".")
        href = "/".join([".."] * (len(parts) + 3) + ["expectations"] + parts) + ".html"
        meta = validation_results.meta or {}
        return _Block("er_overview", suite=suite, suite_href=quote(href),
                      provenance=[list(line) for line in provenance_lines(meta, validation_results.results or [])],
                      status=verdict.status, details=verdict.details(),
                      counted=bool(verdict.critical_failed or verdict.warnings_failed),
                      skipped=verdict.skipped)


class DescribedSuitePageRenderer(ExpectationSuitePageRenderer):
    """GX's suite page whose Info table also gives the suite's description (its ``description:``
    in the suite file, kept in the suite's ``meta``)."""

    @classmethod
    def _render_expectation_suite_info(cls, expectations: Any) -> Any:
        block = super()._render_expectation_suite_info(expectations)
        meta = getattr(expectations, "meta", None) or {}
        ours = meta.get("er_expectations") if isinstance(meta, Mapping) else None
        description = ours.get("description") if isinstance(ours, Mapping) else None
        if isinstance(description, str) and description.strip():
            block.table = [block.table[0], ["Description", description.strip()], *block.table[1:]]
        return block


# ----------------------------------------------------------------------------------------------
# the view: GX's content tree through our Jinja templates, autoescaped (filters: .html_view)


@functools.lru_cache(maxsize=1)
def _environment() -> Environment:
    loader = PackageLoader("er_expectations", "templates")
    env = Environment(loader=loader, autoescape=True, trim_blocks=True, lstrip_blocks=True)
    env.filters["string_template"] = render_string_template
    env.filters["attrs"] = class_attrs
    env.filters["paragraphs"] = paragraphs
    env.filters["hashes"] = hashes
    env.filters["name_breaks"] = name_breaks
    env.globals["css"] = Markup(loader.get_source(env, "docs.css")[0])
    env.globals.update(csp=CSP, note=NOTE_TEXT)
    return env


def _home(document: Mapping[str, Any]) -> str:
    """The relative path from a page to the site root (GX's page layout)."""
    kind = str(document.get("renderer_type") or "")
    dots = str(document.get("expectation_suite_name") or "").count(".")
    if "ValidationResults" in kind or "ProfilingResults" in kind:
        return "../" * (dots + 4)
    if "ExpectationSuite" in kind:
        return "../" * (dots + 1)
    return ""


_GLOSSARY_MARK = "<!--er-glossary-->"
_GLOSSARY_LINK_MARK = "<!--er-glossary-link-->"


class OfflinePageView(DefaultJinjaPageView):
    """GX page view that renders with ``er_expectations/templates/page.html.j2`` (autoescaped)."""

    def render(self, document: Any, template: str | None = None, **kwargs: Any) -> str:
        self._validate_document(document)
        doc = document.to_json_dict()
        env = _environment()
        page = env.get_template(template or "page.html.j2").render(
            doc=doc, home=_home(doc), sections=doc.get("sections") or [],
            glossary="ValidationResults" in str(doc.get("renderer_type") or ""))
        if _GLOSSARY_MARK not in page:
            return page
        # the terms the page's text uses (its words, without markup or stylesheet), defined at its end
        words = html_lib.unescape(re.sub(r"<[^>]+>", " ", re.sub(r"<style.*?</style>", " ", page, flags=re.S)))
        terms = terms_on(words)
        parts = env.get_template("glossary.html.j2").module
        return page.replace(_GLOSSARY_LINK_MARK, str(parts.link(terms))).replace(_GLOSSARY_MARK, str(parts.terms(terms)))


# ----------------------------------------------------------------------------------------------
# the index


@dataclass
class _Row:
    status: str
    run_time: _dt.datetime | None
    run_name: str
    batch: str
    suite: str
    href: str | None
    fields: dict[str, Any] = field(default_factory=dict)

    def sort_key(self) -> tuple:
        ts = self.run_time.timestamp() if self.run_time else float("-inf")
        return (-ts, self.run_name, self.suite, self.batch)


_CACHED = ("status", "passed", "evaluated", "critical_failed", "warnings_failed", "errors",
           "skipped", "details")


def _fingerprint() -> str:
    """Changes whenever this module changes, so rows cached by another version are redone."""
    try:
        return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]
    except OSError:  # pragma: no cover - e.g. imported from a zip file
        return "unknown"


_VERSION = _fingerprint()


def _batch_details(meta: Any) -> str:
    """``key=value`` of the batch identifiers (not the file path or GX's dataframe placeholder)."""
    batch = (meta or {}).get("active_batch_definition") if isinstance(meta, dict) else None
    ids = (batch or {}).get("batch_identifiers") if isinstance(batch, dict) else None
    if not isinstance(ids, dict):
        return ""
    return ", ".join(f"{k}={v}" for k, v in sorted(ids.items(), key=lambda kv: str(kv[0]))
                     if k != "path" and isinstance(v, (str, int, float)) and v != "<DATAFRAME>")


def _digest(doc: dict) -> dict[str, Any]:
    """The index fields of one stored validation result (JSON-safe: they are cached)."""
    verdict = verdict_of(doc)
    details = _batch_details(doc.get("meta"))
    if verdict.errors:
        note = f"{_plural(verdict.errors, 'expectation')} raised an error"
        details = f"{details}; {note}" if details else note
    # the counts of the checks themselves (gx.outcome.check_statistics), never GX's stored
    # statistics, which count a skipped check (on_skip: pass) as successful
    results = doc.get("results")
    evaluated = verdict.evaluated if isinstance(results, list) and results else None
    return {"status": verdict.status, "passed": verdict.passed if evaluated is not None else None,
            "evaluated": evaluated,
            "critical_failed": verdict.critical_failed, "warnings_failed": verdict.warnings_failed,
            "errors": verdict.errors, "skipped": verdict.skipped, "details": details}


def _read_result(store: Any, key: Any) -> dict:
    """One stored validation result as a JSON dict, read raw from the store backend (no GX
    deserialisation); ``store.get`` for backends that keep objects."""
    backend = getattr(store, "store_backend", None)
    raw: Any = None
    if backend is not None:
        with contextlib.suppress(Exception):
            raw = backend.get(key.to_tuple())
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8")
    doc = json.loads(raw) if isinstance(raw, str) else raw
    if not (isinstance(doc, dict) and "results" in doc):
        doc = store.get(key).to_json_dict()
    return doc


def _stamp(backend: Any, key: Any) -> tuple[str | None, list[int] | None]:
    """(file relative to the store, [mtime_ns, size, inode]) of a filesystem-stored result;
    (None, None) for other backends, which are read every time."""
    base = getattr(backend, "full_base_directory", None)
    to_path = getattr(backend, "_convert_key_to_filepath", None)
    if not isinstance(base, (str, os.PathLike)) or not callable(to_path):
        return None, None
    try:
        rel = to_path(key.to_tuple())
        st = os.stat(os.path.join(base, rel))
    except Exception:  # noqa: BLE001 - a private GX helper: a surprise only disables the cache
        return None, None
    return Path(rel).as_posix(), [st.st_mtime_ns, st.st_size, st.st_ino]


class _RowCache:
    """Index fields per result file, valid while its (mtime, size, inode) is unchanged; rewritten
    atomically and only when it changed; rows of another module version are ignored."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.old: dict[str, Any] = {}
        if path is not None:
            with contextlib.suppress(OSError, ValueError):
                data = json.loads(path.read_text(encoding="utf-8"))
                if isinstance(data, dict) and data.get("version") == _VERSION \
                        and isinstance(data.get("rows"), dict):
                    self.old = data["rows"]
        self.new: dict[str, Any] = {}

    def get(self, name: str, stamp: list[int]) -> dict | None:
        entry = self.old.get(name)
        row = entry.get("row") if isinstance(entry, dict) and entry.get("stamp") == stamp else None
        if not (isinstance(row, dict) and set(row) == set(_CACHED)):
            return None
        self.new[name] = entry
        return row

    def put(self, name: str, stamp: list[int], row: dict) -> None:
        self.new[name] = {"stamp": stamp, "row": row}

    def save(self) -> None:
        if self.path is None or self.new == self.old:
            return
        atomic_write(self.path, json.dumps({"version": _VERSION, "rows": self.new},
                                           sort_keys=True, ensure_ascii=False) + "\n")


def _page_path(site: Path, section: str, parts: Iterable[str]) -> Path:
    parts = list(parts)
    return site.joinpath(section, *parts[:-1], parts[-1] + ".html")


_REMOTE_SITE = Path("/er-expectations-remote-site")  # stands for a site not on this filesystem


def _href(target: Path, site: Path) -> str | None:
    """The relative link from the index to ``target``; None when the page is not built (not
    checked for a site that is not on the local filesystem)."""
    if site == _REMOTE_SITE or target.is_file():
        return quote(target.relative_to(site).as_posix())
    return None


def results_without_pages(context: Any, site: Path) -> list:
    """Stored validation results whose page is missing from ``site`` (a run killed between
    storing its results and building its pages), readable ones only: a damaged result stays
    listed as an error in the index, with nothing built for it."""
    store = context.validation_results_store
    missing = []
    for key in store.list_keys():
        if _page_path(site, "validations", key.to_tuple()).is_file():
            continue
        try:
            _read_result(store, key)
        except Exception:  # noqa: BLE001 - unreadable: the index shows it as an error
            continue
        missing.append(key)
    return missing


def _rows(context: Any, site: Path, cache: _RowCache) -> list[_Row]:
    store = context.validation_results_store
    backend = getattr(store, "store_backend", None)
    rows = []
    for key in store.list_keys():
        run_id = key.run_id
        row = _Row("error", run_id.run_time, str(run_id.run_name or "__none__"),
                   str(key.batch_identifier or "__none__"), key.expectation_suite_identifier.name,
                   _href(_page_path(site, "validations", key.to_tuple()), site))
        name, stamp = _stamp(backend, key)
        try:
            fields = cache.get(name, stamp) if name and stamp else None
            if fields is None:
                fields = _digest(_read_result(store, key))
                if name and stamp:
                    cache.put(name, stamp, fields)
        except Exception as exc:  # noqa: BLE001 - an unreadable result must not hide the others
            fields = {"status": "error", "details": f"result could not be read: {type(exc).__name__}"}
        row.status, row.fields = fields["status"], fields
        rows.append(row)
    return sorted(rows, key=_Row.sort_key)


def _fmt_time(t: _dt.datetime | None) -> str:
    if t is None:
        return "unknown"
    if t.tzinfo is not None:
        return t.astimezone(_dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    return t.strftime("%Y-%m-%d %H:%M:%S")


def _tally(rows: list[_Row]) -> dict[str, int]:
    return {s: sum(r.status == s for r in rows) for s in ("passed", "warnings", "failed", "error")}


def index_html(context: Any, site: Path, cache: _RowCache | None = None) -> str:
    """The index page of ``site``: every stored validation result and every suite."""
    rows = _rows(context, site, cache or _RowCache(None))
    runs: list[dict[str, Any]] = []
    for row in rows:
        if not runs or (runs[-1]["time"], runs[-1]["name"]) != (row.run_time, row.run_name):
            runs.append({"time": row.run_time, "name": row.run_name,
                         "when": _fmt_time(row.run_time), "rows": []})
        runs[-1]["rows"].append(row)
    for run in runs:
        run["tally"] = _tally(run["rows"])
    names: set[str] = {r.suite for r in rows}
    with contextlib.suppress(Exception):  # a broken suite file must not break the index
        names |= {str(k.name) for k in context.expectations_store.list_keys()}
    suites = []
    for name in sorted(names):
        mine = [r for r in rows if r.suite == name]
        suites.append({"name": name, "results": len(mine),
                       "failed": sum(r.status in ("failed", "error") for r in mine),
                       "warnings": sum(r.status == "warnings" for r in mine),
                       "href": _href(_page_path(site, "expectations", name.split(".")), site)})
    return _environment().get_template("index.html.j2").render(
        runs=runs, total=len(rows), overall=_tally(rows), suites=suites, fmt_time=_fmt_time,
        home="")


def write_index(context: Any, site_name: str = "local_site", *, site: Path | None = None) -> Path:
    """Write ``index.html`` of the filesystem site ``site_name`` (folder ``site`` when known),
    atomically and only when its text changed, and return its path; the rows of unchanged result
    files come from the cache."""
    site = site if site is not None else local_site_dir(context, site_name)
    with contextlib.suppress(OSError):
        (site / _OLD_CACHE_FILE).unlink()
    cache = _RowCache(site / _CACHE_FILE)
    page = index_html(context, site, cache)
    index = site / "index.html"
    if not index.is_file() or index.read_text(encoding="utf-8", errors="replace") != page:
        atomic_write(index, page)
    cache.save()
    return index


class OfflineSiteIndexBuilder(DefaultSiteIndexBuilder):
    """Writes the static, escaped index of :func:`index_html` instead of GX's scripted one."""

    def build(self, skip_and_clean_missing: bool = True, build_index: bool = True) -> tuple:
        if not build_index:
            return None, None
        backend = getattr(self.target_store, "store_backends", {}).get("index_page")
        base = getattr(backend, "full_base_directory", None)
        try:
            site = Path(base) if isinstance(base, str) else local_site_dir(self.data_context,
                                                                          self.site_name)
            return write_index(self.data_context, self.site_name, site=site).resolve().as_uri(), None
        except LookupError:  # not on the local filesystem: no page links, no cache
            page = index_html(self.data_context, _REMOTE_SITE)
            return self.target_store.write_index_page(page), None


def build_site(context: Any, site_name: str, results: list | None,
               pending: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Keep the local site ``site_name`` on the offline pages and build what a run needs.

    Points the site's configuration at the offline view, renderer and index builder (when that
    changed it, or the site was never built, everything is rebuilt once). With ``results``
    (validation result identifiers), their pages, those an interrupted earlier run did not
    build, their suites' pages and the index are built in ONE GX build; ``None`` builds nothing
    more (GX's ``UpdateDataDocsAction`` does it). The charts of the pages are read from the
    project's chart cache when a build drew them before (:func:`chart_cache_file`), or from
    ``pending`` (futures of charts drawn elsewhere by cache key, see
    :class:`~.chart_prewarm.ChartPrewarm`). Used by :class:`~.actions.OfflineDataDocsAction`
    and the runner.
    """

    changed = configure_site(context, site_name)
    try:
        site: Path | None = local_site_dir(context, site_name)
    except LookupError:  # a site on another store (S3, ...): nothing to check on disk
        site = None
    shown = str(site) if site else None
    if changed or (results is not None and site is not None and not (site / "index.html").is_file()):
        identifiers = None  # everything: the pages on disk came from another view
    elif results is not None:
        identifiers = list(results)
        if site is not None:
            identifiers += [k for k in results_without_pages(context, site) if k not in identifiers]
        suites = {key.expectation_suite_identifier.name for key in identifiers}
        identifiers += [ExpectationSuiteIdentifier(name=name) for name in sorted(suites)]
        if not identifiers:  # GX would read an empty list as "build everything"
            if site is not None:
                write_index(context, site_name, site=site)
            return {"site_dir": shown, "rebuilt": False}
    else:
        return {"site_dir": shown, "rebuilt": False}
    with svg_cache(chart_cache_file(context), pending):
        context.build_data_docs(site_names=[site_name], resource_identifiers=identifiers)
    return {"site_dir": shown, "rebuilt": identifiers is None}


def chart_cache_file(context: Any) -> Path | None:
    """Where a project keeps the SVG of the charts its last Data Docs build drew
    (:class:`~er_expectations.core.charts.SvgCache`): ``gx/uncommitted/.er-chart-cache.json``,
    next to the uncommitted results and Data Docs; ``None`` for a context without a folder."""
    root = getattr(context, "root_directory", None)
    if not isinstance(root, (str, os.PathLike)) or not Path(root).is_dir():
        return None
    return Path(root) / "uncommitted" / _CHART_CACHE_FILE
