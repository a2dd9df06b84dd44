"""The `simulate` and `plan` commands: same numbers as the API, chart files, errors."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import er_expectations as erx
from er_expectations.cli.main import main


@pytest.fixture()
def files(tmp_path):
    rng = np.random.default_rng(4)
    truth = np.repeat(np.arange(60), rng.choice([1, 1, 2, 3], size=60))
    pred = truth.copy()
    pred[rng.choice(truth.size, size=12, replace=False)] = 999  # one wrong merge
    records = pd.DataFrame({"rid": np.arange(truth.size), "pred": pred})
    labels = pd.DataFrame({"rid": np.arange(truth.size), "truth": truth})
    rp, tp = tmp_path / "records.parquet", tmp_path / "truth.parquet"
    records.to_parquet(rp)
    labels.to_parquet(tp)
    return rp, tp, records.merge(labels, on="rid")


def test_simulate_json_matches_api_and_writes_a_chart(files, capsys, tmp_path):
    rp, tp, df = files
    chart = tmp_path / "sim.svg"
    code = main(["simulate", str(rp), "--join", str(tp), "--on", "rid", "-p", "pred", "-t", "truth",
                 "--sizes", "10", "20", "--reps", "200", "--seed", "5", "--metrics", "pairwise_precision",
                 "cluster_recall", "--format", "json", "--chart", str(chart)])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    api = erx.simulate(df, prediction="pred", truth="truth", sizes=(10, 20), reps=200, seed=5,
                       metrics=["pairwise_precision", "cluster_recall"])
    assert len(out["rows"]) == len(api) == 8
    for got, row in zip(out["rows"], api.to_dict(orient="records"), strict=True):
        for key in ("metric", "design", "size", "reps", "undefined"):
            assert got[key] == row[key]
        for key in ("truth", "mean", "bias", "rmse", "coverage", "sd", "mean_se"):
            assert got[key] == pytest.approx(row[key], rel=1e-12)
    svg = chart.read_text()
    assert svg.startswith("<svg") and "pairwise_precision" in svg and "<script" not in svg


def test_simulate_table_png_chart(files, capsys, tmp_path):
    rp, tp, _ = files
    chart = tmp_path / "sim.png"
    code = main(["simulate", str(rp), "--join", str(tp), "--on", "rid", "-p", "pred", "-t", "truth",
                 "--sizes", "10", "--designs", "uniform", "--reps", "100", "--seed", "1", "--chart", str(chart)])
    assert code == 0
    text = capsys.readouterr().out
    assert "seed 1," in text and f"chart written to {chart}" in text
    assert any(line.split()[:3] == ["pairwise_precision", "uniform", "10"] for line in text.splitlines())
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--designs", "unifrom"], "did you mean 'uniform'"),
        (["--sizes", "0"], "sizes=0 is out of range"),
        (["--reps", "5"], "at least 100 replications"),
        (["--chart", "out.pdf"], "--chart out.pdf: give a file ending in .svg or .png"),
        (["--chart", "no/such/folder/x.svg"], "does not exist"),
    ],
)
def test_simulate_bad_options_exit_2_with_one_line(files, capsys, extra, message):
    rp, tp, _ = files
    code = main(["simulate", str(rp), "--join", str(tp), "--on", "rid", "-p", "pred", "-t", "truth",
                 "--sizes", "10", "--reps", "100", *extra])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and "Traceback" not in err


def test_plan_matches_api(files, capsys, tmp_path):
    rp, tp, df = files
    pilot = df.assign(ref=df["truth"].where(df["truth"] % 2 == 0))
    pp = tmp_path / "pilot.csv"
    pilot.to_csv(pp, index=False)
    code = main(["plan", str(pp), "-p", "pred", "-r", "ref", "--target-se", "pairwise_precision=0.05",
                 "cluster_recall=0.02", "--reps", "200", "--seed", "2", "--format", "json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    api = erx.plan_sample_size(pilot, prediction="pred", reference="ref", target_se={"pairwise_precision": 0.05, "cluster_recall": 0.02},
                               reps=200, seed=2)
    assert [r["metric"] for r in out["rows"]] == list(api["metric"])
    for got, row in zip(out["rows"], api.to_dict(orient="records"), strict=True):
        assert got["draws_needed"] == (None if pd.isna(row["draws_needed"]) else int(row["draws_needed"]))
        assert got["draws_extrapolated"] == int(row["draws_extrapolated"])
    chart = tmp_path / "plan.svg"
    code = main(["plan", str(pp), "-p", "pred", "-r", "ref", "--target-width", "0.1", "--metrics", "cluster_recall",
                 "pairwise_precision", "--reps", "200", "--seed", "2", "--chart", str(chart)])
    assert code == 0
    text = capsys.readouterr().out
    assert "cluster_recall" in text and "k·(SE/target)²" in text and f"chart written to {chart}" in text
    svg = chart.read_text()
    assert svg.startswith("<svg") and "resampled pilot" in svg and "<script" not in svg


@pytest.mark.parametrize(
    ("target", "message"),
    [
        (["--target-se", "abc"], "--target-se 'abc': not a number"),
        (["--target-se", "pairwise_precision=0.1", "0.2"], "give one number for every metric, or METRIC=VALUE"),
        (["--target-se", "pairwise_precison=0.1"], "did you mean 'pairwise_precision'"),
    ],
)
def test_plan_bad_targets(files, capsys, tmp_path, target, message):
    _, _, df = files
    pp = tmp_path / "pilot.csv"
    df.rename(columns={"truth": "ref"}).to_csv(pp, index=False)
    code = main(["plan", str(pp), "-p", "pred", "-r", "ref", *target])
    assert code == 2
    assert message in capsys.readouterr().err


def test_simulate_the_expected_errors_design(files, capsys, tmp_path):
    """``--designs expected_errors --match-probabilities FILE`` (SPEC 12.3): the numbers of the API;
    a CSV pairs file (all text) reads p as numbers; a bad p is an error naming the row."""
    rp, tp, df = files
    a = np.arange(0, df.shape[0] - 1)
    pairs = pd.DataFrame({"record_a": a, "record_b": a + 1, "p": np.linspace(0.05, 0.95, a.size)})
    pp = tmp_path / "pairs.parquet"
    pairs.to_parquet(pp)
    args = ["simulate", str(rp), "--join", str(tp), "--on", "rid", "-p", "pred", "-t", "truth", "--record-id", "rid",
            "--sizes", "20", "--reps", "200", "--seed", "5", "--metrics", "pairwise_precision",
            "--designs", "cluster_size", "expected_errors", "--match-probabilities", str(pp), "--floor", "0.3",
            "--format", "json"]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    api = erx.simulate(df, prediction="pred", truth="truth", sizes=(20,), reps=200, seed=5, metrics=["pairwise_precision"],
                       designs=("cluster_size", "expected_errors"), record_id="rid", match_probabilities=pairs,
                       floor=0.3)
    assert [r["design"] for r in out["rows"]] == ["cluster_size", "expected_errors"]
    for got, row in zip(out["rows"], api.to_dict(orient="records"), strict=True):
        assert got["sd"] == pytest.approx(row["sd"], rel=1e-12)
    bad = tmp_path / "bad.parquet"
    pairs.assign(p=np.r_[pairs["p"].to_numpy()[:-1], 1.5]).to_parquet(bad)
    args[args.index(str(pp))] = str(bad)
    assert main(args) != 0
    err = capsys.readouterr().err
    assert f"row {a.size} " in err and "column 'p': 1.5 is outside [0, 1]" in err, err


def test_sample_and_benchmark_by_expected_errors(tmp_path, capsys):
    """``sample --design expected_errors`` draws by q_r; ``benchmark --design expected_errors`` with the
    same pairs and floor writes weights 1/π_c (SPEC 12.3), as the API does."""
    from er_expectations.analysis.benchmark import benchmark_from_labels
    from er_expectations.core.io import read_table

    rec = pd.DataFrame({"mention_id": [f"m{i}" for i in range(8)], "pred": list("aaabbccd"),
                        "truth": list("AABBBCDD")})
    pairs = pd.DataFrame({"record_a": ["m0", "m2", "m5", "m6"], "record_b": ["m2", "m3", "m6", "m7"],
                          "p": ["0.2", "0.7", "0.1", "0.9"]})  # a CSV: text
    rp, pp = tmp_path / "records.parquet", tmp_path / "pairs.csv"
    rec.to_parquet(rp)
    pairs.to_csv(pp, index=False)
    sheet_path = tmp_path / "sheet.parquet"
    assert main(["sample", str(rp), "--record-id", "mention_id", "-p", "pred", "-n", "40", "--seed", "3", "-o", str(sheet_path),
                 "--design", "expected_errors", "--match-probabilities", str(pp), "--floor", "0.25"]) == 0
    sheet = read_table(sheet_path)
    api = erx.draw_sample(rec, prediction="pred", n=40, seed=3, record_id="mention_id", design="expected_errors",
                          match_probabilities=pairs.astype({"p": float}), floor=0.25)
    assert sheet["record_id"].tolist() == api["record_id"].tolist()
    # a perfect labeller
    chat = rec.groupby("pred")["mention_id"].agg(set).to_dict()
    true = rec.groupby("truth")["mention_id"].agg(set).to_dict()
    pred, truth = dict(zip(rec.mention_id, rec.pred, strict=True)), dict(zip(rec.mention_id, rec.truth, strict=True))
    sheet["removed"] = [sorted(chat[pred[r]] - true[truth[r]]) for r in sheet["record_id"]]
    sheet["added"] = [sorted(true[truth[r]] - chat[pred[r]]) for r in sheet["record_id"]]
    labels_path = tmp_path / "labels.parquet"
    sheet.to_parquet(labels_path)
    out = tmp_path / "bench.parquet"
    assert main(["benchmark", str(labels_path), str(rp), "--record-id", "mention_id", "-p", "pred", "-o", str(out), "--design", "expected_errors",
                 "--match-probabilities", str(pp), "--floor", "0.25"]) == 0
    inc = erx.expected_error_probabilities(rec, prediction="pred", record_id="mention_id",
                                           match_probabilities=pairs.astype({"p": float}), floor=0.25)
    want = benchmark_from_labels(sheet, rec, prediction="pred", record_id="mention_id", design="expected_errors", inclusion=inc)
    got = read_table(out)
    assert got["weight"].tolist() == pytest.approx(want["weight"].tolist())
    assert got["inclusion"].tolist() == pytest.approx(want["inclusion"].tolist())
    capsys.readouterr()
    assert main(["benchmark", str(labels_path), str(rp), "--record-id", "mention_id", "-p", "pred", "-o", str(tmp_path / "b2.parquet"),
                 "--design", "expected_errors"]) != 0
    assert "needs --match-probabilities" in capsys.readouterr().err


@pytest.fixture()
def errors_population(tmp_path):
    """2,000 entities of 2-4 records, 12 % of them with one record split off."""
    rng = np.random.default_rng(8)
    sizes = rng.integers(2, 5, 2000)
    truth = np.repeat(np.arange(2000), sizes)
    pred = truth.copy()
    first = np.r_[0, np.cumsum(sizes)[:-1]]
    err = rng.random(2000) < 0.12
    pred[first[err]] = 10_000 + np.arange(int(err.sum()))
    df = pd.DataFrame({"rid": np.arange(truth.size), "pred": pred, "truth": truth})
    path = tmp_path / "population.parquet"
    df.to_parquet(path)
    return path, df, float(err.mean())


def test_simulate_slice_power(errors_population, capsys):
    """SPEC 12.2 "Power": the chance that the honest search finds a planted slice, per design and
    size, from fresh benchmarks of the population; the CLI prints the API's numbers."""
    path, df, rate = errors_population
    args = dict(sizes=(150, 600), designs=("uniform",), reps=100, seed=2, metrics=["pairwise_precision"])
    api = erx.simulate(df, prediction="pred", truth="truth", **args, slice_power=True, slice_reps=60)
    rows = api.attrs["slice_power"]
    assert [(r["design"], r["size"]) for r in rows] == [("uniform", 150), ("uniform", 600)]
    for r in rows:
        assert r["base_rate"] == pytest.approx(rate) and r["slice_rate"] == pytest.approx(3 * r["rest_rate"])
        assert r["reps"] == 60 and r["power"] == r["found"] / 60
        assert r["mc_se"] == pytest.approx((r["power"] * (1 - r["power"]) / 60) ** 0.5)
    assert rows[0]["power"] < rows[1]["power"]  # more draws, more power
    code = main(["simulate", str(path), "-p", "pred", "-t", "truth", "--sizes", "150", "600", "--designs", "uniform",
                 "--reps", "100", "--seed", "2", "--metrics", "pairwise_precision", "--slice-power",
                 "--slice-reps", "60"])
    assert code == 0
    text = capsys.readouterr().out
    assert "Slice search power: a planted slice of 20 % of entities with 3× the error rate" in text
    line = next(x for x in text.splitlines() if x.split()[:2] == ["uniform", "600"] and "/60" in x)
    assert f"{rows[1]['found']}/60" in line and f"{rows[1]['power']:.3f}" in line
    code = main(["simulate", str(path), "-p", "pred", "-t", "truth", "--sizes", "150", "--reps", "100",
                 "--slice-power", "--slice-share", "0.7"])
    err = capsys.readouterr().err
    assert code == 2 and "slice_share=0.7" in err and "at most 0.5" in err and "Traceback" not in err


