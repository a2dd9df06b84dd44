"""Guard against GX silently dropping expectations it cannot build.

When GX 1.24 loads a suite (``context.suites.get``, a checkpoint or validation definition
that names it), it builds each stored expectation from its ``type`` through its registry; a
type that is not registered (``er_expectations`` not imported yet, another plugin missing)
or kwargs that do not validate only produce a logged error, and the expectation is left out
of the suite object. Validation (``batch.validate``, ``ValidationDefinition.run``) then
skips it, so a release that fails that check can pass, and saving the suite object again
(``suite.save()``, ``validation_definitions.add_or_update``) writes the file back without it.

:func:`require_registered` refuses such a suite; :class:`RequireRegisteredAction` makes a
checkpoint fail when its run skipped stored expectations.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from great_expectations.checkpoint.actions import ValidationAction
from great_expectations.core.expectation_suite import ExpectationSuite
from great_expectations.data_context import project_manager
from great_expectations.exceptions import ExpectationNotFoundError
from great_expectations.expectations.expectation_configuration import ExpectationConfiguration
from great_expectations.expectations.registry import get_expectation_impl

from er_expectations.core.errors import InputError
from er_expectations.gx.owner import ContextBound, bound_context_attr

if TYPE_CHECKING:  # pragma: no cover
    from great_expectations.checkpoint.actions import ActionContext
    from great_expectations.checkpoint.checkpoint import CheckpointResult

__all__ = ["RequireRegisteredAction", "UnregisteredExpectationError", "require_registered"]

SuiteLike = ExpectationSuite | Mapping[str, Any] | str | os.PathLike


class UnregisteredExpectationError(InputError):
    """A suite names expectations GX cannot build, so GX would drop them when loading it."""


def _stored_suite(suite: ExpectationSuite, context: Any = None) -> dict[str, Any] | None:
    """The suite as stored in its data context (raw JSON dict), or None if it is not stored."""
    try:
        store = context.expectations_store if context is not None else project_manager.get_expectations_store()
        raw = store.get(key=store.get_key(name=suite.name, id=suite.id))
    except Exception:  # not added to a context, or no context at all
        return None
    return raw if isinstance(raw, Mapping) else None


def _read(suite: SuiteLike, context: Any) -> tuple[str, list[Any], ExpectationSuite | None]:
    """(suite name, stored expectation dicts, the loaded suite object if one was given)."""
    loaded = None
    if isinstance(suite, ExpectationSuite):
        loaded = suite
        raw = _stored_suite(suite, context) or suite.to_json_dict()
    elif isinstance(suite, Mapping):
        raw = suite
    elif isinstance(suite, (str, os.PathLike)):
        path = Path(suite)
        if not path.is_file():
            raise InputError(f"suite: file {str(path)!r} not found; give a GX suite JSON file, a dict "
                             "or an ExpectationSuite")
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InputError(f"suite: {str(path)!r} is not GX suite JSON ({exc})") from None
    else:
        raise InputError(f"suite: expected an ExpectationSuite, a suite dict or a JSON path, got "
                         f"{type(suite).__name__}")
    expectations = raw.get("expectations") if isinstance(raw, Mapping) else None
    if not isinstance(expectations, list):
        raise InputError("suite: no 'expectations' list; give a GX suite (JSON file, dict or ExpectationSuite)")
    # a context's store hands back ExpectationConfiguration objects, files and dicts plain dicts
    expectations = [e if isinstance(e, Mapping) or not hasattr(e, "to_json_dict") else e.to_json_dict()
                    for e in expectations]
    return str(raw.get("name") or getattr(loaded, "name", "") or "?"), expectations, loaded


def _registered(expectation_type: str) -> bool:
    try:
        get_expectation_impl(expectation_type)
    except ExpectationNotFoundError:
        return False
    return True


def _type_of(item: Any) -> str:
    if isinstance(item, Mapping):
        return str(item.get("type") or item.get("expectation_type") or "")
    return ""


def _problem(item: Any) -> str | None:
    """Why GX cannot build this stored expectation, or None when it can."""
    kind = _type_of(item)
    if not kind:
        return "an expectation without a 'type'"
    if not _registered(kind):
        return (f"{kind} (not registered: import the package that defines it before loading the suite; "
                "er-expectations registers its types on `import er_expectations.gx`)")
    try:
        ExpectationConfiguration(type=kind, kwargs=dict(item.get("kwargs") or {}),
                                 meta=item.get("meta")).to_domain_obj()
    except Exception as exc:  # pydantic and GX configuration errors: report the reason
        reason = " ".join(str(exc).split())
        return f"{kind} (its kwargs do not validate: {reason})"
    return None


def _raise(name: str, total: int, problems: list[str]) -> None:
    raise UnregisteredExpectationError(
        f"suite {name!r}: GX cannot use {len(problems)} of its {total} stored expectations and "
        "drops them when it loads the suite, so a validation would skip them and could report "
        "success: " + "; ".join(problems)
    )


def require_registered(suite: SuiteLike, *, context: Any = None) -> tuple[str, ...]:
    """Refuse a suite whose stored expectations GX would drop; return its expectation types.

    ``suite`` is a GX suite JSON file (path), its dict, or an ``ExpectationSuite``. Every stored
    expectation must have a registered type and kwargs that validate. For a suite object, the
    check reads the suite as stored in its data context (``context``, or the one it was added
    to) and also refuses a suite object that lacks stored expectations (loaded before
    ``import er_expectations.gx``: load it again after the import).

    Raises :class:`UnregisteredExpectationError` (an :class:`~er_expectations.core.errors.InputError`)
    naming each expectation and the fix.
    """
    name, items, loaded = _read(suite, context)
    problems = [p for p in (_problem(item) for item in items) if p]
    if loaded is not None:
        present = Counter(e.expectation_type for e in loaded.expectations)
        for kind, count in (Counter(_type_of(i) for i in items) - present).items():
            if _registered(kind):
                problems.append(f"{kind} ×{count} (stored in the suite but missing from this suite object: "
                                "it was loaded before `import er_expectations.gx`; load the suite again)")
    if problems:
        _raise(name, len(items), problems)
    return tuple(_type_of(i) for i in items)


class RequireRegisteredAction(ContextBound, ValidationAction):
    """Checkpoint action: fail the run when it skipped expectations of a stored suite.

    For each validation result of the run, the suite as stored in the data context must pass
    :func:`require_registered` and each stored expectation must have a result; otherwise the
    action raises :class:`UnregisteredExpectationError` and ``checkpoint.run`` fails. A
    checkpoint saved with this action does not load at all without ``er_expectations``
    imported (GX refuses the unknown action type), which is the other half of the guard::

        gx.Checkpoint(name="releases", validation_definitions=[...],
                      actions=[RequireRegisteredAction(name="require_registered"), ...])
    """

    type: Literal["er_require_registered"] = "er_require_registered"
    _er_context: Any = bound_context_attr()  # run outside a checkpoint: action.bind(context)

    def run(self, checkpoint_result: CheckpointResult, action_context: ActionContext | None = None) -> dict:
        # the expectations store of the project the checkpoint runs in (gx/owner.py: public GX
        # API on GX 1.15 to 1.24)
        store = self.context_for(checkpoint_result).expectations_store
        checked: dict[str, int] = {}
        for result in checkpoint_result.run_results.values():
            stored = store.get(key=store.get_key(name=result.suite_name))
            name, items, _ = _read(stored, None)
            require_registered(stored)
            missing = Counter(_type_of(i) for i in items) - Counter(r.expectation_config.type for r in result.results)
            if missing:
                _raise(name, len(items), [f"{kind} ×{n} (stored in the suite but not validated: the suite object "
                                          "was loaded before its plugin was imported; load it again)"
                                          for kind, n in missing.items()])
            checked[name] = len(items)
        return {"checked_suites": checked}
