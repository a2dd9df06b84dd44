"""Comparing answers of two engines: floats to 1e-9 (NaN equal to NaN), everything else exactly,
its type included (a count is an int on every engine, a list stays a list)."""

from __future__ import annotations

import math

import pytest


def assert_identical(got, want, where=()):
    """Floats to 1e-9 (NaN equals NaN); everything else exactly, type included."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and list(got) == list(want), (where, got, want)
        for key in want:
            assert_identical(got[key], want[key], (*where, key))
    elif isinstance(want, (list, tuple)):
        assert type(got) is type(want) and len(got) == len(want), (where, got, want)
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            assert_identical(g, w, (*where, i))
    elif isinstance(want, float):
        assert isinstance(got, float), (where, got, want)
        assert (math.isnan(want) and math.isnan(got)) or got == pytest.approx(want, rel=1e-9, abs=1e-12), \
            (where, got, want)
    else:
        assert got == want and type(got) is type(want), (where, got, want)
