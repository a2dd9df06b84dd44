"""``expect_error_cause_rate_to_be_below``: the share of errors of one cause stays below a limit (SPEC 12.1).

Reviewers tag each benchmark cluster's errors with causes (kind over/under, tag). The batch carries
the tags of each benchmark cluster on its records (``tags_column``: a checkpoint writes it from its
``data.tags`` file; in Python, :func:`er_expectations.analysis.error_audit.encode_tags`). The check
estimates the share of records whose entity has an error of cause ``tag`` (``share: records``), the
share of entities (``entities``) or the share among entities with an error (``erroneous``), with the
interval of SPEC 6, and decides by the rule of SPEC 13 (``decision``, default ``significant``). Its page
shows every tag's share with its interval (the untagged errors too) and example clusters per tag.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, Literal

from great_expectations.compatibility import pydantic
from great_expectations.core.suite_parameters import SuiteParameterDict
from great_expectations.render import LegacyDiagnosticRendererType
from great_expectations.render.renderer.renderer import renderer
from great_expectations.validator.metric_configuration import MetricConfiguration

from er_expectations.core.hints import did_you_mean
from er_expectations.core.text import fmt_level, fmt_number, observed_estimate
from er_expectations.gx.docs.error_audit_view import audit_blocks, rates_spec
from er_expectations.gx.docs.render import result_details
from er_expectations.gx.expectations.base import PANDAS_ONLY, json_number
from er_expectations.gx.expectations.decisions import (
    DECISION_RULES,
    decision_details,
    decision_field,
    rule_clause,
)
from er_expectations.gx.expectations.estimated import SampledExpectation, design_fragment
from er_expectations.gx.expectations.intervals import (
    ESTIMATE_CI_METHODS,
    ci_method_field,
    interval_details,
    interval_sentence,
    method_phrase,
    n_boot_field,
    seed_field,
)
from er_expectations.gx.expectations.params import ParameterError
from er_expectations.gx.metrics.error_audit import ERROR_AUDIT, encode_known_tags
from er_expectations.stats.decision import decide
from er_expectations.stats.error_audit import AUDIT_CI_METHOD, SHARE_LABELS, SHARES

__all__ = ["MAX_TAGS_SHOWN", "ExpectErrorCauseRateToBeBelow", "shown_rates"]

#: Rows of the example-cluster table on a page, over all tags.
MAX_EXAMPLES_SHOWN = 100
#: Tags a page shows (the checked tag, the untagged errors and the largest others); the rest are
#: counted (issue 29: 20,000 distinct tags made a 32 MB page).
MAX_TAGS_SHOWN = 25


def shown_rates(rows: list[dict[str, Any]], *, tag: str, untagged: str) -> tuple[list[dict[str, Any]], int, float | None]:
    """(rows shown, rows left out, the largest estimate left out): the checked tag, the untagged
    errors and the others with the largest estimates, :data:`MAX_TAGS_SHOWN` rows at most, the
    largest first then the untagged errors."""
    if len(rows) <= MAX_TAGS_SHOWN:
        return rows, 0, None
    kept = [r for r in rows if r["tag"] in (tag, untagged)]
    others = sorted((r for r in rows if r["tag"] not in (tag, untagged)),
                    key=lambda r: -(r["estimate"] if r["estimate"] is not None else -1.0))
    room = MAX_TAGS_SHOWN - len(kept)
    chosen, left = others[:room], others[room:]
    shown = sorted(chosen + [r for r in kept if r["tag"] != untagged],
                   key=lambda r: -(r["estimate"] if r["estimate"] is not None else -1.0))
    shown += [r for r in kept if r["tag"] == untagged]
    largest = max((r["estimate"] for r in left if r["estimate"] is not None), default=None)
    return shown, len(left), largest


class ExpectErrorCauseRateToBeBelow(SampledExpectation):
    """The estimated share of errors of one cause is at most max_rate (SPEC 12.1)."""

    tags_column: str = pydantic.Field(
        ..., description="Column carrying, on every record of a benchmark cluster, that cluster's error tags "
        "(written by a checkpoint from its data.tags file, or by encode_tags).", column="batch")
    tag: str = pydantic.Field(..., description="The cause checked, as reviewers wrote it; "
                              "'untagged errors' checks the errors nobody tagged.")
    max_rate: float | SuiteParameterDict = pydantic.Field(
        ..., ge=0.0, le=1.0, description="Largest acceptable share, in [0, 1].")
    share: Literal[SHARES] = pydantic.Field(  # type: ignore[valid-type]
        "records", description="records: share of records whose entity has an error of this cause; entities: "
        "share of entities; erroneous: share among the entities with an error.")
    known_tags: list[str] | None = pydantic.Field(
        None, description="The list of causes reviewers choose from: a tag outside it is an error, and a cause "
        "nobody used still gets its share (0, with its bound).")
    decision: Literal[DECISION_RULES] = decision_field()  # type: ignore[valid-type]
    ci_method: Literal[ESTIMATE_CI_METHODS] = ci_method_field(default=AUDIT_CI_METHOD)  # type: ignore[valid-type]
    n_boot: int = n_boot_field()
    seed: int | None = seed_field()
    examples: int = pydantic.Field(5, ge=0, le=100, description="Example clusters shown per tag.")

    engines: ClassVar[tuple[type, ...]] = PANDAS_ONLY
    engines_note: ClassVar[str] = "the tags column is read in memory"
    args_keys: ClassVar[tuple[str, ...]] = ("prediction_column", "reference_column", "tags_column", "tag",
                                            "max_rate")
    success_keys: ClassVar[tuple[str, ...]] = (
        "prediction_column", "record_id_column", "reference_column", "weights", "draws_column", "known_column", "tags_column",
        "tag", "max_rate", "share", "known_tags", "decision", "ci_level", "ci_method", "n_boot", "seed", "examples",
        *SampledExpectation.SKIP_KEYS,
    )

    @pydantic.validator("tag")
    def _check_tag(cls, value):
        if not value.strip():
            raise ParameterError("expected a tag name, got an empty string", hint="write the cause, e.g. tag: name typo")
        return value.strip()

    @pydantic.validator("known_tags")
    def _check_known(cls, value):
        if value is not None and (not value or not all(isinstance(t, str) and t.strip() for t in value)):
            raise ParameterError("expected a non-empty list of tag names", expected="a list of text",
                                 hint="write known_tags: [name typo, twins]")
        return value

    @pydantic.root_validator(skip_on_failure=True)
    def _tag_known(cls, values):
        from er_expectations.analysis.error_audit import UNTAGGED

        known, tag = values.get("known_tags"), values.get("tag")
        if known is not None and tag not in known and tag != UNTAGGED:

            raise ParameterError(f"the tag {tag!r} is not in known_tags", at="tag",
                                 hint=did_you_mean(str(tag), known) or f"add it to known_tags or write {UNTAGGED!r}")
        return values

    def _metric_configs(self, domain: dict[str, Any]) -> dict[str, MetricConfiguration]:
        value = {**self._sample_value(), "tags_column": self.tags_column,
                 "known_tags": encode_known_tags(self.known_tags), "ci_level": float(self.ci_level),
                 "ci_method": self.ci_method, "n_boot": int(self.n_boot), "seed": self.seed,
                 "examples": int(self.examples)}
        return {ERROR_AUDIT: MetricConfiguration(ERROR_AUDIT, domain, value)}

    @classmethod
    def _sentence(cls, kwargs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        share = kwargs.get("share") or "records"
        design, design_params = design_fragment(kwargs)
        params: dict[str, Any] = {
            "tag": kwargs.get("tag") or "?", "share_label": SHARE_LABELS.get(share, str(share)),
            "max_rate": fmt_number(kwargs.get("max_rate")), "prediction_column": kwargs.get("prediction_column"),
            "tags_column": kwargs.get("tags_column") or "?",
            "level": fmt_level(float(kwargs.get("ci_level") or 0.95)), **design_params,
        }
        template = "Estimated $share_label, for errors tagged $tag (tags in $tags_column), in $prediction_column "
        template += f"is at most $max_rate, from {design}: {rule_clause(kwargs.get('decision'), 'the share')}."
        extra, extra_params = interval_sentence(kwargs)
        return template + extra, {**params, **extra_params}

    def _validate(self, metrics: dict, runtime_configuration=None, execution_engine=None):
        from er_expectations.analysis.error_audit import UNTAGGED

        audit = metrics[ERROR_AUDIT]
        share = str(self.share)
        rates = audit.rates[audit.rates["share"] == share]
        rows = [{"tag": str(r.tag), "estimate": json_number(r.estimate), "std_error": json_number(r.std_error),
                 "ci_lower": json_number(r.ci_lower), "ci_upper": json_number(r.ci_upper),
                 "ci_method": method_phrase(r.ci_method), "note": str(r.note)} for r in rates.itertuples()]
        shown, not_shown, largest = shown_rates(rows, tag=str(self.tag), untagged=UNTAGGED)
        shown_tags = {r["tag"] for r in shown}
        picked = audit.examples[audit.examples["tag"].astype(str).isin(shown_tags)]  # examples of the tags shown
        examples = [{"tag": str(e.tag), "cluster": str(e.cluster), "kinds": str(e.kinds), "draws": int(e.draws),
                     "size": int(e.size), "records": [str(x) for x in e.records]}
                    for e in picked.head(MAX_EXAMPLES_SHOWN).itertuples()]
        details: dict[str, Any] = {
            "tag": self.tag, "share": share, "share_label": SHARE_LABELS[share], "max_rate": float(self.max_rate),
            "ci_level": float(audit.ci_level), "design": audit.design, "draws": audit.draws,
            "clusters": audit.clusters, "erroneous_draws": audit.erroneous_draws, "rates": shown,
            "tags_total": sum(r["tag"] != UNTAGGED for r in rows), "tags_not_shown": not_shown,
            "largest_not_shown": largest,
            "examples": examples, "audit_notes": list(audit.notes), "untagged": UNTAGGED,
            **interval_details(self.ci_method, self.n_boot, audit.seed),
        }
        if self.tag not in audit.estimates:
            return self.skipped(details, f"no cluster of the benchmark is tagged {self.tag!r} and known_tags does "
                                "not list it, so its share is not estimated (add it to known_tags to get its "
                                "share and bound)")
        est = audit.estimates[self.tag][share]
        if not est.defined or math.isnan(est.estimate):
            return self.skipped(details, f"the {SHARE_LABELS[share]} is undefined on this sample"
                                + (f": {est.note}" if est.note else ""))
        found = decide(str(self.decision), estimate=est.estimate, lower=est.ci_lower if est.has_interval else None,
                       upper=est.ci_upper if est.has_interval else None, high=float(self.max_rate),
                       level=float(est.ci_level), what=f"the {SHARE_LABELS[share]} tagged {self.tag!r}")
        details.update(decision_details(found))
        details.update({"estimate": json_number(est.estimate), "std_error": json_number(est.std_error),
                        "ci_lower": json_number(est.ci_lower), "ci_upper": json_number(est.ci_upper),
                        "ci_method": est.interval, "note": est.note,
                        "observed_text": observed_estimate(est.estimate, est.std_error, est.ci_lower, est.ci_upper,
                                                           ci_level=est.ci_level, clusters=est.clusters,
                                                           draws=est.draws, interval=est.interval)})
        return {"success": bool(found.passed), "result": {"observed_value": json_number(est.estimate),
                                                          "details": details}}

    @classmethod
    def chart_specs(cls, result: Any) -> list[dict[str, Any]]:
        """The Vega-Lite specifications of the charts the Data Docs page of ``result`` draws."""

        details = result_details(result)
        rows = details.get("rates") or []
        if not rows:
            return []
        return [rates_spec(rows, tag=str(details.get("tag")), share_label=str(details.get("share_label")),
                           limit=details.get("max_rate"), untagged=str(details.get("untagged")))]

    @classmethod
    @renderer(renderer_type=LegacyDiagnosticRendererType.UNEXPECTED_TABLE)
    def _diagnostic_unexpected_table_renderer(cls, configuration=None, result=None, runtime_configuration=None,
                                              **kwargs):
        blocks = cls.common_blocks(configuration, result)
        blocks += audit_blocks(result_details(result))
        return blocks or None
