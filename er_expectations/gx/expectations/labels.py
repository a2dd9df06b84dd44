"""Labelling quality control (SPEC 9): one expectation per rule, on a labelling batch.

The batch is the one :func:`er_expectations.analysis.labelling_batch` builds (see that module): the
labels, one row per draw, stacked over the records they refer to. Every expectation reads
one metric, ``er.label_checks``, which splits the batch and runs
:func:`er_expectations.check_labels` once; the seven expectations of a suite that name the
same columns share it (GX deduplicates metrics by their arguments). An expectation only
keeps the violations of its rule, compares and renders: a plain sentence, and a table of
the failing draws (draw, rule, records, what is wrong).

=====  ====================================================================  ==========
rule   expectation                                                           severity
=====  ====================================================================  ==========
1      ``expect_labels_removed_within_predicted_cluster``                    critical
2      ``expect_labels_sampled_record_not_removed``                          critical
3      ``expect_labels_added_outside_predicted_cluster``                     critical
4      ``expect_labels_record_ids_to_exist``                                 critical
5      ``expect_labels_added_records_to_resemble_sampled_record`` (mostly)   warning
6      ``expect_labels_consistent_across_draws``                             critical
7      ``expect_labels_true_cluster_to_match``                               critical
=====  ====================================================================  ==========
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from great_expectations.compatibility import pydantic
from great_expectations.core.result_format import ResultFormat
from great_expectations.core.suite_parameters import SuiteParameterDict
from great_expectations.expectations.expectation import parse_result_format
from great_expectations.render import LegacyDiagnosticRendererType
from great_expectations.render.renderer.renderer import renderer
from great_expectations.validator.metric_configuration import MetricConfiguration

from er_expectations.analysis.labelqc import SCORERS
from er_expectations.analysis.labels import RULES
from er_expectations.gx.docs.render import result_details, table_block
from er_expectations.gx.expectations.base import ERExpectation, ParameterError, result_level
from er_expectations.gx.metrics.labels import LABEL_CHECK_KEYS, LABEL_CHECKS

__all__ = [
    "LABEL_EXPECTATIONS",
    "ExpectLabelsAddedOutsidePredictedCluster",
    "ExpectLabelsAddedRecordsToResembleSampledRecord",
    "ExpectLabelsConsistentAcrossDraws",
    "ExpectLabelsRecordIdsToExist",
    "ExpectLabelsRemovedWithinPredictedCluster",
    "ExpectLabelsSampledRecordNotRemoved",
    "ExpectLabelsTrueClusterToMatch",
]

#: Failing draws listed under a result below ``COMPLETE`` when result_format does not say
#: (GX's own default for partial unexpected lists).
DEFAULT_LISTED = 20
#: Record ids shown in one cell of the failing-draw table (the result keeps them all).
SHOWN_RECORDS = 12


class _LabelsExpectation(ERExpectation):
    """Abstract base: the columns of a labelling batch and the result of one rule."""

    reads_labels: ClassVar[bool] = True

    prediction_column: str = pydantic.Field(
        ..., description="Column with the predicted cluster id of each record in the prediction the labels "
        "were made against (filled on the record rows of the labelling batch).", column="batch")
    record_id_column: str = pydantic.Field(
        ..., description="Column with the record id: the drawn record on the label rows, the record on the "
        "record rows of the labelling batch.", column="batch")
    draw_column: str = pydantic.Field(
        "draw", description="Column with the draw number (filled on label rows, empty on record rows).", column="batch")
    removed_column: str = pydantic.Field(
        "removed", description="Column with the records removed from the drawn record's predicted cluster (A_r).", column="batch")
    added_column: str = pydantic.Field(
        "added", description="Column with the records added to the drawn record's cluster (B_r).", column="batch")
    predicted_cluster_column: str | None = pydantic.Field(
        "predicted_cluster", description="Column with the predicted cluster id the labeller started from, used "
        "when the batch has it: labels made against another release are then an error.", column="batch")
    true_cluster_column: str | None = pydantic.Field(
        "true_cluster", description="Column with the true cluster id the labeller gave, used when the batch has "
        "it (rule 7).", column="batch")

    #: The SPEC 9 rule number of the expectation.
    rule: ClassVar[int] = 0
    #: How a failed expectation is treated when the suite does not say (read by config.suite).
    default_severity: ClassVar[str] = "critical"
    args_keys: ClassVar[tuple[str, ...]] = ("record_id_column", "prediction_column")
    success_keys: ClassVar[tuple[str, ...]] = (
        "record_id_column", "prediction_column", "draw_column", "removed_column", "added_column",
        "predicted_cluster_column", "true_cluster_column",
    )

    @pydantic.root_validator(pre=True)
    def _default_severity(cls, values):
        # GX's field default is critical; a rule with another default states it explicitly, so
        # that GX's configuration (which drops values equal to the field default) keeps it
        if cls.default_severity != "critical" and values.get("severity") is None:
            values = {**values, "severity": cls.default_severity}
        return values

    # -- metric ----------------------------------------------------------------------------
    def _check_kwargs(self) -> dict[str, Any]:
        """The value kwargs of ``er.label_checks``: the batch's columns (rules 1–4, 6, 7 share them)."""
        value = dict.fromkeys(LABEL_CHECK_KEYS)
        for key in _LabelsExpectation.success_keys:
            value[key] = getattr(self, key)
        value["rules"] = "strict"
        return value

    def _metric_configs(self, domain: dict[str, Any]) -> dict[str, MetricConfiguration]:
        return {LABEL_CHECKS: MetricConfiguration(LABEL_CHECKS, domain, self._check_kwargs())}

    # -- result ----------------------------------------------------------------------------
    def _passes(self, failing: int, checked: int) -> bool:
        return failing == 0

    def _validate(self, metrics: dict, runtime_configuration=None, execution_engine=None):
        qc = metrics[LABEL_CHECKS]
        frame = qc.failing(self.rule)
        failing = int(frame["draw"].nunique())
        checked = int(qc.checked.get(self.rule, 0))
        ok = self._passes(failing, checked)
        details: dict[str, Any] = {
            "rule": self.rule,
            "rule_name": RULES[self.rule].name,
            "draws": int(qc.draws),
            "checked_draws": checked,
            "failing_draws": failing,
            "violations": len(frame),
            "observed_text": _observed_text(failing, checked, self.rule, int(qc.draws)),
        }
        if qc.notes.get(self.rule):
            details["note"] = qc.notes[self.rule]
        level = result_level(runtime_configuration)
        result: dict[str, Any] = {"observed_value": failing, "details": details}
        if level != ResultFormat.BOOLEAN_ONLY:
            result.update(_unexpected(frame, checked, level, _listed(runtime_configuration)))
        if level != ResultFormat.BOOLEAN_ONLY and len(frame):
            limit = None if level == ResultFormat.COMPLETE else _listed(runtime_configuration)
            shown = frame if limit is None else frame.head(limit)
            details["failing"] = [
                {"draw": int(r.draw), "rule": int(r.rule), "records": [_json_id(i) for i in r.records],
                 "message": str(r.message)}
                for r in shown.itertuples(index=False)
            ]
        return {"success": bool(ok), "result": result}

    # -- renderers -------------------------------------------------------------------------
    @classmethod
    @renderer(renderer_type=LegacyDiagnosticRendererType.UNEXPECTED_TABLE)
    def _diagnostic_unexpected_table_renderer(cls, configuration=None, result=None, runtime_configuration=None,
                                              **kwargs):
        blocks = list(super()._diagnostic_unexpected_table_renderer(
            configuration=configuration, result=result, runtime_configuration=runtime_configuration) or [])
        details = result_details(result)
        listed = details.get("failing") or []
        if listed:
            total = int(details.get("violations") or len(listed))
            title = f"Draws that break rule {details.get('rule', cls.rule)}"
            if details.get("rule_name"):
                title += f" ({details['rule_name']})"
            if total > len(listed):
                title += f": the first {len(listed)} of {total} violations (result_format COMPLETE lists all)"
            rows = [[r.get("draw"), r.get("rule"), _records_text(r.get("records")), r.get("message")]
                    for r in listed]
            blocks.append(table_block(title, ["Draw", "Rule", "Records", "What is wrong"], rows))
        return blocks or None


