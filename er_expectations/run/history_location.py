"""Where a checkpoint's history lives: its store URL and its project's key in the store.

Apart from :mod:`.history` (which turns GX results into rows) so that reading the history
(``er-expectations history``) imports neither Great Expectations nor anything that does: it
needs the checkpoint file, this module and the store (issue 29 item 6). Its imports are light
(the standard library and ruamel.yaml): :func:`read_history_place` reads the few keys of a
checkpoint file the history needs without the configuration models (pydantic, pandas).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path

from er_expectations.core.names import name_problem
from er_expectations.history.reading import HistoryError, default_url, resolve_url

TYPE_CHECKING = False  # typing is not imported when the program starts (issue 29 item 6)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["CHECKPOINT_KEYS", "MAX_FILE_BYTES", "PROJECT_ID_FILE", "CheckpointPlace", "HistoryPlace", "history_url", "project_key",
           "read_history_place"]

#: The top-level keys of a checkpoint file (those of :class:`~er_expectations.config.CheckpointConfig`;
#: a test checks they agree).
CHECKPOINT_KEYS: tuple[str, ...] = ("checkpoint", "project_dir", "data", "releases", "suites", "suite_paths",
                                    "actions", "history")
_DEFAULT_PROJECT_DIR = "../gx_project"  # as config/checkpoint.py
MAX_FILE_BYTES = 1_000_000  # as config/yamlnodes.py: larger files are the full loader's to refuse
#: history.project, as config/history.py (matched with re's cache: nothing compiled on import)
_PROJECT_KEY = r"[A-Za-z0-9][A-Za-z0-9_.:/-]{0,254}"
#: Plain scalars that YAML 1.2 reads as null or a boolean; one starting with a digit, a sign or a
#: dot may be a number (or, in ruamel.yaml, a date): neither is taken as text here.
_NULL = frozenset({"~", "null", "Null", "NULL"})
_TRUE, _FALSE = frozenset({"true", "True", "TRUE"}), frozenset({"false", "False", "FALSE"})
_NUMBER_START = frozenset("-+.0123456789")
_INDICATORS = frozenset("-?:,[]{}#&*!|>%@`")


def _key_line(line: str) -> tuple[str, str] | None:
    """``(key, value)`` of a ``key: value`` or ``key:`` line (a plain ASCII key), else ``None``."""
    key, colon, value = line.partition(":")
    if not colon or not key or not key.isascii() or not key.replace("_", "a").isalnum() or key[0].isdigit():
        return None
    if value and not value.startswith(" "):
        return None
    return key, value.strip(" ")


class HistoryPlace:
    """The ``history:`` section of a checkpoint file, as :class:`~er_expectations.config.history.HistoryConfig`
    (a plain class: a named tuple or a dataclass costs its creation when the program starts)."""

    __slots__ = ("enabled", "project", "url")

    def __init__(self, *, enabled: bool = True, url: str | None = None, project: str | None = None) -> None:
        self.enabled, self.url, self.project = enabled, url, project

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HistoryPlace) and (self.enabled, self.url, self.project) == (
            other.enabled, other.url, other.project)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"HistoryPlace(enabled={self.enabled!r}, url={self.url!r}, project={self.project!r})"


class CheckpointPlace:
    """What the history of a checkpoint needs of its file: its name, project folder and ``history:``
    (the attributes of :class:`~er_expectations.config.CheckpointConfig` that :func:`history_url`
    and :func:`project_key` read)."""

    __slots__ = ("history", "name", "path", "project_dir")

    def __init__(self, *, name: str, path: Path, project_dir: Path, history: HistoryPlace) -> None:
        self.name, self.path, self.project_dir, self.history = name, path, project_dir, history

    def __repr__(self) -> str:
        return (f"CheckpointPlace(name={self.name!r}, path={self.path!r}, project_dir={self.project_dir!r}, "
                f"history={self.history!r})")


def read_history_place(path: str | Path) -> CheckpointPlace | None:
    """The name, project folder and ``history:`` section of the checkpoint file at ``path``,
    read without the configuration models (pydantic) or a YAML library (issue 29 item 6).

    Only the simplest form of YAML is read here: top-level ``key: value`` lines, plain or quoted
    text for ``checkpoint``, ``project_dir``, ``history.url`` (a file) and ``history.project``,
    ``true``/``false`` for ``history.enabled``, ``history`` as an indented block; the values of
    the other keys are skipped. Anything else (flow style, anchors, tags, escapes, a URL with
    ``://`` or ``${``, a value YAML would read as a number, an unknown or repeated key, a missing
    ``checkpoint``, ``data`` or ``suites``) gives ``None``: the full loader
    (:func:`~er_expectations.config.load_checkpoint`) then reads the file, or names its problem
    with the line and the fix. ``tests/run/test_history_place.py`` checks that both agree.
    The rest of the file (data, suites) is not checked: reading the history needs none of it.
    """
    path = Path(path)
    try:  # a regular file of a configuration's size only: a FIFO or a device would block or never end
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
            return None
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    found = _top_level(text.removeprefix("\ufeff"))
    if found is None or not {"checkpoint", "data", "suites"} <= set(found):
        return None
    name, project_dir, history = found["checkpoint"], found.get("project_dir"), found.get("history", {})
    if not isinstance(name, str) or name_problem(name, what="checkpoint") is not None:
        return None
    if project_dir is not None and not isinstance(project_dir, str):
        return None
    base = path.absolute().parent
    folder = Path(_DEFAULT_PROJECT_DIR if project_dir is None else project_dir).expanduser()
    folder = (folder if folder.is_absolute() else base / folder).resolve()
    if folder.exists() and not folder.is_dir():
        return None
    place = _history_place(history)
    if place is None:
        return None
    return CheckpointPlace(name=name, path=path, project_dir=folder, history=place)


def _top_level(text: str) -> dict[str, Any] | None:
    """The values of ``checkpoint``, ``project_dir`` and ``history`` (a dict of its keys) of a
    file of the simple form :func:`read_history_place` reads, the other keys mapped to ``None``;
    ``None`` when the file is not of that form."""
    found: dict[str, Any] = {}
    key = None
    indent = None  # of the history block's lines
    for line in text.replace("\r\n", "\n").split("\n"):
        stripped = line.strip(" ")
        if not stripped or stripped.startswith("#"):
            continue
        if "\t" in line[: len(line) - len(line.lstrip())] or "\r" in line:
            return None
        if line[0] == " ":  # a line of the last key's value
            if key == "history":
                nested = _key_line(line.lstrip(" "))
                depth = len(line) - len(line.lstrip(" "))
                if nested is None or (indent is not None and depth != indent) or nested[0] in found["history"]:
                    return None
                indent = depth
                found["history"][nested[0]] = _scalar(nested[1])
            elif key in ("checkpoint", "project_dir"):
                return None
            continue
        if line[0] == "-":  # a block sequence of the last key's value, or a document marker
            if key in (None, "checkpoint", "project_dir", "history") or line.startswith("---") \
                    or line[1:2] not in ("", " "):
                return None
            continue
        if line.startswith("..."):  # the end of the document
            return None
        top = _key_line(line)
        if top is None or top[0] not in CHECKPOINT_KEYS or top[0] in found:
            return None
        key, value = top
        if key == "history":
            if _without_comment(value) != "":
                return None  # flow style ({enabled: false}): the full loader reads it
            found[key] = {}  # filled by the indented lines that follow
        elif key in ("checkpoint", "project_dir"):
            found[key] = _scalar(value)
        else:
            if not _closed(value):
                return None
            found[key] = None
    if found.get("history") == {}:
        return None  # 'history:' with nothing under it is null, which the full loader refuses
    return found


def _without_comment(value: str) -> str | None:
    """A plain value without its comment (`` #`` and what follows), or ``None`` when it holds
    something this reader leaves to YAML (``: `` or a quote)."""
    value = value.strip(" ")
    if value.startswith("#"):
        return ""
    head, _, _ = value.partition(" #")
    head = head.rstrip(" ")
    return None if ": " in head or head.endswith(":") or '"' in head or "'" in head else head


def _scalar(value: str) -> Any:
    """A value as text, or :data:`_UNREAD` when YAML might read it otherwise (a number, a
    boolean, null, flow style, an anchor, a tag, an escape)."""
    value = value.strip(" ")
    if value[:1] in ('"', "'"):
        quote = value[0]
        end = value.find(quote, 1)
        while quote == "'" and end != -1 and value[end + 1: end + 2] == "'":
            end = value.find(quote, end + 2)
        if end == -1:
            return _UNREAD
        inner, rest = value[1:end], value[end + 1:].strip(" ")
        if rest and not rest.startswith("#") or (quote == '"' and "\\" in inner):
            return _UNREAD
        return inner.replace("''", "'") if quote == "'" else inner
    plain = _without_comment(value)
    if plain is None or (plain[:1] in _INDICATORS) or "\\" in plain:
        return _UNREAD
    if plain == "" or plain in _NULL:
        return None if plain == "" else _UNREAD
    if plain in _TRUE or plain in _FALSE:
        return plain in _TRUE
    if plain[0] in _NUMBER_START and not plain.startswith(("./", "../")) and plain not in (".", ".."):
        return _UNREAD
    return plain


def _closed(value: str) -> bool:
    """Whether a skipped value ends on its line (no flow collection or quoted text going on)."""
    value = value.strip(" ")
    if value[:1] in ('"', "'"):
        return not isinstance(_scalar(value), _Unread)
    if value[:1] in ("[", "{"):
        head = value.partition(" #")[0].rstrip(" ")
        return head.count("[") == head.count("]") and head.count("{") == head.count("}") \
            and '"' not in head and "'" not in head
    return True


class _Unread:
    """A value this reader leaves to the full loader."""


_UNREAD = _Unread()


def _history_place(section: dict[str, Any]) -> HistoryPlace | None:
    if not set(section) <= {"url", "enabled", "project"}:
        return None
    url, enabled, project = section.get("url"), section.get("enabled", True), section.get("project")
    if url is not None and (not isinstance(url, str) or "://" in url or "${" in url):
        return None
    if not isinstance(enabled, bool):
        return None
    if project is not None and (not isinstance(project, str) or not re.fullmatch(_PROJECT_KEY, project)):
        return None
    return HistoryPlace(enabled=enabled, url=url, project=project)


def history_url(checkpoint: Any, *, environ: Mapping[str, str] | None = None) -> str | None:
    """The store URL of a checkpoint (a :class:`~er_expectations.config.CheckpointConfig` or a
    :class:`CheckpointPlace`; ``None`` when ``history: {enabled: false}``).

    Raises :class:`HistoryError` for an environment variable that is not set.
    """
    config = checkpoint.history
    if not config.enabled:
        return None
    if config.url is None:
        return default_url(checkpoint.project_dir)
    return resolve_url(config.url, base=Path(checkpoint.path).absolute().parent, environ=environ)


#: The file in a project folder that holds the project's key in a shared history store.
PROJECT_ID_FILE = ".er-project-id"


def project_key(checkpoint: Any, *, create: bool = False) -> str | None:
    """The key of the checkpoint's project in the history store: ``history.project`` if given,
    else the id kept in the project folder (:data:`PROJECT_ID_FILE`; written on the first run
    with ``create=True``, so moving the folder keeps it). ``None`` for a project that never ran."""
    if checkpoint.history.project:
        return str(checkpoint.history.project)
    path = Path(checkpoint.project_dir) / PROJECT_ID_FILE
    try:
        text = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        text = ""
    except OSError as error:
        raise HistoryError(f"cannot read the project's history key {path}: {error.strerror or error}") from None
    if text:
        return text
    if not create:
        return None
    import uuid

    from er_expectations.core.io import atomic_write

    key = f"project-{uuid.uuid4().hex}"
    atomic_write(path, (key + "\n").encode("utf-8"))
    return key
