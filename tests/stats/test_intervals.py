"""Intervals of estimates (SPEC 6): error-free samples and the percentile bootstrap."""

from __future__ import annotations

import math
import textwrap

import numpy as np
import pandas as pd
import pytest
from support.gxtools import validate_frame

import er_expectations as erx
from er_expectations.cli.main import main as cli_main
from er_expectations.config import default_registry, load_suite
from er_expectations.core.errors import InputError
from er_expectations.engines.pandas.release import PandasRelease
from er_expectations.stats import estimate_metrics, fg_values, ratio_estimate
from er_expectations.stats import estimator as est_mod
from er_expectations.stats.estimator import bootstrap_counts, f_beta_estimate

LN05 = math.log(0.05)


def error_free_frame() -> pd.DataFrame:
    """Three true pairs and one singleton, all predicted exactly right, plus records outside
    the benchmark (a pair and a lone record) so that the release has more than the sample."""
    return pd.DataFrame({
        "pred": ["A", "A", "B", "B", "C", "C", "D", "E", "E", "F"],
        "ref": ["a", "a", "b", "b", "c", "c", "d", None, None, None],
    })


# -- a hand-worked sample without errors -------------------------------------------------


def test_error_free_recall_gets_the_binomial_interval_cluster_size_design():
    res = erx.estimate(error_free_frame(), prediction="pred", reference="ref",
                       metrics=["pairwise_recall", "b_cubed_recall", "b_cubed_f", "cluster_recall"])
    # pairwise recall, w = 1/s: g = s - 1 = 1 for each of the 3 pairs, 0 for the singleton:
    # 3 error-free draws, k* = 3, lower bound 0.05^(1/3) = 0.368403...
    pr = res.loc["pairwise_recall"]
    assert pr.estimate == 1.0 and pr.std_error == 0.0
    assert pr.ci_lower == pytest.approx(0.05 ** (1 / 3), rel=1e-12)
    assert pr.ci_lower == pytest.approx(0.3684031498640387, rel=1e-12)
    assert pr.ci_upper == 1.0
    assert pr.ci_method == "zero_event"
    assert "no sampled draw shows an error" in pr.note and "3 draws" in pr.note
    # b-cubed / cluster recall: g = w = 1/s = (1/2, 1/2, 1/2, 1) over 4 draws:
    # k* = Σ g / max g = (5/2) / 1 = 5/2 (the draws in units of the singleton, the heaviest),
    # lower bound 0.05^(2/5) (Kish's 25/7 gave 0.05^(7/25) = 0.43223: issue 28)
    for m in ("b_cubed_recall", "cluster_recall"):
        row = res.loc[m]
        assert row.ci_lower == pytest.approx(math.exp(LN05 * 2 / 5), rel=1e-12), m
        assert row.ci_lower == pytest.approx(0.30171, abs=1e-5), m
        assert "2.5 effective draws" in row.note, m
    # b-cubed F: no error of either kind, F >= min(P, R) >= the same bound
    bf = res.loc["b_cubed_f"]
    assert bf.ci_method == "zero_event" and bf.ci_upper == 1.0
    assert bf.ci_lower == pytest.approx(math.exp(LN05 * 2 / 5), rel=1e-12)


def test_error_free_uniform_design_and_other_level():
    res = erx.estimate(error_free_frame(), prediction="pred", reference="ref", weights="uniform",
                       metrics=["pairwise_recall", "b_cubed_precision"], ci_level=0.9)
    # uniform: g = s(s-1) = 2 for every pair: k* = 3, bound 0.1^(1/3)
    assert res.loc["pairwise_recall", "ci_lower"] == pytest.approx(0.1 ** (1 / 3), rel=1e-12)
    # b-cubed: g = w = 1 for all 4 draws: 0.1^(1/4) (rule of three at level 0.9: ≈ 2.3/k)
    assert res.loc["b_cubed_precision", "ci_lower"] == pytest.approx(0.1 ** 0.25, rel=1e-12)
    assert "90 %" in res.loc["b_cubed_precision", "note"]


