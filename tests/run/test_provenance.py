"""Provenance on every page and in history (issue 18 item 2).

A checkpoint run records, in every GX result's ``meta["er_provenance"]``, in the history and in
the JSON report: the versions, the run id and time, each file's path (relative, never absolute),
size and SHA-256, and the release table GX read. The hashes are checked against ``hashlib`` on
the files themselves; the set-aside benchmark clusters against a count made by hand.
"""

from __future__ import annotations

import hashlib
import io
import json
import platform
import re
from pathlib import Path

import pytest
import sqlalchemy as sa
from support.chromium import visible_text
from support.toyproject import CHECKPOINT, make_toy

from er_expectations.core.version import __version__
from er_expectations.run.runner import run_checkpoint

HISTORY = "history: {url: sqlite:///../history.db}\n"


@pytest.fixture(scope="module")
def toy_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("prov")
    path = make_toy(root, checkpoint=CHECKPOINT + HISTORY)
    report = run_checkpoint(path, progress=False, out=io.StringIO())
    return root, path, report


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_report_has_versions_run_id_and_every_input_with_its_hash(toy_run):
    root, path, report = toy_run
    prov = report.to_dict()["provenance"]
    import great_expectations as gx

    code = prov["software"].pop("code")
    assert prov["software"] == {"er_expectations": __version__, "great_expectations": gx.__version__,
                                "python": platform.python_version()}
    assert code["version"] == __version__ and re.fullmatch(r"[0-9a-f]{64}", code["files_sha256"])
    assert re.fullmatch(r"[0-9a-f]{32}", prov["run"]["id"])
    assert prov["checkpoint"]["sha256"] == _sha(path) and prov["checkpoint"]["bytes"] == path.stat().st_size
    (suite,) = prov["suites"]
    assert suite["name"] == "toy_checks" and suite["sha256"] == _sha(root / "suites" / "toy.yml")
    inputs = {fact["role"]: fact for fact in prov["inputs"]}
    assert set(inputs) == {"records", "predictions", "benchmark"}
    for role, name in (("records", "records"), ("predictions", "predictions"), ("benchmark", "benchmark")):
        file = root / "data" / f"{name}.parquet"
        assert inputs[role] == {"role": role, "path": f"../data/{name}.parquet", "bytes": file.stat().st_size,
                                "sha256": _sha(file)}
    assert str(root) not in json.dumps(prov)  # no local absolute path


def test_each_stored_result_carries_its_release_and_the_table_gx_read(toy_run):
    root, _, report = toy_run
    for release in report.releases:
        (file,) = release.result_files
        meta = json.loads(Path(file).read_text())["meta"]
        prov = meta["er_provenance"]
        assert prov["release"]["label"] == release.label
        table = prov["release"]["table"]
        on_disk = root / "project" / table["path"]
        assert on_disk.is_file() and table["sha256"] == _sha(on_disk)
        assert prov["run"]["id"] == report.provenance["run"]["id"]  # one run id for the whole run


def test_history_keeps_each_release_runs_provenance(toy_run):
    root, _, report = toy_run
    engine = sa.create_engine(f"sqlite:///{root / 'history.db'}")
    with engine.connect() as conn:
        rows = conn.execute(sa.text("SELECT release, provenance_json FROM er_history_runs")).all()
    engine.dispose()
    assert sorted(r[0] for r in rows) == ["alpha", "beta", "gamma"]
    for release, text in rows:
        prov = json.loads(text)
        assert prov["release"]["label"] == release and prov["run"]["id"] == report.provenance["run"]["id"]


def test_the_page_shows_provenance_and_the_set_aside_benchmark(toy_run):
    _, _, report = toy_run
    gamma = next(r for r in report.releases if r.label == "gamma")
    (page,) = gamma.pages
    text = visible_text(Path(page.removeprefix("file://")).read_text(encoding="utf-8"))
    assert "Data asset" not in text
    assert "Provenance: what was read, by what, when" in text
    assert f"er-expectations {__version__}" in text
    assert f"SHA-256 {report.provenance['checkpoint']['sha256'][:16]}" in text
    # gamma leaves record r00 out; its entity E0 keeps r01-r03, so no cluster is set aside but one record is
    assert "10 of its 10 sampled clusters used" in text
    assert "1 benchmark record not in this release set aside" in text


