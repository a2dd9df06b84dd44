"""Draw charts in worker processes while the run goes on (vl-convert holds the GIL).

vl-convert draws one chart at a time and holds the GIL while it does (about 60 ms a chart), so
the charts of a run's Data Docs cost the run their whole drawing time, in series. A
:class:`ChartPool` hands Vega-Lite specifications to worker processes
(:mod:`.chart_worker`, standard library and vl-convert only) as soon as they are known, and
gives back a :class:`~concurrent.futures.Future` per chart: its SVG, or ``None`` when it could
not be drawn there (the worker did not start, died, or refused the chart): the caller then
draws that chart itself. The workers write nothing; closing the pool (or the end of the parent
process, which closes their stdin) ends them.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

__all__ = ["ChartPool", "default_workers"]

#: The worker script, run by the interpreter of this process without its folder on sys.path.
WORKER = Path(__file__).with_name("chart_worker.py")


def default_workers() -> int:
    """One worker per core the run leaves free, at most two, at least one: the run itself keeps
    a core busy while the charts are drawn, so on two cores a second worker would take CPU time
    from the validation on the critical path (one worker draws the demo's 55 charts, about
    3.3 s, well within the 8 s of validating its releases)."""
    return max(1, min(2, (os.cpu_count() or 1) - 1))


class ChartPool:
    """Worker processes drawing Vega-Lite specifications as SVG; started with the first chart.

    ``command`` replaces the worker's command line (tests). Each worker is driven by a thread
    of this process that sends it one chart and waits for its answer (waiting releases the
    GIL); a worker that fails is not used again, and when none is left every chart not drawn
    yet resolves to ``None``.
    """

    def __init__(self, workers: int | None = None, *, command: Sequence[str] | None = None) -> None:
        self.workers = max(1, workers if workers is not None else default_workers())
        self.command = list(command) if command else [sys.executable, "-P", str(WORKER)]
        self._jobs: queue.SimpleQueue[tuple[str, Future] | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._processes: list[subprocess.Popen] = []
        self._lock = threading.Lock()
        self._alive = 0
        self._closed = False
        #: charts drawn by the workers, and charts they gave back undrawn
        self.drawn = 0
        self.failed = 0

    def submit(self, spec: dict[str, Any]) -> Future:
        """A future of the SVG of ``spec`` (``None``: not drawn, draw it yourself)."""
        future: Future = Future()
        try:
            text = json.dumps(spec, ensure_ascii=True)
        except (TypeError, ValueError):  # not JSON: the worker cannot receive it
            future.set_result(None)
            return future
        with self._lock:
            if self._closed or (self._threads and self._alive == 0):
                future.set_result(None)
                return future
            if not self._threads:
                self._start()
            self._jobs.put((text, future))
        return future

    def _start(self) -> None:
        self._alive = self.workers
        for i in range(self.workers):
            thread = threading.Thread(target=self._drive, name=f"er-chart-worker-{i}", daemon=True)
            self._threads.append(thread)
            thread.start()

    def _spawn(self) -> subprocess.Popen | None:
        try:
            process = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       stderr=subprocess.DEVNULL, text=True, encoding="utf-8",
                                       cwd=tempfile.gettempdir())
        except OSError:
            return None
        with self._lock:
            self._processes.append(process)
        return process

    def _drive(self) -> None:
        """One worker: its charts in turn, until the pool closes or the worker fails."""
        process = self._spawn()
        number = 0
        try:
            while process is not None:
                job = self._jobs.get()
                if job is None:
                    return
                text, future = job
                number += 1
                svg = _ask(process, number, text)
                if svg is None:
                    self.failed += 1
                    future.set_result(None)
                    return
                self.drawn += 1
                future.set_result(svg)
        finally:
            with self._lock:
                self._alive -= 1
                last = self._alive == 0
            if process is not None:
                _end(process)
            if last:  # nobody left to draw the charts still waiting
                self._drain()

    def _drain(self) -> None:
        while True:
            try:
                job = self._jobs.get_nowait()
            except queue.Empty:
                return
            if job is not None:
                job[1].set_result(None)

    def close(self) -> None:
        """End the workers: charts not drawn yet resolve to ``None``."""
        with self._lock:
            self._closed = True
            threads = list(self._threads)
            processes = list(self._processes)
        self._drain()
        for _ in threads:
            self._jobs.put(None)
        for process in processes:
            _end(process)
        for thread in threads:
            thread.join(timeout=5)
        self._drain()

    def __enter__(self) -> ChartPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _ask(process: subprocess.Popen, number: int, text: str) -> str | None:
    """The worker's SVG of the specification ``text``, or None (refused, or the worker failed)."""
    try:
        process.stdin.write(f'{{"id": {number}, "spec": {text}}}\n')  # type: ignore[union-attr]
        process.stdin.flush()  # type: ignore[union-attr]
        answer = json.loads(process.stdout.readline())  # type: ignore[union-attr]
    except (OSError, ValueError):
        return None
    svg = answer.get("svg") if isinstance(answer, dict) and answer.get("id") == number else None
    return svg if isinstance(svg, str) else None


def _end(process: subprocess.Popen) -> None:
    """Close the worker's stdin (it ends by itself), kill it if it does not."""
    with contextlib.suppress(OSError, ValueError):
        process.stdin.close()  # type: ignore[union-attr]
    try:
        process.wait(timeout=2)
    except subprocess.TimeoutExpired:
        process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=2)
    with contextlib.suppress(OSError, ValueError):
        process.stdout.close()  # type: ignore[union-attr]

