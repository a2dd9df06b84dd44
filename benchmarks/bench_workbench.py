"""The labelling workbench (issue 19): record search and saving a decision.

    .venv/bin/python benchmarks/bench_workbench.py                     # PatentsView search, saves
    .venv/bin/python benchmarks/bench_workbench.py --synthetic 1e7     # also a 10M-record names table

Search (``RecordSearch``): the names of the records (PatentsView: name_first + name_last,
133,541 records) are indexed once (build time); then ``--queries`` (300) names of random
records, each with one typo (two letters transposed, a letter dropped, the name order
swapped or the accents stripped), are searched with ``near=`` another random record, as the
page does. Reported: p50/p95/max of the search time, and the share of queries whose record
is among the 20 hits (typo recall). Side by side, the scan the index avoids: rapidfuzz's
``process.extract`` of the query over every distinct name (one C++ pass), timed on the same
queries (100 over PatentsView, 20 over a synthetic table); ratio = search p95 / scan p95.

Save (``LabelStore.save``): ``--saves`` (500) decisions on a 1,000-draw store (WAL,
synchronous=FULL: one fsync'd transaction each), each removing 35 ids (the median
PatentsView cluster size); side by side, a bare SQLite insert + commit of the same JSON in
the same folder with the same settings. Ratio = save p95 / bare p95.

QC (no target): ``check_draw`` (SPEC 9 on the labels with one draw's decision) and
``earlier_answer`` on the demo project (401 PatentsView draws labelled, release 2021-12-30),
100 draws.

Targets (issue 19, absolute, on this 2-core machine): search p95 ≤ 50 ms over PatentsView;
≤ 250 ms over 10M synthetic records after a build ≤ 2 min; save p95 ≤ 50 ms.
Results go to ``benchmarks/results/workbench-<date>.json``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

# synthetic and bench_core: modules of benchmarks/ (the folder of the script is on sys.path)
import synthetic
from bench_core import environment

from er_expectations.core.io import atomic_write_text
from er_expectations.labelling.project import init_project
from er_expectations.labelling.qc import check_draw, earlier_answer
from er_expectations.labelling.search import RecordSearch, name_tokens
from er_expectations.labelling.store import Decision, LabelStore

HERE = Path(__file__).resolve().parent
DATA = [HERE.parent / "er_expectations" / "data" / "patentsview", HERE.parents[1] / "shared" / "data" / "patentsview"]


def percentiles(times: list[float]) -> dict[str, float]:
    ms = 1000 * np.asarray(times)
    return {"p50_ms": round(float(np.percentile(ms, 50)), 2), "p95_ms": round(float(np.percentile(ms, 95)), 2),
            "max_ms": round(float(ms.max()), 2)}


def with_typo(name: str, rng: np.random.Generator) -> str:
    """One typo: two letters transposed, a letter dropped, the name order swapped, accents stripped."""
    kind = int(rng.integers(4))
    tokens = name.split()
    if kind == 2 and len(tokens) > 1:
        return ", ".join([tokens[-1], *tokens[:-1]])
    if kind == 3:
        return " ".join(name_tokens(name))
    letters = [i for i, c in enumerate(name) if c.isalpha()]
    if len(letters) < 4:
        return name
    i = letters[int(rng.integers(1, len(letters) - 1))]
    if kind == 0 and i + 1 < len(name):
        return name[:i] + name[i + 1] + name[i] + name[i + 2:]
    return name[:i] + name[i + 1:]


def bench_search(frame: pd.DataFrame, *, record_id: str, name: str, block: str | None, prediction: str | None,
                 queries: int, seed: int, scan: int) -> dict:
    from rapidfuzz import fuzz, process

    t = time.perf_counter()
    index = RecordSearch.build(frame, record_id=record_id, name=name, block=block, prediction=prediction)
    build = time.perf_counter() - t
    rng = np.random.default_rng(seed)
    named = np.flatnonzero(frame[name].notna().to_numpy())
    picks = rng.choice(named, size=queries)
    nears = rng.choice(len(frame), size=queries)
    ids = frame[record_id].to_numpy()
    names = frame[name].to_numpy(dtype=object)
    texts = [with_typo(str(names[i]), rng) for i in picks]
    index.search(texts[0], near=ids[nears[0]])  # warm-up (the id lookup of near= is built once)
    times, found = [], 0
    for q, want, near in zip(texts, picks, nears, strict=True):
        t = time.perf_counter()
        hits = index.search(q, near=ids[near], limit=20)
        times.append(time.perf_counter() - t)
        found += any(h.name == names[want] for h in hits)
    out = {"records": len(frame), "build_s": round(build, 2), **percentiles(times),
           "typo_recall_at_20": round(found / queries, 3), "queries": queries}
    if scan:
        distinct = pd.unique(frame[name].dropna()).tolist()
        scan_times = []
        for q in texts[:scan]:
            t = time.perf_counter()
            process.extract(q, distinct, scorer=fuzz.token_sort_ratio, limit=20)
            scan_times.append(time.perf_counter() - t)
        out["scan"] = percentiles(scan_times)
        out["ratio_p95"] = round(out["p95_ms"] / out["scan"]["p95_ms"], 3)
    return out


def bench_save(saves: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    with tempfile.TemporaryDirectory(dir=HERE) as folder:
        store = LabelStore.create(Path(folder) / "workbench.sqlite", id_kind="text",
                                  draws=[(i, f"r{i}", f"c{i}", False) for i in range(1, 1001)])
        removed = [[f"US{rng.integers(10**6, 10**7)}-{k}" for k in range(35)] for _ in range(saves)]
        times = []
        for i, ids in enumerate(removed):
            draw = 1 + i % 1000
            current = store.decision(draw, "ann")
            t = time.perf_counter()
            store.save(draw, "ann", Decision(removed=ids, note="bench"), expected_version=current.version if current else 0)
            times.append(time.perf_counter() - t)
        store.close()
        bare = sqlite3.connect(Path(folder) / "bare.sqlite", isolation_level=None)
        bare.execute("PRAGMA journal_mode = WAL")
        bare.execute("PRAGMA synchronous = FULL")
        bare.execute("CREATE TABLE t (draw INTEGER, labeller TEXT, removed TEXT, PRIMARY KEY (draw, labeller))")
        bare_times = []
        for i, ids in enumerate(removed):
            t = time.perf_counter()
            bare.execute("BEGIN IMMEDIATE")
            bare.execute("INSERT OR REPLACE INTO t VALUES (?, ?, ?)", (1 + i % 1000, "ann", json.dumps(ids)))
            bare.execute("COMMIT")
            bare_times.append(time.perf_counter() - t)
        bare.close()
    out = {"saves": saves, **percentiles(times), "bare": percentiles(bare_times)}
    out["ratio_p95"] = round(out["p95_ms"] / out["bare"]["p95_ms"], 3)
    return out


def bench_qc(draws: int) -> dict:
    """check_draw and earlier_answer on the demo project: the 401 demo labels saved, the records
    read once (as the server does), then ``draws`` draws checked."""
    folder = next((d for d in DATA if (d / "labels.parquet").is_file()), None)
    if folder is None:
        return {"skipped": "no demo labels"}
    labels = pd.read_parquet(folder / "labels.parquet")
    with tempfile.TemporaryDirectory(dir=HERE) as tmp:
        project = init_project(Path(tmp) / "demo", records=folder / "records.parquet",
                               predictions=folder / "predictions.parquet", record_id="mention_id",
                               prediction="inventor_id_20211230", name=["name_first", "name_last"], block="block",
                               sample=folder / "labels.parquet", double_label_share=0)
        for row in labels.itertuples():
            project.store.save(row.draw, "demo", Decision(removed=list(row.removed), added=list(row.added)),
                               expected_version=0)
        project.records()
        check, earlier = [], []
        for draw in labels["draw"].tolist()[:draws]:
            t = time.perf_counter()
            check_draw(project, project.store, draw)
            check.append(time.perf_counter() - t)
            t = time.perf_counter()
            earlier_answer(project, project.store, draw)
            earlier.append(time.perf_counter() - t)
        project.close()
    return {"draws_checked": len(check), "labelled_draws": len(labels), "check_draw": percentiles(check),
            "earlier_answer": percentiles(earlier)}


def patentsview() -> pd.DataFrame:
    folder = next((d for d in DATA if (d / "records.parquet").is_file()), None)
    if folder is None:
        raise SystemExit(f"PatentsView records not found in {', '.join(map(str, DATA))}")
    records = pd.read_parquet(folder / "records.parquet", columns=["mention_id", "name_first", "name_last", "block"])
    pred = pd.read_parquet(folder / "predictions.parquet", columns=["mention_id", "inventor_id_20211230"])
    frame = records.merge(pred, on="mention_id", how="left")
    frame["name"] = (frame["name_first"].fillna("") + " " + frame["name_last"].fillna("")).str.strip()
    return frame


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--saves", type=int, default=500)
    parser.add_argument("--synthetic", type=float, nargs="*", default=[], help="sizes of synthetic names tables")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    results: dict = {"environment": environment(), "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")}
    pv = patentsview()
    results["patentsview"] = bench_search(pv, record_id="mention_id", name="name", block="block",
                                          prediction="inventor_id_20211230", queries=args.queries, seed=args.seed,
                                          scan=100)
    print("search, PatentsView:", json.dumps(results["patentsview"]), flush=True)
    results["save"] = bench_save(args.saves, args.seed)
    print("save:", json.dumps(results["save"]), flush=True)
    results["qc"] = bench_qc(100)
    print("qc, demo project:", json.dumps(results["qc"]), flush=True)
    for size in args.synthetic:
        n = int(size)
        t = time.perf_counter()
        frame = synthetic.load_release(n, shape="patentsview")
        frame["block"] = frame["name"].str.split(" ").str[-1]
        loaded = time.perf_counter() - t
        key = f"synthetic_{n:.0e}"
        results[key] = bench_search(frame, record_id="mention_id", name="name", block="block",
                                    prediction="inventor_id", queries=args.queries, seed=args.seed, scan=20)
        results[key]["distinct_names"] = int(frame["name"].nunique())
        results[key]["load_s"] = round(loaded, 1)
        print(f"search, {n:,} synthetic records:", json.dumps(results[key]), flush=True)
    import resource

    results["max_rss_gib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2)
    out = Path(args.out) if args.out else HERE / "results" / f"workbench-{dt.date.today().isoformat()}.json"
    atomic_write_text(out, json.dumps(results, indent=2) + "\n")
    print(f"written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
