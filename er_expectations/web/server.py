"""Serving the workbench: ``er-expectations label serve`` and ``erx.workbench(...)`` (docs/dev/workbench.md).

The server is uvicorn on a socket bound before it starts (``port=0`` picks a free port, so
the printed URL is right). The port and the token are kept in the project's access file
(:mod:`er_expectations.labelling.access`, issue 31): started again, the workbench listens on
the same port with the same token, so every link given out keeps working. It binds ``127.0.0.1`` unless told otherwise; any other host is
reachable from other machines and gets a warning. The URL carries the token as Jupyter's
does (:mod:`er_expectations.web.guard`). SIGINT and SIGTERM stop the command cleanly: the
requests in flight finish, the store is closed (each decision was committed when it was
saved), exit code 0.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import signal
import socket
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from er_expectations.core.errors import InputError
from er_expectations.labelling.access import ACCESS_FILE, ensure_access, lead_url, set_address

__all__ = ["LOOPBACK", "RemoteHostWarning", "is_loopback", "Workbench", "open_server", "serve", "workbench"]

LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


def is_loopback(host: str) -> bool:
    """True for an address only this machine reaches: ``localhost`` and names under ``.localhost``
    (RFC 6761), 127.0.0.0/8 however it is spelt (``127.1``, ``0x7f.1``, ``2130706433``: the forms
    the socket accepts), ``::1`` and 127.x mapped into IPv6. Names are not looked up."""
    import ipaddress

    name = host.strip().strip("[]").rstrip(".").lower()
    if name in LOOPBACK or name.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(name.split("%")[0])
    except ValueError:
        try:  # the classic spellings inet_aton reads, as binding the socket does
            address = ipaddress.IPv4Address(socket.inet_aton(name))
        except (OSError, ValueError):
            return False
    mapped = getattr(address, "ipv4_mapped", None)
    return bool((mapped or address).is_loopback)


class RemoteHostWarning(UserWarning):
    """The workbench listens on an address other machines can reach."""


def _socket(host: str, port: int, *, kept: bool = False) -> socket.socket:
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise InputError(f"port={port!r}: give a port from 1 to 65535, or 0 for a free one")
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise InputError(f"host={host!r}: not an address of this machine ({exc}); give 127.0.0.1") from None
    family, _, _, _, address = infos[0]
    # IPPROTO_TCP named: asyncio sets TCP_NODELAY only on sockets whose proto says TCP, and the
    # accepted sockets inherit it; with proto 0 every keep-alive answer waited for the client's
    # delayed ACK (~40 ms, issue 31)
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        if kept:
            raise InputError(f"cannot listen on {host}:{port}: {exc.strerror}. Port {port} is this project's port, "
                             f"kept in its {ACCESS_FILE} so that the links given out keep working: is its workbench "
                             "running already? Stop it, or give --port N (every link given out then changes)") from None
        raise InputError(f"cannot listen on {host}:{port}: {exc.strerror}; choose another --port (0: any free "
                         "port)") from None
    sock.listen(128)
    return sock


@dataclass
class Workbench:
    """A running workbench: open :attr:`url` (it carries the token) in a browser; :meth:`stop` ends it."""

    url: str
    host: str
    port: int
    token: str = field(repr=False)
    _server: object = field(repr=False, default=None)
    _thread: threading.Thread | None = field(repr=False, default=None)
    _close: Callable[[], None] | None = field(repr=False, default=None)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the server and close the project's store (saved decisions are on disk already)."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
        if self._close is not None:
            self._close()
            self._close = None

    def __enter__(self) -> Workbench:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _repr_html_(self) -> str:  # a link in Jupyter
        from markupsafe import escape

        return f'<a href="{escape(self.url)}" target="_blank" rel="noopener">{escape(self.url)}</a>'


#: The packages of the optional extra ``er-expectations[workbench]`` (the page's server).
SERVER_PACKAGES = ("starlette", "uvicorn")


def require_server_packages() -> None:
    """Raise :class:`InputError` with the install command when the workbench's server packages
    (extra ``[workbench]``) are missing: validation workers need no web server."""
    missing = [name for name in SERVER_PACKAGES if importlib.util.find_spec(name) is None]
    if missing:
        raise InputError(f"the labelling workbench needs {' and '.join(missing)}, which {'is' if len(missing) == 1 else 'are'} "
                         "not installed: pip install 'er-expectations[workbench]'")


def open_server(project, *, host: str = "127.0.0.1", port: int | None = None, quiet: bool = True,
                warn: Callable[[str], None] | None = None, public_url: str | None = None):
    """Open the project, build the app and bind its socket: ``(Workbench, uvicorn.Server, socket)``,
    not yet serving. ``project`` is a folder or an opened Project; ``port`` None is the port the
    project kept (a free one the first time), 0 any free port; ``public_url`` the address the
    labellers open through a reverse proxy (kept; ``""`` forgets it); ``warn`` tells of a host
    other machines can reach (default: a :class:`RemoteHostWarning`)."""
    require_server_packages()
    import uvicorn

    from er_expectations.labelling.project import Project, open_project
    from er_expectations.web.app import build_app
    from er_expectations.web.model import Workspace

    if not isinstance(host, str) or not host.strip():
        raise InputError(f"host={host!r}: give an address such as 127.0.0.1")
    if not is_loopback(host):
        text = (f"the workbench listens on {host}, which other machines may reach; only the token in the URL "
                "keeps them out. Use --host 127.0.0.1 unless you mean it.")
        if warn is None:
            warnings.warn(text, RemoteHostWarning, stacklevel=3)
        else:
            warn(text)
    opened = project if isinstance(project, Project) else open_project(project)
    folder = Path(opened.folder)
    sock = None
    try:
        access = ensure_access(folder) if public_url is None else set_address(folder, public_url=public_url)
        kept = port is None and access.port is not None
        sock = _socket(host, access.port if kept else (port or 0), kept=kept)
        bound = sock.getsockname()[1]
        if access.port != bound:
            access = set_address(folder, port=bound)
        space = Workspace(opened)
        web = build_app(space, token=access.secret, folder=folder)
    except BaseException:
        if sock is not None:
            sock.close()
        if opened is not project:
            opened.close()
        raise
    token = access.secret
    web.guard.bind(host, bound)
    config = uvicorn.Config(web.guard, log_level="warning" if quiet else "info", access_log=False, lifespan="off",
                            timeout_graceful_shutdown=5)
    server = _Server(config)
    close = opened.close if opened is not project else None
    bench = Workbench(url=lead_url(access, host=host), host=host, port=bound, token=token, _server=server,
                      _close=close)
    return bench, server, sock


class _Server:
    """uvicorn's server with signals handled here: SIGINT/SIGTERM end it without re-raising."""

    def __init__(self, config) -> None:
        import uvicorn

        class Quiet(uvicorn.Server):
            @contextlib.contextmanager
            def capture_signals(self) -> Iterator[None]:  # our own handlers, restored afterwards
                if threading.current_thread() is not threading.main_thread():
                    yield
                    return
                previous = {s: signal.signal(s, self._stop) for s in (signal.SIGINT, signal.SIGTERM)}
                try:
                    yield
                finally:
                    for s, h in previous.items():
                        signal.signal(s, h)

            def _stop(self, _signum, _frame) -> None:
                self.should_exit = True

        self.inner = Quiet(config)

    @property
    def should_exit(self) -> bool:
        return self.inner.should_exit

    @should_exit.setter
    def should_exit(self, value: bool) -> None:
        self.inner.should_exit = value

    @property
    def started(self) -> bool:
        return self.inner.started

    def run(self, sock: socket.socket) -> None:
        self.inner.run(sockets=[sock])


