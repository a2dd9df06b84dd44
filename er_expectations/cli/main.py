"""Command line: ``er-expectations summarize|estimate|simulate|plan|run|validate|init|diff|history|label|topup``.

Exit codes, one meaning each (:data:`EXIT_CODES`):

* 0 success (for ``run``: no critical expectation failed and none raised);
* 1 a critical expectation failed (``run``);
* 2 a usage, configuration or input error: nothing was validated (the message names the
  file, line, column or option and the fix);
* 3 an expectation could not be computed (it raised; ``run``): the results are written and
  Data Docs show the error, but the release was not fully checked;
* 4 an internal error of er-expectations (a bug: please report it; ``--debug`` shows the
  traceback);
* 5 the GX project stayed locked by another run longer than ``--lock-timeout``;
* 6 (``run``) every release passed, but the history store could not be written: the
  validation results and Data Docs are kept, the message names the store;
* 7 (``run``) the database or Spark of a checkpoint (``data.engine: sql | spark``) cannot be
  reached: nothing was validated or written; a scheduler may retry later;
* 130 interrupted (Ctrl-C), also while the program starts;
* 143 terminated (SIGTERM, e.g. a scheduler stopping the run): one line, the lock released.

Problems are printed as one line each on stderr, never as a traceback unless ``--debug``
(or ``ER_EXPECTATIONS_DEBUG=1``) is given.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Sequence

from er_expectations.cli.exits import (
    EXIT_CODES,
    EXIT_INTERRUPTED,
    EXIT_TERMINATED,
    EXIT_USAGE,
    classify_error,
)
from er_expectations.cli.history import add_history_command
from er_expectations.cli.signals import on_sigterm, restore_sigterm
from er_expectations.core.errors import Terminated
from er_expectations.core.version import __version__

#: Commands whose parser is built alone when one of them is asked for: their modules import
#: neither pandas nor GX, so they start in a fraction of a second (issue 29 item 6).
LIGHT_COMMANDS = {"history": add_history_command}


def _light_command(argv: Sequence[str]) -> str | None:
    """The command of ``argv`` when it is a light one given after nothing but ``--debug``."""
    for arg in argv:
        if arg != "--debug":
            return arg if arg in LIGHT_COMMANDS else None
    return None


def _terminal_width() -> int:
    """The width :func:`shutil.get_terminal_size` gives, as documented (``COLUMNS``, else the
    terminal of ``sys.__stdout__``, else 80), without importing shutil: argparse's formatter
    imports it, and with it bz2, lzma and zlib, 2 ms of a light command's start."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class _LightFormatter(argparse.HelpFormatter):
    """argparse's help formatter, its width found without shutil (:func:`_terminal_width`)."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position,
                         _terminal_width() - 2 if width is None else width)


class _LightRawFormatter(_LightFormatter, argparse.RawDescriptionHelpFormatter):
    """:class:`argparse.RawDescriptionHelpFormatter`, its width found without shutil."""


class _LightParser(argparse.ArgumentParser):
    """A parser whose formatter finds the terminal's width without shutil (a light command's)."""

    def __init__(self, *args: object, formatter_class: type = _LightFormatter, **kwargs: object) -> None:
        super().__init__(*args, formatter_class=formatter_class, **kwargs)  # type: ignore[arg-type]


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser: every command, or only the light command ``only``
    (:data:`LIGHT_COMMANDS`; its usage, help and errors are the same either way)."""
    light = only is not None
    parser_class = _LightParser if light else argparse.ArgumentParser
    parser = parser_class(
        prog="er-expectations",
        description="Quality checks for entity-resolution outputs (Great Expectations plugin).",
        epilog="exit codes: " + "; ".join(f"{code} {meaning}" for code, meaning in EXIT_CODES.items()),
        formatter_class=_LightRawFormatter if light else argparse.RawDescriptionHelpFormatter,
    )

    parser.add_argument("--version", action="version", version=f"er-expectations {__version__}")
    parser.add_argument("--debug", action="store_true", help="print the traceback of an error")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=parser_class)
    if only is not None:
        LIGHT_COMMANDS[only](sub)
    else:
        _add_every_command(sub)
    for command in sub.choices.values():  # --debug after the command name too
        command.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                             help="print the traceback of an error")
    return parser


def _add_every_command(sub: argparse._SubParsersAction) -> None:
    from er_expectations.cli.tables import add_table_commands

    add_table_commands(sub)

    from er_expectations.cli.plan import add_planning_commands

    add_planning_commands(sub)

    try:
        from er_expectations.cli.checkpoints import add_gx_commands
    except ImportError:  # pragma: no cover - the GX commands ship with the package
        add_gx_commands = None
    if add_gx_commands is not None:
        add_gx_commands(sub)
    from er_expectations.cli.benchmark import add_label_commands

    add_label_commands(sub)
    from er_expectations.cli.topup import add_topup_commands

    add_topup_commands(sub)
    from er_expectations.cli.workbench import add_workbench_commands

    add_workbench_commands(sub)
    from er_expectations.cli.drift import add_drift_commands

    add_drift_commands(sub)
    add_history_command(sub)


def _debug_requested(argv: Sequence[str]) -> bool:

    return "--debug" in argv or os.environ.get("ER_EXPECTATIONS_DEBUG", "") not in ("", "0")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (see :data:`EXIT_CODES`)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = _debug_requested(argv)
    # pyspark (the spark extra), imported by GX, warns on every run about the pandas version
    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas",
                            category=FutureWarning)
    previous = on_sigterm()
    try:
        parser = build_parser(_light_command(argv))
        try:
            args = parser.parse_args(argv)
        except SystemExit as exc:  # usage errors (exit 2) and --help/--version (exit 0)
            code = int(exc.code or 0) if not isinstance(exc.code, str) else EXIT_USAGE
            if code == EXIT_USAGE:
                from er_expectations.cli.checkpoints import publish_usage_error

                publish_usage_error(argv)
            return code
        return int(args.func(args))
    except KeyboardInterrupt:
        print("er-expectations: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Terminated:
        print(f"er-expectations: {EXIT_CODES[EXIT_TERMINATED]}", file=sys.stderr)
        return EXIT_TERMINATED
    except Exception as exc:  # noqa: BLE001 - the one place that turns errors into exit codes
        if debug:
            import traceback

            traceback.print_exc()
        code, message = classify_error(exc)
        print(f"er-expectations: {message}", file=sys.stderr)
        return code
    finally:
        restore_sigterm(previous)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
