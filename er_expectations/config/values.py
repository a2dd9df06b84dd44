"""Reading one parameter value from a YAML node according to its :class:`ParamSpec`.

:func:`convert_param` returns the normalised Python value (numbers as ``float``,
infinity as ``math.inf``, weights as ``"cluster_size"``/``"uniform"`` or
``{"column": name}``) or raises :class:`ValueProblem` whose message names the parameter,
what was expected and what was found, e.g.
``min_value: expected a number, got the string 'high'``.
"""

from __future__ import annotations

import math

from ..text import format_number
from .errors import did_you_mean, quote_list
from .schema import WEIGHT_DESIGNS, ParamSpec
from .yamlnodes import Node, describe

__all__ = ["ValueProblem", "convert_param", "format_number", "parse_inf"]

_POSITIVE_INF = {"inf", ".inf", "+inf", "+.inf", "infinity", "+infinity"}
_NEGATIVE_INF = {"-inf", "-.inf", "-infinity"}


class ValueProblem(Exception):
    """A value that does not fit its parameter; ``message`` and ``hint`` go into an issue."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


def parse_inf(text: str) -> float | None:
    """``math.inf`` / ``-math.inf`` for the spellings of infinity, else ``None``."""
    word = text.strip().lower()
    if word in _POSITIVE_INF:
        return math.inf
    if word in _NEGATIVE_INF:
        return -math.inf
    return None


def convert_param(spec: ParamSpec, node: Node) -> object:
    """The value of ``node`` for parameter ``spec``; raises :class:`ValueProblem` if it does not fit.

    Only how the value is written is checked here; bounds and the rules between parameters
    belong to the expectation model (see :mod:`er_expectations.config.schema`).
    """
    kind = spec.kind
    if kind == "str":
        return _text(spec.name, node)
    if kind == "bool":
        return _boolean(spec.name, node)
    if kind == "choice":
        return _choice(spec.name, node, spec.choices)
    if kind == "weights":
        return _weights(spec.name, node)
    if kind == "groups":
        return _groups(spec.name, node)
    if kind == "int":
        return _integer(spec.name, node)
    return _number(spec.name, node, allow_inf=kind == "number_or_inf")


def _key(name: str) -> str:
    """The key as written in the file, for hints (``data.records.id_column`` -> ``id_column``)."""
    return name.rsplit(".", 1)[-1]


def _expect_scalar(name: str, node: Node, expected: str, hint: str | None = None) -> object:
    if node.kind != "scalar":
        raise ValueProblem(f"{name}: expected {expected}, got {describe(node)}", hint)
    return node.value


def _number(name: str, node: Node, *, allow_inf: bool) -> float:
    example = "e.g. 0.9" + (" or .inf" if allow_inf else "")
    value = _expect_scalar(name, node, "a number", f"write a number, {example}")
    if isinstance(value, bool):
        raise ValueProblem(
            f"{name}: expected a number, got {describe(node)}",
            f"booleans are not numbers; write a number, {example}",
        )
    if isinstance(value, int):
        return float(value)
    if isinstance(value, float):
        if math.isnan(value):
            raise ValueProblem(
                f"{name}: expected a number, got {node.text} (not a number)",
                f"write a number, {example}",
            )
        if math.isinf(value) and not allow_inf:
            raise ValueProblem(
                f"{name}: expected a finite number, got {node.text}",
                f"write a number, e.g. {'0.9' if value > 0 else '0'}",
            )
        return value
    if isinstance(value, str):
        infinite = parse_inf(value)
        if infinite is not None:
            if allow_inf:
                return infinite
            raise ValueProblem(
                f"{name}: expected a finite number, got {describe(node)}",
                "infinity is not allowed for this parameter",
            )
        parsed = _float_or_none(value)
        if parsed is not None and not node.quoted:  # plain text Python reads as a number (1_000)
            return parsed
        if parsed is not None:
            hint = f"remove the quotes: {_key(name)}: {value.strip()}"
        elif value.strip().endswith("%") and _float_or_none(value.strip()[:-1]) is not None:
            percent = float(value.strip()[:-1])
            hint = f"write a fraction: {format_number(percent / 100)} for {value.strip()}"
        else:
            hint = f"write a number, {example}"
        raise ValueProblem(f"{name}: expected a number, got {describe(node)}", hint)
    raise ValueProblem(
        f"{name}: expected a number, got {describe(node)}", f"write a number, {example}"
    )


def _float_or_none(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _integer(name: str, node: Node) -> int:
    value = _expect_scalar(name, node, "an integer", "write a whole number, e.g. 2")
    if isinstance(value, bool):
        raise ValueProblem(
            f"{name}: expected an integer, got {describe(node)}",
            "booleans are not numbers; write a whole number, e.g. 2",
        )
    if isinstance(value, int):
        return value
    hint = "write a whole number, e.g. 2"
    if isinstance(value, float) and value.is_integer():
        hint = f"write it without the decimal point: {_key(name)}: {int(value)}"
    if isinstance(value, str) and node.quoted and value.strip().lstrip("+-").isdigit():
        hint = f"remove the quotes: {_key(name)}: {value.strip()}"
    raise ValueProblem(f"{name}: expected an integer, got {describe(node)}", hint)


def _boolean(name: str, node: Node) -> bool:
    value = _expect_scalar(name, node, "true or false", "write true or false")
    if isinstance(value, bool):
        return value
    hint = "write true or false"
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        hint = f"remove the quotes: {_key(name)}: {value.strip().lower()}"
    raise ValueProblem(f"{name}: expected true or false, got {describe(node)}", hint)


def _text(name: str, node: Node) -> str:
    value = _expect_scalar(name, node, "text", "write a single text value")
    if not isinstance(value, str):
        raise ValueProblem(
            f"{name}: expected text, got {describe(node)}", f'put it in quotes: "{node.text}"'
        )
    if not value.strip():
        raise ValueProblem(
            f"{name}: expected text, got an empty string", "write a value or remove the key"
        )
    return value


def _choice(name: str, node: Node, choices: tuple[str, ...]) -> str:
    expected = f"one of {quote_list(choices)}"
    value = _expect_scalar(name, node, expected)
    if isinstance(value, str) and value in choices:
        return value
    hint = did_you_mean(value, choices) if isinstance(value, str) else None
    raise ValueProblem(f"{name}: expected {expected}, got {describe(node)}", hint)


def _weights(name: str, node: Node) -> str | dict[str, str]:
    expected = f"{quote_list(WEIGHT_DESIGNS)} or {{column: <weight column>}}"
    if node.kind == "mapping":
        keys = [key for key, _, _ in node.items()]
        unknown = [key for key in keys if key != "column"]
        if unknown or not keys:
            raise ValueProblem(
                f"{name}: a weights mapping takes the single key 'column', got "
                + (quote_list(unknown, conjunction="and") if unknown else "an empty mapping"),
                f"write {name}: {{column: <weight column>}}",
            )
        column = node.get("column")
        if not (column is not None):  # invariant, kept under python -O
            raise RuntimeError("er-expectations internal error: expected column is not None")
        return {"column": _text(f"{name}.column", column)}
    value = _expect_scalar(name, node, expected)
    if isinstance(value, str) and value in WEIGHT_DESIGNS:
        return value
    hint = did_you_mean(value, WEIGHT_DESIGNS) if isinstance(value, str) else None
    if hint is None:
        hint = f"for a weight column write {name}: {{column: <weight column>}}"
    raise ValueProblem(f"{name}: expected {expected}, got {describe(node)}", hint)


def _groups(name: str, node: Node) -> list[str] | dict[str, list[str]]:
    """Subgroups (SPEC 8): a list of values, or a mapping of group names to a value or a list."""
    example = f"{name}: {{api: [api], other: [white, black, hispanic, aian, 2prace]}}"

    def values(key: str, item: Node) -> list[str]:
        items = item.elements() if item.kind == "sequence" else (item,)
        out = []
        for index, element in enumerate(items):
            where = f"{key}[{index}]" if item.kind == "sequence" else key
            value = _expect_scalar(where, element, "a value", f"write it as {example}")
            if value is None or isinstance(value, bool) or (isinstance(value, str) and not value.strip()):
                raise ValueProblem(f"{where}: expected a value, got {describe(element)}", f"write it as {example}")
            out.append(value if isinstance(value, str) else (element.text or str(value)))  # numbers as written
        if not out:
            raise ValueProblem(f"{key}: the group has no value", f"write it as {example}")
        return out

    if node.kind == "mapping":
        return {key: values(f"{name}.{key}", value) for key, _, value in node.items()}
    if node.kind == "sequence":
        return values(name, node)
    raise ValueProblem(f"{name}: expected a list of values or a mapping of group names to values, "
                       f"got {describe(node)}", f"write it as {example}")
