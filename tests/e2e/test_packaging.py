"""The release files (issue 30 item 6): the source distribution can run the tests and build
the docs, the wheel carries the data the package reads (the demo, its benchmark manifest, the
Census name tables) and the licences, and the metadata declares the extras and classifiers.

Both are built from a copy of the tracked files with setuptools' PEP 517 hooks (no network,
no build isolation), so the checkout is not touched."""

from __future__ import annotations

import email
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile

import pytest
from support.paths import REPO as ROOT

pytestmark = pytest.mark.slow

BUILD = """
import sys
from setuptools import build_meta
out = sys.argv[1]
sdist = build_meta.build_sdist(out)
wheel = build_meta.build_wheel(out)
print("BUILT", sdist, wheel)
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs a git checkout to list the tracked files")
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    copy = tmp_path_factory.mktemp("tree")
    for rel in filter(None, tracked.decode().split("\0")):
        source = ROOT / rel
        if source.is_file():
            (copy / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy / rel)
    out = tmp_path_factory.mktemp("dist")
    script = copy / "_build.py"
    script.write_text(BUILD, encoding="utf-8")
    done = subprocess.run([sys.executable, str(script), str(out)], cwd=copy, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    sdist_name, wheel_name = next(line for line in done.stdout.splitlines() if line.startswith("BUILT ")).split()[1:]
    return out / sdist_name, out / wheel_name


def test_sdist_holds_the_tests_docs_and_licences(built):
    sdist, _ = built
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    for needed in ("LICENSE", "CHANGELOG.md", "README.md", "PACKAGE-INDEX.md", "run", "mkdocs.yml", "pyproject.toml", "MANIFEST.in",
                   "tests/conftest.py", "tests/support/paths.py", "tests/e2e/test_packaging.py", "docs/SPEC.md",
                   "suites/patentsview.yml", "checkpoints/patentsview.yml", ".ci/run",
                   "er_expectations/data/census/README.md", "er_expectations/data/census/census_2010.parquet"):
        assert needed in names, needed
    assert not any("__pycache__" in n for n in names)


def test_wheel_carries_its_data_licences_and_metadata(built):
    _, wheel = built
    with zipfile.ZipFile(wheel) as whl:
        names = set(whl.namelist())
        meta_name = next(n for n in names if n.endswith(".dist-info/METADATA"))
        meta = email.message_from_bytes(whl.read(meta_name))
    for needed in ("er_expectations/data/census/census_2000.parquet", "er_expectations/data/census/census_2010.parquet",
                   "er_expectations/data/census/census_2020.parquet",
                   "er_expectations/data/census/census_2020_first_names.parquet",
                   "er_expectations/data/census/SOURCES.json", "er_expectations/data/census/README.md",
                   "er_expectations/data/patentsview/benchmark.parquet",
                   "er_expectations/data/patentsview/benchmark.parquet.manifest.json",
                   "er_expectations/data/patentsview/README.md"):
        assert needed in names, needed
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    extras = set(meta.get_all("Provides-Extra"))
    assert {"charts", "workbench", "ethnicity", "ethnicity-models", "sql", "spark"} <= extras
    requires = meta.get_all("Requires-Dist")
    base = [r for r in requires if "extra ==" not in r]
    # light installs (issue 30 item 5): the chart drawer (84 MB) is the charts extra, not the base
    assert not any(r.startswith(("starlette", "uvicorn", "ethnicolr", "torch", "vl-convert")) for r in base), base
    assert any(r.startswith("starlette") and 'extra == "workbench"' in r for r in requires)
    assert any(r.startswith("vl-convert-python") and 'extra == "charts"' in r for r in requires)
    assert meta["License-Expression"] == "Apache-2.0"
    assert "Topic :: Software Development :: Quality Assurance" in meta.get_all("Classifier")


def test_the_package_index_page_starts_with_pip_install_and_has_no_broken_links(built):
    """The wheel's description is PACKAGE-INDEX.md: an index page shows it away from the
    repository, so its first command is ``pip install`` and no link is relative (its Python
    block runs with the docs' blocks, tests/e2e/test_docs_site.py)."""
    _, wheel = built
    with zipfile.ZipFile(wheel) as whl:
        meta_name = next(n for n in whl.namelist() if n.endswith(".dist-info/METADATA"))
        raw = whl.read(meta_name)
    meta = email.message_from_bytes(raw)
    description = raw.decode("utf-8").split("\n\n", 1)[1]  # the body after the headers
    assert description.strip() == (ROOT / "PACKAGE-INDEX.md").read_text(encoding="utf-8").strip()
    assert meta["Description-Content-Type"] == "text/markdown"
    first_block = description.split("```", 2)[1]
    assert first_block.startswith("bash\npip install er-expectations"), first_block
    links = re.findall(r"\]\(([^)]*)\)", description)
    assert all(link.startswith("https://") for link in links), links
    assert "./run" not in description
