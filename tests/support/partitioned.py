"""Three releases of one table, a date apart (the daily-partitioned SQL batch of issue 30 item 4):
the engine test (tests/engines/test_sql_partitioned.py) and GX's daily batches
(tests/gx/test_gx_partitioned.py) read them."""

from __future__ import annotations

import datetime

import numpy as np
import pandas as pd

DAYS = [datetime.date(2021, 9, 30), datetime.date(2021, 12, 30), datetime.date(2022, 3, 31)]


def releases(seed: int = 7) -> pd.DataFrame:
    """Three releases of 600 records: the same benchmark (40 true clusters, versions 1 and 2,
    some records added later), predictions that split and merge differently each day, names
    with homonyms across clusters."""
    rng = np.random.default_rng(seed)
    n = 600
    truth = rng.integers(0, 150, n)
    names = np.array([f"name {t % 60}" for t in truth], dtype=object)
    names[rng.random(n) < 0.1] = None
    sampled = np.isin(truth, rng.choice(150, 40, replace=False))
    bench = pd.array(np.where(sampled, truth + 10**15, 0), dtype="Int64")  # large ids
    bench[~sampled] = pd.NA
    version = pd.array(np.where(rng.random(n) < 0.85, 1 + (rng.random(n) < 0.2), 0), dtype="Int64")
    version[(version == 0) & ~sampled] = pd.NA  # added after labelling (never a benchmark record)
    version[(version == 0) & sampled] = 1
    frames = []
    for i, day in enumerate(DAYS):
        pred = truth.copy()
        split = rng.random(n) < 0.1 * (i + 1)
        pred[split] = 1000 + rng.integers(0, 40, split.sum())
        pred = pd.array(pred, dtype="Int64")
        pred[rng.random(n) < 0.05] = pd.NA  # not in this release
        frames.append(pd.DataFrame({"record": np.arange(n) + 2**62, "release_date": day, "pred": pred,
                                    "ref": bench, "name": names, "benchmark_version": version}))
    return pd.concat(frames, ignore_index=True)
