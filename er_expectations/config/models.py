"""The structure of the configuration files as pydantic v2 models, and their errors as issues.

A file is composed into a :class:`~.yamlnodes.Node` tree (positions of every key and value),
turned into plain Python data by :func:`node_data` and validated by ONE call of a
:class:`ConfigModel` (``extra="forbid"``, strict types), which collects every error of the
file. :func:`validate_node` then turns each pydantic error into a :class:`ConfigIssue` at
``file:line:column`` by walking the error's ``loc`` through the node tree (keys to mapping
entries, integers to sequence items) and, in parallel, through the model classes (for the
field names a misspelt key is compared with, and the section's own wording).

Validators report a problem with :func:`problem`; its message may use ``{where}`` (the
dotted key) and ``{got}`` (what the YAML value is, from :func:`~.yamlnodes.describe`).
Adding a section to a file is adding a field (and, if it is a mapping, a model) here.
"""

from __future__ import annotations

import datetime as _dt
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, ClassVar, Literal

import pydantic
from pydantic import AfterValidator, BeforeValidator, ConfigDict, ValidationInfo, model_validator
from pydantic_core import PydanticCustomError

from er_expectations.config.errors import IssueCollector, close_matches, did_you_mean, quote_list
from er_expectations.config.yamlnodes import Node, describe

__all__ = [
    "ConfigModel",
    "Text",
    "name_list",
    "node_data",
    "node_locations",
    "problem",
    "validate_node",
]

_UNREADABLE = type("Unreadable", (), {"__repr__": lambda self: "<unreadable>"})()


