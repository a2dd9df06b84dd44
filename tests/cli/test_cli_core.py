"""The `summarize` and `estimate` commands: output formats, joins, exit codes, error messages."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

import er_expectations as erx
from er_expectations.cli.main import main

PV = "er_expectations/data/patentsview/"


@pytest.fixture()
def small(tmp_path):
    records = pd.DataFrame({
        "rid": [f"r{i}" for i in range(12)],
        "pred": ["a", "a", "a", "b", "b", "c", "d", "d", "e", "f", "f", None],
        "first": ["Ann", "Ann", "Anne", "Bo", "Bo", "Cy", "Di", "Di", "Ann", "Fa", "Fa", "Zed"],
        "last": ["Lee"] * 3 + ["Ng"] * 2 + ["Oh", "Po", "Po", "Lee", "Qi", "Qi", "Zz"],
    })
    bench = pd.DataFrame({"rid": ["r0", "r1", "r2", "r3", "r4", "r8", "r11"],
                          "truth": ["T1", "T1", "T2", "T3", "T3", "T1", "T9"]})
    rp, bp = tmp_path / "records.csv", tmp_path / "bench.parquet"
    records.to_csv(rp, index=False)
    bench.to_parquet(bp)
    merged = records.merge(bench, on="rid", how="left")
    merged["name"] = merged["first"] + " " + merged["last"]
    return rp, bp, merged


def test_summarize_json_matches_api(small, capsys):
    rp, _, merged = small
    code = main(["summarize", str(rp), "--cluster", "pred", "--name-columns", "first", "last",
                 "--hill-orders", "0", "1", "inf", "--format", "json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    api = erx.summarize(merged, cluster="pred", name="name", hill_orders=(0, 1, math.inf))
    assert set(out) == set(api.index)
    for key, value in api.items():
        assert out[key] == pytest.approx(value)
    assert out["n_records"] == 11 and out["n_clusters"] == 6


def test_estimate_with_join_matches_api_and_reports_set_aside(small, capsys, tmp_path):
    rp, bp, merged = small
    target = tmp_path / "out" / "est.json"
    target.parent.mkdir()
    code = main(["estimate", str(rp), "--join", str(bp), "--on", "rid", "-p", "pred", "-r", "truth",
                 "--format", "json", "-o", str(target)])
    assert code == 0 and capsys.readouterr().out == ""
    payload = json.loads(target.read_text())
    api = erx.estimate(merged, prediction="pred", reference="truth")
    assert payload["attrs"]["records_set_aside"] == 1  # r11 has no prediction
    for metric, row in api.iterrows():
        got = payload["estimates"][metric]["estimate"]
        assert (got is None and math.isnan(row.estimate)) or got == pytest.approx(row.estimate)
    assert not list(target.parent.glob("*.tmp"))


def test_estimate_table_output_is_readable(capsys):
    code = main(["estimate", PV + "predictions.parquet", "--join", PV + "benchmark.parquet",
                 "-p", "inventor_id_20220630", "-r", "benchmark_id", "--metrics", "pairwise_precision",
                 "cluster_precision"])
    out = capsys.readouterr().out
    assert code == 0
    assert "pairwise_precision" in out and "95% CI" in out
    assert "[1] warning" in out and "outside [0, 1]" in out  # cluster precision on a block subset
    # what the 401 size-proportional draws cannot show (SPEC 6.1), with the API's numbers
    df = pd.read_parquet(PV + "predictions.parquet").merge(pd.read_parquet(PV + "benchmark.parquet"),
                                                           on="mention_id", how="left")
    api = erx.estimate(df, prediction="inventor_id_20220630", reference="benchmark_id",
                       metrics=["pairwise_precision"]).attrs["blind_spots"]["pairwise_precision"]
    assert f"pairwise_precision: {api['text']}" in out
    assert "Blind spot of the sample: one record of another entity in each of the" in out


def test_csv_output_round_trips(small, capsys):
    rp, _, merged = small
    assert main(["summarize", str(rp), "-c", "pred", "--format", "csv"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == "statistic,value" and lines[1].startswith("n_records,11")


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["summarize", "missing.parquet", "-c", "x"], "missing.parquet: file not found"),
        (["summarize", PV + "predictions.parquet", "-c", "inventor_id_2022063"], "did you mean 'inventor_id_20220630'"),
        (["summarize", PV + "predictions.parquet", "-c", "inventor_id_20220630", "--hill-orders", "-1"], "q >= 0"),
        (["estimate", PV + "predictions.parquet", "--join", PV + "benchmark.parquet", "-p",
          "inventor_id_20220630", "-r", "benchmark_id", "--ci-level", "95"], "ci_level"),
        (["estimate", PV + "predictions.parquet", "--join", PV + "benchmark.parquet", "-p",
          "inventor_id_20220630", "-r", "benchmark_id", "--beta", "0"], "beta"),
        (["estimate", PV + "predictions.parquet", "--join", PV + "benchmark.parquet", "-p",
          "inventor_id_20220630", "-r", "benchmark_id", "--metrics", "pairwise_precison"], "did you mean 'pairwise_precision'"),
        (["summarize", PV + "README.md", "-c", "x"], "use a .parquet or .csv"),
    ],
)
def test_bad_input_exits_2_with_a_clear_message(argv, needle, capsys):
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2
    assert needle in err
    assert "Traceback" not in err


def test_estimate_sets_aside_the_records_the_benchmark_does_not_know(small, capsys, tmp_path):
    """SPEC 14: with the benchmark's ``benchmark_version`` joined, records without it (added after
    labelling) are set aside and counted; ``--known none`` evaluates them; the counts are those of
    the API and of a hand count."""
    rp, _, merged = small
    bench = pd.DataFrame({"rid": [f"r{i}" for i in range(9)],  # r9, r10 (cluster f) added later
                          "truth": ["T1", "T1", "T2", "T3", "T3", None, None, None, "T1"],
                          "benchmark_version": 1})
    bp = tmp_path / "bench_known.parquet"
    bench.to_parquet(bp, index=False)
    base = ["estimate", str(rp), "--join", str(bp), "--on", "rid", "-p", "pred", "-r", "truth"]
    assert main([*base, "--format", "json"]) == 0
    attrs = json.loads(capsys.readouterr().out)["attrs"]
    assert (attrs["records_added"], attrs["records_added_in_sampled"], attrs["benchmark_version"]) == (2, 0, 1)
    df = pd.read_csv(rp).merge(bench, on="rid", how="left")
    api = erx.estimate(df, prediction="pred", reference="truth")
    assert api.attrs["records_added"] == 2 and api.attrs["n_records"] == 9  # 11 in the release, 2 set aside
    assert main(base) == 0
    assert "2 records of the release unknown to the benchmark (not in the release it was labelled or topped up " \
        "on; 0 in the predicted clusters of sampled records) are not evaluated" in capsys.readouterr().out
    assert main([*base, "--known", "none", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["attrs"]["known_column"] is None
    assert main([*base, "--known", "nope"]) == 2
    assert "nope" in capsys.readouterr().err


# -- the join column (no demo default: `--on` used to default to 'mention_id') ---------------


def _two_files(tmp_path, extra_shared: bool = False):
    records = pd.DataFrame({"customer": [f"c{i}" for i in range(6)], "name": list("aabbcc")})
    preds = pd.DataFrame({"customer": [f"c{i}" for i in range(6)], "release_1": ["p1", "p1", "p2", "p2", "p3", "p4"]})
    if extra_shared:
        preds["name"] = records["name"]
    rp, pp = tmp_path / "records.parquet", tmp_path / "predictions.parquet"
    records.to_parquet(rp)
    preds.to_parquet(pp)
    return rp, pp


def test_the_join_column_is_the_one_column_the_files_share(tmp_path, capsys):
    rp, pp = _two_files(tmp_path)
    code = main(["sample", str(rp), "--join", str(pp), "-p", "release_1", "-n", "5", "--seed", "1",
                 "-o", str(tmp_path / "sheet.parquet")])
    assert code == 0, capsys.readouterr().err
    sheet = pd.read_parquet(tmp_path / "sheet.parquet")
    assert set(sheet["record_id"]) <= {f"c{i}" for i in range(6)}


def test_several_shared_columns_need_on_and_the_error_names_them(tmp_path, capsys):
    rp, pp = _two_files(tmp_path, extra_shared=True)
    code = main(["sample", str(rp), "--join", str(pp), "-p", "release_1", "-n", "5", "--seed", "1",
                 "-o", str(tmp_path / "sheet.parquet")])
    err = capsys.readouterr().err
    assert code == 2 and "'customer', 'name'" in err and "--on COLUMN" in err
    assert not (tmp_path / "sheet.parquet").exists()
    # --record-id names the join column when every file has it
    code = main(["sample", str(rp), "--join", str(pp), "--record-id", "customer", "-p", "release_1", "-n", "5",
                 "--seed", "1", "-o", str(tmp_path / "sheet.parquet")])
    assert code == 0, capsys.readouterr().err


def test_a_command_that_needs_a_record_id_asks_for_it(tmp_path, capsys):
    rp, pp = _two_files(tmp_path)
    code = main(["sample", str(pp), "-p", "release_1", "-n", "5", "--seed", "1", "-o", str(tmp_path / "s.parquet")])
    assert code == 2 and "--record-id COLUMN" in capsys.readouterr().err
