"""Tests of the YAML configuration layer (er_expectations.config)."""

from __future__ import annotations

import csv
import math
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.paths import PV_DATA, TEST_DATA

from er_expectations.config import (
    CheckpointConfig,
    ConfigError,
    ConfigIssue,
    ExpectationSpec,
    ParamSpec,
    SuiteConfig,
    check_checkpoint_references,
    default_registry,
    load_any,
    load_checkpoint,
    load_suite,
    load_suites,
    scaffold_checkpoint,
    scaffold_suite,
)
from er_expectations.config.scaffold import yaml_scalar
from er_expectations.config.yamlnodes import read_yaml

DATA = TEST_DATA / "config"
PACKAGE_DATA = PV_DATA


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def issues_of(path: Path, loader=load_suite) -> list[ConfigIssue]:
    with pytest.raises(ConfigError) as caught:
        loader(path)
    return caught.value.issues


def csv_columns(path: Path) -> list[str]:
    with path.open(newline="", encoding="utf-8") as handle:
        return next(csv.reader(handle))


SUITE_HEAD = """
suite: s
defaults:
  prediction_column: cluster
  reference_column: truth
expectations:
"""


def suite_with(tmp_path: Path, body: str) -> Path:
    """A suite whose expectations are ``body`` (indented by two spaces, first item on line 6)."""
    return write(
        tmp_path,
        "suite.yml",
        textwrap.dedent(SUITE_HEAD).lstrip("\n")
        + textwrap.indent(textwrap.dedent(body).lstrip("\n"), "  "),
    )


# -- registry ----------------------------------------------------------------------------


def test_default_registry_lists_the_public_expectations():
    registry = default_registry()
    metrics = [
        "pairwise_precision",
        "pairwise_recall",
        "pairwise_f",
        "cluster_precision",
        "cluster_recall",
        "cluster_f",
        "b_cubed_precision",
        "b_cubed_recall",
        "b_cubed_f",
        "homogeneity",
    ]
    expected = {f"expect_estimated_{metric}_to_be_between" for metric in metrics}
    expected |= {
        f"expect_{stat}_to_be_between"
        for stat in (
            "average_cluster_size",
            "matching_rate",
            "hill_number",
            "homonymy_rate",
            "name_variation_rate",
        )
    }
    expected.add("expect_statistic_to_match_benchmark_estimate")
    drift = {"expect_statistic_change_to_be_below", "expect_estimate_change_to_be_below",  # SPEC 10
             "expect_release_agreement_to_be_between", "expect_statistic_within_control_limits"}
    expected |= drift
    expected.add("expect_subgroup_disparity_to_be_below")
    expected.add("expect_error_cause_rate_to_be_below")  # SPEC 12.1
    expected.add("expect_no_error_slice_above")  # SPEC 12.2
    expected |= {  # labelling QC, SPEC 9
        "expect_labels_removed_within_predicted_cluster",
        "expect_labels_sampled_record_not_removed",
        "expect_labels_added_outside_predicted_cluster",
        "expect_labels_record_ids_to_exist",
        "expect_labels_added_records_to_resemble_sampled_record",
        "expect_labels_consistent_across_draws",
        "expect_labels_true_cluster_to_match",
    }
    assert set(registry) == expected
    for name, spec in registry.items():
        params = {param.name: param for param in spec.params}
        assert spec.name == name and spec.summary
        assert params["prediction_column"].required
        assert "note" not in params and "severity" not in params  # common, kept apart
        assert spec.param("severity").choices == ("critical", "warning", "info")
        has_beta = name.endswith("_f_to_be_between") or name in (
            "expect_estimate_change_to_be_below", "expect_release_agreement_to_be_between",
            "expect_subgroup_disparity_to_be_below")
        assert ("beta" in params) == has_beta
        if name.startswith("expect_estimated_"):
            assert params["reference_column"].required
            assert params["weights"].default == "cluster_size"
            assert params["ci_level"].default == 0.95
            assert params["bound"].choices == ("estimate", "interval")
            assert params["bound"].default is None  # the older name of decision, whose default is the one rule
            assert params["decision"].default == "significant"
            assert "draws_column" in params
    hill = registry["expect_hill_number_to_be_between"]
    assert hill.model.parameter_fields()["q"].field_info.extra["allow_inf"]  # q: .inf is Hill's order infinity
    assert registry["expect_homonymy_rate_to_be_between"].param("name_column").required
    assert registry["expect_average_cluster_size_to_be_between"].param("name_column") is None
    benchmark = registry["expect_statistic_to_match_benchmark_estimate"]
    assert benchmark.param("statistic").choices == (
        "average_cluster_size",
        "matching_rate",
        "homonymy_rate",
        "name_variation_rate",
    )
    assert not benchmark.param("name_column").required


# -- valid suite -------------------------------------------------------------------------


def test_valid_suite_loads_with_typed_values():
    suite = load_suite(DATA / "suites" / "patentsview.yml")
    assert isinstance(suite, SuiteConfig)
    assert suite.name == "patentsview_inventor_disambiguation"
    assert suite.description.startswith("PatentsView")
    assert suite.path == DATA / "suites" / "patentsview.yml"
    first, hill, hill_inf, bcubed, homonymy, statistic, matching = suite.expectations

    assert first.name == "expect_estimated_pairwise_precision_to_be_between"
    assert first.line == 12
    assert first.severity == "critical"
    assert first.note == "Agreed with the release owner in 2022; the paper reports 0.91."
    assert first.kwargs == {
        "prediction_column": "inventor_id",
        "reference_column": "benchmark_id",
        "weights": "cluster_size",
        "min_value": 0.85,
        "ci_level": 0.95,
        "bound": "interval",
    }
    assert "name_column" not in first.kwargs  # defaults apply only where the spec has the key

    assert hill.kwargs == {"prediction_column": "inventor_id", "q": 2.0, "min_value": 1.5}
    assert isinstance(hill.kwargs["q"], float) and hill.note is None and hill.line == 17

    assert hill_inf.kwargs["q"] == math.inf and hill_inf.kwargs["max_value"] == math.inf
    assert hill_inf.kwargs["min_value"] == 1.0 and isinstance(hill_inf.kwargs["min_value"], float)
    assert hill_inf.severity == "info"

    assert bcubed.kwargs["beta"] == 2.0 and bcubed.kwargs["weights"] == {"column": "w"}
    assert bcubed.kwargs["draws_column"] == "draws" and bcubed.kwargs["ci_level"] == 0.9
    assert "bound" not in bcubed.kwargs and bcubed.severity == "warning"  # the model's default applies

    assert homonymy.kwargs == {
        "prediction_column": "inventor_id",
        "name_column": "full_name",
        "max_value": 0.2,
    }
    assert statistic.kwargs["statistic"] == "name_variation_rate"
    assert statistic.kwargs["name_column"] == "full_name"
    assert matching.kwargs["min_value"] == pytest.approx(0.001)  # PyYAML reads 1e-3 as text
    assert matching.kwargs["max_value"] == 1.0


