"""GX metric providers of the drift expectations (SPEC 10): one release pair per batch.

The baseline release is a column of the batch (``baseline_column``: its prediction, null
where a record is not in it). It is aggregated once, as the ``er.release`` metric of that
column, which every drift expectation of the batch shares; ``er.release_pair`` puts it next
to the release's own ``er.release`` (common records, agreement sums, diff totals, each computed once)
and the light metrics below read it:

* ``er.statistic_change`` → :class:`~er_expectations.analysis.drift.StatisticChange`;
* ``er.release_agreement`` → :class:`~er_expectations.analysis.drift.Agreement`;
* ``er.estimate_change`` → :class:`~er_expectations.stats.drift.PairedChange`, from the
  ``er.benchmark_sample`` of the release and ``er.baseline_sample`` (the same benchmark
  restricted to the baseline release, once per batch; None when the batch has no baseline).

``er.release_pair`` has one implementation per GX engine (:class:`~er_expectations.engines.pairs.ReleasePair`
on pandas, :mod:`..engines.pairs_sql` and :mod:`..engines.pairs_spark`: the sums of the
agreement, the totals and examples of the diff and the size histograms aggregated where the
data lives, one-row answers); the light metrics run on any engine.

The baseline's ``er.release`` is asked for without a record id column (the release's own
metric already checks the ids of the batch), so all of them share one value.
"""

from __future__ import annotations

from great_expectations.execution_engine import ExecutionEngine
from great_expectations.expectations.metrics.metric_provider import metric_value
from great_expectations.validator.metric_configuration import MetricConfiguration

from er_expectations.analysis.drift import agreement_of, statistic_change_of
from er_expectations.engines.base import KNOWN_AUTO
from er_expectations.engines.registry import engine_for
from er_expectations.gx.metrics.release import (
    BENCHMARK_SAMPLE,
    RELEASE,
    SAMPLE_KEYS,
    DependentMetric,
    decode_weights,
)
from er_expectations.stats import DEFAULT_CI_METHOD, DEFAULT_N_BOOT
from er_expectations.stats.drift import paired_change

__all__ = [
    "BASELINE_SAMPLE",
    "ESTIMATE_CHANGE",
    "PAIR_KEYS",
    "RELEASE_AGREEMENT",
    "RELEASE_PAIR",
    "STATISTIC_CHANGE",
    "baseline_release_config",
]

RELEASE_PAIR = "er.release_pair"
STATISTIC_CHANGE = "er.statistic_change"
RELEASE_AGREEMENT = "er.release_agreement"
ESTIMATE_CHANGE = "er.estimate_change"
BASELINE_SAMPLE = "er.baseline_sample"

PAIR_KEYS = ("prediction_column", "record_id_column", "baseline_column")


def baseline_release_config(metric: MetricConfiguration) -> MetricConfiguration:
    """The ``er.release`` of the baseline column (no record id: one shared value per batch)."""
    return MetricConfiguration(RELEASE, metric.metric_domain_kwargs,
                               {"prediction_column": metric.metric_value_kwargs["baseline_column"],
                                "record_id_column": None})


class ReleasePairMetric(DependentMetric):
    """The release and its baseline side by side (common records and cells, computed once)."""

    metric_name = RELEASE_PAIR
    value_keys = PAIR_KEYS

    @classmethod
    def _deps(cls, metric):
        kw = metric.metric_value_kwargs
        own = MetricConfiguration(RELEASE, metric.metric_domain_kwargs,
                                  {"prediction_column": kw["prediction_column"],
                                   "record_id_column": kw.get("record_id_column")})
        return {"current": own, "baseline": baseline_release_config(metric)}

    @metric_value(engine=ExecutionEngine)
    def _any_engine(cls, execution_engine, metric_domain_kwargs, metric_value_kwargs, metrics,
                    runtime_configuration):
        return engine_for(execution_engine).load("pair")(metrics["current"], metrics["baseline"])


class _FromPair(DependentMetric):
    @classmethod
    def _deps(cls, metric):
        kw = metric.metric_value_kwargs
        return {RELEASE_PAIR: MetricConfiguration(RELEASE_PAIR, metric.metric_domain_kwargs,
                                                  {k: kw.get(k) for k in PAIR_KEYS})}


