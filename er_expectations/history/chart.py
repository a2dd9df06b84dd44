"""Charts of a history series: a statistic or estimate over releases with its intervals.

:func:`series_spec` builds the Vega-Lite specification (for ``er-expectations history --chart`` and
for Data Docs of drift checks, which embed it through :func:`er_expectations.core.charts.data_uri`;
:func:`series_chart` is the same chart as an altair object):
the value of each release as a line with points, its confidence interval as a vertical
bar, the releases whose expectation failed marked with a red cross, and those where it
raised (no value) with an orange triangle at the level of the lowest value.
Release labels are data, never markup: Vega's SVG renderer escapes them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

__all__ = ["series_chart", "series_data_uri", "series_rows", "series_spec"]

_STATE = {"passed": "passed", "failed": "failed", "error": "error", "skipped": "skipped"}


def _state(row: Any) -> str:
    """passed, failed, error or skipped (not evaluated, SPEC 13): the stored outcome when there is one."""
    outcome = row.get("outcome")
    if isinstance(outcome, str) and outcome in _STATE:
        return outcome
    if isinstance(row.get("error"), str) and row.get("error"):
        return "error"
    return "passed" if bool(row.get("success")) else "failed"


def _finite(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def series_rows(frame: Any) -> list[dict[str, Any]]:
    """The rows of a :meth:`~.store.HistoryStore.series` frame the chart draws (JSON-safe).

    A release run several times (``all_versions=True``) is shown as ``label (vN)``.
    """
    several = frame["release"].duplicated(keep=False) if len(frame) else []
    rows = []
    for i, (_, row) in enumerate(frame.iterrows()):
        data = row.to_dict()
        label = str(data["release"])
        if len(frame) and bool(several.iloc[i]):
            label = f"{label} (v{int(data['version'])})"
        level = _finite(data.get("ci_level"))
        rows.append({
            "order": i,
            "release": label,
            "value": _finite(data.get("value")),
            "ci_lower": _finite(data.get("ci_lower")),
            "ci_upper": _finite(data.get("ci_upper")),
            "interval": f"{level * 100:g}% CI" if level else "",
            "state": _state(data),
        })
    return rows


def series_spec(frame: Any, *, title: str | None = None, y_title: str | None = None,
                width: int = 560, height: int = 260, thresholds: Sequence[float] = (),
                y_format: str | None = None) -> dict[str, Any]:
    """The Vega-Lite specification of one expectation's series over releases (the module
    docstring says what it draws), as a dict :mod:`er_expectations.core.charts` renders.

    ``frame`` is what :meth:`~.store.HistoryStore.series` returns; ``title`` defaults to the
    expectation's label, ``y_title`` to its metric. Built as a plain dict, key for key what
    altair's ``to_dict`` wrote for this chart, without building altair's objects (that took a
    third of the time of a chart in Data Docs). ``thresholds`` are drawn as dashed red lines
    (the check's limits: a change of at most ±limit, an agreement of at least its minimum).
    ``y_format`` is a d3 number format of the values (``".0%"``: a relative change stored as a
    fraction is shown in per cent, as the page's text says it), on the axis and in the tooltips.
    """
    value_format = y_format or ".4g"
    rows = series_rows(frame)
    label = str(frame["label"].iloc[0]) if len(frame) else "history"
    metric = str(frame["metric"].iloc[0]) if len(frame) and frame["metric"].iloc[0] else label
    order = [r["release"] for r in rows]

    def x() -> dict[str, Any]:
        return {"axis": {"labelAngle": -45, "labelLimit": 160}, "field": "release", "sort": list(order),
                "title": "release", "type": "nominal"}

    def by_state(kind: str, values: list[str]) -> dict[str, Any]:
        return {"field": "state", "scale": {"domain": list(_STATE), "range": values}, "title": "expectation",
                "type": kind}

    def marks(tooltip: list[dict[str, Any]], y: str) -> dict[str, Any]:
        return {"color": by_state("nominal", ["#1f77b4", "#d62728", "#ff7f0e", "#8c959f"]),
                "shape": by_state("nominal", ["circle", "cross", "triangle-up", "square"]),
                "tooltip": tooltip, "x": x(), "y": {"field": y, "type": "quantitative"}}

    def tip(field: str, kind: str, fmt: str | None = None) -> dict[str, Any]:
        return {"field": field, "type": kind} if fmt is None else {"field": field, "format": fmt, "type": kind}

    point = {"type": "point", "filled": True, "opacity": 1, "size": 90}
    layers = [
        {"mark": {"type": "rule", "color": "#7f7f7f", "strokeWidth": 2},
         "encoding": {"x": x(), "y": {"field": "ci_lower", "type": "quantitative"}, "y2": {"field": "ci_upper"}},
         "transform": [{"filter": "isValid(datum.ci_lower) && isValid(datum.ci_upper)"}]},
        {"mark": {"type": "line", "color": "#1f77b4", "strokeWidth": 1},
         "encoding": {"x": x(), "y": {"field": "value", "scale": {"zero": False}, "title": y_title or metric,
                                      "type": "quantitative", **({"axis": {"format": y_format}} if y_format else {})}},
         "transform": [{"filter": "isValid(datum.value)"}]},
        {"mark": dict(point),
         "encoding": marks([tip("release", "nominal"), tip("value", "quantitative", value_format),
                            tip("ci_lower", "quantitative", value_format), tip("ci_upper", "quantitative", value_format),
                            tip("state", "nominal")], "value"),
         "transform": [{"filter": "isValid(datum.value)"}]},
        # a release whose expectation raised has no value: marked on the lowest value drawn
        {"mark": dict(point),
         "encoding": marks([tip("release", "nominal"), tip("state", "nominal")], "floor"),
         "transform": [{"joinaggregate": [{"op": "min", "field": "value", "as": "floor"}]},
                       {"filter": "datum.state == 'error' && isValid(datum.floor)"}]},
    ]
    limits = [float(t) for t in thresholds if t is not None and math.isfinite(float(t))]
    if limits:
        layers.append({"mark": {"type": "rule", "color": "#b42318", "strokeDash": [5, 4], "strokeWidth": 1.5},
                       "encoding": {"y": {"field": "limit", "type": "quantitative"},
                                    "tooltip": [{"field": "limit", "format": value_format, "title": "limit",
                                                 "type": "quantitative"}]},
                       "data": {"values": [{"limit": t} for t in limits]}})
    from er_expectations.core.charts import vega_lite

    return vega_lite({"layer": layers, "data": {"values": rows}, "height": height, "title": title or label,
                      "width": width})


def series_chart(frame: Any, *, title: str | None = None, y_title: str | None = None,
                 width: int = 560, height: int = 260) -> Any:
    """:func:`series_spec` as an altair chart (for notebooks and further altair editing)."""
    import altair as alt

    return alt.LayerChart.from_dict(series_spec(frame, title=title, y_title=y_title, width=width, height=height))


def series_data_uri(frame: Any, **options: Any) -> str:
    """:func:`series_spec` as a ``data:image/svg+xml`` URI for an ``<img>`` in Data Docs
    (static: an image runs no script)."""
    from er_expectations.core.charts import data_uri

    return data_uri(series_spec(frame, **options))