def test_defaults_apply_and_explicit_null_restores_the_model_default(tmp_path):
    path = suite_with(
        tmp_path,
        """
        - expectation: expect_estimated_pairwise_recall_to_be_between
          min_value: 0.5
          draws_column: null
          ci_level: null
    """,
    )
    text = path.read_text().replace(
        "  reference_column: truth\n",
        "  reference_column: truth\n  draws_column: n\n  ci_level: 0.8\n"
        "  severity: warning\n  note: shared note\n",
    )
    path.write_text(text)
    (expectation,) = load_suite(path).expectations
    assert expectation.severity == "warning" and expectation.note == "shared note"
    assert "draws_column" not in expectation.kwargs
    assert "ci_level" not in expectation.kwargs  # left to the expectation's default, 0.95
    assert default_registry()[expectation.name].param("ci_level").default == 0.95


def test_custom_registry_is_used(tmp_path):
    spec = ExpectationSpec(
        "expect_custom",
        (ParamSpec("flag", required=True), ParamSpec("count", default=3)),
    )
    path = write(
        tmp_path,
        "s.yml",
        """
        suite: custom
        expectations:
          - expectation: expect_custom
            flag: false
    """,
    )
    for registry in ([spec], {spec.name: spec}):
        (expectation,) = load_suite(path, registry).expectations
        assert expectation.kwargs == {"flag": False}  # unwritten: left to the expectation
    issues = issues_of(path)  # the default registry does not know it
    assert [issue.line for issue in issues] == [3]
    assert "unknown expectation 'expect_custom'" in issues[0].message


def test_a_registry_of_gx_classes_is_derived_from_their_fields(tmp_path):
    from er_expectations.gx.expectations import ExpectMatchingRateToBeBetween

    path = write(
        tmp_path,
        "s.yml",
        """
        suite: s
        defaults: {prediction_column: cluster}
        expectations:
          - expectation: expect_matching_rate_to_be_between
            min_value: 0.2
          - expectation: expect_matching_rate_to_be_between
            min_value: 2
          - expectation: expect_hill_number_to_be_between
            q: 2
            min_value: 1
    """,
    )
    issues = issues_of(path, lambda p: load_suite(p, [ExpectMatchingRateToBeBetween]))
    assert [(issue.line, issue.message) for issue in issues] == [
        (7, "min_value: must be <= 1, got 2"),
        (8, "unknown expectation 'expect_hill_number_to_be_between'"),
    ]


# -- every mistake of a file, at its line ------------------------------------------------

MISTAKES = """
suite: broken                                             # 1
descripton: typo in a top-level key                       # 2
defaults:                                                 # 3
  prediction_column: inventor_id                          # 4
  ci_levle: 0.9                                           # 5
expectations:                                             # 6
  - expectation: expect_matchng_rate_to_be_between        # 7
    min_value: 0.5                                        # 8
  - expectation: expect_matching_rate_to_be_between       # 9
    min_vlaue: 0.5                                        # 10
  - expectation: expect_average_cluster_size_to_be_between  # 11
    min_value: high                                       # 12
    max_value: true                                       # 13
  - expectation: expect_estimated_pairwise_f_to_be_between  # 14
    reference_column: truth                               # 15
    min_value: 0.9                                        # 16
    max_value: 0.5                                        # 17
    beta: 0                                               # 18
    ci_level: 1.5                                         # 19
  - expectation: expect_hill_number_to_be_between         # 20
    min_value: 1                                          # 21
  - expectation: expect_estimated_pairwise_precision_to_be_between  # 22
    reference_column: truth                               # 23
    min_value: 0.8                                        # 24
    beta: 2                                               # 25
    severity: fatal                                       # 26
    bound: intervall                                      # 27
  - expectation: expect_statistic_to_match_benchmark_estimate  # 28
    reference_column: truth                               # 29
    statistic: homonymy_rate                              # 30
"""


def test_every_mistake_is_reported_at_its_line(tmp_path):
    path = write(tmp_path, "suites/broken.yml", MISTAKES)
    issues = issues_of(path)
    found = [(issue.line, issue.message) for issue in issues]
    expected = [
        (2, "unknown top-level key 'descripton' in a suite file"),
        (5, "unknown parameter 'ci_levle' in defaults"),
        (7, "unknown expectation 'expect_matchng_rate_to_be_between'"),
        (10, "unknown parameter 'min_vlaue' for expect_matching_rate_to_be_between"),
        (12, "min_value: expected a number, got the string 'high'"),
        (13, "max_value: expected a number, got the boolean true"),
        (16, "min_value (0.9) is greater than max_value (0.5)"),
        (18, "beta: must be > 0, got 0"),
        (19, "ci_level: must be strictly between 0 and 1, got 1.5"),
        (20, "missing required parameter 'q' for expect_hill_number_to_be_between"),
        (25, "unknown parameter 'beta' for expect_estimated_pairwise_precision_to_be_between"),
        (26, "severity: expected one of 'critical', 'warning' or 'info', got the string 'fatal'"),
        (27, "bound: expected one of 'estimate' or 'interval', got the string 'intervall'"),
        (30, "'name_column' is required when statistic is 'homonymy_rate'"),
    ]
    assert found == expected
    assert all(issue.file == str(path) for issue in issues)
    by_line = {issue.line: issue for issue in issues}
    assert by_line[2].column == 1 and by_line[10].column == 5 and by_line[12].column == 16
    assert by_line[2].hint == "did you mean 'description'?"
    assert by_line[5].hint == "did you mean 'ci_level'?"
    assert by_line[7].hint == "did you mean 'expect_matching_rate_to_be_between'?"
    assert by_line[10].hint == "did you mean 'min_value'?"
    assert "booleans are not numbers" in by_line[13].hint
    assert by_line[25].hint.startswith("'beta' is a parameter of 'expect_estimate")  # where it belongs
    assert "expect_estimated_b_cubed_f_to_be_between" in by_line[25].hint
    assert by_line[27].hint == "did you mean 'interval'?"
    # str() renders one issue per line, file:line:column: message; hint
    lines = str(ConfigError(issues)).splitlines()
    assert len(lines) == len(expected)
    assert lines[3] == (
        f"{path}:10:5: unknown parameter 'min_vlaue' for "
        "expect_matching_rate_to_be_between; did you mean 'min_value'?"
    )


def test_a_misspelt_key_is_not_also_reported_missing(tmp_path):
    path = suite_with(
        tmp_path,
        """
        - expectation: expect_matching_rate_to_be_between
          min_vale: 0.5
        - expectation: expect_homonymy_rate_to_be_between
          name_colum: full_name
          max_value: 0.3
    """,
    )
    issues = issues_of(path)
    assert [(issue.line, issue.message) for issue in issues] == [
        (7, "unknown parameter 'min_vale' for expect_matching_rate_to_be_between"),
        (9, "unknown parameter 'name_colum' for expect_homonymy_rate_to_be_between"),
    ]


def test_missing_bounds_and_structure_errors(tmp_path):
    path = suite_with(
        tmp_path,
        """
        - expectation: expect_matching_rate_to_be_between
          severity: info
        - just a string
        - expect_average_cluster_size_to_be_between:
            min_value: 1
        - expectation: 42
    """,
    )
    issues = issues_of(path)
    assert [issue.line for issue in issues] == [6, 8, 9, 11]
    assert "needs at least one of 'min_value' or 'max_value'" in issues[0].message
    assert "must be a mapping, got the string 'just a string'" in issues[1].message
    assert "without an 'expectation' key" in issues[2].message
    assert "- expectation: expect_average_cluster_size_to_be_between" in issues[2].hint
    assert "expected the name of an expectation, got the number 42" in issues[3].message


