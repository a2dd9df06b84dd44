"""The blind spot of an estimate (SPEC 6.1; issue 28): what n draws miss with chance ≥ 1/2 and
how far it would move pairwise precision and F, checked by hand, by brute force on a built
population and by simulating the draws."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import er_expectations as erx
from er_expectations.stats.blind_spot import blind_spot, blind_spot_records
from er_expectations.stats.exact import contingency_sums, exact_metrics_from_sums


@settings(max_examples=300, deadline=None)
@given(n=st.integers(1, 5000), units=st.integers(1, 10**7))
def test_k_is_the_most_units_missed_with_chance_at_least_one_half(n, units):
    q = 1.0 / units
    k = blind_spot_records(n, q)
    assert k >= 0
    if k:
        assert (1 - k * q) ** n >= 0.5
    if (k + 1) * q <= 1:
        assert (1 - (k + 1) * q) ** n < 0.5


def test_k_by_hand():
    # (1 − 2^(−1/2))·21 = 6.15; 800 draws over 20,000 records: 17.3
    assert blind_spot_records(2, 1 / 21) == 6
    assert blind_spot_records(800, 1 / 20_000) == 17
    assert blind_spot_records(1, 1 / 21) == 10  # one draw misses 10 of 21 with chance 11/21
    assert blind_spot_records(10**6, 1 / 100) == 0
    with pytest.raises(ValueError, match="draws"):
        blind_spot_records(0, 0.5)


def test_size_proportional_by_hand():
    # 10 singletons, 3 pairs, one cluster of 5: N = 21, PP = 3·2 + 5·4 = 26. Two draws: k = 6;
    # the 6 largest are 5, 2, 2, 2, 1, 1: a stray in each adds 2·13 = 26 pairs, P halves.
    spot = blind_spot(np.array([1, 2, 5]), np.array([10, 3, 1]), design="cluster_size", draws=2,
                      metric="pairwise_precision", estimate=0.8, precision=0.8, below=0.3)
    assert (spot.records, spot.largest, spot.smallest) == (6, 5, 1)
    assert spot.shifted == pytest.approx(0.4) and spot.change == pytest.approx(0.4)
    assert spot.pair_share == pytest.approx(0.5)
    assert spot.miss_chance == pytest.approx((1 - 6 / 21) ** 2)
    assert spot.warning  # 0.4 > 0.3
    assert "Warning" in spot.text("pairwise precision") and "5 to 1 records" in spot.text("pairwise precision")
    # F with recall 0.9: 2PR/(P+R) at P = 0.8 and 0.4, moved onto the F estimate given
    f = blind_spot(np.array([1, 2, 5]), np.array([10, 3, 1]), design="cluster_size", draws=2,
                   metric="pairwise_f", estimate=0.85, precision=0.8, recall=0.9)
    drop = 2 * 0.8 * 0.9 / 1.7 - 2 * 0.4 * 0.9 / 1.3
    assert f.change == pytest.approx(drop) and f.shifted == pytest.approx(0.85 - drop)
    assert not f.warning  # no interval: nothing to compare
    assert f.as_dict()["below"] is None


def test_uniform_by_hand():
    # 14 clusters; two draws: k = ⌊0.2929·14⌋ = 4 largest: 5, 2, 2, 2 hold 20 + 6 = 26 of 26 pairs
    spot = blind_spot(np.array([1, 2, 5]), np.array([10, 3, 1]), design="uniform", draws=2,
                      metric="pairwise_precision", estimate=0.9, precision=0.9, below=0.05)
    assert spot.records == 4 and spot.pair_share == pytest.approx(1.0) and spot.shifted == pytest.approx(0.0)
    # 40 draws: k = ⌊(1 − 2^(−1/40))·14⌋ = 0 → none
    assert blind_spot(np.array([1, 2, 5]), np.array([10, 3, 1]), design="uniform", draws=40,
                      metric="pairwise_precision", estimate=0.9, precision=0.9) is None


@pytest.mark.parametrize("kw", [
    {"design": "expected_errors"}, {"metric": "pairwise_recall"}, {"draws": 0}, {"estimate": math.nan},
])
def test_no_blind_spot_where_it_is_not_defined(kw):
    base = {"design": "cluster_size", "draws": 2, "metric": "pairwise_precision", "estimate": 0.8, "precision": 0.8}
    assert blind_spot(np.array([1, 2, 5]), np.array([10, 3, 1]), **{**base, **kw}) is None
    # a release without a predicted pair has nothing to lower
    assert blind_spot(np.array([1]), np.array([9]), **base) is None


def _population(seed: int = 3):
    """Truth and prediction: 300 entities of 1–12 records, a few merges; 120 extra singletons."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 13, 300)
    truth = np.repeat(np.arange(300), sizes)
    pred = truth.copy()
    merge = rng.choice(300, 40, replace=False)
    pred[np.isin(truth, merge[:20])] = pred[np.isin(truth, merge[:20])] % 7  # a few merges into 0..6
    singles = np.arange(1000, 1120)
    return np.concatenate([truth, singles]), np.concatenate([pred, singles])


