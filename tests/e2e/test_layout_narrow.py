"""No clipped columns at 1000 px (issue 18, item 6), measured in headless Chromium.

The demo's index, suite page and the 2017-08-08, 2020-09-29 and 2022-06-30 pages, and a toy
project with hostile long names (a 91-character suite name with no space, a long release
label), are laid out at 1000 and 1400 px (:func:`support.layout.measure`): no cell's content is
wider than its cell or sticks out of its table, nothing sticks out of the page, the index's
results table fits its box without scrolling, and every status cell of a validation table
is wholly inside the window.
"""

from __future__ import annotations

import io
import shutil

import pytest
from support.chromium import chromium_available
from support.paths import REPO
from support.toyproject import CHECKPOINT, SUITE, make_toy

from er_expectations.run.runner import run_checkpoint

PV = REPO / "er_expectations" / "data" / "patentsview"
RELEASES = ["2017-08-08", "2020-09-29", "2022-06-30"]
pytestmark = [pytest.mark.browser, pytest.mark.skipif(not chromium_available(), reason="headless Chromium is "
                                                     "not installed (Debian: apt-get install -y chromium)")]


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("demo")
    shutil.copytree(REPO / "suites", root / "suites")
    (root / "checkpoints").mkdir()
    text = (REPO / "checkpoints" / "patentsview.yml").read_text(encoding="utf-8")
    path = root / "checkpoints" / "patentsview.yml"
    path.write_text(text.replace("../er_expectations/data/patentsview", PV.as_posix()), encoding="utf-8")
    report = run_checkpoint(path, releases=RELEASES, progress=False, out=io.StringIO())
    site = report.data_docs_index.parent
    found = {"index": report.data_docs_index, "suite": next(site.glob("expectations/*.html"))}
    found.update({label: next(site.glob(f"validations/**/*release_{label}.html")) for label in RELEASES})

    toy = tmp_path_factory.mktemp("toy")
    long_suite = "toy_checks_" + "averyveryverylongsuitename" * 3 + "_x"  # 91 characters, no space
    make_toy(toy, suite=SUITE.replace("suite: toy_checks", f"suite: {long_suite}"),
             checkpoint=CHECKPOINT.replace("suites: [toy_checks]", f"suites: [{long_suite}]"))
    toy_report = run_checkpoint(toy / "checkpoints" / "toy.yml", progress=False, out=io.StringIO())
    toy_site = toy_report.data_docs_index.parent
    found["toy index"] = toy_report.data_docs_index
    found["toy beta"] = next(toy_site.glob("validations/**/*release_beta.html"))
    return found


@pytest.mark.parametrize("width", [1000, 1400])
@pytest.mark.parametrize("name", ["index", "suite", *RELEASES, "toy index", "toy beta"])
def test_no_clipped_column_and_the_status_in_view(pages, name, width):
    from support.layout import measure

    layout = measure(pages[name], width=width)
    assert layout["window"] == width
    assert layout["page_width"] <= width, layout["page_width"]
    assert layout["overflowing_cells"] == []
    assert layout["status_hidden"] == []
    assert layout["nested_scrolling"] == []
    for table in layout["tables"]:
        if "er-results" in table["cls"]:  # the index: it fits, the status column at its left
            assert not table["scrolls"] and table["width"] <= table["box"] + 1, table
            assert 0 <= table["status_left"] < table["status_right"] <= width, table
