"""Skipped is not passed (SPEC 13): a check that cannot be evaluated says so, everywhere.

Hostile cases first: a drift check whose release shares one record with a baseline of 300, a
baseline of one record, a disparity check with no group large enough, a bad ``min_overlap``.
Each is *skipped* with its reason: GX gets ``on_skip`` (pass by default, or fail), and our
reading of the result (:mod:`er_expectations.gx.outcome`), the run report, history and Data
Docs call it skipped, never passed. The expected numbers are worked out by hand in each test.
"""

from __future__ import annotations

import io

import pandas as pd
import pytest
from support.gxtools import validate_frame

import er_expectations.gx  # noqa: F401  (registers the expectations)
from er_expectations.gx.expectations import (
    ExpectEstimateChangeToBeBelow,
    ExpectReleaseAgreementToBeBetween,
    ExpectStatisticChangeToBeBelow,
    ExpectSubgroupDisparityToBeBelow,
)
from er_expectations.gx.expectations.drift import overlap_needed
from er_expectations.gx.outcome import ExpectationOutcome, outcome
from er_expectations.run.report import ReleaseOutcome, RunReport, print_summary


def _drift_checks(**kw) -> list:
    return [
        ExpectStatisticChangeToBeBelow(prediction_column="prediction", statistic="average_cluster_size",
                                       max_change=0.0, **kw),
        ExpectReleaseAgreementToBeBetween(prediction_column="prediction", metric="pairwise_recall", min_value=1.0,
                                          **kw),
        ExpectEstimateChangeToBeBelow(prediction_column="prediction", reference_column="truth",
                                      metric="pairwise_recall", max_change=0.01, **kw),
    ]


def one_common_record(n: int = 300) -> pd.DataFrame:
    """A release of ``n`` records in pairs and a baseline of ``n`` records sharing only r000 with it
    (the baseline's other records are rows without a prediction, as the runner's join writes them)."""
    rows = [{"rid": f"r{i:03d}", "truth": f"E{i // 2}", "prediction": f"p{i // 2}",
             "prediction__baseline": "b0" if i == 0 else None} for i in range(n)]
    rows += [{"rid": f"x{i:03d}", "truth": None, "prediction": None, "prediction__baseline": f"b{i // 2}"}
             for i in range(1, n)]
    return pd.DataFrame(rows)


def test_one_common_record_out_of_300_is_skipped_not_passed(context):
    df = one_common_record()
    res = validate_frame(context, df, _drift_checks(), "one_common")
    assert len(res.results) == 3
    for r in res.results:
        assert not r.exception_info.get("raised_exception"), r.exception_info
        details = r.result["details"]
        # 300 records in each release, 0.5 of them needed in common: ceil(150) = 150; 1 is there
        assert details["skipped"] is True and details["min_overlap"] == 150 and details["common_records"] == 1
        assert "only 1 record is in both" in details["skip_reason"] and "150" in details["skip_reason"]
        assert r.success is True  # on_skip: pass (GX's view) ...
        found = outcome("s", r)
        assert found.status == "skipped" and found.skipped == details["skip_reason"]  # ... never "passed"
        assert "skipped" in found.describe()


def test_a_baseline_of_one_record_is_skipped_too(context):
    """min_overlap is a share of the *larger* release: a one-record baseline does not speak for 300."""
    df = one_common_record()
    df = df[df["prediction"].notna()]  # the baseline is now r000 alone
    (r,) = validate_frame(context, df, _drift_checks()[:1], "one_record_baseline").results
    assert r.result["details"]["skipped"] is True and r.result["details"]["min_overlap"] == 150


@pytest.mark.parametrize("min_overlap, skipped", [(1, False), (2, True), (0.003, False), (0.004, True)])
def test_min_overlap_as_a_count_or_a_share(context, min_overlap, skipped):
    # 1 common record; a share s needs ceil(300 s): 0.003 -> ceil(0.9) = 1, 0.004 -> ceil(1.2) = 2
    (r,) = validate_frame(context, one_common_record(), _drift_checks(min_overlap=min_overlap)[:1],
                          f"overlap_{str(min_overlap).replace('.', '_')}").results
    assert r.result["details"]["skipped"] is skipped
    # on the one common record both releases are a singleton: no change, so an evaluated check passes
    # (which is exactly why a comparison on one record must not be evaluated by default)
    assert outcome("s", r).status == ("skipped" if skipped else "passed")


def test_overlap_needed_by_hand():
    assert overlap_needed(0.5, 300, 300) == (150, 0.5)
    assert overlap_needed(0.5, 300, 1) == (150, 0.5)
    assert overlap_needed(0.5, 3, 2) == (2, 0.5)  # ceil(1.5)
    assert overlap_needed(0.001, 10, 10) == (1, 0.001)  # never below one record
    assert overlap_needed(1000, 5, 5) == (1000, None)


