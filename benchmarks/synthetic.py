"""Synthetic entity-resolution releases for benchmarks.

A release is a pandas DataFrame with one row per record:

=============  ===============================================================
column         meaning
=============  ===============================================================
mention_id     int64 record key (unique)
true_id        true cluster id (the full truth, for checks; not benchmark data)
inventor_id    predicted cluster id (the release); null = record outside it
benchmark_id   true cluster id for the records of the sampled clusters, else null
draws          how often the record's benchmark cluster was drawn, else null
name           full name ("First Last"), with homonymy and name variants
=============  ===============================================================

How it is made (all vectorised numpy / pyarrow, no Python loop per record):

* True cluster sizes follow a truncated discrete power law,
  P(size = k) proportional to k**-exponent for k = 1..max_size (default exponent 2,
  max_size 3000): many singletons and a heavy tail, like PatentsView inventors.
* The prediction misplaces about ``misplaced`` of the records, in equal parts:
  merges of small true clusters (size <= 3), records split off their cluster
  (the split records of one true cluster form one new predicted cluster), and
  records moved to the cluster of another, uniformly drawn record (so large
  clusters attract more false links).
* Names: first names drawn Zipf-like from a pool of 20,000, surnames Zipf-like
  from a pool of (number of entities / 2); distinct entities therefore share
  names (about 20 % of the entities). 25 % of the entities have a second name
  variant ("J. Smith" or "John Q. Smith") that 30 % of their records carry.
  A small share of names is null. With ``record_names`` (the many-names shape of
  bench_core.py), that share of the records carries a name of its own (the entity's
  name followed by the record number), so that large clusters hold thousands of
  distinct names.
* Benchmark: ``n_draws`` records are drawn uniformly with replacement (cluster
  size design, p_c proportional to |c|); the whole true cluster of each drawn record
  is labelled. ``draws`` counts how often each labelled cluster was drawn.

Ids are int64 (``id_kind="int"``) or strings (``id_kind="str"``, pandas' ``str``
dtype backed by pyarrow, ~15 characters like ``pv-000001234567``).
Names are pandas' ``str`` dtype, or ``object`` / ``category`` (``name_dtype``).

``load_release`` caches releases as parquet in ``benchmarks/.cache/``.

Run ``python benchmarks/synthetic.py`` to compare the cluster-size distribution
with the PatentsView release inventor_id_20220630.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

# Bump when the generator's output changes, so that old cache files are not reused.
GENERATOR_VERSION = 1

HERE = Path(__file__).resolve().parent
CACHE_DIR = HERE / ".cache"
PATENTSVIEW_DIR = HERE.parent.parent / "shared" / "data" / "patentsview"

PREDICTION = "inventor_id"
REFERENCE = "benchmark_id"
TRUTH = "true_id"
DRAWS = "draws"
NAME = "name"
RECORD = "mention_id"

_SYLLABLE_TEXT = (
    "ka to mi ren sal ber an el lo ni da su ho ma ri ne gu ta ko li "
    "ve mor tan chi ya za fe dro ul bri hen so wa nak ker is ot pa ju"
)
_SYLLABLES = np.array(_SYLLABLE_TEXT.split(" "))
_LETTERS = np.array(list("ABCDEFGHIJKLMNOPRSTW"))


# --------------------------------------------------------------------------- sizes


def power_law_probabilities(
    exponent: float, max_size: int, cutoff: float | None = None
) -> np.ndarray:
    """P(size = k) for k = 1..max_size, proportional to k**-exponent * exp(-k / cutoff)."""
    k = np.arange(1, max_size + 1, dtype=np.float64)
    p = k**-exponent
    if cutoff:
        p *= np.exp(-k / cutoff)
    return p / p.sum()


def cluster_sizes(
    n_records: int,
    rng: np.random.Generator,
    *,
    exponent: float = 2.0,
    max_size: int = 3000,
    cutoff: float | None = None,
) -> np.ndarray:
    """I.i.d. power-law cluster sizes, the last one cut so that they sum to n_records."""
    p = power_law_probabilities(exponent, max_size, cutoff)
    mean = float(np.dot(np.arange(1, max_size + 1), p))
    chunks: list[np.ndarray] = []
    total = 0
    while total < n_records:
        m = int((n_records - total) / mean * 1.05) + 64
        chunk = rng.choice(max_size, size=m, p=p).astype(np.int64) + 1
        chunks.append(chunk)
        total += int(chunk.sum())
    sizes = np.concatenate(chunks)
    ends = np.cumsum(sizes)
    last = int(np.searchsorted(ends, n_records))  # first cluster whose end reaches n
    sizes = sizes[: last + 1]
    sizes[-1] -= int(ends[last]) - n_records
    return sizes


# --------------------------------------------------------------------------- names


def _zipf_choice(rng: np.random.Generator, n_pool: int, size: int, s: float) -> np.ndarray:
    p = np.arange(1, n_pool + 1, dtype=np.float64) ** -s
    p /= p.sum()
    return rng.choice(n_pool, size=size, p=p)


def _syllable_words(n: int, salt: int, min_syl: int, max_syl: int) -> pa.Array:
    """n distinct-looking capitalised words, built from syllables (vectorised)."""
    n_syl = len(_SYLLABLES)
    space = n_syl**max_syl
    # A bijection of 0..space-1 (multiplier coprime with space), so that rank 0
    # (the most frequent name) is not "Kakaka".
    code = (np.arange(n, dtype=np.int64) * 982_451_653 + salt) % space
    length = min_syl + code % (max_syl - min_syl + 1)
    parts = []
    rest = code
    for i in range(max_syl):
        syl = _SYLLABLES[rest % n_syl]
        rest = rest // n_syl
        parts.append(pa.array(np.where(i < length, syl, "")))
    word = pc.binary_join_element_wise(*parts, "")
    return pc.utf8_capitalize(word)


def _entity_names(
    n_entities: int, rng: np.random.Generator, *, variant_rate: float
) -> tuple[pa.Array, pa.Array, np.ndarray]:
    """Primary name and variant name of each entity, and which entities have a variant."""
    n_first = 20_000
    n_last = max(1_000, n_entities // 2)
    first_pool = _syllable_words(n_first, salt=17, min_syl=2, max_syl=3)
    last_pool = _syllable_words(n_last, salt=91, min_syl=2, max_syl=4)
    first = first_pool.take(pa.array(_zipf_choice(rng, n_first, n_entities, 1.0)))
    last = last_pool.take(pa.array(_zipf_choice(rng, n_last, n_entities, 0.8)))
    primary = pc.binary_join_element_wise(first, last, " ")

    has_variant = rng.random(n_entities) < variant_rate
    initial = pc.utf8_slice_codeunits(first, 0, 1)
    middle = pa.array(_LETTERS[rng.integers(0, len(_LETTERS), n_entities)])
    initial_form = pc.binary_join_element_wise(initial, pa.scalar(". "), last, "")
    # "First M. Last": the last argument of binary_join_element_wise is the separator.
    middle_form = pc.binary_join_element_wise(
        pc.binary_join_element_wise(first, middle, " "), last, ". "
    )
    use_initial = pa.array(rng.random(n_entities) < 0.5)
    variant = pc.if_else(use_initial, initial_form, middle_form)
    return primary, variant, has_variant


# --------------------------------------------------------------------------- ids


def _labels(codes: np.ndarray, *, id_kind: str, prefix: str, mask: np.ndarray | None = None):
    """pandas array of ids for integer codes; ``mask`` marks nulls."""
    if id_kind == "int":
        if mask is None:
            return codes.astype(np.int64, copy=False)
        return pd.arrays.IntegerArray(codes.astype(np.int64, copy=False), mask)
    if id_kind != "str":
        raise ValueError(f"id_kind must be 'int' or 'str', not {id_kind!r}")
    n_codes = int(codes.max()) + 1 if len(codes) else 0
    numbers = pc.cast(pa.array(np.arange(n_codes, dtype=np.int64)), pa.string())
    dictionary = pc.binary_join_element_wise(
        pa.scalar(prefix), pc.utf8_lpad(numbers, 12, "0"), ""
    ).cast(pa.large_string())
    indices = pa.array(codes, mask=mask)
    return pd.array(dictionary.take(indices), dtype="str")


def _scramble(n: int, rng: np.random.Generator) -> np.ndarray:
    """A random relabelling 0..n-1 -> distinct ids (so ids carry no order)."""
    return rng.permutation(n).astype(np.int64)


# --------------------------------------------------------------------------- release

NAME_DTYPES = ("str", "object", "category")


def _name_column(names: pa.Array, name_dtype: str):
    """The name column in the requested pandas dtype."""
    if name_dtype == "str":
        return pd.array(names, dtype="str")
    values = np.asarray(names.to_pylist(), dtype=object)
    if name_dtype == "object":
        # a Series: an object ndarray or array would be inferred as ``str`` by pandas 3
        return pd.Series(values, dtype=object, copy=False)
    return pd.Categorical(values)


def make_release(
    n_records: int,
    *,
    seed: int,
    id_kind: str = "int",
    misplaced: float = 0.03,
    n_draws: int = 400,
    exponent: float = 2.0,
    max_size: int = 3000,
    cutoff: float | None = None,
    outside: float = 0.0,
    variant_rate: float = 0.25,
    null_names: float = 0.001,
    record_names: float = 0.0,
    name_dtype: str = "str",
) -> pd.DataFrame:
    """A synthetic release with truth, prediction, benchmark and names.

    ``outside`` is the share of records left out of the release (null
    prediction); the benchmark is still drawn from all records.
    ``record_names`` is the share of records whose name is a spelling of their
    entity's name found on no other record ("Kato Miren 3f2a"): with 0.5, a
    benchmark cluster of 3000 records carries ~1500 distinct names.
    ``name_dtype`` is "str" (pandas' pyarrow-backed strings), "object" (Python
    strings, None for null) or "category".
    """
    if name_dtype not in NAME_DTYPES:
        raise ValueError(f"name_dtype must be one of {NAME_DTYPES}, not {name_dtype!r}")
    n = int(n_records)
    if n < 1:
        raise ValueError("n_records must be >= 1")
    rng = np.random.default_rng(seed)

    # True clustering: cluster index per record, in random record order.
    sizes = cluster_sizes(n, rng, exponent=exponent, max_size=max_size, cutoff=cutoff)
    n_true = len(sizes)
    true = np.repeat(np.arange(n_true, dtype=np.int64), sizes)
    rng.shuffle(true)

    # Prediction, in cluster-index space 0..n_true + n_new - 1.
    budget = int(round(misplaced * n))
    n_merge_target = budget // 3
    n_split = budget // 3
    n_move = budget - n_merge_target - n_split

    # 1. merges of small true clusters, in pairs (the odd one goes into the even one)
    remap = np.arange(n_true, dtype=np.int64)
    small = np.flatnonzero(sizes <= 3)
    if n_merge_target > 0 and len(small) >= 2:
        small = rng.permutation(small)
        take = int(np.searchsorted(np.cumsum(sizes[small]), n_merge_target)) + 1
        take = min(take + take % 2, len(small) - len(small) % 2)
        pairs = small[:take].reshape(-1, 2)
        remap[pairs[:, 1]] = pairs[:, 0]
    pred = remap[true]

    # 2. splits: records of clusters of size >= 2 leave their cluster; those of one
    #    true cluster form one new predicted cluster.
    n_new = 0
    if n_split > 0:
        candidates = np.flatnonzero(sizes[true] >= 2)
        n_split = min(n_split, len(candidates))
        chosen = rng.choice(candidates, size=n_split, replace=False)
        groups, group_of = np.unique(true[chosen], return_inverse=True)
        pred[chosen] = n_true + group_of
        n_new = len(groups)

    # 3. moves: a record joins the predicted cluster of another random record.
    if n_move > 0:
        movers = rng.choice(n, size=min(n_move, n), replace=False)
        pred[movers] = pred[rng.integers(0, n, size=len(movers))]

    # Benchmark: records drawn uniformly with replacement -> their true clusters.
    drawn = true[rng.integers(0, n, size=n_draws)]
    draw_count = np.bincount(drawn, minlength=n_true)
    record_draws = draw_count[true]
    in_benchmark = record_draws > 0

    # Names.
    primary, variant, has_variant = _entity_names(n_true, rng, variant_rate=variant_rate)
    dictionary = pa.concat_arrays([primary, variant]).cast(pa.large_string())
    use_variant = has_variant[true] & (rng.random(n) < 0.3)
    name_code = true + use_variant * n_true
    name_null = rng.random(n) < null_names if null_names > 0 else None
    names = dictionary.take(pa.array(name_code, mask=name_null))
    if record_names > 0:
        # a record-specific suffix: the record's index
        own = rng.random(n) < record_names
        tag = pc.utf8_lower(pc.cast(pa.array(np.arange(n, dtype=np.int64)), pa.string()))
        suffixed = pc.binary_join_element_wise(names, tag.cast(pa.large_string()), pa.scalar(" ", pa.large_string()))
        names = pc.if_else(pa.array(own), suffixed, names)

    # Ids: scrambled integer labels, or strings built from them.
    true_label = _scramble(n_true, rng)[true]
    pred_label = _scramble(n_true + n_new, rng)[pred]
    outside_mask = rng.random(n) < outside if outside > 0 else None

    df = pd.DataFrame(
        {
            RECORD: np.arange(n, dtype=np.int64),
            TRUTH: _labels(true_label, id_kind=id_kind, prefix="tc-"),
            PREDICTION: _labels(pred_label, id_kind=id_kind, prefix="pv-", mask=outside_mask),
            REFERENCE: _labels(true_label, id_kind=id_kind, prefix="tc-", mask=~in_benchmark),
            DRAWS: pd.arrays.IntegerArray(record_draws, ~in_benchmark),
            NAME: _name_column(names, name_dtype),
        }
    )
    df.attrs["synthetic"] = {
        "n_records": n,
        "seed": seed,
        "id_kind": id_kind,
        "misplaced": misplaced,
        "n_draws": n_draws,
        "exponent": exponent,
        "max_size": max_size,
        "cutoff": cutoff,
        "outside": outside,
        "record_names": record_names,
        "name_dtype": name_dtype,
        "n_true_clusters": n_true,
        "n_benchmark_clusters": int((draw_count > 0).sum()),
        "n_benchmark_records": int(in_benchmark.sum()),
        "generator_version": GENERATOR_VERSION,
    }
    return df


# Shapes of the true cluster-size distribution.
#  "zipf2": the default, a power law with exponent 2 capped at 3000 (heavy tail).
#  "patentsview": exponent 1.8 with an exponential cutoff at 100, the maximum-likelihood
#     fit to the sizes of the 401 PatentsView benchmark clusters (a size-biased
#     sample); it reproduces their mean (~33) and median (11).
SHAPES: dict[str, dict] = {
    "zipf2": {"exponent": 2.0, "max_size": 3000, "cutoff": None},
    "patentsview": {"exponent": 1.8, "max_size": 3000, "cutoff": 100.0},
}


def cache_path(
    n_records: int,
    *,
    seed: int,
    id_kind: str,
    misplaced: float,
    n_draws: int,
    shape: str,
    record_names: float = 0.0,
) -> Path:
    names = f"-r{record_names:g}" if record_names else ""
    return CACHE_DIR / (
        f"release-v{GENERATOR_VERSION}-{shape}-n{int(n_records)}-{id_kind}-s{seed}"
        f"-m{misplaced:g}-d{n_draws}{names}.parquet"
    )


def with_name_dtype(df: pd.DataFrame, name_dtype: str) -> pd.DataFrame:
    """``df`` with its name column converted to ``name_dtype`` (see NAME_DTYPES)."""
    if name_dtype not in NAME_DTYPES:
        raise ValueError(f"name_dtype must be one of {NAME_DTYPES}, not {name_dtype!r}")
    if name_dtype == "str" and df[NAME].dtype == "str":
        return df
    out = df.copy(deep=False)
    column = _name_column(pa.array(df[NAME].array, from_pandas=True), name_dtype)
    out[NAME] = column.set_axis(df.index) if isinstance(column, pd.Series) else column
    out.attrs = {**df.attrs}
    return out


def load_release(
    n_records: int,
    *,
    seed: int = 0,
    id_kind: str = "int",
    misplaced: float = 0.03,
    n_draws: int = 400,
    shape: str = "zipf2",
    record_names: float = 0.0,
    name_dtype: str = "str",
    cache: bool = True,
) -> pd.DataFrame:
    """make_release with a named size shape (see SHAPES), cached as parquet.

    The cache holds the name column as ``str``; other ``name_dtype`` are converted after
    loading.
    """
    kwargs = {"seed": seed, "id_kind": id_kind, "misplaced": misplaced, "n_draws": n_draws}
    path = cache_path(n_records, shape=shape, record_names=record_names, **kwargs)
    if cache and path.exists():
        return with_name_dtype(pd.read_parquet(path), name_dtype)
    df = make_release(n_records, **kwargs, record_names=record_names, **SHAPES[shape])
    if cache:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        os.close(fd)
        try:
            df.to_parquet(tmp, index=False)
            os.chmod(tmp, 0o644)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)
    return with_name_dtype(df, name_dtype)


# --------------------------------------------------------------------------- shape check


def fit_power_law_exponent(sizes: np.ndarray, max_size: int | None = None) -> float:
    """Maximum-likelihood exponent of a truncated discrete power law (grid search)."""
    sizes = np.asarray(sizes, dtype=np.int64)
    cap = int(max_size or sizes.max())
    k = np.arange(1, cap + 1, dtype=np.float64)
    mean_log = float(np.log(sizes).mean())
    grid = np.arange(1.01, 4.0, 0.005)
    loglik = [-a * mean_log - math.log(float(np.sum(k**-a))) for a in grid]
    return float(grid[int(np.argmax(loglik))])


def size_summary(sizes: np.ndarray, *, size_biased: bool = False) -> dict:
    """Summary of a cluster-size distribution.

    With ``size_biased`` (a benchmark drawn with p proportional to size) the fitted
    exponent is shifted by +1, so that it estimates the population's exponent.
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    n = int(sizes.sum())
    edges = [1, 2, 3, 5, 9, 17, 33, 65, 129, 257, 513, 1025, 2049, np.inf]
    counts, _ = np.histogram(sizes, bins=edges)
    labels = []
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        hi_incl = hi - 1
        labels.append(
            f"{lo}" if hi_incl == lo else (f"{lo}+" if np.isinf(hi) else f"{lo}-{int(hi_incl)}")
        )
    return {
        "records": n,
        "clusters": len(sizes),
        "mean size": n / len(sizes),
        "median size": float(np.median(sizes)),
        "p90 size": float(np.quantile(sizes, 0.9)),
        "p99 size": float(np.quantile(sizes, 0.99)),
        "max size": int(sizes.max()),
        "singleton clusters": float((sizes == 1).mean()),
        "matching rate": float(sizes[sizes > 1].sum() / n),
        "records in size>=100": float(sizes[sizes >= 100].sum() / n),
        "population exponent": fit_power_law_exponent(sizes) + (1.0 if size_biased else 0.0),
        "histogram": dict(zip(labels, (counts / len(sizes)).tolist(), strict=True)),
    }


