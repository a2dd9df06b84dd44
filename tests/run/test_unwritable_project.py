"""A Data Docs site that cannot be written is found before anything is validated (issue 18,
item 16): one line naming the folder, exit 2, and it is true that nothing was validated (no new
result, no history version); never GX's tracebacks."""

from __future__ import annotations

import json

from support.readonly import read_only
from support.toyproject import make_toy

from er_expectations.cli.common import EXIT_FAILED, EXIT_USAGE
from er_expectations.cli.main import main


def results(root) -> list:
    return sorted((root / "project" / "gx" / "uncommitted" / "validations").rglob("*.json"))


def test_a_read_only_data_docs_site_is_refused_before_validating(tmp_path, capsys):
    path = make_toy(tmp_path)
    assert main(["run", str(path), "--no-progress"]) == EXIT_FAILED
    capsys.readouterr()
    before = results(tmp_path)
    store = tmp_path / "project" / "er_history.sqlite"
    history = store.read_bytes()
    site = tmp_path / "project" / "gx" / "uncommitted" / "data_docs" / "local_site"
    with read_only(site):
        code = main(["run", str(path), "--no-progress"])
        captured = capsys.readouterr()
    assert code == EXIT_USAGE, captured.err
    assert "Traceback" not in captured.err + captured.out
    assert "An unexpected Exception occurred" not in captured.err + captured.out
    lines = [line for line in captured.err.splitlines() if line.strip()]
    assert len(lines) == 1 and str(site) in lines[0] and "cannot be written" in lines[0]
    assert results(tmp_path) == before and store.read_bytes() == history
    # writable again: the run works
    assert main(["run", str(path), "--no-progress"]) == EXIT_FAILED
    assert len(results(tmp_path)) == len(before) + 3
    assert json.loads(results(tmp_path)[-1].read_text())["meta"]["run_id"]["run_name"] == "toy"


def test_a_full_disk_under_a_new_project_names_the_project(tmp_path, capsys, monkeypatch):
    """GX writes its stores with no file name in the error: the message names the project."""
    import errno

    from great_expectations.data_context.store.tuple_store_backend import (
        TupleFilesystemStoreBackend,
    )

    def full(self, key, value, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(TupleFilesystemStoreBackend, "_set", full)
    path = make_toy(tmp_path)
    code = main(["run", str(path), "--no-progress"])
    err = capsys.readouterr().err
    assert code == EXIT_USAGE, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert str(tmp_path / "project") in lines[0] and "No space left on device" in lines[0]


def test_a_full_tmpfs_under_a_new_project_names_the_project(tmp_path, capsys):
    import os
    import subprocess

    import pytest

    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    disk = tmp_path / "disk"
    disk.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=48k", "tmpfs", str(disk)], capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        from support.toyproject import CHECKPOINT

        path = make_toy(tmp_path / "a", checkpoint=CHECKPOINT.replace("project_dir: ../project",
                                                                      f"project_dir: {disk / 'project'}"))
        code = main(["run", str(path), "--no-progress"])
        err = capsys.readouterr().err
    finally:
        subprocess.run(["umount", str(disk)], check=True)
    assert code == EXIT_USAGE, err
    assert "Traceback" not in err
    assert str(disk / "project") in err and "No space left on device" in err


def test_a_file_where_the_data_docs_folder_goes_names_the_site_and_its_key(tmp_path, capsys):
    """Hostile round 3, item 9: ``local_site`` being a file gave a bare "File exists". Now one line
    naming the file, the site, the key of great_expectations.yml that places it and the fix; exit 2,
    nothing validated."""
    path = make_toy(tmp_path)
    assert main(["run", str(path), "--no-progress"]) == EXIT_FAILED
    capsys.readouterr()
    before = results(tmp_path)
    site = tmp_path / "project" / "gx" / "uncommitted" / "data_docs" / "local_site"
    for folder in sorted(site.rglob("*"), reverse=True):
        folder.unlink() if not folder.is_dir() else folder.rmdir()
    site.rmdir()
    site.write_text("not a folder\n", encoding="utf-8")
    code = main(["run", str(path), "--no-progress"])
    captured = capsys.readouterr()
    assert code == EXIT_USAGE, captured.err
    lines = [line for line in captured.err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in captured.err, captured.err
    assert f"{site}: is a file, not a folder" in lines[0]
    assert "Data Docs site 'local_site'" in lines[0]
    assert "data_docs_sites.local_site.store_backend.base_directory" in lines[0]
    assert "move or delete the file" in lines[0]
    assert results(tmp_path) == before and site.read_text(encoding="utf-8") == "not a folder\n"
