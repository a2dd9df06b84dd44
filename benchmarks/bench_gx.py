"""Benchmark of the GX layer: the demo suite validated by GX against the same statistics via the API.

    python benchmarks/bench_gx.py [--repeat 3] [--synthetic 1e7 | --no-synthetic]

Measured side by side in one process, on the 15 bundled PatentsView releases and on a
synthetic release of 10M records (``benchmarks/synthetic.py``, names in ``full_name``):

(api)   the statistics of the demo suite through the Python API: one ``erx.Release`` with
        names, ``summarize`` (Hill orders 1, 2, ∞) and ``estimate`` (every metric, with the
        name statistics), on the same tables;
(gx)    the same suite validated by GX on the same tables through a ``ValidationDefinition``
        (the object GX's checkpoints run; ephemeral context, dataframe batches): metric graph,
        batch fingerprint, result objects and the in-memory result store;
(fp)    GX's batch fingerprint: ``PandasExecutionEngine.get_batch_data_and_markers`` hashes
        every frame whose shallow ``memory_usage()`` is under 1 GB (``HASH_THRESHOLD``) with
        ``hash_pandas_object``; GX offers no option to turn it off. Timed alone, times the
        number of fingerprints per validation (counted with cProfile on one validation;
        ``batch.validate(suite)`` builds the batch twice, so it fingerprints twice);
(rest)  (gx) − (fp): GX's metric graph, our metrics and expectations, results;
(demo)  the whole checkpoint run ``run_checkpoint(checkpoints/patentsview.yml)`` into a fresh
        project: building the release tables, writing them, GX file context, validation,
        Data Docs and the offline post-processing.

Reported: (gx)/(api), the fingerprint's share of (gx), (rest)/(api) (target ≤ 2 at 10M
records) and (demo)/(api). Results go to benchmarks/results/gx-<date>.json.
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import io
import json
import os
import pstats
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def interleaved(fns: dict, repeat: int) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Run each function once per round, ``repeat`` rounds: wall and CPU seconds of every run.

    CPU time (``process_time``, all threads of the process) is reported next to wall time
    because the machine is shared: other processes stretch wall times, much less CPU times.
    """
    wall: dict[str, list[float]] = {name: [] for name in fns}
    cpu: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            t0, c0 = time.perf_counter(), time.process_time()
            fn()
            wall[name].append(time.perf_counter() - t0)
            cpu[name].append(time.process_time() - c0)
    return wall, cpu


def fingerprints_per_call(fn) -> int:
    """How many times GX fingerprints a batch during ``fn()`` (cProfile call count)."""
    from great_expectations.execution_engine import pandas_execution_engine as pee

    prof = cProfile.Profile()
    prof.runcall(fn)
    code = pee.hash_pandas_dataframe.__code__
    for (filename, line, name), (_cc, ncalls, *_rest) in pstats.Stats(prof).stats.items():
        if name == code.co_name and line == code.co_firstlineno and filename == code.co_filename:
            return int(ncalls)
    return 0


def measure(frames: dict, suite, ctx, *, repeat: int, label: str) -> dict:
    """(api), (gx), (fp) side by side on ``frames``; ratios as described in the module doc."""
    import great_expectations as gx
    from great_expectations.execution_engine.pandas_execution_engine import hash_pandas_dataframe

    import er_expectations as erx

    def api() -> None:
        for df in frames.values():
            rel = erx.Release(df, prediction="inventor_id", name="full_name")
            rel.summarize(hill_orders=(1, 2, float("inf")))
            rel.estimate(reference="benchmark_id")

    batch_def = (ctx.data_sources.add_pandas(f"bench_{label}").add_dataframe_asset("releases")
                 .add_batch_definition_whole_dataframe("all"))
    vd = ctx.validation_definitions.add(gx.ValidationDefinition(name=f"bench_{label}", data=batch_def, suite=suite))

    def gx_validate() -> None:
        for df in frames.values():
            res = vd.run(batch_parameters={"dataframe": df})
            if any(r.exception_info.get("raised_exception") for r in res.results):
                raise RuntimeError("an expectation raised during the benchmark")

    def fingerprint() -> None:
        for df in frames.values():
            hash_pandas_dataframe(df)

    first = next(iter(frames.values()))
    n_fp = fingerprints_per_call(lambda: vd.run(batch_parameters={"dataframe": first}))
    n_fp_batch = fingerprints_per_call(
        lambda: batch_def.get_batch(batch_parameters={"dataframe": first}).validate(suite))
    api()
    gx_validate()  # warm up both
    runs, cpu_runs = interleaved({"api": api, "gx": gx_validate, "fp": fingerprint}, repeat)
    api_s, gx_s, fp1_s = (min(runs[k]) for k in ("api", "gx", "fp"))
    fp_s = n_fp * fp1_s
    api_c, gx_c, fp_c = (min(cpu_runs[k]) for k in ("api", "gx", "fp"))
    fp_c *= n_fp
    return {
        "releases": len(frames),
        "records": int(sum(len(f) for f in frames.values())),
        "api_s": api_s, "gx_validate_s": gx_s, "gx_fingerprint_s": fp_s,
        "fingerprints_per_validation": n_fp,
        "fingerprints_per_batch_validate": n_fp_batch,
        "runs_s": runs, "cpu_runs_s": cpu_runs,
        "ratio_gx_validate": gx_s / api_s,
        "fingerprint_share_of_gx": fp_s / gx_s,
        "ratio_rest": (gx_s - fp_s) / api_s,
        "cpu": {"api_s": api_c, "gx_validate_s": gx_c, "gx_fingerprint_s": fp_c,
                "ratio_gx_validate": gx_c / api_c, "fingerprint_share_of_gx": fp_c / gx_c,
                "ratio_rest": (gx_c - fp_c) / api_c},
    }


