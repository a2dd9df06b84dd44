"""Ctrl-C and SIGTERM end the program with one line and their exit code, never a traceback
(issue 18, item 16): SIGINT is 130 ("interrupted") whenever it arrives, even while the program
starts (importing pandas and Great Expectations); SIGTERM is 143 ("terminated")."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.toyproject import make_toy

from er_expectations.cli.common import EXIT_CODES, EXIT_INTERRUPTED, EXIT_TERMINATED

PROGRAM = Path(sys.executable).parent / "er-expectations"


def started(args: list[str]) -> subprocess.Popen:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("ER_EXPECTATIONS_DEBUG", None)
    return subprocess.Popen([str(PROGRAM), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)


def test_the_codes_are_documented():
    assert EXIT_INTERRUPTED == 130 and EXIT_TERMINATED == 143
    assert EXIT_CODES[143].startswith("terminated")
    docs = (Path(__file__).parents[2] / "docs" / "cli.md").read_text(encoding="utf-8")
    assert "| 143 | terminated" in docs


@pytest.mark.skipif(not PROGRAM.exists(), reason="the er-expectations program is not installed in this venv")
@pytest.mark.parametrize(("sig", "code", "word"), [(signal.SIGINT, 130, "interrupted"),
                                                   (signal.SIGTERM, 143, "terminated")])
@pytest.mark.parametrize("delay", [0.3, 1.0, 3.0])
def test_a_signal_at_any_time_is_one_line_and_its_code(tmp_path, sig, code, word, delay):
    path = make_toy(tmp_path)
    process = started(["run", str(path), "--no-progress"])
    time.sleep(delay)
    process.send_signal(sig)
    out, err = process.communicate(timeout=120)
    if process.returncode == 1 and "Done" in out:  # pragma: no cover - the run ended before the signal
        pytest.skip("the run finished before the signal")
    assert process.returncode == code, (out, err)
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines[-1].startswith(f"er-expectations: {word}")
    assert sum("er-expectations:" in line for line in lines) == 1


def test_the_entry_point_is_a_function_that_no_import_replaces():
    import tomllib

    import er_expectations.cli
    import er_expectations.cli.main  # noqa: F401 - binds the submodule to the package's name 'main'

    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["project"]["scripts"]["er-expectations"] == "er_expectations.cli:program"
    assert callable(er_expectations.cli.program)
