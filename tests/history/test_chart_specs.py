"""The Vega-Lite dicts of the Data Docs charts are, key for key, what altair wrote for them.

``series_spec`` (history of a statistic) and ``groups_spec`` (subgroup estimates) build the
specification as a plain dict instead of through altair's objects (most of a chart's time in
Data Docs after vl-convert itself). The altair constructions they replace are kept here as the
reference: both must give the same dict, in the same key order, and the same SVG.
"""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

alt = pytest.importorskip("altair")

from er_expectations.analysis.subgroups import groups_chart, groups_spec  # noqa: E402
from er_expectations.core.charts import to_svg  # noqa: E402
from er_expectations.history.chart import series_chart, series_rows, series_spec  # noqa: E402

_STATE = ("passed", "failed", "error", "skipped")


def altair_series(frame, *, title=None, y_title=None, width=560, height=260):
    """The altair chart ``series_chart`` built before it became a dict (the reference)."""
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
                      scale=alt.Scale(domain=list(_STATE), range=["#1f77b4", "#d62728", "#ff7f0e", "#8c959f"]))
    shape = alt.Shape("state:N", title="expectation",
                      scale=alt.Scale(domain=list(_STATE), range=["circle", "cross", "triangle-up", "square"]))
    base = alt.Chart(data)
    bars = base.transform_filter("isValid(datum.ci_lower) && isValid(datum.ci_upper)").mark_rule(
        color="#7f7f7f", strokeWidth=2).encode(x=x, y=alt.Y("ci_lower:Q"), y2="ci_upper:Q")
    line = base.transform_filter("isValid(datum.value)").mark_line(color="#1f77b4", strokeWidth=1).encode(
        x=x, y=alt.Y("value:Q", title=y_title or metric, scale=alt.Scale(zero=False)))
    points = base.transform_filter("isValid(datum.value)").mark_point(size=90, filled=True, opacity=1).encode(
        x=x, y="value:Q", color=color, shape=shape, tooltip=tooltip)
    errors = base.transform_joinaggregate(floor="min(value)").transform_filter(
        "datum.state == 'error' && isValid(datum.floor)").mark_point(
        size=90, filled=True, opacity=1).encode(x=x, y="floor:Q", color=color, shape=shape,
                                                tooltip=[alt.Tooltip("release:N"), alt.Tooltip("state:N")])
    return alt.layer(bars, line, points, errors).properties(title=title or label, width=width, height=height)


def altair_groups(rows, *, title, comparison="the rest"):
    """The altair chart ``groups_chart`` built before it became a dict (the reference)."""
    def finite(x):
        try:
            v = float(x)
        except (TypeError, ValueError):
            return None
        return v if math.isfinite(v) else None

    data = [{"group": str(r["group"]), "estimate": finite(r.get("estimate")), "ci_lower": finite(r.get("ci_lower")),
             "ci_upper": finite(r.get("ci_upper")), "comparison": finite(r.get("comparison")),
             "status": str(r.get("status") or "")} for r in rows]
    # issue 18, item 6: group labels on lines of their own (no limit), value labels thinned, not flushed
    base = alt.Chart(alt.Data(values=data)).encode(
        y=alt.Y("group:N", title=None, sort=None, axis=alt.Axis(labelLimit=0, labelLineHeight=13)))
    bars = base.mark_rule(strokeWidth=2).encode(
        x=alt.X("ci_lower:Q", title="estimate and interval", scale=alt.Scale(zero=False),
                axis=alt.Axis(labelFlush=False, labelOverlap="greedy")), x2="ci_upper:Q",
        color=alt.Color("status:N", title="status",
                        scale=alt.Scale(domain=["ok", "too small", "undefined"],
                                        range=["#1f5fa8", "#9a9a9a", "#c0392b"])))
    points = base.mark_point(filled=True, size=60).encode(x="estimate:Q", color="status:N")
    ticks = base.mark_tick(color="#333333", thickness=2, size=14).encode(x="comparison:Q", tooltip=alt.value(None))
    return (bars + points + ticks).properties(
        title={"text": title, "subtitle": f"point: group estimate; line: its interval; tick: {comparison}"},
        width=420, height=max(60, 28 * len(data)))


def _frame(values, *, metric="average_cluster_size", twice=False):
    rows = []
    for i, (value, ok, error) in enumerate(values):
        rows.append({"release": f"2020-0{i % 9 + 1}-01 <b>&{i}", "version": 1, "value": value,
                     "ci_lower": None if value is None or i % 2 else value - 0.1,
                     "ci_upper": None if value is None or i % 2 else value + 0.1,
                     "ci_level": 0.95 if i % 3 else None, "success": ok, "error": error})
    if twice and rows:
        rows.append({**rows[0], "version": 2})
    frame = pd.DataFrame(rows, columns=["release", "version", "value", "ci_lower", "ci_upper", "ci_level",
                                        "success", "error"])
    frame["label"], frame["metric"] = "average_cluster_size_change", metric
    return frame


