"""``init`` wires what ``benchmark`` writes (issue 27 item 3), and ``run`` refuses a suite that
ignores it.

The documented sequence (docs/getting-started.md, docs/cli.md) is run as a new user would on
a synthetic population whose truth is known: ``sample`` (with replacement: some true clusters
are drawn twice), the worksheet filled in from the truth, ``benchmark``, ``init``, ``run``.
The checkpoint's estimates (the validation results the run writes) must equal
``erx.estimate`` on the same data with the benchmark's draws and design, to 1e-12.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import er_expectations as erx
from er_expectations.cli.main import main
from er_expectations.gx.metrics import release as gx_release

METRICS = {  # expectation type (+ statistic) -> metric of erx.estimate
    ("expect_estimated_pairwise_precision_to_be_between", None): "pairwise_precision",
    ("expect_estimated_pairwise_recall_to_be_between", None): "pairwise_recall",
    ("expect_estimated_b_cubed_f_to_be_between", None): "b_cubed_f",
    ("expect_statistic_to_match_benchmark_estimate", "average_cluster_size"): "average_cluster_size",
    ("expect_statistic_to_match_benchmark_estimate", "matching_rate"): "matching_rate",
}
FIELDS = ("estimate", "std_error", "ci_lower", "ci_upper")


def _population(folder: Path) -> None:
    """About 430 records of 120 true entities; the prediction lumps every tenth entity into the
    next one and splits every seventh (from its second record on)."""
    rng = np.random.default_rng(7)
    sizes = rng.integers(1, 7, size=120)
    truth = np.repeat(np.arange(len(sizes)), sizes)
    ids = [f"m{i:04d}" for i in range(len(truth))]
    firsts = ["Ann", "Bo", "Cy", "Di", "Ed", "Fa", "Gu", "Ha", "Io", "Jo", "Ka", "Li"]
    position = np.concatenate([np.arange(s) for s in sizes])
    lumped = np.where(truth % 10 == 0, truth + 1, truth)
    split = (truth % 7 == 3) & (position >= 1)
    prediction = [f"p{p}" + ("b" if s else "") for p, s in zip(lumped, split, strict=True)]
    pd.DataFrame({"mention_id": ids, "first": [firsts[t % 12] for t in truth],
                  "last": [f"N{t // 3}" for t in truth]}).to_parquet(folder / "records.parquet", index=False)
    pd.DataFrame({"mention_id": ids, "pred_2024": prediction}).to_parquet(folder / "predictions.parquet", index=False)
    pd.DataFrame({"mention_id": ids, "truth": [f"E{t}" for t in truth]}).to_parquet(folder / "truth.parquet",
                                                                                   index=False)
    # the ER system's match probabilities (for the expected-errors design): every pair of a
    # predicted cluster, sure for a true match and unsure otherwise, and a few missed matches
    pairs = []
    frame = pd.DataFrame({"id": ids, "pred": prediction, "truth": truth})
    for _, members in frame.groupby("pred"):
        rows = members.to_numpy()
        for i in range(len(rows)):
            for j in range(i + 1, len(rows)):
                pairs.append((rows[i][0], rows[j][0], 0.95 if rows[i][2] == rows[j][2] else 0.55))
    for _, members in frame.groupby("truth"):
        rows = members.to_numpy()
        pairs += [(rows[0][0], row[0], 0.45) for row in rows[1:] if row[1] != rows[0][1]]
    pd.DataFrame(pairs, columns=["record_a", "record_b", "p"]).to_parquet(folder / "pairs.parquet", index=False)


def _fill(worksheet: Path, labels: Path, truth_file: Path) -> None:
    """The worksheet answered from the truth: the drawn record's true cluster, member by member."""
    sheet = pd.read_parquet(worksheet)
    truth = pd.read_parquet(truth_file).set_index("mention_id")["truth"]
    members_of = {key: set(index) for key, index in truth.groupby(truth).groups.items()}
    removed, added = [], []
    for record, members in zip(sheet["record_id"], sheet["members"], strict=True):
        true = members_of[truth[record]]
        removed.append(sorted(set(members) - true))
        added.append(sorted(true - set(members)))
    sheet["removed"], sheet["added"], sheet["labeller"] = removed, added, "truth"
    sheet.to_parquet(labels, index=False)


