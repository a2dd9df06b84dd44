"""Many ratio estimators on the same bootstrap resamples of the draws (SPEC 6, 8, 10).

A subgroup and its comparison (SPEC 8) or one metric on two releases (SPEC 10) are
estimated on the *same* draws. Resampling the draws once and computing every ratio on each
resample keeps that pairing: the replicate of a gap or a change is the difference of the
replicates of its two sides on the same resample, so its spread is the paired one.

:class:`JointBootstrap` computes, from one matrix product per block of resamples, for
every series (a key with per-row f and g):

* θ̂*, the estimator of SPEC 6 (bias adjustment included) on each resample;
* optionally the linearised covariance of any two series on each resample,
  Σ_i W_i u_i v_i / (k(k−1)) with u = (f − r*g)/ḡ* the influence of one side at the
  resample's own ratio r* (the variance when both are the same series), for the
  studentised bootstrap.

Everything is numpy on per-row arrays; the draws are resampled as in
:func:`~er_expectations.stats.estimator.bootstrap_counts` (Multinomial(k, d/k) counts,
rows in the given order, so a seed gives the same replicates on every engine).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping

import numpy as np

from er_expectations.stats.estimator import bootstrap_sums, ratio_replicates

__all__ = ["JointBootstrap"]


class JointBootstrap:
    """Replicates of several ratio estimators on the same ``n_boot`` resamples of the draws.

    ``values`` maps a key to the per-row f and g of one series (all on the same rows:
    the rows of a sample, a domain's f·π and g·π, one release's values aligned with the
    other's); ``draws`` are the rows' draw counts. ``order`` (optional) is the order in
    which the rows are resampled (the sample's cluster ids as text, see
    :func:`~er_expectations.stats.metrics.estimate_metrics`). ``moments`` lists the pairs
    of keys (a, b) whose per-resample covariance is wanted (a == b for a variance).
    """

    def __init__(self, values: Mapping[Hashable, tuple[np.ndarray, np.ndarray]], draws: np.ndarray, *,
                 n_boot: int, seed: int, bias_adjust: bool, order: np.ndarray | None = None,
                 moments: Iterable[tuple[Hashable, Hashable]] = ()) -> None:
        self.keys = tuple(values)
        d = np.asarray(draws)
        self.k = int(round(float(d.sum())))
        pairs = []
        for a, b in moments:
            if a not in values or b not in values:
                raise KeyError(f"moments: unknown series {a!r} or {b!r}")
            key = (a, b) if self.keys.index(a) <= self.keys.index(b) else (b, a)
            if key not in pairs:
                pairs.append(key)
        cols: list[np.ndarray] = []
        self._base: dict[Hashable, int] = {}
        for key in self.keys:
            f, g = (np.asarray(x, dtype=np.float64) for x in values[key])
            self._base[key] = len(cols)
            cols += [f, g, g * f, g * g]
        self._pair: dict[tuple[Hashable, Hashable], int] = {}
        for a, b in pairs:
            fa, ga = (np.asarray(x, dtype=np.float64) for x in values[a])
            fb, gb = (np.asarray(x, dtype=np.float64) for x in values[b])
            self._pair[(a, b)] = len(cols)
            cols += [fa * fb, fa * gb, ga * fb, ga * gb]
        columns = np.column_stack(cols)
        counts = d.astype(np.int64)
        if order is not None:
            columns, counts = columns[order], counts[order]
        self.n_boot = int(n_boot)
        self.seed = int(seed)
        self._sums = bootstrap_sums(columns, counts, n_boot=self.n_boot, seed=self.seed)
        self.theta: dict[Hashable, np.ndarray] = {}
        self._ratio: dict[Hashable, np.ndarray] = {}
        self._gbar: dict[Hashable, np.ndarray] = {}
        k = self.k
        for key, j in self._base.items():
            s = self._sums
            self.theta[key] = ratio_replicates(s[:, j], s[:, j + 1], s[:, j + 2], s[:, j + 3], k,
                                               bias_adjust=bias_adjust)
            with np.errstate(divide="ignore", invalid="ignore"):
                self._gbar[key] = s[:, j + 1] / k
                self._ratio[key] = s[:, j] / s[:, j + 1]

    def covariance(self, a: Hashable, b: Hashable) -> np.ndarray:
        """Σ W u_a u_b / (k(k−1)) on every resample: the linearised covariance of θ̂*_a and
        θ̂*_b (the variance V̂ of SPEC 6 when a == b), from the sums asked in ``moments``.

        With u = (f − r g)/ḡ at the resample's ratio r, the sum expands to
        (Σfa·fb − r_b Σfa·gb − r_a Σga·fb + r_a r_b Σga·gb)/(ḡ_a ḡ_b); NaN on resamples
        where a ratio is undefined, 0 where f̄* = 0 (no standard error there).
        """
        key = (a, b) if self.keys.index(a) <= self.keys.index(b) else (b, a)
        if key not in self._pair:
            raise KeyError(f"the covariance of {a!r} and {b!r} was not asked for (moments=)")
        j = self._pair[key]
        s = self._sums
        ra, rb = self._ratio[key[0]], self._ratio[key[1]]
        k = self.k
        with np.errstate(divide="ignore", invalid="ignore"):
            total = s[:, j] - rb * s[:, j + 1] - ra * s[:, j + 2] + ra * rb * s[:, j + 3]
            out = total / (self._gbar[key[0]] * self._gbar[key[1]]) / (k * (k - 1)) if k >= 2 else total * np.nan
        return out

    def std_error(self, key: Hashable) -> np.ndarray:
        """√V̂ of one series on every resample (its variance must be in ``moments``)."""
        return np.sqrt(np.maximum(self.covariance(key, key), 0.0))
