"""``expect_subgroup_disparity_to_be_below``: no group of entities is served much worse (SPEC 8).

Groups come from ethnicity imputed from surnames (``surname_column``, optionally
``first_name_column``; ``groups`` maps group names to the Census categories) or from an
entity-level column (``group_column``). For each group the metric is estimated by the domain
estimator over all draws and compared with the rest (or with all entities); the expectation
fails when a tested group's gap exceeds ``max_disparity`` in absolute value (and, with
``require_significance``, its adjusted p-value is below 1 − ci_level). Groups with fewer
than ``min_draws`` draws are reported as too small and neither pass nor fail.

The result and Data Docs hold group aggregates only: never a cluster's or a person's
imputed ethnicity.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from great_expectations.compatibility import pydantic
from great_expectations.core.suite_parameters import SuiteParameterDict
from great_expectations.execution_engine import ExecutionEngine
from great_expectations.expectations.metrics.metric_provider import metric_value
from great_expectations.render import LegacyDiagnosticRendererType
from great_expectations.render.renderer.renderer import renderer
from great_expectations.validator.metric_configuration import MetricConfiguration

from er_expectations.core.errors import InputError
from er_expectations.core.hints import did_you_mean
from er_expectations.core.text import fmt_level, fmt_number, fmt_p
from er_expectations.gx.docs.chart_blocks import drawn_chart
from er_expectations.gx.docs.render import result_details, string_block, table_block
from er_expectations.gx.expectations.base import json_number
from er_expectations.gx.expectations.decisions import (
    DECISION_RULES,
    decision_field,
    rule_clause,
    rule_phrase,
)
from er_expectations.gx.expectations.estimated import SampledExpectation, design_fragment
from er_expectations.gx.expectations.intervals import (
    GAP_CI_METHODS,
    ci_method_field,
    interval_details,
    interval_sentence,
    method_phrase,
    n_boot_field,
    seed_field,
)
from er_expectations.gx.expectations.params import ParameterError
from er_expectations.gx.metrics.release import (
    BENCHMARK_SAMPLE,
    RELEASE,
    RELEASE_KEYS,
    SAMPLE_KEYS,
    DependentMetric,
)
from er_expectations.stats import DEFAULT_CI_METHOD, DEFAULT_N_BOOT, METRICS
from er_expectations.stats.blind_spot import group_blind_spots
from er_expectations.stats.decision import decide
from er_expectations.stats.subgroups import (
    ADJUSTMENTS,
    COMPARISONS,
    DEFAULT_MIN_DRAWS,
    MEMBERSHIPS,
    check_subgroup_metrics,
    estimate_groups,
)

__all__ = ["SUBGROUP_ESTIMATES", "ExpectSubgroupDisparityToBeBelow", "SubgroupEstimatesMetric"]

SUBGROUP_ESTIMATES = "er.subgroup_estimates"
_GROUP_KEYS = ("surname_column", "first_name_column", "group_column", "groups", "membership", "metric", "beta",
               "ci_level", "compare_to", "min_draws", "adjust", "ethnicity_table", "ethnicity_year",
               "ethnicity_how", "ci_method", "n_boot", "seed")
#: The Census tables (shipped) and ethnicolr's model, and the years offered (checked again, with the weights on disk, by the imputation).
ETHNICITY_TABLES = ("census", "census_lstm")
ETHNICITY_YEARS = (2000, 2010, 2020)


#: What ``groups`` takes (SPEC 8).
_GROUPS_FORMS = "a mapping of group names to values or a list of values"


def _encode_groups(groups: dict[str, list[str]] | None) -> str | None:
    """Groups as a hashable metric kwarg (JSON text keeping the order of the groups)."""
    return None if groups is None else json.dumps([[k, list(v)] for k, v in groups.items()])


class SubgroupEstimatesMetric(DependentMetric):
    """Every group's estimate of one metric with its gap to the comparison (SPEC 8)."""

    metric_name = SUBGROUP_ESTIMATES
    value_keys = (*SAMPLE_KEYS, *_GROUP_KEYS)

    depends = ((RELEASE, RELEASE_KEYS), (BENCHMARK_SAMPLE, SAMPLE_KEYS))

    @metric_value(engine=ExecutionEngine)  # pandas, SQL and Spark: only the benchmark rows are read
    def _any_engine(cls, execution_engine, metric_domain_kwargs, metric_value_kwargs, metrics, runtime_configuration):
        from er_expectations.analysis.subgroups import sample_membership

        kw = metric_value_kwargs
        sample = metrics[BENCHMARK_SAMPLE]
        groups = None if kw.get("groups") is None else dict(json.loads(kw["groups"]))
        membership, info = sample_membership(
            metrics[RELEASE], sample, reference=kw["reference_column"], surname=kw.get("surname_column"),
            first_name=kw.get("first_name_column"), group_column=kw.get("group_column"), groups=groups,
            membership=kw.get("membership") or "hard", table=kw.get("ethnicity_table") or "census",
            year=int(kw.get("ethnicity_year") or 2010), how=kw.get("ethnicity_how") or "mode")
        rows = estimate_groups(sample, membership, [kw["metric"]], beta=float(kw.get("beta") or 1.0),
                               ci_level=float(kw["ci_level"]), compare_to=kw["compare_to"],
                               min_draws=int(kw["min_draws"]), adjust=kw["adjust"],
                               ci_method=kw.get("ci_method") or DEFAULT_CI_METHOD,
                               n_boot=DEFAULT_N_BOOT if kw.get("n_boot") is None else int(kw["n_boot"]),
                               seed=kw.get("seed"))
        k = int(sample.labels.shape[0])
        spots = group_blind_spots(sample, membership, rows, beta=float(kw.get("beta") or 1.0))
        return {"rows": rows, "abstained": membership.abstained, "sampled_clusters": k, "draws": int(sample.k),
                "design": sample.design, "info": info,
                "blind_spots": {group: spot for (group, _), spot in spots.items()}}


