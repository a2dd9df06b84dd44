"""The demo checkpoint end to end: its time, side by side with its floors (and another checkout).

    python benchmarks/bench_demo.py [--rounds 2] [--before PATH] [--profile]

Each measurement runs in a fresh process, in interleaved rounds, and reports wall time and
CPU time (the machine is shared: CPU time moves less with the load than wall time).

(run)     ``er-expectations run checkpoints/patentsview.yml`` (15 releases, 22 checks, 133k
          records) into a temporary project: ``fresh`` (a new project: every chart drawn) and
          ``rerun`` (the same project again: version 2 of every release). Reported: the
          command's wall time, the run's own time (its "Done in", imports excluded), the
          CPU time of the process with its children (the chart workers) and without them.
(before)  with ``--before PATH``, the same command with the package of another checkout
          (``PYTHONPATH=PATH``), in the same rounds.

The floors, each in a fresh process, on the same data:

(gx)      Great Expectations' own cost for the same 15 release tables: one suite of 22
          trivial core expectations (``expect_column_to_exist`` and table-level checks, no
          row-level work), stored and run through the calls the runner makes (datasource,
          batch definitions, validation definitions, one checkpoint per release,
          ``Checkpoint.run``), then one Data Docs build of the offline site. What any
          suite of 22 expectations costs GX on these batches: reading each release table
          and fingerprinting it, storing and checking the freshness of suites, validation
          definitions and checkpoints, building the metric graph, storing each result,
          rendering its page.
(charts)  vl-convert drawing the SVG of the 55 charts of the demo's Data Docs, alone (the
          chart specifications are recorded from a run of the demo).
(import)  ``import great_expectations`` (the command imports it before it starts counting).

With ``--phases N``, N more interleaved rounds of each variant (a fresh project then its rerun, in
one fresh process) report the CPU time of the run's main thread in each phase (timers wrapped
around the functions, no profiler): the release tables, storing the GX objects, GX reading and
fingerprinting the batches, the metrics (the statistics), the expectations' ``_validate``,
writing the results, Data Docs; the least of each over the rounds goes to ``phases``.

With ``--profile`` one fresh run of each variant is also profiled (pyinstrument when installed,
else cProfile), the reports written to ``results/profile-demo-{before,after}-<date>.txt``. Results go to
``results/demo-<date>.json`` (``--tag T``: ``demo-<date>-T.json`` and the profiles with ``-T``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"

#: The command, run by the interpreter of this script (so that PYTHONPATH picks the package).
CLI = "import sys; from er_expectations.cli.main import main; sys.exit(main())"
#: The same, telling at its exit the CPU time of its own process (all its threads) apart from
#: that of its children (chart workers): on a shared machine the own CPU time, unlike the wall
#: time, shows what the run's critical path costs whatever the load.
CLI_CPU = ("import atexit, resource, sys\n"
           "def cpu():\n"
           "    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)\n"
           "    print(f'bench-own-cpu {own.ru_utime + own.ru_stime:.3f} {kids.ru_utime + kids.ru_stime:.3f}',"
           " file=sys.stderr)\n"
           "atexit.register(cpu)\n"
           "from er_expectations.cli.main import main\n"
           "sys.exit(main())")


def _checkpoint(project: Path) -> Path:
    """A copy of the demo checkpoint next to it (its relative paths still hold) writing to ``project``."""
    text = (ROOT / "checkpoints" / "patentsview.yml").read_text(encoding="utf-8")
    text = text.replace("project_dir: ../build/patentsview", f"project_dir: {project}")
    path = ROOT / "checkpoints" / f".bench-demo-{os.getpid()}-{project.name}.yml"
    path.write_text(text, encoding="utf-8")
    return path


def _child(code: list[str], *, pythonpath: str | None = None) -> tuple[float, float, str]:
    """Run ``code`` in a fresh process: (wall s, CPU s of the process, its output)."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    env["PYTHONWARNINGS"] = "ignore"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    # run from a neutral folder: ``python -c`` puts the working folder first on sys.path, which
    # would shadow PYTHONPATH (and the installed package) with a checkout's own
    done = subprocess.run([sys.executable, *code], env=env, capture_output=True, text=True, check=False,
                          cwd=tempfile.gettempdir())
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode not in (0, 1):  # 1: the demo's releases fail critical expectations, as expected
        raise SystemExit(f"{code[:2]} failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}")
    return wall, cpu, done.stdout + "\n" + done.stderr


def _last_json(out: str) -> dict:
    return json.loads(next(line for line in reversed(out.splitlines()) if line.startswith("{")))


