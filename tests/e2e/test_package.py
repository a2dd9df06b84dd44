"""The package is lazy: the Python API does not import Great Expectations (issue 7, item 5)."""

from __future__ import annotations

import subprocess
import sys

from support.paths import REPO

SCRIPT = """
import sys
import pandas as pd
import er_expectations as erx

df = pd.DataFrame({"p": ["a", "a", "b", "c"], "t": ["x", "x", "y", "y"]})
erx.summarize(df, cluster="p")
erx.estimate(df, prediction="p", reference="t")
erx.exact_metrics(df, prediction="p", reference="t")
import er_expectations.config  # YAML models do not need GX either
assert "great_expectations" not in sys.modules, "the API imported GX"

import er_expectations.gx  # the one documented import that registers the expectations
from great_expectations.expectations.registry import get_expectation_impl

for name in er_expectations.gx.expectation_names():
    get_expectation_impl(name)
print("ok")
"""


def test_the_api_does_not_import_gx_and_one_import_registers_everything(tmp_path):
    # a script file, not ``python -c``: with pyspark installed GX may exit 0 silently under -c
    script = tmp_path / "lazy.py"
    script.write_text(SCRIPT, encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=REPO,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("ok")


def test_every_public_name_resolves():
    """Every name of ``erx.__all__`` is an attribute of the package (the lazy ones included)."""
    import er_expectations as erx

    for name in erx.__all__:
        assert getattr(erx, name) is not None, name
    assert callable(erx.labelling_batch) and callable(erx.diff_releases)
