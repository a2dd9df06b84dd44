"""Headless Chromium helpers for checking Data Docs pages the way an auditor sees them.

The browser is Debian's ``chromium`` (or ``chromium-browser``) found on ``PATH``. Every call uses
a fresh throw-away profile and a host-resolver rule that makes every remote host fail at once, so
a page that still needs the network shows it deterministically instead of hanging.

* :func:`dump_dom` returns the DOM after the page loaded (``--dump-dom``);
* :func:`screenshot` writes a viewport-sized PNG (use a tall ``height`` for long pages);
* :func:`visible_text` and :func:`page_problems` inspect HTML without a browser.

Text drawn by CSS (``::before``/``::after``) is not part of the DOM: assert on real text.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import tempfile
from html.parser import HTMLParser
from pathlib import Path

__all__ = [
    "ChromiumNotFoundError",
    "chromium_available",
    "dump_dom",
    "find_chromium",
    "page_problems",
    "screenshot",
    "visible_text",
]

CHROMIUM_NAMES = ("chromium", "chromium-browser")

BASE_FLAGS = (
    "--headless",
    "--no-sandbox",  # needed as root and in most containers
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-extensions",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--mute-audio",
    "--force-device-scale-factor=1",
    "--lang=en-US",
)
#: Every host except localhost resolves to "not found": remote resources fail fast.
OFFLINE_FLAGS = ("--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE localhost",)
_VIRTUAL_TIME_MS = 3000


class ChromiumNotFoundError(RuntimeError):
    """Neither ``chromium`` nor ``chromium-browser`` is on PATH."""


def find_chromium() -> str:
    """Path of the Chromium executable; raises :class:`ChromiumNotFoundError` if there is none."""
    for name in CHROMIUM_NAMES:
        exe = shutil.which(name)
        if exe:
            return exe
    raise ChromiumNotFoundError(
        "headless Chromium is needed but neither 'chromium' nor 'chromium-browser' is on PATH; "
        "install it (Debian/Ubuntu: sudo apt-get install -y chromium) or run ./run test, "
        "which installs it when it can"
    )


def chromium_available() -> bool:
    """True when :func:`find_chromium` would succeed (for ``pytest.mark.skipif``)."""
    return any(shutil.which(name) for name in CHROMIUM_NAMES)


def _to_url(path_or_url: str | os.PathLike[str]) -> str:
    text = os.fspath(path_or_url)
    if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", text) or text.startswith(("data:", "about:")):
        return text
    path = Path(text).resolve()
    if not path.exists():
        raise FileNotFoundError(f"page not found: {path}")
    return path.as_uri()


def _run(args: list[str], url: str, timeout: float) -> subprocess.CompletedProcess[str]:
    exe = find_chromium()
    with tempfile.TemporaryDirectory(prefix="er-chromium-") as profile:
        cmd = [exe, *BASE_FLAGS, *OFFLINE_FLAGS, f"--user-data-dir={profile}",
               f"--crash-dumps-dir={profile}", *args, url]
        # own session, so that on timeout the whole browser (zygote, renderers) is ended
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise TimeoutError(f"chromium did not finish within {timeout:g} s on {url}") from None
        return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def _stderr_tail(err: str) -> str:
    # Debian's wrapper script and D-Bus always print harmless noise: show only the end.
    return err.strip()[-1200:] or "(no stderr)"


def dump_dom(path_or_url: str | os.PathLike[str], *, timeout: float = 60) -> str:
    """Serialized DOM of the page after it loaded (remote hosts blocked)."""
    url = _to_url(path_or_url)
    proc = _run(["--dump-dom", f"--virtual-time-budget={_VIRTUAL_TIME_MS}"], url, timeout)
    if proc.returncode != 0 or not proc.stdout.strip():
        raise RuntimeError(f"chromium --dump-dom failed on {url} (exit {proc.returncode}): "
                           f"{_stderr_tail(proc.stderr)}")
    return proc.stdout


def screenshot(path_or_url: str | os.PathLike[str], png_path: str | os.PathLike[str], *,
               width: int = 1280, height: int = 1600, timeout: float = 60) -> Path:
    """Save a ``width`` x ``height`` screenshot of the page as PNG and return its path."""
    url = _to_url(path_or_url)
    png = Path(png_path).resolve()
    png.parent.mkdir(parents=True, exist_ok=True)
    png.unlink(missing_ok=True)
    proc = _run([f"--screenshot={png}", f"--window-size={int(width)},{int(height)}",
                 f"--virtual-time-budget={_VIRTUAL_TIME_MS}"], url, timeout)
    # the exit code is not reliable for --screenshot: check the file
    if not png.is_file() or png.stat().st_size == 0:
        raise RuntimeError(f"chromium --screenshot wrote no PNG for {url} (exit {proc.returncode}): "
                           f"{_stderr_tail(proc.stderr)}")
    return png


# ----------------------------------------------------------------------------------------------
# HTML inspection (no browser needed)

_HIDDEN = frozenset({"script", "style", "title", "template", "noscript", "head"})
_BLOCKISH = frozenset({
    "address", "article", "aside", "blockquote", "br", "caption", "dd", "div", "dl", "dt",
    "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6",
    "header", "hr", "label", "li", "main", "nav", "ol", "option", "p", "pre", "section", "table",
    "tbody", "td", "tfoot", "th", "thead", "tr", "ul",
})


class _TextParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.hidden = 0
        self.parts: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in _HIDDEN:
            self.hidden += 1
        elif tag in _BLOCKISH:
            self.parts.append(" ")

    def handle_startendtag(self, tag, attrs):
        if tag in _BLOCKISH:
            self.parts.append(" ")

    def handle_endtag(self, tag):
        if tag in _HIDDEN:
            self.hidden = max(0, self.hidden - 1)
        elif tag in _BLOCKISH:
            self.parts.append(" ")

    def handle_data(self, data):
        if not self.hidden:
            self.parts.append(data)


def visible_text(html: str) -> str:
    """The text a reader sees: tags, scripts, styles removed, entities unescaped, whitespace
    collapsed to single spaces (block elements such as table cells are separated by a space)."""
    parser = _TextParser()
    parser.feed(html)
    parser.close()
    return " ".join("".join(parser.parts).split())  # entities were unescaped by the parser


class _ScriptParser(HTMLParser):
    """Finds executable code: <script> elements, on* handlers and javascript: URLs."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.in_script = False
        self.scripts: list[str] = []
        self.handlers: list[str] = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            value = value or ""
            if name.startswith("on") or value.strip().lower().startswith("javascript:"):
                self.handlers.append(f"<{tag} {name}={value!r}>")
        if tag == "script":
            src = dict(attrs).get("src") or ""
            self.in_script = True
            self.scripts.append(f"src={src}" if src else "")

    def handle_endtag(self, tag):
        if tag == "script":
            self.in_script = False

    def handle_data(self, data):
        if self.in_script and self.scripts:
            self.scripts[-1] += data


