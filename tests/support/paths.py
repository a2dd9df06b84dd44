"""Paths the tests read, independent of where a test file sits in ``tests/``."""

from __future__ import annotations

from pathlib import Path

#: the ``tests/`` folder
TESTS = Path(__file__).resolve().parents[1]
#: the repository (``er_expectations/``, ``checkpoints/``, ``suites/``, ``docs/``, …)
REPO = TESTS.parent
#: the bundled PatentsView demo data
PV_DATA = REPO / "er_expectations" / "data" / "patentsview"
#: the tests' own data files (``tests/data``)
TEST_DATA = TESTS / "data"
