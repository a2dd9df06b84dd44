"""Which engines the engine tests run on (SQLite always; PostgreSQL and Spark when available).

Under CI=true a missing PostgreSQL URL or pyspark is a failure, not a skip: .ci/run starts
the server and ./run test installs the spark extra.
"""

from __future__ import annotations

import os

import pytest

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def spark_available() -> bool:
    try:
        import pyspark  # noqa: F401
    except ImportError:
        if IN_CI:
            raise
        return False
    return True


def engine_params() -> list:
    """pytest params "sqlite", "postgres", "spark", each marked with its backend."""
    params = [pytest.param("sqlite", marks=pytest.mark.sqlite)]
    if os.environ.get("ER_TEST_POSTGRES_URL") or IN_CI:
        params.append(pytest.param("postgres", marks=pytest.mark.postgres))
    if spark_available():
        params.append(pytest.param("spark", marks=pytest.mark.spark))
    return params


def postgres_url() -> str:
    """The test server's URL (``ER_TEST_POSTGRES_URL``); skip without one, fail under CI=true."""
    url = os.environ.get("ER_TEST_POSTGRES_URL")
    if not url:
        if IN_CI:
            pytest.fail("CI=true but ER_TEST_POSTGRES_URL is not set")
        pytest.skip("ER_TEST_POSTGRES_URL is not set")
    return url
