"""Checkpoint actions of er-expectations.

Importing this module registers :class:`OfflineDataDocsAction` with GX under the type
``"er_offline_data_docs"`` (GX registers every ``ValidationAction`` subclass when the class is
created), so checkpoints saved with it load again. Import it only once: GX refuses to register the
same action type twice (do not ``importlib.reload`` it).
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Literal

from great_expectations.checkpoint.actions import ValidationAction

from er_expectations.gx.docs.data_docs import build_site, write_index
from er_expectations.gx.outcome import restate_statistics
from er_expectations.gx.owner import ContextBound, bound_context_attr

if TYPE_CHECKING:  # pragma: no cover
    from great_expectations.checkpoint.actions import ActionContext
    from great_expectations.checkpoint.checkpoint import CheckpointResult

__all__ = ["OfflineDataDocsAction"]


class OfflineDataDocsAction(ContextBound, ValidationAction):
    """Keep a local Data Docs site on er-expectations' offline pages (:mod:`.data_docs`).

    The action points the site's configuration at the offline view, severity renderer and index
    builder; when that changed the configuration, the whole site is rebuilt once (its pages were
    written by other views). Alongside GX's ``UpdateDataDocsAction``, which then builds offline
    pages itself, nothing else is done::

        gx.Checkpoint(name="releases", validation_definitions=[...],
                      actions=[UpdateDataDocsAction(name="update_data_docs"),
                               OfflineDataDocsAction(name="offline_data_docs")])

    It also restates GX's ``statistics`` of the checkpoint's results (in memory, for the actions
    after it, and in the store) as :func:`~.outcome.check_statistics` counts them: a skipped check
    (``on_skip: pass``) is neither evaluated nor successful, as on every page (SPEC 13).
    """

    type: Literal["er_offline_data_docs"] = "er_offline_data_docs"
    _er_context: Any = bound_context_attr()  # run outside a checkpoint: action.bind(context)
    site_name: str = "local_site"
    #: Build this checkpoint's pages (and those an interrupted earlier run did not build) and the
    #: index in ONE GX build: use instead of ``UpdateDataDocsAction``, which builds once per result.
    build: bool = False

    def run(
        self, checkpoint_result: CheckpointResult, action_context: ActionContext | None = None
    ) -> dict:
        context = self.context_for(checkpoint_result)  # gx/owner.py: public GX API on GX 1.15 to 1.24
        identifiers = list(checkpoint_result.run_results) if checkpoint_result else []
        restated = False
        for identifier in identifiers:
            validation = checkpoint_result.run_results[identifier]
            if restate_statistics(validation):
                context.validation_results_store.set(identifier, validation)
                restated = True
        built = build_site(context, self.site_name, identifiers if self.build else None)
        if restated and not self.build:  # the result files changed after GX's build: the index's cache follows
            with contextlib.suppress(LookupError):
                write_index(context, self.site_name)
        return built
