"""``erx.simulate`` (issue #8 item 6): the replay of a sampling design on known truth.

* every replicate's estimate, standard error and interval equal ``erx.estimate`` on the
  same draws (both designs, every metric, zero-event samples included);
* the designs draw clusters with the right probabilities;
* the bias of the ratio estimator on a two-type population equals its closed form
  (a binomial sum) and shrinks with the number of draws;
* RLdata10000 with the paper's all-but-one prediction reproduces the paper's simulation.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import er_expectations as erx
from er_expectations.analysis.examples import rldata_frame
from er_expectations.analysis.planning import Population, replicate_estimates
from er_expectations.core.errors import InputError
from er_expectations.stats import ratio_estimate
from er_expectations.stats.resample import replicate_ratio

ALL_METRICS = list(erx.METRICS)


def _population(seed: int = 3, n_true: int = 40) -> pd.DataFrame:
    """A small release with merges, splits, singletons and shared names."""
    rng = np.random.default_rng(seed)
    sizes = rng.choice([1, 1, 1, 2, 2, 3, 4, 6], size=n_true)
    truth = np.repeat(np.arange(n_true), sizes)
    pred = truth.copy()
    n = truth.size
    # split some true clusters, merge some others
    for i in rng.choice(n, size=n // 6, replace=False):
        pred[i] = 1000 + i
    for a, b in rng.choice(n_true, size=(n_true // 8, 2), replace=False):
        pred[pred == b] = a
    names = np.array(["ann", "bob", "cy", "dee", "eve", "fay", "gus"])[rng.integers(0, 7, size=n)]
    return pd.DataFrame({"pred": pred, "truth": truth, "name": names})


def _same(a: float, b: float, rtol: float = 1e-10) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= rtol * max(1.0, abs(a), abs(b))


@pytest.mark.parametrize("design", ["cluster_size", "uniform"])
@pytest.mark.parametrize("size", [2, 3, 12])
def test_every_replicate_equals_erx_estimate_on_the_same_draws(design, size):
    df = _population()
    pop = Population(df, prediction="pred", truth="truth", name="name", record_id=None, beta=1.5)
    idx, res = replicate_estimates(pop, design=design, size=size, reps=30, seed=7, ids=tuple(ALL_METRICS),
                                   ci_level=0.9, bias_adjust=True)
    labels = pop.sample.labels
    kinds = set()
    for b in range(idx.shape[0]):
        counts = pd.Series(labels[idx[b]]).value_counts()
        bench = df.assign(ref=df["truth"].where(df["truth"].isin(counts.index)))
        bench["d"] = bench["ref"].map(counts)
        est = erx.estimate(bench, prediction="pred", reference="ref", weights=design, draws="d", name="name",
                           beta=1.5, ci_level=0.9, ci_method="linearization")  # simulate's linearised rows
        for m in ALL_METRICS:
            row = est.loc[m]
            kinds.add(row["ci_method"])
            got = res[m]
            for col, arr in (("estimate", got.estimate), ("std_error", got.std_error),
                             ("ci_lower", got.ci_lower), ("ci_upper", got.ci_upper)):
                assert _same(float(arr[b]), float(row[col])), (m, b, col, float(arr[b]), float(row[col]))
            assert bool(got.zero_event[b]) == (row["ci_method"] == "zero_event"), (m, b)
    if size == 2:  # the small samples exercise the zero-event and no-interval branches too
        assert {"linearization", "zero_event"} <= kinds, kinds


def test_designs_draw_clusters_with_the_design_probabilities():
    df = _population(seed=5)
    pop = Population(df, prediction="pred", truth="truth", name=None, record_id=None, beta=1.0)
    s = pop.sample.size.astype(float)
    for design, p in (("cluster_size", s / s.sum()), ("uniform", np.full(s.size, 1 / s.size))):
        idx, _ = replicate_estimates(pop, design=design, size=50, reps=2000, seed=1, ids=("cluster_recall",),
                                     ci_level=0.95, bias_adjust=True)
        freq = np.bincount(idx.ravel(), minlength=s.size) / idx.size
        se = np.sqrt(p * (1 - p) / idx.size)
        assert np.all(np.abs(freq - p) <= 5 * se), design
    # and the weights are those erx.estimate gives each design (SPEC 2.1): 1/|c| and 1
    assert np.allclose(pop.design_sample("cluster_size").weight, 1 / s)
    assert np.allclose(pop.design_sample("uniform").weight, 1.0)


def test_truth_is_the_exact_metric_and_the_true_statistic():
    df = _population(seed=8)
    out = erx.simulate(df, prediction="pred", truth="truth", sizes=(5,), designs="uniform", reps=100, seed=1, name="name")
    truth = out.set_index("metric")["truth"]
    exact = erx.exact_metrics(df, prediction="pred", reference="truth")
    for m in exact.index:
        assert truth[m] == pytest.approx(exact[m], rel=1e-12)
    true_stats = erx.summarize(df, cluster="truth", name="name")
    for m in ("average_cluster_size", "matching_rate", "homonymy_rate", "name_variation_rate"):
        assert truth[m] == pytest.approx(true_stats[m], rel=1e-12)


def test_records_outside_the_release_are_left_out():
    df = _population(seed=9)
    out_rel = df.assign(pred=df["pred"].astype("float").where(df.index % 7 != 0))
    a = erx.simulate(out_rel, prediction="pred", truth="truth", sizes=(10,), reps=200, seed=3)
    b = erx.simulate(out_rel.dropna(subset=["pred"]), prediction="pred", truth="truth", sizes=(10,), reps=200, seed=3)
    pd.testing.assert_frame_equal(a, b, check_like=False)


# -- a closed form: two cluster types -----------------------------------------------------------

def _two_type_population(n_a: int, n_b: int) -> pd.DataFrame:
    """n_a true pairs predicted exactly; n_b true triples split into a pair and a singleton."""
    truth, pred = [], []
    for i in range(n_a):
        truth += [i, i]
        pred += [i, i]
    for j in range(n_b):
        c = n_a + j
        truth += [c, c, c]
        pred += [c, c, 10_000 + c]
    return pd.DataFrame({"pred": pred, "truth": truth})


def _expected_estimate(k: int, pi_a: float, fa: float, ga: float, fb: float, gb: float, *, adjust: bool) -> float:
    """E[θ̂] over Binomial(k, π_A) type-A draws: θ̂ depends on the draws only through j."""
    total = 0.0
    for j in range(k + 1):
        f = np.array([fa] * j + [fb] * (k - j))
        g = np.array([ga] * j + [gb] * (k - j))
        fbar, gbar = f.mean(), g.mean()
        est = fbar / gbar
        if adjust:
            est *= 1 + np.sum((g / gbar) * (f / fbar - g / gbar)) / (k * (k - 1))
        total += math.comb(k, j) * pi_a**j * (1 - pi_a) ** (k - j) * est
    return total


@pytest.mark.parametrize("adjust", [False, True])
def test_bias_matches_its_closed_form_and_shrinks_with_size(adjust):
    n_a, n_b = 30, 10
    df = _two_type_population(n_a, n_b)
    # pairwise recall, size-proportional design (w = 1/s): f = s − 1 − UCE, g = s − 1
    # type A (s = 2, exact): f = 1, g = 1; type B (s = 3, UCE = (1 + 1 + 2)/3): f = 2/3, g = 2
    fa, ga, fb, gb = 1.0, 1.0, 2.0 - 4.0 / 3.0, 2.0
    pi_a = 2 * n_a / (2 * n_a + 3 * n_b)
    truth = erx.exact_metrics(df, prediction="pred", reference="truth")["pairwise_recall"]
    assert truth == pytest.approx((pi_a * fa + (1 - pi_a) * fb) / (pi_a * ga + (1 - pi_a) * gb), rel=1e-12)
    sizes = (4, 8, 16, 32)
    reps = 40_000
    out = erx.simulate(df, prediction="pred", truth="truth", sizes=sizes, designs="cluster_size", reps=reps, seed=2026,
                       metrics="pairwise_recall", bias_adjust=adjust).set_index("size")
    closed = {k: _expected_estimate(k, pi_a, fa, ga, fb, gb, adjust=adjust) - truth for k in sizes}
    for k in sizes:
        mc_se = out.loc[k, "sd"] / math.sqrt(reps)
        # the simulated bias is the exact bias up to Monte Carlo error (4 standard errors)
        assert abs(out.loc[k, "bias"] - closed[k]) <= 4 * mc_se, (k, out.loc[k, "bias"], closed[k], mc_se)
    # the exact bias shrinks with size (O(1/k) plain, O(1/k²) adjusted), and is not 0
    mags = [abs(closed[k]) for k in sizes]
    assert all(a > b > 0 for a, b in zip(mags, mags[1:], strict=False)), mags
    if not adjust:  # plain ratio: large enough to see in the simulation itself
        assert abs(closed[4]) > 10 * out.loc[4, "sd"] / math.sqrt(reps)
        assert abs(out.loc[4, "bias"]) > abs(out.loc[32, "bias"])


# -- the paper: RLdata10000 and the all-but-one prediction -----------------------------------------

PAPER_RMSE = {200: 0.047, 400: 0.035, 800: 0.024}


@pytest.fixture(scope="module")
def rldata(rldata_dir):
    return rldata_frame(rldata_dir)


def test_rldata_reproduces_the_paper(rldata):
    reps = 4000
    out = erx.simulate(rldata, prediction="pred", truth="truth", reps=reps, seed=20261126,
                       metrics=["pairwise_precision", "pairwise_recall"])
    t = out.groupby("metric")["truth"].first()
    assert round(t["pairwise_precision"], 3) == 0.914 and round(t["pairwise_recall"], 3) == 0.969
    for row in out.itertuples():
        # bias below 0.4 % (the paper). The true bias is below 0.1 % (20,000 replications) and
        # the Monte Carlo error of the mean is at most 3 · 0.052/√4000 = 0.25 %: 0.4 % holds
        assert abs(row.bias) < 0.004, row
        assert row.undefined == 0
    pp = out[(out.metric == "pairwise_precision") & (out.design == "cluster_size")].set_index("size")
    for size, paper in PAPER_RMSE.items():
        # the paper's RMSE is read to 0.1 point from 1,000 replications (Monte Carlo error about
        # ±2 % relative, ±0.1 point at 200 draws); ours carries ±1 %: 0.3 point covers both
        assert abs(pp.loc[size, "rmse"] - paper) <= 0.003, (size, pp.loc[size, "rmse"])
    assert pp["rmse"].is_monotonic_decreasing
    cs = out[out.design == "cluster_size"].set_index(["metric", "size"])
    mc = math.sqrt(0.9 * 0.1 / reps)  # Monte Carlo standard error of a coverage near 90 %
    for metric in ("pairwise_precision", "pairwise_recall"):
        # at least 90 % from 400 draws (up to 3 Monte Carlo standard errors) ...
        assert cs.loc[(metric, 400), "coverage"] >= 0.90 - 3 * mc
        assert cs.loc[(metric, 800), "coverage"] >= 0.90 - 3 * mc
        # ... and about nominal (within 5 points) at 800
        assert abs(cs.loc[(metric, 800), "coverage"] - 0.95) <= 0.05 + 3 * mc
    # the interval is too short at 200 draws for precision (the paper: "coverage is low at 200")
    assert cs.loc[("pairwise_precision", 200), "coverage"] < 0.9


def test_rldata_coverage_with_the_papers_two_standard_errors(rldata):
    """The paper's "coverage_2" interval is θ̂ ± 2·SE: the level 2Φ(2) − 1."""
    level = 2 * NormalDist().cdf(2.0) - 1
    out = erx.simulate(rldata, prediction="pred", truth="truth", sizes=(800,), designs="cluster_size", reps=2000, seed=5,
                       metrics="pairwise_precision", ci_level=level)
    assert out.attrs["ci_level"] == level
    assert out.loc[0, "coverage"] >= 0.90


