"""``expect_subgroup_disparity_to_be_below`` in GX: verdicts, parameters, Data Docs (SPEC 8)."""

from __future__ import annotations

import base64
import logging
import re
from xml.etree import ElementTree

import great_expectations as gx
import numpy as np
import pandas as pd
import pytest
from great_expectations.checkpoint import UpdateDataDocsAction
from great_expectations.compatibility import pydantic
from great_expectations.core.run_identifier import RunIdentifier
from great_expectations.data_context.types.base import ProgressBarsConfig
from support.gxtools import validate_frame

import er_expectations as erx
import er_expectations.gx  # noqa: F401
from er_expectations.gx.actions import OfflineDataDocsAction
from er_expectations.gx.docs.data_docs import image_block, local_site_dir
from er_expectations.gx.expectations import ExpectSubgroupDisparityToBeBelow


def _frame(seed: int = 0, n_clusters: int = 300, gap: float = 0.25, groups=("a", "b"),
           names=None) -> pd.DataFrame:
    """True clusters of 2–6 records; clusters of the first group are split far more often."""
    rng = np.random.default_rng(seed)
    names = names or list(groups)
    rows = []
    for c in range(n_clusters):
        g = names[c % len(names)]
        s = int(rng.integers(2, 7))
        split = rng.random() < (0.05 + (gap if g == names[0] else 0.0))
        for r in range(s):
            pred = f"p{c}_{int(split and r >= s // 2)}"
            rows.append({"rec": f"r{c}_{r}", "pred": pred, "ref": f"t{c}", "grp": g})
    return pd.DataFrame(rows)


def _exp(**kw) -> ExpectSubgroupDisparityToBeBelow:
    base = {"prediction_column": "pred", "reference_column": "ref", "group_column": "grp", "max_disparity": 0.05,
            "metric": "pairwise_recall"}
    return ExpectSubgroupDisparityToBeBelow(**{**base, **kw})


def _result(context, df, exp, name):
    (res,) = validate_frame(context, df, [exp], name).results
    assert not res.exception_info.get("raised_exception"), res.exception_info
    return res


def test_a_large_gap_fails_and_the_numbers_are_those_of_estimate_by_group(context):
    df = _frame(1)
    res = _result(context, df, _exp(), "gap")
    assert res.success is False
    details = res.result["details"]
    want = erx.estimate_by_group(df, prediction="pred", reference="ref", group_column="grp", metrics=["pairwise_recall"])
    for g in details["groups"]:
        row = want.loc[(g["group"], "pairwise_recall")]
        assert g["estimate"] == pytest.approx(row["estimate"])
        assert g["disparity"] == pytest.approx(row["disparity"])
        assert g["disparity_se"] == pytest.approx(row["disparity_se"])
        assert g["p_adjusted"] == pytest.approx(row["p_adjusted"])
    assert set(details["failed_groups"]) == {"a", "b"}  # with two groups, each is the other's rest
    assert details["observed_text"].startswith(("-0.", "0.", "−0."))


def test_no_gap_passes_and_significance_can_be_required(context):
    df = _frame(2, gap=0.0)
    assert _result(context, df, _exp(max_disparity=0.2), "nogap").success is True
    # a small gap above a tiny threshold fails (on its point estimate) only while significance is not required
    loose = _result(context, df, _exp(max_disparity=0.0, decision="estimate"), "tiny")
    strict = _result(context, df, _exp(max_disparity=0.0, decision="estimate", require_significance=True), "tiny_sig")
    assert loose.success is False
    ps = [g["p_adjusted"] for g in strict.result["details"]["groups"]]
    assert strict.success is all(p >= 0.05 for p in ps)


def test_too_small_groups_are_reported_and_neither_pass_nor_fail(context):
    df = _frame(3, n_clusters=40, gap=0.5, names=["a", "b", "c", "d"])
    res = _result(context, df, _exp(min_draws=30), "small")
    details = res.result["details"]
    assert all(g["status"] == "too small" for g in details["groups"])
    assert res.success is True and details["failed_groups"] == []
    assert "no group tested" in details["observed_text"]


@pytest.mark.parametrize("kwargs, words", [
    ({"surname_column": "s"}, "exactly one of surname_column"),
    ({"group_column": None}, "exactly one of surname_column"),
    ({"first_name_column": "f"}, "first_name_column"),
    ({"membership": "soft"}, "membership: soft"),
    ({"metric": "cluster_precision"}, "no subgroup form"),
    ({"metric": "cluster_f"}, "no subgroup form"),
    ({"max_disparity": -0.1}, "max_disparity"),
    ({"max_disparity": 5}, "max_disparity"),
    ({"min_draws": 1}, "min_draws"),
    ({"groups": {"x": ["a"], "y": ["a"]}}, "overlap"),
    ({"compare_to": "others"}, "compare_to"),
    ({"ethnicity_year": 1990}, "ethnicity_year"),
    ({"group_column": None, "surname_column": "s", "groups": {"asian": ["apii"]}},
     "'apii' is not a Census category"),
])
def test_bad_parameters_are_refused_with_the_reason(kwargs, words):
    with pytest.raises(pydantic.ValidationError) as info:
        _exp(**kwargs)
    assert words in str(info.value)