def _cli(*args: object) -> int:
    return main([str(a) for a in args])


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Path:
    """The population, and a size-design and an expected-errors benchmark built by the CLI."""
    folder = tmp_path_factory.mktemp("population")
    _population(folder)
    common = ["--join", folder / "predictions.parquet", "--on", "mention_id", "-p", "pred_2024"]
    assert _cli("sample", folder / "records.parquet", *common, "-n", 80, "--seed", 3,
                "--columns", "first", "last", "-o", folder / "worksheet.parquet") == 0
    _fill(folder / "worksheet.parquet", folder / "labels.parquet", folder / "truth.parquet")
    assert _cli("benchmark", folder / "labels.parquet", folder / "records.parquet", *common,
                "-o", folder / "benchmark.parquet") == 0
    ee = ["--design", "expected_errors", "--match-probabilities", folder / "pairs.parquet", "--floor", 0.2]
    assert _cli("sample", folder / "records.parquet", *common, "-n", 70, "--seed", 5, *ee,
                "-o", folder / "worksheet_ee.parquet") == 0
    _fill(folder / "worksheet_ee.parquet", folder / "labels_ee.parquet", folder / "truth.parquet")
    assert _cli("benchmark", folder / "labels_ee.parquet", folder / "records.parquet", *common, *ee,
                "-o", folder / "benchmark_ee.parquet") == 0
    return folder


def _init(world: Path, benchmark: Path, target: Path, *extra: object) -> int:
    return _cli("init", "--records", world / "records.parquet", "--id-column", "mention_id",
                "--predictions", world / "predictions.parquet", "--prediction-columns", "pred_2024",
                "--benchmark", benchmark, "--reference-column", "reference",
                "--name-columns", "first", "last", "--dir", target, "--name", "synth", *extra)


def _checkpoint_estimates(project: Path) -> dict[str, dict[str, float]]:
    """The estimates of the validation results ``run`` wrote, by metric."""
    files = sorted((project / "gx_project" / "gx" / "uncommitted" / "validations").rglob("*.json"))
    assert len(files) == 1, files
    out: dict[str, dict[str, float]] = {}
    for result in json.loads(files[0].read_text())["results"]:
        config = result["expectation_config"]
        metric = METRICS.get((config["type"], config["kwargs"].get("statistic")))
        if metric is not None:
            details = result["result"]["details"]
            out[metric] = {field: details[field] for field in FIELDS} | {"draws": details["draws"],
                                                                         "ci_method": details["ci_method"]}
    assert set(out) == set(METRICS.values()), out
    return out


def _release(world: Path, benchmark: Path) -> pd.DataFrame:
    records = pd.read_parquet(world / "records.parquet")
    frame = pd.read_parquet(world / "predictions.parquet").merge(records, on="mention_id")
    bench = pd.read_parquet(benchmark) if benchmark.suffix == ".parquet" else pd.read_csv(benchmark)
    return frame.merge(bench, on="mention_id", how="left")


def _same(checkpoint: dict[str, dict[str, float]], expected: pd.DataFrame) -> None:
    for metric, values in checkpoint.items():
        for field in FIELDS:
            assert values[field] == pytest.approx(float(expected.loc[metric, field]), abs=1e-12, rel=0), \
                (metric, field)
        assert values["draws"] == int(expected.loc[metric, "draws"])


def _run(checkpoint: Path) -> int:
    return _cli("run", checkpoint, "--no-progress")


# -- the documented sequence ---------------------------------------------------------------


def test_init_on_a_benchmark_output_gives_the_estimates_of_erx_estimate_with_its_draws(world, tmp_path, capsys):
    bench = pd.read_parquet(world / "benchmark.parquet")
    assert bench.groupby("reference")["draws"].first().max() > 1  # some true cluster drawn twice
    assert _init(world, world / "benchmark.parquet", tmp_path) == 0
    suite = (tmp_path / "suites" / "synth.yml").read_text()
    assert "  draws_column: draws\n" in suite and "  weights: cluster_size" in suite
    assert "counts twice" in suite  # the choice is explained in a comment
    assert "'draws' (draws_column)" in (tmp_path / "checkpoints" / "synth.yml").read_text()
    assert _run(tmp_path / "checkpoints" / "synth.yml") in (0, 1)
    got = _checkpoint_estimates(tmp_path)
    df = _release(world, world / "benchmark.parquet")
    expected = erx.estimate(df, prediction="pred_2024", reference="reference", weights="cluster_size",
                            draws="draws", record_id="mention_id")
    _same(got, expected)
    assert got["pairwise_precision"]["draws"] == 80
    # the draws make a difference here: the test would fail if init left them out
    once = erx.estimate(df, prediction="pred_2024", reference="reference", weights="cluster_size")
    assert abs(once.loc["pairwise_precision", "estimate"] - got["pairwise_precision"]["estimate"]) > 1e-4


