"""Expectations on estimated performance (SPEC 5–6): ``expect_estimated_<metric>_to_be_between``.

One class per metric of ``stats.PERFORMANCE_METRICS``, made from the metric table:
``ExpectEstimatedPairwisePrecisionToBeBetween``, ``…PairwiseRecall…``, ``…PairwiseF…``,
``…ClusterPrecision…``, ``…ClusterRecall…``, ``…ClusterF…``, ``…BCubedPrecision…``,
``…BCubedRecall…``, ``…BCubedF…`` and ``ExpectEstimatedHomogeneityToBeBetween``.

The decision rule (SPEC 13, ``decision``) is a failure only when the whole confidence interval
is outside the thresholds (``significant``, the default of every check on an estimate), the whole
confidence interval inside them (``interval``: the sign-off gate, "with 95 % confidence precision
≥ 0.90") or the point estimate against them (``estimate``). ``bound`` is the older name of ``decision`` (``estimate`` or ``interval``).
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, ClassVar, Literal

from great_expectations.compatibility import pydantic
from great_expectations.core.suite_parameters import SuiteParameterDict
from great_expectations.validator.metric_configuration import MetricConfiguration

from er_expectations.analysis.release import sample_error_frame
from er_expectations.core.hints import did_you_mean, quote_list
from er_expectations.core.text import design_kind, fmt_level, observed_estimate, range_phrase
from er_expectations.engines.base import DESIGNS, KNOWN_AUTO, KNOWN_COLUMN
from er_expectations.gx.expectations.base import (
    TOP_CLUSTERS,
    BoundedExpectation,
    SkippableExpectation,
    json_number,
)
from er_expectations.gx.expectations.decisions import (
    DECISION_RULES,
    DEFAULT_RULE,
    decision_details,
    decision_field,
    rule_clause,
)
from er_expectations.gx.expectations.intervals import (
    ESTIMATE_CI_METHODS,
    ci_method_field,
    interval_details,
    interval_sentence,
    method_phrase,
    n_boot_field,
    seed_field,
)
from er_expectations.gx.expectations.params import ParameterError, Threshold, threshold
from er_expectations.gx.metrics.release import (
    BENCHMARK_SAMPLE,
    ESTIMATE,
    SAMPLE_KEYS,
    encode_weights,
)
from er_expectations.stats import METRICS, PERFORMANCE_METRICS
from er_expectations.stats.blind_spot import sample_blind_spots, sample_skewed_sizes
from er_expectations.stats.decision import decide


def estimate_details(est: Any, sample: Any, *, metric: str, label: str, beta: float = 1.0) -> dict[str, Any]:
    """JSON-safe description of one estimate, shared by the expectations that show estimates,
    with what its draws cannot show (SPEC 6.1: ``blind_spot``, ``skewed_sizes`` and their
    sentences in ``limits``)."""
    details = _estimate_fields(est, sample)
    details.update({"metric": metric, "label": label})
    limits = []
    if est.defined:
        spot = sample_blind_spots(sample, {metric: est}, beta=beta).get(metric)
        if spot is not None:
            details["blind_spot"] = spot.as_dict()
            limits.append(spot.text(label))
        skew = sample_skewed_sizes(sample, [metric]).get(metric)
        if skew is not None:
            details["skewed_sizes"] = skew.as_dict()
            limits.append(skew.text(label))
    if limits:
        details["limits"] = limits
    return details


def _estimate_fields(est: Any, sample: Any) -> dict[str, Any]:
    return {
        "estimate": json_number(est.estimate),
        "std_error": json_number(est.std_error),
        "ci_lower": json_number(est.ci_lower),
        "ci_upper": json_number(est.ci_upper),
        "ci_level": float(est.ci_level),
        "draws": int(est.draws),
        "clusters": int(est.clusters),
        "note": est.note,
        "ci_method": est.interval,
        "ci_method_text": method_phrase(est.interval),
        "zero_event": est.interval == "zero_event",
        "design": sample.design,
        "records_set_aside": int(sample.records_set_aside),
        "clusters_set_aside": int(sample.clusters_set_aside),
        "known_column": sample.known_column,
        "records_added": int(sample.records_added),
        "records_added_in_sampled": int(sample.records_added_in_sampled),
        "benchmark_version": sample.benchmark_version,
        "observed_text": observed_estimate(est.estimate, est.std_error, est.ci_lower, est.ci_upper,
                                           ci_level=est.ci_level, clusters=est.clusters, draws=est.draws,
                                           interval=est.interval),
    }


def design_fragment(kwargs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """'the $design_kind benchmark in $reference_column …' with the columns as separate params."""
    weights = kwargs.get("weights") or "cluster_size"
    kind = design_kind(weights)
    params: dict[str, Any] = {"design_kind": kind, "reference_column": kwargs.get("reference_column") or "?"}
    template = "the $design_kind benchmark in $reference_column"
    if kind == "weighted":
        params["weights_column"] = weights.get("column") if isinstance(weights, dict) else weights
        template += " (weights from $weights_column)"
    if kwargs.get("draws_column"):
        params["draws_column"] = kwargs["draws_column"]
        template += " (draws from $draws_column)"
    return template, params


#: What ``weights`` takes (SPEC 3): a sampling design, or the column of the weights w_c = 1/p_c.
WEIGHT_FORMS = f"{quote_list(DESIGNS)} or {{column: <weight column>}}"


class SampledExpectation(SkippableExpectation):
    """Common fields of expectations that read the benchmark sample."""

    reference_column: str = pydantic.Field(
        ..., description="Column with the benchmark (true) cluster id; null outside the benchmark.", column="batch")
    weights: str | dict[str, str] = pydantic.Field(
        "cluster_size", description="Benchmark sampling design: cluster_size (clusters drawn with probability "
        "proportional to their size), uniform, or {column: <weight column>}.", column="batch")
    draws_column: str | None = pydantic.Field(
        None, description="Column with how many times each benchmark cluster was drawn (default 1).", column="batch")
    known_column: str | None = pydantic.Field(
        KNOWN_AUTO, description="Column marking the records known when the benchmark was labelled (SPEC 14): "
        "records of the release where it is null were added later and are not evaluated. 'auto' (default): "
        f"the column {KNOWN_COLUMN} when the batch has it; null: evaluate every record.", column="batch")
    ci_level: float | SuiteParameterDict = pydantic.Field(
        0.95, gt=0.0, lt=1.0, description="Confidence level of the interval, strictly between 0 and 1.")

    @pydantic.validator("weights", pre=True)
    def _check_weights(cls, w):
        """The documented forms only (a column is named as ``{column: <weight column>}``)."""
        if isinstance(w, dict):
            extra = [key for key in w if key != "column"]
            if extra or not w:
                raise ParameterError(
                    "a weights mapping takes the single key 'column', got "
                    + (quote_list(extra, conjunction="and") if extra else "an empty mapping"),
                    hint="write weights: {column: <weight column>}")
            column = w["column"]
            if not isinstance(column, str):
                raise ParameterError(f"expected text, got {column!r}", at="weights.column", expected="text")
            if not column.strip():
                raise ParameterError("expected text, got an empty string", at="weights.column",
                                     hint="write the name of the weights column")
        elif w not in DESIGNS:
            hint = did_you_mean(w, DESIGNS) if isinstance(w, str) else None
            raise ParameterError(f"expected {WEIGHT_FORMS}, got {w!r}", expected=WEIGHT_FORMS,
                                 hint=hint or "for a weight column write weights: {column: <weight column>}")
        return w

    def _sample_value(self, name_column: str | None = None) -> dict[str, Any]:
        return {
            "prediction_column": self.prediction_column,
            "record_id_column": self.record_id_column,
            "reference_column": self.reference_column,
            "weights": encode_weights(self.weights),
            "draws_column": self.draws_column,
            "name_column": name_column,
            "known_column": self.known_column,
        }


class _EstimatedMetricExpectation(SampledExpectation, BoundedExpectation):
    """An estimated performance metric (or its interval) lies in [min_value, max_value]."""

    min_value: Threshold = threshold("min", ge=0.0, le=1.0)
    max_value: Threshold = threshold("max", ge=0.0, le=1.0)
    bound: Literal["estimate", "interval"] | None = pydantic.Field(
        None, description="The older name of decision (estimate or interval); give decision instead.")
    decision: Literal[DECISION_RULES] = decision_field()  # type: ignore[valid-type]
    ci_method: Literal[ESTIMATE_CI_METHODS] = ci_method_field()  # type: ignore[valid-type]
    n_boot: int = n_boot_field()
    seed: int | None = seed_field()

    args_keys: ClassVar[tuple[str, ...]] = ("prediction_column", "reference_column", "min_value", "max_value")
    success_keys: ClassVar[tuple[str, ...]] = (
        "prediction_column", "record_id_column", "reference_column", "weights", "draws_column", "known_column", "min_value", "max_value",
        "ci_level", "bound", "decision", "strict_min", "strict_max", "ci_method", "n_boot", "seed",
        *SkippableExpectation.SKIP_KEYS,
    )

    @pydantic.root_validator(pre=True)
    def _one_rule(cls, values):
        decision, bound = values.get("decision"), values.get("bound")
        if bound not in ("estimate", "interval"):  # absent, or refused by the field itself
            return values
        if decision is not None and decision != bound:
            raise ParameterError(f"bound: {bound!r} and decision: {decision!r} disagree", at="decision",
                                 hint="give only decision (bound is its older name)")
        return {**values, "decision": bound}  # the older name, as written

    def rule(self) -> str:
        """The decision rule (``decision``; ``bound`` is its older name)."""
        return str(self.decision)

    @classmethod
    @abstractmethod
    def metric_id(cls) -> str:
        """Metric id of ``erx.estimate``."""

    def _beta(self) -> float:
        return 1.0

    def _metric_configs(self, domain: dict[str, Any]) -> dict[str, MetricConfiguration]:
        sample = self._sample_value()
        value = {**sample, "metric": self.metric_id(), "beta": self._beta(), "ci_level": float(self.ci_level),
                 "ci_method": self.ci_method, "n_boot": int(self.n_boot), "seed": self.seed}
        return {
            ESTIMATE: MetricConfiguration(ESTIMATE, domain, value),
            BENCHMARK_SAMPLE: MetricConfiguration(BENCHMARK_SAMPLE, domain, {k: sample[k] for k in SAMPLE_KEYS}),
        }

    @classmethod
    def _sentence(cls, kwargs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        label = METRICS[cls.metric_id()].label
        beta = kwargs.get("beta")
        if beta is not None and float(beta) != 1.0:
            label = f"{label}-score with β = {float(beta):g}"
        elif METRICS[cls.metric_id()].uses_beta:
            label = f"{label}1 score"
        level = float(kwargs.get("ci_level") or 0.95)
        design, design_params = design_fragment(kwargs)
        params: dict[str, Any] = {
            "label": label,
            "range": range_phrase(kwargs.get("min_value"), kwargs.get("max_value")),
            "prediction_column": kwargs.get("prediction_column"),
            "level": fmt_level(level),
            **design_params,
        }
        rule = kwargs.get("decision") or kwargs.get("bound") or DEFAULT_RULE
        template = (f"Estimated $label of $prediction_column $range, from {design}: "
                    f"{rule_clause(rule, 'the estimate')}.")
        extra, extra_params = interval_sentence(kwargs)
        return template + extra, {**params, **extra_params}

    def _validate(self, metrics: dict, runtime_configuration=None, execution_engine=None):
        est = metrics[ESTIMATE]
        sample = metrics[BENCHMARK_SAMPLE]
        mid = self.metric_id()
        label = METRICS[mid].label
        details = estimate_details(est, sample, metric=mid, label=label, beta=self._beta())
        details["bound"] = self.rule()
        details.update(interval_details(self.ci_method, self.n_boot, est.seed))
        if not est.defined:
            return self.skipped(details, f"the {label} is undefined on this sample"
                                + (f": {est.note}" if est.note else ""))
        self.check_bounds_filled()
        found = decide(self.rule(), estimate=est.estimate,
                       lower=est.ci_lower if est.has_interval else None,
                       upper=est.ci_upper if est.has_interval else None,
                       low=self.min_value, high=self.max_value, strict_low=bool(self.strict_min),
                       strict_high=bool(self.strict_max), level=float(est.ci_level), what=f"the estimated {label}")
        ok = found.passed
        details.update(decision_details(found))
        if not ok and METRICS[mid].kind == "performance" and self.wants_error_table(runtime_configuration):
            frame = sample_error_frame(sample, metric=mid, beta=self._beta())
            frame = frame[frame["error_share"] > 0].head(TOP_CLUSTERS)
            details["top_clusters"] = [
                {"cluster": str(r.cluster), "size": int(r.size), "predicted_clusters": int(r.predicted_clusters),
                 "OCE": float(r.OCE), "UCE": float(r.UCE), "error_share": float(r.error_share)}
                for r in frame.itertuples(index=False)
            ]
        return {"success": bool(ok), "result": {"observed_value": json_number(est.estimate), "details": details}}


class _EstimatedFExpectation(_EstimatedMetricExpectation):
    beta: float | SuiteParameterDict = pydantic.Field(1.0, gt=0.0, description="Weight of recall against precision, > 0 (1 = F1).")
    success_keys: ClassVar[tuple[str, ...]] = (*_EstimatedMetricExpectation.success_keys, "beta")

    def _beta(self) -> float:
        return float(self.beta)


def class_name(metric: str) -> str:
    """``pairwise_precision`` → ``ExpectEstimatedPairwisePrecisionToBeBetween``."""
    return "ExpectEstimated" + "".join(part.capitalize() for part in metric.split("_")) + "ToBeBetween"


def _expectation_class(metric: str) -> type[_EstimatedMetricExpectation]:
    """The expectation class of one estimated performance metric of ``stats.METRICS``.

    The ten classes differ only by their metric, so they are made from the metric table;
    GX registers each under the snake case of its name when it is created.
    """
    spec = METRICS[metric]
    name = class_name(metric)
    doc = f"Estimated {spec.label} (SPEC 5) lies in a range, from a benchmark sample."
    if spec.needs_population_counts:
        doc += " Needs a benchmark sampled from the whole release population."
    base = _EstimatedFExpectation if spec.uses_beta else _EstimatedMetricExpectation
    return type(name, (base,), {
        "__doc__": doc,
        "__module__": __name__,
        "__qualname__": name,
        "metric_id": classmethod(lambda cls: metric),
    })


#: One expectation class per estimated performance metric, by metric id.
ESTIMATED_EXPECTATIONS: dict[str, type[_EstimatedMetricExpectation]] = {
    metric: _expectation_class(metric) for metric in PERFORMANCE_METRICS
}
globals().update({cls.__name__: cls for cls in ESTIMATED_EXPECTATIONS.values()})

__all__ = [
    *(cls.__name__ for cls in ESTIMATED_EXPECTATIONS.values()),  # ExpectEstimated<Metric>ToBeBetween
    "ESTIMATED_EXPECTATIONS",
    "class_name",
    "estimate_details",
]
