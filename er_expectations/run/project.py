"""The GX project of a checkpoint: its lock, its checks, and what a run writes into it (release
tables, datasources, suites, validation definitions, checkpoints, Data Docs)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from er_expectations.config import (
    CheckpointConfig,
    ConfigError,
    ConfigIssue,
    SuiteConfig,
)
from er_expectations.config.errors import did_you_mean, quote_list
from er_expectations.core.errors import InputError, ProjectBusyError
from er_expectations.core.io import atomic_write
from er_expectations.core.names import ensure_inside
from er_expectations.history import HISTORY_FILE
from er_expectations.run.alerts.targets import AlertTarget
from er_expectations.run.baselines import (
    BaselineNeed,
)
from er_expectations.run.data.base import CheckpointData
from er_expectations.run.ownership import created_here, mark_created, register_plugin

#: Folder of the project (next to ``gx/``) that holds the release tables.
DATA_FOLDER = "er_data"


#: Lock file of a project (one run at a time, see :func:`project_lock`).
LOCK_FILE = ".er-expectations.lock"


#: Where a run keeps the copy of the GX project configuration it opened (see :func:`open_project`).
CONFIG_BACKUP = Path(".er-expectations") / "great_expectations.yml"


DEFAULT_SITE = "local_site"


def check_project_dir(project_dir: Path, checkpoint: CheckpointConfig) -> None:
    """``project_dir`` must be a folder or not exist yet; raises :class:`ConfigError`."""
    if project_dir.exists() and not project_dir.is_dir():
        line, column = checkpoint.location("project_dir")
        raise ConfigError([
            ConfigIssue(
                str(checkpoint.path),
                line,
                column,
                f"project_dir: {project_dir} is a file, not a folder",
                "point project_dir to the folder of the Great Expectations project",
            )
        ])


@contextlib.contextmanager
def project_lock(project_dir: Path, *, timeout: float | None = None,
                 out: TextIO | None = None) -> Iterator[None]:
    """Hold the project's lock file (``<project_dir>/.er-expectations.lock``) while running.

    GX's file stores are not safe for concurrent writers (two runs raise "suite has changed
    since it was last saved" and leave Data Docs half built), so runs on one project take
    turns. The lock is an OS-level lock (``filelock``): a killed run releases it at once.
    Waits up to ``timeout`` seconds (``None``: no limit), printing once that it waits.
    """
    from filelock import FileLock, Timeout

    try:
        project_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise InputError(f"project_dir: cannot create {project_dir}: {error.strerror or error}") from error
    _check_lock_file(project_dir)
    lock = FileLock(str(project_dir / LOCK_FILE))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        if out is not None:
            print(f"Another run is using the project {project_dir}; waiting for it to finish ...",
                  file=out, flush=True)
        try:
            lock.acquire(timeout=-1 if timeout is None else timeout)
        except Timeout:
            raise ProjectBusyError(
                f"another run kept the project {project_dir} busy for more than {timeout:g} s "
                f"(lock file {project_dir / LOCK_FILE}); try again later or raise --lock-timeout"
            ) from None
    except OSError as error:
        raise InputError(f"project_dir: cannot create the lock file in {project_dir}: "
                         f"{error.strerror or error}") from error
    try:
        yield
    finally:
        lock.release()


#: What a run writes in its project, besides the release tables (``er_data/<checkpoint>``).
WRITTEN = ("gx", CONFIG_BACKUP.parent.as_posix(), LOCK_FILE, HISTORY_FILE, f"{HISTORY_FILE}-journal",
           f"{HISTORY_FILE}-wal", f"{HISTORY_FILE}-shm")


#: Where a run moves stored files it cannot read (a full disk or a killed run cut them short).
DAMAGED_FOLDER = CONFIG_BACKUP.parent / "damaged"


#: GX's stores of JSON files a run rewrites ("add or update"), by what they hold.
_JSON_STORES = {"validation result": "uncommitted/validations", "validation definition": "validation_definitions",
                "GX checkpoint": "checkpoints"}


def set_aside_damaged_results(project_dir: Path) -> list[tuple[str, Path, Path, str]]:
    """Move the JSON files GX left unreadable in its stores (a full disk or a kill cut them
    short: GX writes them in place) into :data:`DAMAGED_FOLDER`, a validation result with its
    Data Docs pages; returns (what, file, where it went, why) for each. Nothing is deleted:
    the run writes its validation definitions and checkpoints again, and a result's release is
    back in Data Docs when it is run again.

    Call it under the project lock, after :func:`check_written_paths`.
    """
    moved: list[tuple[str, Path, Path, str]] = []
    for what, folder in _JSON_STORES.items():
        store = project_dir / "gx" / folder
        for file in sorted(store.rglob("*.json")) if store.is_dir() else ():
            if file.is_symlink() or not file.is_file():
                continue
            try:
                json.loads(file.read_bytes())
                continue
            except ValueError as error:
                why = f"{file.stat().st_size:,} bytes, cut short or not JSON: {str(error).splitlines()[0]}"
            except OSError:
                continue
            relative = file.relative_to(store)
            target = project_dir / DAMAGED_FOLDER / Path(folder).name / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(file, target)
            if what == "validation result":
                _set_aside_pages(project_dir, relative)
            moved.append((what, file, target, why))
    return moved


def _set_aside_pages(project_dir: Path, relative: Path) -> None:
    """The Data Docs pages of a validation result set aside (a page of a result no longer stored)."""
    sites = project_dir / "gx" / "uncommitted" / "data_docs"
    for page in sites.glob(f"*/validations/{relative.with_suffix('.html').as_posix()}"):
        site = page.relative_to(sites).parts[0]
        aside = project_dir / DAMAGED_FOLDER / "data_docs" / site / relative.with_suffix(".html")
        aside.parent.mkdir(parents=True, exist_ok=True)
        os.replace(page, aside)


def check_written_paths(project_dir: Path, checkpoint_name: str) -> None:
    """The one rule for the files a run writes: each lies inside the project with symlinks
    resolved (:func:`~er_expectations.core.names.ensure_inside`), so a symlinked
    ``gx/expectations``, ``validations``, ``data_docs`` or history file is refused before anything
    is written instead of written through. Every link under the folders the run writes in
    (GX's own included: GX opens them without looking) is checked; links that stay inside pass.
    """
    seen: set[Path] = set()
    folders: list[Path] = []
    for name in (*WRITTEN, f"{DATA_FOLDER}/{checkpoint_name}"):
        top = project_dir / name
        if top.exists() or top.is_symlink():
            ensure_inside(project_dir, top)
            folders.append(top)
    while folders:  # every folder under them, through the links that stay inside, once
        folder = folders.pop()
        real = folder.resolve()
        if real in seen or not folder.is_dir():
            continue
        seen.add(real)
        for path in folder.iterdir():
            if path.is_symlink():
                ensure_inside(project_dir, path)
            if path.is_dir():
                folders.append(path)


def _check_lock_file(project_dir: Path) -> None:
    """Open (or create) the lock file once: an error here is an error, not another run's lock.

    ``filelock`` takes a lock file it cannot create (``project_dir: /proc/self`` gives ENOENT)
    for one another process holds, and would wait forever.
    """
    path = project_dir / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK, 0o666)
    except OSError as error:
        raise InputError(f"project_dir: cannot create the lock file {path}: {error.strerror or error}; "
                         "point project_dir to a folder of yours on a normal file system") from error
    os.close(fd)
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise InputError(f"project_dir: the lock file {path} is not a regular file; remove it")


def check_project(project_dir: Path, site_name: str | None, checkpoint: CheckpointConfig) -> list[Path]:
    """Read-only checks of an existing GX project; raises :class:`ConfigError`.

    Returns the stored suites of this checkpoint that a killed run left unreadable: they are
    written from the suite files anyway, so the run replaces them instead of refusing to run.
    """
    from great_expectations.expectations.registry import get_expectation_impl

    issues: list[ConfigIssue] = []
    gx_dir = project_dir / "gx"
    suites_dir = gx_dir / "expectations"
    damaged: list[Path] = []
    for file in sorted(suites_dir.glob("*.json")) if suites_dir.is_dir() else ():
        try:
            stored = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            if file.stem in checkpoint.suites and not isinstance(error, OSError):
                damaged.append(file)
                continue
            issues.append(
                ConfigIssue(
                    str(file),
                    None,
                    None,
                    f"cannot read this stored expectation suite: {error}",
                    "repair or delete the file; the next run writes it again",
                )
            )
            continue
        unknown: list[str] = []
        for item in stored.get("expectations", []) if isinstance(stored, dict) else []:
            kind = item.get("type") or item.get("expectation_type") if isinstance(item, dict) else None
            if not kind:
                continue
            try:
                get_expectation_impl(kind)
            except Exception:  # noqa: BLE001 - GX's registry raises its own error type
                unknown.append(kind)
        if unknown:
            issues.append(
                ConfigIssue(
                    str(file),
                    None,
                    None,
                    f"the stored suite uses expectation types that are not registered: "
                    f"{quote_list(sorted(set(unknown)), conjunction='and')}; Great Expectations "
                    "would drop them without a word and report success",
                    "install and import the plugin that defines them, or delete this suite file",
                )
            )
    if site_name is not None and site_name != DEFAULT_SITE:
        sites = project_sites(gx_dir / "great_expectations.yml")
        if site_name not in sites:
            action = next((a for a in checkpoint.actions if a.name == "build_data_docs"), None)
            issues.append(
                ConfigIssue(
                    str(checkpoint.path),
                    action.line if action else None,
                    None,
                    f"build_data_docs: the project has no Data Docs site '{site_name}'",
                    did_you_mean(site_name, sorted(sites))
                    or f"sites of the project: {quote_list(sorted(sites) or [DEFAULT_SITE], conjunction='and')}",
                )
            )
    if issues:
        raise ConfigError(issues)
    return damaged


def project_sites(config_file: Path) -> set[str]:
    if not config_file.is_file():
        return {DEFAULT_SITE}
    from ruamel.yaml.error import YAMLError

    from er_expectations.config.yamlnodes import read_yaml

    try:
        config = read_yaml(config_file.read_text(encoding="utf-8")) or {}
    except (OSError, YAMLError):
        return set()
    sites = config.get("data_docs_sites") if isinstance(config, dict) else None
    return set(sites) if isinstance(sites, dict) else set()


#: Names of the folders in which :func:`open_project` creates a new project (``mkdtemp``).
_STAGING = re.compile(r"\.er-new-project-[A-Za-z0-9_]{8}")




def open_project(project_dir: Path, *, out: TextIO | None = None) -> Any:
    """The GX file context of ``project_dir``, safe against runs killed while GX writes.

    GX writes its project configuration (``gx/great_expectations.yml``) in place, and rewrites
    it whenever a datasource, asset or batch definition changes, so a run killed at that moment
    leaves it truncated. Hence: a new project is created in a temporary folder and moved into
    place whole; every run that opens the project keeps a copy of the configuration
    (``<project_dir>/.er-expectations/great_expectations.yml``, atomically, again when it ends),
    and a run that finds the configuration unreadable restores that copy and says so. Call it
    under the project lock.
    """
    import shutil

    import great_expectations as gx

    gx_dir = project_dir / "gx"
    config = gx_dir / "great_expectations.yml"
    backup = project_dir / CONFIG_BACKUP
    for stale in project_dir.glob(".er-new-project-*"):  # left by a run killed while creating
        if _STAGING.fullmatch(stale.name) and stale.is_dir() and not stale.is_symlink():
            shutil.rmtree(stale, ignore_errors=True)
    if not gx_dir.exists():
        staging = Path(tempfile.mkdtemp(prefix=".er-new-project-", dir=project_dir))
        try:
            fresh = gx.get_context(mode="file", project_root_dir=str(staging))
            # registered and copied before it appears: the first open writes nothing, and a run
            # killed while GX later rewrites the configuration always finds a copy to restore
            register_plugin(fresh)
            mark_created(project_dir)  # before the project appears: never one of ours unmarked
            atomic_write(backup, (staging / "gx" / "great_expectations.yml").read_bytes())
            os.rename(staging / "gx", gx_dir)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    try:
        context = gx.get_context(mode="file", project_root_dir=str(project_dir))
    except Exception as error:  # noqa: BLE001 - GX raises many error types here
        reason = _cut_short(config, backup)
        if reason is None:  # not what a killed run leaves: the user's edit is kept, and named
            raise _unreadable_config(config, backup, error) from error
        atomic_write(config, backup.read_bytes())
        if out is not None:
            print(f"Restored {config} from the copy taken when the project was last opened ({backup}): "
                  f"{reason}, as a run killed while Great Expectations rewrote it leaves it.", file=out, flush=True)
        try:
            context = gx.get_context(mode="file", project_root_dir=str(project_dir))
        except Exception as again:  # noqa: BLE001
            raise InputError(f"{config}: cannot open the Great Expectations project even from "
                             f"its copy {backup}: {again}") from again
    if created_here(project_dir):  # GX imports er-expectations whenever it opens the project
        register_plugin(context)
    keep_config_copy(project_dir)
    return context


def _cut_short(config: Path, backup: Path) -> str | None:
    """How ``config`` looks cut short by a killed writer (empty, the beginning of the copy, or
    broken on its unfinished last line), or ``None``: then it is not restored from the copy."""
    if not backup.is_file():
        return None
    try:
        data, copy = config.read_bytes(), backup.read_bytes()
    except OSError:
        return None
    if not data.strip():
        return "it was empty"
    if len(data) < len(copy) and copy.startswith(data):
        return f"it held only the first {len(data):,} of the copy's {len(copy):,} bytes"
    problem = _yaml_problem(data)
    if problem is not None and not data.endswith(b"\n") and problem[0] >= data.count(b"\n") + 1:
        return f"its last line was unfinished ({problem[2]} at line {problem[0]})"
    return None


def _yaml_problem(data: bytes) -> tuple[int, int, str] | None:
    """Line, column (1-based) and wording of the YAML error in ``data``, or ``None``."""
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    from er_expectations.config.yamlnodes import read_yaml

    try:
        read_yaml(data.decode("utf-8", errors="replace"))
    except MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark is not None else (0, 0)
        return line, column, str(error.problem or error.context or "invalid YAML")
    except YAMLError as error:
        return 0, 0, str(error).splitlines()[0] if str(error) else "invalid YAML"
    return None


def _unreadable_config(config: Path, backup: Path, error: BaseException) -> InputError:
    """The error for a project configuration GX cannot open and that is not cut short."""
    try:
        problem = _yaml_problem(config.read_bytes())
    except OSError:
        problem = None
    if problem is not None and problem[0]:
        where = (f"{config}:{problem[0]}:{problem[1]}: cannot open the Great Expectations project: invalid "
                 f"YAML ({problem[2]})")
    else:
        first = str(error).splitlines()[0] if str(error) else ""
        where = f"{config}: cannot open the Great Expectations project ({type(error).__name__}: {first})"
    fix = (f"; fix the file, or go back to the copy taken when the project was last opened: cp {backup} {config}"
           if backup.is_file() else f"; repair the file, or delete the folder {config.parent} to start a new project")
    return InputError(where + fix)


def keep_config_copy(project_dir: Path) -> None:
    """Copy the project's GX configuration to :data:`CONFIG_BACKUP` (atomically)."""
    atomic_write(project_dir / CONFIG_BACKUP, (project_dir / "gx" / "great_expectations.yml").read_bytes())



def _add_or_update(store: Any, value: Any) -> None:
    """Write a validation definition or checkpoint to its GX ``store`` under its name: added with a
    new id (what the factory's ``add`` writes) or, when one of that name is stored, updated in
    place under that one's id (what ``save`` writes). The stored one's id is read from its JSON:
    GX's ``get`` would build it, reading back every validation definition and suite it names."""
    key = store.get_key(name=value.name, id=None)
    if not store.has_key(key):
        store.add(key=key, value=value)  # sets value.id
        return
    stored = json.loads(store.store_backend.get(store.key_to_tuple(key)))
    value.id = stored.get("id") if isinstance(stored, dict) else None
    store.update(key=store.get_key(name=value.name, id=value.id), value=value)


class Project:
    """The GX side of a run: context, datasource, suites, validation definitions, checkpoints."""

    def __init__(self, prepared: PreparedRun, project_dir: Path, folder: Path, *, out: TextIO) -> None:
        import great_expectations as gx
        from great_expectations.data_context.types.base import ProgressBarsConfig

        self.gx = gx
        self.prepared = prepared
        self.name = prepared.checkpoint.name
        self.folder = folder
        self.ctx = open_project(project_dir, out=out)
        quiet = ProgressBarsConfig(globally=False, metric_calculations=False)
        current = self.ctx.variables.progress_bars
        if current is None or dict(current) != dict(quiet):
            self.ctx.variables.progress_bars = quiet
            self.ctx.variables.save()

    # datasource / asset / batch definitions ------------------------------------------
    def batch_definitions(self, names: Mapping[str, str], batches: Mapping[str, Any]) -> dict[str, Any]:
        """A batch definition per release (label -> its file name ``names[label]``), as the
        checkpoint's data declares them (:meth:`~.data.base.CheckpointData.batch_definitions`):
        of the release's Parquet file, or of its SQL query or Spark DataFrame (``batches``; one
        asset per release, named ``release_<name>``)."""
        return self.prepared.data.batch_definitions(self.ctx, self.name, self.folder, names, batches)

    # suites ----------------------------------------------------------------------------
    def suites(self) -> dict[str, Any]:
        from er_expectations.run.suites import suite_from_config

        stored: dict[str, Any] = {}
        for config in self.prepared.suites:
            suite = self.ctx.suites.add_or_update(suite_from_config(config))
            wanted = {cfg.name for cfg in config.expectations}
            found = {e.expectation_type for e in suite.expectations}
            if wanted - found:
                raise InputError(
                    f"{config.path}: Great Expectations dropped "
                    f"{quote_list(sorted(wanted - found), conjunction='and')} from suite "
                    f"'{config.name}'; is the plugin that defines them imported?"
                )
            stored[config.name] = suite
        return stored

    # validation definitions and checkpoints ----------------------------------------------
    def validation_definitions(self, name: str, definition: Any, suites: Mapping[str, Any]) -> list[Any]:
        """One stored validation definition per suite (stored by :meth:`suites`) for the release
        batch ``definition`` (stored by :meth:`batch_definitions`).

        Each is added, or updated in place, as GX's ``validation_definitions.add_or_update``
        does, without the two writes that add_or_update repeats for every definition: the
        suite (compared expectation by expectation and written again) and the batch definition
        (the project configuration written again). This run has just stored both. Each is a
        :class:`~.stored.StoredDefinition`, marked stored once written (its freshness is not
        read back from the store again; its results are written by the run, once).
        """
        from er_expectations.run.stored import StoredDefinition

        store = self.ctx.validation_definition_store
        stored = []
        for suite_name, suite in suites.items():
            definition_ = StoredDefinition(name=f"{self.name}__{name}__{suite_name}", data=definition, suite=suite)
            _add_or_update(store, definition_)
            stored.append(definition_.mark_stored())
        return stored

    def _actions(self) -> list[Any]:
        site = self.prepared.site_name
        if site is None:
            return []
        from er_expectations.gx.actions import OfflineDataDocsAction

        # one action builds the run's pages and the index in a single GX build through the
        # site's offline view and index builder (GX's UpdateDataDocsAction builds once per result)
        return [OfflineDataDocsAction(name="data_docs", site_name=site, build=True)]

    def checkpoint(self, name: str, definitions: Sequence[Any], *, actions: bool = True,
                   extra: Sequence[Any] = ()) -> Any:
        """A stored GX checkpoint over ``definitions`` (stored by :meth:`validation_definitions`),
        with the YAML's actions (Data Docs) or none, and the ``extra`` actions.

        Every one starts with the load-order guard (``RequireRegisteredAction``): run natively
        without ``er_expectations.gx`` imported, GX refuses to load it instead of validating a
        suite it stripped of our expectations (and reporting success).

        Added, or updated in place, as GX's ``checkpoints.add_or_update`` does, without storing
        every validation definition again (and with it their suite): they are stored already.
        Returns this object (a :class:`~.stored.StoredCheckpoint`, marked stored), not a copy read
        back from the store (GX's ``checkpoints.add`` reads every definition and suite back).
        """
        from er_expectations.gx.guard import RequireRegisteredAction
        from er_expectations.run.stored import StoredCheckpoint

        checkpoint = StoredCheckpoint(
            name=name,
            validation_definitions=list(definitions),
            actions=[RequireRegisteredAction(name="require_registered"),
                     *(self._actions() if actions else []), *extra],
            result_format={"result_format": "SUMMARY"},
        )
        _add_or_update(self.ctx.checkpoint_store, checkpoint)
        return checkpoint.mark_stored()

    def add_provenance(self, identifier: Any, validation: Any, provenance: dict[str, Any]) -> None:
        """Store ``provenance`` in a validation result's ``meta`` (see :mod:`.provenance`), in
        memory and in the stored result, so that its Data Docs page and every later reading of it
        say what was read, by what and when; GX's batch description in it names files relative to
        the project (no absolute local path in a stored result). This is the result's one write:
        ``ValidationDefinition.run`` of a :class:`~.stored.StoredDefinition` writes none."""
        from er_expectations.gx.docs.provenance_view import publishable_meta
        from er_expectations.run.provenance import PROVENANCE_KEY

        # GX's batch spec names the release table by its absolute path: stored relative to the project
        validation.meta = {**publishable_meta(validation.meta, base=self.prepared.checkpoint.project_dir),
                           PROVENANCE_KEY: provenance}
        self.ctx.validation_results_store.set(identifier, validation)

    def result_file(self, identifier: Any) -> Path | None:
        backend = getattr(self.ctx.validation_results_store, "store_backend", None)
        try:
            url = backend.get_url_for_key(identifier.to_tuple())  # type: ignore[union-attr]
        except Exception:  # noqa: BLE001 - only a convenience for the report
            return None
        return Path(url.removeprefix("file://")) if isinstance(url, str) else None

    def page(self, identifier: Any, site: str) -> str | None:
        try:
            urls = self.ctx.get_docs_sites_urls(resource_identifier=identifier, site_name=site)
        except Exception:  # noqa: BLE001 - only a convenience for the report
            return None
        return urls[0].get("site_url") if urls else None

    def check_writable(self, site: str | None) -> None:
        """Every folder of the GX project the run writes (results, suites, checkpoints, the Data
        Docs site) can be written; raises :class:`InputError` naming the first that cannot, before
        anything is validated (GX would log tracebacks and leave results without pages)."""
        import os
        import tempfile

        roots = [self.prepared.checkpoint.project_dir / "gx"]
        if site is not None:
            from er_expectations.gx.docs.data_docs import local_site_dir

            with contextlib.suppress(LookupError):  # a site not on the local file system
                roots.append(Path(local_site_dir(self.ctx, site)))
        for root in roots:
            folders = [root, *(p for p in root.rglob("*") if p.is_dir())] if root.is_dir() else []
            for folder in folders:
                problem = None if os.access(folder, os.W_OK) else "permission denied or a read-only file system"
                if problem is None and folder == root:
                    try:  # a write, not only the permission bits (root ignores them)
                        fd, probe = tempfile.mkstemp(prefix=".er-write-check.", dir=folder)
                        os.close(fd)
                        os.unlink(probe)
                    except OSError as error:
                        problem = error.strerror or str(error)
                if problem is not None:
                    raise InputError(f"{folder}: the folder cannot be written ({problem}); the run writes its "
                                     "results and Data Docs there: make it writable, nothing was validated")

    def check_site(self) -> None:
        """The Data Docs site of the run lies inside the project (symlinks resolved), like every
        file the run writes; a site GX cannot place on the local disk is left to GX."""
        site = self.prepared.site_name
        if site is None:
            return
        from er_expectations.gx.docs.data_docs import local_site_dir

        try:
            folder = Path(local_site_dir(self.ctx, site))
        except LookupError:
            return
        ensure_inside(self.prepared.checkpoint.project_dir, folder)

    def build_docs(self, site: str, results: list[Any], pending: Mapping[str, Any] | None = None) -> Path:
        """One Data Docs build for the run's ``results`` (``pending``: charts drawn elsewhere, by
        cache key); returns the index page."""
        from er_expectations.gx.docs.data_docs import build_site, local_site_dir
        from er_expectations.gx.docs.site_store import SiteWriteFailure, site_write_failures
        from er_expectations.run.docs_problem import DataDocsError, docs_failure_message

        with site_write_failures() as failures:
            try:
                build_site(self.ctx, site, results, pending)
            except OSError as error:  # GX copying its static files, or writing the index: after the results
                failures.append(SiteWriteFailure(str(error.filename or local_site_dir(self.ctx, site)), error.errno,
                                                 error.strerror or str(error)))
        if failures:
            raise DataDocsError(docs_failure_message(failures, site=Path(local_site_dir(self.ctx, site)),
                                                     project_dir=self.prepared.checkpoint.project_dir))
        return (Path(local_site_dir(self.ctx, site)) / "index.html").resolve()


@dataclass(slots=True)
class PreparedRun:
    """A checkpoint whose configuration passed every check (nothing written yet)."""

    checkpoint: CheckpointConfig
    suites: tuple[SuiteConfig, ...]
    #: The checkpoint's data: files, a database or Spark, or a labelling batch (:mod:`.data`).
    data: CheckpointData
    #: The alert actions, their environment variables checked (see :mod:`..config.alerts`).
    alerts: tuple[AlertTarget, ...] = ()
    #: baseline columns of the drift expectations (SPEC 10), added to every release table
    baselines: tuple[BaselineNeed, ...] = ()

    @property
    def site_name(self) -> str | None:
        """The Data Docs site to build, or ``None`` without a ``build_data_docs`` action."""
        for action in self.checkpoint.actions:
            if action.name == "build_data_docs":
                return str(action.options.get("site_name") or DEFAULT_SITE)
        return None
