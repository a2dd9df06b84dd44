"""The default interval of every metric is the one issue 28 chose (SPEC 6, "Default interval").

A registry test: every metric of the registry gets, when no ``ci_method`` is given, exactly
the method of the decision table below, as an estimate, a subgroup gap and a change between
releases; and ``recommended`` gives each metric the method the coverage study chose. The
decision of issue 28 (benchmarks/README.md, "Default floor and default interval"): the
recommended interval covers at least as well for every metric (BCa estimates, the hull gap,
the logit MOVER change of shares), so it is the default for every metric, seeded by
``DEFAULT_SEED`` so that a default result is reproducible; ``linearization`` stays selectable.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

import er_expectations as erx
from er_expectations.stats import DEFAULT_CI_METHOD, DEFAULT_SEED
from er_expectations.stats.estimator import (
    RECOMMENDED_CHANGE_METHOD,
    RECOMMENDED_CI_METHOD,
    RECOMMENDED_GAP_METHOD,
)
from er_expectations.stats.metrics import METRICS

# written out on purpose: a change of the registry or of a default must change this table too
CHOSEN_DEFAULT = dict.fromkeys(METRICS, "recommended")
RATIO_LIKE = {"cluster_precision", "cluster_f", "average_cluster_size"}
RECOMMENDED_ESTIMATE = dict.fromkeys(METRICS, "bca")
RECOMMENDED_GAP = dict.fromkeys(METRICS, "hull")
RECOMMENDED_CHANGE = {m: ("linearization" if m in RATIO_LIKE else "logit") for m in METRICS}
# the method each result names under the default (the concrete method of "recommended")
DEFAULT_ESTIMATE = {m: RECOMMENDED_ESTIMATE[m] if CHOSEN_DEFAULT[m] == "recommended" else CHOSEN_DEFAULT[m]
                    for m in METRICS}
DEFAULT_GAP = {m: RECOMMENDED_GAP[m] if CHOSEN_DEFAULT[m] == "recommended" else CHOSEN_DEFAULT[m] for m in METRICS}
DEFAULT_CHANGE = {m: RECOMMENDED_CHANGE[m] if CHOSEN_DEFAULT[m] == "recommended" else CHOSEN_DEFAULT[m]
                  for m in METRICS}


def test_the_registry_and_the_decision_table_agree():
    assert set(CHOSEN_DEFAULT) == set(METRICS) == set(RECOMMENDED_CI_METHOD)
    assert DEFAULT_CI_METHOD == "recommended" and DEFAULT_SEED == 0
    for metric in METRICS:
        assert RECOMMENDED_CI_METHOD[metric] == RECOMMENDED_ESTIMATE[metric], metric
        assert RECOMMENDED_GAP_METHOD[metric] == RECOMMENDED_GAP[metric], metric
        assert RECOMMENDED_CHANGE_METHOD[metric] == RECOMMENDED_CHANGE[metric], metric


def _release(seed: int = 3) -> pd.DataFrame:
    """120 true clusters of 1–4 records drawn once each; a fifth of the records merged into
    other predicted clusters, a baseline release with about half of those errors."""
    rng = np.random.default_rng(seed)
    truth = np.repeat(np.arange(120), rng.integers(1, 5, size=120))
    pred = truth.copy()
    moved = rng.random(truth.size) < 0.2
    pred[moved] = rng.integers(0, 120, size=int(moved.sum()))
    base = np.where(rng.random(truth.size) < 0.5, truth, pred)
    return pd.DataFrame({"pred": [f"p{v}" for v in pred], "base": [f"p{v}" for v in base],
                         "ref": [f"t{v}" for v in truth], "grp": ["a" if t % 2 else "b" for t in truth]})


def test_every_metric_without_ci_method_gets_its_chosen_default():
    df = _release()
    metrics = [m for m in METRICS if m not in ("homonymy_rate", "name_variation_rate")]  # need a name column
    default = erx.estimate(df, prediction="pred", reference="ref", weights="uniform", metrics=metrics)
    for metric, row in default.iterrows():
        assert row["ci_method"] == DEFAULT_ESTIMATE[metric], (metric, row["ci_method"])
    # resampled with the default seed: the same data give the same interval on every run
    assert default.attrs["seed"] == DEFAULT_SEED
    pd.testing.assert_frame_equal(default, erx.estimate(df, prediction="pred", reference="ref", weights="uniform",
                                                        metrics=metrics))
    explicit = erx.estimate(df, prediction="pred", reference="ref", weights="uniform", metrics=metrics,
                            ci_method="recommended", seed=DEFAULT_SEED)
    pd.testing.assert_frame_equal(default, explicit)
    # linearization stays selectable, on the same estimates
    lin = erx.estimate(df, prediction="pred", reference="ref", weights="uniform", metrics=metrics,
                       ci_method="linearization")
    assert set(lin["ci_method"]) == {"linearization"} and "seed" not in lin.attrs
    np.testing.assert_array_equal(lin["estimate"].to_numpy(), default["estimate"].to_numpy())
    assert not np.allclose(lin["ci_lower"].to_numpy(float), default["ci_lower"].to_numpy(float))


def test_gaps_and_changes_without_ci_method_get_the_chosen_default():
    df = _release(5)
    out = erx.estimate_by_group(df, prediction="pred", reference="ref", group_column="grp", weights="uniform", min_draws=10,
                                metrics=["pairwise_recall", "b_cubed_precision"])
    tested = out[out["status"] == "ok"]
    assert len(tested) > 0
    for (_, metric), row in tested.iterrows():
        assert row["disparity_ci_method"] == DEFAULT_GAP[metric], (metric, row)
        assert row["ci_method"] in (DEFAULT_ESTIMATE[metric], "zero_event"), (metric, row)
    lin = erx.estimate_by_group(df, prediction="pred", reference="ref", group_column="grp", weights="uniform",
                                min_draws=10, metrics=["pairwise_recall", "b_cubed_precision"], ci_method="linearization")
    assert set(lin.loc[lin["status"] == "ok", "disparity_ci_method"]) == {"linearization"}
    for metric in ("pairwise_recall", "cluster_precision"):
        ch = erx.estimate_change(df, prediction="pred", baseline="base", metric=metric, reference="ref", weights="uniform")
        assert ch.change.interval == DEFAULT_CHANGE[metric], (metric, ch.change.interval)
        assert ch.current.interval == DEFAULT_ESTIMATE[metric], (metric, ch.current.interval)
        lin = erx.estimate_change(df, prediction="pred", baseline="base", metric=metric, reference="ref",
                                  weights="uniform", ci_method="linearization")
        assert lin.change.interval == "linearization", (metric, lin.change.interval)
