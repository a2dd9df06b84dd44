"""A benchmark's life through the documented workflow (issue 27, SPEC 14).

A synthetic population whose truth is known: 20 % of its records arrive after the benchmark is
labelled. The benchmark is labelled on release L (the first 80 %, with lumping and splitting
errors); release T holds every record and is perfect. Run as a new user would — ``sample``, the
worksheet filled in from the truth, ``benchmark``, ``init``, ``run`` with no extra
configuration — the checkpoint must:

* on L, give the estimates of ``erx.estimate`` (which cover L's exact metrics here);
* on T, set the added records aside (predicted clusters restricted to the records known at
  labelling), so that the perfect release reads 1 with an interval reaching 1, where the rule
  turned off reads a confidently wrong precision; and count the added records on the page,
  as counted independently here from the truth.
The same checkpoint on SQLite (the SQL engine) gives the same numbers.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from support.enginetools import spark_available

import er_expectations as erx
from er_expectations.cli.main import main

pytestmark = pytest.mark.slow

PRECISION = "expect_estimated_pairwise_precision_to_be_between"


def _cli(*args: object) -> int:
    return main([str(a) for a in args])


def _population(folder: Path) -> dict[str, object]:
    """~4,000 records of 1,200 entities; the last 20 % of each large entity's records (and some
    whole new entities) arrive after labelling."""
    rng = np.random.default_rng(27)
    sizes = rng.geometric(0.3, size=1200)
    truth = np.repeat(np.arange(len(sizes)), sizes)
    position = np.concatenate([np.arange(s) for s in sizes])
    late = rng.random(len(truth)) < 0.2
    ids = np.arange(len(truth), dtype=np.int64) + (1 << 53) + 1  # ids beyond 2^53 stay exact
    lumped = np.where(truth % 9 == 0, truth + 1, truth)
    split = (truth % 7 == 3) & (position >= 1)
    pred_l = pd.array([f"L{p}" + ("s" if s else "") for p, s in zip(lumped, split, strict=True)], dtype="string")
    pred_l[late] = pd.NA
    pd.DataFrame({"rid": ids, "first": [f"F{t % 17}" for t in truth], "last": [f"S{t // 5}" for t in truth]}) \
        .to_parquet(folder / "records.parquet", index=False)
    pd.DataFrame({"rid": ids, "pred_L": pred_l, "pred_T": [f"T{t}" for t in truth]}) \
        .to_parquet(folder / "predictions.parquet", index=False)
    return {"ids": ids, "truth": truth, "late": late}


def _fill(worksheet: Path, labels: Path, world: dict[str, object]) -> None:
    """The worksheet answered by a labeller who is always right, on the records of L."""
    sheet = pd.read_parquet(worksheet)
    ids, truth, late = world["ids"], world["truth"], world["late"]
    known = pd.Series(truth[~late], index=ids[~late])
    members_of = {key: set(index) for key, index in known.groupby(known).groups.items()}
    removed, added = [], []
    for record, members in zip(sheet["record_id"], sheet["members"], strict=True):
        true = members_of[known[record]]
        removed.append(sorted(set(members) - true))
        added.append(sorted(true - set(members)))
    sheet["removed"], sheet["added"], sheet["labeller"] = removed, added, "truth"
    sheet.to_parquet(labels, index=False)


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> dict[str, object]:
    folder = tmp_path_factory.mktemp("life")
    world = _population(folder)
    common = ["--join", folder / "predictions.parquet", "--on", "rid", "-p", "pred_L"]
    assert _cli("sample", folder / "records.parquet", *common, "-n", 150, "--seed", 11,
                "--columns", "first", "last", "-o", folder / "worksheet.parquet") == 0
    _fill(folder / "worksheet.parquet", folder / "labels.parquet", world)
    assert _cli("benchmark", folder / "labels.parquet", folder / "records.parquet", *common,
                "-o", folder / "benchmark.parquet") == 0
    assert (folder / "benchmark.parquet.manifest.json").is_file()
    assert _cli("init", "--records", folder / "records.parquet", "--id-column", "rid",
                "--predictions", folder / "predictions.parquet", "--prediction-columns", "pred_L", "pred_T",
                "--benchmark", folder / "benchmark.parquet", "--reference-column", "reference",
                "--name-columns", "first", "last", "--dir", folder, "--name", "life") == 0
    return {"folder": folder, **world}


def _results(project_dir: Path) -> dict[str, dict]:
    """The validation results the run wrote, by release label (from the batch's file name)."""
    out: dict[str, dict] = {}
    for path in sorted((project_dir / "gx" / "uncommitted" / "validations").rglob("*.json")):
        data = json.loads(path.read_text())
        label = "T" if "pred_T" in path.as_posix() or "_T" in path.stem else "L"
        for result in data["results"]:
            if result["expectation_config"]["type"] == PRECISION:
                out[label] = result["result"]["details"]
    return out


def _release_frame(folder: Path, column: str) -> pd.DataFrame:
    frame = pd.read_parquet(folder / "predictions.parquet")[["rid", column]]
    return frame.merge(pd.read_parquet(folder / "benchmark.parquet"), on="rid", how="left")


def _expected_counts(project: dict[str, object]) -> tuple[int, int]:
    """Records of T not in L, and those whose T cluster (= true entity) holds a benchmark record."""
    bench = pd.read_parquet(project["folder"] / "benchmark.parquet")
    sampled_records = set(bench.loc[bench["reference"].notna(), "rid"])
    ids, truth, late = project["ids"], project["truth"], project["late"]
    sampled_entities = {t for i, t in zip(ids, truth, strict=True) if i in sampled_records}
    return int(late.sum()), int(sum(1 for t in truth[late] if t in sampled_entities))


def _page_text(project_dir: Path) -> str:
    pages = list((project_dir / "gx" / "uncommitted" / "data_docs" / "local_site" / "validations").rglob("*.html"))
    return "\n".join(re.sub(r"<[^>]+>", " ", p.read_text()) for p in pages)


def test_the_documented_workflow_sets_the_added_records_aside_and_counts_them(project):
    folder = project["folder"]
    assert _cli("run", folder / "checkpoints" / "life.yml", "--no-progress") in (0, 1)
    project_dir = next(folder.rglob("gx")).parent
    got = _results(project_dir)
    added, in_sampled = _expected_counts(project)
    assert added > 500 and in_sampled > 20  # the scenario bites

    # release T: perfect; the added records are set aside and counted
    t = got["T"]
    assert t["records_added"] == added and t["records_added_in_sampled"] == in_sampled
    assert t["benchmark_version"] == 1 and t["known_column"] == "benchmark_version"
    assert t["estimate"] == pytest.approx(1.0, abs=1e-12) and t["ci_upper"] == pytest.approx(1.0, abs=1e-12)
    # the same release with the rule turned off reads a confidently wrong precision
    off = erx.estimate(_release_frame(folder, "pred_T"), prediction="pred_T", reference="reference",
                       draws="draws", known=None, metrics=["pairwise_precision"])
    assert off.loc["pairwise_precision", "ci_upper"] < 0.99

    # release L: nothing added; the checkpoint equals erx.estimate with the draws, which covers L's truth
    lrow = got["L"]
    assert lrow["records_added"] == 0
    expected = erx.estimate(_release_frame(folder, "pred_L"), prediction="pred_L", reference="reference",
                            draws="draws", metrics=["pairwise_precision"])
    for field in ("estimate", "std_error", "ci_lower", "ci_upper"):
        assert lrow[field] == pytest.approx(float(expected.loc["pairwise_precision", field]), abs=1e-12)
    truth_l = pd.read_parquet(folder / "predictions.parquet")
    truth_l["truth"] = project["truth"]
    exact = erx.exact_metrics(truth_l[truth_l["pred_L"].notna()], prediction="pred_L", reference="truth")
    assert lrow["ci_lower"] <= exact["pairwise_precision"] <= lrow["ci_upper"]

    # the page says it, in words an auditor reads
    text = _page_text(project_dir)
    assert (f"{added:,} records of this release are unknown to the benchmark (not in the release it was labelled "
            f"or topped up on; {in_sampled:,} of them in the predicted clusters of sampled records); they are not "
            "evaluated") in text
    assert "every record of this release was known when the benchmark was labelled" in text


def test_a_sql_checkpoint_applies_the_rule_with_no_new_configuration(project, tmp_path):
    """The same tables in SQLite, read by the SQL engine: the same counts and estimates."""
    folder = project["folder"]
    db = tmp_path / "er.sqlite"
    with sqlite3.connect(db) as con:
        for name in ("records", "predictions", "benchmark"):
            pd.read_parquet(folder / f"{name}.parquet").to_sql(name, con, index=False)
    checkpoint = tmp_path / "life_sql.yml"
    checkpoint.write_text(f"""checkpoint: life_sql
project_dir: gx_sql
data:
  engine: sql
  connection: {{url: "sqlite:///{db}"}}
  records: {{table: records, id_column: rid}}
  predictions: {{table: predictions, id_column: rid, columns: [pred_L, pred_T]}}
  benchmark: {{table: benchmark, id_column: rid, reference_column: reference}}
  name: {{columns: [first, last]}}
releases: all
suites: [life]
suite_paths: [{folder / 'suites'}]
""")
    suite = (folder / "suites" / "life.yml").read_text()
    assert "known_column" not in suite  # nothing to configure
    code = _cli("run", checkpoint, "--no-progress")
    assert code in (0, 1)
    got = _results(tmp_path / "gx_sql")
    added, in_sampled = _expected_counts(project)
    assert got["T"]["records_added"] == added and got["T"]["records_added_in_sampled"] == in_sampled
    assert got["T"]["estimate"] == pytest.approx(1.0, abs=1e-12)
    expected = erx.estimate(_release_frame(folder, "pred_L"), prediction="pred_L", reference="reference",
                            draws="draws", metrics=["pairwise_precision"])
    for field in ("estimate", "std_error", "ci_lower", "ci_upper"):
        assert got["L"][field] == pytest.approx(float(expected.loc["pairwise_precision", field]), abs=1e-12)


def test_a_benchmark_changed_after_it_was_written_is_refused(project, tmp_path, capsys):
    """SPEC 14.4: rows of the labelling universe dropped from the file (its manifest no longer
    matches) stop the run before anything is validated, naming the file and the fix."""
    folder = project["folder"]
    copy = tmp_path / "life"
    copy.mkdir()
    for name in ("records.parquet", "predictions.parquet", "benchmark.parquet.manifest.json"):
        (copy / name).write_bytes((folder / name).read_bytes())
    bench = pd.read_parquet(folder / "benchmark.parquet")
    bench.iloc[:-10].to_parquet(copy / "benchmark.parquet", index=False)  # ten known records lost
    (copy / "checkpoints").mkdir()
    (copy / "suites").mkdir()
    (copy / "suites" / "life.yml").write_bytes((folder / "suites" / "life.yml").read_bytes())
    (copy / "checkpoints" / "life.yml").write_bytes((folder / "checkpoints" / "life.yml").read_bytes())
    assert _cli("run", copy / "checkpoints" / "life.yml", "--no-progress") == 2
    err = capsys.readouterr().err
    assert "benchmark.parquet" in err and "changed after it was written" in err and "Traceback" not in err
    assert not (copy / "gx_project").exists() or not list((copy / "gx_project").rglob("*.html"))


def test_a_spark_checkpoint_applies_the_rule_with_no_new_configuration(project, tmp_path):
    """The same files read by the Spark engine (the benchmark by a query): the same counts and
    estimates as erx.estimate."""
    if not spark_available():  # in CI a missing pyspark is an error, not a skip
        pytest.skip("pyspark is not installed")
    folder = project["folder"]
    checkpoint = tmp_path / "life_spark.yml"
    checkpoint.write_text(f"""checkpoint: life_spark
project_dir: gx_spark
data:
  engine: spark
  records: {{path: {folder / 'records.parquet'}, id_column: rid}}
  predictions: {{path: {folder / 'predictions.parquet'}, id_column: rid, columns: [pred_L, pred_T]}}
  benchmark: {{query: "select * from parquet.`{folder / 'benchmark.parquet'}`", id_column: rid, reference_column: reference}}
  name: {{columns: [first, last]}}
releases: all
suites: [life]
suite_paths: [{folder / 'suites'}]
""")
    assert _cli("run", checkpoint, "--no-progress") in (0, 1)
    got = _results(tmp_path / "gx_spark")
    added, in_sampled = _expected_counts(project)
    assert got["T"]["records_added"] == added and got["T"]["records_added_in_sampled"] == in_sampled
    assert got["T"]["estimate"] == pytest.approx(1.0, abs=1e-12)
    expected = erx.estimate(_release_frame(folder, "pred_L"), prediction="pred_L", reference="reference",
                            draws="draws", metrics=["pairwise_precision"])
    for field in ("estimate", "std_error", "ci_lower", "ci_upper"):
        assert got["L"][field] == pytest.approx(float(expected.loc["pairwise_precision", field]), abs=1e-12)
