"""Where a checkpoint's history lives: its store URL and its project's key in the store.

Apart from :mod:`.history` (which turns GX results into rows) so that reading the history
(``er-expectations history``) imports neither Great Expectations nor anything that does: it
needs the checkpoint file, this module and the store (issue 29 item 6).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from er_expectations.config import CheckpointConfig
from er_expectations.history.store import HistoryError, default_url, resolve_url

__all__ = ["PROJECT_ID_FILE", "history_url", "project_key"]


def history_url(checkpoint: CheckpointConfig, *, environ: Mapping[str, str] | None = None) -> str | None:
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


def project_key(checkpoint: CheckpointConfig, *, create: bool = False) -> str | None:
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
