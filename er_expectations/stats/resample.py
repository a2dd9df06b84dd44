"""The estimator of SPEC 6 on many replicate samples at once, for planning a benchmark's size.

Two uses, both on small per-cluster tables of f(c) and g(c) (SPEC 5, 7; weights included):

* :func:`replicate_ratio` / :func:`replicate_f_beta`: replay a sampling design on a
  population whose whole true clustering is known. A block of replicates is an array
  of cluster indices (replicates × draws); a cluster drawn twice appears twice, which is
  the draw multiplicity of SPEC 2.1. Every replicate gets exactly the estimate, standard
  error and interval that :func:`~er_expectations.stats.estimator.ratio_estimate` and
  :func:`~er_expectations.stats.estimator.f_beta_estimate` give on the same draws
  (including the zero-event interval of error-free samples), computed as arrays.
* :func:`resampled_std_errors`: the standard error of the estimator at other numbers of
  draws, by resampling the draws of a pilot benchmark (its empirical distribution stands
  for the design's distribution of draws).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from er_expectations.stats.estimator import REL_TOL, ratio_replicates, z_value, zero_event_draws

__all__ = [
    "BLOCK_CELLS",
    "Replicates",
    "draw_clusters",
    "replicate_f_beta",
    "replicate_ratio",
    "resampled_std_errors",
]

#: Cells (replicates × draws) of one block of replicates: bounds the memory of a block to
#: a few MB whatever the number of replicates and draws.
BLOCK_CELLS = 250_000


@dataclass(frozen=True, slots=True)
class Replicates:
    """Estimates of one metric on a block of replicate samples (arrays of one value each).

    ``estimate``, ``std_error``, ``ci_lower`` and ``ci_upper`` follow SPEC 6 exactly as
    :class:`~er_expectations.stats.estimator.RatioEstimate` does (NaN where that has NaN);
    ``zero_event`` marks the intervals of samples without an error or event;
    ``influence`` (replicates × draws) is the linearised influence of every draw (None
    when not asked for).
    """

    estimate: np.ndarray
    std_error: np.ndarray
    ci_lower: np.ndarray
    ci_upper: np.ndarray
    zero_event: np.ndarray
    influence: np.ndarray | None


def draw_clusters(rng: np.random.Generator, *, design: str, sizes: np.ndarray, draws: int,
                  replicates: int, probabilities: np.ndarray | None = None) -> np.ndarray:
    """Cluster indices of ``replicates`` samples of ``draws`` draws each, with replacement.

    ``cluster_size``: records are drawn uniformly and each brings its true cluster, so a
    cluster is drawn with probability |c|/N (SPEC 1); ``uniform``: every cluster with
    probability 1/K; ``expected_errors``: cluster c with probability π_c = Σ_{r∈c} q_r
    (``probabilities``, SPEC 12.3), by the inverse of their cumulative sum.
    """
    k = sizes.shape[0]
    if design == "expected_errors":
        if probabilities is None or probabilities.shape != (k,):
            raise ValueError("draw_clusters: design 'expected_errors' needs one probability per cluster")
        cum = np.cumsum(np.asarray(probabilities, dtype=np.float64))
        u = rng.random(size=(replicates, draws)) * cum[-1]
        return np.minimum(np.searchsorted(cum, u, side="right"), k - 1)
    if design == "cluster_size":
        # record u (0 ≤ u < N, in cluster order) belongs to the cluster j with end[j−1] ≤ u < end[j]
        end = np.cumsum(sizes.astype(np.int64))
        records = rng.integers(0, int(end[-1]), size=(replicates, draws))
        return np.searchsorted(end, records, side="right")
    if design == "uniform":
        return rng.integers(0, k, size=(replicates, draws))
    raise ValueError(f"unknown design {design!r}")  # validated by the caller


def _clip(est: np.ndarray, lo: np.ndarray, hi: np.ndarray, bounds: tuple[float, float] | None):
    if bounds is None:
        return lo, hi
    inside = (est >= bounds[0]) & (est <= bounds[1])
    return np.where(inside, np.maximum(lo, bounds[0]), lo), np.where(inside, np.minimum(hi, bounds[1]), hi)


def _zero_event_bound(G: np.ndarray, level: float) -> np.ndarray:
    """q = 1 − (1 − level)^(1/k*), k* = Σ g / max g over the draws with g > 0 (SPEC 6)."""
    k_eff = zero_event_draws(G)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = -np.expm1(np.log1p(-level) / k_eff)
    return np.where(k_eff > 0, q, np.nan)


def replicate_ratio(F: np.ndarray, G: np.ndarray, *, bias_adjust: bool, ci_level: float,
                    bounds: tuple[float, float] | None, zero_event: bool, complement: bool = False,
                    mismatch: np.ndarray | None = None, influence: bool = True) -> Replicates:
    """The ratio estimator of SPEC 6 on every row of ``F``, ``G`` (replicates × draws).

    Row b holds f and g of the k draws of replicate b (a cluster drawn twice appears twice).
    Mirrors :func:`~er_expectations.stats.estimator.ratio_estimate` case by case: ḡ = 0 is
    undefined (NaN); f̄ = 0 gives 0 with no standard error (and, for a ``zero_event``
    metric, the interval [0, q]); every f = g gives the interval [1 − q, 1]; else
    θ̂ ± z·SE clipped to ``bounds`` when θ̂ lies in them. ``complement`` (homogeneity)
    reports 1 − θ̂ with the interval flipped, as the metric layer does.

    ``mismatch`` (optional, same shape, boolean): the draws with g > 0 and f ≠ g, when the
    caller has it per cluster already (it saves two passes). ``influence=False`` skips the
    per-draw influence values (only F_β needs them).
    """
    reps, k = F.shape
    kk1 = float(k * (k - 1)) if k >= 2 else np.nan
    nan = np.nan
    with np.errstate(divide="ignore", invalid="ignore"):
        fbar = F.sum(axis=1) / k
        gbar = G.sum(axis=1) / k
        ratio = fbar / gbar
        a = G * (1.0 / gbar)[:, None]
        dev = F * (1.0 / fbar)[:, None]
        dev -= a  # f/f̄ − g/ḡ
        if bias_adjust and k >= 2:
            est = ratio * (1.0 + np.einsum("ij,ij->i", a, dev) / kk1)
        else:
            est = ratio.copy()
        var = ratio**2 * np.einsum("ij,ij->i", dev, dev) / kk1
        se = np.sqrt(np.maximum(var, 0.0))
        # (f − θg)/ḡ = θ (f/f̄ − g/ḡ)
        infl = dev * ratio[:, None] if influence else None
    undefined = (gbar == 0.0) | ~np.isfinite(gbar)
    fzero = (fbar == 0.0) & ~undefined
    est = np.where(fzero, 0.0, est)
    se = np.where(fzero, nan, se)
    est = np.where(undefined, nan, est)
    se = np.where(undefined, nan, se)
    z = z_value(ci_level)
    lo, hi = est - z * se, est + z * se
    lo, hi = _clip(est, lo, hi, None if complement else bounds)
    zero = np.zeros(reps, dtype=bool)
    if zero_event and k >= 2:
        if mismatch is None:
            mismatch = (G > 0) & (np.abs(F - G) > REL_TOL * G)
        all_right = ~mismatch.any(axis=1) & ~undefined & ~fzero
        rows = np.flatnonzero(all_right | fzero)
        if rows.size:
            q = _zero_event_bound(G[rows], ci_level)
            right = all_right[rows]
            lo[rows] = np.where(right, 1.0 - q, 0.0)
            hi[rows] = np.where(right, 1.0, q)
            zero[rows] = ~np.isnan(q)
    if complement:
        est = 1.0 - est
        lo, hi = 1.0 - hi, 1.0 - lo
        inside = (est >= 0.0) & (est <= 1.0) & ~np.isnan(lo)
        lo = np.where(inside, np.maximum(lo, 0.0), lo)
        hi = np.where(inside, np.minimum(hi, 1.0), hi)
        if infl is not None:
            infl = -infl
    return Replicates(est, se, lo, hi, zero, infl)


def replicate_f_beta(p: Replicates, r: Replicates, *, beta: float, ci_level: float) -> Replicates:
    """F_β of two replicate estimates on the same draws (b-cubed F, SPEC 5), as
    :func:`~er_expectations.stats.estimator.f_beta_estimate` computes it for one sample."""
    b2 = beta * beta
    P, R = p.estimate, r.estimate
    k = p.influence.shape[1]
    nan = np.nan
    undefined = np.isnan(P) | np.isnan(R)
    with np.errstate(divide="ignore", invalid="ignore"):
        denom = b2 * P + R
        zero = ~undefined & ((denom <= 0) | (P <= 0) | (R <= 0))
        est = (1 + b2) * P * R / denom
        d_p = (1 + b2) * R**2 / denom**2
        d_r = (1 + b2) * b2 * P**2 / denom**2
        zinf = d_p[:, None] * p.influence + d_r[:, None] * r.influence
        zinf = zinf - zinf.sum(axis=1, keepdims=True) / k
        var = (zinf * zinf).sum(axis=1) / (k * (k - 1)) if k >= 2 else np.full(P.shape, nan)
    se = np.sqrt(np.maximum(var, 0.0))
    est = np.where(undefined, nan, np.where(zero, 0.0, est))
    se = np.where(undefined | zero, nan, se)
    z = z_value(ci_level)
    lo, hi = _clip(est, est - z * se, est + z * se, (0.0, 1.0))
    both = p.zero_event & r.zero_event & (p.ci_upper == 1.0) & (r.ci_upper == 1.0) & ~undefined & ~zero
    lo = np.where(both, np.minimum(p.ci_lower, r.ci_lower), lo)
    hi = np.where(both, 1.0, hi)
    return Replicates(est, se, lo, hi, both, zinf)


def resampled_std_errors(values: Mapping[str, tuple[np.ndarray, np.ndarray]], draws: np.ndarray, sizes: Sequence[int],
                         *, replicates: int, seed: int, bias_adjust: bool, complement: Mapping[str, bool],
                         f_beta: tuple[str, str, float] | None = None) -> dict[str, np.ndarray]:
    """Standard deviation of θ̂ at each number of draws in ``sizes``, by resampling a pilot.

    ``values`` maps a metric to its per-cluster f and g in the pilot, ``draws`` the pilot's
    draw counts. Each replicate is one stream of draws taken uniformly with replacement from
    the pilot's k draws (cluster c with probability d_c/k); its first n draws are the
    replicate at size n (common random numbers across sizes, so the curve is smooth). θ̂ is
    the estimator of SPEC 6 (:func:`ratio_replicates`). ``f_beta`` = (precision id, recall
    id, β) adds the F_β of the two under the key ``"f_beta"``. Returns, per metric, the
    standard deviation over replicates (undefined replicates left out) at each size.
    """
    ids = list(values)
    d = np.asarray(draws, dtype=np.int64)
    owner = np.repeat(np.arange(d.shape[0], dtype=np.int64), d)
    columns = np.column_stack([c for mid in ids for f, g in [values[mid]] for c in (f, g, g * f, g * g)])
    n_sizes = np.asarray(sorted(set(int(s) for s in sizes)), dtype=np.int64)
    top = int(n_sizes[-1])
    m = columns.shape[1]
    rng = np.random.default_rng(seed)
    out = {mid: np.full(n_sizes.shape[0], np.nan) for mid in ids}
    if f_beta is not None:
        out["f_beta"] = np.full(n_sizes.shape[0], np.nan)
    running = np.zeros((replicates, m))
    chunk = max(1, min(256, 8 * BLOCK_CELLS // max(replicates * m, 1)))  # at most 16 MB per chunk
    start = 0
    pos = 0  # next size to report
    while start < top:
        width = min(chunk, top - start)
        picked = owner[rng.integers(0, owner.shape[0], size=(replicates, width))]
        cums = np.cumsum(columns[picked], axis=1) + running[:, None, :]
        running = cums[:, -1, :]
        end = start + width
        while pos < n_sizes.shape[0] and n_sizes[pos] <= end:
            n = int(n_sizes[pos])
            sums = cums[:, n - start - 1, :]
            thetas = {}
            for j, mid in enumerate(ids):
                theta = ratio_replicates(*(sums[:, 4 * j + c] for c in range(4)), n, bias_adjust=bias_adjust)
                thetas[mid] = 1.0 - theta if complement.get(mid, False) else theta
                out[mid][pos] = _sd(thetas[mid])
            if f_beta is not None:
                pr, rc, beta = f_beta
                b2 = beta * beta
                p, r = thetas[pr], thetas[rc]
                with np.errstate(divide="ignore", invalid="ignore"):
                    fb = np.where((p > 0) & (r > 0), (1 + b2) * p * r / (b2 * p + r), 0.0)
                out["f_beta"][pos] = _sd(np.where(np.isnan(p) | np.isnan(r), np.nan, fb))
            pos += 1
        start = end
    return out


def _sd(x: np.ndarray) -> float:
    ok = x[~np.isnan(x)]
    return float(ok.std(ddof=1)) if ok.shape[0] >= 2 else float("nan")
