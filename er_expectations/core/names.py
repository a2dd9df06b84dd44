"""Names that become paths: suites, checkpoints, release files, run names.

Great Expectations writes these names into file and folder names (it even turns every ``.``
of a suite name into a folder) and into its pages. One rule, checked by one function that
``validate``, ``run`` and ``init`` share: a name is 1–100 characters from ``[A-Za-z0-9_-]``
and starts with a letter or a digit. No ``.``, ``/``, ``\\`` or spaces, so no name can
climb out of the project (``..``), hide a file (``.x``) or become an absolute path.

Release *labels* are free text (a column suffix, a key of ``data.predictions.files``); each
is given a file name by :func:`release_file_names`, which is readable, stable (the same
label always gets the same name, whatever the other releases) and collision-free.
"""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path

from er_expectations.core.errors import InputError

__all__ = [
    "MAX_NAME_LENGTH",
    "NAME_PATTERN",
    "NAME_RULE",
    "ensure_inside",
    "name_problem",
    "safe_name",
]

MAX_NAME_LENGTH = 100
#: A valid name (:data:`NAME_RULE`).
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
#: The rule in words, for messages and docs.
NAME_RULE = (
    "letters, digits, '_' and '-', starting with a letter or digit "
    f"(at most {MAX_NAME_LENGTH} characters)"
)


def safe_name(text: object, *, fallback: str = "release") -> str:
    """A name that follows the rule, as close to ``text`` as possible.

    Accents are dropped (``Lévay`` → ``Levay``), every run of other characters becomes
    ``_``, and leading/trailing ``_``/``-`` are stripped; ``fallback`` when nothing is left.
    """
    ascii_text = unicodedata.normalize("NFKD", str(text)).encode("ascii", "ignore").decode("ascii")
    cleaned = _UNSAFE.sub("_", ascii_text).strip("_-")
    return cleaned[:MAX_NAME_LENGTH].rstrip("_-") or fallback


def name_problem(text: object, *, what: str) -> tuple[str, str] | None:
    """``(message, hint)`` when ``text`` is not a valid ``what`` name, else ``None``."""
    if not isinstance(text, str) or not text:
        return (f"{what} name must be a non-empty text", f"use {NAME_RULE}")
    if len(text) > MAX_NAME_LENGTH:
        return (
            f"{what} name '{text[:40]}…' has {len(text)} characters (at most {MAX_NAME_LENGTH})",
            f"try '{safe_name(text)}'",
        )
    if NAME_PATTERN.fullmatch(text):
        return None
    return (
        f"{what} name '{text}' may only use {NAME_RULE}",
        f"Great Expectations turns it into file and folder names; try '{safe_name(text, fallback='checks')}'",
    )


def ensure_inside(root: str | os.PathLike, path: str | os.PathLike) -> Path:
    """``path`` resolved; :class:`InputError` unless it lies inside ``root`` (also resolved).

    Every file the runner writes goes through this check, so no name, symlink or ``..`` can
    make it write outside the project.
    """
    base = Path(root).resolve()
    target = Path(path).resolve()
    if target != base and base not in target.parents:
        link = _first_link(Path(path), base)
        if link is not None:
            raise InputError(
                f"refusing to write {target}: {link} is a symbolic link to {os.readlink(link)}, outside the "
                f"project folder {base}; a run writes only inside its project: replace the link by a folder "
                "or file of the project (or point project_dir to where the files should go)"
            )
        raise InputError(
            f"refusing to write {target}: it lies outside the project folder {base}; "
            "check the checkpoint, suite and release names"
        )
    return target


def _first_link(path: Path, base: Path) -> Path | None:
    """The first symbolic link on the way to ``path`` (from the root) that leads out of ``base``."""
    absolute = path.absolute()
    for part in (*reversed(absolute.parents), absolute):
        if part.is_symlink():
            real = part.resolve()
            if real != base and base not in real.parents:
                return part
    return None
