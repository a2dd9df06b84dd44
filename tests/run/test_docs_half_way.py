"""A Data Docs build that fails half-way (issue 18, items 14 and 16): a full disk or a file-size
limit while the pages are written, after the results and the history are.

Every page is written atomically (``gx/docs/site_store.py``): no page is left cut short, the index
links only whole pages, and the next run builds the missing ones. The run says once which
folder could not be written and the fix, that the results and the history are kept, exits 8
when the releases passed (1 when one failed), and GX's tracebacks stay off the terminal.
"""

from __future__ import annotations

import errno
import os
import re
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from support.toyproject import CHECKPOINT, make_toy

import er_expectations.gx.docs.site_store as site_store
from er_expectations.cli.common import EXIT_DOCS, EXIT_FAILED, EXIT_OK
from er_expectations.cli.main import main
from er_expectations.history.store import HistoryStore, default_url

PROGRAM = Path(sys.executable).parent / "er-expectations"


def state(project: Path) -> tuple[list[Path], list[Path], dict[str, bytes]]:
    results = sorted((project / "gx" / "uncommitted" / "validations").rglob("*.json"))
    site = project / "gx" / "uncommitted" / "data_docs" / "local_site"
    pages = {str(p.relative_to(site)): p.read_bytes() for p in sorted(site.rglob("*.html"))}
    return results, sorted(project.rglob("*.tmp")), pages


def assert_site_whole(project: Path) -> None:
    """No temporary file left, every page complete, every link of the index to a page on disk."""
    _, temporaries, pages = state(project)
    assert temporaries == []
    for name, data in pages.items():
        assert data.rstrip().endswith(b"</html>"), name
    site = project / "gx" / "uncommitted" / "data_docs" / "local_site"
    index = (site / "index.html").read_text(encoding="utf-8")
    for href in re.findall(r'href="([^"#]+\.html)"', index):
        assert (site / href).is_file(), href


def pages_of_results(project: Path) -> bool:
    results, _, pages = state(project)
    base = project / "gx" / "uncommitted" / "validations"
    return all(str(Path("validations") / r.relative_to(base).with_suffix(".html")) in pages for r in results)


def test_a_full_disk_half_way_through_the_pages_keeps_results_history_and_whole_pages(tmp_path, capsys, monkeypatch):
    path = make_toy(tmp_path)
    project = tmp_path / "project"
    assert main(["run", str(path), "--no-progress", "--release", "alpha"]) == EXIT_OK
    real, written = site_store.atomic_write, []

    def full_after_one_page(target, data):
        if str(target).endswith(".html") and written:
            raise OSError(errno.ENOSPC, "No space left on device")
        real(target, data)
        written.append(target)

    monkeypatch.setattr(site_store, "atomic_write", full_after_one_page)
    before, _, _ = state(project)
    capsys.readouterr()
    assert main(["run", str(path), "--no-progress", "--release", "alpha"]) == EXIT_DOCS
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err and "unexpected Exception" not in out + err
    site = project / "gx" / "uncommitted" / "data_docs" / "local_site"
    (line,) = [x for x in err.splitlines() if x.startswith("er-expectations: error")]
    assert f"Data Docs site {site} could not be written (No space left on device" in line
    assert "free space on the disk" in line and "run the checkpoint again" in line
    assert "The validation results" in line and "and the history were written before and are kept" in line
    assert "Data Docs NOT complete" in out and f"Data Docs: {site}" not in out
    after, _, _ = state(project)
    assert len(after) == len(before) + 1  # this run's result is kept
    with HistoryStore.open(default_url(project), create=False) as store:
        assert list(store.runs("toy", all_versions=True)["version"]) == [1, 2]  # so is its history
    assert_site_whole(project)
    assert not pages_of_results(project)  # its page is missing, not half there

    monkeypatch.setattr(site_store, "atomic_write", real)  # space again: the next run repairs
    assert main(["run", str(path), "--no-progress", "--release", "beta"]) == EXIT_FAILED
    assert_site_whole(project)
    assert pages_of_results(project)


@pytest.mark.skipif(not PROGRAM.exists(), reason="the er-expectations program is not installed in this venv")
@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_FSIZE as on Linux")
def test_a_file_size_limit_half_way_is_exit_8_and_the_next_run_repairs(tmp_path):
    """A real limit (RLIMIT_FSIZE 16 kB, SIGXFSZ ignored: writes fail with EFBIG): the results
    (about 10 kB each) fit, the pages (about 18 kB) do not."""
    path = make_toy(tmp_path, checkpoint=CHECKPOINT + "history: {enabled: false}\n")  # SQLite would hit it too
    project = tmp_path / "project"
    env = {**os.environ}
    env.pop("ER_EXPECTATIONS_DEBUG", None)
    run = [str(PROGRAM), "run", str(path), "--no-progress", "--release", "alpha"]
    assert subprocess.run(run, capture_output=True, env=env, timeout=300).returncode == EXIT_OK

    def limited() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (16_000, 16_000))

    before, _, _ = state(project)
    done = subprocess.run(run, capture_output=True, text=True, env=env, preexec_fn=limited, timeout=300)
    assert done.returncode == EXIT_DOCS, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and "File too large" in done.stderr
    assert "raise the file-size limit" in done.stderr
    after, _, _ = state(project)
    assert len(after) == len(before) + 1
    assert_site_whole(project)
    assert subprocess.run(run, capture_output=True, env=env, timeout=300).returncode == EXIT_OK
    assert_site_whole(project)
    assert pages_of_results(project)
