"""The estimates so far (SPEC 6) from the labels saved in a project, and the draws still needed
for a target standard error (``plan``, SPEC 6 by resampling the draws made so far).

The labels table of the store (SPEC 2.2, each draw's first answer) becomes a benchmark
(``benchmark_from_labels``), joined to the release, and estimated as ``erx.estimate`` does
with the design of the draws (records drawn uniformly: clusters with probability
proportional to their size).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from er_expectations.core.errors import InputError
from er_expectations.workbench.project import Project

__all__ = ["METRICS", "SoFar", "estimates_so_far"]

#: The metrics shown (SPEC 5).
METRICS = ("pairwise_precision", "pairwise_recall", "pairwise_f")
#: Replicates of the plan's resampling: enough for a page that updates while people label.
PLAN_REPS = 300


@dataclass(frozen=True)
class SoFar:
    """Estimates after ``draws`` labelled draws: one row per metric (``estimate``,
    ``std_error``, ``ci_lower``, ``ci_upper``, ``draws_needed`` for ``target_se``), or the
    reason they cannot be computed yet."""

    draws: int
    target_se: float
    rows: list[dict] = field(default_factory=list)
    problem: str = ""
    plan_problem: str = ""


def estimates_so_far(project: Project, *, target_se: float = 0.02) -> SoFar:
    """The estimates of :data:`METRICS` from the project's labels so far (see the module)."""
    from er_expectations.analysis.benchmark import benchmark_from_labels
    from er_expectations.analysis.planning import plan_sample_size
    from er_expectations.analysis.release import estimate

    if not 0 < target_se < 1:
        raise InputError(f"target_se={target_se!r}: give a standard error between 0 and 1 (e.g. 0.02)")
    cfg = project.config
    labels = project.store.labels_frame()
    n = len(labels)
    if n < 2:
        return SoFar(draws=n, target_se=target_se, problem="at least two labelled draws are needed for a standard error")
    records = project.records()
    try:
        bench = benchmark_from_labels(labels, records, cfg.prediction, record_id=cfg.record_id)
        table = records[[cfg.record_id, cfg.prediction]].merge(bench, on=cfg.record_id, how="left")
        est = estimate(table, prediction=cfg.prediction, reference="reference", weights="cluster_size",
                       draws="draws", metrics=list(METRICS))
    except InputError as exc:
        return SoFar(draws=n, target_se=target_se, problem=f"the labels cannot be estimated yet: {exc}")
    needed: dict[str, object] = {}
    notes: dict[str, str] = {}
    plan_problem = ""
    try:
        plan = plan_sample_size(table, cfg.prediction, "reference", target_se=target_se, draws="draws",
                                metrics=list(METRICS), reps=PLAN_REPS, seed=0)
        needed = {str(row["metric"]): row.get("draws_needed") for row in plan.to_dict("records")}
        notes = {str(row["metric"]): str(row.get("note") or "") for row in plan.to_dict("records")}
    except InputError as exc:
        plan_problem = str(exc)
    rows = []
    for metric, row in est.to_dict("index").items():
        need = needed.get(str(metric))
        rows.append({"metric": str(metric), "estimate": row["estimate"], "std_error": row["std_error"],
                     "ci_lower": row["ci_lower"], "ci_upper": row["ci_upper"],
                     "draws_needed": None if need is None or pd.isna(need) else int(need),
                     "note": "; ".join(x for x in (str(row.get("note") or ""), notes.get(str(metric), "")) if x)})
    return SoFar(draws=n, target_se=target_se, rows=rows, plan_problem=plan_problem)
