"""The GX metric of labelling QC (SPEC 9): ``er.label_checks``.

One computation per labelling batch: the batch (see :mod:`er_expectations.analysis.labelling_batch`)
is split into the labels and the records and :func:`er_expectations.analysis.labelqc.qc_labels`, the
one implementation of the rules, runs on them. On SQL and Spark batches (whose records part
may be the whole release) the label rows and only the records the rules read are fetched,
once per batch for every rule set, by ``er.labelling_rows``
(:func:`er_expectations.analysis.labelling_batch.fetch_labelling_batch`, with the queries of
:mod:`..engines.labelling_sql` and :mod:`..engines.labelling_spark`). Its value is the
:class:`~er_expectations.analysis.labelqc.LabelsQC` (violations and per-rule counts of checked draws).

The expectations of rules 1–4, 6 and 7 ask for it with the batch's columns only
(``rules: "strict"``: every rule but 5), and share one value; the expectation of rule 5
asks for it with its block and name columns and similarity (``rules: "5"``), so each rule
is computed once per batch whatever rule 5's parameters are.
"""

from __future__ import annotations

from great_expectations.execution_engine import ExecutionEngine
from great_expectations.expectations.metrics.metric_provider import metric_value
from great_expectations.expectations.metrics.table_metric_provider import TableMetricProvider
from great_expectations.validator.metric_configuration import MetricConfiguration

from er_expectations.analysis.labelling_batch import fetch_labelling_batch, split_labelling_batch
from er_expectations.analysis.labelqc import qc_labels
from er_expectations.engines.registry import engine_for
from er_expectations.gx.metrics.release import table_domain

__all__ = ["BATCH_KEYS", "LABELLING_ROWS", "LABEL_CHECKS", "LABEL_CHECK_KEYS", "RULE_SETS"]

LABEL_CHECKS = "er.label_checks"
LABELLING_ROWS = "er.labelling_rows"
#: Value kwargs of ``er.labelling_rows``: the columns of the labelling batch.
BATCH_KEYS: tuple[str, ...] = (
    "record_id_column", "prediction_column", "draw_column", "removed_column", "added_column",
    "predicted_cluster_column", "true_cluster_column",
)
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
    """:func:`er_expectations.analysis.labelqc.qc_labels` with the metric's options."""

    options = {}
    if kw.get("min_similarity") is not None:
        options["similarity"] = float(kw["min_similarity"])
    if kw.get("scorer"):
        options["scorer"] = kw["scorer"]
    return qc_labels(labels, records, kw["prediction_column"], record_id=kw["record_id_column"],
                     block=kw.get("block_column"), name=kw.get("name_column"),
                     rules=RULE_SETS[kw.get("rules") or "strict"], columns=columns, **options)


def _from_fetched(fetched, kw: dict):
    """The rules on the rows fetched from a database or Spark (block and name added for rule 5)."""
    records = fetched.records(block=kw.get("block_column"), name=kw.get("name_column"))
    return _qc(fetched.labels, records, fetched.columns, kw)


class LabellingRowsMetric(TableMetricProvider):
    """SQL and Spark: the label rows and the records the rules read, fetched once per batch
    (:func:`~er_expectations.analysis.labelling_batch.fetch_labelling_batch`) for every rule set."""

    metric_name = LABELLING_ROWS
    value_keys = BATCH_KEYS

    @metric_value(engine=ExecutionEngine)
    def _any_engine(cls, execution_engine, metric_domain_kwargs, metric_value_kwargs, metrics,
                    runtime_configuration):
        engine = engine_for(execution_engine)
        release = engine.release_of(table_domain(execution_engine, metric_domain_kwargs),
                                    execution_engine=execution_engine,
                                    prediction=metric_value_kwargs["prediction_column"])
        return fetch_labelling_batch(engine.load("labelling")(release), **_batch_kwargs(metric_value_kwargs))


class LabelChecksMetric(TableMetricProvider):
    """The SPEC 9 rules on a labelling batch, computed once per batch and rule set."""

    metric_name = LABEL_CHECKS
    value_keys = LABEL_CHECK_KEYS

    @classmethod
    def _get_evaluation_dependencies(cls, metric, configuration=None, execution_engine=None,
                                     runtime_configuration=None):
        deps = super()._get_evaluation_dependencies(metric=metric, configuration=configuration,
                                                    execution_engine=execution_engine,
                                                    runtime_configuration=runtime_configuration)
        # a batch holding the whole release (SQL, Spark): the rows the rules read, fetched once per batch
        if execution_engine is not None and engine_for(execution_engine).labelling is not None:
            kw = metric.metric_value_kwargs
            deps[LABELLING_ROWS] = MetricConfiguration(LABELLING_ROWS, metric.metric_domain_kwargs,
                                                       {k: kw.get(k) for k in BATCH_KEYS})
        return deps

    @metric_value(engine=ExecutionEngine)
    def _any_engine(cls, execution_engine, metric_domain_kwargs, metric_value_kwargs, metrics,
                    runtime_configuration):
        if engine_for(execution_engine).labelling is None:  # the batch is the labelling table
            df = table_domain(execution_engine, metric_domain_kwargs)
            labels, records, columns = split_labelling_batch(df, **_batch_kwargs(metric_value_kwargs))
            return _qc(labels, records, columns, metric_value_kwargs)
        return _from_fetched(metrics[LABELLING_ROWS], metric_value_kwargs)
