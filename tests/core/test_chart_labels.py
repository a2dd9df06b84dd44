"""Tick labels that do not collide (issue 18, item 6): the disparity chart's group names and
the numbers on its value axis, and the plan chart's log axes, checked on the SVG itself.

Every axis label of the rendered SVG is read back (its position and its lines); labels of one
axis must not overlap: on the group axis each label's lines (13 px apart) stay inside the gap
to the next label, on a numeric axis the text of neighbouring labels (10 px sans-serif, at most
6.2 px a character) does not touch. Long names wrap to at most three lines of at most 28
characters; the last ends in "…" when text is left, and the check's table keeps the full name.
"""

from __future__ import annotations

import html
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from er_expectations.analysis.subgroups import GROUP_VERDICTS, groups_spec, wrap_label
from er_expectations.core.charts import to_svg

LINE = 13.0
CHAR = 6.2  # px per character of 10 px sans-serif, generous (digits are 5.6)

HOSTILE = ["Asian / Pacific Islander, surname tables with first names and the most frequent surname",
           "Hispanic", "=1+1 <script>alert(1)</script>", "Non-Hispanic White (Census 2010 surname list)",
           "b" * 70, "", "  spaced   out  ", "日本語の名前のとても長いグループ名" * 3]


def axis_labels(svg: str) -> list[list[tuple[float, float, list[str]]]]:
    """Per axis of the SVG: its labels as (x, y, lines)."""
    axes = []
    for group in re.findall(r'<g class="mark-text role-axis-label"[^>]*>(.*?)</g>', svg, flags=re.S):
        labels = []
        for x, y, closed, body in re.findall(r'<text[^>]*?transform="translate\(([-\d.e]+),([-\d.e]+)\)"[^>]*?'
                                             r'(/>|>(.*?)</text>)', group, flags=re.S):
            if closed == "/>" or not body:
                continue  # an empty label (a log axis's minor tick)
            lines = [html.unescape(t) for t in re.findall(r"<tspan[^>]*>(.*?)</tspan>", body) or [body]]
            labels.append((float(x), float(y), lines))
        axes.append(labels)
    return axes


def assert_no_collision(svg: str) -> None:
    for labels in axis_labels(svg):
        xs = {round(x, 3) for x, _, _ in labels}
        if len(xs) == 1:  # a vertical axis: labels one under the other
            spans = sorted((y - LINE / 2, y + (len(lines) - 1) * LINE + LINE / 2) for _, y, lines in labels)
            for (_, end), (start, _) in zip(spans, spans[1:], strict=False):
                assert end <= start + 0.5, spans
        else:  # a horizontal axis: centred labels side by side
            spans = sorted((x - CHAR * len(lines[0]) / 2, x + CHAR * len(lines[0]) / 2) for x, _, lines in labels)
            for (_, end), (start, _) in zip(spans, spans[1:], strict=False):
                assert end < start, spans


def rows(names: list[str]) -> list[dict]:
    verdicts = list(GROUP_VERDICTS)
    return [{"group": n, "estimate": 0.80 + 0.01 * i, "ci_lower": 0.74 + 0.01 * i, "ci_upper": 0.86 + 0.01 * i,
             "comparison": 0.9, "verdict": verdicts[i % 3]} for i, n in enumerate(names)]


@pytest.mark.parametrize("names", [HOSTILE, [f"group {i} with a rather long label" for i in range(40)],
                                   ["a", "b"], [f"g{i}" for i in range(60)]], ids=["hostile", "40", "2", "60"])
def test_group_names_and_values_do_not_collide(names):
    svg = to_svg(groups_spec(rows(names), title="pairwise F by group", colour_by="verdict"))
    assert_no_collision(svg)
    (values, groups) = axis_labels(svg)  # the value axis is drawn first
    assert len(groups) == len(names)
    for (_, _, lines), name in zip(groups, names, strict=True):
        assert len(lines) <= 3 and all(len(line) <= 28 for line in lines)
        shown = " ".join(lines)
        if not name.strip():
            assert shown == "(empty)"
        elif not shown.endswith("…"):  # wrapped, nothing lost
            assert "".join(shown.split()) == "".join(name.split())
    assert "<script>" not in svg  # escaped in the SVG


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=0, max_size=200))
def test_wrap_label_keeps_the_text_or_says_it_was_cut(text):
    lines = wrap_label(text)
    assert 1 <= len(lines) <= 3 and all(len(line) <= 28 for line in lines)
    joined = "".join("".join(lines).split())
    if not text.split():
        assert lines == ["(empty)"]
    elif joined.endswith("…") and not "".join(text.split()).endswith("…"):
        assert "".join(text.split()).startswith(joined[:-1])
    else:
        assert joined == "".join(text.split())


def test_the_plan_charts_log_axes_do_not_collide():
    from er_expectations.analysis.planning_charts import plan_chart
    from er_expectations.core.charts import vega_lite

    draws = np.arange(1, 5001)
    frame = pd.DataFrame({"metric": ["pairwise_precision", "pairwise_recall", "b_cubed_f_and_a_long_metric_name"],
                          "target_std_error": [0.01, 0.02, 0.005], "draws_needed": [1200, 300, 4800],
                          "std_error_at_draws": [0.01, 0.02, 0.005], "pilot_std_error": [0.05, 0.04, 0.03],
                          "pilot_draws": [50, 50, 50]})
    frame.attrs["curves"] = {m: {"draws": draws.tolist(), "std_error": (0.3 / np.sqrt(draws)).tolist()}
                             for m in frame["metric"]}
    frame.attrs["reps"] = 200
    chart = plan_chart(frame)
    svg = to_svg(vega_lite(chart.to_dict()) if hasattr(chart, "to_dict") else chart)
    assert_no_collision(svg)
