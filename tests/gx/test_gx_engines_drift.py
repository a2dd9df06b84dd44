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

import math
import os
import uuid
from pathlib import Path

import great_expectations as gx
import numpy as np
import pandas as pd
import pytest
from enginetools import engine_params
from great_expectations.data_context.types.base import ProgressBarsConfig

import er_expectations.gx  # noqa: F401 - registers the expectations
from er_expectations.gx.expectations import (
    ExpectEstimateChangeToBeBelow,
    ExpectReleaseAgreementToBeBetween,
    ExpectStatisticChangeToBeBelow,
)

sa = pytest.importorskip("sqlalchemy")
_ENGINES = engine_params()
DATA = Path(__file__).resolve().parents[1] / "er_expectations" / "data" / "patentsview"


# -- loading one pandas frame into each engine ---------------------------------------------------


def _context():
    ctx = gx.get_context(mode="ephemeral")
    ctx.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    return ctx


def spark_session():
    from pyspark.sql import SparkSession

    return (SparkSession.builder.master("local[2]").config("spark.sql.shuffle.partitions", "4")
            .config("spark.ui.enabled", "false").config("spark.sql.execution.arrow.pyspark.enabled", "true")
            .getOrCreate())


def spark_frame(spark, df: pd.DataFrame):
    """The frame as a Spark DataFrame with an explicit schema (an all-null column is text)."""
    from pyspark.sql import types as T  # noqa: N812

    fields, columns = [], {}
    for col in df.columns:
        values = df[col]
        present = values.dropna()
        lists = len(present) and all(isinstance(v, (list, tuple, np.ndarray)) for v in present)
        if lists:
            items = [i for v in present for i in v]
            whole = items and all(isinstance(i, (int, np.integer)) and not isinstance(i, bool) for i in items)
            kind = T.ArrayType(T.LongType() if whole else T.StringType())
            columns[col] = values.map(lambda v, whole=whole: None if not isinstance(v, (list, tuple, np.ndarray))
                                      else [int(i) if whole else str(i) for i in v])
            fields.append(T.StructField(str(col), kind, True))
            continue
        if pd.api.types.is_bool_dtype(values.dtype):
            kind = T.BooleanType()
        elif pd.api.types.is_integer_dtype(values.dtype) or (
                len(present) and all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in present)):
            kind = T.LongType()
        elif pd.api.types.is_float_dtype(values.dtype):
            kind = T.DoubleType()
        else:
            kind = T.StringType()
        fields.append(T.StructField(str(col), kind, True))
        if isinstance(kind, T.LongType):
            columns[col] = values.astype("Int64")
        elif isinstance(kind, T.StringType):
            columns[col] = values.astype(object).where(values.notna(), None)
        else:
            columns[col] = values
    rows = pd.DataFrame(columns)
    data = [tuple(v if isinstance(v, list) else
                  None if (v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v))) else
                  (int(v) if isinstance(v, np.integer) else v) for v in row)
            for row in rows.astype(object).itertuples(index=False, name=None)]
    return spark.createDataFrame(data, schema=T.StructType(fields))


def sql_url(engine: str, tmp_path: Path) -> str:
    if engine == "sqlite":
        return f"sqlite:///{tmp_path / f'{uuid.uuid4().hex[:8]}.db'}"
    url = os.environ.get("ER_TEST_POSTGRES_URL")
    if not url:
        pytest.fail("CI=true but ER_TEST_POSTGRES_URL is not set: .ci/run must start PostgreSQL")
    return url


def validate(engine: str, df: pd.DataFrame, expectations: list, tmp_path: Path, *,
             result_format: str = "COMPLETE"):
    """Validate ``expectations`` on ``df`` through a GX datasource of ``engine``."""
    ctx = _context()
    suite = ctx.suites.add(gx.ExpectationSuite(name=f"s_{uuid.uuid4().hex[:6]}", expectations=expectations))
    if engine == "pandas":
        bd = ctx.data_sources.add_pandas("pd").add_dataframe_asset("release").add_batch_definition_whole_dataframe("all")
        return bd.get_batch(batch_parameters={"dataframe": df}).validate(suite, result_format=result_format)
    if engine == "spark":
        sdf = spark_frame(spark_session(), df)
        bd = ctx.data_sources.add_spark("spark").add_dataframe_asset("release").add_batch_definition_whole_dataframe("all")
        return bd.get_batch(batch_parameters={"dataframe": sdf}).validate(suite, result_format=result_format)
    url = sql_url(engine, tmp_path)
    table = f"release_{uuid.uuid4().hex[:8]}"
    bind = sa.create_engine(url)
    try:
        df.to_sql(table, bind, index=False)
        ds = (ctx.data_sources.add_sqlite("sql", connection_string=url) if engine == "sqlite"
              else ctx.data_sources.add_postgres("sql", connection_string=url))
        bd = ds.add_table_asset("release", table_name=table).add_batch_definition_whole_table("all")
        return bd.get_batch().validate(suite, result_format=result_format)
    finally:
        if engine == "postgres":
            with bind.begin() as conn:
                conn.execute(sa.text(f'DROP TABLE IF EXISTS "{table}"'))
        bind.dispose()