def _exact_precision(truth, pred):
    t = pd.factorize(truth)[0]
    p = pd.factorize(pred)[0]
    cells = pd.DataFrame({"t": t, "p": p}).value_counts()
    t_idx = cells.index.get_level_values(0).to_numpy()
    p_idx = cells.index.get_level_values(1).to_numpy()
    values, _ = exact_metrics_from_sums(contingency_sums(t_idx, p_idx, cells.to_numpy()))
    return values


def test_the_shift_is_exact_on_a_population_with_the_strays_put_in():
    truth, pred = _population()
    before = _exact_precision(truth, pred)
    sizes, counts = np.unique(np.unique(pred, return_counts=True)[1], return_counts=True)
    n = 40
    spot = blind_spot(sizes, counts, design="cluster_size", draws=n, metric="pairwise_precision",
                      estimate=before["pairwise_precision"], precision=before["pairwise_precision"])
    # move k of the singletons (alone in truth and prediction) into the k largest predicted clusters
    ids, m = np.unique(pred[truth < 1000], return_counts=True)
    largest = ids[np.argsort(-m, kind="stable")][: spot.records]
    assert spot.records <= 120
    moved = pred.copy()
    moved[np.flatnonzero(truth >= 1000)[: spot.records]] = largest
    after = _exact_precision(truth, moved)
    assert after["pairwise_precision"] == pytest.approx(spot.shifted, rel=1e-12)
    assert after["pairwise_recall"] == pytest.approx(before["pairwise_recall"], rel=1e-12)
    f = blind_spot(sizes, counts, design="cluster_size", draws=n, metric="pairwise_f",
                   estimate=before["pairwise_f"], precision=before["pairwise_precision"],
                   recall=before["pairwise_recall"])
    assert after["pairwise_f"] == pytest.approx(f.shifted, rel=1e-12)


def test_draws_miss_the_strays_with_the_chance_said_and_see_only_half_their_pairs():
    """Size-proportional draws from the population with the strays: the share of samples that
    hold none of them is the chance the page gives, and in those samples the estimate falls on
    average only as far as half of the strays' false pairs would take it, not by the shift."""
    truth, pred = _population()
    sizes, counts = np.unique(np.unique(pred, return_counts=True)[1], return_counts=True)
    base = _exact_precision(truth, pred)["pairwise_precision"]
    n = 40
    spot = blind_spot(sizes, counts, design="cluster_size", draws=n, metric="pairwise_precision",
                      estimate=base, precision=base)
    ids, m = np.unique(pred[truth < 1000], return_counts=True)
    largest = ids[np.argsort(-m, kind="stable")][: spot.records]
    strays = np.flatnonzero(truth >= 1000)[: spot.records]
    moved = pred.copy()
    moved[strays] = largest
    rng = np.random.default_rng(11)
    reps, missed, drops = 1500, 0, []
    for _ in range(reps):
        drawn = truth[rng.integers(0, truth.size, n)]
        if np.isin(truth[strays], drawn).any():
            continue
        missed += 1
        d = pd.Series(drawn).value_counts()
        ref = np.where(np.isin(truth, d.index), truth, None)
        draws = pd.Series(truth).map(d).to_numpy()
        one = {}
        for name, p in (("before", pred), ("after", moved)):
            df = pd.DataFrame({"p": p, "ref": ref, "draws": draws})
            est = erx.estimate(df, prediction="p", reference="ref", draws="draws", metrics=["pairwise_precision"],
                               ci_method="linearization", bias_adjust=False)
            one[name] = est.loc["pairwise_precision", "estimate"]
        drops.append(one["before"] - one["after"])
    share = missed / reps
    se = math.sqrt(spot.miss_chance * (1 - spot.miss_chance) / reps)
    assert spot.miss_chance >= 0.5
    assert abs(share - spot.miss_chance) < 4 * se
    drops = np.array(drops)
    added = spot.pair_share / (1 - spot.pair_share)  # the strays' pairs over the predicted pairs
    half = base * (1 - 1 / (1 + added / 2))  # the drop half of those pairs would make
    mc = 4 * drops.std() / math.sqrt(drops.size)
    assert abs(drops.mean() - half) < mc + 0.002
    assert drops.mean() < spot.change - mc  # the rest of the drop is not seen


