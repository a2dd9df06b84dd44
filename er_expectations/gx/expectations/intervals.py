"""The interval options of the expectations that show estimates (SPEC 6, 8, 10; issue 21).

``ci_method``, ``n_boot`` and ``seed`` are declared once here and used by
``expect_estimated_<metric>_to_be_between``, ``expect_subgroup_disparity_to_be_below`` and
``expect_estimate_change_to_be_below``, so that a YAML suite, a GX constructor and the
Python API (``erx.estimate``, ``erx.estimate_by_group``, ``erx.estimate_change``) take the
same names and values. The renderers name the method that built each interval
(:func:`method_phrase`) and say when a zero-event or no-change bound entered it.
"""

from __future__ import annotations

from typing import Any

from great_expectations.compatibility import pydantic

from er_expectations.stats import (
    DEFAULT_CI_METHOD,
    DEFAULT_N_BOOT,
    DEFAULT_SEED,
    GAP_METHODS,
    INTERVAL_METHODS,
    MAX_N_BOOT,
    MIN_N_BOOT,
    RECOMMENDED,
    uses_bootstrap,
)

__all__ = [
    "ESTIMATE_CI_METHODS",
    "GAP_CI_METHODS",
    "ci_method_field",
    "interval_details",
    "interval_sentence",
    "method_phrase",
    "n_boot_field",
    "seed_field",
]

#: What ``ci_method`` takes for an estimate or a change (SPEC 6, 10).
ESTIMATE_CI_METHODS: tuple[str, ...] = (*INTERVAL_METHODS, RECOMMENDED)
#: What ``ci_method`` takes for subgroup gaps (SPEC 8): the same, ``bca_mover`` and ``hull``.
GAP_CI_METHODS: tuple[str, ...] = (*INTERVAL_METHODS, *GAP_METHODS, RECOMMENDED)

_ESTIMATE_WORDS = {
    "linearization": "linearised normal interval (estimate ± z·SE)",
    "logit": "logit interval (normal on the log-odds scale)",
    "bootstrap": "percentile bootstrap",
    "bca": "BCa bootstrap (bias-corrected and accelerated)",
    "studentized": "studentised bootstrap",
    "zero_event": "exact binomial bound from the number of draws (no draw shows an error; SPEC 6)",
    "none": "no interval",
}
_DIFFERENCE_WORDS = {
    "linearization": "paired normal interval (difference ± z·paired SE)",
    "logit": "MOVER of the two sides' logit intervals",
    "bootstrap": "percentile bootstrap of the shared draws (pairing kept)",
    "bca": "BCa bootstrap of the shared draws (pairing kept)",
    "studentized": "studentised bootstrap of the shared draws (pairing kept)",
    "bca_mover": "MOVER of the two sides' BCa intervals",
    "hull": "smallest interval holding both the paired normal interval and the MOVER of the two sides' BCa "
            "intervals",
    "zero_event": "bound from the number of draws without an error or a change (SPEC 6, 8, 10)",
    "none": "no interval (the draws show no variation and no bound applies)",
}


def method_phrase(interval: str | None, *, difference: bool = False) -> str:
    """How an interval was built, in words, from a result's ``interval`` (its method)."""
    words = _DIFFERENCE_WORDS if difference else _ESTIMATE_WORDS
    return words.get(str(interval), str(interval))


def ci_method_field(*, gaps: bool = False, default: str = DEFAULT_CI_METHOD) -> Any:
    """The ``ci_method`` field: the interval method (SPEC 6), ``default`` unless given."""
    extra = (" bca_mover (the gap by MOVER of the two sides' BCa intervals), hull (the smallest interval "
             "holding the paired normal and the bca_mover gaps)," if gaps else "")
    mark = {m: (", the default" if m == default else "") for m in ("linearization", "logit", RECOMMENDED)}
    return pydantic.Field(
        default, description="How the confidence intervals are computed (SPEC 6): linearization "
        f"(estimate ± z·SE{mark['linearization']}), logit (normal on the log-odds scale{mark['logit']}), "
        "bootstrap (percentile), bca (bias-corrected and accelerated bootstrap), studentized (studentised "
        "bootstrap)," + extra + " or recommended (per metric, from the coverage study: BCa estimates, the hull "
        f"for subgroup gaps, the logit MOVER for changes of shares{mark[RECOMMENDED]}). The bootstraps resample "
        "the benchmark draws.")


def n_boot_field() -> Any:
    """The ``n_boot`` field: bootstrap resamples, bounded (time and memory grow with it)."""
    return pydantic.Field(
        DEFAULT_N_BOOT, ge=MIN_N_BOOT, le=MAX_N_BOOT, description=f"Number of bootstrap resamples for the "
        f"bootstrap methods (default {DEFAULT_N_BOOT}, from {MIN_N_BOOT} to {MAX_N_BOOT}).")


def seed_field() -> Any:
    """The ``seed`` field of the estimates: None gives :data:`DEFAULT_SEED` (reproducible)."""
    return pydantic.Field(
        None, ge=0, description=f"Seed of the bootstrap resamples (default {DEFAULT_SEED}: the same data give "
        "the same interval and verdict on every run; recorded in the result).")


def interval_sentence(kwargs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The renderer's sentence on the interval method asked for ('' for the default)."""
    method = kwargs.get("ci_method") or DEFAULT_CI_METHOD
    if method == DEFAULT_CI_METHOD:
        return "", {}
    words = ("the recommended method of the metric (SPEC 6, from the coverage study)" if method == RECOMMENDED
             else method_phrase(method, difference=False) if method in _ESTIMATE_WORDS
             else method_phrase(method, difference=True))
    params: dict[str, Any] = {"ci_method": words}
    template = " Intervals: $ci_method"
    if uses_bootstrap(method):
        params["n_boot"] = int(kwargs.get("n_boot") or DEFAULT_N_BOOT)
        template += ", $n_boot resamples of the draws"
    return template + ".", params


def interval_details(ci_method: str, n_boot: int, seed: int | None) -> dict[str, Any]:
    """What a result records of the interval options asked for (the seed used, when resampled)."""
    out: dict[str, Any] = {"requested_ci_method": ci_method}
    if uses_bootstrap(ci_method):
        out.update({"n_boot": int(n_boot), "seed": seed})
    return out
