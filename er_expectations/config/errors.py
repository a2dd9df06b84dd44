"""Configuration errors: every problem of a file, each with its place and a fix.

A loader never stops at the first mistake. It records a :class:`ConfigIssue` for each
problem it finds (file, line, column, message, hint) in an :class:`IssueCollector` and,
at the end, raises one :class:`ConfigError` that lists them all, one per line::

    suites/pv.yml:12:5: unknown parameter 'min_vlaue' for expect_matching_rate_to_be_between; did you mean 'min_value'?
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from er_expectations.core.hints import (  # re-exported for the config layer
    close_matches,
    did_you_mean,
    quote_list,
)

__all__ = [
    "close_matches",
    "ConfigError",
    "ConfigIssue",
    "IssueCollector",
    "did_you_mean",
    "quote_list",
]


@dataclass(frozen=True, slots=True)
class ConfigIssue:
    """One problem in a configuration file.

    ``line`` and ``column`` are 1-based, as editors show them; either may be ``None``
    when the problem has no single place (an unreadable file, a missing folder).
    ``hint`` says how to fix it, or is ``None`` when the message says it all.
    """

    file: str
    line: int | None
    column: int | None
    message: str
    hint: str | None = None

    def location(self) -> str:
        """``file:line:column`` with the parts that are known."""
        parts = [self.file]
        if self.line is not None:
            parts.append(str(self.line))
            if self.column is not None:
                parts.append(str(self.column))
        return ":".join(parts)

    def __str__(self) -> str:
        text = f"{self.location()}: {self.message}"
        if self.hint:
            text += f"; {self.hint}"
        return text


def _sort_key(issue: ConfigIssue) -> tuple[str, int, int]:
    return (issue.file, issue.line or 0, issue.column or 0)


class ConfigError(Exception):
    """One or more configuration problems; ``issues`` lists every one of them.

    ``str(error)`` renders the issues one per line, sorted by file and position.
    """

    def __init__(self, issues: Iterable[ConfigIssue]) -> None:
        ordered = sorted(issues, key=_sort_key)
        if not ordered:
            raise ValueError("ConfigError needs at least one issue")
        super().__init__(ordered)
        self.issues: list[ConfigIssue] = ordered

    def __str__(self) -> str:
        return "\n".join(str(issue) for issue in self.issues)


class _Located(Protocol):
    line: int
    column: int


class IssueCollector:
    """Gathers the issues of one file; identical issues are kept once.

    Parameters
    ----------
    file:
        The file name shown in front of every issue (the path as the user gave it).
    """

    def __init__(self, file: str) -> None:
        self.file = file
        self.issues: list[ConfigIssue] = []
        self._seen: set[ConfigIssue] = set()

    def add(
        self,
        where: _Located | tuple[int | None, int | None] | None,
        message: str,
        hint: str | None = None,
    ) -> None:
        """Record a problem at a node (anything with ``line``/``column``), a pair or nowhere."""
        if where is None:
            line = column = None
        elif isinstance(where, tuple):
            line, column = where
        else:
            line, column = where.line, where.column
        issue = ConfigIssue(self.file, line, column, message, hint)
        if issue not in self._seen:
            self._seen.add(issue)
            self.issues.append(issue)

    def extend(self, issues: Iterable[ConfigIssue]) -> None:
        """Add issues found elsewhere (for instance in another file)."""
        for issue in issues:
            if issue not in self._seen:
                self._seen.add(issue)
                self.issues.append(issue)

    def __bool__(self) -> bool:
        return bool(self.issues)

    def raise_if_any(self) -> None:
        """Raise a :class:`ConfigError` with every issue collected so far, if there is one."""
        if self.issues:
            raise ConfigError(self.issues)


