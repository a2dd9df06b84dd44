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

    assert prov["software"] == {"er_expectations": __version__, "great_expectations": gx.__version__,
                                "python": platform.python_version()}
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
    from er_expectations.gx.provenance_view import provenance_lines

    lines = dict(provenance_lines({}, []))
    assert "not recorded" in lines["Provenance"]
