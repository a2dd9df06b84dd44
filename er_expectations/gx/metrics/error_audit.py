"""GX metric of the error audit by cause (SPEC 12.1): ``er.error_audit``.

It reads the batch's release (pandas) for the tags column (:func:`~er_expectations.analysis.
error_audit.decode_tags`: the tags of each benchmark cluster, carried on its records) and the
batch's benchmark sample, and returns the :class:`~er_expectations.analysis.error_audit.ErrorAudit`.
"""

from __future__ import annotations

import json

from great_expectations.execution_engine import ExecutionEngine
from great_expectations.expectations.metrics.metric_provider import metric_value

from er_expectations.gx.metrics.release import (
    BENCHMARK_SAMPLE,
    RELEASE,
    RELEASE_KEYS,
    SAMPLE_KEYS,
    DependentMetric,
)
from er_expectations.stats import DEFAULT_N_BOOT
from er_expectations.stats.error_audit import AUDIT_CI_METHOD

__all__ = ["AUDIT_KEYS", "ERROR_AUDIT", "ErrorAuditMetric", "encode_known_tags"]

ERROR_AUDIT = "er.error_audit"
AUDIT_KEYS = ("tags_column", "known_tags", "ci_level", "ci_method", "n_boot", "seed", "examples")


def encode_known_tags(tags: list[str] | None) -> str | None:
    """The list of known tags as a hashable metric kwarg (JSON text, in order)."""
    return None if tags is None else json.dumps(list(tags), ensure_ascii=False)


class ErrorAuditMetric(DependentMetric):
    """The shares of errors by cause of the batch (SPEC 12.1)."""

    metric_name = ERROR_AUDIT
    value_keys = (*SAMPLE_KEYS, *AUDIT_KEYS)
    depends = ((RELEASE, RELEASE_KEYS), (BENCHMARK_SAMPLE, SAMPLE_KEYS))

    @metric_value(engine=ExecutionEngine)
    def _any_engine(cls, execution_engine, metric_domain_kwargs, metric_value_kwargs, metrics, runtime_configuration):
        from er_expectations.analysis.error_audit import audit_sample, decode_tags

        kw = metric_value_kwargs
        release = metrics[RELEASE]
        known = None if kw.get("known_tags") is None else json.loads(kw["known_tags"])
        tags = decode_tags(release.df, reference=kw["reference_column"], column=kw["tags_column"],
                           record_id=kw.get("record_id_column"), known_tags=known)
        return audit_sample(metrics[BENCHMARK_SAMPLE], tags, ci_level=float(kw["ci_level"]),
                            ci_method=kw.get("ci_method") or AUDIT_CI_METHOD,
                            n_boot=DEFAULT_N_BOOT if kw.get("n_boot") is None else int(kw["n_boot"]),
                            seed=kw.get("seed"), examples=int(kw.get("examples") or 5))
