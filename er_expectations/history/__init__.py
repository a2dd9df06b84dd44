"""History of checkpoint runs: per release and expectation, what was observed (issue #10).

:class:`HistoryStore` writes and reads the store (:mod:`.store`); the runner records every
release it validates (:mod:`.record`); ``er-expectations history`` prints a series and
draws it (:mod:`.chart`); :mod:`.context` tells an expectation which release is being
validated. Importing this package imports SQLAlchemy, not GX (``import er_expectations``
does not import it).
"""

from __future__ import annotations

from er_expectations.history.store import (
    HISTORY_FILE,
    HistoryError,
    HistoryStore,
    ReleaseRun,
    ResultRecord,
    default_url,
    identifying_kwargs,
    kwargs_key,
    mask_url,
    resolve_url,
)

__all__ = [
    "HISTORY_FILE",
    "HistoryError",
    "HistoryStore",
    "ReleaseRun",
    "ResultRecord",
    "default_url",
    "identifying_kwargs",
    "kwargs_key",
    "mask_url",
    "resolve_url",
]