def test_rule_of_three():
    """With k equal-weight error-free draws the 95 % bound on the error rate is about 3/k."""
    g = np.ones(300)
    lo, hi, _ = est_mod.zero_event_interval(g, np.ones(300), ci_level=0.95, at_one=True)
    assert hi == 1.0
    assert 1 - lo == pytest.approx(1 - 0.05 ** (1 / 300), rel=1e-12)
    assert 1 - lo == pytest.approx(3 / 300, rel=0.01)


def test_nothing_counted_gets_the_upper_binomial_bound():
    # every sampled true cluster is a singleton: true matching rate 0, no pair drawn
    df = pd.DataFrame({"pred": ["A", "B", "C", "D", "D"], "ref": ["a", "b", "c", None, None]})
    res = erx.estimate(df, prediction="pred", reference="ref", metrics=["matching_rate", "cluster_recall"])
    mr = res.loc["matching_rate"]
    assert mr.estimate == 0.0 and math.isnan(mr.std_error)  # unchanged: no standard error
    # g = s w = 1 for 3 draws: share of clusters of size >= 2 at most 1 - 0.05^(1/3)
    assert (mr.ci_lower, mr.ci_upper) == (0.0, pytest.approx(1 - 0.05 ** (1 / 3), rel=1e-12))
    assert mr.ci_method == "zero_event" and "no standard error" in mr.note
    # a metric with variation keeps its ordinary interval
    assert res.loc["cluster_recall", "ci_method"] in ("zero_event", "linearization")


def test_constant_ratio_without_zero_event_keeps_a_point_and_says_so():
    # cluster precision (f/g not within [0, 1]) with V̂ = 0: no binomial bound, a note
    f = np.array([2.0, 2.0, 2.0])
    g = np.array([4.0, 4.0, 4.0])
    r = ratio_estimate(f, g, ci_level=0.95)
    assert r.std_error == 0.0 and r.ci_lower == r.ci_upper == 0.5
    assert r.interval == "linearization" and "zero width" in r.note
    # the same values with zero_event but f != g: no binomial interval either
    assert ratio_estimate(f, g, zero_event=True).interval == "linearization"


def test_single_draw_still_has_no_interval():
    r = ratio_estimate(np.array([1.0]), np.array([1.0]), zero_event=True)
    assert math.isnan(r.ci_lower) and r.interval == "none"


def test_linearised_estimates_do_not_change_with_the_method():
    df = random_frame(5)
    lin = erx.estimate(df, prediction="pred", reference="ref", draws="draws", ci_method="linearization")
    boot = erx.estimate(df, prediction="pred", reference="ref", draws="draws", ci_method="bootstrap", seed=3,
                        n_boot=300)
    pd.testing.assert_series_equal(lin["estimate"], boot["estimate"])
    pd.testing.assert_series_equal(lin["std_error"], boot["std_error"])
    assert set(boot["ci_method"]) <= {"bootstrap", "zero_event", "none"}
    assert "bootstrap" in set(boot["ci_method"])
    assert lin.attrs["ci_method"] == "linearization" and "seed" not in lin.attrs


# -- the bootstrap --------------------------------------------------------------------


