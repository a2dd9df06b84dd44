"""Shared base of every er-expectations expectation: dependencies, results, renderers.

Subclasses say *what* is checked (a sentence template and the numbers); this base turns
that into GX metric dependencies, JSON-safe results and Data Docs renderers. The base
classes are abstract so GX registers only the concrete expectations.

:class:`BoundedExpectation` holds what every "statistic lies in a range" expectation shares,
as GX core expectations such as ``ExpectColumnMeanToBeBetween`` do: ``min_value`` /
``max_value`` (numbers or suite parameters ``{"$PARAMETER": name}``, filled in by GX from
``expectation_parameters`` at validation) and ``strict_min`` / ``strict_max`` (the bound
itself fails).

The parameters are declared by the pydantic fields of the classes and read by
:mod:`.params` (one declaration each; the YAML loader builds these models).
"""

from __future__ import annotations

import html
import math
from abc import abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar, Literal

import great_expectations.execution_engine as gx_engines
from great_expectations.compatibility import pydantic
from great_expectations.core.id_dict import IDDict
from great_expectations.core.result_format import ResultFormat
from great_expectations.core.suite_parameters import (
    SuiteParameterDict,
    get_suite_parameter_key,
    is_suite_parameter,
)
from great_expectations.execution_engine import (
    PandasExecutionEngine,
    SparkDFExecutionEngine,
    SqlAlchemyExecutionEngine,
)
from great_expectations.expectations.expectation import BatchExpectation, parse_result_format
from great_expectations.render import LegacyDiagnosticRendererType, LegacyRendererType
from great_expectations.render.renderer.renderer import renderer
from great_expectations.render.renderer_configuration import (
    RendererConfiguration,
    RendererValueType,
)
from great_expectations.validator.metric_configuration import MetricConfiguration
from great_expectations.validator.validator import ValidationDependencies

from er_expectations.core.severity import severity_of
from er_expectations.core.text import fmt_threshold, range_phrase, short_name
from er_expectations.engines.registry import ENGINES
from er_expectations.gx.docs.render import (
    config_of,
    result_details,
    string_block,
    table_block,
    with_severity,
)
from er_expectations.gx.expectations.params import (  # ParameterError, Threshold and threshold are re-exported for the subclasses
    ParameterError,
    Threshold,
    check_field_value,
    check_min_max,
    threshold,
)
from er_expectations.gx.metrics.release import UNSUPPORTED_ENGINE

__all__ = [
    "ON_SKIP",
    "BoundedExpectation",
    "ERExpectation",
    "SkippableExpectation",
    "ParameterError",
    "PANDAS_ONLY",
    "SUPPORTED_ENGINES",
    "engine_name",
    "Threshold",
    "bounds_phrase",
    "json_number",
    "threshold",
]

#: Number of sampled clusters listed under a failed estimate.
TOP_CLUSTERS = 10

#: The GX execution engines our metrics run on: those of the engine registry.
SUPPORTED_ENGINES: tuple[type, ...] = tuple(dict.fromkeys(getattr(gx_engines, entry.gx_engine) for entry in ENGINES.values()))
#: Only pandas: for expectations whose metrics compare in memory (drift, labelling QC).
PANDAS_ONLY: tuple[type, ...] = (PandasExecutionEngine,)

_ENGINE_NAMES = {PandasExecutionEngine: "pandas", SqlAlchemyExecutionEngine: "SQL (SQLAlchemy)",
                 SparkDFExecutionEngine: "Spark"}


def engine_name(engine: type) -> str:
    """The name users know an engine by."""
    return _ENGINE_NAMES.get(engine, engine.__name__)


#: Why a row_condition is refused (shown to the user; SPEC 2.1 and 8).
ROW_CONDITION_REFUSED = (
    "row_condition is not supported by er-expectations expectations: it keeps a subset of the "
    "records, which changes the population the benchmark was sampled from (the design-based "
    "estimates, their SE and interval would no longer describe it) and hides the false links "
    "between the kept records and the others (SPEC 8: a subgroup is a set of entities, never a "
    "set of records). Validate the whole release; for a subset, filter the DataFrame into its "
    "own batch and use a benchmark sampled from that subset."
)