def test_image_block_takes_only_svg_data_uris():
    with pytest.raises(ValueError):
        image_block("javascript:alert(1)", alt="x")
    with pytest.raises(ValueError):
        image_block('data:image/svg+xml;base64,AAAA" onerror="alert(1)', alt="x")
    image_block("data:image/svg+xml;base64,PHN2Zz4=", alt="<b>")


HOSTILE_GROUPS = ['<script>alert(1)</script>', '"><img src=x onerror=alert(1)>']


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("disparity_docs")
    logging.getLogger("great_expectations").setLevel(logging.WARNING)
    ctx = gx.get_context(mode="file", project_root_dir=root)
    ctx.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    ctx.variables.save()
    batch_definition = (ctx.data_sources.add_pandas("frames").add_dataframe_asset("records")
                        .add_batch_definition_whole_dataframe("whole_frame"))
    suite = ctx.suites.add(gx.ExpectationSuite(name="disparity_suite"))
    suite.add_expectation(_exp(severity="warning"))
    vd = ctx.validation_definitions.add(gx.ValidationDefinition(name="vd", data=batch_definition, suite=suite))
    checkpoint = ctx.checkpoints.add(gx.Checkpoint(
        name="cp", validation_definitions=[vd],
        actions=[UpdateDataDocsAction(name="docs"), OfflineDataDocsAction(name="offline")]))
    df = _frame(4, names=HOSTILE_GROUPS)
    result = checkpoint.run(batch_parameters={"dataframe": df}, run_id=RunIdentifier(run_name="disparity_run"))
    (key,) = result.run_results
    page = local_site_dir(ctx).joinpath("validations", *key.to_tuple()[:-1], key.to_tuple()[-1] + ".html")
    return {"page": page.read_text(encoding="utf-8"), "df": df, "result": result}


def test_data_docs_show_the_group_table_and_a_static_chart(site):
    from support.chromium import page_problems, visible_text

    html = site["page"]
    shown = visible_text(html)
    assert "pairwise recall by group" in shown
    for header in ("Estimate ± SE", "Gap ± SE", "Draws", "Status"):
        assert header in shown
    imgs = re.findall(r'<img src="([^"]*)"', html)
    assert len(imgs) == 1 and imgs[0].startswith("data:image/svg+xml;base64,")
    svg = base64.b64decode(imgs[0].split(",", 1)[1]).decode("utf-8")
    # the hostile group names are text of the SVG, not elements or attributes (and an <img> runs no script)
    tree = ElementTree.fromstring(svg)
    for element in tree.iter():
        assert not element.tag.lower().endswith(("script", "foreignobject", "img"))
        assert not any(a.lower().startswith("on") for a in element.attrib)
    texts = "".join(tree.itertext())
    # a long name wraps onto lines of at most 28 characters (issue 18, item 6): its text is all there
    flat = "".join(texts.split())
    assert all("".join(name.split()) in flat for name in HOSTILE_GROUPS)
    assert page_problems(html) == []


def test_hostile_group_names_are_text_and_no_cluster_is_shown(site):
    from support.chromium import visible_text
    from support.datadocs import parse_fetches, remote_refs

    html = site["page"]
    assert "<script>alert(1)</script>" not in html and "<img src=x" not in html
    assert parse_fetches(html).handlers == []
    assert remote_refs(html) == ([], 0)
    shown = visible_text(html)
    for name in HOSTILE_GROUPS:
        assert name in shown  # escaped, shown as text
    # only group aggregates: no benchmark cluster id reaches the page
    clusters = set(site["df"]["ref"])
    assert not any(re.search(rf"\b{re.escape(c)}\b", shown) for c in clusters)


def test_soft_membership_from_surnames_in_gx(context):
    surnames = ["Nguyen", "Kim", "Smith", "Garcia", "Johnson", "Wang", "Zzyzxqv"]
    rows = []
    for c in range(140):
        s = surnames[c % len(surnames)]
        split = (c % 3 == 0) and s in ("Nguyen", "Kim", "Wang")
        for r in range(3):
            rows.append({"pred": f"p{c}_{int(split and r == 2)}", "ref": f"t{c}", "last": s})
    df = pd.DataFrame(rows)
    exp = _exp(group_column=None, surname_column="last", membership="soft", groups={"api": ["api"]},
               max_disparity=0.1)
    res = _result(context, df, exp, "soft_names")
    details = res.result["details"]
    want = erx.estimate_by_group(df, prediction="pred", reference="ref", surname="last", membership="soft", groups={"api": ["api"]},
                                 metrics=["pairwise_recall"])
    (g,) = details["groups"]
    assert g["disparity"] == pytest.approx(want.loc[("api", "pairwise_recall"), "disparity"])
    assert details["abstained"] == 20 and details["imputation"]["source"] == "surname"
    assert res.success is False and details["failed_groups"] == ["api"]
