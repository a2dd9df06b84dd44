"""The baseline drift checks (SPEC 10) run on GX's SQL and Spark engines with pandas' results.

The release and its baseline are two columns of one table. On SQLite (PostgreSQL when
``ER_TEST_POSTGRES_URL`` is set, Spark when pyspark is installed; under CI=true both must
run) every observed value and every detail of the three drift expectations, the release
diff of a failure included, must equal the pandas result (1e-9; exactly for counts, flags
and the sampled examples) on hostile cases: a baseline column of another type, an all-null
baseline (the check is skipped), no common record, hostile column names. The SQL engine
brings back sums and per-size or per-benchmark rows, never the record table nor a row per
cluster (counted; more cases in ``tests/engines/test_engines_drift_sums.py``). Random
releases with text and integer ids and nulls on both sides, and the bundled PatentsView
releases, run on every engine in ``tests/engines/test_common.py``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from support.drift import drift_frame, drift_suite
from support.enginetools import engine_params
from support.gxtools import assert_results_equal, results, validate
from support.paths import PV_DATA

import er_expectations.gx  # noqa: F401 - registers the expectations
from er_expectations.gx.expectations import (
    ExpectReleaseAgreementToBeBetween,
)

sa = pytest.importorskip("sqlalchemy")
_ENGINES = engine_params()
DATA = PV_DATA


# -- hostile cases -----------------------------------------------------------------------------------


@pytest.mark.parametrize("engine", _ENGINES)
def test_baseline_of_another_type(engine, tmp_path):
    """Text cluster ids in the release, integers in its baseline (or floats): two clusterings all the same."""
    df = drift_frame(11, ids="str")
    df["pred__baseline"] = drift_frame(11, ids="int")["pred__baseline"]
    want = results(validate("pandas", df, drift_suite(short=True), tmp_path))
    assert len(want) == 4
    assert_results_equal(results(validate(engine, df, drift_suite(short=True), tmp_path)), want)
    df["pred__baseline"] = df["pred__baseline"].astype("float64")
    want = results(validate("pandas", df, drift_suite(short=True), tmp_path))
    assert_results_equal(results(validate(engine, df, drift_suite(short=True), tmp_path)), want)


@pytest.mark.parametrize("engine", _ENGINES)
def test_all_null_baseline_is_skipped(engine, tmp_path):
    df = drift_frame(12).assign(pred__baseline=pd.Series([None] * 500, dtype=object))
    want = results(validate("pandas", df, drift_suite(), tmp_path))
    assert all(ok and r["details"]["skipped"] for ok, r in want.values())
    assert_results_equal(results(validate(engine, df, drift_suite(), tmp_path)), want)


@pytest.mark.parametrize("engine", _ENGINES)
def test_no_common_records(engine, tmp_path):
    df = drift_frame(13)
    df["pred__baseline"] = df["pred__baseline"].where(df["pred"].isna(), None)
    want = results(validate("pandas", df, drift_suite(short=True), tmp_path))
    assert_results_equal(results(validate(engine, df, drift_suite(short=True), tmp_path)), want)


@pytest.mark.parametrize("engine", _ENGINES)
def test_hostile_column_names(engine, tmp_path):
    names = {"record": 'id "1"', "pred": "pred.`x` <b>", "ref": "ref; DROP TABLE t", "name": "na me's",
             "pred__baseline": "base`.\"y\""}
    df = drift_frame(14, ids="int").drop(columns=["pred__baseline__release"]).rename(columns=names)

    def suite():
        return drift_suite(pred=names["pred"], record=names["record"], ref=names["ref"], name=names["name"],
                           baseline_column=names["pred__baseline"], short=True)

    want = results(validate("pandas", df, suite(), tmp_path))
    assert not any(r["details"].get("skipped") for _, r in want.values())
    got = results(validate(engine, df, suite(), tmp_path))
    assert_results_equal(got, want)


def test_missing_baseline_column_is_named(tmp_path):
    df = drift_frame(15).drop(columns=["pred__baseline"])
    res = validate("sqlite", df, [ExpectReleaseAgreementToBeBetween(prediction_column="pred", metric="pairwise_f",
                                                                    min_value=0.5)], tmp_path)
    (r,) = res.results
    messages = " ".join(str(v.get("exception_message")) for v in r.exception_info.values() if isinstance(v, dict))
    assert r.success is False and "'pred__baseline': no such column" in messages


def test_sql_brings_back_only_aggregates(tmp_path, monkeypatch):
    """The rows fetched grow with the benchmark and the distinct cluster sizes, never with the
    records nor with the clusters: the agreement and the diff come back as sums (one row)."""
    from er_expectations.engines.sql import release as sql_engine

    rng = np.random.default_rng(0)
    n = 30_000
    base = rng.integers(0, 1500, n)
    cur = np.where(rng.random(n) < 0.1, rng.integers(0, 1500, n), base)
    df = pd.DataFrame({"record": np.arange(n), "pred": cur, "pred__baseline": base,
                       "ref": np.where(np.arange(n) < 300, np.arange(n) // 3, np.nan),
                       "name": rng.integers(0, 9000, n).astype(str)})
    fetched: list[int] = []
    original = sql_engine.SqlRelease._rows

    def counting(self, query):
        rows = original(self, query)
        fetched.append(len(rows))
        return rows

    monkeypatch.setattr(sql_engine.SqlRelease, "_rows", counting)
    res = results(validate("sqlite", df, drift_suite(), tmp_path))
    assert any(not ok for ok, _ in res.values())
    cells = res[("expect_release_agreement_to_be_between", "pairwise_f", None)][1]["details"]
    assert cells["common_records"] == n
    # about 1,500 clusters in each release and 4,500 contingency cells; the largest answer is
    # the benchmark (300 labelled records), and all the answers together are fewer than the cells
    n_cells = df.groupby(["pred", "pred__baseline"]).ngroups
    assert max(fetched) <= 300 < df["pred"].nunique(), max(fetched)
    assert sum(fetched) < n_cells / 2, (sum(fetched), n_cells)


@pytest.mark.parametrize("ids", ["str", "int"])
def test_diff_does_not_depend_on_row_order(ids):
    """The examples of a release diff are drawn in cluster-id order: shuffled rows, same diff."""
    from er_expectations.analysis.drift import diff_releases

    df = drift_frame(4, ids=ids)
    want = diff_releases(df, before="pred__baseline", after="pred", record_id="record", name="name", examples=4, seed=2).to_dict()
    assert sum(len(e["sources"]) for e in want["examples"]) > 10
    for seed in range(3):
        shuffled = df.sample(frac=1, random_state=seed).reset_index(drop=True)
        got = diff_releases(shuffled, before="pred__baseline", after="pred", record_id="record", name="name", examples=4,
                            seed=2).to_dict()
        assert got == want
