"""How often the honest slice search finds a real slice: power by simulation with a planted slice
(SPEC 12.2, "Power"; issue 28).

An empty slice result says "no slice was found", not "there is no slice": at a few hundred draws
the search misses most slices of moderate lift. The power of the search is the chance that it
reports a significant slice made mostly of the entities of a slice that really has more errors.
It depends on the draws, the weights, the error rate, the features that compete for the split
and every option of the search, so it is measured by running the search itself
(:func:`~er_expectations.stats.slices.search_slices`, the very code the checks run) on samples
with a *planted* slice whose truth is known:

* **Planted slice.** Every sampled entity joins the slice with chance ``share``, independently
  of everything else, so the slice holds a share ``share`` of the entities (per entity) or of
  the records (per record: membership does not depend on size).
* **Errors.** With p the error rate (the weighted share of entities with y ≠ 0), the slice's
  entities have an error with chance r_S = L·r_R and the others with r_R, where
  ``share``·r_S + (1 − ``share``)·r_R = p: the overall rate is kept and the lift is L.
  An entity with an error takes the metric value of an erroneous entity of the pool (for EI
  always 1; for OCE, UCE, ROCE, RUCE their observed sizes), so the rates of y keep the lift L.
  A slice needs r_S ≤ 1: a lift too large for the rate is refused with the reason.
* **Search.** The features of the sample (each entity keeps its own values, which no longer
  relate to the errors: they compete with the planted feature as they would with a real one)
  plus the planted membership as one more categorical feature; the split's seed is drawn anew
  for every replication.
* **Found.** A replication finds the slice when a significant slice has more than half of its
  weight (Σ d·g over its sampled entities) inside the planted slice.

The share of replications that find it is the power, reported with its Monte Carlo standard
error √(P(1 − P)/reps). :func:`slice_power` plants the slice in one given sample (the page of a
check: the user's own draws, weights, features and options; the rate p is the sample's
estimate); :func:`replicate_found` is one replication, used by ``erx.simulate`` on fresh
samples of a population whose rate is known.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from er_expectations.core.errors import InputError
from er_expectations.stats.slices import Features, SliceSearch, search_slices

__all__ = ["DEFAULT_LIFT", "DEFAULT_POWER_REPS", "DEFAULT_SHARE", "PLANTED", "SlicePower", "check_power_options",
           "found_planted", "how_often", "plant_errors", "planted_rates", "replicate_found", "slice_power"]

#: The planted slice the page reports by default: a fifth of the entities with three times the rate.
DEFAULT_SHARE = 0.2
DEFAULT_LIFT = 3.0
#: Replications behind a page's number: Monte Carlo SE at most 0.035 (at P = 0.5).
DEFAULT_POWER_REPS = 200
#: Name of the planted membership among the features (never shown: only the power leaves).
PLANTED = "__planted_slice__"


@dataclass(frozen=True, slots=True)
class SlicePower:
    """The power of the slice search against one planted slice (module docstring).

    ``power`` = ``found`` / ``reps``, ``mc_se`` its Monte Carlo standard error; ``slice_rate``
    and ``rest_rate`` the planted rates r_S and r_R from the error rate ``base_rate``;
    ``draws`` the draws of each simulated sample. ``power`` is NaN with a ``note`` when no
    slice can be planted (no error in the sample, or r_S above 1).
    """

    share: float
    lift: float
    draws: int
    reps: int
    found: int
    power: float
    mc_se: float
    base_rate: float
    slice_rate: float
    rest_rate: float
    seed: int
    per: str = "entity"
    note: str = ""

    @property
    def defined(self) -> bool:
        return not math.isnan(self.power)

    def sentence(self) -> str:
        """E.g. 'At 400 draws, a slice of 20 % of entities with 3× the error rate is found about 1
        time in 4 (26 % of 200 simulated searches; Monte Carlo SE 3.1 points).'"""
        unit = "records" if self.per == "record" else "entities"
        what = f"a slice of {100 * self.share:g} % of {unit} with {self.lift:g}× the error rate"
        if not self.defined:
            return f"The chance to find {what} is not computed: {self.note}."
        return (f"At {self.draws:,} draws, {what} is found {how_often(self.power)} "
                f"({100 * self.power:.0f} % of {self.reps:,} simulated searches; Monte Carlo SE "
                f"{100 * self.mc_se:.1f} points).")

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON values (NaN as None)."""
        def num(x: float) -> float | None:
            return None if math.isnan(x) else float(x)

        return {"share": self.share, "lift": self.lift, "draws": self.draws, "reps": self.reps, "found": self.found,
                "power": num(self.power), "mc_se": num(self.mc_se), "base_rate": num(self.base_rate),
                "slice_rate": num(self.slice_rate), "rest_rate": num(self.rest_rate), "seed": self.seed,
                "per": self.per, "note": self.note, "sentence": self.sentence()}


def how_often(p: float) -> str:
    """A chance in words: 'about 1 time in 4', 'about 2 times in 3', 'almost always', 'almost never'.

    The simplest fraction a/b (b ≤ 10, or 1/b up to 1/20) within min(0.02, p/10) of ``p``, else the nearest."""
    if p >= 0.95:
        return "almost always"
    if p < 0.05:
        return "almost never"
    fractions = sorted({Fraction(a, b) for b in range(2, 11) for a in range(1, b)}
                       | {Fraction(1, b) for b in range(11, 21)},
                       key=lambda f: (f.denominator, f.numerator))
    tolerance = min(0.02, 0.1 * p)
    best = next((f for f in fractions if abs(float(f) - p) <= tolerance), None) \
        or min(fractions, key=lambda f: abs(float(f) - p))
    a, b = best.numerator, best.denominator
    return f"about {a} time{'s' if a > 1 else ''} in {b}"


def check_power_options(share: object, lift: object, reps: object) -> tuple[float, float, int]:
    """``share`` strictly between 0 and 0.5 (a slice is a minority), ``lift`` above 1, ``reps`` ≥ 20."""
    if isinstance(share, bool) or not isinstance(share, (int, float, np.integer, np.floating)) \
            or not 0.0 < float(share) <= 0.5:
        raise InputError(f"slice_share={share!r}: give the planted slice's share of the entities, above 0 and at most "
                         "0.5 (a slice is a minority), such as 0.2")
    if isinstance(lift, bool) or not isinstance(lift, (int, float, np.integer, np.floating)) \
            or not (math.isfinite(float(lift)) and float(lift) > 1.0):
        raise InputError(f"slice_lift={lift!r}: give how many times the rest's error rate the planted slice has, "
                         "above 1, such as 3")
    if isinstance(reps, bool) or not isinstance(reps, (int, np.integer)) or not 20 <= int(reps) <= 100_000:
        raise InputError(f"slice_reps={reps!r}: give the number of simulated searches, 20 to 100,000 (200 gives a "
                         "Monte Carlo SE of at most 3.5 points)")
    return float(share), float(lift), int(reps)


def planted_rates(base_rate: float, share: float, lift: float) -> tuple[float, float, str]:
    """(r_S, r_R, note): the slice's and the rest's error chances keeping the overall rate; the
    note says why there are none (NaN) when the rate is 0 or r_S would exceed 1."""
    if not math.isfinite(base_rate) or base_rate <= 0.0:
        return math.nan, math.nan, "the sample shows no error, so there is no error rate to multiply"
    rest = base_rate / (share * lift + 1.0 - share)
    inside = lift * rest
    if inside > 1.0:
        return math.nan, math.nan, (f"at an error rate of {base_rate:.3g}, a slice of {100 * share:g} % with "
                                    f"{lift:g}× the rest's rate would need a rate of {inside:.3g}, above 1")
    return inside, rest, ""


def plant_errors(rng: np.random.Generator, n: int, pool: np.ndarray, *, share: float, slice_rate: float,
                 rest_rate: float) -> tuple[np.ndarray, np.ndarray]:
    """(member, y) of ``n`` entities: membership with chance ``share``, an error with chance
    r_S or r_R, an erroneous entity's value drawn from ``pool`` (the values of erroneous entities)."""
    member = rng.random(n) < share
    err = rng.random(n) < np.where(member, slice_rate, rest_rate)
    y = np.zeros(n, dtype=np.float64)
    y[err] = pool[rng.integers(0, pool.size, int(err.sum()))]
    return member, y


