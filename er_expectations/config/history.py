"""The ``history:`` section of a checkpoint file (where the run history is kept, issue #10).

.. code-block:: yaml

    history:
      url: ${ER_HISTORY_URL}   # a shared database; default: <project_dir>/er_history.sqlite
      enabled: true            # false: record nothing

``url`` is any SQLAlchemy URL, or a file path for a SQLite file (relative to the checkpoint
file's folder). A URL with a password must come from an environment variable (``${NAME}``),
so that no secret is written in the file (nor in the GX project, which stores the text as
written); the variable is read when the checkpoint is run.
"""

from __future__ import annotations

import re
from typing import Annotated, ClassVar

from pydantic import AfterValidator

from .models import ConfigModel, Text, problem

__all__ = ["HistoryConfig"]

_REFERENCE = re.compile(r"\$\{([^}]*)\}")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_USERINFO = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://([^/]*)@")


def _history_url(text: str) -> str:
    for name in _REFERENCE.findall(text):
        if not _NAME.fullmatch(name):
            raise problem(f"{{where}}: '${{{name}}}' is not an environment variable reference",
                          "write ${NAME} with letters, digits and underscores, e.g. ${ER_HISTORY_URL}")
    if "${" in _REFERENCE.sub("", text):
        raise problem("{where}: unclosed '${' in the URL", "write ${NAME}, e.g. ${ER_HISTORY_URL}")
    userinfo = _USERINFO.match(text)
    if userinfo is not None:
        _, colon, password = userinfo.group(1).partition(":")
        if colon and password and not _REFERENCE.fullmatch(password):
            raise problem("{where}: the URL holds a password, written in the file",
                          "put the URL in an environment variable and write url: ${ER_HISTORY_URL} "
                          "(or only the password: ...://user:${PGPASSWORD}@host/db)")
    return text


class HistoryConfig(ConfigModel):
    """Where the history of runs is kept (``history:``); see :mod:`er_expectations.history`."""

    example: ClassVar[str] = "history: {url: ${ER_HISTORY_URL}}"
    url: Annotated[Text, AfterValidator(_history_url)] | None = None
    enabled: bool = True