def test_top_level_problems(tmp_path):
    issues = issues_of(write(tmp_path, "a.yml", "description: no name\nexpectations: []\n"))
    assert [(issue.line, issue.message) for issue in issues] == [
        (1, "missing required key 'suite'"),
        (2, "the suite has no expectations"),
    ]
    issues = issues_of(write(tmp_path, "b.yml", "- suite: x\n"))
    assert "a suite file must be a mapping" in issues[0].message and issues[0].line == 1
    issues = issues_of(write(tmp_path, "c.yml", "suite: x\nexpectations: {a: 1}\n"))
    assert issues[0].message == "expectations: expected a list, got a mapping"


def test_rates_are_fractions(tmp_path):
    path = suite_with(
        tmp_path,
        """
        - expectation: expect_estimated_cluster_recall_to_be_between
          min_value: 85
        - expectation: expect_matching_rate_to_be_between
          max_value: 85%
        - expectation: expect_average_cluster_size_to_be_between
          min_value: -1
    """,
    )
    issues = issues_of(path)
    assert [(issue.line, issue.message) for issue in issues] == [
        (7, "min_value: must be <= 1, got 85"),
        (9, "max_value: expected a number, got the string '85%'"),
        (11, "min_value: must be >= 0, got -1"),
    ]
    assert issues[0].hint == "rates are fractions between 0 and 1: if you meant 85 %, write 0.85"
    assert issues[1].hint == "write a fraction: 0.85 for 85%"


def test_quoted_numbers_and_wrong_text_types(tmp_path):
    path = suite_with(
        tmp_path,
        """
        - expectation: expect_matching_rate_to_be_between
          min_value: "0.5"
          note: true
        - expectation: expect_estimated_homogeneity_to_be_between
          min_value: 0.1
          weights: size
          draws_column: [a, b]
        - expectation: expect_estimated_cluster_f_to_be_between
          min_value: 0.1
          weights: {col: w}
    """,
    )
    issues = issues_of(path)
    assert [(issue.line, issue.message) for issue in issues] == [
        (7, "min_value: expected a number, got the string '0.5'"),
        (8, "note: expected text, got the boolean true"),
        (
            11,
            "weights: expected 'cluster_size' or 'uniform' or {column: <weight column>}, "
            "got the string 'size'",
        ),
        (12, "draws_column: expected text, got a list"),
        (15, "weights: a weights mapping takes the single key 'column', got 'col'"),
    ]
    assert issues[0].hint == "remove the quotes: min_value: 0.5"
    assert issues[1].hint == 'put it in quotes: "true"'


def test_yaml_1_2_reads_yes_and_on_as_text(tmp_path):
    """YAML 1.2 (ruamel.yaml): yes/no/on/off are text and 010 is ten, not YAML 1.1's guesses."""
    path = suite_with(
        tmp_path,
        """
        - expectation: expect_matching_rate_to_be_between
          min_value: 0.5
          note: yes
        - expectation: expect_matching_rate_to_be_between
          min_value: 0.5
          strict_min: on
        - expectation: expect_hill_number_to_be_between
          q: 010
          min_value: 1
    """,
    )
    issues = issues_of(path)
    assert [(issue.line, issue.message) for issue in issues] == [
        (11, "strict_min: expected true or false, got the string 'on'"),
    ]
    text = "".join(line for line in path.read_text().splitlines(keepends=True) if "strict_min: on" not in line)
    (tmp_path / "ok.yml").write_text(text)
    suite = load_suite(tmp_path / "ok.yml")
    assert suite.expectations[0].note == "yes"
    assert suite.expectations[2].kwargs["q"] == 10


# -- booleans and infinity ---------------------------------------------------------------


@pytest.mark.parametrize("text", ["true", "false", "yes", "on", "True"])
def test_booleans_are_not_numbers(tmp_path, text):
    path = suite_with(
        tmp_path,
        f"""
        - expectation: expect_hill_number_to_be_between
          q: {text}
          min_value: 1
        - expectation: expect_estimated_pairwise_recall_to_be_between
          min_value: {text}
          ci_level: {text}
    """,
    )
    issues = issues_of(path)
    assert [(issue.line, issue.message.split(",")[0]) for issue in issues] == [
        (7, "q: expected a number"),
        (10, "min_value: expected a number"),
        (11, "ci_level: expected a number"),
    ]
    if text in ("yes", "on"):  # YAML 1.2: text, not a boolean
        assert all(f"got the string '{text}'" in issue.message for issue in issues)
    else:
        assert all("got the boolean" in issue.message for issue in issues)


@pytest.mark.parametrize("text", [".inf", "inf", "Inf", '"inf"', "+.inf", "infinity", ".INF"])
def test_infinity_for_q_and_max_value(tmp_path, text):
    path = suite_with(
        tmp_path,
        f"""
        - expectation: expect_hill_number_to_be_between
          q: {text}
          min_value: 1
          max_value: {text}
    """,
    )
    (expectation,) = load_suite(path).expectations
    assert expectation.kwargs["q"] == math.inf
    assert expectation.kwargs["max_value"] == math.inf


def test_infinity_where_it_does_not_belong(tmp_path):
    path = suite_with(
        tmp_path,
        """
        - expectation: expect_hill_number_to_be_between
          q: -.inf
          min_value: .inf
          max_value: 3
        - expectation: expect_estimated_pairwise_f_to_be_between
          max_value: .inf
          beta: inf
          ci_level: .inf
        - expectation: expect_average_cluster_size_to_be_between
          min_value: .nan
    """,
    )
    issues = issues_of(path)
    assert [(issue.line, issue.message) for issue in issues] == [
        (7, "q: must be >= 0, got -inf"),
        (8, "min_value (inf) is greater than max_value (3)"),
        (11, "max_value: must be <= 1, got inf"),
        (12, "beta: expected a finite number, got the string 'inf'"),
        (13, "ci_level: expected a finite number, got .inf"),
        (15, "min_value: expected a number, got .nan (not a number)"),
    ]


def test_min_above_max_with_infinity(tmp_path):
    path = suite_with(
        tmp_path,
        """
        - expectation: expect_hill_number_to_be_between
          q: 0
          min_value: .inf
          max_value: 3
    """,
    )
    (issue,) = issues_of(path)
    assert (issue.line, issue.message) == (8, "min_value (inf) is greater than max_value (3)")


# -- YAML-level problems -----------------------------------------------------------------


def test_malformed_yaml_gives_one_error_with_position(tmp_path):
    path = write(
        tmp_path,
        "bad.yml",
        """
        suite: s
        expectations:
          - expectation: expect_matching_rate_to_be_between
            min_value: 0.5
           max_value: 0.9
    """,
    )
    (issue,) = issues_of(path)
    assert issue.line == 5 and issue.column is not None
    assert issue.message.startswith("invalid YAML: ")
    assert issue.hint


def test_unclosed_bracket_and_tabs(tmp_path):
    (issue,) = issues_of(write(tmp_path, "a.yml", "suite: s\nexpectations: [\n"))
    assert issue.line == 3 and "invalid YAML" in issue.message
    (issue,) = issues_of(write(tmp_path, "b.yml", "suite: s\nexpectations:\n\t- a\n"))
    assert (issue.line, issue.column) == (3, 1)
    assert "tabs" in issue.hint
    (issue,) = issues_of(write(tmp_path, "c.yml", "suite: s\nexpectations:\n  - a\x07b\n"))
    assert (issue.line, issue.column) == (3, 6)
    assert "not allowed" in issue.message


