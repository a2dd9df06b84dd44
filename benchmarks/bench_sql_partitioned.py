"""A daily-partitioned SQL batch against its whole-table equivalent (issue 30 item 4).

GX's ``add_batch_definition_daily`` selects one day of a table holding many releases with a
filter such as ``EXTRACT(year FROM d) = 2021 AND EXTRACT(month FROM d) = 12 AND ...``, which a
planner estimates at one row; aggregates of the batch joined to one another then run as nested
loops. This script stacks the 15 bundled PatentsView releases into one table (``release_date``,
``mention_id``, ``inventor_id``, ``benchmark_id``, ``name``: 2.0M rows), also writes the release
of 2021-12-30 alone as its own table, and times, side by side in one run, what a checkpoint
aggregates per batch (the cluster sizes and name counts, SPEC 3; the benchmark contingency with
the name flags, SPEC 2.1/7; the labelling-universe counts, SPEC 14) on:

* ``whole``: the release's own table;
* ``daily``: the stacked table filtered as GX's daily batch filters it. The SQL engine copies
  such a batch once into a temporary table (``engines/sql/batch.py``); the copy is part of the
  time, made again on every repetition.

Ratio ``daily / whole``; target ≤ 2. Results in benchmarks/results/sql-partitioned-<date>.json.

    python benchmarks/bench_sql_partitioned.py --url postgresql+psycopg://... [--repeat 3]
    python benchmarks/bench_sql_partitioned.py --url sqlite:////tmp/stacked.sqlite
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import time
from pathlib import Path

import pandas as pd
import sqlalchemy as sa

from er_expectations.engines.sql import batch as batches
from er_expectations.engines.sql.release import SqlRelease

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "er_expectations" / "data" / "patentsview"
DAY = datetime.date(2021, 12, 30)


def stacked() -> tuple[pd.DataFrame, pd.DataFrame]:
    records = pd.read_parquet(DATA / "records.parquet", columns=["mention_id", "name_first", "name_last"])
    predictions = pd.read_parquet(DATA / "predictions.parquet")
    bench = pd.read_parquet(DATA / "benchmark.parquet")
    base = records.merge(bench, on="mention_id", how="left")
    base["name"] = base["name_first"].fillna("") + " " + base["name_last"].fillna("")
    frames = []
    for column in [c for c in predictions.columns if c.startswith("inventor_id_")]:
        day = datetime.datetime.strptime(column.rsplit("_", 1)[1], "%Y%m%d").date()
        part = base[["mention_id", "benchmark_id", "benchmark_version", "name"]].copy()
        part["inventor_id"] = predictions[column].to_numpy()
        part["release_date"] = day
        frames.append(part[part["inventor_id"].notna()])
    every = pd.concat(frames, ignore_index=True)
    return every, every[every["release_date"] == DAY].drop(columns="release_date")


def load(engine: sa.Engine) -> None:
    every, one = stacked()
    with engine.begin() as conn:
        for name in ("stacked", "one_release"):
            conn.execute(sa.text(f"DROP TABLE IF EXISTS {name}"))
    every.to_sql("stacked", engine, index=False, chunksize=50_000)
    one.to_sql("one_release", engine, index=False, chunksize=50_000)
    with engine.begin() as conn:
        if engine.dialect.name == "postgresql":
            conn.execute(sa.text("ANALYZE stacked"))
            conn.execute(sa.text("ANALYZE one_release"))
        else:
            conn.execute(sa.text("ANALYZE"))


def batch(engine: sa.Engine, kind: str):
    meta = sa.MetaData()
    if kind == "whole":
        return sa.Table("one_release", meta, autoload_with=engine)
    table = sa.Table("stacked", meta, autoload_with=engine)
    d = table.c.release_date
    if engine.dialect.name == "sqlite":  # GX writes the same filter with strftime on SQLite
        day = sa.and_(sa.func.strftime("%Y", d) == f"{DAY.year:04d}", sa.func.strftime("%m", d) == f"{DAY.month:02d}",
                      sa.func.strftime("%d", d) == f"{DAY.day:02d}")
    else:
        day = sa.and_(sa.extract("year", d) == DAY.year, sa.extract("month", d) == DAY.month,
                      sa.extract("day", d) == DAY.day)
    return sa.select(*[c for c in table.c if c.name != "release_date"]).where(day).subquery("batch")


def aggregate(engine: sa.Engine, selectable) -> dict:
    with engine.connect() as conn:
        release = SqlRelease.from_batch(selectable, connection=conn, prediction="inventor_id")  # as GX hands a batch over
        table = release.clustering_table(name="name")
        sample = release.benchmark_sample(reference="benchmark_id", name="name", known="benchmark_version")
    copied = release.batch is not None
    batches.release_all()  # the next repetition copies the batch again, as the next checkpoint run would
    return {"records": release.n_records, "clusters": release.n_clusters, "homonymous": table.n_homonymous_clusters,
            "benchmark_clusters": int(sample.labels.size), "added": int(sample.records_added), "copied": copied}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-load", action="store_true", help="reuse the tables of an earlier run")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    engine = sa.create_engine(args.url)
    if not args.no_load:
        started = time.perf_counter()
        load(engine)
        print(f"loaded in {time.perf_counter() - started:.1f} s", flush=True)
    times: dict[str, list[float]] = {"whole": [], "daily": []}
    answers = {}
    for _ in range(args.repeat):
        for kind in ("whole", "daily"):  # interleaved, side by side
            selectable = batch(engine, kind)
            started = time.perf_counter()
            answers[kind] = aggregate(engine, selectable)
            times[kind].append(time.perf_counter() - started)
            print(f"{kind:6s} {times[kind][-1]:8.2f} s  {answers[kind]}", flush=True)
    copied = {kind: answers[kind].pop("copied") for kind in answers}
    if answers["whole"] != answers["daily"]:
        raise SystemExit(f"the two batches disagree: {answers}")
    best = {k: min(v) for k, v in times.items()}
    result = {"date": datetime.date.today().isoformat(), "dialect": engine.dialect.name, "times_s": times,
              "best_s": best, "ratio_daily_over_whole": round(best["daily"] / best["whole"], 2),
              "answers": answers["whole"], "copied_to_temporary_table": copied, "target_ratio": 2.0,
              "load_average": [round(x, 2) for x in os.getloadavg()]}
    print(f"daily / whole = {result['ratio_daily_over_whole']}")
    out = args.out or ROOT / "benchmarks" / "results" / f"sql-partitioned-{engine.dialect.name}-{result['date']}.json"
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
