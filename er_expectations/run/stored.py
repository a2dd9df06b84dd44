"""The GX objects a run stores and then runs at once: fresh by construction, each result written once.

A run stores its validation definitions and checkpoints (``run/project.py``) and runs them right
after, under the project's lock. GX 1.24 checks that each is "fresh" (equal to its stored copy,
its suite and batch definition too) whenever it serialises or runs one: storing a checkpoint
checks every validation definition it holds, ``Checkpoint.run`` checks the checkpoint and each
definition again, ``ValidationDefinition.run`` the definition once more. Each check reads the
stored copies back (the suite, 22 expectations, at every level) and compares them field by field,
and each store read parses the project's ``config_variables.yml`` again: 20 % of a fresh demo run
(issue 32 item 4). And ``ValidationDefinition.run`` writes the result, which the run writes again
with its provenance (``Project.add_provenance``): every result stored twice.

:class:`StoredDefinition` and :class:`StoredCheckpoint` are GX's classes with two differences:

* An object the run has just written to its store (:meth:`~StoredDefinition.mark_stored`, called
  by the store's writer right after the write) is fresh: what the store holds was serialised
  from it, and its suite and batch definition were stored by the same run before it. Its
  freshness is answered without reading the store again. Assigning any field of it afterwards
  makes it ask GX again. Every other object (not marked) is checked by GX as before.
* ``ValidationDefinition.run`` of a :class:`StoredDefinition` does not write its result: the run
  writes it once, with its provenance (``Project.add_provenance``), before it records the release
  in the history. A run stopped in between leaves no result of that release (and no history
  row), as a run stopped during the validation did. Only the runner runs these objects.

What is stored (JSON of definitions, checkpoints and results) is the same as with GX's classes:
the subclasses add no field.
"""

from __future__ import annotations

from typing import Any

from great_expectations.checkpoint.checkpoint import Checkpoint
from great_expectations.compatibility.pydantic import PrivateAttr
from great_expectations.core.freshness_diagnostics import (
    CheckpointFreshnessDiagnostics,
    ValidationDefinitionFreshnessDiagnostics,
)
from great_expectations.core.validation_definition import ValidationDefinition

__all__ = ["StoredCheckpoint", "StoredDefinition"]


class _ResultWrittenByTheRun:
    """The results store of a :class:`StoredDefinition` as ``ValidationDefinition.run`` sees it: the
    project's, except that the result is not written (the run writes it, once, with its
    provenance)."""

    def __init__(self, store: Any) -> None:
        self._store = store

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def store_validation_results(self, *args: Any, **kwargs: Any) -> None:
        return None


class _MarkedStored:
    """What both stored classes add to GX's: a mark set right after the write, cleared by any
    later assignment of a field (each class declares ``_er_stored``, a pydantic private attribute)."""

    def mark_stored(self) -> Any:
        """Say that the store now holds this object as it is (call right after writing it)."""
        object.__setattr__(self, "_er_stored", True)
        return self

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        if not name.startswith("_er_"):
            object.__setattr__(self, "_er_stored", False)  # changed since it was stored: GX checks it


class StoredDefinition(_MarkedStored, ValidationDefinition):
    """A validation definition the run stores, then runs (see the module docstring)."""

    _er_stored: bool = PrivateAttr(default=False)

    def is_fresh(self) -> ValidationDefinitionFreshnessDiagnostics:
        if self._er_stored:
            return ValidationDefinitionFreshnessDiagnostics(errors=[])
        return super().is_fresh()

    @property
    def _validation_results_store(self) -> Any:
        """Where ``ValidationDefinition.run`` writes its result (GX 1.24): nowhere, the run writes it
        (a GX Cloud store is left as it is)."""
        store = ValidationDefinition._validation_results_store.fget(self)  # type: ignore[attr-defined]
        return store if getattr(store, "cloud_mode", False) else _ResultWrittenByTheRun(store)


class StoredCheckpoint(_MarkedStored, Checkpoint):
    """A checkpoint the run stores, then runs (see the module docstring)."""

    _er_stored: bool = PrivateAttr(default=False)

    def is_fresh(self) -> CheckpointFreshnessDiagnostics:
        if self._er_stored:
            return CheckpointFreshnessDiagnostics(errors=[])
        return super().is_fresh()
