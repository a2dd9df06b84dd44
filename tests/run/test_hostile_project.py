"""Hostile projects (issue 18, items 14 and 15): a lock file that cannot be created is an
error, not another run's lock; nothing of the user's is deleted or silently replaced; no file
is written outside the project through a symlink."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from er_expectations.core.errors import InputError
from er_expectations.run.project import LOCK_FILE, project_lock


def _finishes(call, seconds: float = 10.0):
    """Run ``call`` in a thread; its exception or result, or fail if it is still running."""
    box: dict = {}

    def target():
        try:
            box["value"] = call()
        except BaseException as error:  # noqa: BLE001 - handed to the test
            box["error"] = error

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still waiting after {seconds} s"
    return box


def _hold(project_dir: Path, timeout):
    with project_lock(project_dir, timeout=timeout):
        return "held"


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs /proc")
def test_a_lock_file_that_cannot_be_created_is_an_error_not_contention():
    box = _finishes(lambda: _hold(Path("/proc/self"), None))
    error = box.get("error")
    assert isinstance(error, InputError), box
    assert "/proc/self" in str(error) and "lock file" in str(error)


def test_a_lock_file_that_is_a_folder_is_an_error(tmp_path):
    (tmp_path / LOCK_FILE).mkdir()
    box = _finishes(lambda: _hold(tmp_path, None))
    assert isinstance(box.get("error"), InputError), box


def test_the_lock_is_still_taken_in_a_normal_folder(tmp_path):
    assert _finishes(lambda: _hold(tmp_path, 1))["value"] == "held"


# -- the project configuration: a user's typo is not "an interrupted run" ---------------------

@pytest.fixture(scope="module")
def opened(tmp_path_factory):
    """A project opened once (so that the copy of its configuration exists)."""
    from er_expectations.run.project import open_project

    root = tmp_path_factory.mktemp("opened")
    open_project(root)
    return root


def _reopen(project: Path, text: str):
    import io
    import shutil

    from er_expectations.run.project import CONFIG_BACKUP, open_project

    copy = project.parent / f"{project.name}-copy"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(project, copy)
    config = copy / "gx" / "great_expectations.yml"
    config.write_text(text, encoding="utf-8")
    out = io.StringIO()
    try:
        open_project(copy, out=out)
    except InputError as error:
        return config, copy / CONFIG_BACKUP, None, error
    return config, copy / CONFIG_BACKUP, out.getvalue(), None


def test_a_users_yaml_typo_is_refused_with_file_line_and_column(opened):
    good = (opened / "gx" / "great_expectations.yml").read_text(encoding="utf-8")
    lines = good.splitlines(keepends=True)
    index = next(i for i, line in enumerate(lines) if line.startswith("data_docs_sites:"))
    lines[index] = "data_docs_sites: : oops\n"  # a typo in the middle of the file
    typo = "".join(lines)
    config, backup, out, error = _reopen(opened, typo)
    assert out is None and error is not None
    message = str(error)
    assert f"{config}:{index + 1}:" in message and "invalid YAML" in message
    assert f"cp {backup} {config}" in message and "interrupted" not in message
    assert config.read_text(encoding="utf-8") == typo  # the user's file is kept as it is


def test_a_config_cut_short_is_restored_saying_what_and_why(opened):
    good = (opened / "gx" / "great_expectations.yml").read_text(encoding="utf-8")
    config, backup, out, error = _reopen(opened, good[: len(good) // 3])
    assert error is None, error
    assert f"Restored {config}" in out and f"first {len(good) // 3:,} of the copy's" in out and str(backup) in out
    assert config.read_text(encoding="utf-8") == good


def test_an_empty_config_is_restored(opened):
    good = (opened / "gx" / "great_expectations.yml").read_text(encoding="utf-8")
    config, _, out, error = _reopen(opened, "")
    assert error is None and "it was empty" in out
    assert config.read_text(encoding="utf-8") == good


def test_gx_never_rewrites_a_new_projects_configuration_before_its_copy_exists(tmp_path, monkeypatch):
    """GX rewrites great_expectations.yml in place (not atomically). A new project's first open
    used to register the plugin in it before any copy existed, so a run killed in that write left
    a configuration nothing could restore (exit 2, "repair the file, or delete the folder"; seen
    in CI). Now the project is registered and copied before it appears: every write GX makes to
    the project's configuration finds the copy there."""
    from great_expectations.data_context.data_context.file_data_context import FileDataContext
    from great_expectations.data_context.store.inline_store_backend import InlineStoreBackend

    from er_expectations.run.project import CONFIG_BACKUP, open_project

    project = tmp_path / "project"
    project.mkdir()
    config = project / "gx" / "great_expectations.yml"
    writes = []

    def watch(cls, name, context_of):  # GX's two writers of great_expectations.yml
        unwatched = getattr(cls, name)

        def watched(self):
            context = context_of(self)
            if Path(context.root_directory) / context.GX_YML == config:
                writes.append((name, (project / CONFIG_BACKUP).is_file()))
            return unwatched(self)

        monkeypatch.setattr(cls, name, watched)

    watch(FileDataContext, "_save_project_config", lambda self: self)
    watch(InlineStoreBackend, "_save_changes", lambda self: self._data_context)
    context = open_project(project)
    context.data_sources.add_pandas("a_datasource")  # a later rewrite, as a run makes
    assert writes and all(copied for _, copied in writes), writes  # the first came before the copy
    assert (project / CONFIG_BACKUP).is_file()


