"""The smaller page items of issue 29: p-values, the release diff once per page, the suite's
description, suite names broken between words, relative changes charted in per cent."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd
import pytest
from great_expectations.core import ExpectationSuite

from er_expectations.core.text import fmt_p
from er_expectations.gx.docs.data_docs import (
    DescribedSuitePageRenderer,
    OfflinePageView,
    _diff_once,
)
from er_expectations.gx.docs.html_view import name_breaks
from er_expectations.gx.docs.render import DIFF_SHOWN_UNDER
from er_expectations.history.chart import series_spec


@pytest.mark.parametrize(("p", "text"), [(0.0, "< 0.001"), (0.00049, "< 0.001"), (0.000999, "< 0.001"),
                                         (0.001, "0.001"), (0.009, "0.009"), (0.5, "0.500"), (1.0, "1.000"),
                                         (None, "—"), (float("nan"), "—")])
def test_a_p_value_is_never_printed_as_zero(p, text):
    assert fmt_p(p) == text


def _evr(kind: str, diff: dict | None, *, success: bool = False):
    details = {"diff": diff} if diff is not None else {}
    return SimpleNamespace(success=success, result={"observed_value": 1.0, "details": details},
                           expectation_config={"type": kind, "kwargs": {"statistic": "average_cluster_size"}},
                           exception_info={"raised_exception": False})


def test_the_release_diff_is_shown_once_per_page():
    diff = {"before": "2020-06-30", "after": "2020-09-29", "common_records": 100, "records_moved": 7}
    first = _evr("expect_statistic_change_to_be_below", diff)
    second = _evr("expect_estimate_change_to_be_below", dict(diff))
    other = _evr("expect_estimate_change_to_be_below", {**diff, "before": "2019-12-31"})  # another diff
    passed = _evr("expect_statistic_change_to_be_below", dict(diff), success=True)  # a pass shows no diff
    page = SimpleNamespace(results=[first, passed, second, other])
    shown = _diff_once(page)
    assert shown is not page and page.results[2].result["details"]["diff"] == diff  # the stored result untouched
    details = [r.result["details"] for r in shown.results]
    assert details[0]["diff"] == diff and DIFF_SHOWN_UNDER not in details[0]
    assert details[2]["diff"] is None and details[2][DIFF_SHOWN_UNDER] == "average_cluster_size_change"
    assert details[3]["diff"]["before"] == "2019-12-31"
    assert _diff_once(SimpleNamespace(results=[first, other])).results[1] is other  # nothing repeated: as is


def test_the_suite_page_gives_the_description_escaped():
    hostile = 'Checks of <script>alert(1)</script> & "releases"'
    suite = ExpectationSuite(name="patentsview_inventor_disambiguation",
                             meta={"er_expectations": {"description": hostile}})
    document = DescribedSuitePageRenderer().render(suite)
    html = OfflinePageView().render(document)
    assert "Description" in html
    assert "Checks of &lt;script&gt;alert(1)&lt;/script&gt; &amp; &#34;releases&#34;" in html
    assert "<script>" not in html
    plain = ExpectationSuite(name="no_description")
    assert "Description" not in OfflinePageView().render(DescribedSuitePageRenderer().render(plain))


def test_suite_names_break_between_their_words_only():
    assert str(name_breaks("patentsview_inventor_disambiguation")) == "patentsview_<wbr>inventor_<wbr>disambiguation"
    assert str(name_breaks("a.b/<i>x</i>")) == "a.<wbr>b/<wbr>&lt;i&gt;x&lt;/<wbr>i&gt;"


def test_a_relative_change_is_charted_in_per_cent():
    frame = pd.DataFrame({"release": ["a", "b"], "position": [0, 1], "value": [0.05, -0.2], "ci_lower": [None, None],
                          "ci_upper": [None, None], "success": [True, False], "outcome": ["passed", "failed"],
                          "label": ["x", "x"], "metric": ["relative change (%)", "relative change (%)"]})
    spec = series_spec(frame, y_format=".0%", thresholds=[0.15, -0.15])
    text = str(spec)
    assert "'axis': {'format': '.0%'}" in text and "'format': '.4g'" not in text
    assert "'axis': {'format'" not in str(series_spec(frame))  # an absolute value keeps its own numbers
