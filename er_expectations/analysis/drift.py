"""Drift between two releases (SPEC 10): fixed-subset statistics, agreement, estimate change, diff.

Every function takes one record table with a column per release (null = the record is not
in that release) and compares the *current* release with a *baseline* release on the
records both hold. The GX expectations of :mod:`er_expectations.gx.expectations.drift` call
the ``*_of`` functions on the aggregates their metrics share, so a check in Data Docs and
the Python call below give the same numbers.

* :func:`statistic_change` — a summary statistic (SPEC 3) of both releases on the common
  records, so that growth of the data and a change of the algorithm are told apart.
* :func:`release_agreement` — exact metrics (SPEC 5) of the current release taking the
  baseline as the reference, on the common records.
* :func:`estimate_change` — an estimated metric of both releases on the same benchmark
  draws, with the paired standard error of the change.
* :func:`diff_releases` — which clusters were merged, split, both or left unchanged.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from er_expectations.core.deprecation import old_call_forms
from er_expectations.core.errors import InputError, UndefinedMetricWarning
from er_expectations.core.hints import did_you_mean
from er_expectations.engines.base import WeightsSpec
from er_expectations.engines.pairs import AggregatedPair
from er_expectations.engines.pandas.pairs import ReleasePair
from er_expectations.engines.pandas.release import PandasRelease, check_column, check_frame
from er_expectations.stats import (
    DEFAULT_CI_METHOD,
    DEFAULT_N_BOOT,
    PERFORMANCE_METRICS,
    check_beta,
    check_ci_level,
    check_interval_options,
    parse_hill_orders,
    summary_statistics,
)
from er_expectations.stats.drift import CHANGE_CLASSES, PairedChange, paired_change
from er_expectations.stats.exact import exact_metrics_from_sums
from er_expectations.stats.wording import statistic_label

__all__ = [
    "AGREEMENT_METRICS",
    "DRIFT_STATISTICS",
    "Agreement",
    "DiffExample",
    "ReleaseDiff",
    "StatisticChange",
    "agreement_of",
    "diff_of",
    "diff_releases",
    "estimate_change",
    "release_agreement",
    "statistic_change",
    "statistic_change_of",
]

#: Summary statistics (SPEC 3) a fixed-subset change can compare (n_records is the same on
#: both sides of a fixed subset, so it is left out).
DRIFT_STATISTICS: tuple[str, ...] = (
    "average_cluster_size",
    "n_clusters",
    "matching_rate",
    "hill_number",
    "homonymy_rate",
    "name_variation_rate",
)
#: Statistics that need a name column.
_NAMED = ("homonymy_rate", "name_variation_rate")
#: Exact metrics of one release against another (SPEC 10, agreement).
AGREEMENT_METRICS: tuple[str, ...] = PERFORMANCE_METRICS


def _check_choice(value: object, choices: tuple[str, ...], parameter: str) -> str:
    if not isinstance(value, str) or value not in choices:
        close = did_you_mean(str(value), choices)
        raise InputError(f"{parameter}={value!r} is not one of {', '.join(choices)}" + (f"; {close}" if close else ""))
    return value


# -- fixed-subset statistic -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StatisticChange:
    """A statistic of the current and the baseline release on their common records (SPEC 10).

    ``change`` = current − baseline; ``relative_change`` = change / |baseline| (NaN when
    the baseline value is 0). ``current_records`` / ``baseline_records`` are the sizes of the
    two whole releases, ``common_records`` the fixed subset both values are computed on.
    """

    statistic: str
    label: str
    current: float
    baseline: float
    common_records: int
    current_records: int
    baseline_records: int
    current_clusters: int
    baseline_clusters: int
    q: float | None = None

    @property
    def change(self) -> float:
        return self.current - self.baseline

    @property
    def relative_change(self) -> float:
        return self.change / abs(self.baseline) if self.baseline != 0 else math.nan

    def to_dict(self) -> dict[str, Any]:
        return {"statistic": self.statistic, "label": self.label, "q": self.q, "current": self.current,
                "baseline": self.baseline, "change": self.change, "relative_change": self.relative_change,
                "common_records": self.common_records, "current_records": self.current_records,
                "baseline_records": self.baseline_records, "current_clusters": self.current_clusters,
                "baseline_clusters": self.baseline_clusters}


def _statistic(release: Any, statistic: str, q: float | None, name: Hashable | None) -> tuple[float, int]:
    table = release.clustering_table(name=name if statistic in _NAMED else None)
    orders = (q,) if statistic == "hill_number" else ()
    values = summary_statistics(table, hill_orders=orders)
    key = next(k for k in values if k.startswith("hill_number")) if statistic == "hill_number" else statistic
    return float(values[key]), table.n_clusters


def statistic_change_of(pair: ReleasePair | AggregatedPair, statistic: str, *, q: float | None = None,
                        name: Hashable | None = None) -> StatisticChange:
    """:func:`statistic_change` on a :class:`ReleasePair` (its restriction is computed once)."""
    _check_choice(statistic, DRIFT_STATISTICS, "statistic")
    if statistic == "hill_number":
        if q is None:
            raise InputError("statistic='hill_number' needs its order q (e.g. q=2)")
        q = parse_hill_orders((q,), parameter="q")[0]
    if statistic in _NAMED and name is None:
        raise InputError(f"statistic={statistic!r} needs a name column: pass name=<column>")
    label = statistic_label(statistic, q=q)
    n_common = pair.n_common
    if n_common == 0:
        return StatisticChange(statistic, label, math.nan, math.nan, 0, pair.current.n_records,
                               pair.baseline.n_records, 0, 0, q)
    cur, base = pair.restricted()
    value_c, clusters_c = _statistic(cur, statistic, q, name)
    value_b, clusters_b = _statistic(base, statistic, q, name)
    return StatisticChange(statistic, label, value_c, value_b, n_common, pair.current.n_records,
                           pair.baseline.n_records, clusters_c, clusters_b, q)


def _pair(df: pd.DataFrame, current: Hashable, baseline: Hashable, record_id: Hashable | None,
          roles: tuple[str, str] = ("prediction", "baseline")) -> ReleasePair:
    check_frame(df)
    for column, role in zip((current, baseline), roles, strict=True):
        check_column(df, column, role)
    return ReleasePair(PandasRelease(df, prediction=current, record_id=record_id),
                       PandasRelease(df, prediction=baseline))


def statistic_change(df: pd.DataFrame, prediction: Hashable, baseline: Hashable, statistic: str = "average_cluster_size",
                     *, q: float | None = None, name: Hashable | None = None,
                     record_id: Hashable | None = None) -> StatisticChange:
    """A summary statistic (SPEC 3) of release ``prediction`` against release ``baseline``,
    both computed on the records present in both (SPEC 10, fixed subset)."""
    return statistic_change_of(_pair(df, prediction, baseline, record_id), statistic, q=q, name=name)


# -- agreement ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Agreement:
    """Exact metrics (SPEC 5) of the current release with the baseline as the reference."""

    values: dict[str, float]
    notes: dict[str, str]
    common_records: int
    current_clusters: int
    baseline_clusters: int


def agreement_of(pair: ReleasePair | AggregatedPair, *, beta: float = 1.0) -> Agreement:
    """:func:`release_agreement` on a release pair of any engine: the metrics follow from the
    pair's :meth:`contingency_sums` (computed where the data lives)."""
    beta = check_beta(beta)
    sums = pair.contingency_sums()
    if sums.records == 0:
        why = "the two releases have no record in common"
        return Agreement({m: math.nan for m in AGREEMENT_METRICS}, {m: f"undefined: {why}" for m in AGREEMENT_METRICS},
                         0, 0, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)  # the reasons are kept in the notes
        values, notes = exact_metrics_from_sums(sums, beta=beta)
    return Agreement(values, notes, sums.records, sums.pred_clusters, sums.true_clusters)


