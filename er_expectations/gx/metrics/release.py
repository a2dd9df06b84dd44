"""GX metric providers: aggregate a batch once, derive every statistic from the aggregate.

One metric holds the batch's release, ``er.release`` (a
:class:`~er_expectations.engines.pandas.release.PandasRelease` keyed by the prediction column), whose
column factorisations are computed at most once per batch and shared by the aggregates:

* ``er.clustering_table`` → :class:`~er_expectations.stats.ClusteringTable` (SPEC 3);
* ``er.benchmark_sample`` → :class:`~er_expectations.stats.BenchmarkSample` (SPEC 2.1, 4).

Light metrics depend on them and only run the pure statistics: ``er.summary_statistic``
and ``er.estimate``. GX deduplicates metrics by (name, domain, value kwargs), so every
expectation of a suite that names the same columns reuses one aggregate.

``er.release`` has one implementation per GX engine, each building the engine's release
object (:mod:`..engines.pandas`, :mod:`..engines.sql`, :mod:`..engines.spark`): the
aggregation runs where the data lives and only the small per-cluster tables reach Python.
The derived metrics are registered for GX's base ``ExecutionEngine`` (GX falls back along
the engine's class hierarchy): they only call the release object, whatever its engine.

``er.unsupported_engine`` is what an expectation asks for on any other engine: its
provider raises one error naming the supported engines, which GX reports on each
expectation instead of "No provider found for er.…".
"""

from __future__ import annotations

from typing import Any

from great_expectations.core.metric_domain_types import MetricDomainTypes
from great_expectations.execution_engine import ExecutionEngine
from great_expectations.expectations.metrics.metric_provider import metric_value
from great_expectations.expectations.metrics.table_metric_provider import TableMetricProvider
from great_expectations.validator.metric_configuration import MetricConfiguration

from er_expectations.core.errors import InputError
from er_expectations.engines.base import KNOWN_AUTO, WeightsSpec, parse_weights
from er_expectations.engines.registry import engine_for
from er_expectations.stats import (
    DEFAULT_CI_METHOD,
    DEFAULT_N_BOOT,
    estimate_metrics,
    summary_statistics,
)

__all__ = [
    "RELEASE",
    "CLUSTERING_TABLE",
    "BENCHMARK_SAMPLE",
    "SUMMARY_STATISTIC",
    "ESTIMATE",
    "DependentMetric",
    "UNSUPPORTED_ENGINE",
    "TABLE_KEYS",
    "SAMPLE_KEYS",
    "encode_weights",
    "decode_weights",
    "table_domain",
]

RELEASE = "er.release"
CLUSTERING_TABLE = "er.clustering_table"
BENCHMARK_SAMPLE = "er.benchmark_sample"
SUMMARY_STATISTIC = "er.summary_statistic"
ESTIMATE = "er.estimate"
UNSUPPORTED_ENGINE = "er.unsupported_engine"

RELEASE_KEYS = ("prediction_column", "record_id_column")
TABLE_KEYS = (*RELEASE_KEYS, "name_column")
SAMPLE_KEYS = (*RELEASE_KEYS, "reference_column", "weights", "draws_column", "name_column", "known_column")


def encode_weights(weights: object) -> str:
    """A hashable metric kwarg for the weights option: 'cluster_size', 'uniform' or 'column:<name>'."""
    if isinstance(weights, str) and weights.startswith("column:"):
        return weights
    spec = parse_weights(weights if weights is not None else "cluster_size")
    return spec.design


def decode_weights(encoded: str) -> WeightsSpec:
    if encoded.startswith("column:"):
        return WeightsSpec("column", encoded[len("column:"):])
    return parse_weights(encoded)


def table_domain(execution_engine: Any, metric_domain_kwargs: dict) -> Any:
    """The batch's table on its engine: a pandas or Spark DataFrame, or a SQLAlchemy selectable."""
    df, _, _ = execution_engine.get_compute_domain(domain_kwargs=metric_domain_kwargs,
                                                   domain_type=MetricDomainTypes.TABLE)
    return df


class ReleaseMetric(TableMetricProvider):
    """The batch as one release: lazily factorised columns shared by every aggregate."""

    metric_name = RELEASE
    value_keys = RELEASE_KEYS

    @metric_value(engine=ExecutionEngine)
    def _any_engine(cls, execution_engine, metric_domain_kwargs, metric_value_kwargs, metrics,
                    runtime_configuration):
        # with a record id column, duplicated records are an error instead of a silently wrong
        # estimate (each record must appear once, SPEC 2.1)
        return engine_for(execution_engine).release_of(
            table_domain(execution_engine, metric_domain_kwargs), execution_engine=execution_engine,
            prediction=metric_value_kwargs["prediction_column"],
            record_id=metric_value_kwargs.get("record_id_column"))


