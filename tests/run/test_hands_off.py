"""Hands off a user's GX project (issue 30 item 3): ``er-expectations run`` never rewrites a GX
project it did not create, and a project it created still builds its Data Docs with plain GX."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
from support.paths import REPO
from support.toyproject import CHECKPOINT, make_toy

from er_expectations.cli.main import main

pytestmark = pytest.mark.slow


def _user_project(root):
    """A GX project made by plain GX, with a comment of the user's and a second Data Docs site."""
    import great_expectations as gx

    context = gx.get_context(mode="file", project_root_dir=str(root))
    context.add_data_docs_site(site_name="team_site", site_config={
        "class_name": "SiteBuilder",
        "store_backend": {"class_name": "TupleFilesystemStoreBackend", "base_directory": "uncommitted/team/"},
        "site_index_builder": {"class_name": "DefaultSiteIndexBuilder"}})
    config = root / "gx" / "great_expectations.yml"
    config.write_text("# the data team's project: do not reformat\n" + config.read_text(encoding="utf-8"),
                      encoding="utf-8")
    return config


def _tree(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_a_users_project_is_refused_with_the_fix_and_left_byte_identical(tmp_path, capsys):
    path = make_toy(tmp_path, checkpoint=CHECKPOINT.replace("build_data_docs", "build_data_docs: {site_name: team_site}"))
    project = tmp_path / "project"
    config = _user_project(project)
    before, files = config.read_bytes(), _tree(project)
    assert b"local_site" in before and b"team_site" in before and b"progress_bars" not in before

    assert main(["run", str(path), "--no-progress"]) == 2  # a configuration error: nothing validated
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert f"{path}:2:" in err  # the project_dir line of the checkpoint file
    assert "did not create" in err and "project_dir to a folder of its own" in err
    assert str(project / ".er-expectations" / "project") in err  # the deliberate hand-over
    assert config.read_bytes() == before  # comment, sites, settings: byte-identical
    assert _tree(project) == files  # not even a lock file

    # handed over on purpose: the run goes ahead
    (project / ".er-expectations").mkdir()
    (project / ".er-expectations" / "project").write_text("mine to manage\n")
    assert main(["run", str(path), "--no-progress", "--release", "alpha"]) == 0


def test_a_project_it_created_builds_its_data_docs_with_plain_gx(tmp_path):
    path = make_toy(tmp_path)
    assert main(["run", str(path), "--no-progress", "--release", "alpha"]) == 0
    project = tmp_path / "project"
    index = project / "gx" / "uncommitted" / "data_docs" / "local_site" / "index.html"
    index.unlink()
    script = tmp_path / "docs.py"
    script.write_text(textwrap.dedent("""
        import sys
        import great_expectations as gx

        urls = gx.get_context(mode="file", project_root_dir=sys.argv[1]).build_data_docs()
        print(urls["local_site"])
    """), encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, str(script), str(project)], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip().splitlines()[-1] == index.as_uri()
    page = index.read_text(encoding="utf-8")
    assert "toy__alpha" in page or "alpha" in page
    assert "Offline edition" in page  # the plugin's own index builder, run by plain GX
