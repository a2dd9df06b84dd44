"""Folders that cannot be written, for the tests of unwritable outputs.

As root (CI) permission bits do not stop a write, so :func:`read_only` bind-mounts the folder
read-only (the kernel refuses every write with EROFS); otherwise it removes the write bits.
The test is skipped where neither is possible.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """``folder`` and everything under it cannot be written while inside."""
    if os.geteuid() == 0:
        mounted = subprocess.run(["mount", "--bind", str(folder), str(folder)], capture_output=True)
        if mounted.returncode != 0:
            pytest.skip(f"cannot bind-mount {folder} read-only here: {mounted.stderr.decode().strip()}")
        try:
            remount = subprocess.run(["mount", "-o", "remount,ro,bind", str(folder)], capture_output=True)
            if remount.returncode != 0:
                pytest.skip(f"cannot remount {folder} read-only here: {remount.stderr.decode().strip()}")
            yield
        finally:
            subprocess.run(["umount", str(folder)], check=True)
        return
    modes = {}
    for path in [folder, *folder.rglob("*")]:
        modes[path] = path.stat().st_mode
        path.chmod(path.stat().st_mode & ~0o222)
    try:
        yield
    finally:
        for path, mode in sorted(modes.items(), key=lambda item: len(item[0].parts)):
            path.chmod(mode)
