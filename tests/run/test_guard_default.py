"""The load-order guard where we control the run, and the one-line safe path of native use
(issue 18 item 10).

GX 1.24 has no plugin entry points: an expectation type is known only once the module that
defines it is imported, and a suite that names an unknown type is loaded *without* it (a
logged error), so a native checkpoint run before ``import er_expectations.gx`` validates only
GX's own expectations and can report success. The runner stores every GX checkpoint with
``RequireRegisteredAction``, so such a checkpoint does not even load without the plugin;
``er_expectations.gx.get_context`` imports the plugin and checks every stored suite.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap

from support.paths import REPO
from support.toyproject import make_toy

from er_expectations.run.runner import run_checkpoint

_NATIVE = textwrap.dedent("""
    import json, sys

    root, name, mode, out = sys.argv[1:5]
    if mode == "safe":
        import er_expectations.gx
        ctx = er_expectations.gx.get_context(project_root_dir=root)
    else:
        import great_expectations as gx
        ctx = gx.get_context(mode="file", project_root_dir=root)
    report = {"plugin_imported_first": "er_expectations" in sys.modules}
    try:
        result = ctx.checkpoints.get(name).run()
        report.update(ran=True, success=result.success,
                      types=sorted(r.expectation_config.type for v in result.run_results.values()
                                   for r in v.results))
    except Exception as exc:
        report.update(ran=False, error=f"{type(exc).__name__}: {exc}")
    json.dump(report, open(out, "w"))
""")


def _native(tmp_path, project, name, mode):
    script = tmp_path / f"native_{mode}.py"
    script.write_text(_NATIVE, encoding="utf-8")
    out = tmp_path / f"native_{mode}.json"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    proc = subprocess.run([sys.executable, str(script), str(project), name, mode, str(out)], env=env,
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text())


def test_every_checkpoint_the_runner_stores_carries_the_guard(tmp_path):
    path = make_toy(tmp_path)
    run_checkpoint(path, progress=False, out=io.StringIO())
    stored = sorted((tmp_path / "project" / "gx" / "checkpoints").glob("*.json"))
    assert len(stored) == 4  # one per release (3) and the one over all of them
    for file in stored:
        types = [action["type"] for action in json.loads(file.read_text())["actions"]]
        assert "er_require_registered" in types, (file.name, types)


def test_a_native_checkpoint_without_the_plugin_fails_loudly_and_the_safe_path_runs(tmp_path):
    path = make_toy(tmp_path)
    report = run_checkpoint(path, releases=["beta"], progress=False, out=io.StringIO())
    assert not report.success  # beta's precision 3/7 < 0.9
    project = tmp_path / "project"
    (name,) = [f.stem for f in (project / "gx" / "checkpoints").glob("*.json") if "beta" in f.stem]

    plain = _native(tmp_path, project, name, "plain")
    assert plain["plugin_imported_first"] is True  # by GX opening the project, not by the script
    # GX imports the plugin itself when it opens a project the runner created (its expectations
    # store names er_expectations.gx.stores, issue 30): every check runs, the verdict is the runner's
    assert plain["ran"] is True and plain["success"] is False and len(plain["types"]) == 5
    config = project / "gx" / "great_expectations.yml"  # a project that lost that line: loud
    config.write_text(config.read_text().replace("module_name: er_expectations.gx.stores", ""))
    plain = _native(tmp_path, project, name, "plain")
    assert plain["plugin_imported_first"] is False
    assert plain["ran"] is False and "er_require_registered" in plain["error"]  # loud, not a pass

    safe = _native(tmp_path, project, name, "safe")
    assert safe["ran"] is True and safe["success"] is False  # the same verdict as the runner's
    assert "expect_estimated_pairwise_precision_to_be_between" in safe["types"]
    assert len(safe["types"]) == 5  # every expectation of the toy suite was validated
