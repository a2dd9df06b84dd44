"""Who may open a labelling project's workbench, kept in the project folder (issue 31, team mode).

The file :data:`ACCESS_FILE` (mode 0600, written atomically under a lock) holds:

* the **port** the workbench listens on, chosen once (a free one) and kept, so that links
  stay the same across restarts;
* the project's **secret**: the lead's token. Its link opens every page, the lead's view
  included, and asks for a typed name as a single labeller's link always did;
* the **public address** (``public_url``) when the workbench is reached through a reverse
  proxy (``https://label.example.org``): the links are made on it and the server accepts
  that Host and Origin;
* one **personal link** per labeller: only the SHA-256 digest of its token is stored (the
  token is printed once, when the link is issued). The labeller's name comes from the link.
  A revoked link stays listed, so that its holder is told to ask the lead.

A token is 32 random bytes (:func:`secrets.token_urlsafe`); tokens are compared in constant
time (:func:`secrets.compare_digest`), every stored digest against the given one.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import re
import secrets
import unicodedata
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import urlsplit

from filelock import FileLock, Timeout

from er_expectations.core.errors import InputError
from er_expectations.labelling.store import labeller_name

__all__ = ["ACCESS_FILE", "Access", "Identity", "Link", "add_link", "digest", "ensure_access", "load_access",
           "lead_url", "link_url", "public_url", "revoke_link", "rotate_secret", "set_address"]

#: The file of a project's port, secret and personal links (inside the project folder).
ACCESS_FILE = "workbench-access.json"
#: Its lock file (held while the file is rewritten).
LOCK_FILE = ".workbench-access.lock"
#: Version of the file's layout.
FORMAT = 1
_URLSAFE = re.compile(r"[A-Za-z0-9_-]+")


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def digest(token: str) -> str:
    """The SHA-256 of a token, as hex (what is stored of a personal link)."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True, slots=True)
class Link:
    """A labeller's personal link: its name, the digest of its token, when it was issued and,
    once revoked, when."""

    name: str
    digest: str
    created_at: str
    revoked_at: str | None = None

    @property
    def active(self) -> bool:
        """The link still opens the workbench."""
        return self.revoked_at is None


@dataclass(frozen=True, slots=True)
class Identity:
    """Who a token belongs to: the lead (the project's secret) or a labeller's personal link;
    ``revoked``: the link was revoked (the request is refused, with the lead to ask)."""

    kind: str  # "lead" or "labeller"
    name: str | None = None
    revoked: bool = False

    @property
    def lead(self) -> bool:
        """The lead's link (every page, the lead's view included)."""
        return self.kind == "lead"


@dataclass(frozen=True)
class Access:
    """The content of :data:`ACCESS_FILE` (see the module)."""

    secret: str = field(repr=False)
    port: int | None = None
    public_url: str | None = None
    links: tuple[Link, ...] = ()

    def who(self, token: str) -> Identity | None:
        """The identity ``token`` gives, or None for a token of nobody (constant time: every
        digest is compared)."""
        found = None
        if secrets.compare_digest(token.encode("utf-8", "surrogatepass"), self.secret.encode()):
            found = Identity("lead")
        given = digest(token).encode()
        for link in self.links:
            if secrets.compare_digest(given, link.digest.encode()) and found is None:
                found = Identity("labeller", link.name, revoked=not link.active)
        return found

    def link(self, name: str) -> Link | None:
        """The personal link of ``name`` (revoked or not), or None."""
        return next((x for x in self.links if x.name == name), None)

    def to_json(self) -> dict:
        return {"format": FORMAT, "port": self.port, "secret": self.secret, "public_url": self.public_url,
                "links": [{"name": x.name, "sha256": x.digest, "created_at": x.created_at,
                           "revoked_at": x.revoked_at} for x in self.links]}


