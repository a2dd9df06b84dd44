"""``er-expectations topup list|apply`` (SPEC 14.3), run as a new user would.

The done-when scenario of issue 27: a synthetic population with known truth, a labelling
release L (80 % of the records) and a later release T (every record). ``sample`` on L, the
worksheet answered from the truth, ``benchmark``; T is estimated on the records known at
labelling (the added records counted); ``topup list`` on T, ``belongs`` answered from the
truth, ``topup apply``; T is then estimated on every record. With a perfect prediction every
estimate is exactly 1 and covers the truth; with an imperfect one, the benchmark sample after
the top-up is the one the truth gives for the same sampled entities. Then the hostile runs:
exit code 2, a message naming the problem and its fix, nothing written.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pandas as pd
import pytest
from support import topuptools

import er_expectations as erx
from er_expectations.analysis.benchmark_life import manifest_path
from er_expectations.cli.common import EXIT_OK, EXIT_USAGE
from er_expectations.cli.main import main
from er_expectations.core.io import read_table
from er_expectations.engines.pandas.release import benchmark_sample

#: the metrics whose estimate is exactly 1 when the sampled clusters hold no error (SPEC 5: ratios of
#: error counts); cluster precision and recall estimate the number of correct clusters from the sample
EXACT = ["pairwise_precision", "pairwise_recall", "b_cubed_precision", "b_cubed_recall"]
METRICS = [*EXACT, "cluster_precision", "cluster_recall"]


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    """Run a command; the records here name themselves by ``mention_id`` (given as a user gives it)."""
    argv = tuple(argv)
    if argv[0] in {"sample", "benchmark", "topup"} and "--record-id" not in argv:
        argv = (*argv, "--record-id", "mention_id")
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def labelled(tmp_path: Path, capsys, *, perfect: bool, seed: int = 7) -> tuple[pd.DataFrame, Path]:
    """The records (with their truth), and the benchmark labelled on L through the CLI."""
    records = topuptools.population(seed, entities=200, perfect=perfect)
    files = tmp_path / "records.parquet"
    records.drop(columns="truth").to_parquet(files, index=False)  # a user's records hold no truth
    code, out, err = cli(capsys, "sample", files, "-p", "pred_L", "-n", 80, "--seed", seed, "--columns", "name",
                         "-o", tmp_path / "sheet.parquet")
    assert code == EXIT_OK, err
    labels = topuptools.fill_sample(pd.read_parquet(tmp_path / "sheet.parquet"), records, "pred_L")
    labels.to_parquet(tmp_path / "labels.parquet", index=False)
    code, out, err = cli(capsys, "benchmark", tmp_path / "labels.parquet", files, "-p", "pred_L",
                         "-o", tmp_path / "bench.parquet")
    assert code == EXIT_OK, err
    return records, files


def estimate_t(records: pd.DataFrame, bench: Path) -> pd.DataFrame:
    df = records.merge(pd.read_parquet(bench), on="mention_id", how="left")
    return erx.estimate(df, prediction="pred_T", reference="reference", draws="draws", known="auto", seed=1)


def top_up(tmp_path: Path, capsys, records: pd.DataFrame, files: Path) -> tuple[str, str]:
    """``topup list`` (a CSV worksheet, as a labeller opens it), the answers, ``topup apply``."""
    sheet = tmp_path / "topup.csv"
    code, out_list, err = cli(capsys, "topup", "list", tmp_path / "bench.parquet", files, "-p", "pred_T",
                              "--name", "name", "--columns", "name", "-o", sheet)
    assert code == EXIT_OK, err
    filled = topuptools.fill_topup(read_table(sheet), pd.read_parquet(tmp_path / "bench.parquet"), records)
    filled.to_csv(sheet, index=False)
    code, out_apply, err = cli(capsys, "topup", "apply", tmp_path / "bench.parquet", sheet, files, "-p", "pred_T",
                               "-o", tmp_path / "bench2.parquet")
    assert code == EXIT_OK, err
    return out_list, out_apply


def test_the_life_of_a_benchmark_with_a_perfect_later_release(tmp_path, capsys):
    records, files = labelled(tmp_path, capsys, perfect=True)
    added = int(records["pred_L"].isna().sum())
    assert added > 0
    before = estimate_t(records, tmp_path / "bench.parquet")
    assert before.attrs["records_added"] == added and before.attrs["benchmark_version"] == 1
    assert before.attrs["records_added_in_sampled"] > 0
    for m in METRICS:  # the rule of SPEC 14.2: the added records are set aside, T still reads as perfect
        assert before.at[m, "ci_lower"] <= 1.0 <= before.at[m, "ci_upper"], m
    unknown_set_aside = records.merge(pd.read_parquet(tmp_path / "bench.parquet"), on="mention_id", how="left")
    wrong = erx.estimate(unknown_set_aside, prediction="pred_T", reference="reference", draws="draws", known=None)
    assert wrong.at["pairwise_precision", "estimate"] < 1.0  # what a top-up is for: without the rule, T reads wrong
    v1 = sha(tmp_path / "bench.parquet")

    out_list, out_apply = top_up(tmp_path, capsys, records, files)
    found = re.search(r"^([\d,]+) records of release 'pred_T' are unknown to the benchmark \(version 1\): "
                      r"not in the release it was labelled or topped up on; ([\d,]+) of them sit in the predicted clusters of ([\d,]+) sampled entities; "
                      r"([\d,]+) candidates \((\d+) of them by name\) written to .*topup.csv: fill 'belongs' with yes "
                      r"or no", out_list)
    assert found, out_list
    assert int(found.group(1)) == added
    assert int(found.group(2)) == before.attrs["records_added_in_sampled"]  # the page's count, the same records
    sheet = read_table(tmp_path / "topup.csv")
    assert int(found.group(4)) == len(sheet) and int(found.group(3)) == sheet.loc[
        sheet["reason"] == "predicted with the entity", "entity"].nunique()
    assert set(sheet["belongs"]) <= {"yes", "no"}
    assert "benchmark version 2 written to" in out_apply and "is unchanged" in out_apply

    # the input benchmark is untouched; version 2 and its manifest say what they were made of
    assert sha(tmp_path / "bench.parquet") == v1
    manifest = json.loads(manifest_path(tmp_path / "bench2.parquet").read_text())
    assert [v["version"] for v in manifest["versions"]] == [1, 2]
    latest = manifest["versions"][-1]
    assert latest["release"] == "pred_T" and latest["known_records"] == len(records)
    assert latest["records_added_by_this_version"] == added
    assert latest["source"]["worksheet"]["sha256"] == sha(tmp_path / "topup.csv")
    assert latest["source"]["benchmark"]["sha256"] == v1
    assert latest["source"]["answers"]["yes"] == int((sheet["belongs"] == "yes").sum())

    after = estimate_t(records, tmp_path / "bench2.parquet")
    assert after.attrs["records_added"] == 0 and after.attrs["benchmark_version"] == 2
    exact = erx.exact_metrics(records, prediction="pred_T", reference="truth")
    for m in METRICS:  # every sampled cluster is complete on T: the intervals cover the truth, 1
        assert exact[m] == 1.0
        assert after.at[m, "ci_lower"] <= 1.0 <= after.at[m, "ci_upper"], m
    for m in EXACT:  # and a release without an error in the sampled clusters reads exactly 1
        assert after.at[m, "estimate"] == 1.0, m
    # nothing is left to top up
    code, out, err = cli(capsys, "topup", "list", tmp_path / "bench2.parquet", files, "-p", "pred_T",
                         "-o", tmp_path / "again.csv")
    assert code == EXIT_OK and "nothing to top up" in out and not (tmp_path / "again.csv").exists()


def test_after_a_top_up_an_imperfect_release_is_evaluated_on_the_truth_of_its_records(tmp_path, capsys):
    records, files = labelled(tmp_path, capsys, perfect=False, seed=11)
    top_up(tmp_path, capsys, records, files)
    v1 = pd.read_parquet(tmp_path / "bench.parquet")
    joined = records.merge(pd.read_parquet(tmp_path / "bench2.parquet"), on="mention_id", how="left")
    after = benchmark_sample(joined, prediction="pred_T", reference="reference", draws="draws")
    # brute force: the truth on T for the same sampled entities, with the same draws
    bench = v1[v1["reference"].notna()]
    truth_of = dict(zip(records["mention_id"], records["truth"], strict=True))
    entity = {truth_of[r]: e for r, e in zip(bench["mention_id"], bench["reference"], strict=True)}
    direct = records.assign(reference=records["truth"].map(entity))
    direct["draws"] = direct["reference"].map(dict(zip(bench["reference"], bench["draws"], strict=True)))
    truth = benchmark_sample(direct, prediction="pred_T", reference="reference", draws="draws", known=None)
    assert after.records_added == 0
    assert sorted(map(str, after.labels)) == sorted(map(str, truth.labels))
    order = {str(lab): i for i, lab in enumerate(truth.labels)}
    idx = [order[str(lab)] for lab in after.labels]
    assert after.size.tolist() == truth.size[idx].tolist() and after.draws.tolist() == truth.draws[idx].tolist()
    assert (after.n_records, after.n_clusters) == (truth.n_records, truth.n_clusters)
    est = estimate_t(records, tmp_path / "bench2.parquet")
    # the draws picked records of L, so an entity was drawn with probability ∝ its records in L:
    # w = 1 / |c ∩ L|, whatever the top-up added (SPEC 14.3)
    in_l = records["pred_L"].notna()
    direct["w_drawn"] = 1.0 / direct["truth"].map(records.loc[in_l, "truth"].value_counts())
    ref = erx.estimate(direct, prediction="pred_T", reference="reference", draws="draws", known=None, seed=1,
                       weights={"column": "w_drawn"})
    pd.testing.assert_frame_equal(est[["estimate", "std_error"]], ref[["estimate", "std_error"]])


@pytest.fixture()
def listed(tmp_path, capsys):
    """A benchmark labelled on L and the answered top-up worksheet of T (not yet applied)."""
    records, files = labelled(tmp_path, capsys, perfect=True, seed=3)
    sheet = tmp_path / "topup.csv"
    code, _, err = cli(capsys, "topup", "list", tmp_path / "bench.parquet", files, "-p", "pred_T", "-o", sheet)
    assert code == EXIT_OK, err
    filled = topuptools.fill_topup(read_table(sheet), pd.read_parquet(tmp_path / "bench.parquet"), records)
    filled.to_csv(sheet, index=False)
    return records, files, sheet


def refused(capsys, output: Path, *argv, match: str) -> None:
    existed = output.exists()
    before = sha(output) if existed else None
    code, out, err = cli(capsys, *argv)
    assert code == EXIT_USAGE, (out, err)
    assert re.search(match, err), err
    assert "Traceback" not in err
    assert (sha(output) if output.exists() else None) == before and output.exists() == existed


def test_apply_refuses_hostile_runs_and_writes_nothing(tmp_path, capsys, listed):
    records, files, sheet = listed
    bench, out = tmp_path / "bench.parquet", tmp_path / "bench2.parquet"
    apply = ("topup", "apply", bench, sheet, files, "-p", "pred_T", "-o")
    # the input benchmark is never overwritten, even with --force
    refused(capsys, bench, *apply, bench, "--force", match=r"is also an input of the command")
    # an unanswered row
    filled = read_table(sheet)
    blank = filled.copy()
    blank.loc[0, "belongs"] = None
    blank.to_csv(tmp_path / "blank.csv", index=False)
    refused(capsys, out, "topup", "apply", bench, tmp_path / "blank.csv", files, "-p", "pred_T", "-o", out,
            match=r"1 of the worksheet's \d+ rows are not answered: row 1 \(entity .*fill 'belongs' with yes or no")
    # another release's records
    refused(capsys, out, "topup", "apply", bench, sheet, files, "-p", "pred_L", "-o", out,
            match=r"made for release 'pred_T'.*not for 'pred_L'")
    # an existing output without --force
    out.write_bytes(b"keep me")
    refused(capsys, out, *apply, out, match=r"the file exists")
    out.unlink()
    # a benchmark changed after it was written
    damaged = tmp_path / "damaged.parquet"
    pd.read_parquet(bench).iloc[:-1].to_parquet(damaged, index=False)
    manifest_path(damaged).write_text(manifest_path(bench).read_text())
    refused(capsys, out, "topup", "apply", damaged, sheet, files, "-p", "pred_T", "-o", out,
            match=r"damaged.parquet: the benchmark's known records .* the file was changed after it was written")
    refused(capsys, tmp_path / "w.csv", "topup", "list", damaged, files, "-p", "pred_T", "-o", tmp_path / "w.csv",
            match=r"the file was changed after it was written")
    # applied once: the same worksheet on the new version is stale
    code, _, err = cli(capsys, *apply, out)
    assert code == EXIT_OK, err
    refused(capsys, tmp_path / "bench3.parquet", "topup", "apply", out, sheet, files, "-p", "pred_T",
            "-o", tmp_path / "bench3.parquet",
            match=r"made for version 1 of the benchmark .*at version 2.*stale.*topup list")
    assert not manifest_path(tmp_path / "bench3.parquet").exists()


def test_list_refuses_bad_options(tmp_path, capsys, listed):
    records, files, sheet = listed
    bench, out = tmp_path / "bench.parquet", tmp_path / "w.parquet"
    refused(capsys, out, "topup", "list", bench, files, "-p", "pred_X", "-o", out, match=r"'pred_X'")
    refused(capsys, out, "topup", "list", bench, files, "-p", "pred_T", "--name", "nom", "-o", out,
            match=r"'nom'")
    refused(capsys, out, "topup", "list", bench, files, "-p", "pred_T", "--record-id", "name", "-o", out,
            match=r"manifest says the record id column is 'mention_id'.*--record-id mention_id")
    refused(capsys, sheet, "topup", "list", bench, files, "-p", "pred_T", "-o", sheet, match=r"the file exists")


def test_a_csv_benchmark_of_integer_ids_is_topped_up_twice(tmp_path, capsys):
    """A CSV benchmark holds its integer ids as text: they are read back as the records' integers
    (its manifest's fingerprint matches), and version 2 knows every record of release T."""
    files = tmp_path / "ints.parquet"
    pd.DataFrame({"mention_id": [1, 2, 3, 4, 5], "pred_L": ["P", "P", "Q", None, None],
                  "pred_T": ["P", "P", "Q", "P", "S"], "pred_U": ["P", "P", "Q", "P", "P"]}).to_parquet(files)
    pd.DataFrame({"draw": [1], "record_id": [1], "removed": [[]], "added": [[]]}).to_parquet(tmp_path / "l.parquet")
    assert cli(capsys, "benchmark", tmp_path / "l.parquet", files, "-p", "pred_L", "-o", tmp_path / "b.csv")[0] == 0
    code, out, err = cli(capsys, "topup", "list", tmp_path / "b.csv", files, "-p", "pred_T", "-o", tmp_path / "t.csv")
    assert code == EXIT_OK, err
    assert out.startswith("2 records of release 'pred_T' are unknown to the benchmark") and "1 candidates written" in out
    sheet = read_table(tmp_path / "t.csv")
    assert sheet[["entity", "mention_id", "belongs"]].fillna("").values.tolist() == [["draw-1", "4", ""]]
    sheet.assign(belongs="yes").to_csv(tmp_path / "t.csv", index=False)
    code, out, err = cli(capsys, "topup", "apply", tmp_path / "b.csv", tmp_path / "t.csv", files, "-p", "pred_T",
                         "-o", tmp_path / "b2.csv")
    assert code == EXIT_OK, err
    b2 = read_table(tmp_path / "b2.csv")
    assert b2.fillna("").values.tolist() == [["1", "draw-1", "1", "0.5", "1"], ["2", "draw-1", "1", "0.5", "1"],
                                             ["3", "", "", "", "1"], ["4", "draw-1", "1", "0.5", "2"],
                                             ["5", "", "", "", "2"]]
    code, out, err = cli(capsys, "topup", "list", tmp_path / "b2.csv", files, "-p", "pred_U", "-o", tmp_path / "u.csv")
    assert code == EXIT_OK and "nothing to top up" in out, err
