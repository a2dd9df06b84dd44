"""Benchmark of ``er-expectations history``: reading the store without importing GX (issue 29 item 6).

    python benchmarks/bench_history_cli.py [--rounds 7] [--project DIR]

Fills a history store with the demo checkpoint (``checkpoints/patentsview.yml``, 15 releases, run
into a fresh project in a temporary folder unless ``--project`` names a copy already run) and then
times, side by side in interleaved rounds (a, b, a, b, ...), best and median of ``--rounds``:

(a) the standard library: a fresh ``python`` process that opens the SQLite file with ``sqlite3``,
    reads the 15 rows of ``pairwise_precision`` (the latest run of each release: value, standard
    error, interval, outcome, run time) and prints them as a table;
(b) ``er-expectations history <checkpoint> -e pairwise_precision``: the same 15 rows, as a user runs
    it (a fresh process: interpreter, imports, checkpoint file, store, table);
(c) the same command in-process, imports done (``main([...])`` called again): what the command costs
    once Python and its libraries are loaded.

Ratios b/a and c/a of the wall times are reported (target of issue 29: b/a <= 1.5), with b/a of the
processes' CPU time (user and system: what other jobs on a shared machine inflate least), and
whether (b) imported Great Expectations (it must not). Both processes find their modules compiled
(bytecode cached in a temporary folder, as ``pip install`` leaves it), even where
``PYTHONDONTWRITEBYTECODE`` is set. Results go to ``benchmarks/results/history-cli-<date>.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import io
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
EXPECTATION = "pairwise_precision"

STDLIB = r"""
import sqlite3, sys
con = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
rows = con.execute(
    "SELECT r.release, r.version, x.value, x.std_error, x.ci_lower, x.ci_upper, x.outcome, r.gx_run_time "
    "FROM er_history_results x JOIN er_history_runs r ON r.id = x.run_id "
    "WHERE r.checkpoint = ? AND x.label = ? AND r.version = (SELECT MAX(v.version) FROM er_history_runs v "
    "WHERE v.checkpoint = r.checkpoint AND v.release = r.release) ORDER BY r.position", (sys.argv[2], sys.argv[3])
).fetchall()
print("release  version  value  std error  CI  result  run")
for row in rows:
    print("  ".join("-" if v is None else (f"{v:.4g}" if isinstance(v, float) else str(v)) for v in row))
"""


def _demo_project(folder: Path) -> Path:
    """The demo checkpoint run into ``folder`` (every release); returns its checkpoint file."""
    shutil.copytree(ROOT / "suites", folder / "suites")
    text = (ROOT / "checkpoints" / "patentsview.yml").read_text(encoding="utf-8")
    text = text.replace("../er_expectations/", f"{ROOT / 'er_expectations'}/")
    text = text.replace("project_dir: ../build/patentsview", f"project_dir: {folder / 'project'}")
    (folder / "checkpoints").mkdir()
    path = folder / "checkpoints" / "patentsview.yml"
    path.write_text(text, encoding="utf-8")
    exe = Path(sys.executable).parent / "er-expectations"
    subprocess.run([str(exe), "run", str(path), "--no-progress"], check=False, capture_output=True)
    return path


def _timed(argv: list[str], env: dict[str, str] | None = None, cpu: list[float] | None = None) -> tuple[float, str]:
    """The wall time of a fresh process running ``argv`` and its output; its CPU time (user and
    system, less sensitive to other jobs on a shared machine) appended to ``cpu``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False, env=env)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if cpu is not None:
        cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    if done.returncode != 0:
        raise SystemExit(f"{argv[:3]} failed ({done.returncode}): {done.stderr[-500:]}")
    return elapsed, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--project", type=Path, default=None,
                        help="a folder holding checkpoints/patentsview.yml already run (skips the demo run)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="er-bench-history-cli-") as tmp:
        checkpoint = (args.project / "checkpoints" / "patentsview.yml" if args.project
                      else _demo_project(Path(tmp)))
        store = checkpoint.parent.parent / "project" / "er_history.sqlite"
        exe = str(Path(sys.executable).parent / "er-expectations")
        stdlib = [sys.executable, "-c", STDLIB, str(store), "patentsview", EXPECTATION]
        command = [exe, "history", str(checkpoint), "-e", EXPECTATION]
        probe = [sys.executable, "-c", "import sys; from er_expectations.cli.main import main; "
                 f"main(['history', {str(checkpoint)!r}, '-e', {EXPECTATION!r}]); "
                 "print('GX-IMPORTED' if 'great_expectations' in sys.modules else 'GX-NOT-IMPORTED')"]
        # both processes find their modules compiled, as after 'pip install' (which compiles them):
        # bytecode is cached in a temporary folder even where PYTHONDONTWRITEBYTECODE is set
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        _, probe_out = _timed(probe, env)
        for _ in range(2):  # warm: bytecode written, files in the page cache
            _, a_out = _timed(stdlib, env)
            _, b_out = _timed(command, env)
        rows = len(a_out.strip().splitlines()) - 1
        from er_expectations.cli.main import main as cli_main

        times: dict[str, list[float]] = {"a": [], "b": [], "c": []}
        cpu: dict[str, list[float]] = {"a": [], "b": []}
        for _ in range(args.rounds):
            times["a"].append(_timed(stdlib, env, cpu["a"])[0])
            times["b"].append(_timed(command, env, cpu["b"])[0])
            with contextlib.redirect_stdout(io.StringIO()):
                started = time.perf_counter()
                cli_main(["history", str(checkpoint), "-e", EXPECTATION])
                times["c"].append(time.perf_counter() - started)
    best = {k: min(v) for k, v in times.items()}
    median = {k: statistics.median(v) for k, v in times.items()}
    result = {
        "date": dt.date.today().isoformat(), "rounds": args.rounds, "rows": rows,
        "gx_imported": "GX-IMPORTED" in probe_out, "cpus": os.cpu_count(),
        "load_average": list(os.getloadavg()),
        "best_s": best, "median_s": median,
        "ratio_b_over_a": {"best": best["b"] / best["a"], "median": median["b"] / median["a"]},
        "ratio_c_over_a": {"best": best["c"] / best["a"], "median": median["c"] / median["a"]},
        "cpu_best_s": {k: min(v) for k, v in cpu.items()},
        "cpu_median_s": {k: statistics.median(v) for k, v in cpu.items()},
        "cpu_ratio_b_over_a": {"best": min(cpu["b"]) / min(cpu["a"]),
                               "median": statistics.median(cpu["b"]) / statistics.median(cpu["a"])},
        "target_b_over_a": 1.5,
        "command_lines": len(b_out.splitlines()),
    }
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"history-cli-{result['date']}.json"
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))
    print(f"written to {out}")


if __name__ == "__main__":
    main()
