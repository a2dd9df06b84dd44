"""One release of a checkpoint on Spark and on SQLite, next to the same release read from files.

    python benchmarks/bench_spark_jobs.py                          # PatentsView 2022-06-30 and 2021-12-30, synthetic 1e5 and 1e7
    python benchmarks/bench_spark_jobs.py --sizes 1e5 --releases 2022-06-30 --rounds 1

Each run is a fresh process and a fresh project, in interleaved rounds (best of the rounds):

(files)   ``run_checkpoint`` of the release from files (pandas), its time (imports excluded);
(spark)   the same release with ``data.engine: spark`` (local[2], 4 shuffle partitions, the
          demo's settings): the time of the run (the Spark session is started before and
          timed apart), and the number of Spark jobs the run submitted, counted with Spark's
          status tracker (``SparkContext.statusTracker().getJobIdsForGroup``), with adaptive
          query execution on (Spark's default: every shuffle stage of a query runs as a job of
          its own) and off (one job per action);
(sqlite)  PatentsView only: the same release with ``data.engine: sql`` on a SQLite file built
          by ``examples/load_warehouse.py``, its time and the number of statements sent to the
          warehouse (SQLAlchemy's ``before_cursor_execute`` event on its engines; the history
          store's own SQLite file is not counted).

The floors of Spark, in a fresh process of their own: starting the session, opening the three
Parquet tables (Spark reads their schemas), the first count of the records table (a cold
session compiles its code) and the fixed cost of one job (a trivial ``spark.range(10).collect()``,
warm).

Data: PatentsView (the bundled 15 releases; one release is validated, its previous one is the
drift baseline) with the demo's suite (``suites/patentsview.yml``, 22 checks); synthetic releases
of ``synthetic.make_release`` (``--sizes``, default 1e5 and 1e7 records: the predicted clusters
as the release, the true clusters as its previous release, names "First Last") with the same
suite less the subgroup check (no surnames to impute ethnicity from). Results go to
``results/spark-jobs-<date>.json``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"

SPARK_SETTINGS = {"spark.sql.shuffle.partitions": "4", "spark.ui.enabled": "false",
                  "spark.ui.showConsoleProgress": "false", "spark.driver.memory": "6g"}

FILES_CHILD = r'''
import io, json, sys, time
from er_expectations.run.runner import run_checkpoint
checkpoint, release = sys.argv[1], sys.argv[2]
t = time.perf_counter()
report = run_checkpoint(checkpoint, releases=[release], progress=False, out=io.StringIO())
print(json.dumps({"run_s": time.perf_counter() - t, "status": [r.status for r in report.releases]}))
'''

SPARK_CHILD = r'''
import io, json, sys, time
from pyspark.sql import SparkSession
checkpoint, release, aqe, settings = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
t = time.perf_counter()
builder = SparkSession.builder.master("local[2]").appName("bench-spark-jobs")
for key, value in {**settings, "spark.sql.adaptive.enabled": aqe}.items():
    builder = builder.config(key, value)
spark = builder.getOrCreate()
start_s = time.perf_counter() - t
sc = spark.sparkContext
sc.setLogLevel("ERROR")
spark.range(10).collect()
t = time.perf_counter()
for _ in range(20):
    spark.range(10).collect()
job_s = (time.perf_counter() - t) / 20
from er_expectations.run.runner import run_checkpoint
sc.setJobGroup("checkpoint", "the checkpoint run")
t = time.perf_counter()
report = run_checkpoint(checkpoint, releases=[release], progress=False, out=io.StringIO())
run_s = time.perf_counter() - t
jobs = sc.statusTracker().getJobIdsForGroup("checkpoint")
print(json.dumps({"run_s": run_s, "jobs": len(jobs), "session_start_s": start_s, "trivial_job_s": job_s,
                  "status": [r.status for r in report.releases]}))
'''

FLOOR_CHILD = r'''
import json, sys, time
from pyspark.sql import SparkSession
aqe, settings, paths = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3:]
t = time.perf_counter()
builder = SparkSession.builder.master("local[2]").appName("bench-spark-jobs-floor")
for key, value in {**settings, "spark.sql.adaptive.enabled": aqe}.items():
    builder = builder.config(key, value)
spark = builder.getOrCreate()
start_s = time.perf_counter() - t
spark.sparkContext.setLogLevel("ERROR")
t = time.perf_counter()
tables = [spark.read.parquet(path) for path in paths]
open_s = time.perf_counter() - t
t = time.perf_counter()
tables[0].count()
first_s = time.perf_counter() - t
spark.range(10).collect()
t = time.perf_counter()
for _ in range(20):
    spark.range(10).collect()
print(json.dumps({"session_start_s": start_s, "open_tables_s": open_s, "first_count_s": first_s,
                  "trivial_job_s": (time.perf_counter() - t) / 20}))
'''

SQLITE_CHILD = r'''
import io, json, sys, time
import sqlalchemy as sa
checkpoint, release, database = sys.argv[1], sys.argv[2], sys.argv[3]
sent = []

def count(conn, cursor, statement, parameters, context, executemany):
    if str(conn.engine.url.database or "").endswith(database):
        sent.append(statement)

sa.event.listen(sa.engine.Engine, "before_cursor_execute", count)
from er_expectations.run.runner import run_checkpoint
t = time.perf_counter()
report = run_checkpoint(checkpoint, releases=[release], progress=False, out=io.StringIO())
print(json.dumps({"run_s": time.perf_counter() - t, "queries": len(sent),
                  "status": [r.status for r in report.releases]}))
'''


def _child(code: str, *args: str) -> dict:
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    # from a neutral folder: ``python -c`` puts the working folder first on sys.path
    done = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, check=False,
                          cwd=tempfile.gettempdir())
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        raise SystemExit(f"child failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}")
    return json.loads(lines[-1])


def _checkpoint_copy(source: Path, work: Path, name: str, **replace: str) -> Path:
    """A copy of a checkpoint of checkpoints/ next to it (its relative paths still hold)."""
    text = source.read_text(encoding="utf-8")
    for old, new in replace.items():
        text = text.replace(old, new)
    path = source.parent / f".bench-spark-jobs-{os.getpid()}-{name}.yml"
    path.write_text(text, encoding="utf-8")
    return path


def synthetic_data(n_records: int, folder: Path) -> dict[str, Path]:
    """Records, wide predictions (the true clusters as release 1, the prediction as release 2) and
    the benchmark of a synthetic release, as Parquet files in ``folder``."""
    # benchmarks/synthetic.py: the folder of a script run as ``python benchmarks/…`` is on sys.path
    from synthetic import load_release

    df = load_release(n_records, seed=0)
    folder.mkdir(parents=True, exist_ok=True)
    paths = {name: folder / f"{name}.parquet" for name in ("records", "predictions", "benchmark")}
    df[["mention_id", "name"]].to_parquet(paths["records"], index=False)
    df[["mention_id"]].assign(inventor_id_1=df["true_id"], inventor_id_2=df["inventor_id"]).to_parquet(
        paths["predictions"], index=False)
    df.loc[df["benchmark_id"].notna(), ["mention_id", "benchmark_id"]].to_parquet(paths["benchmark"], index=False)
    return paths


def synthetic_checkpoints(paths: dict[str, Path], work: Path) -> tuple[Path, Path]:
    """The files and the Spark checkpoint of the synthetic data, with the demo's suite less the
    subgroup check, in ``work``."""
    blocks = (ROOT / "suites" / "patentsview.yml").read_text(encoding="utf-8").split("\n  - expectation:")
    kept = [b for b in blocks[1:] if not b.lstrip().startswith("expect_subgroup_disparity_to_be_below")]
    suite = blocks[0].replace("suite: patentsview_inventor_disambiguation", "suite: synthetic_checks")
    suite = "\n  - expectation:".join([suite, *kept])
    (work / "suites").mkdir(parents=True, exist_ok=True)
    (work / "suites" / "synthetic.yml").write_text(suite, encoding="utf-8")
    data = f"""  records: {{path: {paths['records']}, id_column: mention_id}}
  predictions: {{path: {paths['predictions']}, id_column: mention_id, columns: "inventor_id_*", batch_column: inventor_id}}
  benchmark: {{path: {paths['benchmark']}, id_column: mention_id, reference_column: benchmark_id}}
  name: {{columns: [name], output_column: full_name}}
