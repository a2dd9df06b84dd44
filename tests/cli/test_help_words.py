"""Every help text of the command line speaks to the user, not to the project's tracker (issue 29)."""

from __future__ import annotations

import argparse
import re

from er_expectations.cli.main import build_parser

_TRACKER = re.compile(r"\bissues?\s*#?\d+|#\d+\b", re.IGNORECASE)


def _parsers(parser: argparse.ArgumentParser):
    yield parser
    for action in parser._actions:  # noqa: SLF001 - argparse keeps its sub-commands here
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            for sub in action.choices.values():
                yield from _parsers(sub)


def test_no_help_line_names_a_tracker_item():
    found = []
    for parser in _parsers(build_parser()):
        text = parser.format_help()
        for action in parser._actions:  # noqa: SLF001
            if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
                text += " ".join(str(a.help) for a in action._choices_actions)  # noqa: SLF001
        found += [f"{parser.prog}: {m.group(0)}" for m in _TRACKER.finditer(text)]
    assert found == []
    assert len(list(_parsers(build_parser()))) > 10  # the sub-commands were visited
