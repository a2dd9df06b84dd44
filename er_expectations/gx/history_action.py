"""The GX checkpoint action that records a checkpoint's results in the history store.

``er-expectations run`` records each release itself right after validating it
(:class:`~.record.HistoryRecorder`). The GX checkpoint it stores over all the releases (for
GX's own tools) carries this action, so that running that checkpoint with GX records the
history too::

    context.checkpoints.get("patentsview").run()   # validates, builds Data Docs, records

Importing this module registers the action type ``"er_history"`` with GX
(``import er_expectations.gx`` does it). The action stores the URL *as written* in the
checkpoint file (``${ER_HISTORY_URL}`` is resolved when it runs), so no password reaches
the GX project. A store that cannot be opened or written is logged and reported in the
action's result; the validation results, already stored by GX, are never lost.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from typing import TYPE_CHECKING, Any, Literal

from great_expectations.checkpoint.actions import ValidationAction

from er_expectations.history.store import HistoryError, HistoryStore, resolve_url
from er_expectations.run.history import release_run

if TYPE_CHECKING:  # pragma: no cover
    from great_expectations.checkpoint.actions import ActionContext
    from great_expectations.checkpoint.checkpoint import CheckpointResult

__all__ = ["HistoryAction"]

log = logging.getLogger(__name__)


def _batch_release(validation: Any) -> str | None:
    """The ``release`` batch identifier (the release's file name) of a validation result."""
    meta = getattr(validation, "meta", None) or {}
    batch = meta.get("active_batch_definition") or {}
    identifiers = batch.get("batch_identifiers") if isinstance(batch, dict) else None
    value = identifiers.get("release") if isinstance(identifiers, dict) else None
    return str(value) if value is not None else None


class HistoryAction(ValidationAction):
    """Record the checkpoint's results in the history store, one transaction per release.

    ``releases`` maps each batch's ``release`` identifier (its file name in the project)
    to the release label and its position among the checkpoint's releases; ``url`` is the
    store as written in the checkpoint file (``base_dir`` resolves a relative SQLite path).
    """

    type: Literal["er_history"] = "er_history"
    checkpoint: str
    url: str
    base_dir: str | None = None
    releases: dict[str, tuple[str, int]] = {}

    def run(self, checkpoint_result: CheckpointResult,
            action_context: ActionContext | None = None) -> dict:
        by_release: dict[str, list[tuple[Any, Any]]] = defaultdict(list)
        for identifier, validation in (checkpoint_result.run_results if checkpoint_result else {}).items():
            name = _batch_release(validation)
            if name is not None:
                by_release[name].append((identifier, validation))
        recorded: dict[str, int] = {}
        try:
            with HistoryStore.open(resolve_url(self.url, base=self.base_dir)) as store:
                for name, items in by_release.items():
                    label, position = self.releases.get(name, (name, None))
                    recorded[label] = store.record(release_run(
                        checkpoint=self.checkpoint, release=label, position=position,
                        run_id=checkpoint_result.run_id, validations=items))
        except HistoryError as error:
            log.warning("er-expectations: history not recorded: %s", error)
            return {"recorded": recorded, "problem": str(error)}
        return {"recorded": recorded, "problem": None}
