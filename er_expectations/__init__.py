"""er-expectations: Great Expectations checks for entity-resolution outputs.

The Python API::

    import er_expectations as erx
    erx.summarize(df, cluster="inventor_id", name="full_name")
    erx.estimate(df, prediction="inventor_id", reference="benchmark_id")
    erx.exact_metrics(df, prediction="inventor_id", reference="true_id")

The formulas are those of the project's SPEC (entity-centric evaluation, Binette et al.).

Importing this package does not import Great Expectations (it takes seconds): the Python
API needs only numpy and pandas. To use the expectations from GX, register them with::

    import er_expectations.gx  # every expectation, metric and action of er-expectations

(``er-expectations run`` does this itself.)
"""

from __future__ import annotations

from er_expectations.analysis.ethnicity import impute_ethnicity
from er_expectations.analysis.planning import plan_sample_size, simulate
from er_expectations.analysis.release import (
    Release,
    cluster_errors,
    estimate,
    exact_metrics,
    summarize,
)
from er_expectations.core.errors import InputError, UndefinedMetricWarning
from er_expectations.core.version import __version__
from er_expectations.stats import METRICS, PERFORMANCE_METRICS, TRUE_STATISTICS

__all__ = [
    "InputError",
    "Release",
    "METRICS",
    "PERFORMANCE_METRICS",
    "TRUE_STATISTICS",
    "UndefinedMetricWarning",
    "cluster_errors",
    "diff_releases",
    "estimate",
    "estimate_by_group",
    "estimate_change",
    "exact_metrics",
    "impute_ethnicity",
    "plan_sample_size",
    "simulate",
    "summarize",
    "__version__",
    # labelling (SPEC 2.2, 9), loaded on first use
    "benchmark_from_labels",
    "check_labels",
    "draw_sample",
    "labelling_batch",
]

#: Public names loaded on first use (module attribute lookup, PEP 562).
_LAZY = {
    "benchmark_from_labels": "analysis.benchmark",
    "check_labels": "analysis.labelqc",
    "draw_sample": "analysis.sampling",
    "estimate_by_group": "analysis.subgroups",  # SPEC 8; imports neither ethnicolr nor torch
    "labelling_batch": "analysis.labelling_batch",
    "diff_releases": "analysis.drift",  # SPEC 10
    "estimate_change": "analysis.drift",  # SPEC 10: the paired change of an estimate between two releases
}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
