"""Who may talk to the workbench: the token, the Host and Origin checks, the body size.

As Jupyter does, the server makes a random token (:func:`secrets.token_urlsafe`) and prints
it in its URL. A request is served only when it carries the token: in the query
(``?token=...``) once, after which the server sets an ``HttpOnly``, ``SameSite=Strict``
cookie and redirects to the same address without the token (so that it does not stay in the
history or leak in a ``Referer``); later requests send the cookie. Without a valid token the
answer is 403. Other local users and other web sites do not know the token.

Team mode (issue 31): with the project's access file
(:mod:`er_expectations.labelling.access`) the tokens are the project's secret (the lead's
link) and each labeller's personal link; the guard reads the file again whenever it changes,
so a link issued, revoked or rotated while the server runs counts at once. The identity a
token gives travels to the app in ``scope["state"]["erx_identity"]``; a revoked link gets a
403 page telling its holder to ask the lead. Behind a reverse proxy the public address
(``public_url``) is an accepted Host and Origin too.

Two checks stop a page of another site from using a labeller's browser:

* **Host.** Every request must name the server's own host and port (``127.0.0.1:PORT`` or
  ``localhost:PORT``, or the ``--host`` given): a DNS-rebinding page names its own host.
* **Origin.** A write (any method but GET and HEAD) must come from the server's own origin
  (``Origin: http://HOST:PORT``, required) and not be ``Sec-Fetch-Site: cross-site``.

Every answer carries a Content-Security-Policy that allows scripts, styles and connections
only from the server itself, so that a record that slipped past escaping still could not run
code or load anything from elsewhere.
"""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

from er_expectations.core.errors import InputError
from er_expectations.labelling.access import ACCESS_FILE, Access, Identity, load_access

__all__ = ["MAX_BODY", "SECURITY_HEADERS", "Guard", "cookie_name"]

#: Largest request body accepted (bytes): a decision with 100,000 ids fits.
MAX_BODY = 4 * 1024 * 1024

SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy",
     b"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
     b"form-action 'self'; base-uri 'none'; frame-ancestors 'none'"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),  # "no-referrer" makes a form post send Origin: null
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
)

Scope = dict
Receive = Callable[[], Awaitable[dict]]
Send = Callable[[dict], Awaitable[None]]


def cookie_name(port: int) -> str:
    """The token cookie of the server on ``port`` (cookies do not tell ports apart)."""
    return f"erx-workbench-{int(port)}"


