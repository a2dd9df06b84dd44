"""The release case of the GX tests on every engine: one table with a prediction, a benchmark,
names and a group column (SPEC 2.1, 3-8)."""

from __future__ import annotations

import numpy as np
import pandas as pd


def release_frame(seed: int = 0, n: int = 3000, ids: str = "str") -> pd.DataFrame:
    """A release of ``n`` records (text or integer ids, 5 % outside the release), a benchmark of
    60 true clusters, names and a group column constant per entity."""
    rng = np.random.default_rng(seed)
    sizes = rng.zipf(2.0, size=n // 2).clip(max=40)
    truth = np.repeat(np.arange(sizes.size), sizes)[:n]
    pred = np.where(rng.random(truth.size) < 0.9, truth, rng.integers(0, truth.max() + 1, truth.size))
    sampled = rng.choice(np.unique(truth), size=60, replace=False)
    out = rng.random(truth.size) < 0.05  # records outside the release
    if ids == "str":
        pred_col = pd.Series([f"p{x}" for x in pred], dtype=object).where(~out, None)
        ref_col = pd.Series([f"t{x}" for x in truth], dtype=object).where(np.isin(truth, sampled), None)
    else:
        pred_col = pd.Series(pred, dtype="Int64").where(~out, pd.NA)
        ref_col = pd.Series(truth + 10_000, dtype="Int64").where(np.isin(truth, sampled), pd.NA)
    return pd.DataFrame({"record": np.arange(truth.size), "pred": pred_col, "ref": ref_col,
                         "name": [f"name{k % 300}" for k in truth],
                         "grp": [("north", "south", "east")[k % 3] for k in truth]})  # constant per entity
