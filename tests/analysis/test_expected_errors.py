"""Sampling by expected errors (SPEC 12.3, issue 20).

* E|A_r|, E|B_r|, e_r and q_r equal a brute-force double loop over the records;
* the inclusion probability of every true cluster, enumerated over the N records a draw can
  pick, is what the benchmark's weights invert (w_c = 1/π_c), the labeller's added records
  included; draw_sample's draws follow q_r;
* under the design, the weighted totals are unbiased and the estimates centre on the truth
  (and the size-proportional weights on the same draws do not: the test can fail);
* every bad pairs table gets an error naming its row and column.
"""

from __future__ import annotations

import itertools
import time

import numpy as np
import pandas as pd
import pytest

import er_expectations as erx
from er_expectations.analysis.benchmark import benchmark_from_labels
from er_expectations.analysis.expected_errors import expected_error_probabilities
from er_expectations.analysis.sampling import draw_sample
from er_expectations.core.errors import InputError
from er_expectations.stats.resample import draw_clusters


def small():
    rec = pd.DataFrame({"id": [f"m{i}" for i in range(8)],
                        "pred": ["X", "X", "X", "Y", "Y", "Z", "Z", None],
                        "truth": ["A", "A", "B", "B", "B", "C", "D", "D"]})
    pairs = pd.DataFrame({"record_a": ["m0", "m0", "m2", "m3", "m5", "m6", "m1"],
                          "record_b": ["m1", "m2", "m3", "m4", "m6", "m7", "m4"],
                          "p": [0.9, 0.3, 0.8, 1.0, 0.2, 0.7, 0.05]})
    return rec, pairs


def brute(rec: pd.DataFrame, pairs: pd.DataFrame, floor: float) -> pd.DataFrame:
    rel = rec[rec["pred"].notna()]
    p = {}
    for a, b, v in pairs.itertuples(index=False):
        p[(a, b)] = p[(b, a)] = v
    ids = rel["id"].tolist()
    pred = dict(zip(rel["id"], rel["pred"], strict=True))
    rows = []
    for r in ids:
        removed = sum(1 - p.get((r, s), 1.0) for s in ids if s != r and pred[s] == pred[r])
        added = sum(p.get((r, s), 0.0) for s in ids if pred[s] != pred[r])
        rows.append((r, removed, added, removed + added))
    out = pd.DataFrame(rows, columns=["id", "expected_removed", "expected_added", "expected_errors"])
    total = out["expected_errors"].sum()
    out["inclusion"] = (1 - floor) * out["expected_errors"] / total + floor / len(ids)
    return out


@pytest.mark.parametrize("floor", [0.05, 0.5, 1.0])
def test_expected_errors_and_q_equal_a_double_loop(floor):
    rec, pairs = small()
    got = expected_error_probabilities(rec, prediction="pred", record_id="id", match_probabilities=pairs, floor=floor)
    want = brute(rec, pairs, floor)
    pd.testing.assert_frame_equal(got.reset_index(drop=True), want, check_exact=False, rtol=1e-12)
    assert got["inclusion"].sum() == pytest.approx(1.0)
    assert got.attrs["pairs_outside"] == 1  # (m6, m7): m7 is not in the release
    # pair order does not matter
    flipped = pairs.rename(columns={"record_a": "record_b", "record_b": "record_a"})
    again = expected_error_probabilities(rec, prediction="pred", record_id="id", match_probabilities=flipped, floor=floor)
    pd.testing.assert_frame_equal(got, again)