def test_plan_slice_power_is_the_pages_number_on_the_pilot(errors_population, capsys, tmp_path):
    """``plan --slice-power``: the power planted in the pilot, as the check's page reports it."""
    from er_expectations.analysis.slices import cluster_features, slice_inputs
    from er_expectations.engines.pandas.release import PandasRelease
    from er_expectations.stats.slice_power import slice_power

    _, df, _ = errors_population
    rng = np.random.default_rng(3)
    drawn, times = np.unique(df["truth"].to_numpy()[rng.integers(0, len(df), 500)], return_counts=True)
    d = pd.Series(times, index=drawn).reindex(df["truth"]).to_numpy()
    pilot = df.assign(ref=np.where(np.isnan(d), None, df["truth"]), d=d)
    path = tmp_path / "pilot.parquet"
    pilot.to_parquet(path)
    out = erx.plan_sample_size(pilot, prediction="pred", reference="ref", draws="d", target_se=0.02, reps=200, seed=1,
                               metrics=["pairwise_precision"], slice_power=True, slice_reps=50)
    got = out.attrs["slice_power"]
    sample = PandasRelease(pilot, prediction="pred").benchmark_sample(reference="ref", draws="d")
    feats, _ = cluster_features(pilot, sample, prediction="pred", reference="ref")
    y, g = slice_inputs(sample, "EI", "entity")
    want = slice_power(y, g, sample.draws, sample.labels, feats, reps=50, seed=0)
    assert got["draws"] == 500 and got["power"] == want.power and got["sentence"] == want.sentence()
    code = main(["plan", str(path), "-p", "pred", "-r", "ref", "--draws", "d", "--target-se", "0.02", "--reps", "200",
                 "--seed", "1", "--metrics", "pairwise_precision", "--slice-power", "--slice-reps", "50"])
    assert code == 0
    assert "Slice search power, planted in the pilot: " + want.sentence() in capsys.readouterr().out
