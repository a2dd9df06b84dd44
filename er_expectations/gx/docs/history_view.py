"""What a drift check reads from the history store, and the chart its Data Docs embed (SPEC 10).

During ``er-expectations run`` the release being validated is
:func:`~er_expectations.history.context.active_release`; an expectation finds its own past
values in the store there (:func:`own_series`). The result keeps the series as a few JSON
rows (:func:`series_rows`, the current release last), and the Data Docs renderer draws them
with :func:`~er_expectations.history.chart.series_spec` as a static SVG image
(:func:`chart_block`): no script, whatever the release labels say.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from er_expectations.gx.docs.chart_blocks import drawn_chart
from er_expectations.gx.outcome import check_id
from er_expectations.history import HistoryError
from er_expectations.history.store import CHECK_ID_KWARG, identifying_kwargs

__all__ = ["chart_block", "chart_format", "chart_spec", "chart_thresholds", "history_chart_blocks", "identity", "own_series",
           "series_rows"]

#: Releases drawn in a drift check's chart (the current one included).
CHART_RELEASES = 16


def own_series(expectation: Any, *, last: int | None = None) -> tuple[Any, str | None, Any]:
    """The expectation's past values in the active run's store, before the release validated.

    The series is the one recorded for the same expectation type, column and identifying
    parameters (thresholds, window and the like left out: see
    :data:`~er_expectations.history.store.NON_IDENTIFYING_KWARGS`). Returns ``(frame,
    problem, active)``: the :meth:`HistoryStore.series` frame (None with a ``problem`` saying
    why: not run by er-expectations, history disabled or unavailable, filters that match
    several expectations) and the active release.
    """
    from er_expectations.history.context import active_release

    active = active_release()
    if active is None:
        return None, ("no history: the check reads the history store of an er-expectations run "
                      "(er-expectations run with a history)"), None
    if active.store is None:
        return None, f"no history: {active.problem or 'the history store is not available'}", active
    try:
        frame = active.store.series(checkpoint=active.checkpoint, expectation_type=expectation.expectation_type,
                                    column=expectation.prediction_column, kwargs=identity(expectation),
                                    before_position=active.position, last=last)
    except HistoryError as error:
        return None, f"history not read: {error}", active
    except Exception as error:  # noqa: BLE001 - a store lost during the run: the check says so, the run goes on
        return None, f"history not read: {type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}", active
    return frame, None, active


def identity(expectation: Any) -> dict[str, Any]:
    """The parameters that say what an expectation measures, as its configuration has them."""

    kwargs = dict(expectation.configuration.kwargs or {})
    if check_id(expectation):
        kwargs[CHECK_ID_KWARG] = check_id(expectation)
    return identifying_kwargs(kwargs)


def as_number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def series_rows(frame: Any, current: Mapping[str, Any], *, limit: int = CHART_RELEASES) -> list[dict[str, Any]]:
    """JSON rows of the past series (up to ``limit`` − 1 releases) and the current release last."""
    rows: list[dict[str, Any]] = []
    if frame is not None and len(frame):
        past = frame.iloc[max(len(frame) - max(limit - 1, 0), 0):]  # the last limit - 1, not copied
        outcomes = past["outcome"] if "outcome" in past.columns else [None] * len(past)
        for release, version, value, lower, upper, level, success, error, outcome in zip(
                *(past[c] for c in ("release", "version", "value", "ci_lower", "ci_upper", "ci_level", "success",
                                    "error")), outcomes, strict=True):
            rows.append({"release": str(release), "version": int(version) if as_number(version) else 1,
                         "value": as_number(value), "ci_lower": as_number(lower),
                         "ci_upper": as_number(upper), "ci_level": as_number(level),
                         "success": bool(success), "error": error if isinstance(error, str) else None,
                         "outcome": outcome if isinstance(outcome, str) else None})
    rows.append({"release": str(current.get("release")), "version": 1, "value": as_number(current.get("value")),
                 "ci_lower": as_number(current.get("ci_lower")), "ci_upper": as_number(current.get("ci_upper")),
                 "ci_level": as_number(current.get("ci_level")), "success": bool(current.get("success")), "error": None,
                 "outcome": current.get("outcome")})
    return rows


def chart_thresholds(details: Mapping[str, Any]) -> list[float]:
    """The check's limits its chart draws as lines (``details["chart_thresholds"]``)."""
    return [float(t) for t in details.get("chart_thresholds") or () if isinstance(t, int | float)]


def chart_format(details: Mapping[str, Any]) -> str | None:
    """The number format of a check's chart (``details["chart_format"]``: ``".0%"`` for a relative
    change, which the page's text gives in per cent), or None."""
    value = details.get("chart_format")
    return value if isinstance(value, str) and value else None


def chart_spec(rows: list[dict[str, Any]] | None, *, title: str, y_title: str,
               thresholds: Sequence[float] = (), y_format: str | None = None) -> dict[str, Any] | None:
    """The Vega-Lite specification of the series chart of ``rows`` (:func:`series_rows`) with the
    check's limits as lines, or None with fewer than 2 values (no chart)."""
    if not rows or sum(r.get("value") is not None for r in rows) < 2:
        return None

    from er_expectations.history.chart import series_spec

    frame = pd.DataFrame(rows)
    frame["label"], frame["metric"] = title, y_title
    return series_spec(frame, title=title, y_title=y_title, thresholds=thresholds, y_format=y_format)


def chart_block(rows: list[dict[str, Any]] | None, *, title: str, y_title: str,
                thresholds: Sequence[float] = (), y_format: str | None = None) -> Any:
    """A Data Docs block with the series drawn as an SVG image, or None (fewer than 2 values,
    or the chart cannot be made): the page then shows the numbers only. Without the charts
    extra, the note of a chart not drawn (:func:`~er_expectations.gx.docs.chart_blocks.drawn_chart`)."""

    try:
        spec = chart_spec(rows, title=title, y_title=y_title, thresholds=thresholds, y_format=y_format)
    except Exception:  # noqa: BLE001 - a chart is an extra: the page keeps its numbers without it
        return None
    if spec is None:
        return None
    alt = f"{title}: {y_title} over the releases {rows[0]['release']} to {rows[-1]['release']}"
    return drawn_chart(spec, alt=alt)


def history_chart_blocks(details: Mapping[str, Any], *, title: str, y_title: str) -> list[Any]:
    """The chart a history-based check adds under its result (none without a history), with the
    check's limits (:func:`chart_thresholds`) drawn as lines.

    Why a check was skipped is said by every check's own renderer (SPEC 13), not here.
    """
    chart = chart_block(details.get("history"), title=title, y_title=y_title, thresholds=chart_thresholds(details),
                        y_format=chart_format(details))
    return [] if chart is None else [chart]