def test_duplicate_keys_are_errors(tmp_path):
    path = write(
        tmp_path,
        "dup.yml",
        """
        suite: first
        expectations:
          - expectation: expect_matching_rate_to_be_between
            prediction_column: c
            min_value: 0.1
            min_value: 0.2
        suite: second
    """,
    )
    issues = issues_of(path)
    assert [(issue.line, issue.column, issue.message) for issue in issues] == [
        (6, 5, "duplicate key 'min_value' (first given at line 5)"),
        (7, 1, "duplicate key 'suite' (first given at line 1)"),
    ]
    assert "silently" in issues[0].hint


def test_empty_file_unknown_tag_and_missing_file(tmp_path):
    (issue,) = issues_of(write(tmp_path, "empty.yml", "# nothing\n"))
    assert issue.message == "the file is empty"
    path = suite_with(
        tmp_path,
        """
        - expectation: expect_matching_rate_to_be_between
          prediction_column: c
          min_value: !python/none 0.2
    """,
    )
    (issue,) = issues_of(path)
    assert issue.line == 8 and "cannot read the value" in issue.message
    (issue,) = issues_of(tmp_path / "absent.yml")
    assert issue.line is None and "file not found" in issue.message


def test_anchors_and_merge_keys_are_supported(tmp_path):
    path = write(
        tmp_path,
        "anchors.yml",
        """
        suite: s
        expectations:
          - &base
            expectation: expect_matching_rate_to_be_between
            prediction_column: c
            min_value: 0.1
          - <<: *base
            max_value: 0.9
    """,
    )
    first, second = load_suite(path).expectations
    assert first.kwargs == {"prediction_column": "c", "min_value": 0.1}
    assert second.kwargs == {"prediction_column": "c", "min_value": 0.1, "max_value": 0.9}


# -- errors ------------------------------------------------------------------------------


def test_issue_and_error_rendering():
    issue = ConfigIssue(
        "suites/pv.yml", 12, 5, "unknown parameter 'min_vlaue'", "did you mean 'min_value'?"
    )
    assert (
        str(issue) == "suites/pv.yml:12:5: unknown parameter 'min_vlaue'; did you mean 'min_value'?"
    )
    assert str(ConfigIssue("a.yml", None, None, "gone", None)) == "a.yml: gone"
    assert str(ConfigIssue("a.yml", 3, None, "here", None)) == "a.yml:3: here"
    error = ConfigError([ConfigIssue("b.yml", 2, 1, "two"), ConfigIssue("b.yml", 1, 1, "one")])
    assert str(error) == "b.yml:1:1: one\nb.yml:2:1: two"
    copy = pickle.loads(pickle.dumps(error))
    assert copy.issues == error.issues
    with pytest.raises(ValueError):
        ConfigError([])


# -- checkpoints -------------------------------------------------------------------------


def test_valid_checkpoint_loads_with_typed_values():
    path = DATA / "checkpoints" / "patentsview.yml"
    checkpoint = load_checkpoint(path)
    assert isinstance(checkpoint, CheckpointConfig)
    assert checkpoint.name == "patentsview_releases"
    assert checkpoint.path == path
    assert checkpoint.project_dir == (DATA / "gx").resolve()
    data = checkpoint.data
    assert data.records.path == (DATA / "data" / "records.csv").resolve()
    assert data.records.format == "csv" and data.records.id_column == "mention_id"
    predictions = data.predictions
    assert predictions.layout == "wide"
    assert predictions.path == (DATA / "data" / "predictions.csv").resolve()
    assert predictions.columns == "inventor_id_*"
    assert predictions.match_columns(["mention_id", "inventor_id_1", "x", "inventor_id_2"]) == [
        "inventor_id_1",
        "inventor_id_2",
    ]
    assert data.benchmark.reference_column == "benchmark_id"
    assert data.name.columns == ("name_first", "name_last") and data.name.separator == " "
    assert data.name.output_column == "full_name"
    assert checkpoint.releases == ("inventor_id_20211230", "inventor_id_20220630")
    assert checkpoint.suites == ("patentsview_inventor_disambiguation",)
    assert checkpoint.suite_paths == ((DATA / "suites").resolve(),)
    assert [(action.name, action.options, action.line) for action in checkpoint.actions] == [
        ("build_data_docs", {}, 16),
        ("build_data_docs", {"site_name": "local_site"}, 17),
    ]
    assert checkpoint.location("suites[0]") == (13, 10)
    assert checkpoint.location("data.records.id_column") == (5, 51)
    # the references exist too
    suites = load_suites(checkpoint.suite_paths)
    check_checkpoint_references(checkpoint, suites, csv_columns)


def test_checkpoint_with_one_file_per_release():
    checkpoint = load_any(DATA / "checkpoints" / "per_release_files.yml")
    assert isinstance(checkpoint, CheckpointConfig)
    predictions = checkpoint.data.predictions
    assert predictions.layout == "files"
    assert [(f.label, f.path.name, f.format) for f in predictions.files] == [
        ("2022-06-30", "release_2022.csv", "csv"),
        ("2021-12-30", "release_2021.csv", "csv"),
    ]
    assert predictions.prediction_column == "inventor_id"
    assert checkpoint.releases == ("2022-06-30",)  # an unquoted date is taken as written
    assert checkpoint.suites == ("patentsview_inventor_disambiguation",)
    assert checkpoint.project_dir == (DATA / "gx_project").resolve()  # default ../gx_project
    assert checkpoint.actions == ()
    check_checkpoint_references(checkpoint, load_suites(checkpoint.suite_paths), csv_columns)


