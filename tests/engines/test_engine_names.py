"""Name statistics of the pandas engine against brute force (SPEC 3 and 7).

The engine codes string name columns with Arrow hash kernels (``dictionary_encode`` over
the column for the summary, ``index_in`` of the release against the benchmark's names for
the estimates), categoricals by their codes and anything else with ``pd.factorize``. Here
every path is compared, on random tables, with a direct Python computation of the
definitions:

* summary (SPEC 3): a named cluster of the release is homonymous when one of its names is
  also a name of another cluster of the release; it varies when it holds >= 2 distinct
  names;
* benchmark (SPEC 7): a sampled cluster (restricted to the release) is homonymous when one
  of its names occurs on more records of the release than inside the cluster; it varies
  when it holds >= 2 distinct names; it is named when it holds a non-null name.

Nulls (None, NaN, pd.NA) are no name; records with a null prediction are outside the
release and their names count nowhere.
"""

from __future__ import annotations

import math
import os

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from er_expectations.engines.pandas.release import PandasRelease, benchmark_sample, clustering_table

HYP = settings(
    deadline=None,
    max_examples=int(os.environ.get("ERX_HYPOTHESIS_EXAMPLES", "40")) * 5,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

# Strings that differ only slightly (case, accents, spaces, empty) so that a coding that
# normalised anything would be caught.
STRINGS = ["a", "A", "a ", "", "\u00e9", "e\u0301", "b", "ab", "\u540d\u524d", "x" * 40]
NULLS = [None, math.nan, pd.NA]
STRING_DTYPES = [
    "str",
    "string[pyarrow]",
    "string[python]",
    "arrow_string",
    "arrow_large_string",
    "arrow_chunked",
    "object",
    "category",
]
OTHER_DTYPES = ["object_mixed", "Int64", "float64", "int64"]


def _is_null(v) -> bool:
    return v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v))


def name_column(values: list, dtype: str) -> pd.Series:
    """``values`` (strings, ints or nulls) as a name column of the given kind."""
    if dtype == "object" or dtype == "object_mixed":
        return pd.Series(np.array(values + [None], dtype=object)[:-1], dtype=object)
    clean = [None if _is_null(v) else v for v in values]
    if dtype in ("str", "string[pyarrow]", "string[python]"):
        return pd.Series(clean, dtype=dtype)
    if dtype == "arrow_string":
        return pd.Series(clean, dtype=pd.ArrowDtype(pa.string()))
    if dtype == "arrow_large_string":
        return pd.Series(clean, dtype=pd.ArrowDtype(pa.large_string()))
    if dtype == "arrow_chunked":  # several chunks, as after a concat or a parquet read
        cut = len(clean) // 2
        chunks = pa.chunked_array([pa.array(clean[:cut], pa.string()), pa.array(clean[cut:], pa.string())])
        return pd.Series(pd.arrays.ArrowExtensionArray(chunks))
    if dtype == "category":
        # unused categories too, and categories in an order unrelated to the data
        cats = sorted({v for v in clean if v is not None} | {"unused", "zz"}, reverse=True)
        return pd.Series(pd.Categorical(clean, categories=cats))
    if dtype == "Int64":
        return pd.Series(clean, dtype="Int64")
    if dtype == "float64":
        return pd.Series([math.nan if v is None else float(v) for v in clean], dtype="float64")
    if dtype == "int64":
        return pd.Series([0 if v is None else v for v in clean], dtype="int64")
    raise AssertionError(dtype)


def id_column(values: list, kind: str) -> pd.Series:
    if kind == "int":
        return pd.Series(values, dtype="Int64")
    return pd.Series([None if v is None else f"id-{v}" for v in values], dtype="str")


