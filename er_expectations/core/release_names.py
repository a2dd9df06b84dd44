"""File names of releases: readable, stable and collision-free (apart from :mod:`.names`, whose
name rule the light ``er-expectations history`` reads without loading hashlib)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from er_expectations.core.errors import InputError
from er_expectations.core.names import MAX_NAME_LENGTH, NAME_PATTERN, safe_name

__all__ = ["release_file_names"]


def _digest(label: str) -> str:
    return hashlib.sha1(label.encode("utf-8"), usedforsecurity=False).hexdigest()[:8]


def release_file_names(labels: Iterable[str]) -> dict[str, str]:
    """A file-safe name per release label: readable, stable and collision-free.

    A label that is already a valid name keeps it (``2022-06-30``). Any other label gets
    :func:`safe_name` of itself plus ``-`` and 8 hex digits of its SHA-1 (``pred_a_b-1a2b3c4d``),
    so two labels that clean up alike (``pred_a b`` and ``pred_a_b``; non-ASCII labels) never
    share a file, and a label's file name does not depend on which other releases are run.
    Two labels equal up to letter case also get the suffix (file systems that ignore case).
    """
    labels = list(dict.fromkeys(labels))
    folded: dict[str, int] = {}
    for label in labels:
        if NAME_PATTERN.fullmatch(label) and len(label) <= MAX_NAME_LENGTH:
            folded[label.casefold()] = folded.get(label.casefold(), 0) + 1
    names: dict[str, str] = {}
    for label in labels:
        if NAME_PATTERN.fullmatch(label) and len(label) <= MAX_NAME_LENGTH and folded[label.casefold()] == 1:
            names[label] = label
        else:
            base = safe_name(label)[: MAX_NAME_LENGTH - 9]
            names[label] = f"{base}-{_digest(label)}"
    taken: dict[str, str] = {}
    for label, name in names.items():
        other = taken.get(name.casefold())
        if other is not None:  # pragma: no cover - needs a SHA-1 prefix collision
            raise InputError(f"releases '{other}' and '{label}' would share the file name '{name}'; rename one")
        taken[name.casefold()] = label
    return names
