"""The page of an estimate says what the sample cannot show (SPEC 6.1; issue 28): the blind
spot's sentence of pairwise precision and F with the numbers of ``erx.estimate``, as a warning
when the shift passes the interval; Cochran's rule under uniform draws; nothing for a design
whose draw chances are not known here."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from support.gxtools import validate_frame

import er_expectations as erx
import er_expectations.gx  # noqa: F401  (registers the expectations)
from er_expectations.gx.expectations import (
    ExpectEstimatedPairwiseFToBeBetween,
    ExpectEstimatedPairwisePrecisionToBeBetween,
    ExpectEstimatedPairwiseRecallToBeBetween,
)


def frame(n_draws: int, seed: int = 2) -> pd.DataFrame:
    """One large predicted cluster (60 records of one entity and 3 strays), pairs and singletons."""
    truth = np.concatenate([np.zeros(60, int), np.arange(1, 4), np.repeat(np.arange(4, 104), 2),
                            np.arange(104, 404)])
    pred = np.concatenate([np.zeros(63, int), np.repeat(np.arange(4, 104), 2), np.arange(104, 404)])
    rng = np.random.default_rng(seed)
    d = pd.Series(truth[rng.integers(0, truth.size, n_draws)]).value_counts()
    return pd.DataFrame({"rid": np.arange(truth.size), "pred": pred,
                         "ref": np.where(np.isin(truth, d.index), truth, None),
                         "draws": pd.Series(truth).map(d).to_numpy()})


def _html(cls, result) -> str:
    return " ".join(str(b.to_json_dict()) for b in cls._diagnostic_unexpected_table_renderer(result=result) or [])


@pytest.mark.parametrize("weights", ["cluster_size", "uniform"])
def test_the_page_states_the_blind_spot_of_the_api(context, weights):
    df = frame(30)
    kw = {"prediction_column": "pred", "reference_column": "ref", "draws_column": "draws", "weights": weights,
          "record_id_column": "rid", "min_value": 0.0}
    checks = [ExpectEstimatedPairwisePrecisionToBeBetween(**kw), ExpectEstimatedPairwiseFToBeBetween(**kw),
              ExpectEstimatedPairwiseRecallToBeBetween(**kw)]
    res = validate_frame(context, df, checks, f"blind_{weights}")
    api = erx.estimate(df, prediction="pred", reference="ref", draws="draws", weights=weights,
                       metrics=["pairwise_precision", "pairwise_f"])
    for cls, r, metric in zip(map(type, checks), res.results, ["pairwise_precision", "pairwise_f", None],
                              strict=True):
        d = r.result["details"]
        # Cochran's rule under uniform draws: the cluster of 63 records makes the sizes skewed
        assert ("skewed_sizes" in d) == (weights == "uniform")
        if weights == "uniform":
            assert d["skewed_sizes"]["draws"] == 30 < d["skewed_sizes"]["needed"]
            assert "Warning, skewed sizes under uniform draws" in _html(cls, r)
        if metric is None:  # recall: no blind spot is claimed
            assert "blind_spot" not in d and "Blind spot" not in _html(cls, r)
            continue
        want = api.attrs["blind_spots"][metric]
        assert d["blind_spot"]["change"] == pytest.approx(want["change"])
        assert d["blind_spot"]["records"] == want["records"] and d["blind_spot"]["design"] == weights
        html = _html(cls, r)
        assert d["limits"][0] in html
        assert ("Warning, blind spot" in html) == want["warning"]
        # 30 draws: the 3 strays hide at 1/463 per draw (a note); uniform, the cluster of 63 holds most pairs
        assert want["warning"] == (weights == "uniform")


def test_a_weights_column_has_no_blind_spot(context):
    df = frame(30).assign(w=1.0)
    res = validate_frame(context, df, [ExpectEstimatedPairwisePrecisionToBeBetween(
        prediction_column="pred", reference_column="ref", draws_column="draws", weights={"column": "w"},
        min_value=0.0)], "blind_w")
    assert "blind_spot" not in res.results[0].result["details"]


def test_a_groups_blind_spot_is_on_the_disparity_page_and_in_estimate_by_group(context):
    """Group b holds pairs and singletons only: strays of b in the cluster of 60 would make most
    of its false pairs, and 40 draws likely miss them (SPEC 6.1, 8)."""
    from er_expectations.gx.expectations import ExpectSubgroupDisparityToBeBelow

    truth = np.concatenate([np.zeros(60, int), np.repeat(np.arange(1, 101), 2), np.arange(101, 401)])
    group = np.where((truth >= 1) & (truth % 2 == 0), "b", "a")
    rng = np.random.default_rng(4)
    d = pd.Series(truth[rng.integers(0, truth.size, 120)]).value_counts()
    df = pd.DataFrame({"rid": np.arange(truth.size), "pred": truth, "grp": group,
                       "ref": np.where(np.isin(truth, d.index), truth, None),
                       "draws": pd.Series(truth).map(d).to_numpy()})
    api = erx.estimate_by_group(df, prediction="pred", reference="ref", draws="draws", group_column="grp",
                                metrics=["pairwise_precision"], min_draws=5)
    spot = api.attrs["blind_spots"]["b"]["pairwise_precision"]
    assert spot["group"] and spot["warning"] and spot["design"] == "cluster_size"
    assert "Warning, blind spot" in api.loc[("b", "pairwise_precision"), "note"]
    exp = ExpectSubgroupDisparityToBeBelow(prediction_column="pred", reference_column="ref", draws_column="draws",
                                           group_column="grp", metric="pairwise_precision", max_disparity=0.5,
                                           min_draws=5)
    (res,) = validate_frame(context, df, [exp], "blind_groups").results
    d = res.result["details"]
    row = next(g for g in d["groups"] if g["group"] == "b")
    assert row["blind_spot"]["change"] == pytest.approx(spot["change"])
    assert any(x.startswith("b: Warning, blind spot") for x in d["limits"])
    html = _html(ExpectSubgroupDisparityToBeBelow, res)
    assert "b: Warning, blind spot larger than the interval" in html


def test_the_change_of_pairwise_precision_states_this_releases_blind_spot(context):
    """The change this − baseline moves with this release's precision (SPEC 6.1, 10): its blind spot
    is that of this release, read against the change's interval."""
    from er_expectations.gx.expectations import ExpectEstimateChangeToBeBelow
    from er_expectations.stats.blind_spot import blind_spot

    df = frame(30)
    df["pred__baseline"] = df["pred"]
    df["pred__baseline__label"] = "r0"
    exp = ExpectEstimateChangeToBeBelow(prediction_column="pred", reference_column="ref", draws_column="draws",
                                        metric="pairwise_precision", max_change=0.5, record_id_column="rid")
    (res,) = validate_frame(context, df, [exp], "blind_change").results
    d = res.result["details"]
    est = erx.estimate(df, prediction="pred", reference="ref", draws="draws",
                       metrics=["pairwise_precision", "pairwise_recall"])
    sizes, counts = np.unique(df.groupby("pred").size().to_numpy(), return_counts=True)
    want = blind_spot(sizes, counts, design="cluster_size", draws=30, metric="pairwise_precision",
                      estimate=0.0, precision=est.loc["pairwise_precision", "estimate"])
    assert d["blind_spot"]["change"] == pytest.approx(want.change)
    assert d["blind_spot"]["estimate"] == pytest.approx(d["change"])
    assert d["blind_spot"]["below"] == pytest.approx(d["change"] - d["ci_lower"])
    html = _html(ExpectEstimateChangeToBeBelow, res)
    assert d["limits"][0] in html and "change of the pairwise precision" in d["limits"][0]