@pytest.mark.parametrize("value, words", [(2.5, "whole number"), (0, "must be > 0"), (-1, "must be > 0")])
def test_bad_min_overlap_is_named(value, words):
    with pytest.raises(Exception) as err:
        ExpectStatisticChangeToBeBelow(prediction_column="prediction", statistic="average_cluster_size",
                                       max_change=1.0, min_overlap=value)
    assert "min_overlap" in str(err.value) and words in str(err.value)


def test_on_skip_fail_makes_gx_fail_and_keeps_the_reason(context):
    (r,) = validate_frame(context, one_common_record(), _drift_checks(on_skip="fail")[:1], "on_skip_fail").results
    assert r.success is False
    found = outcome("s", r)
    assert found.status == "failed" and found.skipped is not None and "150" in found.skipped


def test_on_skip_takes_pass_or_fail_only():
    with pytest.raises(Exception) as err:
        ExpectStatisticChangeToBeBelow(prediction_column="prediction", statistic="average_cluster_size",
                                       max_change=1.0, on_skip="ignore")
    assert "on_skip" in str(err.value)


def test_a_disparity_check_with_no_testable_group_is_skipped(context):
    # 20 true clusters of 2 records, two groups of 10 clusters: min_draws 30 leaves no group testable
    df = pd.DataFrame([{"pred": f"p{c}", "ref": f"t{c}", "grp": "ab"[c % 2]} for c in range(20) for _ in range(2)])
    exp = ExpectSubgroupDisparityToBeBelow(prediction_column="pred", reference_column="ref", group_column="grp",
                                           max_disparity=0.05, metric="pairwise_recall", min_draws=30)
    (r,) = validate_frame(context, df, [exp], "no_testable_group").results
    assert not r.exception_info.get("raised_exception"), r.exception_info
    found = outcome("s", r)
    assert found.status == "skipped" and "no group could be tested" in found.skipped
    assert "fewer than 30 draws" in found.skipped


def test_a_first_release_without_baseline_is_skipped_with_its_reason(context):
    df = one_common_record().assign(prediction__baseline=None)
    for r in validate_frame(context, df, _drift_checks(), "first_release").results:
        found = outcome("s", r)
        assert found.status == "skipped" and "no baseline release" in found.skipped


# -- the run report: counts that do not call skipped checks passed --------------------------------


def _outcome(label: str, *, success: bool = True, skipped: str | None = None, error: str | None = None,
             severity: str = "critical") -> ExpectationOutcome:
    return ExpectationOutcome(suite="s", expectation="x", label=label, severity=severity, success=success,
                              skipped=skipped, error=error)


def test_report_counts_skipped_apart_and_lists_the_reasons():
    from datetime import UTC, datetime
    from pathlib import Path

    release = ReleaseOutcome(label="2017-08-08", key="k", gx_checkpoint="c", evaluated=4, successful=3, failed=1,
                             expectations=[_outcome("a"), _outcome("b", skipped="no baseline release"),
                                           _outcome("c", skipped="not enough history (0 of 3)"),
                                           _outcome("d", success=False, severity="warning")])
    assert release.passed == 1 and [e.label for e in release.skipped] == ["b", "c"]
    assert release.status == "warnings"  # a skipped check neither passes nor fails the release
    report = RunReport(checkpoint="c", checkpoint_path=Path("c.yml"), project_dir=Path("."), run_name="r",
                       run_time=datetime(2026, 11, 27, tzinfo=UTC), suites=("s",), releases=[release])
    table = report.summary_table()
    head, row = table.splitlines()
    assert head.split()[:4] == ["release", "passed", "status", "skipped"]
    assert row.split()[:5] == ["2017-08-08", "1/4", "ok", "(warnings)", "2"]
    data = report.to_dict()["releases"][0]
    assert data["passed"] == 1 and data["successful"] == 3
    assert data["skipped"] == [{"label": "b", "severity": "critical", "reason": "no baseline release"},
                               {"label": "c", "severity": "critical", "reason": "not enough history (0 of 3)"}]
    out = io.StringIO()
    print_summary(report, out)
    text = out.getvalue()
    assert "2 expectation(s) skipped (not evaluated, not counted as passed):" in text
    assert "skipped: 2017-08-08: b (critical): no baseline release" in text


def test_an_old_result_with_only_the_skipped_flag_reads_as_skipped():
    """Results stored before skip_reason existed carried ``skipped`` and ``note``."""
    evr = {"success": True, "expectation_config": {"type": "expect_statistic_change_to_be_below",
                                                   "kwargs": {"statistic": "matching_rate"}},
           "result": {"details": {"skipped": True, "note": "no baseline release for this batch"}}}
    found = outcome("s", evr)
    assert found.status == "skipped" and found.skipped == "no baseline release for this batch"
    evr["result"]["details"]["skipped"] = False
    assert outcome("s", evr).status == "passed"