def _parse(path: Path, text: str) -> Access:
    def bad(why: str) -> InputError:
        return InputError(f"{path}: {why}; it was left as it is: fix it, or delete it to make new links (every "
                          "link given out so far then stops working)")

    try:
        data = json.loads(text)
    except ValueError as exc:
        raise bad(f"not JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise bad(f"not a workbench access file of format {FORMAT}")
    secret, port, url, links = data.get("secret"), data.get("port"), data.get("public_url"), data.get("links")
    if not isinstance(secret, str) or len(secret) < 16 or not _URLSAFE.fullmatch(secret):
        raise bad("'secret' is missing, shorter than 16 characters or holds characters other than A-Z a-z 0-9 _ -")
    if port is not None and (isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535):
        raise bad(f"'port' {port!r} is not a port from 1 to 65535")
    if url is not None and not isinstance(url, str):
        raise bad("'public_url' is not text")
    if not isinstance(links, list):
        raise bad("'links' is not a list")
    out = []
    for i, x in enumerate(links):
        ok = isinstance(x, dict) and isinstance(x.get("name"), str) and isinstance(x.get("sha256"), str) \
            and len(x["sha256"]) == 64 and isinstance(x.get("created_at"), str) \
            and isinstance(x.get("revoked_at"), (str, type(None)))
        if not ok:
            raise bad(f"link {i + 1} lacks a name, a sha256 of 64 hex digits or created_at")
        out.append(Link(x["name"], x["sha256"], x["created_at"], x["revoked_at"]))
    return Access(secret=secret, port=port, public_url=url, links=tuple(out))


def load_access(folder: str | os.PathLike) -> Access | None:
    """The project's access file, or None when it has none yet; a damaged file raises
    :class:`InputError` naming it (and is left as it is)."""
    path = Path(folder) / ACCESS_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InputError(f"{path}: cannot read it ({exc.strerror})") from None
    return _parse(path, text)


def _write(folder: Path, access: Access) -> None:
    path = folder / ACCESS_FILE
    tmp = folder / f".{ACCESS_FILE}.{secrets.token_hex(6)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(access.to_json(), fh, indent=1)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _change(folder: str | os.PathLike, change) -> Access:
    """Read, change and write the access file under its lock (a missing one is made first)."""
    root = Path(folder)
    if not root.is_dir():
        raise InputError(f"{root}: no such project folder; make it with 'er-expectations label init'")
    try:
        with FileLock(str(root / LOCK_FILE), timeout=30):
            current = load_access(root) or Access(secret=secrets.token_urlsafe(32))
            new = change(current)
            if new != current or not (root / ACCESS_FILE).exists():
                _write(root, new)
            return new
    except Timeout:
        raise InputError(f"{root / LOCK_FILE}: held by another command for 30 s; try again") from None
    except PermissionError as exc:
        raise InputError(f"{root}: cannot write the access file ({exc.strerror})") from None


def ensure_access(folder: str | os.PathLike) -> Access:
    """The project's access file, made (with a new secret, no port yet) when missing."""
    return _change(folder, lambda a: a)


def set_address(folder: str | os.PathLike, *, port: int | None = None, public_url: str | None = None) -> Access:
    """Keep the port (and the public address, ``""`` to forget it) the workbench is reached at."""
    url = None if public_url is None else check_public_url(public_url)

    def change(a: Access) -> Access:
        return replace(a, port=a.port if port is None else int(port),
                       public_url=a.public_url if url is None else (url or None))

    return _change(folder, change)


def check_public_url(url: str) -> str:
    """``url`` as the public address of a workbench (``https://host[:port]``, no path), or
    ``""``; anything else raises :class:`InputError`."""
    if url == "":
        return ""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.path not in ("", "/") \
            or parts.query or parts.fragment or parts.username or parts.password:
        raise InputError(f"--public-url {url!r}: give the address the labellers open, such as "
                         "https://label.example.org (scheme and host, no path)")
    return f"{parts.scheme}://{parts.netloc}"


def add_link(folder: str | os.PathLike, name: str, *, renew: bool = False) -> tuple[Access, str]:
    """Issue ``name``'s personal link: ``(access, token)``; the token is shown once (only its
    digest is kept). A name with a link already needs ``renew=True`` (the old link then stops
    working); a revoked name is issued a new one."""
    who = labeller_name(name)
    if any(unicodedata.category(c) in ("Cc", "Cf") for c in who):
        raise InputError(f"labeller {who!r}: a name holds no control characters (it is printed on terminals); "
                         "give plain text")
    token = secrets.token_urlsafe(32)

    def change(a: Access) -> Access:
        old = a.link(who)
        if old is not None and old.active and not renew:
            raise InputError(f"{who!r} has a personal link already (issued {old.created_at}); add --renew to issue "
                             "a new one (the old one then stops working)")
        rest = tuple(x for x in a.links if x.name != who)
        return replace(a, links=(*rest, Link(who, digest(token), _now())))

    return _change(folder, change), token


def revoke_link(folder: str | os.PathLike, name: str) -> Access:
    """Revoke ``name``'s personal link: its holder gets a page telling them to ask the lead."""
    who = labeller_name(name)

    def change(a: Access) -> Access:
        old = a.link(who)
        if old is None:
            names = ", ".join(x.name for x in a.links) or "none yet"
            raise InputError(f"{who!r} has no personal link (links: {names})")
        if not old.active:
            return a
        return replace(a, links=tuple(replace(x, revoked_at=_now()) if x.name == who else x for x in a.links))

    return _change(folder, change)


def rotate_secret(folder: str | os.PathLike) -> Access:
    """A new project secret: the lead's old link stops working (personal links are kept)."""
    return _change(folder, lambda a: replace(a, secret=secrets.token_urlsafe(32)))


def public_url(access: Access, *, host: str = "127.0.0.1") -> str:
    """The base address of the links: the public address when set, else ``http://HOST:PORT``."""
    if access.public_url:
        return access.public_url
    if access.port is None:
        raise InputError("the workbench has no port yet: start it once with 'er-expectations label serve' (or give "
                         "--port), or set --public-url")
    shown = "127.0.0.1" if host in ("0.0.0.0", "", "::") else host
    shown = f"[{shown}]" if ":" in shown and not shown.startswith("[") else shown
    return f"http://{shown}:{access.port}"


def link_url(access: Access, token: str, *, host: str = "127.0.0.1") -> str:
    """A link carrying ``token`` (the token moves to a cookie on first use)."""
    return f"{public_url(access, host=host)}/?token={token}"


def lead_url(access: Access, *, host: str = "127.0.0.1") -> str:
    """The lead's link (the project's secret)."""
    return link_url(access, access.secret, host=host)
