"""GX's rendered content as HTML, escaped by construction (the Data Docs view, SPEC 13).

GX describes a page as a tree of ``string_template`` blocks: a template with ``$params``
and a styling dict of tags, classes and attributes. Nothing in it is passed through as
markup: :func:`render_string_template` escapes the template text and every parameter,
keeps element names from a fixed list, classes that look like classes, ``title``/``role``/
``aria-*`` attributes and relative links only, and rebuilds GX's two "trusted HTML"
parameters (the status icon, a ``<pre>`` JSON block) from their text. These are the Jinja
filters of :mod:`er_expectations.gx.docs.data_docs`' templates (``string_template``, ``attrs``,
``paragraphs``).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote, urlsplit

from markupsafe import Markup, escape

__all__ = ["class_attrs", "hashes", "name_breaks", "paragraphs", "render_string_template"]

_PARAM = re.compile(r"\$(?:(\$)|\{(\w+)\}|(\w+))")
_TAGS = frozenset({"span", "div", "p", "h1", "h2", "h3", "h4", "h5", "h6", "i", "b", "strong",
                   "em", "code", "pre", "small", "li", "ul", "ol", "a", "u", "sub", "sup"})
_ICON = re.compile(r"\bfa-(check-circle|times|exclamation-triangle|comment|question-circle)\b")
_CLASS = re.compile(r"^[A-Za-z][\w-]*$")


#: A full hash in a provenance line: a git commit (40 or 64 hex digits) or a SHA-256 (64).
_HASH = re.compile(r"(?<![0-9a-f])(?:[0-9a-f]{64}|[0-9a-f]{40})(?![0-9a-f])")


def hashes(text: Any) -> Markup:
    """``text`` escaped, each full hash in it a ``<code class="er-hash">`` holding the WHOLE value
    (the stylesheet shows its first 16 digits and "…"; selecting or copying it takes all of it, and its
    ``title`` shows it on hover): shown shortened, copyable in full, with no script (issue 29 item 3)."""
    out = Markup("")
    last = 0
    source = str(text)
    for match in _HASH.finditer(source):
        out += escape(source[last:match.start()])
        out += Markup('<code class="er-hash" title="{0}">{0}</code>').format(match.group(0))
        last = match.end()
    return out + escape(source[last:])


def _tag(name: Any, default: str = "span") -> str:
    name = str(name or default).lower()
    return name if name in _TAGS else default


def _safe_href(value: Any) -> str | None:
    """A relative link (no scheme, no host), percent-encoded; None for anything else."""
    text = str(value or "")
    if not text or text.startswith(("/", "\\")) or any(ord(c) < 32 for c in text):
        return None
    if urlsplit(text).scheme or ":" in text.split("/", 1)[0]:
        return None
    return quote(text, safe="/#.-_~%")


def _attrs(styling: Any, *, extra: Iterable[str] = (), title: str | None = None,
           allow_href: bool = False) -> Markup:
    """HTML attributes from a GX styling dict: CSS classes, ``title``/``role``/``aria-*`` and a
    relative ``href``; everything escaped, inline styles and other attributes dropped."""
    styling = styling if isinstance(styling, Mapping) else {}
    raw = styling.get("classes")
    classes = [c for c in (raw if isinstance(raw, list) else []) if isinstance(c, str)]
    classes = [c for c in [*classes, *extra] if _CLASS.match(c)]
    out = Markup(' class="{}"').format(" ".join(classes)) if classes else Markup("")
    attributes = styling.get("attributes")
    for key, value in (attributes.items() if isinstance(attributes, Mapping) else ()):
        key = str(key).lower()
        if key == "href" and allow_href:
            href = _safe_href(value)
            if href is not None:
                out += Markup(' href="{}"').format(href)
        elif (key == "title" and not title) or key == "role" or re.fullmatch(r"aria-[a-z]+", key):
            out += Markup(' {}="{}"').format(key, value)
    if title:
        out += Markup(' title="{}"').format(title)
    return out


def _element(tag: str, styling: Any, content: Markup, **kw: Any) -> Markup:
    tag = _tag(tag)
    has_href = isinstance(styling, Mapping) and _safe_href(
        (styling.get("attributes") or {}).get("href") if isinstance(styling.get("attributes"), Mapping) else None)
    if tag == "a" and not has_href:
        tag = "span"
    attrs = _attrs(styling, allow_href=tag == "a", **kw)
    return Markup("<{0}{1}>{2}</{0}>").format(Markup(tag), attrs, content)


def _param_value(name: str, value: Any) -> Markup:
    """One template parameter as escaped text. GX's two "trusted HTML" parameters are rebuilt,
    never passed through: the status icon becomes our own icon element, a ``<pre>`` JSON block
    escaped text in a ``<pre>``."""
    text = "" if value is None else str(value)
    if name == "html_success_icon":
        icon = _ICON.search(text)
        return Markup('<i class="fas fa-{}" aria-hidden="true"></i>').format(
            icon.group(1) if icon else "question-circle")
    if name == "formatted_json" and text.startswith("<pre>") and text.endswith("</pre>"):
        return Markup("<pre>{}</pre>").format(html.unescape(text[5:-6]))
    return escape(text)


def _literal(text: str) -> Markup:
    return Markup("<br>").join(escape(line) for line in text.split("\n"))


def render_string_template(st: Any) -> Markup:
    """A GX ``string_template`` (``{"template": "... $param ...", "params": ..., "styling": ...}``)
    as HTML: the template text and every parameter value escaped, GX's styling reduced to
    classes, safe attributes and element names from a fixed list."""
    if not isinstance(st, Mapping):
        return escape("" if st is None else str(st))
    template = str(st.get("template") or "")
    params = st.get("params") if isinstance(st.get("params"), Mapping) else {}
    styling = st.get("styling") if isinstance(st.get("styling"), Mapping) else {}
    per_param = styling.get("params") if isinstance(styling.get("params"), Mapping) else {}
    default = styling.get("default") if isinstance(styling.get("default"), Mapping) else None
    pieces: list[Markup] = []
    last = 0
    for m in _PARAM.finditer(template):
        pieces.append(_literal(template[last:m.start()]))
        last = m.end()
        if m.group(1):
            pieces.append(Markup("$"))
            continue
        name = m.group(2) or m.group(3)
        if name not in params:
            pieces.append(_literal(m.group(0)))
            continue
        value = _param_value(name, params[name])
        style = per_param.get(name) if isinstance(per_param.get(name), Mapping) else default
        if style is not None and name != "html_success_icon":
            value = _element(style.get("tag", "span"), style, value)
        pieces.append(value)
    pieces.append(_literal(template[last:]))
    tooltip = st.get("tooltip")
    tip = str(tooltip.get("content", "")) if isinstance(tooltip, Mapping) else None
    return _element(st.get("tag", "span"), styling, Markup("").join(pieces), title=tip)


def class_attrs(styling: Any, key: str | None = None, *extra: str) -> Markup:
    """The ``class`` attribute from a GX styling dict (or its ``key`` sub-dict)."""
    if isinstance(styling, Mapping) and key is not None:
        styling = styling.get(key)
    return _attrs(styling, extra=extra)


def paragraphs(text: Any) -> Markup:
    """A GX markdown block (e.g. a suite author's note) as escaped paragraphs. Entities are
    decoded first, as markdown would (er-expectations stores notes HTML-escaped), then the text
    is escaped again: no markup from the note reaches the page."""
    paras = html.unescape(str(text or "")).split("\n\n")
    return Markup("").join(Markup("<p>{}</p>").format(p.strip()) for p in paras if p.strip())


def name_breaks(text: Any) -> Markup:
    """A long identifier (a suite name such as ``patentsview_inventor_disambiguation``) escaped, with
    a line-break opportunity (``<wbr>``) after each ``_``, ``.`` and ``/``, so that a narrow cell
    breaks it between its words rather than mid-word (with CSS ``overflow-wrap: break-word``)."""
    escaped = str(escape("" if text is None else str(text)))
    return Markup(re.sub(r"([_./])", r"\1<wbr>", escaped))