@st.composite
def tables(draw, dtypes=STRING_DTYPES):
    n = draw(st.integers(1, 40))
    n_pred = draw(st.integers(1, 8))
    n_true = draw(st.integers(1, 8))
    pred = draw(st.lists(st.one_of(st.none(), st.integers(0, n_pred - 1)), min_size=n, max_size=n))
    ref = draw(st.lists(st.one_of(st.none(), st.integers(0, n_true - 1)), min_size=n, max_size=n))
    dtype = draw(st.sampled_from(dtypes))
    if dtype in ("Int64", "float64", "int64"):
        pool = st.one_of(st.integers(-3, 3), st.sampled_from([None, math.nan]))
    elif dtype == "object_mixed":  # strings and numbers: "1" and 1 are different names
        pool = st.sampled_from(["1", 1, 2, "2", "a", 2.5, None, math.nan])
    else:
        pool = st.one_of(st.sampled_from(STRINGS), st.sampled_from(NULLS))
    names = draw(st.lists(pool, min_size=n, max_size=n))
    if dtype == "int64":
        names = [0 if _is_null(v) else v for v in names]
    df = pd.DataFrame({
        "pred": id_column(pred, draw(st.sampled_from(["int", "str"]))),
        "ref": id_column(ref, draw(st.sampled_from(["int", "str"]))),
        "name": name_column(names, dtype),
    })
    return df


def _values(series: pd.Series) -> list:
    return [None if _is_null(v) else v for v in series.astype(object).tolist()]


def brute_summary(df: pd.DataFrame) -> tuple[int, int, int]:
    """(named, homonymous, varied) clusters of the release, from the definitions."""
    pred, names = _values(df["pred"]), _values(df["name"])
    cluster_names: dict = {}
    for p, nm in zip(pred, names, strict=True):
        if p is None:
            continue
        cluster_names.setdefault(p, set())
        if nm is not None:
            cluster_names[p].add(nm)
    clusters_of: dict = {}
    for p, nms in cluster_names.items():
        for nm in nms:
            clusters_of.setdefault(nm, set()).add(p)
    named = [p for p, nms in cluster_names.items() if nms]
    homonymous = [p for p in named if any(len(clusters_of[nm]) >= 2 for nm in cluster_names[p])]
    varied = [p for p in named if len(cluster_names[p]) >= 2]
    return len(named), len(homonymous), len(varied)


def brute_flags(df: pd.DataFrame) -> dict:
    """label -> (homonym, variation, has_name) of each benchmark cluster in the release."""
    pred, ref, names = _values(df["pred"]), _values(df["ref"]), _values(df["name"])
    in_release = [p is not None for p in pred]
    count: dict = {}
    for inside, nm in zip(in_release, names, strict=True):
        if inside and nm is not None:
            count[nm] = count.get(nm, 0) + 1
    members: dict = {}
    for inside, r, nm in zip(in_release, ref, names, strict=True):
        if inside and r is not None:
            members.setdefault(r, []).append(nm)
    out = {}
    for r, nms in members.items():
        present = [nm for nm in nms if nm is not None]
        distinct = set(present)
        homonym = any(count[nm] > present.count(nm) for nm in distinct)
        out[r] = (homonym, len(distinct) >= 2, bool(distinct))
    return out


def engine_flags(sample) -> dict:
    return {
        lab: (bool(h), bool(v), bool(n))
        for lab, h, v, n in zip(sample.labels, sample.homonym, sample.name_variation, sample.has_name, strict=True)
    }


def check(df: pd.DataFrame) -> None:
    release = df["pred"].notna()
    assume(release.any())
    table = clustering_table(df, cluster="pred", name="name")
    assert (table.n_named_clusters, table.n_homonymous_clusters, table.n_varied_clusters) == brute_summary(df)

    if not (release & df["ref"].notna()).any():
        return
    expected = brute_flags(df)
    # a fresh release: the benchmark's names are looked up in the release (index_in path)
    fresh = benchmark_sample(df, prediction="pred", reference="ref", name="name")
    assert engine_flags(fresh) == expected
    # the summary first, on the same release: the whole column's codes are reused
    rel = PandasRelease(df, prediction="pred")
    rel.clustering_table(name="name")
    reused = rel.benchmark_sample(reference="ref", name="name")
    assert engine_flags(reused) == expected


