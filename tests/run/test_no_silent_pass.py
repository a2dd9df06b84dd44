"""No silent pass (issue 30 item 2): a stored checkpoint that holds er-expectations checks, run
through GX's public API in a fresh process that never imported the plugin, validates every check
(GX imports the plugin when it opens the project) or fails loudly (the plugin is not installed).

Each native run is a script file run with ``subprocess`` (``python -c`` may exit 0 silently once
GX imports pyspark); it writes its findings as JSON.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap

import pytest
from support.paths import REPO

from er_expectations.run.runner import run_checkpoint

pytestmark = pytest.mark.slow

_NATIVE = textwrap.dedent("""
    import json, sys

    root, name, out, block = sys.argv[1:5]
    if block == "block":  # as if er-expectations were not installed
        sys.modules["er_expectations"] = None
    import great_expectations as gx

    report = {}
    try:
        context = gx.get_context(mode="file", project_root_dir=root)
        report["plugin_imported_by_gx"] = "er_expectations.gx" in sys.modules
        result = context.checkpoints.get(name).run()
        report.update(ran=True, success=result.success,
                      types=sorted(r.expectation_config.type for v in result.run_results.values()
                                   for r in v.results))
    except Exception as exc:
        report.update(ran=False, error=f"{type(exc).__name__}: {exc}")
    json.dump(report, open(out, "w"))
""")


def _native(tmp_path, project, name, *, block=False):
    script = tmp_path / "native.py"
    script.write_text(_NATIVE, encoding="utf-8")
    out = tmp_path / "native.json"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    proc = subprocess.run([sys.executable, str(script), str(project), name, str(out),
                           "block" if block else "-"], env=env, capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def demo_project(tmp_path_factory):
    """The demo checkpoint run by ``er-expectations run`` on its 2017-08-08 release (which fails:
    pairwise precision and F below their thresholds)."""
    root = tmp_path_factory.mktemp("demo")
    text = (REPO / "checkpoints" / "patentsview.yml").read_text(encoding="utf-8")
    text = text.replace("../er_expectations/", f"{REPO}/er_expectations/").replace("../suites", f"{REPO}/suites")
    text = text.replace("project_dir: ../build/patentsview", "project_dir: project")
    assert "project_dir: project" in text
    checkpoint = root / "patentsview.yml"
    checkpoint.write_text(text, encoding="utf-8")
    report = run_checkpoint(checkpoint, releases=["2017-08-08"], progress=False, out=io.StringIO())
    assert not report.success
    return root / "project", len(report.releases[0].expectations)


def test_a_fresh_process_that_never_imported_the_plugin_validates_every_check(tmp_path, demo_project):
    project, checks = demo_project
    (name,) = [f.stem for f in (project / "gx" / "checkpoints").glob("*.json") if "2017-08-08" in f.stem]
    stored = json.loads((project / "gx" / "expectations" / "patentsview_inventor_disambiguation.json").read_text())
    report = _native(tmp_path, project, name)
    assert report["ran"] is True, report
    assert report["plugin_imported_by_gx"] is True  # GX imported it, the script did not
    assert report["success"] is False  # 2017-08-08 fails, natively as with `run`
    assert len(report["types"]) == len(stored["expectations"]) == checks  # nothing dropped
    assert "expect_estimated_pairwise_precision_to_be_between" in report["types"]


def test_without_the_plugin_installed_gx_refuses_to_open_the_project(tmp_path, demo_project):
    project, _ = demo_project
    report = _native(tmp_path, project, "any", block=True)
    assert report["ran"] is False
    assert "er_expectations.gx.stores" in report["error"]  # GX names the missing module


def test_a_users_project_registers_the_plugin_with_one_line_of_config(tmp_path):
    """The line docs/gx.md gives for a GX project of the user's own: GX imports the plugin."""
    build = textwrap.dedent("""
        import sys
        import great_expectations as gx
        import pandas as pd
        import er_expectations.gx  # noqa: F401
        from er_expectations.gx.expectations import ExpectEstimatedPairwisePrecisionToBeBetween

        root = sys.argv[1]
        context = gx.get_context(mode="file", project_root_dir=root)
        frame = pd.DataFrame({"rid": [f"r{i}" for i in range(8)], "pred": ["A"] * 8,
                              "truth": ["T1"] * 4 + ["T2"] * 4})
        frame.to_parquet(root + "/release.parquet")
        suite = context.suites.add(gx.ExpectationSuite(name="mine", expectations=[
            ExpectEstimatedPairwisePrecisionToBeBetween(prediction_column="pred", reference_column="truth",
                                                        min_value=0.9),
            gx.expectations.ExpectColumnValuesToNotBeNull(column="rid")]))
        asset = context.data_sources.add_pandas_filesystem("files", base_directory=root).add_parquet_asset("t")
        definition = context.validation_definitions.add(gx.ValidationDefinition(
            name="mine", data=asset.add_batch_definition_path("whole", path="release.parquet"), suite=suite))
        context.checkpoints.add(gx.Checkpoint(name="mine", validation_definitions=[definition]))
    """)
    script = tmp_path / "build.py"
    script.write_text(build, encoding="utf-8")
    project = tmp_path / "mine"
    project.mkdir()
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, str(script), str(project)], env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    config = project / "gx" / "great_expectations.yml"
    text = config.read_text(encoding="utf-8")
    line = "    class_name: ExpectationsStore\n"
    assert text.count(line) == 1
    config.write_text(text.replace(line, line + "    module_name: er_expectations.gx.stores\n"), encoding="utf-8")
    report = _native(tmp_path, project, "mine")
    assert report["plugin_imported_by_gx"] is True and report["success"] is False  # precision 3/7 < 0.9
    assert report["types"] == ["expect_column_values_to_not_be_null",
                               "expect_estimated_pairwise_precision_to_be_between"]
