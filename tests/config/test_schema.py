"""One declaration of the expectation parameters: the GX models, read by the YAML loader.

The YAML registry is derived from the pydantic fields of the GX expectation classes; these
tests pin that the two cannot drift (same parameter names, every parameter loads and
builds) and that a suite file and the equivalent GX constructor refuse the same values.
"""

from __future__ import annotations

import math
import tempfile
import textwrap
from pathlib import Path

import pytest
from great_expectations.compatibility import pydantic
from great_expectations.expectations.registry import get_expectation_impl
from hypothesis import given, settings
from hypothesis import strategies as st

import er_expectations.gx  # noqa: F401  (registers the expectations)
from er_expectations.config import COMMON_PARAMS, ConfigError, default_registry, load_suite
from er_expectations.gx.expectations import (
    ExpectAverageClusterSizeToBeBetween,
    ExpectEstimatedPairwiseRecallToBeBetween,
    ExpectMatchingRateToBeBetween,
)
from er_expectations.gx.expectations.params import field_arms, number_type
from er_expectations.run.suites import suite_from_config

REGISTRY = default_registry()
COMMON = {param.name for param in COMMON_PARAMS}


def yaml_value(value: object) -> str:
    """A Python value as YAML flow text."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return ".nan"
        if math.isinf(value):
            return ".inf" if value > 0 else "-.inf"
        return repr(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {yaml_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, str):
        return '"' + value + '"'
    return str(value)


def suite_text(entries: list[tuple[str, dict[str, object]]]) -> str:
    lines = ["suite: s", "expectations:"]
    for name, kwargs in entries:
        lines.append(f"  - expectation: {name}")
        lines.extend(f"    {key}: {yaml_value(value)}" for key, value in kwargs.items())
    return "\n".join(lines) + "\n"


def yaml_issues(name: str, kwargs: dict[str, object]) -> list[str]:
    """The messages of the suite with this one expectation (empty: it loads)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "suite.yml"
        path.write_text(suite_text([(name, kwargs)]), encoding="utf-8")
        try:
            load_suite(path)
        except ConfigError as error:
            return [str(issue) for issue in error.issues]
    return []


def gx_error(name: str, kwargs: dict[str, object]) -> str | None:
    """The message of the GX constructor with these kwargs (``None``: it builds)."""
    try:
        get_expectation_impl(name)(**kwargs)
    except (pydantic.ValidationError, ValueError) as error:
        return str(error)
    return None


# -- the two lists of parameters are one --------------------------------------------------


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_yaml_parameters_are_exactly_the_gx_fields(name):
    spec = REGISTRY[name]
    model = get_expectation_impl(name)
    assert spec.model is model
    fields = model.parameter_fields()
    assert {param.name for param in spec.params} == set(fields)
    assert {param.name for param in spec.all_params()} - set(fields) == COMMON  # note, severity
    assert not COMMON & set(fields)
    for param in spec.params:
        field = fields[param.name]
        assert param.required == field.required
        assert param.doc and param.doc == field.field_info.description, param.name
        if not field.required:
            assert param.default == field.default


DISPARITY = "expect_subgroup_disparity_to_be_below"
SLICES = "expect_no_error_slice_above"
#: Parameters left out of the all-parameters suite because another one excludes them.
_EXCLUSIVE = {DISPARITY: {"group_column"},  # surname_column is given instead
              SLICES: {"max_rate"}}  # max_lift is given instead


def _field(name: str, param: str):
    return get_expectation_impl(name).parameter_fields()[param]


def _valid(name: str, param) -> object:
    """A value every expectation accepts for this parameter, by the type of its field."""
    special = {"min_value": 0.1, "max_value": 0.9, "q": 2.0, "seed": 7, "statistic": "homonymy_rate",
               "weights": {"column": "w"}, "max_change": 0.05, "min_similarity": 0.7, "mostly": 0.8,
               "groups": {"api": ["api"], "other": ["white", "black"]},
               "max_disparity": 0.05, "ethnicity_year": 2000, "metric": "b_cubed_f",
               "known_tags": ["col_tag", "twins"], "max_rate": 0.05, "max_lift": 1.5}
    if name == SLICES and param.name == "metric":
        return "UCE"  # a cluster-wise error metric (SPEC 4)
    if param.name in special:
        return special[param.name]
    if param.choices:
        return param.choices[-1]
    arms = field_arms(_field(name, param.name))
    if arms == (str,):
        return f"col_{param.name}"
    if arms == (bool,):
        return False
    if arms == (list[str],):
        return [f"col_{param.name}"]
    if param.default is not None:
        return param.default
    raise AssertionError(f"no valid value for {param.name} ({arms})")