"""
    out = []
    for engine in ("files", "spark"):
        engine_lines = ("  engine: spark\n  spark: {master: \"local[2]\"}\n" if engine == "spark" else "")
        text = (f"checkpoint: synthetic\nproject_dir: {work / ('project-' + engine)}\ndata:\n{engine_lines}{data}"
                f"releases: all\nsuites: [synthetic_checks]\nsuite_paths: [{work / 'suites'}]\n"
                "actions:\n  - build_data_docs\n")
        path = work / f"synthetic-{engine}.yml"
        path.write_text(text, encoding="utf-8")
        out.append(path)
    return out[0], out[1]


def _fresh(checkpoint: Path) -> None:
    """Remove the project of ``checkpoint`` (each run starts from a new one)."""
    for line in checkpoint.read_text(encoding="utf-8").splitlines():
        if line.startswith("project_dir:"):
            target = line.split(":", 1)[1].split("#")[0].strip()
            path = Path(target) if Path(target).is_absolute() else (checkpoint.parent / target)
            shutil.rmtree(path, ignore_errors=True)


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def measure(name: str, files: Path, spark: Path, release: str, rounds: int, aqe: list[str],
            tables: list[Path], sqlite: tuple[Path, str] | None = None) -> dict:
    rows: dict[str, list[dict]] = {"files": [], **{f"spark aqe={a}": [] for a in aqe}}
    if sqlite:
        rows["sqlite"] = []
    for round_ in range(rounds):
        for kind in rows:
            if kind == "files":
                _fresh(files)
                result = _child(FILES_CHILD, str(files), release)
            elif kind == "sqlite":
                _fresh(sqlite[0])
                result = _child(SQLITE_CHILD, str(sqlite[0]), release, sqlite[1])
            else:
                _fresh(spark)
                result = _child(SPARK_CHILD, str(spark), release, kind.split("=")[1], json.dumps(SPARK_SETTINGS))
            result["load"] = _load()
            rows[kind].append(result)
            extra = "".join(f", {k} {result[k]}" for k in ("jobs", "queries") if k in result)
            floors = (f" (session start {result['session_start_s']:.1f} s, trivial job "
                      f"{1000 * result['trivial_job_s']:.0f} ms)" if "session_start_s" in result else "")
            print(f"{name} round {round_ + 1} {kind:15s} {result['run_s']:7.2f} s{extra}{floors}  "
                  f"(load {result['load']})", flush=True)
    floor = _child(FLOOR_CHILD, aqe[0], json.dumps(SPARK_SETTINGS), *map(str, tables))
    print(f"{name} Spark floors: session start {floor['session_start_s']:.1f} s, opening the three Parquet tables "
          f"{floor['open_tables_s']:.1f} s, their first count {floor['first_count_s']:.1f} s, a trivial job "
          f"{1000 * floor['trivial_job_s']:.0f} ms (warm)", flush=True)
    best = {kind: min(r["run_s"] for r in results) for kind, results in rows.items()}
    summary = {"files_s": best["files"]}
    for kind, results in rows.items():
        if kind == "files":
            continue
        summary[kind] = {"run_s": best[kind], "over_files": best[kind] / best["files"],
                         **{k: results[0][k] for k in ("jobs", "queries") if k in results[0]}}
        if "session_start_s" in results[0]:
            summary[kind]["session_start_s"] = min(r["session_start_s"] for r in results)
            summary[kind]["trivial_job_s"] = min(r["trivial_job_s"] for r in results)
    return {"release": release, "runs": rows, "best": summary, "spark_floors": floor}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--releases", nargs="*", default=["2022-06-30", "2021-12-30"],
                        help="PatentsView releases (none: skip PatentsView)")
    parser.add_argument("--sizes", nargs="*", type=float, default=[1e5, 1e7], help="synthetic sizes (none: skip)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--aqe", nargs="*", default=["true", "false"], help="adaptive query execution on Spark")
    parser.add_argument("--out", type=Path, default=RESULTS / f"spark-jobs-{dt.date.today().isoformat()}.json")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="bench-spark-jobs-"))
    copies: list[Path] = []
    results: dict[str, dict] = {}
    loads = [_load()]
    try:
        if args.releases:
            database = work / "warehouse.db"
            subprocess.run([sys.executable, str(ROOT / "examples" / "load_warehouse.py"), str(database)], check=True,
                           capture_output=True)
            files = _checkpoint_copy(ROOT / "checkpoints" / "patentsview.yml", work, "files",
                                     **{"project_dir: ../build/patentsview": f"project_dir: {work / 'pv-files'}"})
            spark = _checkpoint_copy(ROOT / "checkpoints" / "patentsview_spark.yml", work, "spark",
                                     **{"project_dir: ../build/patentsview_spark": f"project_dir: {work / 'pv-spark'}"})
            sql = _checkpoint_copy(ROOT / "checkpoints" / "patentsview_sqlite.yml", work, "sqlite", **{
                "project_dir: ../build/patentsview_sqlite": f"project_dir: {work / 'pv-sqlite'}",
                "sqlite:///../build/warehouse.db": f"sqlite:///{database}"})
            copies += [files, spark, sql]
            for release in args.releases:
                data = ROOT / "er_expectations" / "data" / "patentsview"
                tables = [data / f"{t}.parquet" for t in ("records", "predictions", "benchmark")]
                results[f"patentsview {release}"] = measure(f"patentsview {release}", files, spark, release,
                                                            args.rounds, args.aqe, tables, (sql, database.name))
        for size in args.sizes:
            n = int(size)
            paths = synthetic_data(n, work / f"synthetic-{n}")
            files, spark = synthetic_checkpoints(paths, work / f"synthetic-{n}")
            results[f"synthetic {n:.0e}"] = measure(f"synthetic {n:.0e}", files, spark, "2", args.rounds, args.aqe,
                                                    [paths[t] for t in ("records", "predictions", "benchmark")])
            loads.append(_load())
    finally:
        for path in copies:
            path.unlink(missing_ok=True)
        shutil.rmtree(work, ignore_errors=True)

    print("\nbest of", args.rounds, "round(s): time of the run (x the files run), Spark jobs / SQL statements")
    for name, result in results.items():
        best = result["best"]
        cells = [f"files {best['files_s']:.2f} s"]
        for kind, value in best.items():
            if kind == "files_s":
                continue
            count = f", {value['jobs']} jobs" if "jobs" in value else f", {value['queries']} queries"
            cells.append(f"{kind} {value['run_s']:.2f} s ({value['over_files']:.1f}x{count})")
        print(f"  {name}: " + "; ".join(cells))
    import platform

    payload = {"date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "python": platform.python_version(),
               "cpus": os.cpu_count(), "load_average": loads, "spark_settings": SPARK_SETTINGS,
               "rounds": args.rounds, "results": results}
    args.out.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    print(f"results: {args.out}")


if __name__ == "__main__":
    main()