def test_a_result_without_provenance_says_so():
    from er_expectations.gx.docs.provenance_view import provenance_lines

    lines = dict(provenance_lines({}, []))
    assert "not recorded" in lines["Provenance"]


# -- issue 29 item 3: provenance as a record ---------------------------------------------------------

def test_a_project_given_by_absolute_paths_writes_no_absolute_path(tmp_path_factory):
    """Every input, the project and the history given by absolute paths (and one input outside the
    checkpoint's tree of folders): no written page, result JSON, report or history row names
    the machine's folders; GX's batch spec (under "Show more info") names the release table relative
    to the project."""
    root = tmp_path_factory.mktemp("absolute")
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    text = CHECKPOINT.replace("project_dir: ../project", f"project_dir: {root / 'project'}")
    text = text.replace("../data/", f"{root / 'data'}/").replace("suite_paths: [../suites]",
                                                                   f"suite_paths: [{root / 'suites'}]")
    path = make_toy(root, checkpoint=text + f"history: {{url: 'sqlite:///{root / 'history.db'}'}}\n")
    benchmark = elsewhere / "bench.parquet"
    (root / "data" / "benchmark.parquet").rename(benchmark)
    path.write_text(path.read_text(encoding="utf-8").replace(str(root / "data" / "benchmark.parquet"), str(benchmark)),
                    encoding="utf-8")
    report = run_checkpoint(path, progress=False, out=io.StringIO())
    written = [p for p in (root / "project").rglob("*") if p.suffix in (".html", ".json") and "validations" in p.parts]
    assert len([p for p in written if p.suffix == ".html"]) == 3 and len([p for p in written if p.suffix == ".json"]) == 3
    written.append(root / "project" / "gx" / "uncommitted" / "data_docs" / "local_site" / "index.html")
    for file in written:
        text = file.read_text(encoding="utf-8")
        for folder in (str(root), str(elsewhere), str(Path(root).resolve())):
            assert folder not in text, (file, folder)
    engine = sa.create_engine(f"sqlite:///{root / 'history.db'}")
    with engine.connect() as conn:
        stored = json.dumps([list(map(str, r)) for r in conn.execute(sa.text("SELECT * FROM er_history_runs")).all()])
    engine.dispose()
    assert str(root) not in stored and str(elsewhere) not in stored
    assert str(root) not in json.dumps(report.to_dict()["provenance"])
    # the stored result's batch spec: the release table relative to the project; the outside input by name
    result = json.loads(next(p for p in written if p.suffix == ".json").read_text(encoding="utf-8"))
    assert re.fullmatch(r"er_data/toy/\w+\.parquet", result["meta"]["batch_spec"]["path"])
    inputs = {f["role"]: f["path"] for f in result["meta"]["er_provenance"]["inputs"]}
    assert inputs == {"records": "../data/records.parquet", "predictions": "../data/predictions.parquet",
                      "benchmark": f"../../{elsewhere.name}/bench.parquet"}
    page = next(p for p in written if p.suffix == ".html" and p.name != "index.html").read_text(encoding="utf-8")
    assert "Batch Spec" in page and "er_data/toy/" in page


@pytest.mark.parametrize("file, base, shown", [
    ("/srv/data/x.parquet", "/srv/project/checkpoints", "../../data/x.parquet"),
    ("/home/me/data/x.parquet", "/srv/project/checkpoints", "…/x.parquet"),  # would spell /home/me/data
    ("/x.parquet", "/srv", "…/x.parquet"),
    ("/srv/project/checkpoints/x.parquet", "/srv/project/checkpoints", "x.parquet"),
])
def test_a_relative_path_that_climbs_to_the_root_is_the_file_name(file, base, shown):
    from er_expectations.run.provenance import file_fact

    assert file_fact("records", Path(file), base=Path(base))["path"] == shown


