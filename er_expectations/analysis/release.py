"""The Python API: ``summarize``, ``estimate``, ``exact_metrics`` and ``cluster_errors``.

Each function aggregates the record table with the pandas engine and hands the small
tables to :mod:`er_expectations.stats`. Names and arguments are the public contract.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from er_expectations.core.deprecation import old_call_forms
from er_expectations.core.errors import InputError
from er_expectations.engines.base import KNOWN_AUTO, WeightsSpec
from er_expectations.engines.pandas.release import PandasRelease, contingency
from er_expectations.stats import (
    DEFAULT_CI_METHOD,
    DEFAULT_N_BOOT,
    METRICS,
    BenchmarkSample,
    check_beta,
    check_ci_level,
    check_interval_options,
    error_contributions,
    estimate_metrics,
    exact_metrics_from_contingency,
    interval_seed,
    parse_hill_orders,
    resolve_metrics,
    summary_statistics,
    uses_bootstrap,
)
from er_expectations.stats import (
    cluster_errors as _cluster_errors,
)
from er_expectations.stats.blind_spot import sample_blind_spots, sample_skewed_sizes

__all__ = [
    "ESTIMATE_COLUMNS",
    "Release",
    "cluster_errors",
    "estimate",
    "estimates_frame",
    "exact_metrics",
    "summarize",
]

#: Columns of the frame returned by :func:`estimate`.
ESTIMATE_COLUMNS = ("estimate", "std_error", "ci_lower", "ci_upper", "draws", "clusters", "note", "ci_method")


@old_call_forms(positional=('cluster', 'name', 'hill_orders'), defaults={'cluster': 'inventor_id'})
def summarize(
    df: pd.DataFrame,
    *,
    cluster: Hashable,
    name: Hashable | None = None,
    hill_orders: Sequence[float] = (0, 1, 2, math.inf),
    record_id: Hashable | None = None,
) -> pd.Series:
    """Summary statistics of the clustering in column ``cluster`` (SPEC 3).

    Rows whose ``cluster`` is null are outside the release and ignored.

    Parameters
    ----------
    df : pandas.DataFrame
        One row per record.
    cluster : hashable
        The column of predicted cluster ids (null: the record is not in this release).
    name : hashable, optional
        The column of record names, for the homonymy and name variation rates (SPEC 3).
    hill_orders : sequence of float
        The orders q of the Hill numbers (SPEC 3), q ≥ 0, ``math.inf`` allowed.
    record_id : hashable, optional
        The record id column: a duplicated id raises :class:`InputError`.

    Returns
    -------
    pandas.Series
        n_records, n_clusters, average_cluster_size, matching_rate, hill_number_<q> for each
        order and, with ``name``, homonymy_rate and name_variation_rate.

    Examples
    --------
    >>> import pandas as pd
    >>> import er_expectations as erx
    >>> df = pd.DataFrame({"cluster": ["a", "a", "b", None]})
    >>> erx.summarize(df, cluster="cluster", hill_orders=[0])[["n_records", "n_clusters", "hill_number_0"]].tolist()
    [3.0, 2.0, 2.0]
    """
    return Release(df, prediction=cluster, name=name, record_id=record_id).summarize(hill_orders=hill_orders)


def estimates_frame(results: dict, sample: BenchmarkSample, *, beta: float, ci_level: float,
                    bias_adjust: bool, ci_method: str = DEFAULT_CI_METHOD, n_boot: int | None = None,
                    seed: int | None = None) -> pd.DataFrame:
    """Turn ``estimate_metrics`` output into the documented DataFrame (with ``attrs``).

    Column ``ci_method`` says where each row's interval comes from (linearization,
    bootstrap, zero_event or none, SPEC 6).
    """
    rows = {
        mid: {
            "estimate": r.estimate,
            "std_error": r.std_error,
            "ci_lower": r.ci_lower,
            "ci_upper": r.ci_upper,
            "draws": r.draws,
            "clusters": r.clusters,
            "note": r.note,
            "ci_method": r.interval,
        }
        for mid, r in results.items()
    }
    frame = pd.DataFrame.from_dict(rows, orient="index", columns=list(ESTIMATE_COLUMNS))
    frame.index.name = "metric"
    frame = frame.astype({"estimate": "float64", "std_error": "float64", "ci_lower": "float64",
                          "ci_upper": "float64", "draws": "int64", "clusters": "int64", "note": "object",
                          "ci_method": "object"})
    frame.attrs.update({
        "design": sample.design,
        "ci_level": ci_level,
        "beta": beta,
        "bias_adjust": bias_adjust,
        "n_records": sample.n_records,
        "n_clusters": sample.n_clusters,
        "records_set_aside": sample.records_set_aside,
        "clusters_set_aside": sample.clusters_set_aside,
        "known_column": sample.known_column,
        "records_added": sample.records_added,
        "records_added_in_sampled": sample.records_added_in_sampled,
        "benchmark_version": sample.benchmark_version,
        "ci_method": ci_method,
    })
    if uses_bootstrap(ci_method):
        frame.attrs.update({"n_boot": n_boot, "seed": seed})
    return frame


@old_call_forms(positional=('prediction', 'reference', 'weights', 'draws', 'name', 'metrics', 'beta', 'ci_level'), defaults={'prediction': 'inventor_id', 'reference': 'benchmark_id'})
def estimate(
    df: pd.DataFrame,
    *,
    prediction: Hashable,
    reference: Hashable,
    weights: str | dict | WeightsSpec = "cluster_size",
    draws: Hashable | None = None,
    name: Hashable | None = None,
    metrics: str | Iterable[str] | None = None,
    beta: float = 1.0,
    ci_level: float = 0.95,
    bias_adjust: bool = True,
    record_id: Hashable | None = None,
    ci_method: str = DEFAULT_CI_METHOD,
    n_boot: int = DEFAULT_N_BOOT,
    seed: int | None = None,
    known: Hashable | None = KNOWN_AUTO,
) -> pd.DataFrame:
    """Design-based estimates of performance and true-clustering statistics (SPEC 5–7).

    Parameters
    ----------
    df : pandas.DataFrame
        One row per record.
    prediction : hashable
        The column of predicted cluster ids (null: the record is not in this release).
    reference : hashable
        The column of true cluster ids of the benchmark records (null elsewhere).
    weights : str, dict or column name
        ``"cluster_size"`` (size-proportional sampling, SPEC 2.2), ``"uniform"``, or a column
        with w_c = 1/p_c.
    draws : hashable, optional
        A column with the number of times each benchmark cluster was drawn.
    name : hashable, optional
        The column of record names, for the true homonymy and name variation rates.
    metrics : str or iterable of str, optional
        Metric ids (SPEC 5); default every metric and the true statistics.
    beta : float
        β of the F scores (SPEC 5).
    ci_level : float
        Confidence level of the intervals, in (0, 1).
    bias_adjust : bool
        Use the bias-adjusted ratio estimator (SPEC 6).
    record_id : hashable, optional
        The record id column: a duplicated id raises :class:`InputError`.
    ci_method : str
        How the intervals are computed (SPEC 6), below.
    n_boot : int
        Bootstrap resamples (at most 20,000).
    seed : int, optional
        Seed of the bootstrap; ``None`` draws one and records it in ``attrs['seed']``.
    known : hashable, optional
        The column marking the records known at labelling (SPEC 14), below.

    Returns
    -------
    pandas.DataFrame
        One row per metric with estimate, std_error, ci_lower, ci_upper, draws, clusters, note
        (why a value is missing or suspicious) and ci_method (where the interval comes from).
        ``attrs`` records the design and how many benchmark records/clusters were set aside
        because the release does not contain them.

    Examples
    --------
    >>> import pandas as pd
    >>> import er_expectations as erx
    >>> df = pd.DataFrame({"pred": ["a", "a", "b", "b"], "truth": ["t1", "t1", "t2", "t3"]})
    >>> est = erx.estimate(df, prediction="pred", reference="truth", weights="uniform",
    ...                    metrics=["pairwise_precision"], bias_adjust=False)
    >>> float(est.loc["pairwise_precision", "estimate"])
    0.5

    Notes
    -----

    ``ci_method`` (SPEC 6) is "recommended" (the default: each metric with the method the
    coverage study chose for it, BCa), "linearization" (θ̂ ± z·SE), "logit" (the same on the
    logit scale), "bootstrap" (percentile interval of ``n_boot`` resamples of the draws),
    "bca" (bias-corrected and accelerated) or "studentized". The bootstraps are seeded
    by ``seed``; with ``seed=None`` by ``DEFAULT_SEED`` (0), so the same data give the
    same interval on every run; the seed is recorded in ``attrs['seed']``.
    ``n_boot`` is at most ``MAX_N_BOOT`` (20,000); every option is checked before the data
    is read. A sample without a single error gets the binomial interval of SPEC 6 under
    every method, with a note; column ``ci_method`` names the method of each row.

    ``known`` (SPEC 14) names the column that marks the records known when the benchmark was
    labelled (the ``benchmark_version`` column of a file written by ``er-expectations
    benchmark``, joined onto the release: null on records added since). The release is then
    evaluated on its known records only, and ``attrs`` counts the records set aside
    (``records_added``, ``records_added_in_sampled``: those in a predicted cluster holding a
    benchmark record) and names the ``benchmark_version``. The default ``"auto"`` uses the
    column ``benchmark_version`` when ``df`` has it; ``None`` evaluates every record (then a
    record added after labelling to the predicted cluster of a benchmark entity counts as an
    error; ``attrs['known_column']`` is None).
    """
    check_beta(beta)
    check_ci_level(ci_level)
    check_flag(bias_adjust, parameter="bias_adjust")
    check_interval_options(ci_method, n_boot, seed)
    resolve_metrics(metrics, names=name is not None)
    rel = Release(df, prediction=prediction, name=name, record_id=record_id)
    return rel.estimate(reference=reference, weights=weights, draws=draws, metrics=metrics, beta=beta,
                        ci_level=ci_level, bias_adjust=bias_adjust, ci_method=ci_method, n_boot=n_boot,
                        seed=seed, known=known)


@old_call_forms(positional=('prediction', 'reference', 'beta'), defaults={'prediction': 'inventor_id', 'reference': 'true_id'})
def exact_metrics(
    df: pd.DataFrame,
    *,
    prediction: Hashable,
    reference: Hashable,
    beta: float = 1.0,
) -> pd.Series:
    """Exact performance metrics when ``reference`` gives the true cluster of every record.

    Pair counting for pairwise metrics, exact-match counting for cluster metrics, the
    paper's cluster-averaged b-cubed, and homogeneity 1 − H(C|Ĉ)/H(C) (SPEC 5).

    Parameters
    ----------
    df : pandas.DataFrame
        One row per record.
    prediction : hashable
        The column of predicted cluster ids.
    reference : hashable
        The column of true cluster ids, on every record.
    beta : float
        β of the F scores (SPEC 5).

    Returns
    -------
    pandas.Series
        One value per metric. Undefined metrics are NaN with an
        :class:`UndefinedMetricWarning` and a reason in ``attrs['notes']``.

    Examples
    --------
    >>> import pandas as pd
    >>> import er_expectations as erx
    >>> df = pd.DataFrame({"pred": ["a", "a", "b", "b"], "truth": ["t1", "t1", "t2", "t3"]})
    >>> float(erx.exact_metrics(df, prediction="pred", reference="truth")["pairwise_precision"])
    0.5
    """
    beta = check_beta(beta)
    t, p, n = contingency(df, prediction=prediction, reference=reference)
    values, notes = exact_metrics_from_contingency(t, p, n, beta=beta)
    out = pd.Series(values, name="exact", dtype="float64")
    out.index.name = "metric"
    out.attrs.update({"beta": beta, "notes": notes, "n_records": int(n.sum())})
    return out


@old_call_forms(positional=('prediction', 'reference', 'weights', 'draws'), defaults={'prediction': 'inventor_id', 'reference': 'benchmark_id'})
def cluster_errors(
    df: pd.DataFrame,
    *,
    prediction: Hashable,
    reference: Hashable,
    weights: str | dict | WeightsSpec = "cluster_size",
    draws: Hashable | None = None,
    metric: str | None = None,
    beta: float = 1.0,
    record_id: Hashable | None = None,
    known: Hashable | None = KNOWN_AUTO,
) -> pd.DataFrame:
    """Per-sampled-cluster error table (SPEC 4), for error analysis and audit.

    Parameters
    ----------
    df : pandas.DataFrame
        One row per record.
    prediction : hashable
        The column of predicted cluster ids (null: the record is not in this release).
    reference : hashable
        The column of true cluster ids of the benchmark records (null elsewhere).
    weights : str, dict or column name
        The sampling design, as in :func:`estimate`.
    draws : hashable, optional
        A column with the number of times each benchmark cluster was drawn.
    metric : str, optional
        A metric id: adds each cluster's share of its estimated error and sorts by it.
    beta : float
        β of the F scores.
    record_id : hashable, optional
        The record id column: a duplicated id raises :class:`InputError`.
    known : hashable, optional
        Restricts the release to the records known at labelling, as in :func:`estimate`.

    Returns
    -------
    pandas.DataFrame
        One row per benchmark cluster in the release: size, weight, draws, number of predicted
        clusters it is split over, EI, SDE, OCE, UCE, ROCE, RUCE and, with ``metric``, the
        cluster's share of that metric's estimated error (sorted by it, largest first).

    Examples
    --------
    >>> import pandas as pd
    >>> import er_expectations as erx
    >>> df = pd.DataFrame({"pred": ["a", "a", "b", "b"], "truth": ["t1", "t1", "t2", "t3"]})
    >>> erx.cluster_errors(df, prediction="pred", reference="truth", weights="uniform")["OCE"].tolist()
    [0.0, 1.0, 1.0]
    """
    rel = PandasRelease(df, prediction=prediction, record_id=record_id)
    sample = rel.benchmark_sample(reference=reference, weights=weights, draws=draws, known=known)
    return sample_error_frame(sample, metric=metric, beta=beta)


def sample_error_frame(sample: BenchmarkSample, *, metric: str | None = None, beta: float = 1.0) -> pd.DataFrame:
    """The error table of :func:`cluster_errors` from an aggregated sample."""
    e = _cluster_errors(sample)
    k = sample.labels.shape[0]
    frame = pd.DataFrame({
        "cluster": sample.labels,
        "size": sample.size,
        "weight": sample.weight,
        "draws": sample.draws,
        "predicted_clusters": np.bincount(sample.piece_cluster, minlength=k),
        "EI": e.ei,
        "SDE": e.sde,
        "OCE": e.oce,
        "UCE": e.uce,
        "ROCE": e.roce,
        "RUCE": e.ruce,
    })
    if metric is not None:
        if metric not in METRICS:
            resolve_metrics([metric], names=True)  # raises with did-you-mean
        if METRICS[metric].kind != "performance":
            raise InputError(f"metric={metric!r}: error contributions exist for performance metrics only")
        frame["error_share"] = error_contributions(sample, metric, beta=check_beta(beta))
        frame = frame.sort_values("error_share", ascending=False, kind="stable").reset_index(drop=True)
    return frame


def check_flag(value: object, *, parameter: str) -> bool:
    """A true/false option must be a bool: ``bias_adjust="no"`` would otherwise read as true."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise InputError(f"{parameter}={value!r} is not true or false; pass {parameter}=True or {parameter}=False")