def random_frame(seed: int, n_true: int = 40) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    sizes = rng.zipf(1.8, size=n_true).clip(max=30)
    truth = np.repeat(np.arange(n_true), sizes)
    pred = np.where(rng.random(truth.size) < 0.85, truth, rng.integers(0, n_true, truth.size))
    sampled = rng.choice(n_true, size=n_true // 2, replace=False)
    draws_per = {c: int(rng.integers(1, 4)) for c in sampled}
    ref = [f"t{t}" if t in draws_per else None for t in truth]
    return pd.DataFrame({
        "pred": [f"p{x}" for x in pred],
        "ref": ref,
        "draws": [draws_per.get(t, np.nan) for t in truth],
    })


def test_bootstrap_is_reproducible_from_the_seed():
    df = random_frame(1)
    kw = {"prediction": "pred", "reference": "ref", "draws": "draws", "ci_method": "bootstrap", "n_boot": 500}
    a = erx.estimate(df, seed=11, **kw)
    b = erx.estimate(df, seed=11, **kw)
    c = erx.estimate(df, seed=12, **kw)
    pd.testing.assert_frame_equal(a, b)
    assert a.attrs["seed"] == 11 and a.attrs["n_boot"] == 500
    boot = a["ci_method"] == "bootstrap"
    assert not np.allclose(a.loc[boot, "ci_lower"], c.loc[boot, "ci_lower"])
    # no seed: DEFAULT_SEED, recorded, the same as giving it
    d = erx.estimate(df, **kw)
    assert d.attrs["seed"] == est_mod.DEFAULT_SEED == 0
    pd.testing.assert_frame_equal(d, erx.estimate(df, seed=0, **kw), check_like=True)


@pytest.mark.parametrize("ci_method", ["bca", "recommended", "studentized"])
def test_a_bootstrap_without_a_seed_gives_the_same_limits_on_every_run(ci_method):
    """Issue 28: a check's verdict must not move between runs, so a bootstrap interval without
    a seed is seeded by DEFAULT_SEED (a fresh seed gave other limits on every call)."""
    df = random_frame(2)
    kw = {"prediction": "pred", "reference": "ref", "draws": "draws", "ci_method": ci_method, "n_boot": 300}
    runs = [erx.estimate(df, **kw) for _ in range(3)]
    for again in runs[1:]:
        pd.testing.assert_frame_equal(runs[0], again)
        assert again.attrs["seed"] == est_mod.DEFAULT_SEED
    # the seed stays selectable: another one moves the bootstrap limits
    other = erx.estimate(df, seed=7, **kw)
    boot = runs[0]["ci_method"] != "zero_event"
    assert boot.any() and not np.allclose(runs[0].loc[boot, "ci_lower"], other.loc[boot, "ci_lower"])
    # the gaps and the changes too
    df = df.assign(grp=["x" if not isinstance(r, str) or int(r[1:]) % 2 else "y" for r in df["ref"]],
                   base=np.where(np.arange(len(df)) % 3 == 0, df["ref"].astype(str), df["pred"]))
    by = [erx.estimate_by_group(df, prediction="pred", reference="ref", draws="draws", group_column="grp",
                                metrics=["pairwise_recall"], min_draws=2, ci_method=ci_method, n_boot=300)
          for _ in range(2)]
    pd.testing.assert_frame_equal(by[0], by[1])
    ch = [erx.estimate_change(df, prediction="pred", baseline="base", reference="ref", draws="draws",
                              metric="pairwise_recall", ci_method=ci_method, n_boot=300) for _ in range(2)]
    assert ch[0].change == ch[1].change and ch[0].current == ch[1].current


def test_bootstrap_counts_resample_draws_with_their_multiplicity():
    d = np.array([1, 3, 2, 1])
    blocks = list(bootstrap_counts(d, 4000, seed=5))
    w = np.vstack(blocks)
    assert w.shape == (4000, 4)
    assert np.all(w.sum(axis=1) == d.sum())
    # Multinomial(k, d/k): mean d, variance k (d/k)(1 - d/k)
    k = d.sum()
    assert w.mean(axis=0) == pytest.approx(d, abs=0.1)
    assert w.var(axis=0) == pytest.approx(k * (d / k) * (1 - d / k), rel=0.1)


def _brute_force_interval(f, g, d, *, seed, n_boot, level, complement=False, bounds=(0.0, 1.0)):
    """One replicate at a time: draw k of the k draws with replacement (the same random stream
    as the vectorised code: rng.integers(0, k, (n_boot, k))), run the scalar estimator."""
    owner = np.repeat(np.arange(len(d)), d)
    k = owner.size
    picks = np.random.default_rng(seed).integers(0, k, size=(n_boot, k))
    reps = []
    for row in picks:
        rows = owner[row]
        r = ratio_estimate(f[rows], g[rows])  # every resampled draw once
        reps.append(math.nan if math.isnan(r.estimate) else (1 - r.estimate if complement else r.estimate))
    reps = np.array(reps)
    reps = reps[~np.isnan(reps)]
    alpha = 1 - level
    lo, hi = np.quantile(reps, [alpha / 2, 1 - alpha / 2])
    return max(lo, bounds[0]), min(hi, bounds[1])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bootstrap_agrees_with_a_brute_force_loop(seed):
    df = random_frame(seed, n_true=25)
    sample = PandasRelease(df, prediction="pred").benchmark_sample(reference="ref", draws="draws")
    # the bootstrap resamples the clusters in the order of their ids as text (SPEC 6)
    order = np.argsort(np.array([str(x) for x in sample.labels], dtype=object), kind="stable")
    d = sample.draws.astype(np.int64)[order]
    n_boot, level = 300, 0.9
    res = estimate_metrics(sample, ["pairwise_precision", "b_cubed_recall", "homogeneity", "b_cubed_f"],
                           ci_level=level, ci_method="bootstrap", n_boot=n_boot, seed=seed)
    checked = 0
    for m in ("pairwise_precision", "b_cubed_recall", "homogeneity"):
        f, g = (v[order] for v in fg_values(sample, m))
        if res[m].interval != "bootstrap":
            continue
        checked += 1
        lo, hi = _brute_force_interval(f, g, d, seed=seed, n_boot=n_boot, level=level,
                                       complement=m == "homogeneity")
        assert res[m].ci_lower == pytest.approx(lo, rel=1e-10, abs=1e-12), m
        assert res[m].ci_upper == pytest.approx(hi, rel=1e-10, abs=1e-12), m
        assert res[m].seed == seed
    assert checked >= 2
    # b-cubed F: F of the replicate b-cubed precision and recall
    assert res["b_cubed_f"].interval == "bootstrap"
    fp, gp = (v[order] for v in fg_values(sample, "b_cubed_precision"))
    fr, gr = (v[order] for v in fg_values(sample, "b_cubed_recall"))
    owner = np.repeat(np.arange(len(d)), d)
    picks = np.random.default_rng(seed).integers(0, owner.size, size=(n_boot, owner.size))
    reps = []
    for row in picks:
        rows = owner[row]
        p, r = ratio_estimate(fp[rows], gp[rows]), ratio_estimate(fr[rows], gr[rows])
        reps.append(f_beta_estimate(p, r, None, beta=1.0, ci_level=level).estimate)
    lo, hi = np.quantile(reps, [0.05, 0.95])
    assert res["b_cubed_f"].ci_lower == pytest.approx(max(lo, 0), rel=1e-10)
    assert res["b_cubed_f"].ci_upper == pytest.approx(min(hi, 1), rel=1e-10)


def test_bootstrap_keeps_the_zero_event_interval():
    res = erx.estimate(error_free_frame(), prediction="pred", reference="ref", metrics=["pairwise_recall"],
                       ci_method="bootstrap", seed=1)
    assert res.loc["pairwise_recall", "ci_method"] == "zero_event"
    assert res.loc["pairwise_recall", "ci_lower"] == pytest.approx(0.05 ** (1 / 3))


# -- bad parameters -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"ci_method": "bootstrp"}, ["ci_method", "did you mean 'bootstrap'"]),
        ({"ci_method": "linearisation"}, ["ci_method", "did you mean 'linearization'"]),
        ({"ci_method": None}, ["ci_method", "linearization, logit, bootstrap, bca, studentized, recommended"]),
        ({"ci_method": "wilson"}, ["ci_method='wilson'", "linearization, logit, bootstrap, bca, studentized, recommended"]),
        ({"ci_method": "bca", "n_boot": 10**9}, ["n_boot=1000000000", "at most 20,000"]),
        ({"ci_method": "bca", "n_boot": 1e9}, ["n_boot", "not an integer"]),
        ({"ci_method": "recommended", "n_boot": 0}, ["n_boot=0", "at least 100"]),
        ({"ci_method": "linearization", "n_boot": 10**9}, ["n_boot", "at most 20,000"]),
        ({"ci_method": "bootstrap", "n_boot": True}, ["n_boot", "not an integer"]),
        ({"ci_method": "bootstrap", "n_boot": 2000.0}, ["n_boot", "not an integer"]),
        ({"ci_method": "bootstrap", "n_boot": 99}, ["n_boot", "at least 100"]),
        ({"ci_method": "bootstrap", "seed": "7"}, ["seed", "not an integer"]),
        ({"ci_method": "bootstrap", "seed": False}, ["seed", "not an integer"]),
        ({"ci_method": "bootstrap", "seed": -1}, ["seed", "≥ 0"]),
    ],
)
def test_bad_interval_parameters_raise_input_error(kwargs, words):
    df = error_free_frame()
    for call in (lambda: erx.estimate(df, prediction="pred", reference="ref", **kwargs),
                 lambda: erx.Release(df, prediction="pred").estimate(reference="ref", **kwargs)):
        with pytest.raises(InputError) as caught:
            call()
        for w in words:
            assert w in str(caught.value)