def test_init_on_an_expected_errors_benchmark_uses_its_weight_column(world, tmp_path, capsys):
    assert "inclusion" in pd.read_parquet(world / "benchmark_ee.parquet").columns
    assert _init(world, world / "benchmark_ee.parquet", tmp_path) == 0
    suite = (tmp_path / "suites" / "synth.yml").read_text()
    assert "  weights: {column: weight}\n" in suite and "  draws_column: draws\n" in suite
    assert "expected errors" in suite
    assert _run(tmp_path / "checkpoints" / "synth.yml") in (0, 1)
    got = _checkpoint_estimates(tmp_path)
    df = _release(world, world / "benchmark_ee.parquet")
    expected = erx.estimate(df, prediction="pred_2024", reference="reference", weights={"column": "weight"},
                            draws="draws", record_id="mention_id")
    _same(got, expected)
    sized = erx.estimate(df, prediction="pred_2024", reference="reference", weights="cluster_size", draws="draws")
    assert abs(sized.loc["pairwise_precision", "estimate"] - got["pairwise_precision"]["estimate"]) > 1e-4


def test_a_csv_benchmark_without_metadata_is_read_from_its_columns(world, tmp_path, capsys):
    """CSV keeps no metadata: the column ``inclusion`` tells the expected-errors design."""
    bench = tmp_path / "benchmark_ee.csv"
    pd.read_parquet(world / "benchmark_ee.parquet").to_csv(bench, index=False)
    assert _init(world, bench, tmp_path / "p") == 0
    suite = (tmp_path / "p" / "suites" / "synth.yml").read_text()
    assert "  weights: {column: weight}\n" in suite and "its column 'inclusion'" in suite


def test_an_older_benchmark_without_draws_works_as_before(world, tmp_path, capsys):
    older = tmp_path / "older.parquet"
    bench = pd.read_parquet(world / "benchmark.parquet")[["mention_id", "reference"]]
    bench.assign(benchmark_version=2, known_since="2024-01-01").to_parquet(older, index=False)  # other columns
    assert _init(world, older, tmp_path) == 0
    suite = (tmp_path / "suites" / "synth.yml").read_text()
    assert "draws_column" not in suite and "  weights: cluster_size" in suite
    assert _run(tmp_path / "checkpoints" / "synth.yml") in (0, 1)
    assert "configuration problem" not in capsys.readouterr().err
    expected = erx.estimate(_release(world, older), prediction="pred_2024", reference="reference",
                            weights="cluster_size")
    _same(_checkpoint_estimates(tmp_path), expected)


@pytest.mark.parametrize("draws", [False, True])
def test_the_checkpoints_bca_limits_are_those_of_erx_estimate(world, tmp_path, capsys, monkeypatch, draws):
    """Issue 28: with BCa in every estimate check (``ci_method: bca``; the statistic checks,
    which take no ``ci_method``, by the metric's default), the checkpoint's limits equal
    ``erx.estimate(..., ci_method="bca")``'s (both seeded by DEFAULT_SEED) to 1e-13. Without
    replicates equal to the estimate up to rounding counted as ties in BCa's z0, the lower
    limit of the average cluster size differed by 1.9e-4 on the benchmark without draws
    (2.859504 against 2.859317); with them the largest difference is 1.3e-15."""
    bench = world / "benchmark.parquet"
    if not draws:
        bench = tmp_path / "older.parquet"
        pd.read_parquet(world / "benchmark.parquet")[["mention_id", "reference"]].to_parquet(bench, index=False)
    assert _init(world, bench, tmp_path) == 0
    suite = tmp_path / "suites" / "synth.yml"
    lines = []
    for line in suite.read_text().splitlines(keepends=True):
        lines.append(line)
        stripped = line.lstrip()
        if stripped.startswith("- expectation: expect_estimated_"):
            lines.append(" " * (len(line) - len(stripped) + 2) + "ci_method: bca\n")
    suite.write_text("".join(lines))
    assert "ci_method: bca" in suite.read_text()
    monkeypatch.setattr(gx_release, "DEFAULT_CI_METHOD", "bca")  # what a default of BCa gives them
    assert _run(tmp_path / "checkpoints" / "synth.yml") in (0, 1)
    assert "configuration problem" not in capsys.readouterr().err
    got = _checkpoint_estimates(tmp_path)
    expected = erx.estimate(_release(world, bench), prediction="pred_2024", reference="reference",
                            weights="cluster_size", draws="draws" if draws else None, record_id="mention_id",
                            ci_method="bca")
    worst = 0.0
    for metric, values in got.items():
        assert values["ci_method"] == expected.loc[metric, "ci_method"] in ("bca", "zero_event"), metric
        for field in FIELDS:
            assert values[field] == pytest.approx(float(expected.loc[metric, field]), abs=1e-13, rel=0), \
                (metric, field)
            worst = max(worst, abs(values[field] - float(expected.loc[metric, field])))
    assert got["average_cluster_size"]["ci_method"] == "bca"
    assert worst < 1e-13


