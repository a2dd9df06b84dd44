"""The batch a database or Spark builds for a release has the rows and values of the batch
built from files (``ReleaseData`` and ``release_frames``): outer join, benchmark, the name
(white space, null and empty parts) and the drift checks' baseline columns.

Small tables only, so the test may fetch the batches to compare them.
"""

from __future__ import annotations

import pandas as pd
import pytest
from support.enginetools import spark_available
from support.sourcetools import sqlite_warehouse, toy_tables, write_checkpoint

from er_expectations.run.baselines import release_frames
from er_expectations.run.data.engine import WHITESPACE, release_batches
from er_expectations.run.runner import prepare_run

SUITE = """\
suite: warehouse_checks
defaults: {prediction_column: prediction, record_id_column: rid}
expectations:
  - expectation: expect_average_cluster_size_to_be_between
    min_value: 1.0
  - expectation: expect_statistic_change_to_be_below
    statistic: average_cluster_size
    max_relative_change: 0.5
  - expectation: expect_statistic_change_to_be_below
    statistic: matching_rate
    max_change: 0.5
    baseline: alpha
"""


def test_whitespace_is_what_str_strip_removes():
    assert "".join(c for c in map(chr, range(0x110000)) if c.isspace()) == WHITESPACE


def hostile_tables() -> dict[str, pd.DataFrame]:
    tables = toy_tables(seed=3, n=120)
    rec = tables["records"]
    odd = [" Ann ", "\tBob\u3000", "", None, "\u00a0", "Zoë\u2028", "  ", "A  B"]
    rec["first"] = [odd[i % len(odd)] if i % 3 == 0 else v for i, v in enumerate(rec["first"])]
    rec["last"] = [None if i % 7 == 0 else ("\u2003" if i % 11 == 0 else v) for i, v in enumerate(rec["last"])]
    pred = tables["predictions"]
    extra = pd.DataFrame({"rid": ["x1", "x2"], "pred_alpha": ["a999", None], "pred_beta": ["b999", "b998"]})
    tables["predictions"] = pd.concat([pred.iloc[5:], extra], ignore_index=True)  # 5 records outside both
    tables["records"] = rec
    return tables


def frames(path) -> dict[str, pd.DataFrame]:
    prepared = prepare_run(path)
    releases = prepared.data.select()
    if prepared.checkpoint.data.engine == "pandas":
        frame = release_frames(prepared.data, prepared.baselines)
        return {r.label: frame(r) for r in releases}
    batch = release_batches(prepared.data, prepared.baselines)
    out = {}
    for r in releases:
        made = batch(r)
        if isinstance(made, str):
            import sqlalchemy as sa

            with prepared.data.source.bind.connect() as conn:
                out[r.label] = pd.read_sql(sa.text(made), conn)
        else:
            out[r.label] = made.toPandas()
    return out


def normalised(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.astype(object).where(frame.notna(), None)
    return out.sort_values("rid").reset_index(drop=True)


@pytest.mark.parametrize("engine", [pytest.param("sqlite", marks=pytest.mark.sqlite),
                                    pytest.param("spark", marks=[pytest.mark.spark, pytest.mark.skipif(
                                        not spark_available(), reason="pyspark is not installed")])])
def test_engine_batches_equal_file_batches(tmp_path, monkeypatch, engine):
    tables = hostile_tables()
    files = tmp_path / "files"
    files.mkdir()
    for name, frame in tables.items():
        frame.to_parquet(files / f"{name}.parquet", index=False)
    want_path = write_checkpoint(tmp_path / "a", suite=SUITE, text=None, engine="sql")
    text = want_path.read_text().replace("[first, last]}", '[first, last], separator: " :and "}')  # text() binds
    import re

    files_text = re.sub(r"  engine: sql\n  connection: .*\n", "", text)
    for role in ("records", "predictions", "benchmark"):
        files_text = files_text.replace(f"table: {role}", f"path: {files / (role + '.parquet')}")
    want_path.write_text(files_text)
    want = frames(want_path)
    if engine == "sqlite":
        monkeypatch.setenv("WAREHOUSE_URL", sqlite_warehouse(tmp_path / "w.db", tables))
        path = write_checkpoint(tmp_path / "b", suite=SUITE)
        path.write_text(path.read_text().replace("[first, last]}", '[first, last], separator: " :and "}'))
    else:
        from pyspark.sql import SparkSession

        SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
        path = write_checkpoint(tmp_path / "b", suite=SUITE, engine="spark",
                                **{role: f"path: {files / (role + '.parquet')}"
                                   for role in ("records", "predictions", "benchmark")})
        path.write_text(path.read_text().replace("[first, last]}", '[first, last], separator: " :and "}'))
    got = frames(path)
    assert list(got) == list(want) == ["alpha", "beta"]
    for label in want:
        w, g = normalised(want[label]), normalised(got[label])
        assert sorted(g.columns) == sorted(w.columns), label  # the order of the columns does not matter
        g = g[list(w.columns)]
        assert len(w) == 122 and w["prediction"].isna().sum() >= 5
        assert {"prediction__baseline", "prediction__baseline__alpha"} <= set(w.columns)
        pd.testing.assert_frame_equal(g, w, check_dtype=False)
    names = want["alpha"]["full_name"]
    assert names.isna().any() and not any(n != n.strip() or n == "" for n in names.dropna())
    assert any(n.startswith(("Ann :and ", "Bob :and ", "Zoë :and ", "A  B :and ")) for n in names.dropna())