def test_cli_estimate_options(tmp_path, capsys):
    path = tmp_path / "t.csv"
    random_frame(2).to_csv(path, index=False)
    args = ["estimate", str(path), "-p", "pred", "-r", "ref", "--draws", "draws", "--metrics", "pairwise_recall"]
    assert cli_main([*args, "--ci-method", "bootstrap", "--n-boot", "200", "--seed", "4", "--format", "json"]) == 0
    out1 = capsys.readouterr().out
    assert cli_main([*args, "--ci-method", "bootstrap", "--n-boot", "200", "--seed", "4", "--format", "json"]) == 0
    assert capsys.readouterr().out == out1
    assert '"ci_method": "bootstrap"' in out1 and '"seed": 4' in out1
    assert cli_main([*args, "--ci-method", "bootstrap", "--seed", "4"]) == 0
    text = capsys.readouterr().out
    assert "Intervals: bootstrap, 2000 bootstrap resamples of the draws, seed 4." in text
    assert cli_main([*args, "--ci-method", "recommended", "--seed", "4"]) == 0
    text = capsys.readouterr().out
    assert " bca " in text and "seed 4" in text  # the row's interval column names the method used
    assert cli_main([*args, "--ci-method", "bca", "--n-boot", "1000000000"]) == 2
    err = capsys.readouterr().err
    assert "n_boot=1000000000 is too large" in err and "at most 20,000" in err and "Traceback" not in err
    assert cli_main([*args, "--ci-method", "boot"]) == 2
    assert "did you mean 'bootstrap'" in capsys.readouterr().err
    assert cli_main([*args, "--ci-method", "bootstrap", "--n-boot", "10"]) == 2
    assert "n_boot" in capsys.readouterr().err


