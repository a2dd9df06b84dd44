"""The history's rows as pandas DataFrames, the form :class:`~.store.HistoryStore` returns."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from er_expectations.history.reading import FLOAT_COLUMNS

__all__ = ["history_frame"]


def history_frame(rows: list[dict[str, Any]], columns: Sequence[str]) -> Any:
    """A DataFrame of ``rows`` with fixed types: times as UTC timestamps (SQLite returns them
    without a time zone), numbers as floats (NaN for none), positions and versions as
    nullable integers, success as bool, missing text as ``None``."""
    frame = pd.DataFrame.from_records(rows, columns=list(columns))
    for name in ("gx_run_time", "recorded_at"):
        if name in frame.columns:
            frame[name] = pd.to_datetime(frame[name], utc=True)
    for name in FLOAT_COLUMNS:
        if name in frame.columns:
            frame[name] = pd.to_numeric(frame[name], errors="coerce").astype("float64")
    for name in ("position", "version"):
        if name in frame.columns:
            frame[name] = pd.array(frame[name].tolist(), dtype="Int64")
    if "success" in frame.columns:
        frame["success"] = frame["success"].astype(bool)
    for name in ("error", "observed_text", "details_json", "metric", "column", "gx_run_name", "project",
                 "provenance_json", "outcome"):
        if name in frame.columns:  # text columns: None when missing, never NaN
            frame[name] = frame[name].astype(object).where(frame[name].notna(), None)
    return frame