SERIES = [
    [(5.0, True, None), (5.5, False, None), (None, False, "boom"), (6.1, True, None)],
    [(0.9, True, None), (0.91, True, None)],
    [(None, False, "it raised"), (None, False, "again")],
    [(float(i), i % 4 != 1, None) for i in range(16)],
]


@pytest.mark.parametrize("values", SERIES)
@pytest.mark.parametrize("options", [{}, {"title": "t", "y_title": "relative change"}, {"width": 300, "height": 90}])
def test_series_spec_is_what_altair_wrote(values, options):
    frame = _frame(values)
    expected = altair_series(frame, **options).to_dict(validate=False)
    got = series_spec(frame, **options)
    assert json.dumps(got) == json.dumps(expected)  # same keys, values and order


def test_series_spec_of_a_rerun_release_and_an_empty_metric():
    frame = _frame(SERIES[0], metric="", twice=True)
    assert json.dumps(series_spec(frame)) == json.dumps(altair_series(frame).to_dict(validate=False))


GROUPS = [
    [{"group": "api", "estimate": 0.8, "ci_lower": 0.7, "ci_upper": 0.9, "comparison": 0.86, "status": "ok"}],
    [{"group": "api", "estimate": 0.8, "ci_lower": 0.7, "ci_upper": 0.9, "comparison": 0.86, "status": "ok"},
     {"group": "black", "estimate": float("nan"), "ci_lower": None, "ci_upper": None, "comparison": 0.8,
      "status": "too small"},
     {"group": "<hispanic>", "estimate": 1.0, "ci_lower": float("-inf"), "ci_upper": 1.0, "comparison": None,
      "status": None}],
    [],
]


@pytest.mark.parametrize("rows", GROUPS)
@pytest.mark.parametrize("comparison", ["the rest", "all entities"])
def test_groups_spec_is_what_altair_wrote(rows, comparison):
    expected = altair_groups(rows, title="pairwise F by group", comparison=comparison).to_dict(validate=False)
    got = groups_spec(rows, title="pairwise F by group", comparison=comparison)
    assert json.dumps(got) == json.dumps(expected)


def test_the_specs_draw_the_same_svg_and_stay_altair_charts():
    frame = _frame(SERIES[0])
    assert to_svg(series_spec(frame)) == to_svg(altair_series(frame).to_dict(validate=False))
    assert to_svg(groups_spec(GROUPS[1], title="t")) == to_svg(altair_groups(GROUPS[1], title="t").to_dict())
    # the altair charts are built from the specs (validated against the Vega-Lite schema)
    assert len(series_chart(frame).to_dict()["layer"]) == 4
    assert len(groups_chart(GROUPS[1], title="t").to_dict()["layer"]) == 3


def test_the_svg_cache_reads_back_what_it_drew_and_keeps_only_the_charts_used(tmp_path, monkeypatch):
    import er_expectations.core.charts as charts

    first, second = series_spec(_frame(SERIES[0])), groups_spec(GROUPS[0], title="t")
    plain = [to_svg(first), to_svg(second)]
    path = tmp_path / "cache.json"
    with charts.svg_cache(path) as cache:
        assert [to_svg(first), to_svg(second), to_svg(first)] == [*plain, plain[0]]
    assert cache.drawn == 2 and set(json.loads(path.read_text())["charts"]) == {cache.key(first), cache.key(second)}

    drawn = []
    monkeypatch.setattr(charts, "_converter", lambda: drawn.append(1) or pytest.fail("drawn again"))
    with charts.svg_cache(path) as cache:
        assert to_svg(second) == plain[1]  # read back, not drawn
    assert drawn == [] and list(json.loads(path.read_text())["charts"]) == [cache.key(second)]
    stamp = path.stat().st_mtime_ns
    with charts.svg_cache(path):
        to_svg(second)
    assert path.stat().st_mtime_ns == stamp  # unchanged: not rewritten


def test_the_svg_cache_ignores_a_damaged_file_or_another_vl_convert(tmp_path, monkeypatch):
    import er_expectations.core.charts as charts

    spec = groups_spec(GROUPS[1], title="t")
    path = tmp_path / "cache.json"
    path.write_text("{not json", encoding="utf-8")
    with charts.svg_cache(path) as cache:
        svg = to_svg(spec)
    assert cache.drawn == 1
    data = json.loads(path.read_text())
    data["charts"] = {k: "<svg>stale</svg>" for k in data["charts"]}
    data["vl_convert"] = "0.0.1"
    path.write_text(json.dumps(data), encoding="utf-8")
    with charts.svg_cache(path) as cache:
        assert to_svg(spec) == svg
    assert cache.drawn == 1
    with pytest.raises(RuntimeError), charts.svg_cache(tmp_path / "never.json"):
        to_svg(spec)
        raise RuntimeError("a failed build")
    assert not (tmp_path / "never.json").exists()  # saved only when the block ends well
