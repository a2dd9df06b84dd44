"""How many draws a benchmark needs, from a pilot benchmark (SPEC 12.4):
:func:`plan_sample_size` resamples the pilot's draws at growing sizes and reads off the size
whose standard error reaches the target."""


from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from er_expectations.analysis.planning_checks import (
    MAX_DRAWS,
    MIN_REPS,
    check_int,
)
from er_expectations.analysis.release import check_flag
from er_expectations.analysis.slices import cluster_features, slice_inputs
from er_expectations.core.deprecation import old_call_forms
from er_expectations.core.errors import InputError
from er_expectations.core.hints import quote_list
from er_expectations.engines.base import WeightsSpec
from er_expectations.engines.pandas.release import (
    PandasRelease,
)
from er_expectations.stats import (
    METRICS,
    PERFORMANCE_METRICS,
    BenchmarkSample,
    check_beta,
    check_ci_level,
    cluster_errors,
    estimate_metrics,
    fg_values,
    resolve_metrics,
    resolve_seed,
    z_value,
)
from er_expectations.stats.resample import (
    resampled_std_errors,
)
from er_expectations.stats.slice_power import SlicePower, check_power_options
from er_expectations.stats.slice_power import slice_power as pilot_power
from er_expectations.stats.slices import minimum_draws
from er_expectations.stats.subgroups import DEFAULT_MIN_DRAWS

__all__ = ["PLAN_COLUMNS", "plan_sample_size"]

#: Columns of the frame returned by :func:`plan_sample_size`.
PLAN_COLUMNS = ("metric", "pilot_draws", "pilot_estimate", "pilot_std_error", "target_std_error",
                "draws_needed", "std_error_at_draws", "draws_extrapolated", "note")


def _targets(target: object, *, parameter: str) -> dict[str, float] | float:
    def number(v: object, where: str) -> float:
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise InputError(f"{where}={v!r} is not a number; give a positive {parameter.replace('target_', '')} "
                             "such as 0.02")
        x = float(v)
        if not (math.isfinite(x) and x > 0):
            raise InputError(f"{where}={v!r} must be a finite number > 0")
        return x

    if isinstance(target, Mapping):
        if not target:
            raise InputError(f"{parameter}={{}} names no metric; give {{'pairwise_precision': 0.02, ...}} or one number")
        resolve_metrics(list(target), names=True)
        return {str(k): number(v, f"{parameter}[{k!r}]") for k, v in target.items()}
    return number(target, parameter)


