"""The demo's Data Docs as an auditor sees them: our sentences and numbers, nothing raw.

Runs the bundled PatentsView checkpoint on three releases into a temporary project, then
reads the offline index and validation pages (as HTML, and in headless Chromium when it is
installed). The numbers on the page are checked against ``erx.estimate`` on the same data.
"""

from __future__ import annotations

import io
import shutil

import pandas as pd
import pytest
from support.chromium import (
    chromium_available,
    dump_dom,
    page_problems,
    screenshot,
    visible_text,
)
from support.paths import REPO

import er_expectations as erx
from er_expectations.core.text import observed_estimate
from er_expectations.run.runner import run_checkpoint

PV = REPO / "er_expectations" / "data" / "patentsview"
RELEASES = ["2017-08-08", "2021-12-30", "2022-06-30"]


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    root = tmp_path_factory.mktemp("demo")
    shutil.copytree(REPO / "suites", root / "suites")
    (root / "checkpoints").mkdir()
    text = (REPO / "checkpoints" / "patentsview.yml").read_text()
    text = text.replace("../er_expectations/data/patentsview", PV.as_posix())
    path = root / "checkpoints" / "patentsview.yml"
    path.write_text(text)
    report = run_checkpoint(path, releases=RELEASES, progress=False, out=io.StringIO())
    site = report.data_docs_index.parent
    pages = {label: next(site.glob(f"validations/**/*release_{label}.html")) for label in RELEASES}
    return {"report": report, "index": report.data_docs_index, "pages": pages}


@pytest.fixture(scope="module")
def expected():
    """Independent numbers: the Python API on the same release tables."""
    pred = pd.read_parquet(PV / "predictions.parquet")
    bench = pd.read_parquet(PV / "benchmark.parquet")
    out = {}
    for label in RELEASES:
        col = "inventor_id_" + label.replace("-", "")
        df = pred[["mention_id", col]].merge(bench, on="mention_id", how="left")
        out[label] = erx.estimate(df, prediction=col, reference="benchmark_id")
    return out


def _observed(row) -> str:
    return observed_estimate(row.estimate, row.std_error, row.ci_lower, row.ci_upper, ci_level=0.95,
                             clusters=int(row.clusters), draws=int(row.draws), interval=row.ci_method)


def test_validation_page_html_has_sentences_numbers_and_no_raw_kwargs(demo, expected):
    html = demo["pages"]["2017-08-08"].read_text(encoding="utf-8")
    text = visible_text(html)
    assert page_problems(html) == []
    assert "**{" not in html and "(**" not in text
    assert ("Estimated pairwise precision of inventor_id is at least 0.7, from the size-proportional benchmark "
            "in benchmark_id: it passes only when the whole 95 % confidence interval of the estimate is within the "
            "limit (confidently within).") in text
    precision = expected["2017-08-08"].loc["pairwise_precision"]
    assert _observed(precision) in text  # e.g. 0.568 ± 0.108 (95 % BCa bootstrap CI 0.351–0.770, 370 clusters)
    assert "Sampled clusters that contribute most to the error of the pairwise precision" in text
    assert "Note: Balance of pairwise precision and recall (F1), failing when" in text  # the suite author's note
    assert "<script" not in html.lower()


def test_index_lists_each_release_with_its_status(demo):
    text = visible_text(demo["index"].read_text(encoding="utf-8"))
    # each release's row states its own status: 2017-08-08 fails a critical check (precision),
    # 2022-06-30 too (the jump of its average cluster size), 2021-12-30 fails only warning/info checks
    assert "✘ failed patentsview-releases-release_2017-08-08" in text
    assert "✘ failed patentsview-releases-release_2022-06-30" in text
    assert "⚠ passed with warnings patentsview-releases-release_2021-12-30" in text


