"""Scale benchmark of the DuckDB engine (issue 32 item 3): a GX validation against DuckDB's floor.

For each size a synthetic release (text ids, names, a benchmark) is generated *inside* DuckDB
(``range()`` and SQL, never a Python frame) into a database file; then, each in a fresh
subprocess so that each has its own peak memory, side by side in one run:

- **engine**: a GX validation of a suite that needs every aggregate of a release (the size
  histogram, the name statistics, the benchmark's contingency and name flags: average cluster
  size, Hill number, homonymy and name-variation rates, estimated pairwise precision and recall
  and the estimated homonymy rate with names) through GX's SQL datasource on the file, which the
  engine registry hands to the DuckDB engine (``engines/duckdb``); run twice in the process
  (cold, then warm on a new batch: every aggregate computed again);
- **floor**: DuckDB's own group-by of the prediction (the size histogram) plus one pass over
  the names (``count(DISTINCT name)``: every name hashed once), the least any summary of the
  clustering with names costs; run twice (cold, warm).

Reported per size: the times, their ratio warm and cold, and each process's peak resident
memory (``VmHWM``: Python and DuckDB); with ``--with-sql`` the SQL engine on the same file
too (the registry without its DuckDB line, as before issue 32), whose observed values must
equal the DuckDB engine's to 1e-12, and each aggregate of a validation (sizes; sizes with the
name statistics; the benchmark sample without and with names) on both engines' releases and
the floor's two queries, interleaved three times in one process, the fastest of each: on a
shared machine the whole validations above move with the load, these side-by-side times less;
with ``--with-pandas`` the pandas engine too: the release read from the file into a pandas frame
(Arrow-backed strings, pandas' default since 3.0; the read timed apart), then the same two GX
validations on dataframe batches, in its own process watched by the parent, which stops it
above ``--pandas-max-gb`` of resident memory or ``--pandas-timeout`` seconds (its ceiling on
the machine, recorded as such: the machine is shared and has no swap). Every process's
1-minute load average is recorded before and after it. Target: engine ≤ 1.5× the floor, warm,
at every size; peak memory ≤ 8 GB at 100M records.

    python benchmarks/bench_duckdb_scale.py                               # 200k records (CI smoke)
    python benchmarks/bench_duckdb_scale.py --sizes 1e5 --with-sql --with-pandas   # every process, seconds
    python benchmarks/bench_duckdb_scale.py --sizes 10000000 --with-sql --out benchmarks/results/duckdb-scale-<date>.json
    python benchmarks/bench_duckdb_scale.py --sizes 1e8 3e7 1e7 --with-sql --with-pandas --workdir .scratch

The data: true clusters of 5 records; the prediction splits every 7th true cluster in two and
merges every 11th with its neighbour; 1 true cluster in 500 (ids hashed) is in the benchmark;
names are drawn per true cluster from a pool of n/8 (homonyms), one record in 10 carries a
variant, one in 50 none. Ids are text: ``r0000000042`` records, ``c…`` clusters, ``t…`` true
clusters.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TABLE = "releases"


def generate(path: Path, n: int) -> float:
    """The synthetic release of ``n`` records as table ``releases`` of the DuckDB file ``path``."""
    import duckdb

    started = time.perf_counter()
    with duckdb.connect(str(path)) as con:
        con.execute(f"""
            CREATE OR REPLACE TABLE {TABLE} AS
            WITH g AS (SELECT i, i // 5 AS t FROM range({n}) r(i))
            SELECT 'r' || lpad(i::VARCHAR, 10, '0') AS record,
                   'c' || (CASE WHEN t % 11 = 0 THEN (t + 1) * 2 WHEN t % 7 = 0 THEN t * 2 + (i % 2)
                                ELSE t * 2 END)::VARCHAR AS pred,
                   CASE WHEN ((t * 2654435761) % 4294967296) % 500 = 0 THEN 't' || t::VARCHAR END AS ref,
                   CASE WHEN hash(i) % 50 = 0 THEN NULL
                        WHEN hash(i) % 10 = 1 THEN 'N' || (hash(t) % greatest({n} // 8, 1))::VARCHAR || ' v'
                        ELSE 'N' || (hash(t) % greatest({n} // 8, 1))::VARCHAR END AS name
            FROM g""")
    return time.perf_counter() - started


def _peak_gb() -> float:
    """This process's peak resident memory: ``VmHWM``, the high-water mark of its own address
    space. Not ``ru_maxrss``: Linux carries that across ``exec``, so a child started by a parent
    that had grown (the parent generates every release in process) reported the parent's peak
    (1.41 GB for every process at 10M after a run at 100M and 30M)."""
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024**2  # KiB
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2  # KiB on Linux, elsewhere a bound


def suite() -> list:
    from er_expectations.gx import expectations as gxe

    common = {"prediction_column": "pred"}
    bench = {**common, "reference_column": "ref"}
    return [
        gxe.ExpectAverageClusterSizeToBeBetween(**common, min_value=1.0),
        gxe.ExpectHillNumberToBeBetween(**common, q=2, min_value=1.0),
        gxe.ExpectHomonymyRateToBeBetween(**common, name_column="name", max_value=1.0),
        gxe.ExpectNameVariationRateToBeBetween(**common, name_column="name", max_value=1.0),
        gxe.ExpectEstimatedPairwisePrecisionToBeBetween(**bench, min_value=0.0),
        gxe.ExpectEstimatedPairwiseRecallToBeBetween(**bench, min_value=0.0),
        gxe.ExpectStatisticToMatchBenchmarkEstimate(**bench, statistic="homonymy_rate", name_column="name"),
    ]


def measure_engine(path: Path, *, generic_sql: bool = False) -> dict:
    """In the subprocess: two GX validations of the suite on the file (cold, warm); with
    ``generic_sql`` on the SQL engine (the registry without its DuckDB line: before issue 32)."""
    import er_expectations.gx  # noqa: F401 - registers the expectations
    from er_expectations.engines.registry import ENGINES

    if generic_sql:
        ENGINES.pop("duckdb")

    ctx, expectation_suite = _context()
    source = ctx.data_sources.add_sql("warehouse", connection_string=f"duckdb:///{path}")
    definition = source.add_table_asset("release", table_name=TABLE).add_batch_definition_whole_table("all")
    return {**validate_twice(definition, expectation_suite, {}), "peak_gb": _peak_gb()}


def _context() -> tuple[Any, Any]:
    """An ephemeral GX context without progress bars, and the suite added to it."""
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig

    ctx = gx.get_context(mode="ephemeral")
    ctx.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    return ctx, ctx.suites.add(gx.ExpectationSuite(name="scale", expectations=suite()))


def validate_twice(definition: Any, expectation_suite: Any, batch_parameters: dict) -> dict:
    """Two GX validations of the suite on new batches of ``definition`` (cold, then warm: every
    aggregate computed again); the engine the registry chose and the observed values."""
    from er_expectations.engines.registry import engine_for

    times, observed = [], {}
    for _ in range(2):
        batch = definition.get_batch(batch_parameters=batch_parameters or None)
        engine = engine_for(batch.data.execution_engine).name
        started = time.perf_counter()
        result = batch.validate(expectation_suite)
        times.append(time.perf_counter() - started)
        for r in result.results:
            info = r.exception_info or {}
            for i in [v for v in info.values() if isinstance(v, dict)] or [info]:
                if i.get("raised_exception"):
                    raise RuntimeError(i.get("exception_message"))
            observed[r.expectation_config.type] = r.result.get("observed_value")
    return {"engine": engine, "cold_s": times[0], "warm_s": times[1], "observed": observed}


def measure_pandas(path: Path) -> dict:
    """In the subprocess: the release read from the file into a pandas frame, then two GX
    validations of the suite on dataframe batches of it (the pandas engine)."""
    import duckdb

    import er_expectations.gx  # noqa: F401 - registers the expectations

    started = time.perf_counter()
    with duckdb.connect(str(path), read_only=True) as con:  # pandas >= 3: str columns backed by Arrow
        frame = con.execute(f"SELECT * FROM {TABLE}").to_arrow_table().to_pandas()
    read_s, read_peak_gb = time.perf_counter() - started, _peak_gb()
    ctx, expectation_suite = _context()
    definition = (ctx.data_sources.add_pandas("frames").add_dataframe_asset("release")
                  .add_batch_definition_whole_dataframe("all"))
    # the peak of the validations alone: Linux resets VmHWM to the current resident memory on
    # "5" to clear_refs (the memory the read freed but the allocator kept stays counted)
    Path("/proc/self/clear_refs").write_text("5")
    result = validate_twice(definition, expectation_suite, {"dataframe": frame})
    validate_peak_gb = _peak_gb()
    return {**result, "read_s": read_s, "read_peak_gb": read_peak_gb,
            "peak_gb": max(read_peak_gb, validate_peak_gb),
            "validate_peak_gb": validate_peak_gb,
            "frame_gb": frame.memory_usage(deep=True).sum() / 1024**3,
            "dtypes": sorted({str(t) for t in frame.dtypes})}


def measure_floor(path: Path) -> dict:
    """In the subprocess: DuckDB's group-by of the prediction plus one pass over the names, twice."""
    import duckdb

    times = []
    with duckdb.connect(str(path), read_only=True) as con:
        for _ in range(2):
            started = time.perf_counter()
            con.execute(f"SELECT m, count(*) FROM (SELECT pred, count(*) AS m FROM {TABLE} WHERE pred IS NOT NULL "
                        "GROUP BY pred) GROUP BY m").fetchall()
            con.execute(f"SELECT count(DISTINCT name) FROM {TABLE}").fetchall()
            times.append(time.perf_counter() - started)
    return {"cold_s": times[0], "warm_s": times[1], "peak_gb": _peak_gb()}


def measure_queries(path: Path) -> dict:
    """In the subprocess: each aggregate of a validation on the DuckDB and the SQL engine's
    release, and the floor, interleaved three times (a loaded machine slows them alike); the
    fastest of each."""
    import sqlalchemy as sa

    from er_expectations.engines.duckdb.release import DuckDbRelease
    from er_expectations.engines.sql.release import SqlRelease

    bind = sa.create_engine(f"duckdb:///{path}")
    table = sa.table(TABLE, *[sa.column(c) for c in ("record", "pred", "ref", "name")])
    steps = {
        "sizes": lambda r: r.size_histogram(),
        "names": lambda r: r.clustering_table(name="name"),
        "benchmark": lambda r: r.benchmark_sample(reference="ref", known=None),
        "benchmark_names": lambda r: r.benchmark_sample(reference="ref", name="name", known=None),
    }
    best: dict[str, float] = {}

    def timed(key: str, call: Any) -> None:
        started = time.perf_counter()
        call()
        best[key] = min(best.get(key, float("inf")), time.perf_counter() - started)

    with bind.connect() as conn:
        for _ in range(3):
            timed("floor_group_by", lambda: conn.execute(sa.text(
                f"SELECT m, count(*) FROM (SELECT pred, count(*) AS m FROM {TABLE} WHERE pred IS NOT NULL "
                "GROUP BY pred) GROUP BY m")).fetchall())
            timed("floor_names", lambda: conn.execute(sa.text(f"SELECT count(DISTINCT name) FROM {TABLE}")).fetchall())
            for engine, cls in (("duckdb", DuckDbRelease), ("sql", SqlRelease)):
                release = cls(bind, table, prediction="pred")
                for step, call in steps.items():
                    timed(f"{engine}_{step}", lambda call=call, release=release: call(release))
    bind.dispose()
    return {key: round(value, 3) for key, value in best.items()}


def _rss_gb(pid: int) -> float:
    """The resident memory of a running process (``VmRSS``), 0 once it has gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024**2
    except OSError:
        pass
    return 0.0


def _child(kind: str, path: Path, *, max_gb: float | None = None, timeout: float | None = None) -> dict:
    """``kind`` measured in a fresh process, with the 1-minute load average before and after.
    With ``max_gb`` or ``timeout`` the process is watched (its resident memory read every 0.2 s)
    and stopped above either; the result then says so (``stopped``) instead of raising."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE.parent), os.environ.get("PYTHONPATH", "")])}
    load = [round(os.getloadavg()[0], 2)]
    started = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen([sys.executable, __file__, "--child", kind, str(path)], stdout=out, stderr=err,
                                text=True, env=env)
        stopped, seen_gb = None, 0.0
        while proc.poll() is None:
            if max_gb is not None or timeout is not None:
                seen_gb = max(seen_gb, _rss_gb(proc.pid))
                if max_gb is not None and seen_gb > max_gb:
                    stopped = f"resident memory above {max_gb:g} GB"
                elif timeout is not None and time.perf_counter() - started > timeout:
                    stopped = f"still running after {timeout:g} s"
                if stopped:
                    proc.kill()
                    proc.wait()
                    break
            time.sleep(0.2)
        load.append(round(os.getloadavg()[0], 2))
        elapsed = round(time.perf_counter() - started, 1)
        if stopped is None and proc.returncode < 0:  # killed from outside: the kernel's OOM killer
            stopped = f"killed by signal {-proc.returncode}"
        if stopped is not None and (max_gb is not None or timeout is not None):
            return {"stopped": stopped, "after_s": elapsed, "seen_peak_gb": round(seen_gb, 2), "load_average": load}
        err.seek(0)
        if proc.returncode != 0:
            raise RuntimeError(f"{kind} failed:\n{err.read()[-4000:]}")
        out.seek(0)
        return {**json.loads(out.read().strip().splitlines()[-1]), "load_average": load, "process_s": elapsed}


def _size(text: str) -> int:
    """A number of records: ``200000``, ``1e5`` or ``3e7``."""
    value = float(text)
    if value < 1 or value != int(value):
        raise argparse.ArgumentTypeError(f"not a number of records: {text}")
    return int(value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=_size, nargs="+", default=[200_000],
                        help="records per release, 1e5 or 100000 (default 200,000: a smoke run)")
    parser.add_argument("--out", type=Path, help="write the results as JSON here")
    parser.add_argument("--workdir", type=Path, help="where the DuckDB files go (default: a temporary folder)")
    parser.add_argument("--with-sql", action="store_true",
                        help="also time the SQL engine on the same file (GX's SQL datasource before the DuckDB engine)")
    parser.add_argument("--with-pandas", action="store_true",
                        help="also the pandas engine: the release read into a frame, the same GX validations")
    parser.add_argument("--pandas-max-gb", type=float, default=16.0,
                        help="stop the pandas process above this resident memory (default 16 GB)")
    parser.add_argument("--pandas-timeout", type=float, default=1800.0,
                        help="stop the pandas process after this many seconds (default 1800)")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, path = args.child
        measure = {"engine": measure_engine, "sql": lambda p: measure_engine(p, generic_sql=True),
                   "floor": measure_floor, "queries": measure_queries, "pandas": measure_pandas}[kind]
        print(json.dumps(measure(Path(path))))
        return
    rows = []
    with tempfile.TemporaryDirectory(dir=args.workdir) as folder:
        for n in args.sizes:
            path = Path(folder) / f"release_{n}.duckdb"
            generated = generate(path, n)
            load_before = os.getloadavg()[0]
            engine, floor = _child("engine", path), _child("floor", path)
            sql = _child("sql", path) if args.with_sql else None
            queries = _child("queries", path) if args.with_sql else None
            pandas = (_child("pandas", path, max_gb=args.pandas_max_gb, timeout=args.pandas_timeout)
                      if args.with_pandas else None)
            row = {"records": n, "generate_s": round(generated, 2),
                   # the machine's 1-minute load before and after (2 cores shared: above 2, a
                   # process waits for a core and both times grow)
                   "load_average": [round(load_before, 2), round(os.getloadavg()[0], 2)],
                   "engine": engine["engine"], "engine_cold_s": round(engine["cold_s"], 3),
                   "engine_warm_s": round(engine["warm_s"], 3), "engine_peak_gb": round(engine["peak_gb"], 2),
                   "floor_cold_s": round(floor["cold_s"], 3), "floor_warm_s": round(floor["warm_s"], 3),
                   "floor_peak_gb": round(floor["peak_gb"], 2),
                   "ratio_warm": round(engine["warm_s"] / floor["warm_s"], 2),
                   "ratio_cold": round(engine["cold_s"] / floor["cold_s"], 2),
                   "observed": engine["observed"],
                   "load_average_each": {"engine": engine["load_average"], "floor": floor["load_average"]}}
            if sql is not None:
                assert sql["engine"] == "sql", sql["engine"]
                row.update({"sql_engine_cold_s": round(sql["cold_s"], 3), "sql_engine_warm_s": round(sql["warm_s"], 3),
                            "sql_engine_peak_gb": round(sql["peak_gb"], 2),
                            "sql_ratio_warm": round(sql["warm_s"] / floor["warm_s"], 2)})
                row["aggregates_s"] = queries
                row["load_average_each"].update(sql=sql["load_average"], queries=queries["load_average"])
                for key, value in engine["observed"].items():  # the same values, to 1e-12
                    other = sql["observed"][key]
                    assert abs(other - value) <= 1e-12 * max(1.0, abs(value)), (key, value, other)
            if pandas is not None and "stopped" in pandas:
                row["pandas"] = pandas
            elif pandas is not None:
                assert pandas["engine"] == "pandas", pandas["engine"]
                row["pandas"] = {"read_s": round(pandas["read_s"], 2), "cold_s": round(pandas["cold_s"], 3),
                                 "warm_s": round(pandas["warm_s"], 3), "peak_gb": round(pandas["peak_gb"], 2),
                                 "read_peak_gb": round(pandas["read_peak_gb"], 2),
                                 "validate_peak_gb": round(pandas["validate_peak_gb"], 2),
                                 "frame_gb": round(pandas["frame_gb"], 2), "dtypes": pandas["dtypes"],
                                 "ratio_warm": round(pandas["warm_s"] / floor["warm_s"], 2),
                                 "load_average": pandas["load_average"],
                                 # recorded, not asserted: a long run is not lost to a difference
                                 "max_relative_difference": max(
                                     abs(pandas["observed"][k] - v) / max(1.0, abs(v))
                                     for k, v in engine["observed"].items())}
            rows.append(row)
            print(f"{n:>12,} records: engine ({row['engine']}) {row['engine_warm_s']:.2f} s warm "
                  f"({row['engine_cold_s']:.2f} cold), floor {row['floor_warm_s']:.2f} s warm "
                  f"({row['floor_cold_s']:.2f} cold): {row['ratio_warm']:.2f}x warm, {row['ratio_cold']:.2f}x cold; "
                  f"peak {row['engine_peak_gb']:.2f} GB (floor {row['floor_peak_gb']:.2f} GB)", flush=True)
            if sql is not None:
                print(f"{'':>12}   SQL engine on the same file: {row['sql_engine_warm_s']:.2f} s warm "
                      f"({row['sql_ratio_warm']:.2f}x the floor)", flush=True)
            if pandas is not None:
                p = row["pandas"]
                print(f"{'':>12}   pandas engine: " + (
                    f"stopped ({p['stopped']}, after {p['after_s']} s, {p['seen_peak_gb']} GB seen)" if "stopped" in p
                    else f"read {p['read_s']:.1f} s, {p['warm_s']:.2f} s warm ({p['cold_s']:.2f} cold), "
                         f"{p['ratio_warm']:.2f}x the floor; peak {p['peak_gb']:.2f} GB "
                         f"(read {p['read_peak_gb']:.2f}, validations {p['validate_peak_gb']:.2f})"), flush=True)
            path.unlink()
            if args.out is not None:  # after every size: a long run stopped later keeps its sizes
                _write(args.out, rows)


def _write(out: Path, rows: list[dict]) -> None:
    import duckdb

    result = {"benchmark": "duckdb_scale", "date": datetime.now(UTC).isoformat(timespec="seconds"),
              "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "duckdb": duckdb.__version__},
              "target": "engine <= 1.5x floor, warm; peak <= 8 GB at 100M", "rows": rows}
    out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
