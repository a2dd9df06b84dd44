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
  context's validation results store, or from the pages on disk without a context);
* it applies expectation **severity**, which GX's own success flag ignores: a result is
  "failed" only when a critical expectation failed (``expectation_config.severity``, critical by
  default), else "error" when an expectation raised, else "passed with warnings" when a warning
  or info expectation failed, else "passed". The index shows these statuses with the counts;
  validation pages get a severity badge next to each expectation's status and a status line
  that follows the same rule.

The processing is idempotent: pages carry :data:`MARKER`, which names the version of this module
that processed them, and are skipped on the next run (a page GX rebuilt has no marker; a new
version of this module redoes every page). Every file is written atomically (temporary file in
the same folder, then :func:`os.replace`), so a crash never leaves a half-written page.

The index is rebuilt on every call, so it must stay cheap as results pile up: stored results are
read as raw JSON (no GX deserialisation), and the row derived from each result file is cached in
``.er-offline-index-cache.json`` in the site folder, keyed by the file's path relative to the
store and valid while its modification time, size and inode are unchanged.

Typical use, after GX built the docs (the checkpoint action
:class:`er_expectations.gx.actions.OfflineDataDocsAction` does this for you)::

    context.build_data_docs()
    make_site_offline(local_site_dir(context), context)
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import functools
import hashlib
import html
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit
from urllib.request import url2pathname

from ..io import atomic_write
from ..severity import severity_of, status_of

