"""Suite parameters in YAML suites and their values (issue 18 item 8).

A suite file may write any numeric threshold or level as ``{$PARAMETER: name}``; ``run`` takes
the values from ``--param NAME=VALUE`` and ``--params FILE``. Every problem is a located
configuration error before anything runs: a parameter no suite uses, a used one without a
value, a value the parameter refuses (with the check a written value gets), a malformed name.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from er_expectations.config import ConfigError, load_suite
from er_expectations.config.parameters import (
    check_parameters,
    load_parameters_file,
    parameter_uses,
    parse_param_options,
)


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


SUITE = """
    suite: s
    defaults:
      prediction_column: p
      reference_column: r
    expectations:
      - expectation: expect_statistic_change_to_be_below
        statistic: matching_rate
        max_relative_change: {$PARAMETER: drift_limit}
      - expectation: expect_estimated_pairwise_recall_to_be_between
        min_value: {$PARAMETER: min_recall}
        ci_level: {$PARAMETER: level}
      - expectation: expect_estimated_pairwise_precision_to_be_between
        min_value: 0.8
        ci_level: {$PARAMETER: level}
"""


def test_a_suite_file_takes_suite_parameters_on_thresholds_and_levels(tmp_path):
    suite = load_suite(write(tmp_path, "s.yml", SUITE))
    kwargs = [cfg.kwargs for cfg in suite.expectations]
    assert kwargs[0]["max_relative_change"] == {"$PARAMETER": "drift_limit"}
    assert kwargs[1]["ci_level"] == {"$PARAMETER": "level"} and kwargs[2]["min_value"] == 0.8
    uses = parameter_uses([suite])
    assert [(u.name, u.parameter, u.line, u.column) for u in uses] == [
        ("drift_limit", "max_relative_change", 8, 26), ("min_recall", "min_value", 10, 16),
        ("level", "ci_level", 11, 15), ("level", "ci_level", 14, 15)]


def test_suite_parameters_where_they_cannot_go_are_located_errors(tmp_path):
    path = write(tmp_path, "s.yml", """
        suite: s
        expectations:
          - expectation: expect_hill_number_to_be_between
            prediction_column: {$PARAMETER: column}
            q: 2
            min_value: {$PARAMETER: "not a name"}
            max_value: {$PARAMETER: hi, other: 1}
    """)
    with pytest.raises(ConfigError) as caught:
        load_suite(path)
    found = [(i.line, i.column, i.message) for i in caught.value.issues]
    assert found == [
        (4, 24, "prediction_column: takes no suite parameter (only numeric thresholds and levels do)"),
        (6, 16, "min_value: 'not a name' is not a suite parameter name"),
        (7, 16, "max_value: a suite parameter is written {$PARAMETER: <name>} alone, got the extra key 'other'"),
    ]


def test_values_from_options_and_a_file(tmp_path):
    file = write(tmp_path, "p.yml", """
        drift_limit: 0.15
        level: 0.9
    """)
    from_file = load_parameters_file(file)
    assert {name: value.value for name, value in from_file.items()} == {"drift_limit": 0.15, "level": 0.9}
    assert from_file["level"].where == f"{file}:2:1"
    options = parse_param_options(["level=0.8", "min_recall=.5", "x=.inf", "flag=true"])
    assert {name: value.value for name, value in options.items()} == {
        "level": 0.8, "min_recall": 0.5, "x": float("inf"), "flag": True}
    assert options["level"].where == "--param level=0.8"
    json_file = tmp_path / "p.json"
    json_file.write_text('{"level": 0.99, "min_recall": 1}', encoding="utf-8")
    assert {n: v.value for n, v in load_parameters_file(json_file).items()} == {"level": 0.99, "min_recall": 1}


@pytest.mark.parametrize(("option", "message"), [
    ("level", "--param level: expected NAME=VALUE"),
    ("=0.5", "--param =0.5: expected NAME=VALUE"),
    ("le vel=0.5", "--param le vel=0.5: 'le vel' is not a suite parameter name"),
    ("level=", "--param level=: no value"),
    ("level=[1, 2]", "--param level=[1, 2]: the value must be a single number, true/false or text"),
])
def test_malformed_param_options(option, message):
    with pytest.raises(ConfigError) as caught:
        parse_param_options([option])
    (issue,) = caught.value.issues
    assert str(issue).split("; ")[0] == message


def test_a_parameters_file_must_be_a_mapping_of_scalars(tmp_path):
    with pytest.raises(ConfigError) as caught:
        load_parameters_file(write(tmp_path, "p.yml", "- 1\n- 2\n"))
    assert "a mapping of parameter names to values" in caught.value.issues[0].message
    with pytest.raises(ConfigError) as caught:
        load_parameters_file(write(tmp_path, "q.yml", "level: {a: 1}\n"))
    assert (caught.value.issues[0].line, caught.value.issues[0].message) == (
        1, "level: the value must be a single number, true/false or text")
    with pytest.raises(ConfigError) as caught:
        load_parameters_file(tmp_path / "missing.yml")
    assert "not found" in caught.value.issues[0].message


def test_unused_missing_and_refused_values_are_all_reported(tmp_path):
    path = write(tmp_path, "s.yml", SUITE)
    suite = load_suite(path)
    values = parse_param_options(["drift_limit=-0.1", "level=95", "min_recal=0.5"])
    issues = check_parameters([suite], values)
    found = [(Path(i.file).name if i.line else i.file, i.line, i.column, i.message, i.hint) for i in issues]
    assert found == [
        ("--param min_recal=0.5", None, None, "suite parameter 'min_recal' is used by no suite of the checkpoint",
         "did you mean 'min_recall'?"),
        ("s.yml", 8, 26, "max_relative_change: the value of suite parameter 'drift_limit' (--param "
         "drift_limit=-0.1) must be >= 0, got -0.1", None),
        ("s.yml", 10, 16, "min_value: suite parameter 'min_recall' has no value",
         "give it with --param min_recall=VALUE or in a --params file"),
        ("s.yml", 11, 15, "ci_level: the value of suite parameter 'level' (--param level=95) must be strictly "
         "between 0 and 1, got 95", "write it as a fraction, e.g. 0.95 for 95 %"),
        ("s.yml", 14, 15, "ci_level: the value of suite parameter 'level' (--param level=95) must be strictly "
         "between 0 and 1, got 95", "write it as a fraction, e.g. 0.95 for 95 %"),
    ]
    good = parse_param_options(["drift_limit=0.1", "level=0.95", "min_recall=0.5"])
    assert check_parameters([suite], good) == []


def test_a_text_value_for_a_number_is_refused(tmp_path):
    suite = load_suite(write(tmp_path, "s.yml", SUITE))
    values = parse_param_options(["drift_limit=abc", "level=0.9", "min_recall=0.5"])
    issues = check_parameters([suite], values)
    assert [i.message for i in issues] == [
        "max_relative_change: the value of suite parameter 'drift_limit' (--param drift_limit=abc) "
        "expected a number, got 'abc'"]