# -- hostile files ------------------------------------------------------------------------


def test_init_refuses_a_draws_column_of_text_naming_the_line(world, tmp_path, capsys):
    bench = pd.read_parquet(world / "benchmark.parquet")
    bench["draws"] = bench["draws"].astype(str)
    bench.loc[3, "draws"] = "two"
    path = tmp_path / "benchmark.csv"
    bench.to_csv(path, index=False)
    assert _init(world, path, tmp_path / "p") == 2
    err = capsys.readouterr().err
    assert f"{path}:5: column 'draws' holds 'two'" in err and "whole number" in err
    assert "nothing was written" in err and not (tmp_path / "p").exists()


def test_run_refuses_a_draws_column_of_text_with_the_checkpoint_line(world, tmp_path, capsys):
    assert _init(world, world / "benchmark.parquet", tmp_path) == 0
    bench = pd.read_parquet(world / "benchmark.parquet")
    bench["draws"] = bench["draws"].astype(str)
    bench.loc[0, "draws"] = "0.5"
    path = tmp_path / "bad.csv"
    bench.to_csv(path, index=False)
    checkpoint = tmp_path / "checkpoints" / "synth.yml"
    checkpoint.write_text(checkpoint.read_text().replace(_relative_benchmark(checkpoint), str(path)))
    capsys.readouterr()
    assert _run(checkpoint) == 2
    err = capsys.readouterr().err
    assert "checkpoints/synth.yml:" in err and "column 'draws' holds '0.5'" in err
    assert not (tmp_path / "gx_project").exists()


def _relative_benchmark(checkpoint: Path) -> str:
    for line in checkpoint.read_text().splitlines():
        if line.strip().startswith("path:") and "benchmark" in line:
            return line.split("path:", 1)[1].strip()
    raise AssertionError("no benchmark path in the checkpoint")


# -- run refuses a suite that ignores the benchmark's draws or design -------------------------


def _without(suite: Path, text: str, replacement: str = "") -> None:
    content = suite.read_text()
    assert text in content
    suite.write_text(content.replace(text, replacement))


def test_run_refuses_a_suite_without_draws_column_naming_the_line_to_add(world, tmp_path, capsys):
    assert _init(world, world / "benchmark.parquet", tmp_path) == 0
    suite = tmp_path / "suites" / "synth.yml"
    _without(suite, "  draws_column: draws\n")
    capsys.readouterr()
    assert _run(tmp_path / "checkpoints" / "synth.yml") == 2
    err = capsys.readouterr().err
    assert "suite 'synth'" in err and "column 'draws'" in err and "add 'draws_column: draws' under defaults:" in err
    assert "suites/synth.yml:" in err and not (tmp_path / "gx_project").exists()
    assert _cli("validate", tmp_path / "checkpoints" / "synth.yml") == 2  # validate says it too


def test_draws_column_null_counts_each_cluster_once_on_purpose(world, tmp_path, capsys):
    assert _init(world, world / "benchmark.parquet", tmp_path) == 0
    _without(tmp_path / "suites" / "synth.yml", "  draws_column: draws\n", "  draws_column: null\n")
    assert _run(tmp_path / "checkpoints" / "synth.yml") in (0, 1)
    expected = erx.estimate(_release(world, world / "benchmark.parquet"), prediction="pred_2024",
                            reference="reference", weights="cluster_size")
    _same(_checkpoint_estimates(tmp_path), expected)


def test_a_draws_column_of_ones_needs_no_draws_column(world, tmp_path, capsys):
    ones = tmp_path / "ones.parquet"
    pd.read_parquet(world / "benchmark.parquet").assign(draws=1).to_parquet(ones, index=False)
    assert _init(world, ones, tmp_path) == 0
    suite = tmp_path / "suites" / "synth.yml"
    assert "drawn once" in suite.read_text()
    _without(suite, "  draws_column: draws\n")
    capsys.readouterr()
    assert _cli("validate", tmp_path / "checkpoints" / "synth.yml") == 0


