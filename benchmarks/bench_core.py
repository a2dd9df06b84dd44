"""Benchmark of the core API: erx.summarize + erx.estimate.

    python benchmarks/bench_core.py [--sizes 1e6 1e7] [--kinds int str] [--quick]
                                    [--shape zipf2|patentsview] [--no-patentsview]
                                    [--many-names-sizes 2e6] [--name-dtypes str object]
                                    [--profile] [--out PATH]

For each size and id kind, in the same process and on the same DataFrame:

(a) baseline: one ``df.groupby(prediction).size()``, best of ``--repeat`` (3);
(b) ``erx.summarize(df, cluster=prediction, name="name")`` followed by
    ``erx.estimate(df, prediction, reference, draws="draws", name="name")`` with
    all metrics, best of ``--repeat``;
ratio = (b) / (a). Absolute times depend on the machine; the ratio much less.

Many names (``--many-names-sizes``, default 2e6): the same measurement on releases where
half of the records carry a name of their own (``record_names=0.5``), so that the large
benchmark clusters hold thousands of records and up to ~1,500 distinct names each
(~65,000 distinct benchmark names, ~1.2M in the population at 2M records), for each id
kind and each name dtype of ``--name-dtypes`` (pyarrow ``str``, ``object``, ``category``).

Peak memory of (b) above its input, in separate runs:
- tracemalloc peak (numpy and pandas report their buffers to it);
- arrow peak: pyarrow's allocations (string columns) are not seen by
  tracemalloc, so the pool's allocated bytes are sampled every millisecond;
- RSS: the rise of the process's peak resident set (VmHWM, reset through
  /proc/self/clear_refs) over the resident set before the call.
"peak" = tracemalloc peak + arrow peak; the ratio divides it by the memory of
the input columns (``df[cols].memory_usage(deep=True)``).

PatentsView: the 15 releases of shared/data/patentsview (predictions joined
with the benchmark on mention_id; name = name_first + " " + name_last), total
time of summarize + estimate over all releases, file reading excluded: the
first (cold) pass and the best of ``--repeat`` passes.

Targets: ratio <= 5 at 10M records and, for the many-names shape, from 1M records;
peak <= 3 x input; PatentsView < 2 s.
Results are printed and written to benchmarks/results/core-<date>.json.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import datetime as dt
import gc
import io
import json
import math
import os
import platform
import pstats
import sys
import tempfile
import threading
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import synthetic  # benchmarks/synthetic.py (the folder of the script is on sys.path)

HERE = Path(__file__).resolve().parent

RESULTS_DIR = HERE / "results"
PATENTSVIEW_DIR = synthetic.PATENTSVIEW_DIR

PREDICTION = synthetic.PREDICTION
REFERENCE = synthetic.REFERENCE
DRAWS = synthetic.DRAWS
NAME = synthetic.NAME
INPUT_COLUMNS = [PREDICTION, REFERENCE, DRAWS, NAME]

TARGET_RATIO = 5.0  # at 10M records
TARGET_RATIO_AT = 10_000_000
TARGET_RATIO_MANY_NAMES_AT = 1_000_000
MANY_NAMES = 0.5  # share of records with a name of their own in the many-names shape
TARGET_MEMORY = 3.0  # peak / input columns
TARGET_PATENTSVIEW_S = 2.0

Summarize = Callable[..., pd.Series]
Estimate = Callable[..., pd.DataFrame]


# --------------------------------------------------------------------------- measuring


def best_of(fn: Callable[[], object], repeat: int) -> tuple[float, list[float]]:
    """Best wall time of ``repeat`` calls (garbage collected before each)."""
    times = []
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times), times


def interleaved_best_of(
    fns: dict[str, Callable[[], object]], repeat: int
) -> tuple[dict[str, float], dict[str, list[float]]]:
    """Best time of each function, measured in ``repeat`` interleaved rounds.

    Interleaving (a, b, a, b, ...) exposes the functions to the same background load,
    which keeps their ratios meaningful on a shared machine.
    """
    runs: dict[str, list[float]] = {key: [] for key in fns}
    for _ in range(repeat):
        for key, fn in fns.items():
            gc.collect()
            t0 = time.perf_counter()
            fn()
            runs[key].append(time.perf_counter() - t0)
    return {key: min(times) for key, times in runs.items()}, runs


def _proc_status_kib(field: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _reset_peak_rss() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


class _ArrowSampler:
    """Peak of pyarrow's allocated bytes above the start value, sampled every ms."""

    def __init__(self, interval: float = 0.001):
        self.interval = interval
        self.base = pa.total_allocated_bytes()
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, pa.total_allocated_bytes() - self.base)
            time.sleep(self.interval)

    def __enter__(self) -> _ArrowSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, pa.total_allocated_bytes() - self.base)


