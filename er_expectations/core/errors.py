"""Exceptions and warnings raised by er-expectations.

Every error names the column, parameter or file at fault and says how to fix it.
"""

from __future__ import annotations


class InputError(ValueError):
    """Bad input data or a bad argument: the message names the column or parameter and the fix."""


class UndefinedMetricWarning(UserWarning):
    """A metric is undefined for the data given (e.g. precision with no predicted pair)."""


class ProjectBusyError(RuntimeError):
    """Another run holds the lock of the Great Expectations project and did not release it in time."""


class SourceUnreachableError(InputError):
    """The database or Spark named by a checkpoint cannot be reached (exit code 7: a scheduler
    may retry); the message names the source, its URL with the password masked."""


class Terminated(BaseException):  # noqa: N818 - like KeyboardInterrupt, a signal rather than an error
    """The process received SIGTERM (a scheduler or ``kill`` stopping it): the command line ends
    with one line and exit code 143, unwinding like ``KeyboardInterrupt`` so that locks are
    released and temporary files removed."""