__all__ = [
    "MARKER",
    "NOTE_TEXT",
    "OFFLINE_CSS",
    "PageVerdict",
    "local_site_dir",
    "make_site_offline",
    "offline_page",
    "results_without_pages",
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
td:has(> div > span > .er-status){width:8.5rem;white-space:nowrap}
.er-pass{color:var(--er-pass)}.er-fail{color:var(--er-fail)}.er-error,.er-warn{color:var(--er-warn)}
/* severity of each expectation (badge after its status) and the severity-aware status line */
.er-sev{display:inline-block;margin-left:.45rem;padding:0 .3rem;border:1px solid;border-radius:3px;
  font-size:11px;font-weight:600;line-height:1.4;vertical-align:1px;white-space:nowrap}
.er-sev-critical{color:#8c1d18;background:#fdecea;border-color:#f1aeb5}
.er-sev-warning{color:#6b4a00;background:#fff4d6;border-color:#e5c66b}
.er-sev-info{color:#3d4b5c;background:#eef2f6;border-color:#c5ced8}
.er-pass+.er-sev{color:var(--er-muted);background:#fff;border-color:var(--er-border);font-weight:400}
.er-overall{font-weight:600}
.er-overall-details{color:#1f2328}
.er-rule{color:var(--er-muted);font-size:12.5px}
/* er-expectations observed values: the value first, its interval and sample size under it */
td:has(> div > span > .er-obs){min-width:18rem}
.er-obs-lead,.er-obs-main,.er-obs-sub{display:block}
.er-obs b{font-weight:700;white-space:nowrap}
.er-obs-sub{color:var(--er-muted);font-size:12.5px}
.er-obs{font-variant-numeric:tabular-nums}
/* tables nested in a result (e.g. the clusters behind an error): no breaks inside words */
.show-scrollbars table,.show-scrollbars table .show-scrollbars{overflow-wrap:break-word}
.show-scrollbars table td,.show-scrollbars table th{font-variant-numeric:tabular-nums}
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
body:has(#er-failed-only:checked) tr.er-row-passed,
body:has(#er-failed-only:checked) tr.er-row-warnings{display:none}
.er-index .er-rule{max-width:60rem;margin:.2rem 0 .6rem}
.er-results tr.er-run th{background:#eef1f4;text-align:left;font-weight:400;padding:.4rem .55rem}
.er-run-name{font-weight:600}
.er-results td:first-child{white-space:nowrap}
.er-results td.er-num.er-fail,.er-results td.er-num.er-warn{font-weight:700}
.er-zero{color:var(--er-muted)}
.er-results td.er-num{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums;width:1%}
.er-results th{white-space:nowrap}
.er-suites{width:auto;min-width:40rem}
.er-suites td.er-num{width:auto}
.er-results .er-time{white-space:nowrap;font-variant-numeric:tabular-nums}
.er-results td{overflow-wrap:break-word}
.er-results th.er-num-head{white-space:normal;text-align:right;width:6.5rem}
.er-results tbody tr:nth-child(even){background:#fafbfc}
.er-results tr.er-row-failed td:first-child{box-shadow:inset 3px 0 0 var(--er-fail)}
.er-results tr.er-row-error td:first-child{box-shadow:inset 3px 0 0 var(--er-warn)}
.er-results tr.er-row-passed td:first-child{box-shadow:inset 3px 0 0 var(--er-pass)}
.er-results tr.er-row-warnings td:first-child{box-shadow:inset 3px 0 0 var(--er-warn)}
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


_VERSION = _fingerprint()
#: ``<meta>`` present once in every processed page; it names the version that processed it.
MARKER = f'<meta name="er-offline" content="er-expectations {_VERSION}">'
_MARKER_BYTES = MARKER.encode()
_HEAD_BYTES = 16384  # the marker follows <head>: a processed page shows it in its first bytes

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
                 static_prefix: str | None = None, site: Path | None = None,
                 verdict: PageVerdict | None = None) -> str:
    """Return the offline version of one Data Docs page (idempotent: f(f(x)) == f(x)).

    ``strings`` are data or config strings known to appear in the page (run name, column names,
    unexpected values...), ``crumb_parts`` the raw breadcrumb of a validation page,
    ``static_prefix`` the relative path from the page to the site root (to use the local logo),
    and ``verdict`` the severity reading of the page's validation result (a badge per
    expectation and a severity-aware status line; see :class:`PageVerdict`).
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
    page = _OBSERVED_CELL.sub(_observed, page)
    if verdict is not None:
        page = _apply_verdict(page, verdict)
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
# severity


@dataclass(frozen=True)
class PageVerdict:
    """What the severity rule says about one stored validation result.

    ``status`` is ``"failed"`` when a critical expectation failed, else ``"error"`` when an
    expectation raised, else ``"warnings"`` when a warning or info expectation failed, else
    ``"passed"``. ``expectations`` holds ``(success, severity)`` for every expectation result,
    in the order GX lays them out on the validation page.
    """

    status: str
    critical_failed: int = 0
    warnings_failed: int = 0
    errors: int = 0
    expectations: tuple[tuple[bool, str], ...] = ()


def _severity(result: Any) -> str:
    """Severity of one expectation result (a JSON dict), by :func:`er_expectations.severity.severity_of`."""
    config = result.get("expectation_config") if isinstance(result, dict) else None
    return severity_of(config.get("severity") if isinstance(config, dict) else None)


def _raised(result: Any) -> bool:
    """True when an expectation result (JSON dict or GX object) carries an exception (GX 1.x
    nests it per metric)."""
    info = (result.get("exception_info") if isinstance(result, dict)
            else getattr(result, "exception_info", None)) or {}
    if not isinstance(info, dict):
        return False
    if info.get("raised_exception"):
        return True
    return any(isinstance(v, dict) and v.get("raised_exception") for v in info.values())


def _page_order(results: list[dict]) -> list[dict]:
    """The expectation results in the order of GX's ValidationResultsPageRenderer: table-level
    ones first, then one section per column (alphabetical, or the observed order of the first
    ``expect_table_columns_to_match_ordered_list`` result when it names the same columns)."""
    table: list[dict] = []
    columns: dict[Any, list[dict]] = {}
    configs = [r.get("expectation_config") for r in results]
    configs = [c if isinstance(c, dict) else {} for c in configs]
    for result, config in zip(results, configs, strict=True):
        kwargs = config.get("kwargs")
        if isinstance(kwargs, dict) and "column" in kwargs:
            try:
                columns.setdefault(kwargs["column"], []).append(result)
            except TypeError:  # an unhashable column: GX could not render it either
                return []
        else:
            table.append(result)
    try:
        ordered = sorted(columns)
    except TypeError:
        return []
    listed = next((r for r, c in zip(results, configs, strict=True)
                   if c.get("type") == "expect_table_columns_to_match_ordered_list"), None)
    if listed is not None:
        outcome = listed.get("result")
        observed = outcome.get("observed_value") if isinstance(outcome, dict) else None
        with contextlib.suppress(TypeError):
            if isinstance(observed, list) and set(observed) == set(ordered):
                ordered = observed
    return table + [r for column in ordered for r in columns.get(column, [])]


def _verdict(doc: dict) -> PageVerdict:
    """Apply the severity rule to a stored validation result (its JSON dict)."""
    results = [r for r in (doc.get("results") or []) if isinstance(r, dict)]
    critical = warnings = errors = 0
    for result in results:
        if _raised(result):
            errors += 1
        elif result.get("success") is not True:
            if _severity(result) == "critical":
                critical += 1
            else:
                warnings += 1
    status = status_of(critical_failed=critical, errors=errors, warnings_failed=warnings)
    if not results and doc.get("success") is False:
        status = "failed"
    layout = tuple((r.get("success") is True, _severity(r)) for r in _page_order(results))
    return PageVerdict(status, critical, warnings, errors, layout)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _verdict_details(v: PageVerdict) -> str:
    """Plain-text counts, e.g. '2 critical expectations failed, 1 warning/info expectation failed'."""
    bits = []
    if v.critical_failed:
        bits.append(f"{_plural(v.critical_failed, 'critical expectation')} failed")
    if v.warnings_failed:
        bits.append(f"{_plural(v.warnings_failed, 'warning/info expectation')} failed")
    if v.errors:
        bits.append(f"{_plural(v.errors, 'expectation')} raised an error")
    return ", ".join(bits)


_SEVERITY_TITLE = {
    "critical": "critical: a failure fails the validation",
    "warning": "warning: a failure is reported but does not fail the validation",
    "info": "info: a failure is reported but does not fail the validation",
}
_OVERALL = {  # status -> (GX icon classes, word on the page, our CSS class)
    "passed": ("check-circle text-success", "Succeeded", "er-pass"),
    "warnings": ("exclamation-triangle text-warning", "Passed with warnings", "er-warn"),
    "failed": ("times text-danger", "Failed", "er-fail"),
    "error": ("exclamation-triangle text-warning", "Error", "er-error"),
}
_STATUS_DONE = re.compile(
    r"""<i\s+class="fas fa-(check-circle|times|exclamation-triangle)\b[^"]*"[^<>]*>\s*</i>"""
    r"""<span class="er-status er-\w+">\w+</span>"""
)
_SEV_BADGE = re.compile(r'<span class="er-sev er-sev-\w+"[^<>]*>[^<]*</span>')
_OVERALL_LINE = re.compile(
    r"""(<span class="h6"\s*>Status:</span>\s*)(?:<!-- er-overall -->.*?<!-- /er-overall -->|"""
    r"""<i class="fas fa-(?:check-circle|times)\b[^"]*" aria-hidden="true"></i>\s*(?:Succeeded|Failed)\b)""",
    re.S,
)
_OVERALL_DATA = re.compile(
    r'<span class="er-overall er-\w+" data-er-status="(passed|warnings|failed|error)" '
    r'data-er-critical="(\d+)" data-er-warnings="(\d+)" data-er-errors="(\d+)">'
)


def _badge(severity: str) -> str:
    e = html.escape
    return (f'<span class="er-sev er-sev-{e(severity)}" title="{e(_SEVERITY_TITLE[severity])}">'
            f"{e(severity)}</span>")


def _overall_html(v: PageVerdict) -> str:
    icon, word, cls = _OVERALL[v.status]
    details = _verdict_details(v)
    e = html.escape
    counts = f' <span class="er-overall-details">({e(details)})</span>' if details else ""
    rule = ('<br><span class="er-rule">Severity rule: only a failed critical expectation fails '
            "the validation; failed warning and info expectations are reported.</span>"
            if v.critical_failed or v.warnings_failed else "")
    return (f'<!-- er-overall --><span class="er-overall {cls}" data-er-status="{e(v.status)}" '
            f'data-er-critical="{v.critical_failed}" data-er-warnings="{v.warnings_failed}" '
            f'data-er-errors="{v.errors}"><i class="fas fa-{icon}" aria-hidden="true"></i> {e(word)}'
            f"</span>{counts}{rule}<!-- /er-overall -->")


def _apply_verdict(page: str, verdict: PageVerdict) -> str:
    """Severity badge in each status cell and a severity-aware overall status line.

    The badges are only added when the status icons of the page match the stored results one to
    one (same number, same pass/fail in GX's order), so a page laid out differently never gets a
    wrong badge. Badges and the status line from an earlier run are replaced (idempotent).
    """
    page = _SEV_BADGE.sub("", page)
    icons = list(_STATUS_DONE.finditer(page))
    expected = verdict.expectations
    if icons and len(icons) == len(expected) and all(
            (m.group(1) == "check-circle") == ok for m, (ok, _) in zip(icons, expected, strict=True)):
        pieces, last = [], 0
        for m, (_, severity) in zip(icons, expected, strict=True):
            pieces += [page[last:m.end()], _badge(severity)]
            last = m.end()
        page = "".join(pieces) + page[last:]
    return _OVERALL_LINE.sub(lambda m: m.group(1) + _overall_html(verdict), page, count=1)


# ----------------------------------------------------------------------------------------------
# observed values of er-expectations: value first, the interval and sample size under it

_NUM = r"(?:[−-]?\d[\d,]*(?:\.\d+)?|[−-]?∞|—)"
_OBSERVED_TEXT = re.compile(
    rf"(?:predicted (?P<predicted>{_NUM}); )?(?P<label>true value estimated )?"
    rf"(?P<value>{_NUM}(?: ± {_NUM})?|undefined)"
    r" \((?P<sub>[^()<>]*\b(?:clusters|draws|records)\b[^()<>]*)\)"
)
_OBSERVED_CELL = re.compile(
    r"""(<td id="section-\d+-content-block-\d+-cell-\d+-3"[^<>]*><div class="show-scrollbars">\s*<span\s*>\s*)"""
    r"""([^<>]+?)(\s*</span>)"""
)


def _observed(match: re.Match) -> str:
    text = match.group(2)
    m = _OBSERVED_TEXT.fullmatch(text)
    if m is None:
        return match.group(0)
    # the text is GX-escaped already and these groups hold only numbers and fixed words
    lead = (f'<span class="er-obs-lead">predicted <b>{m.group("predicted")}</b>;</span> '
            if m.group("predicted") else "")
    return (f'{match.group(1)}<span class="er-obs">{lead}<span class="er-obs-main">'
            f'{m.group("label") or ""}<b>{m.group("value")}</b></span> '
            f'<span class="er-obs-sub">({m.group("sub")})</span></span>{match.group(3)}')


# ----------------------------------------------------------------------------------------------
# the index

_CACHE_FILE = ".er-offline-index-cache.json"
_CACHED_FIELDS = ("status", "passed", "evaluated", "critical_failed", "warnings_failed", "errors",
                  "batch_details")


@dataclass
class _Row:
    status: str  # "passed" | "warnings" | "failed" | "error"
    run_time: _dt.datetime | None
    run_name: str
    batch: str
    batch_details: str
    suite: str
    passed: int | None
    evaluated: int | None
    page: Path | None
    critical_failed: int | None = None
    warnings_failed: int | None = None
    errors: int | None = None
    strings: list[str] = field(default_factory=list)
    crumb: list[str] = field(default_factory=list)
    source: Callable[[], dict] | None = None  # reads the stored result again (pages to redo)
    doc: dict | None = None  # the stored result, when this run read it anyway

    def sort_key(self) -> tuple:
        ts = self.run_time.timestamp() if self.run_time else float("-inf")
        return (-ts, self.run_name, self.suite, self.batch)

    def result(self) -> dict | None:
        """The stored validation result as JSON (read at most once), or None if unreadable."""
        if self.doc is None and self.source is not None:
            try:
                self.doc = self.source()
            except Exception:  # the page is still made offline, only without severity badges
                self.source = None
        return self.doc


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


def results_without_pages(context, site: Path) -> list:
    """Stored validation results whose page is missing from ``site`` (a run killed between
    storing its results and building its pages), readable ones only: a damaged result stays
    listed as an error in the index, with nothing built for it."""
    store = context.validation_results_store
    missing = []
    for key in store.list_keys():
        if _validation_page(site, key.to_tuple()).is_file():
            continue
        try:
            _read_result(store, key)
        except Exception:  # noqa: BLE001 - unreadable: the index shows it as an error
            continue
        missing.append(key)
    return missing


def _batch_details(meta: dict) -> str:
    ids = ((meta or {}).get("active_batch_definition") or {}).get("batch_identifiers") or {}
    bits = [f"{k}={v}" for k, v in sorted(ids.items(), key=lambda kv: str(kv[0]))
            if k != "path" and isinstance(v, (str, int, float)) and v != "<DATAFRAME>"]
    return ", ".join(bits)


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _digest(doc: dict) -> dict:
    """The index fields of one stored validation result (JSON-safe: they are cached)."""
    verdict = _verdict(doc)
    stats = doc.get("statistics") or {}
    details = _batch_details(doc.get("meta") or {})
    if verdict.errors:
        note = f"{_plural(verdict.errors, 'expectation')} raised an error"
        details = f"{details}; {note}" if details else note
    return {"status": verdict.status, "passed": _count(stats.get("successful_expectations")),
            "evaluated": _count(stats.get("evaluated_expectations")),
            "critical_failed": verdict.critical_failed, "warnings_failed": verdict.warnings_failed,
            "errors": verdict.errors, "batch_details": details}


def _read_result(store, key) -> dict:
    """One stored validation result as a JSON dict, read raw from the store backend (no GX
    deserialisation); falls back to ``store.get`` for backends that keep objects."""
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


def _result_stamp(backend, key_tuple: tuple) -> tuple[str | None, list[int] | None]:
    """(file path relative to the store, [mtime_ns, size, inode]) of a filesystem-stored result;
    (None, None) for other backends, which are read every time."""
    base = getattr(backend, "full_base_directory", None)
    to_path = getattr(backend, "_convert_key_to_filepath", None)
    if not isinstance(base, (str, os.PathLike)) or not callable(to_path):
        return None, None
    try:
        rel = to_path(key_tuple)
        st = os.stat(os.path.join(base, rel))
    except Exception:  # a private GX helper: any surprise just disables the cache for it
        return None, None
    return Path(rel).as_posix(), [st.st_mtime_ns, st.st_size, st.st_ino]


class _RowCache:
    """Index fields per result file, valid while the file's (mtime, size, inode) is unchanged.

    It lives in the site folder (``.er-offline-index-cache.json``), belongs to this version of
    the module (another version starts afresh), drops entries of results that are gone, and is
    rewritten atomically and only when it changed.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.old = self._load()
        self.new: dict[str, dict] = {}

    def _load(self) -> dict:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict) or data.get("version") != _VERSION:
            return {}
        rows = data.get("rows")
        return rows if isinstance(rows, dict) else {}

    def get(self, name: str, stamp: list[int]) -> dict | None:
        entry = self.old.get(name)
        if not (isinstance(entry, dict) and entry.get("stamp") == stamp):
            return None
        row = entry.get("row")
        if not (isinstance(row, dict) and set(row) == set(_CACHED_FIELDS)):
            return None
        self.new[name] = entry
        return row

    def put(self, name: str, stamp: list[int], row: dict) -> None:
        self.new[name] = {"stamp": stamp, "row": row}

    def save(self) -> None:
        if self.new == self.old:
            return
        text = json.dumps({"version": _VERSION, "rows": self.new}, sort_keys=True,
                          separators=(",", ":"), ensure_ascii=False)
        _write_atomic(self.path, text + "\n")


def _rows_from_store(context, site: Path, cache: _RowCache | None = None) -> list[_Row]:
    store = context.validation_results_store
    backend = getattr(store, "store_backend", None)
    rows = []
    for key in store.list_keys():
        run_id = key.run_id
        suite = key.expectation_suite_identifier.name
        run_name = run_id.run_name or "__none__"
        batch = key.batch_identifier or "__none__"
        key_tuple = key.to_tuple()
        page = _validation_page(site, key_tuple)
        row = _Row("error", run_id.run_time, run_name, batch, "", suite, None, None,
                   page if page.is_file() else None, crumb=["Validations", suite, run_name],
                   source=functools.partial(_read_result, store, key))
        name, stamp = _result_stamp(backend, key_tuple)
        fields = cache.get(name, stamp) if cache is not None and name and stamp else None
        try:
            if fields is None:
                row.doc = row.source()
                fields = _digest(row.doc)
                if cache is not None and name and stamp:
                    cache.put(name, stamp, fields)
            for attr in _CACHED_FIELDS:
                setattr(row, attr, fields[attr])
        except Exception as exc:  # an unreadable result must not hide the others
            row.status, row.source = "error", None
            row.batch_details = f"result could not be read: {type(exc).__name__}"
        row.strings += [s for s in (suite, row.run_name, batch) if "<" in s]
        rows.append(row)
    return rows


_OVERVIEW_STATUS = re.compile(r"Status:</span>\s*<i\s+class=\"fas fa-([a-z-]+)", re.I)
_STAT_CELL = r"{0}</div></td>\s*<td\b[^>]*><div[^>]*>\s*(\d+)\s*</div>"


def _rows_from_pages(site: Path) -> list[_Row]:
    """Index rows read back from the validation pages (when no context is given). A page that
    this module processed with a context carries the severity-aware status; GX's status else."""
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
        counts = [re.search(_STAT_CELL.format(label), text)
                  for label in ("Successful Expectations", "Evaluated Expectations")]
        passed, evaluated = (int(c.group(1)) if c else None for c in counts)
        row = _Row("error", run_time, run_name, page.stem, "", suite, passed, evaluated, page,
                   strings=[s for s in (suite, run_name, page.stem) if "<" in s],
                   crumb=["Validations", suite, run_name])
        ours = _OVERALL_DATA.search(text)
        if ours:
            row.status = ours.group(1)
            row.critical_failed, row.warnings_failed, row.errors = map(int, ours.group(2, 3, 4))
        else:
            m = _OVERVIEW_STATUS.search(text)
            row.status = {"check-circle": "passed", "times": "failed"}.get(m.group(1), "error") if m else "error"
        rows.append(row)
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


_STATUS_TEXT = {"passed": ("✔", "passed", "er-pass"),
                "warnings": ("⚠", "passed with warnings", "er-warn"),
                "failed": ("✘", "failed", "er-fail"),
                "error": ("⚠", "error", "er-error")}


def _tally(rows: list[_Row]) -> str:
    """'12 passed, 3 passed with warnings, 1 failed' (zero warnings/errors left out), as HTML."""
    n = {s: sum(r.status == s for r in rows) for s in _STATUS_TEXT}
    parts = [f'<span class="er-pass">{n["passed"]} passed</span>']
    if n["warnings"]:
        parts.append(f'<span class="er-warn">{n["warnings"]} passed with warnings</span>')
    parts.append(f'<span class="er-fail">{n["failed"]} failed</span>')
    if n["error"]:
        parts.append(f'<span class="er-error">{n["error"]} error</span>')
    return ", ".join(parts)


def _num_cell(value: int | None, cls: str) -> str:
    if value is None:
        return '<td class="er-num er-muted">–</td>'
    return f'<td class="er-num{f" {cls}" if value else " er-zero"}">{value}</td>'


def _index_html(site: Path, rows: list[_Row], suites: list[tuple[str, Path | None]]) -> str:
    e = html.escape
    rows = sorted(rows, key=_Row.sort_key)
    groups: dict[tuple, list[_Row]] = {}
    for r in rows:
        groups.setdefault((r.run_time, r.run_name), []).append(r)
    trs = []
    run = None
    for r in rows:
        if (r.run_time, r.run_name) != run:  # one heading row per run (newest first)
            run = (r.run_time, r.run_name)
            group = groups[run]
            trs.append(
                f'<tr class="er-run"><th colspan="8">Run <span class="er-run-name">{e(r.run_name)}'
                f"</span> at {e(_fmt_time(r.run_time))}: "
                f"{_plural(len(group), 'result')}, {_tally(group)}</th></tr>")
        glyph, word, cls = _STATUS_TEXT[r.status]
        counts = (f"{r.passed} / {r.evaluated}" if r.passed is not None and r.evaluated is not None
                  else "–")
        details = f'<span class="er-sub">{e(r.batch_details)}</span>' if r.batch_details else ""
        trs.append(
            f'<tr class="er-row-{e(r.status)}">'
            f'<td><span class="er-status {cls}">{glyph} {word}</span></td>'
            f"<td>{e(r.batch)}{details}</td>"
            f"{_num_cell(r.critical_failed, 'er-fail')}{_num_cell(r.warnings_failed, 'er-warn')}"
            f'<td class="er-num">{e(counts)}</td><td>{e(r.suite)}</td>'
            f'<td>{e(r.run_name)}<span class="er-sub er-time">{e(_fmt_time(r.run_time))}</span></td>'
            f"<td>{_link(r.page, site)}</td></tr>")
    body_rows = "\n".join(trs) or '<tr><td colspan="8" class="er-empty">No validation results yet.</td></tr>'
    per_suite = {name: [0, 0, 0] for name, _ in suites}
    for r in rows:
        if r.suite in per_suite:
            per_suite[r.suite][0] += 1
            per_suite[r.suite][1] += r.status in ("failed", "error")
            per_suite[r.suite][2] += r.status == "warnings"
    suite_rows = "\n".join(
        f"<tr><td>{e(name)}</td>"
        + "".join(f'<td class="er-num">{n}</td>' for n in per_suite[name])
        + f"<td>{_link(page, site)}</td></tr>"
        for name, page in suites
    ) or '<tr><td colspan="5" class="er-empty">No expectation suites.</td></tr>'
    summary = (f"<strong>{len(rows)}</strong> validation result{'s' if len(rows) != 1 else ''}: "
               f"{_tally(rows)}. Newest first.")
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
<p class="er-rule">A validation result fails only when a <strong>critical</strong> expectation fails.
Failed <strong>warning</strong> and <strong>info</strong> expectations are counted and shown, but
the result then passes with warnings. An expectation that raised an error makes the result an error.</p>
<label class="er-filter"><input type="checkbox" id="er-failed-only"> Show failed and errored results only</label>
<div class="table-responsive">
<table class="table er-results">
<thead><tr><th>Status</th><th>Batch / release</th><th class="er-num-head">Critical failed</th><th class="er-num-head">Warning / info failed</th><th class="er-num-head">Passed / evaluated</th><th>Suite</th><th>Run</th><th>Page</th></tr></thead>
<tbody>
{body_rows}
</tbody>
</table>
</div>
<h2>Expectation suites</h2>
<table class="er-results er-suites">
<thead><tr><th>Suite</th><th>Validation results</th><th>Failed or error</th><th>Passed with warnings</th><th>Page</th></tr></thead>
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
    """Replace ``path`` by ``text`` atomically (see :func:`er_expectations.io.atomic_write`)."""
    atomic_write(path, text)


def _site_files(site: Path, pattern: str) -> Iterator[Path]:
    return (p for p in sorted(site.rglob(pattern)) if p.is_file())


def _carries_marker(path: Path) -> bool:
    """True when the page was processed by this version (the marker sits right after <head>)."""
    try:
        with path.open("rb") as fh:
            head = fh.read(_HEAD_BYTES)
    except OSError:
        return False
    return _MARKER_BYTES in head


def make_site_offline(site_dir: str | os.PathLike[str], context=None) -> list[Path]:
    """Post-process the Data Docs site in ``site_dir`` for offline reading; return changed files.

    With a GX ``context`` the index is built from its validation results store (raw JSON, the
    derived rows cached in ``.er-offline-index-cache.json`` in the site, which is not listed among
    the changed files), validation pages get severity badges and a severity-aware status line,
    and data strings of each result are re-escaped where GX inserted them raw; without one, the
    index is read back from the validation pages on disk. Pages that already carry this
    version's marker are skipped. Running it again on an unchanged site changes nothing.
    """
    site = Path(site_dir)
    if not site.is_dir():
        raise FileNotFoundError(f"Data Docs site folder not found: {site} (build the docs first)")
    for stale in site.rglob(".er-offline-*.tmp"):  # left by a process killed while writing
        with contextlib.suppress(OSError):
            stale.unlink()

    cache = _RowCache(site / _CACHE_FILE) if context is not None else None
    rows = _rows_from_store(context, site, cache) if context is not None else _rows_from_pages(site)
    by_page = {r.page.resolve(): r for r in rows if r.page is not None}
    suites = _load_suites(context)
    suite_strings: list[str] | None = None
    index = site / "index.html"
    changed: list[Path] = []
    if context is not None and not index.exists():
        # pages built without GX's index (OfflineDataDocsAction(build=True)): ours is written below
        _write_atomic(index, "<!-- er-expectations index placeholder -->\n")
    for path in _site_files(site, "*.html"):
        if path != index and _carries_marker(path):
            continue  # processed by this very version already (pages GX rebuilt have no marker)
        old = path.read_text(encoding="utf-8", errors="replace")
        if path == index:
            new = _index_html(site, rows, _suites([s.name for s in suites], site, rows))
        elif MARKER in old:
            continue
        else:
            if suite_strings is None:
                suite_strings = []
                for suite in suites:
                    _strings_in(suite.to_json_dict(), suite_strings)
            row = by_page.get(path.resolve())
            rel_root = os.path.relpath(site, path.parent)
            prefix = "" if rel_root == "." else Path(rel_root).as_posix() + "/"
            strings = list(row.strings) if row else []
            crumb = row.crumb if row else []
            verdict = None
            doc = row.result() if row is not None and context is not None else None
            if doc is not None:
                _strings_in(doc, strings)
                verdict = _verdict(doc)
            if row is None and path.is_relative_to(site / "validations"):
                parts = path.relative_to(site / "validations").parts
                if len(parts) >= 4:
                    crumb = ["Validations", ".".join(parts[:-3]), parts[-3]]
                    strings += [s for s in crumb[1:] + [path.stem] if "<" in s]
            strings += suite_strings
            new = offline_page(old, strings=strings, crumb_parts=crumb, static_prefix=prefix,
                               site=site, verdict=verdict)
        if new != old:
            _write_atomic(path, new)
            changed.append(path)
    for path in _site_files(site, "*.css"):
        old = path.read_text(encoding="utf-8", errors="replace")
        new = _css_offline(old)
        if new != old:
            _write_atomic(path, new)
            changed.append(path)
    if cache is not None:
        cache.save()
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