def test_interval_parameters_are_declared_from_the_estimator_constants():
    spec = default_registry()["expect_estimated_pairwise_recall_to_be_between"]
    assert spec.param("ci_method").choices == (*est_mod.INTERVAL_METHODS, "recommended")
    assert spec.param("n_boot").default == est_mod.DEFAULT_N_BOOT
    assert spec.model.__fields__["n_boot"].field_info.ge == est_mod.MIN_N_BOOT
    assert spec.model.__fields__["n_boot"].field_info.le == est_mod.MAX_N_BOOT == 20_000
    for name in ("expect_subgroup_disparity_to_be_below", "expect_estimate_change_to_be_below"):
        other = default_registry()[name]
        assert other.param("n_boot").default == est_mod.DEFAULT_N_BOOT
        assert other.model.__fields__["n_boot"].field_info.le == est_mod.MAX_N_BOOT
    assert "bca_mover" in default_registry()["expect_subgroup_disparity_to_be_below"].param("ci_method").choices


SUITE = """
suite: s
defaults:
  prediction_column: pred
  reference_column: ref
expectations:
  - expectation: expect_estimated_pairwise_recall_to_be_between
    min_value: 0.3
    bound: interval
{extra}
"""


def _suite(tmp_path, extra: str):
    path = tmp_path / "suite.yml"
    path.write_text(textwrap.dedent(SUITE).lstrip("\n").format(extra=textwrap.indent(extra, "    ")))
    return path


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        ("ci_method: bootstrp", ["ci_method", "bootstrap"]),
        ("n_boot: 50", ["n_boot", "100"]),
        ("n_boot: true", ["n_boot", "integer"]),
        ("n_boot: 2000.5", ["n_boot", "integer"]),
        ("seed: -3", ["seed", ">= 0"]),
        ("seed: abc", ["seed", "integer"]),
    ],
)
def test_suite_rejects_bad_interval_parameters(tmp_path, extra, words):
    from er_expectations.config import ConfigError

    with pytest.raises(ConfigError) as caught:
        load_suite(_suite(tmp_path, extra))
    text = str(caught.value)
    for w in words:
        assert w in text, text


