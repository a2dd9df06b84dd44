"""``expect_no_error_slice_above`` in a checkpoint run from YAML: the feature columns reach the
batches, a planted slice fails, flat errors pass, a small benchmark is skipped, the page lists
the slices (SPEC 12.2, 13)."""

from __future__ import annotations

import io
from pathlib import Path
from urllib.parse import unquote, urlparse

import numpy as np
import pandas as pd
import pytest
from support.toyproject import SUITE, make_toy

from er_expectations.config import ConfigError
from er_expectations.run.runner import prepare_run, run_checkpoint

SLICES = """\
  - expectation: expect_no_error_slice_above
    weights: uniform
    feature_columns: [{features}]
    max_lift: 2
    min_draws: 20
    severity: warning
"""


def _suite(features: str = "country") -> str:
    return SUITE + SLICES.format(features=features)


def _bigger_data(root) -> None:
    """1200 entities of 2–5 records: alpha splits half the German entities and 4 % of the
    others, beta 8 % of all, gamma none; a benchmark of 400 entities drawn uniformly."""
    rng = np.random.default_rng(0)
    sizes = rng.integers(2, 6, 1200)
    country = rng.choice(np.array(["DE", "FR", "US", "JP"]), 1200)
    true = np.repeat(np.arange(1200), sizes)
    first = np.r_[0, np.cumsum(sizes)[:-1]]
    rid = [f"r{i:05d}" for i in range(true.size)]

    def release(rate) -> list[str]:
        err = rng.random(1200) < rate
        pred = true.astype(object).copy()
        pred[first[err]] = [f"x{i}" for i in range(int(err.sum()))]
        return [f"c{p}" for p in pred]

    records = pd.DataFrame({"rid": rid, "first": [f"F{t}" for t in true], "last": [f"L{t}" for t in true],
                            "country": country[true]})
    predictions = pd.DataFrame({"rid": rid, "pred_alpha": release(np.where(country == "DE", 0.5, 0.04)),
                                "pred_beta": release(np.full(1200, 0.08)), "pred_gamma": release(np.zeros(1200))})
    chosen = np.isin(true, rng.choice(1200, 400, replace=False))
    bench = pd.DataFrame({"rid": np.array(rid)[chosen], "truth": [f"E{t}" for t in true[chosen]]})
    data = root / "data"
    records.to_parquet(data / "records.parquet", index=False)
    predictions.to_parquet(data / "predictions.parquet", index=False)
    bench.to_parquet(data / "benchmark.parquet", index=False)


def _outcome(report, label):
    release = next(r for r in report.releases if r.label == label)
    return next(e for e in release.expectations if "slice" in e.expectation)


def test_a_planted_slice_fails_and_flat_errors_pass(tmp_path):
    path = make_toy(tmp_path, suite=_suite())
    _bigger_data(tmp_path)
    prepared = prepare_run(path)
    assert "country" in prepared.data.batch_columns()
    report = run_checkpoint(path, progress=False, out=io.StringIO())
    alpha, beta, gamma = (_outcome(report, label) for label in ("alpha", "beta", "gamma"))
    assert alpha.error is None and alpha.status == "failed", alpha
    assert beta.status == "passed", beta
    assert gamma.status == "passed", gamma  # no error at all: nothing to find
    page = next(p for r in report.releases if r.label == "alpha" for p in r.pages)
    html = Path(unquote(urlparse(page).path)).read_text(encoding="utf-8")  # a file: URL
    assert "Entities with country in {DE}" in html and "times the rest" in html


def test_the_toy_benchmark_is_too_small_and_the_check_is_skipped(tmp_path):
    path = make_toy(tmp_path, suite=_suite())
    with pytest.raises(ConfigError):  # the toy records have no country column
        prepare_run(path)
    path2 = make_toy(tmp_path / "two", suite=_suite("first"))
    report = run_checkpoint(path2, releases=["alpha"], progress=False, out=io.StringIO())
    outcome = _outcome(report, "alpha")
    assert outcome.status == "skipped" and "10 draws in the benchmark, and slice search needs at least 80" in outcome.skipped


def test_a_misspelt_feature_column_points_at_the_suite_line(tmp_path):
    suite = _suite("contry")
    path = make_toy(tmp_path, suite=suite)
    _bigger_data(tmp_path)
    with pytest.raises(ConfigError) as caught:
        prepare_run(path)
    (issue,) = caught.value.issues
    assert "contry" in suite.splitlines()[issue.line - 1]
    assert "country" in issue.hint