class DependentMetric(TableMetricProvider):
    """A metric computed from others: ``depends`` lists (metric name, its value-kwarg keys).

    Each dependency is passed only its own value kwargs, so that every metric derived from
    one aggregate shares one value of it (GX deduplicates metrics by their kwargs). A
    subclass whose dependencies depend on the kwargs overrides :meth:`_deps`.
    """

    depends: tuple[tuple[str, tuple[str, ...]], ...] = ((RELEASE, RELEASE_KEYS),)

    @classmethod
    def _deps(cls, metric: MetricConfiguration) -> dict[str, MetricConfiguration]:
        kw = metric.metric_value_kwargs
        return {name: MetricConfiguration(metric_name=name, metric_domain_kwargs=metric.metric_domain_kwargs,
                                          metric_value_kwargs={k: kw.get(k) for k in keys})
                for name, keys in cls.depends}

    @classmethod
    def _get_evaluation_dependencies(cls, metric, configuration=None, execution_engine=None,
                                     runtime_configuration=None):
        deps = super()._get_evaluation_dependencies(metric=metric, configuration=configuration,
                                                    execution_engine=execution_engine,
                                                    runtime_configuration=runtime_configuration)
        deps.update(cls._deps(metric))
        return deps


class ClusteringTableMetric(DependentMetric):
    """Size distribution and name counts of the predicted clustering (one pass per column)."""

    metric_name = CLUSTERING_TABLE
    value_keys = TABLE_KEYS

    @metric_value(engine=ExecutionEngine)
    def _any_engine(cls, execution_engine, metric_domain_kwargs, metric_value_kwargs, metrics,
                runtime_configuration):
        return metrics[RELEASE].clustering_table(name=metric_value_kwargs.get("name_column"))


class BenchmarkSampleMetric(DependentMetric):
    """The benchmark restricted to the batch's release, one row per sampled cluster."""

    metric_name = BENCHMARK_SAMPLE
    value_keys = SAMPLE_KEYS

    @metric_value(engine=ExecutionEngine)
    def _any_engine(cls, execution_engine, metric_domain_kwargs, metric_value_kwargs, metrics,
                runtime_configuration):
        return metrics[RELEASE].benchmark_sample(
            reference=metric_value_kwargs["reference_column"],
            weights=decode_weights(metric_value_kwargs["weights"]),
            draws=metric_value_kwargs.get("draws_column"),
            name=metric_value_kwargs.get("name_column"),
            known=metric_value_kwargs.get("known_column", KNOWN_AUTO),
        )


class SummaryStatisticMetric(DependentMetric):
    """One summary statistic (SPEC 3) from the clustering table; ``q`` for Hill numbers."""

    metric_name = SUMMARY_STATISTIC
    value_keys = (*TABLE_KEYS, "statistic", "q")
    depends = ((CLUSTERING_TABLE, TABLE_KEYS),)

    @metric_value(engine=ExecutionEngine)
    def _any_engine(cls, execution_engine, metric_domain_kwargs, metric_value_kwargs, metrics,
                runtime_configuration) -> dict[str, Any]:
        table = metrics[CLUSTERING_TABLE]
        stat = metric_value_kwargs["statistic"]
        q = metric_value_kwargs.get("q")
        orders = (q,) if stat == "hill_number" else ()
        values = summary_statistics(table, hill_orders=orders)
        key = next(k for k in values if k.startswith("hill_number")) if stat == "hill_number" else stat
        return {"value": float(values[key]), "n_records": int(values["n_records"]),
                "n_clusters": int(values["n_clusters"])}


class EstimateMetric(DependentMetric):
    """One estimate (SPEC 5–7) with its standard error and interval, from the benchmark sample.

    ``ci_method``, ``n_boot`` and ``seed`` choose the interval (SPEC 6); expectations that
    leave them out get :data:`~er_expectations.stats.DEFAULT_CI_METHOD` (``"recommended"``)
    seeded by :data:`~er_expectations.stats.DEFAULT_SEED`.
    """

    metric_name = ESTIMATE
    value_keys = (*SAMPLE_KEYS, "metric", "beta", "ci_level", "ci_method", "n_boot", "seed")
    depends = ((BENCHMARK_SAMPLE, SAMPLE_KEYS),)

    @metric_value(engine=ExecutionEngine)
    def _any_engine(cls, execution_engine, metric_domain_kwargs, metric_value_kwargs, metrics,
                runtime_configuration):
        sample = metrics[BENCHMARK_SAMPLE]
        mid = metric_value_kwargs["metric"]
        n_boot = metric_value_kwargs.get("n_boot")
        res = estimate_metrics(sample, [mid], beta=float(metric_value_kwargs.get("beta") or 1.0),
                               ci_level=float(metric_value_kwargs.get("ci_level") or 0.95),
                               ci_method=metric_value_kwargs.get("ci_method") or DEFAULT_CI_METHOD,
                               n_boot=DEFAULT_N_BOOT if n_boot is None else n_boot,
                               seed=metric_value_kwargs.get("seed"))
        return res[mid]


class UnsupportedEngineMetric(TableMetricProvider):
    """Raises the error of an expectation validated on an engine it does not run on."""

    metric_name = UNSUPPORTED_ENGINE
    value_keys = ("expectation", "engine", "supported", "why")

    @metric_value(engine=ExecutionEngine)
    def _any_engine(cls, execution_engine, metric_domain_kwargs, metric_value_kwargs, metrics,
                    runtime_configuration):
        kw = metric_value_kwargs
        supported = kw.get("supported") or "pandas, Spark and SQL (SQLAlchemy)"
        why = f" ({kw['why']})" if kw.get("why") else ""
        raise InputError(
            f"{kw['expectation']} runs on {supported} datasources{why}; this batch uses {kw['engine']}. "
            "Read the table through one of those datasources."
        )
