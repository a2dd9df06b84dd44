"""Labelling QC (SPEC 9) runs on GX's SQL and Spark engines with pandas' results.

On pandas the labelling batch holds the labels and only the records the rules read
(:func:`er_expectations.analysis.labelling_batch`). In a database or in Spark the records part may be
the whole release: there the label rows and exactly the records the rules read are fetched
(the records the labels name, the members of the drawn records' predicted clusters), and
the rules run on them. Every observed value and every failing draw listed (message and
records) must equal the pandas result on the small batch: here for hostile column names and
labels of another release; the rows the SQL engine and Spark bring back are counted. The
random labels with text and integer ids and errors of every rule, and the bundled demo labels
with an injected error per rule, run on every engine in ``tests/engines/test_common.py``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from support.enginetools import engine_params
from support.gxtools import assert_same, validate
from support.labeltools import LABEL_ROLES, label_suite, labels_case, whole_table

import er_expectations.gx  # noqa: F401 - registers the expectations
from er_expectations.analysis.labelling_batch import labelling_batch

_ENGINES = engine_params()


def by_expectation(result) -> dict:
    out = {}
    for r in result.results:
        info = r.exception_info or {}
        infos = [v for v in info.values() if isinstance(v, dict)] or [info]
        for i in infos:
            assert not i.get("raised_exception"), i.get("exception_message")
        cfg = r.expectation_config
        out[(cfg.type, cfg.kwargs.get("scorer"), cfg.kwargs.get("block_column"))] = (r.success, r.result)
    return out


def compare(engine: str, batch: pd.DataFrame, table: pd.DataFrame, suite, tmp_path, **kw) -> dict:
    want = by_expectation(validate("pandas", batch, suite(**kw), tmp_path))
    got = by_expectation(validate(engine, table, suite(**kw), tmp_path))
    assert got.keys() == want.keys()
    for key, (ok, res) in want.items():
        assert got[key][0] == ok, key
        assert_same(got[key][1], res, key)
    return want


# -- hostile cases ----------------------------------------------------------------------------------


@pytest.mark.parametrize("engine", _ENGINES)
def test_hostile_column_names(engine, tmp_path):
    names = {"record": 'id "1"', "pred": "pred.`x` <b>", "block": "blo`ck", "name": "na me's",
             "draw": "draw.n", "removed": 'rem"oved', "added": "add`ed", "true_cluster": "true.cluster"}
    labels, records = labels_case(7)
    labels = labels.rename(columns=names)
    records = records.rename(columns=names)
    cols = {"record_id": "record_id", **{r: names.get(r, r) for r in LABEL_ROLES}}
    batch = labelling_batch(labels, records, prediction=names["pred"], record_id=names["record"], block=names["block"],
                            name=names["name"], columns=cols)
    table = whole_table(batch, records, draw=names["draw"],
                        record_columns=[names[c] for c in ("record", "pred", "block", "name")],
                        lists="text")  # ids separated by ';' on Spark too (the other Spark cases: arrays)
    roles = {r: names.get(r, r) for r in LABEL_ROLES}
    compare(engine, batch, table, label_suite, tmp_path, record=names["record"], pred=names["pred"],
            block=names["block"], name=names["name"], columns=roles)


@pytest.mark.parametrize("engine", _ENGINES)
def test_labels_of_another_release_and_missing_columns_are_clear_errors(engine, tmp_path):
    labels, records = labels_case(8)
    batch = labelling_batch(labels, records, prediction="pred", record_id="record", block="block", name="name")
    table = whole_table(batch, records, draw="draw", record_columns=["record", "pred", "block", "name"],
                        lists="list" if engine == "spark" else "text")
    table.loc[0, "predicted_cluster"] = "p-other"
    res = validate(engine, table, label_suite()[:1], tmp_path)
    (r,) = res.results
    messages = " ".join(str(v.get("exception_message")) for v in r.exception_info.values() if isinstance(v, dict))
    assert "the labels were made against another release" in messages and "draw 1" in messages
    res = validate(engine, table.drop(columns=["added"]), label_suite()[:1], tmp_path)
    (r,) = res.results
    messages = " ".join(str(v.get("exception_message")) for v in r.exception_info.values() if isinstance(v, dict))
    assert "added_column='added': no such column" in messages


def test_sql_brings_back_the_labels_and_the_records_they_name_only(tmp_path, monkeypatch):
    """50,000 records in the table; back come the label rows and the few records the rules read."""
    from er_expectations.engines.sql import release as sql_engine

    labels, records = labels_case(9, n=50_000)
    batch = labelling_batch(labels, records, prediction="pred", record_id="record", block="block", name="name")
    table = whole_table(batch, records, draw="draw", record_columns=["record", "pred", "block", "name"],
                        lists="text")
    fetched: list[int] = []
    original = sql_engine.SqlRelease._rows

    def counting(self, query):
        rows = original(self, query)
        fetched.append(len(rows))
        return rows

    monkeypatch.setattr(sql_engine.SqlRelease, "_rows", counting)
    got = by_expectation(validate("sqlite", table, label_suite(), tmp_path))
    assert len(got) == 8
    needed = len(batch)  # the pandas batch: the labels and the records the rules read
    # once for every rule set: the label rows, the named records, the drawn clusters' members
    # (those two may overlap); then for each of rule 5's two settings the named records again
    # with their block and name
    assert len(fetched) == 3 + 2 and max(fetched) <= needed, (fetched, needed)
    assert sum(fetched) <= 3 * needed < len(records) / 20, (fetched, needed)


@pytest.mark.spark
def test_spark_brings_back_aggregates_and_the_records_the_rules_read(tmp_path, monkeypatch):
    """On Spark: the drift cells grow with the clusters, the labelling rows with the labels."""
    from support.drift import drift_suite
    from support.enginetools import spark_available

    from er_expectations.engines.spark import labelling as labelling_spark
    from er_expectations.engines.spark import pairs as pairs_spark

    if not spark_available():
        pytest.skip("pyspark is not installed (the spark extra); CI installs it")
    fetched: list[int] = []
    original_collect, original_select = pairs_spark.collect, labelling_spark.SparkLabelling._select

    def collect(frame):
        rows = original_collect(frame)
        fetched.append(len(rows))
        return rows

    def select(self, frame, names):
        rows = original_select(self, frame, names)
        fetched.append(len(rows))
        return rows

    monkeypatch.setattr(pairs_spark, "collect", collect)
    monkeypatch.setattr(labelling_spark.SparkLabelling, "_select", select)

    labels, records = labels_case(10, n=8_000)
    batch = labelling_batch(labels, records, prediction="pred", record_id="record", block="block", name="name")
    table = whole_table(batch, records, draw="draw", record_columns=["record", "pred", "block", "name"],
                        lists="list")
    validate("spark", table, label_suite()[:2], tmp_path)
    assert 0 < sum(fetched) <= 2 * len(batch) < 1_000, (fetched, len(batch))

    fetched.clear()
    rng = np.random.default_rng(1)
    n = 8_000
    base = rng.integers(0, 400, n)
    df = pd.DataFrame({"record": np.arange(n), "pred": np.where(rng.random(n) < 0.1, rng.integers(0, 400, n), base),
                       "pred__baseline": base, "ref": np.where(np.arange(n) < 300, np.arange(n) // 3, np.nan),
                       "name": rng.integers(0, 9000, n).astype(str)})
    validate("spark", df, drift_suite(short=True), tmp_path)
    assert fetched and max(fetched) <= 1_500 and sum(fetched) < n / 4, fetched


@pytest.mark.parametrize("ids", ["str", "int"])
def test_row_order_changes_nothing(ids):
    """A database keeps no row order: shuffled labels and records give the same violations."""
    from er_expectations.analysis.labelqc import qc_labels

    labels, records = labels_case(3, ids=ids)

    def run(lab, rec):
        q = qc_labels(lab, rec, "pred", record_id="record", block="block", name="name")
        return q.violations.to_dict("records"), q.checked

    want = run(labels, records)
    assert len(want[0]) >= 5
    for seed in range(3):
        got = run(labels.sample(frac=1, random_state=seed), records.sample(frac=1, random_state=seed + 10))
        assert got == want
