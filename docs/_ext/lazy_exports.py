"""Griffe extension for the API reference (mkdocs.yml loads it; no effect on the package).

Two things, both at documentation build time only:

* ``er_expectations`` imports some public functions only when they are first used (PEP 562
  ``__getattr__``), so static analysis does not see them as members of the package and
  ``::: er_expectations.diff_releases`` would not be found. The package is imported and
  every name of its ``__all__`` that static analysis missed is added as an alias of the
  object it really is, wherever that is defined, so the pages name only the public paths
  (``er_expectations.<name>``).
* The docstrings are written as plain text with reStructuredText roles
  (``:func:`estimate```), ``::`` before examples and words in angle brackets
  (``hill_number_<q>``). The reference renders docstrings as Markdown, where a role shows
  its colons and ``<q>`` is an HTML element, so the docstrings of the documented objects
  are rewritten for Markdown: a role becomes inline code, ``::`` a colon, ``<`` outside
  code ``&lt;``.
"""

from __future__ import annotations

import importlib
import inspect
import re
from typing import Any

import griffe

PACKAGE = "er_expectations"

_CODE = re.compile(r"(``.+?``|`[^`]+`)", re.DOTALL)
_ROLE = re.compile(r":(?:py:)?(?:func|class|meth|mod|data|attr|exc|obj):`~?([^`]+)`")


def markdown_docstring(text: str) -> str:
    """The docstring ``text`` with its reStructuredText habits turned into Markdown."""
    text = _ROLE.sub(lambda m: f"``{m.group(1)}``", text)
    lines = []
    for line in text.split("\n"):
        if line.rstrip().endswith("::") and not line.startswith("    "):
            line = line.rstrip()[:-1]  # "reuses it::" -> "reuses it:" (the block stays code)
        lines.append(line)
    out = []
    for paragraph in re.split(r"(\n\s*\n)", "\n".join(lines)):
        if all(not line.strip() or line.startswith("    ") for line in paragraph.split("\n")):
            out.append(paragraph)  # an indented code block, or blank lines
            continue
        parts = _CODE.split(paragraph)
        out.append("".join(part if index % 2 else part.replace("<", "&lt;")
                           for index, part in enumerate(parts)))
    return "".join(out)


def _find(pkg: griffe.Module, path: str) -> griffe.Object | griffe.Alias | None:
    """The object at the dotted ``path`` below ``pkg``, or None."""
    obj: Any = pkg
    for part in path.split(".")[1:]:
        obj = obj.members.get(part) if hasattr(obj, "members") else None
        if obj is None:
            return None
    return obj


def _rewrite(obj: griffe.Object | griffe.Alias, seen: set[str]) -> None:
    if obj.path in seen:
        return
    seen.add(obj.path)
    if obj.docstring is not None:
        obj.docstring.value = markdown_docstring(obj.docstring.value)
    if obj.is_class:
        for member in obj.members.values():
            if not member.is_alias:
                _rewrite(member, seen)


class LazyExports(griffe.Extension):
    """Add the lazily loaded public names of the package and make their docstrings Markdown."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        if pkg.path != PACKAGE:
            return
        module = importlib.import_module(PACKAGE)
        public = list(getattr(module, "__all__", ()))
        for name in public:
            value = getattr(module, name)
            member = pkg.members.get(name)
            if member is not None and not (member.is_module and not inspect.ismodule(value)):
                continue  # found by static analysis (a submodule of the same name is not it)
            home = getattr(value, "__module__", None)
            target = _find(pkg, f"{home}.{name}") if home and home != PACKAGE else None
            if target is not None:
                pkg.set_member(name, griffe.Alias(name, target, parent=pkg))
        seen: set[str] = set()
        for name in public:
            member = pkg.members.get(name)
            if member is None:
                continue
            try:
                target = member.final_target if member.is_alias else member
            except griffe.AliasResolutionError:
                continue  # mkdocstrings reports an identifier it cannot find
            _rewrite(target, seen)

    on_package_loaded = on_package  # the hook's name before griffe 2
