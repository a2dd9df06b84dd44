"""Whether charts can be drawn: vl-convert-python comes with the ``charts`` extra (issue 30).

A base install (``pip install er-expectations``) validates, records its history and writes
Data Docs without it; only the drawing of charts needs it. Standard library only, so that the
light command line (``er-expectations history``) can ask before it imports anything heavy.
"""

from __future__ import annotations

import importlib.util

from er_expectations.core.errors import InputError

__all__ = ["CHARTS_EXTRA", "ChartsUnavailable", "charts_available", "missing_message", "require_charts"]

#: The install that brings the charts.
CHARTS_EXTRA = "er-expectations[charts]"


class ChartsUnavailable(InputError):
    """A chart was asked for and vl-convert-python (the ``charts`` extra) is not installed."""


def charts_available() -> bool:
    """True when vl-convert can be imported (found, not imported: importing it costs a second)."""
    try:
        return importlib.util.find_spec("vl_convert") is not None
    except (ImportError, ValueError):  # a module entry without a spec
        return False


def require_charts(what: str) -> None:
    """Raise :class:`ChartsUnavailable`, naming ``what`` asked for a chart, when charts cannot be drawn."""
    if not charts_available():
        raise ChartsUnavailable(missing_message(what))


def missing_message(what: str) -> str:
    """The one message for a chart that cannot be drawn: ``what`` needs the charts extra."""
    return (f"{what} needs vl-convert-python, which is not installed; "
            f"install the charts extra: pip install '{CHARTS_EXTRA}'")