def measure_memory(fn: Callable[[], object]) -> dict:
    """Peak memory of one call of ``fn`` above what was allocated before it."""
    gc.collect()
    tracemalloc.start()
    tracemalloc.reset_peak()
    before, _ = tracemalloc.get_traced_memory()
    with _ArrowSampler() as arrow:
        result = fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del result
    gc.collect()

    rss = None
    rss_before = _proc_status_kib("VmRSS")
    if rss_before is not None and _reset_peak_rss():
        fn()
        hwm = _proc_status_kib("VmHWM")
        if hwm is not None:
            rss = (hwm - rss_before) * 1024
    gc.collect()
    return {
        "tracemalloc_peak_bytes": int(peak - before),
        "arrow_peak_bytes": int(arrow.peak),
        "peak_bytes": int(peak - before + arrow.peak),
        "rss_peak_bytes": rss,
    }


def profile_call(fn: Callable[[], object], path: Path, top: int = 35) -> str:
    """cProfile one call; write the report to ``path`` and return its head."""
    prof = cProfile.Profile()
    prof.enable()
    fn()
    prof.disable()
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)
    stats.sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(top)
    text = out.getvalue()
    _write_atomic(path, text)
    return text


# --------------------------------------------------------------------------- the API


def _erx():
    import er_expectations as erx

    if not (hasattr(erx, "summarize") and hasattr(erx, "estimate")):
        raise RuntimeError("er_expectations has no summarize/estimate yet")
    return erx


def all_metrics(erx) -> list[str] | None:
    """The full metric list if the package publishes one (else the default: all)."""
    for attr in ("METRICS", "ALL_METRICS", "metrics"):
        value = getattr(erx, attr, None)
        if isinstance(value, list | tuple) and value and all(isinstance(v, str) for v in value):
            return list(value)
        if isinstance(value, dict) and value:
            return list(value)
    return None


def metrics_without_names(erx, metrics: list[str] | None) -> list[str] | None:
    """The metrics of ``metrics`` that need no name column (for the no-name diagnostic)."""
    if metrics is None:
        return None
    table = getattr(erx, "METRICS", None)
    if not isinstance(table, dict):
        return None
    return [m for m in metrics if not getattr(table.get(m), "needs_names", False)]


def core_call(
    df: pd.DataFrame,
    summarize: Summarize,
    estimate: Estimate,
    *,
    prediction: str,
    reference: str,
    name: str | None,
    draws: str | None,
    metrics: list[str] | None,
) -> Callable[[], tuple[pd.Series, pd.DataFrame]]:
    def run():
        summary = summarize(df, cluster=prediction, name=name)
        kwargs = {"prediction": prediction, "reference": reference, "name": name}
        if draws is not None:
            kwargs["draws"] = draws
        if metrics is not None:
            kwargs["metrics"] = metrics
        estimates = estimate(df, **kwargs)
        return summary, estimates

    return run


def _jsonable(obj):
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if obj is None or isinstance(obj, bool | int | float | str):
        return obj
    with contextlib.suppress(TypeError, ValueError):
        if pd.isna(obj):
            return None
    return str(obj)


