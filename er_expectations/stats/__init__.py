"""Pure statistics on small per-cluster tables (numpy only; no GX, no pandas).

Layer 1 of er-expectations: the formulas of SPEC sections 3–7. The engines aggregate the
full data into :class:`ClusteringTable` and :class:`BenchmarkSample`; everything here
runs on those small tables.
"""

from er_expectations.stats.estimator import (
    CI_METHODS,
    DEFAULT_N_BOOT,
    MAX_N_BOOT,
    RatioEstimate,
    check_ci_level,
    check_ci_method,
    check_n_boot,
    check_seed,
    f_beta_estimate,
    ratio_estimate,
    resolve_seed,
    z_value,
    zero_event_draws,
    zero_event_interval,
)
from er_expectations.stats.exact import (
    ContingencySums,
    contingency_sums,
    exact_metrics_from_contingency,
    exact_metrics_from_sums,
)
from er_expectations.stats.metrics import (
    METRICS,
    NAME_STATISTICS,
    PERFORMANCE_METRICS,
    TRUE_STATISTICS,
    MetricDef,
    check_beta,
    error_contributions,
    estimate_metrics,
    fg_values,
    resolve_metrics,
)
from er_expectations.stats.sample import BenchmarkSample, ClusterErrors, cluster_errors
from er_expectations.stats.summary import (
    SUMMARY_STATISTICS,
    ClusteringTable,
    hill_label,
    hill_number,
    parse_hill_orders,
    summary_statistics,
)

__all__ = [
    "CI_METHODS",
    "DEFAULT_N_BOOT",
    "MAX_N_BOOT",
    "BenchmarkSample",
    "ClusterErrors",
    "ClusteringTable",
    "ContingencySums",
    "METRICS",
    "MetricDef",
    "NAME_STATISTICS",
    "PERFORMANCE_METRICS",
    "RatioEstimate",
    "SUMMARY_STATISTICS",
    "TRUE_STATISTICS",
    "check_beta",
    "check_ci_level",
    "check_ci_method",
    "check_n_boot",
    "check_seed",
    "cluster_errors",
    "error_contributions",
    "estimate_metrics",
    "contingency_sums",
    "exact_metrics_from_contingency",
    "exact_metrics_from_sums",
    "f_beta_estimate",
    "fg_values",
    "hill_label",
    "hill_number",
    "parse_hill_orders",
    "ratio_estimate",
    "resolve_metrics",
    "resolve_seed",
    "summary_statistics",
    "z_value",
    "zero_event_draws",
    "zero_event_interval",
]

# -- interval methods and honest differences (issue 21) -----------------------------------------------
# Loaded on first use (PEP 562): importing er_expectations.stats stays as light as before.

_LAZY = {
    "BOOTSTRAP_METHODS": "estimator",
    "GAP_METHODS": "estimator",
    "INTERVAL_METHODS": "estimator",
    "MAX_N_BOOT": "estimator",
    "MIN_N_BOOT": "estimator",
    "DEFAULT_CI_METHOD": "estimator",
    "DEFAULT_SEED": "estimator",
    "interval_seed": "estimator",
    "check_interval_options": "estimator",
    "uses_bootstrap": "estimator",
    "RECOMMENDED": "estimator",
    "RECOMMENDED_CI_METHOD": "estimator",
    "RECOMMENDED_CHANGE_METHOD": "estimator",
    "RECOMMENDED_GAP_METHOD": "estimator",
    "Difference": "differences",
    "difference": "combine",
    "JointBootstrap": "joint",
    "NoChangeBound": "intervals",
    "bca_interval": "intervals",
    "logit_interval": "intervals",
    "mover_interval": "intervals",
    "no_change_bound": "intervals",
    "studentized_interval": "intervals",
    "bootstrap_difference": "differences",
    "honest_difference": "differences",
    "estimate_methods": "metrics",
    "Membership": "subgroups",
    "estimate_groups": "subgroups",
    "estimate_groups_methods": "subgroups",
    "paired_change": "drift",
    "paired_changes": "drift",
}

__all__ += list(_LAZY)


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
