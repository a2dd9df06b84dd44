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

When an alert is sent (``notify_on``, :func:`wants_notification`): exactly as GX's own actions
decide (``great_expectations.checkpoint.actions.should_notify``), so a checkpoint file and a GX
checkpoint mean the same. GX's ``success`` of a run is false as soon as one check failed or raised,
*whatever its severity* (a release that "passed with warnings" is a GX failure):

* ``all``: always; ``success``: no check failed or raised; ``failure``: a check failed or raised
  (a warning/info failure included: a warning is worth a look);
* ``critical``, ``warning``, ``info``: the *worst* severity among the checks that failed or raised
  is that level (``critical``: a release failed a critical check or a critical check raised;
  ``warning``: the worst failure is a warning, so it stays silent when a critical check failed too).

A skipped check (SPEC 13) never sends: it neither failed nor succeeded.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

__all__ = ["NOTIFY_ON", "SEVERITIES", "STATUSES", "Status", "severity_of", "status_of", "wants_notification",
           "worst_status"]

SEVERITIES: tuple[str, ...] = ("critical", "warning", "info")
#: The values of an alert's ``notify_on``: GX's three, then the severity levels.
NOTIFY_ON: tuple[str, ...] = ("failure", "all", "success", *SEVERITIES)
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


def wants_notification(notify_on: str, *, failed_severities: Iterable[str]) -> bool:
    """Whether an alert with this ``notify_on`` is sent for a run (GX's rule, module docstring).

    ``failed_severities`` are the severities of the checks that failed or raised (a skipped check
    with ``on_skip: fail`` is failed); GX's ``success`` is that there is none.
    """
    if notify_on not in NOTIFY_ON:
        raise ValueError(f"notify_on: expected one of {', '.join(NOTIFY_ON)}, got {notify_on!r}")
    failed = {severity_of(s) for s in failed_severities}
    if notify_on in ("all", "success", "failure"):
        return notify_on == "all" or (notify_on == "success") == (not failed)
    worst = next((s for s in SEVERITIES if s in failed), None)
    return worst == notify_on
