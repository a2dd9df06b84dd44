"""``plan`` warns about an impossible pilot estimate as ``estimate`` does (issue 18, item 13).

Cluster precision uses the release's record and cluster counts (SPEC 5): a benchmark drawn
from part of the release can give an estimate above 1. The pilot here: ten perfect clusters of
four records benchmarked, 60 more records in two clusters never drawn; N = 100 records,
|Ĉ| = 12 clusters, every draw correct with |c| = 4, so the estimate is 100 / 12 / 4 = 2.083.
"""

from __future__ import annotations

import pandas as pd
import pytest

import er_expectations as erx
from er_expectations.cli.main import main

WARNING = "warning: estimate 2.083 lies outside [0, 1]: cluster precision uses the record and cluster counts"


@pytest.fixture()
def pilot() -> pd.DataFrame:
    pred = [f"p{i // 4}" for i in range(40)] + [f"big{i % 2}" for i in range(60)]
    ref = [f"t{i // 4}" for i in range(40)] + [None] * 60
    return pd.DataFrame({"rid": [f"r{i}" for i in range(100)], "pred": pred, "ref": ref})


def test_estimate_and_plan_give_the_same_warning(pilot):
    est = erx.estimate(pilot, prediction="pred", reference="ref", metrics=["cluster_precision"])
    assert est.loc["cluster_precision", "estimate"] == pytest.approx(100 / 12 / 4)
    assert WARNING in est.loc["cluster_precision", "note"]
    plan = erx.plan_sample_size(pilot, prediction="pred", reference="ref", target_se=0.05, metrics=["cluster_precision"], seed=0,
                                reps=200)
    row = plan.set_index("metric").loc["cluster_precision"]
    assert row["pilot_estimate"] == pytest.approx(100 / 12 / 4)
    assert WARNING in row["note"]


def test_the_plan_command_prints_the_warning(pilot, tmp_path, capsys):
    path = tmp_path / "pilot.csv"
    pilot.to_csv(path, index=False)
    code = main(["plan", str(path), "-p", "pred", "-r", "ref", "--target-se", "0.05", "--metrics",
                 "cluster_precision", "--seed", "0", "--reps", "200"])
    out = capsys.readouterr().out
    assert code == 0
    assert WARNING in out


@pytest.fixture()
def noisy(tmp_path):
    """A pilot with errors: 100 true clusters of 4, a fifth of the records predicted in the next cluster."""
    import numpy as np

    rng = np.random.default_rng(0)
    pred = [f"p{i // 4}" if rng.random() > 0.2 else f"p{i // 4 + 1}" for i in range(400)]
    frame = pd.DataFrame({"rid": [f"r{i}" for i in range(400)], "pred": pred, "ref": [f"t{i // 4}" for i in range(400)]})
    path = tmp_path / "pilot.csv"
    frame.to_csv(path, index=False)
    return path


@pytest.mark.parametrize("target", [["--target-se", "1e-300"], ["--target-se", "1e-30"],
                                    ["--target-width", "5e-324"], ["--target-se", "5e-324"]])
def test_a_tiny_target_gives_no_plan_instead_of_an_overflow(noisy, capsys, target):
    code = main(["plan", str(noisy), "-p", "pred", "-r", "ref", *target, "--metrics", "pairwise_precision",
                 "--seed", "0", "--reps", "100", "--max-draws", "1000", "--format", "json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    import json

    (row,) = json.loads(captured.out)["rows"]
    assert row["draws_needed"] is None and row["draws_extrapolated"] is None
    assert "above the target" in row["note"] and "1,000 draws" in row["note"]