def _skipped(name: str) -> set[str]:
    """Parameters left out of the all-parameters suite: one of each exclusive pair."""
    # exactly one threshold for a statistic change: the relative one is left out, as nobody wrote it
    # bound is the older name of decision (estimates): the suite gives decision
    return (set(_EXCLUSIVE.get(name, ())) | ({"max_relative_change"} if name == STAT_CHANGE else set())
            | ({"bound"} if name.startswith("expect_estimated_") else set()))


def _all_valid(name: str, spec) -> dict[str, object]:
    return {param.name: _valid(name, param) for param in spec.params if param.name not in _skipped(name)}


def test_every_gx_parameter_loads_from_yaml_and_builds_the_gx_expectation(tmp_path):
    entries = [(name, _all_valid(name, spec)) for name, spec in sorted(REGISTRY.items())]
    path = tmp_path / "all.yml"
    path.write_text(suite_text(entries), encoding="utf-8")
    suite = load_suite(path)
    for (name, written), cfg in zip(entries, suite.expectations, strict=True):
        assert cfg.name == name
        assert cfg.kwargs == written  # every parameter reached the kwargs, as written
        skipped = _skipped(name)
        assert set(cfg.kwargs) == set(get_expectation_impl(name).parameter_fields()) - skipped
    gx_suite = suite_from_config(suite)
    assert [exp.expectation_type for exp in gx_suite.expectations] == [name for name, _ in entries]


# -- a suite and the GX constructor refuse the same values --------------------------------

PRECISION = "expect_estimated_pairwise_precision_to_be_between"
F_SCORE = "expect_estimated_pairwise_f_to_be_between"
BENCHMARK = "expect_statistic_to_match_benchmark_estimate"
HILL = "expect_hill_number_to_be_between"
RESEMBLE = "expect_labels_added_records_to_resemble_sampled_record"
LABELS_RULE_1 = "expect_labels_removed_within_predicted_cluster"


STAT_CHANGE = "expect_statistic_change_to_be_below"
#: A kwarg value meaning "leave this parameter out" (of the base kwargs).
DROP = object()
EST_CHANGE = "expect_estimate_change_to_be_below"
AGREEMENT = "expect_release_agreement_to_be_between"
CONTROL = "expect_statistic_within_control_limits"


def _base(name: str) -> dict[str, object]:
    base: dict[str, object] = {"prediction_column": "p"}
    if "estimated" in name or name in (BENCHMARK, EST_CHANGE):
        base["reference_column"] = "r"
    if name == STAT_CHANGE:
        base.update({"statistic": "average_cluster_size", "max_change": 1.0})
    if name == CONTROL:
        base["statistic"] = "average_cluster_size"
    if name in (EST_CHANGE, AGREEMENT):
        base["metric"] = "pairwise_recall"
    if name == EST_CHANGE:
        base["max_change"] = 0.05
    if name in ("expect_homonymy_rate_to_be_between", "expect_name_variation_rate_to_be_between"):
        base["name_column"] = "n"
    if name == DISPARITY:
        base.update({"reference_column": "r", "group_column": "g", "max_disparity": 0.05})
    if name == SLICES:
        base.update({"reference_column": "r", "max_lift": 2.0})
    if name.startswith("expect_labels_"):
        base["record_id_column"] = "id"
    if name == "expect_error_cause_rate_to_be_below":  # SPEC 12.1
        base.update({"reference_column": "r", "tags_column": "t", "tag": "typo", "max_rate": 0.05})
    if name == RESEMBLE:
        base["block_column"] = "b"
    return base


