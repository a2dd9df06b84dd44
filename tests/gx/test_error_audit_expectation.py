"""``expect_error_cause_rate_to_be_below`` (SPEC 12.1, 13; issue 20): the GX check agrees with
``erx.error_audit``, decides by the rule asked, skips an undefined share, refuses bad parameters,
and its page shows the rates, the chart and the examples with every tag escaped."""

from __future__ import annotations

import pandas as pd
import pytest
from support.gxtools import validate_frame

import er_expectations as erx
import er_expectations.gx  # noqa: F401  (registers the expectations)
from er_expectations.analysis.error_audit import encode_tags, parse_tags
from er_expectations.gx.expectations import ExpectErrorCauseRateToBeBelow

HOSTILE = '<img src=x onerror=alert(1)>"=HYPERLINK("http://x")'


def frame():
    rows = []
    # 40 true clusters of 2 records; clusters 0-9 split (error), 10-13 merged in pairs (error)
    for c in range(40):
        for j in range(2):
            pred = f"p{c}-{j}" if c < 10 else (f"m{c // 2}" if c < 14 else f"p{c}")
            rows.append({"rid": 2 * c + j, "pred": pred, "ref": f"t{c}"})
    df = pd.DataFrame(rows)
    tags = pd.DataFrame({"cluster": [f"t{c}" for c in range(8)] + ["t10", "t11"],
                         "kind": ["under"] * 8 + ["over", "over"],
                         "tag": ["name typo"] * 6 + [HOSTILE] * 2 + ["twins", "twins"]})
    parsed = parse_tags(tags, benchmark_ids=df["ref"])
    return df.assign(tags=encode_tags(parsed, df, "ref")), tags


def check(**kw):
    base = {"prediction_column": "pred", "reference_column": "ref", "tags_column": "tags", "tag": "name typo",
            "max_rate": 0.2, "weights": "uniform", "record_id_column": "rid"}
    return ExpectErrorCauseRateToBeBelow(**{**base, **kw})


def test_agrees_with_the_api_and_decides(context):
    df, tags = frame()
    api = erx.error_audit(df, prediction="pred", reference="ref", tags=tags, weights="uniform")
    res = validate_frame(context, df, [check(), check(max_rate=0.1, decision="estimate"),
                                       check(share="erroneous", max_rate=0.5),
                                       check(max_rate=0.16, decision="interval"),
                                       check(tag="untagged errors", share="entities", max_rate=0.2),
                                       check(max_rate=0.1)], "audit1")
    r = [x.result for x in res.results]
    want = api.rate("name typo", "records")
    assert r[0]["observed_value"] == pytest.approx(want.estimate) == pytest.approx(6 / 40)
    assert r[0]["details"]["ci_upper"] == pytest.approx(want.ci_upper)
    assert [x.success for x in res.results] == [True, False, True, False, True, True]
    # the default rule (significant): 0.15 is above 0.1, but its interval reaches back inside
    assert r[0]["details"]["ci_lower"] < 0.1 and "not confidently beyond" in r[5]["details"]["verdict"]
    assert r[2]["observed_value"] == pytest.approx(6 / 14)
    assert "confidently within" in r[3]["details"]["verdict"]
    assert r[4]["observed_value"] == pytest.approx(4 / 40)  # t8, t9, t12, t13 are errors without a tag
    tags_shown = [row["tag"] for row in r[0]["details"]["rates"]]
    assert tags_shown == ["name typo", HOSTILE, "twins", "untagged errors"]


def test_skips_an_undefined_share_and_an_unused_tag(context):
    df, _ = frame()
    right = df.assign(pred=df["ref"])  # no error anywhere: the erroneous share is undefined
    res = validate_frame(context, right, [check(share="erroneous"), check(tag="merge", on_skip="fail")], "audit2")
    a, b = res.results
    assert a.success and a.result["details"]["skipped"] and "undefined" in a.result["details"]["skip_reason"]
    assert not b.success and "known_tags" in b.result["details"]["skip_reason"]


def test_bad_parameters():
    with pytest.raises(Exception, match="max_rate"):
        check(max_rate=1.5)
    with pytest.raises(Exception, match="share"):
        check(share="all")
    with pytest.raises(Exception, match="not in known_tags"):
        check(known_tags=["twins"], tag="name typos")


def test_page_escapes_tags_and_shows_chart(context, tmp_path):
    df, _ = frame()
    res = validate_frame(context, df, [check(tag=HOSTILE, max_rate=0.01)], "audit3")
    cls = ExpectErrorCauseRateToBeBelow
    blocks = cls._diagnostic_unexpected_table_renderer(result=res.results[0])
    text = str([b.to_json_dict() for b in blocks])
    assert "Example clusters per tag" in text and "data:image/svg+xml" in text
    specs = cls.chart_specs(res.results[0])
    assert specs and specs[0]["data"]["values"][1]["tag"] == HOSTILE


def test_many_tags_make_a_small_page(context):
    """Hostile round 3 (issue 29 item 9): 20,000 distinct tags made a 32 MB page per release. The
    page shows the checked tag, the untagged errors and the largest others, at most
    MAX_TAGS_SHOWN rows, and says how many tags it leaves out and the largest share among them.
    (600 tags here: the audit's own cost grows with tags × clusters, so 20,000 take minutes.)"""
    from er_expectations.gx.expectations.error_audit import MAX_TAGS_SHOWN

    n = 600
    c = [f"t{i}" for i in range(n + 40)]
    df = pd.DataFrame({"rid": range(2 * len(c)), "ref": [x for x in c for _ in (0, 1)],
                       "pred": [f"{x}-{j}" for x in c for j in (0, 1)]})  # every entity split: all errors
    # tag i on entity i; "big" on 40 more entities, so it has the largest share
    tags = pd.DataFrame({"cluster": c, "kind": "under", "tag": [f"cause {i}" for i in range(n)] + ["big"] * 40})
    df = df.assign(tags=encode_tags(parse_tags(tags, benchmark_ids=df["ref"]), df, "ref"))
    res = validate_frame(context, df, [check(tag="cause 17", max_rate=0.5)], "audit_many")
    details = res.results[0].result["details"]
    shown = [r["tag"] for r in details["rates"]]
    assert len(shown) == MAX_TAGS_SHOWN
    assert shown[0] == "big" and "cause 17" in shown and shown[-1] == "untagged errors"
    assert details["tags_not_shown"] == n + 1 + 1 - MAX_TAGS_SHOWN  # n causes + big + untagged
    assert details["largest_not_shown"] == pytest.approx(1 / (n + 40))
    assert details["tags_total"] == n + 1
    cls = ExpectErrorCauseRateToBeBelow
    blocks = cls._diagnostic_unexpected_table_renderer(result=res.results[0])
    text = str([b.to_json_dict() for b in blocks])
    assert len(text) < 100_000, len(text)  # what 25 tags give (77 kB, most of it the chart)
    assert f"{n + 2 - MAX_TAGS_SHOWN:,} more tags not shown" in text
    assert f"each at most {1 / (n + 40):.3f}" in text
    assert len(repr(res.results[0].to_json_dict())) < 60_000
    specs = cls.chart_specs(res.results[0])
    assert len(specs[0]["data"]["values"]) == MAX_TAGS_SHOWN
