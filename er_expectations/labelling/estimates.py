"""The estimates so far (issue 19, "from the page to the checks"; SPEC 2.1, 6).

As draws are labelled, the benchmark built from the labels (``benchmark_from_labels``, after
the critical rules of SPEC 9) is joined onto the release and estimated (``erx.estimate``):
"after 180 draws: pairwise precision 0.91 ± 0.03". With a target standard error, the
existing planner (``erx.plan_sample_size``) says how many draws the benchmark needs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from er_expectations.core.errors import InputError
from er_expectations.labelling.project import Project

__all__ = ["METRICS", "SoFar", "estimates_from_labels", "estimates_so_far"]

#: The metrics estimated by default.
METRICS = ("pairwise_precision", "pairwise_recall")


def _evaluation_table(project: Project, labels: pd.DataFrame) -> pd.DataFrame:
    """The release with the benchmark of ``labels`` joined on (SPEC 2.1): ``reference``, ``draws``."""
    from er_expectations.analysis.benchmark import benchmark_from_labels

    cfg = project.config
    records = project.records()
    bench = benchmark_from_labels(labels, records, prediction=cfg.prediction, record_id=cfg.record_id)
    return records[[cfg.record_id, cfg.prediction]].merge(bench, on=cfg.record_id, how="left")


def estimates_from_labels(project: Project, labels: pd.DataFrame, *,
                          metrics: Sequence[str] = METRICS) -> pd.DataFrame:
    """``erx.estimate`` of ``metrics`` from the benchmark that ``labels`` (SPEC 2.2) make on the
    project's release (design: records drawn uniformly, SPEC 1). Labels that break a critical
    rule of SPEC 9 raise :class:`InputError` listing them."""
    from er_expectations.analysis.release import estimate

    df = _evaluation_table(project, labels)
    return estimate(df, prediction=project.config.prediction, reference="reference", weights="cluster_size",
                    draws="draws", metrics=list(metrics))


@dataclass(frozen=True)
class SoFar:
    """The estimates from the draws labelled so far: ``labelled`` of ``draws`` draws answered;
    ``estimates`` (``erx.estimate``'s frame) or ``error`` (the labels break a critical rule, or
    none is labelled yet); ``plan`` (``erx.plan_sample_size``'s frame: ``draws_needed`` for
    the target standard error) when a target was given."""

    draws: int
    labelled: int
    estimates: pd.DataFrame | None = None
    plan: pd.DataFrame | None = None
    error: str | None = None


def estimates_so_far(project: Project, *, metrics: Sequence[str] = METRICS, target_se: float | None = None,
                     reps: int = 500, seed: int = 0) -> SoFar:
    """The estimates of ``metrics`` from every draw answered so far (each draw's first answer),
    and with ``target_se`` the draws needed (``reps`` resamples of the pilot, ``seed``)."""
    from er_expectations.analysis.release import estimate
    from er_expectations.analysis.sample_size import plan_sample_size

    labels = project.store.labels_frame()
    n = len(project.store.draws())
    if labels.empty:
        return SoFar(draws=n, labelled=0, error="no draw is labelled yet")
    try:
        df = _evaluation_table(project, labels)
    except InputError as exc:
        return SoFar(draws=n, labelled=len(labels), error=str(exc))
    prediction = project.config.prediction
    est = estimate(df, prediction=prediction, reference="reference", weights="cluster_size", draws="draws",
                   metrics=list(metrics))
    plan = None
    if target_se is not None:
        plan = plan_sample_size(df, prediction=prediction, reference="reference", draws="draws",
                                target_se=target_se, metrics=list(metrics), reps=reps, seed=seed)
    return SoFar(draws=n, labelled=len(labels), estimates=est, plan=plan)
