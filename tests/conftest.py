"""Shared fixtures of the core test suite."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.reference_impl import load_erx

# The repository lives next to shared/: /…/main/tests/conftest.py -> /…/shared/data
DATA_DIR = Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.fixture(scope="session")
def erx():
    """The package under test; skips while its public API is missing."""
    module = load_erx()
    if module is None:
        pytest.skip(
            "er_expectations does not expose summarize/estimate/exact_metrics/InputError yet"
        )
    return module


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The real data folder (shared/data next to the repository)."""
    if not DATA_DIR.is_dir():
        pytest.skip(
            f"real data not found at {DATA_DIR}: the tests expect the repository to sit "
            "next to shared/ (shared/data/patentsview and shared/data/rldata)"
        )
    return DATA_DIR


@pytest.fixture(scope="session")
def patentsview_dir(data_dir) -> Path:
    path = data_dir / "patentsview"
    needed = ["predictions.parquet", "records.parquet", "benchmark.parquet"]
    missing = [name for name in needed if not (path / name).is_file()]
    if missing:
        pytest.skip(f"PatentsView data missing in {path}: {', '.join(missing)}")
    return path


@pytest.fixture(scope="session")
def rldata_dir(data_dir) -> Path:
    path = data_dir / "rldata"
    needed = ["RLdata10000.tsv", "identity.RLdata10000.tsv"]
    missing = [name for name in needed if not (path / name).is_file()]
    if missing:
        pytest.skip(f"RLdata missing in {path}: {', '.join(missing)}")
    return path


@pytest.fixture(scope="module")
def context():
    """An ephemeral GX context without progress bars, shared by a test module."""
    from support.gxtools import quiet_context

    return quiet_context()


@pytest.fixture(scope="session")
def playwright_driver():
    """The one Playwright driver of the session. Its sync API runs an event loop for as long as
    it lives, and a second ``sync_playwright()`` beside it fails ("Sync API inside the asyncio
    loop"), so the browser fixtures of tests/web and tests/e2e launch their browsers from this one."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is in the dev extra (./run test)")
    with sync_api.sync_playwright() as p:
        yield p
