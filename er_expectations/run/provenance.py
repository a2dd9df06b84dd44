"""Provenance of a checkpoint run: what was read, by which software, when (issue 18, SPEC 13).

Every validation result of a run carries it in ``meta["er_provenance"]`` (so a Data Docs page
is a record an auditor can sign on its own), the history store keeps it with each release's
run, and the JSON report has it. It holds:

* ``run``: the run id (unique per run), name and time (UTC);
* ``software``: er-expectations, Great Expectations and Python versions, and the code that ran
  (``code``: the git commit and whether the package's files were unchanged from it when run from a
  checkout, the installed distribution's version otherwise, and the SHA-256 of the package's
  files in both cases; :mod:`er_expectations.core.revision`);
* ``checkpoint`` and ``suites``: each file's path, size and SHA-256;
* ``inputs``: each input table: a file's path, size and SHA-256, or a database / Spark source as
  the checkpoint names it (table, query text or Parquet path; the connection URL as written in
  the checkpoint file, where a password can only be a ``${VARIABLE}`` reference, never its value);
* per release (``release``): its label and, for files, the release table the run wrote and GX
  read (path inside the project, size, SHA-256).

Paths are relative to the checkpoint file's folder (as the user wrote them), never absolute, so
that pages and payloads carry no local absolute paths.
"""

from __future__ import annotations

import hashlib
import os
import platform
import uuid
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from er_expectations.core.revision import code_revision
from er_expectations.core.version import __version__
from er_expectations.gx.docs.provenance_view import PROVENANCE_KEY

__all__ = ["PROVENANCE_KEY", "file_fact", "release_provenance", "run_provenance"]

#: Version of the provenance document's layout.
PROVENANCE_SCHEMA = 1

_CHUNK = 1 << 20


def _relative(path: Path, base: Path) -> str:
    """``path`` relative to ``base`` (``..`` allowed), with forward slashes; a path that climbs to
    the file system's root (it would spell out the absolute path) or lies on another drive is
    ``…/<file name>``: pages and results carry no local absolute path (issue 29 item 3)."""
    try:
        relative = Path(os.path.relpath(path, base))
    except ValueError:  # another drive (Windows): the file name alone, never the absolute path
        return f"…/{path.name}"
    ups = next((i for i, part in enumerate(relative.parts) if part != ".."), len(relative.parts))
    if ups and ups >= len(Path(base).absolute().parts) - 1:
        return f"…/{path.name}"
    return relative.as_posix()


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def file_fact(role: str, path: Path, *, base: Path) -> dict[str, Any]:
    """``{"role", "path", "bytes", "sha256"}`` of one file (a Parquet folder: its files, in order).

    A file that cannot be read gets ``"error"`` instead of a hash: provenance never stops a run
    whose inputs were already read.
    """
    fact: dict[str, Any] = {"role": role, "path": _relative(path, base)}
    try:
        files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        digest = hashlib.sha256()
        size = 0
        for file in files:
            size += file.stat().st_size
            if path.is_dir():
                digest.update(_relative(file, path).encode() + b"\0" + _sha256(file).encode())
        fact["bytes"] = size
        fact["sha256"] = digest.hexdigest() if path.is_dir() else _sha256(path)
    except OSError as error:
        fact["error"] = f"{type(error).__name__}: {error.strerror or error}"
    return fact


def run_provenance(checkpoint: Any, suites: Iterable[Any], data: Any, *, run_name: str, run_time: datetime
                   ) -> dict[str, Any]:
    """The provenance shared by every release of a run (see the module docstring); ``data`` (the
    checkpoint's :class:`~er_expectations.run.data.base.CheckpointData`) names its inputs."""
    from importlib.metadata import version

    gx_version = version("great_expectations")
    base = Path(checkpoint.path).absolute().parent
    return {
        "schema": PROVENANCE_SCHEMA,
        "run": {"id": uuid.uuid4().hex, "name": run_name, "time": run_time.isoformat(timespec="seconds")},
        "software": {"er_expectations": __version__, "great_expectations": gx_version,
                     "python": platform.python_version(), "code": code_revision()},
        "checkpoint": file_fact("checkpoint", Path(checkpoint.path).absolute(), base=base),
        "suites": [{**file_fact("suite", Path(s.path).absolute(), base=base), "name": s.name} for s in suites],
        "engine": getattr(checkpoint.data, "engine", "pandas"),
        "inputs": data.provenance_inputs(base),
    }


def release_provenance(run: dict[str, Any], *, label: str, table: Path | None, project_dir: Path
                       ) -> dict[str, Any]:
    """``run`` with this release's label and the release table GX read (files only)."""
    release: dict[str, Any] = {"label": label}
    if table is not None:
        release["table"] = file_fact("release table", table, base=project_dir)
    return {**run, "release": release}
