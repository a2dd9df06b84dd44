"""Pandas engine: aggregates a record table into the small tables of the statistics layer.

The full table is touched in a fixed number of vectorised passes: one factorisation of
the prediction column (cluster sizes, N, |Ĉ|), one of the name column when names are
used, and one null-check of the reference column. Everything about the benchmark is
then computed on its own rows only (a few thousand), SPEC 4.

String name columns (pyarrow-backed, or object columns holding only ``str``) are coded
by Arrow's C++ hash kernels (``dictionary_encode``, ``index_in``), never by a Python loop
over values; categorical names by their category codes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from er_expectations.core.errors import InputError
from er_expectations.engines.base import (
    FIRST_VERSION,
    KNOWN_AUTO,
    MAX_DRAWS,
    KnownCounts,
    WeightsSpec,
    check_cluster_values,
    drawable_size_weights,
    parse_weights,
    resolve_known,
    version_number,
    weights_for,
)
from er_expectations.engines.pandas.checks import check_column, check_frame, check_id_types
from er_expectations.stats import BenchmarkSample, ClusteringTable

__all__ = ["MAX_DRAWS", "PandasRelease", "clustering_table", "benchmark_sample", "contingency",
           "contingency_from_codes"]









def _factorize(values: pd.Series) -> tuple[np.ndarray, pd.Index]:
    """Integer codes (−1 for null) and the values they stand for.

    Integer ids spread over a compact range are coded as ``id − min`` without hashing (the
    uniques then include values absent from the data, which every caller ignores because
    their cluster size is 0); everything else goes through ``pd.factorize``.
    """
    dtype = values.dtype
    if getattr(dtype, "kind", None) == "i" and not isinstance(dtype, pd.CategoricalDtype) and len(values):
        mask = values.isna().to_numpy(dtype=bool)
        raw = values.to_numpy(dtype=np.int64, na_value=0)
        present = raw[~mask] if mask.any() else raw
        if present.size:
            lo, hi = int(present.min()), int(present.max())
            if hi - lo < max(len(values), 1 << 16):  # per-cluster arrays stay within the input's size
                codes = raw - lo
                if mask.any():
                    codes[mask] = -1
                return codes, pd.Index(np.arange(lo, hi + 1, dtype=np.int64))
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    return np.asarray(codes, dtype=np.int64), pd.Index(uniques)


def _arrow_strings(values: pd.Series) -> pa.Array | pa.ChunkedArray | None:
    """The column as Arrow strings when every non-null value is a ``str``, else None.

    Arrow-backed strings are taken as they are (no copy, chunks kept); an object column is
    converted, and kept only if Arrow infers a string type (so bytes, numbers or mixed
    values fall back to ``pd.factorize``). NaN, None and pd.NA become nulls, as they are
    nulls for ``pd.factorize``. Two ``str`` are equal iff their UTF-8 bytes are, so Arrow's
    coding groups exactly as ``pd.factorize`` does.
    """
    dtype = values.dtype
    arrow_type = dtype.pyarrow_dtype if isinstance(dtype, pd.ArrowDtype) else None
    if isinstance(dtype, pd.StringDtype) or (
        arrow_type is not None and (pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type))
    ):
        arr = pa.array(values.array)
    elif isinstance(dtype, np.dtype) and dtype.kind == "O":
        try:
            arr = pa.array(values.to_numpy(dtype=object), from_pandas=True)
        except (pa.ArrowException, TypeError, ValueError):  # not all str (or an unencodable str)
            return None
    else:
        return None
    if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
        return None
    return arr


def _arrow_codes(indices: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Arrow integer indices as int64 codes, −1 for null."""
    return np.asarray(pc.fill_null(indices, -1).to_numpy(), dtype=np.int64)


def _dictionary_encode(arr: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, pa.Array]:
    """Codes (−1 for null) and distinct values of Arrow strings, in one C++ hash pass.

    The chunks of a chunked array are encoded against one shared dictionary.
    """
    encoded = pc.dictionary_encode(arr)
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks() if encoded.num_chunks else pa.array([], pa.dictionary(pa.int32(), arr.type))
    return _arrow_codes(encoded.indices), encoded.dictionary


