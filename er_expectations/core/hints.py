"""Hints for misspelt names: one "did you mean ...?" for every layer (columns, metrics,
parameters, releases, YAML keys)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence

__all__ = ["close_matches", "did_you_mean", "quote_list"]


def quote_list(names: Iterable[str], *, conjunction: str = "or") -> str:
    """``'a', 'b' or 'c'``."""
    quoted = [f"'{name}'" for name in names]
    if len(quoted) <= 1:
        return "".join(quoted)
    return f"{', '.join(quoted[:-1])} {conjunction} {quoted[-1]}"


def close_matches(word: str, candidates: Sequence[str]) -> list[str]:
    """The candidates ``word`` is most likely a misspelling of (best first, ties kept).

    A case-insensitive equal wins outright; otherwise :func:`difflib.get_close_matches`
    proposes up to three names and only those as similar as the best one are kept
    (equally similar names in alphabetical order).
    """
    lowered = {candidate.lower(): candidate for candidate in candidates}
    if word.lower() in lowered:
        return [lowered[word.lower()]]
    matches = difflib.get_close_matches(word, list(candidates), n=3, cutoff=0.6)
    if not matches:
        return []
    scored = sorted(
        (-difflib.SequenceMatcher(None, word, match).ratio(), match) for match in matches
    )
    best = -scored[0][0]
    return [match for score, match in scored if -score >= best - 0.02]


def did_you_mean(word: str, candidates: Sequence[str], *, list_all_below: int = 0) -> str | None:
    """A "did you mean ...?" hint for a misspelt name, or ``None`` without a close match.

    Without a match, and when there are fewer than ``list_all_below`` candidates, the
    hint lists them all instead.
    """
    matches = close_matches(word, candidates)
    if matches:
        return f"did you mean {quote_list(matches)}?"
    if candidates and len(candidates) < list_all_below:
        return f"expected one of {quote_list(sorted(candidates))}"
    return None