def found_planted(result: SliceSearch, member: np.ndarray, g: np.ndarray, draws: np.ndarray,
                  features: Features) -> bool:
    """Whether a significant slice has more than half of its weight Σ d·g inside the planted slice."""
    a = np.asarray(draws, dtype=np.float64) * np.asarray(g, dtype=np.float64)
    for s in result.significant:
        m = np.ones(member.shape[0], dtype=bool)
        for c in s.conditions:
            m &= c.mask(features)
        w = float(a[m].sum())
        if w > 0 and float(a[m & member].sum()) > 0.5 * w:
            return True
    return False


def _with_planted(features: Features, member: np.ndarray) -> Features:
    return Features((*features.names, PLANTED), (*features.numeric, False),
                    (*features.values, member.astype(np.int64)), (*features.categories, ("no", "yes")))


def replicate_found(rng: np.random.Generator, g: np.ndarray, draws: np.ndarray, labels: np.ndarray,
                    features: Features, pool: np.ndarray, *, share: float, slice_rate: float, rest_rate: float,
                    options: dict[str, Any]) -> bool:
    """One replication: plant a slice in the sampled entities (``g``, ``draws``, ``labels``,
    ``features``), run :func:`search_slices` with ``options`` and a fresh split seed, and say
    whether it found the slice."""
    member, y = plant_errors(rng, g.shape[0], pool, share=share, slice_rate=slice_rate, rest_rate=rest_rate)
    feats = _with_planted(features, member)
    try:
        result = search_slices(y, g, draws, labels, feats, seed=int(rng.integers(0, 2**32)), **options)
    except InputError as exc:
        if "no weight" in str(exc):  # every draw of the search part has g = 0: nothing found
            return False
        raise
    return found_planted(result, member, g, draws, feats)


