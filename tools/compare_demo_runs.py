"""Run the demo checkpoint from a source tree into a fresh project, and compare two such
projects file by file with run ids, run times and timestamps masked (issue 32: proof that a
refactoring changed no output).

    python tools/compare_demo_runs.py run SOURCE_TREE OUT_DIR [--release 2022-06-30 ...]
    python tools/compare_demo_runs.py compare OUT_DIR_A OUT_DIR_B

``run`` copies ``checkpoints/`` and ``suites/`` of SOURCE_TREE into OUT_DIR, points the data
paths at SOURCE_TREE's bundled data and runs ``er-expectations run`` with ``PYTHONPATH`` set to
SOURCE_TREE (so the same venv runs either tree). ``compare`` reads every file of both projects
(a SQLite history database as its rows, table by table), masks the volatile parts and prints
``compared N files, M differ`` (exit 1 when M > 0 or a file is in one project only).
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

MASKS = [
    (re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "<uuid>"),
    (re.compile(r"\d{8}T\d{6}(\.\d+)?Z?(-[0-9a-zA-Z_]+)?"), "<runid>"),
    (re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?"), "<time>"),
    (re.compile(r"\b\d{4}-\d{2}-\d{2} \d{2}:\d{2}\b"), "<time>"),
    (re.compile(r'("(?:duration|elapsed|seconds|run_time|runtime)[a-z_]*"\s*:\s*)[0-9.e+-]+'), r"\1<secs>"),
    (re.compile(r"\b\d+(\.\d+)? ?(s|ms|seconds)\b"), "<secs>"),
    (re.compile(r"/tmp/[^\s\"'<>]*"), "<tmp>"),
    (re.compile(r"project-[0-9a-f]{32}"), "project-<id>"),
    (re.compile(r'("(?:id|files_sha256|commit)"\s*:\s*)"[0-9a-f]{32,64}"'), r'\1"<id>"'),
    (re.compile(r"\b[0-9a-f]{32}\b|\b[0-9a-f]{40}\b"), "<id>"),  # run ids, git commits
    (re.compile(r'(package files SHA-256 <code[^>]*title=")[0-9a-f]{64}(">)[0-9a-f]{64}'), r"\1<code>\2<code>"),
    (re.compile(r'("stamp"\s*:\s*)\[[0-9, ]*\]'), r"\1<stamp>"),
]


def mask(text: str, roots: list[str]) -> str:
    for root in roots:
        text = text.replace(root, "<root>")
    for pattern, repl in MASKS:
        text = pattern.sub(repl, text)
    return text


def read(path: Path, roots: list[str]) -> str | bytes:
    head = path.read_bytes()[:16]
    if head.startswith(b"SQLite format 3"):
        with sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True) as conn:
            tables = [r[0] for r in conn.execute("select name from sqlite_master where type='table' order by name")]
            lines = []
            for table in tables:
                rows = conn.execute(f'select * from "{table}"').fetchall()
                lines += [f"{table}: {mask(repr(row), roots)}" for row in sorted(rows, key=repr)]
        return "\n".join(sorted(lines))
    data = path.read_bytes()
    try:
        return mask(data.decode("utf-8"), roots)
    except UnicodeDecodeError:
        return data


def run(source: Path, out: Path, releases: list[str]) -> int:
    source, out = source.resolve(), out.resolve()
    if out.exists():
        sys.exit(f"{out} exists: give a new folder")
    out.mkdir(parents=True)
    shutil.copytree(source / "checkpoints", out / "checkpoints")
    shutil.copytree(source / "suites", out / "suites")
    path = out / "checkpoints" / "patentsview.yml"
    shutil.copytree(source / "er_expectations" / "data" / "patentsview", out / "data" / "patentsview")
    text = path.read_text(encoding="utf-8").replace("../er_expectations/data", "../data")
    path.write_text(text, encoding="utf-8")
    command = [sys.executable, "-c", "import sys; from er_expectations.cli import program; sys.exit(program())",
               "run", str(path), "--no-progress", *[a for r in releases for a in ("--release", r)]]
    env = {**os.environ, "PYTHONPATH": str(source)}
    done = subprocess.run(command, cwd=out, env=env, capture_output=True, text=True)
    (out / "run.out").write_text(done.stdout + done.stderr, encoding="utf-8")
    print(f"exit {done.returncode}; output in {out / 'run.out'}")
    return 0 if done.returncode in (0, 1) else done.returncode


def _files(root: Path) -> list[Path]:
    """Every file of a project, but SQLite's transient -wal and -shm files (the database is
    read as its rows)."""
    return [p for p in root.rglob("*") if p.is_file() and not p.name.endswith(("-wal", "-shm"))]


def compare(a: Path, b: Path) -> int:
    a, b = a.resolve(), b.resolve()
    roots = [str(a), str(b)]
    found_a, found_b = _files(a), _files(b)
    files_a = {mask(str(p.relative_to(a)), roots): p for p in found_a}
    files_b = {mask(str(p.relative_to(b)), roots): p for p in found_b}
    if len(files_a) != len(found_a) or len(files_b) != len(found_b):
        sys.exit("two files have one masked name: compare projects of one run each")
    only = sorted(files_a.keys() ^ files_b.keys())
    for name in only:
        print(f"only in {'A' if name in files_a else 'B'}: {name}")
    differ = 0
    common = sorted(files_a.keys() & files_b.keys())
    for name in common:
        x, y = read(files_a[name], roots), read(files_b[name], roots)
        if x != y:
            differ += 1
            print(f"differs: {name}")
            if isinstance(x, str) and isinstance(y, str):
                diff = list(difflib.unified_diff(x.splitlines(), y.splitlines(), lineterm="", n=0))
                print("\n".join(diff[:12]))
    print(f"compared {len(common)} files, {differ} differ, {len(only)} in one project only")
    return 1 if differ or only else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("source", type=Path)
    r.add_argument("out", type=Path)
    r.add_argument("--release", action="append", default=[])
    c = sub.add_parser("compare")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    args = parser.parse_args()
    if args.command == "run":
        return run(args.source, args.out, args.release)
    return compare(args.a, args.b)


if __name__ == "__main__":
    sys.exit(main())