# -- bad input ------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"sizes": (200, 0)}, "sizes=0 is out of range"),
        ({"sizes": (1,)}, "a standard error needs two draws"),
        ({"sizes": (2.5,)}, "not a whole number"),
        ({"sizes": (True,)}, "not a whole number"),
        ({"sizes": "200"}, "give a list of numbers of draws"),
        ({"sizes": ()}, "gives no sample size"),
        ({"reps": 10}, "at least 100 replications"),
        ({"reps": 1000.5}, "not a whole number"),
        ({"designs": ("cluster_sise",)}, "did you mean 'cluster_size'"),
        ({"designs": ("stratified",)}, "Known designs"),
        ({"designs": ()}, "gives no design"),
        ({"seed": -1}, "seed=-1 is negative"),
        ({"metrics": ["pairwise_precison"]}, "did you mean 'pairwise_precision'"),
        ({"metrics": ["homonymy_rate"]}, "needs a name column"),
        ({"ci_level": 95}, "outside \\(0, 1\\)"),
        ({"bias_adjust": "no"}, "bias_adjust='no' is not true or false"),
    ],
)
def test_bad_parameters_are_input_errors(kwargs, match):
    df = _population()
    args = {"sizes": (10,), "reps": 100, "seed": 1, **kwargs}
    with pytest.raises(erx.InputError, match=match):
        erx.simulate(df, prediction="pred", truth="truth", **args)


