"""``er_expectations.gx.get_context``: the one-line safe way to open a GX project that uses
these expectations (issue 18 item 10)."""

from __future__ import annotations

import json

import great_expectations as gx
import pytest

import er_expectations.gx
from er_expectations.gx import UnregisteredExpectationError
from er_expectations.gx.expectations import ExpectMatchingRateToBeBetween


def _project(root):
    ctx = gx.get_context(mode="file", project_root_dir=root)
    ctx.suites.add(gx.ExpectationSuite(name="release_checks", expectations=[
        ExpectMatchingRateToBeBetween(prediction_column="pred", min_value=0.5)]))
    return root / "gx" / "expectations" / "release_checks.json"


def test_get_context_opens_a_project_whose_suites_gx_can_build(tmp_path):
    _project(tmp_path)
    ctx = er_expectations.gx.get_context(project_root_dir=tmp_path)
    suite = ctx.suites.get("release_checks")
    assert [e.expectation_type for e in suite.expectations] == ["expect_matching_rate_to_be_between"]
    assert er_expectations.gx.get_context(mode="ephemeral").suites.all() == []


def test_get_context_refuses_a_suite_gx_would_strip(tmp_path):
    path = _project(tmp_path)
    stored = json.loads(path.read_text())
    stored["expectations"].append({"type": "expect_something_from_another_plugin", "kwargs": {}, "meta": {},
                                   "id": "00000000-0000-0000-0000-000000000002", "severity": "critical"})
    path.write_text(json.dumps(stored))
    with pytest.raises(UnregisteredExpectationError,
                       match=r"suite 'release_checks'.*expect_something_from_another_plugin \(not registered"):
        er_expectations.gx.get_context(project_root_dir=tmp_path)
    # plain GX opens it and drops the unknown type with only a logged error
    assert len(gx.get_context(project_root_dir=tmp_path).suites.get("release_checks").expectations) == 1