def test_suite_accepts_interval_parameters(tmp_path):
    suite = load_suite(_suite(tmp_path, "ci_method: bootstrap\nn_boot: 500\nseed: 9"))
    kwargs = suite.expectations[0].kwargs
    assert (kwargs["ci_method"], kwargs["n_boot"], kwargs["seed"]) == ("bootstrap", 500, 9)


# -- Great Expectations ----------------------------------------------------------------


def test_gx_interval_bound_on_an_error_free_sample(context):
    from er_expectations.gx.expectations import ExpectEstimatedPairwiseRecallToBeBetween as E

    common = {"prediction_column": "pred", "reference_column": "ref", "bound": "interval"}
    res = validate_frame(context, error_free_frame(), [
        E(**common, min_value=0.3),  # 0.368 ≥ 0.3: passes
        E(**common, min_value=0.5),  # a point [1, 1] would pass; the binomial interval does not
        E(**common, min_value=0.5, ci_method="bootstrap", n_boot=200, seed=1),
    ], "zero_event")
    ok = [r.success for r in res.results]
    assert ok == [True, False, False]
    for r in res.results:
        details = r.result["details"]
        assert details["ci_method"] == "zero_event"
        assert details["ci_lower"] == pytest.approx(0.05 ** (1 / 3))
        assert "no sampled draw shows an error" in details["note"]
        assert "from the number of draws" in details["observed_text"]
    assert res.results[2].result["details"]["requested_ci_method"] == "bootstrap"
    assert res.results[2].result["details"]["seed"] == 1


def test_gx_bootstrap_interval_equals_the_api(context):
    from er_expectations.gx.expectations import ExpectEstimatedBCubedFToBeBetween as E

    df = random_frame(3)
    api = erx.estimate(df, prediction="pred", reference="ref", draws="draws", metrics=["b_cubed_f"],
                       ci_method="bootstrap", n_boot=400, seed=8)
    res = validate_frame(context, df, [E(prediction_column="pred", reference_column="ref", draws_column="draws",
                                    min_value=0.0, bound="interval", ci_method="bootstrap", n_boot=400, seed=8)],
                    "boot")
    details = res.results[0].result["details"]
    assert details["ci_method"] == "bootstrap" and details["n_boot"] == 400 and details["seed"] == 8
    assert details["ci_lower"] == pytest.approx(api.loc["b_cubed_f", "ci_lower"], rel=1e-12)
    assert details["ci_upper"] == pytest.approx(api.loc["b_cubed_f", "ci_upper"], rel=1e-12)
    assert "bootstrap CI" in details["observed_text"]


