"""Charts of a history series: a statistic or estimate over releases with its intervals.

:func:`series_chart` builds the altair chart (for ``er-expectations history --chart`` and
for Data Docs of drift checks, which embed it through :func:`er_expectations.core.charts.data_uri`):
the value of each release as a line with points, its confidence interval as a vertical
bar, the releases whose expectation failed marked with a red cross, and those where it
raised (no value) with an orange triangle at the level of the lowest value.
Release labels are data, never markup: Vega's SVG renderer escapes them.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["series_chart", "series_data_uri", "series_rows"]

_STATE = {"passed": "passed", "failed": "failed", "error": "error"}


def _state(row: Any) -> str:
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


def series_chart(frame: Any, *, title: str | None = None, y_title: str | None = None,
                 width: int = 560, height: int = 260) -> Any:
    """An altair chart of one expectation's series over releases (see the module docstring).

    ``frame`` is what :meth:`~.store.HistoryStore.series` returns; ``title`` defaults to
    the expectation's label, ``y_title`` to its metric.
    """
    import altair as alt

    rows = series_rows(frame)
    label = str(frame["label"].iloc[0]) if len(frame) else "history"
    metric = str(frame["metric"].iloc[0]) if len(frame) and frame["metric"].iloc[0] else label
    order = [r["release"] for r in rows]
    data = alt.Data(values=rows)
    x = alt.X("release:N", sort=order, title="release", axis=alt.Axis(labelAngle=-45, labelLimit=160))
    tooltip = [alt.Tooltip("release:N"), alt.Tooltip("value:Q", format=".4g"),
               alt.Tooltip("ci_lower:Q", format=".4g"), alt.Tooltip("ci_upper:Q", format=".4g"),
               alt.Tooltip("state:N")]
    color = alt.Color("state:N", title="expectation",
                      scale=alt.Scale(domain=list(_STATE), range=["#1f77b4", "#d62728", "#ff7f0e"]))
    shape = alt.Shape("state:N", title="expectation",
                      scale=alt.Scale(domain=list(_STATE), range=["circle", "cross", "triangle-up"]))
    base = alt.Chart(data)
    bars = base.transform_filter("isValid(datum.ci_lower) && isValid(datum.ci_upper)").mark_rule(
        color="#7f7f7f", strokeWidth=2).encode(x=x, y=alt.Y("ci_lower:Q"), y2="ci_upper:Q")
    line = base.transform_filter("isValid(datum.value)").mark_line(color="#1f77b4", strokeWidth=1).encode(
        x=x, y=alt.Y("value:Q", title=y_title or metric, scale=alt.Scale(zero=False)))
    points = base.transform_filter("isValid(datum.value)").mark_point(size=90, filled=True, opacity=1).encode(
        x=x, y="value:Q", color=color, shape=shape, tooltip=tooltip)
    # a release whose expectation raised has no value: marked on the lowest value drawn
    errors = base.transform_joinaggregate(floor="min(value)").transform_filter(
        "datum.state == 'error' && isValid(datum.floor)").mark_point(
        size=90, filled=True, opacity=1).encode(x=x, y="floor:Q", color=color, shape=shape,
                                                tooltip=[alt.Tooltip("release:N"), alt.Tooltip("state:N")])
    return alt.layer(bars, line, points, errors).properties(
        title=title or label, width=width, height=height)


def series_data_uri(frame: Any, **options: Any) -> str:
    """:func:`series_chart` as a ``data:image/svg+xml`` URI for an ``<img>`` in Data Docs
    (static: an image runs no script)."""
    from er_expectations.core.charts import data_uri

    return data_uri(series_chart(frame, **options))
