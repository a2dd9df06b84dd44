"""Size weights after a top-up count the records a draw could pick (SPEC 14.3).

The draws picked records known at labelling (``benchmark_version`` 1), so a true cluster c was
drawn with probability ∝ |c ∩ K_1|. A top-up adds later records to the sampled entities; had
they lowered w_c = 1/|c|, entities that grew would weigh less than they were drawn. Where
growth goes with errors (active entities get many new records and the later release splits
them off), the old rule read pairwise recall +0.146 too high with 0 % coverage on a
simulated team's data; these tests pin the rule by hand and on every SQL backend.
"""

from __future__ import annotations

import os
import uuid

import numpy as np
import pandas as pd
import pytest

import er_expectations as erx
from er_expectations.engines.pandas import release as pandas_engine

sa = pytest.importorskip("sqlalchemy")
from er_expectations.engines.sql import release as sql_engine  # noqa: E402

BACKENDS = [pytest.param("sqlite", marks=pytest.mark.sqlite)]
if os.environ.get("ER_TEST_POSTGRES_URL"):
    BACKENDS.append(pytest.param("postgres", marks=pytest.mark.postgres))


def topped_up() -> pd.DataFrame:
    """Entity A: a1, a2 known at labelling, a3, a4 added by a top-up; B: b1, b2. The later
    release predicts {a1, a2, a3}, {a4}, {b1, b2}. One draw each."""
    return pd.DataFrame({
        "rid": ["a1", "a2", "a3", "a4", "b1", "b2"],
        "pred": ["X", "X", "X", "Y", "Z", "Z"],
        "ref": ["A", "A", "A", "A", "B", "B"],
        "draws": [1] * 6,
        "benchmark_version": [1, 1, 2, 2, 1, 1],
    })


def test_pairwise_recall_by_hand():
    # SPEC 5 (without the small-sample bias adjustment): f = s(s - 1 - UCE) w, g = s(s - 1) w. A: s = 4, UCE = (1 + 1 + 1 + 3) / 4 = 1.5,
    # f = 6 w_A, g = 12 w_A; B: f = g = 2 w_B. A was drawn through a1 or a2: w_A = 1/2 (not
    # 1/4); w_B = 1/2. Recall = (3 + 1) / (6 + 1) = 4/7 (the old rule: 2.5 / 4 = 0.625).
    est = erx.estimate(topped_up(), prediction="pred", reference="ref", draws="draws", metrics=["pairwise_recall"], bias_adjust=False)
    assert est.loc["pairwise_recall", "estimate"] == pytest.approx(4 / 7, abs=1e-12)
    # the same numbers as weights written out by hand
    hand = topped_up().assign(w=[0.5] * 4 + [0.5] * 2)
    by_hand = erx.estimate(hand, prediction="pred", reference="ref", draws="draws", weights={"column": "w"},
                           metrics=["pairwise_recall"], known=None, bias_adjust=False)
    assert by_hand.loc["pairwise_recall", "estimate"] == pytest.approx(4 / 7, abs=1e-12)


def test_without_a_top_up_nothing_changes():
    df = topped_up()
    df["benchmark_version"] = 1  # every record known at labelling: the sizes are the release's
    est = erx.estimate(df, prediction="pred", reference="ref", draws="draws", metrics=["pairwise_recall"], bias_adjust=False)
    assert est.loc["pairwise_recall", "estimate"] == pytest.approx(2.5 / 4, abs=1e-12)


@pytest.fixture(params=BACKENDS)
def engine(request):
    eng = sa.create_engine("sqlite://" if request.param == "sqlite" else os.environ["ER_TEST_POSTGRES_URL"])
    yield eng
    eng.dispose()


def random_topped_up(seed: int) -> pd.DataFrame:
    """A random topped-up benchmark (versions 1-3, records dropped by the later release)."""
    rng = np.random.default_rng(seed)
    n = 400
    ref = rng.integers(0, 40, n)
    df = pd.DataFrame({
        "rid": np.arange(n), "pred": rng.integers(0, 60, n).astype(float),
        "ref": np.where(rng.random(n) < 0.7, ref, -1), "draws": 1,
        "benchmark_version": rng.choice([1, 1, 1, 2, 3], n),
    })
    df.loc[rng.random(n) < 0.1, "pred"] = np.nan  # not in the later release
    df["ref"] = df["ref"].where(df["ref"] >= 0)
    df["draws"] = df["draws"].where(df["ref"].notna())
    return df


def brute_force(df: pd.DataFrame) -> dict[float, float]:
    """1 / (records of the release known at version 1), else the release's size."""
    rel = df[df["pred"].notna() & df["ref"].notna()]
    first = rel[rel["benchmark_version"].astype(int) == 1].groupby("ref").size()
    size = rel.groupby("ref").size()
    return {float(c): 1.0 / (first.get(c) or size[c]) for c in size.index}


def weights(sample) -> dict[float, float]:
    return dict(zip(map(float, sample.labels), sample.weight, strict=True))


@pytest.mark.parametrize(("seed", "text_versions"), [(1, False), (2, False), (3, True)])
def test_sql_gives_the_weights_of_pandas(engine, seed, text_versions):
    """Also with the version column as text (a benchmark read from CSV): the same weights."""
    df = random_topped_up(seed)
    if text_versions:
        df["benchmark_version"] = df["benchmark_version"].astype(str)
    name = f"topup_{uuid.uuid4().hex[:10]}"
    df.to_sql(name, engine, index=False)
    a = pandas_engine.benchmark_sample(df, prediction="pred", reference="ref", draws="draws")
    b = sql_engine.benchmark_sample(engine, name, prediction="pred", reference="ref", draws="draws")
    assert weights(a) == pytest.approx(brute_force(df), rel=1e-15)
    assert weights(b) == pytest.approx(weights(a), rel=1e-15)


@pytest.mark.spark
def test_spark_gives_the_weights_of_pandas():
    pytest.importorskip("pyspark")
    from support.enginetools import spark_frame, spark_session

    from er_expectations.engines.spark import release as spark_engine

    df = random_topped_up(4)
    got = spark_engine.benchmark_sample(spark_frame(spark_session(), df), prediction="pred", reference="ref",
                                        draws="draws")
    assert weights(got) == pytest.approx(brute_force(df), rel=1e-15)