@HYP
@given(tables())
def test_string_and_categorical_names_match_brute_force(df):
    check(df)


@HYP
@given(tables(OTHER_DTYPES))
def test_other_name_dtypes_match_brute_force(df):
    check(df)


@pytest.mark.parametrize("dtype", STRING_DTYPES + OTHER_DTYPES)
def test_hand_worked_example(dtype):
    """Cluster 1 (benchmark A) holds "a" twice and "b"; "a" is also on cluster 2, "b" only
    on a record outside the release (null prediction); cluster 3 (benchmark B) holds "c",
    which the release holds nowhere else, and a null name; cluster 4 has no name."""
    strings = dtype not in OTHER_DTYPES or dtype == "object_mixed"
    a, b, c = ("a", "b", "c") if strings else (1, 2, 3)
    df = pd.DataFrame({
        "pred": id_column([1, 1, 1, 2, None, 3, 3, 4], "int"),
        "ref": id_column([7, 7, 7, None, None, 8, 8, None], "str"),
        "name": name_column([a, a, b, a, b, c, None, None], dtype if dtype != "int64" else "Int64"),
    })
    table = clustering_table(df, cluster="pred", name="name")
    # named clusters 1, 2, 3; homonymous 1 and 2 (share "a"); varied: 1
    assert (table.n_named_clusters, table.n_homonymous_clusters, table.n_varied_clusters) == (3, 2, 1)
    sample = benchmark_sample(df, prediction="pred", reference="ref", name="name")
    # A: "a" is on 3 release records, 2 inside A -> homonymous; varied. B: not, not; named
    assert engine_flags(sample) == {"id-7": (True, True, True), "id-8": (False, False, True)}


def test_names_only_outside_the_benchmark_and_release():
    """Names that only records outside the benchmark carry, or only records outside the
    release, never make a sampled cluster homonymous."""
    df = pd.DataFrame({
        "pred": pd.Series([1, 1, 2, 3, None, None], dtype="Int64"),
        "ref": pd.Series(["A", "A", None, None, None, "A"], dtype="str"),
        "name": pd.Series(["x", "x", "y", "z", "x", "x"], dtype="str"),
    })
    sample = benchmark_sample(df, prediction="pred", reference="ref", name="name")
    assert engine_flags(sample) == {"A": (False, False, True)}
    df.loc[3, "name"] = "x"  # now "x" sits on cluster 3 of the release too
    sample = benchmark_sample(df, prediction="pred", reference="ref", name="name")
    assert engine_flags(sample) == {"A": (True, False, True)}


@pytest.mark.parametrize("dtype", STRING_DTYPES + ["object_mixed"])
def test_near_identical_strings_stay_apart(dtype):
    """Case, trailing space, empty string and the two Unicode forms of "é" are six names:
    one per cluster gives no homonymy; a benchmark cluster holding all of them varies."""
    near = ["a", "A", "a ", "", "\u00e9", "e\u0301"]
    df = pd.DataFrame({
        "pred": id_column(list(range(6)) + [9] * 6, "int"),
        "ref": id_column([None] * 6 + [5] * 6, "int"),
        "name": name_column(near + near[::-1], dtype),
    })
    table = clustering_table(df, cluster="pred", name="name")
    assert (table.n_named_clusters, table.n_homonymous_clusters, table.n_varied_clusters) == (7, 7, 1)
    apart = pd.DataFrame({"pred": id_column(list(range(6)), "int"), "name": name_column(near, dtype)})
    table = clustering_table(apart, cluster="pred", name="name")
    assert (table.n_named_clusters, table.n_homonymous_clusters, table.n_varied_clusters) == (6, 0, 0)
    sample = benchmark_sample(df, prediction="pred", reference="ref", name="name")
    assert engine_flags(sample) == {5: (True, True, True)}
    alone = df.assign(pred=id_column([None] * 6 + [9] * 6, "int"))  # the six singletons leave
    sample = benchmark_sample(alone, prediction="pred", reference="ref", name="name")
    assert engine_flags(sample) == {5: (False, True, True)}
