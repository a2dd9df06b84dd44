"""Brute-force comparison of the core against tests/support/reference_impl.py.

First the reference itself is checked on tiny hand-computed examples, then
erx.exact_metrics, erx.summarize and erx.estimate are compared with it on
small random clusterings (seeded and hypothesis-generated: at most 40
records, string and integer ids, null predictions, null names) for every
metric, several betas, every weight design and with/without a draws column.
"""

from __future__ import annotations

import math
import os

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import reference_impl as ref
from support.refcheck import check_estimate_row
from support.reference_impl import close

erx_module = ref.load_erx()
needs_erx = pytest.mark.skipif(
    erx_module is None, reason="er_expectations public API (summarize/estimate/...) not there yet"
)

HYP = settings(
    deadline=None,
    max_examples=int(os.environ.get("ERX_HYPOTHESIS_EXAMPLES", "60")),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

TOL = 1e-9


# ---------------------------------------------------------------------------
# tiny hand-worked examples (tests of the reference itself)
# ---------------------------------------------------------------------------
#
# records 1..6 (positions 0..5)
#   truth:      A = {1, 2, 3}, B = {4, 5}, C = {6}
#   prediction: X = {1, 2},    Y = {3, 4, 5}, Z = {6}


def hand_exact_frame():
    return pd.DataFrame(
        {
            "pred": ["X", "X", "Y", "Y", "Y", "Z"],
            "truth": ["A", "A", "A", "B", "B", "C"],
        }
    )


def test_reference_exact_metrics_hand_example():
    out = ref.exact_metrics_ref(hand_exact_frame(), "pred", "truth")
    # pairs: true {12,13,23,45}; predicted {12,34,35,45}; common {12,45}
    assert out["pairwise_precision"] == pytest.approx(2 / 4)
    assert out["pairwise_recall"] == pytest.approx(2 / 4)
    assert out["pairwise_f"] == pytest.approx(0.5)
    # only {6} is an exactly right cluster
    assert out["cluster_precision"] == pytest.approx(1 / 3)
    assert out["cluster_recall"] == pytest.approx(1 / 3)
    assert out["cluster_f"] == pytest.approx(1 / 3)
    # b-cubed, cluster averaged: A (1 + 1 + 1/3)/3, B (2/3 + 2/3)/2, C 1
    p = (7 / 9 + 2 / 3 + 1) / 3
    r = (5 / 9 + 1 + 1) / 3
    assert out["b_cubed_precision"] == pytest.approx(22 / 27)
    assert p == pytest.approx(22 / 27)
    assert out["b_cubed_recall"] == pytest.approx(23 / 27)
    assert r == pytest.approx(23 / 27)
    assert out["b_cubed_f"] == pytest.approx(2 * 22 * 23 / (27 * 45))
    h_c = 0.5 * math.log(2) + math.log(3) / 3 + math.log(6) / 6
    h_c_k = math.log(3) / 6 + math.log(1.5) / 3
    assert out["homogeneity"] == pytest.approx(1 - h_c_k / h_c)


def test_reference_exact_metrics_fbeta_hand_example():
    df = hand_exact_frame()
    out = ref.exact_metrics_ref(df, "pred", "truth", beta=2.0)
    p, r = 22 / 27, 23 / 27
    assert out["b_cubed_f"] == pytest.approx(5 * p * r / (4 * p + r))
    assert out["pairwise_f"] == pytest.approx(0.5)
    # within-cluster enumeration agrees with all-pairs enumeration
    fast = ref.exact_metrics_ref(df, "pred", "truth", beta=2.0, all_pairs=False)
    for key, value in out.items():
        assert fast[key] == pytest.approx(value)


def hand_estimate_frame():
    # the same six records plus
    #   7: truth A, null prediction (outside the release, set aside)
    #   8: truth D, predicted alone in W, null name
    return pd.DataFrame(
        {
            "pred": ["X", "X", "Y", "Y", "Y", "Z", None, "W"],
            "truth": ["A", "A", "A", "B", "B", "C", "A", "D"],
            "bench": ["A", "A", "A", "B", "B", None, "A", None],
            "name": ["a", "b", "b", "d", None, "d", "a", None],
        }
    )


def test_reference_error_table_hand_example():
    df = hand_estimate_frame()
    rows, info = ref.benchmark_table_ref(df, "pred", "bench", name="name")
    assert info == {"N": 7, "n_pred_clusters": 4, "records_set_aside": 1, "n_clusters": 2}
    a, b = rows
    assert a["label"] == "A" and a["size"] == 3 and a["weight"] == pytest.approx(1 / 3)
    assert b["label"] == "B" and b["size"] == 2 and b["weight"] == pytest.approx(1 / 2)
    ea = a["errors"]
    assert ea["EI"] == 1
    assert ea["SDE"] == pytest.approx(-2 / 3)  # (-1 - 1 + 0)/3
    assert ea["OCE"] == pytest.approx(2 / 3)  # (0 + 0 + 2)/3
    assert ea["UCE"] == pytest.approx(4 / 3)  # (1 + 1 + 2)/3
    assert ea["ROCE"] == pytest.approx(2 / 9)
    assert ea["RUCE"] == pytest.approx(4 / 9)
    assert ea["Hl"] == pytest.approx(math.log(1 / 3) / 3)
    eb = b["errors"]
    assert (eb["EI"], eb["SDE"], eb["OCE"], eb["UCE"]) == (1, 1, 1, 0)
    assert eb["ROCE"] == pytest.approx(1 / 3) and eb["RUCE"] == 0
    # f / g values
    assert a["fg"]["pairwise_precision"] == pytest.approx((2 / 3, 4 / 3))
    assert b["fg"]["pairwise_precision"] == pytest.approx((1, 2))
    assert a["fg"]["pairwise_recall"] == pytest.approx((2 / 3, 2))
    assert b["fg"]["pairwise_recall"] == pytest.approx((1, 1))
    assert a["fg"]["homogeneity"] == pytest.approx((-math.log(3) / 3, math.log(3 / 7)))
    assert b["fg"]["homogeneity"] == pytest.approx((math.log(2 / 3), math.log(2 / 7)))
    # names: "a" of A also sits on record 7, which is outside the release,
    # so A is not homonymous; "d" of B also sits on record 6 (cluster C).
    assert a["fg"]["homonymy_rate"] == pytest.approx((0, 1 / 3))
    assert b["fg"]["homonymy_rate"] == pytest.approx((1 / 2, 1 / 2))
    assert a["fg"]["name_variation_rate"] == pytest.approx((1 / 3, 1 / 3))
    assert b["fg"]["name_variation_rate"] == pytest.approx((0, 1 / 2))


def test_reference_estimator_hand_example():
    out, info = ref.estimate_ref(hand_estimate_frame(), "pred", "bench", name="name")
    assert info["records_set_aside"] == 1
    # pairwise recall: f = (2/3, 1), g = (2, 1) -> ratio 5/9,
    # bias term -8/45, V = 64/729
    pr = out["pairwise_recall"]
    assert pr["estimate"] == pytest.approx(37 / 81)
    assert pr["std_error"] == pytest.approx(8 / 27)
    assert pr["draws"] == 2 and pr["clusters"] == 2
    # pairwise precision: both clusters have f/g = 1/2: no bias, no variance
    pp = out["pairwise_precision"]
    assert pp["estimate"] == pytest.approx(0.5)
    assert pp["std_error"] == pytest.approx(0.0, abs=1e-12)
    # b-cubed precision: f = (7/27, 1/3), g = (1/3, 1/2)
    bp = out["b_cubed_precision"]
    assert bp["estimate"] == pytest.approx(788 / 1125)
    assert bp["std_error"] == pytest.approx(4 / 75)
    # no sampled cluster is exactly right: fbar = 0
    for m in ("cluster_precision", "cluster_recall", "cluster_f"):
        assert out[m]["estimate"] == 0.0 and math.isnan(out[m]["std_error"])
    # average cluster size: f = (1, 1), g = (1/3, 1/2)
    acs = out["average_cluster_size"]
    assert acs["estimate"] == pytest.approx(2.304)
    assert acs["std_error"] == pytest.approx(0.48)
    assert out["matching_rate"]["estimate"] == pytest.approx(1.0)
    z = 1.959963984540054
    assert acs["ci_lower"] == pytest.approx(2.304 - z * 0.48)
    # homonymy: f = (0, 1/2), g = (1/3, 1/2): ratio 3/5
    # name variation: f = (1/3, 0), g = (1/3, 1/2): ratio 2/5
    hom = out["homonymy_rate"]
    # f/fbar = (0, 2), g/gbar = (4/5, 6/5): bias term (-16/25 + 24/25)/2 = 4/25
    assert hom["estimate"] == pytest.approx(3 / 5 * 29 / 25)
    assert hom["std_error"] == pytest.approx(12 / 25)
    nv = out["name_variation_rate"]
    assert nv["estimate"] == pytest.approx(2 / 5 * (1 + (4 / 5 * (2 - 4 / 5) - 6 / 5 * 6 / 5) / 2))
    # b-cubed F is the F of the two b-cubed estimates
    br = out["b_cubed_recall"]
    assert out["b_cubed_f"]["estimate"] == pytest.approx(
        2 * bp["estimate"] * br["estimate"] / (bp["estimate"] + br["estimate"])
    )


def test_reference_summary_hand_example():
    df = pd.DataFrame(
        {
            "c": ["X", "X", "Y", "Y", "Y", "Z", None, "W"],
            "name": ["a", "b", "b", "d", None, "d", "a", None],
        }
    )
    out = ref.summarize_ref(df, "c", name="name")
    assert out["n_records"] == 7 and out["n_clusters"] == 4
    assert out["average_cluster_size"] == pytest.approx(7 / 4)
    assert out["matching_rate"] == pytest.approx(5 / 7)
    # every named cluster shares a name with another one; W has no name
    assert out["homonymy_rate"] == pytest.approx(1.0)
    assert out["name_variation_rate"] == pytest.approx(2 / 3)
    # sizes 2, 3, 1, 1: shares 1/2 (size 1), 1/4, 1/4
    assert out["hill_number_0"] == 3
    assert out["hill_number_1"] == pytest.approx(2**1.5)
    assert out["hill_number_2"] == pytest.approx(8 / 3)
    assert out["hill_number_inf"] == pytest.approx(2.0)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("beta", [0.5, 1.0, 2.0])
def test_reference_census_equals_exact(seed, beta):
    """The estimator of the reference run on the whole true clustering
    (uniform weights, no bias adjustment) reproduces the all-pairs exact
    metrics of the reference: the two halves of the reference agree."""
    df = ref.random_case(seed, n_max=25)
    df = df.assign(ref=df["truth"])
    exact = ref.exact_metrics_ref(df, "pred", "truth", beta=beta)
    est, _ = ref.estimate_ref(df, "pred", "ref", weights="uniform", beta=beta, bias_adjust=False)
    for m in ref.PERFORMANCE_METRICS:
        if math.isnan(exact[m]):
            continue
        assert close(est[m]["estimate"], exact[m]), m


# ---------------------------------------------------------------------------
# comparison helpers
# ---------------------------------------------------------------------------


def compare_estimate(erx, df, *, weights, draws, name, beta, ci_level, bias_adjust, tol=TOL):
    result = erx.estimate(
        df,
        prediction="pred",
        reference="ref",
        weights=weights,
        draws=draws,
        name=name,
        beta=beta,
        ci_level=ci_level,
        bias_adjust=bias_adjust,
        ci_method="linearization",  # the reference's interval (the default is "recommended", SPEC 6)
    )
    expected, info = ref.estimate_ref(
        df,
        "pred",
        "ref",
        weights=weights,
        draws=draws,
        name=name,
        beta=beta,
        ci_level=ci_level,
        bias_adjust=bias_adjust,
    )
    metrics = ref.ESTIMATE_METRICS_WITH_NAME if name else ref.ESTIMATE_METRICS
    assert set(result.index) == set(metrics)
    assert set(ref.ESTIMATE_COLUMNS) <= set(result.columns)
    failures = {}
    for m in metrics:
        problems = check_estimate_row(m, result.loc[m], expected[m], ci_level, tol)
        if problems and m in ref.NAME_METRICS:
            # the other defensible reading: draws of clusters without any
            # non-null name leave the domain instead of entering with g = 0
            alt, _ = ref.estimate_ref(
                df,
                "pred",
                "ref",
                weights=weights,
                draws=draws,
                name=name,
                beta=beta,
                ci_level=ci_level,
                bias_adjust=bias_adjust,
                name_domain="subset",
            )
            if not check_estimate_row(m, result.loc[m], alt[m], ci_level, tol):
                problems = []
        if problems:
            failures[m] = problems
    assert not failures, failures
    assert int(result.attrs["records_set_aside"]) == info["records_set_aside"]
    assert "design" in result.attrs
    return result, expected


def compare_exact(erx, df, beta):
    expected = ref.exact_metrics_ref(df, "pred", "truth", beta=beta)
    result = erx.exact_metrics(df, prediction="pred", reference="truth", beta=beta)
    assert set(ref.PERFORMANCE_METRICS) <= set(result.index)
    bad = {
        m: (float(result[m]), expected[m])
        for m in ref.PERFORMANCE_METRICS
        if not close(result[m], expected[m])
    }
    assert not bad, bad


def compare_summary(erx, df, cluster, name, hill_orders):
    expected = ref.summarize_ref(df, cluster, name=name, hill_orders=hill_orders)
    result = erx.summarize(df, cluster=cluster, name=name, hill_orders=hill_orders)
    assert set(result.index) == set(expected), (sorted(result.index), sorted(expected))
    bad = {k: (result[k], v) for k, v in expected.items() if not close(result[k], v)}
    assert not bad, bad


# ---------------------------------------------------------------------------
# the implementation on the hand examples
# ---------------------------------------------------------------------------


@needs_erx
def test_erx_hand_example_exact():
    out = erx_module.exact_metrics(hand_exact_frame(), prediction="pred", reference="truth")
    assert out["pairwise_precision"] == pytest.approx(0.5, abs=1e-12)
    assert out["cluster_precision"] == pytest.approx(1 / 3, abs=1e-12)
    assert out["b_cubed_precision"] == pytest.approx(22 / 27, abs=1e-12)
    assert out["b_cubed_recall"] == pytest.approx(23 / 27, abs=1e-12)


@needs_erx
def test_erx_hand_example_estimate():
    res = erx_module.estimate(
        hand_estimate_frame(), prediction="pred", reference="bench", name="name"
    )
    assert res.loc["pairwise_recall", "estimate"] == pytest.approx(37 / 81, abs=1e-12)
    assert res.loc["pairwise_recall", "std_error"] == pytest.approx(8 / 27, abs=1e-12)
    assert res.loc["b_cubed_precision", "estimate"] == pytest.approx(788 / 1125, abs=1e-12)
    assert res.loc["b_cubed_precision", "std_error"] == pytest.approx(4 / 75, abs=1e-12)
    assert res.loc["average_cluster_size", "estimate"] == pytest.approx(2.304, abs=1e-12)
    assert res.loc["average_cluster_size", "std_error"] == pytest.approx(0.48, abs=1e-12)
    assert res.loc["cluster_recall", "estimate"] == 0
    assert pd.isna(res.loc["cluster_recall", "std_error"])
    assert res.attrs["records_set_aside"] == 1
    assert int(res.loc["pairwise_recall", "draws"]) == 2
    assert int(res.loc["pairwise_recall", "clusters"]) == 2


@needs_erx
def test_erx_hand_example_summary():
    df = pd.DataFrame(
        {
            "c": ["X", "X", "Y", "Y", "Y", "Z", None, "W"],
            "name": ["a", "b", "b", "d", None, "d", "a", None],
        }
    )
    out = erx_module.summarize(df, cluster="c", name="name")
    assert out["n_records"] == 7
    assert out["n_clusters"] == 4
    assert out["homonymy_rate"] == pytest.approx(1.0)
    assert out["name_variation_rate"] == pytest.approx(2 / 3)
    assert out["hill_number_1"] == pytest.approx(2**1.5)
    hills = [label for label in out.index if str(label).startswith("hill_number_")]
    assert hills == ["hill_number_0", "hill_number_1", "hill_number_2", "hill_number_inf"]


# ---------------------------------------------------------------------------
# seeded random clusterings
# ---------------------------------------------------------------------------

SEEDS = range(25)


@needs_erx
@pytest.mark.parametrize("id_kind", ["str", "int", "object"])
@pytest.mark.parametrize("seed", SEEDS)
def test_exact_metrics_random(seed, id_kind):
    df = ref.random_case(seed, id_kind=id_kind)
    expected = ref.exact_metrics_ref(df, "pred", "truth")
    if any(math.isnan(v) for v in expected.values()):
        pytest.skip("degenerate case: no predicted or no true pair")
    for beta in (0.5, 1.0, 2.0):
        compare_exact(erx_module, df, beta)


@needs_erx
@pytest.mark.parametrize("id_kind", ["str", "int"])
@pytest.mark.parametrize("seed", SEEDS)
def test_summarize_random(seed, id_kind):
    df = ref.random_case(seed, id_kind=id_kind)
    compare_summary(erx_module, df, "pred", None, (0, 1, 2, math.inf))
    compare_summary(erx_module, df, "pred", "name", (0, 0.5, 1, 2, 3.5, math.inf))
    compare_summary(erx_module, df, "truth", "name", (0, 1, 2, math.inf))


@needs_erx
@pytest.mark.parametrize("beta", [0.5, 1.0, 2.0])
@pytest.mark.parametrize(
    "weights,draws",
    [
        ("cluster_size", None),
        ("uniform", None),
        ("w", None),
        ("cluster_size", "n_draws"),
        ("w", "n_draws"),
    ],
)
@pytest.mark.parametrize("seed", SEEDS)
def test_estimate_random(seed, weights, draws, beta):
    id_kind = ["str", "int", "object"][seed % 3]
    df = ref.random_case(seed, id_kind=id_kind)
    compare_estimate(
        erx_module,
        df,
        weights=weights,
        draws=draws,
        name="name",
        beta=beta,
        ci_level=0.95,
        bias_adjust=True,
    )


@needs_erx
@pytest.mark.parametrize("ci_level", [0.8, 0.99])
@pytest.mark.parametrize("seed", range(8))
def test_estimate_random_no_bias_adjust_and_levels(seed, ci_level):
    df = ref.random_case(100 + seed)
    compare_estimate(
        erx_module,
        df,
        weights="cluster_size",
        draws="n_draws",
        name=None,
        beta=1.0,
        ci_level=ci_level,
        bias_adjust=False,
    )


# ---------------------------------------------------------------------------
# hypothesis-generated clusterings
# ---------------------------------------------------------------------------


@st.composite
def clusterings(draw, max_records=40):
    n = draw(st.integers(2, max_records))
    n_true = draw(st.integers(1, n))
    true_labels = draw(st.lists(st.integers(0, n_true - 1), min_size=n, max_size=n))
    moves = draw(
        st.lists(st.tuples(st.integers(0, 9), st.integers(0, n_true + 2)), min_size=n, max_size=n)
    )
    pred = []
    for t, (mode, other) in zip(true_labels, moves, strict=True):
        if mode <= 5:
            pred.append(t)  # right
        elif mode <= 8:
            pred.append(other)  # moved / merged / split off
        else:
            pred.append(None)  # outside the release
    names = draw(st.lists(st.sampled_from([*ref.NAME_POOL[:3], None]), min_size=n, max_size=n))
    labels = sorted(set(true_labels))
    bench = draw(st.sets(st.sampled_from(labels), min_size=1))
    weights = {t: draw(st.sampled_from([0.5, 1.0, 2.0, 10.0])) for t in labels}
    draws = {t: draw(st.integers(1, 3)) for t in labels}
    id_kind = draw(st.sampled_from(["str", "int", "object"]))
    df = ref.make_frame(true_labels, pred, bench, names, id_kind, weights, draws)
    return df


def _benchmark_in_release(df):
    return bool((df["pred"].notna() & df["ref"].notna()).any())


@needs_erx
@HYP
@given(
    df=clusterings(),
    weights=st.sampled_from(["cluster_size", "uniform", "w"]),
    draws=st.sampled_from([None, "n_draws"]),
    beta=st.sampled_from([0.5, 1.0, 2.0]),
    bias_adjust=st.booleans(),
    ci_level=st.sampled_from([0.9, 0.95]),
    with_name=st.booleans(),
)
def test_estimate_hypothesis(df, weights, draws, beta, bias_adjust, ci_level, with_name):
    from hypothesis import assume

    assume(_benchmark_in_release(df))
    compare_estimate(
        erx_module,
        df,
        weights=weights,
        draws=draws,
        name="name" if with_name else None,
        beta=beta,
        ci_level=ci_level,
        bias_adjust=bias_adjust,
    )


@needs_erx
@HYP
@given(df=clusterings(), beta=st.sampled_from([0.5, 1.0, 2.0]))
def test_exact_metrics_hypothesis(df, beta):
    from hypothesis import assume

    assume(df["pred"].notna().any())
    expected = ref.exact_metrics_ref(df, "pred", "truth", beta=beta)
    assume(not any(math.isnan(v) for v in expected.values()))
    compare_exact(erx_module, df, beta)


@needs_erx
@HYP
@given(df=clusterings(), with_name=st.booleans())
def test_summarize_hypothesis(df, with_name):
    from hypothesis import assume

    assume(df["pred"].notna().any())
    name = "name" if with_name else None
    if with_name:
        # name rates need at least one named record in the release
        assume((df["pred"].notna() & df["name"].notna()).any())
    compare_summary(erx_module, df, "pred", name, (0, 0.5, 1, 2, math.inf))
