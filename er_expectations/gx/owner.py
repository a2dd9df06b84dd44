"""The Data Context a checkpoint's actions work in, found through public GX API only.

GX 1.x gives an action no public way to ask for its Data Context: GX 1.15 to 1.2x read the
current project (``great_expectations.data_context.project_manager``); later releases set a
private ``_data_context`` on each action and resolve it with a private ``_resolve_context``,
which older releases lack. The plugin supports GX 1.15.2 to 1.24 (pyproject.toml), so its
actions find their context here, in this order:

1. the context bound with :meth:`ContextBound.bind` (an action run outside a checkpoint);
2. the context that owns the checkpoint's data: ``CheckpointResult.checkpoint_config`` →
   ``validation_definitions`` → ``data`` (the batch definition) → ``data_asset`` →
   ``datasource`` → ``data_context``, all public attributes;
3. the current project: ``project_manager.get_current_project()`` where GX has it, otherwise
   (GX 1.15) the context of a data source of the current project, ``project_manager.get_datasources()``.

``tests/gx/test_owner.py`` checks each step on the installed GX; ``.ci/compat`` runs it on the
oldest and the newest supported GX.
"""

from __future__ import annotations

from typing import Any

from great_expectations.compatibility.pydantic import PrivateAttr
from great_expectations.data_context import AbstractDataContext, project_manager, set_context
from great_expectations.datasource.fluent.config_str import ConfigStr

from er_expectations.core.errors import InputError

__all__ = ["ContextBound", "bound_context_attr", "config_value", "context_of", "current_context", "make_current"]


class ContextBound:
    """Mixin of a GX action (GX's pydantic v1 models): :meth:`bind` a Data Context to it.

    The bound context is not a field (neither validated nor saved with a checkpoint): each
    action class declares ``_er_context: Any = bound_context_attr()`` (a pydantic private
    attribute must be declared on the model class itself).
    """

    _er_context: Any

    def bind(self, context: AbstractDataContext | None) -> Any:
        """Run this action in ``context`` (``None``: unbind); returns the action."""
        if context is not None and not isinstance(context, AbstractDataContext):
            raise InputError(f"context: expected a GX Data Context, got {type(context).__name__}")
        self._er_context = context
        return self

    @property
    def bound_context(self) -> AbstractDataContext | None:
        """The context given to :meth:`bind`, or ``None``."""
        return self._er_context

    def context_for(self, checkpoint_result: Any = None) -> AbstractDataContext:
        """The context this action works in (:func:`context_of` after the bound one)."""
        bound = self.bound_context
        return bound if bound is not None else context_of(checkpoint_result)


def bound_context_attr() -> Any:
    """The private attribute that holds the context of :meth:`ContextBound.bind`."""
    return PrivateAttr(default=None)


def _owner(checkpoint_result: Any) -> AbstractDataContext | None:
    """The context that owns the data of the checkpoint that made ``checkpoint_result``, or None."""
    checkpoint = getattr(checkpoint_result, "checkpoint_config", None)
    for definition in getattr(checkpoint, "validation_definitions", None) or ():
        try:
            context = definition.data.data_asset.datasource.data_context
        except AttributeError:  # a hand-made definition without a datasource
            continue
        if isinstance(context, AbstractDataContext):
            return context
    return None


def current_context() -> AbstractDataContext:
    """The current GX project: the context most recently opened (``gx.get_context``) or set.

    Raises
    ------
    InputError
        When there is none that public GX API can reach.
    """
    getter = getattr(project_manager, "get_current_project", None)  # newer GX 1.2x
    if getter is not None:
        return getter()
    try:  # GX 1.15: the current project is only reachable through its data sources
        sources = list(project_manager.get_datasources().values())
    except Exception:  # noqa: BLE001 - GX raises its own "no context" errors here
        sources = []
    for source in sources:
        context = getattr(source, "data_context", None)
        if isinstance(context, AbstractDataContext):
            return context
    raise InputError("no GX Data Context: open the project with gx.get_context(...) first, or bind "
                     "one to the action with action.bind(context)")


def context_of(checkpoint_result: Any = None) -> AbstractDataContext:
    """The Data Context of a checkpoint run: the owner of its data, else the current project."""
    owner = _owner(checkpoint_result)
    return owner if owner is not None else current_context()


def make_current(context: AbstractDataContext) -> None:
    """Make ``context`` the current project (GX's public ``set_context``), as ``gx.get_context``
    does: GX's own action code (its e-mail settings) reads the current project. Anything that
    is not a Data Context is ignored."""
    if isinstance(context, AbstractDataContext):
        set_context(context)


def config_value(value: Any, context: AbstractDataContext) -> Any:
    """``value`` with ``${VAR}`` substituted by the context's config provider if it is a
    ``ConfigStr``; any other value as it is."""
    if isinstance(value, ConfigStr):
        return value.get_config_value(context.config_provider)
    return value