def release_agreement(df: pd.DataFrame, prediction: Hashable, baseline: Hashable, *, beta: float = 1.0,
                      record_id: Hashable | None = None) -> pd.Series:
    """Exact metrics of release ``prediction`` taking release ``baseline`` as the truth, on the
    records present in both (SPEC 10). ``attrs`` hold the common-record count and notes."""
    res = agreement_of(_pair(df, prediction, baseline, record_id), beta=beta)
    out = pd.Series(res.values, name="agreement", dtype="float64")
    out.index.name = "metric"
    out.attrs.update({"common_records": res.common_records, "notes": res.notes, "beta": beta})
    return out


# -- change of an estimate ------------------------------------------------------------------


@old_call_forms(positional=('prediction', 'baseline', 'metric', 'reference'), defaults={'reference': 'benchmark_id'})
def estimate_change(
    df: pd.DataFrame,
    *,
    prediction: Hashable,
    baseline: Hashable,
    metric: str,
    reference: Hashable,
    weights: str | dict | WeightsSpec = "cluster_size",
    draws: Hashable | None = None,
    beta: float = 1.0,
    ci_level: float = 0.95,
    record_id: Hashable | None = None,
    ci_method: str = DEFAULT_CI_METHOD,
    n_boot: int = DEFAULT_N_BOOT,
    seed: int | None = None,
) -> PairedChange:
    """The change of an estimated metric from release ``baseline`` to ``prediction`` (SPEC 10).

    Both estimates use the same benchmark draws, each restricted to its own release
    (SPEC 2.1); the standard error of the change is the paired one
    (:func:`~er_expectations.stats.combine.difference`).

    ``ci_method`` (SPEC 6, 10) builds the intervals of both estimates and of the change:
    "recommended" (the default: BCa estimates, the logit MOVER change for shares, the paired
    normal change for cluster precision, cluster F and the average cluster size),
    "linearization" (the paired normal interval), "logit" (MOVER of the two
    releases' logit intervals), "bootstrap", "bca", "studentized" (``n_boot`` resamples of
    the shared draws, seeded by ``seed``; each replicate change is the difference of the two
    releases on the same resample, so the pairing is kept). When no drawn cluster changed, the change gets
    ±the no-change bound whatever the method (``change.zero_event`` is True, with a note);
    it is never a point. ``change.interval`` names the method used.


    Parameters
    ----------
    df : pandas.DataFrame
        One row per record, with both releases' prediction columns and the benchmark.
    prediction : hashable
        The column of the current release's cluster ids.
    baseline : hashable
        The column of the baseline release's cluster ids.
    metric : str
        The metric id (SPEC 5), e.g. ``"pairwise_precision"``.
    reference : hashable
        The column of true cluster ids of the benchmark records (null elsewhere).
    weights : str, dict or column name
        The sampling design, as in :func:`estimate`.
    draws : hashable, optional
        A column with the number of times each benchmark cluster was drawn.
    beta : float
        β of the F scores.
    ci_level : float
        Confidence level, in (0, 1).
    record_id : hashable, optional
        The record id column: a duplicated id raises :class:`InputError`.
    ci_method : str
        How the intervals are computed, above.
    n_boot : int
        Bootstrap resamples.
    seed : int, optional
        Seed of the bootstrap (``DEFAULT_SEED``, 0, when None: the same data give the same
        interval on every run).

    Returns
    -------
    PairedChange
        ``current`` and ``baseline`` estimates and their paired ``change``.

    Examples
    --------
    >>> import pandas as pd
    >>> import er_expectations as erx
    >>> df = pd.DataFrame({"v1": ["a", "a", "b", "c"], "v2": ["a", "a", "b", "b"],
    ...                    "truth": ["t1", "t1", "t2", "t3"]})
    >>> change = erx.estimate_change(df, prediction="v2", baseline="v1", metric="pairwise_precision",
    ...                              reference="truth", weights="uniform")
    >>> round(change.change.estimate, 4), change.change.draws
    (-0.4062, 3)
    """
    _check_choice(metric, PERFORMANCE_METRICS, "metric")
    check_ci_level(ci_level)
    ci_method, n_boot, seed = check_interval_options(ci_method, n_boot, seed)
    cur = PandasRelease(df, prediction=prediction, record_id=record_id)
    base = PandasRelease(df, prediction=baseline)
    s_cur = cur.benchmark_sample(reference=reference, weights=weights, draws=draws)
    s_base = base.benchmark_sample(reference=reference, weights=weights, draws=draws)
    return paired_change(s_cur, s_base, metric, beta=beta, ci_level=ci_level, ci_method=ci_method, n_boot=n_boot,
                         seed=seed)


