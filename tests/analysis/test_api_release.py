"""`erx.Release` shares one aggregation between statistics and must agree with the functions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import er_expectations as erx


@pytest.mark.parametrize("seed", range(5))
def test_release_methods_equal_the_functions(seed):
    rng = np.random.default_rng(seed)
    n = 400
    truth = rng.integers(0, 80, n)
    pred = np.where(rng.random(n) < 0.85, truth, rng.integers(0, 100, n)).astype(object)
    pred[rng.random(n) < 0.1] = None  # records outside the release
    names = np.array([f"n{t % 30}" if rng.random() > 0.1 else f"v{t}" for t in truth], dtype=object)
    names[rng.random(n) < 0.05] = None
    sampled = rng.choice(80, 15, replace=False)
    df = pd.DataFrame({"p": pred, "t": np.where(np.isin(truth, sampled), truth, None), "name": names})

    rel = erx.Release(df, prediction="p", name="name")
    summary = rel.summarize()  # factorises the names: estimate() then reuses the codes
    shared = rel.estimate(reference="t")
    pd.testing.assert_series_equal(summary, erx.summarize(df, cluster="p", name="name"))
    alone = erx.estimate(df, prediction="p", reference="t", name="name")  # membership-scan path
    pd.testing.assert_frame_equal(shared, alone)
    assert shared.attrs == alone.attrs
