"""The default interval of every metric is the one issue 28 chose (SPEC 6, "Default interval").

A registry test: every metric of the registry, as an estimate, a subgroup gap and a change
between releases, gets by default exactly the method the decision table names, and the
same interval as asking for that method with the same seed. ``linearization`` stays
selectable and gives its own (different) interval.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import er_expectations as erx
from er_expectations.stats import DEFAULT_CI_METHOD, RECOMMENDED
from er_expectations.stats.estimator import (
    RECOMMENDED_CHANGE_METHOD,
    RECOMMENDED_CI_METHOD,
    RECOMMENDED_GAP_METHOD,
    concrete_methods,
)
from er_expectations.stats.metrics import METRICS

# The decision of issue 28 (benchmarks/README.md, "Default floor and default interval"),
# written out here on purpose: a change of the registry must change this table too.
RATIO_LIKE = {"cluster_precision", "cluster_f", "average_cluster_size"}
CHOSEN_ESTIMATE = dict.fromkeys(METRICS, "bca")
CHOSEN_GAP = dict.fromkeys(METRICS, "hull")
CHOSEN_CHANGE = {m: ("linearization" if m in RATIO_LIKE else "logit") for m in METRICS}


def test_the_default_is_the_recommended_method_of_each_metric():
    assert DEFAULT_CI_METHOD == RECOMMENDED
    assert set(RECOMMENDED_CI_METHOD) == set(METRICS), "every metric of the registry has a chosen default"
    for metric in METRICS:
        assert RECOMMENDED_CI_METHOD[metric] == CHOSEN_ESTIMATE[metric], metric
        assert RECOMMENDED_GAP_METHOD[metric] == CHOSEN_GAP[metric], metric
        assert RECOMMENDED_CHANGE_METHOD[metric] == CHOSEN_CHANGE[metric], metric
        assert "bca" in concrete_methods((DEFAULT_CI_METHOD,), (metric,))


def _release(seed: int = 3) -> pd.DataFrame:
    """120 true clusters of 1–4 records drawn once each; a fifth of the records merged into
    other predicted clusters (errors spread over many clusters), a baseline with fewer."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 5, size=120)
    truth = np.repeat(np.arange(120), sizes)
    pred = truth.copy()
    moved = rng.random(truth.size) < 0.2
    pred[moved] = rng.integers(0, 120, size=int(moved.sum()))
    base = np.where(rng.random(truth.size) < 0.5, truth, pred)
    return pd.DataFrame({"pred": [f"p{v}" for v in pred], "base": [f"p{v}" for v in base],
                         "ref": [f"t{v}" for v in truth],
                         "grp": ["a" if t % 2 else "b" for t in truth]})


def test_estimate_without_ci_method_uses_the_chosen_method_of_every_metric():
    df = _release()
    metrics = [m for m in METRICS if m not in ("homonymy_rate", "name_variation_rate")]  # need name columns
    default = erx.estimate(df, "pred", "ref", weights="uniform", metrics=metrics, n_boot=300, seed=11)
    assert default.attrs["ci_method"] == DEFAULT_CI_METHOD and default.attrs["seed"] == 11
    for metric, row in default.iterrows():
        assert row["ci_method"] == CHOSEN_ESTIMATE[metric], (metric, row["ci_method"])
    bca = erx.estimate(df, "pred", "ref", weights="uniform", metrics=metrics, ci_method="bca", n_boot=300, seed=11)
    cols = ["estimate", "std_error", "ci_lower", "ci_upper"]
    pd.testing.assert_frame_equal(default[cols], bca[cols])
    lin = erx.estimate(df, "pred", "ref", weights="uniform", metrics=metrics, ci_method="linearization")
    assert set(lin["ci_method"]) == {"linearization"}  # still selectable
    np.testing.assert_allclose(lin["estimate"], default["estimate"], rtol=0, atol=0)
    assert not np.allclose(lin["ci_lower"], default["ci_lower"])  # and a different interval


def test_gap_and_change_without_ci_method_use_the_chosen_methods():
    df = _release(5)
    out = erx.estimate_by_group(df, "pred", "ref", group_column="grp", weights="uniform", min_draws=10,
                                metrics=["pairwise_recall", "b_cubed_precision"], n_boot=300, seed=2)
    assert set(out["disparity_ci_method"]) == {"hull"}
    assert set(out["ci_method"]) == {"bca"}
    for metric in ("pairwise_recall", "cluster_precision"):
        ch = erx.estimate_change(df, "pred", "base", metric, "ref", weights="uniform", n_boot=300, seed=4)
        assert ch.change.interval == CHOSEN_CHANGE[metric], (metric, ch.change.interval)
        explicit = erx.estimate_change(df, "pred", "base", metric, "ref", weights="uniform",
                                       ci_method=CHOSEN_CHANGE[metric], n_boot=300, seed=4)
        assert (ch.change.ci_lower, ch.change.ci_upper) == pytest.approx(
            (explicit.change.ci_lower, explicit.change.ci_upper), rel=1e-12)