BAD = [
    ("expect_matching_rate_to_be_between", {"min_value": 1.5}, "min_value: must be <= 1, got 1.5"),
    ("expect_homonymy_rate_to_be_between", {"max_value": 85}, "max_value: must be <= 1, got 85"),
    ("expect_name_variation_rate_to_be_between", {"max_value": math.inf}, "max_value: must be <= 1, got inf"),
    ("expect_average_cluster_size_to_be_between", {"min_value": -1}, "min_value: must be >= 0, got -1"),
    (HILL, {"q": -1, "min_value": 1}, "q: must be >= 0, got -1"),
    (HILL, {"min_value": 1}, "q"),
    (F_SCORE, {"min_value": 0.5, "beta": 0}, "beta: must be > 0, got 0"),
    (F_SCORE, {"min_value": 0.5, "beta": math.inf}, "beta"),
    (PRECISION, {"min_value": 0.5, "ci_level": 1.0}, "ci_level: must be strictly between 0 and 1, got 1"),
    (PRECISION, {"min_value": 0.5, "ci_level": 0}, "ci_level: must be strictly between 0 and 1, got 0"),
    (PRECISION, {"min_value": 0.5, "n_boot": 99}, "n_boot: must be >= 100, got 99"),
    (PRECISION, {"min_value": 0.5, "n_boot": 2000.0}, "n_boot"),
    (PRECISION, {"min_value": 0.5, "n_boot": True}, "n_boot"),
    (PRECISION, {"min_value": 0.5, "seed": -1}, "seed: must be >= 0, got -1"),
    (PRECISION, {"min_value": 0.5, "bound": "intervall"}, "bound"),
    (PRECISION, {"min_value": 0.5, "ci_method": "boot"}, "ci_method"),
    (PRECISION, {"min_value": 0.9, "max_value": 0.5}, "min_value (0.9) is greater than max_value (0.5)"),
    (PRECISION, {"min_value": 0.5, "max_value": 0.5, "strict_min": True},
     "min_value = max_value = 0.5 with strict_min: no value can pass"),
    (PRECISION, {}, f"{PRECISION} needs at least one of 'min_value' or 'max_value'"),
    (PRECISION, {"min_value": True}, "min_value"),
    (PRECISION, {"min_value": math.nan}, "min_value"),
    (PRECISION, {"min_value": 0.5, "prediction_column": ""}, "prediction_column"),
    (PRECISION, {"min_value": 0.5, "weights": {"col": "w"}}, "weights"),
    (BENCHMARK, {"statistic": "homonymy_rate"}, "'name_column' is required when statistic is 'homonymy_rate'"),
    (BENCHMARK, {"statistic": "precision"}, "statistic"),
    (STAT_CHANGE, {"max_relative_change": 0.1}, "give exactly one of 'max_change' (absolute) or "
                                                "'max_relative_change' (relative), not both"),
    (STAT_CHANGE, {"max_change": DROP}, "give exactly one of 'max_change'"),
    (STAT_CHANGE, {"max_change": -0.5}, "max_change: must be >= 0, got -0.5"),
    (STAT_CHANGE, {"statistic": "hill_number"}, "statistic 'hill_number' needs its order q"),
    (STAT_CHANGE, {"statistic": "n_records"}, "statistic"),
    (STAT_CHANGE, {"diff_examples": 101}, "diff_examples: must be <= 100, got 101"),
    (EST_CHANGE, {"max_change": 0}, "max_change: must be > 0, got 0"),
    (EST_CHANGE, {"max_change": 5}, "max_change: must be <= 1, got 5"),
    (EST_CHANGE, {"metric": "average_cluster_size"}, "metric"),
    (AGREEMENT, {"min_value": 1.5}, "min_value: must be <= 1, got 1.5"),
    (AGREEMENT, {}, f"{AGREEMENT} needs at least one of 'min_value' or 'max_value'"),
    (CONTROL, {"k": 0}, "k: must be > 0, got 0"),
    (CONTROL, {"window": 1}, "window: must be >= 2, got 1"),
    (CONTROL, {"window": 4, "min_history": 5}, "min_history (5) is larger than window (4)"),
    (CONTROL, {"statistic": "hill_number"}, "statistic 'hill_number' needs its order q"),
    (DISPARITY, {"max_disparity": 1.5}, "max_disparity: must be <= 1, got 1.5"),
    (DISPARITY, {"min_draws": 1}, "min_draws: must be >= 2, got 1"),
    (DISPARITY, {"metric": "cluster_f"}, "metric: cluster_f has no subgroup form"),
    (DISPARITY, {"metric": "pairwise_fscore"}, "metric: unknown metric id"),
    (DISPARITY, {"ethnicity_year": 1990}, "ethnicity_year: no Census surname table for 1990"),
    (DISPARITY, {"compare_to": "others"}, "compare_to"),
    (DISPARITY, {"groups": {"x": ["a"], "y": ["a"]}}, "groups: the groups overlap"),
    (DISPARITY, {"surname_column": "s"}, "give exactly one of surname_column"),
    (DISPARITY, {"membership": "soft"}, "membership: soft needs membership probabilities"),
    (RESEMBLE, {"mostly": 1.5}, "mostly: must be <= 1, got 1.5"),
    (RESEMBLE, {"mostly": -0.1}, "mostly: must be >= 0, got -0.1"),
    (RESEMBLE, {"min_similarity": 80}, "min_similarity: must be <= 1, got 80"),
    (RESEMBLE, {"scorer": "levenshtein"}, "scorer"),
    (RESEMBLE, {"block_column": ""}, "block_column"),
]


