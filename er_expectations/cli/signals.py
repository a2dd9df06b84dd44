"""SIGTERM as an exception, so that the command line ends a stopped run with one line (exit 143).

Light on purpose (no pandas, no GX): the program installs it before importing the rest.
"""

from __future__ import annotations

import signal

from er_expectations.core.errors import Terminated

TYPE_CHECKING = False  # typing is not imported when the program starts (issue 29 item 6)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["on_sigterm", "restore_sigterm"]


def _terminate(_signum: int, _frame: Any) -> None:
    raise Terminated


def on_sigterm() -> Any:
    """Make SIGTERM raise :class:`~er_expectations.core.errors.Terminated` (in the main thread
    only, where Python runs signal handlers); returns the previous handler, ``None`` elsewhere."""
    try:
        return signal.signal(signal.SIGTERM, _terminate)
    except ValueError:  # not the main thread (of the main interpreter)
        return None


def restore_sigterm(previous: Any) -> None:
    """Put back the handler :func:`on_sigterm` replaced."""
    if previous is not None:
        signal.signal(signal.SIGTERM, previous)
