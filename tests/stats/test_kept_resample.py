"""The bootstrap's resample kept between estimates (``stats/estimator.py: _resample``): the same
values as drawing it again, never written to, and only for a fixed seed and a bounded size."""

from __future__ import annotations

import numpy as np
import pytest

from er_expectations.stats import estimator
from er_expectations.stats.estimator import bootstrap_counts, bootstrap_sums


def _drawn_again(values: np.ndarray, draws: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    return np.vstack([w @ values for w in bootstrap_counts(draws, n_boot, seed)])


def test_kept_resample_gives_the_values_of_a_new_one(monkeypatch):
    monkeypatch.setattr(estimator, "_kept_resample", None)
    rng = np.random.default_rng(3)
    draws, values = rng.integers(1, 4, size=57), rng.random((57, 3))
    first = bootstrap_sums(values, draws, n_boot=300, seed=11)
    kept = estimator._kept_resample
    assert kept is not None and all(not block.flags.writeable for block in kept[1])
    again = bootstrap_sums(values[:, ::-1], draws, n_boot=300, seed=11)  # other values, the same resample
    assert estimator._kept_resample is kept
    assert np.array_equal(first, _drawn_again(values, draws, 300, 11))
    assert np.array_equal(again, _drawn_again(values[:, ::-1], draws, 300, 11))
    other = bootstrap_sums(values, draws, n_boot=300, seed=12)  # another seed: drawn, and kept instead
    assert np.array_equal(other, _drawn_again(values, draws, 300, 12))
    assert estimator._kept_resample is not kept


@pytest.mark.parametrize("case", ["no seed", "too large"])
def test_resample_not_kept_without_a_seed_or_when_large(monkeypatch, case):
    monkeypatch.setattr(estimator, "_kept_resample", None)
    draws, values = np.ones(40, dtype=np.int64), np.arange(40.0)
    if case == "too large":
        monkeypatch.setattr(estimator, "_KEPT_RESAMPLE_BYTES", 1000)
        bootstrap_sums(values, draws, n_boot=50, seed=1)
    else:
        bootstrap_sums(values, draws, n_boot=50, seed=None)
    assert estimator._kept_resample is None
