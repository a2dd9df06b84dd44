"""Helpers for Data Docs renderers: every value that comes from data or config goes in as an
escaped ``string_template`` parameter (GX's Jinja templates do not autoescape raw strings)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from great_expectations.render import RenderedStringTemplateContent, RenderedTableContent

__all__ = ["DIFF_SHOWN_UNDER", "string_block", "cell", "table_block", "config_of", "result_details", "with_severity",
           "without_severity_badge"]

#: Set (on a copy made for rendering a page) on a failed drift result whose release diff a check
#: above it on the same page already shows: the diff is printed once per page.
DIFF_SHOWN_UNDER = "diff_shown_under"

#: The severity a suite page shows after each expectation's sentence (a template parameter).
_SEVERITY_PARAM = "er_severity"
_SEVERITY_SUFFIX = " Severity: $er_severity."


def string_block(template: str, params: Mapping[str, Any] | None = None, *,
                 styling: Mapping[str, Any] | None = None, tag: str | None = None) -> RenderedStringTemplateContent:
    """A string template whose ``$params`` GX substitutes with HTML escaping."""
    st: dict[str, Any] = {"template": template, "params": dict(params or {})}
    if styling:
        st["styling"] = dict(styling)
    if tag:
        st["tag"] = tag
    return RenderedStringTemplateContent(content_block_type="string_template", string_template=st)


def cell(value: object) -> RenderedStringTemplateContent:
    """A table cell holding ``value`` as escaped text."""
    return string_block("$v", {"v": "" if value is None else str(value)})


def table_block(title: str, header: Sequence[str], rows: Sequence[Sequence[object]]) -> RenderedTableContent:
    """A small bordered table (used for the clusters that contribute most to an error)."""
    return RenderedTableContent(
        content_block_type="table",
        header=string_block("$title", {"title": title}, tag="h6"),
        header_row=[cell(h) for h in header],
        table=[[cell(v) for v in row] for row in rows],
        styling={"body": {"classes": ["table-bordered", "table-sm", "mt-2"]}},
    )


def config_of(configuration: Any = None, result: Any = None) -> Any:
    """The expectation configuration given either directly or through a validation result."""
    if configuration is not None:
        return configuration
    if result is not None:
        return getattr(result, "expectation_config", None)
    return None


def result_details(result: Any) -> dict[str, Any]:
    """``result.result['details']`` or {} (BOOLEAN_ONLY results carry no details)."""
    if result is None or not getattr(result, "result", None):
        return {}
    details = result.result.get("details")
    return details if isinstance(details, dict) else {}


def with_severity(block: RenderedStringTemplateContent, severity: str) -> RenderedStringTemplateContent:
    """An expectation's sentence followed by ' Severity: critical' (a suite page). A validation
    page states the severity in each status cell instead: :func:`without_severity_badge`."""
    st = block.string_template
    st["template"] = str(st.get("template", "")) + _SEVERITY_SUFFIX
    st.setdefault("params", {})[_SEVERITY_PARAM] = severity
    # copies: GX's renderers share one styling dict between the sentences of a page, so a change
    # in place gave every badge the class of the last expectation drawn
    styling = dict(st.get("styling") or {})
    styling["params"] = {**(styling.get("params") or {}),
                         _SEVERITY_PARAM: {"classes": ["er-sev", f"er-sev-{severity}"]}}
    st["styling"] = styling
    return block


def without_severity_badge(cell: Any) -> Any:
    """An expectation cell without the severity :func:`with_severity` added (changed in place)."""
    for block in cell if isinstance(cell, list) else [cell]:
        st = getattr(block, "string_template", None)
        if isinstance(st, dict) and _SEVERITY_PARAM in (st.get("params") or {}):
            st["template"] = str(st.get("template", "")).removesuffix(_SEVERITY_SUFFIX)
            del st["params"][_SEVERITY_PARAM]
    return cell