@pytest.mark.parametrize("bad", [{"ci_method": "bootsrap"}, {"n_boot": True}, {"n_boot": 10}, {"seed": "x"}])
def test_gx_expectation_rejects_bad_interval_parameters(bad):
    from er_expectations.gx.expectations import ExpectEstimatedPairwiseRecallToBeBetween as E

    with pytest.raises(ValueError) as caught:
        E(prediction_column="pred", reference_column="ref", min_value=0.5, **bad)
    assert next(iter(bad)) in str(caught.value)


# -- coverage by simulation --------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(("q", "k"), [(0.02, 40), (0.08, 40), (0.03, 120)])
def test_zero_event_interval_misses_at_most_alpha_of_samples(q, k):
    """Clusters with an error have f = 0, the others f = g = 1, so θ = 1 − q. Over many
    samples of k draws, the share of samples that are error-free *and* whose binomial
    interval misses θ is at most α (it is (1 − q)^k when q exceeds the bound, else 0);
    the collapsed interval [1, 1] missed in every error-free sample."""
    rng = np.random.default_rng(int(q * 1000) + k)
    n_samples, level = 4000, 0.95
    theta = 1 - q
    degenerate = missed = 0
    for _ in range(n_samples):
        err = rng.random(k) < q
        g = np.ones(k)
        r = ratio_estimate(np.where(err, 0.0, 1.0), g, ci_level=level, bounds=(0.0, 1.0), zero_event=True)
        if r.interval == "zero_event":
            degenerate += 1
            missed += not (r.ci_lower <= theta <= r.ci_upper)
    p_degenerate = (1 - q) ** k
    assert degenerate / n_samples == pytest.approx(p_degenerate, abs=4 * math.sqrt(p_degenerate / n_samples) + 1e-3)
    bound_q = 1 - (1 - level) ** (1 / k)
    expected_miss = p_degenerate if q > bound_q else 0.0
    assert expected_miss <= 1 - level
    assert missed / n_samples == pytest.approx(expected_miss, abs=4 * math.sqrt(0.05 / n_samples))


def test_gx_sentence_names_the_bootstrap():
    from er_expectations.gx.expectations import ExpectEstimatedPairwiseRecallToBeBetween as E

    template, params = E._sentence({"prediction_column": "pred", "reference_column": "ref", "min_value": 0.9,
                                    "bound": "interval", "ci_method": "bootstrap", "n_boot": 500})
    assert "Intervals: $ci_method, $n_boot resamples" in template and params["n_boot"] == 500
    assert params["ci_method"] == "percentile bootstrap"
    template, _ = E._sentence({"prediction_column": "pred", "reference_column": "ref", "min_value": 0.9})
    assert "bootstrap" not in template


def test_gx_benchmark_match_uses_the_zero_event_interval_of_a_zero_estimate(context):
    """Every sampled true cluster is a singleton: the true matching rate is estimated 0 with
    interval [0, q]; a prediction with a small matching rate lies inside it (it used to fail
    with "no confidence interval")."""
    from er_expectations.gx.expectations import ExpectStatisticToMatchBenchmarkEstimate as E

    n = 40
    df = pd.DataFrame({
        "pred": ["m", "m"] + [f"p{i}" for i in range(2, n)],  # 2 of 40 records matched: 0.05
        "ref": [None, None] + [f"t{i}" for i in range(2, n)],  # 38 singleton true clusters sampled
    })
    api = erx.estimate(df, prediction="pred", reference="ref", metrics=["matching_rate"])
    assert api.loc["matching_rate", "estimate"] == 0.0
    assert api.loc["matching_rate", "ci_method"] == "zero_event"
    upper = api.loc["matching_rate", "ci_upper"]
    assert upper == pytest.approx(1 - 0.05 ** (1 / 38))
    res = validate_frame(context, df, [E(statistic="matching_rate", prediction_column="pred", reference_column="ref")],
                    "match_zero")
    details = res.results[0].result["details"]
    assert res.results[0].success is True, details
    assert details["ci_upper"] == pytest.approx(upper) and details["predicted"] == pytest.approx(0.05)
