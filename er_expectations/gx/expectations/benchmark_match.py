"""``expect_statistic_to_match_benchmark_estimate`` (SPEC 7, 10): the paper's main QA signal.

A summary statistic of the predicted clustering must lie inside the confidence interval
of the same statistic of the true clustering, estimated from the benchmark.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from great_expectations.compatibility import pydantic
from great_expectations.validator.metric_configuration import MetricConfiguration

from er_expectations.core.text import fmt_level, fmt_number
from er_expectations.gx.expectations.estimated import (
    SampledExpectation,
    design_fragment,
    estimate_details,
)
from er_expectations.gx.expectations.summary import ChosenStatisticExpectation
from er_expectations.gx.metrics.release import (
    BENCHMARK_SAMPLE,
    CLUSTERING_TABLE,
    ESTIMATE,
    SAMPLE_KEYS,
    SUMMARY_STATISTIC,
    TABLE_KEYS,
)
from er_expectations.stats import TRUE_STATISTICS
from er_expectations.stats.wording import statistic_label

__all__ = ["ExpectStatisticToMatchBenchmarkEstimate"]


class ExpectStatisticToMatchBenchmarkEstimate(SampledExpectation, ChosenStatisticExpectation):
    """The prediction's statistic lies in the confidence interval of its estimated true value (SPEC 7)."""

    statistic: Literal[TRUE_STATISTICS] = pydantic.Field(  # type: ignore[valid-type]
        ..., description="Which summary statistic to compare.")

    args_keys: ClassVar[tuple[str, ...]] = ("statistic", "prediction_column", "reference_column")
    success_keys: ClassVar[tuple[str, ...]] = (
        "statistic", "prediction_column", "record_id_column", "reference_column", "weights", "draws_column", "known_column",
        "name_column", "ci_level", *SampledExpectation.SKIP_KEYS,
    )

    def _metric_configs(self, domain: dict[str, Any]) -> dict[str, MetricConfiguration]:
        name = self._name_column()
        sample = self._sample_value(name)
        est = {**sample, "metric": self.statistic, "beta": 1.0, "ci_level": float(self.ci_level)}
        stat = {"prediction_column": self.prediction_column, "record_id_column": self.record_id_column,
                "name_column": name, "statistic": self.statistic, "q": None}
        return {
            ESTIMATE: MetricConfiguration(ESTIMATE, domain, est),
            BENCHMARK_SAMPLE: MetricConfiguration(BENCHMARK_SAMPLE, domain, {k: sample[k] for k in SAMPLE_KEYS}),
            SUMMARY_STATISTIC: MetricConfiguration(SUMMARY_STATISTIC, domain, stat),
            CLUSTERING_TABLE: MetricConfiguration(CLUSTERING_TABLE, domain, {k: stat[k] for k in TABLE_KEYS}),
        }

    @classmethod
    def _sentence(cls, kwargs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        level = float(kwargs.get("ci_level") or 0.95)
        design, design_params = design_fragment(kwargs)
        params = {
            "label": statistic_label(kwargs.get("statistic") or "?"),
            "prediction_column": kwargs.get("prediction_column"),
            "level": fmt_level(level),
            **design_params,
        }
        template = ("The $label of the predicted clustering in $prediction_column lies within the $level "
                    f"confidence interval of the true $label estimated from {design}.")
        return template, params

    def _validate(self, metrics: dict, runtime_configuration=None, execution_engine=None):
        est = metrics[ESTIMATE]
        sample = metrics[BENCHMARK_SAMPLE]
        predicted = float(metrics[SUMMARY_STATISTIC]["value"])
        details = estimate_details(est, sample, metric=self.statistic, label=statistic_label(self.statistic))
        details["predicted"] = predicted
        if not est.has_interval:
            ok = False
            details["note"] = "; ".join(x for x in (est.note, "no confidence interval to compare with") if x)
        else:
            ok = est.ci_lower <= predicted <= est.ci_upper
            if not ok:
                side = "above" if predicted > est.ci_upper else "below"
                # a fact, not a judgment: how much it matters is the severity's and the author's note's
                details["note"] = (f"the prediction's {statistic_label(self.statistic)} is {side} the "
                                   f"{fmt_level(float(est.ci_level))} interval of the true value estimated from "
                                   "the benchmark (SPEC 7)")
        details["observed_text"] = f"predicted {fmt_number(predicted)}; true value estimated {details['observed_text']}"
        return {"success": bool(ok), "result": {"observed_value": predicted, "details": details}}