def _estimates_record(estimates: pd.DataFrame) -> list[dict]:
    """A compact, JSON-safe copy of the estimate table (for sanity checks)."""
    table = estimates.reset_index() if not isinstance(estimates.index, pd.RangeIndex) else estimates
    return _jsonable(table.to_dict(orient="records"))


# --------------------------------------------------------------------------- synthetic


def exact_pairwise(df: pd.DataFrame) -> dict:
    """Exact pairwise precision/recall of the synthetic prediction (from the truth)."""
    both = df.groupby([synthetic.TRUTH, PREDICTION], sort=False).size().to_numpy(np.float64)
    true = df.groupby(synthetic.TRUTH, sort=False).size().to_numpy(np.float64)
    pred = df.groupby(PREDICTION, sort=False).size().to_numpy(np.float64)
    tp = float((both * (both - 1)).sum())
    return {
        "pairwise_precision": tp / float((pred * (pred - 1)).sum()),
        "pairwise_recall": tp / float((true * (true - 1)).sum()),
    }


def bench_synthetic(
    n_records: int,
    id_kind: str,
    summarize: Summarize,
    estimate: Estimate,
    *,
    metrics: list[str] | None,
    metrics_noname: list[str] | None = None,
    diagnostics: bool = True,
    repeat: int,
    shape: str,
    cache: bool,
    memory: bool,
    profile_dir: Path | None,
    log: Callable[[str], None],
    record_names: float = 0.0,
    name_dtype: str = "str",
) -> dict:
    t0 = time.perf_counter()
    df = synthetic.load_release(
        n_records,
        seed=0,
        id_kind=id_kind,
        shape=shape,
        record_names=record_names,
        name_dtype=name_dtype,
        cache=cache,
    )
    bench_names = df.loc[df[REFERENCE].notna(), NAME]
    log(
        f"  data ready in {time.perf_counter() - t0:.1f} s ({len(df):,} records, {id_kind} ids, "
        f"{name_dtype} names: {bench_names.nunique():,} distinct on {len(bench_names):,} benchmark records)"
    )
    truth = exact_pairwise(df)
    input_bytes = int(df[INPUT_COLUMNS].memory_usage(index=False, deep=True).sum())

    call = core_call(
        df,
        summarize,
        estimate,
        prediction=PREDICTION,
        reference=REFERENCE,
        name=NAME,
        draws=DRAWS,
        metrics=metrics,
    )
    summary, estimates = call()  # also a check that the call works before timing it
    timed = {"groupby": lambda: df.groupby(PREDICTION).size(), "core": call}
    erx_mod = _erx()
    if hasattr(erx_mod, "Release"):
        # (r) the same statistics through erx.Release, which aggregates the table once
        def release_call():
            rel = erx_mod.Release(df, prediction=PREDICTION, name=NAME)
            return rel.summarize(), rel.estimate(reference=REFERENCE, draws=DRAWS, metrics=metrics)

        timed["release"] = release_call
    if diagnostics:
        # To tell apart the cost of the name column: factorising it alone, and (b)
        # without names.
        timed["name_factorize"] = lambda: pd.factorize(df[NAME])
        timed["core_noname"] = core_call(
            df,
            summarize,
            estimate,
            prediction=PREDICTION,
            reference=REFERENCE,
            name=None,
            draws=DRAWS,
            metrics=metrics_noname,
        )
    best, runs = interleaved_best_of(timed, repeat)
    labels = {
        "groupby": "(a) groupby.size",
        "core": "(b) summarize+estimate",
        "name_factorize": "(n) pd.factorize(name)",
        "core_noname": "(b0) without name",
        "release": "(r) erx.Release: summarize+estimate",
    }
    for key in timed:
        log(f"  {labels[key]}: best {best[key]:.3f} s of {[round(x, 3) for x in runs[key]]}")
    groupby_best, core_best = best["groupby"], best["core"]
    diag = {}
    if "release" in best:
        diag.update({"release_s": best["release"], "release_runs_s": runs["release"],
                     "ratio_release": best["release"] / groupby_best})
    if diagnostics:
        diag = {
            "name_factorize_s": best["name_factorize"],
            "name_factorize_runs_s": runs["name_factorize"],
            "name_factorize_ratio": best["name_factorize"] / groupby_best,
            "core_noname_s": best["core_noname"],
            "core_noname_runs_s": runs["core_noname"],
            "ratio_noname": best["core_noname"] / groupby_best,
            **diag,
        }

    mem = measure_memory(call) if memory else {}
    if mem:
        log(
            "  memory: tracemalloc {:.0f} MiB + arrow {:.0f} MiB, RSS rise {} MiB; input {:.0f} MiB".format(
                mem["tracemalloc_peak_bytes"] / 2**20,
                mem["arrow_peak_bytes"] / 2**20,
                "n/a" if mem["rss_peak_bytes"] is None else f"{mem['rss_peak_bytes'] / 2**20:.0f}",
                input_bytes / 2**20,
            )
        )
    profile = None
    if profile_dir is not None:
        path = profile_dir / f"profile-{run_key(n_records, id_kind, record_names, name_dtype)}.txt"
        profile_call(call, path)
        profile = (
            str(path.relative_to(HERE.parent)) if path.is_relative_to(HERE.parent) else str(path)
        )
        log(f"  profile written to {profile}")

    result = {
        "n_records": n_records,
        "id_kind": id_kind,
        "shape": shape,
        "record_names": record_names,
        "name_dtype": name_dtype,
        "n_benchmark_records": int(df[REFERENCE].notna().sum()),
        "n_benchmark_clusters": int(df[REFERENCE].nunique()),
        "n_benchmark_names": int(bench_names.nunique()),
        "n_names": int(df[NAME].nunique()),
        "n_draws": int(df.groupby(REFERENCE)[DRAWS].first().sum()),
        "groupby_s": groupby_best,
        "groupby_runs_s": runs["groupby"],
        "core_s": core_best,
        "core_runs_s": runs["core"],
        "ratio": core_best / groupby_best,
        **diag,
        "input_bytes": input_bytes,
        "input_columns": INPUT_COLUMNS,
        **mem,
        "peak_ratio": mem["peak_bytes"] / input_bytes if mem else None,
        "rss_ratio": (
            mem["rss_peak_bytes"] / input_bytes if mem.get("rss_peak_bytes") is not None else None
        ),
        "exact": truth,
        "summary": _jsonable(summary.to_dict()) if isinstance(summary, pd.Series) else str(summary),
        "estimates": _estimates_record(estimates)
        if isinstance(estimates, pd.DataFrame)
        else str(estimates),
        "profile": profile,
    }
    return result