class Release:
    """One release of a record table, for several statistics at the cost of one aggregation.

    ``summarize`` and ``estimate`` each aggregate the table; a :class:`Release` factorises
    the prediction (and name) column once and reuses it::

        rel = erx.Release(df, prediction="inventor_id", name="full_name")
        rel.summarize(); rel.estimate(reference="benchmark_id")

    Do not modify ``df`` while the object is in use: the aggregates are not recomputed.
    """

    @old_call_forms(data=2, positional=("prediction",), defaults={"prediction": "inventor_id"}, name="erx.Release")
    def __init__(self, df: pd.DataFrame, *, prediction: Hashable, name: Hashable | None = None,
                 record_id: Hashable | None = None) -> None:
        self._rel = PandasRelease(df, prediction=prediction, record_id=record_id)
        self.prediction = prediction
        self.name = name

    @old_call_forms(positional=("hill_orders",), name="Release.summarize")
    def summarize(self, *, hill_orders: Sequence[float] = (0, 1, 2, math.inf)) -> pd.Series:
        """Same as :func:`summarize` on this release."""
        orders = parse_hill_orders(hill_orders)
        stats = summary_statistics(self._rel.clustering_table(name=self.name), hill_orders=orders)
        out = pd.Series(stats, name=self.prediction, dtype="float64")
        out.attrs.update({"cluster": self.prediction, "name": self.name, "hill_orders": orders})
        return out

    @old_call_forms(positional=("reference", "weights", "draws", "metrics", "beta", "ci_level"),
                    defaults={"reference": "benchmark_id"}, name="Release.estimate")
    def estimate(self, *, reference: Hashable, weights: str | dict | WeightsSpec = "cluster_size",
                 draws: Hashable | None = None, metrics: str | Iterable[str] | None = None, beta: float = 1.0,
                 ci_level: float = 0.95, bias_adjust: bool = True, ci_method: str = DEFAULT_CI_METHOD,
                 n_boot: int = DEFAULT_N_BOOT, seed: int | None = None,
                 known: Hashable | None = KNOWN_AUTO) -> pd.DataFrame:
        """Same as :func:`estimate` on this release (with the release's name column)."""
        beta = check_beta(beta)
        ci_level = check_ci_level(ci_level)
        bias_adjust = check_flag(bias_adjust, parameter="bias_adjust")
        ci_method, n_boot, seed = check_interval_options(ci_method, n_boot, seed)
        if uses_bootstrap(ci_method):
            seed = interval_seed(seed)
        ids = resolve_metrics(metrics, names=self.name is not None)
        sample = self._rel.benchmark_sample(reference=reference, weights=weights, draws=draws, name=self.name,
                                            known=known)
        results = estimate_metrics(sample, ids, beta=beta, ci_level=ci_level, bias_adjust=bias_adjust,
                                   ci_method=ci_method, n_boot=n_boot, seed=seed)
        spots = sample_blind_spots(sample, results, beta=beta, bias_adjust=bias_adjust)
        skews = sample_skewed_sizes(sample, [m for m in results if results[m].defined])
        warnings = [(m, s.text(METRICS[m].label)) for m, s in spots.items() if s.warning]
        warnings += [(m, s.text(METRICS[m].label)) for m, s in skews.items()]
        for metric, text in warnings:  # what the draws cannot show, as a note (SPEC 6.1)
            res = results[metric]
            results[metric] = replace(res, note=f"{res.note}; {text}" if res.note else text)
        frame = estimates_frame(results, sample, beta=beta, ci_level=ci_level, bias_adjust=bias_adjust,
                                ci_method=ci_method, n_boot=n_boot, seed=seed)
        frame.attrs["blind_spots"] = {metric: {**spot.as_dict(), "text": spot.text(METRICS[metric].label)}
                                      for metric, spot in spots.items()}
        frame.attrs["skewed_sizes"] = {metric: skew.as_dict() for metric, skew in skews.items()}
        return frame
