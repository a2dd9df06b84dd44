"""The baseline drift checks (SPEC 10) run on GX's SQL and Spark engines with pandas' results.

The release and its baseline are two columns of one table. On SQLite (PostgreSQL when
``ER_TEST_POSTGRES_URL`` is set, Spark when pyspark is installed; under CI=true both must
run) every observed value and every detail of the three drift expectations, the release
diff of a failure included, must equal the pandas result (1e-9; exactly for counts, flags
and the sampled examples). Random releases with text and integer ids and nulls on both
sides, the bundled PatentsView releases, and hostile cases: a baseline column of another
type, an all-null baseline (the check is skipped), hostile column names. The SQL engine
brings back sums and per-size or per-benchmark rows, never the record table nor a row per
cluster (counted; more cases in ``test_engines_drift_sums.py``).
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


# -- cases -------------------------------------------------------------------------------------------


#: Spark runs many small jobs per check: one random case per id type there.
_RANDOM = [pytest.param(p.values[0], seed, marks=p.marks, id=f"{p.values[0]}-{seed}")
           for p in _ENGINES for seed in (range(1) if p.values[0] == "spark" else range(3))]


@pytest.mark.parametrize("ids", ["str", "int"])
@pytest.mark.parametrize(("engine", "seed"), _RANDOM)
def test_drift_checks_equal_pandas(engine, seed, ids, tmp_path):
    df = drift_frame(seed, ids=ids)
    want = results(validate("pandas", df, drift_suite(), tmp_path))
    assert any(not ok for ok, _ in want.values())  # failures: the release diff is compared too
    assert any("diff" in r["details"] for ok, r in want.values() if not ok)
    got = results(validate(engine, df, drift_suite(), tmp_path))
    assert_results_equal(got, want)


@pytest.mark.parametrize("engine", _ENGINES)
def test_patentsview_releases_equal_pandas(engine, tmp_path):
    """Two PatentsView releases of the 133,541 mentions, with the benchmark and the names."""
    pred = pd.read_parquet(DATA / "predictions.parquet",
                           columns=["mention_id", "inventor_id_20211230", "inventor_id_20200630"])
    records = pd.read_parquet(DATA / "records.parquet", columns=["mention_id", "name_first", "name_last"])
    bench = pd.read_parquet(DATA / "benchmark.parquet")
    df = pred.merge(records, on="mention_id").merge(bench, on="mention_id", how="left")
    df["name"] = df["name_first"].str.cat(df["name_last"], sep=" ")
    df = df.drop(columns=["name_first", "name_last"]).astype(object).where(lambda d: d.notna(), None)
    suite = drift_suite(pred="inventor_id_20211230", record="mention_id", ref="benchmark_id",
                        baseline_column="inventor_id_20200630")
    want = results(validate("pandas", df, suite, tmp_path))
    got = results(validate(engine, df, drift_suite(pred="inventor_id_20211230", record="mention_id",
                                                   ref="benchmark_id", baseline_column="inventor_id_20200630"),
                           tmp_path))
    assert_results_equal(got, want)
    change = want[("expect_statistic_change_to_be_below", "n_clusters", None)][1]["details"]
    assert change["common_records"] > 100_000 and change["current"] != change["baseline"]


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
    want = diff_releases(df, "pred__baseline", "pred", record_id="record", name="name", examples=4, seed=2).to_dict()
    assert sum(len(e["sources"]) for e in want["examples"]) > 10
    for seed in range(3):
        shuffled = df.sample(frac=1, random_state=seed).reset_index(drop=True)
        got = diff_releases(shuffled, "pred__baseline", "pred", record_id="record", name="name", examples=4,
                            seed=2).to_dict()
        assert got == want
