"""The identity of a check in the history: the parameters that say *what* it measures, which
keep its series when its thresholds change (issue 18). Standard library only (not even hashlib:
:func:`~.records.kwargs_key` hashes it), so that reading the history (:mod:`.reading`) stays
light; :mod:`.records` re-exports it."""

from __future__ import annotations

import math
from collections.abc import Mapping

TYPE_CHECKING = False  # typing is not imported when the program starts (issue 29 item 6)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["CHANGE_KIND", "CHECK_ID_KWARG", "NON_IDENTIFYING_KWARGS", "identifying_kwargs", "json_safe"]

#: Expectation parameters that say what is *acceptable*, not what is *measured*: they do not
#: identify a series (changing a threshold keeps the history of the statistic).
NON_IDENTIFYING_KWARGS: frozenset[str] = frozenset({
    "min_value", "max_value", "strict_min", "strict_max", "bound", "severity", "mostly",
    "result_format", "catch_exceptions", "include_config", "meta", "notes", "description", "id",
    "batch_id", "rendered_content", "ci_level", "ci_method", "n_boot", "seed", "windows",
    # drift checks (SPEC 10): how the limits are drawn and what a failure lists, not what is measured
    "window", "min_history", "k", "baseline_release", "exclude_failed", "diff_examples",
    # thresholds and decision rules (issue 18): tightening one keeps the check's series
    "max_change", "max_relative_change", "max_disparity", "require_significance", "adjust", "min_draws",
    "decision", "on_skip", "min_overlap", "record_id_column", "min_similarity", "scorer",
    # data mapping, not what is measured: a diff's names (and the names a name statistic counts)
    "name_column",
})
#: The one threshold that also says what a check records: a statistic's change is stored as an
#: absolute or a relative change (``max_change`` or ``max_relative_change``), so the kind is kept
#: in the identity under this key while the threshold's value is not.
CHANGE_KIND = "change_kind"
#: The key of a check's own name (a suite's ``id:``) in its identity.
CHECK_ID_KWARG = "check_id"


def json_safe(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, Mapping):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        try:
            return json_safe(value.item())
        except (TypeError, ValueError):
            return str(value)
    return value if value is None or isinstance(value, str | int | float | bool) else str(value)


def identifying_kwargs(kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters that say *what* an expectation measures (thresholds, levels, decision rules
    and the like left out: :data:`NON_IDENTIFYING_KWARGS`), so that tightening a threshold keeps
    the check's series. A change's kind (absolute or relative) is kept as :data:`CHANGE_KIND`.

    Idempotent: applied to what it returned (the stored ``kwargs_json``), it returns the same,
    so rows recorded when more parameters identified a check are read under today's identity.
    """
    found = {k: json_safe(v) for k, v in kwargs.items() if k not in NON_IDENTIFYING_KWARGS and v is not None}
    if kwargs.get("max_relative_change") is not None:
        found[CHANGE_KIND] = "relative"
    elif kwargs.get("max_change") is not None:
        found[CHANGE_KIND] = "absolute"
    return dict(sorted(found.items()))