def group_verdict(status: str, flagged: bool) -> str:
    """The verdict on one group, in the words of :data:`~er_expectations.analysis.subgroups.GROUP_VERDICTS` (table, chart and note agree)."""
    if status != "ok":
        return "not tested"
    return "gap too large" if flagged else "not beyond the limit"


def _row_details(r: Any, flagged: bool) -> dict[str, Any]:
    e, d = r.estimate, r.disparity
    return {
        "group": r.group, "estimate": json_number(e.estimate), "std_error": json_number(e.std_error),
        "ci_lower": json_number(e.ci_lower), "ci_upper": json_number(e.ci_upper),
        "comparison": json_number(r.comparison.estimate), "disparity": json_number(d.estimate),
        "disparity_se": json_number(d.std_error), "disparity_ci_lower": json_number(d.ci_lower),
        "disparity_ci_upper": json_number(d.ci_upper), "p_value": json_number(r.p_value),
        "p_adjusted": json_number(r.p_adjusted), "draws": float(r.draws), "clusters": int(r.clusters),
        "status": r.status, "note": r.note, "flagged": bool(flagged),
        "verdict": group_verdict(r.status, flagged),
        "ci_method": e.interval, "disparity_ci_method": d.interval,
        "disparity_ci_text": method_phrase(d.interval, difference=True), "zero_event": bool(d.zero_event),
        "seed": d.seed if d.seed is not None else e.seed,  # the bootstrap's, of the gap or of the estimates
    }


def _gap_pm(g: dict[str, Any]) -> str:
    """'gap ± SE', or the gap with the reason its SE is 0 (never '± 0', which reads as certainty)."""
    se = g.get("disparity_se")
    if g.get("disparity") is not None and se == 0:
        why = "no error drawn on a side" if g.get("zero_event") else "no variation on the draws"
        return f"{fmt_number(g['disparity'])} (SE 0: {why}; see the interval)"
    return _pm(g.get("disparity"), se)


def _gap_ci(g: dict[str, Any]) -> str:
    """The gap's interval with the method that built it; never a point (SPEC 8)."""
    lo, hi = g.get("disparity_ci_lower"), g.get("disparity_ci_upper")
    if lo is None or hi is None:
        return "— (" + method_phrase(g.get("disparity_ci_method") or "none", difference=True) + ")"
    text = f"{fmt_number(lo)} to {fmt_number(hi)}"
    if g.get("zero_event"):
        text += " (zero-event bound)"
    return text


def _pm(x: float | None, se: float | None) -> str:
    if x is None:
        return "—"
    return fmt_number(x) if se is None else f"{fmt_number(x)} ± {fmt_number(se)}"


