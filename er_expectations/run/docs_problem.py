"""A Data Docs build that could not write every page (issue 18, items 14 and 16): one message
that names the folder, the cause and the fix, and says what is kept.

The pages are written atomically (:mod:`er_expectations.gx.docs.site_store`), so a page is whole or
absent; the validation results and the history were written before the build and stay. The
next run builds the pages that are missing (``results_without_pages``).
"""

from __future__ import annotations

import errno
import os
from collections.abc import Sequence
from pathlib import Path

from er_expectations.core.errors import InputError
from er_expectations.gx.docs.site_store import SiteWriteFailure

__all__ = ["DataDocsError", "docs_failure_message"]


class DataDocsError(InputError):
    """Data Docs pages could not be written; the message says which folder, why and the fix."""


def _fix(code: int | None, folder: Path) -> str:
    if code in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return f"free space on the disk of {folder} (or raise the file-size limit)"
    if code in (errno.EACCES, errno.EPERM, errno.EROFS):
        return f"make {folder} writable"
    return f"check that {folder} can be written"


def docs_failure_message(failures: Sequence[SiteWriteFailure], *, site: Path,
                         project_dir: str | os.PathLike) -> str:
    """The message of a build that failed: the site folder, the first error and its fix, the
    number of pages not written, and what was kept (results, history, whole older pages)."""
    first = failures[0]
    results = Path(project_dir) / "gx" / "uncommitted" / "validations"
    count = len({f.path for f in failures})
    return (f"{count} page(s) of the Data Docs site {site} could not be written ({first.error}, "
            f"at {first.path}); {_fix(first.errno, site)}, then run the checkpoint again: it builds "
            f"the missing pages. Nothing half-written was left: every page on disk is whole. "
            f"The validation results ({results}) and the history were written before and are kept")
