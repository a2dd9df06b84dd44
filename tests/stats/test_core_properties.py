"""Properties of the core that hold whatever the data, parametrised over the
list of metric ids: perfect prediction, relabelling, weight scaling, census
equals exact metrics, population rule, and the Hill numbers of SPEC 3."""

from __future__ import annotations

import math
import os
import random

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import reference_impl as ref
from support.reference_impl import close

PERF = ref.PERFORMANCE_METRICS
ALL_ESTIMATES = ref.ESTIMATE_METRICS_WITH_NAME
erx_module = ref.load_erx()
needs_erx = pytest.mark.skipif(
    erx_module is None, reason="er_expectations public API (summarize/estimate/...) not there yet"
)
HYP = settings(
    deadline=None,
    max_examples=int(os.environ.get("ERX_HYPOTHESIS_EXAMPLES", "40")),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def perfect_frame(seed, id_kind="str", sample=True):
    """A clustering predicted perfectly (with other ids), with a benchmark."""
    rng = random.Random(seed)
    n = rng.randint(10, 40)
    n_true = rng.randint(3, n // 2)
    truth = [rng.randrange(n_true) for _ in range(n)]
    labels = sorted(set(truth))
    pred = [t * 7 + 3 for t in truth]  # same partition, different ids
    bench = set(rng.sample(labels, rng.randint(2, len(labels)))) if sample else set(labels)
    names = [ref.NAME_POOL[t % 5] for t in truth]
    return ref.make_frame(
        truth,
        pred,
        bench,
        names,
        id_kind,
        {t: 2.0 for t in labels},
        {t: rng.randint(1, 3) for t in labels},
    )


def estimate(erx, df, **kw):
    # the linearised interval, whose properties these are (BCa resamples the clusters in the
    # order of their ids, so a relabelling gives other resamples; its invariance to the scale
    # of the weights is tested in tests/analysis/test_hardening_api.py)
    args = {"prediction": "pred", "reference": "ref", "ci_method": "linearization"}
    args.update(kw)
    return erx.estimate(df, **args)


def assert_frames_close(
    a, b, metrics, columns=("estimate", "std_error", "ci_lower", "ci_upper"), tol=1e-9
):
    bad = {}
    for m in metrics:
        for col in columns:
            x, y = a.loc[m, col], b.loc[m, col]
            if not close(x, y, tol):
                bad[(m, col)] = (x, y)
        for col in ("draws", "clusters"):
            if int(a.loc[m, col]) != int(b.loc[m, col]):
                bad[(m, col)] = (a.loc[m, col], b.loc[m, col])
    assert not bad, bad


# ---------------------------------------------------------------------------
# perfect prediction
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("metric", PERF)
@pytest.mark.parametrize("seed", range(5))
def test_perfect_prediction_exact(erx, metric, seed):
    df = perfect_frame(seed, id_kind=["str", "int"][seed % 2])
    out = erx.exact_metrics(df, prediction="pred", reference="truth")
    assert out[metric] == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("metric", PERF)
@pytest.mark.parametrize("seed", range(5))
def test_perfect_prediction_census_estimate(erx, metric, seed):
    """Every true cluster once, uniform weights, no bias adjustment."""
    df = perfect_frame(seed, sample=False)
    res = estimate(erx, df, weights="uniform", bias_adjust=False)
    assert res.loc[metric, "estimate"] == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("metric", PERF)
@pytest.mark.parametrize("weights", ["cluster_size", "uniform", "w"])
@pytest.mark.parametrize("seed", range(5))
def test_perfect_prediction_sample_estimate(erx, metric, weights, seed):
    """On a sample, with bias adjustment, every metric is 1 except cluster
    precision / cluster F, which compare the sample with N and |Ĉ| of the
    release (SPEC 5): for those, check the ratio formula instead."""
    df = perfect_frame(seed)
    res = estimate(erx, df, weights=weights, draws="n_draws", bias_adjust=False)
    if metric in ("cluster_precision", "cluster_f"):
        release = df[df["pred"].notna()]
        n, n_clusters = len(release), release["pred"].nunique()
        bench = release[release["ref"].notna()]
        sizes = bench.groupby("ref").size()
        d = bench.groupby("ref")["n_draws"].first()
        w = {
            "cluster_size": 1 / sizes,
            "uniform": sizes * 0 + 1.0,
            "w": bench.groupby("ref")["w"].first(),
        }[weights]
        precision = n * (w * d).sum() / (n_clusters * (sizes * w * d).sum())
        expected = precision if metric == "cluster_precision" else 2 / (1 / precision + 1)
        assert res.loc[metric, "estimate"] == pytest.approx(expected, rel=1e-12)
    else:
        assert res.loc[metric, "estimate"] == pytest.approx(1.0, abs=1e-12)
        res_adj = estimate(erx, df, weights=weights, draws="n_draws", bias_adjust=True)
        assert res_adj.loc[metric, "estimate"] == pytest.approx(1.0, abs=1e-12)


# ---------------------------------------------------------------------------
# relabelling and row order
# ---------------------------------------------------------------------------


def relabel(df, seed, to_int):
    """Rename the predicted and true ids by random bijections and shuffle rows."""
    rng = random.Random(seed)
    out = df.copy()
    for col, shared in (("pred", None), ("ref", "truth")):
        values = sorted(
            {v for v in df[col].tolist() if not pd.isna(v)}
            | ({v for v in df[shared].tolist() if not pd.isna(v)} if shared else set()),
            key=str,
        )
        targets = list(range(len(values)))
        rng.shuffle(targets)
        mapping = {
            v: (t * 13 + 1 if to_int else f"new-{t}") for v, t in zip(values, targets, strict=True)
        }
        cols = [col] + ([shared] if shared else [])
        for c in cols:
            mapped = [None if pd.isna(v) else mapping[v] for v in df[c].tolist()]
            out[c] = pd.Series(mapped, dtype="Int64" if to_int else "str", index=df.index)
    order = list(range(len(out)))
    rng.shuffle(order)
    return out.iloc[order].reset_index(drop=True)


@pytest.mark.parametrize("metric", ALL_ESTIMATES)
@pytest.mark.parametrize("seed", range(6))
def test_relabelling_invariance_estimate(erx, metric, seed):
    df = ref.random_case(300 + seed, id_kind="str")
    new = relabel(df, seed, to_int=bool(seed % 2))
    for weights in ("cluster_size", "w"):
        a = estimate(erx, df, weights=weights, draws="n_draws", name="name", beta=2.0)
        b = estimate(erx, new, weights=weights, draws="n_draws", name="name", beta=2.0)
        assert_frames_close(a, b, [metric])


@pytest.mark.parametrize("metric", PERF)
@pytest.mark.parametrize("seed", range(6))
def test_relabelling_invariance_exact(erx, metric, seed):
    df = ref.random_case(400 + seed, id_kind="int")
    new = relabel(df, seed, to_int=not bool(seed % 2))
    a = erx.exact_metrics(df, prediction="pred", reference="truth", beta=0.5)
    b = erx.exact_metrics(new, prediction="pred", reference="truth", beta=0.5)
    assert close(a[metric], b[metric], 1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_relabelling_invariance_summary(erx, seed):
    df = ref.random_case(500 + seed)
    new = relabel(df, seed, to_int=True)
    a = erx.summarize(df, cluster="pred", name="name")
    b = erx.summarize(new, cluster="pred", name="name")
    assert list(a.index) == list(b.index)
    for key in a.index:
        assert close(a[key], b[key], 1e-12), key


# ---------------------------------------------------------------------------
# weights
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("metric", ALL_ESTIMATES)
@pytest.mark.parametrize("factor", [1e-3, 7.3, 250.0])
def test_weight_scaling_invariance(erx, metric, factor):
    for seed in range(4):
        df = ref.random_case(600 + seed)
        scaled = df.assign(w=df["w"] * factor)
        a = estimate(erx, df, weights="w", draws="n_draws", name="name", beta=0.5)
        b = estimate(erx, scaled, weights="w", draws="n_draws", name="name", beta=0.5)
        assert_frames_close(a, b, [metric])


@pytest.mark.parametrize("metric", ALL_ESTIMATES)
def test_cluster_size_design_equals_explicit_restricted_weights(erx, metric):
    """weights="cluster_size" is w = 1/|c ∩ release| (the restricted size),
    and weights="uniform" is a constant weight column."""
    for seed in range(4):
        df = ref.random_case(700 + seed, null_rate=0.3)
        in_release = df[df["pred"].notna() & df["ref"].notna()]
        restricted = in_release.groupby("ref").size()
        explicit = df.assign(
            w=[1.0 / restricted[r] if r in restricted.index else math.nan for r in df["ref"]],
            one=[1.0 if not pd.isna(r) else math.nan for r in df["ref"]],
        )
        a = estimate(erx, df, weights="cluster_size", name="name")
        b = estimate(erx, explicit, weights="w", name="name")
        assert_frames_close(a, b, [metric])
        c = estimate(erx, df, weights="uniform", name="name")
        d = estimate(erx, explicit, weights="one", name="name")
        assert_frames_close(c, d, [metric])


@pytest.mark.parametrize("metric", ALL_ESTIMATES)
def test_draws_of_one_equal_no_draws_column(erx, metric):
    df = ref.random_case(800)
    ones = df.assign(
        n_draws=pd.Series([1 if not pd.isna(r) else None for r in df["ref"]], dtype="Int64")
    )
    a = estimate(erx, df, name="name")
    b = estimate(erx, ones, draws="n_draws", name="name")
    assert_frames_close(a, b, [metric])


@pytest.mark.parametrize("metric", ALL_ESTIMATES)
def test_draws_count_clusters_several_times(erx, metric):
    """With every cluster drawn twice the ratio f̄/ḡ is unchanged but k doubles."""
    df = ref.random_case(801)
    twos = df.assign(
        n_draws=pd.Series([2 if not pd.isna(r) else None for r in df["ref"]], dtype="Int64")
    )
    a = estimate(erx, df, name="name", bias_adjust=False)
    b = estimate(erx, twos, draws="n_draws", name="name", bias_adjust=False)
    assert int(b.loc[metric, "draws"]) == 2 * int(a.loc[metric, "draws"])
    assert int(b.loc[metric, "clusters"]) == int(a.loc[metric, "clusters"])
    assert close(a.loc[metric, "estimate"], b.loc[metric, "estimate"], 1e-12)
    se_a, se_b = a.loc[metric, "std_error"], b.loc[metric, "std_error"]
    if not pd.isna(se_a):
        # V ∝ Σ(...)²/(k(k-1)): doubling every draw gives 2S/(2k(2k-1))
        k = int(a.loc[metric, "draws"])
        assert close(se_b, se_a * math.sqrt((k - 1) / (2 * k - 1)), 1e-9)


# ---------------------------------------------------------------------------
# the release population rule
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("metric", ALL_ESTIMATES)
def test_records_outside_release_are_ignored(erx, metric):
    for seed in range(4):
        df = ref.random_case(900 + seed, null_rate=0.3)
        inside = df[df["pred"].notna()].reset_index(drop=True)
        a = estimate(erx, df, weights="w", draws="n_draws", name="name")
        b = estimate(erx, inside, weights="w", draws="n_draws", name="name")
        assert_frames_close(a, b, [metric])
        assert a.attrs["records_set_aside"] == int((df["pred"].isna() & df["ref"].notna()).sum())
        assert b.attrs["records_set_aside"] == 0


@pytest.mark.parametrize("metric", PERF)
def test_exact_ignores_records_outside_release(erx, metric):
    df = ref.random_case(950, null_rate=0.3)
    inside = df[df["pred"].notna()].reset_index(drop=True)
    a = erx.exact_metrics(df, prediction="pred", reference="truth")
    b = erx.exact_metrics(inside, prediction="pred", reference="truth")
    assert close(a[metric], b[metric], 1e-12)


# ---------------------------------------------------------------------------
# census "sample" equals the exact metrics
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("beta", [0.5, 1.0, 2.0])
@pytest.mark.parametrize("metric", PERF)
def test_census_equals_exact(erx, metric, beta):
    checked = 0
    for seed in range(10):
        df = ref.random_case(1000 + seed, null_rate=0.2)
        census = df.assign(ref=df["truth"])  # every true cluster, once
        exact = erx.exact_metrics(census, prediction="pred", reference="truth", beta=beta)
        res = estimate(erx, census, weights="uniform", bias_adjust=False, beta=beta)
        if pd.isna(exact[metric]):
            continue
        assert close(res.loc[metric, "estimate"], exact[metric], 1e-9), (seed, metric)
        checked += 1
    assert checked >= 5


@pytest.mark.parametrize("beta", [0.5, 1.0, 2.0])
def test_f_beta_of_estimates(erx, beta):
    """Without bias adjustment pairwise and cluster F equal F_beta of their P
    and R (same draws); b-cubed F is always F_beta of the b-cubed estimates."""
    for seed in range(6):
        df = ref.random_case(1100 + seed)
        for bias_adjust in (False, True):
            res = estimate(
                erx, df, weights="w", draws="n_draws", beta=beta, bias_adjust=bias_adjust
            )
            e = res["estimate"]
            assert close(
                e["b_cubed_f"], ref.f_beta(e["b_cubed_precision"], e["b_cubed_recall"], beta)
            )
            if not bias_adjust:
                for kind in ("pairwise", "cluster"):
                    p, r = e[f"{kind}_precision"], e[f"{kind}_recall"]
                    if pd.isna(p) or pd.isna(r):
                        continue
                    assert close(e[f"{kind}_f"], ref.f_beta(p, r, beta)), (kind, seed)


def test_beta_weights_recall(erx):
    """beta > 1 weights recall more: with P < R, F_2 > F_1 > F_0.5."""
    df = pd.DataFrame(
        {"pred": ["a", "a", "a", "a", "b", "c"], "truth": ["A", "A", "B", "B", "C", "C"]}
    )
    out = {
        b: erx.exact_metrics(df, prediction="pred", reference="truth", beta=b)
        for b in (0.5, 1.0, 2.0)
    }
    p, r = out[1.0]["pairwise_precision"], out[1.0]["pairwise_recall"]
    assert p == pytest.approx(2 / 6) and r == pytest.approx(2 / 3)
    assert out[2.0]["pairwise_f"] == pytest.approx(5 * p * r / (4 * p + r))
    assert out[0.5]["pairwise_f"] < out[1.0]["pairwise_f"] < out[2.0]["pairwise_f"]


# ---------------------------------------------------------------------------
# confidence intervals
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("metric", ALL_ESTIMATES)
def test_interval_widens_with_level(erx, metric):
    df = ref.random_case(1200)
    narrow = estimate(erx, df, name="name", ci_level=0.8)
    wide = estimate(erx, df, name="name", ci_level=0.99)
    assert close(narrow.loc[metric, "estimate"], wide.loc[metric, "estimate"], 1e-12)
    if pd.isna(narrow.loc[metric, "std_error"]):
        return
    assert wide.loc[metric, "ci_lower"] <= narrow.loc[metric, "ci_lower"]
    assert wide.loc[metric, "ci_upper"] >= narrow.loc[metric, "ci_upper"]
    se = narrow.loc[metric, "std_error"]
    if se > 0:
        z80 = ref.z_value(0.8)
        raw = narrow.loc[metric, "estimate"] + z80 * se
        assert close(narrow.loc[metric, "ci_upper"], raw) or narrow.loc[metric, "ci_upper"] == 1.0


# ---------------------------------------------------------------------------
# Hill numbers (SPEC 3)
# ---------------------------------------------------------------------------


def hill(erx, df, q):
    out = erx.summarize(df, cluster="c", hill_orders=(q,))
    labels = [lab for lab in out.index if str(lab).startswith("hill_number_")]
    assert len(labels) == 1, labels
    return float(out[labels[0]])


size_lists = st.lists(st.integers(1, 9), min_size=1, max_size=25)


def frame_from_sizes(sizes):
    labels = []
    for i, s in enumerate(sizes):
        labels += [f"k{i}"] * s
    return pd.DataFrame({"c": labels})


@needs_erx
@HYP
@given(sizes=size_lists)
def test_hill_q0_is_number_of_distinct_sizes(sizes):
    erx = erx_module
    assert hill(erx, frame_from_sizes(sizes), 0) == pytest.approx(len(set(sizes)), abs=1e-12)


@needs_erx
@HYP
@given(sizes=size_lists)
def test_hill_q_inf_is_inverse_max_share(sizes):
    erx = erx_module
    top = max(sizes.count(s) for s in set(sizes))
    assert hill(erx, frame_from_sizes(sizes), math.inf) == pytest.approx(
        len(sizes) / top, rel=1e-12
    )


@needs_erx
@HYP
@given(sizes=size_lists)
def test_hill_q1_continuity(sizes):
    erx = erx_module
    df = frame_from_sizes(sizes)
    h1 = hill(erx, df, 1)
    shares = [sizes.count(s) / len(sizes) for s in set(sizes)]
    assert h1 == pytest.approx(math.exp(-sum(p * math.log(p) for p in shares)), rel=1e-12)
    for q in (1 - 1e-6, 1 + 1e-6):
        assert hill(erx, df, q) == pytest.approx(h1, rel=1e-4)


@needs_erx
@HYP
@given(sizes=size_lists)
def test_hill_non_increasing_in_q(sizes):
    erx = erx_module
    df = frame_from_sizes(sizes)
    qs = [0, 0.25, 0.5, 1 - 1e-6, 1, 1 + 1e-6, 1.5, 2, 3, 10, math.inf]
    values = [hill(erx, df, q) for q in qs]
    for a, b in zip(values, values[1:], strict=False):
        assert b <= a * (1 + 1e-9), values
    # bounded by 1 and the number of distinct sizes
    assert values[-1] >= 1 - 1e-12
    assert values[0] == len(set(sizes))


def test_hill_labels(erx):
    df = frame_from_sizes([1, 1, 2, 3])
    out = erx.summarize(df, cluster="c", hill_orders=(0, 0.5, 1, 2, math.inf))
    assert [lab for lab in out.index if str(lab).startswith("hill_number_")] == [
        "hill_number_0",
        "hill_number_0.5",
        "hill_number_1",
        "hill_number_2",
        "hill_number_inf",
    ]
    default = erx.summarize(df, cluster="c")
    assert [lab for lab in default.index if str(lab).startswith("hill_number_")] == [
        "hill_number_0",
        "hill_number_1",
        "hill_number_2",
        "hill_number_inf",
    ]
    assert default["hill_number_2"] == pytest.approx(8 / 3)
    assert out["hill_number_0.5"] == pytest.approx((0.5**0.5 + 2 * 0.25**0.5) ** 2)
    for key in ("n_records", "n_clusters", "average_cluster_size", "matching_rate"):
        assert key in default.index
    assert default["matching_rate"] == pytest.approx(5 / 7)


# ---------------------------------------------------------------------------
# representation of the ids and of the table
# ---------------------------------------------------------------------------


def _represent(series, kind):
    if kind == "category":
        return series.astype("category")
    if kind == "pyarrow_string":
        return series.astype("string[pyarrow]")
    if kind == "python_string":
        return series.astype("string[python]")
    raise ValueError(kind)


@pytest.mark.parametrize("kind", ["category", "pyarrow_string", "python_string"])
def test_id_column_dtype_is_irrelevant(erx, kind):
    df = ref.random_case(1300, null_rate=0.25)
    other = df.copy()
    for col in ("pred", "ref", "truth", "name"):
        other[col] = _represent(df[col], kind)
    a = estimate(erx, df, weights="w", draws="n_draws", name="name")
    b = estimate(erx, other, weights="w", draws="n_draws", name="name")
    assert_frames_close(a, b, ALL_ESTIMATES)
    assert a.attrs["records_set_aside"] == b.attrs["records_set_aside"]
    ea = erx.exact_metrics(df, prediction="pred", reference="truth")
    eb = erx.exact_metrics(other, prediction="pred", reference="truth")
    for m in PERF:
        assert close(ea[m], eb[m], 1e-12), m
    sa = erx.summarize(df, cluster="pred", name="name")
    sb = erx.summarize(other, cluster="pred", name="name")
    for key in sa.index:
        assert close(sa[key], sb[key], 1e-12), key


def test_prediction_and_reference_ids_may_coincide(erx):
    """Predicted and true ids live in separate namespaces even when the same
    values occur in both columns."""
    for seed in range(5):
        df = ref.random_case(1400 + seed, id_kind="int")
        plain = df.copy()
        # same integers in both columns: subtract the offsets used by make_frame
        plain["pred"] = df["pred"] - 1000
        plain["ref"] = df["ref"] - 5000
        plain["truth"] = df["truth"] - 5000
        a = estimate(erx, df, weights="w", draws="n_draws", name="name")
        b = estimate(erx, plain, weights="w", draws="n_draws", name="name")
        assert_frames_close(a, b, ALL_ESTIMATES)
        ea = erx.exact_metrics(df, prediction="pred", reference="truth")
        eb = erx.exact_metrics(plain, prediction="pred", reference="truth")
        for m in PERF:
            assert close(ea[m], eb[m], 1e-12), m


def test_row_index_is_irrelevant(erx):
    """A non-default, non-unique index must not change anything."""
    df = ref.random_case(1500, null_rate=0.25)
    odd = df.copy()
    odd.index = [i % 3 for i in range(len(df))]
    odd = odd.iloc[::-1]
    a = estimate(erx, df, weights="cluster_size", draws="n_draws", name="name")
    b = estimate(erx, odd, weights="cluster_size", draws="n_draws", name="name")
    assert_frames_close(a, b, ALL_ESTIMATES)
    ea = erx.exact_metrics(df, prediction="pred", reference="truth")
    eb = erx.exact_metrics(odd, prediction="pred", reference="truth")
    for m in PERF:
        assert close(ea[m], eb[m], 1e-12), m
    sa = erx.summarize(df, cluster="pred", name="name")
    sb = erx.summarize(odd, cluster="pred", name="name")
    for key in sa.index:
        assert close(sa[key], sb[key], 1e-12), key


def test_metric_subset_gives_same_values(erx):
    df = ref.random_case(1600)
    full = estimate(erx, df, weights="w", draws="n_draws", name="name", beta=2.0)
    for subset in (["b_cubed_f"], ["pairwise_f", "homonymy_rate"], ["homogeneity"]):
        part = estimate(
            erx, df, weights="w", draws="n_draws", name="name", beta=2.0, metrics=subset
        )
        assert list(part.index) == subset or set(part.index) == set(subset)
        assert_frames_close(full, part, subset)


def test_estimate_outside_range_is_not_clipped(erx):
    """Cluster precision from a benchmark of a block subset can exceed 1
    (SPEC 5): the estimate is reported as it is, with a warning note."""
    df = pd.DataFrame({"pred": ["a", "b", "c", "c"], "ref": ["A", "B", None, None]})
    res = estimate(erx, df)
    # N = 4, |Ĉ| = 3, both sampled clusters right and of size 1: 4/3
    assert res.loc["cluster_precision", "estimate"] == pytest.approx(4 / 3)
    note = res.loc["cluster_precision", "note"]
    assert isinstance(note, str) and note.strip()
    # undefined metrics (no pair in the sample) are NaN with a reason
    for m in ("pairwise_precision", "pairwise_recall", "pairwise_f"):
        assert pd.isna(res.loc[m, "estimate"])
        assert isinstance(res.loc[m, "note"], str) and res.loc[m, "note"].strip()


def test_single_draw_has_no_standard_error(erx):
    df = pd.DataFrame({"pred": ["a", "a", "b", "c"], "ref": ["A", "A", None, None]})
    res = estimate(erx, df)
    for m in ALL_ESTIMATES[:12]:
        assert pd.isna(res.loc[m, "std_error"]), m
        assert isinstance(res.loc[m, "note"], str) and res.loc[m, "note"].strip(), m
        assert int(res.loc[m, "draws"]) == 1
    assert res.loc["pairwise_recall", "estimate"] == pytest.approx(1.0)
    assert res.loc["average_cluster_size", "estimate"] == pytest.approx(2.0)


def test_integer_valued_float_hill_order_label(erx):
    out = erx.summarize(frame_from_sizes([1, 2, 2]), cluster="c", hill_orders=(2.0, 0.5))
    hills = [lab for lab in out.index if str(lab).startswith("hill_number_")]
    assert hills == ["hill_number_2", "hill_number_0.5"]
    assert out["hill_number_2"] == pytest.approx(1 / (1 / 9 + 4 / 9))


@pytest.mark.parametrize("q", [200.0, 500.0, 2000.0, 1e6])
def test_hill_large_finite_order(erx, q):
    """Any real q >= 0 is allowed (SPEC 3); for large q, H_q tends to H_inf
    = 1/max share from above.  Sizes 3, 2, 1, 1, 1: shares 3/5, 1/5, 1/5."""
    df = frame_from_sizes([3, 2, 1, 1, 1])
    expected = ref.hill_number([3 / 5, 1 / 5, 1 / 5], q)
    assert 5 / 3 <= expected <= ref.hill_number([3 / 5, 1 / 5, 1 / 5], 50)
    assert hill(erx, df, q) == pytest.approx(expected, rel=1e-9)


@needs_erx
@HYP
@given(sizes=size_lists, q=st.floats(0, 120, allow_nan=False))
def test_hill_any_real_order_matches_reference(sizes, q):
    """H_q for any real q >= 0 (SPEC 3), against the reference's
    underflow-free evaluation."""
    shares = [sizes.count(s) / len(sizes) for s in set(sizes)]
    expected = ref.hill_number(shares, q)
    assert hill(erx_module, frame_from_sizes(sizes), q) == pytest.approx(expected, rel=1e-9)