def test_drift_check_states_both_values_the_change_and_the_diff(demo):
    """2022-06-30 against its previous release 2021-12-30 (which this run also validates), on the
    mentions both hold; the numbers are recomputed here with pandas."""
    pred = pd.read_parquet(PV / "predictions.parquet")
    old, new = pred["inventor_id_20211230"], pred["inventor_id_20220630"]
    both = old.notna() & new.notna()
    before, after = both.sum() / old[both].nunique(), both.sum() / new[both].nunique()
    text = visible_text(demo["pages"]["2022-06-30"].read_text(encoding="utf-8"))
    assert ("The average cluster size of inventor_id changes by at most 15 % against the previous release "
            "(inventor_id__baseline), both computed on the records present in both releases.") in text
    assert (f"{before:.3f} in 2021-12-30 → {after:.3f} (change {after - before:.3f}, "
            f"{100 * (after / before - 1):+.1f} %) on {int(both.sum()):,} records in both releases") in text
    assert f"Release diff on the {int(both.sum()):,} records in both releases" in text
    first = visible_text(demo["pages"]["2017-08-08"].read_text(encoding="utf-8"))
    assert "Not evaluated (skipped): no baseline release for this batch" in first


def test_the_first_release_shows_its_history_checks_as_skipped_never_passed(demo):
    """2017-08-08 has no previous release and no history: every drift and control check of the
    suite file (counted here from the YAML) is skipped, says so, and is not counted as passed."""
    import yaml

    suite = yaml.safe_load((REPO / "suites" / "patentsview.yml").read_text(encoding="utf-8"))
    history_based = {"expect_statistic_change_to_be_below", "expect_estimate_change_to_be_below",
                     "expect_release_agreement_to_be_between", "expect_statistic_within_control_limits"}
    n = sum(e["expectation"] in history_based for e in suite["expectations"])
    assert n >= 2
    release = next(r for r in demo["report"].releases if r.label == "2017-08-08")
    assert len(release.skipped) == n and release.evaluated == len(release.expectations) - n  # skipped: not evaluated
    assert release.passed == release.evaluated - len(release.failures)
    text = visible_text(demo["pages"]["2017-08-08"].read_text(encoding="utf-8"))
    assert text.count("skipped: not evaluated") == n
    assert f"{n} expectations skipped (not evaluated)" in text


def test_warnings_mean_something_and_notes_never_contradict_them(demo):
    """Issue 29 item 4: the demo's warnings fire where they are worth a look. 2021-12-30 (its
    gap's interval −0.099 to −0.014 reaches inside ±0.05) passes the disparity check by the one
    rule and carries one warning, the lumping signal; no page calls a check "informational" while
    it fails, and a benchmark match's Why line states the fact, not a judgment."""
    by_label = {r.label: r for r in demo["report"].releases}
    assert [e.label for e in by_label["2021-12-30"].warnings] == ["name_variation_rate_vs_benchmark"]
    gap = next(e for e in by_label["2021-12-30"].expectations if e.label == "pairwise_f_gap_by_group")
    assert gap.status == "passed"
    text = visible_text(demo["pages"]["2021-12-30"].read_text(encoding="utf-8"))
    assert "not confidently beyond" in text and "significant after adjustment" not in text
    # its estimate (−0.056) is outside ±0.05: the page never calls it "within"
    assert "no tested gap is confidently beyond ±0.050" in text and "not beyond the limit" in text
    assert "every tested gap is within" not in text
    for page in demo["pages"].values():
        shown = visible_text(page.read_text(encoding="utf-8"))
        assert "informational on this data" not in shown.lower() and "needs a look" not in shown
    assert "name variation rate is above the 95 % interval of the true value" in text


@pytest.mark.browser
@pytest.mark.skipif(not chromium_available(), reason="headless Chromium is not installed (apt-get install chromium)")
def test_an_auditor_opening_the_docs_in_chromium_reads_our_text(demo, expected, tmp_path):
    index_text = visible_text(dump_dom(demo["index"]))
    for label in RELEASES:
        assert label in index_text
    page = demo["pages"]["2022-06-30"]
    dom = dump_dom(page)
    assert page_problems(dom) == []
    text = visible_text(dom)
    recall = expected["2022-06-30"].loc["pairwise_recall"]
    assert _observed(recall) in text
    assert ("Estimated pairwise recall of inventor_id is at least 0.92, from the size-proportional benchmark in "
            "benchmark_id: it fails only when the whole 95 % confidence interval of the estimate is beyond the limit "
            "(confidently beyond).") in text
    assert "**{" not in text and "$min_value" not in text
    png = screenshot(page, tmp_path / "page.png", width=1400, height=2200)
    assert png.stat().st_size > 10_000