def _print(title: str, m: dict) -> None:
    print(f"{title}: {m['releases']} release(s), {m['records']:,} records")
    print(f"  (api)  Python API, same statistics      {m['api_s']:8.3f} s")
    print(f"  (gx)   GX validation of the suite        {m['gx_validate_s']:8.3f} s   (gx)/(api)   {m['ratio_gx_validate']:5.2f}")
    print(f"  (fp)   of which GX batch fingerprint     {m['gx_fingerprint_s']:8.3f} s   share of gx  "
          f"{100 * m['fingerprint_share_of_gx']:4.0f} %  ({m['fingerprints_per_validation']} per validation; "
          f"batch.validate: {m['fingerprints_per_batch_validate']})")
    print(f"  (rest) GX without the fingerprint        {m['gx_validate_s'] - m['gx_fingerprint_s']:8.3f} s   "
          f"(rest)/(api) {m['ratio_rest']:5.2f}")
    c = m["cpu"]
    print(f"  CPU time: (gx)/(api) {c['ratio_gx_validate']:5.2f}, fingerprint {100 * c['fingerprint_share_of_gx']:3.0f} % "
          f"of gx, (rest)/(api) {c['ratio_rest']:5.2f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--synthetic", type=float, default=1e7, help="records of the synthetic release")
    parser.add_argument("--no-synthetic", action="store_true", help="PatentsView and the demo only")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)

    t0 = time.perf_counter()
    import great_expectations as gx
    import pandas as pd
    from great_expectations.data_context.types.base import ProgressBarsConfig

    import er_expectations as erx
    from er_expectations.config import load_checkpoint, load_suite
    from er_expectations.run.data.files import ReleaseData
    from er_expectations.run.runner import run_checkpoint
    from er_expectations.run.suites import suite_from_config

    import_s = time.perf_counter() - t0

    checkpoint_path = ROOT / "checkpoints" / "patentsview.yml"
    checkpoint = load_checkpoint(checkpoint_path)
    data = ReleaseData(checkpoint)
    t0 = time.perf_counter()
    frames = {r.label: data.frame(r) for r in data.select()}
    frames_s = time.perf_counter() - t0
    suite_cfg = load_suite(ROOT / "suites" / "patentsview.yml")

    ctx = gx.get_context(mode="ephemeral")
    ctx.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    suite = ctx.suites.add(suite_from_config(suite_cfg))

    pv = measure(frames, suite, ctx, repeat=args.repeat, label="patentsview")
    _print("PatentsView", pv)
    synth = None
    if not args.no_synthetic:
        import synthetic

        n = int(args.synthetic)
        df = synthetic.load_release(n, seed=0).rename(columns={"name": "full_name"})
        synth = measure({"synthetic": df}, suite, ctx, repeat=args.repeat, label="synthetic")
        synth["shallow_memory_mb"] = float(df.memory_usage().sum() / 1e6)
        _print(f"Synthetic (zipf2, int ids, {len(df.columns)} columns)", synth)
        del df

    demo_runs = []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            (tmp / "checkpoints").mkdir()
            shutil.copytree(ROOT / "suites", tmp / "suites")
            text = checkpoint_path.read_text().replace(
                "../er_expectations/data/patentsview", (ROOT / "er_expectations" / "data" / "patentsview").as_posix())
            (tmp / "checkpoints" / "patentsview.yml").write_text(text)
            t0 = time.perf_counter()
            run_checkpoint(tmp / "checkpoints" / "patentsview.yml", progress=False, out=io.StringIO())
            demo_runs.append(time.perf_counter() - t0)
    demo_s = min(demo_runs)

    result = {
        "benchmark": "gx",
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "expectations": len(suite_cfg.expectations),
        "import_s": import_s,
        "release_tables_s": frames_s,
        "patentsview": pv,
        "synthetic": synth,
        "demo_s": demo_s, "demo_runs_s": demo_runs,
        "ratio_demo": demo_s / pv["api_s"],
        "load_average": os.getloadavg(),
        "versions": {"great_expectations": gx.__version__, "pandas": pd.__version__, "er_expectations": erx.__version__},
    }
    print(f"  (demo) whole checkpoint run {demo_s:.3f} s, (demo)/(api) {demo_s / pv['api_s']:.1f}; import of GX + "
          f"er_expectations {import_s:.2f} s; building the 15 release tables {frames_s:.2f} s")
    if synth is not None:
        print(f"  target (rest)/(api) ≤ 2 at {synth['records']:,} records → "
              f"{'ok' if synth['ratio_rest'] <= 2 else 'MISS'}; demo < 30 s → {'ok' if demo_s + import_s < 30 else 'MISS'}")
    out = args.out or ROOT / "benchmarks" / "results" / f"gx-{dt.date.today().isoformat()}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp_out = out.with_suffix(".json.tmp")
    tmp_out.write_text(json.dumps(result, indent=1))
    os.replace(tmp_out, out)
    print(f"results written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
