"""``expect_no_error_slice_above`` in GX: verdicts against erx.find_slices, the decision rules,
skipping, parameters and the Data Docs section (SPEC 12.2, 13)."""

from __future__ import annotations

import logging
import re

import great_expectations as gx
import numpy as np
import pandas as pd
import pytest
from great_expectations.checkpoint import UpdateDataDocsAction
from great_expectations.compatibility import pydantic
from great_expectations.core.run_identifier import RunIdentifier
from great_expectations.data_context.types.base import ProgressBarsConfig
from support.enginetools import engine_params
from support.gxtools import validate, validate_frame

import er_expectations as erx
import er_expectations.gx  # noqa: F401
from er_expectations.gx.actions import OfflineDataDocsAction
from er_expectations.gx.docs.data_docs import local_site_dir
from er_expectations.gx.expectations import ExpectNoErrorSliceAbove


def _frame(seed: int, *, n_clusters: int = 2500, draws: int = 900, hot: str | None = "DE",
           countries=("US", "JP", "DE", "FR")) -> pd.DataFrame:
    """Entities of 2–8 records, one record split off when the entity has an error (50 % in
    country ``hot``, 5 % elsewhere); a size-proportional sample of ``draws`` draws."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 9, n_clusters)
    country = np.array(countries, dtype=object)[rng.integers(0, len(countries), n_clusters)]
    err = rng.random(n_clusters) < np.where(country == hot, 0.5, 0.05)
    true = np.repeat(np.arange(n_clusters), sizes)
    first = np.r_[0, np.cumsum(sizes)[:-1]]
    pred = true.copy()
    pred[first[err]] = n_clusters + np.arange(int(err.sum()))
    picked = true[rng.integers(0, true.size, draws)]
    labels, counts = np.unique(picked, return_counts=True)
    d = np.zeros(n_clusters)
    d[labels] = counts
    inb = d[true] > 0
    return pd.DataFrame({"pred": [f"p{p}" for p in pred], "ref": np.where(inb, [f"t{t}" for t in true], None),
                         "d": np.where(inb, d[true], np.nan), "country": country[true]})


def _exp(**kw) -> ExpectNoErrorSliceAbove:
    base = {"prediction_column": "pred", "reference_column": "ref", "draws_column": "d",
            "feature_columns": ["country"], "max_lift": 2.0}
    return ExpectNoErrorSliceAbove(**{**base, **kw})


def _result(context, df, exp, name):
    (res,) = validate_frame(context, df, [exp], name).results
    assert not res.exception_info.get("raised_exception"), res.exception_info
    return res


def test_a_planted_slice_fails_with_the_numbers_of_find_slices(context):
    df = _frame(1)
    res = _result(context, df, _exp(), "planted")
    assert res.success is False
    details = res.result["details"]
    want = erx.find_slices(df, prediction="pred", reference="ref", draws="d", features=["country"], max_lift=2.0, seed=0)
    assert [s["slice"] for s in details["slices"]] == want["slice"].tolist()
    top = details["slices"][0]
    assert top["slice"] == "country in {DE}" and top["flagged"]
    assert top["lift"] == pytest.approx(want.iloc[0]["lift"]) and top["p_adjusted"] == pytest.approx(
        want.iloc[0]["p_adjusted"])
    assert details["failed_slices"] == ["country in {DE}"]
    assert res.result["observed_value"] == pytest.approx(want.iloc[0]["lift"])


def test_flat_errors_pass(context):
    df = _frame(2, hot=None)
    res = _result(context, df, _exp(), "flat")
    assert res.success is True
    details = res.result["details"]
    assert not details["failed_slices"]
    # nothing significant: the page says what the search could have missed (SPEC 12.2 "Power"),
    # the very number of the same search run with a planted slice on this benchmark
    power = details["power"]
    assert power["share"] == 0.2 and power["lift"] == 3.0 and power["reps"] == 200 and power["draws"] == 900
    from er_expectations.analysis.slices import cluster_features, slice_inputs
    from er_expectations.engines.pandas.release import PandasRelease
    from er_expectations.stats.slice_power import slice_power

    sample = PandasRelease(df, prediction="pred").benchmark_sample(reference="ref", draws="d")
    feats, _ = cluster_features(df, sample, prediction="pred", reference="ref", features=["country"])
    y, g = slice_inputs(sample, "EI", "entity")
    again = slice_power(y, g, sample.draws, sample.labels, feats, null_lift=2.0, min_draws=30, alpha=0.05)
    assert power["power"] == again.power and 0 < power["power"] < 1
    assert power["sentence"].startswith("At 900 draws, a slice of 20 % of entities with 3× the error rate is found ")
    from er_expectations.gx.expectations.slices import slice_blocks

    text = " ".join(str(b.to_json_dict()) for b in slice_blocks(details))
    assert "What an empty result can miss" in text and power["sentence"][:40] in text


def test_the_decision_rules_say_different_things(context):
    """A lift of about 10 against a limit of 9: only the estimate rule can fail; a limit of 3:
    every rule fails; the interval rule fails where significance does not (limit 12)."""
    df = _frame(3)
    found = erx.find_slices(df, prediction="pred", reference="ref", draws="d", features=["country"], seed=0).iloc[0]
    lift, lo, hi = found["lift"], found["lift_ci_lower"], found["lift_ci_upper"]
    assert lo < lift < hi
    for limit in (lo * 0.5, (lift + hi) / 2):
        for rule in ("estimate", "interval", "significant"):
            res = _result(context, df, _exp(max_lift=limit, decision=rule), f"rule_{rule}_{limit:.0f}")
            flagged = res.result["details"]["slices"][0]["flagged"]
            if rule == "estimate":
                assert flagged == (lift > limit)
            elif rule == "interval":
                assert flagged == (hi > limit)
            else:
                assert flagged == (limit < lo * 0.9)  # significantly above only the low limit
    assert res.result["details"]["decision"] == "significant"


def test_max_rate(context):
    res = _result(context, _frame(1), _exp(max_lift=None, max_rate=0.2), "rate")
    assert res.success is False and "rate(slice) ≤ 0.2" in res.result["details"]["hypothesis"]
    res = _result(context, _frame(1), _exp(max_lift=None, max_rate=0.9), "rate_high")
    assert res.success is True


def test_too_few_draws_skips(context):
    res = _result(context, _frame(4, n_clusters=300, draws=80), _exp(), "small")
    details = res.result["details"]
    assert details["skipped"] is True and "at least 120" in details["skip_reason"]
    assert res.success is True  # on_skip: pass
    res = _result(context, _frame(4, n_clusters=300, draws=80), _exp(on_skip="fail"), "small_fail")
    assert res.success is False


@pytest.mark.parametrize(("kwargs", "words"), [
    ({"max_lift": None}, "exactly one of max_lift"),
    ({"max_rate": 0.1}, "both were given"),
    ({"metric": "SDE"}, "SDE is signed"),
    ({"metric": "F1"}, "metric"),
    ({"min_slice_share": 0.7}, "min_slice_share"),
    ({"max_depth": 9}, "max_depth"),
    ({"per": "person"}, "per"),
    ({"feature_columns": "country"}, "feature_columns"),
])
def test_bad_parameters_are_refused_with_the_reason(kwargs, words):
    with pytest.raises(pydantic.ValidationError) as info:
        _exp(**kwargs)
    assert words in str(info.value)


def test_unknown_feature_column_is_an_error_naming_it(context):
    (res,) = validate_frame(context, _frame(5), [_exp(feature_columns=["contry"])], "unknown").results
    (info,) = res.exception_info.values()
    assert info["raised_exception"] is True
    assert "feature_columns[0]='contry': no such column in the table. Did you mean 'country'?" in info[
        "exception_message"]


HOSTILE = '<script>alert(1)</script>'
HOSTILE_VALUES = ('"><img src=x onerror=alert(1)>', "=HYPERLINK(\"http://x\")", "FR", "US")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("slices_docs")
    logging.getLogger("great_expectations").setLevel(logging.WARNING)
    ctx = gx.get_context(mode="file", project_root_dir=root)
    ctx.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    ctx.variables.save()
    batch_definition = (ctx.data_sources.add_pandas("frames").add_dataframe_asset("records")
                        .add_batch_definition_whole_dataframe("whole_frame"))
    suite = ctx.suites.add(gx.ExpectationSuite(name="slices_suite"))
    suite.add_expectation(_exp(feature_columns=[HOSTILE]))
    vd = ctx.validation_definitions.add(gx.ValidationDefinition(name="vd", data=batch_definition, suite=suite))
    checkpoint = ctx.checkpoints.add(gx.Checkpoint(
        name="cp", validation_definitions=[vd],
        actions=[UpdateDataDocsAction(name="docs"), OfflineDataDocsAction(name="offline")]))
    df = _frame(6, hot=HOSTILE_VALUES[0], countries=HOSTILE_VALUES).rename(columns={"country": HOSTILE})
    result = checkpoint.run(batch_parameters={"dataframe": df}, run_id=RunIdentifier(run_name="slices_run"))
    (key,) = result.run_results
    page = local_site_dir(ctx).joinpath("validations", *key.to_tuple()[:-1], key.to_tuple()[-1] + ".html")
    return {"page": page.read_text(encoding="utf-8"), "df": df}


def test_data_docs_list_the_slices_in_words_escaped(site):
    from support.chromium import page_problems, visible_text
    from support.datadocs import parse_fetches, remote_refs

    html = site["page"]
    assert "<script>alert(1)</script>" not in html and "<img src=x" not in html
    assert parse_fetches(html).handlers == []
    assert remote_refs(html) == ([], 0)
    shown = visible_text(html)
    assert f'Entities with {HOSTILE} in {{{HOSTILE_VALUES[0]}}} (about' in shown
    for words in ("times the rest", "adjusted p", "Slices of high share of entities with an error",
                  "tested on the other", "Lift (95 % CI)", "Verdict"):
        assert words in shown
    # aggregates only: no benchmark cluster id reaches the page
    clusters = set(site["df"]["ref"].dropna())
    assert not any(re.search(rf"\b{re.escape(c)}\b", shown) for c in list(clusters)[:300])
    assert page_problems(html) == []


@pytest.mark.parametrize("engine", engine_params())
def test_every_engine_finds_the_same_slices(engine, tmp_path):
    """Only the benchmark's records are read (``benchmark_rows``): SQL and Spark give the
    slices, numbers and verdict of pandas."""
    df = _frame(7, n_clusters=1500, draws=600)
    df["ref"] = df["ref"].astype(object).where(df["ref"].notna(), None)
    df["d"] = df["d"].astype(object).where(df["d"].notna(), None)

    def exps() -> list:
        return [_exp(), _exp(max_lift=None, max_rate=0.3, decision="interval")]

    want = [r.result["details"] for r in validate("pandas", df, exps(), tmp_path).results]
    got = validate(engine, df, exps(), tmp_path).results
    for res, expected in zip(got, want, strict=True):
        assert not res.exception_info.get("raised_exception"), res.exception_info
        details = res.result["details"]
        assert [s["slice"] for s in details["slices"]] == [s["slice"] for s in expected["slices"]]
        assert expected["slices"] and expected["slices"][0]["slice"] == "country in {DE}"
        for a, b in zip(details["slices"], expected["slices"], strict=True):
            for key in ("rate", "share", "lift", "p_adjusted", "draws"):
                assert a[key] == pytest.approx(b[key], rel=1e-9)
        assert details["failed_slices"] == expected["failed_slices"]
