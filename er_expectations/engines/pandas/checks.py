"""Checks of a record table given to the pandas engine and the Python API: a clear error, never a wrong number."""

from __future__ import annotations

from collections.abc import Hashable

import pandas as pd

from er_expectations.core.errors import InputError
from er_expectations.core.hints import did_you_mean


def check_frame(df: object) -> pd.DataFrame:
    if not isinstance(df, pd.DataFrame):
        raise InputError(f"expected a pandas DataFrame with one row per record, got {type(df).__name__}")
    if isinstance(df.columns, pd.MultiIndex):
        raise InputError(
            "the table has MultiIndex (several-level) columns; give one level of column names, "
            "e.g. df.columns = ['_'.join(map(str, c)) for c in df.columns]"
        )
    return df


#: ``pd.api.types.infer_dtype`` results of an object column whose values have several types.
_MIXED = {"mixed", "mixed-integer", "mixed-integer-float"}


def check_id_types(values: pd.Series, parameter: str) -> None:
    """Ids of one column must have one type: ``1`` and ``"1"`` would silently be two clusters."""
    if values.dtype != object:
        return
    kind = pd.api.types.infer_dtype(values, skipna=True)
    if kind not in _MIXED or kind == "mixed-integer-float":
        # ints mixed with floats compare equal (1 == 1.0): pandas codes them as one id
        return
    present = values.dropna()
    seen: dict[str, object] = {}
    for value in present.drop_duplicates().head(10_000):
        seen.setdefault(type(value).__name__, value)
        if len(seen) > 1:
            break
    examples = " and ".join(f"{v!r} ({t})" for t, v in list(seen.items())[:2])
    raise InputError(
        f"{parameter} column {values.name!r} mixes value types (e.g. {examples}); ids that print alike, "
        "such as 1 and '1', would count as different clusters. Give the column one type, e.g. "
        f"df[{values.name!r}] = df[{values.name!r}].astype('string')"
    )


def check_column(df: pd.DataFrame, column: Hashable, parameter: str) -> None:
    if isinstance(column, Hashable) and column in df.columns and int((df.columns == column).sum()) > 1:
        raise InputError(f"{parameter}={column!r}: the table has {int((df.columns == column).sum())} columns "
                         "with this name; rename them so that each name is used once")
    if not isinstance(column, Hashable) or column not in df.columns:
        cols = [str(c) for c in df.columns]
        close = did_you_mean(str(column), cols)
        hint = f" {close[0].upper()}{close[1:]}" if close else ""
        raise InputError(
            f"{parameter}={column!r}: no such column in the table.{hint} "
            f"Available columns: {', '.join(cols[:20])}{' …' if len(cols) > 20 else ''}"
        )
