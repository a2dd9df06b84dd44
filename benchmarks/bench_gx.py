"""Benchmark of the GX layer: the demo checkpoint against the same statistics via the Python API.

    python benchmarks/bench_gx.py [--repeat 3]

Measured side by side in one process, on the 15 bundled PatentsView releases:

(api)   the statistics of the demo suite through ``erx.Release`` (summary statistics with
        names, every estimate with and without names), on the release tables;
(gx)    the same suite validated by GX on the same tables (ephemeral context, dataframe
        batches): the cost of GX's metric graph, its batch fingerprint and result objects;
(fp)    GX's batch fingerprint alone (``hash_pandas_object`` over each table), part of (gx);
(demo)  the whole checkpoint run ``run_checkpoint(checkpoints/patentsview.yml)`` into a fresh
        project: building the release tables, writing them, GX file context, validation,
        Data Docs and the offline post-processing.

Ratios (gx)/(api) and (demo)/(api) are reported; the issue's target is ≤ 2 for the GX
overhead and the whole demo under 30 s. Results go to benchmarks/results/gx-<date>.json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def best_of(fn, repeat: int) -> tuple[float, list[float]]:
    runs = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t0)
    return min(runs), runs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)

    t0 = time.perf_counter()
    import great_expectations as gx
    import pandas as pd
    from great_expectations.data_context.types.base import ProgressBarsConfig
    from great_expectations.execution_engine.pandas_execution_engine import hash_pandas_dataframe

    import er_expectations as erx
    from er_expectations.config import load_checkpoint, load_suite
    from er_expectations.gx.runner import run_checkpoint
    from er_expectations.gx.suites import suite_from_config
    from er_expectations.releases import ReleaseData

    import_s = time.perf_counter() - t0

    checkpoint_path = ROOT / "checkpoints" / "patentsview.yml"
    checkpoint = load_checkpoint(checkpoint_path)
    data = ReleaseData(checkpoint)
    releases = data.select()
    t0 = time.perf_counter()
    frames = {r.label: data.frame(r) for r in releases}
    frames_s = time.perf_counter() - t0
    suite_cfg = load_suite(ROOT / "suites" / "patentsview.yml")

    def api() -> None:
        for df in frames.values():
            named = erx.Release(df, prediction="inventor_id", name="full_name")
            named.summarize(hill_orders=(1, 2, float("inf")))
            named.estimate(reference="benchmark_id", metrics=["homonymy_rate", "name_variation_rate"])
            erx.Release(df, prediction="inventor_id").estimate(reference="benchmark_id")

    ctx = gx.get_context(mode="ephemeral")
    ctx.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    suite = ctx.suites.add(suite_from_config(suite_cfg))
    batch_def = ctx.data_sources.add_pandas("bench").add_dataframe_asset("releases").add_batch_definition_whole_dataframe("all")

    def gx_validate() -> None:
        for df in frames.values():
            res = batch_def.get_batch(batch_parameters={"dataframe": df}).validate(suite)
            if any(r.exception_info.get("raised_exception") for r in res.results):
                raise RuntimeError("an expectation raised during the benchmark")

    def fingerprint() -> None:
        for df in frames.values():
            hash_pandas_dataframe(df)

    api()
    gx_validate()  # warm up both
    api_s, api_runs = best_of(api, args.repeat)
    gx_s, gx_runs = best_of(gx_validate, args.repeat)
    fp_s, fp_runs = best_of(fingerprint, args.repeat)

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
        "releases": len(frames),
        "records": int(sum(len(f) for f in frames.values())),
        "expectations": len(suite_cfg.expectations),
        "import_s": import_s,
        "release_tables_s": frames_s,
        "api_s": api_s, "api_runs_s": api_runs,
        "gx_validate_s": gx_s, "gx_validate_runs_s": gx_runs,
        "gx_fingerprint_s": fp_s, "gx_fingerprint_runs_s": fp_runs,
        "demo_s": demo_s, "demo_runs_s": demo_runs,
        "ratio_gx_validate": gx_s / api_s,
        "ratio_gx_validate_without_fingerprint": (gx_s - fp_s) / api_s,
        "ratio_demo": demo_s / api_s,
        "load_average": os.getloadavg(),
        "versions": {"great_expectations": gx.__version__, "pandas": pd.__version__, "er_expectations": erx.__version__},
    }
    print(f"PatentsView: {result['releases']} releases, {result['records']:,} records, "
          f"{result['expectations']} expectations per release")
    print(f"  (api)  Python API, same statistics   {api_s:7.3f} s")
    print(f"  (gx)   GX validation of the suite     {gx_s:7.3f} s   ratio {gx_s / api_s:5.1f}")
    print(f"  (fp)   of which GX batch fingerprint  {fp_s:7.3f} s   ratio without it {(gx_s - fp_s) / api_s:5.1f}")
    print(f"  (demo) whole checkpoint run           {demo_s:7.3f} s   ratio {demo_s / api_s:5.1f}")
    print(f"  import of GX + er_expectations {import_s:.2f} s; building the 15 release tables {frames_s:.2f} s")
    print(f"  targets: GX overhead ≤ 2× → {'ok' if gx_s / api_s <= 2 else 'MISS'}; "
          f"demo < 30 s → {'ok' if demo_s + import_s < 30 else 'MISS'}")
    out = args.out or ROOT / "benchmarks" / "results" / f"gx-{dt.date.today().isoformat()}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp_out = out.with_suffix(".json.tmp")
    tmp_out.write_text(json.dumps(result, indent=1))
    os.replace(tmp_out, out)
    print(f"results written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
