"""The README's scale-out example runs and gives the same numbers on SQLite and Spark."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from support.paths import REPO

EXAMPLE = REPO / "examples" / "sql_and_spark.py"


def _observed(text: str, engine: str) -> dict[str, float]:
    lines = text.split(f"{engine}: success=")[1].splitlines()[1:]
    block = []
    for line in lines:  # the indented lines under the engine's header
        if not line.startswith("  "):
            break
        block.append(line)
    return {m[0]: float(m[1]) for m in re.findall(r"  (expect_\w+): observed ([0-9.]+)", "\n".join(block))}


@pytest.mark.spark
def test_sql_and_spark_example_runs_and_agrees():
    env = {**os.environ, "PYTHONPATH": str(EXAMPLE.parents[1])}
    out = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True, env=env, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "SQLite: success=True" in out.stdout
    sql = _observed(out.stdout, "SQLite")
    assert len(sql) == 3 and 8.0 < sql["expect_average_cluster_size_to_be_between"] < 8.2
    if "Spark: skipped" in out.stdout:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("CI must install the spark extra")
        return
    assert _observed(out.stdout, "Spark") == sql
