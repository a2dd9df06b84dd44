"""Charts in Data Docs pages: a static SVG image, or a visible note where it would be.

A chart is drawn by :mod:`er_expectations.core.charts` (vl-convert, the ``charts`` extra) and
embedded as an ``<img>`` of an SVG data URI (:func:`image_block`). Without the extra the page
shows a short note in its place, naming the extra (:func:`missing_chart_block`): the page keeps
its numbers, its verdicts are the same, and nothing but text is added (no script, no outside
resource; the template escapes the chart's description).
"""

from __future__ import annotations

import re
from typing import Any

from great_expectations.render import RenderedComponentContent

from er_expectations.core.chart_extra import CHARTS_EXTRA, ChartsUnavailable
from er_expectations.core.charts import data_uri

__all__ = ["MISSING_NOTE", "drawn_chart", "image_block", "missing_chart_block"]

#: What a page says where a chart was not drawn because the charts extra is not installed.
MISSING_NOTE = f"Chart not drawn: install {CHARTS_EXTRA} to draw it"

#: The only images Data Docs embed: static SVG charts as data URIs (an image runs no script).
_SVG_URI = re.compile(r"data:image/svg\+xml;base64,[A-Za-z0-9+/]+=*")


class _ChartText(RenderedComponentContent):
    """A GX ``text`` block (its ``text`` is what GX's own views show) with extra fields that the
    offline view of :mod:`er_expectations.gx.docs.data_docs` draws instead."""

    def __init__(self, text: str, **fields: Any) -> None:
        super().__init__(content_block_type="text")
        self.fields = {"text": [text], **fields}

    def to_json_dict(self) -> dict[str, Any]:
        d = super().to_json_dict()
        d.update(self.fields)
        return d


def image_block(src: str, *, alt: str) -> RenderedComponentContent:
    """A static chart (``charts.data_uri``) as a content block; anything but an SVG data URI is refused."""
    if not _SVG_URI.fullmatch(src):
        raise ValueError("image_block takes a data:image/svg+xml;base64 URI from er_expectations.core.charts.data_uri")
    return _ChartText(f"(chart: {alt}; shown in the offline Data Docs of er-expectations)",
                      er_image={"src": src, "alt": alt})


def missing_chart_block(alt: str) -> RenderedComponentContent:
    """The note shown where the chart ``alt`` describes would be, without the charts extra."""
    return _ChartText(f"({MISSING_NOTE}: {alt})", er_chart_missing={"note": MISSING_NOTE, "alt": alt})


def drawn_chart(spec: Any, *, alt: str) -> RenderedComponentContent | None:
    """The chart ``spec`` (a Vega-Lite dict or an altair chart) as an image block; the note of
    :func:`missing_chart_block` without the charts extra; None when it cannot be drawn for
    another reason (a chart must not break the page, which keeps its numbers)."""
    try:
        src = data_uri(spec)
    except ChartsUnavailable:
        return missing_chart_block(alt)
    except Exception:  # noqa: BLE001 - a chart is an extra: the page is written without it
        return None
    return image_block(src, alt=alt)
