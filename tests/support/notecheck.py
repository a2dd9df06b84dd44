"""Does a note state only what is true of the quantity it belongs to? (issue 27 item 5, SPEC 6)

A note is a list of clauses joined by "; ". A clause that starts with a component's name
followed by ": " or "'s " (``"b-cubed recall's standard error is 0 …"``, ``"group: no draw
shows an error …"``) is about that component; every other clause is about the quantity
itself. The claims read from a clause are checked against the numbers of the quantity the
clause is about, recomputed here from what the test holds (not from the note's own words):

* "standard error 0" / "standard error is 0": that quantity's standard error is 0 (to the
  rounding of SPEC 6: at most 1e-8 of the estimate);
* a clause starting "no standard error": its standard error is NaN;
* "at least x" / "θ ≥ x": x is at most its estimate and is its own lower limit (at the
  clause's level when the clause names one: a zero-event bound restated at one-sided
  1 − α/2 by its effective number of draws, SPEC 6 and 8);
* "interval [x, y]": its interval; "interval is instead ±h": its half-width;
* "estimate x lies outside": its estimate; "… = q, and so is the metric": its upper limit.

``components`` maps a name to a quantity, or to ``(quantity, its own components)`` for a
quantity whose note holds notes of its parts (a subgroup row's "gap: group: …").
"""

from __future__ import annotations

import math
import re
from typing import Any

NUM = r"(-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)"


def _close(x: float, y: float) -> bool:
    """The note prints 4 significant digits (:.4g)."""
    return abs(x - y) <= 6e-4 * max(abs(y), 1e-3) + 1e-12


def _restated(lower: float, level_from: float, level_to: float) -> float:
    """The lower limit 1 − q of a zero-event bound at ``level_from`` restated at ``level_to``."""
    q = 1.0 - lower
    if not 0.0 < q < 1.0:  # not a zero-event bound of a share: no restatement (the check then fails)
        return math.nan
    k_eff = math.log1p(-level_from) / math.log1p(-q)
    return 1.0 + math.expm1(math.log1p(-level_to) / k_eff)


def _split(comps: dict[str, Any]) -> dict[str, tuple[Any, dict[str, Any]]]:
    return {name: (v if isinstance(v, tuple) else (v, {})) for name, v in comps.items()}


def subject(clause: str, components: dict[str, Any]) -> tuple[str | None, str]:
    """(component name or None for the quantity itself, the clause without the name)."""
    for name in sorted(components, key=len, reverse=True):
        for sep in (": ", "'s "):
            if clause.startswith(name + sep):
                return name, clause[len(name) + len(sep):]
    return None, clause


def problems(note: str, quantity: Any, components: dict[str, Any] | None = None, *, where: str = "") -> list[str]:
    """Every claim of ``note`` that is false of the quantity it is about (empty: the note is honest)."""
    comps = _split(components or {})
    out: list[str] = []
    for clause in (c for c in (note or "").split("; ") if c):
        name, rest = subject(clause, comps)
        if name is not None:
            q, sub = comps[name]
            out += problems(rest, q, sub, where=f"{where}{name}: ")
            continue
        out += [f"{where}{p} in {clause!r}" for p in _claims(clause, quantity)]
    return out


def _claims(clause: str, q: Any) -> list[str]:
    bad: list[str] = []
    est, se = float(q.estimate), float(q.std_error)
    lo, hi = float(q.ci_lower), float(q.ci_upper)
    level = float(getattr(q, "ci_level", 0.95))
    zero = math.isfinite(se) and se <= 1e-8 * max(abs(est), 1.0)
    if re.search(r"standard error (is )?0\b", clause) and not zero:
        bad.append(f"says its standard error is 0 but it is {se!r}")
    if clause.startswith("no standard error") and not math.isnan(se):
        bad.append(f"says it has no standard error but it is {se!r}")
    stated = re.search(r"(\d+(?:\.\d+)?) % binomial bound", clause)
    for m in re.finditer(rf"(?:at least|θ ≥) {NUM}", clause):
        x = float(m.group(1))
        if not x <= est + 1e-9:
            bad.append(f"bound {x} is above its estimate {est!r}")
        want = lo
        if stated is not None and abs(float(stated.group(1)) / 100 - level) > 1e-9 and math.isfinite(lo):
            want = _restated(lo, level, float(stated.group(1)) / 100)
        if not (math.isfinite(want) and _close(x, want)):
            bad.append(f"bound {x} is not its own lower limit {want!r}")
    for m in re.finditer(rf"interval \[{NUM}, {NUM}\]", clause):
        if not (_close(float(m.group(1)), lo) and _close(float(m.group(2)), hi)):
            bad.append(f"interval [{m.group(1)}, {m.group(2)}] is not its own [{lo!r}, {hi!r}]")
    for m in re.finditer(rf"interval is instead ±{NUM}", clause):
        if not _close(float(m.group(1)), hi - est):
            bad.append(f"half-width {m.group(1)} is not its own {hi - est!r}")
    for m in re.finditer(rf"estimate {NUM} lies outside", clause):
        if not _close(float(m.group(1)), est):
            bad.append(f"estimate {m.group(1)} is not its own {est!r}")
    for m in re.finditer(rf"= {NUM}, and so is the metric", clause):
        if not _close(float(m.group(1)), hi):
            bad.append(f"upper bound {m.group(1)} is not its own {hi!r}")
    return bad
