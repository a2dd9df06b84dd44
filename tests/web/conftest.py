"""Fixtures of the workbench's web tests (helpers in tests/support/workbench_web.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.chromium import chromium_available, find_chromium
from support.workbench_web import CHROMIUM_ARGS, Served, make_hostile_project


@pytest.fixture
def hostile_project(tmp_path):
    project = make_hostile_project(tmp_path)
    yield project
    project.close()


@pytest.fixture
def serve():
    started: list[Served] = []

    def start(folder: Path) -> Served:
        s = Served(folder).start()
        started.append(s)
        return s

    yield start
    for s in started:
        s.kill()


def need_chromium() -> None:
    """Skip without chromium, except under CI=true, where the browser tests must run."""
    if not chromium_available():
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is missing under CI=true; ./run test installs it (apt-get install chromium)")
        pytest.skip("headless Chromium is not installed (Debian: apt-get install -y chromium)")


@pytest.fixture(scope="session")
def chromium(request):
    need_chromium()
    p = request.getfixturevalue("playwright_driver")  # after the check: no driver without chromium
    browser = p.chromium.launch(executable_path=find_chromium(), args=CHROMIUM_ARGS, headless=True)
    yield browser
    browser.close()