def make_data(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    data.mkdir()
    for name in ("records.csv", "predictions.csv", "a.csv", "b.csv", "table.xlsx"):
        (data / name).write_text("mention_id\n")
    (tmp_path / "checkpoints").mkdir()
    return tmp_path / "checkpoints"


def test_checkpoint_reports_every_mistake_with_lines(tmp_path):
    make_data(tmp_path)
    path = write(
        tmp_path,
        "checkpoints/bad.yml",
        """
        checkpoint: bad
        projet_dir: ../gx
        data:
          records: {path: ../data/missing.parquet, id_column: mention_id}
          predictions:
            path: ../data/predictions.csv
            files: {a: ../data/a.csv}
            id_column: mention_id
          benchmark: {path: ../data/table.xlsx, id_column: 3}
          name: {colums: [first]}
        releases: al
        suites: [a, a]
        suite_paths: [../nosuites]
        actions:
          - alert
          - build_data_doc
          - build_data_docs: {site: x}
    """,
    )
    issues = issues_of(path, load_checkpoint)
    found = [(issue.line, issue.message) for issue in issues]
    root = tmp_path.resolve()
    assert found == [
        (2, "unknown key 'projet_dir' in the checkpoint file"),
        (4, f"data.records.path: file not found: {root / 'data' / 'missing.parquet'}"),
        (
            7,
            "data.predictions: give either 'path' (one wide file) or 'files' (one file per "
            "release), not both",
        ),
        (9, "data.benchmark: missing required key 'reference_column'"),
        (
            9,
            f"data.benchmark.path: unknown table type ('.xlsx') for {root / 'data' / 'table.xlsx'}",
        ),
        (9, "data.benchmark.id_column: expected text, got the number 3"),
        (10, "unknown key 'colums' in data.name"),
        (11, "releases: expected 'all' or a list of release labels, got the string 'al'"),
        (12, "suites: 'a' is listed twice"),
        (13, f"suite_paths: not found: {root / 'nosuites'}"),
        (15, "action 'alert' is not available yet in this version"),
        (16, "unknown action 'build_data_doc'"),
        (17, "unknown option 'site' for action build_data_docs"),
    ]
    hints = {(issue.line, issue.message.split(":")[0]): issue.hint for issue in issues}
    assert (
        hints[(2, "unknown key 'projet_dir' in the checkpoint file")]
        == "did you mean 'project_dir'?"
    )
    assert "resolved against" in issues[1].hint and str(root / "checkpoints") in issues[1].hint
    assert "format: csv" in issues[4].hint
    assert issues[6].hint == "did you mean 'columns'?"
    assert issues[7].hint == "did you mean 'all'?"
    assert issues[11].hint == "did you mean 'build_data_docs'?"
    assert issues[12].hint == "did you mean 'site_name'?"


def test_checkpoint_required_keys_and_prediction_layouts(tmp_path):
    make_data(tmp_path)
    issues = issues_of(
        write(tmp_path, "checkpoints/a.yml", "project_dir: ../gx\n"), load_checkpoint
    )
    assert [issue.message for issue in issues] == [
        "the checkpoint file: missing required key 'checkpoint'",
        "the checkpoint file: missing required key 'data'",
        "the checkpoint file: missing required key 'suites'",
    ]
    path = write(
        tmp_path,
        "checkpoints/b.yml",
        """
        checkpoint: b
        data:
          records: {path: ../data/records.csv, id_column: mention_id}
          predictions: {id_column: mention_id}
        suites: [s]
    """,
    )
    (issue,) = issues_of(path, load_checkpoint)
    assert issue.line == 4 and "missing 'path' (one wide file) or 'files'" in issue.message
    path = write(
        tmp_path,
        "checkpoints/c.yml",
        """
        checkpoint: c
        data:
          records: {path: ../data/records.csv, id_column: mention_id}
          predictions:
            files: {"2022": ../data/a.csv, "2021": ../data/b.csv}
            id_column: mention_id
            columns: "x_*"
        releases: [2022, 2020]
        suites: [s]
    """,
    )
    issues = issues_of(path, load_checkpoint)
    assert [(issue.line, issue.message) for issue in issues] == [
        (5, "data.predictions: missing required key 'prediction_column' (needed with 'files')"),
        (
            7,
            "data.predictions: 'columns' goes with 'path' (one wide file); with 'files' each file "
            "has its prediction in 'prediction_column'",
        ),
        (8, "releases: '2020' is not a key of data.predictions.files"),
    ]


def test_format_override_and_folders(tmp_path):
    make_data(tmp_path)
    (tmp_path / "data" / "dataset").mkdir()
    path = write(
        tmp_path,
        "checkpoints/f.yml",
        """
        checkpoint: f
        data:
          records: {path: ../data/table.xlsx, id_column: mention_id, format: csv}
          predictions: {path: ../data/dataset, id_column: mention_id, format: parquet}
        suites: s
    """,
    )
    checkpoint = load_checkpoint(path)
    assert checkpoint.data.records.format == "csv"
    assert checkpoint.data.predictions.format == "parquet"
    assert checkpoint.data.predictions.columns is None
    path.write_text(path.read_text().replace("format: parquet", "format: csv"))
    (issue,) = issues_of(path, load_checkpoint)
    assert issue.line == 4 and "is a folder" in issue.message
    path.write_text(
        path.read_text().replace("checkpoint: f\n", "checkpoint: f\nproject_dir: ../data/a.csv\n")
    )
    issues = issues_of(path, load_checkpoint)
    assert [(issue.line, issue.message.split(":")[0]) for issue in issues] == [
        (2, "project_dir"),
        (5, "data.predictions.path"),
    ]
    assert "is a file, not a folder" in issues[0].message


def test_check_checkpoint_references_reports_missing_suites_and_columns(tmp_path):
    make_data(tmp_path)
    data = tmp_path / "data"
    (data / "records.csv").write_text("mention_id,name_first,name_lst\n")
    (data / "predictions.csv").write_text("mention_id,inventor_id_2021,inventor_id_2022,note\n")
    (data / "benchmark.csv").write_text("mentionid,benchmark_id\n")
    path = write(
        tmp_path,
        "checkpoints/refs.yml",
        """
        checkpoint: refs
        data:
          records: {path: ../data/records.csv, id_column: mention_id}
          predictions:
            path: ../data/predictions.csv
            id_column: mention_id
            columns: "inventor_id_*"
          benchmark: {path: ../data/benchmark.csv, id_column: mention_id, reference_column: benchmark_id}
          name: {columns: [name_first, name_last]}
        releases: [inventor_id_2022, inventor_id_2023, note]
        suites: [pv_suite, drift]
    """,
    )
    checkpoint = load_checkpoint(path)
    with pytest.raises(ConfigError) as caught:
        check_checkpoint_references(checkpoint, {"pv_suites": object()}, csv_columns)
    issues = caught.value.issues
    assert [(issue.line, issue.column, issue.message) for issue in issues] == [
        (
            8,
            55,
            f"data.benchmark.id_column: column 'mention_id' not found in {data.resolve() / 'benchmark.csv'}",
        ),
        (
            9,
            32,
            f"data.name.columns[1]: column 'name_last' not found in {data.resolve() / 'records.csv'}",
        ),
        (
            10,
            30,
            f"releases: '{'inventor_id_2023'}' is not a prediction column of "
            f"{data.resolve() / 'predictions.csv'}",
        ),
        (10, 48, "releases: column 'note' is not selected by data.predictions.columns"),
        (11, 10, "suite 'pv_suite' not found"),
        (11, 20, "suite 'drift' not found"),
    ]
    hints = [issue.hint for issue in issues]
    assert hints[0] == "did you mean 'mentionid'?"
    assert hints[1] == "did you mean 'name_lst'?"
    assert hints[2] == "did you mean 'inventor_id_2021' or 'inventor_id_2022'?"
    assert hints[4] == "did you mean 'pv_suites'?"
    assert hints[5] == "suites found: 'pv_suites'"


def test_check_references_with_explicit_columns_files_and_unreadable_tables(tmp_path):
    make_data(tmp_path)
    path = write(
        tmp_path,
        "checkpoints/wide.yml",
        """
        checkpoint: wide
        data:
          records: {path: ../data/records.csv, id_column: mention_id}
          predictions:
            path: ../data/predictions.csv
            id_column: mention_id
            columns: [release_a, release_b]
        suites: [s]
    """,
    )
    checkpoint = load_checkpoint(path)

    def lister(file: Path) -> list[str]:
        if file.name == "records.csv":
            raise OSError("broken file")
        return ["mention_id", "release_a", "release_c"]

    with pytest.raises(ConfigError) as caught:
        check_checkpoint_references(checkpoint, {"s": object()}, lister)
    assert [(issue.line, issue.message.split(":")[0]) for issue in caught.value.issues] == [
        (3, "cannot read the columns of " + str((tmp_path / "data" / "records.csv").resolve())),
        (7, "data.predictions.columns[1]"),
    ]
    assert caught.value.issues[1].hint == "did you mean 'release_a' or 'release_c'?"

    path = write(
        tmp_path,
        "checkpoints/files.yml",
        """
        checkpoint: files
        data:
          records: {path: ../data/records.csv, id_column: mention_id}
          predictions:
            files: {"2021": ../data/a.csv, "2022": ../data/b.csv}
            id_column: mention_id
            prediction_column: cluster
        suites: [s]
    """,
    )
    checkpoint = load_checkpoint(path)
    with pytest.raises(ConfigError) as caught:
        check_checkpoint_references(checkpoint, {"s": object()}, csv_columns)
    assert [
        (issue.line, issue.message.split(" not found")[0]) for issue in caught.value.issues
    ] == [
        (7, "data.predictions.prediction_column: column 'cluster'"),
        (7, "data.predictions.prediction_column: column 'cluster'"),
    ]  # once per release file; the message names the file


def test_glob_selecting_nothing(tmp_path):
    make_data(tmp_path)
    path = write(
        tmp_path,
        "checkpoints/g.yml",
        """
        checkpoint: g
        data:
          records: {path: ../data/records.csv, id_column: mention_id}
          predictions: {path: ../data/predictions.csv, id_column: mention_id, columns: "pred_*"}
        suites: [s]
    """,
    )
    with pytest.raises(ConfigError) as caught:
        check_checkpoint_references(load_checkpoint(path), {"s": 1}, csv_columns)
    (issue,) = caught.value.issues
    assert issue.line == 4 and "selects no release column" in issue.message


@pytest.mark.skipif(not PACKAGE_DATA.is_dir(), reason="packaged PatentsView data not present")
def test_references_against_the_packaged_parquet_files(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    text = scaffold_checkpoint(
        name="patentsview",
        records_path=str(PACKAGE_DATA / "records.parquet"),
        id_column="mention_id",
        predictions_path=str(PACKAGE_DATA / "predictions.parquet"),
        prediction_columns="inventor_id_*",
        benchmark_path=str(PACKAGE_DATA / "benchmark.parquet"),
        reference_column="benchmark_id",
        name_columns=["name_first", "name_last"],
        suites=["patentsview"],
    )
    checkpoint = load_checkpoint(write(tmp_path, "checkpoints/pv.yml", text))
    check_checkpoint_references(
        checkpoint, {"patentsview": None}, lambda path: pq.read_schema(path).names
    )
    columns = pq.read_schema(checkpoint.data.predictions.path).names
    assert len(checkpoint.data.predictions.match_columns(columns)) == 15


# -- load_any and load_suites ------------------------------------------------------------


def test_load_any_tells_the_kinds_apart(tmp_path):
    assert isinstance(load_any(DATA / "suites" / "patentsview.yml"), SuiteConfig)
    assert isinstance(load_any(DATA / "checkpoints" / "patentsview.yml"), CheckpointConfig)
    (issue,) = issues_of(write(tmp_path, "x.yml", "suit: x\nexpectations: []\n"), load_any)
    assert "no top-level 'suite:' or 'checkpoint:'" in issue.message
    assert issue.hint == "did you mean 'suite'?"
    (issue,) = issues_of(write(tmp_path, "y.yml", "suite: x\ncheckpoint: y\n"), load_any)
    assert issue.line == 2 and "both" in issue.message
    issues = issues_of(write(tmp_path, "z.yml", "suite: x\nexpectations: 3\n"), load_any)
    assert issues[0].message == "expectations: expected a list, got the number 3"


def test_load_suites_collects_across_files(tmp_path):
    write(
        tmp_path,
        "suites/a.yml",
        "suite: same\nexpectations:\n  - expectation: expect_matching_rate_to_be_between\n"
        "    prediction_column: c\n    min_value: 0\n",
    )
    write(
        tmp_path,
        "suites/b.yaml",
        "suite: same\nexpectations:\n  - expectation: expect_matching_rate_to_be_between\n"
        "    prediction_column: c\n    max_value: 1\n",
    )
    write(tmp_path, "suites/c.yml", "checkpoint: not a suite\n")
    write(tmp_path, "suites/d.yml", "suite: broken\nexpectations:\n  - expectation: nope\n")
    write(tmp_path, "suites/notes.txt", "ignored")
    with pytest.raises(ConfigError) as caught:
        load_suites([tmp_path / "suites", tmp_path / "missing"])
    messages = [(Path(issue.file).name, issue.line, issue.message) for issue in caught.value.issues]
    assert messages == [  # sorted by file
        ("missing", None, f"suite path not found: {tmp_path / 'missing'}"),
        ("b.yaml", 1, f"suite 'same' is also defined in {tmp_path / 'suites' / 'a.yml'}"),
        ("d.yml", 3, "unknown expectation 'nope'"),
    ]
    (tmp_path / "suites" / "b.yaml").unlink()
    (tmp_path / "suites" / "d.yml").unlink()
    suites = load_suites([tmp_path / "suites"])
    assert list(suites) == ["same"]


# -- scaffolds ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reference", "name"), [(None, None), ("truth", None), ("truth", "full name")]
)
def test_scaffold_suite_round_trips(tmp_path, reference, name):
    text = scaffold_suite(
        name="my-suite_v1", prediction_column="2022", reference_column=reference, name_column=name
    )
    suite = load_suite(write(tmp_path, "suite.yml", text))
    assert suite.name == "my-suite_v1"
    assert all(e.kwargs["prediction_column"] == "2022" for e in suite.expectations)
    names = [e.name for e in suite.expectations]
    assert ("expect_homonymy_rate_to_be_between" in names) == (name is not None)
    assert ("expect_estimated_pairwise_precision_to_be_between" in names) == (reference is not None)
    if reference:
        statistics = [
            e.kwargs["statistic"]
            for e in suite.expectations
            if e.name == "expect_statistic_to_match_benchmark_estimate"
        ]
        expected = ["average_cluster_size", "matching_rate"]
        assert statistics == expected + (["homonymy_rate", "name_variation_rate"] if name else [])


def test_scaffold_checkpoint_round_trips(tmp_path):
    make_data(tmp_path)
    (tmp_path / "suites").mkdir()
    (tmp_path / "suites" / "pv.yml").write_text(scaffold_suite(name="pv", prediction_column="p"))
    wide = scaffold_checkpoint(
        name="wide",
        records_path="../data/records.csv",
        id_column="mention_id",
        predictions_path="../data/predictions.csv",
        prediction_columns=["2021", "yes"],
        benchmark_path="../data/a.csv",
        reference_column="truth",
        name_columns=["first", "last"],
        name_separator=", ",
        suites=["pv"],
    )
    checkpoint = load_checkpoint(write(tmp_path, "checkpoints/wide.yml", wide))
    assert checkpoint.data.predictions.columns == ("2021", "yes")
    assert checkpoint.data.name.separator == ", "
    assert [(action.name, action.options) for action in checkpoint.actions] == [
        ("build_data_docs", {})
    ]
    assert checkpoint.suite_paths == ((tmp_path / "suites").resolve(),)
    files = scaffold_checkpoint(
        name="files",
        records_path="../data/records.csv",
        id_column="mention_id",
        prediction_files={"2022-06-30": "../data/a.csv", "2021-12-30": "../data/b.csv"},
        prediction_column="inventor_id",
        suites=["pv"],
        suite_paths=["../suites"],
        build_data_docs=False,
        name_columns=["n"],
        name_output_column="name",
    )
    checkpoint = load_any(write(tmp_path, "checkpoints/files.yml", files))
    assert [f.label for f in checkpoint.data.predictions.files] == ["2022-06-30", "2021-12-30"]
    assert checkpoint.data.name.output_column == "name"
    assert checkpoint.actions == ()
    assert list(load_suites(checkpoint.suite_paths)) == ["pv"]
    with pytest.raises(ValueError):
        scaffold_checkpoint(name="x", records_path="r.csv", id_column="i", suites=["s"])


@settings(deadline=None)
@given(st.text())
def test_yaml_scalar_reads_back_as_the_same_text(text):
    assert read_yaml(f"key: {yaml_scalar(text)}  # comment\n")["key"] == text
    assert read_yaml(f"key: [{yaml_scalar(text)}, x]\n")["key"] == [text, "x"]
    assert read_yaml(f"key: {{a: {yaml_scalar(text)}, b: x}}\n")["key"] == {
        "a": text,
        "b": "x",
    }


# -- independence ------------------------------------------------------------------------


def test_config_package_does_not_import_gx(tmp_path):
    """Importing the configuration layer does not pull in Great Expectations, which takes
    seconds to import; validating a suite imports the GX classes that declare its parameters."""
    script = tmp_path / "imports.py"
    script.write_text(textwrap.dedent("""
        import sys
        import er_expectations.config
        print(sorted(name for name in sys.modules if name.split(".")[0] == "great_expectations"))
    """), encoding="utf-8")
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


# -- the checkpoint models: every structural error, at its node ---------------------------

VALID_CHECKPOINT = (DATA / "checkpoints" / "patentsview.yml").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("after", "indent", "key", "section", "hint"),
    [
        ("project_dir: ../gx", "", "projectdir", "the checkpoint file", "did you mean 'project_dir'?"),
        ("data:", "  ", "benchmarks", "data", "did you mean 'benchmark'?"),
        ("  predictions:", "    ", "id_colum", "data.predictions", "did you mean 'id_column'?"),
        ("  predictions:", "    ", "zzz", "data.predictions", None),
    ],
)
def test_an_unknown_key_in_any_section_is_one_issue_at_its_key(
    tmp_path, after, indent, key, section, hint
):
    """Adding one unknown key to a valid checkpoint gives exactly that issue, at the key."""
    lines = VALID_CHECKPOINT.splitlines()
    at = lines.index(after) + 1
    lines.insert(at, f"{indent}{key}: x")
    path = tmp_path / "checkpoints" / "c.yml"
    path.parent.mkdir()
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for folder in ("data", "suites"):
        (tmp_path / folder).symlink_to(DATA / folder)
    (issue,) = issues_of(path, load_checkpoint)
    assert (issue.line, issue.column) == (at + 1, len(indent) + 1)
    assert issue.message == f"unknown key '{key}' in {section}"
    if hint is not None:
        assert issue.hint == hint
    else:  # no close name: the wide layout's keys are listed
        assert issue.hint == (
            "expected one of 'batch_column', 'columns', 'format', 'id_column' or 'path'"
        )


