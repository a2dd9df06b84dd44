"""What the workbench answers when a request cannot be served (hostile round 3, issue 29 item 7).

Never a bare "Internal Server Error": each failure the labeller can meet gets its own status
and a message saying what happened, whether anything was saved, and what to do — as JSON
(``{"error": ...}``) for ``/api/`` and as a small page otherwise:

* the store locked by another process (a ``label`` command, another server): **503** with
  ``Retry-After``, after :data:`LOCK_WAIT` seconds at most, never SQLite's 30 s;
* a full disk (SQLite's ``SQLITE_FULL``, ``ENOSPC``): **507**; the transaction was rolled back,
  earlier saves are safe and the page keeps the labeller's work to save again;
* a body nested too deep to parse (``RecursionError``): **400**;
* anything else: **500** naming the error's kind, with the advice to reload (the traceback goes
  to the server's log, as uvicorn logs it).

:func:`whole_number` reads the numbers in URLs with ASCII digits only (``str.isdigit`` also
accepts ``²`` and ``①``, which ``int`` then refuses).
"""

from __future__ import annotations

import re
import sqlite3

from markupsafe import escape
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response

from er_expectations.core.errors import ProjectBusyError
from er_expectations.labelling.store_schema import is_busy, is_disk_full

__all__ = ["LOCK_WAIT", "RETRY_AFTER", "exception_handlers", "whole_number"]

#: Seconds a request waits for another process's lock on the store before answering 503.
LOCK_WAIT = 2.0
#: Seconds the 503 answer suggests waiting (``Retry-After``).
RETRY_AFTER = 5
_DIGITS = re.compile(r"[0-9]{1,18}")


def whole_number(text: str) -> int | None:
    """``text`` (spaces trimmed) as a whole number when it is 1 to 18 ASCII digits, else None."""
    text = text.strip()
    return int(text) if _DIGITS.fullmatch(text) else None


def _answer(request: Request, status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    if request.url.path.startswith("/api/"):
        return JSONResponse({"error": message}, status_code=status, headers=headers)
    body = (f"<!doctype html><html lang='en'><meta charset='utf-8'><title>er-expectations workbench</title>"
            f"<h1>{status}</h1><p>{escape(message)}</p><p><a href='/'>Back to the queue</a></p></html>")
    return HTMLResponse(body, status_code=status, headers=headers)


def _busy(request: Request) -> Response:
    return _answer(request, 503, f"the labels store is busy: another process (a 'label' command, or another "
                                 f"workbench on the same project) holds it locked. Nothing was saved by this "
                                 f"request; try again in {RETRY_AFTER} seconds (your page keeps what you entered).",
                   {"Retry-After": str(RETRY_AFTER)})


def _full(request: Request) -> Response:
    return _answer(request, 507, "the disk holding the project is full: this answer was NOT saved (every earlier "
                                 "save is safe in the store). Free some space on that disk, then save again; your "
                                 "page keeps what you entered.")


async def _project_busy(request: Request, exc: Exception) -> Response:
    return _busy(request)


async def _database(request: Request, exc: Exception) -> Response:
    if is_busy(exc):
        return _busy(request)
    if is_disk_full(exc):
        return _full(request)
    if "readonly" in str(exc):
        return _answer(request, 503, "the labels store has become read-only (its disk was remounted read-only, or "
                                     "its permissions changed): this answer was NOT saved. Make the project folder "
                                     "writable and restart 'er-expectations label serve'.")
    return _answer(request, 500, f"the labels store could not be read or written ({exc}); nothing was saved by "
                                 "this request. Reload the page; if it happens again, stop the server and check "
                                 "the store with 'er-expectations label export'.")


async def _os_error(request: Request, exc: Exception) -> Response:
    if is_disk_full(exc):
        return _full(request)
    return await _unexpected(request, exc)


async def _too_deep(request: Request, exc: Exception) -> Response:
    return _answer(request, 400, "the request nests lists or objects too deep to read; send the decision as the "
                                 "page does (a flat object of lists of ids)")


async def _unexpected(request: Request, exc: Exception) -> Response:
    return _answer(request, 500, f"the workbench failed on this request ({type(exc).__name__}). Reload the page to "
                                 "see what is saved, and try again; the server's log has the details (please "
                                 "report it)")


def exception_handlers() -> dict:
    """Starlette's ``exception_handlers``: the failures above, each with its answer."""
    return {ProjectBusyError: _project_busy, sqlite3.OperationalError: _database, sqlite3.DatabaseError: _database,
            OSError: _os_error, RecursionError: _too_deep, Exception: _unexpected}
