"""The charts of a run's Data Docs drawn ahead by worker processes (gx/docs/chart_prewarm.py).

The same run, with the workers, without them, and with workers that fail, must write the same
chart images in every page and the same chart cache; the specifications the prewarm computes
from the results are those the page renderers draw (none drawn again by the build), and a rerun
draws nothing that the cache holds.
"""

from __future__ import annotations

import base64
import io
import re
import shutil
import sys
from pathlib import Path

import pytest

import er_expectations.gx  # noqa: F401  (registers the expectations)
from er_expectations.core import chart_pool, charts
from er_expectations.gx.docs import chart_prewarm
from er_expectations.run import runner
from er_expectations.run.runner import run_checkpoint

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_drift_history import make_project  # noqa: E402

IMAGE = re.compile(r'src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"')
RUN_TIME = re.compile(r"\d{8}T\d{6}\.\d{6}Z")


def images(site: Path) -> dict[str, list[str]]:
    """Each page's chart images (decoded SVG), by page path with its run time masked."""
    found: dict[str, list[str]] = {}
    for page in sorted(site.glob("validations/**/*.html")):
        key = RUN_TIME.sub("<t>", str(page.relative_to(site)))
        found.setdefault(key, []).extend(base64.b64decode(m).decode("utf-8")
                                         for m in IMAGE.findall(page.read_text(encoding="utf-8")))
    return found


@pytest.fixture
def counted(monkeypatch):
    """The SvgCache objects of the run's builds (their charts drawn in-process) and the pools."""
    caches: list[charts.SvgCache] = []
    pools: list[chart_pool.ChartPool] = []
    original = charts.SvgCache.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        caches.append(self)

    monkeypatch.setattr(charts.SvgCache, "__init__", init)
    pool_init = chart_pool.ChartPool.__init__

    def init_pool(self, *args, **kwargs):
        pool_init(self, *args, **kwargs)
        pools.append(self)

    monkeypatch.setattr(chart_pool.ChartPool, "__init__", init_pool)
    return caches, pools


def run_twice(root: Path) -> tuple[dict[str, list[str]], bytes, list[dict[str, list[str]]]]:
    path = make_project(root)
    report = run_checkpoint(path, progress=False, out=io.StringIO())
    first = images(report.data_docs_index.parent)
    report = run_checkpoint(path, progress=False, out=io.StringIO())
    cache = (root / "project" / "gx" / "uncommitted" / ".er-chart-cache.json").read_bytes()
    return first, cache, [images(report.data_docs_index.parent)]


@pytest.fixture(scope="module")
def sequential(tmp_path_factory):
    """The run with every chart drawn by the Data Docs build itself (no workers)."""
    root = tmp_path_factory.mktemp("sequential")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(runner, "_chart_prewarm", lambda project, prepared: None)
        return run_twice(root)


def test_charts_drawn_by_workers_are_the_charts_drawn_by_the_build(tmp_path, sequential, counted):
    caches, pools = counted
    first, cache, rerun = run_twice(tmp_path)
    assert sum(len(v) for v in first.values()) >= 10
    assert (first, cache, rerun) == sequential  # every image of every page, and the cache file, the same bytes
    builds = [c for c in caches if c.path.name == ".er-chart-cache.json" and c.pending is not None]
    fresh_build = [c for c in builds if c.pending]
    assert fresh_build and all(c.drawn == 0 for c in fresh_build)  # every chart came from the workers
    assert all(set(c.pending) <= set(c.used) for c in fresh_build)  # and none was drawn for nothing
    assert pools[0].drawn == len(fresh_build[0].pending) and pools[0].failed == 0
    assert pools[-1].drawn == 0 and pools[-1]._threads == []  # rerun: every chart cached, no worker started


def test_failing_workers_leave_the_charts_to_the_build(tmp_path, sequential, counted, monkeypatch):
    caches, _ = counted
    monkeypatch.setattr(chart_pool, "WORKER", Path(tmp_path / "missing_worker.py"))
    shutil.rmtree(tmp_path, ignore_errors=True)
    tmp_path.mkdir()
    first, cache, rerun = run_twice(tmp_path)
    assert (first, cache, rerun) == sequential
    fresh_build = [c for c in caches if c.path.name == ".er-chart-cache.json" and c.pending]
    assert fresh_build and fresh_build[0].drawn == len(fresh_build[0].used)  # all drawn in-process


def test_results_without_charts_give_no_specs():
    """A result of an expectation without charts has none; an unregistered type is skipped."""
    from types import SimpleNamespace

    evr = SimpleNamespace(expectation_config=SimpleNamespace(type="expect_column_to_exist"), result={})
    unknown = SimpleNamespace(expectation_config=SimpleNamespace(type="expect_nothing_of_the_sort"), result={})
    assert chart_prewarm.result_chart_specs(SimpleNamespace(results=[evr, unknown])) == []
