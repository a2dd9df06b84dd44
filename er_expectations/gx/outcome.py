"""How one GX expectation result reads: passed, failed, skipped or error, its severity and a short label.

The one reading of "did this result raise, and at what severity" that the run report, the
history, the alerts and Data Docs share. A result may be GX's object or its JSON dict.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from great_expectations.expectations.registry import get_expectation_impl

from er_expectations.core.severity import severity_of
from er_expectations.core.text import short_name

__all__ = ["CHECK_ID_META", "ExpectationOutcome", "check_id", "check_statistics", "expectation_label", "field_of",
           "outcome", "raised_error", "restate_statistics", "severity_of_result", "skip_reason", "status_and_severity"]


@dataclass(frozen=True, slots=True)
class ExpectationOutcome:
    """The result of one expectation on one release."""

    suite: str
    expectation: str
    label: str
    severity: str
    success: bool
    observed: object = None
    error: str | None = None
    #: Why the check was not evaluated (SPEC 13), or None when it was.
    skipped: str | None = None

    @property
    def status(self) -> str:
        """``error`` (it raised), ``skipped`` (not evaluated, and ``on_skip: pass``), ``passed`` or ``failed``.

        A skipped check whose suite asked ``on_skip: fail`` is ``failed``: its reason is kept in
        :attr:`skipped`. A skipped check is never ``passed`` (SPEC 13).
        """
        if self.error:
            return "error"
        if self.skipped is not None and self.success:
            return "skipped"
        return "passed" if self.success else "failed"

    def describe(self) -> str:
        """``label (severity)``, plus the error or the reason it was skipped."""
        text = f"{self.label} ({self.severity})"
        if self.error:
            text += f": error: {self.error}"
        elif self.skipped is not None:
            text += f": skipped: {self.skipped}"
        return text


def expectation_label(kind: str, kwargs: Mapping[str, Any]) -> str:
    """A short name for tables: ``pairwise_precision``, ``hill_number(q=2)``, ``x_vs_benchmark``.

    The expectation class names itself (``short_label``); a check of another library, or of a
    type no longer registered, by its type.
    """
    try:
        cls = get_expectation_impl(kind)
    except Exception:  # GX raises its own error (ExpectationNotFoundError) for an unknown type
        cls = None
    namer = getattr(cls, "short_label", None)
    return namer(kwargs) if namer is not None else short_name(kind, kwargs)


def field_of(obj: Any, name: str) -> Any:
    """``obj[name]`` of a JSON dict or ``obj.name`` of a GX object (None when absent)."""
    return obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name, None)


def raised_error(result: Any) -> str | None:
    """The exception message of a result that raised (GX 1.x nests it per metric), else None."""
    info = field_of(result, "exception_info")
    if not isinstance(info, Mapping):
        return None
    if info.get("raised_exception"):
        return str(info.get("exception_message") or "exception")
    for value in info.values():
        if isinstance(value, Mapping) and value.get("raised_exception"):
            return str(value.get("exception_message") or "exception")
    return None


def severity_of_result(result: Any) -> str:
    """The severity of a result's expectation (critical when it does not say)."""
    return severity_of(field_of(field_of(result, "expectation_config"), "severity"))


def skip_reason(result: Any) -> str | None:
    """Why a result was not evaluated (``details.skipped``, SPEC 13), else None."""
    body = field_of(result, "result")
    details = body.get("details") if isinstance(body, Mapping) else None
    if not isinstance(details, Mapping) or details.get("skipped") is not True:
        return None
    return str(details.get("skip_reason") or details.get("note") or "not evaluated")


#: The key of an expectation's ``meta`` holding the check's own name (a suite's ``id:``).
CHECK_ID_META = "er_id"


def check_id(config: Any) -> str | None:
    """The check's own name (``id:`` in its suite), from a GX expectation or configuration."""
    meta = field_of(config, "meta")
    value = meta.get(CHECK_ID_META) if isinstance(meta, Mapping) else None
    return str(value) if isinstance(value, str) and value else None


def outcome(suite: str, evr: Any) -> ExpectationOutcome:
    """One expectation result (GX's object or its JSON dict) as an :class:`ExpectationOutcome`."""
    config = field_of(evr, "expectation_config")
    kind = str(field_of(config, "type"))
    kwargs = dict(field_of(config, "kwargs") or {})
    result = field_of(evr, "result") or {}
    return ExpectationOutcome(
        suite=suite,
        expectation=kind,
        label=check_id(config) or expectation_label(kind, kwargs),
        severity=severity_of_result(evr),
        success=bool(field_of(evr, "success")),
        observed=result.get("observed_value") if isinstance(result, Mapping) else None,
        error=raised_error(evr),
        skipped=skip_reason(evr),
    )


def status_and_severity(result: Any) -> tuple[str, str]:
    """(``"passed"`` | ``"failed"`` | ``"skipped"`` | ``"error"``, severity) of one expectation result."""
    found = outcome("", result)
    return found.status, found.severity


def check_statistics(results: Any) -> dict[str, Any]:
    """GX's ``statistics`` of a validation, counted as every page and report counts them (SPEC 13).

    GX counts a check that returned ``success: true`` as successful, so a skipped check
    (``on_skip: pass``) inflated "Successful Expectations" and "Success Percent". Here a skipped
    check is neither evaluated nor successful: ``evaluated_expectations`` = checks − skipped,
    ``successful_expectations`` = passed, ``unsuccessful_expectations`` = failed + error (a
    skipped check with ``on_skip: fail`` is failed), ``success_percent`` = passed / evaluated × 100
    (None when nothing was evaluated); ``skipped_expectations`` and ``checks`` are added.
    """
    statuses = [outcome("", r).status for r in (results or []) if r is not None]
    skipped = statuses.count("skipped")
    passed = statuses.count("passed")
    evaluated = len(statuses) - skipped
    return {
        "evaluated_expectations": evaluated,
        "successful_expectations": passed,
        "unsuccessful_expectations": evaluated - passed,
        "success_percent": passed / evaluated * 100 if evaluated else None,
        "skipped_expectations": skipped,
        "checks": len(statuses),
    }


def restate_statistics(validation: Any) -> bool:
    """Replace GX's ``statistics`` of a validation result (its object) by :func:`check_statistics`;
    True when they changed. GX's ``success`` is kept: it is GX's "every check succeeded"."""
    wanted = check_statistics(field_of(validation, "results"))
    current = field_of(validation, "statistics")
    if current == wanted:
        return False
    if isinstance(validation, dict):
        validation["statistics"] = wanted
    else:
        validation.statistics = wanted
    return True
