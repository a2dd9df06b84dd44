"""Planning a benchmark's size: ``simulate`` a design on known truth (here) and
``plan_sample_size`` from a pilot (:mod:`er_expectations.analysis.sample_size`) (SPEC 1, 2.1,
5–7; issue #8 item 6).

Both aggregate the record table once into the per-true-cluster table of the estimator
(:class:`~er_expectations.stats.BenchmarkSample`, SPEC 4), take every metric's f(c) and
g(c) from it (:func:`~er_expectations.stats.fg_values`) and then only resample that small
table (:mod:`er_expectations.stats.resample`): the cost does not depend on the number of
records.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from er_expectations.analysis.coverage import (
    CoverageCell,
    cell_row,
    check_ci_methods,
    group_truth,
    method_cells,
)
from er_expectations.analysis.expected_errors import (
    DEFAULT_FLOOR,
    EXPECTED_ERRORS,
    check_floor,
    true_cluster_inclusion,
)
from er_expectations.analysis.planning_checks import (
    MIN_REPS,
    SIM_DESIGNS,
    check_designs,
    check_reps,
    check_sizes,
)
from er_expectations.analysis.slice_power import population_slice_power
from er_expectations.core.deprecation import old_call_forms
from er_expectations.core.errors import InputError, UndefinedMetricWarning
from er_expectations.engines.pandas.release import (
    PandasRelease,
    check_column,
    check_frame,
    contingency,
)
from er_expectations.stats import (
    DEFAULT_N_BOOT,
    METRICS,
    PERFORMANCE_METRICS,
    BenchmarkSample,
    check_beta,
    check_ci_level,
    check_interval_options,
    cluster_errors,
    exact_metrics_from_contingency,
    fg_values,
    resolve_metrics,
    resolve_seed,
    summary_statistics,
    uses_bootstrap,
)
from er_expectations.stats.estimator import REL_TOL
from er_expectations.stats.resample import (
    BLOCK_CELLS,
    Replicates,
    draw_clusters,
    replicate_f_beta,
    replicate_ratio,
)
from er_expectations.stats.slice_power import check_power_options

__all__ = [
    "MIN_REPS",
    "Population",
    "SIMULATION_COLUMNS",
    "design_rng",
    "simulate",
]

#: Columns of the frame returned by :func:`simulate`.
SIMULATION_COLUMNS = ("metric", "design", "size", "truth", "mean", "bias", "rmse", "coverage", "reps",
                      "sd", "mean_se", "undefined", "target", "ci_method")


def _check_flag(value: object, *, parameter: str) -> bool:
    from er_expectations.analysis.release import check_flag

    return check_flag(value, parameter=parameter)


# -- the population, aggregated once ---------------------------------------------------------

class Population:
    """The whole true clustering of a release as one per-cluster table, and the exact
    value of every metric on it (SPEC 5, last paragraph): what :func:`simulate` draws its
    benchmarks from (``design_sample(design)``) and compares their estimates with
    (``truth``)."""

    def __init__(self, df: pd.DataFrame, *, prediction: Hashable, truth: Hashable, name: Hashable | None,
                 record_id: Hashable | None, beta: float) -> None:
        df = check_frame(df)
        check_column(df, prediction, "prediction")
        check_column(df, truth, "truth")
        missing = df[prediction].notna() & df[truth].isna()
        if missing.any():
            raise InputError(
                f"truth column {truth!r} is null on {int(missing.sum())} records of the release (e.g. row "
                f"{df.index[missing.to_numpy()][0]!r}); a simulation needs the true cluster of every record whose "
                f"{prediction!r} is not null (drop those records, or use plan_sample_size with a benchmark)")
        t, p, n = contingency(df, prediction=prediction, reference=truth)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMetricWarning)
            exact, self.notes = exact_metrics_from_contingency(t, p, n, beta=beta)
        rel = PandasRelease(df, prediction=prediction, record_id=record_id)
        self.sample = rel.benchmark_sample(reference=truth, weights="uniform", name=name)
        population = df.loc[rel.pred_codes >= 0] if rel.has_nulls else df
        truth_stats = summary_statistics(
            PandasRelease(population, prediction=truth).clustering_table(name=name))
        self.truth = {**exact, **{m: float(truth_stats[m]) for m in METRICS
                                  if METRICS[m].kind == "statistic" and m in truth_stats}}
        self.errors = cluster_errors(self.sample)
        self.beta = beta
        #: π_c per true cluster under the expected-errors design (SPEC 12.3), once set
        self.inclusion: np.ndarray | None = None
        self._df, self._prediction, self._truth = df, prediction, truth

    def set_expected_errors(self, *, record_id: Hashable | None, match_probabilities: pd.DataFrame | None,
                            floor: float, pair_columns: Mapping[str, str] | None) -> None:
        """Compute π_c = Σ_{r∈c} q_r of every true cluster for the expected-errors design (SPEC 12.3)."""
        self.inclusion = true_cluster_inclusion(self._df, self._prediction, self._truth, self.sample.labels,
                                                record_id=record_id, match_probabilities=match_probabilities,
                                                floor=floor, pair_columns=pair_columns)

    def design_sample(self, design: str) -> BenchmarkSample:
        """The population with the weights ``erx.estimate`` gives ``design`` (SPEC 2.1):
        w = 1/|c| for 'cluster_size', 1 for 'uniform', 1/π_c for 'expected_errors'."""
        s = self.sample
        if design == "uniform":
            return s
        if design == EXPECTED_ERRORS:
            if self.inclusion is None:
                raise InputError("design 'expected_errors': the inclusion probabilities are not set")
            return replace(s, weight=1.0 / self.inclusion, design=design)
        return replace(s, weight=1.0 / s.size, design=design)

    def draw(self, rng: np.random.Generator, *, design: str, sample: BenchmarkSample, draws: int,
             replicates: int) -> np.ndarray:
        """Cluster indices of ``replicates`` benchmarks of ``draws`` draws under ``design``."""
        return draw_clusters(rng, design=design, sizes=sample.size, draws=draws, replicates=replicates,
                             probabilities=self.inclusion if design == EXPECTED_ERRORS else None)


def _replicate_block(pop: Population, sample: BenchmarkSample, idx: np.ndarray, ids: tuple[str, ...], *,
                     values: dict[str, tuple[np.ndarray, np.ndarray]], ci_level: float,
                     bias_adjust: bool) -> dict[str, Replicates]:
    """Every metric on the replicates of ``idx`` (replicates × draws of cluster indices)."""
    out: dict[str, Replicates] = {}
    with_influence = "b_cubed_f" in ids  # F_β combines the influences of the two b-cubed metrics

    def one(mid: str) -> Replicates:
        if mid in out:
            return out[mid]
        d = METRICS[mid]
        if d.fg is None:  # b-cubed F, from the two b-cubed estimates on the same draws
            res = replicate_f_beta(one("b_cubed_precision"), one("b_cubed_recall"), beta=pop.beta,
                                   ci_level=ci_level)
        else:
            f, g = values[mid]
            mismatch = None
            if d.zero_event:  # draws showing an error (g > 0, f ≠ g), found once per cluster
                mismatch = ((g > 0) & (np.abs(f - g) > REL_TOL * g))[idx]
            res = replicate_ratio(f[idx], g[idx], bias_adjust=bias_adjust, ci_level=ci_level, bounds=d.bounds,
                                  zero_event=d.zero_event, complement=d.complement, mismatch=mismatch,
                                  influence=with_influence)
        out[mid] = res
        return res

    for mid in ids:
        one(mid)
    return out


def _values(pop: Population, sample: BenchmarkSample, ids: Iterable[str]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    need = set(ids)
    if "b_cubed_f" in need:
        need |= {"b_cubed_precision", "b_cubed_recall"}
    return {m: fg_values(sample, m, beta=pop.beta, errors=pop.errors) for m in METRICS
            if m in need and METRICS[m].fg is not None}


def design_rng(seed: int, design: str, size: int) -> np.random.Generator:
    """The random stream of one (design, size) cell of :func:`simulate`, from its ``seed``: one stream
    per cell, so that the rows of a size do not depend on the other sizes asked (a replicate can be
    redrawn alone, as ``benchmarks/bench_simulate.py`` does)."""
    return np.random.default_rng([seed, SIM_DESIGNS.index(design), size])


def replicate_estimates(pop: Population, *, design: str, size: int, reps: int, seed: int, ids: tuple[str, ...],
                        ci_level: float, bias_adjust: bool) -> tuple[np.ndarray, dict[str, Replicates]]:
    """The drawn cluster indices (reps × size) and every metric on each replicate.

    For tests and small runs: holds all replicates at once. :func:`simulate` streams blocks.
    """
    sample = pop.design_sample(design)
    values = _values(pop, sample, ids)
    rng = design_rng(seed, design, size)
    idx = pop.draw(rng, design=design, sample=sample, draws=size, replicates=reps)
    return idx, _replicate_block(pop, sample, idx, ids, values=values, ci_level=ci_level, bias_adjust=bias_adjust)


# -- simulate -----------------------------------------------------------------------------------

@old_call_forms(positional=('prediction', 'truth'), defaults={'prediction': 'inventor_id', 'truth': 'true_id'})
def simulate(
    df: pd.DataFrame,
    *,
    prediction: Hashable,
    truth: Hashable,
    sizes: Iterable[int] = (200, 400, 800),
    designs: str | Iterable[str] = ("cluster_size", "uniform"),
    reps: int = 1000,
    seed: int | None = None,
    metrics: str | Iterable[str] | None = None,
    ci_level: float = 0.95,
    beta: float = 1.0,
    bias_adjust: bool = True,
    name: Hashable | None = None,
    record_id: Hashable | None = None,
    ci_methods: str | Iterable[str] = ("linearization",),
    n_boot: int = DEFAULT_N_BOOT,
    group_column: Hashable | None = None,
    baseline: Hashable | None = None,
    match_probabilities: pd.DataFrame | None = None,
    floor: float = DEFAULT_FLOOR,
    pair_columns: Mapping[str, str] | None = None,
    slice_power: bool = False,
    slice_share: float = 0.2,
    slice_lift: float = 3.0,
    slice_reps: int = 200,
) -> pd.DataFrame:
    """Replay a benchmark's sampling design many times on data whose truth is known.

    ``df`` has one row per record with the ``prediction`` of a release and the ``truth``
    (true cluster id) of every record of the release (records with a null prediction are
    outside the release, SPEC 2.1). For each design of SPEC 1 (``cluster_size``: records
    drawn uniformly with replacement, so true clusters ∝ size, weights 1/|c|; ``uniform``:
    true clusters drawn uniformly with replacement, weights 1) and each number of draws in
    ``sizes``, ``reps`` benchmarks are drawn and every metric is estimated from each
    exactly as :func:`er_expectations.estimate` would (bias adjustment, linearised interval
    at ``ci_level``, zero-event interval of an error-free sample; SPEC 6). The true value is
    the exact metric (SPEC 5, :func:`er_expectations.exact_metrics`) or the true
    clustering's statistic (SPEC 3, 7).

    Returns one row per (metric, design, size): ``truth``; ``mean`` of the estimates;
    ``bias`` = mean − truth; ``rmse`` = √mean((θ̂ − θ)²); ``coverage``, the share of
    replications whose interval contains the truth (a replication without an interval
    counts as not covering); ``reps``; ``sd``, the standard deviation of the estimates
    (the estimator's real standard error); ``mean_se``, the mean estimated standard
    error; ``undefined``, replications without an estimate (left out of mean, bias, rmse).
    ``attrs`` records the seed (a fresh one when ``seed`` is None), level and options.
    ``target`` is "estimate" and ``ci_method`` "linearization" on these rows.

    ``expected_errors`` (SPEC 12.3) draws records with probability q_r from the ER system's
    ``match_probabilities`` (record pairs with p, ``pair_columns`` naming its columns; ids
    of ``record_id``) and the uniform ``floor`` λ, so true cluster c with π_c = Σ_{r∈c} q_r,
    weights 1/π_c: compare its ``sd`` with the size-proportional design's at the same
    number of draws to see what labelling where the errors are buys.

    Every interval method (SPEC 6; issue 21): ``ci_methods`` ("all", or a list of
    "linearization", "logit", "bootstrap", "bca", "studentized", "recommended", and the
    gap-only "bca_mover" and "hull", which add rows for the gaps only) adds one row
    per (metric, design, size, method) for the other methods, computed on the *same*
    replicates as :func:`er_expectations.estimate` would (``n_boot`` resamples each, at
    most 20,000; the bootstrap seeds derive from ``seed``). ``group_column`` (an
    entity-level attribute) adds the coverage of each group's estimate (``target`` "group
    <name>") and of its gap to the rest ("gap <name>", SPEC 8); ``baseline`` (a second
    prediction column, the baseline release) adds the coverage of the paired change
    ("change", SPEC 10), each for every method asked. The bootstraps cost ``reps`` ×
    ``n_boot`` resamples per cell: use a few hundred of each to compare methods.

    ``slice_power`` (SPEC 12.2 "Power"; issue 28) adds ``attrs["slice_power"]``: for each
    design and size, the chance that the honest slice search of ``erx.find_slices`` finds a
    planted slice of ``slice_share`` of the entities whose error chance (EI) is ``slice_lift``
    times the rest's, the population's error rate kept, from ``slice_reps`` benchmarks, with
    its Monte Carlo SE (:func:`~er_expectations.analysis.slice_power.population_slice_power`).

    Parameters
    ----------
    df : pandas.DataFrame
        One row per record, with the truth of every record of the release.
    prediction : hashable
        The column of predicted cluster ids (null: outside the release).
    truth : hashable
        The column of true cluster ids.
    sizes : iterable of int
        The numbers of draws of the simulated benchmarks.
    designs : str or iterable of str
        ``"cluster_size"``, ``"uniform"`` and/or ``"expected_errors"`` (SPEC 1, 12.3).
    reps : int
        Simulated benchmarks per (design, size), at least 100.
    seed : int, optional
        Seed of the simulation; ``None`` draws one and records it in ``attrs``.
    metrics : str or iterable of str, optional
        Metric ids; default the performance metrics.
    ci_level : float
        Confidence level of the intervals, in (0, 1).
    beta : float
        β of the F scores.
    bias_adjust : bool
        Use the bias-adjusted ratio estimator (SPEC 6).
    name : hashable, optional
        The column of record names (for the name statistics).
    record_id : hashable, optional
        The record id column (needed by design ``"expected_errors"``).
    ci_methods : str or iterable of str
        The interval methods compared, above.
    n_boot : int
        Bootstrap resamples per replicate.
    group_column : hashable, optional
        An entity-level attribute: adds the coverage of each group's estimate and gap.
    baseline : hashable, optional
        A second prediction column: adds the coverage of the paired change.
    match_probabilities : pandas.DataFrame, optional
        Record pairs with p, for design ``"expected_errors"``.
    floor : float
        The uniform floor λ of design ``"expected_errors"``.
    pair_columns : mapping, optional
        Names of the pair table's columns.
    slice_power : bool
        Add ``attrs["slice_power"]``, above.
    slice_share : float
        The planted slice's share of the entities, in (0, 1).
    slice_lift : float
        The planted slice's error rate over the rest's, above 1.
    slice_reps : int
        Benchmarks simulated per (design, size) for the slice power.

    Returns
    -------
    pandas.DataFrame
        One row per (metric, design, size[, method]), above.

    Examples
    --------
    The truth of each row is the exact metric of the release:

    >>> import pandas as pd
    >>> import er_expectations as erx
    >>> df = pd.DataFrame({"pred": ["a", "a", "b", "b", "c", "c"],
    ...                    "true": ["t1", "t1", "t2", "t3", "t4", "t4"]})
    >>> sim = erx.simulate(df, prediction="pred", truth="true", sizes=[4], designs="uniform",
    ...                    reps=100, seed=1, metrics=["pairwise_precision"])
    >>> exact = erx.exact_metrics(df, prediction="pred", reference="true")["pairwise_precision"]
    >>> bool(sim.loc[0, "truth"] == exact), round(float(exact), 4)
    (True, 0.6667)
    """
    sizes_ = check_sizes(sizes)
    designs_ = check_designs(designs)
    reps = check_reps(reps)
    seed_ = resolve_seed(seed)
    level = check_ci_level(ci_level)
    beta = check_beta(beta)
    bias_adjust = _check_flag(bias_adjust, parameter="bias_adjust")
    ids = resolve_metrics(metrics, names=name is not None)
    methods = check_ci_methods(ci_methods, gaps=group_column is not None)
    _, n_boot, _ = check_interval_options("linearization", n_boot, None)
    if _check_flag(slice_power, parameter="slice_power"):
        check_power_options(slice_share, slice_lift, slice_reps)
    if EXPECTED_ERRORS in designs_:
        check_floor(floor)
        if baseline is not None:
            raise InputError("baseline= with design 'expected_errors' is not supported: the change of an estimate "
                             "is simulated under the designs of SPEC 1 only")
    elif match_probabilities is not None:
        raise InputError("match_probabilities is given but no design uses it; add 'expected_errors' to designs")
    pop = Population(df, prediction=prediction, truth=truth, name=name, record_id=record_id, beta=beta)
    if EXPECTED_ERRORS in designs_:
        pop.set_expected_errors(record_id=record_id, match_probabilities=match_probabilities, floor=floor,
                                pair_columns=pair_columns)
    extra = _Extra(df, pop, prediction=prediction, truth=truth, record_id=record_id, name=name, beta=beta,
                   ids=ids, group_column=group_column, baseline=baseline)
    per_replicate = any(m != "linearization" for m in methods) or extra.membership is not None or (
        extra.baseline is not None)
    rows = []
    for design in designs_:
        sample = pop.design_sample(design)
        values = _values(pop, sample, ids)
        for size in sizes_:
            rng = design_rng(seed_, design, size)
            acc: dict[str, list[Replicates]] = {m: [] for m in ids}
            cells: list[CoverageCell] = []
            block = max(1, BLOCK_CELLS // size)
            done = 0
            while done < reps:
                b = min(block, reps - done)
                idx = pop.draw(rng, design=design, sample=sample, draws=size, replicates=b)
                res = _replicate_block(pop, sample, idx, ids, values=values, ci_level=level, bias_adjust=bias_adjust)
                for m in ids:
                    acc[m].append(res[m])
                if per_replicate:
                    cells += method_cells(
                        pop.sample, sample, idx, ids=ids, truth=pop.truth, methods=methods, ci_level=level,
                        bias_adjust=bias_adjust, n_boot=n_boot, seed=int(rng.integers(0, 2**31)),
                        membership=extra.membership, group_truths=extra.group_truths,
                        baseline=None if extra.baseline is None else extra.baseline.design_sample(design),
                        change_truth=extra.change_truth)
                done += b
            if "linearization" in methods:
                rows += [_summary_row(m, design, size, pop.truth[m], acc[m], reps) for m in ids]
            rows += _merged_rows(cells, design=design, size=size, reps=reps)
    frame = pd.DataFrame(rows, columns=list(SIMULATION_COLUMNS))
    frame = frame.astype({"size": "int64", "reps": "int64", "undefined": "int64"})
    frame.attrs.update({"seed": seed_, "ci_level": level, "beta": beta, "bias_adjust": bias_adjust,
                        "ci_method": "linearization", "ci_methods": list(methods), "n_records": pop.sample.n_records,
                        "true_clusters": int(pop.sample.labels.shape[0]),
                        "predicted_clusters": pop.sample.n_clusters, "notes": pop.notes,
                        **({"n_boot": n_boot} if any(uses_bootstrap(m) for m in methods) else {}),
                        **({"floor": check_floor(floor)} if EXPECTED_ERRORS in designs_ else {}),
                        **extra.attrs})
    if slice_power:
        def draw(rng: np.random.Generator, design: str, size: int) -> np.ndarray:
            return pop.draw(rng, design=design, sample=pop.design_sample(design), draws=size, replicates=1)[0]

        power = population_slice_power(pop.sample, pop.errors.ei, draw, designs=designs_, sizes=sizes_,
                                       share=slice_share, lift=slice_lift, reps=slice_reps, seed=seed_,
                                       weights={d: pop.design_sample(d).weight for d in designs_})
        frame.attrs["slice_power"] = power.to_dict(orient="records")
    return frame


def _summary_row(metric: str, design: str, size: int, truth: float, blocks: list[Replicates], reps: int) -> dict:
    est = np.concatenate([r.estimate for r in blocks])
    se = np.concatenate([r.std_error for r in blocks])
    lo = np.concatenate([r.ci_lower for r in blocks])
    hi = np.concatenate([r.ci_upper for r in blocks])
    ok = ~np.isnan(est)
    nan = math.nan
    e = est[ok]
    with np.errstate(invalid="ignore"):
        covered = (lo <= truth) & (truth <= hi)  # NaN bounds compare False: no interval, no cover
    mean = float(e.mean()) if e.size else nan
    return {
        "metric": metric,
        "design": design,
        "size": size,
        "truth": truth,
        "mean": mean,
        "bias": mean - truth,
        "rmse": float(np.sqrt(np.mean((e - truth) ** 2))) if e.size else nan,
        "coverage": float(covered.mean()) if not math.isnan(truth) else nan,
        "reps": reps,
        "sd": float(e.std(ddof=1)) if e.size >= 2 else nan,
        "mean_se": float(np.nanmean(se)) if np.any(~np.isnan(se)) else nan,
        "undefined": int((~ok).sum()),
        "target": "estimate",
        "ci_method": "linearization",
    }


def _merged_rows(cells: list[CoverageCell], *, design: str, size: int, reps: int) -> list[dict]:
    """The rows of the per-replicate cells, the cells of one key joined over the blocks."""
    joined: dict[tuple[str, str, str], CoverageCell] = {}
    for c in cells:
        key = (c.target, c.metric, c.method)
        if key in joined:
            j = joined[key]
            j.estimate += c.estimate
            j.std_error += c.std_error
            j.lower += c.lower
            j.upper += c.upper
        else:
            joined[key] = CoverageCell(c.target, c.metric, c.method, c.truth, list(c.estimate), list(c.std_error),
                                       list(c.lower), list(c.upper))
    return [cell_row(c, design=design, size=size, reps=reps) for c in joined.values()]


class _Extra:
    """What :func:`simulate` needs for group and change coverage: the memberships of the
    population's true clusters and each group's (and rest's) true value; the baseline
    release's population and the true change."""

    def __init__(self, df: pd.DataFrame, pop: Population, *, prediction: Hashable, truth: Hashable,
                 record_id: Hashable | None, name: Hashable | None, beta: float, ids: tuple[str, ...],
                 group_column: Hashable | None, baseline: Hashable | None) -> None:
        self.membership = self.group_truths = self.baseline = self.change_truth = None
        self.attrs: dict[str, Any] = {}
        if group_column is not None:
            from er_expectations.analysis.subgroups import sample_membership

            rel = PandasRelease(df, prediction=prediction, record_id=record_id)
            self.membership, _ = sample_membership(rel, pop.sample, reference=truth, group_column=group_column)
            gids = [m for m in ids if m in PERFORMANCE_METRICS and m not in ("cluster_precision", "cluster_f")]
            self.group_truths = {}
            for j, g in enumerate(self.membership.groups):
                pi = self.membership.pi[:, j]
                self.group_truths[g] = group_truth(pop.sample, pi, gids)
                rest = (1.0 - pi) * self.membership.known
                self.group_truths[f"rest of {g}"] = group_truth(pop.sample, rest, gids)
            self.attrs.update({"group_column": str(group_column), "groups": list(self.membership.groups)})
        if baseline is not None:
            check_column(df, baseline, "baseline")
            self.baseline = Population(df, prediction=baseline, truth=truth, name=name, record_id=None, beta=beta)
            self.change_truth = {m: pop.truth[m] - self.baseline.truth[m] for m in ids if m in PERFORMANCE_METRICS}
            self.attrs["baseline"] = str(baseline)
