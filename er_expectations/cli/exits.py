"""The exit codes of the command line, one meaning each, and the error an exception becomes.

Apart from :mod:`.common` (which reads record tables with pandas) so that the program starts
light: ``er-expectations history`` imports neither pandas nor GX (issue 29 item 6).
"""

from __future__ import annotations

from er_expectations.core.errors import InputError, ProjectBusyError, SourceUnreachableError

__all__ = ["EXIT_CODES", "classify_error"]

#: The exit codes, one meaning each.
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INCOMPLETE, EXIT_INTERNAL, EXIT_BUSY = 0, 1, 2, 3, 4, 5
EXIT_HISTORY = 6
EXIT_SOURCE = 7
EXIT_DOCS = 8
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143  # 128 + SIGTERM, what a shell reports for a process SIGTERM ended
#: What every exit code means (documented in ``--help`` and docs/cli.md).
EXIT_CODES: dict[int, str] = {
    EXIT_OK: "success",
    EXIT_FAILED: "a critical expectation failed",
    EXIT_USAGE: "usage, configuration or input error (nothing was validated)",
    EXIT_INCOMPLETE: "an expectation could not be computed (it raised an error)",
    EXIT_INTERNAL: "internal error of er-expectations (a bug; --debug shows the traceback)",
    EXIT_BUSY: "the project stayed locked by another run longer than --lock-timeout",
    EXIT_HISTORY: "the releases passed but the history store could not be written (results and Data Docs kept)",
    EXIT_SOURCE: "the database or Spark of the checkpoint cannot be reached (nothing validated; retry later)",
    EXIT_DOCS: "the releases passed but Data Docs could not be written (results and history kept)",
    EXIT_INTERRUPTED: "interrupted",
    EXIT_TERMINATED: "terminated (SIGTERM): the run stopped where it was; run it again",
}


def classify_error(exc: BaseException) -> tuple[int, str]:
    """The exit code and the one-line message for an exception that reached the command line."""
    from er_expectations.config import ConfigError

    if isinstance(exc, SourceUnreachableError):
        return EXIT_SOURCE, f"error: {exc}"
    if isinstance(exc, ConfigError):
        lines = [str(issue) for issue in exc.issues]
        return EXIT_USAGE, "\n".join(lines) + f"\ner-expectations: {len(lines)} configuration problem(s)"
    if isinstance(exc, InputError):
        return EXIT_USAGE, f"error: {exc}"
    if isinstance(exc, ProjectBusyError):
        return EXIT_BUSY, f"error: {exc}"
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        return EXIT_USAGE, f"error: {where}{exc.strerror or exc}"
    if isinstance(exc, MemoryError):
        return EXIT_INTERNAL, "error: out of memory"
    detail = str(exc).splitlines()[0] if str(exc) else ""
    return EXIT_INTERNAL, (
        f"internal error: {type(exc).__name__}{': ' + detail if detail else ''} "
        "(this is a bug in er-expectations; run again with --debug for the traceback and report it)"
    )
