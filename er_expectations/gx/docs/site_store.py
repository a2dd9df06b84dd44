"""The Data Docs site's file store: every page written atomically, every failure kept.

GX writes a site's pages with :class:`TupleFilesystemStoreBackend`, in place: a full disk or a
file-size limit leaves a page cut short, which the index then links and no later run rebuilds.
:class:`AtomicSiteStoreBackend` (the store of every site er-expectations configures,
:func:`~er_expectations.gx.docs.data_docs.site_config`) writes each page to a temporary file in the
same folder and renames it over the old one (:func:`~er_expectations.core.io.atomic_write`):
a page is whole or absent, so the index never links a broken page and the next run builds the
missing ones (issue 18, items 14 and 16).

GX catches an error of a page write, logs a traceback and goes on. :func:`site_write_failures`
collects what failed while a build runs (the files and their errors), so that the runner says
once which folder could not be written and how to fix it, and keeps GX's tracebacks of those
failures off the terminal.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from great_expectations.data_context.store.tuple_store_backend import TupleFilesystemStoreBackend

from er_expectations.core.io import atomic_write

__all__ = ["AtomicSiteStoreBackend", "SiteWriteFailure", "site_write_failures"]

_GX_SITE_LOGGER = "great_expectations.render.renderer.site_builder"
_GX_RENDER_ERROR = "An unexpected Exception occurred during data docs rendering"


@dataclass(frozen=True)
class SiteWriteFailure:
    """A page of the site that could not be written: its file and the error (errno and text)."""

    path: str
    errno: int | None
    error: str


_LOCK = threading.Lock()
_ACTIVE: list[list[SiteWriteFailure]] = []  # the lists of the builds under way (innermost last)


class AtomicSiteStoreBackend(TupleFilesystemStoreBackend):
    """:class:`TupleFilesystemStoreBackend` whose writes are atomic (see the module docstring)."""

    def _set(self, key: Any, value: Any, **kwargs: Any) -> str:  # noqa: ARG002 - GX's signature
        if not isinstance(key, tuple):
            key = key.to_tuple()
        filepath = os.path.join(self.full_base_directory, self._convert_key_to_filepath(key))  # noqa: PTH118
        try:
            atomic_write(filepath, value)
        except OSError as error:
            with _LOCK:
                for failures in _ACTIVE[-1:]:
                    failures.append(SiteWriteFailure(filepath, error.errno, error.strerror or str(error)))
            raise
        return filepath


class _RenderErrors(logging.Filter):
    """Keeps GX's "unexpected Exception … data docs rendering" records of a build aside."""

    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def filter(self, record: logging.LogRecord) -> bool:
        if _GX_RENDER_ERROR in record.getMessage():
            self.records.append(record)
            return False
        return True


@contextmanager
def site_write_failures() -> Iterator[list[SiteWriteFailure]]:
    """The pages of the site that could not be written while the block ran (filled when it
    ends). GX's logged tracebacks of those failures are dropped; a rendering error that was not
    a failed write is logged as GX logged it."""
    failures: list[SiteWriteFailure] = []
    errors = _RenderErrors()
    logger = logging.getLogger(_GX_SITE_LOGGER)
    with _LOCK:
        _ACTIVE.append(failures)
    logger.addFilter(errors)
    try:
        yield failures
    finally:
        logger.removeFilter(errors)
        with _LOCK:
            _ACTIVE.remove(failures)
        if len(errors.records) > len(failures):  # something else went wrong too: GX's own words
            for record in errors.records[len(failures):]:
                logger.handle(record)
