"""Make a local Great Expectations Data Docs site readable offline.

GX 1.24 Data Docs pages load bootstrap, jQuery, bootstrap-table, font-awesome and vega from
public CDNs, and the GX logo from S3. Behind a firewall the pages stall while those requests time
out, the pass/fail icons disappear and the index page is empty (its tables are filled in by
JavaScript). :func:`make_site_offline` post-processes a built site so that it needs no network:

* it removes every ``<script>`` (all of them need the CDN libraries), every ``<link>``,
  ``<img>`` or other element that would fetch an ``http(s)://`` or ``//`` URL (plain ``<a href>``
  hyperlinks stay), and remote ``url()`` / ``@import`` in inline CSS and in the site's ``*.css``;
* it neutralises markup that GX copied raw from data or config (GX's Jinja templates do not
  autoescape): known data strings are re-escaped where they form a whole element's text, inline
  event handlers and ``javascript:`` URLs are removed, and a Content-Security-Policy ``<meta>``
  forbids scripts, frames and remote loads;
* it inlines a small stylesheet (readable tables, pass/fail written as text, a CSS-only
  "Failed only" filter, collapsed sections shown open, print styles) and a header line saying the
  page was made offline-readable by er-expectations;
* it rewrites ``index.html`` as a static, escaped table of the validation results (from the
  context's validation results store, or from the pages on disk without a context).

The processing is idempotent: pages carry :data:`MARKER`, which names the version of this module
that processed them, and are skipped on the next run (a page GX rebuilt has no marker; a new
version of this module redoes every page). Every file is written atomically (temporary file in
the same folder, then :func:`os.replace`), so a crash never leaves a half-written page.

Typical use, after GX built the docs (the checkpoint action
:class:`er_expectations.gx.actions.OfflineDataDocsAction` does this for you)::

    context.build_data_docs()
    make_site_offline(local_site_dir(context), context)
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import html
import os
import re
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit
from urllib.request import url2pathname

__all__ = [
    "MARKER",
    "NOTE_TEXT",
    "OFFLINE_CSS",
    "local_site_dir",
    "make_site_offline",
    "offline_page",
]

#: The header line shown at the top of every processed page.
NOTE_TEXT = (
    "Offline edition: this page was made offline-readable by er-expectations "
    "(no external resources: no scripts, web fonts or remote images)."
)

# No script may run, nothing may be fetched from another host. Local images (the GX logo copied
# into static/) and inline styles stay allowed. "file:" is needed because Chromium does not treat
# file:// pages as 'self'.
_CSP = (
    "default-src 'none'; img-src 'self' file: data:; style-src 'self' file: 'unsafe-inline'; "
    "font-src 'self' file: data:; base-uri 'none'; form-action 'none'"
)

OFFLINE_CSS = """
/* er-expectations offline stylesheet: replaces the CDN bootstrap / font-awesome styles */
:root{color-scheme:light;--er-border:#d0d7de;--er-muted:#57606a;--er-soft:#f6f8fa;
  --er-pass:#1a7f37;--er-fail:#b42318;--er-warn:#9a6700;--er-link:#0b5cad}
html{-webkit-text-size-adjust:100%}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","DejaVu Sans",Arial,sans-serif;
  font-size:14px;line-height:1.45;color:#1f2328;margin:0;background:#fff}
a{color:var(--er-link)}
h1,h2,h3,h4,h5,h6{line-height:1.25;margin:.4rem 0}
h4{font-size:1.15rem}h5{font-size:1.05rem}h6,.h6{font-size:.9rem;font-weight:600}
p{margin:.35rem 0}
.lead{color:var(--er-muted)}
.er-offline-note{background:#fff8c5;border-bottom:1px solid #d4a72c;color:#3b2e00;
  font-size:12.5px;padding:.3rem 1rem}
nav.navbar,.navbar{display:block;padding:.5rem 1rem;border-bottom:1px solid var(--er-border);
  background:var(--er-soft);height:auto!important}
nav.navbar nav{display:flex;align-items:center;gap:1rem;flex-wrap:wrap}
.navbar-brand img{height:32px!important;width:auto;vertical-align:middle}
.er-logo{font-weight:600}
.ge-breadcrumbs,.breadcrumb{list-style:none;display:flex!important;flex-wrap:wrap;gap:.4rem;
  padding:0;margin:0;background:none!important}
.breadcrumb-item+.breadcrumb-item::before{content:"/";padding-right:.4rem;color:var(--er-muted)}
.breadcrumb-item.active{color:var(--er-muted);overflow-wrap:anywhere}
.container-fluid{padding:.75rem 1rem!important}
.ge-section{padding:0!important;margin-bottom:1rem}
.row{display:flex;flex-wrap:wrap;gap:0}
.col-md-2,.col-lg-2{flex:0 0 15rem;max-width:15rem;padding-right:1rem;box-sizing:border-box}
.col-md-10,.col-lg-10{flex:1 1 0;min-width:0}
.col-12{width:100%}
.col-6{flex:0 0 auto;max-width:100%;padding-right:1rem}
.d-none{display:block!important}
ol.ge-breadcrumbs.breadcrumb{display:flex!important}
.sticky,.sticky-top{position:static!important}
.card{border:1px solid var(--er-border);border-radius:6px;margin:.5rem 0;background:#fff}
.card-header{background:var(--er-soft);border-bottom:1px solid var(--er-border);padding:.4rem .6rem}
.card-body{padding:.5rem .6rem}
.card-body[style]{height:auto!important;max-height:none!important}
.nav,.ge-navigation-sidebar-content{list-style:none;padding:0!important;margin:0;max-height:none!important}
.ge-navigation-sidebar-container{max-height:none!important;padding:0!important}
.nav-item{padding:.1rem 0}
.nav-link{text-decoration:none;overflow-wrap:anywhere}
.alert{padding:.45rem .7rem;border-radius:6px;margin:.5rem 0}
.alert-secondary{background:#eef1f4;border:1px solid var(--er-border)}
.alert h5{margin:0}
.collapse{display:block!important}
a[data-toggle="collapse"]{color:var(--er-muted);text-decoration:none;font-weight:600;pointer-events:none}
table{border-collapse:collapse;margin:.35rem 0;background:#fff}
th,td{border:1px solid var(--er-border);padding:.3rem .55rem;text-align:left;vertical-align:top}
th{background:var(--er-soft);font-weight:600}
.table{width:100%}
.table-sm td,.table-sm th{padding:.2rem .45rem}
.table-responsive{overflow-x:auto}
.row>.table-responsive{flex:1 1 100%}
.row>.col-6.table-responsive{flex:0 0 auto}
.show-scrollbars{overflow:auto;overflow-wrap:anywhere}
.badge{display:inline-block;padding:0 .35rem;border-radius:4px;font-size:92%;
  background:#eaeef2;border:1px solid var(--er-border);
  font-family:ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace}
.text-danger{color:var(--er-fail)}.text-success{color:var(--er-pass)}.text-warning{color:var(--er-warn)}
.mt-3{margin-top:.75rem}.mt-2{margin-top:.5rem}.mb-2{margin-bottom:.5rem}
/* font-awesome icons are empty <i> elements: draw a glyph (literal UTF-8 on purpose, a CSS
   escape such as "\\2718 failed" would eat the hex-looking letters that follow). */
i.fas,i.fa{font-style:normal;font-weight:700;white-space:nowrap}
i.fa-check-circle::before{content:"✔"}
i.fa-times::before{content:"✘"}
i.fa-exclamation-triangle::before{content:"⚠"}
i.fa-comment::before{content:"\\201C"}
i.fa-question-circle::before{content:"?"}
i.fa-check-circle{color:var(--er-pass)}i.fa-times{color:var(--er-fail)}
i.fa-exclamation-triangle{color:var(--er-warn)}
/* pass/fail status written as real text next to the icon */
.er-status{font-weight:600;white-space:nowrap;margin-left:.25rem}
td:has(> div > span > .er-status){width:6.5rem;white-space:nowrap}
.er-pass{color:var(--er-pass)}.er-fail{color:var(--er-fail)}.er-error{color:var(--er-warn)}
footer,.ge-walkthrough-modal,.modal{display:none!important}
/* "Failed only" filter without JavaScript: CSS :has() on GX's own radio buttons */
.btn-group-toggle{display:flex;gap:.5rem;flex-wrap:wrap}
label.btn{display:inline-flex;align-items:center;gap:.3rem;border:1px solid var(--er-border);
  border-radius:6px;padding:.15rem .55rem;background:var(--er-soft);cursor:pointer;font-size:13px}
label.btn:has(input:checked){background:#ddf4ff;border-color:#54aeff;font-weight:600}
body:has(#option2:checked) tr:has(> td.hide-succeeded-validation-target-child){display:none}
body:has(#option2:checked) .hide-succeeded-validation-target{display:none}
body:has(#option2:checked) .ge-section:has(.hide-succeeded-validations-column-section-target-child){display:none}
button.btn,.fixed-table-toolbar,.filter-control{display:none!important}
.cooltip .top{display:none}
/* static index written by er-expectations */
.er-index{padding:1rem 1.25rem;max-width:90rem}
.er-index h1{font-size:1.45rem;margin:.2rem 0 .5rem}
.er-index h2{font-size:1.1rem;margin:1.4rem 0 .4rem}
.er-summary{margin:.2rem 0 .8rem;color:var(--er-muted)}
.er-summary strong{color:#1f2328}
.er-filter{display:inline-flex;align-items:center;gap:.35rem;margin:.2rem 0 .5rem;font-size:13px}
body:has(#er-failed-only:checked) tr.er-row-passed{display:none}
.er-results td.er-num{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums;width:1%}
.er-results th{white-space:nowrap}
.er-suites{width:auto;min-width:40rem}
.er-suites td.er-num{width:auto}
.er-results td.er-time{white-space:nowrap;font-variant-numeric:tabular-nums}
.er-results td{overflow-wrap:anywhere}
.er-results tbody tr:nth-child(even){background:#fafbfc}
.er-results tr.er-row-failed td:first-child{box-shadow:inset 3px 0 0 var(--er-fail)}
.er-results tr.er-row-error td:first-child{box-shadow:inset 3px 0 0 var(--er-warn)}
.er-results tr.er-row-passed td:first-child{box-shadow:inset 3px 0 0 var(--er-pass)}
.er-sub{display:block;color:var(--er-muted);font-size:12px}
.er-muted{color:var(--er-muted)}
.er-empty{color:var(--er-muted);font-style:italic}
@media print{
  html,body{font-size:11.5px}
  .col-md-2,.col-lg-2,.er-filter,.btn-group-toggle,.card:has(.btn-group-toggle){display:none!important}
  .col-md-10,.col-lg-10{flex:1 1 100%}
  nav.navbar{background:none}
  tr,td,th,.alert{break-inside:avoid}
  a{color:inherit;text-decoration:none}
  .er-offline-note{background:none;border-bottom:1px solid #999}
}
"""



def _fingerprint() -> str:
    """Changes whenever this module changes, so pages processed by an older version are redone."""
    try:
        source = Path(__file__).read_bytes()
    except OSError:  # pragma: no cover - e.g. imported from a zip file
        source = (OFFLINE_CSS + _CSP + NOTE_TEXT).encode()
    return hashlib.sha256(source).hexdigest()[:12]


#: ``<meta>`` present once in every processed page; it names the version that processed it.
MARKER = f'<meta name="er-offline" content="er-expectations {_fingerprint()}">'

_BLOCK = "<!-- er-offline:{0} -->{1}<!-- /er-offline:{0} -->"
_ANY_BLOCK = re.compile(r"<!-- er-offline:(\w+) -->.*?<!-- /er-offline:\1 -->\n?", re.S)

_SCRIPT_ELEMENT = re.compile(r"<script\b[^>]*>.*?</script\s*>", re.I | re.S)
_SCRIPT_LEFTOVER = re.compile(r"<(/?)(script)", re.I)
_START_TAG = re.compile(r"<([a-zA-Z][a-zA-Z0-9:-]*)\b[^<>]*>")
_REMOTE_ATTR = re.compile(
    r"""\b(?:src|href|srcset|poster|data|background|action|formaction)\s*=\s*["']?\s*(?:https?:)?//""",
    re.I,
)
_REMOTE_SRC = re.compile(
    r"""\bsrc\s*=\s*(?:"\s*((?:https?:)?//[^"]*)"|'\s*((?:https?:)?//[^']*)'|((?:https?:)?//[^\s"'>]+))""",
    re.I,
)
_ALT = re.compile(r"""\balt\s*=\s*(?:"([^"]*)"|'([^']*)')""", re.I)
_EVENT_ATTR = re.compile(r"""\s+on[a-z]+\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'>]+)""", re.I)
_JS_URL = re.compile(r"""(=\s*["']?\s*)javascript:""", re.I)
_META_REFRESH = re.compile(r"<meta\b[^>]*http-equiv\s*=\s*[\"']?refresh[^>]*>", re.I)
_STYLE_ELEMENT = re.compile(r"(<style\b[^>]*>)(.*?)(</style\s*>)", re.I | re.S)
_STYLE_ATTR = re.compile(r"""(\bstyle\s*=\s*)("[^"]*"|'[^']*')""", re.I)
_CSS_IMPORT = re.compile(r"""@import\s+(?:url\(\s*)?["']?\s*(?:https?:)?//[^;]*;?""", re.I)
_CSS_URL = re.compile(r"""url\(\s*["']?\s*(?:https?:)?//[^)]*\)""", re.I)
_HEAD_OPEN = re.compile(r"<head\b[^>]*>", re.I)
_HEAD_CLOSE = re.compile(r"</head\s*>", re.I)
_BODY_OPEN = re.compile(r"<body\b[^>]*>", re.I)
_STATUS_ICON = re.compile(
    r"""(<i\s+class="fas fa-(check-circle|times|exclamation-triangle)\b[^"]*"[^<>]*>\s*</i>)(\s*</span>)"""
)
_STATUS_WORD = {"check-circle": ("er-pass", "passed"), "times": ("er-fail", "failed"),
                "exclamation-triangle": ("er-error", "error")}
# a column section whose expectations all passed (GX hides it under "Failed only")
_PASSED_SECTION = re.compile(
    r'<div id="(section-\d+)-content-block-\d+"[^<>]*\bhide-succeeded-validations-column-section-target-child\b'
)
_ONLY_TAGS = re.compile(r"(?:\s*<[^<>]*>)+\s*")
_TAG_NAME = re.compile(r"<\s*/?\s*([a-zA-Z][a-zA-Z0-9]*)|<(!)")
# Element names GX's templates can emit. A data string made only of tags is re-escaped when one
# of its tags is NOT one of these (e.g. GX's "<DATAFRAME>" placeholder, which browsers swallow).
_HTML_TAGS = frozenset({
    "a", "abbr", "b", "br", "caption", "code", "col", "colgroup", "dd", "div", "dl", "dt", "em",
    "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "label", "li", "ol", "p", "pre", "small",
    "span", "strong", "sub", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "u", "ul",
})
_ACTIVE_CRUMB = re.compile(r"(<li\b[^<>]*aria-current=\"page\"[^<>]*>)", re.I)
_RUN_DIR_TIME = "%Y%m%dT%H%M%S.%fZ"
_MAX_REPAIR_STRINGS = 2000


# ----------------------------------------------------------------------------------------------
# pages


def _css_offline(css: str) -> str:
    return _CSS_URL.sub("none", _CSS_IMPORT.sub("", css))


def _repairable(s: str) -> bool:
    if "<" not in s:
        return False
    if not _ONLY_TAGS.fullmatch(s):
        return True
    names = [m.group(1).lower() if m.group(1) else "!" for m in _TAG_NAME.finditer(s)]
    return not all(n in _HTML_TAGS for n in names)


def _repair_raw_strings(page: str, strings: Iterable[str]) -> str:
    """Escape data strings that GX inserted raw as the whole text of an element.

    Only strings containing ``<`` matter. Strings made only of ordinary tags (``<br>``, ``</td>``)
    are skipped: they could be confused with GX's own markup; script and handler removal and the
    Content-Security-Policy still defuse them.
    """
    for s in sorted({s for s in strings if _repairable(s)}, key=len, reverse=True):
        pattern = re.compile(r"(>\s*)" + re.escape(s) + r"(\s*<)")
        page = pattern.sub(lambda m, s=s: m.group(1) + html.escape(s, quote=False) + m.group(2), page)
    return page


def _repair_crumb(page: str, crumb_parts: list[str]) -> str:
    """Escape the raw "Validations / suite / run / time" breadcrumb of a validation page."""
    if not crumb_parts:
        return page
    raw = " / ".join(crumb_parts) + " / "
    safe = " / ".join(html.escape(p, quote=False) for p in crumb_parts) + " / "
    return re.sub(_ACTIVE_CRUMB.pattern + r"\s*" + re.escape(raw),
                  lambda m: m.group(1) + safe, page, flags=re.I)


def _fix_tag(tag: re.Match, *, static_prefix: str | None, site: Path | None) -> str:
    text = tag.group(0)
    name = tag.group(1).lower()
    text = _EVENT_ATTR.sub("", text)
    text = _JS_URL.sub(r"\1blocked:", text)
    text = _STYLE_ATTR.sub(lambda m: m.group(1) + _css_offline(m.group(2)), text)
    if name == "a" or not _REMOTE_ATTR.search(text):
        return text
    if name == "img":
        src = _REMOTE_SRC.search(text)
        url = next((g for g in src.groups() if g is not None), "") if src else ""
        base = url.split("?", 1)[0].split("#", 1)[0].rstrip("/").rsplit("/", 1)[-1]
        if static_prefix is not None and site is not None and base and \
                (site / "static" / "images" / base).is_file():
            local = quote(f"{static_prefix}static/images/{base}")
            return _REMOTE_SRC.sub(lambda m: f'src="{local}"', text, count=1)
        alt = _ALT.search(text)
        label = (alt.group(1) or alt.group(2) or "") if alt else ""
        return f'<span class="er-logo">{html.escape(html.unescape(label), quote=False)}</span>'
    return ""  # <link>, <iframe>, <source>, <base>, ... that would fetch a remote resource


def offline_page(page: str, *, strings: Iterable[str] = (), crumb_parts: list[str] | None = None,
                 static_prefix: str | None = None, site: Path | None = None) -> str:
    """Return the offline version of one Data Docs page (idempotent: f(f(x)) == f(x)).

    ``strings`` are data or config strings known to appear in the page (run name, column names,
    unexpected values...), ``crumb_parts`` the raw breadcrumb of a validation page, and
    ``static_prefix`` the relative path from the page to the site root (to use the local logo).
    """
    page = _ANY_BLOCK.sub("", page)
    page = _repair_crumb(page, crumb_parts or [])
    page = _repair_raw_strings(page, strings)
    page = _SCRIPT_ELEMENT.sub("", page)
    page = _SCRIPT_LEFTOVER.sub(lambda m: "&lt;" + m.group(1) + m.group(2), page)
    page = _META_REFRESH.sub("", page)
    page = _STYLE_ELEMENT.sub(lambda m: m.group(1) + _css_offline(m.group(2)) + m.group(3), page)
    page = _START_TAG.sub(lambda m: _fix_tag(m, static_prefix=static_prefix, site=site), page)
    passed_sections = sorted(set(_PASSED_SECTION.findall(page)))
    page = _STATUS_ICON.sub(
        lambda m: m.group(1) + '<span class="er-status {}">{}</span>'.format(*_STATUS_WORD[m.group(2)])
        + m.group(3), page)
    extra_css = "".join(f'body:has(#option2:checked) a[href="#{sid}"]{{display:none}}\n'
                        for sid in passed_sections)
    return _inject(page, extra_css)


def _inject(page: str, extra_css: str = "") -> str:
    """Insert our <head> metadata, stylesheet and header note (each block ends with a newline,
    which ``_ANY_BLOCK`` removes with it, so re-injection is byte-identical)."""
    head = _BLOCK.format("head", f'\n{MARKER}\n<meta http-equiv="Content-Security-Policy" '
                                 f'content="{_CSP}">\n') + "\n"
    style = _BLOCK.format("style", f"<style>{OFFLINE_CSS}{extra_css}</style>") + "\n"
    note = _BLOCK.format("note", f'<div class="er-offline-note" role="note">{html.escape(NOTE_TEXT)}</div>') + "\n"
    m = _HEAD_OPEN.search(page)
    page = page[:m.end()] + head + page[m.end():] if m else head + page
    m = _HEAD_CLOSE.search(page)
    page = page[:m.start()] + style + page[m.start():] if m else style + page
    m = _BODY_OPEN.search(page)
    page = page[:m.end()] + note + page[m.end():] if m else page + note
    return page


# ----------------------------------------------------------------------------------------------
# the index


@dataclass
class _Row:
    status: str  # "passed" | "failed" | "error"
    run_time: _dt.datetime | None
    run_name: str
    batch: str
    batch_details: str
    suite: str
    passed: int | None
    evaluated: int | None
    page: Path | None
    strings: list[str] = field(default_factory=list)
    crumb: list[str] = field(default_factory=list)

    def sort_key(self) -> tuple:
        ts = self.run_time.timestamp() if self.run_time else float("-inf")
        return (-ts, self.run_name, self.suite, self.batch)


def _strings_in(obj: Any, out: list[str], limit: int = _MAX_REPAIR_STRINGS) -> list[str]:
    """Collect string leaves (keys too) that contain ``<`` from a JSON-like object."""
    stack = [obj]
    while stack and len(out) < limit:
        cur = stack.pop()
        if isinstance(cur, str):
            if "<" in cur:
                out.append(cur)
        elif isinstance(cur, dict):
            stack.extend(cur.keys())
            stack.extend(cur.values())
        elif isinstance(cur, (list, tuple)):
            stack.extend(cur)
        elif cur is not None and not isinstance(cur, (int, float, bool)):
            text = str(cur)
            if "<" in text:
                out.append(text)
    return out


def _validation_page(site: Path, parts: Iterable[str]) -> Path:
    parts = list(parts)
    return site.joinpath("validations", *parts[:-1], parts[-1] + ".html")


def _batch_details(meta: dict) -> str:
    ids = ((meta or {}).get("active_batch_definition") or {}).get("batch_identifiers") or {}
    bits = [f"{k}={v}" for k, v in sorted(ids.items(), key=lambda kv: str(kv[0]))
            if k != "path" and isinstance(v, (str, int, float)) and v != "<DATAFRAME>"]
    return ", ".join(bits)


def _raised(result: Any) -> bool:
    """True when an expectation result carries an exception (GX nests it per metric in 1.x)."""
    info = getattr(result, "exception_info", None) or {}
    if not isinstance(info, dict):
        return False
    if info.get("raised_exception"):
        return True
    return any(isinstance(v, dict) and v.get("raised_exception") for v in info.values())


def _rows_from_store(context, site: Path) -> list[_Row]:
    store = context.validation_results_store
    rows = []
    for key in store.list_keys():
        run_id = key.run_id
        suite = key.expectation_suite_identifier.name
        batch = key.batch_identifier or "__none__"
        page = _validation_page(site, key.to_tuple())
        row = _Row("error", run_id.run_time, run_id.run_name or "__none__", batch, "", suite,
                   None, None, page if page.is_file() else None,
                   crumb=["Validations", suite, run_id.run_name or "__none__"])
        try:
            res = store.get(key)
            stats = res.statistics or {}
            errors = sum(_raised(r) for r in (res.results or []))
            row.status = "passed" if res.success else ("error" if errors else "failed")
            row.passed = stats.get("successful_expectations")
            row.evaluated = stats.get("evaluated_expectations")
            row.batch_details = _batch_details(res.meta)
            if errors:
                note = f"{errors} expectation{'s' if errors > 1 else ''} raised an error"
                row.batch_details = f"{row.batch_details}; {note}" if row.batch_details else note
            row.strings = _strings_in(res.to_json_dict(), [])
        except Exception as exc:  # an unreadable result must not hide the others
            row.batch_details = f"result could not be read: {type(exc).__name__}"
        row.strings += [s for s in (suite, row.run_name, batch) if "<" in s]
        rows.append(row)
    return rows


_OVERVIEW_STATUS = re.compile(r"Status:</span>\s*<i\s+class=\"fas fa-([a-z-]+)", re.I)
_STAT_CELL = r"{0}</div></td>\s*<td\b[^>]*><div[^>]*>\s*(\d+)\s*</div>"


def _rows_from_pages(site: Path) -> list[_Row]:
    """Index rows read back from the validation pages (when no context is given)."""
    rows = []
    root = site / "validations"
    for page in sorted(root.rglob("*.html")) if root.is_dir() else []:
        parts = page.relative_to(root).parts
        if len(parts) < 4:
            continue
        suite, run_name, run_dir = ".".join(parts[:-3]), parts[-3], parts[-2]
        try:
            run_time = _dt.datetime.strptime(run_dir, _RUN_DIR_TIME).replace(tzinfo=_dt.UTC)
        except ValueError:
            run_time = None
        text = page.read_text(encoding="utf-8", errors="replace")
        m = _OVERVIEW_STATUS.search(text)
        status = {"check-circle": "passed", "times": "failed"}.get(m.group(1), "error") if m else "error"
        counts = [re.search(_STAT_CELL.format(label), text)
                  for label in ("Successful Expectations", "Evaluated Expectations")]
        passed, evaluated = (int(c.group(1)) if c else None for c in counts)
        rows.append(_Row(status, run_time, run_name, page.stem, "", suite, passed, evaluated, page,
                         strings=[s for s in (suite, run_name, page.stem) if "<" in s],
                         crumb=["Validations", suite, run_name]))
    return rows


def _load_suites(context) -> list:
    if context is None:
        return []
    try:
        return list(context.suites.all())
    except Exception:  # a broken suite file must not break the site: the pages on disk remain
        return []


def _suites(names: Iterable[str], site: Path, rows: list[_Row]) -> list[tuple[str, Path | None]]:
    """(suite name, its page or None) for the suites of the context, the results and the site."""
    exp_dir = site / "expectations"
    on_disk = {".".join(p.relative_to(exp_dir).with_suffix("").parts): p
               for p in (exp_dir.rglob("*.html") if exp_dir.is_dir() else [])}
    every = set(names) | {r.suite for r in rows} | set(on_disk)
    return [(n, on_disk.get(n)) for n in sorted(every)]


def _href(target: Path, start: Path) -> str:
    rel = Path(os.path.relpath(target, start)).as_posix()
    return html.escape(quote(rel), quote=True)


def _link(target: Path | None, site: Path) -> str:
    if target is None:
        return '<span class="er-muted">not built</span>'
    return f'<a href="{_href(target, site)}">view</a>'


def _fmt_time(t: _dt.datetime | None) -> str:
    if t is None:
        return "unknown"
    if t.tzinfo is not None:
        return t.astimezone(_dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    return t.strftime("%Y-%m-%d %H:%M:%S")


_STATUS_TEXT = {"passed": ("✔", "passed"), "failed": ("✘", "failed"), "error": ("⚠", "error")}


def _index_html(site: Path, rows: list[_Row], suites: list[tuple[str, Path | None]]) -> str:
    e = html.escape
    rows = sorted(rows, key=_Row.sort_key)
    n_fail = sum(r.status == "failed" for r in rows)
    n_err = sum(r.status == "error" for r in rows)
    n_pass = len(rows) - n_fail - n_err
    trs = []
    for r in rows:
        glyph, word = _STATUS_TEXT[r.status]
        cls = {"passed": "er-pass", "failed": "er-fail", "error": "er-error"}[r.status]
        counts = (f"{r.passed} / {r.evaluated}" if r.passed is not None and r.evaluated is not None
                  else "–")
        link = _link(r.page, site)
        details = f'<span class="er-sub">{e(r.batch_details)}</span>' if r.batch_details else ""
        trs.append(
            f'<tr class="er-row-{e(r.status)}">'
            f'<td><span class="er-status {cls}">{glyph} {word}</span></td>'
            f'<td class="er-time">{e(_fmt_time(r.run_time))}</td>'
            f"<td>{e(r.run_name)}</td><td>{e(r.batch)}{details}</td><td>{e(r.suite)}</td>"
            f'<td class="er-num">{e(counts)}</td><td>{link}</td></tr>')
    body_rows = "\n".join(trs) or '<tr><td colspan="7" class="er-empty">No validation results yet.</td></tr>'
    n_results = {name: [0, 0] for name, _ in suites}
    for r in rows:
        if r.suite in n_results:
            n_results[r.suite][0] += 1
            n_results[r.suite][1] += r.status != "passed"
    suite_rows = "\n".join(
        f"<tr><td>{e(name)}</td>"
        f'<td class="er-num">{n_results[name][0]}</td><td class="er-num">{n_results[name][1]}</td>'
        f"<td>{_link(page, site)}</td></tr>"
        for name, page in suites
    ) or '<tr><td colspan="4" class="er-empty">No expectation suites.</td></tr>'
    summary = (f"<strong>{len(rows)}</strong> validation result{'s' if len(rows) != 1 else ''}: "
               f'<span class="er-pass">{n_pass} passed</span>, '
               f'<span class="er-fail">{n_fail} failed</span>'
               + (f', <span class="er-error">{n_err} error</span>' if n_err else "")
               + ". Newest first.")
    page = f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>Data Docs: validation results</title>
</head>
<body>
<nav class="navbar"><span class="er-logo">Data Docs</span> <span class="er-muted">&middot; validation results</span></nav>
<main class="er-index">
<h1>Validation results</h1>
<p class="er-summary">{summary}</p>
<label class="er-filter"><input type="checkbox" id="er-failed-only"> Show failed and errored results only</label>
<table class="table er-results">
<thead><tr><th>Status</th><th>Run time</th><th>Run name</th><th>Batch / release</th><th>Suite</th><th>Passed / evaluated</th><th>Page</th></tr></thead>
<tbody>
{body_rows}
</tbody>
</table>
<h2>Expectation suites</h2>
<table class="er-results er-suites">
<thead><tr><th>Suite</th><th>Validation results</th><th>Not passed</th><th>Page</th></tr></thead>
<tbody>
{suite_rows}
</tbody>
</table>
</main>
</body>
</html>
"""
    return _inject(page)


# ----------------------------------------------------------------------------------------------
# files


def _write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` by ``text`` atomically (temporary file in the same folder + os.replace)."""
    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(prefix=".er-offline-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _site_files(site: Path, pattern: str) -> Iterator[Path]:
    return (p for p in sorted(site.rglob(pattern)) if p.is_file())


def make_site_offline(site_dir: str | os.PathLike[str], context=None) -> list[Path]:
    """Post-process the Data Docs site in ``site_dir`` for offline reading; return changed files.

    With a GX ``context`` the index is built from its validation results store and data strings
    of each result are re-escaped where GX inserted them raw; without one, the index is read back
    from the validation pages on disk. Running it again on an unchanged site changes nothing.
    """
    site = Path(site_dir)
    if not site.is_dir():
        raise FileNotFoundError(f"Data Docs site folder not found: {site} (build the docs first)")
    for stale in site.rglob(".er-offline-*.tmp"):  # left by a process killed while writing
        with contextlib.suppress(OSError):
            stale.unlink()

    rows = _rows_from_store(context, site) if context is not None else _rows_from_pages(site)
    by_page = {r.page.resolve(): r for r in rows if r.page is not None}
    suites = _load_suites(context)
    suite_strings: list[str] = []
    for suite in suites:
        _strings_in(suite.to_json_dict(), suite_strings)
    index = site / "index.html"
    changed: list[Path] = []
    for path in _site_files(site, "*.html"):
        old = path.read_text(encoding="utf-8", errors="replace")
        if path == index:
            new = _index_html(site, rows, _suites([s.name for s in suites], site, rows))
        elif MARKER in old:
            continue  # processed by this very version already (pages GX rebuilt have no marker)
        else:
            row = by_page.get(path.resolve())
            rel_root = os.path.relpath(site, path.parent)
            prefix = "" if rel_root == "." else Path(rel_root).as_posix() + "/"
            strings = list(row.strings) if row else []
            crumb = row.crumb if row else []
            if row is None and path.is_relative_to(site / "validations"):
                parts = path.relative_to(site / "validations").parts
                if len(parts) >= 4:
                    crumb = ["Validations", ".".join(parts[:-3]), parts[-3]]
                    strings += [s for s in crumb[1:] + [path.stem] if "<" in s]
            strings += suite_strings
            new = offline_page(old, strings=strings, crumb_parts=crumb, static_prefix=prefix,
                               site=site)
        if new != old:
            _write_atomic(path, new)
            changed.append(path)
    for path in _site_files(site, "*.css"):
        old = path.read_text(encoding="utf-8", errors="replace")
        new = _css_offline(old)
        if new != old:
            _write_atomic(path, new)
            changed.append(path)
    return changed


def local_site_dir(context, site_name: str = "local_site") -> Path:
    """Folder of the filesystem Data Docs site ``site_name`` of ``context`` (it may not exist yet)."""
    sites = context.variables.data_docs_sites or {}
    if site_name not in sites:
        raise LookupError(f"no Data Docs site named {site_name!r}; configured: {sorted(sites)}")
    url = context.get_docs_sites_urls(site_name=site_name, only_if_exists=False)[0]["site_url"]
    parts = urlsplit(url or "")
    if parts.scheme != "file":
        raise LookupError(f"Data Docs site {site_name!r} is not on the local filesystem: {url}")
    return Path(url2pathname(parts.path)).parent