def test_the_api_reports_the_blind_spot_and_notes_a_warning():
    truth, pred = _population()
    rng = np.random.default_rng(5)
    drawn = truth[rng.integers(0, truth.size, 60)]
    d = pd.Series(drawn).value_counts()
    df = pd.DataFrame({"p": pred, "ref": np.where(np.isin(truth, d.index), truth, None),
                       "draws": pd.Series(truth).map(d).to_numpy()})
    est = erx.estimate(df, prediction="p", reference="ref", draws="draws",
                       metrics=["pairwise_precision", "pairwise_f", "pairwise_recall"])
    spots = est.attrs["blind_spots"]
    assert set(spots) == {"pairwise_precision", "pairwise_f"}
    sp = spots["pairwise_precision"]
    assert sp["design"] == "cluster_size" and sp["draws"] == 60
    assert sp["estimate"] == pytest.approx(est.loc["pairwise_precision", "estimate"])
    assert sp["below"] == pytest.approx(est.loc["pairwise_precision", "estimate"]
                                        - est.loc["pairwise_precision", "ci_lower"])
    for metric, s in spots.items():
        assert ("blind spot" in est.loc[metric, "note"]) == s["warning"]
    # expected errors and a weights column: the draw chances are not 1/N, no blind spot is claimed
    df["w"] = 1.0
    est = erx.estimate(df, prediction="p", reference="ref", draws="draws", weights={"column": "w"},
                       metrics=["pairwise_precision"])
    assert est.attrs["blind_spots"] == {}


def test_cochrans_rule_by_hand():
    # sizes 1 (×3) and 4 (×1): mean 7/4, deviations −3/4 (×3) and 9/4; m2 = 27/16, m3 = 81/32
    from er_expectations.stats.blind_spot import skewed_sizes

    rule = skewed_sizes(np.array([1, 4]), np.array([3, 1]), design="uniform", draws=50,
                        metric="average_cluster_size")
    g1 = (81 / 32) / (27 / 16) ** 1.5
    assert rule.skewness == pytest.approx(g1) and rule.weighted_by == "records"
    assert rule.needed == math.ceil(28 + 25 * g1 * g1) == 62 and rule.warning
    assert not skewed_sizes(np.array([1, 4]), np.array([3, 1]), design="uniform", draws=62,
                            metric="average_cluster_size").warning
    # pairs: m(m − 1) = 0 (×3) and 12: the skewness of a two-point law with p = 1/4
    pairs = skewed_sizes(np.array([1, 4]), np.array([3, 1]), design="uniform", draws=50, metric="pairwise_recall")
    assert pairs.weighted_by == "pairs" and pairs.skewness == pytest.approx((1 - 2 * 0.25) / math.sqrt(0.25 * 0.75))
    # only the uniform design, only metrics weighted by records or pairs, only varying sizes
    assert skewed_sizes(np.array([1, 4]), np.array([3, 1]), design="cluster_size", draws=5,
                        metric="pairwise_recall") is None
    assert skewed_sizes(np.array([1, 4]), np.array([3, 1]), design="uniform", draws=5, metric="b_cubed_recall") is None
    assert skewed_sizes(np.array([3]), np.array([9]), design="uniform", draws=5, metric="pairwise_recall") is None


def test_cochrans_rule_reaches_the_api_notes_under_the_uniform_design_only():
    truth, pred = _population()
    rng = np.random.default_rng(8)
    ents = np.unique(truth)
    d = pd.Series(ents[rng.integers(0, ents.size, 30)]).value_counts()
    df = pd.DataFrame({"p": pred, "ref": np.where(np.isin(truth, d.index), truth, None),
                       "draws": pd.Series(truth).map(d).to_numpy()})
    est = erx.estimate(df, prediction="p", reference="ref", draws="draws", weights="uniform",
                       metrics=["average_cluster_size", "b_cubed_recall", "pairwise_recall"])
    skew = est.attrs["skewed_sizes"]
    assert set(skew) == {"average_cluster_size", "pairwise_recall"}  # 30 draws, far below the rule
    assert all(s["warning"] and s["draws"] == 30 for s in skew.values())
    assert "Cochran's rule" in est.loc["average_cluster_size", "note"]
    assert "Cochran" not in est.loc["b_cubed_recall", "note"]
    size_prop = erx.estimate(df, prediction="p", reference="ref", draws="draws",
                             metrics=["average_cluster_size"])
    assert size_prop.attrs["skewed_sizes"] == {}


def _group_population():
    """The population of :func:`_population`, its entities in two groups by parity of their id."""
    truth, pred = _population()
    return truth, pred, truth % 2 == 0


def _group_precision(truth, pred, in_group):
    """Brute force: the pairs that start in the group's records (SPEC 8: sums over its entities)."""
    df = pd.DataFrame({"t": truth, "p": pred})
    m = df.groupby("p")["p"].transform("size").to_numpy()
    both = df.groupby(["t", "p"])["p"].transform("size").to_numpy()
    return float((both - 1)[in_group].sum()), float((m - 1)[in_group].sum())