@pytest.mark.parametrize(("name", "kwargs", "words"), BAD)
def test_a_suite_and_the_gx_constructor_refuse_the_same_values(name, kwargs, words):
    given_kwargs = {k: v for k, v in {**_base(name), **kwargs}.items() if v is not DROP}
    issues = yaml_issues(name, given_kwargs)
    error = gx_error(name, given_kwargs)
    assert len(issues) == 1, issues
    assert error is not None
    assert words in issues[0]
    # the parameter (or the rule) is named by both
    assert words.split(":")[0].split(" ")[0].strip("'") in error


GOOD = [
    ("expect_matching_rate_to_be_between", {"min_value": 1}),
    ("expect_matching_rate_to_be_between", {"min_value": 0, "max_value": 1}),
    ("expect_average_cluster_size_to_be_between", {"min_value": 1.5, "max_value": math.inf}),
    (HILL, {"q": math.inf, "min_value": 1}),
    (HILL, {"q": 0, "max_value": 1e6}),
    (F_SCORE, {"max_value": 0.5, "beta": 0.01}),
    (PRECISION, {"min_value": 0.5, "max_value": 0.5}),
    (PRECISION, {"min_value": 0.5, "ci_level": 0.5, "n_boot": 100, "seed": 0, "ci_method": "bootstrap"}),
    (BENCHMARK, {"statistic": "homonymy_rate", "name_column": "n"}),
    (BENCHMARK, {"statistic": "matching_rate"}),
    (STAT_CHANGE, {"max_change": DROP, "max_relative_change": 0.15, "baseline": "2020-06-30"}),
    (STAT_CHANGE, {"statistic": "hill_number", "q": math.inf}),
    (STAT_CHANGE, {"statistic": "name_variation_rate", "name_column": "n", "baseline_column": "b"}),
    (EST_CHANGE, {"max_change": 1, "ci_level": 0.9, "beta": 2.0}),
    (AGREEMENT, {"metric": "cluster_f", "min_value": 0.5, "beta": 0.5}),
    (CONTROL, {"k": 2.5, "window": 5, "min_history": 5, "baseline_release": "2020-06-30"}),
    (CONTROL, {"statistic": "n_records", "exclude_failed": False}),
    (DISPARITY, {"groups": {"x": ["a", "b"], "y": "c"}, "require_significance": True, "compare_to": "all"}),
    (DISPARITY, {"group_column": DROP, "surname_column": "s", "first_name_column": "f", "membership": "soft",
                 "groups": {"api": ["api"]}}),
    (RESEMBLE, {"mostly": 0, "min_similarity": 1, "scorer": "jaro_winkler"}),
    (RESEMBLE, {"block_column": None, "name_column": "n"}),
    (LABELS_RULE_1, {"true_cluster_column": "t", "predicted_cluster_column": "pc"}),
]


@pytest.mark.parametrize(("name", "kwargs"), GOOD)
def test_a_suite_and_the_gx_constructor_accept_the_same_values(name, kwargs):
    given_kwargs = {k: v for k, v in {**_base(name), **kwargs}.items() if v is not DROP}
    assert yaml_issues(name, given_kwargs) == []
    assert gx_error(name, given_kwargs) is None


_NUMERIC = sorted(
    (name, param.name)
    for name, spec in REGISTRY.items()
    for param in spec.params
    if number_type(_field(name, param.name)) is not None
)
_NUMBERS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, width=32),
    st.integers(min_value=-(10**6), max_value=10**6),
    st.booleans(),
    st.sampled_from([0, 1, 0.5, 1.0, 100, 99, -0.0, 1e-9, 2000.0]),
    # text: refused as a number by both, except the spellings of infinity where a field allows it
    st.sampled_from(["0.5", "2", "inf", "Infinity", "-inf", "high", "", "85%"]),
)