# -- the diff -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DiffExample:
    """One sampled cluster of the after release: its class, size, sources and names."""

    kind: str
    cluster: str
    size: int
    sources: list[tuple[str, int, int]]  # (before cluster, records taken from it, its common size)
    names: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ReleaseDiff:
    """How the clusters of ``after`` differ from those of ``before`` on their common records."""

    before: str
    after: str
    common_records: int
    clusters: dict[str, int]
    records: dict[str, int]
    records_moved: int
    before_clusters: int
    before_clusters_split: int
    examples: list[DiffExample]
    seed: int

    def to_frame(self) -> pd.DataFrame:
        """One row per class: after clusters and the common records they hold."""
        frame = pd.DataFrame({"clusters": [self.clusters[k] for k in CHANGE_CLASSES],
                              "records": [self.records[k] for k in CHANGE_CLASSES]},
                             index=pd.Index(CHANGE_CLASSES, name="change"))
        frame.attrs.update({"before": self.before, "after": self.after, "common_records": self.common_records,
                            "records_moved": self.records_moved})
        return frame

    def examples_frame(self) -> pd.DataFrame:
        """The sampled examples, one row each."""
        return pd.DataFrame(
            [{"change": e.kind, "cluster": e.cluster, "records": e.size,
              "from": "; ".join(f"{c} ({k} of {s})" for c, k, s in e.sources),
              "names": "; ".join(e.names)} for e in self.examples],
            columns=["change", "cluster", "records", "from", "names"])

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe (for results and the CLI's --json)."""
        return {"before": self.before, "after": self.after, "common_records": self.common_records,
                "clusters": dict(self.clusters), "records": dict(self.records), "records_moved": self.records_moved,
                "before_clusters": self.before_clusters, "before_clusters_split": self.before_clusters_split,
                "seed": self.seed,
                "examples": [{"change": e.kind, "cluster": e.cluster, "records": e.size,
                              "sources": [{"cluster": c, "records": k, "size": s} for c, k, s in e.sources],
                              "names": list(e.names)} for e in self.examples]}

    def summary(self) -> str:
        """One sentence: counts and records moved."""
        c = self.clusters
        return (f"On {self.common_records:,} common records, {self.after} has {sum(c.values()):,} clusters: "
                f"{c['unchanged']:,} unchanged, {c['merged']:,} merged, {c['split']:,} pieces of split clusters, "
                f"{c['both']:,} both merged and split ({self.before_clusters_split:,} of the "
                f"{self.before_clusters:,} clusters of {self.before} were split); "
                f"{self.records_moved:,} records changed cluster mates.")


#: Records and names shown per example.
MAX_SOURCES = 5
MAX_NAMES = 5


def diff_of(pair: ReleasePair | AggregatedPair, *, name: Hashable | None = None, examples: int = 5, seed: int = 0,
            before: str | None = None, after: str | None = None) -> ReleaseDiff:
    """:func:`diff_releases` on a release pair (any engine) whose current release is *after*.

    The examples are drawn from the changed clusters in the order of their ids, and an
    example's sources are listed by records taken, then by id: the same seed gives the same
    examples whatever the order of the table's rows and whatever the engine.
    """
    if isinstance(examples, bool) or not isinstance(examples, (int, np.integer)) or examples < 0:
        raise InputError(f"examples={examples!r}: give how many clusters to show per kind of change (an integer ≥ 0)")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InputError(f"seed={seed!r}: give an integer ≥ 0")
    counts = pair.change_counts()
    rng = np.random.default_rng(int(seed))
    picks: dict[int, list[int]] = {}
    for code, _kind in enumerate(CHANGE_CLASSES):
        members = counts.clusters[code]
        if code == 0 or not members:
            continue
        # positions among the clusters of this class in the order of their ids
        chosen = rng.choice(members, size=min(int(examples), members), replace=False)
        picks[code] = [int(p) for p in np.sort(chosen)]
    clusters = pair.changed_clusters(picks, max_sources=MAX_SOURCES) if any(picks.values()) else []
    names_of = _example_names(pair, name, [c.label for c in clusters]) if name is not None else {}
    shown = [DiffExample(CHANGE_CLASSES[c.kind], str(c.label), c.size, [(str(b), k, s) for b, k, s in c.sources],
                         names_of.get(c.label, [])) for c in clusters]
    return ReleaseDiff(
        before=str(before if before is not None else pair.baseline.prediction),
        after=str(after if after is not None else pair.current.prediction),
        common_records=counts.common_records, clusters=counts.cluster_counts(), records=counts.record_counts(),
        records_moved=counts.records_moved, before_clusters=counts.before_clusters,
        before_clusters_split=counts.before_clusters_split, examples=shown, seed=int(seed))


def _example_names(pair: ReleasePair | AggregatedPair, name: Hashable, labels: list) -> dict[object, list[str]]:
    """The most frequent names (up to MAX_NAMES) of the common records of each cluster."""
    if not labels:
        return {}
    counts: dict[object, dict[str, int]] = {}
    for label, text, k in pair.name_counts(name, labels):
        per = counts.setdefault(label, {})
        per[text] = per.get(text, 0) + k
    return {label: [n for n, _ in sorted(per.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_NAMES]]
            for label, per in counts.items()}


@old_call_forms(positional=('before', 'after'))
def diff_releases(
    df: pd.DataFrame,
    *,
    before: Hashable,
    after: Hashable,
    record_id: Hashable | None,
    name: Hashable | None = None,
    examples: int = 5,
    seed: int = 0,
) -> ReleaseDiff:
    """Classify the clusters of release ``after`` against release ``before`` (SPEC 10).

    ``df`` has one row per record and a prediction column per release (null = not in that
    release). On the records present in both, each cluster of ``after`` is ``unchanged``
    (the same records as one cluster of ``before``), ``merged`` (whole clusters of
    ``before`` put together), ``split`` (a piece of one cluster of ``before`` that is now in
    several) or ``both``. Returns counts of clusters and records per class, the records whose
    cluster mates changed, and up to ``examples`` clusters of each changed class, drawn with
    ``seed``, with the clusters they come from and their most frequent names (``name``).
    ``record_id`` (or None) checks that each record appears once.


    Parameters
    ----------
    df : pandas.DataFrame
        One row per record, a prediction column per release.
    before : hashable
        The column of the earlier release's cluster ids.
    after : hashable
        The column of the later release's cluster ids.
    record_id : hashable or None
        The record id column (each record must appear once), or None.
    name : hashable, optional
        The column of record names shown with the examples.
    examples : int
        How many clusters of each changed class are drawn as examples.
    seed : int
        Seed of the drawing of the examples.

    Returns
    -------
    ReleaseDiff
        ``clusters`` and ``records`` per class, ``records_moved``, ``examples``.

    Examples
    --------
    >>> import pandas as pd
    >>> import er_expectations as erx
    >>> df = pd.DataFrame({"rid": ["r1", "r2", "r3", "r4"], "v1": ["a", "a", "b", "c"],
    ...                    "v2": ["a", "a", "b", "b"]})
    >>> erx.diff_releases(df, before="v1", after="v2", record_id="rid").clusters
    {'unchanged': 1, 'merged': 1, 'split': 0, 'both': 0}
    """
    return diff_of(_pair(df, after, before, record_id, ("after", "before")), name=name, examples=examples, seed=seed,
                   before=str(before), after=str(after))

