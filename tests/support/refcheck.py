"""Comparing an estimate of the package with the reference of :mod:`support.reference_impl`
(the interval rules of SPEC 6: zero-event intervals, missing standard errors with a note,
ranges clipped to the metric's bounds)."""

from __future__ import annotations

import math

import pandas as pd

from support import reference_impl as ref
from support.reference_impl import close


def num(value):
    return math.nan if value is None or pd.isna(value) else float(value)


def check_estimate_row(metric, row, expected, ci_level, tol=1e-9):
    """Compare one row of erx.estimate with one reference entry."""
    problems = []
    est = num(row["estimate"])
    if not close(est, expected["estimate"], tol):
        problems.append(f"estimate {est!r} != {expected['estimate']!r}")
    se = num(row["std_error"])
    exp_se = expected["std_error"]
    zero_event = expected.get("zero_event")
    if zero_event is not None:
        # a sample without errors: the binomial interval of SPEC 6, whatever the SE
        got = (num(row["ci_lower"]), num(row["ci_upper"]))
        if not (close(got[0], zero_event[0], tol) and close(got[1], zero_event[1], tol)):
            problems.append(f"zero-event interval {got!r} != {zero_event!r}")
        if not close(se, exp_se, tol):
            problems.append(f"std_error {se!r} != {exp_se!r}")
    elif math.isnan(exp_se):
        if not math.isnan(se):
            problems.append(f"std_error {se!r} should be NaN ({expected['case']})")
        note = row["note"]
        if note is None or pd.isna(note) or not str(note).strip():
            problems.append(f"no note explaining the missing std_error ({expected['case']})")
    else:
        variants = expected.get("std_error_variants", [exp_se])
        if not any(close(se, v, tol) for v in variants):
            problems.append(f"std_error {se!r} != {variants!r}")
        else:
            z = ref.z_value(ci_level)
            for col, sign in (("ci_lower", -1), ("ci_upper", 1)):
                raw = est + sign * z * se
                got = num(row[col])
                allowed = [raw]
                if metric in ref.UNIT_INTERVAL_METRICS:
                    allowed.append(min(1.0, max(0.0, raw)))
                if metric == "average_cluster_size":
                    # a cluster holds at least one record: range [1, inf)
                    allowed.append(max(1.0, raw))
                if not any(close(got, a, tol) for a in allowed):
                    problems.append(f"{col} {got!r} not in {allowed!r}")
    if int(row["draws"]) != expected["draws"]:
        problems.append(f"draws {row['draws']!r} != {expected['draws']}")
    if int(row["clusters"]) != expected["clusters"]:
        problems.append(f"clusters {row['clusters']!r} != {expected['clusters']}")
    return problems
