"""Hostile projects (issue 18, items 14 and 15): a lock file that cannot be created is an
error, not another run's lock; nothing of the user's is deleted or silently replaced; no file
is written outside the project through a symlink."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from er_expectations.core.errors import InputError
from er_expectations.run.project import LOCK_FILE, project_lock


def _finishes(call, seconds: float = 10.0):
    """Run ``call`` in a thread; its exception or result, or fail if it is still running."""
    box: dict = {}

    def target():
        try:
            box["value"] = call()
        except BaseException as error:  # noqa: BLE001 - handed to the test
            box["error"] = error

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still waiting after {seconds} s"
    return box


def _hold(project_dir: Path, timeout):
    with project_lock(project_dir, timeout=timeout):
        return "held"


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs /proc")
def test_a_lock_file_that_cannot_be_created_is_an_error_not_contention():
    box = _finishes(lambda: _hold(Path("/proc/self"), None))
    error = box.get("error")
    assert isinstance(error, InputError), box
    assert "/proc/self" in str(error) and "lock file" in str(error)


def test_a_lock_file_that_is_a_folder_is_an_error(tmp_path):
    (tmp_path / LOCK_FILE).mkdir()
    box = _finishes(lambda: _hold(tmp_path, None))
    assert isinstance(box.get("error"), InputError), box


def test_the_lock_is_still_taken_in_a_normal_folder(tmp_path):
    assert _finishes(lambda: _hold(tmp_path, 1))["value"] == "held"