class StatisticChangeMetric(_FromPair):
    """A summary statistic of both releases on their common records."""

    metric_name = STATISTIC_CHANGE
    value_keys = (*PAIR_KEYS, "statistic", "q", "name_column")

    @metric_value(engine=ExecutionEngine)
    def _any_engine(cls, execution_engine, metric_domain_kwargs, metric_value_kwargs, metrics,
                    runtime_configuration):
        kw = metric_value_kwargs
        return statistic_change_of(metrics[RELEASE_PAIR], kw["statistic"], q=kw.get("q"),
                                   name=kw.get("name_column"))


class ReleaseAgreementMetric(_FromPair):
    """Exact metrics of the release with the baseline as the reference, on the common records."""

    metric_name = RELEASE_AGREEMENT
    value_keys = (*PAIR_KEYS, "beta")

    @metric_value(engine=ExecutionEngine)
    def _any_engine(cls, execution_engine, metric_domain_kwargs, metric_value_kwargs, metrics,
                    runtime_configuration):
        return agreement_of(metrics[RELEASE_PAIR], beta=float(metric_value_kwargs.get("beta") or 1.0))


class BaselineSampleMetric(DependentMetric):
    """The benchmark restricted to the baseline release (SPEC 2.1), or None without a baseline.

    Its value kwargs are those of ``er.benchmark_sample`` with the baseline column as the
    prediction; one value per batch, shared by every estimate-change expectation.
    """

    metric_name = BASELINE_SAMPLE
    value_keys = SAMPLE_KEYS

    @classmethod
    def _deps(cls, metric):
        kw = metric.metric_value_kwargs
        return {RELEASE: MetricConfiguration(RELEASE, metric.metric_domain_kwargs,
                                             {"prediction_column": kw["prediction_column"],
                                              "record_id_column": None})}

    @metric_value(engine=ExecutionEngine)
    def _any_engine(cls, execution_engine, metric_domain_kwargs, metric_value_kwargs, metrics,
                    runtime_configuration):
        release = metrics[RELEASE]
        if release.n_records == 0:  # no baseline release for this batch: nothing to compare
            return None
        kw = metric_value_kwargs
        return release.benchmark_sample(reference=kw["reference_column"], weights=decode_weights(kw["weights"]),
                                        draws=kw.get("draws_column"), name=kw.get("name_column"),
                                        known=kw.get("known_column", KNOWN_AUTO))


class EstimateChangeMetric(DependentMetric):
    """An estimated metric of both releases on the same benchmark draws, paired SE (SPEC 10).

    None when the batch has no baseline release.
    """

    metric_name = ESTIMATE_CHANGE
    value_keys = (*SAMPLE_KEYS, "baseline_column", "metric", "beta", "ci_level", "ci_method", "n_boot", "seed")

    @classmethod
    def _deps(cls, metric):
        kw = metric.metric_value_kwargs
        own = {k: kw.get(k) for k in SAMPLE_KEYS}
        base = {**own, "prediction_column": kw["baseline_column"], "record_id_column": None}
        return {"current": MetricConfiguration(BENCHMARK_SAMPLE, metric.metric_domain_kwargs, own),
                "baseline": MetricConfiguration(BASELINE_SAMPLE, metric.metric_domain_kwargs, base)}

    @metric_value(engine=ExecutionEngine)
    def _any_engine(cls, execution_engine, metric_domain_kwargs, metric_value_kwargs, metrics,
                    runtime_configuration):
        kw = metric_value_kwargs
        if metrics["baseline"] is None:
            return None
        return paired_change(metrics["current"], metrics["baseline"], kw["metric"],
                             beta=float(kw.get("beta") or 1.0), ci_level=float(kw.get("ci_level") or 0.95),
                             ci_method=kw.get("ci_method") or DEFAULT_CI_METHOD,
                             n_boot=DEFAULT_N_BOOT if kw.get("n_boot") is None else int(kw["n_boot"]),
                             seed=kw.get("seed"))


