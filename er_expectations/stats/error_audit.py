"""Shares of errors by cause (SPEC 12.1): ratios of SPEC 5's form through the estimator of SPEC 6.

Each benchmark cluster c carries a set of cause tags (from labellers or reviewers). For a tag
t, with s = |c|, w = w_c and EI(c) the error indicator of SPEC 4:

* share of *records* whose entity carries t: f = s·[t ∈ tags(c)]·w, g = s·w;
* share of *entities* carrying t: f = [t ∈ tags(c)]·w, g = w;
* share among *erroneous* entities: f = [t ∈ tags(c)]·[EI(c) > 0]·w, g = [EI(c) > 0]·w.

A tag counts only on a cluster with an error in the release audited (the caller passes the
membership already restricted), so 0 ≤ f ≤ g for every share and a sample without a single
tagged draw gets the zero-event interval of SPEC 6 rather than a point. "Untagged errors"
(an erroneous cluster without any tag) is one more membership, never dropped.

Numpy only: the caller hands per-cluster arrays (one row per sampled cluster, with its draw
count) and one boolean membership array per tag.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from er_expectations.core.errors import InputError
from er_expectations.stats.estimator import (
    BOOTSTRAP_METHODS,
    RECOMMENDED,
    RECOMMENDED_CI_METHOD,
    RatioEstimate,
    check_ci_level,
    check_interval_options,
    interval_seed,
    ratio_estimate,
)
from er_expectations.stats.intervals import logit_interval
from er_expectations.stats.joint import JointBootstrap
from er_expectations.stats.metrics import interval_from_replicates

__all__ = ["AUDIT_CI_METHOD", "SHARES", "SHARE_LABELS", "check_share", "share_values", "tag_shares"]

#: The default interval of a cause's share: the logit interval. Shares of causes are small
#: (a cause of 0.5 % of records is common), and in the coverage study on RLdata10000
#: (benchmarks/README.md, "Error audit: coverage of the shares by cause") it covered
#: 94.3-97.8 % of 27 cells at 200-3,200 draws, where the linearised interval covered 84.3-100 %
#: (too short when a rare cause is seen once or twice) and BCa 90.9-99.1 %.
AUDIT_CI_METHOD = "logit"

#: The three shares of SPEC 12.1, in the order results list them.
SHARES: tuple[str, ...] = ("records", "entities", "erroneous")
#: How each share reads in a sentence.
SHARE_LABELS: dict[str, str] = {
    "records": "share of records whose entity has the error",
    "entities": "share of entities with the error",
    "erroneous": "share among entities with an error",
}
_UNDEFINED = {
    "records": "the sample has no record (every weight is 0)",
    "entities": "the sample has no entity",
    "erroneous": "no sampled entity has an error in this release, so there is no erroneous entity to share",
}


def check_share(share: object, *, parameter: str = "share") -> str:
    """Validate a share name: one of :data:`SHARES`."""
    if not isinstance(share, str) or share not in SHARES:
        raise InputError(f"{parameter}={share!r} is not a share; use one of: {', '.join(SHARES)} "
                         "(SPEC 12.1: of records, of entities, among erroneous entities)")
    return share


def share_values(size: np.ndarray, weight: np.ndarray, erroneous: np.ndarray, member: np.ndarray,
                 share: str) -> tuple[np.ndarray, np.ndarray]:
    """Per-cluster f(c) and g(c) of one share (SPEC 12.1), weights scaled to a maximum of 1
    (every share is a ratio, so the scale cancels and huge weights cannot overflow)."""
    s = np.asarray(size, dtype=np.float64)
    w = np.asarray(weight, dtype=np.float64)
    w = w / w.max()
    err = np.asarray(erroneous, dtype=bool)
    t = np.asarray(member, dtype=bool) & err
    if share == "records":
        return s * t * w, s * w
    if share == "entities":
        return t * w, w.copy()
    if share == "erroneous":
        return t * w, err * w
    raise InputError(f"share={share!r} is not a share; use one of: {', '.join(SHARES)}")


def _with_logit(res: RatioEstimate, level: float) -> RatioEstimate:
    if res.interval != "linearization":
        return res
    lo, hi = logit_interval(res.estimate, res.std_error, ci_level=level)
    if np.isnan(lo):
        note = f"logit interval not used: the estimate {res.estimate:.4g} is not inside (0, 1); linearised interval"
        return replace(res, note="; ".join(n for n in (res.note, note) if n))
    return replace(res, ci_lower=float(lo), ci_upper=float(hi), interval="logit")


def tag_shares(size: np.ndarray, weight: np.ndarray, draws: np.ndarray, erroneous: np.ndarray,
               members: Mapping[str, np.ndarray], *, ci_level: float = 0.95, bias_adjust: bool = True,
               ci_method: str = "linearization", n_boot: int = 2000, seed: int | None = None,
               order: np.ndarray | None = None) -> dict[str, dict[str, RatioEstimate]]:
    """Estimate the three shares of SPEC 12.1 for every membership in ``members``.

    ``size``, ``weight``, ``draws`` and ``erroneous`` (EI(c) > 0) have one value per
    sampled cluster; ``members[t]`` is True where cluster c carries tag t (only erroneous
    clusters count). Returns ``{t: {share: RatioEstimate}}``. ``ci_method`` is one of the
    interval methods of SPEC 6 (``"recommended"``: BCa, as for every metric); the
    bootstraps resample the draws once for every tag and share (``order``: the rows'
    resampling order, e.g. the cluster ids as text). Zero-event intervals (a tag seen on
    no draw, or on every erroneous draw) stand whatever the method (SPEC 6).
    """
    level = check_ci_level(ci_level)
    method, n_boot, seed = check_interval_options(ci_method, n_boot, seed)
    if method == RECOMMENDED:
        method = RECOMMENDED_CI_METHOD["cluster_recall"]
    d = np.asarray(draws, dtype=np.float64)
    k = d.shape[0]
    for name, arr in (("size", size), ("weight", weight), ("erroneous", erroneous)):
        if np.asarray(arr).shape != (k,):
            raise InputError(f"tag_shares: {name} must have one value per sampled cluster ({k})")
    out: dict[str, dict[str, RatioEstimate]] = {}
    values: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = {}
    for tag, member in members.items():
        if np.asarray(member).shape != (k,):
            raise InputError(f"tag_shares: the membership of tag {tag!r} must have one value per sampled cluster")
        row = {}
        for share in SHARES:
            f, g = share_values(size, weight, erroneous, member, share)
            values[(tag, share)] = (f, g)
            row[share] = ratio_estimate(f, g, d, bias_adjust=bias_adjust, ci_level=level, bounds=(0.0, 1.0),
                                        undefined_reason=_UNDEFINED[share], zero_event=True)
        out[tag] = row
    if method == "logit":
        return {t: {s: _with_logit(r, level) for s, r in row.items()} for t, row in out.items()}
    if method in BOOTSTRAP_METHODS and values:
        seed = interval_seed(seed)
        boot = JointBootstrap(values, d, n_boot=n_boot, seed=seed, bias_adjust=bias_adjust, order=order,
                              moments=[(key, key) for key in values] if method == "studentized" else ())
        for (tag, share), res in [((t, s), r) for t, row in out.items() for s, r in row.items()]:
            if res.interval != "linearization" or res.influence is None:
                out[tag][share] = replace(res, seed=seed)
                continue
            key = (tag, share)
            se = np.sqrt(np.maximum(boot.covariance(key, key), 0.0)) if method == "studentized" else None
            lo, hi, dropped = interval_from_replicates(method, res, boot.theta[key], se, d, bounds=(0.0, 1.0),
                                                       ci_level=level)
            note = res.note
            if dropped:
                note = "; ".join(n for n in (note, f"{dropped} of {n_boot} bootstrap resamples have no value of "
                                                   "the denominator and are left out") if n)
            if np.isnan(lo) or np.isnan(hi):
                out[tag][share] = replace(res, note="; ".join(n for n in (note, f"no {method} interval; "
                                                                       "linearised interval") if n), seed=seed)
            else:
                out[tag][share] = replace(res, ci_lower=lo, ci_upper=hi, note=note, interval=method, seed=seed)
    return out

