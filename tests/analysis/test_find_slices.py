"""``erx.find_slices`` (SPEC 12.2): cluster features against a brute-force recomputation, planted
slices found end to end, notes and errors for bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import er_expectations as erx
from er_expectations.analysis.slices import SLICE_COLUMNS, cluster_features
from er_expectations.core.errors import InputError
from er_expectations.engines.pandas.release import PandasRelease


def _release(n_clusters: int, *, seed: int, rate=lambda size, country: 0.1, draws: int = 800,
             big_ids: bool = False) -> pd.DataFrame:
    """A release whose erroneous entities have one record split off; a size-proportional sample
    of ``draws`` draws (column ``d``), entity features country and year, names and blocks."""
    rng = np.random.default_rng(seed)
    sizes = 1 + rng.geometric(0.2, n_clusters)
    country = rng.choice(np.array(["US", "JP", "DE", "FR"]), n_clusters)
    year = rng.integers(1990, 2020, n_clusters).astype(float)
    err = rng.random(n_clusters) < np.array([rate(s, c) for s, c in zip(sizes, country, strict=True)])
    true = np.repeat(np.arange(n_clusters), sizes)
    first = np.r_[0, np.cumsum(sizes)[:-1]]
    pred = true.copy()
    pred[first[err]] = n_clusters + np.arange(int(err.sum()))
    picked = true[rng.integers(0, true.size, draws)]
    labels, counts = np.unique(picked, return_counts=True)
    d = np.zeros(n_clusters)
    d[labels] = counts
    offset = 2**62 + 1 if big_ids else 0
    bench = pd.array(np.where(d[true] > 0, true + offset, 0), dtype="UInt64" if big_ids else "Int64")
    bench[d[true] == 0] = pd.NA
    df = pd.DataFrame({"rid": np.arange(true.size), "pred": pred, "bench": bench,
                       "d": np.where(d[true] > 0, d[true], np.nan), "country": country[true], "year": year[true],
                       "name": [f"n{t}{'x' * int(rng.random() < 0.3)}" for t in true],
                       "block": rng.integers(0, 40, n_clusters)[true]})
    return df


# ---------------------------------------------------------------------------------------------
# features per cluster, against pandas groupby
# ---------------------------------------------------------------------------------------------


def test_cluster_features_match_groupby():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({
        "pred": [1, 1, 2, 3, 3, 3, 4, 5, 6, None],
        "bench": ["a", "a", "b", "c", "c", "c", "d", None, "e", "a"],
        "num": [1.0, 3.0, None, 2.0, 4.0, 6.0, None, 9.0, 5.0, 100.0],
        "cat": ["x", "y", "z", "y", "y", None, None, "q", "z", "x"],
        "flag": [True, True, False, False, False, True, True, False, True, True],
        "name": ["Ann", "Anne", "Bob", "Cy", "Cy", None, "Dee", "Eve", "Fay", "Zed"],
        "block": ["k1", "k1", "k2", "k1", "k1", "k3", None, "k2", "k2", "k1"],
    })
    rel = PandasRelease(df, prediction="pred")
    sample = rel.benchmark_sample(reference="bench")
    feats, notes = cluster_features(df, sample, prediction="pred", reference="bench",
                                    features=["num", "cat", "flag"], name="name", block="block")
    labels = list(sample.labels)
    in_rel = df[df["pred"].notna() & df["bench"].notna()]  # the row with a null prediction is out
    g = in_rel.groupby("bench")
    num = feats.column("num")[1]
    want = g["num"].mean()
    for i, lab in enumerate(labels):
        if np.isnan(want[lab]):
            assert np.isnan(num[i])
        else:
            assert num[i] == pytest.approx(want[lab])
    _, codes, cats = feats.column("cat")
    got = {lab: (cats[c] if c >= 0 else None) for lab, c in zip(labels, codes, strict=True)}
    assert got == {"a": "x", "b": "z", "c": "y", "d": None, "e": "z"}  # a: x/y tie → first in text order
    _, codes, cats = feats.column("flag")
    assert {lab: cats[c] for lab, c in zip(labels, codes, strict=True)}["c"] == "False"
    assert feats.column("cluster_size")[1].tolist() == [2, 1, 3, 1, 1]
    assert feats.column("name_spellings")[1].tolist() == [2, 1, 1, 1, 1]
    assert feats.column("name_length")[1].tolist() == pytest.approx([3.5, 3, 2, 3, 3])
    # block sizes among the release's records: k1 4, k2 3, k3 1; d has no block → unknown
    assert feats.column("block_size")[1][:3].tolist() == pytest.approx([4, 3, 3])
    assert np.isnan(feats.column("block_size")[1][3])
    assert any("'cat': 1 of 5" in n for n in notes)
    assert any("'num': 2 of 5" in n for n in notes)  # b and d have no number
    del rng


def test_constant_feature_is_dropped_with_a_note():
    df = _release(300, seed=1)
    df["same"] = "everywhere"
    df["one"] = 7.0
    out = erx.find_slices(df, prediction="pred", reference="bench", draws="d", features=["same", "one", "country"], seed=0)
    notes = " ".join(out.attrs["notes"])
    assert "'same' dropped: constant over the sampled clusters (the value 'everywhere')" in notes
    assert "'one' dropped: constant over the sampled clusters (the value 7)" in notes
    assert out.attrs["features"] == ["country", "cluster_size"]
    assert list(out.columns) == list(SLICE_COLUMNS)


def test_a_feature_without_values_is_dropped_with_a_note():
    df = _release(300, seed=1)
    df["empty"] = np.nan
    df["name"] = None
    out = erx.find_slices(df, prediction="pred", reference="bench", draws="d", features=["empty", "country"], name="name", seed=0)
    notes = out.attrs["notes"]
    assert "feature 'empty' dropped: no sampled cluster has a value (null on every record)" in notes
    assert "feature 'name_length' dropped: no sampled cluster has a value (null on every record)" in notes
    assert "feature 'name_spellings' dropped: constant over the sampled clusters (the value 0)" in notes


def test_only_constant_features_is_an_error():
    df = _release(300, seed=1)
    df["same"] = 1.0
    with pytest.raises(InputError, match="no feature left to search on.*'same' dropped"):
        erx.find_slices(df, prediction="pred", reference="bench", draws="d", features=["same"], derived=False)


# ---------------------------------------------------------------------------------------------
# planted slices, end to end
# ---------------------------------------------------------------------------------------------


def test_planted_country_slice_is_found():
    lifts = []
    for seed in range(6):
        df = _release(4000, seed=seed, rate=lambda s, c: 0.4 if c == "JP" else 0.08, draws=1200)
        out = erx.find_slices(df, prediction="pred", reference="bench", record_id="rid", draws="d", features=["country", "year"],
                              seed=seed)
        top = out.iloc[0]
        assert top["slice"] == "country in {JP}", out["slice"].tolist()
        assert top["significant"] and top["p_adjusted"] < 0.001
        assert top["rate_ci_lower"] < top["rate"] < top["rate_ci_upper"]
        assert top["share"] == pytest.approx(0.25, abs=0.08)
        lifts.append(top["lift"])
    assert np.mean(lifts) == pytest.approx(5.0, rel=0.25)


def test_planted_size_slice_is_found_with_big_ids():
    df = _release(4000, seed=3, rate=lambda s, c: 0.45 if s >= 8 else 0.08, draws=1500, big_ids=True)
    out = erx.find_slices(df, prediction="pred", reference="bench", draws="d", features=["country"], seed=5)
    top = out.iloc[0]
    assert top["slice"].startswith("cluster_size ≥ "), out["slice"].tolist()
    assert 6 <= float(top["slice"].split("≥ ")[1].split()[0]) <= 10
    assert top["significant"] and top["lift"] > 3


def test_no_slice_when_errors_are_flat():
    df = _release(3000, seed=8, draws=800)
    out = erx.find_slices(df, prediction="pred", reference="bench", draws="d", features=["country", "year"], name="name", block="block",
                          seed=2)
    assert not out["significant"].any()
    assert out.attrs["k_search"] + out.attrs["k_estimate"] == 800


def test_per_record_and_other_metrics():
    df = _release(3000, seed=4, rate=lambda s, c: 0.5 if c == "DE" else 0.05, draws=1000)
    for metric in ("EI", "RUCE", "uce"):
        out = erx.find_slices(df, prediction="pred", reference="bench", draws="d", features=["country"], metric=metric, per="record",
                              seed=1)
        assert out.attrs["metric"] == metric.upper() and out.attrs["per"] == "record"
        assert out.iloc[0]["slice"] == "country in {DE}" and out.iloc[0]["significant"]
    # SDE is signed: these errors split entities (SDE < 0), so no slice has a *high* SDE
    out = erx.find_slices(df, prediction="pred", reference="bench", draws="d", features=["country"], metric="SDE", seed=1)
    assert not out["significant"].any()


def test_max_rate_and_max_lift_change_the_hypothesis():
    df = _release(3000, seed=4, rate=lambda s, c: 0.5 if c == "DE" else 0.05, draws=1000)
    hi = erx.find_slices(df, prediction="pred", reference="bench", draws="d", features=["country"], max_lift=50, seed=1)
    assert not hi["significant"].any() and "50 × rate(rest)" in hi.attrs["hypothesis"]
    rate = erx.find_slices(df, prediction="pred", reference="bench", draws="d", features=["country"], max_rate=0.2, seed=1)
    assert rate.iloc[0]["significant"] and "rate(slice) ≤ 0.2" in rate.attrs["hypothesis"]


def test_imputed_ethnicity_is_a_cluster_feature_only():
    df = _release(400, seed=2, draws=300)
    surnames = np.array(["Nguyen", "Smith", "Garcia", "Kim", "Johnson", "Lopez"])
    df["surname"] = surnames[df["pred"].to_numpy() % 6]
    out = erx.find_slices(df, prediction="pred", reference="bench", draws="d", surname="surname", seed=0, min_draws=20)
    assert "imputed_ethnicity" in out.attrs["features"]
    assert list(out.columns) == list(SLICE_COLUMNS)  # aggregates only: no per-person column


# ---------------------------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------------------------


def test_unknown_column_says_which():
    df = _release(300, seed=1)
    with pytest.raises(InputError, match=r"features\[1\]='contry': no such column.*country"):
        erx.find_slices(df, prediction="pred", reference="bench", draws="d", features=["year", "contry"])
    with pytest.raises(InputError, match=r"block='blok'"):
        erx.find_slices(df, prediction="pred", reference="bench", draws="d", block="blok")


def test_too_few_draws_gives_the_minimum():
    df = _release(300, seed=1, draws=90)
    with pytest.raises(InputError, match=r"90 draws and slice search needs at least 120"):
        erx.find_slices(df, prediction="pred", reference="bench", draws="d", features=["country"])


@pytest.mark.parametrize(("kw", "match"), [
    ({"features": "country"}, "give a list of column names"),
    ({"features": ["pred"]}, "is the prediction column"),
    ({"features": ["bench"]}, "is the reference column"),
    ({"features": ["when"]}, "dates or durations"),
    ({"features": ["rid"]}, "distinct values over the sampled clusters"),
    ({"features": ["cluster_size"]}, "name of a derived feature"),
    ({"derived": "yes"}, "derived='yes'"),
    ({"metric": "F1"}, "not a cluster-wise error metric"),
    ({"per": "people"}, "per='people'"),
    ({"max_lift": 2, "max_rate": 0.1}, "not both"),
    ({"features": ["inf"]}, "infinite"),
    # hostile round 3 (issue 29 item 9): a negative limit made every slice "above" it
    ({"max_rate": -0.1}, r"max_rate=-0.1: EI is never negative.*0 or more"),
    ({"max_rate": -1, "metric": "OCE"}, r"max_rate=-1: OCE is never negative"),
    ({"max_rate": 1.5}, r"max_rate=1.5: EI is a share between 0 and 1"),
    ({"max_rate": float("nan")}, r"max_rate=nan: give a finite rate"),
    ({"max_rate": "0.1"}, r"max_rate='0.1': give a finite rate"),
])
def test_bad_arguments(kw, match):
    df = _release(300, seed=1)
    df["when"] = pd.Timestamp("2020-01-01")
    df["rid"] = df["rid"].astype(str)
    df["cluster_size"] = 1.0
    df["inf"] = np.where(df.index == 3, np.inf, 1.0)
    df["inf"] = df["inf"].astype(float)
    kw = {"features": ["country"], **kw}
    with pytest.raises(InputError, match=match):
        erx.find_slices(df, prediction="pred", reference="bench", draws="d", seed=0, **kw)


def test_hostile_names_are_kept_as_text():
    """Feature names and values that look like HTML or spreadsheet formulas stay plain text in the
    frame (the Data Docs section escapes them by construction)."""
    df = _release(3000, seed=4, rate=lambda s, c: 0.5 if c == "DE" else 0.05, draws=1000)
    hostile = "<script>alert(1)</script>"
    df[hostile] = df["country"].map({"DE": "=HYPERLINK(\"x\")", "US": "a&b", "JP": "<b>", "FR": "fr"})
    out = erx.find_slices(df, prediction="pred", reference="bench", draws="d", features=[hostile], seed=1)
    assert out.iloc[0]["slice"] == f'{hostile} in {{=HYPERLINK("x")}}'