def json_number(x: Any) -> float | int | None:
    """A JSON-safe number: numpy scalars to Python, NaN to None, ±inf kept as float."""
    if x is None:
        return None
    if hasattr(x, "item"):
        x = x.item()
    if isinstance(x, float) and math.isnan(x):
        return None
    return x


def bounds_phrase(kwargs: dict[str, Any]) -> str:
    """'is between 0.85 and 0.95', 'is greater than 0.9', 'is at most the suite parameter x'."""
    lo, hi = kwargs.get("min_value"), kwargs.get("max_value")
    flags = {"min": kwargs.get("strict_min"), "max": kwargs.get("strict_max")}
    if not any(v is True or is_suite_parameter(v) for v in (lo, hi, *flags.values())):
        return range_phrase(lo, hi)
    parts = []
    for side, bound, plain, strict in (("min", lo, "at least", "greater than"), ("max", hi, "at most", "less than")):
        if is_suite_parameter(bound):
            value = f"the suite parameter {get_suite_parameter_key(bound)}"
        elif bound in (None, -math.inf, math.inf):
            continue
        else:
            value = fmt_threshold(bound)
        flag = flags[side]
        op = f"{plain} (strictly if {get_suite_parameter_key(flag)})" if is_suite_parameter(flag) else (
            strict if flag is True else plain)
        parts.append(f"{op} {value}")
    return "is " + " and ".join(parts) if parts else range_phrase(None, None)


def result_level(runtime_configuration: dict | None) -> ResultFormat:
    """The result_format level of this validation (GX's default is BASIC)."""
    fmt = parse_result_format((runtime_configuration or {}).get("result_format") or ResultFormat.BASIC)
    return ResultFormat(fmt["result_format"])


#: The sentence parameter that shows a threshold, where its name differs (see ``_sentence_for``).
_SENTENCE_PARAMS = {"ci_level": "level", "max_change": "limit", "max_relative_change": "limit"}

#: Fields of every GX expectation that are not parameters of ours.
_NOT_PARAMETERS = frozenset(BatchExpectation.__fields__) | {"row_condition", "condition_parser"}


