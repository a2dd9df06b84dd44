"""The conditions of a slice and the features they read (SPEC 12.2): one condition on one
feature, a conjunction in words, and :func:`simplify`, which merges the conditions on each
feature into one ("source not in {E} and source in {C}" → "source in {C}")."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from er_expectations.core.errors import InputError

__all__ = ["Condition", "Features", "describe", "simplify"]


@dataclass(frozen=True, slots=True)
class Features:
    """One value per sampled cluster for every feature, aligned with the sample's clusters.

    ``values[j]`` is float64 with NaN for unknown (numeric) or int64 codes into
    ``categories[j]`` with −1 for unknown (categorical, ``numeric[j]`` False).
    """

    names: tuple[str, ...]
    numeric: tuple[bool, ...]
    values: tuple[np.ndarray, ...]
    categories: tuple[tuple[str, ...], ...]

    def __post_init__(self) -> None:
        n = len(self.names)
        if not (len(self.numeric) == len(self.values) == len(self.categories) == n):
            raise InputError("features: give one kind, value array and category list per feature name")
        if len(set(self.names)) != n:
            raise InputError(f"features: a feature name is given twice in {list(self.names)}")
        lengths = {v.shape[0] for v in self.values}
        if len(lengths) > 1:
            raise InputError("features: every feature needs one value per sampled cluster")
        for name, num, v, cats in zip(self.names, self.numeric, self.values, self.categories, strict=True):
            if num and not np.issubdtype(v.dtype, np.floating):
                raise InputError(f"feature {name!r}: numeric values must be floats (NaN for unknown)")
            if not num and (not np.issubdtype(v.dtype, np.integer) or v.size and (v.min() < -1 or v.max() >= len(cats))):
                raise InputError(f"feature {name!r}: categorical values must be codes into its categories (−1 unknown)")

    @property
    def size(self) -> int:
        return int(self.values[0].shape[0]) if self.values else 0

    def column(self, name: str) -> tuple[bool, np.ndarray, tuple[str, ...]]:
        j = self.names.index(name)
        return self.numeric[j], self.values[j], self.categories[j]


@dataclass(frozen=True, slots=True)
class Condition:
    """One condition of a slice on one feature; ``unknown`` says whether an unknown value satisfies it.

    ``op`` is ``≥`` or ``<`` (``threshold``), ``range`` (threshold ≤ x < ``upper``), ``in`` or
    ``not in`` (``categories``), or, from :func:`simplify` only, ``known`` (any known value),
    ``unknown`` (only an unknown value) and ``none`` (no value: contradictory conditions).
    """

    feature: str
    op: str
    threshold: float = math.nan
    categories: tuple[str, ...] = ()
    unknown: bool = False
    upper: float = math.nan

    def text(self) -> str:
        """The condition in words, e.g. ``cluster_size ≥ 12``, ``3 ≤ cluster_size < 12`` or
        ``(country in {FR, DE} or unknown)``."""
        if self.op == "none":
            return f"no value of {self.feature} (the conditions on it contradict)"
        if self.op in ("known", "unknown"):
            return f"{self.feature} {self.op}"
        if self.op in ("≥", "<"):
            out = f"{self.feature} {self.op} {_number(self.threshold)}"
        elif self.op == "range":
            out = f"{_number(self.threshold)} ≤ {self.feature} < {_number(self.upper)}"
        else:
            out = f"{self.feature} {self.op} {{{', '.join(self.categories)}}}"
        return f"({out} or unknown)" if self.unknown else out

    def mask(self, features: Features) -> np.ndarray:
        """Which clusters satisfy the condition."""
        numeric, v, cats = features.column(self.feature)
        if self.op in ("known", "unknown", "none"):
            known = ~np.isnan(v) if numeric else v >= 0
            return known if self.op == "known" else (~known if self.op == "unknown" else np.zeros(v.shape, bool))
        if numeric:
            known = ~np.isnan(v)
            with np.errstate(invalid="ignore"):
                if self.op == "≥":
                    hit = v >= self.threshold
                elif self.op == "<":
                    hit = v < self.threshold
                else:
                    hit = (v >= self.threshold) & (v < self.upper)
            return np.where(known, hit, self.unknown)
        codes = [cats.index(c) for c in self.categories if c in cats]
        inside = np.isin(v, codes)
        hit = inside if self.op == "in" else ~inside
        return np.where(v >= 0, hit, self.unknown)


def _number(t: float) -> str:
    return str(int(t)) if float(t).is_integer() and abs(t) < 1e15 else f"{t:.6g}"


def describe(conditions: Sequence[Condition]) -> str:
    """A conjunction in words: ``cluster_size ≥ 12 and name_spellings ≥ 3``."""
    return " and ".join(c.text() for c in conditions) if conditions else "all entities"


def _merge_numeric(name: str, group: Sequence[Condition], unknown: bool) -> Condition | None:
    lo, hi = -math.inf, math.inf
    for c in group:
        if c.op in ("≥", "range"):
            lo = max(lo, c.threshold)
        if c.op == "<":
            hi = min(hi, c.threshold)
        if c.op == "range":
            hi = min(hi, c.upper)
        if c.op in ("unknown", "none"):
            lo = math.inf
    if lo >= hi:
        return Condition(name, "unknown", unknown=True) if unknown else Condition(name, "none")
    if lo == -math.inf and hi == math.inf:
        return None if unknown else Condition(name, "known")
    if lo == -math.inf:
        return Condition(name, "<", hi, unknown=unknown)
    if hi == math.inf:
        return Condition(name, "≥", lo, unknown=unknown)
    return Condition(name, "range", lo, unknown=unknown, upper=hi)


def _merge_categorical(name: str, group: Sequence[Condition], unknown: bool) -> Condition | None:
    if any(c.op in ("unknown", "none") for c in group):
        allowed: set[str] | None = set()
    else:
        ins = [set(c.categories) for c in group if c.op == "in"]
        allowed = set.intersection(*ins) if ins else None
    excluded = set().union(*(c.categories for c in group if c.op == "not in"))
    if allowed is None:  # only "not in" (and "known"): the union of the excluded values
        if excluded:
            return Condition(name, "not in", categories=tuple(sorted(excluded)), unknown=unknown)
        return None if unknown else Condition(name, "known")
    allowed -= excluded
    if not allowed:
        return Condition(name, "unknown", unknown=True) if unknown else Condition(name, "none")
    return Condition(name, "in", categories=tuple(sorted(allowed)), unknown=unknown)


def simplify(conditions: Sequence[Condition], features: Features) -> tuple[Condition, ...]:
    """The conjunction with the conditions on each feature merged into one (SPEC 12.2).

    "source not in {E} and source in {C}" is "source in {C}"; "size ≥ 3 and size < 12 and size
    ≥ 5" is "5 ≤ size < 12"; a value set that is empty leaves only the unknown values
    ("size unknown") or none, and then the whole conjunction selects no entity (one ``none``
    condition). The merged condition selects exactly the entities the originals select together,
    for any value, seen in the sample or not (an ``in`` list keeps its names; ``not in`` lists
    are joined); an unknown value satisfies it when it satisfied every original. A feature with
    one condition keeps it as written; features keep the order of their first condition.
    """
    groups: dict[str, list[Condition]] = {}
    for c in conditions:
        groups.setdefault(c.feature, []).append(c)
    out: list[Condition] = []
    for name, group in groups.items():
        if len(group) == 1:
            out.append(group[0])
            continue
        unknown = all(c.unknown for c in group)
        numeric = features.column(name)[0]
        merged = (_merge_numeric if numeric else _merge_categorical)(name, group, unknown)
        if merged is not None and merged.op == "none":
            return (merged,)
        if merged is not None:
            out.append(merged)
    return tuple(out)