# --------------------------------------------------------------------------- PatentsView


def load_patentsview() -> tuple[pd.DataFrame, list[str]]:
    predictions = pd.read_parquet(PATENTSVIEW_DIR / "predictions.parquet")
    benchmark = pd.read_parquet(PATENTSVIEW_DIR / "benchmark.parquet")
    records = pd.read_parquet(
        PATENTSVIEW_DIR / "records.parquet", columns=["mention_id", "name_first", "name_last"]
    )
    releases = [c for c in predictions.columns if c.startswith("inventor_id_")]
    df = predictions.merge(benchmark, on="mention_id", how="left", validate="one_to_one")
    names = records["name_first"] + " " + records["name_last"]
    df = df.merge(
        pd.DataFrame({"mention_id": records["mention_id"], NAME: names}),
        on="mention_id",
        how="left",
        validate="one_to_one",
    )
    return df, sorted(releases)


def bench_patentsview(
    summarize: Summarize,
    estimate: Estimate,
    *,
    metrics: list[str] | None,
    repeat: int,
    profile_dir: Path | None,
    log: Callable[[str], None],
) -> dict:
    df, releases = load_patentsview()
    calls = {
        release: core_call(
            df,
            summarize,
            estimate,
            prediction=release,
            reference="benchmark_id",
            name=NAME,
            draws=None,
            metrics=metrics,
        )
        for release in releases
    }

    def run_all() -> dict[str, float]:
        per = {}
        for release, call in calls.items():
            t0 = time.perf_counter()
            call()
            per[release] = time.perf_counter() - t0
        return per

    gc.collect()
    t0 = time.perf_counter()
    cold_per = run_all()
    cold = time.perf_counter() - t0
    passes = []
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        per = run_all()
        passes.append((time.perf_counter() - t0, per))
    best, best_per = min(passes, key=lambda p: p[0])
    log(
        f"  {len(releases)} releases, {len(df):,} records: cold {cold:.3f} s, "
        f"best {best:.3f} s of {[round(p[0], 3) for p in passes]}"
    )
    _, last_estimates = calls[releases[-1]]()
    profile = None
    if profile_dir is not None:
        path = profile_dir / "profile-patentsview.txt"
        profile_call(run_all, path)
        profile = (
            str(path.relative_to(HERE.parent)) if path.is_relative_to(HERE.parent) else str(path)
        )
        log(f"  profile written to {profile}")
    return {
        "releases": releases,
        "n_records": len(df),
        "cold_total_s": cold,
        "cold_per_release_s": cold_per,
        "total_s": best,
        "total_runs_s": [p[0] for p in passes],
        "per_release_s": best_per,
        f"estimates_{releases[-1]}": _estimates_record(last_estimates)
        if isinstance(last_estimates, pd.DataFrame)
        else str(last_estimates),
        "profile": profile,
    }


