"""The release being validated, for expectations that read the history (drift checks).

The runner validates one release at a time; around each release's GX checkpoint run it
sets :func:`active_release` to an :class:`ActiveRelease` (the open store, checkpoint name,
release label and position, GX run name). An expectation that compares the release with
its own history reads it from there::

    from er_expectations.history.context import active_release

    active = active_release()
    if active is None or active.store is None:
        ...  # not run by er-expectations, or history disabled/unavailable: say so in the result
    past = active.store.series(checkpoint=active.checkpoint, metric="average_cluster_size",
                               column="inventor_id", before_position=active.position, last=8)

The release itself is written to the store only after its validation, so ``series`` never
contains the release being validated.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from er_expectations.history.store import HistoryStore

__all__ = ["ActiveRelease", "active_release", "validating"]


@dataclass(frozen=True, slots=True)
class ActiveRelease:
    """The release under validation. ``store`` is ``None`` when the history is disabled
    (``history: {enabled: false}``) or could not be opened; ``problem`` then says why."""

    checkpoint: str
    release: str
    position: int
    run_name: str
    store: HistoryStore | None = None
    problem: str | None = None


_ACTIVE: ContextVar[ActiveRelease | None] = ContextVar("er_expectations_active_release", default=None)


def active_release() -> ActiveRelease | None:
    """The release being validated by ``er-expectations run``, or ``None`` outside a run."""
    return _ACTIVE.get()


@contextmanager
def validating(active: ActiveRelease) -> Iterator[ActiveRelease]:
    """Make ``active`` the release under validation for the duration of the block."""
    token = _ACTIVE.set(active)
    try:
        yield active
    finally:
        _ACTIVE.reset(token)
