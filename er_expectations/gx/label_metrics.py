"""The GX metric of labelling QC (SPEC 9): ``er.label_checks``.

One computation per labelling batch: the batch (see :mod:`er_expectations.labelling_batch`)
is split into the labels and the records and :func:`er_expectations.labels.qc_labels`, the
one implementation of the rules, runs on them. On SQL and Spark batches (whose records part
may be the whole release) the label rows and only the records the rules read are fetched
(:func:`er_expectations.labelling_batch.fetch_labelling_batch`, with the queries of
:mod:`..engines.labelling_sql` and :mod:`..engines.labelling_spark`). Its value is the
:class:`~er_expectations.labels.LabelsQC` (violations and per-rule counts of checked draws).

The expectations of rules 1–4, 6 and 7 ask for it with the batch's columns only
(``rules: "strict"``: every rule but 5), and share one value; the expectation of rule 5
asks for it with its block and name columns and similarity (``rules: "5"``), so each rule
is computed once per batch whatever rule 5's parameters are.
"""

from __future__ import annotations

from great_expectations.core.metric_domain_types import MetricDomainTypes
from great_expectations.execution_engine import (
    PandasExecutionEngine,
    SparkDFExecutionEngine,
    SqlAlchemyExecutionEngine,
)
from great_expectations.expectations.metrics.metric_provider import metric_value
from great_expectations.expectations.metrics.table_metric_provider import TableMetricProvider

__all__ = ["LABEL_CHECKS", "LABEL_CHECK_KEYS", "RULE_SETS"]

LABEL_CHECKS = "er.label_checks"
#: Value kwargs of ``er.label_checks``.
LABEL_CHECK_KEYS: tuple[str, ...] = (
    "record_id_column", "prediction_column", "draw_column", "removed_column", "added_column",
    "predicted_cluster_column", "true_cluster_column", "block_column", "name_column", "min_similarity",
    "scorer", "rules",
)
#: ``rules`` of the metric: the strict rules, or the soft rule 5 alone.
RULE_SETS: dict[str, tuple[int, ...]] = {"strict": (1, 2, 3, 4, 6, 7), "5": (5,)}


def _batch_kwargs(kw: dict) -> dict:
    """The column arguments of splitting (or fetching) a labelling batch."""
    return {"record_id": kw["record_id_column"], "prediction": kw["prediction_column"], "draw": kw["draw_column"],
            "removed": kw["removed_column"], "added": kw["added_column"],
            "predicted_cluster": kw.get("predicted_cluster_column"), "true_cluster": kw.get("true_cluster_column")}


def _qc(labels, records, columns, kw: dict):
    """:func:`er_expectations.labels.qc_labels` with the metric's options."""
    from ..labels import qc_labels

    options = {}
    if kw.get("min_similarity") is not None:
        options["similarity"] = float(kw["min_similarity"])
    if kw.get("scorer"):
        options["scorer"] = kw["scorer"]
    return qc_labels(labels, records, kw["prediction_column"], record_id=kw["record_id_column"],
                     block=kw.get("block_column"), name=kw.get("name_column"),
                     rules=RULE_SETS[kw.get("rules") or "strict"], columns=columns, **options)


def _fetched(source, kw: dict):
    """The rules on a batch held in a database or Spark: only the label rows and the records
    the rules read are fetched (:func:`~er_expectations.labelling_batch.fetch_labelling_batch`)."""
    from ..labelling_batch import fetch_labelling_batch

    labels, records, columns = fetch_labelling_batch(source, **_batch_kwargs(kw), block=kw.get("block_column"),
                                                     name=kw.get("name_column"))
    return _qc(labels, records, columns, kw)


class LabelChecksMetric(TableMetricProvider):
    """The SPEC 9 rules on a labelling batch, computed once per batch and rule set."""

    metric_name = LABEL_CHECKS
    value_keys = LABEL_CHECK_KEYS

    @metric_value(engine=PandasExecutionEngine)
    def _pandas(cls, execution_engine, metric_domain_kwargs, metric_value_kwargs, metrics,
                runtime_configuration):
        from ..labelling_batch import split_labelling_batch

        df, _, _ = execution_engine.get_compute_domain(domain_kwargs=metric_domain_kwargs,
                                                       domain_type=MetricDomainTypes.TABLE)
        labels, records, columns = split_labelling_batch(df, **_batch_kwargs(metric_value_kwargs))
        return _qc(labels, records, columns, metric_value_kwargs)

    @metric_value(engine=SqlAlchemyExecutionEngine)
    def _sql(cls, execution_engine, metric_domain_kwargs, metric_value_kwargs, metrics,
             runtime_configuration):
        from ..engines.labelling_sql import SqlLabelling
        from ..engines.sql import SqlRelease

        selectable, _, _ = execution_engine.get_compute_domain(domain_kwargs=metric_domain_kwargs,
                                                               domain_type=MetricDomainTypes.TABLE)
        release = SqlRelease(execution_engine.engine, selectable, prediction=metric_value_kwargs["prediction_column"])
        return _fetched(SqlLabelling(release), metric_value_kwargs)

    @metric_value(engine=SparkDFExecutionEngine)
    def _spark(cls, execution_engine, metric_domain_kwargs, metric_value_kwargs, metrics,
               runtime_configuration):
        from ..engines.labelling_spark import SparkLabelling
        from ..engines.spark import SparkRelease

        df, _, _ = execution_engine.get_compute_domain(domain_kwargs=metric_domain_kwargs,
                                                       domain_type=MetricDomainTypes.TABLE)
        release = SparkRelease(df, prediction=metric_value_kwargs["prediction_column"])
        return _fetched(SparkLabelling(release), metric_value_kwargs)