def _factorize_names(values: pd.Series) -> tuple[np.ndarray, int]:
    """Codes (−1 for null) of a name column and the number of codes (SPEC 3, 7).

    Categorical columns give their category codes (categories are distinct, so equal
    names share a code; unused categories have no record); string columns are coded by
    Arrow's hash table; anything else goes through :func:`_factorize`.
    """
    if isinstance(values.dtype, pd.CategoricalDtype):
        return np.asarray(values.cat.codes, dtype=np.int64), len(values.cat.categories)
    arr = _arrow_strings(values)
    if arr is not None:
        codes, dictionary = _dictionary_encode(arr)
        return codes, len(dictionary)
    codes, uniques = _factorize(values)
    return codes, len(uniques)


class PandasRelease:
    """One release of a record table, with lazily factorised columns shared by all statistics.

    ``prediction`` rows with a null id are outside the release (SPEC 2.1).
    """

    @classmethod
    def from_batch(cls, table: pd.DataFrame, *, connection: object = None, prediction: Hashable,
                   record_id: Hashable | None = None) -> PandasRelease:
        """The release of a batch's frame (the engine registry's constructor; no connection)."""
        return cls(table, prediction=prediction, record_id=record_id)

    def __init__(self, df: pd.DataFrame, *, prediction: Hashable, record_id: Hashable | None = None) -> None:
        self.df = check_frame(df)
        check_column(self.df, prediction, "prediction")
        self.prediction = prediction
        if record_id is not None:
            check_column(self.df, record_id, "record_id")
            ids = self.df[record_id]
            check_id_types(ids, "record_id")
            if ids.isna().any():
                raise InputError(f"record_id column {record_id!r} has {int(ids.isna().sum())} null ids; every record needs an id")
            dup = ids.duplicated(keep=False) if not ids.is_unique else None  # is_unique: one hash pass, no mask
            if dup is not None and dup.any():
                examples = ", ".join(repr(v) for v in ids[dup].unique()[:5])
                raise InputError(
                    f"record_id column {record_id!r} has {int(ids[dup].nunique())} duplicated ids (e.g. {examples}); "
                    "each record must appear once: drop duplicate rows or fix the id"
                )
        self._pred_codes: np.ndarray | None = None
        self._pred_uniques: pd.Index | None = None
        self._n_pred = 0
        self._sizes: np.ndarray | None = None
        self._names: dict[Hashable, tuple[np.ndarray, int]] = {}
        self._samples: dict[tuple, tuple] = {}
        self._known: dict[tuple, tuple[PandasRelease, KnownCounts]] = {}
        self._drawable_counts: dict[tuple, dict[object, int]] = {}

    # -- prediction ------------------------------------------------------------------
    @property
    def pred_codes(self) -> np.ndarray:
        if self._pred_codes is None:
            check_id_types(self.df[self.prediction], "prediction")
            self._pred_codes, self._pred_uniques = _factorize(self.df[self.prediction])
            self._n_pred = len(self._pred_uniques)
        return self._pred_codes

    @property
    def cluster_sizes(self) -> np.ndarray:
        """Size of every predicted cluster, indexed by prediction code."""
        if self._sizes is None:
            codes = self.pred_codes
            self._sizes = np.bincount(codes[codes >= 0] if self.has_nulls else codes, minlength=self._n_pred)
        return self._sizes

    def size_histogram(self) -> tuple[np.ndarray, np.ndarray]:
        """Distinct cluster sizes (ascending) and how many clusters have each (SPEC 3)."""
        sizes = self.cluster_sizes
        return np.unique(sizes[sizes > 0], return_counts=True)

    @property
    def has_nulls(self) -> bool:
        codes = self.pred_codes
        return bool(codes.size) and int(codes.min()) < 0

    @property
    def n_records(self) -> int:
        return int(self.cluster_sizes.sum())

    @property
    def n_clusters(self) -> int:
        return int((self.cluster_sizes > 0).sum())

    def name_codes(self, name: Hashable) -> tuple[np.ndarray, int]:
        if name not in self._names:
            check_column(self.df, name, "name")
            self._names[name] = _factorize_names(self.df[name])
        return self._names[name]

    def restrict(self, keep: np.ndarray) -> PandasRelease:
        """The same release with only the rows where ``keep`` is true (SPEC 10, fixed subset).

        The other rows count as outside the release (null prediction). The prediction codes
        are masked, not recomputed, and the name codes are shared with this object.
        """
        keep = np.asarray(keep, dtype=bool)
        codes = self.pred_codes
        if keep.shape != codes.shape:
            raise InputError(f"restrict: the mask has {keep.shape[0]} rows, the release {codes.shape[0]}")
        out = object.__new__(PandasRelease)
        out.df, out.prediction = self.df, self.prediction
        out._pred_codes = np.where(keep, codes, -1)
        out._pred_uniques, out._n_pred = self._pred_uniques, self._n_pred
        out._sizes = None
        out._names = self._names  # same frame, same name codes
        out._samples = {}
        out._known = {}
        out._drawable_counts = {}
        return out

    # -- summary of the predicted clustering ------------------------------------------------
    def clustering_table(self, *, name: Hashable | None = None) -> ClusteringTable:
        sizes_per_cluster = self.cluster_sizes
        if sizes_per_cluster.size == 0:
            raise InputError(f"prediction column {self.prediction!r} is null on every row: the release is empty")
        hist = np.bincount(sizes_per_cluster)
        hist[0] = 0  # unobserved categories of a categorical id column
        sizes = np.flatnonzero(hist)
        counts = hist[sizes]
        if name is None:
            return ClusteringTable(sizes=sizes, counts=counts)
        ncodes, n_names = self.name_codes(name)
        pcodes = self.pred_codes
        if n_names == 0:
            return ClusteringTable(sizes=sizes, counts=counts, n_named_clusters=0,
                                   n_homonymous_clusters=0, n_varied_clusters=0)
        if self.has_nulls or int(ncodes.min()) < 0:
            valid = (ncodes >= 0) & (pcodes >= 0)
            if not valid.any():
                return ClusteringTable(sizes=sizes, counts=counts, n_named_clusters=0,
                                       n_homonymous_clusters=0, n_varied_clusters=0)
            pc, nc = pcodes[valid], ncodes[valid]
        else:  # no nulls anywhere: skip the masks
            pc, nc = pcodes, ncodes
        # A cluster has >= 2 distinct names iff its smallest and largest name codes differ;
        # a name sits in >= 2 clusters iff its smallest and largest cluster codes differ.
        # Four scatter passes (ufunc.at) instead of de-duplicating (cluster, name) pairs.
        top = np.iinfo(np.int64).max
        cmin = np.full(self._n_pred, top, dtype=np.int64)
        cmax = np.full(self._n_pred, -1, dtype=np.int64)
        np.minimum.at(cmin, pc, nc)
        np.maximum.at(cmax, pc, nc)
        nmin = np.full(n_names, top, dtype=np.int64)
        nmax = np.full(n_names, -1, dtype=np.int64)
        np.minimum.at(nmin, nc, pc)
        np.maximum.at(nmax, nc, pc)
        named = cmax >= 0
        shared_name = (nmin != nmax)[nc]
        homonym = np.zeros(self._n_pred, dtype=bool)
        homonym[pc[shared_name]] = True
        return ClusteringTable(
            sizes=sizes,
            counts=counts,
            n_named_clusters=int(named.sum()),
            n_homonymous_clusters=int(homonym.sum()),
            n_varied_clusters=int((named & (cmin != cmax)).sum()),
        )

    # -- benchmark ------------------------------------------------------------------------
    def benchmark_sample(
        self,
        *,
        reference: Hashable,
        weights: str | dict | WeightsSpec = "cluster_size",
        draws: Hashable | None = None,
        name: Hashable | None = None,
        known: Hashable | None = KNOWN_AUTO,
    ) -> BenchmarkSample:
        df = self.df
        check_column(df, reference, "reference")
        column = resolve_known(known, list(df.columns))
        if column is not None:
            part, counts = self._known_part(column, reference)
            sample = part.benchmark_sample(reference=reference, weights=weights, draws=draws, name=name, known=None)
            if counts.topped_up:
                sample = drawable_size_weights(sample, self._drawable(column, reference))
            return counts.apply(sample, known=column)
        spec = parse_weights(weights, [c for c in df.columns if isinstance(c, str)])
        # one sample per benchmark and design; the name flags are added to it (GX asks for the
        # sample with and without a name column: the contingency is computed once)
        key = (reference, spec.design, draws)
        try:
            found = self._samples.get(key)
        except TypeError:  # an argument that is no column name: the checks of _sample say so
            found, key = None, None
        if found is None:
            found = self._sample(reference, spec, draws)
            if key is not None:
                self._samples[key] = found
        sample, rows, ref_codes = found
        if name is None:
            return sample
        homonym, variation, has_name = self._name_flags(name, rows, ref_codes, len(sample.labels))
        return dataclasses.replace(sample, homonym=homonym, name_variation=variation, has_name=has_name)

    def _drawable(self, known: str, reference: Hashable) -> dict[object, int]:
        """Per benchmark cluster, its records of the release known at the first version (the
        records a draw could pick, SPEC 14.3): counted once per (known, reference) pair."""
        key = (known, reference)
        if key not in self._drawable_counts:
            version = pd.to_numeric(self.df[known], errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
            rows = (self.pred_codes >= 0) & (version == FIRST_VERSION) & self.df[reference].notna().to_numpy()
            self._drawable_counts[key] = self.df[reference][rows].value_counts().to_dict()
        return self._drawable_counts[key]

    def _known_part(self, known: str, reference: Hashable) -> tuple[PandasRelease, KnownCounts]:
        """The release restricted to the records known at labelling, and what it sets aside
        (SPEC 14): computed once per (known, reference) column pair."""
        key = (known, reference)
        found = self._known.get(key)
        if found is None:
            values = self.df[known]
            mark = values.notna().to_numpy()
            codes = self.pred_codes
            in_release = codes >= 0
            added = in_release & ~mark
            bench = self.df[reference].notna().to_numpy()
            sampled = np.zeros(max(self._n_pred, 1), dtype=bool)
            sampled[codes[bench & in_release]] = True
            top = pd.to_numeric(values, errors="coerce").max() if mark.any() else None
            counts = KnownCounts(added=int(added.sum()), added_in_sampled=int(sampled[codes[added]].sum()),
                                 unmarked_benchmark=int((bench & ~mark).sum()), version=version_number(top))
            counts.check(known=known, reference=str(reference))
            found = self._known[key] = (self if mark.all() else self.restrict(mark), counts)
        return found

    def _sample(self, reference: Hashable, spec: WeightsSpec,
                draws: Hashable | None) -> tuple[BenchmarkSample, np.ndarray, np.ndarray]:
        """The benchmark sample without name flags, with the benchmark's rows in the release and
        their cluster codes (what the name flags are read from)."""
        df = self.df
        if spec.kind == "column":
            check_column(df, spec.column, "weights")
        if draws is not None:
            if isinstance(draws, bool):
                raise InputError(f"draws={draws!r}: give the name of the column that holds each cluster's number of draws, or None")
            check_column(df, draws, "draws")
        ref_all = df[reference]
        bench_rows = np.flatnonzero(ref_all.notna().to_numpy())
        if bench_rows.size == 0:
            raise InputError(f"reference column {reference!r} is null on every row: there is no benchmark to estimate from")
        pcodes_b = self.pred_codes[bench_rows]
        in_rel = pcodes_b >= 0
        records_set_aside = int((~in_rel).sum())
        ref_b = ref_all.iloc[bench_rows]
        check_id_types(ref_b, "reference")
        rows = bench_rows[in_rel]
        if rows.size == 0:
            raise InputError(
                f"the benchmark is empty after restriction to the release: none of the {bench_rows.size} records "
                f"with a {reference!r} has a {self.prediction!r}; check that the benchmark and the release "
                "share record ids (SPEC 2.1)"
            )
        ref_codes, labels = pd.factorize(ref_b.iloc[np.flatnonzero(in_rel)], use_na_sentinel=True)
        ref_codes = np.asarray(ref_codes, dtype=np.int64)
        k = len(labels)
        clusters_set_aside = int(ref_b.nunique()) - k
        pcodes = pcodes_b[in_rel]
        size = np.bincount(ref_codes, minlength=k)

        # contingency: one row per (true cluster, predicted cluster) intersection
        width = np.int64(max(self._n_pred, 1))
        key = ref_codes * width + pcodes
        ukey, piece_n = np.unique(key, return_counts=True)
        piece_cluster = ukey // width
        piece_pred = ukey % width
        piece_m = self.cluster_sizes[piece_pred]
        piece_label = np.asarray(self._pred_uniques.take(piece_pred), dtype=object)

        # weights and draws
        values = None
        if spec.kind == "column":
            values = self._per_cluster(spec.column, rows, ref_codes, k, labels, "weights", integer=False)
        weight = weights_for(spec, size, labels, values)
        if draws is None:
            n_draws = np.ones(k, dtype=np.int64)
        else:
            dvals = self._per_cluster(draws, rows, ref_codes, k, labels, "draws", integer=True)
            n_draws = dvals.astype(np.int64)

        return BenchmarkSample(
            labels=np.asarray(labels, dtype=object),
            size=size,
            weight=np.asarray(weight, dtype=np.float64),
            draws=n_draws,
            piece_cluster=piece_cluster,
            piece_n=piece_n,
            piece_m=piece_m,
            piece_label=piece_label,
            n_records=self.n_records,
            n_clusters=self.n_clusters,
            design=spec.design,
            records_set_aside=records_set_aside,
            size_histogram=self.size_histogram(),
            clusters_set_aside=clusters_set_aside,
        ), rows, ref_codes

    def benchmark_rows(self, *, reference: Hashable, columns: dict[str, Hashable]) -> pd.DataFrame:
        """The benchmark records (non-null ``reference``) with ``reference`` and ``columns``
        ({parameter: column}, checked under the parameter's name): the small table from which
        per-entity attributes and names are read (SPEC 8)."""
        check_column(self.df, reference, "reference")
        for parameter, column in columns.items():
            check_column(self.df, column, parameter)
        wanted = list(dict.fromkeys([reference, *columns.values()]))
        return self.df.loc[self.df[reference].notna().to_numpy(), wanted]

    def _per_cluster(self, column: Hashable, rows: np.ndarray, ref_codes: np.ndarray, k: int,
                     labels: object, what: str, *, integer: bool) -> np.ndarray:
        raw = self.df[column].iloc[rows]
        if pd.api.types.is_bool_dtype(raw.dtype) or pd.api.types.infer_dtype(raw, skipna=True) == "boolean":
            raise InputError(f"{what} column {column!r} holds true/false values; {what} are numbers "
                             f"({'w_c = 1/p_c > 0' if what == 'weights' else 'how many times each cluster was drawn'})")
        vals = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
        nonnum = np.isnan(vals) & raw.notna().to_numpy()
        if nonnum.any():
            i = int(np.flatnonzero(nonnum)[0])
            raise InputError(f"{what} column {column!r}: value {raw.iloc[i]!r} is not a number")
        isnan = np.isnan(vals)
        lo = np.full(k, np.inf)
        hi = np.full(k, -np.inf)
        np.minimum.at(lo, ref_codes, np.where(isnan, np.inf, vals))
        np.maximum.at(hi, ref_codes, np.where(isnan, -np.inf, vals))
        nulls = np.bincount(ref_codes[isnan], minlength=k) > 0
        return check_cluster_values(lo, hi, nulls, labels, column=column, what=what, integer=integer)

    def _name_flags(self, name: Hashable, rows: np.ndarray, ref_codes: np.ndarray, k: int):
        """Homonymy, name-variation and has-name flags of each sampled cluster (SPEC 7).

        A sampled cluster is homonymous when one of its names occurs on more records of the
        release than inside the cluster; it varies when it holds two distinct names. Only the
        names of benchmark records matter: for a string column not yet coded (summary
        statistics of the same release code it), the benchmark names are coded and every
        record of the release is looked up among them in one Arrow ``index_in`` pass; other
        columns are coded whole (categories, integers: no hashing of strings).
        """
        check_column(self.df, name, "name")
        arr = None if name in self._names else _arrow_strings(self.df[name])
        if arr is not None:
            nb, dictionary = _dictionary_encode(arr.take(pa.array(rows)))
            n_names = len(dictionary)
            pop = _arrow_codes(pc.index_in(arr, value_set=dictionary)) if n_names else nb[:0]
        else:
            pop, n_names = self.name_codes(name)
            nb = pop[rows]
        if self.has_nulls and pop.size:
            pop = pop[self.pred_codes >= 0]
        pop_count = np.bincount(pop[pop >= 0], minlength=max(n_names, 1))
        named = nb >= 0
        has_name = np.bincount(ref_codes[named], minlength=k) > 0
        if not named.any():
            z = np.zeros(k, dtype=bool)
            return z, z, has_name
        width = np.int64(max(n_names, 1))
        key = ref_codes[named] * width + nb[named]
        ukey, in_c = np.unique(key, return_counts=True)
        c, nm = ukey // width, ukey % width
        outside = pop_count[nm] > in_c
        homonym = np.bincount(c[outside], minlength=k) > 0
        variation = np.bincount(c, minlength=k) >= 2
        return homonym, variation, has_name


def clustering_table(df: pd.DataFrame, *, cluster: Hashable, name: Hashable | None = None,
                     record_id: Hashable | None = None) -> ClusteringTable:
    """Size table (and name counts) of the clustering in column ``cluster``."""
    return PandasRelease(df, prediction=cluster, record_id=record_id).clustering_table(name=name)


def benchmark_sample(df: pd.DataFrame, *, prediction: Hashable, reference: Hashable,
                     weights: str | dict | WeightsSpec = "cluster_size", draws: Hashable | None = None,
                     name: Hashable | None = None, record_id: Hashable | None = None,
                     known: Hashable | None = KNOWN_AUTO) -> BenchmarkSample:
    """The benchmark restricted to the release (and to the records known at labelling,
    SPEC 14), aggregated per sampled cluster (SPEC 2.1, 4)."""
    rel = PandasRelease(df, prediction=prediction, record_id=record_id)
    return rel.benchmark_sample(reference=reference, weights=weights, draws=draws, name=name, known=known)


def contingency(df: pd.DataFrame, *, prediction: Hashable, reference: Hashable
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Full contingency table of two clusterings on the release population.

    Returns (true cluster index, predicted cluster index, count) per non-empty cell.
    Every record of the release must have a reference id.
    """
    df = check_frame(df)
    check_column(df, prediction, "prediction")
    check_column(df, reference, "reference")
    check_id_types(df[prediction], "prediction")
    check_id_types(df[reference], "reference")
    pcodes, _ = _factorize(df[prediction])
    pop = pcodes >= 0
    if not pop.any():
        raise InputError(f"prediction column {prediction!r} is null on every row: the release is empty")
    tcodes_all, _ = _factorize(df[reference])
    missing = pop & (tcodes_all < 0)
    if missing.any():
        raise InputError(
            f"reference column {reference!r} is null on {int(missing.sum())} records of the release; exact metrics "
            "need the true cluster of every record (use estimate() for a benchmark sample)"
        )
    t_idx, p_idx, counts, _, _ = contingency_from_codes(tcodes_all, pcodes)
    return t_idx, p_idx, counts


def contingency_from_codes(a_codes: np.ndarray, b_codes: np.ndarray
                           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The contingency table of two codings of the same rows, on the rows where both are ≥ 0.

    Returns ``(a_idx, b_idx, count, a_codes_used, b_codes_used)``: one entry per non-empty
    cell, with compact cluster indices (0 … number of clusters − 1, in code order) and, for
    each compact index, the original code it stands for. Used for exact metrics (SPEC 5) and
    for the comparison of two releases on their common records (SPEC 10).
    """
    a_codes = np.asarray(a_codes, dtype=np.int64)
    b_codes = np.asarray(b_codes, dtype=np.int64)
    both = (a_codes >= 0) & (b_codes >= 0)
    a, a_used = _compact(a_codes[both])
    b, b_used = _compact(b_codes[both])
    if a.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty, a_used, b_used
    n_b = int(b_used.size)
    # hash the row keys (no sort of the rows), then sort the few distinct cells
    cell, keys = pd.factorize(a * n_b + b)
    counts = np.bincount(cell, minlength=len(keys))
    keys = np.asarray(keys, dtype=np.int64)
    order = np.argsort(keys, kind="stable")
    ukey = keys[order]
    return ukey // n_b, ukey % n_b, counts[order].astype(np.int64), a_used, b_used


def _compact(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Codes ≥ 0 renumbered 0 … k − 1 in code order, and the code of each new number."""
    if codes.size == 0:
        return codes, codes
    present = np.zeros(int(codes.max()) + 1, dtype=bool)
    present[codes] = True
    used = np.flatnonzero(present)
    remap = np.full(present.size, -1, dtype=np.int64)
    remap[used] = np.arange(used.size, dtype=np.int64)
    return remap[codes], used
