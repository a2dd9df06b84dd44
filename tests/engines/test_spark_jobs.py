"""On Spark, a batch is aggregated once per release: a fixed number of Spark jobs, whatever is asked.

What GX's metrics ask of one batch with a drift baseline (the release's summary with names,
its benchmark sample with and without names, the baseline's sample, the subgroup rows, the
pair's fixed-subset statistic and the baseline label) costs four Spark actions: one collect of
the benchmark records, one aggregation per release, one of the pair. Counted with Spark's
status tracker, adaptive query execution off (one job per action; with it on, every shuffle
stage of an action runs as a job of its own). Not a timed test.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def spark():
    pytest.importorskip("pyspark")
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local[2]").appName("er-expectations-tests")
               .config("spark.sql.shuffle.partitions", "4").config("spark.ui.enabled", "false")
               .config("spark.sql.session.timeZone", "UTC").getOrCreate())
    before = session.conf.get("spark.sql.adaptive.enabled")
    session.conf.set("spark.sql.adaptive.enabled", "false")
    yield session
    session.conf.set("spark.sql.adaptive.enabled", before)


def _frame(n: int = 4_000, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 600, n)
    pred = np.where(rng.random(n) < 0.1, rng.integers(0, 600, n), base)
    ref = np.where(np.arange(n) < 400, base, -1)
    names = np.array([f"n{v}" for v in rng.integers(0, 900, n)], dtype=object)
    names[rng.random(n) < 0.02] = None
    return pd.DataFrame({"record": np.arange(n), "pred": pred, "base": np.where(rng.random(n) < 0.05, -1, base),
                         "ref": ref, "name": names, "label": "2021-12-30"}).replace({"ref": {-1: None},
                                                                                    "base": {-1: None}})


def _sample(sample) -> tuple:
    """A benchmark sample in an engine-independent order: by cluster, then by piece."""
    labels = [int(v) for v in sample.labels]
    clusters = sorted(zip(labels, sample.size.tolist(), sample.weight.tolist(), sample.draws.tolist(),
                          *[getattr(sample, f).tolist() for f in ("homonym", "name_variation", "has_name")
                            if getattr(sample, f) is not None], strict=True))
    pieces = sorted(zip([labels[i] for i in sample.piece_cluster], [int(v) for v in sample.piece_label],
                        sample.piece_n.tolist(), sample.piece_m.tolist(), strict=True))
    return clusters, pieces, sample.n_records, sample.n_clusters, sample.records_set_aside, sample.clusters_set_aside


def _rows(frame: pd.DataFrame) -> list[tuple]:
    """Benchmark rows (reference, name) in an engine-independent order, a null name as None."""
    return sorted(((int(r), None if pd.isna(n) else str(n)) for r, n in frame.itertuples(index=False)),
                  key=lambda row: (row[0], row[1] or ""))


def _jobs(spark, group: str) -> int:
    return len(spark.sparkContext.statusTracker().getJobIdsForGroup(group))


def _ask_everything(cur, base, pair_class):
    from er_expectations.analysis.drift import statistic_change_of

    table = cur.clustering_table(name="name")
    named = cur.benchmark_sample(reference="ref", name="name")
    plain = cur.benchmark_sample(reference="ref")
    baseline = base.benchmark_sample(reference="ref", name="name")
    rows = cur.benchmark_rows(reference="ref", columns={"surname": "name"})
    pair = pair_class(cur, base)
    change = statistic_change_of(pair, "average_cluster_size")
    return table, named, plain, baseline, rows, change, pair.column_value("label")


def _spark_frame(spark, frame: pd.DataFrame, folder):
    """``frame`` as a Spark DataFrame read from Parquet, as a checkpoint's tables are (a frame
    made from local rows is filtered on the driver, without a job)."""
    path = str(folder / "batch.parquet")
    spark.createDataFrame(frame.astype(object).where(frame.notna(), None)).write.parquet(path)
    return spark.read.parquet(path)


def test_one_batch_costs_four_spark_jobs_and_gives_the_pandas_answers(spark, tmp_path):
    from er_expectations.engines.pandas.pairs import ReleasePair
    from er_expectations.engines.pandas.release import PandasRelease
    from er_expectations.engines.spark.pairs import SparkReleasePair
    from er_expectations.engines.spark.release import SparkRelease, describe_batch

    frame = _frame()
    df = _spark_frame(spark, frame, tmp_path)
    describe_batch(df, checked_ids=["record"], reference="ref", name="name")
    spark.sparkContext.setJobGroup("er-one-batch", "one batch")
    try:
        got = _ask_everything(SparkRelease(df, prediction="pred", record_id="record"),
                              SparkRelease(df, prediction="base"), SparkReleasePair)
    finally:
        spark.sparkContext.setJobGroup("er-other", "other")
    # the benchmark records, the release's aggregation, the baseline's, the pair's
    assert _jobs(spark, "er-one-batch") == 4

    pandas_frame = frame.astype({"pred": "Int64", "base": "Int64", "ref": "Int64"})
    want = _ask_everything(PandasRelease(pandas_frame, prediction="pred", record_id="record"),
                           PandasRelease(pandas_frame, prediction="base"), ReleasePair)
    table, named, plain, baseline, rows, change, label = got
    assert (table.n_named_clusters, table.n_homonymous_clusters, table.n_varied_clusters) == (
        want[0].n_named_clusters, want[0].n_homonymous_clusters, want[0].n_varied_clusters)
    assert list(table.sizes) == list(want[0].sizes) and list(table.counts) == list(want[0].counts)
    for g, w in zip((named, plain, baseline), want[1:4], strict=True):
        assert _sample(g) == _sample(w)
    assert _rows(rows) == _rows(want[4])
    assert change.to_dict() == want[5].to_dict()
    assert label == want[6] == "2021-12-30"


def test_record_ids_are_counted_unless_the_batch_says_they_were_checked(spark, tmp_path):
    from er_expectations.core.errors import InputError
    from er_expectations.engines.spark.release import SparkRelease, describe_batch

    frame = _frame(n=500)
    frame.loc[1, "record"] = 0  # a duplicated id
    df = _spark_frame(spark, frame, tmp_path)
    with pytest.raises(InputError, match="duplicated ids"):
        SparkRelease(df, prediction="pred", record_id="record")
    describe_batch(df, checked_ids=["record"])  # what the source says of the batches it builds
    spark.sparkContext.setJobGroup("er-checked", "checked")
    try:
        SparkRelease(df, prediction="pred", record_id="record")
    finally:
        spark.sparkContext.setJobGroup("er-other", "other")
    assert _jobs(spark, "er-checked") == 0
