"""What the history store records: one row per expectation result, one per release run, and
the identity of a check (the parameters that say *what* it measures), which keeps its series
when its thresholds change (issue 18)."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from er_expectations.history.identity import (
    CHANGE_KIND,
    CHECK_ID_KWARG,
    NON_IDENTIFYING_KWARGS,
    identifying_kwargs,
    json_safe,
)

__all__ = ["CHANGE_KIND", "CHECK_ID_KWARG", "AlertRecord", "NON_IDENTIFYING_KWARGS", "ReleaseRun", "ResultRecord",
           "identifying_kwargs", "json_safe", "kwargs_key"]


@dataclass(frozen=True)
class AlertRecord:
    """What became of one alert target of a run, as the history store keeps it: the action
    (slack, microsoft_teams, webhook, email), the target as messages show it (secrets masked),
    the outcome (``sent``, ``not needed``, ``failed``) and a failure's error text."""

    action: str
    target: str
    outcome: str
    error: str | None = None


def kwargs_key(kwargs: Mapping[str, Any]) -> str:
    """A short stable key of :func:`identifying_kwargs` (the first 32 hex digits of SHA-256)."""
    text = json.dumps(identifying_kwargs(kwargs), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def _number(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number


#: Keys of an expectation's result details kept out of ``details_json`` (stored elsewhere
#: or too large for a history row).
_DETAILS_LEFT_OUT = frozenset({"observed_text", "top_clusters"})


def _details_json(details: Mapping[str, Any] | None) -> str | None:
    """The scalar entries of a result's details as JSON (lists and tables left out)."""
    if not details:
        return None
    kept = {str(k): json_safe(v) for k, v in details.items()
            if k not in _DETAILS_LEFT_OUT and (v is None or isinstance(v, str | int | float | bool))}
    return json.dumps(kept, sort_keys=True, ensure_ascii=False) if kept else None


@dataclass(frozen=True, slots=True)
class ResultRecord:
    """One expectation's result on one release (a row of ``er_history_results``).

    ``value`` is the observed value (a statistic, or the point estimate of an estimated
    metric); ``estimate``, ``std_error``, ``ci_lower``, ``ci_upper``, ``ci_level`` describe
    an estimate when the expectation computed one (SPEC 5-7), else ``None``.
    """

    suite: str
    expectation_type: str
    kwargs: Mapping[str, Any]
    label: str
    severity: str
    success: bool
    metric: str | None = None
    column: str | None = None
    value: float | None = None
    estimate: float | None = None
    std_error: float | None = None
    ci_lower: float | None = None
    ci_upper: float | None = None
    ci_level: float | None = None
    error: str | None = None
    observed_text: str | None = None
    details: Mapping[str, Any] | None = None
    #: ``passed``, ``failed``, ``skipped`` (not evaluated, SPEC 13) or ``error``; from
    #: ``success`` and ``error`` when not given.
    outcome: str | None = None

    def resolved_outcome(self) -> str:
        """The stored outcome: the given one, else error / passed / failed."""
        if self.outcome is not None:
            return self.outcome
        return "error" if self.error else "passed" if self.success else "failed"

    def row(self) -> dict[str, Any]:
        ident = identifying_kwargs(self.kwargs)
        return {
            "suite": self.suite,
            "expectation_type": self.expectation_type,
            "metric": self.metric,
            "column_name": self.column,
            "kwargs_key": kwargs_key(self.kwargs),
            "kwargs_json": json.dumps(ident, sort_keys=True, ensure_ascii=False),
            "label": self.label,
            "severity": self.severity,
            "success": bool(self.success),
            "outcome": self.resolved_outcome(),
            "error": self.error,
            "value": _number(self.value),
            "estimate": _number(self.estimate),
            "std_error": _number(self.std_error),
            "ci_lower": _number(self.ci_lower),
            "ci_upper": _number(self.ci_upper),
            "ci_level": _number(self.ci_level),
            "observed_text": self.observed_text,
            "details_json": _details_json(self.details),
        }


@dataclass(frozen=True, slots=True)
class ReleaseRun:
    """One release validated by one run: what :meth:`HistoryStore.record` writes at once."""

    checkpoint: str
    release: str
    status: str
    results: Sequence[ResultRecord] = field(default_factory=tuple)
    position: int | None = None
    gx_run_name: str | None = None
    gx_run_time: datetime | None = None
    #: What the run read, by what and when (``meta["er_provenance"]`` of its GX results).
    provenance: Mapping[str, Any] | None = None

    @property
    def success(self) -> bool:
        return self.status in ("passed", "warnings")