def test_checkpoint_types_lists_and_actions_are_reported_at_their_node(tmp_path):
    make_data(tmp_path)
    path = write(
        tmp_path,
        "checkpoints/types.yml",
        """
        checkpoint: types
        project_dir: true
        data:
          records: {path: ../data/records.csv, id_column: , format: xlsx}
          predictions: {path: ../data/predictions.csv, id_column: m, columns: {a: 1}}
          name: {columns: first, separator: 3}
        releases: 5
        suites: [s, {a: 1}, '', s]
        actions:
          - build_data_docs:
          - build_data_docs: 3
          - {build_data_docs: {}, x: 1}
          - 7
    """,
    )
    issues = issues_of(path, load_checkpoint)
    assert [(issue.line, issue.column, issue.message) for issue in issues] == [
        (2, 14, "project_dir: expected text, got the boolean true"),
        (
            4,
            40,
            "data.records: missing required key 'id_column' (the key is there but has no value)",
        ),
        (4, 61, "data.records.format: expected one of 'parquet' or 'csv', got the string 'xlsx'"),
        (5, 71, "data.predictions.columns: expected a list of column names, got a mapping"),
        (6, 37, "data.name.separator: expected text, got the number 3"),
        (7, 11, "releases: expected 'all' or a list of release labels, got the number 5"),
        (8, 13, "suites[1]: expected a suite name, got a mapping"),
        (8, 21, "suites[2]: expected a suite name, got an empty string"),
        (11, 22, "actions[1].build_data_docs: expected a mapping, got the number 3"),
        (
            12,
            5,
            "actions[2]: an action with options is a mapping with one key, the action name; "
            "got 2 keys",
        ),
        (13, 5, "actions[3]: expected an action name, got the number 7"),
    ]
    hints = [issue.hint for issue in issues]
    assert hints[0] == 'put it in quotes: "true"'
    assert hints[1] == "write it as records: {path: <file>, id_column: <column>}"
    assert hints[2] is None  # 'xlsx' is close to neither choice
    assert hints[5] == "write releases: [5] for a single release"
    assert hints[10] == "write one of 'build_data_docs', 'slack', 'microsoft_teams', 'webhook' or 'email'"
    # the first suite is named once more: reported once the item errors are fixed
    path.write_text(path.read_text().replace("[s, {a: 1}, '', s]", "[s, t, s]"))
    assert any(
        (issue.line, issue.column, issue.message) == (8, 16, "suites: 's' is listed twice")
        for issue in issues_of(path, load_checkpoint)
    )


