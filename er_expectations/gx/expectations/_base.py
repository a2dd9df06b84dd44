"""Shared base of every er-expectations expectation: dependencies, results, renderers.

Subclasses say *what* is checked (a sentence template and the numbers); this base turns
that into GX metric dependencies, JSON-safe results and Data Docs renderers. The base
classes are abstract so GX registers only the concrete expectations.

:class:`BoundedExpectation` holds what every "statistic lies in a range" expectation shares,
as GX core expectations such as ``ExpectColumnMeanToBeBetween`` do: ``min_value`` /
``max_value`` (numbers or suite parameters ``{"$PARAMETER": name}``, filled in by GX from
``expectation_parameters`` at validation) and ``strict_min`` / ``strict_max`` (the bound
itself fails).

The pydantic fields of the expectation classes are the one declaration of every parameter:
type, required or default, bounds (``ge``/``gt``/``le``/``lt``, and ``allow_inf`` for the
numbers that may be infinite), ``Literal`` choices, ``column=`` for a parameter that names a
column, and the description. :func:`check_field_value` reads every value strictly by its
field; cross-parameter rules are root validators that raise :class:`ParameterError`. The
YAML suite loader (``er_expectations.config``) builds these models from the YAML values
(:func:`validate_parameters`) and reports each :class:`Problem` at its line, so a suite file
and a GX constructor refuse the same values.
"""

from __future__ import annotations

import math
import numbers
import operator
import types
import typing
from abc import abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

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

from ...hints import did_you_mean, quote_list
from ...text import fmt_threshold, format_number, range_phrase
from ..render import config_of, result_details, string_block, table_block

__all__ = [
    "BoundedExpectation",
    "ERExpectation",
    "ParameterError",
    "PANDAS_ONLY",
    "SUPPORTED_ENGINES",
    "engine_name",
    "Threshold",
    "bounds_phrase",
    "check_min_max",
    "check_field_value",
    "column_parameters",
    "field_choices",
    "json_number",
    "Problem",
    "threshold",
    "validate_parameters",
]

#: Number of sampled clusters listed under a failed estimate.
TOP_CLUSTERS = 10

#: The GX execution engines our metrics run on (one ``er.release`` implementation each).
SUPPORTED_ENGINES: tuple[type, ...] = (PandasExecutionEngine, SqlAlchemyExecutionEngine, SparkDFExecutionEngine)
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


class ParameterError(ValueError):
    """A parameter value, or a rule between parameters, that does not hold.

    ``message`` says what is wrong, ``at`` names the parameter to point at (the YAML loader
    reports the error at that parameter's line; a dotted name such as ``weights.column``
    points inside it), ``hint`` says how to fix it and ``expected``, set for a value of the
    wrong type, what the field takes (the YAML loader words it with the value as written).
    """

    def __init__(self, message: str, *, at: str | None = None, hint: str | None = None,
                 expected: str | None = None) -> None:
        super().__init__(message, at, hint, expected)  # kept in args: pydantic shows an exception's __dict__

    @property
    def message(self) -> str:
        return self.args[0]

    @property
    def at(self) -> str | None:
        return self.args[1]

    @property
    def hint(self) -> str | None:
        return self.args[2]

    @property
    def expected(self) -> str | None:
        return self.args[3]

    def __str__(self) -> str:
        return f"{self.message}; {self.hint}" if self.hint else self.message

    def __reduce__(self) -> tuple[Any, ...]:
        return _rebuild_parameter_error, self.args


def _rebuild_parameter_error(message: str, at: str | None, hint: str | None,
                             expected: str | None = None) -> ParameterError:
    return ParameterError(message, at=at, hint=hint, expected=expected)


#: A bound: a number or a suite parameter ``{"$PARAMETER": name}`` filled in by GX.
Threshold = float | SuiteParameterDict | None


def threshold(side: Literal["min", "max"], *, ge: float | None = None, le: float | None = None) -> Any:
    """The pydantic field of ``min_value`` / ``max_value``: optional, may be infinite, within [ge, le]."""
    if side == "min":
        doc = "Smallest acceptable value"
    else:
        doc = "Largest acceptable value (.inf for no limit)"
    doc += ', or a suite parameter {"$PARAMETER": name}.'
    return pydantic.Field(None, ge=ge, le=le, allow_inf=True, description=doc)


def field_arms(field: Any) -> tuple[Any, ...]:
    """The types a pydantic field takes besides ``None`` and suite parameters (``dict``)."""
    annotation = field.outer_type_
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        arms: tuple[Any, ...] = typing.get_args(annotation)
    else:
        arms = (annotation,)
    return tuple(arm for arm in arms if arm is not type(None) and arm is not dict)


def number_type(field: Any) -> type | None:
    """``int`` or ``float`` when the field takes a plain number, else ``None`` (booleans are not numbers)."""
    for arm in field_arms(field):
        if isinstance(arm, type) and arm is not bool:
            if issubclass(arm, int):
                return int
            if issubclass(arm, float):
                return float
    return None


