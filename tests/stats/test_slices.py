"""Slice search with honest inference (SPEC 12.2): the tree against brute force, the split,
a hand-worked estimate and test, planted slices, false discoveries against the naive search,
bad input."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest

from er_expectations.core.errors import InputError
from er_expectations.stats.slices import (
    Condition,
    Features,
    describe,
    grow_tree,
    minimum_draws,
    search_slices,
    split_draws,
)


def _features(**cols) -> Features:
    """Features from arrays: float arrays are numeric, lists of text categorical (None unknown)."""
    names, numeric, values, cats = [], [], [], []
    for name, v in cols.items():
        names.append(name)
        if isinstance(v, np.ndarray) and v.dtype.kind == "f":
            numeric.append(True)
            values.append(v)
            cats.append(())
        else:
            c = tuple(sorted({x for x in v if x is not None}))
            numeric.append(False)
            values.append(np.array([-1 if x is None else c.index(x) for x in v], dtype=np.int64))
            cats.append(c)
    return Features(tuple(names), tuple(numeric), tuple(values), tuple(cats))


# ---------------------------------------------------------------------------------------------
# the tree's first split against an exhaustive search written independently
# ---------------------------------------------------------------------------------------------


def _z(y, g, d, left, k):
    """|m_L − m_R| / SE with the domain variance of SPEC 8, by plain loops."""
    parts = []
    for side in (left, ~left):
        w = sum(d[i] * g[i] for i in range(len(y)) if side[i])
        m = sum(d[i] * g[i] * y[i] for i in range(len(y)) if side[i]) / w
        v = sum(d[i] * (g[i] * (y[i] - m)) ** 2 for i in range(len(y)) if side[i]) / w**2
        parts.append((m, v))
    var = k / (k - 1) * (parts[0][1] + parts[1][1])
    gap = abs(parts[0][0] - parts[1][0])
    return gap / math.sqrt(var) if var > 0 else (math.inf if gap > 0 else 0.0)


def _brute_numeric(x, y, g, d, *, min_share):
    """Every threshold t (an observed value) and both places for the unknown values."""
    total, k = float((d * g).sum()), int(d.sum())
    best = (-1.0, None)
    known = ~np.isnan(x)
    for t in sorted(set(x[known]))[1:]:
        for unknown_left in ((False, True) if (~known).any() else (False,)):
            left = np.where(known, x < t, unknown_left)
            ok = all((d * g)[s].sum() >= min_share * total and d[s].sum() >= 5 for s in (left, ~left))
            if ok:
                z = _z(y, g, d, left, k)
                if z > best[0]:
                    best = (z, (t, unknown_left))
    return best


@pytest.mark.parametrize("seed", range(8))
def test_first_split_is_the_best_threshold(seed):
    rng = np.random.default_rng(seed)
    n = 60
    x = rng.integers(0, 12, n).astype(float)
    x[rng.random(n) < 0.15] = np.nan
    y = (rng.random(n) < np.where(np.nan_to_num(x, nan=3) >= 7, 0.6, 0.15)).astype(float)
    g = rng.uniform(0.2, 1.0, n)
    d = rng.integers(1, 3, n).astype(float)
    want_z, (t, unknown_left) = _brute_numeric(x, y, g, d, min_share=0.05)
    nodes = grow_tree(_features(x=x), y, g, d, max_depth=1, min_share=0.05, split_z=0.0)
    assert len(nodes) == 3
    lt, ge = nodes[1].conditions[0], nodes[2].conditions[0]
    assert (lt.op, ge.op) == ("<", "≥") and lt.threshold == ge.threshold == t
    assert lt.unknown == unknown_left and ge.unknown == (not unknown_left)
    got = _z(y, g, d, lt.mask(_features(x=x)), int(d.sum()))
    assert got == pytest.approx(want_z, rel=1e-9)
    # the nodes partition the clusters, their rates are the weighted means
    assert np.array_equal(nodes[1].mask, ~nodes[2].mask)
    for nd in nodes:
        w = d * g * nd.mask
        assert nd.rate == pytest.approx((w * y).sum() / w.sum())
        assert nd.share == pytest.approx(w.sum() / (d * g).sum())


def test_categorical_split_orders_categories_by_rate():
    """CART's ordering: with rates a < b < c < d the best split is one of {a}, {a,b}, {a,b,c}."""
    rng = np.random.default_rng(3)
    cats = np.array(list("abcd"))[rng.integers(0, 4, 400)]
    rate = {"a": 0.05, "b": 0.1, "c": 0.5, "d": 0.6}
    y = (rng.random(400) < np.array([rate[c] for c in cats])).astype(float)
    g, d = np.ones(400), np.ones(400)
    f = _features(c=list(cats))
    nodes = grow_tree(f, y, g, d, max_depth=1, min_share=0.05)
    best, best_set = -1.0, None
    for subset in ({"a"}, {"b"}, {"c"}, {"d"}, {"a", "b"}, {"a", "c"}, {"a", "d"}):  # every binary partition
        z = _z(y, g, d, np.isin(cats, list(subset)), 400)
        if z > best:
            best, best_set = z, subset
    sides = [set(nodes[1].conditions[0].categories), set(nodes[2].conditions[0].categories)]
    assert best_set in sides or set("abcd") - best_set in sides
    assert {nodes[1].conditions[0].op, nodes[2].conditions[0].op} == {"in", "not in"}