# --------------------------------------------------------------------------- report


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _git_commit(root: Path) -> str | None:
    """The checked-out commit, read from .git without running git."""
    head = root / ".git" / "HEAD"
    try:
        ref = head.read_text().strip()
        if not ref.startswith("ref: "):
            return ref
        name = ref[5:]
        loose = root / ".git" / name
        if loose.exists():
            return loose.read_text().strip()
        packed = root / ".git" / "packed-refs"
        for line in packed.read_text().splitlines():
            if line.endswith(" " + name):
                return line.split()[0]
    except OSError:
        return None
    return None


def environment() -> dict:
    cpu = None
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    try:
        from importlib.metadata import version

        erx_version = version("er-expectations")
    except Exception:
        erx_version = None
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "memory_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
        "numpy": np.__version__,
        "pandas": pd.__version__,
        "pyarrow": pa.__version__,
        "er_expectations": erx_version,
        "commit": _git_commit(HERE.parent),
        "load_average": list(os.getloadavg()),
    }


def run_key(n_records: int, id_kind: str, record_names: float = 0.0, name_dtype: str = "str") -> str:
    """Short label of one synthetic run, e.g. ``1e07-int`` or ``2e06-str-many-object``."""
    key = f"{n_records:.0e}-{id_kind}".replace("+", "")
    if record_names:
        key += "-many"
    if name_dtype != "str":
        key += f"-{name_dtype}"
    return key


def check_targets(runs: list[dict], pv: dict | None) -> dict:
    targets: dict[str, dict] = {}
    for r in runs:
        key = run_key(r["n_records"], r["id_kind"], r.get("record_names", 0.0), r.get("name_dtype", "str"))
        at = TARGET_RATIO_MANY_NAMES_AT if r.get("record_names") else TARGET_RATIO_AT
        if r["n_records"] >= at:
            targets[f"ratio {key}"] = {
                "value": r["ratio"],
                "limit": TARGET_RATIO,
                "ok": r["ratio"] <= TARGET_RATIO,
            }
        if r.get("peak_ratio") is not None:
            targets[f"memory {key}"] = {
                "value": r["peak_ratio"],
                "limit": TARGET_MEMORY,
                "ok": r["peak_ratio"] <= TARGET_MEMORY,
            }
    if pv is not None:
        targets["patentsview total s"] = {
            "value": pv["total_s"],
            "limit": TARGET_PATENTSVIEW_S,
            "ok": pv["total_s"] < TARGET_PATENTSVIEW_S,
        }
    return targets


def _cell(value: float | None, fmt: str, width: int) -> str:
    return f"{'-':>{width}}" if value is None else f"{value:>{width}{fmt}}"