def test_the_page_shows_full_hashes_shortened_and_the_code_revision(toy_run):
    from er_expectations.core.revision import code_revision

    _, _, report = toy_run
    (page,) = report.releases[0].pages
    html = Path(page.removeprefix("file://")).read_text(encoding="utf-8")
    full = report.provenance["checkpoint"]["sha256"]
    # the whole value in the element (copyable) and its title, shortened by the stylesheet only
    assert f'<code class="er-hash" title="{full}">{full}</code>' in html
    assert re.search(r"\.er-hash\{[^}]*max-width:17ch;[^}]*text-overflow:ellipsis", html)
    code = code_revision()
    text = visible_text(html)
    assert f"package files SHA-256 {code['files_sha256']}" in text
    if code["git"] is not None:
        assert f"git commit {code['git']['commit']} (" in text
        assert ("clean: the package's files are those of the commit" in text) is code["git"]["clean"]


def _git(folder: Path, *args: str) -> None:
    import subprocess

    subprocess.run(["git", "-C", str(folder), "-c", "user.name=t", "-c", "user.email=t@e", *args],
                   check=True, capture_output=True)


def test_the_code_revision_of_a_checkout_and_of_an_installed_copy(tmp_path):
    """The git commit and clean/changed of a package folder in a checkout (checked against git's own
    answer), None outside one; the files' hash against hashlib by hand, bytecode left out."""
    import shutil
    import subprocess

    from er_expectations.core import revision

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    package = tmp_path / "repo" / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("x = 1\n")
    (package / "sub").mkdir()
    (package / "sub" / "m.py").write_text("y = 2\n")
    (package / "__pycache__").mkdir()
    (package / "__pycache__" / "m.cpython-311.pyc").write_bytes(b"\0")
    expected = hashlib.sha256(b"".join(name.encode() + b"\0" + _sha(package / name).encode() + b"\n"
                                       for name in ("__init__.py", "sub/m.py"))).hexdigest()
    assert revision.package_files_sha256(package) == expected
    assert revision._git_revision(package) is None  # noqa: SLF001 - not a checkout: the installed case
    _git(tmp_path / "repo", "init", "-q")
    _git(tmp_path / "repo", "add", "pkg/__init__.py", "pkg/sub/m.py")
    _git(tmp_path / "repo", "commit", "-qm", "one")
    head = subprocess.run(["git", "-C", str(tmp_path / "repo"), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()
    assert revision._git_revision(package) == {"commit": head, "clean": True, "changed": 0}  # noqa: SLF001
    (package / "sub" / "m.py").write_text("y = 3\n")
    (package / "new.py").write_text("")
    assert revision._git_revision(package) == {"commit": head, "clean": False, "changed": 2}  # noqa: SLF001
    assert revision.package_files_sha256(package) != expected


def test_a_natively_rendered_page_shows_no_absolute_batch_path(tmp_path):
    """Native GX (no checkpoint run to rewrite the result): the page renderer's hook shows GX's batch spec
    with the file inside the project relative to it and any other by its name; the result is unchanged."""
    from great_expectations.core import ExpectationSuiteValidationResult

    from er_expectations.gx.docs.data_docs import (
        OfflinePageView,
        SeverityValidationResultsPageRenderer,
    )
    from er_expectations.gx.docs.provenance_view import publishable_meta

    class Context:
        root_directory = str(tmp_path / "project" / "gx")

    inside = str(tmp_path / "project" / "er_data" / "toy" / "alpha.parquet")
    meta = {"batch_spec": {"path": inside, "reader_options": {"other": "/etc/secret/x.csv"}, "reader_method": "r"},
            "run_id": {"run_name": "x", "run_time": "2026-01-01T00:00:00+00:00"}}
    result = ExpectationSuiteValidationResult(success=True, results=[], suite_name="s", meta=meta,
                                              statistics={"evaluated_expectations": 0})
    document = SeverityValidationResultsPageRenderer(data_context=Context()).render(result)
    page = OfflinePageView().render(document)
    assert str(tmp_path) not in page and "/etc/secret" not in page
    assert "er_data/toy/alpha.parquet" in page and "…/x.csv" in page
    assert result.meta["batch_spec"]["path"] == inside  # the stored result is left as it is
    assert publishable_meta({"batch_spec": {"path": "s3://bucket/x"}, "other": "/abs"}, base=None) == {
        "batch_spec": {"path": "s3://bucket/x"}, "other": "/abs"}