def test_no_split_without_evidence_and_depth_respected():
    n = 200
    rng = np.random.default_rng(0)
    f = _features(x=rng.normal(size=n), c=list(rng.choice(["u", "v"], n)))
    y = np.zeros(n)  # no variation: no split can separate anything
    assert len(grow_tree(f, y, np.ones(n), np.ones(n), max_depth=2, min_share=0.05)) == 1
    y = (f.values[0] > 0).astype(float)
    nodes = grow_tree(f, y, np.ones(n), np.ones(n), max_depth=2, min_share=0.05)
    assert max(nd.depth for nd in nodes) <= 2
    assert nodes[1].conditions[0].text() in ("x < " + nodes[1].conditions[0].text().split("< ")[-1],)


def test_condition_text_and_unknowns():
    f = _features(x=np.array([1.0, np.nan, 5.0]), c=["<b>a</b>", None, "=1+1"])
    ge = Condition("x", "≥", 5.0, unknown=True)
    assert ge.text() == "(x ≥ 5 or unknown)"
    assert ge.mask(f).tolist() == [False, True, True]
    cin = Condition("c", "in", categories=("=1+1",))
    assert cin.mask(f).tolist() == [False, False, True]
    assert Condition("c", "not in", categories=("=1+1",)).mask(f).tolist() == [True, False, False]
    assert describe([ge, cin]) == "(x ≥ 5 or unknown) and c in {=1+1}"  # escaping is the page's job
    assert describe([]) == "all entities"


# ---------------------------------------------------------------------------------------------
# the split of the draws
# ---------------------------------------------------------------------------------------------


def test_split_draws_partitions_and_does_not_depend_on_order():
    rng = np.random.default_rng(1)
    labels = np.array([2**62 + i for i in range(50)], dtype=object)  # ids beyond 2^53
    d = rng.integers(1, 4, 50)
    s, e = split_draws(labels, d, split=0.5, seed=7)
    assert np.array_equal(s + e, d) and s.sum() == round(0.5 * d.sum())
    perm = rng.permutation(50)
    s2, e2 = split_draws(labels[perm], d[perm], split=0.5, seed=7)
    assert np.array_equal(s2, s[perm]) and np.array_equal(e2, e[perm])
    s3, _ = split_draws(labels, d, split=0.5, seed=8)
    assert not np.array_equal(s3, s)


def test_split_is_uniform_over_draws():
    """Each draw is in the search part with probability ``split`` (a cluster drawn 3 times
    sends 3·split draws there on average)."""
    labels = np.array(["a", "b", "c"], dtype=object)
    d = np.array([1, 3, 6])
    mean = np.mean([split_draws(labels, d, split=0.3, seed=s)[0] for s in range(4000)], axis=0)
    assert mean == pytest.approx(0.3 * d, abs=0.03 * d.max())