def test_bad_columns_and_missing_truth_are_input_errors():
    df = _population()
    with pytest.raises(erx.InputError, match="truth='trut': no such column.*Did you mean 'truth'"):
        erx.simulate(df, prediction="pred", truth="trut", sizes=(10,), reps=100, seed=1)
    holes = df.assign(truth=df["truth"].astype("float").where(df.index != 3))
    with pytest.raises(erx.InputError, match="truth column 'truth' is null on 1 records of the release"):
        erx.simulate(holes, prediction="pred", truth="truth", sizes=(10,), reps=100, seed=1)


def test_seed_is_reproducible_and_recorded():
    df = _population()
    a = erx.simulate(df, prediction="pred", truth="truth", sizes=(10, 20), reps=100, seed=4)
    b = erx.simulate(df, prediction="pred", truth="truth", sizes=(20,), reps=100, seed=4)
    pd.testing.assert_frame_equal(a[a["size"] == 20].reset_index(drop=True), b)
    fresh = erx.simulate(df, prediction="pred", truth="truth", sizes=(10,), reps=100)
    assert isinstance(fresh.attrs["seed"], int)
    again = erx.simulate(df, prediction="pred", truth="truth", sizes=(10,), reps=100, seed=fresh.attrs["seed"])
    pd.testing.assert_frame_equal(fresh, again)
    assert list(a.columns) == ["metric", "design", "size", "truth", "mean", "bias", "rmse", "coverage", "reps",
                               "sd", "mean_se", "undefined", "target", "ci_method"]
    assert set(a["target"]) == {"estimate"} and set(a["ci_method"]) == {"linearization"}


