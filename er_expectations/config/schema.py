"""What a suite file may say: the expectation registry, derived from the GX expectation classes.

The pydantic fields of the expectation classes (``er_expectations.gx.expectations``) are the
one declaration of every parameter: type, required or default, bounds, choices, description
and the rules between parameters. :func:`spec_from_model` describes a class for the suite
loader (which parameters exist, which are required); the loader then builds the class from
the YAML values, so the class checks them, and reports its errors at the YAML node.
Great Expectations is imported only when a registry is derived, never by ``import
er_expectations.config``.

``note`` and ``severity`` (:class:`CommonParams`) are accepted by every expectation and kept
out of its kwargs.
"""

from __future__ import annotations

import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from pydantic import Field

from er_expectations.config.models import ConfigModel, Text
from er_expectations.core.severity import (
    SEVERITIES,  # how a failed expectation is treated (one rule)
)

__all__ = [
    "COMMON_PARAMS",
    "CommonParams",
    "ExpectationSpec",
    "ParamSpec",
    "Registry",
    "default_registry",
    "make_registry",
    "spec_from_model",
]


@dataclass(frozen=True, slots=True)
class ParamSpec:
    """One parameter as the model declares it (for messages, scaffolds and documentation)."""

    name: str
    required: bool = False
    default: object = None
    choices: tuple[Any, ...] = ()
    doc: str = ""


@dataclass(frozen=True, slots=True)
class ExpectationSpec:
    """An expectation a suite may use: its name, its parameters and the model that checks them.

    ``params`` lists the expectation's own parameters; :data:`COMMON_PARAMS` (``note``,
    ``severity``) are accepted by every expectation on top of them and never reach the
    expectation's kwargs. ``model`` (a GX expectation class) checks the values; without one
    only the names and the required parameters are checked.
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


class CommonParams(ConfigModel):
    """The parameters every expectation of a suite takes besides its own."""

    note: Text | None = Field(None, description="Free-text note for auditors (why this threshold, who agreed).")
    id: Text | None = Field(
        None, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$",
        description="A name for this check, unique in its suite (letters, digits, _ . -): its label in the run "
        "report, Data Docs and history, and its identity in the history, so that two checks that would share "
        "a label keep separate series (history -e <id>).")
    severity: Literal[SEVERITIES] = Field(  # type: ignore[valid-type]
        "critical", description="How to treat a failure: critical, warning or info.")


#: Accepted by every expectation; kept out of the kwargs handed to Great Expectations.
COMMON_PARAMS: tuple[ParamSpec, ...] = tuple(
    ParamSpec(name, default=field.default, doc=field.description or "",
              choices=typing.get_args(field.annotation) if typing.get_origin(field.annotation) is Literal else ())
    for name, field in CommonParams.model_fields.items()
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


def spec_from_model(model: type) -> ExpectationSpec:
    """The :class:`ExpectationSpec` of a GX expectation class (an ``ERExpectation``)."""
    from er_expectations.gx.expectations.params import field_choices

    params = tuple(
        ParamSpec(name, required=bool(field.required), default=None if field.required else field.default,
                  choices=field_choices(field), doc=field.field_info.description or "")
        for name, field in model.parameter_fields().items()  # type: ignore[attr-defined]
    )
    summary = (model.__doc__ or "").strip().splitlines()[0] if model.__doc__ else ""
    return ExpectationSpec(model.expectation_type, params, summary, model)  # type: ignore[attr-defined]


@cache
def _default_specs() -> tuple[ExpectationSpec, ...]:
    from er_expectations.gx import expectations

    return tuple(spec_from_model(getattr(expectations, name)) for name in expectations.__all__)


def default_registry() -> dict[str, ExpectationSpec]:
    """The public expectations of er-expectations, by name (imports Great Expectations)."""
    return make_registry(_default_specs())
