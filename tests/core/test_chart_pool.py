"""Charts drawn in worker processes (core/chart_pool.py) are the bytes this process draws.

The pool only moves vl-convert's work to other processes: the SVG of a specification must be
byte for byte the one drawn here, and any failure of a worker (it does not start, it dies, it
refuses a chart) must leave the chart to be drawn here by the cache, with the same result.
"""

from __future__ import annotations

import json
import sys

import pytest

vl_convert = pytest.importorskip("vl_convert")

from er_expectations.core import charts  # noqa: E402
from er_expectations.core.chart_pool import ChartPool  # noqa: E402

SCHEMA = "https://vega.github.io/schema/vega-lite/v5.20.1.json"


def spec(title: str, values: list[float]) -> dict:
    rows = [{"release": f"r{i} <b>é</b>", "value": v, "lower": v - 0.1 / 3, "upper": v + 1e-17}
            for i, v in enumerate(values)]
    return {"config": {"view": {"continuousWidth": 300, "continuousHeight": 300}},
            "data": {"values": rows}, "title": title, "width": 320, "height": 160,
            "layer": [{"mark": {"type": "line", "point": True},
                       "encoding": {"x": {"field": "release", "type": "ordinal", "sort": None},
                                    "y": {"field": "value", "type": "quantitative"}}},
                      {"mark": "rule", "encoding": {"x": {"field": "release", "type": "ordinal", "sort": None},
                                                    "y": {"field": "lower", "type": "quantitative"},
                                                    "y2": {"field": "upper"}}}],
            "$schema": SCHEMA}


SPECS = [spec("<script>alert(1)</script>", [0.1, 0.2 + 1 / 3, 0.30000000000000004]),
         spec("pairwise F1", [0.9512345678901234, 0.93, 0.97, 0.5]),
         spec("ünïcode ✓", [1e-12, 2.5e3, 3.0])]


def test_the_workers_draw_the_svg_of_this_process_byte_for_byte():
    with ChartPool(2) as pool:
        futures = [pool.submit(s) for s in SPECS * 2]
        drawn = [f.result(timeout=120) for f in futures]
    assert drawn == [vl_convert.vegalite_to_svg(s) for s in SPECS * 2]
    assert pool.drawn == 6 and pool.failed == 0


@pytest.mark.parametrize("command", [
    [sys.executable, "-c", "import sys; sys.exit(3)"],  # dies at once
    [sys.executable, "-c", "import sys; sys.stdin.readline(); print('{\"id\": 1, \"svg\": 5}', flush=True)"],
    ["/nonexistent/python"],  # does not start
])
def test_a_failing_worker_leaves_the_chart_to_this_process(tmp_path, command):
    with ChartPool(2, command=command) as pool:
        futures = [pool.submit(s) for s in SPECS]
        assert [f.result(timeout=60) for f in futures] == [None, None, None]
        assert pool.submit(SPECS[0]).result(timeout=60) is None  # no worker left: nothing waits
        cache = charts.SvgCache(tmp_path / "cache.json")
        pending = {cache.key(s): f for s, f in zip(SPECS, futures, strict=True)}
    with charts.svg_cache(tmp_path / "cache.json", pending) as cache:
        drawn = [charts.to_svg(s) for s in SPECS]
    assert drawn == [vl_convert.vegalite_to_svg(s) for s in SPECS]
    assert cache.drawn == 3


def test_the_cache_reads_the_charts_of_the_workers_and_saves_what_a_sequential_build_saves(tmp_path):
    with charts.svg_cache(tmp_path / "sequential.json"):
        sequential = [charts.to_svg(s) for s in SPECS]
    with ChartPool(1) as pool:
        version = charts.SvgCache(tmp_path / "none.json").version
        pending = {charts.chart_key(s, version): pool.submit(s) for s in SPECS}
        with charts.svg_cache(tmp_path / "pooled.json", pending) as cache:
            pooled = [charts.to_svg(s) for s in SPECS]
    assert pooled == sequential and cache.drawn == 0
    assert (tmp_path / "pooled.json").read_bytes() == (tmp_path / "sequential.json").read_bytes()


def test_a_chart_a_worker_refuses_or_cannot_receive_is_none():
    with ChartPool(1) as pool:
        assert pool.submit({"mark": "line", "data": {"values": [{"x": {1, 2}}]}}).result(timeout=5) is None  # a set
        refused = pool.submit({"mark": 5, "$schema": SCHEMA}).result(timeout=120)
        assert refused is None
        with pytest.raises(ValueError):
            vl_convert.vegalite_to_svg({"mark": 5, "$schema": SCHEMA})


def test_closing_the_pool_resolves_the_charts_not_drawn_and_ends_the_workers():
    pool = ChartPool(1)
    futures = [pool.submit(s) for s in SPECS * 5]
    pool.close()
    results = [f.result(timeout=30) for f in futures]
    assert all(r is None or r.startswith("<svg") for r in results)
    assert all(p.poll() is not None for p in pool._processes)
    assert pool.submit(SPECS[0]).result(timeout=1) is None


def test_the_worker_answers_each_request_on_its_line():
    from er_expectations.core.chart_worker import serve

    replies: list[str] = []
    serve([json.dumps({"id": 7, "spec": SPECS[0]}) + "\n", "\n", json.dumps({"id": 8, "spec": {"mark": 5}}) + "\n"],
          replies.append)
    first, second = (json.loads(r) for r in replies)
    assert first == {"id": 7, "svg": vl_convert.vegalite_to_svg(SPECS[0])}
    assert second["id"] == 8 and "error" in second
