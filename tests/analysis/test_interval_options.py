"""The interval options of the API (SPEC 6, 8, 10; issue 21): ``ci_method``, ``n_boot`` and
``seed`` are checked before any data is read, every method is accepted by ``erx.estimate``,
``erx.estimate_by_group`` and ``erx.estimate_change``, and a gap or a change whose draws show
no error (or no change) gets an interval from the number of draws, never a point.

The expected intervals are worked by hand from the exact binomial bound (rule of three):
with k error-free draws, the one-sided 1 − α/2 bound on an error rate is 1 − (α/2)^(1/k).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import er_expectations as erx
from er_expectations.core.errors import InputError

EVERY = ("linearization", "logit", "bootstrap", "bca", "studentized", "recommended")
# an empty table: any error below must come from the options, checked before the data
EMPTY = pd.DataFrame({"pred": pd.Series([], dtype=object), "ref": pd.Series([], dtype=object),
                      "base": pd.Series([], dtype=object), "grp": pd.Series([], dtype=object)})

CALLS = {
    "estimate": lambda **kw: erx.estimate(EMPTY, prediction="pred", reference="ref", **kw),
    "estimate_by_group": lambda **kw: erx.estimate_by_group(EMPTY, prediction="pred", reference="ref", group_column="grp", **kw),
    "estimate_change": lambda **kw: erx.estimate_change(EMPTY, prediction="pred", baseline="base", metric="pairwise_recall", reference="ref", **kw),
}


@pytest.mark.parametrize("call", list(CALLS))
@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"ci_method": "bca", "n_boot": 10**9}, ["n_boot=1000000000 is too large", "at most 20,000"]),
        ({"ci_method": "bca", "n_boot": 1e9}, ["n_boot=1000000000.0 is not an integer"]),
        ({"ci_method": "bootstrap", "n_boot": 0}, ["n_boot=0 is too small", "at least 100"]),
        ({"ci_method": "linearization", "n_boot": 10**9}, ["n_boot", "at most 20,000"]),
        ({"ci_method": "wilson"}, ["ci_method='wilson' is not an interval method", ", ".join(EVERY[:5])]),
        ({"ci_method": "bca", "seed": -1}, ["seed=-1", "≥ 0"]),
    ],
)
def test_bad_interval_options_are_refused_before_the_data_is_read(call, options, words):
    with pytest.raises(InputError) as caught:
        CALLS[call](**options)
    text = str(caught.value)
    for w in words:
        assert w in text, text
    if options.get("ci_method") == "wilson":
        assert "recommended" in text
        assert ("bca_mover" in text) == (call == "estimate_by_group")  # the gap-only method is offered for gaps


def _perfect(n_clusters: int = 60, size: int = 2) -> pd.DataFrame:
    """Every true cluster of ``size`` records, predicted exactly; the benchmark draws every
    cluster once; group 'even' and 'odd' by cluster number."""
    truth = np.repeat(np.arange(n_clusters), size)
    return pd.DataFrame({"pred": [f"p{t}" for t in truth], "ref": [f"t{t}" for t in truth],
                         "base": [f"p{t}" for t in truth],
                         "grp": ["even" if t % 2 == 0 else "odd" for t in truth]})


@pytest.mark.parametrize("method", [*EVERY, "bca_mover"])
def test_a_gap_of_two_error_free_groups_gets_the_bound_of_each_side(method):
    df = _perfect()
    out = erx.estimate_by_group(df, prediction="pred", reference="ref", group_column="grp", weights="uniform",
                                metrics=["pairwise_recall"], ci_method=method, n_boot=200, seed=3)
    q30 = 1 - 0.025 ** (1 / 30)  # 30 error-free draws on each side, one-sided 97.5 %
    for group in ("even", "odd"):
        row = out.loc[(group, "pairwise_recall")]
        assert row["estimate"] == row["comparison"] == 1.0 and row["disparity"] == 0.0
        assert row["disparity_ci_lower"] == pytest.approx(-q30, rel=1e-9)
        assert row["disparity_ci_upper"] == pytest.approx(q30, rel=1e-9)
        assert row["disparity_ci_upper"] - row["disparity_ci_lower"] > 0.2  # never a point
        assert row["zero_event"] and row["disparity_ci_method"] == "zero_event"
        assert "no draw shows an error" in row["note"]
        assert row["p_value"] == 1.0


def test_a_change_without_a_changed_draw_gets_the_no_change_bound_under_every_method():
    rng = np.random.default_rng(4)
    df = _perfect(40, 3)
    noisy = df["pred"].to_numpy().copy()
    noisy[rng.random(noisy.size) < 0.2] = "p0"  # errors, the same in both releases
    df["pred"] = noisy
    df["base"] = noisy
    # 40 draws; pairwise recall's h = max(g_t, g_b) = 3 pairs of every cluster: Kish k* = 40
    half = 1 - 0.05 ** (1 / 40)
    for method in EVERY:
        ch = erx.estimate_change(df, prediction="pred", baseline="base", metric="pairwise_recall", reference="ref", weights="uniform",
                                 ci_method=method, n_boot=200, seed=1)
        c = ch.change
        assert c.estimate == 0.0 and c.zero_event, method
        assert (c.ci_lower, c.ci_upper) == pytest.approx((-half, half), rel=1e-9), method
        assert "no drawn cluster changes" in c.note


def test_every_method_names_itself_in_the_estimate_frame():
    rng = np.random.default_rng(2)
    df = _perfect(80, 3)
    pred = df["pred"].to_numpy().copy()
    pred[rng.random(pred.size) < 0.1] = "p1"
    df["pred"] = pred
    for method in EVERY:
        out = erx.estimate(df, prediction="pred", reference="ref", metrics=["pairwise_recall", "b_cubed_f"], ci_method=method,
                           n_boot=200, seed=5)
        shown = set(out["ci_method"])
        expected = {"bca"} if method == "recommended" else {method}
        assert shown == expected, (method, shown)
        assert out.attrs["ci_method"] == method
        assert ("seed" in out.attrs) == (method in ("bootstrap", "bca", "studentized", "recommended"))
    # a seed gives the same bootstrap limits twice, another seed other limits
    a = erx.estimate(df, prediction="pred", reference="ref", metrics=["pairwise_recall"], ci_method="bca", n_boot=300, seed=8)
    b = erx.estimate(df, prediction="pred", reference="ref", metrics=["pairwise_recall"], ci_method="bca", n_boot=300, seed=8)
    c = erx.estimate(df, prediction="pred", reference="ref", metrics=["pairwise_recall"], ci_method="bca", n_boot=300, seed=9)
    assert a.equals(b) and not math.isclose(a["ci_lower"].iloc[0], c["ci_lower"].iloc[0], rel_tol=1e-12)


def test_the_bootstrap_gap_keeps_the_pairing_of_the_shared_draws():
    """The percentile interval of the gap is the quantile of (group − rest) on the *same*
    resample, recomputed here by brute force with the resampling of the API's seed."""
    from er_expectations.stats.estimator import bootstrap_counts

    rng = np.random.default_rng(7)
    df = _perfect(50, 2)
    pred = df["pred"].to_numpy().copy()
    pred[rng.random(pred.size) < 0.25] = "pX"  # some records merged into one big predicted cluster
    df["pred"] = pred
    out = erx.estimate_by_group(df, prediction="pred", reference="ref", group_column="grp", weights="uniform", min_draws=2,
                                metrics=["pairwise_recall"], ci_method="bootstrap", n_boot=400, seed=12)
    # brute force: pairwise recall of a set of true clusters of 2 records = share of the true pairs
    # (one per cluster) whose two records share a predicted cluster; the resamples are the API's
    labels = [f"t{t}" for t in range(50)]
    together = {f"t{t}": float(pred[2 * t] == pred[2 * t + 1]) for t in range(50)}
    even = np.array([int(lab[1:]) % 2 == 0 for lab in sorted(labels)])
    ok = np.array([together[lab] for lab in sorted(labels)])
    gaps = []
    for counts in bootstrap_counts(np.ones(50), 400, 12):
        for d in np.atleast_2d(counts):
            ge, go = float((d * even).sum()), float((d * ~even).sum())
            gaps.append((d * even * ok).sum() / ge - (d * ~even * ok).sum() / go)
    lo, hi = np.quantile(gaps, [0.025, 0.975])
    row = out.loc[("even", "pairwise_recall")]
    assert row["disparity_ci_method"] == "bootstrap"
    # the API's estimate is bias-adjusted and its percentile interval is centred on it; the
    # spread of the paired replicates is what the pairing decides
    assert row["disparity_ci_upper"] - row["disparity_ci_lower"] == pytest.approx(hi - lo, rel=0.05)
