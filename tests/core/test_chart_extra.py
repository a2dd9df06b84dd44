"""Each piece that draws a chart, with vl-convert hidden (the ``charts`` extra not installed).

``sys.modules["vl_convert"] = None`` makes every import of it fail, as when it is not installed;
the whole run without it is tests/gx/test_charts_optional.py.
"""

from __future__ import annotations

import io
import json
import sys

import pytest

from er_expectations.core import chart_extra, chart_worker, charts
from er_expectations.core.errors import InputError

SPEC = {"mark": "point", "data": {"values": [{"x": 1}]}, "encoding": {"x": {"field": "x", "type": "quantitative"}},
        "$schema": "https://vega.github.io/schema/vega-lite/v5.json"}


@pytest.fixture
def hidden(monkeypatch):
    monkeypatch.setitem(sys.modules, "vl_convert", None)


def test_charts_are_not_available_and_the_message_names_the_extra(hidden, tmp_path):
    assert chart_extra.charts_available() is False
    with pytest.raises(chart_extra.ChartsUnavailable) as caught:
        chart_extra.require_charts("--chart x.svg: drawing the chart")
    assert isinstance(caught.value, InputError)  # the command line's usage exit code
    assert "pip install 'er-expectations[charts]'" in str(caught.value)
    for draw in (charts.to_svg, charts.data_uri, charts.to_png, lambda s: charts.write_chart(s, tmp_path / "c.svg")):
        with pytest.raises(chart_extra.ChartsUnavailable, match=r"er-expectations\[charts\]"):
            draw(SPEC)
    assert list(tmp_path.iterdir()) == []


def test_the_chart_cache_draws_nothing_and_writes_nothing(hidden, tmp_path):
    with pytest.raises(chart_extra.ChartsUnavailable), charts.svg_cache(tmp_path / "cache.json"):
        charts.to_svg(SPEC)
    assert not (tmp_path / "cache.json").exists()


def test_a_worker_without_vl_convert_answers_every_chart_with_an_error(hidden):
    out = io.StringIO()
    chart_worker.serve([json.dumps({"id": 1, "spec": SPEC}) + "\n", "\n", json.dumps({"id": 2, "spec": SPEC})],
                       out.write)
    answers = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [a["id"] for a in answers] == [1, 2]
    assert all("svg" not in a and "charts extra" in a["error"] for a in answers)


def test_the_page_block_is_a_note_and_the_prewarm_starts_no_worker(hidden):
    pytest.importorskip("great_expectations")
    from er_expectations.gx.docs.chart_blocks import MISSING_NOTE, drawn_chart
    from er_expectations.gx.docs.chart_prewarm import ChartPrewarm

    block = drawn_chart(SPEC, alt="<b>x</b>").to_json_dict()
    assert block["er_chart_missing"] == {"note": MISSING_NOTE, "alt": "<b>x</b>"}
    assert "er_image" not in block and MISSING_NOTE in block["text"][0]

    class Context:  # no file-backed project: no chart cache
        root_directory = None

    class Pool:
        def submit(self, spec):
            raise AssertionError("no chart is handed to a worker without the charts extra")

        def close(self):
            pass

    prewarm = ChartPrewarm(Context(), pool=Pool())
    prewarm.cache = charts.SvgCache.__new__(charts.SvgCache)  # as if the project had a cache
    assert prewarm.add([object()]) == 0 and prewarm.pending == {}