def _names_label(r: dict) -> str:
    return ("many " if r.get("record_names") else "") + r.get("name_dtype", "str")


def format_table(runs: list[dict], pv: dict | None, targets: dict) -> str:
    lines = []
    header = (
        f"{'records':>11} {'ids':>4} {'names':>13} {'(a) groupby':>12} {'(b) erx':>9} {'b/a':>6}"
        f" {'r/a':>6} {'b0/a':>6} {'name/a':>7} {'input MiB':>10} {'peak MiB':>9} {'peak/in':>8}"
        f" {'RSS/in':>7}"
    )
    lines += [header, "-" * len(header)]
    for r in runs:
        peak = r.get("peak_bytes")
        lines.append(
            f"{r['n_records']:>11,} {r['id_kind']:>4} {_names_label(r):>13}"
            f" {r['groupby_s']:>11.3f}s {r['core_s']:>8.3f}s"
            + _cell(r["ratio"], ".2f", 7)
            + _cell(r.get("ratio_release"), ".2f", 7)
            + _cell(r.get("ratio_noname"), ".2f", 7)
            + _cell(r.get("name_factorize_ratio"), ".2f", 8)
            + _cell(r["input_bytes"] / 2**20, ".0f", 11)
            + _cell(None if peak is None else peak / 2**20, ".0f", 10)
            + _cell(r.get("peak_ratio"), ".2f", 9)
            + _cell(r.get("rss_ratio"), ".2f", 8)
        )
    lines.append(
        "(a) df.groupby(prediction).size(); (b) summarize + estimate with names, all metrics;"
        "\nnames: name dtype; many = the many-names shape (half of the records carry a name of their own)."
        "\nr: the same through erx.Release (one aggregation); b0: (b) without names; name: pd.factorize(name column) alone; all best of runs."
        "\npeak = tracemalloc peak + sampled pyarrow peak of (b); RSS = rise of peak RSS."
    )
    if pv is not None:
        lines.append("")
        lines.append(
            f"PatentsView, {len(pv['releases'])} releases ({pv['n_records']:,} records):"
            f" summarize+estimate total {pv['total_s']:.3f} s best of {len(pv['total_runs_s'])}"
            f" (cold first pass {pv['cold_total_s']:.3f} s)"
        )
    if targets:
        lines.append("")
        lines.append("targets:")
        for key, t in targets.items():
            lines.append(
                f"  {'ok  ' if t['ok'] else 'MISS'} {key:<28} {t['value']:.3f} (limit {t['limit']:g})"
            )
    return "\n".join(lines)


# --------------------------------------------------------------------------- main


