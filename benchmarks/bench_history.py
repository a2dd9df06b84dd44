"""Benchmark of the history store: the write of each release next to its validation.

    python benchmarks/bench_history.py [--rounds 2] [--postgres URL]

Runs the demo checkpoint (``checkpoints/patentsview.yml``, 15 releases) into a fresh
project ``--rounds`` times (the second round is a rerun: every release gets version 2)
and times, for every release and in the same process:

(validation) GX's ``Checkpoint.run`` of the release (all its expectations);
(write)      ``HistoryRecorder.record``: turning the release's GX results into rows and
             writing them in one transaction (SQLite file in the project by default).

Then it times :meth:`HistoryStore.series` (what a drift check reads) on the filled store.
With ``--postgres URL`` (or ``ER_TEST_POSTGRES_URL``) the same run writes to PostgreSQL
too. Reported: median and max write time per release (target: under 50 ms on SQLite),
and write / validation. Results go to ``benchmarks/results/history-<date>.json``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_demo(project: Path, rounds: int, url: str | None) -> dict:
    import great_expectations.checkpoint.checkpoint as gx_checkpoint

    from er_expectations.history import HistoryStore, default_url
    from er_expectations.run.history import HistoryRecorder
    from er_expectations.run.runner import run_checkpoint

    validation: list[float] = []
    writes: list[float] = []
    original_run, original_record = gx_checkpoint.Checkpoint.run, HistoryRecorder.record

    def timed_run(self, *args, **kwargs):
        started = time.perf_counter()
        try:
            return original_run(self, *args, **kwargs)
        finally:
            validation.append(time.perf_counter() - started)

    def timed_record(self, *args, **kwargs):
        started = time.perf_counter()
        try:
            return original_record(self, *args, **kwargs)
        finally:
            writes.append(time.perf_counter() - started)

    source = (ROOT / "checkpoints" / "patentsview.yml").read_text(encoding="utf-8")
    text = source.replace("project_dir: ../build/patentsview", f"project_dir: {project}")
    if url:
        os.environ["ER_BENCH_HISTORY_URL"] = url
        text += "history:\n  url: ${ER_BENCH_HISTORY_URL}\n"
    checkpoint = ROOT / "checkpoints" / f".bench-history-{os.getpid()}.yml"
    checkpoint.write_text(text, encoding="utf-8")
    gx_checkpoint.Checkpoint.run, HistoryRecorder.record = timed_run, timed_record
    try:
        problems = []
        for _ in range(rounds):
            report = run_checkpoint(checkpoint, progress=False, out=io.StringIO())
            problems.append(report.history_problem)
    finally:
        gx_checkpoint.Checkpoint.run, HistoryRecorder.record = original_run, original_record
        checkpoint.unlink()
    if any(problems):
        raise SystemExit(f"history not recorded: {problems}")
    with HistoryStore.open(url or default_url(project), create=False) as store:
        reads = []
        for _ in range(20):
            started = time.perf_counter()
            store.series(checkpoint="patentsview", metric="average_cluster_size", before_position=14, last=8)
            reads.append(time.perf_counter() - started)
        rows = len(store.results(checkpoint="patentsview", all_versions=True))
    return {
        "releases_written": len(writes),
        "result_rows": rows,
        "write_ms_median": 1000 * statistics.median(writes),
        "write_ms_max": 1000 * max(writes),
        "validation_ms_median": 1000 * statistics.median(validation),
        "write_over_validation_median": statistics.median(w / v for w, v in zip(writes, validation, strict=True)),
        "series_read_ms_median": 1000 * statistics.median(reads),
        "write_ms": [round(1000 * w, 2) for w in writes],
        "validation_ms": [round(1000 * v, 1) for v in validation],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=2, help="runs of the demo (2: the second is a rerun)")
    parser.add_argument("--postgres", default=os.environ.get("ER_TEST_POSTGRES_URL"),
                        help="also write to this PostgreSQL URL (default: $ER_TEST_POSTGRES_URL)")
    args = parser.parse_args()
    results = {}
    targets = {"sqlite": None}
    if args.postgres:
        targets["postgresql"] = args.postgres
    for name, url in targets.items():
        project = Path(tempfile.mkdtemp(prefix="bench-history-"))
        try:
            if url is not None:  # a fresh schema of its own
                import uuid

                import sqlalchemy as sa

                schema = f"bench_{uuid.uuid4().hex[:8]}"
                admin = sa.create_engine(url)
                with admin.begin() as conn:
                    conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
                target = (sa.engine.make_url(url).update_query_dict({"options": f"-csearch_path={schema}"})
                          .render_as_string(hide_password=False))
                try:
                    results[name] = run_demo(project, args.rounds, target)
                finally:
                    with admin.begin() as conn:
                        conn.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
                    admin.dispose()
            else:
                results[name] = run_demo(project, args.rounds, None)
        finally:
            shutil.rmtree(project, ignore_errors=True)
        r = results[name]
        print(f"{name:10s} {r['releases_written']} release writes ({r['result_rows']} result rows): "
              f"write median {r['write_ms_median']:.1f} ms, max {r['write_ms_max']:.1f} ms "
              f"(target < 50 ms); validation median {r['validation_ms_median']:.0f} ms; "
              f"write/validation {r['write_over_validation_median']:.4f}; "
              f"series read {r['series_read_ms_median']:.1f} ms")
    out = ROOT / "benchmarks" / "results" / f"history-{dt.date.today().isoformat()}.json"
    out.write_text(json.dumps({"python": sys.version.split()[0], "rounds": args.rounds, "results": results},
                              indent=2) + "\n", encoding="utf-8")
    print(f"results: {out}")


if __name__ == "__main__":
    main()
