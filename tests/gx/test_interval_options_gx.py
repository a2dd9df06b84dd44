"""The interval options of the expectations (SPEC 6, 8, 10; issue 21): a seed gives the same
bootstrap intervals on every engine and as the API, the YAML suite takes the same names and
bounds, and the page states which method built each interval and when a zero-event or
no-change bound entered a gap or a change."""

from __future__ import annotations

import textwrap

import numpy as np
import pandas as pd
import pytest
from support.enginetools import engine_params
from support.gxtools import validate, validate_frame
from support.releases import release_frame

import er_expectations as erx
import er_expectations.gx  # noqa: F401 - registers the expectations
from er_expectations.config import load_suite
from er_expectations.gx.expectations import (
    ExpectEstimateChangeToBeBelow,
    ExpectEstimatedPairwiseRecallToBeBetween,
    ExpectSubgroupDisparityToBeBelow,
)


def _expectations() -> list:
    common = {"prediction_column": "pred", "reference_column": "ref"}
    return [
        ExpectEstimatedPairwiseRecallToBeBetween(**common, min_value=0.0, ci_method="bca", n_boot=300, seed=11),
        ExpectSubgroupDisparityToBeBelow(**common, group_column="grp", max_disparity=1.0, min_draws=2,
                                         ci_method="bootstrap", n_boot=300, seed=11),
        ExpectSubgroupDisparityToBeBelow(**common, group_column="grp", max_disparity=1.0, min_draws=2,
                                         ci_method="recommended", n_boot=300, seed=11),
    ]


def _limits(result) -> list[tuple]:
    out = []
    for r in result.results:
        info = r.exception_info or {}
        infos = [v for v in info.values() if isinstance(v, dict)] or [info]
        for i in infos:
            assert not i.get("raised_exception"), i.get("exception_message")
        d = r.result["details"]
        if "groups" in d:
            out += [(g["group"], g["disparity_ci_lower"], g["disparity_ci_upper"], g["disparity_ci_method"])
                    for g in d["groups"]]
        else:
            out.append((d["metric"], d["ci_lower"], d["ci_upper"], d["ci_method"]))
    return out


@pytest.mark.parametrize("engine", engine_params())
def test_a_seed_gives_the_same_bootstrap_intervals_on_every_engine_and_in_the_api(engine, tmp_path):
    df = release_frame(3)
    on_pandas = _limits(validate("pandas", df, _expectations(), tmp_path))
    on_engine = _limits(validate(engine, df, _expectations(), tmp_path))
    assert len(on_pandas) == len(on_engine) >= 4
    for a, b in zip(on_pandas, on_engine, strict=True):
        assert a[0] == b[0] and a[3] == b[3]
        assert a[1:3] == pytest.approx(b[1:3], rel=1e-9, abs=1e-12)
    api = erx.estimate(df, prediction="pred", reference="ref", metrics=["pairwise_recall"], ci_method="bca", n_boot=300, seed=11)
    assert on_pandas[0][1:3] == pytest.approx((api["ci_lower"].iloc[0], api["ci_upper"].iloc[0]), rel=1e-12)
    groups = erx.estimate_by_group(df, prediction="pred", reference="ref", group_column="grp", metrics=["pairwise_f"], min_draws=2,
                                   ci_method="bootstrap", n_boot=300, seed=11)
    n_groups = (len(on_pandas) - 1) // 2
    for name, lo, hi, _ in on_pandas[1:1 + n_groups]:
        row = groups.loc[(name, "pairwise_f")]
        assert (lo, hi) == pytest.approx((row["disparity_ci_lower"], row["disparity_ci_upper"]), rel=1e-12)
    # "recommended" gaps are the hull of the paired normal and the BCa MOVER gaps, on every engine
    hull = erx.estimate_by_group(df, prediction="pred", reference="ref", group_column="grp", metrics=["pairwise_f"], min_draws=2,
                                 ci_method="hull", n_boot=300, seed=11)
    for name, lo, hi, method in on_pandas[1 + n_groups:]:
        row = hull.loc[(name, "pairwise_f")]
        assert method in ("hull", "zero_event")
        assert (lo, hi) == pytest.approx((row["disparity_ci_lower"], row["disparity_ci_upper"]), rel=1e-12)