class ExpectSubgroupDisparityToBeBelow(SampledExpectation):
    """No group of entities has an estimated metric further than max_disparity from the rest (SPEC 8)."""

    @classmethod
    def short_label(cls, kwargs: Mapping[str, Any]) -> str:
        return f"{kwargs.get('metric') or 'pairwise_f'}_gap_by_group"

    surname_column: str | None = pydantic.Field(
        None, description="Column with each record's surname: groups from ethnicity imputed per true cluster "
        "with the Census surname tables (give this or group_column).", column="records")
    first_name_column: str | None = pydantic.Field(
        None, description="Column with the first name, combined with the surname when imputing ethnicity.", column="records")
    group_column: str | None = pydantic.Field(
        None, description="Column with an entity-level attribute, constant within each true cluster (give this "
        "or surname_column).", column="records")
    groups: dict[str, list[str]] | None = pydantic.Field(
        None, description="Groups: {name: [values]} (with surname_column the values are Census categories: "
        "white, black, api, aian, 2prace, hispanic), or a list of values, one group each. Default: one group "
        "per value (per category).")
    metric: str = pydantic.Field(
        "pairwise_f", description="Metric compared across groups (default pairwise_f); cluster precision and "
        "cluster F have no subgroup form.")
    beta: float | SuiteParameterDict = pydantic.Field(1.0, gt=0.0, description="Weight of recall against precision for F metrics.")
    max_disparity: float | SuiteParameterDict = pydantic.Field(
        ..., ge=0.0, le=1.0, description="Largest acceptable gap |group − comparison| of the metric.")
    compare_to: Literal[COMPARISONS] = pydantic.Field(  # type: ignore[valid-type]
        "rest", description="Compare each group with the rest of the entities of known group (rest) or "
        "with all entities (all).")
    membership: Literal[MEMBERSHIPS] = pydantic.Field(  # type: ignore[valid-type]
        "hard", description="hard: each cluster in the group of its most likely category; soft: weighted by "
        "the imputed probabilities (surname_column only).")
    min_draws: int | SuiteParameterDict = pydantic.Field(
        DEFAULT_MIN_DRAWS, ge=2, description="Groups with fewer draws are reported as too small, not tested.")
    decision: Literal[DECISION_RULES] = decision_field()  # type: ignore[valid-type]
    require_significance: bool = pydantic.Field(
        False, description="true: a gap that the decision rule puts beyond the limit fails only if it also "
        "differs from zero after the adjustment (adjusted p-value of no gap below 1 − ci_level). A test of "
        "no gap, not of the limit: with the default rule (significant) it rarely changes a verdict.")
    adjust: Literal[ADJUSTMENTS] = pydantic.Field(  # type: ignore[valid-type]
        "holm", description="Adjustment of the p-values over the groups tested: holm, bonferroni or none.")
    ethnicity_table: Literal[ETHNICITY_TABLES] = pydantic.Field(  # type: ignore[valid-type]
        "census", description="Ethnicity source: census (the Census surname tables shipped with the package, "
        "offline) or census_lstm (ethnicolr's neural model, extra ethnicity-models; its weights must already be on disk).")
    ethnicity_year: int = pydantic.Field(2010, description="Year of the Census surname table: 2000, 2010 or 2020.")
    ethnicity_how: Literal["mode", "mean"] = pydantic.Field(
        "mode", description="A cluster's ethnicity from its most frequent known surname (mode) or the mean "
        "of its records' probabilities (mean).")
    ci_method: Literal[GAP_CI_METHODS] = ci_method_field(gaps=True)  # type: ignore[valid-type]
    n_boot: int = n_boot_field()
    seed: int | None = seed_field()

    args_keys: ClassVar[tuple[str, ...]] = ("prediction_column", "reference_column", "max_disparity")
    success_keys: ClassVar[tuple[str, ...]] = (
        "prediction_column", "record_id_column", "reference_column", "weights", "draws_column", "known_column", "ci_level",
        *(k for k in _GROUP_KEYS if k != "ci_level"), "max_disparity", "require_significance", "decision",
        *SampledExpectation.SKIP_KEYS,
    )

    @pydantic.validator("groups", pre=True)
    def _parse_groups(cls, value):
        from er_expectations.analysis.subgroups import parse_groups

        if value is not None and not isinstance(value, dict | list | tuple):
            raise ParameterError(f"expected {_GROUPS_FORMS}, got {value!r}", expected=_GROUPS_FORMS,
                                 hint="write it as groups: {api: [api], other: [white, black, hispanic]}")
        try:
            parsed = parse_groups(value)
        except InputError as error:
            raise ParameterError(str(error).removeprefix("groups: ")) from None
        return None if parsed is None else {k: list(v) for k, v in parsed.items()}

    @pydantic.validator("metric")
    def _check_metric(cls, value):
        try:
            check_subgroup_metrics([value], parameter="metric")
        except InputError as error:
            raise ParameterError(str(error).removeprefix("metric: ")) from None
        return value

    @pydantic.validator("ethnicity_year")
    def _check_year(cls, value):
        if value not in ETHNICITY_YEARS:
            raise ParameterError(f"no Census surname table for {value}",
                                 hint=f"use one of {', '.join(map(str, ETHNICITY_YEARS))}")
        return value

    @pydantic.root_validator(skip_on_failure=True)
    def _check_sources(cls, values):
        surname, column = values.get("surname_column"), values.get("group_column")
        if (surname is None) == (column is None):
            raise ParameterError(
                "give exactly one of surname_column (groups from imputed ethnicity) or group_column "
                "(an entity-level attribute)" + ("; both were given" if surname else ""),
                at="group_column" if column else "surname_column",
                hint="keep the one that defines the groups")
        if values.get("first_name_column") and not surname:
            raise ParameterError("first_name_column helps impute ethnicity from surnames, which needs "
                                 "surname_column", at="first_name_column",
                                 hint="add surname_column or remove first_name_column")
        if values.get("membership") == "soft" and not surname:
            raise ParameterError("membership: soft needs membership probabilities, which group_column does "
                                 "not give", at="membership", hint="use membership: hard, or surname_column")
        groups = values.get("groups")
        if surname and groups:
            from er_expectations.analysis.ethnicity import (
                CATEGORIES,  # the tables are not read, ethnicolr not imported
            )
            for name, vals in groups.items():
                for v in vals:
                    if v not in CATEGORIES:

                        raise ParameterError(
                            f"groups.{name}: {v!r} is not a Census category", at="groups",
                            hint=(did_you_mean(v, CATEGORIES) or "") + f" The categories are {', '.join(CATEGORIES)}")
        return values

    def _metric_configs(self, domain: dict[str, Any]) -> dict[str, MetricConfiguration]:
        sample = self._sample_value()
        value = {**sample, "surname_column": self.surname_column, "first_name_column": self.first_name_column,
                 "group_column": self.group_column, "groups": _encode_groups(self.groups),
                 "membership": self.membership, "metric": self.metric, "beta": float(self.beta),
                 "ci_level": float(self.ci_level), "compare_to": self.compare_to, "min_draws": int(self.min_draws),
                 "adjust": self.adjust, "ethnicity_table": self.ethnicity_table,
                 "ethnicity_year": int(self.ethnicity_year), "ethnicity_how": self.ethnicity_how,
                 "ci_method": self.ci_method, "n_boot": int(self.n_boot), "seed": self.seed}
        return {SUBGROUP_ESTIMATES: MetricConfiguration(SUBGROUP_ESTIMATES, domain, value)}

    @classmethod
    def _sentence(cls, kwargs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        metric = kwargs.get("metric") or "pairwise_f"
        label = METRICS[metric].label if metric in METRICS else str(metric)
        if metric in METRICS and METRICS[metric].uses_beta:
            beta = float(kwargs.get("beta") or 1.0)
            label = f"{label}1 score" if beta == 1.0 else f"{label}-score with β = {beta:g}"
        design, design_params = design_fragment(kwargs)
        params: dict[str, Any] = {
            "label": label, "prediction_column": kwargs.get("prediction_column"),
            "max_disparity": fmt_number(kwargs.get("max_disparity")),
            "min_draws": int(kwargs.get("min_draws") or DEFAULT_MIN_DRAWS),
            "level": fmt_level(float(kwargs.get("ci_level") or 0.95)), **design_params,
        }
        if kwargs.get("surname_column"):
            params["source"] = kwargs["surname_column"]
            groups = "groups of ethnicity imputed from the surnames in $source"
            if kwargs.get("first_name_column"):
                params["first_name"] = kwargs["first_name_column"]
                groups += " and first names in $first_name"
            groups += f" ({kwargs.get('membership') or 'hard'} membership)"
        else:
            params["source"] = kwargs.get("group_column") or "?"
            groups = "groups of entities by $source"
        other = "all entities" if kwargs.get("compare_to") == "all" else "the rest"
        template = (f"Estimated $label of $prediction_column differs by at most $max_disparity between each of "
                    f"the {groups} and {other}, from {design}: {rule_clause(kwargs.get('decision'), 'each gap')}")
        if kwargs.get("require_significance"):
            template += (", and only when the gap also differs from zero at $level confidence after the "
                         "adjustment (a test of no gap, not of the limit)")
        template += ". Groups with fewer than $min_draws draws are reported, not tested."
        extra, extra_params = interval_sentence(kwargs)
        return template + extra, {**params, **extra_params}

    def _validate(self, metrics: dict, runtime_configuration=None, execution_engine=None):
        res = metrics[SUBGROUP_ESTIMATES]
        alpha = 1.0 - float(self.ci_level)
        rows, failed, limits = [], [], []
        limit = float(self.max_disparity)
        for r in res["rows"]:
            d = r.disparity
            found = None
            if r.status == "ok" and not math.isnan(d.estimate):
                usable = d.has_interval
                found = decide(self.decision, estimate=d.estimate, lower=d.ci_lower if usable else None,
                               upper=d.ci_upper if usable else None, low=-limit, high=limit, symmetric=True,
                               level=float(self.ci_level), what=f"the gap of {r.group}")
            flagged = (found is not None and not found.passed
                       and (not self.require_significance or r.p_adjusted < alpha))
            row = _row_details(r, flagged)
            spot = res.get("blind_spots", {}).get(r.group)
            if spot is not None:  # what the draws cannot show of this group (SPEC 6.1)
                row["blind_spot"] = spot.as_dict()
                if spot.warning:
                    limits.append(f"{r.group}: {spot.text(METRICS[self.metric].label)}")
            if found is not None:
                p_text = fmt_p(r.p_adjusted)
                row["verdict_text"] = found.sentence + (
                    "" if not self.require_significance or found.passed else
                    (f"; and the gap differs from zero after adjustment (p {p_text})" if flagged
                     else f"; but the gap does not differ from zero after adjustment (p {p_text}), so it passes"))
            rows.append(row)
            if flagged:
                failed.append(r.group)
        tested = [r for r in rows if r["status"] == "ok"]
        worst = max(tested, key=lambda r: abs(r["disparity"] or 0.0), default=None)
        k, abstained = res["sampled_clusters"], res["abstained"]
        other = "all" if self.compare_to == "all" else "the rest"
        if worst is None:
            observed = None
            text = (f"no group tested ({len(rows)} groups, all too small or undefined; "
                    f"{k:,} clusters, {abstained:,} of them in no group)")
        else:
            observed = worst["disparity"]
            p = worst["p_adjusted"]
            text = (f"{_gap_pm(worst)} "
                    f"(largest gap: {worst['group']} against {other}, adjusted p {fmt_p(p)}; "
                    f"{len(tested)} of {len(rows)} groups tested, {k:,} clusters, {abstained:,} in no group)")
            text += f"; {fmt_level(float(self.ci_level))} CI of the gap {_gap_ci(worst)} by {worst['disparity_ci_text']}"
        details = {
            "metric": self.metric, "label": METRICS[self.metric].label, "compare_to": self.compare_to,
            "membership": self.membership, "max_disparity": float(self.max_disparity),
            "require_significance": bool(self.require_significance), "adjust": self.adjust,
            "decision": self.decision, "decision_words": rule_phrase(self.decision),
            "ci_level": float(self.ci_level), "min_draws": int(self.min_draws), "groups": rows,
            "failed_groups": failed, "sampled_clusters": k, "draws": res["draws"], "abstained": abstained,
            "abstention_rate": abstained / k if k else None, "design": res["design"],
            "imputation": {key: v for key, v in res["info"].items() if json_number(v) is not None or v is None},
            "observed_text": text,
            **interval_details(self.ci_method, self.n_boot, next((r["seed"] for r in rows), self.seed)),
        }
        if limits:
            details["limits"] = limits
        zero = [r["group"] for r in rows if r["zero_event"]]
        if zero:
            details["zero_event_note"] = (
                f"the gap of {', '.join(zero)} has a side whose draws show no error (or in which no draw counts "
                "for the metric): the gap's interval uses that side's own exact binomial bound from the number of "
                "draws (SPEC 6, 8), not a zero standard error")
        if worst is None:
            return self.skipped(details, f"no group could be tested: {len(rows)} group(s), each with fewer than "
                                f"{int(self.min_draws)} draws or an undefined estimate; {k:,} sampled clusters, "
                                f"{abstained:,} of them in no group", observed_text=text)
        if failed:
            how = {"significant": "the whole {level} interval of the gap is beyond ±{limit}",
                   "interval": "the {level} interval of the gap reaches beyond ±{limit} (not confidently within)",
                   "estimate": "the estimated gap is beyond ±{limit}"}[self.decision].format(
                       level=fmt_level(float(self.ci_level)), limit=fmt_number(self.max_disparity))
            details["note"] = (f"gap too large for {', '.join(failed)}: {how}"
                               + ("; and it differs from zero after adjustment" if self.require_significance else ""))
        limit_text = f"±{fmt_number(self.max_disparity)}"
        passed_words = {"significant": f"no tested gap is confidently beyond {limit_text}",
                        "interval": f"every tested gap is confidently within {limit_text}",
                        "estimate": f"every tested gap is estimated within {limit_text}"}[self.decision]
        details["verdict"] = details.get("note") or (passed_words if tested else "no group could be tested")
        return {"success": not failed, "result": {"observed_value": json_number(observed), "details": details}}

    @classmethod
    def chart_specs(cls, result: Any) -> list[dict[str, Any]]:
        """The Vega-Lite specifications of the charts the Data Docs page of ``result`` draws."""
        details = result_details(result)
        groups = details.get("groups") or []
        return [_chart_spec(groups, details, _other(details))] if groups else []

    @classmethod
    @renderer(renderer_type=LegacyDiagnosticRendererType.UNEXPECTED_TABLE)
    def _diagnostic_unexpected_table_renderer(cls, configuration=None, result=None, runtime_configuration=None,
                                              **kwargs):
        blocks = cls.common_blocks(configuration, result)
        details = result_details(result)
        groups = details.get("groups") or []
        if not groups:
            return blocks or None
        level = fmt_level(float(details.get("ci_level") or 0.95))
        other = _other(details)
        table = [[g["group"], _pm(g["estimate"], g["std_error"]),
                  f"{fmt_number(g['ci_lower'])}–{fmt_number(g['ci_upper'])}",
                  fmt_number(g["comparison"]), _gap_pm(g), _gap_ci(g),
                  fmt_p(g["p_adjusted"]), fmt_number(g["draws"], 1) if g["draws"] % 1 else f"{int(g['draws']):,}",
                  _verdict_text(g)] for g in groups]
        blocks.append(table_block(
            f"{details.get('label', 'estimate')} by group (aggregates only; {details.get('abstained', 0)} of "
            f"{details.get('sampled_clusters', 0)} sampled clusters in no group)",
            ["Group", "Estimate ± SE", f"{level} CI", f"Estimate of {other}", "Gap ± SE", f"Gap {level} CI",
             f"p ({details.get('adjust', 'holm')})", "Draws", "Verdict"], table))
        methods = sorted({str(g.get("disparity_ci_text")) for g in groups if g.get("disparity_ci_text")})
        note = "Gap intervals: " + "; ".join(methods) + "."
        if details.get("zero_event_note"):
            note += " Note: " + str(details["zero_event_note"]) + "."
        blocks.append(string_block("$note", {"note": note}, tag="div"))
        chart = _chart_block(groups, details, other)
        if chart is not None:
            blocks.append(chart)
        return blocks


def _verdict_text(group: Mapping[str, Any]) -> str:
    """The verdict cell: the verdict, and why a group was not tested or passed despite its gap."""
    verdict = group.get("verdict") or group_verdict(str(group.get("status")), bool(group.get("flagged")))
    if verdict == "not tested":
        return f"not tested ({group.get('status')})"
    return f"{verdict}: {group['verdict_text']}" if group.get("verdict_text") else str(verdict)


def _other(details: dict) -> str:
    return "all" if details.get("compare_to") == "all" else "rest"


def _chart_spec(groups: list[dict], details: dict, other: str) -> dict[str, Any]:
    """The Vega-Lite specification of the chart of the group estimates, coloured by each group's verdict."""
    from er_expectations.analysis.subgroups import groups_spec

    return groups_spec(
        [{**g, "verdict": g.get("verdict") or group_verdict(str(g.get("status")), bool(g.get("flagged")))}
         for g in groups], title=f"{details.get('label', 'estimate')} by group",
        comparison="the rest" if other == "rest" else "all entities", colour_by="verdict")


def _chart_block(groups: list[dict], details: dict, other: str) -> Any:
    """The static chart of the group estimates (an SVG image; the note of a chart not drawn
    without the charts extra; None if it cannot be drawn otherwise)."""

    try:
        spec = _chart_spec(groups, details, other)
    except Exception:  # noqa: BLE001 - a chart that cannot be made must not break the page
        return None
    # the full group names (the chart wraps and may shorten them): the image's text and tooltip
    names = "; ".join(str(g.get("group")) for g in groups)
    return drawn_chart(spec, alt=f"{details.get('label', 'estimate')} by group with intervals: {names}")
