"""``expect_no_error_slice_above``: no slice of entities has far more errors than the rest (SPEC 12.2).

The slices are searched for (a design-weighted tree over the entities' features on a random
part of the draws) and tested on the other part, their p-values Holm-adjusted
(:mod:`er_expectations.stats.slices`). The limit is on the lift, rate(slice)/rate(rest)
(``max_lift``), or on the slice's rate itself (``max_rate``). The decision rule (SPEC 13,
``decision``) is, for each slice tested:

* ``significant`` (the default): fails only when the slice is significantly above the limit,
  i.e. its Holm-adjusted one-sided p-value of H0: lift ≤ max_lift (rate ≤ max_rate) is below
  1 − ci_level. A search always finds the slice that looks worst; only the honest test keeps
  a release whose errors do not concentrate from failing more often than 1 − ci_level;
* ``estimate``: fails when a slice's estimated lift (rate) is above the limit;
* ``interval``: passes only when every slice's whole interval is within the limit.

Slices with too few estimation draws are listed but not tested. The check is skipped (SPEC 13)
when the benchmark has too few draws to split. The page lists each slice in words: its
conditions, rate with interval, share of the population, lift and adjusted p-value.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, Literal

from great_expectations.compatibility import pydantic
from great_expectations.core.suite_parameters import SuiteParameterDict
from great_expectations.render import LegacyDiagnosticRendererType
from great_expectations.render.renderer.renderer import renderer
from great_expectations.validator.metric_configuration import MetricConfiguration

from er_expectations.core.text import fmt_level, fmt_number, fmt_p
from er_expectations.gx.docs.render import result_details, string_block, table_block
from er_expectations.gx.expectations.base import json_number
from er_expectations.gx.expectations.decisions import (
    DECISION_RULES,
    DEFAULT_RULE,
    decision_field,
    rule_phrase,
)
from er_expectations.gx.expectations.estimated import SampledExpectation, design_fragment
from er_expectations.gx.expectations.params import ParameterError
from er_expectations.gx.metrics import slices as _slice_metrics  # noqa: F401  (registers er.slice_search)
from er_expectations.gx.metrics.slices import SLICE_SEARCH, encode_columns
from er_expectations.stats.decision import decide
from er_expectations.stats.slices import CLUSTER_METRICS, UNITS
from er_expectations.stats.subgroups import DEFAULT_MIN_DRAWS

__all__ = ["METRIC_WORDS", "ExpectNoErrorSliceAbove", "slice_blocks", "slice_sentence"]

#: How each metric is named on a page.
METRIC_WORDS = {
    "EI": "share of entities with an error (EI)", "OCE": "over-clustering error (OCE)",
    "UCE": "under-clustering error (UCE)", "ROCE": "relative over-clustering error (ROCE)",
    "RUCE": "relative under-clustering error (RUCE)", "SDE": "size difference error (SDE)",
}


def _pct(x: float | None) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * float(x):.1f} %"


def slice_sentence(s: dict[str, Any], *, level: str, per: str) -> str:
    """One slice in words for an auditor, e.g. 'Entities with cluster_size ≥ 12 (about 8.0 % of
    entities, 95 % CI 5.1 % to 11.2 %) have a rate of 0.310 (95 % CI 0.220 to 0.400), 3.10 times
    the rest (0.100); adjusted p 0.002.' (plain text: the page escapes it)."""
    unit = "records" if per == "record" else "entities"
    text = (f"Entities with {s['slice']} (about {_pct(s['share'])} of {unit}, {level} CI {_pct(s['share_ci_lower'])} "
            f"to {_pct(s['share_ci_upper'])}) have a rate of {fmt_number(s['rate'])} ({level} CI "
            f"{fmt_number(s['rate_ci_lower'])} to {fmt_number(s['rate_ci_upper'])})")
    if s.get("lift") is not None:
        text += f", {fmt_number(s['lift'], 2)} times the rest ({fmt_number(s['rest_rate'])}"
        if s.get("lift_ci_lower") is not None:
            text += f"; lift {level} CI {fmt_number(s['lift_ci_lower'], 2)} to {fmt_number(s['lift_ci_upper'], 2)}"
        text += ")"
    else:
        text += f"; the rest: {fmt_number(s['rest_rate'])}"
    if s["status"] == "ok":
        text += f"; adjusted p {fmt_p(s['p_adjusted'])}"
    else:
        text += f"; not tested ({s['status']})"
    return text + "."