class ConfigModel(pydantic.BaseModel):
    """A mapping of a configuration file: unknown keys and loose types are errors.

    Class variables word the messages of the section: ``section`` names the file when the
    model is the whole document; ``unknown_key`` and ``missing_key`` are formats with
    ``{key}`` and ``{where}``; ``example`` is shown as ``write it as ...``; ``misplaced``
    maps a key that belongs elsewhere to its own (message, hint). A key written with an
    empty value counts as absent (``null`` means "use the default").
    """

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    section: ClassVar[str] = "the file"
    unknown_key: ClassVar[str] = "unknown key '{key}' in {where}"
    missing_key: ClassVar[str] = "{where}: missing required key '{key}'"
    example: ClassVar[str] = ""
    missing_hints: ClassVar[dict[str, str]] = {}
    misplaced: ClassVar[dict[str, tuple[str, str]]] = {}

    @model_validator(mode="before")
    @classmethod
    def _nulls_are_absent(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return {key: value for key, value in data.items() if value is not None}
        return data


def problem(message: str, hint: str | None = None, *, at: tuple[str | int, ...] = ()) -> Exception:
    """A validation error of a validator: ``message`` may use ``{where}`` and ``{got}``;
    ``at`` points below the validated value (e.g. the index of a list item)."""
    return PydanticCustomError("config", "{message}", {"message": message, "hint": hint, "at": at})


# -- YAML values -------------------------------------------------------------------------


def node_data(node: Node) -> Any:
    """The plain value of a node (mappings to dicts, sequences to lists) for validation."""
    if node.kind == "mapping":
        return {name: node_data(value) for name, _, value in node.items()}
    if node.kind == "sequence":
        return [node_data(item) for item in node.elements()]
    if node.kind == "invalid":
        return _UNREADABLE
    written = _WRITTEN.get(type(node.value))
    if written is None:
        return node.value
    number = written(node.value)  # validates as the number; a name keeps the text as written
    number.text = node.text
    return number


class _WrittenInt(int):
    text: str


class _WrittenFloat(float):
    text: str


_WRITTEN: dict[type, type] = {int: _WrittenInt, float: _WrittenFloat}


def node_locations(root: Node) -> dict[str, tuple[int, int]]:
    """``(line, column)`` of every value by dotted key (``data.records.path``, ``suites[0]``).

    A single value written where a list is accepted is also found as ``key[0]``.
    """
    found: dict[str, tuple[int, int]] = {}

    def walk(node: Node, key: str) -> None:
        if key:
            found[key] = (node.line, node.column)
        if node.kind == "mapping":
            for name, _, value in node.items():
                walk(value, f"{key}.{name}" if key else name)
        elif node.kind == "sequence":
            for index, item in enumerate(node.elements()):
                walk(item, f"{key}[{index}]")
        elif key and node.kind == "scalar":
            found.setdefault(f"{key}[0]", (node.line, node.column))

    walk(root, "")
    return found


def _label_text(value: Any, what: str) -> str:
    """A name written as a scalar: numbers are taken as written (``010``), dates as
    ``2022-06-30``."""
    if isinstance(value, bool) or value is None or value is _UNREADABLE:
        raise problem(f"{{where}}: expected a {what}, got {{got}}", f"write the {what} as text")
    if isinstance(value, _dt.date):
        value = value.isoformat()
    elif isinstance(value, int | float):
        value = getattr(value, "text", str(value))
    if not isinstance(value, str):
        raise problem(f"{{where}}: expected a {what}, got {{got}}", f"write the {what} as text")
    if not value.strip():
        raise problem(f"{{where}}: expected a {what}, got an empty string")
    return value


def _text(value: Any) -> Any:
    if value == "" and isinstance(value, str):
        raise problem("{where}: expected text, got an empty string", "write a value or remove the key")
    return value


#: Non-empty text (numbers, booleans and lists are errors).
Text = Annotated[str, BeforeValidator(_text)]


def name_list(what: str, *, check: Callable[[str, ValidationInfo], str] | None = None) -> Any:
    """The type of a list of names (a single name is accepted): not empty, no name twice.

    ``check(name, info)`` may refuse one name by raising a :func:`problem`.
    """

    def as_list(value: Any) -> list[Any]:
        if isinstance(value, dict) or value is _UNREADABLE:
            raise problem(
                f"{{where}}: expected a list of {what}s, got {{got}}", f"write it as [<{what}>, ...]"
            )
        if value == []:
            raise problem("{where}: the list is empty", f"name at least one {what}")
        return value if isinstance(value, list) else [value]

    def unique(value: list[str]) -> tuple[str, ...]:
        for index, name in enumerate(value):
            if name in value[:index]:
                raise problem(f"{{parent}}: '{name}' is listed twice", "list it once", at=(index,))
        return tuple(value)

    item: list[Any] = [BeforeValidator(lambda value: _label_text(value, what))]
    if check is not None:
        item.append(AfterValidator(check))
    return Annotated[
        list[Annotated[(str, *item)]],  # type: ignore[valid-type]
        BeforeValidator(as_list),
        AfterValidator(unique),
    ]


# -- errors to issues --------------------------------------------------------------------


def validate_node(
    model: type[ConfigModel],
    root: Node,
    issues: IssueCollector,
    *,
    context: dict[str, Any] | None = None,
) -> ConfigModel | None:
    """Validate a document against ``model``; every error becomes an issue at its node."""
    try:
        return model.model_validate(node_data(root), context=context or {})
    except pydantic.ValidationError as error:
        report_errors(model, root, error.errors(include_url=False), issues)
        return None


def report_errors(
    model: type[ConfigModel],
    root: Node,
    errors: Sequence[Mapping[str, Any]],
    issues: IssueCollector,
) -> None:
    """Turn pydantic v2 errors into issues: position from ``loc``, wording by error type."""
    located = []
    for error in errors:
        ctx = error.get("ctx") or {}
        loc = tuple(error["loc"]) + (tuple(ctx.get("at", ())) if error["type"] == "config" else ())
        located.append((error, loc, *_walk(root, loc, missing=error["type"] == "missing")))
    misspelt: set[tuple[Any, ...]] = set()  # missing keys an unknown key probably meant
    for error, loc, _, _, path in located:
        if error["type"] == "extra_forbidden":
            owner = _model_at(model, loc[:-1])
            for match in close_matches(str(loc[-1]), list(owner.model_fields) if owner else []):
                misspelt.add((*path[:-1], match))
    for error, loc, node, key_node, path in located:
        if error["type"] == "missing" and path in misspelt:
            continue
        if node.kind == "invalid" or error.get("input") is _UNREADABLE:
            continue  # reported when the YAML was read
        message, hint = _wording(model, error, loc, path, node, key_node)
        place = key_node if error["type"] == "extra_forbidden" and key_node is not None else node
        issues.add(place, message, hint)


def _wording(
    model: type[ConfigModel],
    error: Mapping[str, Any],
    loc: tuple[Any, ...],
    path: tuple[Any, ...],
    node: Node,
    key_node: Node | None,
) -> tuple[str, str | None]:
    """Message and hint of one error; ``path`` is the part of ``loc`` found in the file."""
    where = _dotted(path)
    got = describe(node)
    kind = error["type"]
    ctx = error.get("ctx") or {}
    if kind == "config":
        parent = _dotted(path[:-1]) if path and isinstance(path[-1], int) else where
        text = ctx["message"].replace("{where}", where).replace("{parent}", parent)
        return text.replace("{got}", got), ctx.get("hint")
    if kind in ("extra_forbidden", "missing"):
        owner = _model_at(model, loc[:-1]) or ConfigModel
        parent = _dotted(path[:-1]) or owner.section
        key = str(loc[-1])
        if kind == "extra_forbidden":
            if key in owner.misplaced:
                message, hint = owner.misplaced[key]
                return f"{parent}: {message}", hint
            fields = list(owner.model_fields)
            return owner.unknown_key.format(key=key, where=parent), did_you_mean(
                key, fields, list_all_below=12
            )
        field = owner.model_fields.get(key)
        message = owner.missing_key.format(key=key, where=parent)
        if field is not None and field.description:
            message += f" ({field.description})"
        if key_node is not None:
            message += " (the key is there but has no value)"
        hint = owner.missing_hints.get(key) or (
            f"write it as {owner.example}" if owner.example else None
        )
        return message, hint
    simple = {
        "string_type": (
            "expected text",
            f'put it in quotes: "{node.text}"'
            if node.kind == "scalar" and not node.is_null
            else "write a value or remove the key",
        ),
        "int_type": ("expected a whole number", None),
        "float_type": ("expected a number", None),
        "bool_type": ("expected true or false", "write true or false"),
        "list_type": ("expected a list", "write it as [<item>, ...] or one '- item' per line"),
        "dict_type": ("expected a mapping", "write it as 'key: value' lines below it"),
        "too_short": ("the list is empty", "give at least one item"),
    }
    if kind in simple:
        text, hint = simple[kind]
        if kind != "too_short":
            text += f", got {got}"
        return f"{where}: {text}", hint
    if kind in ("model_type", "model_attributes_type"):
        owner = _model_at(model, loc)
        name = where or (owner.section if owner else "the file")
        if not path:
            first = next(iter(owner.model_fields)) if owner else "name"
            return f"{name} must be a mapping, got {got}", f"start the file with '{first}: <name>'"
        example = owner.example if owner else ""
        return f"{name}: expected a mapping, got {got}", f"write it as {example}" if example else None
    if kind == "literal_error":
        choices = _literal_choices(model, loc)
        hint = did_you_mean(str(node.text), choices) if node.kind == "scalar" else None
        return f"{where}: expected one of {quote_list(choices)}, got {got}", hint
    if kind == "value_error":
        return f"{where}: {str(error['msg']).removeprefix('Value error, ')}", None
    return f"{where}: {error['msg']}", None


def _walk(
    root: Node, loc: tuple[Any, ...], *, missing: bool = False
) -> tuple[Node, Node | None, tuple[Any, ...]]:
    """The node ``loc`` leads to, the key node of its last step, and the steps of ``loc`` that
    name keys or items of the file (union tags are skipped; the last step of a missing key
    is kept)."""
    node, key_node, path = root, None, []
    for index, part in enumerate(loc):
        last = index == len(loc) - 1
        if last and missing:
            path.append(part)  # a missing key: the error is about its mapping
            written = node.key(part) if node.kind == "mapping" else None  # with no value
            return node if written is None else written, written, tuple(path)
        elif node.kind == "mapping" and isinstance(part, str) and part in node:
            key_node, node = node.key(part), node.get(part)  # type: ignore[assignment]
        elif node.kind == "sequence" and isinstance(part, int) and part < len(node.elements()):
            node, key_node = node.elements()[part], None
        else:
            continue  # a union tag, or an item made of a single value
        path.append(part)
    return node, key_node, tuple(path)


def _dotted(loc: Sequence[Any]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _unwrap(annotation: Any) -> list[Any]:
    """The types an annotation is made of (through Annotated, unions, lists and dicts)."""
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        return _unwrap(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return [inner for arg in typing.get_args(annotation) for inner in _unwrap(arg)]
    return [annotation]


def _tag(annotation: Any) -> str | None:
    if typing.get_origin(annotation) is Annotated:
        for meta in typing.get_args(annotation)[1:]:
            if isinstance(meta, pydantic.Tag):
                return meta.tag
    return None


def _annotation_at(model: type[ConfigModel], loc: Sequence[Any]) -> Any:
    """The annotation of the value at ``loc`` in ``model`` (``None`` if there is none)."""
    current: Any = model
    for part in loc:
        step = None
        options = _unwrap(current)
        if typing.get_origin(current) in (typing.Union, types.UnionType):
            tagged = [arg for arg in typing.get_args(current) if _tag(arg) == part]
            if tagged:
                current = tagged[0]
                continue
        for option in options:
            origin = typing.get_origin(option)
            if isinstance(option, type) and issubclass(option, pydantic.BaseModel):
                if isinstance(part, str) and part in option.model_fields:
                    step = option.model_fields[part].annotation
            elif origin in (list, tuple) and isinstance(part, int):
                step = typing.get_args(option)[0]
            elif origin in (dict, Mapping):
                step = typing.get_args(option)[1]
            if step is not None:
                break
        if step is None:
            return None
        current = step
    return current


def _model_at(model: type[ConfigModel], loc: Sequence[Any]) -> type[ConfigModel] | None:
    for option in _unwrap(_annotation_at(model, loc)):
        if isinstance(option, type) and issubclass(option, ConfigModel):
            return option
    return None


def _literal_choices(model: type[ConfigModel], loc: Sequence[Any]) -> list[str]:
    for option in _unwrap(_annotation_at(model, loc)):
        if typing.get_origin(option) is Literal:
            return [str(choice) for choice in typing.get_args(option)]
    return []
