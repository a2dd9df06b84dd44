"""Location-aware YAML: every key and value keeps the line and column it came from.

ruamel.yaml's composer (YAML 1.2, the safe constructor; ruamel.yaml comes with GX) builds a
node graph whose nodes carry ``start_mark``; this module turns that graph into a small tree
of :class:`Node` objects, with the scalars converted by the safe constructor. YAML 1.2 reads
``yes``/``no``/``on``/``off`` as text and ``010`` as ten, where YAML 1.1 loaders guess a
boolean or an octal number. Along the way it reports, instead of silently resolving them,
the things a plain loader hides: duplicate keys in a mapping, keys that are not scalars,
unknown tags, recursive aliases.
"""

from __future__ import annotations

import datetime as _dt
import math
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ruamel.yaml import YAML
from ruamel.yaml.constructor import ConstructorError
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode
from ruamel.yaml.nodes import Node as YAMLNode
from ruamel.yaml.reader import ReaderError

from er_expectations.config.errors import IssueCollector

__all__ = ["MAX_FILE_BYTES", "Node", "compose_file", "compose_text", "describe", "read_yaml"]

_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_MERGE_TAG = "tag:yaml.org,2002:merge"
_NODE_LIMIT = 100_000
#: Lists and mappings nested deeper than this are refused (the files nest a few levels; the
#: validation that follows walks the tree recursively).
_DEPTH_LIMIT = 64
#: Largest configuration file read (about 10,000 expectations): YAML is composed in pure
#: Python, about a second per 100 kB, so a bigger file is refused before it is read.
MAX_FILE_BYTES = 1_000_000

NodeKind = Literal["scalar", "sequence", "mapping", "invalid"]


@dataclass(frozen=True, slots=True, eq=False)
class Node:
    """A YAML value with its 1-based position in the file.

    ``value`` is the Python scalar for ``kind == "scalar"`` (``str``, ``int``, ``float``,
    ``bool``, ``None``, dates...), a tuple of nodes for a sequence, and a tuple of
    ``(key, value)`` node pairs for a mapping. ``text`` is the scalar as written (without
    its quotes) and ``quoted`` tells whether it was quoted. A node of kind ``"invalid"``
    stands for a value that could not be read; its issue is already reported.
    """

    kind: NodeKind
    value: object
    line: int
    column: int
    text: str = ""
    quoted: bool = False
    _keys: dict[str, int] = field(default_factory=dict, repr=False)

    # -- mappings -------------------------------------------------------------------
    def items(self) -> Iterator[tuple[str, Node, Node]]:
        """``(name, key node, value node)`` of a mapping, in file order."""
        if self.kind != "mapping":
            return
        for key, value in self.value:  # type: ignore[attr-defined]
            yield key_name(key), key, value

    def get(self, name: str) -> Node | None:
        """The value node of key ``name`` in a mapping, or ``None``."""
        index = self._keys.get(name)
        return None if index is None else self.value[index][1]  # type: ignore[index]

    def key(self, name: str) -> Node | None:
        """The key node of ``name`` in a mapping (for its position), or ``None``."""
        index = self._keys.get(name)
        return None if index is None else self.value[index][0]  # type: ignore[index]

    def __contains__(self, name: object) -> bool:
        return name in self._keys

    # -- sequences ------------------------------------------------------------------
    def elements(self) -> tuple[Node, ...]:
        """The items of a sequence (empty for anything else)."""
        return self.value if self.kind == "sequence" else ()  # type: ignore[return-value]

    # -- scalars --------------------------------------------------------------------
    @property
    def is_null(self) -> bool:
        """True for ``null``, ``~`` and an empty value."""
        return self.kind == "scalar" and self.value is None

    @property
    def is_str(self) -> bool:
        return self.kind == "scalar" and isinstance(self.value, str)


def key_name(node: Node) -> str:
    """The name of a mapping key: the string itself, or the scalar as written."""
    if node.kind == "scalar" and isinstance(node.value, str):
        return node.value
    return node.text


def describe(node: Node) -> str:
    """What a node holds, for messages: ``the string 'high'``, ``a list``, ``the boolean yes``."""
    if node.kind == "mapping":
        return "a mapping"
    if node.kind == "sequence":
        return "a list"
    if node.kind == "invalid":
        return "an unreadable value"
    value = node.value
    if value is None:
        return "an empty value" if node.text == "" else f"null ('{node.text}')"
    if isinstance(value, bool):
        if node.text.lower() in ("true", "false"):
            return f"the boolean {node.text}"
        return f"the boolean {node.text} (YAML reads '{node.text}' as {str(value).lower()})"
    if isinstance(value, float) and not math.isfinite(value):  # .inf, .nan
        return node.text if value == value else f"{node.text} (not a number)"
    if isinstance(value, int | float):
        return f"the number {node.text}"
    if isinstance(value, str):
        return f"the string '{value}'"
    if isinstance(value, _dt.date):
        return f"the date {node.text}"
    return f"the value {node.text!r}"


