"""History of checkpoint runs: per release and expectation, what was observed (issue #10).

:class:`HistoryStore` writes and reads the store (:mod:`.store`); the runner records every
release it validates (:mod:`.record`); ``er-expectations history`` prints a series and
draws it (:mod:`.chart`), reading a SQLite store with the standard library
(:mod:`.reading`); :mod:`.context` tells an expectation which release is being validated.
Importing this package imports nothing heavy: the names of :mod:`.store` (SQLAlchemy,
pandas) are loaded on first use, so that ``er-expectations history`` stays light (issue 29).
"""

from __future__ import annotations

import importlib

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

#: Public names loaded on first use (PEP 562), each from its module.
_LAZY = {
    "HISTORY_FILE": "reading",
    "HistoryError": "reading",
    "HistoryStore": "store",
    "ReleaseRun": "records",
    "ResultRecord": "records",
    "default_url": "reading",
    "identifying_kwargs": "records",
    "kwargs_key": "records",
    "mask_url": "reading",
    "resolve_url": "reading",
}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
