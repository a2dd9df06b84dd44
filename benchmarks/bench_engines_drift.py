"""Scale-out benchmark of the drift checks (SPEC 10): a release and its baseline on each engine.

The synthetic records of ``bench_engines.py`` get a baseline column (the releases before
the merges and splits: true clusters of 5 records). For each (engine, records), in a fresh
subprocess, the aggregation behind the three drift checks runs on the release pair of the
engine: the fixed-subset average cluster size and Hill number (q = 2), the agreement
metrics and the release diff of a failure. Reported side by side, in one run: wall time
(data generation excluded) and its ratio to pandas, the driver's peak memory
(``ru_maxrss``), the rows and bytes brought back to the driver (pickled rows fetched), in
total and for the agreement and the diff alone (they come back as sums: a constant), and
the values, which must agree across engines.

    python benchmarks/bench_engines_drift.py --sizes 1000000 --engines pandas sqlite spark
    ER_BENCH_POSTGRES_URL=postgresql+psycopg://u:p@host/db python benchmarks/bench_engines_drift.py
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

from bench_engines import (  # benchmarks/bench_engines.py (the folder of the script is on sys.path)
    TRUE_SIZE,
    count_spark_fetches,
    count_sql_fetches,
    pandas_frame,
    spark_frame,
)


def _sql_table(engine, n: int) -> str:
    """PostgreSQL: the records with their baseline generated in the database."""
    import sqlalchemy as sa

    t = f"(g / {TRUE_SIZE})"
    pred = (f"CASE WHEN {t} % 11 = 0 THEN ({t} + 1) * 2 WHEN {t} % 7 = 0 THEN {t} * 2 + (g % 2) "
            f"ELSE {t} * 2 END")
    with engine.begin() as conn:
        conn.execute(sa.text("DROP TABLE IF EXISTS bench_pairs"))
        conn.execute(sa.text(f"CREATE TABLE bench_pairs AS SELECT g AS record, {pred} AS pred, {t} * 2 AS base "
                             f"FROM generate_series(0::bigint, {n - 1}::bigint) AS g"))
        conn.execute(sa.text("ANALYZE bench_pairs"))
    return "bench_pairs"


def _measure(engine: str, n: int) -> dict:
    """Runs in the subprocess: generate, build the pair, run the drift aggregations."""
    from er_expectations.analysis.drift import agreement_of, diff_of, statistic_change_of

    fetched = [0, 0]  # bytes, rows
    if engine == "pandas":
        from er_expectations.engines.pandas.pairs import ReleasePair
        from er_expectations.engines.pandas.release import PandasRelease

        df = pandas_frame(n)
        df["base"] = (df["record"] // TRUE_SIZE) * 2
        t0 = time.perf_counter()
        pair = ReleasePair(PandasRelease(df, prediction="pred"), PandasRelease(df, prediction="base"))
    elif engine in ("postgres", "sqlite"):
        import sqlalchemy as sa

        from er_expectations.engines.sql import release as sql_engine
        from er_expectations.engines.sql.pairs import SqlReleasePair

        url = (os.environ.get("ER_BENCH_POSTGRES_URL") or os.environ.get("ER_TEST_POSTGRES_URL")
               if engine == "postgres" else "sqlite://")
        engine_ = sa.create_engine(url)
        if engine == "sqlite":
            table = "bench_pairs"
            df = pandas_frame(n)
            df["base"] = (df["record"] // TRUE_SIZE) * 2
            df.to_sql(table, engine_, index=False, chunksize=500_000)
            del df
        else:
            table = _sql_table(engine_, n)
        count_sql_fetches(fetched)
        t0 = time.perf_counter()
        pair = SqlReleasePair(sql_engine.SqlRelease(engine_, table, prediction="pred"),
                              sql_engine.SqlRelease(engine_, table, prediction="base"))
    else:
        from pyspark.sql import functions as F  # noqa: N812

        from er_expectations.engines.spark.pairs import SparkReleasePair
        from er_expectations.engines.spark.release import SparkRelease

        df = spark_frame(n)
        df = df.withColumn("base", F.floor(F.col("record") / TRUE_SIZE).cast("long") * 2).cache()
        df.count()
        count_spark_fetches(df, fetched)
        t0 = time.perf_counter()
        pair = SparkReleasePair(SparkRelease(df, prediction="pred"), SparkRelease(df, prediction="base"))
    size = statistic_change_of(pair, "average_cluster_size")
    hill = statistic_change_of(pair, "hill_number", q=2)
    before = list(fetched)
    agree = agreement_of(pair)
    diff = diff_of(pair, examples=5, seed=0)
    seconds = time.perf_counter() - t0
    aggregated = engine != "pandas"
    return {
        "engine": engine, "records": n, "seconds": seconds,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "bytes_to_driver": fetched[0] if aggregated else None,
        "rows_to_driver": fetched[1] if aggregated else None,
        "agreement_diff_rows": fetched[1] - before[1] if aggregated else None,
        "agreement_diff_bytes": fetched[0] - before[0] if aggregated else None,
        "values": [size.current, size.baseline, hill.current, hill.baseline, agree.values["pairwise_f"],
                   agree.values["b_cubed_f"], diff.records_moved, diff.clusters["merged"], diff.clusters["split"]],
        "examples": [e.cluster for e in diff.examples],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1_000_000])
    ap.add_argument("--engines", nargs="+", default=["pandas", "sqlite", "spark"],
                    choices=["pandas", "spark", "postgres", "sqlite"])
    ap.add_argument("--child", nargs=2, metavar=("ENGINE", "N"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(_measure(args.child[0], int(args.child[1]))))
        return 0
    rows = []
    for n in args.sizes:
        for engine in args.engines:
            out = subprocess.run([sys.executable, __file__, "--child", engine, str(n)], capture_output=True, text=True)
            if out.returncode != 0:
                print(f"{engine} at {n:,}: failed\n{out.stderr[-2000:]}", file=sys.stderr)
                continue
            rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
            r = rows[-1]
            to_driver = (f"{r['bytes_to_driver']:>11,} bytes in {r['rows_to_driver']:>7,} rows (agreement + diff: "
                         f"{r['agreement_diff_bytes']:,} bytes in {r['agreement_diff_rows']} rows)"
                         if r["bytes_to_driver"] is not None else "-")
            print(f"{engine:>8} {n:>12,} records: {r['seconds']:7.2f} s, driver peak {r['peak_rss_mb']:7.0f} MB, "
                  f"to driver {to_driver}", flush=True)
    base = {r["records"]: r for r in rows if r["engine"] == "pandas"}
    print("\nratio to pandas at the same size, and the same values and diff examples as pandas:")
    for r in rows:
        want = base.get(r["records"])
        if r["engine"] != "pandas" and want is not None:
            same = all(abs(a - b) <= 1e-9 * max(1.0, abs(b)) for a, b in zip(r["values"], want["values"], strict=True))
            print(f"  {r['engine']} at {r['records']:,}: {r['seconds'] / want['seconds']:.2f}x, same values: {same}, "
                  f"same examples: {r['examples'] == want['examples']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