_TEMPLATE_PARAM = re.compile(r"\$[A-Za-z_][A-Za-z0-9_]*")
_DICT_REPR = re.compile(r"\{'[^'\n]{0,80}'\s*:")


def _snippet(text: str, pos: int, width: int = 40) -> str:
    return text[max(0, pos - width): pos + width].strip()


def page_problems(html: str) -> list[str]:
    """Rendering and escaping problems visible in a page; an empty list means none found.

    Flags GX template leftovers (``**{``, ``(**``, unsubstituted ``$params``), raw Python dict
    reprs (``{'``) in the visible text, and live ``<script>`` elements, event handlers or
    ``javascript:`` URLs that call ``alert`` (the usual marker of injected test data). A column
    that really contains ``$name`` gives a false positive on the ``$param`` check.
    """
    problems: list[str] = []
    text = visible_text(html)
    for marker in ("**{", "(**"):
        pos = text.find(marker)
        if pos >= 0:
            problems.append(f"template marker {marker!r} in text: ...{_snippet(text, pos)}...")
    for m in _TEMPLATE_PARAM.finditer(text):
        problems.append(f"unsubstituted template parameter {m.group(0)!r}: "
                        f"...{_snippet(text, m.start())}...")
    for m in _DICT_REPR.finditer(text):
        problems.append(f"raw Python dict repr in text: ...{_snippet(text, m.start())}...")
    parser = _ScriptParser()
    parser.feed(html)
    parser.close()
    for code in parser.scripts:
        if "alert" in code:
            problems.append(f"live <script> calling alert: {code.strip()[:120]!r}")
    for handler in parser.handlers:
        if "alert" in handler:
            problems.append(f"live event handler or javascript: URL calling alert: {handler[:120]}")
    return problems