@old_call_forms(positional=('prediction', 'reference'), defaults={'prediction': 'inventor_id', 'reference': 'benchmark_id'})
def plan_sample_size(
    df: pd.DataFrame,
    *,
    prediction: Hashable,
    reference: Hashable,
    target_se: float | Mapping[str, float] | None = None,
    target_width: float | Mapping[str, float] | None = None,
    weights: str | dict | WeightsSpec = "cluster_size",
    draws: Hashable | None = None,
    metrics: str | Iterable[str] | None = None,
    reps: int = 2000,
    seed: int | None = None,
    ci_level: float = 0.95,
    beta: float = 1.0,
    bias_adjust: bool = True,
    max_draws: int = 100_000,
    name: Hashable | None = None,
    record_id: Hashable | None = None,
    slice_power: bool = False,
    slice_share: float = 0.2,
    slice_lift: float = 3.0,
    slice_reps: int = 200,
) -> pd.DataFrame:
    """How many draws a benchmark needs for a target standard error, from a pilot benchmark.

    ``df`` is a pilot in the evaluation-table contract of SPEC 2.1 (``prediction``,
    ``reference``, ``weights``, ``draws``, as for :func:`er_expectations.estimate`). Give
    ``target_se`` (standard error) or ``target_width`` (full width of the interval at
    ``ci_level``, i.e. 2·z·SE): one number for every metric, or ``{metric: value}``.

    The pilot's draws stand for the design's distribution of draws: ``reps`` replicate
    benchmarks are drawn from them with replacement (each cluster with probability
    d_c/k), the estimator of SPEC 6 is computed on the first n draws of each for a grid of
    n (every n up to 400, then steps of 1 %), and the standard error at n is the standard
    deviation of those estimates. ``draws_needed`` is the smallest n from which it stays at
    or below the target (up to ``max_draws``); ``std_error_at_draws`` its value there.
    ``draws_extrapolated`` is the textbook k·(SE/target)², from the pilot's linearised
    standard error, for comparison. ``draws_needed`` carries Monte Carlo error: on RLdata
    pilots it moves by about ±5 % from seed to seed at 2,000 resamples (±2 % at 4,000).
    ``note`` says when no plan can be made (a pilot
    without any error of the metric's kind has a resampled standard error of 0).
    Metrics default to the targets' keys, else the performance metrics. ``attrs['curves']``
    holds each metric's resampled standard error at every size tried (:func:`plan_chart`).

    ``slice_power`` adds ``attrs["slice_power"]`` (SPEC 12.2 "Power"; issue 28): the chance
    that the slice search of ``erx.find_slices`` (EI per entity, default options, the derived
    features) finds a slice of ``slice_share`` of the entities with ``slice_lift`` times the
    error rate, planted in the pilot itself at its estimated rate (``slice_reps`` searches,
    seed 0), as the page of ``expect_no_error_slice_above`` reports it.

    Parameters
    ----------
    df : pandas.DataFrame
        The pilot, one row per record (SPEC 2.1).
    prediction : hashable
        The column of predicted cluster ids.
    reference : hashable
        The column of true cluster ids of the pilot's benchmark records (null elsewhere).
    target_se : float or mapping, optional
        The standard error to reach: one number, or ``{metric: value}``.
    target_width : float or mapping, optional
        The full interval width to reach at ``ci_level`` (instead of ``target_se``).
    weights : str, dict or column name
        The sampling design, as in :func:`er_expectations.estimate`.
    draws : hashable, optional
        A column with the number of times each benchmark cluster was drawn.
    metrics : str or iterable of str, optional
        Metric ids; default the targets' keys, else the performance metrics.
    reps : int
        Replicate benchmarks resampled from the pilot.
    seed : int, optional
        Seed of the resampling.
    ci_level : float
        Confidence level of ``target_width``, in (0, 1).
    beta : float
        β of the F scores.
    bias_adjust : bool
        Use the bias-adjusted ratio estimator (SPEC 6).
    max_draws : int
        The largest benchmark size tried.
    name : hashable, optional
        The column of record names (for the name statistics).
    record_id : hashable, optional
        The record id column: a duplicated id raises :class:`InputError`.
    slice_power : bool
        Add ``attrs["slice_power"]``, above.
    slice_share : float
        The planted slice's share of the entities, in (0, 1).
    slice_lift : float
        The planted slice's error rate over the rest's, above 1.
    slice_reps : int
        Slice searches for the power.

    Returns
    -------
    pandas.DataFrame
        One row per metric: ``pilot_draws``, ``pilot_estimate``, ``pilot_std_error``,
        ``target_std_error``, ``draws_needed``, ``std_error_at_draws``, ``draws_extrapolated``
        and ``note``.

    Examples
    --------
    The textbook size is k·(SE/target)² = 4 · (0.2887/0.05)², rounded up:

    >>> import pandas as pd
    >>> import er_expectations as erx
    >>> df = pd.DataFrame({"pred": ["a", "a", "b", "b", "c", "c"],
    ...                    "truth": ["t1", "t1", "t2", "t3", "t4", "t4"]})
    >>> plan = erx.plan_sample_size(df, prediction="pred", reference="truth", target_se=0.05,
    ...                             metrics=["pairwise_precision"], reps=200, seed=1)
    >>> int(plan.loc[0, "draws_extrapolated"])
    134
    """
    if check_flag(slice_power, parameter="slice_power"):
        check_power_options(slice_share, slice_lift, slice_reps)
    opts = _plan_options(target_se=target_se, target_width=target_width, metrics=metrics, reps=reps, seed=seed,
                         ci_level=ci_level, beta=beta, bias_adjust=bias_adjust, max_draws=max_draws,
                         names=name is not None)
    rel = PandasRelease(df, prediction=prediction, record_id=record_id)
    sample = rel.benchmark_sample(reference=reference, weights=weights, draws=draws, name=name)
    k = sample.k
    if k < 2:
        raise InputError(f"the pilot has {k} draw; a standard error needs at least 2 (30 or more for a usable plan)")
    pilot = estimate_metrics(sample, opts.ids, beta=opts.beta, ci_level=opts.level, bias_adjust=opts.bias_adjust)
    extrapolated = {mid: _extrapolate(k, pilot[mid].std_error, opts.target_of(mid)) for mid in opts.ids}
    plannable = [m for m in opts.ids if pilot[m].defined and pilot[m].interval != "zero_event"]
    curves, grids = _resampled_curves(opts, sample, extrapolated, plannable)
    rows = [_plan_row(mid, pilot[mid], curves[mid], grids[mid], opts.target_of(mid), k=k,
                      extrapolated=extrapolated[mid]) for mid in opts.ids]
    frame = pd.DataFrame(rows, columns=list(PLAN_COLUMNS))
    frame = frame.astype({"pilot_draws": "int64", "draws_needed": "Int64", "draws_extrapolated": "Int64",
                          "pilot_estimate": "float64", "pilot_std_error": "float64",
                          "std_error_at_draws": "float64", "target_std_error": "float64"})
    if opts.parameter == "target_width":
        frame.insert(5, "target_width", [2.0 * opts.z * t for t in frame["target_std_error"]])
    frame.attrs.update({"seed": opts.seed, "reps": opts.reps, "ci_level": opts.level, "design": sample.design,
                        "max_draws": opts.max_draws, "bias_adjust": opts.bias_adjust,
                        "curves": {m: {"draws": grids[m].tolist(), "std_error": curves[m].tolist()}
                                   for m in opts.ids}})
    if slice_power:
        frame.attrs["slice_power"] = _pilot_slice_power(rel.df, sample, prediction=prediction, reference=reference,
                                                        name=name, share=slice_share, lift=slice_lift,
                                                        reps=slice_reps)
    return frame


