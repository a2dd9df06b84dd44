"""Whose GX project is it (issue 30): ``er-expectations run`` writes only into a GX project it
created, and makes every project it creates register er-expectations when GX opens it.

A run stores datasources, suites, validation definitions and checkpoints, and GX keeps the
datasources in ``gx/great_expectations.yml``, which it rewrites whole whenever one changes
(comments dropped, keys reordered). So a run refuses a GX project it did not create, before
anything is written in it, and says the fix (a folder of its own; GX projects do not conflict).

A project it creates carries the marker :data:`MARKER` (``.er-expectations/project``, written
before the project appears) and names :data:`STORE_MODULE` as the module of its expectations
store: GX imports that module when it opens the project (``gx.get_context``), which registers
every expectation, metric and action of er-expectations, so a stored checkpoint run natively
in a process that never imported the plugin validates every check instead of dropping ours.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from er_expectations.config import CheckpointConfig, ConfigError, ConfigIssue
from er_expectations.core.io import atomic_write

__all__ = ["MARKER", "STORE_MODULE", "check_owner", "created_here", "mark_created", "register_plugin"]

#: The file that marks a GX project created by ``er-expectations run`` (relative to project_dir).
MARKER = Path(".er-expectations") / "project"

#: The copy of the configuration that every earlier run kept (a project they opened is theirs).
_OLD_COPY = Path(".er-expectations") / "great_expectations.yml"

#: The module a project's expectations store names: importing it registers er-expectations.
STORE_MODULE = "er_expectations.gx.stores"

_MARKER_TEXT = (
    "This Great Expectations project was created by `er-expectations run`, which writes its\n"
    "datasources, suites, checkpoints and Data Docs configuration here. Delete this file and\n"
    "er-expectations will refuse to write into the project.\n"
)


def created_here(project_dir: Path) -> bool:
    """Whether ``project_dir`` holds no GX project yet, or one ``er-expectations run`` created.

    A project opened by a run of er-expectations 0.1 (which left its configuration copy in
    ``.er-expectations/``) counts as created by it: that run already rewrote its configuration.
    """
    if not (project_dir / "gx").exists():
        return True
    return (project_dir / MARKER).is_file() or (project_dir / _OLD_COPY).is_file()


def mark_created(project_dir: Path) -> None:
    """Write :data:`MARKER` (before the new project is moved into place)."""
    (project_dir / MARKER).parent.mkdir(parents=True, exist_ok=True)
    atomic_write(project_dir / MARKER, _MARKER_TEXT)


def check_owner(project_dir: Path, checkpoint: CheckpointConfig) -> None:
    """Refuse a GX project that er-expectations did not create; raises :class:`ConfigError`
    naming ``project_dir`` in the checkpoint file and the fix. Writes nothing."""
    if created_here(project_dir):
        return
    line, column = checkpoint.location("project_dir")
    config = project_dir / "gx" / "great_expectations.yml"
    raise ConfigError([ConfigIssue(
        str(checkpoint.path), line, column,
        f"project_dir: {project_dir} holds a Great Expectations project that er-expectations did not "
        f"create; a run would store its datasources, suites and checkpoints there, and GX rewrites "
        f"{config} whole when it adds a datasource (your comments, sites and settings would change)",
        "point project_dir to a folder of its own (e.g. project_dir: ../er-expectations-project): "
        "er-expectations creates a GX project there and leaves yours as it is; to hand this project "
        f"over to er-expectations on purpose, create the file {project_dir / MARKER}",
    )])


def register_plugin(context: Any) -> bool:
    """Make ``context``'s expectations store name :data:`STORE_MODULE` (saved in the project's
    configuration); True if it changed. Only for a project er-expectations created."""
    stores = context.variables.stores or {}
    name = context.expectations_store_name
    store = stores.get(name)
    if not isinstance(store, dict) or store.get("class_name", "ExpectationsStore") != "ExpectationsStore":
        return False  # a store class of the user's own: left as it is
    if store.get("module_name") == STORE_MODULE:
        return False
    store["module_name"] = STORE_MODULE
    context.variables.stores = stores
    context.variables.save()
    return True