# ---------------------------------------------------------------------------------------------
# a hand-worked example: estimates, lift and the test on the estimation part
# ---------------------------------------------------------------------------------------------


def _planted(n, *, seed, lift=4.0, base=0.05, k_sizes=(1, 2, 3, 8, 12, 20)):
    rng = np.random.default_rng(seed)
    size = rng.choice(np.array(k_sizes, dtype=float), n)
    colour = list(rng.choice(["red", "blue", "green"], n))
    y = (rng.random(n) < np.where(size >= 8, lift * base, base)).astype(float)
    return size, colour, y


def test_hand_worked_estimates_on_the_estimation_part():
    size, colour, y = _planted(400, seed=2)
    g = 1.0 / size
    d = np.ones(400, dtype=np.int64)
    labels = np.arange(400).astype(object)
    f = _features(size=size, colour=colour)
    res = search_slices(y, g, d, labels, f, min_draws=10, seed=11)
    top = res.slices[0]
    assert top.description == "size ≥ 8"
    # the split is the one of split_draws with the same seed
    s, e = split_draws(labels, d, split=0.5, seed=11)
    assert np.array_equal(res.search_draws, s) and np.array_equal(res.estimate_draws, e)
    # rate, rest and share on the estimation draws, by the formulas of SPEC 6 written out
    de = e.astype(float)
    k = de.sum()
    inside = size >= 8

    def ratio(f_, g_):
        fbar, gbar = (de * f_).sum() / k, (de * g_).sum() / k
        r = fbar / gbar
        adj = (de * (g_ / gbar) * (f_ / fbar - g_ / gbar)).sum() / (k * (k - 1))
        return r * (1 + adj), r

    rate, rate_raw = ratio(y * g * inside, g * inside)
    rest, rest_raw = ratio(y * g * ~inside, g * ~inside)
    share, _ = ratio(g * inside, g)
    assert top.rate.estimate == pytest.approx(rate, rel=1e-12)
    assert top.rest.estimate == pytest.approx(rest, rel=1e-12)
    assert top.share.estimate == pytest.approx(share, rel=1e-12)
    assert top.lift == pytest.approx(rate / rest, rel=1e-12)
    assert top.draws == de[inside].sum() and top.rest_draws == de[~inside].sum()
    # the score-type test: influence values at the pooled rate under H0 (lift 1)
    gs, gr = (de * g * inside).sum(), (de * g * ~inside).sum()
    t0 = (de * g * y).sum() / (gs + gr)
    u = (y - t0) * g * inside / (gs / k) - (y - t0) * g * ~inside / (gr / k)
    u = u - (de * u).sum() / k
    se = math.sqrt((de * u * u).sum() / (k * (k - 1)))
    p = 1 - NormalDist().cdf((rate - rest) / se)
    assert top.p_value == pytest.approx(p, rel=1e-9)
    tested = [x.p_value for x in res.slices if x.status == "ok"]
    m = len(tested)
    assert top.p_adjusted == pytest.approx(min(1.0, m * min(tested)), rel=1e-12)  # Holm's first step
    assert top.significant and top.status == "ok"
    assert res.k_search + res.k_estimate == 400