# -- every interval method, groups and changes (issue 21 item 4) ----------------------------------


def _with_group_and_baseline(seed: int = 5) -> pd.DataFrame:
    df = _population(seed, n_true=60)
    truth = df["truth"].to_numpy()
    df["grp"] = np.where(pd.factorize(truth)[0] % 2 == 0, "a", "b")  # constant per entity
    rng = np.random.default_rng(seed)
    base = df["pred"].to_numpy().copy()
    moved = rng.random(base.size) < 0.1
    base[moved] = base[rng.permutation(np.flatnonzero(moved))]
    df["base"] = base
    return df


def test_every_method_and_group_and_change_rows_with_independent_truths():
    df = _with_group_and_baseline()
    metrics = ["pairwise_precision", "pairwise_recall", "b_cubed_f"]
    out = erx.simulate(df, prediction="pred", truth="truth", sizes=(30,), designs="uniform", reps=100, seed=2, metrics=metrics,
                       ci_methods="all", n_boot=100, group_column="grp", baseline="base")
    methods = ("linearization", "logit", "bootstrap", "bca", "studentized", "recommended")
    gap_only = ("bca_mover", "hull")
    assert out.attrs["ci_methods"] == [*methods[:-1], *gap_only, "recommended"] and out.attrs["n_boot"] == 100
    targets = {"estimate", "group a", "gap a", "group b", "gap b", "change"}
    assert set(out["target"]) == targets
    for target in targets:
        for m in metrics:
            rows = out[(out["target"] == target) & (out["metric"] == m)]
            want = (*methods, *gap_only) if target.startswith("gap") else methods
            assert sorted(rows["ci_method"]) == sorted(want), (target, m)
            assert rows["coverage"].between(0, 1).all()
            # the estimates do not depend on the interval method
            assert rows["mean"].nunique() == 1 and rows["truth"].nunique() == 1
    # the hull's coverage is at least that of the paired normal and of the BCa MOVER gap, replicate by replicate
    for g in ("a", "b"):
        for m in metrics:
            cov = out[(out["target"] == f"gap {g}") & (out["metric"] == m)].set_index("ci_method")["coverage"]
            assert cov["hull"] >= max(cov["linearization"], cov["bca_mover"]) - 1e-12, (g, m)
            assert cov["recommended"] == cov["hull"]
    # true values computed independently: the exact metrics of the group's records and of the releases
    exact = {g: erx.exact_metrics(df[df["grp"] == g], prediction="pred", reference="truth") for g in ("a", "b")}
    for g, other in (("a", "b"), ("b", "a")):
        for m in ("pairwise_precision", "pairwise_recall"):
            group_truth = out[(out["target"] == f"group {g}") & (out["metric"] == m)]["truth"].iloc[0]
            gap_truth = out[(out["target"] == f"gap {g}") & (out["metric"] == m)]["truth"].iloc[0]
            if m == "pairwise_recall":  # true pairs lie within one entity, so within one group
                assert group_truth == pytest.approx(exact[g][m], rel=1e-9)
                assert gap_truth == pytest.approx(exact[g][m] - exact[other][m], rel=1e-9)
    whole, base = erx.exact_metrics(df, prediction="pred", reference="truth"), erx.exact_metrics(df, prediction="base", reference="truth")
    for m in metrics:
        change_truth = out[(out["target"] == "change") & (out["metric"] == m)]["truth"].iloc[0]
        assert change_truth == pytest.approx(whole[m] - base[m], rel=1e-9, abs=1e-12)
    # the linearised rows of the estimates are the plain simulation's
    plain = erx.simulate(df, prediction="pred", truth="truth", sizes=(30,), designs="uniform", reps=100, seed=2, metrics=metrics)
    lin = out[(out["target"] == "estimate") & (out["ci_method"] == "linearization")].reset_index(drop=True)
    pd.testing.assert_frame_equal(lin, plain, check_like=False)