def field_choices(field: Any) -> tuple[Any, ...]:
    """The values of a ``Literal`` field (empty for any other)."""
    arms = field_arms(field)
    if len(arms) == 1 and typing.get_origin(arms[0]) is Literal:
        return typing.get_args(arms[0])
    return ()


def _check_bounds(info: Any, value: float) -> None:
    """Raise :class:`ParameterError` when ``value`` is outside the field's ``ge``/``gt``/``le``/``lt``."""
    got = format_number(value)
    low, high = info.gt, info.lt
    if low is not None and high is not None and not low < value < high:
        hint = None
        if (low, high) == (0, 1):
            hint = (f"write it as a fraction, e.g. {format_number(value / 100)} for {got} %"
                    if 1.0 < value < 100.0 else "use a level such as 0.9, 0.95 or 0.99")
        raise ParameterError(
            f"must be strictly between {format_number(low)} and {format_number(high)}, got {got}", hint=hint
        )
    checks = ((info.ge, ">=", operator.lt), (info.gt, ">", operator.le),
              (info.le, "<=", operator.gt), (info.lt, "<", operator.ge))
    for limit, op, outside in checks:
        if limit is not None and outside(value, limit):
            hint = None
            if op in ("<=", "<") and limit == 1 and 1.0 < value <= 100.0:
                hint = (f"rates are fractions between 0 and 1: if you meant {got} %, "
                        f"write {format_number(value / 100)}")
            raise ParameterError(f"must be {op} {format_number(limit)}, got {got}", hint=hint)


_INFINITIES = {"inf": math.inf, "+inf": math.inf, "infinity": math.inf, "+infinity": math.inf, ".inf": math.inf,
               "+.inf": math.inf, "-inf": -math.inf, "-infinity": -math.inf, "-.inf": -math.inf}


def _number(field: Any, value: Any, kind: type) -> float | int:
    """A number field's value: a real number (infinity also as text, e.g. from JSON or YAML's ``inf``),
    an integer for an ``int`` field, finite unless the field has ``allow_inf``, within its bounds."""
    what = "an integer" if kind is int else "a number"
    allow_inf = field.field_info.extra.get("allow_inf")
    example = ("write a whole number, e.g. 2" if kind is int else "write a number, e.g. 0.9") + (
        " or .inf" if allow_inf else "")
    if isinstance(value, str) and value.strip().lower() in _INFINITIES:
        value = _INFINITIES[value.strip().lower()]
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ParameterError(f"expected {what}, got {value!r}", expected=what,
                             hint=f"booleans are not numbers; {example}" if isinstance(value, bool) else example)
    if math.isnan(value):
        raise ParameterError(f"expected {what}, got nan", expected=what, hint=example)
    if kind is int and not isinstance(value, numbers.Integral):
        raise ParameterError(f"expected an integer, got {value!r}", expected=what, hint=example)
    if math.isinf(value) and not allow_inf:
        raise ParameterError(f"expected a finite number, got {format_number(value)}", expected="a finite number",
                             hint="infinity is not allowed for this parameter")
    value = kind(value)
    _check_bounds(field.field_info, value)
    return value


def check_field_value(field: Any, value: Any) -> Any:
    """The checks every parameter gets from its field declaration, before pydantic's own.

    Types are strict (pydantic v1 would read ``"0.5"`` as a number, ``"on"`` as true and ``5``
    as text): numbers go through :func:`_number`, booleans must be booleans, text must be
    non-blank text, choices one of the ``Literal`` values (with a "did you mean"). A type error
    carries ``expected`` (what the field takes), which the YAML loader words with the value
    as written. Other values go to pydantic unchanged.
    """
    if value is None or is_suite_parameter(value):
        return value
    kind = number_type(field)
    if kind is not None:
        return _number(field, value, kind)
    arms = field_arms(field)
    if arms == (bool,) and not isinstance(value, bool):
        raise ParameterError(f"expected true or false, got {value!r}", expected="true or false",
                             hint="write true or false")
    if arms == (str,):
        if not isinstance(value, str):
            raise ParameterError(f"expected text, got {value!r}", expected="text")
        if not value.strip():
            raise ParameterError("expected text, got an empty string", hint="write a value or remove the key")
    choices = field_choices(field)
    if choices and value not in choices:
        expected = f"one of {quote_list(choices)}"
        raise ParameterError(f"expected {expected}, got {value!r}", expected=expected,
                             hint=did_you_mean(value, choices) if isinstance(value, str) else None)
    return value


