"""The workbench's bulk actions in a real browser (issue 31): the repaint after 1,032 rows change.

    .venv/bin/python benchmarks/bench_workbench_bulk.py [--reps 15]

The project of ``bench_workbench_web.py``: one draw, a record of the largest predicted cluster of
PatentsView release 2021-12-30 (``fl:ju_ln:li-150``, 1,033 members, 1,032 of them tickable), served
on 127.0.0.1 (``erx.workbench``); Debian's chromium, driven by Playwright with the network cut,
opens it at 1280 × 900. Each action is timed inside the page with ``performance.now()``: from
just before the button's click until the next animation frame (``frame``: the script's work and
the sets changed, before the browser lays out and paints) and until a task after that frame
(``painted``: style, layout and paint of the frame done). Side by side, alternated, ``--reps``
times each:

* ``tick all shown``: the 1,032 rows ticked in one action (one repaint of the true cluster);
* ``undo``: the same 1,032 rows unticked by undo;
* ``one tick``: one row ticked by a click (the page before issue 31 had only this: 1,032
  clicks, each a repaint, for the same change);
* ``no change``: a click on a text that changes nothing: the floor of a frame on this machine
  at its present load (the load average is recorded with the results).

Target (issue 31): a 1,000-record bulk action repainted in ≤ 200 ms. Results go to
``benchmarks/results/workbench-bulk-<date>.json``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_workbench_common import CHROMIUM, CHROMIUM_ARGS, conditions, write_result  # noqa: E402
from bench_workbench_web import project  # noqa: E402 - the one-draw project of the largest cluster

TIMED = """(selector) => new Promise((done) => {
  const target = document.querySelector(selector);
  const t0 = performance.now();
  target.click();
  requestAnimationFrame(() => {
    const frame = performance.now() - t0;
    setTimeout(() => done({frame: frame, painted: performance.now() - t0,
                           ticked: document.querySelectorAll("#members tbody input:checked").length,
                           renders: Number(document.body.dataset.renders)}), 0);
  });
})"""


def _summary(values: list[float]) -> dict:
    ordered = sorted(values)
    return {"median": round(statistics.median(ordered), 1), "p90": round(ordered[int(0.9 * (len(ordered) - 1))], 1),
            "max": round(ordered[-1], 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=15)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    import er_expectations as erx

    runs: dict[str, list[dict]] = {"tick all shown": [], "undo": [], "one tick": [], "no change": []}
    with tempfile.TemporaryDirectory(prefix="erx-bench-bulk-") as tmp:
        folder, size = project(Path(tmp))
        bench = erx.workbench(folder)
        try:
            base = bench.url.split("/?token=")[0]
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                page.goto(bench.url)
                page.fill("#name", "bench")
                page.click("button[type=submit]")
                page.wait_for_url(base + "/")
                page.goto(f"{base}/draw/1")
                page.wait_for_selector("body[data-ready='1']")
                one = "#members tbody tr:not(.is-drawn) input"
                for i in range(args.reps + 1):  # the first round warms up
                    got = {"tick all shown": page.evaluate(TIMED, "#tick-shown"),
                           "undo": page.evaluate(TIMED, "#undo")}
                    assert got["tick all shown"]["ticked"] == size - 1 and got["undo"]["ticked"] == 0, got
                    got["one tick"] = page.evaluate(TIMED, one)
                    assert got["one tick"]["ticked"] == 1, got
                    page.evaluate(TIMED, one)  # untick it again
                    got["no change"] = page.evaluate(TIMED, "#shown")
                    if i:
                        for key, value in got.items():
                            runs[key].append(value)
                browser.close()
        finally:
            bench.stop()
    out: dict = {"members": size, "rows_changed": size - 1, "reps": args.reps, **conditions()}
    for key, values in runs.items():
        out[key] = {"frame_ms": _summary([v["frame"] for v in values]),
                    "painted_ms": _summary([v["painted"] for v in values])}
    single = out["one tick"]["painted_ms"]["median"]
    out["1,032 single ticks (the page before), estimated ms"] = round(single * (size - 1))
    out["bulk vs single ticks"] = round(single * (size - 1) / out["tick all shown"]["painted_ms"]["median"], 1)
    out["target_ms"] = 200
    out["ok"] = max(out["tick all shown"]["painted_ms"]["median"], out["undo"]["painted_ms"]["median"]) <= 200
    write_result("workbench-bulk", out)


if __name__ == "__main__":
    main()