def results(result) -> dict:
    """{(type, metric/statistic, q): (success, result)}; no expectation may have raised."""
    out = {}
    for r in result.results:
        info = r.exception_info or {}
        infos = [v for v in info.values() if isinstance(v, dict)] or [info]
        for i in infos:
            assert not i.get("raised_exception"), i.get("exception_message")
        cfg = r.expectation_config
        key = (cfg.type, cfg.kwargs.get("metric") or cfg.kwargs.get("statistic"), cfg.kwargs.get("q"))
        assert key not in out, key
        out[key] = (r.success, r.result)
    return out


def assert_same(got, want, where=()):
    """Equal, with floats to 1e-9 (NaN equals NaN); ints, text, flags and lists exactly."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and got.keys() == want.keys(), (where, sorted(got), sorted(want))
        for key in want:
            assert_same(got[key], want[key], (*where, key))
    elif isinstance(want, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(want), (where, got, want)
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            assert_same(g, w, (*where, i))
    elif isinstance(want, float) and not isinstance(want, bool):
        assert isinstance(got, (int, float)), (where, got, want)
        assert (math.isnan(want) and math.isnan(got)) or got == pytest.approx(want, rel=1e-9, abs=1e-12), \
            (where, got, want)
    else:
        assert got == want and type(got) is type(want), (where, got, want)


def assert_results_equal(got: dict, want: dict) -> None:
    assert got.keys() == want.keys()
    for key, (ok, res) in want.items():
        assert got[key][0] == ok, key
        assert_same(got[key][1], res, key)


# -- cases -------------------------------------------------------------------------------------------


def drift_frame(seed: int, *, n: int = 500, ids: str = "str") -> pd.DataFrame:
    """A baseline release and a current one derived from it (merges, splits, moves), nulls on
    both sides, a benchmark column and names; text or integer cluster ids."""
    rng = np.random.default_rng(seed)
    sizes = rng.zipf(2.0, size=n).clip(max=25)
    truth = np.repeat(np.arange(sizes.size), sizes)[:n]
    base = np.where(rng.random(n) < 0.92, truth, rng.integers(0, truth.max() + 1, n))
    merge = rng.integers(0, truth.max() + 1, truth.max() + 1)
    cur = np.where(rng.random(n) < 0.15, merge[base], base)
    cur = np.where(rng.random(n) < 0.08, cur + 10_000, cur)  # split off
    base_null = rng.random(n) < 0.1
    cur_null = rng.random(n) < 0.1
    sampled = rng.choice(np.unique(truth), size=max(5, truth.max() // 5), replace=False)
    if ids == "str":
        cur_col = pd.Series([f"c{x}" for x in cur], dtype=object).where(~cur_null, None)
        base_col = pd.Series([f"b{x}" for x in base], dtype=object).where(~base_null, None)
        ref_col = pd.Series([f"t{x}" for x in truth], dtype=object).where(np.isin(truth, sampled), None)
        record = [f"r{i}" for i in range(n)]
    else:
        cur_col = pd.Series(cur, dtype="Int64").where(~cur_null, pd.NA)
        base_col = pd.Series(base + 7, dtype="Int64").where(~base_null, pd.NA)
        ref_col = pd.Series(truth, dtype="Int64").where(np.isin(truth, sampled), pd.NA)
        record = np.arange(n)
    names = pd.Series([f"name{k % 40}" for k in truth], dtype=object).where(rng.random(n) > 0.05, None)
    return pd.DataFrame({"record": record, "pred": cur_col, "pred__baseline": base_col,
                         "pred__baseline__release": "2020-06-30", "ref": ref_col, "name": names})


def drift_suite(*, pred: str = "pred", record: str | None = "record", ref: str = "ref", name: str = "name",
                baseline_column: str | None = None, strict: bool = True, short: bool = False) -> list:
    """Every drift check; ``strict``: thresholds that fail, so that the diff is computed too;
    ``short``: one check of each kind (the hostile cases, to keep Spark's share short)."""
    common = {"prediction_column": pred, "record_id_column": record, "diff_examples": 3, "seed": 5}
    if baseline_column is not None:
        common["baseline_column"] = baseline_column
    rel = {"max_relative_change": 0.0 if strict else 10.0}
    out = [ExpectStatisticChangeToBeBelow(**common, statistic=s, **rel)
           for s in ("average_cluster_size", "n_clusters", "matching_rate")]
    out += [ExpectStatisticChangeToBeBelow(**common, statistic="hill_number", q=q, **rel) for q in (0, 2, "inf")]
    out += [ExpectStatisticChangeToBeBelow(**common, statistic=s, name_column=name, **rel)
            for s in ("homonymy_rate", "name_variation_rate")]
    out += [ExpectReleaseAgreementToBeBetween(**common, metric=m, min_value=0.999 if strict else 0.0)
            for m in ("pairwise_precision", "pairwise_f", "cluster_recall", "b_cubed_f", "homogeneity")]
    out += [ExpectEstimateChangeToBeBelow(**common, reference_column=ref, metric=m, max_change=0.001 if strict else 1.0)
            for m in ("pairwise_recall", "b_cubed_precision")]
    out += [ExpectEstimateChangeToBeBelow(**common, reference_column=ref, metric="pairwise_precision",
                                          max_change=0.001, weights="uniform", ci_level=0.8)]
    if short:
        keep = {("statistic", "average_cluster_size"), ("statistic", "homonymy_rate"), ("metric", "b_cubed_f"),
                ("metric", "pairwise_recall")}
        out = [e for e in out if (("statistic", getattr(e, "statistic", None)) in keep
                                  or ("metric", getattr(e, "metric", None)) in keep)]
    return out


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
