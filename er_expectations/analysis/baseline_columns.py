"""How a batch carries its baseline release for the drift checks (SPEC 10).

A GX batch holds one release. A drift expectation compares it with a *baseline* release,
so the baseline's prediction travels in the batch as one more column:

* ``<prediction_column>__baseline`` — the release before this one in the checkpoint's
  order (``baseline: previous``, the default);
* ``<prediction_column>__baseline__<label>`` — a pinned release (``baseline: <label>``);
* ``<baseline column>__release`` — the baseline's label on every row (null when the batch
  has no baseline: the first release), shown in the results.

The checkpoint runner adds these columns (:func:`er_expectations.run.baselines.add_baseline_columns`);
from Python, add them yourself (any column of the batch can be named as ``baseline_column``).
"""

from __future__ import annotations

from collections.abc import Hashable

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