def run_command(checkpoint: Path, pythonpath: str | None) -> dict:
    wall, cpu, out = _child(["-c", CLI_CPU, "run", str(checkpoint), "--no-progress"], pythonpath=pythonpath)
    done = re.search(r"Done in ([0-9.]+) s", out)
    own = re.search(r"bench-own-cpu ([0-9.]+) ([0-9.]+)", out)
    return {"wall_s": round(wall, 3), "cpu_s": round(cpu, 3), "done_in_s": float(done.group(1)) if done else None,
            "own_cpu_s": float(own.group(1)) if own else None, "workers_cpu_s": float(own.group(2)) if own else None}


# -- the floors ---------------------------------------------------------------------------------

GX_FLOOR = r'''
import json, sys, time, io
from pathlib import Path
import great_expectations as gx
from great_expectations import expectations as gxe
from er_expectations.gx.docs.data_docs import build_site, configure_site

tables, root = Path(sys.argv[1]), Path(sys.argv[2])
columns = ["mention_id", "inventor_id", "full_name", "name_last", "name_first", "benchmark_id",
           "inventor_id__baseline", "inventor_id__baseline__release"]
t0 = time.perf_counter(); c0 = time.process_time()
ctx = gx.get_context(mode="file", project_root_dir=str(root))
from great_expectations.data_context.types.base import ProgressBarsConfig
ctx.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)  # as the runner
ctx.variables.save()
configure_site(ctx, "local_site")
source = ctx.data_sources.add_pandas_filesystem("floor", base_directory=str(tables))
asset = source.add_parquet_asset("releases")
names = sorted(p.stem for p in tables.glob("*.parquet"))
import re
from great_expectations.core.partitioners import FileNamePartitionerPath
definitions = {n: asset.add_batch_definition(name=f"release_{n}", partitioner=FileNamePartitionerPath(
    regex=re.compile(rf"^(?P<release>{re.escape(n)})\.parquet$"))) for n in names}
suite = gx.ExpectationSuite(name="floor")
for c in columns:  # 8 + 8 + 6 = 22 expectations reading table metadata only
    suite.add_expectation(gxe.ExpectColumnToExist(column=c))
for i in range(8):
    suite.add_expectation(gxe.ExpectTableRowCountToBeBetween(min_value=i, max_value=10_000_000 + i))
for i in range(6):
    suite.add_expectation(gxe.ExpectTableColumnCountToBeBetween(min_value=i, max_value=100 + i))
suite = ctx.suites.add(suite)
checkpoints = []
for n in names:
    vd = ctx.validation_definitions.add(gx.ValidationDefinition(name=f"floor__{n}", data=definitions[n], suite=suite))
    checkpoints.append(ctx.checkpoints.add(gx.Checkpoint(name=f"floor__{n}", validation_definitions=[vd],
                                                         result_format={"result_format": "SUMMARY"})))
t1 = time.perf_counter(); c1 = time.process_time()
results = []
for cp in checkpoints:
    results.extend(cp.run().run_results)
t2 = time.perf_counter(); c2 = time.process_time()
build_site(ctx, "local_site", results)
t3 = time.perf_counter(); c3 = time.process_time()
print(json.dumps({"store_s": t1 - t0, "run_s": t2 - t1, "docs_s": t3 - t2, "total_s": t3 - t0,
                  "store_cpu_s": c1 - c0, "run_cpu_s": c2 - c1, "docs_cpu_s": c3 - c2, "total_cpu_s": c3 - c0,
                  "results": len(results)}))
'''

CHARTS = r'''
import io, json, sys, time
import er_expectations.core.charts as charts
from er_expectations.run.runner import run_checkpoint

specs = []
draw = charts.to_svg

def recording(chart):
    specs.append(chart)
    return draw(chart)

charts.to_svg = recording  # what Data Docs draw, recorded
run_checkpoint(sys.argv[1], progress=False, out=io.StringIO())
charts.to_svg = draw
charts.to_svg(specs[0])  # vl-convert started
walls, cpus = [], []
for _ in range(2):
    t, c = time.perf_counter(), time.process_time()
    for spec in specs:
        charts.to_svg(spec)
    walls.append(time.perf_counter() - t)
    cpus.append(time.process_time() - c)
print(json.dumps({"charts": len(specs), "wall_s": min(walls), "cpu_s": min(cpus)}))
'''


