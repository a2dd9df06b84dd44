"""Where a drift check finds its baseline release in a batch (SPEC 10).

A GX batch holds one release. A drift expectation compares it with a *baseline* release,
so the baseline's prediction travels in the batch as one more column:

* ``<prediction_column>__baseline`` — the release before this one in the checkpoint's
  order (``baseline: previous``, the default);
* ``<prediction_column>__baseline__<label>`` — a pinned release (``baseline: <label>``);
* ``<baseline column>__release`` — the baseline's label on every row (null when the batch
  has no baseline: the first release), shown in the results.

The checkpoint runner adds these columns (:func:`add_baseline_columns`) to the release
tables when a suite declares drift checks; from Python, add them yourself (any column of
the batch can be named as ``baseline_column``).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

__all__ = [
    "PREVIOUS",
    "BaselineNeed",
    "add_baseline_columns",
    "baseline_label_column",
    "default_baseline_column",
    "resolve_baseline",
]

#: The ``baseline`` value meaning "the release before this one in the checkpoint's order".
PREVIOUS = "previous"


def default_baseline_column(prediction_column: str, baseline: str = PREVIOUS) -> str:
    """The batch column of the baseline release's prediction (see the module docstring)."""
    if baseline == PREVIOUS:
        return f"{prediction_column}__baseline"
    return f"{prediction_column}__baseline__{baseline}"


def baseline_label_column(baseline_column: Hashable) -> str:
    """The batch column that holds the baseline release's label."""
    return f"{baseline_column}__release"


def baseline_label(df: pd.DataFrame, baseline_column: Hashable) -> str | None:
    """The label of the baseline release of a batch, when the batch carries it."""
    column = baseline_label_column(baseline_column)
    if column not in df.columns:
        return None
    values = df[column].dropna()
    return str(values.iloc[0]) if len(values) else None


@dataclass(frozen=True, slots=True)
class BaselineNeed:
    """One baseline column a checkpoint's suites read: which release fills it."""

    column: str
    baseline: str  # "previous" or a release label


def resolve_baseline(baseline: str, label: str, order: Sequence[str], known: Mapping[str, str]) -> str | None:
    """The label of the baseline release of release ``label``.

    ``order`` is the checkpoint's release order; ``known`` maps every label and key of the
    predictions to its label. ``previous`` is the release before ``label`` in ``order``
    (None for the first); a pinned baseline is looked up in ``known`` (None when unknown,
    which the runner reports as a configuration error before it runs).
    """
    if baseline == PREVIOUS:
        i = list(order).index(label)
        return order[i - 1] if i > 0 else None
    return known.get(baseline)


def add_baseline_columns(frame: pd.DataFrame, *, id_column: str, prediction_column: str,
                         baselines: Mapping[str, tuple[str | None, pd.DataFrame | None]]) -> pd.DataFrame:
    """``frame`` with, for each baseline column, the baseline release's prediction and label.

    ``baselines`` maps a column name to (baseline label, that release's table with
    ``id_column`` and ``prediction_column``), or (None, None) when this release has no
    baseline (its columns are then null). Rows are matched on the record id; a record
    absent from the baseline is null there.
    """
    out = frame.copy(deep=False)
    source = frame[prediction_column]
    for column, (label, table) in baselines.items():
        if table is None:
            out[column] = _nulls_like(source)
            out[baseline_label_column(column)] = pd.Series(pd.NA, index=out.index, dtype="string")
            continue
        values = table.set_index(id_column)[prediction_column]
        mapped = out[id_column].map(values)
        if pd.api.types.is_integer_dtype(values.dtype) and not pd.api.types.is_integer_dtype(mapped.dtype):
            mapped = out[id_column].map(values.astype("Int64")).astype("Int64")  # ids stay integers
        out[column] = mapped
        out[baseline_label_column(column)] = pd.Series(label, index=out.index, dtype="string")
    return out


def _nulls_like(source: pd.Series) -> pd.Series:
    """An all-null column of the kind of ``source`` (integers stay nullable integers)."""
    if pd.api.types.is_integer_dtype(source.dtype):
        return pd.Series(pd.NA, index=source.index, dtype="Int64")
    return pd.Series(None, index=source.index, dtype=object)