class Guard:
    """ASGI middleware: token, Host, Origin and body size checks, security headers."""

    def __init__(self, app: Callable, *, token: str, folder: Path | None = None) -> None:
        self.app = app
        self.port = 0
        self.hosts: frozenset[str] = frozenset()
        self.any_host = False
        #: the project folder whose access file names the tokens (None: ``token`` alone, the lead's)
        self.folder = folder
        self._stamp: tuple | None = None
        self.access = Access(secret=token)
        self.origins: frozenset[str] = frozenset()
        self.secure = False
        self.public_hosts: frozenset[str] = frozenset()
        self._reload()

    @property
    def token(self) -> str:
        """The project's secret: the lead's token."""
        return self.access.secret

    def _reload(self) -> None:
        """Read the access file again when it changed (a link issued or revoked, a rotation)."""
        if self.folder is None:
            return
        path = self.folder / ACCESS_FILE
        try:
            st = os.stat(path)
            stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
        except OSError:
            stamp = None
        if stamp == self._stamp:
            return
        try:
            access = load_access(self.folder)
        except InputError:
            access = None  # a damaged file: the last good one stays (the CLI names the damage)
        if access is not None:
            self.access = access
            url = access.public_url
            self.origins = frozenset({url} if url else ())
            self.secure = bool(url and url.startswith("https://"))
            self.public_hosts = frozenset({urlsplit(url).netloc} if url else ())
        self._stamp = stamp

    def bind(self, host: str, port: int) -> None:
        """The address the server listens on: the Host and Origin requests must name."""
        self.port = int(port)
        if host in ("0.0.0.0", "::", ""):
            self.any_host = True  # reachable under any of the machine's names: the token guards it
        names = {"127.0.0.1", "localhost", "[::1]", f"[{host}]" if ":" in host else host}
        self.hosts = frozenset(f"{n}:{self.port}" for n in names)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        path = scope.get("path", "")
        api = path.startswith("/api/")
        host = headers.get("host", "")
        self._reload()
        if not self.any_host and host not in self.hosts and host not in self.public_hosts:
            await _refuse(send, 403, f"Host {host[:80]!r} is not this workbench's address; open the URL printed "
                                     "by 'er-expectations label serve'", api)
            return
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True))
        given = query.get("token")
        if given is not None:
            who = self.access.who(given)
            if who is None or who.revoked:
                await _refuse(send, 403, _revoked(who) if who is not None else
                              "wrong token: open the URL printed by 'er-expectations label serve', or the link the "
                              "lead gave you", api)
                return
            rest = urlencode({k: v for k, v in query.items() if k != "token"})
            await _redirect(send, quote(path) + (f"?{rest}" if rest else ""), cookie=(cookie_name(self.port), given),
                            secure=self.secure)
            return
        jar = SimpleCookie()
        try:
            jar.load(headers.get("cookie", ""))
        except Exception:  # noqa: BLE001 - a malformed cookie header is a missing token
            jar = SimpleCookie()
        morsel = jar.get(cookie_name(self.port))
        who = None if morsel is None else self.access.who(morsel.value)
        if who is None or who.revoked:
            await _refuse(send, 403, _revoked(who) if who is not None else
                          "this workbench needs its token: open the URL printed by 'er-expectations label serve' "
                          "(it ends with ?token=...), or the link the lead gave you", api)
            return
        scope = {**scope, "state": {**scope.get("state", {}), "erx_identity": who}}
        if scope.get("method", "GET") not in ("GET", "HEAD"):
            origin = headers.get("origin")
            if origin is None or (origin.removeprefix("http://") != host and origin not in self.origins):
                await _refuse(send, 403, f"write refused: Origin {origin!r} is not this workbench "
                                         f"(http://{host[:80]}); writes come only from its own pages", True)
                return
            if headers.get("sec-fetch-site", "same-origin") == "cross-site":
                await _refuse(send, 403, "write refused: a cross-site request", True)
                return
            length = headers.get("content-length")
            if length is not None and (not (length.isascii() and length.isdigit()) or int(length) > MAX_BODY):
                await _refuse(send, 413, f"request body of {length[:20]} bytes; at most {MAX_BODY:,}", True)
                return
            receive = _limited(receive)

        async def send_secured(message: dict) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *SECURITY_HEADERS]}
            await send(message)

        await self.app(scope, receive, send_secured)


def _revoked(who: Identity) -> str:
    return (f"This personal link (of {who.name}) was revoked by the lead of this project: it no longer opens the "
            "workbench. Ask the lead for a new link.")


class BodyTooLarge(Exception):
    """A request body (sent in chunks) grew past :data:`MAX_BODY`."""


def _limited(receive: Receive) -> Receive:
    seen = 0

    async def wrapped() -> dict:
        nonlocal seen
        message = await receive()
        if message.get("type") == "http.request":
            seen += len(message.get("body", b""))
            if seen > MAX_BODY:
                raise BodyTooLarge(f"request body over {MAX_BODY:,} bytes")
        return message

    return wrapped


async def _refuse(send: Send, status: int, message: str, as_json: bool) -> None:
    if as_json:
        body = json.dumps({"error": message}).encode()
        kind = b"application/json"
    else:
        from markupsafe import escape

        body = (f"<!doctype html><meta charset='utf-8'><title>er-expectations workbench</title>"
                f"<p>{escape(message)}</p>").encode()
        kind = b"text/html; charset=utf-8"
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", kind), (b"content-length", str(len(body)).encode()),
                            *SECURITY_HEADERS]})
    await send({"type": "http.response.body", "body": body})


async def _redirect(send: Send, location: str, *, cookie: tuple[str, str], secure: bool = False) -> None:
    name, value = cookie
    flags = "; Secure" if secure else ""
    await send({"type": "http.response.start", "status": 303,
                "headers": [(b"location", location.encode("latin-1", "replace")),
                            (b"set-cookie", f"{name}={value}; HttpOnly; SameSite=Strict; Path=/{flags}".encode()),
                            (b"content-length", b"0"), *SECURITY_HEADERS]})
    await send({"type": "http.response.body", "body": b""})
