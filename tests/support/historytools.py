"""Test helpers of the history store: a fresh PostgreSQL schema per test.

The server is the one ``ER_TEST_POSTGRES_URL`` names (``.ci/run`` installs and starts it).
Outside CI a test needing it skips when the variable is not set; under ``CI=true`` it fails.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import sqlalchemy as sa


def postgres_base_url() -> str:
    url = os.environ.get("ER_TEST_POSTGRES_URL", "")
    if not url:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("CI=true but ER_TEST_POSTGRES_URL is not set: .ci/run installs and starts "
                        "PostgreSQL and exports it; the postgres tests must run in CI")
        pytest.skip("ER_TEST_POSTGRES_URL is not set (PostgreSQL tests run in CI, see .ci/run)")
    return url


@contextmanager
def postgres_schema_url() -> Iterator[str]:
    """The test server's URL with a new, empty schema as its search path (dropped afterwards)."""
    base = postgres_base_url()
    schema = f"erx_test_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(base)
    with admin.begin() as conn:
        conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    try:
        yield (sa.engine.make_url(base).update_query_dict({"options": f"-csearch_path={schema}"})
               .render_as_string(hide_password=False))
    finally:
        with admin.begin() as conn:
            conn.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()