def test_run_refuses_size_weights_on_an_expected_errors_benchmark(world, tmp_path, capsys):
    assert _init(world, world / "benchmark_ee.parquet", tmp_path) == 0
    _without(tmp_path / "suites" / "synth.yml", "  weights: {column: weight}\n", "  weights: cluster_size\n")
    capsys.readouterr()
    assert _cli("validate", tmp_path / "checkpoints" / "synth.yml") == 2
    err = capsys.readouterr().err
    assert "weigh the benchmark clusters by the design 'cluster_size'" in err
    assert "expected_errors" in err and "write 'weights: {column: weight}'" in err


def test_a_weight_column_beside_size_weights_is_fine_on_a_size_benchmark(world, tmp_path, capsys):
    """The size design's weight column holds 1/|c|: weights: cluster_size recomputes the same."""
    assert _init(world, world / "benchmark.parquet", tmp_path) == 0
    capsys.readouterr()
    assert _cli("validate", tmp_path / "checkpoints" / "synth.yml") == 0
    _without(tmp_path / "suites" / "synth.yml", "  weights: cluster_size", "  weights: uniform")
    assert _cli("validate", tmp_path / "checkpoints" / "synth.yml") == 2
    assert "write 'weights: cluster_size'" in capsys.readouterr().err


def test_a_uniform_csv_benchmark_is_recognised_by_its_weights(world, tmp_path, capsys):
    assert _cli("benchmark", world / "labels.parquet", world / "records.parquet", "--join",
                world / "predictions.parquet", "--on", "mention_id", "-p", "pred_2024", "--design", "uniform",
                "-o", tmp_path / "uniform.csv") == 0
    assert _init(world, tmp_path / "uniform.csv", tmp_path / "p") == 0
    suite = (tmp_path / "p" / "suites" / "synth.yml").read_text()
    assert "  weights: {column: weight}\n" in suite and "drawn uniformly (a weight of 1" in suite


def test_a_weight_column_of_text_is_not_used_and_not_refused(world, tmp_path, capsys):
    """A hand-made benchmark whose column ``weight`` is no weight: size design, said in a comment."""
    odd = tmp_path / "odd.csv"
    pd.read_parquet(world / "benchmark.parquet").assign(weight="n/a").to_csv(odd, index=False)
    assert _init(world, odd, tmp_path / "p") == 0
    suite = (tmp_path / "p" / "suites" / "synth.yml").read_text()
    assert "  weights: cluster_size" in suite and "holds 'n/a'" in suite
    capsys.readouterr()
    assert _cli("validate", tmp_path / "p" / "checkpoints" / "synth.yml") == 0


@pytest.mark.sqlite
def test_a_benchmark_table_in_a_database_is_checked_by_its_columns(world, tmp_path, capsys):
    """A database's benchmark table: the counts are not read, so any ``draws`` column is asked for."""
    import sqlalchemy as sa

    assert _init(world, world / "benchmark.parquet", tmp_path) == 0
    db = tmp_path / "warehouse.db"
    engine = sa.create_engine(f"sqlite:///{db}")
    pd.read_parquet(world / "records.parquet").to_sql("records", engine, index=False)
    pd.read_parquet(world / "predictions.parquet").to_sql("predictions", engine, index=False)
    pd.read_parquet(world / "benchmark.parquet").assign(draws=1, benchmark_version=3).to_sql(
        "benchmark", engine, index=False)
    engine.dispose()
    checkpoint = tmp_path / "checkpoints" / "sql.yml"
    checkpoint.write_text(f"""checkpoint: sql
project_dir: ../gx_project
data:
  engine: sql
  connection: {{url: "sqlite:///{db}"}}
  records: {{table: records, id_column: mention_id}}
  predictions: {{table: predictions, id_column: mention_id, columns: [pred_2024], batch_column: prediction}}
  benchmark: {{table: benchmark, id_column: mention_id, reference_column: reference}}
  name: {{columns: [first, last], separator: " "}}
suites: [synth]
""")
    capsys.readouterr()
    _without(tmp_path / "suites" / "synth.yml", "  draws_column: draws\n")
    assert _cli("validate", checkpoint) == 0  # validate does not open the database
    assert _run(checkpoint) == 2  # run does, before anything is written
    err = capsys.readouterr().err
    assert not (tmp_path / "gx_project").exists()
    assert "the benchmark table 'benchmark'" in err and "add 'draws_column: draws'" in err
    assert "up to" not in err  # the counts were not read
