"""Static charts: one way to turn an altair chart into SVG or PNG, offline.

Every chart of the product (simulation studies, history of a statistic over releases,
subgroup estimates) is an altair chart or a Vega-Lite specification (a dict, :func:`vega_lite`)
rendered here with vl-convert, which
bundles Vega and needs no browser, no network and no JavaScript at view time. Data Docs
embed a chart as ``<img src="data:image/svg+xml;base64,…">``: an image cannot run
scripts, so a chart stays static whatever text (release labels, group names) it holds, and
the pages keep their Content-Security-Policy (``img-src data:``).

altair and vl-convert are imported when a chart is drawn, not when this module is. vl-convert
comes with the ``charts`` extra: without it, drawing raises
:class:`~er_expectations.core.chart_extra.ChartsUnavailable` (an :class:`InputError` naming the
extra), which Data Docs turn into a note where the chart would be.
"""

from __future__ import annotations

import base64
import contextlib
import contextvars
import hashlib
import importlib.metadata
import json
import os
from collections.abc import Iterator, Mapping
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from er_expectations.core.chart_extra import ChartsUnavailable, missing_message
from er_expectations.core.errors import InputError
from er_expectations.core.io import atomic_write

__all__ = ["CHART_FORMATS", "SvgCache", "chart_key", "data_uri", "render", "svg_cache", "to_png", "to_svg",
           "vega_lite", "write_chart"]

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
    except ImportError as exc:  # the charts extra is not installed
        raise ChartsUnavailable(missing_message("drawing a chart")) from exc
    return vl_convert


def to_svg(chart: Any) -> str:
    """The chart as an SVG document (text is escaped by Vega's SVG renderer).

    Inside :func:`svg_cache`, a chart whose specification was drawn before is read from the
    cache instead of being drawn again.
    """
    spec = _spec(chart)
    cache = _CACHE.get()
    if cache is None:
        return _converter().vegalite_to_svg(spec)
    return cache.svg(spec)


class SvgCache:
    """SVG documents by the Vega-Lite specification they were drawn from, kept in one JSON file.

    vl-convert draws a specification the same way every time, so a chart that a run draws
    again (a rerun of a checkpoint redraws every history chart of its Data Docs) is read back
    instead (a chart costs vl-convert about 0.1 s). Entries are keyed by the SHA-256 of the
    specification and of the vl-convert version; :meth:`save` keeps only the charts used since
    the cache was opened (the file holds one build's charts, it does not grow) and writes the
    file atomically, only when it changed. An unreadable file is an empty cache.

    ``pending``: charts being drawn elsewhere (:class:`~.chart_pool.ChartPool`), futures of
    their SVG by key; a chart found there is waited for instead of drawn (drawn here when the
    future gives ``None`` or takes longer than :data:`PENDING_TIMEOUT` seconds).
    """

    def __init__(self, path: str | os.PathLike, pending: Mapping[str, Future] | None = None) -> None:
        self.path = Path(path)
        self.pending = pending or {}
        self.version = _converter_version()
        self.old: dict[str, str] = {}
        with contextlib.suppress(OSError, ValueError):
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if isinstance(data, dict) and data.get("vl_convert") == self.version \
                    and isinstance(data.get("charts"), dict):
                self.old = {k: v for k, v in data["charts"].items() if isinstance(v, str)}
        self.used: dict[str, str] = {}
        self.drawn = 0

    def key(self, spec: dict) -> str:
        return chart_key(spec, self.version)

    def svg(self, spec: dict) -> str:
        """The SVG of ``spec``: from the cache, from the charts drawn elsewhere, or drawn now;
        kept."""
        key = self.key(spec)
        found = self.used.get(key) or self.old.get(key)
        if found is None and key in self.pending:
            found = _pending_svg(self.pending[key])
        if found is None:
            found = _converter().vegalite_to_svg(spec)
            self.drawn += 1
        self.used[key] = found
        return found

    def save(self) -> None:
        if self.used == self.old:
            return
        atomic_write(self.path, json.dumps({"vl_convert": self.version, "charts": self.used},
                                           sort_keys=True, ensure_ascii=False) + "\n")


#: Seconds a chart drawn elsewhere is waited for before it is drawn here.
PENDING_TIMEOUT = 60.0


def _pending_svg(future: Future) -> str | None:
    try:
        svg = future.result(timeout=PENDING_TIMEOUT)
    except Exception:  # noqa: BLE001 - a timeout or a cancelled future: drawn here instead
        return None
    return svg if isinstance(svg, str) else None


def chart_key(spec: dict, version: str) -> str:
    """The cache key of ``spec`` drawn by vl-convert ``version`` (SHA-256 of both)."""
    text = json.dumps(spec, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(f"{version}\n{text}".encode()).hexdigest()


_CACHE: contextvars.ContextVar[SvgCache | None] = contextvars.ContextVar("er_svg_cache", default=None)


@contextlib.contextmanager
def svg_cache(path: str | os.PathLike | None,
              pending: Mapping[str, Future] | None = None) -> Iterator[SvgCache | None]:
    """Read and keep the charts :func:`to_svg` draws in the cache file ``path`` (``None``: no
    cache) while the block runs; the file is saved when the block ends without an error.
    ``pending``: the charts being drawn elsewhere (see :class:`SvgCache`)."""
    if path is None:
        yield None
        return
    cache = SvgCache(path, pending)
    token = _CACHE.set(cache)
    try:
        yield cache
    finally:
        _CACHE.reset(token)
    cache.save()


def _converter_version() -> str:
    try:
        return importlib.metadata.version("vl-convert-python")
    except importlib.metadata.PackageNotFoundError:  # the charts extra is not installed: nothing drawn
        return "unknown"


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
