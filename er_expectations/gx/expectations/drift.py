"""Drift expectations (SPEC 10): a release against a baseline release in the same batch.

* ``expect_statistic_change_to_be_below`` — a summary statistic of both releases on the
  records present in both (fixed subset); an absolute or a relative threshold.
* ``expect_estimate_change_to_be_below`` — an estimated metric of both releases on the same
  benchmark draws, with the paired standard error of the change. It fails only when the
  whole confidence interval of the change lies beyond ±max_change: then the change exceeds
  the threshold *and* sampling error does not explain it (equivalently, a one-sided z-test
  of H0: |Δ| ≤ max_change rejects at level (1 − ci_level)/2). A change whose point value
  exceeds the threshold but whose interval reaches back inside passes, with the reason.
* ``expect_release_agreement_to_be_between`` — exact metrics of the release taking the
  baseline as the reference, on their common records.

The baseline's prediction is the column ``baseline_column`` of the batch (default
``<prediction_column>__baseline``, or ``<prediction_column>__baseline__<label>`` for a pinned
``baseline``; :mod:`er_expectations.run.baselines`). The checkpoint runner fills it; a batch
whose baseline column is null on every row has no baseline (the first release): the check
is then skipped and reported as such, not failed.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, Literal

from great_expectations.compatibility import pydantic
from great_expectations.core.suite_parameters import SuiteParameterDict
from great_expectations.render import LegacyDiagnosticRendererType
from great_expectations.render.renderer.renderer import renderer
from great_expectations.validator.metric_configuration import MetricConfiguration

from er_expectations.analysis.baseline_columns import (
    PREVIOUS,
    baseline_label_column,
    default_baseline_column,
)
from er_expectations.analysis.drift import AGREEMENT_METRICS, DRIFT_STATISTICS, diff_of
from er_expectations.core.text import fmt_level, fmt_number, format_number
from er_expectations.gx.docs.history_view import (
    CHART_RELEASES,
    chart_format,
    chart_spec,
    chart_thresholds,
    history_chart_blocks,
    own_series,
    series_rows,
)
from er_expectations.gx.docs.render import (
    DIFF_SHOWN_UNDER,
    result_details,
    string_block,
    table_block,
)
from er_expectations.gx.expectations.base import (
    BoundedExpectation,
    ParameterError,
    SkippableExpectation,
    Threshold,
    json_number,
    result_level,
    threshold,
)
from er_expectations.gx.expectations.decisions import (
    DECISION_RULES,
    decision_details,
    decision_field,
    rule_clause,
    rule_phrase,
)
from er_expectations.gx.expectations.estimated import SampledExpectation, design_fragment
from er_expectations.gx.expectations.intervals import (
    ESTIMATE_CI_METHODS,
    ci_method_field,
    interval_details,
    interval_sentence,
    method_phrase,
    n_boot_field,
)
from er_expectations.gx.expectations.summary import ChosenStatisticWithOrder, parse_q
from er_expectations.gx.metrics import drift as _drift_metrics  # noqa: F401  (registers the drift metrics)
from er_expectations.gx.metrics.drift import (
    ESTIMATE_CHANGE,
    RELEASE_AGREEMENT,
    RELEASE_PAIR,
    STATISTIC_CHANGE,
)
from er_expectations.gx.metrics.release import BENCHMARK_SAMPLE, SAMPLE_KEYS
from er_expectations.stats import METRICS
from er_expectations.stats.blind_spot import change_blind_spot
from er_expectations.stats.decision import decide

__all__ = [
    "ExpectEstimateChangeToBeBelow",
    "ExpectReleaseAgreementToBeBetween",
    "ExpectStatisticChangeToBeBelow",
]


def _pct(x: float) -> str:
    return "—" if x is None or math.isnan(x) else f"{100 * x:+.1f} %"


#: Default ``min_overlap`` of the drift checks: half of the larger release's records in common.
DEFAULT_MIN_OVERLAP = 0.5


def overlap_needed(min_overlap: float, current_records: int, baseline_records: int) -> tuple[int, float | None]:
    """(records needed in common, the share it came from or None) for ``min_overlap`` (SPEC 13).

    Below 1 it is a share of the larger release: ``ceil(share · max(n_current, n_baseline))``,
    at least 1 (so that neither release is mostly made of records the other lacks: a baseline
    of one record, or a release whose ids all changed, is not compared); from 1 on it is a count
    of records (a whole number).
    """
    value = float(min_overlap)
    if value < 1.0:
        return max(1, math.ceil(value * max(current_records, baseline_records))), value
    return int(value), None


class _DriftExpectation(SkippableExpectation):
    """Common parameters of the checks against a baseline release (SPEC 10)."""

    reads_baseline: ClassVar[bool] = True

    baseline: str = pydantic.Field(
        PREVIOUS, description="The baseline release: previous (the release before this one in the checkpoint's "
        "order) or the label of a pinned release, e.g. 2020-06-30.")
    baseline_column: str | None = pydantic.Field(
        None, description="Column of the batch with the baseline release's prediction (null = record not in it). "
        "Default <prediction_column>__baseline, or <prediction_column>__baseline__<label> for a pinned "
        "baseline; the checkpoint runner adds it.")
    diff_examples: int = pydantic.Field(
        5, ge=0, le=100, description="How many changed clusters of each kind (merged, split, both) a failed "
        "check lists, drawn with seed.")
    seed: int = pydantic.Field(0, ge=0, description="Seed of the sampled examples of a failed check.")
    name_column: str | None = pydantic.Field(
        None, description="Column with the record's name: shown for the example clusters of a failed check's "
        "release diff (and, for homonymy_rate and name_variation_rate, the names they count).", column="batch")
    min_overlap: float | SuiteParameterDict = pydantic.Field(
        DEFAULT_MIN_OVERLAP, gt=0.0, description="Fewest records present in both releases for the check to be "
        "evaluated (SPEC 13): below 1, a share of the larger release's records (default 0.5: half of them); "
        "1 or more, a number of records. Below it the check is skipped, not passed: a comparison on a few "
        "common records says nothing about the release.")

    #: Whether a failure shows the release diff (merged/split clusters).
    shows_diff: ClassVar[bool] = True

    @pydantic.validator("min_overlap")
    def _check_overlap(cls, value):
        if isinstance(value, int | float) and value >= 1.0 and not float(value).is_integer():
            raise ParameterError(f"a count of records must be a whole number, got {value!r}", at="min_overlap",
                                 hint="write a share below 1 (0.5 = half of the larger release) or a whole "
                                 "number of records (e.g. 1000)")
        return value

    def resolved_baseline_column(self) -> str:
        return self.baseline_column or default_baseline_column(self.prediction_column, self.baseline)

    def _pair_value(self) -> dict[str, Any]:
        return {"prediction_column": self.prediction_column, "record_id_column": self.record_id_column,
                "baseline_column": self.resolved_baseline_column()}

    def _pair_configs(self, domain: dict[str, Any]) -> dict[str, MetricConfiguration]:
        return {RELEASE_PAIR: MetricConfiguration(RELEASE_PAIR, domain, self._pair_value())}

    @classmethod
    def _baseline_phrase(cls, kwargs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        baseline = kwargs.get("baseline") or PREVIOUS
        column = kwargs.get("baseline_column") or default_baseline_column(
            str(kwargs.get("prediction_column") or "?"), baseline)
        if baseline == PREVIOUS:
            return "the previous release ($baseline_column)", {"baseline_column": column}
        return "the pinned release $baseline ($baseline_column)", {"baseline": baseline, "baseline_column": column}

    def _common(self, metrics: dict) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """Details every drift result has, and the skipped result when there is no baseline."""
        pair = metrics[RELEASE_PAIR]
        column = self.resolved_baseline_column()
        value = pair.column_value(baseline_label_column(column))
        label = None if value is None else str(value)
        details: dict[str, Any] = {"baseline": label, "baseline_column": column,
                                   "baseline_setting": self.baseline, "common_records": pair.n_common,
                                   "baseline_records": pair.baseline.n_records}
        if pair.baseline.n_records == 0:
            why = ("no baseline release for this batch (it is the first release of the checkpoint, or the "
                   f"baseline column {column!r} is empty): nothing to compare, so the check is skipped")
            return details, self.skipped(details, why, observed_text="skipped: no baseline release")
        needed, share = overlap_needed(self.min_overlap, pair.current.n_records, pair.baseline.n_records)
        details["min_overlap"] = needed
        if pair.n_common < needed:
            what = (f"{fmt_number(100 * share, 3)} % of the larger release's records" if share is not None
                    else f"min_overlap {int(needed):,}")
            why = (f"only {pair.n_common:,} record{'s are' if pair.n_common != 1 else ' is'} in both this release ({pair.current.n_records:,} records) "
                   f"and its baseline ({pair.baseline.n_records:,}); at least {needed:,} ({what}) are needed for "
                   "a comparison that speaks for the release, so the check is skipped")
            return details, self.skipped(details, why, observed_text=(
                f"skipped: {pair.n_common:,} common records, {needed:,} needed"))
        details["skipped"] = False
        return details, None

    def _attach_diff(self, details: dict[str, Any], metrics: dict, ok: bool, runtime_configuration) -> None:
        """Under a failure (SUMMARY or COMPLETE results), the release diff of the common records.

        Computed here, from the pair the metrics already hold, and only for failures.
        """
        if ok or not self.shows_diff or result_level(runtime_configuration).value not in ("SUMMARY", "COMPLETE"):
            return
        pair = metrics[RELEASE_PAIR]
        if pair.n_common == 0:
            return
        name = getattr(self, "name_column", None)
        diff = diff_of(pair, name=name, examples=int(self.diff_examples), seed=int(self.seed),
                       before=details.get("baseline") or details["baseline_column"], after=str(self.prediction_column))
        details["diff"] = diff.to_dict()

    def _attach_history(self, details: dict[str, Any], value: float, ok: bool, *, ci: tuple[float, float] | None = None,
                        ci_level: float | None = None) -> None:
        """This check's past values from the history store (when run by er-expectations with a
        history) and the current one, for the chart of the Data Docs page."""
        frame, problem, active = own_series(self, last=CHART_RELEASES - 1)
        if problem is not None:
            details["history_note"] = problem
            return
        current = {"release": active.release, "value": value, "success": ok,
                   "ci_lower": ci[0] if ci else None, "ci_upper": ci[1] if ci else None, "ci_level": ci_level}
        details["history"] = series_rows(frame, current)

    @staticmethod
    def _chart_titles(details: dict[str, Any]) -> dict[str, str]:
        return {"title": str(details.get("chart_title") or "history"),
                "y_title": str(details.get("chart_axis") or "value")}

    @classmethod
    def chart_specs(cls, result: Any) -> list[dict[str, Any]]:
        """The Vega-Lite specifications of the charts the Data Docs page of ``result`` draws."""
        details = result_details(result)
        spec = chart_spec(details.get("history"), **cls._chart_titles(details), thresholds=chart_thresholds(details),
                          y_format=chart_format(details))
        return [spec] if spec is not None else []

    @classmethod
    @renderer(renderer_type=LegacyDiagnosticRendererType.UNEXPECTED_TABLE)
    def _diagnostic_unexpected_table_renderer(cls, configuration=None, result=None, runtime_configuration=None,
                                              **kwargs):
        blocks = list(super()._diagnostic_unexpected_table_renderer(
            configuration=configuration, result=result, runtime_configuration=runtime_configuration, **kwargs) or [])
        details = result_details(result)
        blocks.extend(history_chart_blocks(details, **cls._chart_titles(details)))
        diff = details.get("diff")
        if diff and result is not None and not result.success:
            blocks.extend(diff_blocks(diff))
        elif details.get(DIFF_SHOWN_UNDER) and result is not None and not result.success:
            # the same release diff as a check above on this page (gx.docs.data_docs): said once
            blocks.append(string_block("Release diff: the same as under $check above.",
                                       {"check": details[DIFF_SHOWN_UNDER]}, tag="div"))
        return blocks or None


#: What each change class of a release diff means, said of a cluster of the new release (SPEC 10).
DIFF_CLASSES = {
    "unchanged": "unchanged: the same records as one cluster of {before}",
    "merged": "merged: whole clusters of {before} put together",
    "split": "a piece of a cluster of {before} that was split",
    "both": "both: pieces of split clusters of {before} put together",
}


def diff_blocks(diff: dict[str, Any]) -> list[Any]:
    """Data Docs blocks of a release diff: the counts and the sampled examples (all escaped).

    Two counts of splits exist and both are named: how many clusters of the baseline were split
    (the sentence), and how many clusters of the new release are pieces of them (the table).
    """
    counts = diff.get("clusters") or {}
    records = diff.get("records") or {}
    before, after = str(diff.get("before")), str(diff.get("after"))
    blocks = [
        string_block(
            "Release diff on the $common records in both releases: $moved records changed cluster mates. "
            "$split of the $before_clusters clusters of $before were split apart; the table counts the "
            "clusters of $after by what each is made of.",
            {"common": f"{int(diff.get('common_records', 0)):,}", "moved": f"{int(diff.get('records_moved', 0)):,}",
             "split": f"{int(diff.get('before_clusters_split', 0)):,}",
             "before_clusters": f"{int(diff.get('before_clusters', 0)):,}", "before": before, "after": after},
            tag="div"),
        table_block(f"Clusters of {after}, by how they relate to {before}",
                    [f"A cluster of {after} is", f"Clusters of {after}", "Records"],
                    [[DIFF_CLASSES[kind].format(before=before), f"{int(counts.get(kind, 0)):,}",
                      f"{int(records.get(kind, 0)):,}"] for kind in ("unchanged", "merged", "split", "both")]),
    ]
    examples = diff.get("examples") or []
    if examples:
        rows = [[e.get("change"), e.get("cluster"), e.get("records"),
                 "; ".join(f"{s.get('cluster')} ({s.get('records')} of {s.get('size')})" for s in e.get("sources", [])),
                 "; ".join(str(n) for n in e.get("names", []))] for e in examples]
        blocks.append(table_block(f"Sampled changed clusters (seed {diff.get('seed', 0)})",
                                  ["Change", "Cluster", "Records", "From (records taken of its size)", "Names"],
                                  rows))
    return blocks


# -- 1. fixed-subset statistic ----------------------------------------------------------------


class ExpectStatisticChangeToBeBelow(_DriftExpectation, ChosenStatisticWithOrder):
    """A summary statistic changes by at most a threshold against a baseline release, on the records
    present in both (SPEC 10, fixed subset)."""

    label_from: ClassVar[tuple[str, str] | None] = ("statistic", "change")

    statistic: Literal[DRIFT_STATISTICS] = pydantic.Field(  # type: ignore[valid-type]
        ..., description="Which summary statistic of the predicted clustering (SPEC 3) to compare.")
    max_change: float | SuiteParameterDict | None = pydantic.Field(
        None, ge=0.0, description="Largest acceptable absolute change |this − baseline|.")
    max_relative_change: float | SuiteParameterDict | None = pydantic.Field(
        None, ge=0.0, description="Largest acceptable relative change |this − baseline| / |baseline| "
        "(0.15 = 15 %).")

    args_keys: ClassVar[tuple[str, ...]] = ("prediction_column", "statistic", "max_change", "max_relative_change")
    success_keys: ClassVar[tuple[str, ...]] = (
        "prediction_column", "record_id_column", "baseline", "baseline_column", "statistic", "q", "name_column",
        "max_change", "max_relative_change", "diff_examples", "seed", "min_overlap", *SkippableExpectation.SKIP_KEYS)

    @pydantic.root_validator(skip_on_failure=False)
    def _check_threshold(cls, values):
        if "max_change" in values and "max_relative_change" in values:
            given = [k for k in ("max_change", "max_relative_change") if values[k] is not None]
            if len(given) != 1:
                raise ParameterError(
                    "give exactly one of 'max_change' (absolute) or 'max_relative_change' (relative)"
                    + (", not both" if given else ""), at=given[-1] if given else None,
                    hint="e.g. max_relative_change: 0.15 for at most 15 %")
        return values

    def _metric_configs(self, domain: dict[str, Any]) -> dict[str, MetricConfiguration]:
        value = {**self._pair_value(), "statistic": self.statistic,
                 "q": None if self.q is None else parse_q(self.q),
                 "name_column": self._name_column()}
        return {STATISTIC_CHANGE: MetricConfiguration(STATISTIC_CHANGE, domain, value), **self._pair_configs(domain)}

    @classmethod
    def _sentence(cls, kwargs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        base, params = cls._baseline_phrase(kwargs)
        params.update({"label": cls._statistic_label(kwargs), "prediction_column": kwargs.get("prediction_column")})
        if kwargs.get("max_relative_change") is not None:
            params["limit"] = f"{100 * float(kwargs['max_relative_change']):g} %"
        else:
            params["limit"] = format_number(float(kwargs["max_change"])) if kwargs.get("max_change") is not None else "?"
        template = (f"The $label of $prediction_column changes by at most $limit against {base}, both computed on "
                    "the records present in both releases.")
        return template, params

    def _validate(self, metrics: dict, runtime_configuration=None, execution_engine=None):
        details, skipped = self._common(metrics)
        if skipped is not None:
            return skipped
        change = metrics[STATISTIC_CHANGE]
        relative = self.max_relative_change is not None
        observed = change.relative_change if relative else change.change
        limit = self.max_relative_change if relative else self.max_change
        ok = not math.isnan(observed) and abs(observed) <= float(limit)
        details.update({
            "statistic": change.statistic, "label": change.label, "q": change.q,
            "current": json_number(change.current), "baseline_value": json_number(change.baseline),
            "change": json_number(change.change), "relative_change": json_number(change.relative_change),
            "current_records": change.current_records, "current_clusters": change.current_clusters,
            "baseline_clusters": change.baseline_clusters,
            "threshold": {"kind": "relative" if relative else "absolute", "value": float(limit)},
        })
        against = details["baseline"] or self.resolved_baseline_column()
        if math.isnan(observed):  # e.g. a relative change from a baseline value of 0
            return self.skipped(details, f"the {'relative ' if relative else ''}change of the {change.label} is "
                                f"undefined (baseline value {fmt_number(change.baseline)})")
        details["observed_text"] = (
            f"{fmt_number(change.baseline)} in {against} → {fmt_number(change.current)} "
            f"(change {fmt_number(change.change)}, {_pct(change.relative_change)}) on "
            f"{change.common_records:,} records in both releases")
        if not ok:
            details["note"] = (f"the {change.label} changed by {_pct(change.relative_change) if relative else fmt_number(change.change)}"
                               f", beyond the limit of {f'{100 * float(limit):g} %' if relative else format_number(float(limit))}")
        self._attach_diff(details, metrics, ok, runtime_configuration)
        details["chart_title"] = f"{change.label} against the baseline"
        details["chart_axis"] = "relative change (%)" if relative else "change"
        if relative:  # stored as a fraction, said in per cent: the chart says it in per cent too
            details["chart_format"] = ".0%"
        details["chart_thresholds"] = [float(limit), -float(limit)]
        self._attach_history(details, observed, ok)
        return {"success": bool(ok), "result": {"observed_value": json_number(observed), "details": details}}


# -- 3. change of an estimate -----------------------------------------------------------------


class ExpectEstimateChangeToBeBelow(_DriftExpectation, SampledExpectation):
    """An estimated metric changes by at most a threshold against a baseline release, beyond sampling
    error (SPEC 10, paired standard error on the same benchmark draws)."""

    label_from: ClassVar[tuple[str, str] | None] = ("metric", "change")

    metric: Literal[AGREEMENT_METRICS] = pydantic.Field(  # type: ignore[valid-type]
        ..., description="Which estimated performance metric (SPEC 5) to compare.")
    max_change: float | SuiteParameterDict = pydantic.Field(
        ..., gt=0.0, le=1.0, description="Largest acceptable change |this − baseline| of the estimate; with the "
        "default decision (significant) the check fails only when the whole confidence interval of the change "
        "lies beyond it.")
    decision: Literal[DECISION_RULES] = decision_field()  # type: ignore[valid-type]
    beta: float | SuiteParameterDict = pydantic.Field(1.0, gt=0.0, description="Weight of recall against precision for F metrics, > 0.")
    ci_method: Literal[ESTIMATE_CI_METHODS] = ci_method_field()  # type: ignore[valid-type]
    n_boot: int = n_boot_field()
    seed: int = pydantic.Field(0, ge=0, description="Seed of the bootstrap resamples of the change and of the "
                               "sampled examples of a failed check.")

    args_keys: ClassVar[tuple[str, ...]] = ("prediction_column", "reference_column", "metric", "max_change")
    success_keys: ClassVar[tuple[str, ...]] = (
        "prediction_column", "record_id_column", "reference_column", "weights", "draws_column", "known_column", "ci_level",
        "baseline", "baseline_column", "metric", "max_change", "beta", "diff_examples", "seed", "ci_method",
        "n_boot", "min_overlap", "decision", *SkippableExpectation.SKIP_KEYS)

    def _metric_configs(self, domain: dict[str, Any]) -> dict[str, MetricConfiguration]:
        sample = self._sample_value()
        value = {**{k: sample[k] for k in SAMPLE_KEYS}, "baseline_column": self.resolved_baseline_column(),
                 "metric": self.metric, "beta": float(self.beta), "ci_level": float(self.ci_level),
                 "ci_method": self.ci_method, "n_boot": int(self.n_boot), "seed": int(self.seed)}
        return {ESTIMATE_CHANGE: MetricConfiguration(ESTIMATE_CHANGE, domain, value),
                # this release's sample (the change's own dependency): its blind spot (SPEC 6.1)
                BENCHMARK_SAMPLE: MetricConfiguration(BENCHMARK_SAMPLE, domain, {k: sample[k] for k in SAMPLE_KEYS}),
                **self._pair_configs(domain)}

    @classmethod
    def _sentence(cls, kwargs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        metric = kwargs.get("metric")
        label = METRICS[metric].label if metric in METRICS else str(metric)
        base, params = cls._baseline_phrase(kwargs)
        design, design_params = design_fragment(kwargs)
        level = float(kwargs.get("ci_level") or 0.95)
        params.update({"label": label, "prediction_column": kwargs.get("prediction_column"),
                       "limit": format_number(float(kwargs["max_change"])) if kwargs.get("max_change") is not None
                       else "?", "level": fmt_level(level), **design_params})
        clause = rule_clause(kwargs.get("decision"), "the change")
        template = (f"The estimated $label of $prediction_column changes by at most $limit against {base}, "
                    f"both estimated on the same draws of {design} (paired standard error): {clause}.")
        extra, extra_params = interval_sentence(kwargs)
        return template + extra, {**params, **extra_params}

    def _validate(self, metrics: dict, runtime_configuration=None, execution_engine=None):
        details, skipped = self._common(metrics)
        if skipped is not None:
            return skipped
        res = metrics[ESTIMATE_CHANGE]
        diff = res.change
        limit = float(self.max_change)
        level = fmt_level(float(self.ci_level))
        test = f"decision rule {self.decision}: {rule_phrase(self.decision)} (±{format_number(limit)})"
        against = details["baseline"] or self.resolved_baseline_column()
        if math.isnan(diff.estimate):
            return self.skipped(details, f"the change of the estimated {METRICS[res.metric].label} is undefined "
                                f"on the sample: {diff.note or 'an estimate is undefined'}")
        usable = diff.has_std_error and diff.has_interval
        found = decide(self.decision, estimate=diff.estimate, lower=diff.ci_lower if usable else None,
                       upper=diff.ci_upper if usable else None, low=-limit, high=limit, symmetric=True,
                       level=float(self.ci_level), what="the change")
        ok = found.passed
        verdict = found.sentence if usable or not diff.note else f"{diff.note}: {found.sentence}"
        details.update({
            "metric": res.metric, "label": METRICS[res.metric].label,
            "current": json_number(res.current.estimate), "current_std_error": json_number(res.current.std_error),
            "baseline_estimate": json_number(res.baseline.estimate),
            "baseline_std_error": json_number(res.baseline.std_error),
            "change": json_number(diff.estimate), "std_error": json_number(diff.std_error),
            "ci_lower": json_number(diff.ci_lower), "ci_upper": json_number(diff.ci_upper),
            "ci_level": float(self.ci_level), "p_value": json_number(diff.p_value),
            "naive_std_error": json_number(res.naive_std_error), "draws": res.draws, "clusters": res.clusters,
            "clusters_only_current": res.only_current, "clusters_only_baseline": res.only_baseline,
            "threshold": limit, "test": test, **decision_details(found), "verdict": verdict,
            "note": "; ".join(x for x in (verdict if not ok else "", diff.note) if x),
            "ci_method": diff.interval, "ci_method_text": method_phrase(diff.interval, difference=True),
            "zero_event": bool(diff.zero_event),
            **interval_details(self.ci_method, self.n_boot, diff.seed),
        })
        spot = change_blind_spot(metrics[BENCHMARK_SAMPLE], diff.estimate, diff.ci_lower if usable else math.nan,
                                 metric=res.metric, beta=float(self.beta)) if BENCHMARK_SAMPLE in metrics else None
        if spot is not None:  # what this release's draws cannot show (SPEC 6.1)
            details["blind_spot"] = spot.as_dict()
            details["limits"] = [spot.text(f"change of the {METRICS[res.metric].label}")]
        how = method_phrase(diff.interval, difference=True)
        if not diff.has_std_error:
            se = "no standard error"
        elif not diff.has_interval:
            se = f"paired SE {fmt_number(diff.std_error, 4)}, {how}"
        else:
            se = (f"paired SE {fmt_number(diff.std_error, 4)}, {level} CI {fmt_number(diff.ci_lower)} to "
                  f"{fmt_number(diff.ci_upper)} by {how}"
                  + ("" if diff.zero_event else
                     f"; unpaired √(se₁²+se₂²) would be {fmt_number(res.naive_std_error, 4)}"))
        details["observed_text"] = (
            f"{fmt_number(res.baseline.estimate)} in {against} → {fmt_number(res.current.estimate)}: change "
            f"{fmt_number(diff.estimate)} ({se}; {res.clusters:,} benchmark clusters, {res.draws:,} draws)")
        self._attach_diff(details, metrics, ok, runtime_configuration)
        details["chart_title"] = f"change of the estimated {METRICS[res.metric].label}"
        details["chart_axis"] = "change"
        details["chart_thresholds"] = [limit, -limit]
        self._attach_history(details, diff.estimate, ok, ci=(diff.ci_lower, diff.ci_upper),
                             ci_level=float(self.ci_level))
        return {"success": bool(ok), "result": {"observed_value": json_number(diff.estimate), "details": details}}


# -- 4. agreement -----------------------------------------------------------------------------


class ExpectReleaseAgreementToBeBetween(_DriftExpectation, BoundedExpectation):
    """An exact metric of the release taking a baseline release as the reference, on their common
    records, lies in a range (SPEC 10, agreement)."""

    label_from: ClassVar[tuple[str, str] | None] = ("metric", "agreement")

    metric: Literal[AGREEMENT_METRICS] = pydantic.Field(  # type: ignore[valid-type]
        ..., description="Which metric (SPEC 5) of this release with the baseline as the truth.")
    min_value: Threshold = threshold("min", ge=0.0, le=1.0)
    max_value: Threshold = threshold("max", ge=0.0, le=1.0)
    beta: float | SuiteParameterDict = pydantic.Field(1.0, gt=0.0, description="Weight of recall against precision for F metrics, > 0.")

    args_keys: ClassVar[tuple[str, ...]] = ("prediction_column", "metric", *BoundedExpectation.BOUND_KEYS)
    success_keys: ClassVar[tuple[str, ...]] = (
        "prediction_column", "record_id_column", "baseline", "baseline_column", "metric", "beta",
        "diff_examples", "seed", *BoundedExpectation.BOUND_KEYS, "min_overlap", *SkippableExpectation.SKIP_KEYS)

    def _metric_configs(self, domain: dict[str, Any]) -> dict[str, MetricConfiguration]:
        value = {**self._pair_value(), "beta": float(self.beta)}
        return {RELEASE_AGREEMENT: MetricConfiguration(RELEASE_AGREEMENT, domain, value),
                **self._pair_configs(domain)}

    @classmethod
    def _sentence(cls, kwargs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        metric = kwargs.get("metric")
        base, params = cls._baseline_phrase(kwargs)
        params.update({"label": METRICS[metric].label if metric in METRICS else str(metric),
                       "prediction_column": kwargs.get("prediction_column"), "range": ""})
        template = (f"The exact $label of $prediction_column, taking {base} as the reference on the records "
                    "present in both, $range.")
        return template, params

    def _validate(self, metrics: dict, runtime_configuration=None, execution_engine=None):
        details, skipped = self._common(metrics)
        if skipped is not None:
            return skipped
        agreement = metrics[RELEASE_AGREEMENT]
        value = float(agreement.values[self.metric])
        ok = self.in_range(value)
        against = details["baseline"] or self.resolved_baseline_column()
        details.update({"metric": self.metric, "label": METRICS[self.metric].label,
                        "values": {k: json_number(v) for k, v in agreement.values.items()},
                        "current_clusters": agreement.current_clusters,
                        "baseline_clusters": agreement.baseline_clusters})
        if self.metric in agreement.notes:
            details["note"] = agreement.notes[self.metric]
        details["observed_text"] = (f"{fmt_number(value)} against {against} on {agreement.common_records:,} "
                                    f"records in both releases ({agreement.current_clusters:,} clusters here, "
                                    f"{agreement.baseline_clusters:,} in the baseline)")
        self._attach_diff(details, metrics, ok, runtime_configuration)
        details["chart_title"] = f"{METRICS[self.metric].label} against the baseline"
        details["chart_axis"] = self.metric
        details["chart_thresholds"] = [b for b in (self.min_value, self.max_value) if isinstance(b, int | float)]
        if not math.isnan(value):
            self._attach_history(details, value, ok)
        return {"success": bool(ok), "result": {"observed_value": json_number(value), "details": details}}