def serve(project, *, host: str = "127.0.0.1", port: int | None = None, open_browser: bool = False,
          say: Callable[[str], None] = print, warn: Callable[[str], None] | None = None,
          public_url: str | None = None, show_link: bool = True) -> int:
    """Serve ``project`` until SIGINT or SIGTERM (the CLI's ``label serve``); returns 0.
    ``show_link=False`` prints the address without the lead's token (a service's log)."""
    bench, server, sock = open_server(project, host=host, port=port, warn=warn, public_url=public_url)
    if show_link:
        say(f"labelling workbench of {os.fspath(project)} at\n    {bench.url}\n"
            "open it in a browser (the token in it is needed; it is the lead's link, kept across restarts: give "
            "labellers their own with 'er-expectations label links PROJECT add NAME'); stop with Ctrl+C")
    else:
        say(f"labelling workbench of {os.fspath(project)} listening on {host}:{bench.port}; the lead's link: "
            f"'er-expectations label links {os.fspath(project)} lead'; stop with Ctrl+C")
    if open_browser:
        import webbrowser

        threading.Timer(0.5, webbrowser.open, args=(bench.url,)).start()
    try:
        server.run(sock)
    finally:
        sock.close()
        bench.stop()
    say("workbench stopped; every saved decision is in the project's store")
    return 0


def workbench(project, *, host: str = "127.0.0.1", port: int | None = None, timeout: float = 30.0) -> Workbench:
    """Serve a labelling project from a notebook, in a background thread.

    ``project`` is the project folder (``er-expectations label init``) or an opened
    :class:`~er_expectations.labelling.project.Project`. Returns a :class:`Workbench` whose
    ``url`` (with its token) opens the page and whose ``stop()`` ends the server.
    """
    bench, server, sock = open_server(project, host=host, port=port)
    thread = threading.Thread(target=server.run, args=(sock,), name="er-workbench", daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            bench.stop()
            raise RuntimeError(f"the workbench did not start within {timeout:g} s on {host}:{bench.port}")
        time.sleep(0.02)
    bench._server, bench._thread = server, thread
    return bench
