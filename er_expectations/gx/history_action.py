"""The GX checkpoint action that records a checkpoint's results in the history store.

``er-expectations run`` records each release itself right after validating it
(:class:`~er_expectations.run.history.HistoryRecorder`). The GX checkpoint it stores over all the releases (for
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
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from great_expectations.checkpoint.actions import ValidationAction

from er_expectations.core.severity import status_of
from er_expectations.gx.docs.provenance_view import PROVENANCE_KEY
from er_expectations.gx.outcome import check_id
from er_expectations.gx.outcome import outcome as read_outcome
from er_expectations.history.store import (
    CHECK_ID_KWARG,
    HistoryError,
    HistoryStore,
    ReleaseRun,
    ResultRecord,
    resolve_url,
)

if TYPE_CHECKING:  # pragma: no cover
    from great_expectations.checkpoint.actions import ActionContext
    from great_expectations.checkpoint.checkpoint import CheckpointResult

__all__ = ["HistoryAction", "release_run", "result_record"]

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
    #: The project's key in a shared store (see :meth:`HistoryStore.open`).
    project: str | None = None
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
            with HistoryStore.open(resolve_url(self.url, base=self.base_dir), project=self.project) as store:
                for name, items in by_release.items():
                    label, position = self.releases.get(name, (name, None))
                    recorded[label] = store.record(release_run(
                        checkpoint=self.checkpoint, release=label, position=position,
                        run_id=checkpoint_result.run_id, validations=items))
        except HistoryError as error:
            log.warning("er-expectations: history not recorded: %s", error)
            return {"recorded": recorded, "problem": str(error)}
        return {"recorded": recorded, "problem": None}


def _details(evr: Any) -> Mapping[str, Any]:
    result = evr.result if isinstance(getattr(evr, "result", None), Mapping) else {}
    details = result.get("details")
    return details if isinstance(details, Mapping) else {}


def result_record(suite: str, evr: Any) -> ResultRecord:
    """One GX expectation validation result as a history row (SPEC 5-7 estimates with SE/CI)."""
    outcome = read_outcome(suite, evr)
    config = evr.expectation_config
    kwargs = dict(config.kwargs or {})
    if check_id(config):  # a suite's id: names the check and identifies its series
        kwargs[CHECK_ID_KWARG] = check_id(config)
    details = _details(evr)
    metric = (details.get("metric") or details.get("statistic") or kwargs.get("statistic")
              or kwargs.get("metric") or outcome.label)
    column = kwargs.get("prediction_column") or kwargs.get("column")
    observed = outcome.observed
    value = observed if isinstance(observed, int | float) and not isinstance(observed, bool) else None
    if value is None:
        value = details.get("estimate")
    text = details.get("observed_text")
    return ResultRecord(
        suite=suite,
        expectation_type=outcome.expectation,
        kwargs=kwargs,
        label=outcome.label,
        severity=outcome.severity,
        success=outcome.success,
        metric=str(metric) if metric is not None else None,
        column=str(column) if column is not None else None,
        value=value,
        estimate=details.get("estimate"),
        std_error=details.get("std_error"),
        ci_lower=details.get("ci_lower"),
        ci_upper=details.get("ci_upper"),
        ci_level=details.get("ci_level"),
        error=outcome.error,
        observed_text=str(text) if text is not None else None,
        details=details,
        outcome=outcome.status,
    )


def _suite_name(identifier: Any, validation: Any) -> str:
    name = getattr(validation, "suite_name", None)
    if name:
        return str(name)
    suite_id = getattr(identifier, "expectation_suite_identifier", None)
    return str(getattr(suite_id, "name", None) or identifier)


def release_run(*, checkpoint: str, release: str, position: int | None, run_id: Any,
                validations: Mapping[Any, Any] | Iterable[tuple[Any, Any]], status: str | None = None
                ) -> ReleaseRun:
    """The history rows of one release: every result of its suites' validations.

    ``validations`` maps GX result identifiers to suite validation results (a
    ``CheckpointResult.run_results``); ``status`` defaults to the severity rule applied to
    the rows (:mod:`er_expectations.core.severity`).
    """
    items = list(validations.items() if isinstance(validations, Mapping) else validations)
    results = [result_record(_suite_name(identifier, validation), evr)
               for identifier, validation in items for evr in validation.results]
    if status is None:
        failed = [r for r in results if not r.success and not r.error]
        status = status_of(critical_failed=sum(r.severity == "critical" for r in failed),
                           errors=sum(bool(r.error) for r in results),
                           warnings_failed=sum(r.severity != "critical" for r in failed))
    metas = [getattr(validation, "meta", None) or {} for _, validation in items]
    provenance = next((m[PROVENANCE_KEY] for m in metas if isinstance(m.get(PROVENANCE_KEY), Mapping)), None)
    return ReleaseRun(
        checkpoint=checkpoint, release=release, status=status, results=tuple(results), position=position,
        provenance=provenance,
        gx_run_name=getattr(run_id, "run_name", None), gx_run_time=getattr(run_id, "run_time", None),
    )
