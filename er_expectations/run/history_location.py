"""Where a checkpoint's history lives: its store URL and its project's key in the store.

Apart from :mod:`.history` (which turns GX results into rows) so that reading the history
(``er-expectations history``) imports neither Great Expectations nor anything that does: it
needs the checkpoint file, this module and the store (issue 29 item 6). Its imports are light
(the standard library and ruamel.yaml): :func:`read_history_place` reads the few keys of a
checkpoint file the history needs without the configuration models (pydantic, pandas).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from er_expectations.core.names import name_problem
from er_expectations.history.reading import HistoryError, default_url, resolve_url

__all__ = ["CHECKPOINT_KEYS", "PROJECT_ID_FILE", "CheckpointPlace", "HistoryPlace", "history_url", "project_key",
           "read_history_place"]

#: The top-level keys of a checkpoint file (those of :class:`~er_expectations.config.CheckpointConfig`;
#: a test checks they agree).
CHECKPOINT_KEYS: tuple[str, ...] = ("checkpoint", "project_dir", "data", "releases", "suites", "suite_paths",
                                    "actions", "history")
_DEFAULT_PROJECT_DIR = "../gx_project"  # as config/checkpoint.py
_PROJECT_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:/-]{0,254}")  # history.project, as config/history.py
_TOP_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_]*):(?:[ ]+(.*))?")
_NESTED_KEY = re.compile(r"( +)([A-Za-z_][A-Za-z0-9_]*):(?:[ ]+(.*))?")
#: Plain scalars that YAML 1.2 reads as null, a boolean or a number (or, in ruamel.yaml, a date):
#: never taken as text here.
_NOT_TEXT = re.compile(r"~|null|Null|NULL|true|True|TRUE|false|False|FALSE|[-+.0-9].*")


class _History(Protocol):
    enabled: bool
    url: str | None
    project: str | None


class _Checkpoint(Protocol):
    @property
    def history(self) -> _History: ...
    @property
    def project_dir(self) -> Path: ...
    @property
    def path(self) -> Path: ...


class HistoryPlace(NamedTuple):
    """The ``history:`` section of a checkpoint file, as :class:`~er_expectations.config.history.HistoryConfig`."""

    enabled: bool = True
    url: str | None = None
    project: str | None = None


class CheckpointPlace(NamedTuple):
    """What the history of a checkpoint needs of its file: its name, project folder and ``history:``."""

    name: str
    path: Path
    project_dir: Path
    history: HistoryPlace


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
    try:
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
                nested = _NESTED_KEY.fullmatch(line)
                if nested is None or (indent is not None and len(nested.group(1)) != indent) \
                        or nested.group(2) in found["history"]:
                    return None
                indent = len(nested.group(1))
                found["history"][nested.group(2)] = _scalar(nested.group(3) or "")
            elif key in ("checkpoint", "project_dir"):
                return None
            continue
        if line[0] == "-":  # a block sequence of the last key's value
            if key in ("checkpoint", "project_dir", "history"):
                return None
            continue
        top = _TOP_KEY.fullmatch(line)
        if top is None or top.group(1) not in CHECKPOINT_KEYS or top.group(1) in found:
            return None
        key, value = top.group(1), top.group(2) or ""
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
    if plain is None or plain[:1] in tuple("-?:,[]{}#&*!|>%@`") or "\\" in plain:
        return _UNREAD
    if plain == "":
        return None
    if plain in ("true", "True", "TRUE"):
        return True
    if plain in ("false", "False", "FALSE"):
        return False
    if _NOT_TEXT.fullmatch(plain) and not plain.startswith(("./", "../")) and plain not in (".", ".."):
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
    if project is not None and (not isinstance(project, str) or not _PROJECT_KEY.fullmatch(project)):
        return None
    return HistoryPlace(enabled=enabled, url=url, project=project)


def history_url(checkpoint: _Checkpoint, *, environ: Mapping[str, str] | None = None) -> str | None:
    """The store URL of a checkpoint (``None`` when ``history: {enabled: false}``).

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


def project_key(checkpoint: _Checkpoint, *, create: bool = False) -> str | None:
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