def test_twenty_entities_by_hand():
    """Ten entities with x = 1 (8 errors), ten with x = 0 (1 error), weights 1, one draw each,
    searched and estimated on the same draws (``naive``: the arithmetic is the same).

    Search: m = 0.8 and 0.1; Σ(y − m)² = 1.6 and 0.9, so Var = 20/19 · (1.6 + 0.9)/10² and
    z = 0.7 / 0.16222 = 4.315 ≥ 1.96: split. Slice x ≥ 1 (share 0.5, not above one half).
    Estimates: the bias adjustment is 0 on both sides (Σ (g/ḡ)(f/f̄ − g/ḡ) = 8·1 − 2·4 = 0 and
    36 − 9·4 = 0), so θ_S = 0.8, θ_rest = 0.1, lift 8, share 0.5. SE of θ_S: 0.8² · (8·0.25 +
    2·4)/380 → 0.129777; interval 0.8 ± 1.96·0.129777 clipped to 1. Test at the null: pooled
    0.45, centred influences 0.4 (×8), −1.6 (×2), −1.8, 0.2 (×9): Σu² = 10, SE = √(10/380),
    z = 0.7/0.162221 = 4.3151. Lift on the log scale: Σu² = 8·0.25 + 2·4 + 324 + 9·4 = 370,
    SE = √(370/380) = 0.98675, interval 8·exp(∓1.95996·0.98675) = 1.1565 to 55.34.
    """
    x = np.array([1.0] * 10 + [0.0] * 10)
    y = np.array([1.0] * 8 + [0.0] * 2 + [1.0] + [0.0] * 9)
    res = search_slices(y, np.ones(20), np.ones(20, dtype=np.int64), np.arange(20).astype(object),
                        _features(x=x), min_draws=5, seed=0, inference="naive")
    (s,) = res.slices
    assert s.description == "x ≥ 1" and s.search_share == 0.5
    assert s.rate.estimate == pytest.approx(0.8, abs=1e-12) and s.rest.estimate == pytest.approx(0.1, abs=1e-12)
    assert s.share.estimate == pytest.approx(0.5, abs=1e-12) and s.lift == pytest.approx(8.0)
    assert s.rate.std_error == pytest.approx(0.129777, abs=1e-6)
    assert (s.rate.ci_lower, s.rate.ci_upper) == (pytest.approx(0.8 - 1.959964 * 0.1297771, abs=1e-6), 1.0)
    assert s.p_value == pytest.approx(1 - NormalDist().cdf(0.7 / math.sqrt(10 / 380)), rel=1e-9)
    assert 0.7 / math.sqrt(10 / 380) == pytest.approx(4.3151, abs=1e-4)
    assert s.lift_ci_lower == pytest.approx(1.1565, abs=1e-3) and s.lift_ci_upper == pytest.approx(55.34, abs=0.01)
    assert s.p_adjusted == s.p_value and s.significant  # naive: no adjustment


def test_rate_threshold_hypothesis():
    size, colour, y = _planted(600, seed=4)
    g = 1.0 / size
    f = _features(size=size, colour=colour)
    labels = np.arange(600).astype(object)
    high = search_slices(y, g, np.ones(600, dtype=np.int64), labels, f, null_lift=None, null_rate=0.9,
                         min_draws=10, seed=1)
    assert high.slices and not any(s.significant for s in high.slices)  # no slice has 90 % errors
    low = search_slices(y, g, np.ones(600, dtype=np.int64), labels, f, null_lift=None, null_rate=0.05,
                        min_draws=10, seed=1)
    top = low.slices[0]  # inside the planted slice (sizes 8, 12, 20 all have 20 % errors)
    assert top.description in ("size ≥ 8", "size ≥ 12") and top.significant and top.status == "ok"
    assert "rate(slice) ≤ 0.05" in low.hypothesis


# ---------------------------------------------------------------------------------------------
# planted slices are found, with their lift
# ---------------------------------------------------------------------------------------------


def test_planted_size_slice_lift():
    lifts = []
    for seed in range(20):
        size, colour, y = _planted(1500, seed=seed, lift=4.0, k_sizes=(1, 2, 3, 4, 8, 12))  # a third at ≥ 8
        res = search_slices(y, np.ones(1500), np.ones(1500, dtype=np.int64), np.arange(1500).astype(object),
                            _features(size=size, colour=colour), seed=seed)
        top = res.slices[0]
        assert top.conditions[0].feature == "size" and top.significant
        if top.description == "size ≥ 8":
            lifts.append(top.lift)
    assert len(lifts) >= 15
    assert np.mean(lifts) == pytest.approx(4.0, rel=0.15)


