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

from er_expectations.core.errors import InputError, UndefinedMetricWarning
from er_expectations.core.version import __version__

__all__ = [
    "InputError",
    "Release",
    "METRICS",
    "PERFORMANCE_METRICS",
    "TRUE_STATISTICS",
    "UndefinedMetricWarning",
    "cluster_errors",
    "diff_releases",
    "error_audit",
    "expected_error_probabilities",
    "estimate",
    "estimate_by_group",
    "estimate_change",
    "exact_metrics",
    "find_slices",
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
    "topup_candidates",
    "apply_topup",
    # the labelling workbench's local web page (issue 19), loaded on first use
    "workbench",
]

#: Public names loaded on first use (module attribute lookup, PEP 562): importing the package
#: (and the ``er-expectations`` program, which a Ctrl-C may stop while it starts) stays light.
_LAZY = {
    "impute_ethnicity": "analysis.ethnicity",
    "plan_sample_size": "analysis.sample_size",
    "simulate": "analysis.planning",
    "Release": "analysis.release",
    "cluster_errors": "analysis.release",
    "estimate": "analysis.release",
    "exact_metrics": "analysis.release",
    "summarize": "analysis.release",
    "METRICS": "stats",
    "PERFORMANCE_METRICS": "stats",
    "TRUE_STATISTICS": "stats",
    "benchmark_from_labels": "analysis.benchmark",
    "check_labels": "analysis.labelqc",
    "draw_sample": "analysis.sampling",
    "estimate_by_group": "analysis.subgroups",  # SPEC 8; imports neither ethnicolr nor torch
    "labelling_batch": "analysis.labelling_batch",
    "topup_candidates": "analysis.topup",  # SPEC 14.3: top-up labelling for a later release
    "apply_topup": "analysis.topup",
    "diff_releases": "analysis.drift",  # SPEC 10
    "find_slices": "analysis.slices",  # SPEC 12.2: slices of high error, honest p-values
    "estimate_change": "analysis.drift",  # SPEC 10: the paired change of an estimate between two releases
    "workbench": "web.server",  # issue 19: serve a labelling project from a notebook
    "error_audit": "analysis.error_audit",  # SPEC 12.1
    "expected_error_probabilities": "analysis.expected_errors",  # SPEC 12.3
}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