def _unexpected(frame: Any, checked: int, level: ResultFormat, listed: int) -> dict[str, Any]:
    """GX's ``unexpected_*`` keys of a row-wise check, a draw being a row (as in GX's column map
    expectations): BASIC gives the counts and the first ``listed`` failing draws, SUMMARY adds
    their violation counts (most first), COMPLETE every failing draw."""
    draws = [int(d) for d in dict.fromkeys(frame["draw"].tolist())]  # each failing draw once, in order
    out: dict[str, Any] = {
        "element_count": checked,
        "unexpected_count": len(draws),
        "unexpected_percent": 100.0 * len(draws) / checked if checked else None,
        "partial_unexpected_list": draws[:listed],
    }
    if level in (ResultFormat.SUMMARY, ResultFormat.COMPLETE):
        counts = frame["draw"].value_counts(sort=False)
        ranked = sorted(draws, key=lambda d: -int(counts[d]))  # stable: ties keep the draw order
        out["partial_unexpected_counts"] = [{"value": d, "count": int(counts[d])} for d in ranked[:listed]]
    if level == ResultFormat.COMPLETE:
        out["unexpected_list"] = draws
    return out


def _json_id(value: Any) -> Any:
    """A record id as JSON (numpy integers to int, anything else but int to text)."""
    if hasattr(value, "item"):
        value = value.item()
    return value if isinstance(value, int) and not isinstance(value, bool) else str(value)