def test_planted_category_slice():
    rng = np.random.default_rng(9)
    n = 1500
    colour = list(rng.choice(["red", "blue", "green", "grey"], n))
    y = (rng.random(n) < np.where(np.array(colour) == "grey", 0.4, 0.1)).astype(float)
    res = search_slices(y, np.ones(n), np.ones(n, dtype=np.int64), np.arange(n).astype(object),
                        _features(colour=colour, noise=rng.normal(size=n)), seed=0)
    top = res.slices[0]
    assert top.description == "colour in {grey}"
    assert top.significant and top.lift == pytest.approx(4.0, rel=0.3)


# ---------------------------------------------------------------------------------------------
# false discoveries: the honest search keeps them at α, the naive one does not (same seeds)
# ---------------------------------------------------------------------------------------------


def _null_run(seed: int, inference: str) -> bool:
    """Errors independent of every feature; draws from a size-proportional design (each draw a
    new entity of an infinite population: size-biased sizes, weight 1/size)."""
    rng = np.random.default_rng(seed)
    k = 500
    size = 2 + rng.geometric(0.25, k).astype(float)
    f = _features(size=size, year=rng.integers(1990, 2020, k).astype(float),
                  country=list(rng.choice(["A", "B", "C", "D"], k)))
    y = (rng.random(k) < 0.15).astype(float)
    res = search_slices(y, 1.0 / size, np.ones(k, dtype=np.int64), np.arange(k).astype(object), f,
                        seed=seed, inference=inference)
    return bool(res.significant)


def test_honest_search_controls_false_discoveries_where_naive_does_not():
    seeds = range(200)
    honest = np.mean([_null_run(s, "split") for s in seeds])
    naive = np.mean([_null_run(s, "naive") for s in seeds])
    # 200 runs: a share of 0.05 has standard deviation 0.015
    assert honest <= 0.08
    assert naive >= 0.20


# ---------------------------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------------------------


def _args(n=200):
    rng = np.random.default_rng(0)
    return ((rng.random(n) < 0.2).astype(float), np.ones(n), np.ones(n, dtype=np.int64),
            np.arange(n).astype(object), _features(x=rng.normal(size=n)))


def test_too_few_draws_names_the_minimum():
    y, g, d, labels, f = _args(100)
    need = minimum_draws(30, 0.5)
    assert need == 120
    with pytest.raises(InputError, match=r"100 draws and slice search needs at least 120.*min_draws=30"):
        search_slices(y, g, d, labels, f)
    search_slices(y, g, d, labels, f, min_draws=20)  # 80 needed


@pytest.mark.parametrize(("kw", "match"), [
    ({"metric": "EX"}, "not a cluster-wise error metric"),
    ({"max_depth": 0}, "max_depth=0"),
    ({"max_depth": True}, "max_depth=True"),
    ({"min_share": 0.6}, "min_share=0.6"),
    ({"alpha": 1.5}, "alpha=1.5"),
    ({"split": 1}, "split=1"),
    ({"per": "person"}, "per='person'"),
    ({"null_lift": None}, "exactly one of null_lift"),
    ({"null_rate": 0.2}, "exactly one of null_lift"),
    ({"max_slices": 0}, "max_slices=0"),
    ({"min_draws": 1}, "min_draws=1"),
    ({"inference": "peek"}, "inference='peek'"),
])
def test_bad_options(kw, match):
    y, g, d, labels, f = _args()
    with pytest.raises(InputError, match=match):
        search_slices(y, g, d, labels, f, **kw)


def test_bad_arrays():
    y, g, d, labels, f = _args()
    with pytest.raises(InputError, match="one value per sampled cluster"):
        search_slices(y[:-1], g, d, labels, f)
    y2 = y.copy()
    y2[0] = np.nan
    with pytest.raises(InputError, match="finite"):
        search_slices(y2, g, d, labels, f)
    with pytest.raises(InputError, match="no feature"):
        search_slices(y, g, d, labels, Features((), (), (), ()))
    with pytest.raises(InputError, match="codes into its categories"):
        Features(("c",), (False,), (np.array([0, 3]),), (("a",),))
