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
from typing import Annotated, Any, ClassVar

from pydantic import AfterValidator, Field

from er_expectations.config.models import ConfigModel, Text, problem

__all__ = ["HistoryConfig", "database_url"]

_REFERENCE = re.compile(r"\$\{([^}]*)\}")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_USERINFO = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://([^/]*)@")


def database_url(variable: str) -> Any:
    """The type of a key holding a SQLAlchemy URL: ``${NAME}`` references checked, a password
    written in the file refused (the hints suggest the variable ``variable``).

    Used by ``history.url`` and by ``data.connection.url`` (:mod:`.checkpoint`).
    """

    def check(text: str) -> str:
        for name in _REFERENCE.findall(text):
            if not _NAME.fullmatch(name):
                raise problem(f"{{where}}: '${{{name}}}' is not an environment variable reference",
                              f"write ${{NAME}} with letters, digits and underscores, e.g. ${{{variable}}}")
        if "${" in _REFERENCE.sub("", text):
            raise problem("{where}: unclosed '${' in the URL", f"write ${{NAME}}, e.g. ${{{variable}}}")
        userinfo = _USERINFO.match(text)
        if userinfo is not None:
            _, colon, password = userinfo.group(1).partition(":")
            if colon and password and not _REFERENCE.fullmatch(password):
                raise problem("{where}: the URL holds a password, written in the file",
                              f"put the URL in an environment variable and write url: ${{{variable}}} "
                              "(or only the password: ...://user:${PGPASSWORD}@host/db)")
        return text

    return Annotated[Text, AfterValidator(check)]


class HistoryConfig(ConfigModel):
    """Where the history of runs is kept (``history:``); see :mod:`er_expectations.history`."""

    example: ClassVar[str] = "history: {url: ${ER_HISTORY_URL}}"
    url: database_url("ER_HISTORY_URL") | None = None
    enabled: bool = True
    #: The key under which this project's runs are kept in a shared store (default: the id
    #: the project folder keeps in ``.er-project-id``), so that two projects writing the same
    #: checkpoint name never mix their series or control limits.
    project: Annotated[Text, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:/-]{0,254}$")] | None = None