def _pilot_slice_power(df: pd.DataFrame, sample: BenchmarkSample, *, prediction: Hashable, reference: Hashable,
                       name: Hashable | None, share: float, lift: float, reps: int) -> dict[str, Any]:
    """The slice search's power planted in the pilot (:func:`plan_sample_size`, ``slice_power``)."""
    need = minimum_draws(DEFAULT_MIN_DRAWS, 0.5)
    if sample.k < need:
        out = SlicePower(share, lift, int(sample.k), reps, 0, math.nan, math.nan, math.nan, math.nan, math.nan, 0,
                         note=f"the pilot's {sample.k} draws are too few to split (the search needs {need})")
        return out.as_dict()
    feats, _ = cluster_features(df, sample, prediction=prediction, reference=reference, name=name)
    y, g = slice_inputs(sample, "EI", "entity")
    return pilot_power(y, g, sample.draws, sample.labels, feats, share=share, lift=lift, reps=reps, seed=0).as_dict()


@dataclass(frozen=True)
class _PlanOptions:
    """The checked options of :func:`plan_sample_size`."""

    level: float
    parameter: str  # "target_se" or "target_width"
    target: float | dict[str, float]
    ids: list[str]
    reps: int
    seed: int
    beta: float
    bias_adjust: bool
    max_draws: int

    @property
    def z(self) -> float:
        return z_value(self.level)

    def target_of(self, mid: str) -> float:
        """The target standard error of metric ``mid`` (a width is turned into its SE)."""
        t = self.target[mid] if isinstance(self.target, dict) else self.target
        return t if self.parameter == "target_se" else t / (2.0 * self.z)


def _plan_options(*, target_se: float | Mapping[str, float] | None, target_width: float | Mapping[str, float] | None,
                  metrics: str | Iterable[str] | None, reps: int, seed: int | None, ci_level: float, beta: float,
                  bias_adjust: bool, max_draws: int, names: bool) -> _PlanOptions:
    """Check every option of :func:`plan_sample_size`, each error naming its parameter."""
    level = check_ci_level(ci_level)
    if (target_se is None) == (target_width is None):
        raise InputError("give exactly one of target_se (a standard error) or target_width (the full width "
                         "of the confidence interval), e.g. target_se=0.02")
    parameter = "target_se" if target_se is not None else "target_width"
    target = _targets(target_se if target_se is not None else target_width, parameter=parameter)
    if metrics is None:
        metrics = list(target) if isinstance(target, dict) else list(PERFORMANCE_METRICS)
    ids = resolve_metrics(metrics, names=names)
    if isinstance(target, dict):
        missing = [m for m in ids if m not in target]
        if missing:
            raise InputError(f"{parameter} gives no target for {quote_list(missing, conjunction='and')}; add them to "
                             f"{parameter} or leave them out of metrics")
    reps = check_int(reps, parameter="reps", minimum=MIN_REPS, maximum=100_000,
                      why=f"give at least {MIN_REPS} resamples per size (1000 is plenty)")
    seed_ = resolve_seed(seed)
    beta = check_beta(beta)
    bias_adjust = check_flag(bias_adjust, parameter="bias_adjust")
    max_draws = check_int(max_draws, parameter="max_draws", minimum=10, maximum=MAX_DRAWS,
                           why="the largest benchmark to consider, in draws")
    return _PlanOptions(level, parameter, target, list(ids), reps, seed_, beta, bias_adjust, max_draws)