def test_benchmark_weights_invert_the_enumerated_inclusion_probabilities():
    rec, pairs = small()
    inc = expected_error_probabilities(rec, prediction="pred", record_id="id", match_probabilities=pairs, floor=0.2)
    q = dict(zip(inc["id"], inc["inclusion"], strict=True))
    # enumerate the N records one draw can pick: the true cluster of the pick is c with probability π_c
    rel = rec[rec["pred"].notna()]
    truth = dict(zip(rel["id"], rel["truth"], strict=True))
    pi: dict[str, float] = {}
    for r in rel["id"]:
        pi[truth[r]] = pi.get(truth[r], 0.0) + q[r]
    assert sum(pi.values()) == pytest.approx(1.0)
    # a perfect labeller on every record once; B (added) may hold records of other predicted clusters
    chat = rel.groupby("pred")["id"].agg(set).to_dict()
    c = rel.groupby("truth")["id"].agg(set).to_dict()
    pred = dict(zip(rel["id"], rel["pred"], strict=True))
    labels = pd.DataFrame([{"draw": i + 1, "record_id": r, "removed": sorted(chat[pred[r]] - c[truth[r]]),
                            "added": sorted(c[truth[r]] - chat[pred[r]]), "true_cluster": truth[r]}
                           for i, r in enumerate(rel["id"])])
    bench = benchmark_from_labels(labels, rec, prediction="pred", record_id="id", design="expected_errors", inclusion=inc)
    for row in bench.itertuples():
        assert row.weight == pytest.approx(1.0 / pi[row.reference])
        assert row.inclusion == pytest.approx(q[row.id])
    # the same from a column of the records
    col = benchmark_from_labels(labels, rec.merge(inc[["id", "inclusion"]].rename(columns={"inclusion": "q"}),
                                                  on="id", how="left"),
                                prediction="pred", record_id="id", design="expected_errors", inclusion="q")
    pd.testing.assert_frame_equal(bench, col)
    with pytest.raises(InputError, match="needs inclusion="):
        benchmark_from_labels(labels, rec, prediction="pred", record_id="id", design="expected_errors")
    with pytest.raises(InputError, match="has no q_r for the record 'm3'"):
        benchmark_from_labels(labels, rec, prediction="pred", record_id="id", design="expected_errors",
                              inclusion=inc[inc["id"] != "m3"])


def test_draw_sample_follows_q_and_records_it():
    rec, pairs = small()
    inc = expected_error_probabilities(rec, prediction="pred", record_id="id", match_probabilities=pairs, floor=0.2)
    sheet = draw_sample(rec, prediction="pred", n=60_000, seed=3, record_id="id", design="expected_errors",
                        match_probabilities=pairs, floor=0.2)
    assert sheet.attrs["design"] == "expected_errors" and sheet.attrs["floor"] == 0.2
    q = dict(zip(inc["id"], inc["inclusion"], strict=True))
    assert np.allclose(sheet["inclusion"], sheet["record_id"].map(q))
    freq = sheet["record_id"].value_counts(normalize=True)
    for r, qr in q.items():
        se = np.sqrt(qr * (1 - qr) / len(sheet))
        assert abs(freq.get(r, 0.0) - qr) < 5 * se, r
    assert "m7" not in set(sheet["record_id"])  # outside the release
    again = draw_sample(rec, prediction="pred", n=50, seed=3, record_id="id", design="expected_errors",
                        match_probabilities=pairs, floor=0.2)
    assert again["record_id"].tolist() == sheet["record_id"].tolist()[:50]


def test_draw_clusters_with_probabilities():
    rng = np.random.default_rng(1)
    pi = np.array([0.5, 0.0, 0.3, 0.2])
    idx = draw_clusters(rng, design="expected_errors", sizes=np.ones(4), draws=1000, replicates=100,
                        probabilities=pi)
    freq = np.bincount(idx.ravel(), minlength=4) / idx.size
    assert freq[1] == 0.0 and np.allclose(freq, pi, atol=0.005)