def test_only_the_runs_own_staging_folders_are_removed(tmp_path):
    from er_expectations.run.project import open_project

    mine = tmp_path / ".er-new-project-mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    left = tmp_path / ".er-new-project-ab_12XYZ"  # what mkdtemp names a killed run's staging folder
    (left / "gx").mkdir(parents=True)
    open_project(tmp_path)
    assert (mine / "notes.txt").read_text() == "mine" and not left.exists()


# -- one rule for every file a run writes: symlinks resolved ----------------------------------

@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    """The toy project, run once."""
    import io

    from support.toyproject import make_toy

    from er_expectations.run.runner import run_checkpoint

    root = tmp_path_factory.mktemp("ran")
    run_checkpoint(make_toy(root), progress=False, out=io.StringIO(), releases=["alpha"])
    return root


@pytest.mark.parametrize("where", ["gx/expectations", "gx/uncommitted/validations", "gx/uncommitted/data_docs",
                                   "gx/uncommitted", "er_history.sqlite", "er_data/toy"])
def test_a_symlink_out_of_the_project_is_refused_and_nothing_written_through_it(ran, tmp_path, where, capsys):
    import shutil

    from er_expectations.cli.main import main

    root = tmp_path / "copy"
    shutil.copytree(ran, root, symlinks=True)
    outside = tmp_path / "outside"
    inside = root / "project" / where
    shutil.move(inside, outside)  # the user's own folder (or file), elsewhere
    os.symlink(outside, inside)
    before = _tree(outside)
    assert main(["run", str(root / "checkpoints" / "toy.yml"), "--no-progress", "--release", "alpha"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and f"{inside} is a symbolic link to {outside}" in err
    assert "outside the project folder" in err
    assert _tree(outside) == before


def test_a_symlinked_stored_file_is_refused_too(ran, tmp_path, capsys):
    import shutil

    from er_expectations.cli.main import main

    root = tmp_path / "copy"
    shutil.copytree(ran, root, symlinks=True)
    mine = tmp_path / "mine.json"
    mine.write_text("precious")
    stored = root / "project" / "gx" / "expectations" / "toy_checks.json"
    stored.unlink()
    os.symlink(mine, stored)
    assert main(["run", str(root / "checkpoints" / "toy.yml"), "--no-progress", "--release", "alpha"]) == 2
    assert f"{stored} is a symbolic link" in capsys.readouterr().err
    assert mine.read_text() == "precious"


def test_a_symlink_that_stays_inside_the_project_is_fine(ran, tmp_path):
    import io
    import shutil

    from er_expectations.run.runner import run_checkpoint

    root = tmp_path / "copy"
    shutil.copytree(ran, root, symlinks=True)
    validations = root / "project" / "gx" / "uncommitted" / "validations"
    shutil.move(validations, root / "project" / "kept")
    os.symlink(root / "project" / "kept", validations)
    report = run_checkpoint(root / "checkpoints" / "toy.yml", progress=False, out=io.StringIO(), releases=["alpha"])
    assert report.releases


def _tree(path: Path) -> dict:
    if path.is_file():
        return {"": path.read_bytes()}
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def test_a_result_cut_short_by_a_full_disk_is_set_aside_and_reported(ran, tmp_path, capsys):
    import shutil

    from er_expectations.cli.main import main

    root = tmp_path / "copy"
    shutil.copytree(ran, root, symlinks=True)
    project = root / "project"
    (result,) = (project / "gx" / "uncommitted" / "validations").rglob("*.json")
    half = result.read_bytes()[:100]
    result.write_bytes(half)  # GX writes results in place: a full disk leaves this
    relative = result.relative_to(project / "gx" / "uncommitted" / "validations")
    page = project / "gx" / "uncommitted" / "data_docs" / "local_site" / "validations" / relative.with_suffix(".html")
    assert page.is_file()
    assert main(["run", str(root / "checkpoints" / "toy.yml"), "--no-progress", "--release", "alpha"]) == 0
    out = capsys.readouterr().out
    kept = project / ".er-expectations" / "damaged" / "validations" / relative
    assert f"Moved the unreadable validation result {result}" in out and str(kept) in out
    assert kept.read_bytes() == half and not result.exists() and not page.exists()
    for stored in (project / "gx" / "uncommitted" / "validations").rglob("*.json"):
        json.loads(stored.read_text())  # every stored result readable again
    index = (project / "gx" / "uncommitted" / "data_docs" / "local_site" / "index.html").read_text()
    assert relative.parent.name not in index  # the index no longer links the lost page


@pytest.mark.parametrize("store", ["validation_definitions", "checkpoints"])
def test_a_stored_definition_cut_short_is_set_aside_and_written_again(ran, tmp_path, capsys, store):
    import shutil

    from er_expectations.cli.main import main

    root = tmp_path / "copy"
    shutil.copytree(ran, root, symlinks=True)
    project = root / "project"
    file = sorted((project / "gx" / store).glob("*.json"))[0]
    file.write_bytes(file.read_bytes()[:50])
    assert main(["run", str(root / "checkpoints" / "toy.yml"), "--no-progress", "--release", "alpha"]) == 0
    out = capsys.readouterr().out
    assert f"{file} (50 bytes, cut short" in out and "this run writes it again" in out
    assert (project / ".er-expectations" / "damaged" / store / file.name).stat().st_size == 50
    json.loads(file.read_text())  # written again, whole


def test_a_link_out_behind_a_link_that_stays_inside_is_found(ran, tmp_path, capsys):
    import shutil

    from er_expectations.cli.main import main

    root = tmp_path / "copy"
    shutil.copytree(ran, root, symlinks=True)
    project = root / "project"
    shutil.move(project / "gx" / "expectations", project / "elsewhere")
    os.symlink(project / "elsewhere", project / "gx" / "expectations")  # inside: fine by itself
    mine = tmp_path / "mine.json"
    mine.write_text("precious")
    stored = project / "elsewhere" / "toy_checks.json"
    stored.unlink()
    os.symlink(mine, stored)  # ... but it holds a link out
    assert main(["run", str(root / "checkpoints" / "toy.yml"), "--no-progress", "--release", "alpha"]) == 2
    err = capsys.readouterr().err
    assert f"toy_checks.json is a symbolic link to {mine}" in err and "Traceback" not in err
    assert mine.read_text() == "precious"