@settings(max_examples=300, deadline=None)
@given(target=st.sampled_from(_NUMERIC), value=_NUMBERS)
def test_any_number_is_refused_by_both_or_by_neither(target, value):
    """For every numeric parameter of every expectation, a suite file loads exactly when the
    GX constructor builds (bounds, integers, infinity, booleans and NaN alike)."""
    name, param = target
    kwargs = _base(name)
    if name == HILL and param != "q":
        kwargs["q"] = 2
    if name == BENCHMARK:
        kwargs["statistic"] = "matching_rate"
    elif param not in ("min_value", "max_value") and REGISTRY[name].param("min_value") is not None:
        kwargs["min_value"] = 0.0  # the at-least-one-bound rule holds
    if name == STAT_CHANGE and param == "max_relative_change":
        kwargs.pop("max_change")  # one threshold at a time
    if name == SLICES and param == "max_rate":
        kwargs.pop("max_lift")  # one limit at a time
    if name in (STAT_CHANGE, CONTROL) and param == "q":
        kwargs["statistic"] = "hill_number"
    if name == CONTROL and param in ("window", "min_history"):  # the other one out: min_history <= window
        kwargs.pop("min_history" if param == "window" else "window", None)
        kwargs["window" if param == "min_history" else "min_history"] = 2 if param == "window" else 1000
    kwargs[param] = value
    issues = yaml_issues(name, kwargs)
    error = gx_error(name, kwargs)
    assert (issues == []) == (error is None), (issues, error)
    if issues:
        assert len(issues) == 1 and f"{param}:" in issues[0] and param in error


# -- GX-native users get the checks that were YAML-only ----------------------------------


def test_rate_bounds_are_checked_by_the_gx_models():
    with pytest.raises(pydantic.ValidationError) as caught:
        ExpectMatchingRateToBeBetween(prediction_column="p", min_value=85)
    text = str(caught.value)
    assert "must be <= 1, got 85" in text and "write 0.85" in text
    with pytest.raises(pydantic.ValidationError, match="must be <= 1, got 1.2"):
        ExpectEstimatedPairwiseRecallToBeBetween(prediction_column="p", reference_column="r", max_value=1.2)
    with pytest.raises(pydantic.ValidationError, match="must be >= 0, got -1"):
        ExpectAverageClusterSizeToBeBetween(prediction_column="p", min_value=-1)
    # suite parameters are compared once GX fills them in
    ExpectMatchingRateToBeBetween(prediction_column="p", min_value={"$PARAMETER": "lo"})


def test_a_rule_error_names_the_parameter_and_the_fix():
    with pytest.raises(pydantic.ValidationError) as caught:
        ExpectEstimatedPairwiseRecallToBeBetween(prediction_column="p", reference_column="r", min_value=0.9,
                                                 max_value=0.5)
    assert "min_value (0.9) is greater than max_value (0.5); min_value must not exceed max_value" in str(
        caught.value
    )


def test_rule_5_without_a_block_or_a_name_is_refused_by_both():
    kwargs = {"prediction_column": "p", "record_id_column": "id"}
    issues = yaml_issues(RESEMBLE, kwargs)
    error = gx_error(RESEMBLE, kwargs)
    assert len(issues) == 1 and "needs block_column, name_column or both" in issues[0]
    assert error is not None and "needs block_column, name_column or both" in error


def test_suite_errors_point_at_the_parameter_line(tmp_path):
    path = tmp_path / "s.yml"
    path.write_text(textwrap.dedent("""
        suite: s
        defaults:
          prediction_column: p
          reference_column: r
          ci_level: 1.5
        expectations:
          - expectation: expect_estimated_pairwise_recall_to_be_between
            min_value: 0.9
            max_value: 0.5
          - expectation: expect_statistic_to_match_benchmark_estimate
            statistic: homonymy_rate
          - expectation: expect_matching_rate_to_be_between
            strict_max: true
            max_value: 0
            min_value: 0
    """).lstrip("\n"), encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_suite(path)
    found = [(issue.line, issue.column, issue.message) for issue in caught.value.issues]
    assert found == [
        (5, 13, "ci_level: must be strictly between 0 and 1, got 1.5"),  # once, where it is written
        (8, 16, "min_value (0.9) is greater than max_value (0.5)"),
        (11, 16, "'name_column' is required when statistic is 'homonymy_rate'"),
        (13, 17, "min_value = max_value = 0 with strict_max: no value can pass"),
    ]
    assert caught.value.issues[0].hint == "write it as a fraction, e.g. 0.015 for 1.5 %"


def test_every_column_parameter_is_marked_as_one():
    """The runner checks the columns the models mark (``column=`` in the field); a new parameter
    that names a column but is not marked would escape that check. Only the baseline column is
    not an input column: the runner adds it to the batch."""
    from er_expectations.gx.expectations import COLUMN_PARAMETERS, RECORD_COLUMN_PARAMETERS

    named = {param.name for spec in REGISTRY.values() for param in spec.params
             if param.name.endswith(("_column", "_columns")) or param.name == "weights"}
    assert set(COLUMN_PARAMETERS) == named - {"baseline_column"}
    assert set(RECORD_COLUMN_PARAMETERS) == {"surname_column", "first_name_column", "group_column",
                                             "feature_columns"}
