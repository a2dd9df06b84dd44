"""The README's scale-out examples run: ``examples/load_warehouse.py`` and the checkpoints
``checkpoints/patentsview_sqlite.yml`` and ``checkpoints/patentsview_spark.yml``.

The files are run as written, with only the SQLite file and the project folder moved into
the test's folder. Every check of the demo suite computes (none raises), drift checks included.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.enginetools import spark_available
from support.paths import REPO

from er_expectations.gx.expectations import EXPECTATION_TYPES
from er_expectations.run.runner import run_checkpoint


def moved(name: str, root: Path, replacements: dict[str, str]) -> Path:
    text = (REPO / "checkpoints" / name).read_text(encoding="utf-8")
    for old, new in replacements.items():
        assert old in text, old
        text = text.replace(old, new)
    text = text.replace("suite_paths: [../suites]", f"suite_paths: [{REPO / 'suites'}]")
    text = text.replace("../er_expectations/", f"{REPO / 'er_expectations'}/")
    path = root / name
    path.write_text(text, encoding="utf-8")
    return path


def check(report) -> None:
    (release,) = report.releases
    assert release.label == "2022-06-30" and len(release.expectations) >= 15
    assert [o.label for o in release.expectations if o.error is not None] == []
    assert {o.expectation for o in release.expectations} & {name for name, cls in EXPECTATION_TYPES.items() if cls.reads_baseline}
    assert report.data_docs_index is not None and report.data_docs_index.is_file()


@pytest.mark.sqlite
def test_the_sqlite_example_runs(tmp_path):
    db = tmp_path / "warehouse.db"
    done = subprocess.run([sys.executable, str(REPO / "examples" / "load_warehouse.py"), str(db)],
                          capture_output=True, text=True, env=os.environ.copy(), timeout=600)
    assert done.returncode == 0, done.stderr
    path = moved("patentsview_sqlite.yml", tmp_path, {
        "sqlite:///../build/warehouse.db": f"sqlite:///{db}",
        "project_dir: ../build/patentsview_sqlite": f"project_dir: {tmp_path / 'project'}"})
    check(run_checkpoint(path, releases=["2022-06-30"], progress=False, out=io.StringIO()))


@pytest.mark.spark
@pytest.mark.skipif(not spark_available(), reason="pyspark is not installed")
def test_the_spark_example_runs(tmp_path):
    path = moved("patentsview_spark.yml", tmp_path, {
        "project_dir: ../build/patentsview_spark": f"project_dir: {tmp_path / 'project'}"})
    check(run_checkpoint(path, releases=["2022-06-30"], progress=False, out=io.StringIO()))