def population(seed: int, n_true: int = 300):
    """A release with known truth and a pair model whose p reflects the errors imperfectly."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 5, size=n_true)
    truth = np.repeat(np.arange(n_true), sizes)
    pred = truth.copy()
    # merge some neighbouring entities, split some records off
    merge = rng.random(n_true) < 0.08
    pred = np.where(merge[truth], truth + 1, pred)
    split = rng.random(truth.size) < 0.06
    pred = np.where(split, 10_000 + np.arange(truth.size), pred)
    ids = np.arange(truth.size) * 7 + 2**62  # ids beyond 2^53
    df = pd.DataFrame({"rid": ids, "pred": pred, "truth": truth})
    # pairs: every pair of records within two neighbouring entities, p by a noisy truth
    rows = []
    for t in range(n_true - 1):
        members = np.flatnonzero((truth == t) | (truth == t + 1))
        for a, b in itertools.combinations(members, 2):
            same = truth[a] == truth[b]
            p = np.clip((0.85 if same else 0.1) + rng.normal(0, 0.1), 0, 1)
            rows.append((ids[a], ids[b], p))
    pairs = pd.DataFrame(rows, columns=["record_a", "record_b", "p"]).drop_duplicates(["record_a", "record_b"])
    return df, pairs


def test_the_design_is_unbiased_and_the_wrong_weights_are_not():
    df, pairs = population(11)
    sim = erx.simulate(df, prediction="pred", truth="truth", sizes=(400,), designs=("expected_errors",), reps=4000, seed=2,
                       record_id="rid", match_probabilities=pairs, floor=0.2,
                       metrics=["pairwise_precision", "pairwise_recall", "cluster_recall", "b_cubed_precision"])
    for row in sim.itertuples():
        mc = row.sd / np.sqrt(row.reps)
        assert abs(row.bias) < 4 * mc + 2e-3, (row.metric, row.bias, mc)
    # the Horvitz–Thompson totals on the same draws, with the design's weights and with 1/|c|
    from er_expectations.analysis.planning import Population

    pop = Population(df, prediction="pred", truth="truth", name=None, record_id="rid", beta=1.0)
    pop.set_expected_errors(record_id="rid", match_probabilities=pairs, floor=0.2, pair_columns=None)
    rng = np.random.default_rng(5)
    k, reps = 300, 4000
    idx = pop.draw(rng, design="expected_errors", sample=pop.design_sample("expected_errors"), draws=k,
                   replicates=reps)
    err = erx.cluster_errors(df.assign(ref=df["truth"]), prediction="pred", reference="ref", weights="uniform")
    ei = err.set_index("cluster").loc[pop.sample.labels, "EI"].to_numpy()
    size = pop.sample.size.astype(float)
    total = float((ei * size).sum())  # records in erroneous entities
    ht = ((ei * size / pop.inclusion)[idx]).mean(axis=1)
    assert abs(ht.mean() - total) < 4 * ht.std() / np.sqrt(reps)
    wrong = ((ei * size * size.sum() / size)[idx]).mean(axis=1)  # as if clusters were drawn ∝ size
    assert abs(wrong.mean() - total) > 10 * wrong.std() / np.sqrt(reps)


def test_133k_records_take_seconds():
    rng = np.random.default_rng(0)
    n = 133_000
    df = pd.DataFrame({"rid": np.arange(n), "pred": rng.integers(0, 60_000, size=n)})
    a = rng.integers(0, n, size=1_000_000)
    b = rng.integers(0, n, size=1_000_000)
    keep = a < b
    pairs = pd.DataFrame({"record_a": a[keep], "record_b": b[keep], "p": rng.random(int(keep.sum()))})
    pairs = pairs.drop_duplicates(["record_a", "record_b"])
    t = time.perf_counter()
    out = expected_error_probabilities(df, prediction="pred", record_id="rid", match_probabilities=pairs, floor=0.1)
    assert time.perf_counter() - t < 20
    assert len(out) == n and out["inclusion"].sum() == pytest.approx(1.0)


# -- bad input -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("change", "message"), [
    (lambda t: t.assign(p=[0.9, 1.5, 0.8, 1.0, 0.2, 0.7, 0.05]), r"row 2 \(index 1\), column 'p': 1.5 is outside \[0, 1\]"),
    (lambda t: t.assign(p=[0.9, -0.1, 0.8, 1.0, 0.2, 0.7, 0.05]), r"row 2 .*column 'p': -0.1 is outside"),
    (lambda t: t.assign(p=[0.9, float("nan"), 0.8, 1.0, 0.2, 0.7, 0.05]), r"row 2 .*column 'p': the cell is empty"),
    (lambda t: t.assign(p=["0.9", "x", "0.8", "1", "0.2", "0.7", "0.05"]), r"row 2 .*column 'p': 'x' is not a probability"),
    (lambda t: t.assign(p=[str(v) for v in t["p"]]), r"column 'p': holds text, not numbers"),
    (lambda t: t.assign(p=[True] * 7), r"row 1 .*column 'p': True is not a probability"),
    (lambda t: t.assign(record_b=["m1", "m99", "m3", "m4", "m6", "m7", "m4"]),
     r"row 2 \(index 1\), column 'record_b': the record 'm99' is not in the records"),
    (lambda t: t.assign(record_b=["m1", "m0", "m3", "m4", "m6", "m7", "m4"]), r"row 2 .*joins the record 'm0' to itself"),
    (lambda t: pd.concat([t, t.iloc[[2]]], ignore_index=True), r"row 8 .*repeats the pair of row 3"),
    (lambda t: pd.concat([t, pd.DataFrame({"record_a": ["m3"], "record_b": ["m2"], "p": [0.8]})], ignore_index=True),
     r"row 8 .*gives the pair of row 3 \(index 2\) in the other order"),
    (lambda t: t.drop(columns="p"), r"no column 'p'; the table has"),
])
def test_bad_pairs(change, message):
    rec, pairs = small()
    with pytest.raises(InputError, match=message):
        expected_error_probabilities(rec, prediction="pred", record_id="id", match_probabilities=change(pairs))


def test_bad_options():
    rec, pairs = small()
    for floor in (0, -0.1, 1.5, float("nan"), True, "0.1"):
        with pytest.raises(InputError, match=r"floor="):
            expected_error_probabilities(rec, prediction="pred", record_id="id", match_probabilities=pairs, floor=floor)
    with pytest.raises(InputError, match="needs match_probabilities"):
        draw_sample(rec, prediction="pred", n=3, seed=1, record_id="id", design="expected_errors")
    with pytest.raises(InputError, match="does not use it"):
        draw_sample(rec, prediction="pred", n=3, seed=1, record_id="id", match_probabilities=pairs)
    with pytest.raises(InputError, match="design='expected_error'"):
        draw_sample(rec, prediction="pred", n=3, seed=1, record_id="id", design="expected_error")
    with pytest.raises(InputError, match="unknown design 'expected_error'.*expected_errors"):
        erx.simulate(rec.dropna(), prediction="pred", truth="truth", designs=["expected_error"], record_id="id")
    with pytest.raises(InputError, match="needs match_probabilities"):
        erx.simulate(rec.dropna(), prediction="pred", truth="truth", designs=["expected_errors"], record_id="id", reps=100)
    with pytest.raises(InputError, match="needs record_id"):
        erx.simulate(rec.dropna(), prediction="pred", truth="truth", designs=["expected_errors"], match_probabilities=pairs, reps=100)
    splink = pairs.rename(columns={"record_a": "unique_id_l", "record_b": "unique_id_r", "p": "match_probability"})
    got = expected_error_probabilities(rec, prediction="pred", record_id="id", match_probabilities=splink,
                                       pair_columns={"record_a": "unique_id_l", "record_b": "unique_id_r",
                                                     "p": "match_probability"})
    assert got["inclusion"].sum() == pytest.approx(1.0)


def test_no_expected_error_gives_the_size_design_with_a_note():
    rec, _ = small()
    pairs = pd.DataFrame({"record_a": ["m0"], "record_b": ["m1"], "p": [1.0]})
    got = expected_error_probabilities(rec, prediction="pred", record_id="id", match_probabilities=pairs, floor=0.3)
    assert np.allclose(got["inclusion"], 1 / 7) and "1/N" in got.attrs["note"]


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_worksheet_round_trip_to_weighted_benchmark(tmp_path, suffix):
    from er_expectations.analysis.sampling import write_frame
    from er_expectations.core.io import read_table

    rec, pairs = small()
    sheet = draw_sample(rec, prediction="pred", n=6, seed=2, record_id="id", design="expected_errors",
                        match_probabilities=pairs, floor=0.3)
    rel = rec[rec["pred"].notna()]
    chat = rel.groupby("pred")["id"].agg(set).to_dict()
    c = rel.groupby("truth")["id"].agg(set).to_dict()
    pred = dict(zip(rel["id"], rel["pred"], strict=True))
    truth = dict(zip(rel["id"], rel["truth"], strict=True))
    sheet["removed"] = [sorted(chat[pred[r]] - c[truth[r]]) for r in sheet["record_id"]]
    sheet["added"] = [sorted(c[truth[r]] - chat[pred[r]]) for r in sheet["record_id"]]
    back = read_table(write_frame(sheet, tmp_path / f"labels{suffix}"))
    inc = expected_error_probabilities(rec, prediction="pred", record_id="id", match_probabilities=pairs, floor=0.3)
    bench = benchmark_from_labels(back, rec, prediction="pred", record_id="id", design="expected_errors", inclusion=inc)
    q = dict(zip(inc["id"], inc["inclusion"], strict=True))
    for _, grp in bench.groupby("reference"):
        assert grp["weight"].iloc[0] == pytest.approx(1 / sum(q[r] for r in grp["id"]))
    # the drawn clusters were drawn as often as the sheet says
    assert int(bench.groupby("reference")["draws"].first().sum()) == 6
