"""The demo checkpoint's project, file by file and history row by history row, against another checkout.

    python benchmarks/compare_demo.py --before PATH

Runs ``er-expectations run checkpoints/patentsview.yml`` twice (``fresh`` then ``rerun``) into
a temporary project with the package of ``PATH`` (``PYTHONPATH``) and into another with this
checkout's, then compares the two projects: the same files (paths with their run times
masked), every text file's content with ids and times masked (UUIDs, GX run times, ISO
timestamps, the project's folder; in the Data Docs index cache the file stamps and the hash of
gx/docs/data_docs.py), every other file byte for byte, except the release tables (Parquet: compared
as tables) and the SQLite history store (compared as rows of every table, ids and times masked).
Exits 1 and lists the differences when there are any. A speed change must leave them at none.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sqlite3
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_demo import CLI, ROOT, _checkpoint, _child  # noqa: E402

MASKS = [
    (re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "<uuid>"),
    (re.compile(r"\d{8}T\d{6}\.\d{6}Z"), "<run-time>"),
    (re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?([+-]\d{2}:?\d{2}|Z)?"), "<time>"),
    # the Data Docs index cache: each result file's stamp (mtime, size, inode) and the hash of the
    # source of gx/docs/data_docs.py that wrote it (a changed module redoes its rows, by design)
    (re.compile(r'"stamp": \[[0-9, ]*\]'), '"stamp": "<file stamp>"'),
    (re.compile(r'"version": "[0-9a-f]{12}"\}$'), '"version": "<data_docs.py>"}'),
    (re.compile(r"\b\d{1,2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}(:\d{2})?( UTC)?"), "<time>"),
    # the ids each run draws: the project's (project-<uuid hex>) and the run's (uuid hex, shown on
    # every page and in the provenance)
    (re.compile(r"\bproject-[0-9a-f]{32}\b"), "project-<id>"),
    (re.compile(r"\b[0-9a-f]{32}\b"), "<hex id>"),
    # the code that ran (provenance): the hash of the package's files differs between two trees
    # by definition; what the code wrote is compared
    (re.compile(r'("files_sha256": )"[0-9a-f]{64}"'), r'\1"<package hash>"'),
    # and the git state of the two trees (their commits, whether files changed since): it says
    # which code ran, not what it wrote
    (re.compile(r'"git": \{[^{}]*\}'), '"git": "<git state>"'),
    (re.compile(r'git commit (<code class="er-hash" title="[0-9a-f]{40,64}">[0-9a-f]{40,64}</code>|[0-9a-f]{40,64}) '
                r"\((clean|NOT clean)([^()]|\([^()]*\))*\)"), "git commit <git state>"),
    (re.compile(r'package files SHA-256 (<code class="er-hash" title="[0-9a-f]{64}">[0-9a-f]{64}</code>|[0-9a-f]{64})'),
     "package files SHA-256 <package hash>"),
]


def mask(text: str, *roots: Path) -> str:
    for root in roots:  # the project's own folder
        text = text.replace(str(root), "<project>")
    for pattern, replacement in MASKS:
        text = pattern.sub(replacement, text)
    return text


def files(project: Path) -> dict[str, list[Path]]:
    """Masked relative path -> the files (in order of their real paths: the first run first)."""
    found: dict[str, list[Path]] = defaultdict(list)
    for path in sorted(p for p in project.rglob("*") if p.is_file()):
        found[mask(str(path.relative_to(project)))].append(path)
    return found


def table_rows(path: Path) -> dict[str, list[tuple]]:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        names = [r[0] for r in db.execute("select name from sqlite_master where type='table' order by name")]
        return {name: [tuple(mask(str(v)) for v in row) for row in db.execute(f'select * from "{name}"')]
                for name in names}


def same(a: Path, b: Path, root_a: Path, root_b: Path) -> str | None:
    """None when the two files say the same, else what differs."""
    if a.suffix == ".parquet":
        import pyarrow.parquet as pq

        ta, tb = pq.read_table(a), pq.read_table(b)
        return None if ta.equals(tb) and ta.schema.metadata == tb.schema.metadata else "table differs"
    head = a.read_bytes()[:16]
    if head.startswith(b"SQLite format 3"):
        ra, rb = table_rows(a), table_rows(b)
        if ra == rb:
            return None
        return "; ".join(f"table {t}: {len(ra.get(t, []))} vs {len(rb.get(t, []))} rows"
                         for t in sorted(set(ra) | set(rb)) if ra.get(t) != rb.get(t))
    da, db = a.read_bytes(), b.read_bytes()
    if da == db:
        return None
    try:
        ma, mb = mask(da.decode("utf-8"), root_a), mask(db.decode("utf-8"), root_b)
    except UnicodeDecodeError:
        return "bytes differ"
    if ma == mb:
        return None
    la, lb = ma.splitlines(), mb.splitlines()
    for i, (x, y) in enumerate(zip(la, lb, strict=False)):
        if x != y:
            j = next((k for k in range(min(len(x), len(y))) if x[k] != y[k]), min(len(x), len(y)))
            return f"line {i + 1}: {x[max(j - 60, 0):j + 60]!r} vs {y[max(j - 60, 0):j + 60]!r}"
    return f"{len(la)} vs {len(lb)} lines"


def run(project: Path, pythonpath: str | None) -> None:
    checkpoint = _checkpoint(project)
    try:
        for _ in ("fresh", "rerun"):
            _child(["-c", CLI, "run", str(checkpoint), "--no-progress"], pythonpath=pythonpath)
    finally:
        checkpoint.unlink(missing_ok=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", help="a checkout of the package (its folder)")
    parser.add_argument("--keep", action="store_true", help="keep the two projects (their folder is printed)")
    parser.add_argument("--projects", type=Path, help="compare the projects a --keep run left in this folder")
    args = parser.parse_args()
    work = args.projects or Path(tempfile.mkdtemp(prefix="compare-demo-"))
    before, after = work / "before", work / "after"
    try:
        if args.projects is None:
            # both run into one folder (then renamed): the checkpoint file each reads is the same,
            # byte for byte, so its size and hash in the provenance are too
            project = work / "project"
            run(project, str(Path(args.before).resolve()))
            project.rename(before)
            run(project, str(ROOT))  # this checkout's package, not the one installed in the venv
            project.rename(after)
        fa, fb = files(before), files(after)
        problems = [f"only before: {k}" for k in sorted(set(fa) - set(fb))]
        problems += [f"only after: {k}" for k in sorted(set(fb) - set(fa))]
        compared = 0
        for key in sorted(set(fa) & set(fb)):
            if len(fa[key]) != len(fb[key]):
                problems.append(f"{key}: {len(fa[key])} vs {len(fb[key])} files")
                continue
            for a, b in zip(fa[key], fb[key], strict=True):
                compared += 1
                why = same(a, b, before, after)
                if why:
                    problems.append(f"{key}: {why}")
        print(f"{compared} files compared (fresh run then rerun, ids and times masked): "
              f"{len(problems)} difference(s)")
        for problem in problems:
            print("  " + problem)
        if args.keep:
            print(f"projects: {work}")
    finally:
        if not args.keep and args.projects is None:
            shutil.rmtree(work, ignore_errors=True)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
