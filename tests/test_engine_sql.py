"""The SQL engine aggregates in the database and gives the pandas engine's tables (SPEC 2.1, 3, 4).

Runs on SQLite (no server) and, when ``ER_TEST_POSTGRES_URL`` is set (CI starts a server),
on PostgreSQL. Every case is compared with the pandas engine on the same frame, per
benchmark cluster (aligned by label) and through the estimates.
"""

from __future__ import annotations

import math
import os
import uuid

import numpy as np
import pandas as pd
import pytest
from reference_impl import random_case

from er_expectations.engines import pandas as pandas_engine
from er_expectations.errors import InputError
from er_expectations.stats import estimate_metrics, summary_statistics

sa = pytest.importorskip("sqlalchemy")

_BACKENDS = ["sqlite"] + (["postgres"] if os.environ.get("ER_TEST_POSTGRES_URL") else [])


@pytest.fixture(params=_BACKENDS)
def bind(request):
    if request.param == "sqlite":
        engine = sa.create_engine("sqlite://")
    else:
        engine = sa.create_engine(os.environ["ER_TEST_POSTGRES_URL"])
    yield engine
    engine.dispose()


def _load(bind, df: pd.DataFrame) -> str:
    name = f"records_{uuid.uuid4().hex[:10]}"
    df.to_sql(name, bind, index=False)
    return name


def _by_label(sample):
    order = sorted(range(len(sample.labels)), key=lambda i: str(sample.labels[i]))
    return [str(sample.labels[i]) for i in order], order


def _pieces(sample):
    return sorted((str(sample.labels[c]), str(p), int(n), int(m)) for c, p, n, m in
                  zip(sample.piece_cluster, sample.piece_label, sample.piece_n, sample.piece_m, strict=True))


def _assert_same_sample(got, want):
    labels_g, og = _by_label(got)
    labels_w, ow = _by_label(want)
    assert labels_g == labels_w
    for field in ("size", "weight", "draws", "homonym", "name_variation", "has_name"):
        a, b = getattr(got, field), getattr(want, field)
        if b is None:
            assert a is None, field
            continue
        np.testing.assert_array_equal(np.asarray(a)[og], np.asarray(b)[ow], err_msg=field)
    assert _pieces(got) == _pieces(want)
    for field in ("n_records", "n_clusters", "design", "records_set_aside", "clusters_set_aside"):
        assert getattr(got, field) == getattr(want, field), field


@pytest.mark.parametrize("id_kind", ["str", "int"])
@pytest.mark.parametrize("seed", range(12))
def test_same_tables_and_estimates_as_pandas(bind, seed, id_kind):
    from er_expectations.engines import sql as sql_engine

    df = random_case(seed, n_max=60, id_kind=id_kind)
    table = _load(bind, df)
    rel = sql_engine.SqlRelease(bind, table, prediction="pred", record_id="record")
    want_rel = pandas_engine.PandasRelease(df, prediction="pred", record_id="record")

    got_t, want_t = rel.clustering_table(name="name"), want_rel.clustering_table(name="name")
    np.testing.assert_array_equal(got_t.sizes, want_t.sizes)
    np.testing.assert_array_equal(got_t.counts, want_t.counts)
    assert (got_t.n_named_clusters, got_t.n_homonymous_clusters, got_t.n_varied_clusters) == (
        want_t.n_named_clusters, want_t.n_homonymous_clusters, want_t.n_varied_clusters)
    got_s, want_s = summary_statistics(got_t), summary_statistics(want_t)
    for key, value in want_s.items():
        assert got_s[key] == pytest.approx(value, rel=1e-12, nan_ok=True), key

    for weights, draws in (("cluster_size", None), ("uniform", "n_draws"), ({"column": "w"}, "n_draws")):
        got = rel.benchmark_sample(reference="ref", weights=weights, draws=draws, name="name")
        want = want_rel.benchmark_sample(reference="ref", weights=weights, draws=draws, name="name")
        _assert_same_sample(got, want)
        est_g, est_w = estimate_metrics(got), estimate_metrics(want)
        for metric, w in est_w.items():
            g = est_g[metric]
            for attr in ("estimate", "std_error", "ci_lower", "ci_upper"):
                a, b = getattr(g, attr), getattr(w, attr)
                assert (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=1e-9, abs=1e-12), (metric, attr)


def test_missing_table_and_column_are_named(bind):
    from er_expectations.engines import sql as sql_engine

    table = _load(bind, random_case(1))
    with pytest.raises(InputError, match="does not exist"):
        sql_engine.SqlRelease(bind, table + "x", prediction="pred")
    with pytest.raises(InputError, match=r"prediction='pred_id'.*Did you mean 'pred'"):
        sql_engine.SqlRelease(bind, table, prediction="pred_id")


def test_duplicated_record_ids_and_varying_weights(bind):
    from er_expectations.engines import sql as sql_engine

    df = random_case(3)
    dup = pd.concat([df, df.iloc[:1]], ignore_index=True)
    with pytest.raises(InputError, match="duplicated ids"):
        sql_engine.SqlRelease(bind, _load(bind, dup), prediction="pred", record_id="record")
    bad = df.copy()
    first = bad["ref"].first_valid_index()
    cluster = bad.loc[first, "ref"]
    rows = bad.index[bad["ref"] == cluster]
    bad.loc[rows, "w"] = np.arange(len(rows)) + 1.0
    rel = sql_engine.SqlRelease(bind, _load(bind, bad), prediction="pred")
    if len(rows) > 1:
        with pytest.raises(InputError, match="varies within benchmark cluster"):
            rel.benchmark_sample(reference="ref", weights={"column": "w"})


def test_empty_release_and_empty_benchmark(bind):
    from er_expectations.engines import sql as sql_engine

    df = random_case(5)
    none = df.assign(pred=pd.Series([None] * len(df), dtype="str"))
    rel = sql_engine.SqlRelease(bind, _load(bind, none), prediction="pred")
    with pytest.raises(InputError, match="null on every row"):
        rel.clustering_table()
    with pytest.raises(InputError, match="benchmark is empty after restriction"):
        rel.benchmark_sample(reference="ref")


def test_only_small_tables_come_back(bind, monkeypatch):
    """The rows fetched grow with the distinct sizes and the benchmark, not with the records."""
    from er_expectations.engines import sql as sql_engine

    rng = np.random.default_rng(0)
    n = 20_000
    df = pd.DataFrame({"record": np.arange(n), "pred": rng.integers(0, 4000, n),
                       "name": rng.integers(0, 9000, n).astype(str),
                       "ref": np.where(np.arange(n) < 300, np.arange(n) // 3, np.nan)})
    table = _load(bind, df)
    fetched: list[int] = []
    original = sql_engine.SqlRelease._rows

    def counting(self, query):
        rows = original(self, query)
        fetched.append(len(rows))
        return rows

    monkeypatch.setattr(sql_engine.SqlRelease, "_rows", counting)
    rel = sql_engine.SqlRelease(bind, table, prediction="pred", record_id="record")
    rel.clustering_table(name="name")
    sample = rel.benchmark_sample(reference="ref", name="name")
    assert sample.size.sum() == 300
    # the size histogram (a few dozen sizes) and the 300 benchmark records' pieces at most
    assert max(fetched) <= 300, fetched
    assert sum(fetched) < 1000, fetched
