"""The charts of a run's Data Docs, drawn in worker processes while the releases are validated.

Data Docs pages embed charts (the history of a drift or control check, the group estimates of
a disparity check) that vl-convert draws one at a time while holding the GIL. The
specification of each chart is known from the validation result alone (each such expectation
class says how: ``chart_specs(result)``), so the runner hands every release's results to a
:class:`ChartPrewarm` as soon as they exist; the charts the project's chart cache does not hold
yet are drawn by a :class:`~er_expectations.core.chart_pool.ChartPool` while the next releases
are validated. The Data Docs build then reads them (:func:`~er_expectations.core.charts.svg_cache`
with ``pending``): the pages are the same bytes, and a chart the workers could not draw is
drawn by the build itself, as before.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from concurrent.futures import Future
from typing import Any

from great_expectations.expectations.registry import get_expectation_impl

from er_expectations.core.chart_extra import charts_available
from er_expectations.core.chart_pool import ChartPool
from er_expectations.core.charts import SvgCache
from er_expectations.gx.docs.data_docs import chart_cache_file

__all__ = ["ChartPrewarm", "result_chart_specs"]

log = logging.getLogger(__name__)


def result_chart_specs(validation: Any) -> list[dict[str, Any]]:
    """The Vega-Lite specifications of the charts of one validation result's page (suite
    result: its expectation results in order)."""

    specs: list[dict[str, Any]] = []
    for evr in getattr(validation, "results", None) or []:
        name = getattr(getattr(evr, "expectation_config", None), "type", None)
        try:
            impl = get_expectation_impl(name) if name else None
        except Exception:  # noqa: BLE001 - not registered here: its page draws what it draws
            continue
        chart_specs = getattr(impl, "chart_specs", None)
        if chart_specs is None:
            continue
        try:
            specs.extend(chart_specs(evr))
        except Exception:  # noqa: BLE001 - the page's renderer meets (and reports) the same problem
            log.debug("no chart specification for %s", name, exc_info=True)
    return specs


class ChartPrewarm:
    """Charts of validation results drawn ahead of a Data Docs build of ``context``.

    :meth:`add` takes the results of a release as they come; :attr:`pending` maps each chart's
    cache key to the future of its SVG (for :func:`~er_expectations.gx.docs.data_docs.build_site`);
    :meth:`close` ends the workers. Charts the project's chart cache already holds (a rerun)
    are not drawn again, and no worker starts when there is nothing to draw, nor without the
    charts extra (the pages then note each chart instead).
    """

    def __init__(self, context: Any, *, workers: int | None = None, pool: ChartPool | None = None) -> None:
        path = chart_cache_file(context)
        self.cache = SvgCache(path) if path is not None else None
        self.pool = pool if pool is not None else ChartPool(workers)
        self.pending: dict[str, Future] = {}
        self.drawable = charts_available()

    def add(self, validations: Iterable[Any]) -> int:
        """Start drawing the charts of ``validations`` not drawn before; how many were started."""
        if self.cache is None or not self.drawable:
            return 0
        started = 0
        for validation in validations:
            for spec in result_chart_specs(validation):
                key = self.cache.key(spec)
                if key in self.cache.old or key in self.pending:
                    continue
                self.pending[key] = self.pool.submit(spec)
                started += 1
        return started

    def close(self) -> None:
        self.pool.close()

    def __enter__(self) -> ChartPrewarm:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

