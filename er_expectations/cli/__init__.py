"""Command line of er-expectations (the ``er-expectations`` program)."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["main", "program"]


def program(argv: Sequence[str] | None = None) -> int:
    """The ``er-expectations`` program (:func:`er_expectations.cli.main.main`).

    Importing the command line takes a moment (pandas, Great Expectations): a Ctrl-C or a
    SIGTERM then ends it with one line and exit code 130 or 143, as during a command, never
    with a traceback. The program's entry point is ``er_expectations.cli:program``: the name
    ``main`` of this package becomes the module :mod:`er_expectations.cli.main` once that is
    imported (the import system binds a submodule to its package's attribute).
    """
    import sys

    from er_expectations.cli.signals import on_sigterm, restore_sigterm
    from er_expectations.core.errors import Terminated

    previous = on_sigterm()
    try:
        from er_expectations.cli.main import main as command_line
    except KeyboardInterrupt:
        print("er-expectations: interrupted", file=sys.stderr)
        return 130
    except Terminated:
        print("er-expectations: terminated (SIGTERM)", file=sys.stderr)
        return 143
    finally:
        restore_sigterm(previous)
    return command_line(argv)


#: The earlier entry point's name (until the submodule ``main`` is imported and takes it).
main = program