def column_parameters(models: typing.Iterable[type], source: str | None = None) -> tuple[str, ...]:
    """The parameters that name a column, as the models mark them (``column=`` in the field:
    ``"batch"``, or ``"records"`` for a column of the records file), in declaration order;
    ``source`` keeps one kind."""
    names: dict[str, None] = {}
    for model in models:
        for name, field in model.parameter_fields().items():  # type: ignore[attr-defined]
            kind = field.field_info.extra.get("column")
            if kind and source in (None, kind):
                names.setdefault(name)
    return tuple(names)


def check_min_max(name: str, values: dict[str, Any]) -> dict[str, Any]:
    """Shared root validation: at least one bound, and min_value ≤ max_value (< when strict).

    A suite parameter counts as a bound; bounds are compared once GX has filled them in. A
    bound missing from ``values`` failed its own validation and is reported by itself.
    """
    if "min_value" not in values or "max_value" not in values:
        return values
    lo, hi = values["min_value"], values["max_value"]
    if lo is None and hi is None:
        raise ParameterError(f"{name} needs at least one of 'min_value' or 'max_value'",
                             hint="give min_value, max_value or both")
    if lo is None or hi is None or is_suite_parameter(lo) or is_suite_parameter(hi):
        return values
    if lo > hi:
        raise ParameterError(f"min_value ({format_number(lo)}) is greater than max_value ({format_number(hi)})",
                             at="min_value", hint="min_value must not exceed max_value; swap or correct them")
    strict = [k for k in ("strict_min", "strict_max") if values.get(k) is True]
    if lo == hi and strict:
        flags = " and ".join(strict)
        raise ParameterError(f"min_value = max_value = {format_number(lo)} with {flags}: no value can pass",
                             at=strict[0], hint=f"drop {flags} or widen the range")
    return values


@dataclass(frozen=True, slots=True)
class Problem:
    """One error pydantic found building an expectation (see :func:`validate_parameters`).

    ``field`` is the parameter whose own value failed (``None``: a rule between parameters),
    ``at`` the parameter, or dotted path inside one, to point at (``None``: the expectation
    as a whole); ``expected`` is set for a value of the wrong type; ``missing`` for a
    required parameter nobody gave.
    """

    field: str | None
    at: str | None
    message: str
    hint: str | None = None
    expected: str | None = None
    missing: bool = False


def validate_parameters(model: type, kwargs: Mapping[str, Any]) -> tuple[Any, list[Problem]]:
    """Build ``model(**kwargs)``: the expectation, or ``None`` and every problem pydantic found."""
    try:
        return model(**kwargs), []
    except pydantic.ValidationError as error:
        return None, [_problem(loc, exc) for loc, exc in _raw_errors(error.raw_errors, ())]


def _raw_errors(items: Any, loc: tuple[Any, ...]) -> typing.Iterator[tuple[tuple[Any, ...], Exception]]:
    for item in items:
        if isinstance(item, list | tuple):
            yield from _raw_errors(item, loc)
        elif isinstance(item.exc, pydantic.ValidationError):
            yield from _raw_errors(item.exc.raw_errors, loc + item.loc_tuple())
        else:
            yield loc + item.loc_tuple(), item.exc


def _problem(loc: tuple[Any, ...], exc: Exception) -> Problem:
    field = str(loc[0]) if loc and loc[0] != "__root__" else None
    missing = isinstance(exc, pydantic.errors.MissingError)
    if isinstance(exc, ParameterError):
        return Problem(field, exc.at or field, exc.message, exc.hint, exc.expected, missing)
    return Problem(field, field, str(exc) or type(exc).__name__, missing=missing)


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
        from great_expectations.validator.validator import ValidationDependencies

        from ..metrics import UNSUPPORTED_ENGINE

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
        return [string_block(template, params, styling=styling)]

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
        details = result_details(result)
        blocks = []
        cfg = config_of(configuration, result)
        for author_note in _notes(cfg):
            # the suite author's note for auditors (GX shows notes on suite pages only)
            blocks.append(string_block("Note: $author_note", {"author_note": author_note}, tag="div",
                                       styling={"classes": ["er-note", "text-muted"]}))
        note = details.get("note")
        if note and result is not None and not result.success:
            blocks.append(string_block("Why: $note", {"note": note}))
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
        return blocks or None


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

    def in_range(self, lo: float, hi: float | None = None) -> bool:
        """True when [lo, hi] (or the value lo) lies within the bounds once parameters are filled in
        (``None``: unbounded; a strict bound is excluded; NaN never does)."""
        for key in self.BOUND_KEYS:
            if is_suite_parameter(getattr(self, key)):
                raise ValueError(f"{key}: suite parameter {get_suite_parameter_key(getattr(self, key))!r} "
                                 "has no value; pass it in expectation_parameters")
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
    import html

    notes = getattr(cfg, "notes", None) if cfg is not None else None
    if not notes:
        return []
    if isinstance(notes, str):
        notes = [notes]
    return [html.unescape(str(n)) for n in notes]


def _fmt_err(x: float) -> str:
    return f"{x:.2f}" if not float(x).is_integer() else f"{int(x)}"
