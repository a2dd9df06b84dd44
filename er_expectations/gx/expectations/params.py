"""The parameters of the expectations: one declaration each, read strictly, errors located.

The pydantic fields of the expectation classes declare every parameter: type, required or
default, bounds (``ge``/``gt``/``le``/``lt``, and ``allow_inf`` for the numbers that may be
infinite), ``Literal`` choices, ``column=`` for a parameter that names a column (``"batch"``,
or ``"records"`` for the records file) and the description. :func:`check_field_value` reads
every value strictly by its field (pydantic v1 alone would read ``"0.5"`` as a number);
cross-parameter rules are root validators that raise :class:`ParameterError`. The YAML suite
loader (``er_expectations.config``) builds the models from the YAML values with
:func:`validate_parameters` and reports each :class:`Problem` at its line, so a suite file
and a GX constructor refuse the same values.
"""

from __future__ import annotations

import functools
import math
import numbers
import operator
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from great_expectations.compatibility import pydantic
from great_expectations.core.suite_parameters import SuiteParameterDict, is_suite_parameter

from er_expectations.core.hints import did_you_mean, quote_list
from er_expectations.core.text import format_number

__all__ = [
    "ParameterError",
    "Problem",
    "Threshold",
    "check_field_value",
    "check_min_max",
    "column_parameters",
    "field_choices",
    "threshold",
    "validate_parameters",
]


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


@functools.lru_cache(maxsize=1024)
def field_arms(field: Any) -> tuple[Any, ...]:
    """The types a pydantic field takes besides ``None`` and suite parameters (``dict``); a
    field's are read once (every validation of an expectation asks for them)."""
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
        if math.isfinite(value) and float(value).is_integer():  # 1e8: beyond the bound says more
            _check_bounds(field.field_info, value)
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
