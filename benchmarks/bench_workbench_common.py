"""What the workbench's benchmarks share (benchmarks/bench_workbench_*.py): the demo data, the
demo project, a signed-in HTTP client of a served project, timing helpers, Chromium's flags and
the conditions of a run (machine, load), so that each benchmark states only what it measures.

Not a benchmark itself: ``bench_workbench_targets.py``, ``bench_workbench_search.py``,
``bench_workbench_web.py`` and ``bench_workbench_bulk.py`` import it (run them from any folder:
they put ``benchmarks/`` on the path).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "er_expectations" / "data" / "patentsview"
RESULTS = ROOT / "benchmarks" / "results"
#: the demo's release (the prediction column) and the columns its draw page shows
RELEASE = "inventor_id_20211230"
ATTRIBUTES = ["name_first", "name_last", "block", "patent_date", "city", "country", "assignee_organization",
              "patent_title"]
#: Debian's chromium for Playwright, the network cut (every host unresolvable but the server's own)
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
                 "--disable-component-update", "--disable-extensions", "--disable-sync",
                 "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE localhost , EXCLUDE 127.0.0.1"]


def demo_project(folder: Path, *, sample: Path | None = None, double_label_share: float = 0.0) -> Path:
    """Make the demo labelling project in ``folder`` (the bundled PatentsView records, release
    2021-12-30, the 401 demo draws unless ``sample`` names another worksheet); returns ``folder``."""
    from er_expectations.labelling.project import init_project

    init_project(folder, records=DATA / "records.parquet", predictions=DATA / "predictions.parquet",
                 record_id="mention_id", prediction=RELEASE, name=["name_first", "name_last"], block="block",
                 attributes=ATTRIBUTES, sample=sample or DATA / "labels.parquet",
                 double_label_share=double_label_share).close()
    return folder


def http_client(bench, name: str = "bench"):
    """A keep-alive HTTP client of the served project ``bench`` (``erx.workbench``): the token
    link opened once (its cookie kept) and signed in as ``name``; returns (client, base URL)."""
    import httpx2 as httpx

    base = bench.url.split("/?token=")[0]
    client = httpx.Client(base_url=base, follow_redirects=False, timeout=120)
    client.get(bench.url)
    client.post("/signin", content=f"name={name}",
                headers={"Origin": base, "Content-Type": "application/x-www-form-urlencoded"})
    return client, base


def ms(values: list[float]) -> dict:
    """p50, p95 and max of durations in seconds, in milliseconds, and their count."""
    a = np.asarray(values) * 1000.0
    return {"p50": round(float(np.percentile(a, 50)), 2), "p95": round(float(np.percentile(a, 95)), 2),
            "max": round(float(a.max()), 2), "n": len(values)}


def timed(call, reps: int) -> list[float]:
    """``call()`` once to warm up, then ``reps`` timed calls (seconds each)."""
    call()
    out = []
    for _ in range(reps):
        t = time.perf_counter()
        call()
        out.append(time.perf_counter() - t)
    return out


def conditions() -> dict:
    """The run's conditions, to keep beside its numbers: the machine, the load (1, 5 and 15 min,
    as ``uptime`` shows it: the machine is shared) and the time."""
    return {"machine": platform.platform(), "cpus": os.cpu_count(),
            "load_average": [round(x, 2) for x in os.getloadavg()],
            "when": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")}


def write_result(name: str, out: dict) -> Path:
    """Print ``out`` and write it to ``benchmarks/results/<name>-<date>.json``."""
    print(json.dumps(out, indent=2))
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}-{dt.date.today().isoformat()}.json"
    path.write_text(json.dumps(out, indent=2) + "\n")
    return path
