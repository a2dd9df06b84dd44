"""A project folder moved (``project_dir`` changed in the checkpoint) keeps working (issue 18,
item 16): the next run, of every release or of some, is not an internal error ("Could not
find batch definition"), and GX's own API still runs the stored checkpoints of the releases
the run did not select."""

from __future__ import annotations

import io
import shutil

import great_expectations as gx
from support.toyproject import make_toy

import er_expectations  # noqa: F401  registers the expectations
from er_expectations.cli.main import main
from er_expectations.run.runner import run_checkpoint


def test_a_moved_project_runs_again_for_some_releases_and_for_all(tmp_path, capsys):
    path = make_toy(tmp_path)
    first = run_checkpoint(path, progress=False, out=io.StringIO())
    shutil.move(str(tmp_path / "project"), str(tmp_path / "moved"))
    path.write_text(path.read_text().replace("project_dir: ../project", "project_dir: ../moved"))

    code = main(["run", str(path), "--no-progress", "--release", "alpha"])
    err = capsys.readouterr().err
    assert code == 0, err  # alpha passes
    ctx = gx.get_context(project_root_dir=str(tmp_path / "moved"))
    assert ctx.checkpoints.get("toy__beta").run().success is False  # beta's stored checkpoint still runs
    assert ctx.checkpoints.get("toy__alpha").run().success is True

    again = run_checkpoint(path, progress=False, out=io.StringIO())
    assert [(r.label, r.success, r.successful) for r in again.releases] == [
        (r.label, r.success, r.successful) for r in first.releases]
