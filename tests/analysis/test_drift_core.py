"""Drift between releases without GX (SPEC 10): bad input first, then brute force, then simulation.

* the release diff against a brute-force classification on hypothesis clusterings;
* the fixed-subset statistic and the agreement against direct pandas / pair counting;
* the paired standard error of an estimate change against a hand-worked example and against
  a simulation (repeated benchmark samples of one population with two known clusterings):
  its mean is close to the SD of the changes, and √(se₁² + se₂²) is much wider.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.paths import PV_DATA, REPO
from support.reference_impl import brute_force_diff

import er_expectations as erx
from er_expectations.analysis.drift import estimate_change, release_agreement, statistic_change
from er_expectations.core.errors import InputError
from er_expectations.stats.combine import difference
from er_expectations.stats.estimator import ratio_estimate


def two_releases() -> pd.DataFrame:
    """Eight records; 'old' has clusters {1,2,3} {4,5} {6} {7}; record 8 only in 'new'.

    'new': {1,2} {3} (a split of old's first cluster), {4,5,6} (old {4,5} merged with {6}),
    {7} unchanged, {8} new. Record 6 is absent from nothing; record 8 is absent from old.
    """
    return pd.DataFrame({
        "rid": [1, 2, 3, 4, 5, 6, 7, 8],
        "old": ["a", "a", "a", "b", "b", "c", "d", None],
        "new": ["x", "x", "y", "z", "z", "z", "w", "v"],
        "name": ["Ann", "Ann", "Ann", "Bo", "Bob", "Cy", "Di", "Ed"],
        "truth": ["A", "A", "A", "B", "B", "C", "D", None],
    })


# -- bad input first ---------------------------------------------------------------------------


@pytest.mark.parametrize("call, words", [
    (lambda df: statistic_change(df, "new", "new"), ["same column"]),
    (lambda df: statistic_change(df, "new", "old", "average_size"), ["statistic", "average_cluster_size"]),
    (lambda df: statistic_change(df, "new", "old", "hill_number"), ["needs its order q"]),
    (lambda df: statistic_change(df, "new", "old", "homonymy_rate"), ["needs a name column"]),
    (lambda df: statistic_change(df, "new", "olde"), ["baseline='olde'", "Did you mean 'old'"]),
    (lambda df: statistic_change(df, "new", "old", record_id="nope"), ["record_id", "nope"]),
    (lambda df: erx.diff_releases(df, before="old", after="new", record_id="rid", examples=-1), ["examples"]),
    (lambda df: erx.diff_releases(df, before="old", after="new", record_id="rid", seed=True), ["seed"]),
    (lambda df: erx.diff_releases(df, before="old", after="new", record_id="rid", name="nom"), ["nom", "name"]),
    (lambda df: estimate_change(df, prediction="new", baseline="old", metric="pairwise_precison", reference="truth"),
     ["pairwise_precison", "did you mean 'pairwise_precision'"]),
    (lambda df: estimate_change(df, prediction="new", baseline="old", metric="pairwise_recall", reference="truth", ci_level=95),
     ["ci_level", "0.95"]),
])
def test_bad_input_is_an_input_error_naming_the_parameter(call, words):
    with pytest.raises(InputError) as info:
        call(two_releases())
    for word in words:
        assert word in str(info.value)


def test_duplicated_record_ids_are_refused():
    df = two_releases()
    df.loc[7, "rid"] = 1
    with pytest.raises(InputError, match="duplicated"):
        erx.diff_releases(df, before="old", after="new", record_id="rid")


def test_no_common_record_gives_nan_not_zero():
    df = pd.DataFrame({"a": ["x", None], "b": [None, "y"]})
    res = statistic_change(df, "a", "b")
    assert res.common_records == 0 and math.isnan(res.current) and math.isnan(res.relative_change)
    agreement = release_agreement(df, "a", "b")
    assert agreement.isna().all() and agreement.attrs["common_records"] == 0


# -- hand-worked example -------------------------------------------------------------------------


def test_hand_worked_two_releases():
    df = two_releases()
    res = statistic_change(df, "new", "old")
    # common records 1..7: old has 4 clusters (7/4), new has {1,2} {3} {4,5,6} {7} = 4 clusters
    assert res.common_records == 7 and res.baseline == pytest.approx(7 / 4) and res.current == pytest.approx(7 / 4)
    assert res.current_records == 8 and res.baseline_records == 7
    n = statistic_change(df, "new", "old", "n_clusters")
    assert (n.baseline, n.current) == (4, 4)

    diff = erx.diff_releases(df, before="old", after="new", record_id="rid", name="name", examples=3)
    assert diff.clusters == {"unchanged": 1, "merged": 1, "split": 2, "both": 0}
    assert diff.records == {"unchanged": 1, "merged": 3, "split": 3, "both": 0}
    assert diff.records_moved == 6 and diff.before_clusters_split == 1 and diff.common_records == 7
    merged = next(e for e in diff.examples if e.kind == "merged")
    assert merged.cluster == "z" and merged.size == 3
    assert sorted(merged.sources) == [("b", 2, 2), ("c", 1, 1)]
    assert merged.names == ["Bo", "Bob", "Cy"]  # most frequent first, ties by name
    frame = diff.to_frame()
    assert list(frame.index) == ["unchanged", "merged", "split", "both"] and frame["records"].sum() == 7

    # agreement: new taking old as the truth on records 1..7. Pairs: old has 3 + 1 = 4 true pairs;
    # new has {1,2} and {4,5},{4,6},{5,6}: 4 predicted pairs, of which {1,2} and {4,5} are true.
    agreement = release_agreement(df, "new", "old")
    assert agreement["pairwise_precision"] == pytest.approx(2 / 4)
    assert agreement["pairwise_recall"] == pytest.approx(2 / 4)
    assert agreement["cluster_precision"] == pytest.approx(1 / 4)  # only {7} is exactly right
    assert agreement.attrs["common_records"] == 7


def test_diff_examples_are_seeded_and_bounded():
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"before": rng.integers(0, 60, 500), "after": rng.integers(0, 60, 500)})
    one = erx.diff_releases(df, before="before", after="after", record_id=None, examples=2, seed=7)
    again = erx.diff_releases(df, before="before", after="after", record_id=None, examples=2, seed=7)
    assert one.to_dict() == again.to_dict()
    assert all(sum(e.kind == k for e in one.examples) <= 2 for k in ("merged", "split", "both"))


def test_paired_se_hand_worked():
    """Three clusters drawn once; the paired SE is √(Σ(u−v)²/(k(k−1))) from the two ratios."""
    f_t, g_t = np.array([1.0, 2.0, 0.0]), np.array([1.0, 2.0, 1.0])
    f_b, g_b = np.array([1.0, 1.0, 0.0]), np.array([1.0, 2.0, 1.0])
    a, b = ratio_estimate(f_t, g_t), ratio_estimate(f_b, g_b)
    r_t, r_b = 3 / 4, 2 / 4  # plain ratios
    u = (f_t - r_t * g_t) / (4 / 3)
    v = (f_b - r_b * g_b) / (4 / 3)
    expected = math.sqrt(((u - v) ** 2).sum() / (3 * 2))
    assert difference(a, b, ci_level=0.95).std_error == pytest.approx(expected)


# -- brute force on hypothesis clusterings ------------------------------------------------------


labels = st.one_of(st.none(), st.integers(0, 6))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(labels, labels), min_size=1, max_size=40))
def test_diff_equals_brute_force(pairs):
    before = [b for b, _ in pairs]
    after = [a for _, a in pairs]
    df = pd.DataFrame({"before": pd.array(before, dtype="Int64"), "after": pd.array(after, dtype="Int64")})
    clusters, records, moved = brute_force_diff(before, after)
    diff = erx.diff_releases(df, before="before", after="after", record_id=None, examples=3, seed=1)
    assert diff.clusters == clusters
    assert diff.records == records
    assert diff.records_moved == moved
    assert diff.common_records == sum(records.values())
    for example in diff.examples:  # the sources of an example are the before clusters it takes records from
        kept = [i for i in range(len(pairs)) if after[i] is not None and before[i] is not None
                and str(after[i]) == example.cluster]
        assert sum(k for _, k, _ in example.sources) == len(kept) == example.size


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(labels, labels, st.sampled_from(["a", "b", None])), min_size=1, max_size=40))
def test_fixed_subset_statistics_equal_direct_pandas(rows):
    df = pd.DataFrame(rows, columns=["base", "cur", "name"]).astype({"base": "Int64", "cur": "Int64"})
    common = df["base"].notna() & df["cur"].notna()
    part = df[common]
    res = statistic_change(df, "cur", "base")
    agreement = release_agreement(df, "cur", "base")
    assert res.common_records == int(common.sum())
    if not common.any():
        assert math.isnan(res.current) and agreement.isna().all()
        return
    assert res.current == pytest.approx(len(part) / part["cur"].nunique())
    assert res.baseline == pytest.approx(len(part) / part["base"].nunique())
    matching = statistic_change(df, "cur", "base", "matching_rate")
    sizes = part.groupby("cur")["cur"].transform("size")
    assert matching.current == pytest.approx(float((sizes > 1).mean()))
    named = part.dropna(subset=["name"])
    if len(named):
        variation = statistic_change(df, "cur", "base", "name_variation_rate", name="name")
        per_cluster = named.groupby("cur")["name"].nunique()
        assert variation.current == pytest.approx(float((per_cluster >= 2).mean()))
    else:  # as summarize: no name on the records compared is an error, not a rate of 0
        with pytest.raises(InputError, match="null on every record"):
            statistic_change(df, "cur", "base", "name_variation_rate", name="name")
    # agreement by pair counting: the baseline is the truth on the common records
    idx = list(part.index)
    pairs = list(itertools.combinations(idx, 2))
    same_cur = {p for p in pairs if part.at[p[0], "cur"] == part.at[p[1], "cur"]}
    same_base = {p for p in pairs if part.at[p[0], "base"] == part.at[p[1], "base"]}
    if same_cur:
        assert agreement["pairwise_precision"] == pytest.approx(len(same_cur & same_base) / len(same_cur))
    if same_base:
        assert agreement["pairwise_recall"] == pytest.approx(len(same_cur & same_base) / len(same_base))


# -- estimate change ---------------------------------------------------------------------------


def test_estimate_change_uses_each_release_estimate_on_shared_draws():
    """When every benchmark cluster is in both releases, each side is erx.estimate of that release."""
    rng = np.random.default_rng(5)
    truth = np.repeat(np.arange(60), rng.integers(1, 7, 60))
    n = truth.size
    old = truth.copy()
    new = np.where(rng.random(n) < 0.15, 1000 + np.arange(n), truth)  # split off 15 % of records
    df = pd.DataFrame({"old": old, "new": new, "truth": truth})
    res = estimate_change(df, prediction="new", baseline="old", metric="pairwise_recall", reference="truth")
    for column, est in (("new", res.current), ("old", res.baseline)):
        direct = erx.estimate(df, prediction=column, reference="truth", metrics="pairwise_recall").iloc[0]
        assert est.estimate == pytest.approx(direct.estimate)
        assert est.std_error == pytest.approx(direct.std_error) or (math.isnan(est.std_error)
                                                                   and math.isnan(direct.std_error))
    assert res.change.estimate == pytest.approx(res.current.estimate - res.baseline.estimate)
    assert res.only_current == res.only_baseline == 0


def test_estimate_change_aligns_clusters_absent_from_one_release():
    """A benchmark cluster absent from the baseline contributes zeros there, on the same row."""
    df = pd.DataFrame({
        "truth": ["A", "A", "B", "B", "C", "C", "D"],
        "old": ["a", "a", "b", "b", None, None, "d"],
        "new": ["a", "x", "b", "b", "c", "c", "d"],
    })
    res = estimate_change(df, prediction="new", baseline="old", metric="pairwise_recall", reference="truth", weights="uniform")
    assert res.only_current == 1 and res.only_baseline == 0 and res.clusters == 4 and res.draws == 4
    # by hand (uniform weights, f = |c|(|c|-1-UCE), g = |c|(|c|-1)): new: A 0/2, B 2/2, C 2/2, D 0/0
    # old: A 2/2, B 2/2, C absent (0/0), D 0/0
    assert res.current.influence.shape == res.baseline.influence.shape == (4,)
    f_new, g_new = np.array([0, 2, 2, 0.0]), np.array([2, 2, 2, 0.0])
    f_old, g_old = np.array([2, 2, 0, 0.0]), np.array([2, 2, 0, 0.0])
    assert res.current.estimate == pytest.approx(ratio_estimate(f_new, g_new).estimate)
    assert res.baseline.estimate == pytest.approx(ratio_estimate(f_old, g_old).estimate)
    expected = difference(ratio_estimate(f_new, g_new), ratio_estimate(f_old, g_old))
    assert res.change.std_error == pytest.approx(expected.std_error)


def _population(rng: np.random.Generator) -> pd.DataFrame:
    """Two releases of one population of 500 entities: 'a' splits and merges a few, 'b' is 'a'
    with about 2 % of the entities changed again (half of their records split off)."""
    sizes = rng.integers(1, 9, 500)
    truth = np.repeat(np.arange(500), sizes)
    n = truth.size
    a = truth.copy()
    split = rng.random(n) < 0.06
    a[split] = 10_000 + np.arange(int(split.sum()))
    merge = rng.random(500) < 0.05
    a = np.where(merge[truth], truth // 2, a)  # entities 2j and 2j+1 merged when flagged
    b = a.copy()
    changed = rng.random(500) < 0.02
    extra = changed[truth] & (rng.random(n) < 0.5)
    b[extra] = 20_000 + np.arange(int(extra.sum()))
    return pd.DataFrame({"rid": np.arange(n), "a": a, "b": b, "entity": truth})


def test_paired_standard_error_matches_a_simulation():
    """Repeated size-proportional benchmarks (k = 150 draws) from one population whose two releases
    agree on about 98 % of the entities.

    The paired variance estimate is (nearly) unbiased for the variance of the change: √(mean SE²)
    is within 15 % of the SD of the 300 estimated changes (the mean SE itself sits lower: the
    changes are rare events, so the SE is skewed). √(se₁²+se₂²) ignores the pairing and is more
    than twice as wide. Seen on this seed: SD 0.0057, √(mean SE²) about the same, naive 0.021.
    """
    rng = np.random.default_rng(20261126)
    pop = _population(rng)
    exact_a = erx.exact_metrics(pop, prediction="a", reference="entity")["pairwise_recall"]
    exact_b = erx.exact_metrics(pop, prediction="b", reference="entity")["pairwise_recall"]
    changes, paired, naive = [], [], []
    for _ in range(300):
        drawn = pop["entity"].to_numpy()[rng.integers(0, len(pop), 150)]  # records uniformly: p_c ∝ |c|
        ids, counts = np.unique(drawn, return_counts=True)
        draws = pd.Series(counts, index=ids)
        df = pop.assign(truth=pop["entity"].where(pop["entity"].isin(ids)),
                        draws=pop["entity"].map(draws))
        res = estimate_change(df, prediction="b", baseline="a", metric="pairwise_recall", reference="truth", draws="draws")
        changes.append(res.change.estimate)
        paired.append(res.change.std_error)
        naive.append(res.naive_std_error)
    sd = float(np.std(changes, ddof=1))
    rms = float(np.sqrt(np.mean(np.square(paired))))
    assert abs(np.mean(changes) - (exact_b - exact_a)) < 0.25 * sd
    assert 0.85 < rms / sd < 1.15, (rms, sd)
    assert np.mean(naive) > 2.0 * sd, (np.mean(naive), sd)
    assert np.mean(naive) > 2.0 * rms


# -- the command line ------------------------------------------------------------------------------


def test_cli_diff_from_a_table_and_from_a_checkpoint(tmp_path, capsys):

    from er_expectations.cli.main import main

    table = tmp_path / "releases.csv"
    two_releases().to_csv(table, index=False)
    assert main(["diff", str(table), "--before", "old", "--after", "new", "--record-id", "rid",
                 "--name", "name", "--format", "json"]) == 0
    out = capsys.readouterr().out
    import json

    data = json.loads(out)
    assert data["clusters"] == {"unchanged": 1, "merged": 1, "split": 2, "both": 0} and data["records_moved"] == 6
    assert main(["diff", str(table), "--before", "olde", "--after", "new"]) == 2
    assert "did you mean 'old'" in capsys.readouterr().err
    repo = REPO
    code = main(["diff", "--checkpoint", str(repo / "checkpoints" / "patentsview.yml"), "--before", "2020-06-30",
                 "--after", "2020-09-29", "--examples", "1"])
    text = capsys.readouterr().out
    assert code == 0 and "Clusters of 2020-09-29 against 2020-06-30" in text
    assert ("11,596 unchanged, 124 merged, 5,884 pieces of split clusters, 394 both merged and split (2,110 of "
            "the 14,363 clusters of 2020-06-30 were split)") in text
    assert main(["diff", "--checkpoint", str(repo / "checkpoints" / "patentsview.yml"), "--before", "2020-06-31",
                 "--after", "2020-09-29"]) == 2
    assert "--before '2020-06-31' (did you mean" in capsys.readouterr().err
    assert main(["diff", "--before", "a", "--after", "b"]) == 2
    assert "--checkpoint" in capsys.readouterr().err


def test_patentsview_diff_counts_match_brute_force():
    """The 2020-06-30 → 2020-09-29 diff on the real releases, against the brute-force classifier."""

    path = PV_DATA / "predictions.parquet"
    pred = pd.read_parquet(path, columns=["mention_id", "inventor_id_20200630", "inventor_id_20200929"])
    before = [None if pd.isna(v) else v for v in pred["inventor_id_20200630"]]
    after = [None if pd.isna(v) else v for v in pred["inventor_id_20200929"]]
    clusters, records, moved = brute_force_diff(before, after)
    diff = erx.diff_releases(pred, before="inventor_id_20200630", after="inventor_id_20200929", record_id="mention_id")
    assert (diff.clusters, diff.records, diff.records_moved) == (clusters, records, moved)
