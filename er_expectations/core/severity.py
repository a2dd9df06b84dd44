"""The severity rule, one for the command line, the run report and Data Docs.

Every expectation has a severity: ``critical`` (the default), ``warning`` or ``info``.

* A **failed** expectation fails its validation only when it is critical; a failed
  warning/info expectation is reported and does not fail it.
* An expectation that **raised** (it could not be computed) is an *error*, whatever its
  severity: no answer is not a pass.
* A severity that is not one of the three (a stored result edited by hand, another tool's
  value) reads as ``critical``, GX's own default: an unknown severity never hides a failure.
  Suite files are stricter: the YAML loader rejects an unknown severity.

The status of a validation (or a release, or a run) is the worst of its parts, in the order
``failed`` > ``error`` > ``warnings`` > ``passed``.
"""

from __future__ import annotations

from typing import Literal

__all__ = ["SEVERITIES", "STATUSES", "Status", "severity_of", "status_of", "worst_status"]

SEVERITIES: tuple[str, ...] = ("critical", "warning", "info")
Status = Literal["failed", "error", "warnings", "passed"]
#: Statuses from worst to best.
STATUSES: tuple[Status, ...] = ("failed", "error", "warnings", "passed")


def severity_of(raw: object) -> str:
    """``"critical"``, ``"warning"`` or ``"info"`` from a stored value (an enum, a text or None)."""
    text = str(getattr(raw, "value", raw) or "").strip().lower()
    return text if text in SEVERITIES else "critical"


def status_of(*, critical_failed: int, errors: int, warnings_failed: int) -> Status:
    """The status of one validation from its counts (see the module docstring)."""
    if critical_failed:
        return "failed"
    if errors:
        return "error"
    return "warnings" if warnings_failed else "passed"


def worst_status(statuses: object) -> Status:
    """The worst of several statuses (``passed`` when there is none)."""
    found = set(statuses)  # type: ignore[call-overload]
    return next((s for s in STATUSES if s in found), "passed")
