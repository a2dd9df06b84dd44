"""One set of numbers (issue 29 item 1, issue 30 item 7): a skipped check is never successful.

The toy checkpoint gets a drift check, which is skipped on its first release (no baseline). On
every release the stored GX ``statistics``, the page's "Statistics" box, the status line, the
index row, the run report and the alert heading give the same counts; the expected counts are
read off the checks' own outcomes (passed / failed / error / skipped), not off GX's statistics.
"""

from __future__ import annotations

import io
import json
import re

from support.toyproject import SUITE, make_toy

from er_expectations.gx.outcome import check_statistics, outcome
from er_expectations.run.alerts.render import message_from_results
from er_expectations.run.runner import run_checkpoint

DRIFT = """\
  - expectation: expect_statistic_change_to_be_below
    statistic: average_cluster_size
    max_relative_change: 0.5
"""


def _result(kind: str, *, success: bool, severity: str = "critical", skipped: bool = False,
            error: bool = False) -> dict:
    details = {"skipped": True, "skip_reason": "no baseline"} if skipped else {}
    return {"expectation_config": {"type": kind, "kwargs": {}, "severity": severity},
            "success": success, "result": {"details": details},
            "exception_info": {"raised_exception": error, "exception_message": "boom" if error else None}}


def test_check_statistics_by_hand():
    results = [
        _result("expect_a", success=True),                                   # passed
        _result("expect_b", success=False),                                  # failed critical
        _result("expect_c", success=False, severity="warning"),              # failed warning
        _result("expect_d", success=True, skipped=True),                     # skipped (on_skip: pass)
        _result("expect_e", success=False, skipped=True),                    # on_skip: fail -> failed
        _result("expect_f", success=False, error=True),                      # error
    ]
    # GX would say 2 successful of 6 (33.3 %): the skipped check counted as a success
    assert check_statistics(results) == {
        "evaluated_expectations": 5, "successful_expectations": 1, "unsuccessful_expectations": 4,
        "success_percent": 20.0, "skipped_expectations": 1, "checks": 6}
    only_skipped = check_statistics([_result("expect_d", success=True, skipped=True)])
    assert only_skipped["evaluated_expectations"] == 0 and only_skipped["success_percent"] is None


def _box(page: str) -> dict[str, str]:
    """The rows of the page's "Statistics" box."""
    start = page.index(">Statistics<")
    table = page[start:page.index("</table>", start)]
    cells = re.findall(r"<td>(.*?)</td>", table, flags=re.S)
    text = [re.sub(r"<[^>]+>", "", c).strip() for c in cells]
    return dict(zip(text[::2], text[1::2], strict=True))


def test_every_count_agrees_and_skipped_is_not_successful(tmp_path):
    path = make_toy(tmp_path, suite=SUITE + DRIFT)
    out = io.StringIO()
    report = run_checkpoint(path, progress=False, out=out)
    project = tmp_path / "project" / "gx" / "uncommitted"
    files = {f: json.loads(f.read_text()) for f in
             (project / "validations").rglob("*.json")}
    assert len(files) == len(report.releases) == 3
    by_label = {r.label: r for r in report.releases}
    index = (project / "data_docs" / "local_site" / "index.html").read_text()
    assert "Passed / evaluated</th>" in index and "Passed / checks" not in index
    skipped_seen = 0
    for file, doc in files.items():
        statuses = [outcome("", r).status for r in doc["results"]]
        n_passed, n_skipped = statuses.count("passed"), statuses.count("skipped")
        n_eval = len(statuses) - n_skipped
        skipped_seen += n_skipped
        stats = doc["statistics"]
        assert stats["successful_expectations"] == n_passed
        assert stats["evaluated_expectations"] == n_eval and stats["skipped_expectations"] == n_skipped
        assert stats["unsuccessful_expectations"] == n_eval - n_passed
        if n_skipped:  # GX's own count would have been larger: the skipped check returned success
            assert sum(bool(r["success"]) for r in doc["results"]) == n_passed + n_skipped
        release = next(r for r in report.releases if any(file.samefile(p) for p in r.result_files))
        assert (release.passed, release.evaluated, len(release.skipped)) == (n_passed, n_eval, n_skipped)
        assert release.successful == n_passed
        # the page's box and its status line
        page_file = (project / "data_docs" / "local_site" / "validations"
                     / file.relative_to(project / "validations")).with_suffix(".html")
        page = page_file.read_text()
        box = _box(page)
        assert box["Passed"] == str(n_passed) and box["Evaluated"] == str(n_eval)
        assert box["Skipped (not evaluated, not passed)"] == str(n_skipped)
        assert box["Passed, % of evaluated"] == f"{n_passed / n_eval * 100:.1f} %"
        assert "Successful Expectations" not in page
        if n_skipped:
            assert f"{n_skipped} expectation{'s' if n_skipped > 1 else ''} skipped (not evaluated)" in page
        # the index row of this release
        assert f"{n_passed} / {n_eval}</td>" in index
        # the alert heading (a native GX run's message reads the same stored results)
        if release.status == "failed":
            from great_expectations.core.expectation_validation_result import (
                expectationSuiteValidationResultSchema,
            )

            vr = expectationSuiteValidationResultSchema.load(doc)
            message = message_from_results("toy", None, [(vr, [])])
            assert f"({n_passed} of {n_eval} checks passed" in message.releases[0].heading()
    assert skipped_seen == 1  # the first release has no baseline; by_label keeps the labels
    assert set(by_label) == {"alpha", "beta", "gamma"}
    table = report.summary_table()
    first = next(r for r in report.releases if r.skipped)
    assert f"{first.passed}/{first.evaluated}" in table


def test_an_alert_about_warnings_only_never_says_all_passed():
    """Issue 30 item 7: with only warning/info checks failing, GX says failure (and notify_on:
    failure sends); the title says what failed, never "all 1 release passed"."""
    from er_expectations.run.alerts.render import AlertMessage

    def message(warnings: tuple[str, ...]) -> AlertMessage:
        return AlertMessage(checkpoint="toy", status="warnings" if warnings else "passed", success=True,
                            run_name="toy", run_time="2026-01-01T00:00:00", total_releases=1, releases=(),
                            warning_releases=warnings, data_docs=None, results_folder=None)

    assert message(("alpha",)).title == "toy: warning/info checks failed on 1 of 1 release (no critical check failed)"
    assert "passed" not in message(("alpha",)).title
    assert message(()).title == "toy: all 1 release passed"
