"""The hostile rerun of issue 18 ("Done when"): every case of items 13-18 in one pass.

Each case builds its own small project in a temporary folder under /tmp (the toy project of the
tests: ten true entities of four records, releases alpha, beta and gamma), runs the
``er-expectations`` command in a subprocess and checks what it answered: the exit code and
the words of a clear error, or the correct result (numbers read back from the history, files
left as they were). One line per case:

    case | exit code | first line of the answer | expected?

The script exits 1 when any case is not as expected. Slow servers (a webhook that drips one
byte every 0.2 s) are local 127.0.0.1 servers started here with short timeouts. Cases run three
at a time; the whole pass takes two to four minutes.

    python tools/hostile_rerun.py [--only WORD] [--workers N]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import socket
import sqlite3
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))

import pandas as pd  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from support.toyproject import CHECKPOINT, SUITE, make_toy  # noqa: E402

PROGRAM = Path(sys.executable).parent / "er-expectations"
BIG = 2**62 + 1
IDS = [f"r{i:02d}" for i in range(40)]


@dataclass
class Answer:
    code: int | None
    out: str
    err: str
    seconds: float

    @property
    def text(self) -> str:
        return self.out + "\n" + self.err

    @property
    def first(self) -> str:
        for line in (self.err + "\n" + self.out).splitlines():
            if line.strip() and not line.startswith(("Checkpoint '", "release ", "-----")):
                return line.strip()
        return ""


def cli(*args: str, cwd: Path | None = None, env: dict | None = None, timeout: float = 90,
        preexec: Callable[[], None] | None = None) -> Answer:
    """``er-expectations ARGS`` in a subprocess (this checkout's code first on the path)."""
    environment = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    environment.pop("ER_EXPECTATIONS_DEBUG", None)
    started = time.monotonic()
    try:
        done = subprocess.run([str(PROGRAM), *args], capture_output=True, text=True, cwd=cwd, env=environment,
                              timeout=timeout, preexec_fn=preexec)
    except subprocess.TimeoutExpired as error:
        return Answer(None, str(error.stdout or ""), f"TIMEOUT after {timeout:g} s", time.monotonic() - started)
    return Answer(done.returncode, done.stdout, done.stderr, time.monotonic() - started)


def no_traceback(a: Answer) -> bool:
    return "Traceback" not in a.text and "unexpected Exception" not in a.text


def clear(a: Answer, code: int, *words: str) -> tuple[bool, str]:
    """The expected clear error: exit ``code``, every word said, no traceback."""
    missing = [w for w in words if w not in a.text]
    ok = a.code == code and not missing and no_traceback(a)
    return ok, "" if ok else f"wanted exit {code} saying {words}; missing {missing}"


def toy(root: Path, *, suite: str = SUITE, checkpoint: str = CHECKPOINT) -> Path:
    return make_toy(root, suite=suite, checkpoint=checkpoint)


def release_file(root: Path) -> Path:
    path = root / "release.parquet"
    pd.DataFrame({"id": [f"m{i}" for i in range(36)], "pred": [f"c{i // 4}" for i in range(36)],
                  "ref": [f"t{i // 4}" for i in range(36)]}).to_parquet(path, index=False)
    return path


SIZE_SUITE = SUITE.replace("""expectations:
""", """expectations:
  - expectation: expect_average_cluster_size_to_be_between
    min_value: 3.5
    max_value: 4.5
""")


# -- item 13: silent wrong answers ---------------------------------------------------------------

def case_big_ids(root: Path) -> tuple[Answer, tuple[bool, str]]:
    path = toy(root, suite=SIZE_SUITE)
    table = pa.table({"rid": IDS[:39],
                      "pred_alpha": pa.array([BIG + i // 4 for i in range(39)], pa.int64()),
                      "pred_beta": pa.array([BIG + i // 8 for i in range(39)], pa.int64()),
                      "pred_gamma": pa.array([BIG + i // 4 for i in range(39)], pa.int64())})
    pq.write_table(table, root / "data" / "predictions.parquet")
    a = cli("run", str(path), "--no-progress")
    h = cli("history", str(path), "-e", "average_cluster_size", "--format", "json")
    try:
        values = {r["release"]: round(r["value"], 3) for r in json.loads(h.out)["series"]}
    except (ValueError, KeyError):
        values = {}
    ok = a.code == 1 and values == {"alpha": 3.9, "beta": 7.8, "gamma": 3.9}
    return a, (ok, f"history sizes {values} (3.9, 7.8, 3.9 expected: 10, 5 and 10 clusters)")


def case_sqlite_mixed_types(root: Path) -> tuple[Answer, tuple[bool, str]]:
    ckpt = CHECKPOINT.replace("""data:
  records: {path: ../data/records.parquet, id_column: rid}
  predictions:
    path: ../data/predictions.parquet
    id_column: rid
    columns: "pred_*"
  benchmark: {path: ../data/benchmark.parquet, id_column: rid, reference_column: truth}""", f"""data:
  engine: sql
  connection: {{url: "sqlite:///{root / 'w.db'}"}}
  records: {{table: records, id_column: rid}}
  predictions: {{table: predictions, id_column: rid, columns: "pred_*", batch_column: prediction}}
  benchmark: {{table: benchmark, id_column: rid, reference_column: truth}}""")
    path = toy(root, checkpoint=ckpt)
    con = sqlite3.connect(root / "w.db")
    pd.read_parquet(root / "data" / "records.parquet").to_sql("records", con, index=False)
    pd.read_parquet(root / "data" / "benchmark.parquet").to_sql("benchmark", con, index=False)
    con.execute("CREATE TABLE predictions (rid, pred_alpha)")
    con.executemany("INSERT INTO predictions VALUES (?, ?)",
                    [(rid, (1 if i == 0 else "1") if i < 4 else i // 4 + 1) for i, rid in enumerate(IDS)])
    con.commit()
    con.close()
    a = cli("run", str(path), "--no-progress")
    return a, clear(a, 2, "pred_alpha")


def case_csv_na_id(root: Path) -> tuple[Answer, tuple[bool, str]]:
    csv = root / "release.csv"
    csv.write_text("id,pred\n" + "".join(f"NA{'' if i < 10 else i},c{i // 2}\n" for i in range(20)).replace(
        "NA,", "NA,", 1), encoding="utf-8")
    rows = ["id,pred"] + [f"{'NA' if i == 0 else f'r{i}'},{'NA' if i < 4 else f'c{i // 4}'}" for i in range(20)]
    csv.write_text("\n".join(rows) + "\n", encoding="utf-8")
    a = cli("summarize", str(csv), "--cluster", "pred", "--record-id", "id", "--format", "json")
    try:
        got = json.loads(a.out)
    except ValueError:
        got = {}
    ok = a.code == 0 and got.get("n_records") == 20 and got.get("n_clusters") == 5
    return a, (ok, f"n_records {got.get('n_records')} n_clusters {got.get('n_clusters')} (20 and 5: 'NA' is an id)")


def case_ragged_csv(root: Path) -> tuple[Answer, tuple[bool, str]]:
    csv = root / "release.csv"
    csv.write_text("id,pred\nr1,c1\nr2,c1,extra\nr3,c2\n", encoding="utf-8")
    a = cli("summarize", str(csv), "--cluster", "pred")
    return a, clear(a, 2, "release.csv:3", "3 fields")


def case_text_predicted_cluster(root: Path) -> tuple[Answer, tuple[bool, str]]:
    checkpoint = """\
checkpoint: toy_labels
project_dir: ../project
data:
  records: {path: ../data/records.parquet, id_column: rid}
  predictions: {path: ../data/predictions.parquet, id_column: rid, columns: "pred_*", batch_column: prediction}
  name: {columns: [first, last]}
  labels:
    path: ../data/labels.parquet
    release: alpha
    id_column: record_id
    draw_column: draw
    removed_column: removed
    added_column: added
    predicted_cluster_column: predicted_cluster
    true_cluster_column: true_cluster
suites: [toy_labels]
suite_paths: [../suites]
"""
    suite = """\
suite: toy_labels
defaults: {record_id_column: rid, prediction_column: prediction, draw_column: draw, removed_column: removed,
           added_column: added}
expectations:
  - expectation: expect_labels_removed_within_predicted_cluster
  - expectation: expect_labels_true_cluster_to_match
"""
    path = toy(root, checkpoint=checkpoint)
    (root / "suites" / "toy.yml").unlink()
    (root / "suites" / "toy_labels.yml").write_text(suite, encoding="utf-8")
    pq.write_table(pa.table({"rid": IDS, **{f"pred_{r}": pa.array([i // 4 for i in range(40)], pa.int64())
                                            for r in ("alpha", "beta")}}), root / "data" / "predictions.parquet")
    pd.DataFrame({"draw": [1, 2], "record_id": ["r00", "r04"], "removed": [[], []], "added": [[], []],
                  "predicted_cluster": ["0", "1"], "true_cluster": ["E0", "E1"]}).to_parquet(
        root / "data" / "labels.parquet", index=False)
    a = cli("run", str(path), "--no-progress")
    return a, clear(a, 2, "predicted_cluster")


def case_plan_cluster_precision_warns(root: Path) -> tuple[Answer, tuple[bool, str]]:
    path = root / "pilot.csv"  # 10 benchmark clusters of 4; 60 unlabelled records in two big clusters
    pd.DataFrame({"rid": [f"r{i}" for i in range(100)],
                  "pred": [f"p{i // 4}" for i in range(40)] + [f"big{i % 2}" for i in range(60)],
                  "ref": [f"t{i // 4}" for i in range(40)] + [""] * 60}).to_csv(path, index=False)
    a = cli("plan", str(path), "-p", "pred", "-r", "ref", "--record-id", "rid", "--target-se", "0.05",
            "--metrics", "cluster_precision", "--seed", "0", "--reps", "100")
    return a, (a.code == 0 and "warning: estimate 2.083 lies outside [0, 1]" in a.text and no_traceback(a),
               "plan on cluster precision warns as estimate does")


# -- item 14: nothing outside the project, nothing of the user's destroyed -----------------------

def case_symlinked_data_docs(root: Path) -> tuple[Answer, tuple[bool, str]]:
    path = toy(root)
    outside = root / "outside"
    outside.mkdir()
    docs = root / "project" / "gx" / "uncommitted" / "data_docs"
    docs.parent.mkdir(parents=True)
    docs.symlink_to(outside, target_is_directory=True)
    a = cli("run", str(path), "--no-progress")
    ok, note = clear(a, 2, "data_docs")
    return a, (ok and not any(outside.iterdir()), note or "nothing written through the link")


def case_benchmark_output_is_input(root: Path) -> tuple[Answer, tuple[bool, str]]:
    release = release_file(root)
    sheet = root / "labels.parquet"
    cli("sample", str(release), "-p", "pred", "--record-id", "id", "-n", "5", "--seed", "1", "-o", str(sheet))
    before = sheet.read_bytes()
    a = cli("benchmark", str(sheet), str(release), "-p", "pred", "--record-id", "id", "-o", str(sheet))
    ok, note = clear(a, 2, "is also an input")
    return a, (ok and sheet.read_bytes() == before, note)


def case_summarize_output_is_input(root: Path) -> tuple[Answer, tuple[bool, str]]:
    release = release_file(root)
    before = release.read_bytes()
    a = cli("summarize", str(release), "-c", "pred", "-o", str(release))
    ok, note = clear(a, 2, "is also an input")
    return a, (ok and release.read_bytes() == before, note)


def case_sample_keeps_a_filled_worksheet(root: Path) -> tuple[Answer, tuple[bool, str]]:
    release = release_file(root)
    sheet = root / "sheet.csv"
    cli("sample", str(release), "-p", "pred", "--record-id", "id", "-n", "5", "--seed", "1", "-o", str(sheet))
    sheet.write_text(sheet.read_text() + "filled,in,by,hand\n")
    before = sheet.read_bytes()
    a = cli("sample", str(release), "-p", "pred", "--record-id", "id", "-n", "5", "--seed", "1", "-o", str(sheet))
    ok, note = clear(a, 2, "--force")
    return a, (ok and sheet.read_bytes() == before, note)


def case_user_tmp_file_kept(root: Path) -> tuple[Answer, tuple[bool, str]]:
    path = toy(root)
    cli("run", str(path), "--no-progress", "--release", "alpha")
    mine = root / "project" / "gx" / ".x.abcdefgh.tmp"
    mine.write_text("mine", encoding="utf-8")
    a = cli("run", str(path), "--no-progress", "--release", "alpha")
    return a, (a.code == 0 and mine.is_file(), "a user's file named like a temporary file is kept")


def case_gx_yaml_typo(root: Path) -> tuple[Answer, tuple[bool, str]]:
    path = toy(root)
    cli("run", str(path), "--no-progress", "--release", "alpha")
    config = root / "project" / "gx" / "great_expectations.yml"
    config.write_text(config.read_text().replace("config_version:", "config_version:: :"), encoding="utf-8")
    a = cli("run", str(path), "--no-progress", "--release", "alpha")
    ok = a.code == 2 and "great_expectations.yml" in a.text and "interrupted run" not in a.text and no_traceback(a)
    return a, (ok, "a user's typo is named (file, line, column), not blamed on an interrupted run")


def case_truncated_result_json(root: Path) -> tuple[Answer, tuple[bool, str]]:
    path = toy(root)
    cli("run", str(path), "--no-progress", "--release", "alpha")
    (result,) = (root / "project" / "gx" / "uncommitted" / "validations").rglob("*.json")
    result.write_bytes(result.read_bytes()[:100])
    a = cli("run", str(path), "--no-progress", "--release", "alpha")
    readable = all(json.loads(p.read_text()) for p in (root / "project" / "gx" / "uncommitted" /
                                                        "validations").rglob("*.json"))
    return a, (a.code == 0 and "Moved the unreadable validation result" in a.text and readable,
               "the cut result is set aside and reported")


# -- item 15: hangs ------------------------------------------------------------------------------

def case_n_boot_huge(root: Path) -> tuple[Answer, tuple[bool, str]]:
    a = cli("estimate", str(root / "absent.parquet"), "-p", "pred", "-r", "ref", "--ci-method", "bootstrap",
            "--n-boot", "1e9", timeout=30)
    return a, clear(a, 2, "--n-boot")


def case_n_boot_in_suite(root: Path) -> tuple[Answer, tuple[bool, str]]:
    suite = SUITE.replace("    min_value: 0.9\n", "    min_value: 0.9\n    ci_method: bootstrap\n    n_boot: 1e8\n", 1)
    path = toy(root, suite=suite)
    a = cli("validate", str(path), timeout=60)
    return a, clear(a, 2, "n_boot")


def case_sample_huge_n(root: Path) -> tuple[Answer, tuple[bool, str]]:
    a = cli("sample", str(release_file(root)), "-p", "pred", "-n", "1e9", "--seed", "1", "-o", str(root / "s.csv"),
            timeout=30)
    return a, clear(a, 2, "-n")


def case_suite_of_20004_expectations(root: Path) -> tuple[Answer, tuple[bool, str]]:
    suite = "suite: huge\nexpectations:\n" + "  - expectation: expect_matching_rate_to_be_between\n" \
        "    prediction_column: prediction\n    min_value: 0.1\n" * 20004
    file = root / "huge.yml"
    file.write_text(suite, encoding="utf-8")
    a = cli("validate", str(file), timeout=60)
    return a, (a.code == 2 and a.seconds < 60 and no_traceback(a), f"answered in {a.seconds:.1f} s")


def case_validate_fifo(root: Path) -> tuple[Answer, tuple[bool, str]]:
    fifo = root / "suite.yml"
    os.mkfifo(fifo)
    a = cli("validate", str(fifo), timeout=30)
    return a, clear(a, 2, str(fifo))


def case_project_dir_proc(root: Path) -> tuple[Answer, tuple[bool, str]]:
    path = toy(root, checkpoint=CHECKPOINT.replace("project_dir: ../project", "project_dir: /proc/self"))
    a = cli("run", str(path), "--no-progress", "--lock-timeout", "5", timeout=60)
    return a, clear(a, 2, "project_dir", "lock file")


def drip_server(answer: bytes, stop: threading.Event) -> int:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.1)

    def drip(conn: socket.socket) -> None:
        try:
            conn.settimeout(2)
            conn.recv(65536)
            for byte in answer:
                if stop.wait(0.2):
                    return
                conn.sendall(bytes([byte]))
        except OSError:
            pass
        finally:
            conn.close()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            threading.Thread(target=drip, args=(conn,), daemon=True).start()
        listener.close()

    threading.Thread(target=serve, daemon=True).start()
    return listener.getsockname()[1]


def case_dripping_webhook(root: Path) -> tuple[Answer, tuple[bool, str]]:
    stop = threading.Event()
    port = drip_server(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok" + b" " * 200, stop)
    try:
        path = toy(root, checkpoint=CHECKPOINT.replace("actions:\n  - build_data_docs\n", "actions:\n"
                   "  - build_data_docs\n  - webhook: {url: '${ERX_DRIP}', timeout: 1, notify_on: all}\n"))
        a = cli("run", str(path), "--no-progress", "--release", "alpha", env={"ERX_DRIP": f"http://127.0.0.1:{port}/h"})
        h = cli("history", str(path), "-e", "pairwise_precision")
    finally:
        stop.set()
    ok = a.code == 0 and "not delivered within 1 s" in a.err and "NOT DELIVERED" in h.out and no_traceback(a)
    return a, (ok, f"given up at its 1 s timeout; recorded in the history; run took {a.seconds:.1f} s")


# -- item 16: tracebacks and internal errors for bad input ---------------------------------------

def case_bad_numbers(root: Path) -> tuple[Answer, tuple[bool, str]]:
    release = release_file(root)
    answers = [cli("sample", str(release), "-p", "pred", "-n", value, "--seed", "1", "-o", str(root / "s.csv"))
               for value in ("--5", "²", "1e20")]
    ok = all(a.code == 2 and no_traceback(a) for a in answers)
    return answers[-1], (ok, "--5, ² and 1e20: exit " + ", ".join(str(a.code) for a in answers))


def case_draw_beyond_int64(root: Path) -> tuple[Answer, tuple[bool, str]]:
    import csv

    release = release_file(root)
    sheet = root / "sheet.csv"
    cli("sample", str(release), "-p", "pred", "--record-id", "id", "-n", "3", "--seed", "1", "-o", str(sheet))
    rows = list(csv.reader(sheet.open(newline="", encoding="utf-8")))
    rows[1][0] = str(2**80)  # a draw number beyond int64
    for row in rows[1:]:
        row[rows[0].index("true_cluster")] = "T1"
    with sheet.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    a = cli("benchmark", str(sheet), str(release), "-p", "pred", "--record-id", "id", "-o", str(root / "b.parquet"))
    return a, clear(a, 2, "column 'draw', row 1", "beyond the 64-bit range")


def case_deep_yaml(root: Path) -> tuple[Answer, tuple[bool, str]]:
    file = root / "deep.yml"
    file.write_text("suite: deep\nexpectations: " + "[" * 50_000 + "]" * 50_000 + "\n", encoding="utf-8")
    a = cli("validate", str(file), timeout=60)
    return a, clear(a, 2, "deep.yml")


def case_plan_tiny_target(root: Path) -> tuple[Answer, tuple[bool, str]]:
    import numpy as np

    rng = np.random.default_rng(0)  # a pilot with errors: 100 true clusters of 4, a fifth predicted one further
    path = root / "pilot.csv"
    pd.DataFrame({"rid": [f"r{i}" for i in range(400)],
                  "pred": [f"p{i // 4}" if rng.random() > 0.2 else f"p{i // 4 + 1}" for i in range(400)],
                  "ref": [f"t{i // 4}" for i in range(400)]}).to_csv(path, index=False)
    a = cli("plan", str(path), "-p", "pred", "-r", "ref", "--record-id", "rid", "--target-se", "1e-300",
            "--metrics", "pairwise_precision", "--seed", "0", "--reps", "100", "--max-draws", "1000")
    return a, (a.code == 0 and "above the target" in a.text and no_traceback(a), "no plan, said why (no overflow)")


def case_colliding_gx_names(root: Path) -> tuple[Answer, tuple[bool, str]]:
    path = toy(root)
    frame = pd.read_parquet(root / "data" / "predictions.parquet")
    frame = frame.rename(columns={"pred_alpha": "pred_a", "pred_beta": "pred_a__x"})
    frame.to_parquet(root / "data" / "predictions.parquet", index=False)
    (root / "suites" / "s.yml").write_text(SUITE.replace("suite: toy_checks", "suite: s"), encoding="utf-8")
    (root / "suites" / "x.yml").write_text(SUITE.replace("suite: toy_checks", "suite: x__s"), encoding="utf-8")
    path.write_text(path.read_text().replace("suites: [toy_checks]", "suites: [s, x__s]"), encoding="utf-8")
    a = cli("run", str(path), "--no-progress")
    return a, clear(a, 2)


def case_read_only_site(root: Path) -> tuple[Answer, tuple[bool, str]]:
    path = toy(root)
    cli("run", str(path), "--no-progress", "--release", "alpha")
    site = root / "project" / "gx" / "uncommitted" / "data_docs" / "local_site"
    modes = {p: p.stat().st_mode for p in [site, *site.rglob("*")] if p.is_dir()}
    for p in modes:
        p.chmod(0o555)
    try:
        a = cli("run", str(path), "--no-progress", "--release", "alpha")
    finally:
        for p, mode in modes.items():
            p.chmod(stat.S_IMODE(mode))
    if os.geteuid() == 0:  # root writes anyway: the run must then simply work
        return a, (a.code == 0 and no_traceback(a), "as root the folder stays writable: the run works")
    return a, clear(a, 2, str(site), "cannot be written")


def fsize_limit(limit: int) -> Callable[[], None]:
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


def case_new_project_full_disk(root: Path) -> tuple[Answer, tuple[bool, str]]:
    path = toy(root, checkpoint=CHECKPOINT + "history: {enabled: false}\n")
    a = cli("run", str(path), "--no-progress", preexec=fsize_limit(16_000))
    ok = a.code in (1, 2, 8) and str(root / "project") in a.err and "File too large" in a.err and no_traceback(a)
    return a, (ok, "one message naming the project's folder and the cause")


def case_docs_full_half_way(root: Path) -> tuple[Answer, tuple[bool, str]]:
    path = toy(root, checkpoint=CHECKPOINT + "history: {enabled: false}\n")
    cli("run", str(path), "--no-progress", "--release", "alpha")
    a = cli("run", str(path), "--no-progress", "--release", "alpha", preexec=fsize_limit(16_000))
    ok, note = clear(a, 8, "Data Docs site", "raise the file-size limit", "are kept")
    again = cli("run", str(path), "--no-progress", "--release", "alpha")
    leftovers = list((root / "project").rglob("*.tmp"))
    return a, (ok and again.code == 0 and not leftovers, note or "the next run builds the missing pages")


def case_signals(root: Path) -> tuple[Answer, tuple[bool, str]]:
    path = toy(root)
    results = []
    for sig, code in ((signal.SIGINT, 130), (signal.SIGTERM, 143)):
        env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1"}
        process = subprocess.Popen([str(PROGRAM), "run", str(path), "--no-progress"], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, env=env)
        time.sleep(1.0)
        process.send_signal(sig)
        out, err = process.communicate(timeout=60)
        results.append(Answer(process.returncode, out, err, 0.0))
        ok = process.returncode == code or (process.returncode == 1 and "Done" in out)
        if not ok or "Traceback" in err:
            return results[-1], (False, f"signal {sig.name}: exit {process.returncode}")
    return results[-1], (True, "SIGINT exit 130, SIGTERM exit 143, one line each")


def case_list_prediction_column(root: Path) -> tuple[Answer, tuple[bool, str]]:
    path = toy(root)
    frame = pd.read_parquet(root / "data" / "predictions.parquet")
    frame["pred_alpha"] = [[v] for v in frame["pred_alpha"]]
    frame.to_parquet(root / "data" / "predictions.parquet", index=False)
    a = cli("run", str(path), "--no-progress")
    return a, clear(a, 2, "pred_alpha")


def case_sqlite_read_only_url(root: Path) -> tuple[Answer, tuple[bool, str]]:
    where = root / "nothing" / "here.db"
    ckpt = CHECKPOINT + f"history: {{url: 'sqlite:///file:{where}?mode=ro&uri=true'}}\n"
    path = toy(root, checkpoint=ckpt)
    a = cli("run", str(path), "--no-progress", "--release", "alpha")
    return a, (a.code in (2, 6) and not (root / "nothing").exists() and no_traceback(a),
               "nothing created for a read-only URL")


def case_base_url_script(root: Path) -> tuple[Answer, tuple[bool, str]]:
    path = toy(root, checkpoint=CHECKPOINT.replace("  - build_data_docs\n",
                                                   "  - build_data_docs: {base_url: '\"><script>x</script>'}\n"))
    a = cli("validate", str(path))
    return a, clear(a, 2, "build_data_docs.base_url: expected an http(s) or file URL")


def case_moved_project(root: Path) -> tuple[Answer, tuple[bool, str]]:
    path = toy(root / "a")
    cli("run", str(path), "--no-progress", "--release", "alpha")
    shutil.move(root / "a", root / "b")
    a = cli("run", str(root / "b" / "checkpoints" / "toy.yml"), "--no-progress", "--release", "alpha")
    return a, (a.code == 0 and no_traceback(a), "the moved project runs")


# -- item 17: data that reaches people -----------------------------------------------------------

def case_slack_text_escaped(root: Path) -> tuple[Answer, tuple[bool, str]]:
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    received: list[bytes] = []

    class Hook(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            received.append(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        path = toy(root, checkpoint=CHECKPOINT.replace("actions:\n  - build_data_docs\n", "actions:\n"
                   "  - build_data_docs\n  - slack: {webhook: '${ERX_SLACK}', notify_on: all, timeout: 5}\n"))
        frame = pd.read_parquet(root / "data" / "predictions.parquet")
        frame = frame.rename(columns={"pred_beta": "pred_<!channel> <http://x.example|click me>"})
        frame.to_parquet(root / "data" / "predictions.parquet", index=False)
        a = cli("run", str(path), "--no-progress", env={"ERX_SLACK": f"http://127.0.0.1:{server.server_address[1]}/s"})
    finally:
        server.shutdown()
        server.server_close()
    text = json.loads(received[0]).get("text", "") if received else ""
    ok = bool(received) and "<!channel>" not in text and "<http://" not in text and no_traceback(a)
    return a, (ok, "the top-level text is escaped" if ok else f"text: {text[:120]!r}")


def case_worksheet_formulas(root: Path) -> tuple[Answer, tuple[bool, str]]:
    release = root / "release.parquet"
    pd.DataFrame({"id": [f"m{i}" for i in range(12)], "pred": [f"c{i // 3}" for i in range(12)],
                  "name": ["=1+1", "@SUM(A1)", "+cmd", "-x"] * 3}).to_parquet(release, index=False)
    sheet = root / "sheet.csv"
    a = cli("sample", str(release), "-p", "pred", "--record-id", "id", "-n", "4", "--seed", "1", "--columns", "name",
            "-o", str(sheet))
    import csv

    cells = [c for row in csv.reader(sheet.open(newline="", encoding="utf-8")) for c in row] if sheet.exists() else []
    bad = [c for c in cells if c[:1] in ("=", "+", "@") or (c[:1] == "-" and c[1:2].isalpha())]
    return a, (a.code == 0 and cells and not bad, f"formula-leading cells written: {bad[:3]}")


def case_worksheet_semicolon_ids(root: Path) -> tuple[Answer, tuple[bool, str]]:
    release = root / "release.parquet"
    pd.DataFrame({"id": [f"m;{i}" for i in range(12)], "pred": [f"c{i // 3}" for i in range(12)]}).to_parquet(
        release, index=False)
    a = cli("sample", str(release), "-p", "pred", "--record-id", "id", "-n", "4", "--seed", "1",
            "-o", str(root / "sheet.csv"))
    return a, clear(a, 2, "separator")


CASES: list[tuple[str, str, Callable[[Path], tuple[Answer, tuple[bool, str]]]]] = [
    ("13", "ids 2**62+1.. stay apart (history sizes)", case_big_ids),
    ("13", "SQLite column with 1 and '1'", case_sqlite_mixed_types),
    ("13", "CSV id 'NA' is an id", case_csv_na_id),
    ("13", "ragged CSV row", case_ragged_csv),
    ("13", "text predicted_cluster vs integer release", case_text_predicted_cluster),
    ("13", "plan cluster precision warns", case_plan_cluster_precision_warns),
    ("14", "symlinked data_docs", case_symlinked_data_docs),
    ("14", "benchmark -o its own labels", case_benchmark_output_is_input),
    ("14", "summarize -o its own input", case_summarize_output_is_input),
    ("14", "sample -o a filled worksheet", case_sample_keeps_a_filled_worksheet),
    ("14", "user's .x.abcdefgh.tmp kept", case_user_tmp_file_kept),
    ("14", "YAML typo in great_expectations.yml", case_gx_yaml_typo),
    ("14", "truncated GX result JSON repaired", case_truncated_result_json),
    ("15", "--n-boot 1e9", case_n_boot_huge),
    ("15", "n_boot: 1e8 in a suite", case_n_boot_in_suite),
    ("15", "sample -n 1e9", case_sample_huge_n),
    ("15", "suite of 20,004 expectations", case_suite_of_20004_expectations),
    ("15", "validate a FIFO", case_validate_fifo),
    ("15", "project_dir: /proc/self", case_project_dir_proc),
    ("15", "dripping webhook (12: history)", case_dripping_webhook),
    ("16", "numbers --5, ², 1e20", case_bad_numbers),
    ("16", "draw number beyond int64", case_draw_beyond_int64),
    ("16", "50,000-deep YAML", case_deep_yaml),
    ("16", "plan --target-se 1e-300", case_plan_tiny_target),
    ("16", "releases a, a__x / suites s, x__s", case_colliding_gx_names),
    ("16", "read-only Data Docs site", case_read_only_site),
    ("16", "new project, file-size limit", case_new_project_full_disk),
    ("16", "Data Docs full half-way (exit 8)", case_docs_full_half_way),
    ("16", "SIGINT / SIGTERM", case_signals),
    ("16", "list-typed prediction column", case_list_prediction_column),
    ("16", "sqlite ?mode=ro&uri=true", case_sqlite_read_only_url),
    ("16", "base_url with \"><script>", case_base_url_script),
    ("16", "moved project folder", case_moved_project),
    ("17", "Slack top-level text escaped", case_slack_text_escaped),
    ("17", "worksheet formulas neutralised", case_worksheet_formulas),
    ("17", "ids holding ';' refused", case_worksheet_semicolon_ids),
]


def run_case(item: str, name: str, fn: Callable[[Path], tuple[Answer, tuple[bool, str]]]) -> tuple:
    root = Path(tempfile.mkdtemp(prefix="er-hostile-", dir="/tmp"))
    try:
        answer, (ok, note) = fn(root)
    except Exception as error:  # noqa: BLE001 - a case that cannot be built is a failed case
        answer, ok, note = Answer(None, "", f"{type(error).__name__}: {error}", 0.0), False, "the case crashed"
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return item, name, answer, ok, note


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=None, help="only the cases whose name holds this word")
    parser.add_argument("--workers", type=int, default=3)
    args = parser.parse_args(argv)
    if not PROGRAM.exists():
        print(f"no er-expectations program next to {sys.executable}", file=sys.stderr)
        return 2
    cases = [c for c in CASES if args.only is None or args.only.lower() in c[1].lower()]
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=args.workers) as pool:
        results = list(pool.map(lambda c: run_case(*c), cases))
    print(f"{'item':4}  {'case':44}  {'exit':>4}  {'ok':3}  first line of the answer / note")
    failed = 0
    for item, name, answer, ok, note in results:
        failed += not ok
        first = answer.first[:110]
        print(f"{item:4}  {name:44}  {answer.code if answer.code is not None else '-':>4}  "
              f"{'yes' if ok else 'NO':3}  {first}" + (f"  [{note}]" if note and (not ok or 'expected' in note
                                                                                   or item == '13') else ""))
    print(f"{len(results) - failed} of {len(results)} cases as expected in {time.monotonic() - started:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