def run(
    sizes: list[int],
    kinds: list[str],
    summarize: Summarize,
    estimate: Estimate,
    *,
    metrics: list[str] | None = None,
    metrics_noname: list[str] | None = None,
    diagnostics: bool = True,
    repeat: int = 3,
    shape: str = "zipf2",
    many_names_sizes: list[int] | None = None,
    name_dtypes: list[str] | None = None,
    patentsview: bool = True,
    cache: bool = True,
    memory: bool = True,
    profile_dir: Path | None = None,
    log: Callable[[str], None] = print,
) -> dict:
    """Run the benchmark with the given API functions and return the results."""
    started = dt.datetime.now(dt.UTC)
    load_start = list(os.getloadavg())
    if load_start[0] > 0.5 * (os.cpu_count() or 1):
        log(
            f"note: load average {load_start[0]:.1f} on {os.cpu_count()} cpus before the run: "
            "other processes compete, absolute times are noisy (ratios less so)"
        )
    # (size, id kind, share of records with a name of their own, name dtype, label)
    jobs = [(n, kind, 0.0, "str", f"synthetic {n:,} records, {kind} ids") for n in sizes for kind in kinds]
    jobs += [(n, kind, MANY_NAMES, name_dtype, f"synthetic {n:,} records, {kind} ids, many names ({name_dtype})")
             for n in many_names_sizes or [] for kind in kinds for name_dtype in name_dtypes or ["str"]]
    runs = []
    for n, kind, record_names, name_dtype, label in jobs:
        log(label)
        runs.append(
            bench_synthetic(
                n,
                kind,
                summarize,
                estimate,
                metrics=metrics,
                metrics_noname=metrics_noname,
                diagnostics=diagnostics,
                repeat=repeat,
                shape=shape,
                cache=cache,
                memory=memory,
                profile_dir=profile_dir,
                log=log,
                record_names=record_names,
                name_dtype=name_dtype,
            )
        )
    pv = None
    if patentsview:
        log("PatentsView")
        pv = bench_patentsview(
            summarize, estimate, metrics=metrics, repeat=repeat, profile_dir=profile_dir, log=log
        )
    targets = check_targets(runs, pv)
    return {
        "benchmark": "core",
        "started": started.isoformat(timespec="seconds"),
        "finished": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "environment": {**environment(), "load_average_start": load_start},
        "config": {
            "sizes": sizes,
            "kinds": kinds,
            "repeat": repeat,
            "shape": shape,
            "many_names_sizes": many_names_sizes or [],
            "name_dtypes": name_dtypes or ["str"],
            "record_names": MANY_NAMES,
            "metrics": metrics or "all (default)",
            "seed": 0,
            "misplaced": 0.03,
            "n_draws": 400,
        },
        "synthetic": runs,
        "patentsview": pv,
        "targets": targets,
        "table": format_table(runs, pv, targets),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes", type=float, nargs="*", default=[1e6, 1e7], help="sizes of the default shape (none: skip it)"
    )
    parser.add_argument("--kinds", nargs="+", choices=["int", "str"], default=["int", "str"])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke test: 1e5 records, 1 repeat, results to core-<date>-quick.json",
    )
    parser.add_argument("--shape", choices=sorted(synthetic.SHAPES), default="zipf2")
    parser.add_argument(
        "--many-names-sizes",
        type=float,
        nargs="*",
        default=[2e6],
        help="sizes of the many-names shape (none: skip it)",
    )
    parser.add_argument(
        "--name-dtypes",
        nargs="+",
        choices=list(synthetic.NAME_DTYPES),
        default=["str", "object"],
        help="name column dtypes of the many-names runs",
    )
    parser.add_argument("--no-patentsview", action="store_true")
    parser.add_argument("--no-memory", action="store_true")
    parser.add_argument(
        "--no-diagnostics", action="store_true", help="skip factorize(name) and (b) without name"
    )
    parser.add_argument("--no-cache", action="store_true", help="generate data, do not use .cache/")
    parser.add_argument("--profile", action="store_true", help="cProfile each (b), write reports")
    parser.add_argument(
        "--out", type=Path, default=None, help="JSON path (default results/core-<date>.json)"
    )
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes]
    many_names_sizes = [int(s) for s in args.many_names_sizes]
    repeat = args.repeat
    if args.quick:
        sizes, repeat = [100_000], 1
        many_names_sizes = [100_000] if many_names_sizes else []

    erx = _erx()
    metrics = all_metrics(erx)
    suffix = "-quick" if args.quick else ""
    out = args.out or RESULTS_DIR / f"core-{dt.date.today().isoformat()}{suffix}.json"
    results = run(
        sizes,
        args.kinds,
        erx.summarize,
        erx.estimate,
        metrics=metrics,
        metrics_noname=metrics_without_names(erx, metrics),
        diagnostics=not args.no_diagnostics,
        repeat=repeat,
        shape=args.shape,
        many_names_sizes=many_names_sizes,
        name_dtypes=args.name_dtypes,
        patentsview=not args.no_patentsview,
        cache=not args.no_cache,
        memory=not args.no_memory,
        profile_dir=RESULTS_DIR if args.profile else None,
    )
    print()
    print(results["table"])
    _write_atomic(out, json.dumps(_jsonable(results), indent=2) + "\n")
    print(f"\nresults written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