def _print_comparison(columns: dict[str, dict]) -> None:
    names = list(columns)
    width = max(14, *(len(n) + 2 for n in names))
    print(f"{'':<24}" + "".join(f"{n:>{width}}" for n in names))
    keys = [k for k in next(iter(columns.values())) if k != "histogram"]
    for key in keys:
        cells = []
        for n in names:
            v = columns[n][key]
            cells.append(f"{v:>{width},}" if isinstance(v, int) else f"{v:>{width}.3f}")
        print(f"{key:<24}" + "".join(cells))
    print("share of clusters by size:")
    for label in next(iter(columns.values()))["histogram"]:
        print(
            f"  {label:<22}"
            + "".join(f"{columns[n]['histogram'][label]:>{width}.4f}" for n in names)
        )


def compare_with_patentsview(n_records: int = 1_000_000, seed: int = 0) -> dict[str, dict]:
    """Print the size distributions of PatentsView inventor_id_20220630 and synthetic data.

    Both the predicted clusters (population) and the benchmark clusters (a
    size-biased sample) are compared, for each shape in SHAPES.
    """
    column = "inventor_id_20220630"
    pv = pd.read_parquet(PATENTSVIEW_DIR / "predictions.parquet", columns=[column])
    bench = pd.read_parquet(PATENTSVIEW_DIR / "benchmark.parquet")
    population = {"PV 20220630 pred": size_summary(pv[column].value_counts().to_numpy())}
    benchmark = {
        "PV benchmark": size_summary(
            bench["benchmark_id"].value_counts().to_numpy(), size_biased=True
        )
    }
    for shape, params in SHAPES.items():
        rel = make_release(n_records, seed=seed, **params)
        population[f"{shape} pred"] = size_summary(rel[PREDICTION].value_counts().to_numpy())
        benchmark[f"{shape} bench"] = size_summary(
            rel[REFERENCE].value_counts().to_numpy(), size_biased=True
        )
        del rel
    print(f"Cluster sizes: predicted clusters (synthetic: {n_records:,} records)")
    _print_comparison(population)
    print("\nCluster sizes: benchmark clusters (400 draws, p proportional to size)")
    _print_comparison(benchmark)
    print(
        "\nNotes: the PatentsView file is a block subset (every mention whose last name +"
        "\nfirst-name prefix meets the benchmark), which over-represents large clusters, so"
        "\nits predicted sizes are flatter than the full release's. The benchmark is a"
        "\nsize-biased sample of the full population: its fitted exponent + 1 estimates the"
        "\npopulation exponent."
    )
    return {**population, **benchmark}


def _main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=float, default=1e6, help="records for the size comparison")
    parser.add_argument(
        "--time", type=float, nargs="*", default=[], help="time make_release at these sizes"
    )
    args = parser.parse_args(argv)
    compare_with_patentsview(int(args.n))
    for size in args.time:
        for kind in ("int", "str"):
            t0 = time.perf_counter()
            df = make_release(int(size), seed=0, id_kind=kind)
            dt = time.perf_counter() - t0
            mem = df.memory_usage(deep=True).sum() / 2**20
            print(f"make_release({int(size):,}, id_kind={kind!r}): {dt:.1f} s, {mem:,.0f} MiB")
            del df
    return 0


if __name__ == "__main__":
    sys.exit(_main())
