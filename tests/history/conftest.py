"""Fixtures of the history-store tests: an empty store on SQLite and on PostgreSQL."""

from __future__ import annotations

import pytest
from support.historytools import postgres_schema_url


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def url(request, tmp_path):
    """A store URL with nothing in it yet."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'history.sqlite'}"
        return
    with postgres_schema_url() as url:
        yield url
