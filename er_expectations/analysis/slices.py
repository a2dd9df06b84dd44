"""``erx.find_slices``: slices of entities with high error, found with honest statistics (SPEC 12.2).

The cluster-wise error metric of SPEC 4 (EI, OCE, UCE, ROCE, RUCE or SDE) of every sampled
true cluster is related to the cluster's features by a design-weighted regression tree
grown on a random half of the draws; the slices it proposes are estimated and tested on the
other half (:mod:`er_expectations.stats.slices`).

*Features* are properties of the true cluster (the entity), read from its benchmark records
in the release:

* given columns (``features=``): a numeric column by the mean over the cluster's records, a
  text, categorical or true/false column by its mode (ties: the first value in text order);
  null values are left out, and a cluster whose records are all null has an *unknown*
  value. A condition on a numeric feature sends the unknown values to the side that
  separates the search part better and says so ("size ≥ 12 or unknown"); for a categorical
  feature, unknown is a category of its own.
* derived ones (``derived=True``): ``cluster_size`` (records of the true cluster in the
  release); with ``name=``, ``name_length`` (mean characters of its records' names) and
  ``name_spellings`` (distinct spellings of the name); with ``block=``, ``block_size`` (mean
  over its records of the number of release records that share the record's block); with
  ``surname=``, ``imputed_ethnicity`` (SPEC 8, from the shipped Census tables: imputed per
  true cluster, never shown per person; only slice definitions and aggregates leave this
  module).

A feature constant over the sampled clusters is dropped with a note (``attrs["notes"]``).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any

import numpy as np
import pandas as pd

from er_expectations.analysis.ethnicity import CATEGORIES, impute_ethnicity
from er_expectations.core.deprecation import old_call_forms
from er_expectations.core.errors import InputError
from er_expectations.engines.base import WeightsSpec
from er_expectations.engines.pandas.checks import check_column
from er_expectations.engines.pandas.release import PandasRelease
from er_expectations.stats import BenchmarkSample, cluster_errors
from er_expectations.stats.slice_power import SlicePower, slice_power
from er_expectations.stats.slices import UNITS, Features, SliceSearch, check_metric, search_slices
from er_expectations.stats.subgroups import DEFAULT_MIN_DRAWS

__all__ = ["DERIVED_FEATURES", "MAX_CATEGORIES", "SLICE_COLUMNS", "cluster_features", "find_slices",
           "sample_slices", "slice_inputs", "slices_frame"]

#: The derived features and what each needs.
DERIVED_FEATURES = {
    "cluster_size": "always",
    "name_length": "name=",
    "name_spellings": "name=",
    "block_size": "block=",
    "imputed_ethnicity": "surname=",
}
#: Most distinct values a categorical feature may take over the sampled clusters.
MAX_CATEGORIES = 50
#: Columns of the frame returned by :func:`find_slices`.
SLICE_COLUMNS = ("slice", "rate", "rate_se", "rate_ci_lower", "rate_ci_upper", "share", "share_ci_lower",
                 "share_ci_upper", "rest_rate", "lift", "lift_ci_lower", "lift_ci_upper", "p_value", "p_adjusted",
                 "significant", "status", "draws", "rest_draws", "clusters", "search_lift", "note")


def _cluster_index(rows: pd.DataFrame, reference: Hashable, labels: np.ndarray) -> np.ndarray:
    return pd.Index(labels).get_indexer(rows[reference])


def _mode(idx: np.ndarray, text: np.ndarray, k: int) -> np.ndarray:
    """The most frequent text per cluster (ties: the first in text order); None when none."""
    out = np.full(k, None, dtype=object)
    if idx.size == 0:
        return out
    counts = pd.DataFrame({"c": idx, "v": text}).value_counts().reset_index(name="n")
    counts = counts.sort_values(["c", "n", "v"], ascending=[True, False, True], kind="stable")
    first = counts.drop_duplicates("c")
    out[first["c"].to_numpy(dtype=np.int64)] = first["v"].to_numpy(dtype=object)
    return out


def _mean(idx: np.ndarray, values: np.ndarray, k: int) -> np.ndarray:
    n = np.bincount(idx, minlength=k).astype(np.float64)
    s = np.bincount(idx, weights=values, minlength=k)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(n > 0, s / n, np.nan)


def _aggregate(name: str, series: pd.Series, idx: np.ndarray, k: int) -> tuple[bool, np.ndarray, tuple[str, ...]]:
    """One feature per cluster: numeric by mean, anything else by mode (SPEC 12.2)."""
    keep = series.notna().to_numpy()
    dtype = series.dtype
    if pd.api.types.is_datetime64_any_dtype(dtype) or pd.api.types.is_timedelta64_dtype(dtype):
        raise InputError(f"features: column {name!r} holds dates or durations; give a number (e.g. the year) or a "
                         "category instead")
    if pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype):
        vals = series.to_numpy(dtype=np.float64, na_value=np.nan)
        if np.any(np.isinf(vals[keep])):
            raise InputError(f"features: column {name!r} holds an infinite value; give finite numbers (null for "
                             "unknown)")
        return True, _mean(idx[keep], vals[keep], k), ()
    text = np.array([str(v) for v in series[keep]], dtype=object)
    mode = _mode(idx[keep], text, k)
    cats = tuple(sorted({v for v in mode if v is not None}))
    if len(cats) > MAX_CATEGORIES:
        raise InputError(f"features: column {name!r} takes {len(cats)} distinct values over the sampled clusters "
                         f"(at most {MAX_CATEGORIES}); a slice on it would name dozens of values. Give a coarser "
                         "column (a region instead of a city, a bucket instead of an id), or, if it holds numbers written as "
                         "text, convert it to a numeric type")
    pos = {c: i for i, c in enumerate(cats)}
    return False, np.array([-1 if v is None else pos[v] for v in mode], dtype=np.int64), cats


def cluster_features(df: pd.DataFrame, sample: BenchmarkSample, *, prediction: Hashable, reference: Hashable,
                     features: Iterable[Hashable] = (), derived: bool = True, name: Hashable | None = None,
                     block: Hashable | None = None, surname: Hashable | None = None) -> tuple[Features, list[str]]:
    """The features of every sampled cluster (module docstring) and the notes on them."""
    if isinstance(features, (str, bytes)) or not isinstance(features, Iterable):
        raise InputError(f"features={features!r}: give a list of column names, e.g. features=['country']")
    cols = list(dict.fromkeys(features))
    for i, c in enumerate(cols):
        check_column(df, c, f"features[{i}]")
        if c in (prediction, reference):
            raise InputError(f"features[{i}]={c!r} is the {'prediction' if c == prediction else 'reference'} "
                             "column; a feature describes the entity, give another column")
        if str(c) in DERIVED_FEATURES and derived:
            raise InputError(f"features[{i}]={c!r} has the name of a derived feature; rename the column or pass "
                             "derived=False")
    for parameter, column in (("name", name), ("block", block), ("surname", surname)):
        if column is not None:
            check_column(df, column, parameter)
    in_release = df[prediction].notna().to_numpy() & df[reference].notna().to_numpy()
    wanted = list(dict.fromkeys([prediction, reference, *cols, *(c for c in (name, block, surname) if c is not None)]))
    rows = df.loc[in_release, wanted]  # the benchmark's records only, the columns read
    k = sample.labels.shape[0]
    idx = _cluster_index(rows, reference, sample.labels)
    ok = idx >= 0
    rows, idx = rows.loc[ok], idx[ok]
    names, numeric, values, categories, notes = [], [], [], [], []

    def add(label: str, num: bool, vals: np.ndarray, cats: tuple[str, ...]) -> None:
        unknown = int(np.isnan(vals).sum()) if num else int((vals < 0).sum())
        distinct = np.unique(vals[~np.isnan(vals)]) if num else np.unique(vals[vals >= 0])
        if distinct.size == 0:
            notes.append(f"feature {label!r} dropped: no sampled cluster has a value (null on every record)")
            return
        if distinct.size == 1:
            shown = f"the value {distinct[0]:g}" if num else f"the value {cats[int(distinct[0])]!r}"
            notes.append(f"feature {label!r} dropped: constant over the sampled clusters ({shown}"
                         f"{f'; {unknown} unknown' if unknown else ''})")
            return
        if unknown:
            notes.append(f"feature {label!r}: {unknown} of {k} sampled clusters have no value (null on every "
                         "record); a condition on it says where they go (\"or unknown\")")
        names.append(label)
        numeric.append(num)
        values.append(vals)
        categories.append(cats)

    for c in cols:
        add(str(c), *_aggregate(str(c), rows[c], idx, k))
    if derived:
        add("cluster_size", True, sample.size.astype(np.float64), ())
        if name is not None:
            known = rows[name].notna().to_numpy()
            text = np.array([str(v) for v in rows[name][known]], dtype=object)
            lengths = np.array([len(t) for t in text], dtype=np.float64)
            add("name_length", True, _mean(idx[known], lengths, k), ())
            spell = pd.DataFrame({"c": idx[known], "v": text}).drop_duplicates()
            add("name_spellings", True, np.bincount(spell["c"].to_numpy(dtype=np.int64), minlength=k)
                .astype(np.float64), ())
        if block is not None:
            release_blocks = df.loc[df[prediction].notna().to_numpy(), block]
            sizes = release_blocks.value_counts(dropna=True)
            known = rows[block].notna().to_numpy()
            per_record = rows[block][known].map(sizes).to_numpy(dtype=np.float64)
            add("block_size", True, _mean(idx[known], per_record, k), ())
        if surname is not None:
            ethnicity = _ethnicity(rows, reference, surname, sample.labels, notes)
            if ethnicity is not None:
                add("imputed_ethnicity", False, *ethnicity)
        missing = [f"{f} (needs {need})" for f, need in DERIVED_FEATURES.items()
                   if need != "always" and f not in names and not any(f"{f!r}" in n for n in notes)
                   and {"name=": name, "block=": block}.get(need, surname) is None]
        if missing:
            notes.append(f"derived features not computed: {', '.join(missing)}")
    return Features(tuple(names), tuple(numeric), tuple(values), tuple(categories)), notes


def _ethnicity(rows: pd.DataFrame, reference: Hashable, surname: Hashable, labels: np.ndarray,
               notes: list[str]) -> tuple[np.ndarray, tuple[str, ...]] | None:
    """The imputed ethnicity label of every sampled cluster (codes, categories), from the
    shipped Census tables (SPEC 8)."""
    imputed = impute_ethnicity(rows, reference=reference, surname=surname)
    pos = pd.Index(imputed["cluster"]).get_indexer(pd.Index(labels))
    label = np.full(labels.shape[0], None, dtype=object)
    found = pos >= 0
    got = imputed.iloc[pos[found]]
    label[found] = np.where(got["abstained"].to_numpy(dtype=bool), None, got["label"].astype(object).to_numpy())
    cats = tuple(CATEGORIES)
    return np.array([-1 if v is None or v not in cats else cats.index(v) for v in label], dtype=np.int64), cats


def slice_inputs(sample: BenchmarkSample, metric: str, per: str) -> tuple[np.ndarray, np.ndarray]:
    """(y, g): the cluster-wise metric E(c) of SPEC 4 and the weight g = w (per entity) or s·w."""
    metric = check_metric(metric)
    y = getattr(cluster_errors(sample), metric.lower())
    g = sample.weight * (sample.size if per == "record" else 1.0)
    return np.asarray(y, dtype=np.float64), np.asarray(g, dtype=np.float64)


def slices_frame(result: SliceSearch, sample: BenchmarkSample, notes: list[str]) -> pd.DataFrame:
    """The documented frame of :func:`find_slices`: one row per slice, ``attrs`` say how."""
    rows = [{
        "slice": s.description, "rate": s.rate.estimate, "rate_se": s.rate.std_error,
        "rate_ci_lower": s.rate.ci_lower, "rate_ci_upper": s.rate.ci_upper, "share": s.share.estimate,
        "share_ci_lower": s.share.ci_lower, "share_ci_upper": s.share.ci_upper, "rest_rate": s.rest.estimate,
        "lift": s.lift, "lift_ci_lower": s.lift_ci_lower, "lift_ci_upper": s.lift_ci_upper, "p_value": s.p_value,
        "p_adjusted": s.p_adjusted, "significant": s.significant, "status": s.status, "draws": s.draws,
        "rest_draws": s.rest_draws, "clusters": s.clusters, "search_lift": s.search_lift, "note": s.note,
    } for s in result.slices]
    frame = pd.DataFrame(rows, columns=list(SLICE_COLUMNS))
    text = ("slice", "status", "note")
    frame = frame.astype({**{c: "float64" for c in SLICE_COLUMNS if c not in (*text, "significant", "clusters")},
                          "significant": "bool", "clusters": "int64", **dict.fromkeys(text, "object")})
    o = result.overall
    frame.attrs.update({
        "metric": result.metric, "per": result.per, "inference": result.inference, "alpha": result.alpha,
        "seed": result.seed, "split": result.split, "min_share": result.min_share, "min_draws": result.min_draws,
        "max_depth": result.max_depth, "null_lift": result.null_lift, "null_rate": result.null_rate,
        "hypothesis": result.hypothesis, "overall_rate": o.estimate, "overall_ci_lower": o.ci_lower,
        "overall_ci_upper": o.ci_upper, "features": list(result.features), "k_search": result.k_search,
        "k_estimate": result.k_estimate, "design": sample.design, "sampled_clusters": int(sample.labels.shape[0]),
        "draws_total": int(sample.k), "notes": list(notes),
        "conditions": [[{"feature": c.feature, "op": c.op, "threshold": c.threshold, "upper": c.upper,
                         "categories": list(c.categories), "unknown": c.unknown} for c in s.conditions]
                       for s in result.slices],
    })
    return frame


@old_call_forms(positional=('prediction', 'reference'), defaults={'prediction': 'inventor_id', 'reference': 'benchmark_id'})
def find_slices(
    df: pd.DataFrame,
    *,
    prediction: Hashable,
    reference: Hashable,
    record_id: Hashable | None = None,
    metric: str = "EI",
    features: Iterable[Hashable] = (),
    derived: bool = True,
    name: Hashable | None = None,
    block: Hashable | None = None,
    surname: Hashable | None = None,
    weights: str | dict | WeightsSpec = "cluster_size",
    draws: Hashable | None = None,
    per: str = "entity",
    max_depth: int = 2,
    min_share: float = 0.05,
    min_draws: int = DEFAULT_MIN_DRAWS,
    alpha: float = 0.05,
    ci_level: float = 0.95,
    max_lift: float | None = None,
    max_rate: float | None = None,
    split: float = 0.5,
    max_slices: int = 10,
    seed: int | None = None,
) -> pd.DataFrame:
    """Slices of entities where the errors concentrate, with honest p-values (SPEC 12.2).

    ``metric`` is a cluster-wise error metric of SPEC 4 (EI: share of entities with any error;
    OCE, UCE, ROCE, RUCE, SDE); ``per="record"`` weighs entities by their size. The draws are
    split at random (``seed``; none: a fresh one, in ``attrs["seed"]``) into a search part
    (``split``) and an estimation part; a design-weighted regression tree of at most
    ``max_depth`` conditions, each side at least ``min_share`` of the population, proposes
    slices on the search part; each is estimated on the estimation part and tested for
    rate(slice) > ``max_lift`` × rate(rest) (default 1: any excess error), or rate(slice) >
    ``max_rate``, the p-values Holm-adjusted over the slices reported; ``significant`` when
    the adjusted p-value is below ``alpha``. Slices with fewer than ``min_draws`` estimation
    draws (or a rest with fewer) are reported but not tested.

    Returns one row per slice (columns :data:`SLICE_COLUMNS`): ``slice`` in words, ``rate``
    with its standard error and interval, ``share`` of the population with its interval,
    ``rest_rate``, ``lift`` with its interval, ``p_value``, ``p_adjusted``, ``significant``,
    ``status``, draws of the estimation part in the slice and in the rest, ``search_lift``
    (what the search part saw: not for inference) and ``note``. ``attrs`` hold the options,
    the seed, the overall rate, the features used and the notes (dropped features, unknown
    values). An empty frame means the search part found no split worth testing, which is not
    evidence that no slice exists: the search's power against a planted slice is measured by
    ``erx.simulate(..., slice_power=True)`` and shown on the check's page (SPEC 12.2 "Power").
    Conditions on one feature are merged into their simplest form (SPEC 12.2 "Descriptions").

    Parameters
    ----------
    df : pandas.DataFrame
        The evaluation table, one row per record (SPEC 2.1).
    prediction : hashable
        The column of predicted cluster ids (null: outside the release).
    reference : hashable
        The column of true (benchmark) cluster ids (null: not in the benchmark).
    record_id : hashable, optional
        The record id column.
    metric : str
        The cluster-wise error metric of SPEC 4.
    features : iterable of hashable
        Record columns describing the entities (numeric: mean per entity; otherwise the mode).
    derived : bool
        Add the derived features: ``cluster_size``, and those of ``name``, ``block``, ``surname``.
    name : hashable, optional
        The column of record names (``name_length``, ``name_spellings``).
    block : hashable, optional
        The column of blocking keys (``block_size``).
    surname : hashable, optional
        The column of surnames, for the imputed ethnicity (SPEC 8).
    weights : str, dict or column name
        The sampling design, as in :func:`er_expectations.estimate` (SPEC 1).
    draws : hashable, optional
        A column with the number of times each benchmark cluster was drawn.
    per : str
        ``"entity"`` or ``"record"``, above.
    max_depth : int
        At most this many conditions per slice.
    min_share : float
        The smallest share of the population on each side of a split.
    min_draws : int
        The fewest estimation draws of a tested slice (and of its rest).
    alpha : float
        Level of the Holm-adjusted tests.
    ci_level : float
        Confidence level of the intervals, in (0, 1).
    max_lift : float, optional
        The null hypothesis rate(slice) ≤ ``max_lift`` × rate(rest); default 1.
    max_rate : float, optional
        The null hypothesis rate(slice) ≤ ``max_rate`` (instead of ``max_lift``).
    split : float
        The share of the draws used by the search, in (0, 1).
    max_slices : int
        The most slices reported.
    seed : int, optional
        Seed of the split; ``None`` draws one and records it in ``attrs["seed"]``.

    Returns
    -------
    pandas.DataFrame
        One row per slice, above.

    Examples
    --------
    The 100 entities of the north office have 12 times the error rate of the rest:

    >>> import numpy as np
    >>> import pandas as pd
    >>> import er_expectations as erx
    >>> rng = np.random.default_rng(0)
    >>> truth = np.arange(400).repeat(2)
    >>> north = np.arange(400) < 100
    >>> wrong = north & (rng.random(400) < 0.6) | (rng.random(400) < 0.05)
    >>> pred = truth.copy()
    >>> pred[1::2][wrong] = -1 - np.arange(wrong.sum())
    >>> df = pd.DataFrame({"pred": pred, "ref": truth, "office": np.where(north, "north", "south").repeat(2)})
    >>> found = erx.find_slices(df, prediction="pred", reference="ref", features=["office"], derived=False,
    ...                         weights="uniform", seed=1)
    >>> found.loc[0, "slice"], bool(found.loc[0, "significant"])
    ('office not in {south}', True)
    """
    if not isinstance(derived, bool):
        raise InputError(f"derived={derived!r}: pass derived=True or derived=False")
    metric = check_metric(metric)
    if per not in UNITS:
        raise InputError(f"per={per!r}: give 'entity' (the share of entities with the error) or 'record'")
    if max_lift is not None and max_rate is not None:
        raise InputError("give max_lift or max_rate, not both")
    rel = PandasRelease(df, prediction=prediction, record_id=record_id)
    sample = rel.benchmark_sample(reference=reference, weights=weights, draws=draws)
    null_lift = None if max_rate is not None else (1.0 if max_lift is None else max_lift)
    result, notes = sample_slices(rel.df, sample, prediction=prediction, reference=reference, metric=metric, per=per,
                                  features=features, derived=derived, name=name, block=block, surname=surname,
                                  max_depth=max_depth, min_share=min_share, min_draws=min_draws, alpha=alpha,
                                  ci_level=ci_level, null_lift=null_lift, null_rate=max_rate, split=split,
                                  max_slices=max_slices, seed=seed)
    return slices_frame(result, sample, notes)


def sample_slices(rows: pd.DataFrame, sample: BenchmarkSample, *, prediction: Hashable, reference: Hashable,
                  metric: str = "EI", per: str = "entity", features: Iterable[Hashable] = (), derived: bool = True,
                  name: Hashable | None = None, block: Hashable | None = None, surname: Hashable | None = None,
                  power: bool = False, **options: Any) -> tuple[SliceSearch, list[str]] | tuple[
                      SliceSearch, list[str], SlicePower | None]:
    """:func:`~er_expectations.stats.slices.search_slices` on a benchmark sample whose cluster
    features are read from ``rows`` (the release's records, or only its benchmark records when
    ``block`` is None): the search of :func:`find_slices` for any engine.

    ``power=True`` returns a third value: when no slice is significant, the chance that the same
    search (same options, features and draws) finds a planted slice of 20 % of the entities with
    3× the error rate (:func:`~er_expectations.stats.slice_power.slice_power`, fixed seed 0, 200
    replications; SPEC 12.2 "Power"); None when a slice is significant or the metric is SDE."""
    feats, notes = cluster_features(rows, sample, prediction=prediction, reference=reference, features=features,
                                    derived=derived, name=name, block=block, surname=surname)
    if not feats.names:
        raise InputError("find_slices: no feature left to search on" + (f" ({'; '.join(notes)})" if notes else "")
                         + ". Give columns that vary between entities with features=[...], or derived=True")
    y, g = slice_inputs(sample, metric, per)
    result = search_slices(y, g, sample.draws, sample.labels, feats, metric=metric, per=per, **options)
    if not power:
        return result, notes
    found = None
    if not result.significant and result.metric != "SDE":
        same = {k: v for k, v in options.items() if k != "seed"}
        found = slice_power(y, g, sample.draws, sample.labels, feats, per=per, metric=metric, **same)
    return result, notes, found