def test_checkpoint_layout_of_predictions(tmp_path):
    make_data(tmp_path)
    path = write(
        tmp_path,
        "checkpoints/layout.yml",
        """
        checkpoint: layout
        data:
          records: {path: ../data/records.csv, id_column: mention_id}
          predictions: {files: {a: ../data/a.csv, b: }, id_column: m, prediction_column: p}
        releases: [a, c]
        suites: s
    """,
    )
    issues = issues_of(path, load_checkpoint)
    assert [(issue.line, issue.message, issue.hint) for issue in issues] == [
        (
            4,
            "data.predictions.files.b: expected text, got an empty value",
            "write a value or remove the key",
        ),
        (5, "releases: 'c' is not a key of data.predictions.files", "expected one of 'a' or 'b'"),
    ]
    path.write_text(path.read_text().replace("{a: ../data/a.csv, b: }", "{}"))
    issues = issues_of(path, load_checkpoint)
    assert [(issue.line, issue.message) for issue in issues] == [
        (4, "data.predictions.files: no release files given"),
        (5, "releases: 'a' is not a key of data.predictions.files"),
        (5, "releases: 'c' is not a key of data.predictions.files"),
    ]
    path.write_text("checkpoint: x\ndata:\n  records: {path: ../data/records.csv, id_column: m}\n"
                    "  predictions: hello\nsuites: s\n")
    (issue,) = issues_of(path, load_checkpoint)
    assert (issue.line, issue.column) == (4, 16)
    assert issue.message == "data.predictions: expected a mapping, got the string 'hello'"
    assert "predictions: {files: {<release>: <file>}" in issue.hint


def test_unreadable_values_are_reported_once(tmp_path):
    make_data(tmp_path)
    path = write(
        tmp_path,
        "checkpoints/tag.yml",
        """
        checkpoint: !foo x
        data: {records: {path: ../data/records.csv, id_column: m}, predictions: !bar {}}
        suites: s
    """,
    )
    issues = issues_of(path, load_checkpoint)
    assert [issue.line for issue in issues] == [1, 2]
    assert all("tag" in issue.message or "!" in issue.hint for issue in issues)


