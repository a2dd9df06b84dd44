"""Checkpoint actions of er-expectations.

Importing this module registers :class:`OfflineDataDocsAction` with GX under the type
``"er_offline_data_docs"`` (GX registers every ``ValidationAction`` subclass when the class is
created), so checkpoints saved with it load again. Import it only once: GX refuses to register the
same action type twice (do not ``importlib.reload`` it).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Literal

from great_expectations.checkpoint.actions import ValidationAction

from .offline_docs import local_site_dir, make_site_offline, results_without_pages

if TYPE_CHECKING:  # pragma: no cover
    from great_expectations.checkpoint.actions import ActionContext
    from great_expectations.checkpoint.checkpoint import CheckpointResult

__all__ = ["OfflineDataDocsAction"]

logger = logging.getLogger(__name__)


class OfflineDataDocsAction(ValidationAction):
    """Make a local Data Docs site readable offline after the checkpoint updated it.

    GX runs every ``UpdateDataDocsAction`` of a checkpoint before the other actions, so this action
    sees the freshly built pages whatever its position in the list::

        gx.Checkpoint(name="releases", validation_definitions=[...],
                      actions=[UpdateDataDocsAction(name="update_data_docs"),
                               OfflineDataDocsAction(name="offline_data_docs")])
    """

    type: Literal["er_offline_data_docs"] = "er_offline_data_docs"
    site_name: str = "local_site"
    #: Build the pages of this checkpoint's results itself, in ONE GX build without GX's index
    #: (use instead of ``UpdateDataDocsAction``, which rebuilds GX's index from every stored
    #: result once per validation result; the offline index replaces GX's anyway).
    build: bool = False

    def run(
        self, checkpoint_result: CheckpointResult, action_context: ActionContext | None = None
    ) -> dict:
        context = self._resolve_context().context
        site = local_site_dir(context, self.site_name)
        if self.build:
            from great_expectations.data_context.types.resource_identifiers import (
                ExpectationSuiteIdentifier,
            )

            identifiers: list = list(checkpoint_result.run_results)
            # pages an interrupted earlier run did not build
            identifiers += [k for k in results_without_pages(context, site) if k not in identifiers]
            suites = {key.expectation_suite_identifier.name for key in identifiers}
            identifiers += [ExpectationSuiteIdentifier(name=name) for name in sorted(suites)]
            context.build_data_docs(site_names=[self.site_name], resource_identifiers=identifiers,
                                    build_index=False)
            changed = make_site_offline(site, context)
            return {"site_dir": str(site), "offline_pages": [str(p) for p in changed]}
        if not (site / "index.html").is_file():
            # nothing to post-process (no UpdateDataDocsAction ran and the docs were never built)
            logger.warning("er_offline_data_docs: Data Docs site %r not built yet (%s); add an "
                           "UpdateDataDocsAction to the checkpoint", self.site_name, site)
            return {"site_dir": str(site), "offline_pages": [], "skipped": "site not built"}
        changed = make_site_offline(site, context)
        return {"site_dir": str(site), "offline_pages": [str(p) for p in changed]}