def _records_text(records: Any) -> str:
    """The records of a table row: at most :data:`SHOWN_RECORDS` ids, then how many more."""
    if not isinstance(records, list):
        return "" if records is None else str(records)
    text = "; ".join(str(i) for i in records[:SHOWN_RECORDS])
    return text + (f"; … and {len(records) - SHOWN_RECORDS} more" if len(records) > SHOWN_RECORDS else "")


def _listed(runtime_configuration: dict | None) -> int:
    fmt = parse_result_format((runtime_configuration or {}).get("result_format") or ResultFormat.BASIC)
    count = fmt.get("partial_unexpected_count")
    return DEFAULT_LISTED if count is None else max(int(count), 0)


def _observed_text(failing: int, checked: int, rule: int, draws: int) -> str:
    if checked == 0:
        return f"no draw to check for rule {rule} (of {draws:,} draws)"
    word = "draw breaks" if failing == 1 else "draws break"
    return f"{failing:,} of {checked:,} checked {word} rule {rule}" if failing else \
        f"all {checked:,} checked draws follow rule {rule}"


class ExpectLabelsRemovedWithinPredictedCluster(_LabelsExpectation):
    """Every removed record belongs to the drawn record's predicted cluster: A_r ⊂ ĉ(r) (SPEC 9, rule 1)."""

    rule: ClassVar[int] = 1

    @classmethod
    def _sentence(cls, kwargs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        return ("Every record removed in $removed_column belongs to the drawn record's predicted cluster "
                "in $prediction_column (labelling rule 1).", _params(kwargs, "removed_column", "prediction_column"))


class ExpectLabelsSampledRecordNotRemoved(_LabelsExpectation):
    """The drawn record is never removed from its own cluster: r ∉ A_r (SPEC 9, rule 2)."""

    rule: ClassVar[int] = 2

    @classmethod
    def _sentence(cls, kwargs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        return ("The drawn record in $record_id_column is never among the records removed in $removed_column "
                "(labelling rule 2).", _params(kwargs, "record_id_column", "removed_column"))


class ExpectLabelsAddedOutsidePredictedCluster(_LabelsExpectation):
    """No added record is already in the drawn record's predicted cluster: B_r ∩ ĉ(r) = ∅ (SPEC 9, rule 3)."""

    rule: ClassVar[int] = 3

    @classmethod
    def _sentence(cls, kwargs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        return ("No record added in $added_column is already in the drawn record's predicted cluster in "
                "$prediction_column (labelling rule 3).", _params(kwargs, "added_column", "prediction_column"))


class ExpectLabelsRecordIdsToExist(_LabelsExpectation):
    """Every id in A_r and B_r exists in the records table (SPEC 9, rule 4)."""

    rule: ClassVar[int] = 4

    @classmethod
    def _sentence(cls, kwargs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        return ("Every record id in $removed_column and $added_column is a record of the records table "
                "(labelling rule 4).", _params(kwargs, "removed_column", "added_column"))


class ExpectLabelsAddedRecordsToResembleSampledRecord(_LabelsExpectation):
    """Added records look like the drawn record: same block and/or a similar name (SPEC 9, rule 5, soft).

    A draw that adds records from other predicted clusters passes when each of them has the
    drawn record's block (``block_column``) or a name similarity (``scorer``, in [0, 1]) of at
    least ``min_similarity`` (``name_column``). True matches can sit in other blocks, so the
    rule is soft: it holds when at least ``mostly`` of the draws it applies to pass, and its
    severity is ``warning`` unless the suite says otherwise.
    """

    rule: ClassVar[int] = 5
    default_severity: ClassVar[str] = "warning"
    block_column: str | None = pydantic.Field(
        None, description="Column with the block of each record: an added record in the drawn record's block "
        "resembles it.", column="batch")
    name_column: str | None = pydantic.Field(
        None, description="Column with the name of each record, compared with the drawn record's name.", column="batch")
    min_similarity: float | SuiteParameterDict = pydantic.Field(
        0.8, ge=0.0, le=1.0, description="Smallest name similarity (0 to 1) for an added record to resemble "
        "the drawn record.")
    scorer: Literal[SCORERS] = pydantic.Field(  # type: ignore[valid-type]
        "token_sort_ratio", description="Name similarity (rapidfuzz): token_sort_ratio (default), ratio, "
        "token_set_ratio or jaro_winkler.")
    mostly: float | SuiteParameterDict = pydantic.Field(
        0.9, ge=0.0, le=1.0, description="Smallest share of the checked draws that must pass (a soft rule).")
    success_keys: ClassVar[tuple[str, ...]] = (
        *_LabelsExpectation.success_keys, "block_column", "name_column", "min_similarity", "scorer", "mostly")

    @pydantic.root_validator(skip_on_failure=False)
    def _block_or_name(cls, values):
        if "block_column" in values and "name_column" in values and not (
                values["block_column"] or values["name_column"]):
            raise ParameterError(f"{cls.expectation_type} compares added records with the drawn record: it needs "
                                 "block_column, name_column or both", hint="give block_column and/or name_column")
        return values

    def _check_kwargs(self) -> dict[str, Any]:
        value = super()._check_kwargs()
        value.update({"block_column": self.block_column, "name_column": self.name_column,
                      "min_similarity": float(self.min_similarity), "scorer": self.scorer, "rules": "5"})
        return value

    def _passes(self, failing: int, checked: int) -> bool:
        return checked == 0 or (checked - failing) / checked >= float(self.mostly)

    @classmethod
    def _sentence(cls, kwargs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        def given(name: str) -> Any:  # GX stores no parameter equal to its default
            value = kwargs.get(name)
            return cls.__fields__[name].default if value is None else value

        params: dict[str, Any] = {**_params(kwargs, "added_column"), "mostly": f"{100 * float(given('mostly')):g} %"}
        ways = []
        if kwargs.get("block_column"):
            params["block_column"] = kwargs["block_column"]
            ways.append("is in the drawn record's block ($block_column)")
        if kwargs.get("name_column"):
            params.update(name_column=kwargs["name_column"], min_similarity=float(given("min_similarity")),
                          scorer=given("scorer"))
            ways.append("has a name ($name_column) with a $scorer similarity of at least $min_similarity to "
                        "the drawn record's")
        how = " or ".join(ways) or "resembles the drawn record"
        return (f"In at least $mostly of the draws that add records, every record added in $added_column {how} "
                "(labelling rule 5, soft).", params)


class ExpectLabelsConsistentAcrossDraws(_LabelsExpectation):
    """Draws whose true clusters share a record have identical true clusters (SPEC 9, rule 6)."""

    rule: ClassVar[int] = 6

    @classmethod
    def _sentence(cls, kwargs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        return ("Two draws whose true clusters share a record have identical true clusters, and repeated "
                "draws of one record agree (labelling rule 6).", {})


class ExpectLabelsTrueClusterToMatch(_LabelsExpectation):
    """A true cluster id given by the labeller matches (ĉ(r) \\ A_r) ∪ B_r (SPEC 9, rule 7)."""

    rule: ClassVar[int] = 7

    @classmethod
    def _sentence(cls, kwargs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        # GX stores no parameter equal to its default: an absent key is the default column
        column = kwargs.get("true_cluster_column", cls.__fields__["true_cluster_column"].default)
        if not column:
            return ("Where the labeller gave a true cluster id, it names the set (predicted cluster minus the "
                    "removed records) plus the added records (labelling rule 7; no true cluster column given, "
                    "so nothing to check).", {})
        return ("Each true cluster id given in $true_cluster_column (when the labels have it) names the set "
                "(predicted cluster minus the removed records) plus the added records, and one set has one id "
                "(labelling rule 7).", {"true_cluster_column": column})


def _params(kwargs: dict[str, Any], *names: str) -> dict[str, Any]:
    """The named columns of ``kwargs``; GX stores no parameter equal to its default, so an
    absent one is the field's default."""
    fields = _LabelsExpectation.__fields__
    return {name: kwargs.get(name) or fields[name].default or "?" for name in names}


#: The expectation of each SPEC 9 rule, by rule number.
LABEL_EXPECTATIONS: dict[int, type[_LabelsExpectation]] = {
    cls.rule: cls for cls in (
        ExpectLabelsRemovedWithinPredictedCluster, ExpectLabelsSampledRecordNotRemoved,
        ExpectLabelsAddedOutsidePredictedCluster, ExpectLabelsRecordIdsToExist,
        ExpectLabelsAddedRecordsToResembleSampledRecord, ExpectLabelsConsistentAcrossDraws,
        ExpectLabelsTrueClusterToMatch,
    )
}
