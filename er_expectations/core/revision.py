"""Which code of er-expectations ran: the revision recorded in a run's provenance (issue 29 item 3).

Run from a git checkout (an editable install, or the source folder on the path), the code is
named by its **git commit** and whether the package's files differ from it (``clean``: no file
of the package folder modified, added or deleted since the commit, untracked ones included).
Installed from a distribution, it is named by the distribution's **version**. In both cases
the **SHA-256 of the package's files** (every file under the package folder but compiled
bytecode, by relative path and content, in path order) names the exact code, so that two runs
with the same hash ran the same code whatever their version says.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path
from typing import Any

from er_expectations.core.version import __version__

__all__ = ["code_revision", "package_files_sha256"]

_PACKAGE = Path(__file__).resolve().parent.parent
_GIT_TIMEOUT = 10.0  # seconds: provenance never hangs a run on a slow file system
_SKIP_DIRS = {"__pycache__"}
_SKIP_SUFFIXES = (".pyc", ".pyo")


def package_files_sha256(folder: Path = _PACKAGE) -> str:
    """SHA-256 over the package's files: for each, its path relative to ``folder`` (forward
    slashes), a NUL, the SHA-256 of its bytes and a newline, in path order (bytecode left out)."""
    files = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
        files += [Path(root) / n for n in names if not n.endswith(_SKIP_SUFFIXES)]
    digest = hashlib.sha256()
    for file in sorted(files, key=lambda p: p.relative_to(folder).as_posix()):
        inner = hashlib.sha256()
        with file.open("rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                inner.update(chunk)
        digest.update(file.relative_to(folder).as_posix().encode() + b"\0" + inner.hexdigest().encode() + b"\n")
    return digest.hexdigest()


def _git(folder: Path, *args: str) -> str | None:
    git = shutil.which("git")
    if git is None:
        return None
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}  # never take the index lock of a checkout
    try:
        done = subprocess.run([git, "-C", str(folder), *args], capture_output=True, text=True, env=env,
                              timeout=_GIT_TIMEOUT, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def _git_revision(folder: Path) -> dict[str, Any] | None:
    """``{"commit", "clean", "changed"}`` when ``folder`` is tracked in a git checkout, else None."""
    top = _git(folder, "rev-parse", "--show-toplevel")
    if not top or _git(folder, "ls-files", "--error-unmatch", "__init__.py") is None:
        return None  # not a checkout, or the package is not tracked there (e.g. a venv inside one)
    commit = (_git(folder, "rev-parse", "--verify", "HEAD") or "").strip()
    status = _git(folder, "status", "--porcelain", "--untracked-files=all", "--", ".")
    if len(commit) not in (40, 64) or status is None:
        return None
    changed = [line for line in status.splitlines() if line.strip() and "__pycache__" not in line]
    return {"commit": commit, "clean": not changed, "changed": len(changed)}


@lru_cache(maxsize=1)
def code_revision() -> dict[str, Any]:
    """The code that runs (see the module docstring): ``{"version", "source", "git", "files_sha256"}``
    where ``source`` is ``"git checkout"`` or ``"installed distribution"`` and ``git`` is
    ``{"commit", "clean", "changed"}`` or None. Computed once per process."""
    git = _git_revision(_PACKAGE)
    return {"version": __version__, "source": "git checkout" if git else "installed distribution",
            "git": git, "files_sha256": package_files_sha256()}