def compose_file(path: str | Path, issues: IssueCollector) -> Node | None:
    """Read and compose one YAML file; problems go to ``issues`` and give ``None``.

    Only a regular file of at most :data:`MAX_FILE_BYTES` is opened: a FIFO or a device would
    block or never end, and a huge file takes minutes to compose.
    """
    try:
        info = os.stat(path)
        if stat.S_ISREG(info.st_mode) and info.st_size > MAX_FILE_BYTES:
            issues.add(None, f"the file is {info.st_size / 1e6:.1f} MB; configuration files are read up to "
                       f"{MAX_FILE_BYTES / 1e6:g} MB (about 10,000 expectations)",
                       "split the suite into several suite files (a checkpoint runs them all)")
            return None
        if not stat.S_ISREG(info.st_mode) and not stat.S_ISDIR(info.st_mode):
            issues.add(None, f"{Path(path).absolute()} is not a regular file (a pipe, socket or device)",
                       "give the YAML file itself, e.g. checkpoints/<name>.yml or suites/<name>.yml")
            return None
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        issues.add(None, f"file not found: {Path(path).absolute()}")
        return None
    except UnicodeDecodeError as error:
        issues.add(None, f"the file is not UTF-8 text ({error.reason} at byte {error.start})")
        return None
    except IsADirectoryError:
        issues.add(None, f"{Path(path).absolute()} is a folder, not a YAML file",
                   "give the file itself, e.g. checkpoints/<name>.yml or suites/<name>.yml")
        return None
    except OSError as error:
        issues.add(None, f"cannot read the file: {error.strerror or error}")
        return None
    return compose_text(text, issues)


def compose_text(text: str, issues: IssueCollector) -> Node | None:
    """Compose YAML source text into a :class:`Node` tree (``None`` if nothing usable)."""
    try:
        raw = _yaml().compose(text)
    except RecursionError:  # ruamel.yaml composes recursively: thousands of levels exhaust the stack
        issues.add(None, f"invalid YAML: the document nests more than {_DEPTH_LIMIT} levels deep",
                   "a checkpoint or suite file nests a few levels; remove the extra brackets or indentation")
        return None
    except MarkedYAMLError as error:
        _report_yaml_error(error, issues)
        return None
    except ReaderError as error:  # a character YAML does not allow, reported by position
        before = text[: error.position]
        line = before.count("\n") + 1
        column = error.position - (before.rfind("\n") + 1) + 1
        issues.add(
            (line, column),
            f"invalid YAML: character {error.character!r} is not allowed",
            "remove the control character (YAML files hold printable text)",
        )
        return None
    except YAMLError as error:  # pragma: no cover - ruamel.yaml marks its other errors
        issues.add(None, f"invalid YAML: {error}")
        return None
    if raw is None:
        issues.add((1, 1), "the file is empty", "see the documented layout of this file")
        return None
    return _Builder(issues).build(raw)


def _yaml() -> YAML:
    """A YAML 1.2 reader with the safe constructor (no Python objects from tags)."""
    return YAML(typ="safe", pure=True)


def read_yaml(text: str) -> object:
    """Plain data from YAML text, read as this module reads files (YAML 1.2, safe)."""
    return _yaml().load(text)


def _tag(node: YAMLNode) -> str:
    return str(getattr(node.tag, "value", node.tag))


def _report_yaml_error(error: MarkedYAMLError, issues: IssueCollector) -> None:
    mark = error.problem_mark or error.context_mark
    where = (mark.line + 1, mark.column + 1) if mark is not None else None
    problem = error.problem or "syntax error"
    message = f"invalid YAML: {problem}"
    if error.context and error.context_mark is not None and error.context_mark is not mark:
        context = f"{error.context} (line {error.context_mark.line + 1})"
        if problem.startswith("but "):
            message = f"invalid YAML: {context}, {problem}"
        else:
            message = f"invalid YAML: {problem}, {context}"
    if "'\\t'" in problem:
        hint = "YAML does not allow tabs for indentation; indent with spaces"
    elif "but found another document" in problem:
        hint = "a configuration file holds one document; remove the '---' separator"
    elif "mapping values are not allowed" in problem:
        hint = "quote values that contain ': ', or fix the indentation of this line"
    elif "could not find expected ':'" in problem or "expected <block end>" in problem:
        hint = "check the indentation and that every key is followed by ': '"
    elif "found undefined alias" in problem:
        hint = "define the anchor (&name) before using the alias (*name)"
    else:
        hint = "check the indentation, the quotes and that every ':' is followed by a space"
    issues.add(where, message, hint)