def slice_power(y: np.ndarray, g: np.ndarray, draws: np.ndarray, labels: np.ndarray, features: Features, *,
                share: float = DEFAULT_SHARE, lift: float = DEFAULT_LIFT, reps: int = DEFAULT_POWER_REPS,
                seed: int = 0, per: str = "entity", **options: Any) -> SlicePower:
    """The power of :func:`search_slices` with ``options`` to find a planted slice of ``share``
    and ``lift`` in this sample (the sample's draws, weights, features; its error rate).

    ``y`` (the cluster-wise metric of SPEC 4, non-negative), ``g``, ``draws``, ``labels`` and
    ``features`` are those :func:`search_slices` takes; ``seed`` fixes the simulation (a page
    shows the same number on every rerun).
    """
    share, lift, reps = check_power_options(share, lift, reps)
    y = np.asarray(y, dtype=np.float64)
    g = np.asarray(g, dtype=np.float64)
    d = np.asarray(draws, dtype=np.int64)
    if np.any(y < 0):
        raise InputError("slice power needs a non-negative error metric (EI, OCE, UCE, ROCE, RUCE); SDE is signed")
    a = d * g
    total = float(a.sum())
    err = y > 0
    base = float(a[err].sum()) / total if total > 0 else math.nan
    pool = np.repeat(y[err], d[err])  # an erroneous entity's value, as often as it was drawn
    r_s, r_r, note = planted_rates(base, share, lift)
    k = int(d.sum())
    if note:
        return SlicePower(share, lift, k, reps, 0, math.nan, math.nan, base, r_s, r_r, seed, per, note)
    rng = np.random.default_rng([seed, 28])
    options = {**options, "per": per}
    found = sum(replicate_found(rng, g, d, labels, features, pool, share=share, slice_rate=r_s, rest_rate=r_r,
                                options=options) for _ in range(reps))
    p = found / reps
    return SlicePower(share, lift, k, reps, found, p, math.sqrt(p * (1 - p) / reps), base, r_s, r_r, seed, per)