def _resampled_curves(opts: _PlanOptions, sample: BenchmarkSample, extrapolated: Mapping[str, int | None],
                      plannable: Sequence[str]) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Each metric's resampled standard error over a grid of sizes, the grid grown (up to
    ``max_draws``) only for the metrics that can be planned and are still above their target."""
    errors = cluster_errors(sample)
    need = set(opts.ids) | ({"b_cubed_precision", "b_cubed_recall"} if "b_cubed_f" in opts.ids else set())
    values = {m: fg_values(sample, m, beta=opts.beta, errors=errors) for m in METRICS
              if m in need and METRICS[m].fg is not None}
    complement = {m: METRICS[m].complement for m in values}
    guesses = [n for n in extrapolated.values() if n is not None]
    n_max = min(opts.max_draws, max(50, 2 * max(guesses, default=0)))
    todo = list(opts.ids)
    curves: dict[str, np.ndarray] = {}
    grids: dict[str, np.ndarray] = {}
    while todo:
        grid = _grid(n_max)
        use = set(todo) | ({"b_cubed_precision", "b_cubed_recall"} if "b_cubed_f" in todo else set())
        found = resampled_std_errors({m: v for m, v in values.items() if m in use}, sample.draws, grid,
                                     replicates=opts.reps, seed=opts.seed, bias_adjust=opts.bias_adjust,
                                     complement=complement,
                                     f_beta=("b_cubed_precision", "b_cubed_recall", opts.beta)
                                     if "b_cubed_f" in todo else None)
        if "b_cubed_f" in todo:
            found["b_cubed_f"] = found.pop("f_beta")
        for m in todo:
            curves[m], grids[m] = found[m], grid
        todo = [m for m in todo if m in plannable and not (found[m][-1] <= opts.target_of(m))]
        if n_max >= opts.max_draws:
            break
        n_max = min(opts.max_draws, 4 * n_max)
    return curves, grids


def _extrapolate(k: int, se: float, target: float) -> int | None:
    """k·(SE/target)², the textbook size; None without a standard error, or when the target is so
    small (1e-300) that the size overflows 64 bits: no benchmark has that many draws."""
    if not (math.isfinite(se) and se > 0 and target > 0):
        return None
    log_n = math.log(k) + 2.0 * (math.log(se) - math.log(target))
    return math.ceil(k * (se / target) ** 2) if log_n < 62 * math.log(2) else None


def _plan_row(mid: str, res: Any, curve: np.ndarray, grid: np.ndarray, t: float, *, k: int,
              extrapolated: int | None) -> dict[str, Any]:
    """One metric's plan: the smallest size from which the resampled SE stays at or below ``t``."""
    needed: int | None = None
    at: float = math.nan
    note = ""
    if not res.defined:
        note = f"the pilot gives no estimate ({res.note}); no plan"
    elif res.interval == "zero_event" or not np.any(curve > 0):
        note = ("the pilot shows no error of this kind, so every resample has the same estimate and a "
                "standard error of 0: the pilot says nothing about the spread. Label more clusters, or "
                "plan from the zero-event bound (about 3/n at 95 %, SPEC 6)")
    else:
        above = np.flatnonzero(~(curve <= t))
        if above.size == 0:
            needed, at = int(grid[0]), float(curve[0])
        elif above[-1] + 1 < len(grid):
            needed, at = int(grid[above[-1] + 1]), float(curve[above[-1] + 1])
        else:
            note = (f"the standard error is still {curve[-1]:.3g} at {grid[-1]:,} draws (max_draws), above the "
                    f"target {t:.3g}")
        if k < 30 and not note:
            note = f"a pilot of {k} draws gives a rough plan"
    if res.defined and "warning:" in (res.note or ""):  # as estimate() says it (e.g. an estimate above 1)
        # every clause that warns, whole: one that names a part ("b-cubed precision: warning: …")
        # keeps the name, so a warning about a part of b-cubed F is not read as F's
        warning = "; ".join(c for c in res.note.split("; ") if "warning:" in c)
        note = f"{warning}; {note}" if note else warning
    return {
        "metric": mid,
        "pilot_draws": k,
        "pilot_estimate": res.estimate,
        "pilot_std_error": res.std_error,
        "target_std_error": t,
        "draws_needed": needed,
        "std_error_at_draws": at,
        "draws_extrapolated": extrapolated,
        "note": note,
    }


def _grid(n_max: int) -> np.ndarray:
    """Every n from 2 to 400, then steps of 1 % (rounded up), and ``n_max`` itself."""
    small = np.arange(2, min(n_max, 400) + 1)
    big: list[int] = []
    n = 400
    while n < n_max:
        n = min(n_max, max(n + 1, math.ceil(n * 1.01)))
        big.append(n)
    return np.concatenate([small, np.asarray(big, dtype=np.int64)]).astype(np.int64)