class _Builder:
    """Converts ruamel.yaml nodes into :class:`Node` trees, reporting what it cannot accept."""

    def __init__(self, issues: IssueCollector) -> None:
        self.issues = issues
        self.constructor = _yaml().constructor
        self.in_progress: set[int] = set()
        self.built: set[int] = set()
        self.aliases = False  # a node met twice: the file uses aliases (*name)
        self.count = 0
        self.too_deep = False

    def build(self, raw: YAMLNode) -> Node:
        line, column = raw.start_mark.line + 1, raw.start_mark.column + 1
        self.count += 1
        if id(raw) in self.built:
            self.aliases = True
        self.built.add(id(raw))
        if self.count > _NODE_LIMIT:
            if self.count == _NODE_LIMIT + 1:
                self.issues.add(
                    (line, column),
                    f"the document expands to more than {_NODE_LIMIT:,} values"
                    + (" through its aliases" if self.aliases else ""),
                    "avoid nesting aliases of aliases" if self.aliases
                    else "split the suite into several suite files (a checkpoint runs them all)",
                )
            return Node("invalid", None, line, column)
        if id(raw) in self.in_progress:
            self.issues.add(
                (line, column),
                "recursive alias: a value contains itself",
                "remove the alias that refers to its own parent",
            )
            return Node("invalid", None, line, column)
        if isinstance(raw, ScalarNode):
            return self._scalar(raw, line, column)
        if len(self.in_progress) >= _DEPTH_LIMIT:  # the lists and mappings this one is inside
            if not self.too_deep:
                self.too_deep = True
                self.issues.add((line, column), f"the document nests more than {_DEPTH_LIMIT} levels deep",
                                "a checkpoint or suite file nests a few levels; remove the extra brackets or "
                                "indentation")
            return Node("invalid", None, line, column)
        self.in_progress.add(id(raw))
        try:
            if isinstance(raw, SequenceNode):
                return self._sequence(raw, line, column)
            return self._mapping(raw, line, column)
        finally:
            self.in_progress.discard(id(raw))

    def _scalar(self, raw: ScalarNode, line: int, column: int) -> Node:
        try:
            value = self.constructor.construct_object(raw, deep=True)
        except ConstructorError as error:
            self.issues.add(
                (line, column),
                f"cannot read the value '{raw.value}': {error.problem}",
                "remove the tag (the '!...' prefix) or fix the value",
            )
            return Node("invalid", None, line, column, text=raw.value)
        if isinstance(value, bytes):
            self.issues.add(
                (line, column),
                "binary values are not supported here",
                "write the value as plain text",
            )
            return Node("invalid", None, line, column, text=raw.value)
        return Node("scalar", value, line, column, text=raw.value, quoted=raw.style is not None)

    def _sequence(self, raw: SequenceNode, line: int, column: int) -> Node:
        if _tag(raw) != _SEQ_TAG:
            self.issues.add(
                (line, column),
                f"unsupported tag {_tag(raw)!r} on a list",
                "remove the tag (the '!...' prefix)",
            )
            return Node("invalid", None, line, column)
        return Node("sequence", tuple(self.build(item) for item in raw.value), line, column)

    def _mapping(self, raw: MappingNode, line: int, column: int) -> Node:
        if _tag(raw) != _MAP_TAG:
            self.issues.add(
                (line, column),
                f"unsupported tag {_tag(raw)!r} on a mapping",
                "remove the tag (the '!...' prefix)",
            )
            return Node("invalid", None, line, column)
        pairs: list[tuple[Node, Node]] = []
        index: dict[str, int] = {}
        merged: list[tuple[Node, Node]] = []
        for raw_key, raw_value in raw.value:
            if isinstance(raw_key, ScalarNode) and _tag(raw_key) == _MERGE_TAG:
                merged.extend(self._merge_source(raw_value))
                continue
            key = self.build(raw_key)
            if key.kind != "scalar":
                if key.kind != "invalid":
                    self.issues.add(
                        key,
                        "a key must be a plain name, not " + describe(key),
                        "write 'name: value'",
                    )
                continue
            value = self.build(raw_value)
            name = key_name(key)
            if name in index:
                first = pairs[index[name]][0]
                self.issues.add(
                    key,
                    f"duplicate key '{name}' (first given at line {first.line})",
                    "keep only one of them; YAML would silently use the last",
                )
                continue
            index[name] = len(pairs)
            pairs.append((key, value))
        for key, value in merged:  # explicit keys win over merged ones, earlier merges win
            name = key_name(key)
            if name not in index:
                index[name] = len(pairs)
                pairs.append((key, value))
        return Node("mapping", tuple(pairs), line, column, _keys=index)

    def _merge_source(self, raw: YAMLNode) -> list[tuple[Node, Node]]:
        sources = raw.value if isinstance(raw, SequenceNode) else [raw]
        pairs: list[tuple[Node, Node]] = []
        for source in sources:
            node = self.build(source)
            if node.kind == "mapping":
                pairs.extend((key, value) for _, key, value in node.items())
            elif node.kind != "invalid":
                self.issues.add(
                    node,
                    "'<<' merges mappings only, got " + describe(node),
                    "write '<<: *anchor' where the anchor names a mapping",
                )
        return pairs