def test_a_groups_shift_is_exact_with_its_own_pairs():
    from er_expectations.stats.blind_spot import blind_spot

    truth, pred, in_group = _group_population()
    tp, pp = _group_precision(truth, pred, in_group)
    sizes, counts = np.unique(np.unique(pred, return_counts=True)[1], return_counts=True)
    spot = blind_spot(sizes, counts, design="cluster_size", draws=40, metric="pairwise_precision",
                      estimate=tp / pp, precision=tp / pp, group_pairs=pp)
    assert spot.group and "this group" in spot.text("pairwise precision")
    # move k of the group's singletons into the k largest predicted clusters
    ids, m = np.unique(pred[truth < 1000], return_counts=True)
    largest = ids[np.argsort(-m, kind="stable")][: spot.records]
    strays = np.flatnonzero((truth >= 1000) & in_group)[: spot.records]
    assert strays.size == spot.records
    moved = pred.copy()
    moved[strays] = largest
    tp2, pp2 = _group_precision(truth, moved, in_group)
    # the strays' own pairs (Σ m_j) are the group's for sure; the pairs that start in the clusters'
    # other records are the group's too when those records are: the drop said is the least one
    added = float(np.sort(np.unique(pred, return_counts=True)[1])[::-1][: spot.records].sum())
    assert tp2 == tp
    assert tp / (pp + 2 * added) - 1e-12 <= tp2 / pp2 <= spot.shifted + 1e-12
    assert spot.shifted == pytest.approx(tp / (pp + added), rel=1e-12)
    # no group blind spot under the uniform design (its entities' chances are not those of records)
    assert blind_spot(sizes, counts, design="uniform", draws=40, metric="pairwise_precision",
                      estimate=tp / pp, precision=tp / pp, group_pairs=pp) is None


def test_a_groups_pairs_are_estimated_without_bias_and_the_api_reports_them():
    from er_expectations.stats.blind_spot import group_blind_spot
    from er_expectations.stats.subgroups import Membership, estimate_groups

    truth, pred, in_group = _group_population()
    tp, pp = _group_precision(truth, pred, in_group)
    ents, first = np.unique(truth, return_index=True)
    hist = np.unique(np.unique(pred, return_counts=True)[1], return_counts=True)
    rng = np.random.default_rng(21)
    got = []
    for _ in range(400):
        d = pd.Series(truth[rng.integers(0, truth.size, 80)]).value_counts()
        df = pd.DataFrame({"p": pred, "ref": np.where(np.isin(truth, d.index), truth, None),
                           "draws": pd.Series(truth).map(d).to_numpy()})
        sample = erx.Release(df, prediction="p")._rel.benchmark_sample(reference="ref", weights="cluster_size",
                                                                        draws="draws", name=None, known=None)
        assert np.array_equal(sample.size_histogram[0], hist[0])
        member = (np.asarray(sample.labels).astype(int) % 2 == 0).astype(float)
        mb = Membership(groups=("even",), pi=member[:, None], known=np.ones(member.size, bool))
        (row,) = estimate_groups(sample, mb, ["pairwise_precision"], min_draws=2)
        spot = group_blind_spot(sample, member, row.estimate, metric="pairwise_precision")
        got.append(spot.pairs)
    got = np.array(got)
    assert abs(got.mean() - pp) < 4 * got.std() / math.sqrt(got.size)


@settings(max_examples=200, deadline=None)
@given(hist=st.dictionaries(st.integers(1, 50), st.integers(1, 30), min_size=1, max_size=8),
       draws=st.integers(1, 400))
def test_the_largest_clusters_are_those_of_the_expanded_histogram(hist, draws):
    from er_expectations.stats.blind_spot import _largest

    sizes = np.array(sorted(hist), dtype=np.int64)
    counts = np.array([hist[s] for s in sorted(hist)], dtype=np.int64)
    everything = np.sort(np.repeat(sizes, counts))[::-1]
    for k in {1, min(draws, everything.size), everything.size}:
        assert np.array_equal(_largest(sizes, counts, k), everything[:k].astype(float))


def test_a_release_of_a_hundred_million_singletons_is_not_expanded():
    sizes, counts = np.array([1, 2, 5000]), np.array([10**8, 10**6, 3])
    spot = blind_spot(sizes, counts, design="cluster_size", draws=400, metric="pairwise_precision",
                      estimate=0.9, precision=0.9)
    n = 10**8 + 2 * 10**6 + 15000
    assert spot.records == blind_spot_records(400, 1 / n) and spot.largest == 5000 and spot.smallest == 2
    pairs = 2 * 10**6 + 3 * 5000 * 4999
    added = 2 * (3 * 5000 + 2 * (spot.records - 3))
    assert spot.shifted == pytest.approx(0.9 * pairs / (pairs + added))
