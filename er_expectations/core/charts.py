"""Static charts: one way to turn an altair chart into SVG or PNG, offline.

Every chart of the product (simulation studies, history of a statistic over releases,
subgroup estimates) is an altair chart or a Vega-Lite specification (a dict, :func:`vega_lite`)
rendered here with vl-convert, which
bundles Vega and needs no browser, no network and no JavaScript at view time. Data Docs
embed a chart as ``<img src="data:image/svg+xml;base64,…">``: an image cannot run
scripts, so a chart stays static whatever text (release labels, group names) it holds, and
the pages keep their Content-Security-Policy (``img-src data:``).

altair and vl-convert are imported when a chart is drawn, not when this module is.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

from er_expectations.core.errors import InputError
from er_expectations.core.io import atomic_write

__all__ = ["CHART_FORMATS", "data_uri", "render", "to_png", "to_svg", "vega_lite", "write_chart"]

#: File suffixes :func:`write_chart` accepts, with their format.
CHART_FORMATS: dict[str, str] = {".svg": "svg", ".png": "png"}


def vega_lite(spec: dict[str, Any]) -> dict[str, Any]:
    """``spec`` (a chart's layers or mark, data, size, title) as a top-level Vega-Lite
    specification the way altair writes one: altair's default view configuration first, its
    schema last (the schema names the Vega-Lite version vl-convert draws it with)."""
    import altair as alt  # only its schema URL is read (GX imports altair anyway)

    return {"config": {"view": {"continuousWidth": 300, "continuousHeight": 300}}, **spec,
            "$schema": alt.SCHEMA_URL}


def _spec(chart: Any) -> dict:
    """The Vega-Lite specification of an altair chart (or of a spec given as a dict)."""
    if isinstance(chart, dict):
        return chart
    to_dict = getattr(chart, "to_dict", None)
    if to_dict is None:
        raise InputError(f"cannot draw {type(chart).__name__}: give an altair chart or a Vega-Lite dict")
    return to_dict()


def _converter():
    try:
        import vl_convert
    except ImportError as exc:  # pragma: no cover - a dependency of the package
        raise InputError("drawing a chart needs vl-convert-python: pip install vl-convert-python") from exc
    return vl_convert


def to_svg(chart: Any) -> str:
    """The chart as an SVG document (text is escaped by Vega's SVG renderer)."""
    return _converter().vegalite_to_svg(_spec(chart))


def to_png(chart: Any, *, scale: float = 2.0) -> bytes:
    """The chart as PNG bytes (``scale`` 2 for sharp text on high-density screens)."""
    return bytes(_converter().vegalite_to_png(_spec(chart), scale=scale))


def render(chart: Any, fmt: str) -> bytes:
    """The chart as bytes in ``fmt`` (``"svg"`` or ``"png"``)."""
    if fmt == "svg":
        return to_svg(chart).encode("utf-8")
    if fmt == "png":
        return to_png(chart)
    raise InputError(f"chart format {fmt!r} is not supported; use one of: svg, png")


def write_chart(chart: Any, path: str | os.PathLike) -> Path:
    """Write the chart to ``path``, PNG or SVG by its suffix, atomically; returns the path."""
    p = Path(path)
    fmt = CHART_FORMATS.get(p.suffix.lower())
    if fmt is None:
        raise InputError(f"{p}: a chart is written as .svg or .png, not {p.suffix or 'a file without suffix'!r}; "
                         "give a path ending in .svg or .png")
    atomic_write(p, render(chart, fmt))
    return p


def data_uri(chart: Any) -> str:
    """The chart as a ``data:image/svg+xml;base64,…`` URI for an ``<img src>`` in Data Docs."""
    return "data:image/svg+xml;base64," + base64.b64encode(to_svg(chart).encode("utf-8")).decode("ascii")