def _slice_details(s: Any) -> dict[str, Any]:
    return {
        "slice": s.description, "rate": json_number(s.rate.estimate), "rate_se": json_number(s.rate.std_error),
        "rate_ci_lower": json_number(s.rate.ci_lower), "rate_ci_upper": json_number(s.rate.ci_upper),
        "share": json_number(s.share.estimate), "share_ci_lower": json_number(s.share.ci_lower),
        "share_ci_upper": json_number(s.share.ci_upper), "rest_rate": json_number(s.rest.estimate),
        "lift": json_number(s.lift), "lift_ci_lower": json_number(s.lift_ci_lower),
        "lift_ci_upper": json_number(s.lift_ci_upper), "p_value": json_number(s.p_value),
        "p_adjusted": json_number(s.p_adjusted), "significant": bool(s.significant), "status": s.status,
        "draws": float(s.draws), "rest_draws": float(s.rest_draws), "note": s.note,
    }


class ExpectNoErrorSliceAbove(SampledExpectation):
    """No slice of entities found by a search has an error rate above the limit (SPEC 12.2)."""

    metric: Literal[tuple(CLUSTER_METRICS)] = pydantic.Field(  # type: ignore[valid-type]
        "EI", description="Cluster-wise error metric of SPEC 4: EI (share of entities with an error), OCE, UCE, "
        "ROCE, RUCE or SDE (signed: high means over-clustering).")
    per: Literal[UNITS] = pydantic.Field(  # type: ignore[valid-type]
        "entity", description="Rates per entity (each true cluster counts once) or per record (by size).")
    feature_columns: list[str] = pydantic.Field(
        default_factory=list, description="Columns of the records that describe an entity (numeric: mean over "
        "its records; other: most frequent value).", column="records")
    name_column: str | None = pydantic.Field(
        None, description="Column with the names: adds the derived features name_length and name_spellings.",
        column="batch")
    surname_column: str | None = pydantic.Field(
        None, description="Column with the surnames: adds imputed_ethnicity (per entity, from the shipped "
        "Census tables).", column="records")
    derived: bool = pydantic.Field(True, description="Also search on derived features (cluster_size, and the "
                                   "name and surname features when their columns are given).")
    max_lift: float | SuiteParameterDict | None = pydantic.Field(
        None, gt=0.0, description="Largest acceptable lift rate(slice)/rate(rest) (give this or max_rate).")
    max_rate: float | SuiteParameterDict | None = pydantic.Field(
        None, ge=0.0, description="Largest acceptable rate in a slice (give this or max_lift).")
    min_slice_share: float | SuiteParameterDict = pydantic.Field(
        0.05, gt=0.0, lt=0.5, description="Smallest share of the population a slice may have.")
    max_depth: int = pydantic.Field(2, ge=1, le=4, description="Most conditions in a slice.")
    min_draws: int | SuiteParameterDict = pydantic.Field(
        DEFAULT_MIN_DRAWS, ge=2, description="Slices (or rests) with fewer estimation draws are listed, not tested.")
    split: float = pydantic.Field(0.5, gt=0.0, lt=1.0, description="Share of the draws that search; the rest test.")
    max_slices: int = pydantic.Field(10, ge=1, description="Most slices tested (Holm's adjustment counts them).")
    seed: int = pydantic.Field(0, ge=0, description="Seed of the random split of the draws (fixed, so that a "
                               "rerun gives the same verdict).")
    decision: Literal[DECISION_RULES] = decision_field()  # type: ignore[valid-type]

    args_keys: ClassVar[tuple[str, ...]] = ("prediction_column", "reference_column")
    success_keys: ClassVar[tuple[str, ...]] = (
        "prediction_column", "record_id_column", "reference_column", "weights", "draws_column", "known_column", "ci_level", "metric",
        "per", "feature_columns", "name_column", "surname_column", "derived", "max_lift", "max_rate",
        "min_slice_share", "max_depth", "min_draws", "split", "max_slices", "seed", "decision",
        *SampledExpectation.SKIP_KEYS,
    )

    @pydantic.root_validator(skip_on_failure=True)
    def _one_limit(cls, values):
        if (values.get("max_lift") is None) == (values.get("max_rate") is None):
            raise ParameterError("give exactly one of max_lift (rate(slice) / rate(rest)) or max_rate (the "
                                 "slice's rate)" + ("; both were given" if values.get("max_lift") else ""),
                                 at="max_lift", hint="for example max_lift: 2")
        if values.get("metric") == "SDE" and values.get("max_lift") is not None:
            raise ParameterError("SDE is signed, so a lift of SDE is not a ratio of error rates", at="metric",
                                 hint="use max_rate with SDE, or UCE/OCE with max_lift")
        return values

    def _metric_configs(self, domain: dict[str, Any]) -> dict[str, MetricConfiguration]:
        value = {**self._sample_value(), "metric": self.metric, "per": self.per,
                 "feature_columns": encode_columns(self.feature_columns), "names_column": self.name_column,
                 "surname_column": self.surname_column, "derived": bool(self.derived), "max_depth": int(self.max_depth),
                 "min_share": float(self.min_slice_share), "min_draws": int(self.min_draws),
                 "alpha": 1.0 - float(self.ci_level), "ci_level": float(self.ci_level),
                 "max_lift": None if self.max_lift is None else float(self.max_lift),
                 "max_rate": None if self.max_rate is None else float(self.max_rate), "split": float(self.split),
                 "max_slices": int(self.max_slices), "seed": int(self.seed)}
        return {SLICE_SEARCH: MetricConfiguration(SLICE_SEARCH, domain, value)}

    @classmethod
    def _sentence(cls, kwargs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        metric = kwargs.get("metric") or "EI"
        design, design_params = design_fragment(kwargs)
        params: dict[str, Any] = {
            "label": METRIC_WORDS.get(metric, str(metric)), "prediction_column": kwargs.get("prediction_column"),
            "share": _pct(float(kwargs.get("min_slice_share") or 0.05)),
            "level": fmt_level(float(kwargs.get("ci_level") or 0.95)), **design_params,
        }
        if kwargs.get("max_rate") is not None:
            params["limit"] = fmt_number(kwargs["max_rate"])
            above = "above $limit"
        else:
            params["limit"] = fmt_number(kwargs.get("max_lift"), 2)
            above = "more than $limit times that of the other entities"
        start = "No slice of at least $share of the entities of $prediction_column, found by searching their features, has"
        rule = kwargs.get("decision") or DEFAULT_RULE
        if rule == "significant":
            template = (f"{start} a $label significantly {above} ($level confidence, one-sided, Holm-adjusted over "
                        "the slices tested, on draws the search did not use)")
        elif rule == "interval":
            template = f"{start} a $level interval of its $label reaching {above.replace('more than', 'beyond')} (confidently within)"
        else:
            template = f"{start} an estimated $label {above}"
        return template + f", from {design}.", params

    def _validate(self, metrics: dict, runtime_configuration=None, execution_engine=None):
        res = metrics[SLICE_SEARCH]
        level = float(self.ci_level)
        base = {"metric": self.metric, "label": METRIC_WORDS[self.metric], "per": self.per,
                "decision": self.decision, "decision_words": rule_phrase(self.decision), "ci_level": level,
                "max_lift": self.max_lift, "max_rate": self.max_rate, "min_slice_share": float(self.min_slice_share),
                "draws": res["draws"], "sampled_clusters": res["sampled_clusters"], "design": res["design"],
                "seed": int(self.seed), "split": float(self.split)}
        if "skip" in res:
            return self.skipped(base, res["skip"], observed_text="not evaluated: too few draws to split")
        result = res["result"]
        by_rate = self.max_rate is not None
        limit = float(self.max_rate if by_rate else self.max_lift)  # type: ignore[arg-type]
        rows, failed = [], []
        for s in result.slices:
            row = _slice_details(s)
            value, lo, hi = (s.rate.estimate, s.rate.ci_lower, s.rate.ci_upper) if by_rate else (
                s.lift, s.lift_ci_lower, s.lift_ci_upper)
            what = f"the {'rate' if by_rate else 'lift'} of {s.description}"
            if s.status != "ok" or value is None or math.isnan(value):
                row["verdict"] = f"not tested ({s.status})" if s.status != "ok" else "not tested (no estimate)"
                flagged = False
            elif self.decision == "significant":
                flagged = bool(s.significant)
                row["verdict"] = (f"above the limit: {what} {fmt_number(value, 2)} is significantly above "
                                  f"{fmt_number(limit, 2)} (adjusted p {fmt_p(s.p_adjusted)})" if flagged else
                                  f"within the limit: {what} is not significantly above {fmt_number(limit, 2)} "
                                  f"(adjusted p {fmt_p(s.p_adjusted)})")
            else:
                ok_interval = not (math.isnan(lo) or math.isnan(hi))
                found = decide(self.decision, estimate=value, lower=lo if ok_interval else None,
                               upper=hi if ok_interval else None, high=limit, level=level, what=what)
                flagged = not found.passed
                row["verdict"] = ("above the limit: " if flagged else "within the limit: ") + found.sentence
            row["flagged"] = flagged
            rows.append(row)
            if flagged:
                failed.append(s.description)
        tested = [r for r in rows if r["status"] == "ok"]
        key = "rate" if by_rate else "lift"
        worst = max((r for r in tested if r[key] is not None), key=lambda r: r[key], default=None)
        observed = None if worst is None else worst[key]
        summary = (f"{len(rows)} slice(s) found on {result.k_search} search draws, {len(tested)} tested on "
                   f"{result.k_estimate} other draws (Holm over {len(tested)})")
        text = summary if worst is None else (
            f"largest {key} {fmt_number(observed, 2)} ({worst['slice']}, adjusted p {fmt_p(worst['p_adjusted'])}); "
            + summary)
        o = result.overall
        details = {**base, "slices": rows, "failed_slices": failed, "hypothesis": result.hypothesis,
                   "overall_rate": json_number(o.estimate), "overall_ci_lower": json_number(o.ci_lower),
                   "overall_ci_upper": json_number(o.ci_upper), "features": list(result.features),
                   "notes": list(res["notes"]), "k_search": result.k_search, "k_estimate": result.k_estimate,
                   "observed_text": text, "power": res.get("power")}
        details["verdict"] = (f"above the limit: {', '.join(failed)}" if failed else
                              "no slice above the limit" if rows else "no slice found: the search part shows no "
                              "feature that separates the errors")
        details["note"] = details["verdict"]
        return {"success": not failed, "result": {"observed_value": json_number(observed), "details": details}}

    @classmethod
    @renderer(renderer_type=LegacyDiagnosticRendererType.UNEXPECTED_TABLE)
    def _diagnostic_unexpected_table_renderer(cls, configuration=None, result=None, runtime_configuration=None,
                                              **kwargs):
        blocks = cls.common_blocks(configuration, result)
        details = result_details(result)
        if details.get("skipped") or "slices" not in details:
            return blocks or None
        return blocks + slice_blocks(details)


def slice_blocks(details: dict[str, Any]) -> list[Any]:
    """The Data Docs section of a slice search: how the slices were found, one sentence per slice
    and a table (every value an escaped template parameter)."""
    level = fmt_level(float(details.get("ci_level") or 0.95))
    slices = details.get("slices") or []
    how = ("Slices were searched for on $k_search draws chosen at random and tested on the other $k_estimate "
           "(seed $seed), so the search cannot flatter its own test; the p-values test $hypothesis. Overall "
           "$label: $overall ($level CI $overall_lo to $overall_hi). Features: $features.")
    params = {"k_search": str(details.get("k_search")), "k_estimate": str(details.get("k_estimate")),
              "seed": str(details.get("seed")), "hypothesis": str(details.get("hypothesis") or "").removeprefix("H0: "),
              "label": str(details.get("label")), "overall": fmt_number(details.get("overall_rate")), "level": level,
              "overall_lo": fmt_number(details.get("overall_ci_lower")),
              "overall_hi": fmt_number(details.get("overall_ci_upper")),
              "features": ", ".join(details.get("features") or []) or "none"}
    blocks: list[Any] = [string_block(how, params, tag="p")]
    for note in details.get("notes") or []:
        blocks.append(string_block("Note: $note", {"note": str(note)}, tag="div"))
    power = details.get("power")
    power_block = None if not power else string_block(
        "$text", {"text": "What an empty result can miss: " + str(power.get("sentence") or "")
                  + " (SPEC 12.2 \"Power\": found means reported significant against this check's limit; the "
                  "slice is planted in this benchmark at its estimated error rate and searched for with this check's "
                  "options and features.)"}, tag="p")
    if not slices:
        blocks.append(string_block("$text", {"text": "No slice found: no feature separates the errors on the "
                                             "search draws."}, tag="p"))
        return blocks + ([power_block] if power_block else [])
    for s in slices:
        blocks.append(string_block("$text", {"text": slice_sentence(s, level=level, per=str(details.get("per")))},
                                   tag="p"))
    header = ["Slice", f"Rate ({level} CI)", "Share", f"Lift ({level} CI)", "Adjusted p", "Draws", "Verdict"]
    table = [[s["slice"], f"{fmt_number(s['rate'])} ({fmt_number(s['rate_ci_lower'])}–{fmt_number(s['rate_ci_upper'])})",
              _pct(s["share"]),
              f"{fmt_number(s['lift'], 2)} ({fmt_number(s['lift_ci_lower'], 2)}–{fmt_number(s['lift_ci_upper'], 2)})",
              fmt_p(s["p_adjusted"]), f"{s['draws']:g}", s.get("verdict", "")] for s in slices]
    blocks.append(table_block(f"Slices of high {details.get('label')} (aggregates only)", header, table))
    return blocks + ([power_block] if power_block else [])