SUITE = """
suite: s
defaults:
  prediction_column: pred
  reference_column: ref
expectations:
  - expectation: expect_subgroup_disparity_to_be_below
    group_column: grp
    max_disparity: 0.1
{extra}
  - expectation: expect_estimate_change_to_be_below
    metric: pairwise_recall
    max_change: 0.05
{extra}
"""


def _suite(tmp_path, extra: str):
    path = tmp_path / "suite.yml"
    path.write_text(textwrap.dedent(SUITE).lstrip("\n").format(extra=textwrap.indent(extra, "    ")))
    return path


def test_the_suite_takes_the_interval_keys_of_every_family(tmp_path):
    suite = load_suite(_suite(tmp_path, "ci_method: recommended\nn_boot: 500\nseed: 9"))
    for e in suite.expectations:
        assert (e.kwargs["ci_method"], e.kwargs["n_boot"], e.kwargs["seed"]) == ("recommended", 500, 9)


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        ("n_boot: 1000000000", ["n_boot", "20000"]),
        ("n_boot: 0", ["n_boot", "100"]),
        ("ci_method: wilson", ["ci_method", "recommended"]),
    ],
)
def test_the_suite_refuses_bad_interval_keys_at_their_line(tmp_path, extra, words):
    from er_expectations.config import ConfigError

    with pytest.raises(ConfigError) as caught:
        load_suite(_suite(tmp_path, extra))
    text = str(caught.value)
    for w in words:
        assert w in text, text
    assert "suite.yml:" in text  # located in the file


def _error_free_groups() -> pd.DataFrame:
    truth = np.repeat(np.arange(60), 2)
    return pd.DataFrame({"pred": [f"p{t}" for t in truth], "ref": [f"t{t}" for t in truth],
                         "pred__baseline": [f"p{t}" for t in truth],
                         "grp": ["even" if t % 2 == 0 else "odd" for t in truth]})


def test_the_page_names_the_method_and_the_zero_event_bound_of_a_gap(context):
    df = _error_free_groups()
    res = validate_frame(context, df, [ExpectSubgroupDisparityToBeBelow(
        prediction_column="pred", reference_column="ref", group_column="grp", metric="pairwise_recall",
        weights="uniform", max_disparity=0.05, min_draws=2, ci_method="recommended", n_boot=200, seed=2)],
        "zero_gap")
    (r,) = res.results
    d = r.result["details"]
    q30 = 1 - 0.025 ** (1 / 30)
    for g in d["groups"]:
        assert g["disparity"] == 0.0 and g["zero_event"]
        assert (g["disparity_ci_lower"], g["disparity_ci_upper"]) == pytest.approx((-q30, q30), rel=1e-9)
    assert "zero-event bound" in d["observed_text"] or "number of draws" in d["observed_text"]
    assert "no error" in d["zero_event_note"]
    assert d["requested_ci_method"] == "recommended" and d["n_boot"] == 200 and d["seed"] == 2
    html = _rendered(r)
    assert "Gap 95 % CI" in html and "zero-event bound" in html and "Gap intervals:" in html
    # the gap is never shown as a point: no "0.000 to 0.000" interval, no "0.000 ± 0.000"
    assert "0.000 to 0.000" not in html
    assert "0.000 ± 0.000" not in html
    assert "± 0.000" not in d["observed_text"]
    assert "SE 0: no error drawn on a side" in html


def test_the_page_names_the_no_change_bound_of_an_unchanged_release(context):
    df = _error_free_groups()
    df["pred__baseline__label"] = "r0"
    res = validate_frame(context, df, [ExpectEstimateChangeToBeBelow(
        prediction_column="pred", reference_column="ref", metric="pairwise_recall", max_change=0.05,
        weights="uniform", ci_method="bca", n_boot=200)], "no_change")
    (r,) = res.results
    d = r.result["details"]
    assert d["change"] == 0.0 and d["zero_event"] and d["ci_upper"] > 0 > d["ci_lower"]
    assert "no drawn cluster changes" in d["note"]
    assert "bound from the number of draws without an error or a change" in d["observed_text"]
    assert d["requested_ci_method"] == "bca" and d["seed"] == 0


def _rendered(result) -> str:
    from er_expectations.gx.expectations import ExpectSubgroupDisparityToBeBelow as E

    blocks = E._diagnostic_unexpected_table_renderer(result=result) or []
    return " ".join(str(b.to_json_dict()) for b in blocks)
