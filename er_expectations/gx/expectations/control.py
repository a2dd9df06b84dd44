"""``expect_statistic_within_control_limits`` (SPEC 10, against history).

A summary statistic of the release (SPEC 3, on the whole release) must lie within control
limits drawn from its own past values in the history store: the mean of the last
``window`` releases ± ``k`` standard deviations of those values, or, with a pinned
``baseline_release``, that release's stored value ± ``k`` standard deviations.

Releases where this check failed are left out of the limits (``exclude_failed``), so that
a bad release does not become the new normal. With fewer than ``min_history`` usable past
values (or outside an ``er-expectations run`` with a history store) the check is skipped
with "not enough history (n of m)", not failed. The value of every release, skipped or
not, is recorded by the runner, so the history fills as releases are validated in order.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, Literal

from great_expectations.compatibility import pydantic
from great_expectations.core.suite_parameters import SuiteParameterDict
from great_expectations.render import LegacyDiagnosticRendererType
from great_expectations.render.renderer.renderer import renderer
from great_expectations.validator.metric_configuration import MetricConfiguration

from er_expectations.core.text import fmt_number, format_number
from er_expectations.gx.docs.history_view import (
    as_number,
    chart_spec,
    chart_thresholds,
    history_chart_blocks,
    identity,
    own_series,
    series_rows,
)
from er_expectations.gx.docs.render import result_details
from er_expectations.gx.expectations.base import SkippableExpectation, json_number
from er_expectations.gx.expectations.params import ParameterError
from er_expectations.gx.expectations.summary import ChosenStatisticWithOrder, parse_q
from er_expectations.gx.metrics.release import CLUSTERING_TABLE, SUMMARY_STATISTIC, TABLE_KEYS
from er_expectations.stats import SUMMARY_STATISTICS

__all__ = ["CONTROL_STATISTICS", "ExpectStatisticWithinControlLimits", "control_limits"]

#: Statistics a control chart can follow (SPEC 3).
CONTROL_STATISTICS: tuple[str, ...] = (*SUMMARY_STATISTICS, "hill_number")


def control_limits(values: list[float], *, k: float, center: float | None = None) -> tuple[float, float, float, float]:
    """(center, sd, lower, upper): the mean of ``values`` (or ``center``) ± k × their sample SD."""
    n = len(values)
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n >= 2 else math.nan
    mid = mean if center is None else center
    return mid, sd, mid - k * sd, mid + k * sd


class ExpectStatisticWithinControlLimits(SkippableExpectation, ChosenStatisticWithOrder):
    """A summary statistic lies within control limits from its own history: the mean of the last
    releases ± k standard deviations, or a pinned release's stored value ± k SD (SPEC 10)."""

    label_from: ClassVar[tuple[str, str] | None] = ("statistic", "control")
    pinned_release_parameter: ClassVar[str | None] = "baseline_release"

    statistic: Literal[CONTROL_STATISTICS] = pydantic.Field(  # type: ignore[valid-type]
        ..., description="Which summary statistic of the predicted clustering (SPEC 3) to follow.")
    window: int | SuiteParameterDict = pydantic.Field(8, ge=2, le=1000, description="How many past releases the limits are drawn from.")
    min_history: int | SuiteParameterDict = pydantic.Field(
        3, ge=2, le=1000, description="Fewest past values needed; with fewer the check is skipped (not enough "
        "history), not failed.")
    k: float | SuiteParameterDict = pydantic.Field(3.0, gt=0.0, description="Width of the limits in standard deviations of the past "
                              "values (3 = the usual control chart).")
    baseline_release: str | None = pydantic.Field(
        None, description="Centre the limits on this release's stored value instead of the mean of the window "
        "(a pinned baseline); the spread is still k SD of the window.")
    exclude_failed: bool = pydantic.Field(
        True, description="Leave out of the limits the past releases where this check failed.")

    args_keys: ClassVar[tuple[str, ...]] = ("prediction_column", "statistic", "k", "window")
    success_keys: ClassVar[tuple[str, ...]] = (
        "prediction_column", "record_id_column", "statistic", "q", "name_column", "window", "min_history", "k",
        "baseline_release", "exclude_failed", *SkippableExpectation.SKIP_KEYS)

    @pydantic.root_validator(skip_on_failure=False)
    def _check_window(cls, values):
        window, least = values.get("window"), values.get("min_history")
        if isinstance(window, int) and isinstance(least, int) and least > window:
            raise ParameterError(f"min_history ({least}) is larger than window ({window}): the limits could never "
                                 "be drawn", at="min_history", hint="make min_history at most window")
        return values

    def _metric_configs(self, domain: dict[str, Any]) -> dict[str, MetricConfiguration]:
        value = {"prediction_column": self.prediction_column, "record_id_column": self.record_id_column,
                 "name_column": self._name_column(),
                 "statistic": self.statistic, "q": parse_q(self.q) if self.q is not None else None}
        return {SUMMARY_STATISTIC: MetricConfiguration(SUMMARY_STATISTIC, domain, value),
                CLUSTERING_TABLE: MetricConfiguration(CLUSTERING_TABLE, domain, {k: value[k] for k in TABLE_KEYS})}

    @classmethod
    def _sentence(cls, kwargs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        params: dict[str, Any] = {
            "label": cls._statistic_label(kwargs), "prediction_column": kwargs.get("prediction_column"),
            "k": format_number(float(kwargs.get("k") or 3.0)), "window": int(kwargs.get("window") or 8),
            "min_history": int(kwargs.get("min_history") or 3)}
        if kwargs.get("baseline_release"):
            params["baseline_release"] = kwargs["baseline_release"]
            centre = "the stored value of release $baseline_release"
        else:
            centre = "the mean of the last $window releases"
        template = (f"The $label of $prediction_column lies within {centre} ± $k standard deviations of the "
                    "last $window releases' values, from the history store (skipped with fewer than "
                    "$min_history past values).")
        return template, params

    def _validate(self, metrics: dict, runtime_configuration=None, execution_engine=None):
        stat = metrics[SUMMARY_STATISTIC]
        value = float(stat["value"])
        frame, problem, active = own_series(self, last=self.window)
        details: dict[str, Any] = {"statistic": self.statistic,
                                   "label": self._statistic_label({"statistic": self.statistic, "q": self.q}),
                                   "value": json_number(value), "k": float(self.k), "window": int(self.window),
                                   "min_history": int(self.min_history), "n_records": stat["n_records"],
                                   "n_clusters": stat["n_clusters"]}
        skipped = None
        used: list[tuple[str, float]] = []
        center = None
        if problem is not None:
            skipped = problem
        else:
            rows = (zip(frame["release"], frame["value"], frame["success"], strict=True) if frame is not None
                    else [])
            for past_release, past, passed in rows:
                if past is None or (isinstance(past, float) and math.isnan(past)):
                    continue
                if self.exclude_failed and not bool(passed):  # a skipped check passed: kept
                    continue
                used.append((str(past_release), float(past)))
            if len(used) < self.min_history:
                skipped = (f"not enough history ({len(used)} of {self.min_history} past values needed"
                           f"{', failed releases left out' if self.exclude_failed else ''})")
            elif self.baseline_release:
                center = _pinned_value(active, self, self.baseline_release)
                if center is None:
                    skipped = (f"not enough history: the pinned release '{self.baseline_release}' has no stored "
                               "value yet")
        details["history_releases"] = [r for r, _ in used]
        current = {"release": active.release if active is not None else "this batch", "value": value,
                   "success": True, "outcome": "skipped"}
        if skipped is not None:
            details["history"] = series_rows(frame, current)
            return self.skipped(details, skipped, observed=value,
                                observed_text=f"{fmt_number(value)}; skipped: {skipped}")
        mid, sd, lower, upper = control_limits([v for _, v in used], k=float(self.k), center=center)
        ok = lower <= value <= upper
        current.update({"success": ok, "outcome": "passed" if ok else "failed", "ci_lower": lower,
                        "ci_upper": upper})  # the limits, drawn as a bar
        details.update({
            "skipped": False, "center": json_number(mid), "sd": json_number(sd), "lower": json_number(lower),
            "upper": json_number(upper), "baseline_release": self.baseline_release,
            "history": series_rows(frame, current),
        })
        centre = (f"value of {self.baseline_release}" if self.baseline_release
                  else f"mean of {len(used)} releases {used[0][0]}–{used[-1][0]}")
        details["observed_text"] = (f"{fmt_number(value)}; control limits {fmt_number(lower)} to {fmt_number(upper)} "
                                    f"({centre} {fmt_number(mid)} ± {format_number(float(self.k))} × SD "
                                    f"{fmt_number(sd)})")
        if not ok:
            side = "above" if value > upper else "below"
            details["note"] = f"{fmt_number(value)} is {side} the control limits {fmt_number(lower)} to {fmt_number(upper)}"
        return {"success": bool(ok), "result": {"observed_value": json_number(value), "details": details}}

    @staticmethod
    def _chart_titles(details: dict[str, Any]) -> dict[str, str]:
        return {"title": str(details.get("label") or "history"), "y_title": str(details.get("statistic") or "value")}

    @classmethod
    def chart_specs(cls, result: Any) -> list[dict[str, Any]]:
        """The Vega-Lite specifications of the charts the Data Docs page of ``result`` draws."""
        details = result_details(result)
        spec = chart_spec(details.get("history"), **cls._chart_titles(details), thresholds=chart_thresholds(details))
        return [spec] if spec is not None else []

    @classmethod
    @renderer(renderer_type=LegacyDiagnosticRendererType.UNEXPECTED_TABLE)
    def _diagnostic_unexpected_table_renderer(cls, configuration=None, result=None, runtime_configuration=None,
                                              **kwargs):
        blocks = list(super()._diagnostic_unexpected_table_renderer(
            configuration=configuration, result=result, runtime_configuration=runtime_configuration, **kwargs) or [])
        details = result_details(result)
        blocks.extend(history_chart_blocks(details, **cls._chart_titles(details)))
        return blocks or None


def _pinned_value(active: Any, expectation: Any, release: str) -> float | None:
    """The stored value of ``release`` in this expectation's series (its latest run), or None."""

    try:
        frame = active.store.series(checkpoint=active.checkpoint, expectation_type=expectation.expectation_type,
                                    column=expectation.prediction_column, kwargs=identity(expectation))
    except Exception:  # noqa: BLE001 - a HistoryError: treated as "no stored value"
        return None
    mine = frame[frame["release"] == release]
    return as_number(mine["value"].iloc[-1]) if len(mine) else None
