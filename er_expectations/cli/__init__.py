"""Command line of er-expectations (the ``er-expectations`` program)."""

from er_expectations.cli.main import main

__all__ = ["main"]
