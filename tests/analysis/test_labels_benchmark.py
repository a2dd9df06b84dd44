"""Drawing the sample, building the benchmark from labels, and the CLI (issue 8, SPEC 1, 2.1, 2.2, 9)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.paths import REPO

import er_expectations as erx
from er_expectations import InputError
from er_expectations.analysis.benchmark import benchmark_from_labels
from er_expectations.analysis.labelqc import qc_labels
from er_expectations.analysis.sampling import draw_sample, write_frame
from er_expectations.core.io import read_table

ROOT = REPO
DATA = ROOT / "er_expectations" / "data" / "patentsview"
RELEASE = "inventor_id_20211230"


@pytest.fixture(scope="module")
def pv():
    bench = pd.read_parquet(DATA / "benchmark.parquet")
    # the benchmark's records (the file also lists the other records known at labelling, SPEC 14)
    bench = bench.loc[bench["benchmark_id"].notna(), ["mention_id", "benchmark_id"]]
    return (pd.read_parquet(DATA / "labels.parquet"), pd.read_parquet(DATA / "predictions.parquet"), bench)


def labels_from_truth(records: pd.DataFrame, drawn: list, *, id_col: str, pred: str, truth: str,
                      with_true_cluster: bool = True) -> pd.DataFrame:
    """What a perfect labeller writes: A = ĉ(r) \\ c(r), B = c(r) \\ ĉ(r) (restricted to the release)."""
    rel = records[records[pred].notna()]
    cluster = dict(zip(rel[id_col], rel[pred], strict=True))
    true_id = dict(zip(rel[id_col], rel[truth], strict=True))
    chat = rel.groupby(pred)[id_col].agg(set).to_dict()
    c = rel.groupby(truth)[id_col].agg(set).to_dict()
    rows = []
    for d, r in enumerate(drawn, start=1):
        p, t = chat[cluster[r]], c[true_id[r]]
        rows.append({"draw": d, "record_id": r, "removed": sorted(p - t), "added": sorted(t - p),
                     "true_cluster": true_id[r] if with_true_cluster else None})
    return pd.DataFrame(rows)


# -- benchmark_from_labels ------------------------------------------------------------------------
def test_demo_benchmark_gives_exactly_the_original_estimates(pv):
    labels, pred, bench = pv
    built = benchmark_from_labels(labels, pred, prediction=RELEASE, record_id="mention_id")
    assert list(built.columns) == ["mention_id", "reference", "draws", "weight", "benchmark_version"]
    bench_rows = built["reference"].notna()
    assert built.attrs["clusters"] == 401 and (built.loc[bench_rows, "draws"] == 1).all()
    assert built.loc[~bench_rows, ["draws", "weight"]].isna().all().all()
    # the labelling universe: every record of the release once, all of version 1 (SPEC 14)
    in_release = pred.loc[pred[RELEASE].notna(), "mention_id"]
    assert sorted(built["mention_id"]) == sorted(in_release) and (built["benchmark_version"] == 1).all()
    assert built.attrs["known_records"] == len(in_release)
    original = erx.estimate(pred.merge(bench, on="mention_id", how="left"), prediction=RELEASE,
                            reference="benchmark_id")
    df = pred.merge(built, on="mention_id", how="left")
    for kwargs in ({"weights": "cluster_size", "draws": "draws"}, {"weights": "weight", "draws": "draws"},
                   {"weights": "cluster_size"}):
        ours = erx.estimate(df, prediction=RELEASE, reference="reference", **kwargs)
        for col in ("estimate", "std_error", "ci_lower", "ci_upper"):
            np.testing.assert_allclose(ours[col].to_numpy(), original[col].to_numpy(), rtol=0, atol=1e-12,
                                       equal_nan=True, err_msg=f"{kwargs} {col}")
        assert (ours["draws"] == original["draws"]).all()


def test_demo_benchmark_reference_is_the_benchmark_restricted_to_the_release(pv):
    labels, pred, bench = pv
    built = benchmark_from_labels(labels, pred, prediction=RELEASE, record_id="mention_id")
    in_release = set(pred.loc[pred[RELEASE].notna(), "mention_id"])
    expected = bench[bench["mention_id"].isin(in_release)].sort_values("mention_id").reset_index(drop=True)
    got = built[built["reference"].notna()].sort_values("mention_id").reset_index(drop=True)
    assert got["mention_id"].tolist() == expected["mention_id"].tolist()
    assert got["reference"].tolist() == expected["benchmark_id"].tolist()
    sizes = expected.groupby("benchmark_id")["mention_id"].transform("size")
    np.testing.assert_array_equal(got["weight"].to_numpy(), 1.0 / sizes.to_numpy())


def test_demo_benchmark_on_an_older_release_matches_the_original_there(pv):
    """Joined onto another release, SPEC 2.1 restricts it exactly as it restricts the original."""
    labels, pred, bench = pv
    built = benchmark_from_labels(labels, pred, prediction=RELEASE, record_id="mention_id")
    older = "inventor_id_20190312"
    in_older = set(pred.loc[pred[older].notna(), "mention_id"])
    assert set(bench["mention_id"]) & in_older <= set(built["mention_id"])  # precondition of the comparison
    a = erx.estimate(pred.merge(bench, on="mention_id", how="left"), prediction=older, reference="benchmark_id")
    b = erx.estimate(pred.merge(built, on="mention_id", how="left"), prediction=older, reference="reference",
                     draws="draws")
    np.testing.assert_allclose(a["estimate"], b["estimate"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(a["std_error"], b["std_error"], rtol=0, atol=1e-12, equal_nan=True)


def test_benchmark_refuses_labels_that_break_critical_rules(pv):
    labels, pred, _ = pv
    bad = labels.copy()
    bad["removed"] = bad["removed"].map(list)
    bad.at[3, "removed"] = [*bad.at[3, "removed"], bad.at[3, "record_id"]]  # rule 2
    bad.at[5, "added"] = [*bad.at[5, "added"], "US0000000-0"]  # rule 4
    with pytest.raises(InputError, match=r"(?s)2 critical rule check\(s\) on 2 draw\(s\).*draw \d+, rule 2 "
                                         r"\(sampled_record_not_removed\): the drawn record .*rule 4 \(record_ids_exist\)"):
        benchmark_from_labels(bad, pred, prediction=RELEASE, record_id="mention_id")


def test_benchmark_ignores_the_soft_rule(pv):
    labels, pred, _ = pv
    records = pd.read_parquet(DATA / "records.parquet").merge(pred, on="mention_id")
    q = qc_labels(labels, records, RELEASE, record_id="mention_id", block="block")
    assert q.failed(5) > 0 and q.critical_violations.empty
    assert benchmark_from_labels(labels, pred, prediction=RELEASE, record_id="mention_id")["reference"].notna().sum() == 13451


def tiny_release():
    return pd.DataFrame({"id": [1, 2, 3, 4, 5, 6, 7], "pred": [10, 10, 10, 20, 20, 30, None],
                         "truth": ["A", "A", "B", "B", "B", "C", "C"]})


def test_repeated_draws_count_and_generated_reference_ids():
    rec = tiny_release()
    lab = labels_from_truth(rec, [3, 4, 1, 5, 6], id_col="id", pred="pred", truth="truth", with_true_cluster=False)
    out = benchmark_from_labels(lab, rec, prediction="pred", record_id="id", reference="ref")
    assert list(out.columns) == ["id", "ref", "draws", "weight", "benchmark_version"]
    assert out["id"].dtype == rec["id"].dtype
    got = {r: (sorted(g["id"]), int(g["draws"].iloc[0]), float(g["weight"].iloc[0])) for r, g in out.groupby("ref")}
    # B = {3, 4, 5} drawn 3 times (draws 1, 2, 4), A = {1, 2} once (draw 3), C ∩ release = {6} once
    assert got == {"draw-1": ([3, 4, 5], 3, 1 / 3), "draw-3": ([1, 2], 1, 0.5), "draw-5": ([6], 1, 1.0)}
    uniform = benchmark_from_labels(lab, rec, prediction="pred", record_id="id", design="uniform")
    assert (uniform["weight"] == 1.0).all()


def test_benchmark_bad_arguments():
    rec = tiny_release()
    empty = pd.DataFrame({"draw": pd.Series([], dtype="int64"), "record_id": [], "removed": [], "added": []})
    assert qc_labels(empty, rec, "pred", record_id="id").violations.empty
    with pytest.raises(InputError, match="no draws"):
        benchmark_from_labels(empty, rec, prediction="pred", record_id="id")
    lab = labels_from_truth(rec, [1], id_col="id", pred="pred", truth="truth")
    with pytest.raises(InputError, match="design"):
        benchmark_from_labels(lab, rec, prediction="pred", record_id="id", design="size")
    with pytest.raises(InputError, match="reference='draws'"):
        benchmark_from_labels(lab, rec, prediction="pred", record_id="id", reference="draws")


@st.composite
def truth_and_prediction(draw):
    n = draw(st.integers(2, 40))
    truth = draw(st.lists(st.integers(0, 8), min_size=n, max_size=n))
    pred = draw(st.lists(st.integers(0, 8), min_size=n, max_size=n))
    absent = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    if all(absent):
        absent[0] = False
    text_ids = draw(st.booleans())
    ids = [f"r{i}" for i in range(n)] if text_ids else list(range(100, 100 + n))
    rec = pd.DataFrame({"id": ids, "pred": [None if a else f"P{p}" for p, a in zip(pred, absent, strict=True)],
                        "truth": [f"T{t}" for t in truth]})
    in_rel = [i for i, a in zip(ids, absent, strict=True) if not a]
    drawn = draw(st.lists(st.sampled_from(in_rel), min_size=1, max_size=12))
    return rec, drawn, draw(st.booleans())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(truth_and_prediction())
def test_property_true_labels_pass_and_rebuild_the_truth(case):
    rec, drawn, named = case
    lab = labels_from_truth(rec, drawn, id_col="id", pred="pred", truth="truth", with_true_cluster=named)
    q = qc_labels(lab, rec, "pred", record_id="id", block="truth")
    assert q.violations.empty, q.violations.to_string()
    out = benchmark_from_labels(lab, rec, prediction="pred", record_id="id")
    rel = rec[rec["pred"].notna()]
    truth_of = dict(zip(rel["id"], rel["truth"], strict=True))
    want: dict[str, set] = {}
    counts: dict[str, int] = {}
    for r in drawn:
        t = truth_of[r]
        want[t] = set(rel.loc[rel["truth"] == t, "id"])
        counts[t] = counts.get(t, 0) + 1
    got = {ref: set(g["id"]) for ref, g in out.groupby("reference")}
    assert sorted(map(sorted, got.values())) == sorted(map(sorted, want.values()))
    for ref, g in out.groupby("reference"):
        t = truth_of[g["id"].iloc[0]]
        if named:
            assert ref == t
        assert set(g["draws"]) == {counts[t]}
        assert np.allclose(g["weight"], 1.0 / len(want[t]))


# -- draw_sample -----------------------------------------------------------------------------------
def test_sample_is_reproducible_and_shows_the_predicted_cluster(pv):
    _, pred, _ = pv
    a = draw_sample(pred, prediction=RELEASE, n=50, seed=7, record_id="mention_id")
    b = draw_sample(pred, prediction=RELEASE, n=50, seed=7, record_id="mention_id")
    c = draw_sample(pred, prediction=RELEASE, n=50, seed=8, record_id="mention_id")
    pd.testing.assert_frame_equal(a, b)
    assert a["record_id"].tolist() != c["record_id"].tolist()
    assert a["draw"].tolist() == list(range(1, 51))
    rel = pred[pred[RELEASE].notna()]
    members = rel.groupby(RELEASE)["mention_id"].agg(set)
    cluster = dict(zip(rel["mention_id"], rel[RELEASE], strict=True))
    for row in a.itertuples():
        assert cluster[row.record_id] == row.predicted_cluster
        assert set(row.members) == members[row.predicted_cluster] and row.size == len(row.members)
        assert row.removed == [] and row.added == []


def test_sample_draws_records_uniformly_with_replacement_from_the_release():
    n_rec = 20
    df = pd.DataFrame({"id": np.arange(n_rec), "pred": [None if i % 5 == 0 else i // 3 for i in range(n_rec)]})
    sheet = draw_sample(df, prediction="pred", n=40_000, seed=1, record_id="id")
    counts = sheet["record_id"].value_counts()
    assert not set(counts.index) & {0, 5, 10, 15}  # outside the release: never drawn
    assert len(counts) == 16
    expected = 40_000 / 16
    # each count is Binomial(40000, 1/16): sd ≈ 48.4; 5 sd is a generous bound
    assert (np.abs(counts.to_numpy() - expected) < 5 * np.sqrt(40_000 / 16 * 15 / 16)).all()


def test_sample_columns_are_aligned_with_the_members():
    df = pd.DataFrame({"id": ["a", "b", "c"], "pred": ["X", "X", "Y"], "name": ["Ann", "Anne", "Bo"]})
    sheet = draw_sample(df, prediction="pred", n=30, seed=0, record_id="id", columns=["name"])
    names = dict(zip(df["id"], df["name"], strict=True))
    for row in sheet.itertuples():
        assert row.name == names[row.record_id]
        assert row.members_name == [names[m] for m in row.members]


def test_sample_bad_input():
    df = pd.DataFrame({"id": [1, 2], "pred": [None, None]})
    with pytest.raises(InputError, match="release is empty"):
        draw_sample(df, prediction="pred", n=3, seed=1, record_id="id")
    df = pd.DataFrame({"id": [1, 2], "pred": [1, 1]})
    for n in (0, -1, 2.5, True):
        with pytest.raises(InputError, match="n="):
            draw_sample(df, prediction="pred", n=n, seed=1, record_id="id")
    with pytest.raises(InputError, match="seed"):
        draw_sample(df, prediction="pred", n=2, seed=None, record_id="id")
    with pytest.raises(InputError, match="seed"):
        draw_sample(df, prediction="pred", n=2, seed=-3, record_id="id")
    with pytest.raises(InputError, match="columns="):
        draw_sample(df, prediction="pred", n=2, seed=1, record_id="id", columns=["nam"])
    with pytest.raises(InputError, match="prediction="):
        draw_sample(df, prediction="prd", n=2, seed=1, record_id="id")
    dup = pd.DataFrame({"id": [1, 1, 2], "pred": [1, 1, 1]})
    with pytest.raises(InputError, match="duplicated ids"):
        draw_sample(dup, prediction="pred", n=2, seed=1, record_id="id")


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_worksheet_filled_in_round_trips_to_a_benchmark(tmp_path, suffix):
    rec = pd.DataFrame({"id": [f"m{i}" for i in range(12)], "pred": ["X"] * 5 + ["Y"] * 4 + ["Z"] * 3,
                        "truth": list("AAABB") + list("BBCC") + list("CDD")})
    sheet = draw_sample(rec, prediction="pred", n=6, seed=5, record_id="id", columns=["truth"])
    perfect = labels_from_truth(rec, sheet["record_id"].tolist(), id_col="id", pred="pred", truth="truth",
                                with_true_cluster=False)
    sheet["removed"] = perfect["removed"]
    sheet["added"] = perfect["added"]
    path = write_frame(sheet, tmp_path / f"labels{suffix}")
    back = read_table(path)
    assert qc_labels(back, rec, "pred", record_id="id").violations.empty
    out = benchmark_from_labels(back, rec, prediction="pred", record_id="id")
    direct = benchmark_from_labels(sheet, rec, prediction="pred", record_id="id")
    pd.testing.assert_frame_equal(out, direct)


def test_write_frame_refuses_a_bad_target(tmp_path):
    frame = pd.DataFrame({"a": [1]})
    with pytest.raises(InputError, match="unknown file type"):
        write_frame(frame, tmp_path / "x.xlsx")
    with pytest.raises(InputError, match="does not exist"):
        write_frame(frame, tmp_path / "nope" / "x.csv")
    assert list(tmp_path.iterdir()) == []


# -- CLI -------------------------------------------------------------------------------------------
def cli(*args, cwd=None):
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-m", "er_expectations.cli.main", *map(str, args)], capture_output=True,
                          text=True, env=env, cwd=cwd, timeout=300)


def test_cli_sample_then_benchmark(tmp_path):
    sheet = tmp_path / "worksheet.parquet"
    r = cli("sample", DATA / "records.parquet", "--join", DATA / "predictions.parquet", "-p", RELEASE, "-n", 25,
            "--seed", 4, "--columns", "name_first", "name_last", "block", "-o", sheet)
    assert r.returncode == 0, r.stderr
    assert "25 draws" in r.stdout
    got = pd.read_parquet(sheet)
    pred = pd.read_parquet(DATA / "predictions.parquet")
    again = draw_sample(pd.read_parquet(DATA / "records.parquet").merge(pred, on="mention_id", how="left"),
                        prediction=RELEASE, n=25, seed=4, record_id="mention_id", columns=["name_first", "name_last", "block"])
    assert got["record_id"].tolist() == again["record_id"].tolist()

    out = tmp_path / "bench.csv"
    r = cli("benchmark", DATA / "labels.parquet", DATA / "predictions.parquet", "--record-id", "mention_id", "-p", RELEASE, "-o", out)
    assert r.returncode == 0, r.stderr
    built = read_table(out)
    assert built["reference"].notna().sum() == 13451
    assert set(built.columns) == {"mention_id", "reference", "draws", "weight", "benchmark_version"}


def test_cli_benchmark_failures_write_nothing(tmp_path):
    out = tmp_path / "bench.parquet"
    r = cli("benchmark", DATA / "labels.parquet", DATA / "predictions.parquet", "--record-id", "mention_id", "-p", "inventor_id_20220630", "-o", out)
    assert r.returncode == 2 and "another release" in r.stderr and "Traceback" not in r.stderr
    labels = pd.read_parquet(DATA / "labels.parquet")
    labels["removed"] = labels["removed"].map(list)
    labels.at[0, "removed"] = [*labels.at[0, "removed"], labels.at[0, "record_id"]]
    bad = tmp_path / "bad.parquet"
    labels.to_parquet(bad)
    r = cli("benchmark", bad, DATA / "predictions.parquet", "--record-id", "mention_id", "-p", RELEASE, "-o", out)
    assert r.returncode == 2 and "rule 2 (sampled_record_not_removed)" in r.stderr
    r = cli("benchmark", bad, DATA / "predictions.parquet", "--record-id", "mention_id", "-p", RELEASE, "-o", out, "--label-column", "recordid")
    assert r.returncode == 2 and "ROLE=COLUMN" in r.stderr
    r = cli("sample", DATA / "predictions.parquet", "--record-id", "mention_id", "-p", RELEASE, "-n", 5, "--seed", 1, "-o", tmp_path / "w.xlsx")
    assert r.returncode == 2 and "unknown file type" in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.parquet"]


def test_draw_sample_bounds_the_draws_before_any_work():
    """Issue 18 item 15: 1e9 draws from 36 records would never end; refused at once."""
    import time

    from er_expectations.analysis.sampling import MAX_DRAWS, draw_sample

    frame = pd.DataFrame({"rid": [f"r{i}" for i in range(36)], "pred": [i // 4 for i in range(36)]})
    started = time.monotonic()
    with pytest.raises(InputError, match="at most 100,000 draws"):
        draw_sample(frame, prediction="pred", n=10**9, seed=1, record_id="rid")
    assert time.monotonic() - started < 2
    assert len(draw_sample(frame, prediction="pred", n=MAX_DRAWS, seed=1, record_id="rid")) == MAX_DRAWS
