"""Charts of the planning tables: :func:`simulation_chart` for ``simulate``'s table and
:func:`plan_chart` for ``plan_sample_size``'s (SPEC 1, 5-7), drawn with altair."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import pandas as pd

__all__ = ["plan_chart", "simulation_chart"]


def simulation_chart(frame: pd.DataFrame, *, metrics: Iterable[str] | None = None):
    """An altair chart of a :func:`simulate` frame: bias, RMSE and coverage against the size,
    one line per design, one column per metric (a dashed rule at 0 bias and at the
    nominal coverage). Write it with :func:`er_expectations.core.charts.write_chart`."""
    import altair as alt

    if metrics is not None:
        frame = frame[frame["metric"].isin(list(metrics))]
    level = float(frame.attrs.get("ci_level", 0.95))
    measures = {"bias": "bias", "rmse": "RMSE", "coverage": "coverage"}
    long = frame.melt(id_vars=["metric", "design", "size"], value_vars=list(measures), var_name="measure",
                      value_name="value")
    long["measure"] = long["measure"].map(measures)
    long["reference"] = long["measure"].map({"bias": 0.0, "RMSE": math.nan, "coverage": level})
    base = alt.Chart()
    lines = base.mark_line(point=True).encode(
        x=alt.X("size:Q", title="draws"),
        y=alt.Y("value:Q", title=None, scale=alt.Scale(zero=False)),
        color=alt.Color("design:N", title="design"),
        tooltip=["metric", "design", "size", alt.Tooltip("value:Q", format=".4f")],
    )
    rule = base.mark_rule(strokeDash=[4, 3], color="#888").encode(y="reference:Q")
    return (
        alt.layer(lines, rule, data=long)
        .properties(width=160, height=110)
        .facet(row=alt.Row("measure:N", title=None, sort=list(measures.values())),
               column=alt.Column("metric:N", title=None))
        .resolve_scale(y="independent")
        .properties(title=f"Simulation: {int(frame['reps'].max()) if len(frame) else 0} replications per size "
                          f"(coverage of {level * 100:g} % intervals)")
    )


def plan_chart(frame: pd.DataFrame):
    """An altair chart of a :func:`plan_sample_size` frame: per metric, the resampled
    standard error against the number of draws, the extrapolation SE·√(k/n) from the
    pilot, the target (dashed) and the draws needed (a dot). Log scales on both axes."""
    import altair as alt

    curves = frame.attrs.get("curves", {})
    lines, marks = [], []
    for r in frame.itertuples():
        c = curves.get(r.metric)
        if not c:
            continue
        n = np.asarray(c["draws"], dtype=np.float64)
        se = np.asarray(c["std_error"], dtype=np.float64)
        if n.size > 150:  # log-spaced points are enough for a log axis (altair embeds the data)
            pick = np.unique(np.round(np.geomspace(1, n.size, 150)).astype(np.int64) - 1)
            n, se = n[pick], se[pick]
        keep = (se > 0) & np.isfinite(se)
        lines.append(pd.DataFrame({"metric": r.metric, "draws": n[keep], "std_error": se[keep],
                                   "curve": "resampled pilot"}))
        if math.isfinite(r.pilot_std_error) and r.pilot_std_error > 0:
            lines.append(pd.DataFrame({"metric": r.metric, "draws": n,
                                       "std_error": r.pilot_std_error * np.sqrt(r.pilot_draws / n),
                                       "curve": "SE·√(k/n)"}))
        marks.append({"metric": r.metric, "target": r.target_std_error,
                      "needed": np.nan if pd.isna(r.draws_needed) else float(r.draws_needed),
                      "at": r.std_error_at_draws})
    data = pd.concat(lines, ignore_index=True) if lines else pd.DataFrame(
        columns=["metric", "draws", "std_error", "curve"])
    data = data.merge(pd.DataFrame(marks, columns=["metric", "target", "needed", "at"]), on="metric", how="left")
    base = alt.Chart()
    curve = base.mark_line().encode(
        # log axes: labels at the powers of ten only, so that 10, 20, 50 … never run into each other
        # (issue 18, item 6)
        x=alt.X("draws:Q", scale=alt.Scale(type="log"), title="draws",
                axis=alt.Axis(labelOverlap="greedy", labelFlush=False, format="~s",
                              labelExpr="test(/^(1|10|100)(k|M|G)?$/, datum.label) ? datum.label : ''")),
        y=alt.Y("std_error:Q", scale=alt.Scale(type="log"), title="standard error",
                axis=alt.Axis(labelOverlap="greedy", format="~g",
                              labelExpr="test(/^(1|0[.]0*1|1e-[0-9]+)$/, datum.label) ? datum.label : ''")),
        color=alt.Color("curve:N", title=None, legend=alt.Legend(orient="top")),
        strokeDash=alt.StrokeDash("curve:N", legend=None),
    )
    target = base.mark_rule(strokeDash=[4, 3], color="#888").encode(y="target:Q")
    needed = base.mark_point(filled=True, size=60, color="black").encode(x="needed:Q", y="at:Q")
    return (
        alt.layer(curve, target, needed, data=data)
        .properties(width=200, height=150)
        .facet(facet=alt.Facet("metric:N", title=None, header=alt.Header(labelLimit=200)), columns=3)
        .resolve_scale(y="independent")
        .properties(title=f"Draws needed (pilot of {int(frame['pilot_draws'].iloc[0]) if len(frame) else 0} draws, "
                          f"{frame.attrs.get('reps', 0)} resamples per size)")
    )