# -- the generic converter: a new section is a new model field ------------------------------


def test_a_new_section_reports_its_errors_through_the_generic_converter():
    """A section added to a model gets positions, did-you-mean and wording with no new code."""
    from typing import Literal

    from pydantic import field_validator

    from er_expectations.config.errors import IssueCollector
    from er_expectations.config.models import ConfigModel, validate_node
    from er_expectations.config.yamlnodes import compose_text

    class Drift(ConfigModel):
        threshold: float
        window: int = 3
        enabled: bool = True
        metric: Literal["psi", "kl"] = "psi"
        columns: list[str] = []

        @field_validator("threshold")
        @classmethod
        def _positive(cls, value: float) -> float:
            if value <= 0:
                raise ValueError(f"must be > 0, got {value}")
            return value

    class File(ConfigModel):
        section = "the test file"
        name: str
        drift: list[Drift] = []

    text = textwrap.dedent(
        """
        name: 3
        drift:
          - {threshold: -1, window: 2.5, enabled: yes, metric: kll, columns: a}
          - {treshold: 1}
        extra: 1
        """
    ).lstrip("\n")
    issues = IssueCollector("f.yml")
    root = compose_text(text, issues)
    assert validate_node(File, root, issues) is None
    assert [(i.line, i.column, i.message, i.hint) for i in issues.issues] == [
        (1, 7, "name: expected text, got the number 3", 'put it in quotes: "3"'),
        (3, 17, "drift[0].threshold: must be > 0, got -1.0", None),
        (3, 29, "drift[0].window: expected a whole number, got the number 2.5", None),
        (
            3,
            43,
            "drift[0].enabled: expected true or false, got the string 'yes'",
            "write true or false",
        ),
        (
            3,
            56,
            "drift[0].metric: expected one of 'psi' or 'kl', got the string 'kll'",
            "did you mean 'kl'?",
        ),
        (
            3,
            70,
            "drift[0].columns: expected a list, got the string 'a'",
            "write it as [<item>, ...] or one '- item' per line",
        ),
        (4, 6, "unknown key 'treshold' in drift[1]", "did you mean 'threshold'?"),
        (5, 1, "unknown key 'extra' in the test file", "expected one of 'drift' or 'name'"),
    ]  # 'threshold' of drift[1] is not also reported missing: 'treshold' meant it


def test_numbers_as_release_labels_are_taken_as_written(tmp_path):
    make_data(tmp_path)
    path = write(
        tmp_path,
        "checkpoints/numbers.yml",
        """
        checkpoint: numbers
        data:
          records: {path: ../data/records.csv, id_column: mention_id}
          predictions:
            files: {010: ../data/a.csv, 1.10: ../data/b.csv, 2022-06-30: ../data/a.csv}
            id_column: mention_id
            prediction_column: cluster
        releases: [010, 1.10, 2022-06-30]
        suites: [s]
    """,
    )
    checkpoint = load_checkpoint(path)
    assert checkpoint.releases == ("010", "1.10", "2022-06-30")
    assert [release.label for release in checkpoint.data.predictions.files] == list(
        checkpoint.releases
    )


def test_values_of_the_wrong_type_are_all_reported_where_written(tmp_path):
    """The GX models check the types; the loader words each error with the value as written,
    at its file:line:column, all at once (defaults no expectation uses included)."""
    path = write(tmp_path, "s.yml", """
        suite: s
        defaults:
          prediction_column: p
          reference_column: r
          ci_level: "high"
          n_boot: 1.5
          weights: {column: 5}
          severity: fatall
        expectations:
          - expectation: expect_matching_rate_to_be_between
            min_value: {$PARAMETER: lo}
          - expectation: expect_hill_number_to_be_between
            q: "2"
            min_value: 1
            strict_min: "true"
            max_value: {a: 1}
          - expectation: expect_subgroup_disparity_to_be_below
            group_column: g
            max_disparity: 0.1
            groups: {x: [true]}
          - expectation: expect_estimated_pairwise_recall_to_be_between
            min_value: 0.5
            weights: {column: ""}
            n_boot: 2000.0
    """)
    found = [(issue.line, issue.column, issue.message, issue.hint) for issue in issues_of(path)]
    assert found == [
        (5, 13, "ci_level: expected a number, got the string 'high'", "write a number, e.g. 0.9"),
        (6, 11, "n_boot: expected an integer, got the number 1.5", "write a whole number, e.g. 2"),
        (7, 21, "weights.column: expected text, got the number 5", 'put it in quotes: "5"'),
        (8, 13, "severity: expected one of 'critical', 'warning' or 'info', got the string 'fatall'",
         None),
        (13, 8, "q: expected a number, got the string '2'", "remove the quotes: q: 2"),
        (15, 17, "strict_min: expected true or false, got the string 'true'", "remove the quotes: strict_min: true"),
        (16, 16, "max_value: expected a number, got a mapping", "write a number, e.g. 0.9 or .inf"),
        (20, 13, "groups: group 'x' has True, which is not a value; give the values as text", None),
        (23, 23, "weights.column: expected text, got an empty string", "write the name of the weights column"),
        (24, 13, "n_boot: expected an integer, got the number 2000.0",
         "write it without the decimal point: n_boot: 2000"),
    ]


def test_the_gx_models_read_types_strictly_as_the_suite_files_do():
    """pydantic v1 alone would read "0.5" as a number, "on" as true and 5 as text."""
    from great_expectations.compatibility import pydantic

    from er_expectations.gx.expectations import (
        ExpectHillNumberToBeBetween,
        ExpectMatchingRateToBeBetween,
    )

    for kwargs, words in [({"min_value": "0.5"}, "expected a number, got '0.5'"),
                          ({"min_value": 0.5, "strict_min": "on"}, "expected true or false, got 'on'"),
                          ({"min_value": 0.5, "prediction_column": 5}, "expected text, got 5")]:
        with pytest.raises(pydantic.ValidationError, match=words):
            ExpectMatchingRateToBeBetween(**{"prediction_column": "p", **kwargs})
    # infinity may be written as text where a field allows it (JSON has no infinity)
    assert ExpectHillNumberToBeBetween(prediction_column="p", q="Infinity", min_value=1).q == "inf"


def test_subgroups_are_read_by_the_model_and_located(tmp_path):
    path = write(tmp_path, "s.yml", """
        suite: s
        defaults: {prediction_column: p, reference_column: r, group_column: g, max_disparity: 0.1}
        expectations:
          - expectation: expect_subgroup_disparity_to_be_below
            groups: 5
          - expectation: expect_subgroup_disparity_to_be_below
            groups: [a, [b]]
          - expectation: expect_subgroup_disparity_to_be_below
            groups: {x: a, y: [b, 2]}
    """)
    found = [(issue.line, issue.column, issue.message) for issue in issues_of(path)]
    assert found == [
        (5, 13, "groups: expected a mapping of group names to values or a list of values, got the number 5"),
        (7, 13, "groups: group name ['b'] is not a text; name every group"),
    ]
    path.write_text(path.read_text().replace("groups: 5", "groups: [a]").replace("[a, [b]]", "[a, b]"))
    assert [e.kwargs["groups"] for e in load_suite(path).expectations] == [["a"], ["a", "b"],
                                                                          {"x": "a", "y": ["b", 2]}]