def test_simulate_interval_options_are_checked_first():
    df = _population()
    with pytest.raises(InputError, match="ci_methods: 'wilson' is not an interval method"):
        erx.simulate(df, prediction="pred", truth="truth", sizes=(10,), reps=100, ci_methods=["wilson"])
    # a gap-only method without a grouping would report nothing: refused, not an empty table
    for method in ("hull", "bca_mover"):
        with pytest.raises(InputError, match=f"'{method}' is an interval method for subgroup gaps only.*group_column"):
            erx.simulate(df, prediction="pred", truth="truth", sizes=(10,), reps=100, ci_methods=["linearization", method])
    # "all" without a grouping leaves them out
    out = erx.simulate(df, prediction="pred", truth="truth", sizes=(10,), reps=100, ci_methods="all", n_boot=100, metrics="pairwise_f")
    assert "hull" not in out.attrs["ci_methods"] and set(out["ci_method"]) == {
        "linearization", "logit", "bootstrap", "bca", "studentized", "recommended"}
    with pytest.raises(InputError, match="n_boot=1000000000 is too large"):
        erx.simulate(df, prediction="pred", truth="truth", sizes=(10,), reps=100, ci_methods="all", n_boot=10**9)


# -- the vectorised estimator against ratio_estimate, on arbitrary values -----------------------

