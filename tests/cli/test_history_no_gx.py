"""``er-expectations history`` reads its store without importing Great Expectations (issue 29 item 6:
it took 10 s for 15 rows, 9.3-9.7 s of it importing GX). A fresh interpreter runs the command on a
toy project's history and reports which modules it imported; the benchmark
``benchmarks/bench_history_cli.py`` times it against reading the SQLite file with the standard library."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

from support.toyproject import make_toy

from er_expectations.run.runner import run_checkpoint

PROBE = """
import json, sys
from er_expectations.cli.main import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "gx": sorted(m for m in sys.modules if m.split(".")[0] == "great_expectations")}))
"""


def test_history_prints_its_rows_without_importing_gx(tmp_path):
    path = make_toy(tmp_path)
    run_checkpoint(path, progress=False, out=io.StringIO())
    for argv in (["history", str(path), "-e", "pairwise_precision"],
                 ["history", str(path), "-e", "pairwise_precision", "--format", "json"]):
        done = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, timeout=300,
                              env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}, check=False)
        assert done.returncode == 0, done.stderr
        *printed, last = done.stdout.strip().splitlines()
        probe = json.loads(last)
        assert probe == {"code": 0, "gx": []}, probe
        text = "\n".join(printed)
        for release in ("alpha", "beta", "gamma"):
            assert release in text