class ERExpectation(BatchExpectation):
    """Abstract base: renders a plain-English sentence and a human observed value."""

    prediction_column: str = pydantic.Field(..., description="Column with the predicted cluster id of each record.",
                                          column="batch")
    #: The record id column: when given, a batch with duplicated records is an error (SPEC 2.1).
    record_id_column: str | None = pydantic.Field(
        None, description="Column with the record id: a batch with a duplicated record is then an error "
        "instead of a silently wrong statistic (checkpoints also check every input file).", column="batch")
    #: Declared only to refuse them with the reason (see ROW_CONDITION_REFUSED).
    row_condition: Any = None
    condition_parser: Any = None

    domain_keys: ClassVar[tuple[str, ...]] = ("batch_id", "row_condition", "condition_parser")
    metric_dependencies: ClassVar[tuple[str, ...]] = ()
    #: The GX engines this expectation's metrics run on; on any other, one clear error
    #: (``er.unsupported_engine``) naming them, with ``engines_note`` saying why.
    engines: ClassVar[tuple[type, ...]] = SUPPORTED_ENGINES
    engines_note: ClassVar[str] = ""
    #: whether the check reads a baseline release's column (the drift checks of SPEC 10): the
    #: checkpoint then adds the baseline's prediction to each batch (run/baselines.py)
    reads_baseline: ClassVar[bool] = False
    #: whether the check validates a labels table (SPEC 9) rather than a release
    reads_labels: ClassVar[bool] = False
    #: the parameter that names a release of the checkpoint to compare with, if any
    pinned_release_parameter: ClassVar[str | None] = None
    #: (the parameter naming what the check compares, the suffix of its short name), for checks
    #: named by what they compare ("matching_rate_change"); ``None``: named by their type
    label_from: ClassVar[tuple[str, str] | None] = None
    library_metadata: ClassVar[dict[str, Any]] = {
        "maturity": "beta",
        "tags": ["entity resolution", "record linkage", "deduplication"],
        "contributors": ["er-expectations developers"],
    }

    @pydantic.validator("row_condition", "condition_parser", pre=True)
    def _refuse_row_condition(cls, value):
        if value not in (None, ""):
            raise ValueError(ROW_CONDITION_REFUSED)
        return None

    @pydantic.validator("*", pre=True)
    def _check_declared(cls, value, field):
        return value if field.name in _NOT_PARAMETERS else check_field_value(field, value)

    @classmethod
    def parameter_fields(cls) -> dict[str, Any]:
        """The expectation's own parameters (pydantic fields), without GX's common fields
        (``id``, ``meta``, ``notes``, ``severity``, ...) and the refused ``row_condition``."""
        return {name: field for name, field in cls.__fields__.items() if name not in _NOT_PARAMETERS}

    @classmethod
    def short_label(cls, kwargs: Mapping[str, Any]) -> str:
        """The check's short name in tables and history: ``pairwise_f``, ``hill_number(q=2)``,
        ``matching_rate_change`` (a suite's ``id:`` replaces it, :func:`..outcome.check_id`)."""
        if cls.label_from is not None:
            parameter, suffix = cls.label_from
            return f"{short_name(cls.expectation_type, kwargs, what=str(kwargs.get(parameter, '?')))}_{suffix}"
        return short_name(cls.expectation_type, kwargs)

    # -- what subclasses provide ---------------------------------------------------------
    @classmethod
    @abstractmethod
    def _sentence(cls, kwargs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """A template with $params and the params (all user/data values go in params)."""

    @abstractmethod
    def _metric_configs(self, domain: dict[str, Any]) -> dict[str, MetricConfiguration]:
        """The metrics this expectation reads, by the key used in ``metrics``."""

    # -- GX plumbing ---------------------------------------------------------------------
    def get_validation_dependencies(self, execution_engine=None, runtime_configuration=None):
        """The metrics of :meth:`_metric_configs` on the whole batch.

        Same result as GX's ``BatchExpectation.get_validation_dependencies`` followed by
        ``get_metric_kwargs`` for the domain, without rebuilding the expectation's
        configuration for every key (GX calls this twice per expectation and batch). On an
        engine we do not support the only dependency is ``er.unsupported_engine``, whose
        provider raises one clear error (see ``gx.metrics``).
        """

        runtime = runtime_configuration or {}
        result_format = parse_result_format(runtime.get("result_format", self.result_format))
        deps = ValidationDependencies(metric_configurations={}, result_format=result_format)
        domain = IDDict({"batch_id": self.batch_id or None, "table": None, "row_condition": None,
                         "condition_parser": None})
        if execution_engine is not None and not isinstance(execution_engine, self.engines):
            value = {"expectation": self.expectation_type, "engine": type(execution_engine).__name__,
                     "supported": ", ".join(engine_name(e) for e in self.engines),
                     "why": self.engines_note}
            configs = {UNSUPPORTED_ENGINE: MetricConfiguration(UNSUPPORTED_ENGINE, domain, value)}
        else:
            configs = self._metric_configs(domain)
        for name, cfg in configs.items():
            deps.set_metric_configuration(metric_name=name, metric_configuration=cfg)
        return deps

    # -- renderers -----------------------------------------------------------------------
    @classmethod
    def _sentence_for(cls, kwargs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """:meth:`_sentence` with the range phrase that knows strict bounds and suite parameters."""
        plain = {k: (None if is_suite_parameter(v) else v) for k, v in kwargs.items()}
        template, params = cls._sentence(plain)
        if "range" in params:
            params["range"] = bounds_phrase(kwargs)
        for key, value in kwargs.items():  # a threshold given as a suite parameter: named, not a default
            shown = _SENTENCE_PARAMS.get(key, key)
            if is_suite_parameter(value) and shown in params:
                params[shown] = f"the suite parameter {get_suite_parameter_key(value)}"
        return template, params

    @classmethod
    def _prescriptive_template(cls, renderer_configuration: RendererConfiguration) -> RendererConfiguration:
        template, params = cls._sentence_for(dict(renderer_configuration.kwargs))
        for name, value in params.items():
            kind = RendererValueType.NUMBER if isinstance(value, (int, float)) else RendererValueType.STRING
            renderer_configuration.add_param(name=name, param_type=kind, value=value)
        renderer_configuration.template_str = template
        return renderer_configuration

    @classmethod
    @renderer(renderer_type=LegacyRendererType.PRESCRIPTIVE)
    def _prescriptive_renderer(cls, configuration=None, result=None, runtime_configuration=None, **kwargs):
        cfg = config_of(configuration, result)
        if cfg is None:
            return []
        template, params = cls._sentence_for(dict(cfg.kwargs))
        styling = (runtime_configuration or {}).get("styling") or {}
        block = string_block(template, params, styling=styling)
        # a suite page says how a failure counts (a validation page removes it: its status cells say it)
        return [with_severity(block, severity_of(getattr(cfg, "severity", None)))]

    @classmethod
    @renderer(renderer_type=LegacyDiagnosticRendererType.OBSERVED_VALUE)
    def _diagnostic_observed_value_renderer(cls, configuration=None, result=None, runtime_configuration=None,
                                            **kwargs):
        details = result_details(result)
        text = details.get("observed_text")
        if not text:
            observed = (result.result or {}).get("observed_value") if result is not None and result.result else None
            if observed is None:
                return "--"
            text = str(observed)
        return string_block("$observed", {"observed": text})

    @classmethod
    @renderer(renderer_type=LegacyDiagnosticRendererType.UNEXPECTED_TABLE)
    def _diagnostic_unexpected_table_renderer(cls, configuration=None, result=None, runtime_configuration=None,
                                              **kwargs):
        return cls.common_blocks(configuration, result) or None

    @classmethod
    def common_blocks(cls, configuration: Any, result: Any) -> list:
        """The blocks every check's result shows under its row (SPEC 13): the suite author's
        note, skipped or the decision line (or why it failed), and the clusters that contribute
        most to the error. Checks with their own tables add them after these."""
        details = result_details(result)
        blocks = []
        cfg = config_of(configuration, result)
        for author_note in _notes(cfg):
            # the suite author's note for auditors (GX shows notes on suite pages only)
            blocks.append(string_block("Note: $author_note", {"author_note": author_note}, tag="div",
                                       styling={"classes": ["er-note", "text-muted"]}))
        note = details.get("note")
        if details.get("skipped"):  # SPEC 13: not evaluated, whatever GX was told (on_skip)
            blocks.append(string_block("Not evaluated (skipped): $why",
                                       {"why": details.get("skip_reason") or note or "no reason recorded"},
                                       tag="div", styling={"classes": ["er-skipped"]}))
        elif details.get("decision") and details.get("verdict"):  # SPEC 13: one rule, said the same way
            passed = result is not None and result.success
            blocks.append(string_block("Decision ($rule): $verdict", {
                "rule": details.get("decision_words") or details["decision"], "verdict": details["verdict"]},
                tag="div", styling={"classes": ["er-decision", "er-pass" if passed else "er-fail"]}))
            if note and note != details["verdict"] and note not in str(details["verdict"]):
                blocks.append(string_block("Note: $note", {"note": note}))
        elif note and result is not None and not result.success:
            blocks.append(string_block("Why: $note", {"note": note}))
        for limit in details.get("limits") or []:  # what the sample cannot show (SPEC 6.1)
            warn = limit.startswith("Warning")
            blocks.append(string_block("$limit", {"limit": limit}, tag="div",
                                       styling={"classes": ["er-limit", "er-warn" if warn else "text-muted"]}))
        top = details.get("top_clusters") or []
        if top and result is not None and not result.success:
            rows = [[r["cluster"], r["size"], r["predicted_clusters"], _fmt_err(r["OCE"]), _fmt_err(r["UCE"]),
                     f"{100 * r['error_share']:.1f} %"] for r in top]
            blocks.append(table_block(
                f"Sampled clusters that contribute most to the error of the {details.get('label', 'estimate')}",
                ["Benchmark cluster", "Records", "Predicted clusters", "Over-clustering (OCE)",
                 "Under-clustering (UCE)", "Share of error"],
                rows,
            ))
        return blocks


#: What a skipped check returns to GX (SPEC 13), which knows only success and failure.
ON_SKIP: tuple[str, ...] = ("pass", "fail")


class SkippableExpectation(ERExpectation):
    """Abstract base of checks that may not be evaluable on a batch (SPEC 13): no baseline release,
    too few common records, too little history, no group large enough, a metric undefined on the
    sample. Such a check is **skipped**, never passed: its result carries ``details.skipped = true``
    and ``details.skip_reason``, which the run report, Data Docs, history and alerts read
    (:mod:`er_expectations.gx.outcome`). GX itself knows only success and failure: ``on_skip``
    says which of the two a skipped check returns to it (``pass``, the default, so that the first
    release of a series does not fail; ``fail`` for a gate that must have been evaluated).
    """

    on_skip: Literal["pass", "fail"] = pydantic.Field(
        "pass", description="What a skipped check (not evaluable: no baseline, too few common records, too "
        "little history, no testable group, a metric undefined on the sample) returns to GX: pass (the default; "
        "er-expectations still reports it as skipped, never as passed) or fail.")

    SKIP_KEYS: ClassVar[tuple[str, ...]] = ("on_skip",)

    def skipped(self, details: dict[str, Any], reason: str, *, observed: Any = None,
                observed_text: str | None = None) -> dict[str, Any]:
        """The GX result of a check that was not evaluated, with its reason (SPEC 13)."""
        details.update({"skipped": True, "skip_reason": reason, "note": reason, "on_skip": self.on_skip,
                        "observed_text": observed_text or f"skipped: {reason}"})
        return {"success": self.on_skip == "pass",
                "result": {"observed_value": json_number(observed), "details": details}}


class BoundedExpectation(ERExpectation):
    """Abstract base of "the statistic lies in [min_value, max_value]" expectations.

    Follows GX core's ``ExpectColumnMeanToBeBetween``: bounds may be suite parameters
    (``{"$PARAMETER": "min_recall"}``, filled in from ``expectation_parameters`` when GX
    validates), ``strict_min: true`` means value > min_value and ``strict_max: true`` means
    value < max_value.
    """

    min_value: Threshold = threshold("min", ge=0.0)
    max_value: Threshold = threshold("max", ge=0.0)
    strict_min: bool | SuiteParameterDict = pydantic.Field(
        False, description="true: the value must be greater than min_value, not equal.")
    strict_max: bool | SuiteParameterDict = pydantic.Field(
        False, description="true: the value must be less than max_value, not equal.")

    BOUND_KEYS: ClassVar[tuple[str, ...]] = ("min_value", "max_value", "strict_min", "strict_max")

    @pydantic.root_validator(skip_on_failure=False)
    def _check_bounds(cls, values):
        return check_min_max(cls.expectation_type, values)

    def check_bounds_filled(self) -> None:
        """Raise when a bound is still a suite parameter without a value (an error, never a pass)."""
        for key in self.BOUND_KEYS:
            if is_suite_parameter(getattr(self, key)):
                raise ValueError(f"{key}: suite parameter {get_suite_parameter_key(getattr(self, key))!r} "
                                 "has no value; pass it in expectation_parameters")

    def in_range(self, lo: float, hi: float | None = None) -> bool:
        """True when [lo, hi] (or the value lo) lies within the bounds once parameters are filled in
        (``None``: unbounded; a strict bound is excluded; NaN never does)."""
        self.check_bounds_filled()
        hi = lo if hi is None else hi
        if math.isnan(lo) or math.isnan(hi):
            return False
        low, high = self.min_value, self.max_value
        if low is not None and (lo < low or (self.strict_min and lo == low)):
            return False
        return not (high is not None and (hi > high or (self.strict_max and hi == high)))

    @staticmethod
    def wants_error_table(runtime_configuration: dict | None) -> bool:
        """The table of the clusters behind an error is a SUMMARY / COMPLETE detail, like GX
        core's partial unexpected lists; BASIC gets the observed value and the estimate only."""
        return result_level(runtime_configuration) in (ResultFormat.SUMMARY, ResultFormat.COMPLETE)


def _notes(cfg: Any) -> list[str]:
    """The expectation's notes as plain text (they are stored HTML-escaped, see gx.suites)."""

    notes = getattr(cfg, "notes", None) if cfg is not None else None
    if not notes:
        return []
    if isinstance(notes, str):
        notes = [notes]
    return [html.unescape(str(n)) for n in notes]


def _fmt_err(x: float) -> str:
    return f"{x:.2f}" if not float(x).is_integer() else f"{int(x)}"
