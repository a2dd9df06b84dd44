"""The DuckDB engine's name-statistics query against a rewrite by min and max (issue 32 item 3).

A study, not a timed test: the query that keeps the DuckDB engine above 1.5x its floor
(``benchmarks/README.md``, "DuckDB at scale") timed beside one rewrite, on the synthetic release
of ``bench_duckdb_scale.py``, interleaved three times in one process, the fastest of each:

- the engine's query, sizes known (``DuckDbRelease._name_counts``: the distinct (cluster, name)
  pairs, a semi-join to the names of more than one cluster) and sizes unknown (sizes and names
  together, as a GX validation asks);
- the rewrite: a name is shared when its min and max predicted cluster differ, a cluster varied
  when its min and max name differ; two group-bys of the release like the floor's, and a
  semi-join (``IN``) or a left join to the shared names; with the sizes too (``full``);
- the floor's two queries.

The counts (named, varied, homonymous clusters) of every form are printed; they must agree.

    python benchmarks/studies/duckdb_name_statistics.py --size 1e7 --workdir .scratch
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent  # benchmarks/studies/
sys.path[:0] = [str(HERE.parent), str(HERE.parent.parent)]

from bench_duckdb_scale import TABLE, _size, generate  # noqa: E402

SHARED = (f"SELECT name FROM {TABLE} WHERE pred IS NOT NULL AND name IS NOT NULL "
          "GROUP BY name HAVING min(pred) <> max(pred)")
MINMAX_IN = f"""WITH shared AS ({SHARED})
SELECT count(*) FILTER (WHERE k > 0), count(*) FILTER (WHERE lo <> hi), coalesce(sum(h), 0) FROM (
  SELECT count(name) AS k, min(name) AS lo, max(name) AS hi,
         max(CASE WHEN name IN (SELECT name FROM shared) THEN 1 ELSE 0 END) AS h
  FROM {TABLE} WHERE pred IS NOT NULL GROUP BY pred)"""
MINMAX_JOIN = f"""WITH shared AS ({SHARED})
SELECT count(*) FILTER (WHERE k > 0), count(*) FILTER (WHERE lo <> hi), coalesce(sum(h), 0) FROM (
  SELECT count(r.name) AS k, min(r.name) AS lo, max(r.name) AS hi,
         max(CASE WHEN s.name IS NULL THEN 0 ELSE 1 END) AS h
  FROM {TABLE} r LEFT JOIN shared s ON r.name = s.name WHERE r.pred IS NOT NULL GROUP BY r.pred)"""
MINMAX_FULL = f"""WITH shared AS ({SHARED})
SELECT m, count(*), count(*) FILTER (WHERE k > 0), count(*) FILTER (WHERE lo <> hi), coalesce(sum(h), 0) FROM (
  SELECT count(*) AS m, count(name) AS k, min(name) AS lo, max(name) AS hi,
         max(CASE WHEN name IN (SELECT name FROM shared) THEN 1 ELSE 0 END) AS h
  FROM {TABLE} WHERE pred IS NOT NULL GROUP BY pred) GROUP BY m"""
FLOOR_GROUP_BY = (f"SELECT m, count(*) FROM (SELECT pred, count(*) AS m FROM {TABLE} WHERE pred IS NOT NULL "
                  "GROUP BY pred) GROUP BY m")
FLOOR_NAMES = f"SELECT count(DISTINCT name) FROM {TABLE}"


def measure(path: Path, rounds: int = 3) -> dict:
    import sqlalchemy as sa

    from er_expectations.engines.duckdb.release import DuckDbRelease

    bind = sa.create_engine(f"duckdb:///{path}")
    table = sa.table(TABLE, *[sa.column(c) for c in ("record", "pred", "ref", "name")])
    best: dict[str, float] = {}
    counts: dict[str, list[int]] = {}

    def timed(key: str, call: Any, before: Any = None) -> None:
        arg = before() if before is not None else None
        started = time.perf_counter()
        value = call(arg)
        best[key] = min(best.get(key, float("inf")), time.perf_counter() - started)
        if value is not None:
            counts[key] = [int(v) for v in value]

    def engine(release: Any) -> tuple:
        c = release.clustering_table(name="name")
        return c.n_named_clusters, c.n_varied_clusters, c.n_homonymous_clusters

    def fresh() -> Any:
        return DuckDbRelease(bind, table, prediction="pred")

    def sized() -> Any:
        release = fresh()
        release.size_histogram()
        return release

    load = [round(os.getloadavg()[0], 2)]
    with bind.connect() as conn:
        def rows(sql: str) -> list[tuple]:
            return [tuple(r) for r in conn.execute(sa.text(sql)).fetchall()]

        for _ in range(rounds):
            timed("floor_group_by", lambda _: rows(FLOOR_GROUP_BY) and None)
            timed("floor_names", lambda _: rows(FLOOR_NAMES) and None)
            timed("engine_sizes_known", engine, sized)
            timed("engine_sizes_unknown", engine, fresh)
            timed("minmax_in", lambda _: rows(MINMAX_IN)[0])
            timed("minmax_join", lambda _: rows(MINMAX_JOIN)[0])
            timed("minmax_full", lambda _: [sum(r[i] for r in rows(MINMAX_FULL)) for i in (2, 3, 4)])
    bind.dispose()
    load.append(round(os.getloadavg()[0], 2))
    return {"best_s": {k: round(v, 3) for k, v in best.items()}, "counts": counts, "load_average": load}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=_size, default=1_000_000, help="records (default 1e6)")
    parser.add_argument("--workdir", type=Path, help="where the DuckDB file goes (default: a temporary folder)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.workdir) as folder:
        path = Path(folder) / "release.duckdb"
        generate(path, args.size)
        result = {"records": args.size, **measure(path)}
    assert len({tuple(v) for v in result["counts"].values()}) == 1, result["counts"]
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
