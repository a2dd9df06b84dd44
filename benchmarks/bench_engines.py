"""Scale-out benchmark: the same aggregation on pandas, Spark (local mode) and PostgreSQL.

For each (engine, records) the aggregation behind every check (the cluster-size table of
SPEC 3 and the benchmark sample of SPEC 2.1/4, then the estimates) runs in a fresh
subprocess, on synthetic records generated *inside* the engine (numpy for pandas,
``spark.range`` for Spark, ``generate_series`` for PostgreSQL), so the driver never holds
the record table unless the engine is pandas. Reported side by side, in one run:

- wall time of the aggregation (data generation excluded) and its ratio to pandas at the
  same size;
- the driver's peak memory: the Python process's peak resident set (``ru_maxrss``);
- the bytes brought back to the driver (pickled size of every row fetched).

- the aggregation again in the same process (warm: Spark's code generation and the
  database's caches done, as for a checkpoint's second release), and the engine's floor:
  one group-by of the prediction column in the same engine, timed after it.

Target (issue #11): driver memory that does not grow with the number of records, and
Spark at 10M within 3× of pandas.

    python benchmarks/bench_engines.py                      # pandas 10M, Spark and PostgreSQL 10M + 50M
    python benchmarks/bench_engines.py --sizes 1000000 --engines pandas sqlite
    python benchmarks/bench_engines.py --ids str --sizes 10000000 --engines pandas spark
    ER_BENCH_POSTGRES_URL=postgresql+psycopg://u:p@host/db python benchmarks/bench_engines.py

PostgreSQL needs a server (``ER_BENCH_POSTGRES_URL``, else ``ER_TEST_POSTGRES_URL``).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import resource
import subprocess
import sys
import time

#: Synthetic data: true clusters of 5 records; the prediction splits every 7th true cluster
#: in two and merges every 11th with its neighbour; about 1 true cluster in 500 is in the
#: benchmark (cluster ids hashed, so the benchmark is spread over the whole table).
TRUE_SIZE = 5
BENCH_MOD = 500
#: cluster ids: ``int`` (the default) or ``str`` ("c123", "t45": as text ids are stored);
#: set by ``--ids``
IDS = "int"


def pandas_frame(n: int):
    import numpy as np
    import pandas as pd

    i = np.arange(n, dtype=np.int64)
    true = i // TRUE_SIZE
    pred = np.where(true % 7 == 0, true * 2 + (i % 2), true * 2)
    pred = np.where(true % 11 == 0, (true + 1) * 2, pred)
    bench = ((true * 2654435761) % 2**32) % BENCH_MOD == 0
    ref = pd.array(np.where(bench, true, 0), dtype="Int64")
    ref[~bench] = pd.NA
    frame = pd.DataFrame({"record": i, "pred": pred, "ref": ref})
    if IDS == "str":  # text ids as a Parquet file reads them (pandas' default string dtype)
        frame["pred"] = pd.Series(np.char.add("c", pred.astype(str)), dtype="str")
        frame["ref"] = pd.Series(np.char.add("t", np.where(bench, true, 0).astype(str)), dtype="str").where(bench)
    return frame


def _sql_create(engine, n: int) -> str:
    import sqlalchemy as sa

    t = "(g / 5)"
    pred = (f"CASE WHEN {t} % 11 = 0 THEN ({t} + 1) * 2 WHEN {t} % 7 = 0 THEN {t} * 2 + (g % 2) "
            f"ELSE {t} * 2 END")
    ref = f"CASE WHEN (({t} * 2654435761) % 4294967296) % {BENCH_MOD} = 0 THEN {t} END"
    if IDS == "str":
        pred, ref = f"'c' || ({pred})", f"'t' || ({ref})"
    with engine.begin() as conn:
        conn.execute(sa.text("DROP TABLE IF EXISTS bench_records"))
        conn.execute(sa.text(f"CREATE TABLE bench_records AS SELECT g AS record, {pred} AS pred, {ref} AS ref "
                             f"FROM generate_series(0::bigint, {n - 1}::bigint) AS g"))
        conn.execute(sa.text("ANALYZE bench_records"))
    return "bench_records"


def spark_frame(n: int):
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F  # noqa: N812

    spark = (SparkSession.builder.master("local[2]").appName("bench-engines")
             .config("spark.driver.memory", "6g").config("spark.ui.enabled", "false")
             .config("spark.sql.shuffle.partitions", "8").getOrCreate())
    g = F.col("id")
    t = F.floor(g / TRUE_SIZE).cast("long")
    pred = (F.when(t % 11 == 0, (t + 1) * 2).when(t % 7 == 0, t * 2 + g % 2).otherwise(t * 2))
    ref = F.when(((t * 2654435761) % 4294967296) % BENCH_MOD == 0, t)
    if IDS == "str":
        pred, ref = F.concat(F.lit("c"), pred.cast("string")), F.concat(F.lit("t"), ref.cast("string"))
    df = spark.range(n).select(g.alias("record"), pred.alias("pred"), ref.alias("ref"))
    df = df.cache()
    df.count()  # materialise the generated table before timing the aggregation
    return df


def count_sql_fetches(fetched: list[int]) -> None:
    """Add the pickled size of every SQLAlchemy result read to the end (the SQL engine reads each
    of its results as a list of tuples) to ``fetched[0]`` (and its rows to ``fetched[1]`` when
    there is one)."""
    from sqlalchemy.engine import CursorResult

    original = CursorResult.__iter__

    def counting(self):
        rows = []
        for row in original(self):  # the SQL engine reads every result by iterating it
            rows.append(tuple(row))
            yield row
        fetched[0] += len(pickle.dumps(rows))
        if len(fetched) > 1:
            fetched[1] += len(rows)

    CursorResult.__iter__ = counting


def count_spark_fetches(df, fetched: list[int]) -> None:
    """Add the pickled size of every ``collect``/``first`` of Spark DataFrames to ``fetched[0]``
    (and their rows to ``fetched[1]`` when there is one)."""
    DataFrame = type(df)  # noqa: N806 - the concrete (classic) DataFrame class
    collect, first = DataFrame.collect, DataFrame.first

    def counting_collect(self):
        rows = collect(self)
        fetched[0] += len(pickle.dumps([tuple(r) for r in rows]))
        if len(fetched) > 1:
            fetched[1] += len(rows)
        return rows

    def counting_first(self):
        row = first(self)
        fetched[0] += len(pickle.dumps(tuple(row) if row is not None else None))
        if len(fetched) > 1:
            fetched[1] += row is not None
        return row

    DataFrame.collect, DataFrame.first = counting_collect, counting_first


def _floor(engine: str, data) -> float:
    """The engine's own floor, timed after the aggregation (warm): one group-by of the
    prediction column counted where the data lives (pandas: ``groupby(pred).size()``;
    Spark: ``groupBy(pred).count().count()``; SQL: ``count(*)`` of ``GROUP BY pred``). Every
    size table needs at least this pass."""
    t0 = time.perf_counter()
    if engine == "pandas":
        data.groupby("pred").size()
    elif engine == "spark":
        data.groupBy("pred").count().count()
    else:
        import sqlalchemy as sa

        engine_, table = data
        with engine_.connect() as conn:
            conn.execute(sa.text(f"SELECT count(*) FROM (SELECT pred FROM {table} GROUP BY pred) AS g")).all()
    return time.perf_counter() - t0


def _measure(engine: str, n: int) -> dict:
    """Runs in the subprocess: generate, aggregate, estimate; report the numbers."""
    from er_expectations.stats import estimate_metrics, summary_statistics

    fetched = [0]
    if engine == "pandas":
        from er_expectations.engines.pandas.release import PandasRelease

        df = pandas_frame(n)
        t0 = time.perf_counter()
        make = lambda: PandasRelease(df, prediction="pred")  # noqa: E731
    elif engine in ("postgres", "sqlite"):
        import sqlalchemy as sa

        from er_expectations.engines.sql import release as sql_engine

        url = (os.environ.get("ER_BENCH_POSTGRES_URL") or os.environ.get("ER_TEST_POSTGRES_URL")
               if engine == "postgres" else "sqlite://")
        engine_ = sa.create_engine(url)
        if engine == "sqlite":
            table = "bench_records"
            pandas_frame(n).to_sql(table, engine_, index=False, chunksize=500_000)
        else:
            table = _sql_create(engine_, n)
        count_sql_fetches(fetched)
        t0 = time.perf_counter()
        make = lambda: sql_engine.SqlRelease(engine_, table, prediction="pred")  # noqa: E731
    else:
        from er_expectations.engines.spark.release import SparkRelease

        df = spark_frame(n)
        count_spark_fetches(df, fetched)
        t0 = time.perf_counter()
        make = lambda: SparkRelease(df, prediction="pred")  # noqa: E731

    def aggregate():
        rel = make()
        stats = summary_statistics(rel.clustering_table())
        sample = rel.benchmark_sample(reference="ref")
        return stats, sample, estimate_metrics(sample, ["pairwise_precision", "pairwise_recall", "b_cubed_f"])

    stats, sample, est = aggregate()
    seconds = time.perf_counter() - t0
    sent = fetched[0]
    t0 = time.perf_counter()
    aggregate()  # again, warm (a checkpoint's second release in the same session)
    warm = time.perf_counter() - t0
    floor = _floor(engine, df if engine in ("pandas", "spark") else (engine_, table))
    return {
        "engine": engine, "records": n, "seconds": seconds, "warm_seconds": warm, "floor_seconds": floor,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "bytes_to_driver": sent if engine != "pandas" else None,
        "n_clusters": int(stats["n_clusters"]), "benchmark_clusters": int(len(sample.labels)),
        "pairwise_precision": est["pairwise_precision"].estimate,
        "pairwise_recall": est["pairwise_recall"].estimate,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000_000, 50_000_000])
    ap.add_argument("--engines", nargs="+", default=["pandas", "spark", "postgres"],
                    choices=["pandas", "spark", "postgres", "sqlite"])
    ap.add_argument("--pandas-max", type=int, default=10_000_000,
                    help="largest size run on pandas (it holds the table in memory)")
    ap.add_argument("--ids", choices=["int", "str"], default="int",
                    help="cluster ids: integers, or text as most ER outputs store them (default int)")
    ap.add_argument("--child", nargs=2, metavar=("ENGINE", "N"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    global IDS  # noqa: PLW0603 - the child's data generators read it
    IDS = args.ids
    if args.child:
        print(json.dumps(_measure(args.child[0], int(args.child[1]))))
        return 0
    rows = []
    for n in args.sizes:
        for engine in args.engines:
            if engine == "pandas" and n > args.pandas_max:
                continue
            out = subprocess.run([sys.executable, __file__, "--ids", args.ids, "--child", engine, str(n)],
                                 capture_output=True, text=True)
            if out.returncode != 0:
                print(f"{engine} at {n:,}: failed\n{out.stderr[-2000:]}", file=sys.stderr)
                continue
            rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
            r = rows[-1]
            print(f"{engine:>8} {n:>12,} records: {r['seconds']:7.2f} s (warm {r['warm_seconds']:.2f} s; "
                  f"one group-by: {r['floor_seconds']:.2f} s), "
                  f"driver peak {r['peak_rss_mb']:7.0f} MB, "
                  f"to driver {r['bytes_to_driver'] if r['bytes_to_driver'] is not None else '-':>9} bytes, "
                  f"P={r['pairwise_precision']:.6f} R={r['pairwise_recall']:.6f}", flush=True)
    base = {r["records"]: r["seconds"] for r in rows if r["engine"] == "pandas"}
    print("\nratio to pandas at the same size:")
    for r in rows:
        if r["engine"] != "pandas" and r["records"] in base:
            print(f"  {r['engine']} at {r['records']:,}: {r['seconds'] / base[r['records']]:.2f}x")
    print("warm, ratio to pandas warm and to the engine's own group-by of the prediction (its floor):")
    warm = {r["records"]: r["warm_seconds"] for r in rows if r["engine"] == "pandas"}
    for r in rows:
        to_pandas = f"{r['warm_seconds'] / warm[r['records']]:.2f}x pandas, " if r["records"] in warm else ""
        print(f"  {r['engine']} at {r['records']:,}: {to_pandas}{r['warm_seconds'] / r['floor_seconds']:.2f}x its group-by")
    agree = {(round(r["pairwise_precision"], 12), round(r["pairwise_recall"], 12)) for r in rows
             if r["records"] == min(x["records"] for x in rows)}
    print(f"\nestimates agree across engines at the smallest size: {len(agree) == 1}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