@settings(max_examples=150, deadline=None)
@given(st.integers(2, 9), st.integers(1, 6), st.integers(0, 2**32 - 1), st.sampled_from(["free", "fg", "zero", "eq"]),
       st.booleans(), st.floats(0.5, 0.99))
def test_replicate_ratio_equals_ratio_estimate_row_by_row(k, reps, seed, kind, adjust, level):
    rng = np.random.default_rng(seed)
    g = rng.choice([0.0, 0.5, 1.0, 2.0, 3.0], size=(reps, k))
    if kind == "free":
        f = rng.choice([0.0, 0.3, 1.0, 2.5], size=(reps, k))
    else:  # 0 ≤ f ≤ g, the zero-event metrics; some rows without any error or any event
        f = g * rng.choice([0.0, 0.5, 1.0], size=(reps, k))
        if kind == "zero":
            f[0] = 0.0
        elif kind == "eq":
            f[0] = g[0]
    zero_event = kind != "free"
    got = replicate_ratio(f, g, bias_adjust=adjust, ci_level=level, bounds=(0.0, 1.0), zero_event=zero_event)
    for b in range(reps):
        want = ratio_estimate(f[b], g[b], None, bias_adjust=adjust, ci_level=level, bounds=(0.0, 1.0),
                              zero_event=zero_event)
        for name, arr in (("estimate", got.estimate), ("std_error", got.std_error), ("ci_lower", got.ci_lower),
                          ("ci_upper", got.ci_upper)):
            assert _same(float(arr[b]), float(getattr(want, name))), (b, name, float(arr[b]), getattr(want, name))
        assert bool(got.zero_event[b]) == (want.interval == "zero_event")


def test_summary_rows_from_the_replicates_undefined_left_out():
    """A release of one true pair among singletons: recall is undefined in every replicate
    that draws no pair. The row's mean, bias, rmse, coverage, sd and mean_se are those of
    the replicates (same seed), undefined ones left out and counted as not covering."""
    truth = [0, 0] + list(range(1, 41))
    df = pd.DataFrame({"pred": [0, 1] + list(range(2, 42)), "truth": truth})  # the pair is split
    reps, seed = 300, 9
    out = erx.simulate(df, prediction="pred", truth="truth", sizes=(3,), designs="uniform", reps=reps, seed=seed,
                       metrics=["pairwise_recall", "cluster_recall"])
    pop = Population(df, prediction="pred", truth="truth", name=None, record_id=None, beta=1.0)
    _, res = replicate_estimates(pop, design="uniform", size=3, reps=reps, seed=seed,
                                 ids=("pairwise_recall", "cluster_recall"), ci_level=0.95, bias_adjust=True)
    for metric in ("pairwise_recall", "cluster_recall"):
        row = out.set_index("metric").loc[metric]
        r = res[metric]
        ok = ~np.isnan(r.estimate)
        truth_value = row["truth"]
        assert row["undefined"] == int((~ok).sum())
        assert row["mean"] == pytest.approx(r.estimate[ok].mean(), rel=1e-12)
        assert row["bias"] == pytest.approx(r.estimate[ok].mean() - truth_value, abs=1e-12)
        assert row["rmse"] == pytest.approx(np.sqrt(np.mean((r.estimate[ok] - truth_value) ** 2)), rel=1e-12)
        assert row["sd"] == pytest.approx(np.std(r.estimate[ok], ddof=1), rel=1e-12)
        covered = [(lo <= truth_value <= hi) for lo, hi in zip(r.ci_lower, r.ci_upper, strict=True)]
        assert row["coverage"] == pytest.approx(np.mean(covered), abs=1e-12)
    assert out.set_index("metric").loc["pairwise_recall", "undefined"] > reps / 2  # the case is exercised
    assert out.set_index("metric").loc["pairwise_recall", "truth"] == 0.0