PHASES = r'''
import io, json, sys, time
from collections import defaultdict
import great_expectations
from great_expectations.checkpoint.checkpoint import Checkpoint
from great_expectations.execution_engine import pandas_execution_engine as pandas_engine
from great_expectations.execution_engine.execution_engine import ExecutionEngine
from great_expectations.expectations.expectation import Expectation
import er_expectations.run.runner as runner
from er_expectations.run.data.files import ReleaseData
from er_expectations.run.project import Project

spent, depth = defaultdict(float), defaultdict(int)

def timed(owner, name, label):  # the CPU time of the calling thread in ``owner.name``, outermost call only
    function = getattr(owner, name)
    def wrapper(*args, **kwargs):
        depth[label] += 1
        started = time.thread_time()
        try:
            return function(*args, **kwargs)
        finally:
            depth[label] -= 1
            if not depth[label]:
                spent[label] += time.thread_time() - started
    setattr(owner, name, wrapper)

timed(ReleaseData, "batches", "release tables")
timed(Project, "__init__", "open the project")
timed(runner, "_stored_checkpoints", "store suites, definitions, checkpoints")
timed(Checkpoint, "run", "Checkpoint.run")
timed(pandas_engine.PandasExecutionEngine, "get_batch_data_and_markers", "GX: read the batch and fingerprint it")
timed(pandas_engine, "hash_pandas_dataframe", "GX: the fingerprint alone")
timed(ExecutionEngine, "resolve_metrics", "metrics (the statistics)")
timed(Expectation, "metrics_validate", "the expectations' _validate")
timed(Project, "add_provenance", "write each result")
timed(runner, "_build_docs", "Data Docs")
found = {}
for mode in ("fresh", "rerun"):
    spent.clear()
    wall, cpu, main = time.perf_counter(), time.process_time(), time.thread_time()
    runner.run_checkpoint(sys.argv[1], progress=False, out=io.StringIO())
    found[mode] = {"wall_s": time.perf_counter() - wall, "process_cpu_s": time.process_time() - cpu,
                   "main_thread_cpu_s": time.thread_time() - main, **spent}
print(json.dumps(found))
'''


def phases(checkpoint: Path, pythonpath: str | None) -> dict:
    """Where a run's CPU goes: the CPU time of the run's main thread in each phase (timers around
    the functions, no profiler), a fresh project then its rerun, in a fresh process."""
    _, _, out = _child(["-c", PHASES, str(checkpoint)], pythonpath=pythonpath)
    return _last_json(out)


def gx_floor(tables: Path) -> dict:
    root = Path(tempfile.mkdtemp(prefix="bench-demo-gx-"))
    try:
        _, _, out = _child(["-c", GX_FLOOR, str(tables), str(root)], pythonpath=str(ROOT))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return _last_json(out)


def chart_floor(checkpoint: Path) -> dict:
    _, _, out = _child(["-c", CHARTS, str(checkpoint)], pythonpath=str(ROOT))
    return _last_json(out)


def import_floor() -> dict:
    wall, cpu, _ = _child(["-c", "import great_expectations"])
    return {"wall_s": round(wall, 3), "cpu_s": round(cpu, 3)}


