"""What a suite file may say: the expectation registry, derived from the GX expectation classes.

The pydantic fields of the expectation classes (``er_expectations.gx.expectations``) are the
one declaration of every parameter: type, required or default, bounds, choices, description
and the rules between parameters. :func:`spec_from_model` reads a class into an
:class:`ExpectationSpec`; the suite loader uses it to read each YAML value with messages
about the YAML node, then builds the model to apply its bounds and rules. Great
Expectations is imported only when a registry is derived, never by ``import
er_expectations.config``.

How a field reads from YAML (``ParamSpec.kind``):

``str``            text (a column name, a note)
``float``          a finite number (integers are accepted and converted)
``int``            an integer
``bool``           ``true`` / ``false``
``choice``         one of ``ParamSpec.choices`` (a ``Literal`` field)
``weights``        ``cluster_size``, ``uniform`` or ``{column: <weight column>}``
``number_or_inf``  a number, or infinity written ``.inf`` / ``inf`` (a field with ``allow_inf``)
``groups``         a list of values (one group each) or {group name: value or list of values}

Booleans never count as numbers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from ..severity import SEVERITIES  # how a failed expectation is treated (one rule)

__all__ = [
    "COMMON_PARAMS",
    "PARAM_KINDS",
    "WEIGHT_DESIGNS",
    "ExpectationSpec",
    "ParamSpec",
    "Registry",
    "default_registry",
    "make_registry",
    "spec_from_model",
]

PARAM_KINDS: tuple[str, ...] = ("str", "float", "int", "bool", "choice", "weights", "number_or_inf", "groups")

#: Sampling designs a ``weights`` parameter may name (besides ``{column: ...}``).
WEIGHT_DESIGNS: tuple[str, ...] = ("cluster_size", "uniform")

#: Fields whose YAML reading is not told by their type alone.
_SPECIAL_KINDS: dict[str, str] = {"weights": "weights", "groups": "groups"}


@dataclass(frozen=True, slots=True)
class ParamSpec:
    """How one parameter is read from YAML (see the module docstring for the kinds).

    ``default`` is the value of a parameter nobody wrote (``None``: none); the derived specs
    carry the model's default for reference, the loader leaves unwritten parameters to the
    model.
    """

    name: str
    kind: str
    required: bool = False
    default: object = None
    choices: tuple[Any, ...] = ()
    doc: str = ""

    def __post_init__(self) -> None:
        if self.kind not in PARAM_KINDS:
            raise ValueError(
                f"ParamSpec {self.name!r}: unknown kind {self.kind!r}; "
                f"expected one of {', '.join(PARAM_KINDS)}"
            )
        if self.kind == "choice" and not self.choices:
            raise ValueError(f"ParamSpec {self.name!r}: kind 'choice' needs choices")


@dataclass(frozen=True, slots=True)
class ExpectationSpec:
    """An expectation a suite may use: its name, its parameters and the model that checks them.

    ``params`` lists the expectation's own parameters; :data:`COMMON_PARAMS` (``note``,
    ``severity``) are accepted by every expectation on top of them and never reach the
    expectation's kwargs. ``model`` (a GX expectation class) checks the bounds and the rules
    between parameters; without one only the kinds are checked.
    """

    name: str
    params: tuple[ParamSpec, ...]
    summary: str = ""
    model: type | None = None

    def param(self, name: str) -> ParamSpec | None:
        """The spec of parameter ``name`` (own or common), or ``None``."""
        for spec in self.all_params():
            if spec.name == name:
                return spec
        return None

    def all_params(self) -> tuple[ParamSpec, ...]:
        """Own parameters followed by the common ones it does not redefine."""
        own = {spec.name for spec in self.params}
        return self.params + tuple(spec for spec in COMMON_PARAMS if spec.name not in own)


#: Accepted by every expectation; kept out of the kwargs handed to Great Expectations.
COMMON_PARAMS: tuple[ParamSpec, ...] = (
    ParamSpec("note", "str", doc="Free-text note for auditors (why this threshold, who agreed)."),
    ParamSpec(
        "severity",
        "choice",
        default="critical",
        choices=SEVERITIES,
        doc="How to treat a failure: critical, warning or info.",
    ),
)

Registry = Mapping[str, ExpectationSpec]


def make_registry(specs: Iterable[ExpectationSpec | type]) -> dict[str, ExpectationSpec]:
    """A registry from expectation specs or GX expectation classes; one name twice is an error."""
    registry: dict[str, ExpectationSpec] = {}
    for item in specs:
        spec = item if isinstance(item, ExpectationSpec) else spec_from_model(item)
        if spec.name in registry:
            raise ValueError(f"expectation {spec.name!r} is registered twice")
        names = [param.name for param in spec.params]
        if len(set(names)) != len(names):
            raise ValueError(f"expectation {spec.name!r} lists a parameter twice")
        registry[spec.name] = spec
    return registry


def _kind(field: Any) -> tuple[str, tuple[Any, ...]]:
    """The YAML kind and choices of a pydantic field of an expectation."""
    import typing

    from ..gx.expectations._base import field_arms, number_type

    if field.name in _SPECIAL_KINDS:
        return _SPECIAL_KINDS[field.name], ()
    number = number_type(field)
    if number is int:
        return "int", ()
    if number is float:
        return ("number_or_inf" if field.field_info.extra.get("allow_inf") else "float"), ()
    arms = field_arms(field)
    if arms == (bool,):
        return "bool", ()
    if arms == (str,):
        return "str", ()
    if len(arms) == 1 and typing.get_origin(arms[0]) is typing.Literal:
        return "choice", typing.get_args(arms[0])
    raise TypeError(f"parameter {field.name!r} of type {field.outer_type_} has no YAML reading")


def spec_from_model(model: type) -> ExpectationSpec:
    """The :class:`ExpectationSpec` of a GX expectation class (an ``ERExpectation``)."""
    params = []
    for name, field in model.parameter_fields().items():  # type: ignore[attr-defined]
        kind, choices = _kind(field)
        params.append(
            ParamSpec(
                name,
                kind,
                required=bool(field.required),
                default=None if field.required else field.default,
                choices=choices,
                doc=field.field_info.description or "",
            )
        )
    summary = (model.__doc__ or "").strip().splitlines()[0] if model.__doc__ else ""
    return ExpectationSpec(model.expectation_type, tuple(params), summary, model)  # type: ignore[attr-defined]


@cache
def _default_specs() -> tuple[ExpectationSpec, ...]:
    from ..gx import expectations

    return tuple(spec_from_model(getattr(expectations, name)) for name in expectations.__all__)


def default_registry() -> dict[str, ExpectationSpec]:
    """The public expectations of er-expectations, by name (imports Great Expectations)."""
    return make_registry(_default_specs())
