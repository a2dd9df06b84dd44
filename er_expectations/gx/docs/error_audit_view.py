"""The Data Docs section of the error audit (SPEC 12.1): a bar chart of the tags' shares with their
intervals, the table of rates and a table of example clusters per tag.

Every value reaches the page as escaped text (``table_block`` cells, string-template params) or
inside an SVG image drawn by Vega (a data: URI, which cannot run scripts): a tag named
``<script>`` or ``=HYPERLINK(…)`` is shown as written and never run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from er_expectations.core.charts import vega_lite
from er_expectations.core.text import fmt_level, fmt_number
from er_expectations.gx.docs.chart_blocks import drawn_chart
from er_expectations.gx.docs.render import string_block, table_block

__all__ = ["audit_blocks", "rates_spec"]

#: Colours of the bars: the tag the check is about, the others, the untagged errors.
_COLOURS = {"checked tag": "#1f5fa8", "other tag": "#9ab6d9", "untagged errors": "#9a9a9a"}


def _num(x: object) -> float | None:
    try:
        v = float(x)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return v if v == v else None


def rates_spec(rows: Sequence[Mapping[str, Any]], *, tag: str, share_label: str, limit: float | None,
               untagged: str) -> dict[str, Any]:
    """The Vega-Lite specification of the shares of one kind (``rows``: tag, estimate, ci_lower,
    ci_upper), one bar per tag with its interval, and a rule at the ``limit``."""

    data = [{"tag": str(r["tag"]), "estimate": _num(r.get("estimate")), "ci_lower": _num(r.get("ci_lower")),
             "ci_upper": _num(r.get("ci_upper")),
             "role": "untagged errors" if r["tag"] == untagged else ("checked tag" if r["tag"] == tag else "other tag")}
            for r in rows]
    y = {"field": "tag", "sort": None, "title": None, "type": "nominal"}
    colour = {"field": "role", "scale": {"domain": list(_COLOURS), "range": list(_COLOURS.values())},
              "title": None, "type": "nominal"}
    layers: list[dict[str, Any]] = [
        {"mark": {"type": "bar"}, "encoding": {"color": colour, "x": {"field": "estimate", "title": share_label,
                                                                     "type": "quantitative"}, "y": y}},
        {"mark": {"type": "rule", "color": "#333333", "strokeWidth": 2},
         "encoding": {"x": {"field": "ci_lower", "type": "quantitative"}, "x2": {"field": "ci_upper"}, "y": y}},
    ]
    if limit is not None:
        layers.append({"mark": {"type": "rule", "color": "#c0392b", "strokeDash": [4, 3]},
                       "encoding": {"x": {"datum": float(limit), "type": "quantitative"}}})
    return vega_lite({"layer": layers, "data": {"values": data}, "height": max(60, 26 * len(data)), "width": 420,
                      "title": {"text": f"{share_label} by cause",
                                "subtitle": "bar: estimate; black line: its interval; dashed red line: the limit"}})


def audit_blocks(details: Mapping[str, Any]) -> list[Any]:
    """The page blocks of an error-audit result's ``details``: table of rates, chart, examples."""

    rows = details.get("rates") or []
    if not rows:
        return []
    level = fmt_level(float(details.get("ci_level") or 0.95))
    share = str(details.get("share_label") or "share")
    table = [[r["tag"], f"{fmt_number(r['estimate'])} ± {fmt_number(r['std_error'])}"
              if r.get("std_error") is not None else fmt_number(r["estimate"]),
              "—" if r.get("ci_lower") is None else f"{fmt_number(r['ci_lower'])}–{fmt_number(r['ci_upper'])}",
              r.get("ci_method") or "", r.get("note") or ""] for r in rows]
    left = int(details.get("tags_not_shown") or 0)
    if left:  # issue 29: a page shows at most MAX_TAGS_SHOWN tags and counts the others
        largest = details.get("largest_not_shown")
        table.append([f"{left:,} more tags not shown", "—" if largest is None else f"each at most {fmt_number(largest)}",
                      "", "", "every tag's share: erx.error_audit or er-expectations audit"])
    blocks: list[Any] = [table_block(f"{share} by cause ({details.get('draws', 0):,} draws, "
                                     f"{details.get('erroneous_draws', 0):,} with an error)",
                                     ["Tag", "Estimate ± SE", f"{level} CI", "Interval", "Note"], table)]
    try:
        spec = rates_spec(rows, tag=str(details.get("tag")), share_label=share,
                          limit=_num(details.get("max_rate")), untagged=str(details.get("untagged")))
    except Exception:  # noqa: BLE001 - a chart that cannot be made must not break the page
        spec = None
    chart = None if spec is None else drawn_chart(spec, alt=f"{share} by cause with intervals")
    if chart is not None:
        blocks.append(chart)
    examples = details.get("examples") or []
    if examples:
        blocks.append(table_block("Example clusters per tag (most draws first)",
                                  ["Tag", "Benchmark cluster", "Kind", "Draws", "Size", "Records named"],
                                  [[e["tag"], e["cluster"], e["kinds"], e["draws"], e["size"],
                                    ", ".join(e["records"])] for e in examples]))
    notes = details.get("audit_notes") or []
    if notes:
        blocks.append(string_block("$note", {"note": "Note: " + "; ".join(notes) + "."}, tag="div"))
    return blocks