def profile(checkpoint: Path, out: Path, pythonpath: str | None = None) -> None:
    """A profile of one fresh run (text), pyinstrument if installed; ``pythonpath``: the package of
    another checkout."""
    code = ("import io, sys; from er_expectations.run.runner import run_checkpoint; "
            "run_checkpoint(sys.argv[1], progress=False, out=io.StringIO())")
    try:
        import pyinstrument  # noqa: F401
    except ImportError:  # cProfile runs a script file (it has no -c); the imports are profiled too
        stats = out.with_suffix(".prof")
        script = out.with_suffix(".py")
        script.write_text(code.replace("; ", "\n") + "\n", encoding="utf-8")
        try:
            _child(["-m", "cProfile", "-o", str(stats), str(script), str(checkpoint)], pythonpath=pythonpath)
        finally:
            script.unlink(missing_ok=True)
        import pstats

        with out.open("w", encoding="utf-8") as handle:
            pstats.Stats(str(stats), stream=handle).sort_stats("cumulative").print_stats(80)
        stats.unlink()
        return
    _child(["-m", "pyinstrument", "-r", "text", "--no-color", "-p", "processor_options.filter_threshold=0.01",
            "-o", str(out), "-c", code, str(checkpoint)], pythonpath=pythonpath)


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--before", help="a checkout of the package to run side by side (its folder)")
    parser.add_argument("--profile", action="store_true", help="also write a profile of one fresh run")
    parser.add_argument("--phases", type=int, default=0, metavar="N",
                        help="also N interleaved rounds of each variant with the CPU time of each phase")
    parser.add_argument("--tag", default="", help="added to the names of the result and profile files "
                        "(demo-<date>-<tag>.json), so that a second measurement of the day keeps the first")
    parser.add_argument("--out", type=Path, help="the result file (default results/demo-<date>[-<tag>].json)")
    args = parser.parse_args()
    suffix = dt.date.today().isoformat() + (f"-{args.tag}" if args.tag else "")
    args.out = args.out or RESULTS / f"demo-{suffix}.json"

    # this checkout's package, not the one installed in the venv (an editable install may point at
    # another checkout)
    variants = {"after": str(ROOT)}
    if args.before:
        variants = {"before": str(Path(args.before).resolve()), "after": str(ROOT)}
    runs: dict[str, dict[str, list[dict]]] = {v: {"fresh": [], "rerun": []} for v in variants}
    loads = [_load()]
    work = Path(tempfile.mkdtemp(prefix="bench-demo-"))
    checkpoints: list[Path] = []
    phase_runs: dict[str, list[dict]] = {}
    try:
        for round_ in range(args.rounds):
            for variant, pythonpath in variants.items():
                project = work / f"{variant}-{round_}"
                checkpoint = _checkpoint(project)
                checkpoints.append(checkpoint)
                for mode in ("fresh", "rerun"):
                    result = run_command(checkpoint, pythonpath)
                    runs[variant][mode].append(result)
                    print(f"round {round_ + 1} {variant:6s} {mode:5s}: wall {result['wall_s']:6.2f} s, "
                          f"done in {result['done_in_s']:6.2f} s, CPU {result['cpu_s']:6.2f} s "
                          f"(own {result['own_cpu_s']:.2f}, workers {result['workers_cpu_s']:.2f})  "
                          f"(load {_load()})", flush=True)
                loads.append(_load())
        tables = work / "after-0" / "er_data" / "patentsview"
        floors = {"gx": gx_floor(tables), "import": import_floor()}
        checkpoint = _checkpoint(work / "charts")
        checkpoints.append(checkpoint)
        floors["charts"] = chart_floor(checkpoint)
        loads.append(_load())
        for round_ in range(args.phases):
            for variant, pythonpath in variants.items():
                checkpoint = _checkpoint(work / f"phases-{variant}-{round_}")
                checkpoints.append(checkpoint)
                found = phases(checkpoint, pythonpath)
                phase_runs.setdefault(variant, []).append(found)
                print(f"phases round {round_ + 1} {variant:6s}: main thread CPU fresh "
                      f"{found['fresh']['main_thread_cpu_s']:.2f} s, rerun {found['rerun']['main_thread_cpu_s']:.2f} s",
                      flush=True)
        if args.profile:  # one fresh run of each variant, profiled one after the other
            for variant, pythonpath in variants.items():
                checkpoint = _checkpoint(work / f"profile-{variant}")
                checkpoints.append(checkpoint)
                path = RESULTS / f"profile-demo-{variant}-{suffix}.txt"
                profile(checkpoint, path, pythonpath)
                print(f"profile ({variant}): {path}")
    finally:
        for path in checkpoints:
            path.unlink(missing_ok=True)
        shutil.rmtree(work, ignore_errors=True)

    def best(rows: list[dict], key: str) -> float:
        return min(r[key] for r in rows)

    summary = {}
    for variant, modes in runs.items():
        for mode, rows in modes.items():
            summary[f"{variant} {mode}"] = {k: best(rows, k) for k in ("wall_s", "done_in_s", "cpu_s", "own_cpu_s")}
    print("\nbest of", args.rounds, "(wall of the command / its 'Done in' / CPU of the process and its workers / "
          "CPU of the process itself):")
    for name, s in summary.items():
        print(f"  {name:14s} {s['wall_s']:6.2f} s / {s['done_in_s']:6.2f} s / {s['cpu_s']:6.2f} s / "
              f"{s['own_cpu_s']:6.2f} s")
    gx_ = floors["gx"]
    print(f"floors: GX with 22 trivial expectations on the same 15 tables {gx_['total_s']:.2f} s "
          f"(CPU {gx_['total_cpu_s']:.2f} s: store {gx_['store_s']:.2f}, run {gx_['run_s']:.2f}, "
          f"Data Docs {gx_['docs_s']:.2f}); {floors['charts']['charts']} charts drawn by vl-convert "
          f"{floors['charts']['wall_s']:.2f} s (CPU {floors['charts']['cpu_s']:.2f} s); "
          f"import great_expectations {floors['import']['wall_s']:.2f} s (CPU {floors['import']['cpu_s']:.2f} s)")
    print(f"load average (1, 5, 15 min) during the runs: {', '.join(loads)}")
    import platform

    payload = {"date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "python": platform.python_version(),
               "cpus": os.cpu_count(), "load_average": loads, "rounds": args.rounds, "runs": runs,
               "best": summary, "floors": floors, "before": args.before}
    if phase_runs:  # the least CPU of each phase over the rounds
        payload["phases"] = {variant: {mode: {k: round(min(r[mode][k] for r in rows), 3) for k in rows[0][mode]}
                                       for mode in ("fresh", "rerun")} for variant, rows in phase_runs.items()}
        payload["phase_runs"] = phase_runs
        for variant, modes in payload["phases"].items():
            for mode, found in modes.items():
                print(f"phases ({variant} {mode}, least main-thread CPU over the rounds): "
                      + ", ".join(f"{k} {v:.2f}" for k, v in found.items()))
    args.out.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    print(f"results: {args.out}")


if __name__ == "__main__":
    main()
