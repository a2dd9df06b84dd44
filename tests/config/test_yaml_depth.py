"""A YAML file nested tens of thousands of levels deep is a located error, not a
RecursionError (issue 18, item 16); files of normal depth read as before."""

from __future__ import annotations

import pytest

from er_expectations.cli.common import EXIT_USAGE
from er_expectations.cli.main import main


@pytest.mark.parametrize("style", ["flow", "block"])
@pytest.mark.parametrize("depth", [80, 50_000])
def test_a_deeply_nested_suite_is_refused_with_its_file(tmp_path, capsys, style, depth):
    path = tmp_path / "suite.yml"
    if style == "flow":
        body = "suite: s\nexpectations: " + "[" * depth + "]" * depth + "\n"
    else:
        levels = min(depth, 700)  # block style: two spaces a level (700 levels: 0.5 MB, under the 1 MB cap)
        body = "suite: s\nexpectations:\n" + "".join(" " * (2 * i) + "-" + ("\n" if i < levels - 1 else " x\n")
                                                      for i in range(levels))
    path.write_text(body, encoding="utf-8")
    code = main(["validate", str(path)])
    err = capsys.readouterr().err
    assert code == EXIT_USAGE, err
    assert str(path) in err and "nests more than 64 levels" in err
    assert "Traceback" not in err and "RecursionError" not in err


def test_a_suite_of_normal_depth_is_not_affected(tmp_path, capsys):
    path = tmp_path / "suite.yml"
    path.write_text("suite: s\nexpectations:\n  - expectation: expect_average_cluster_size_to_be_between\n"
                    "    prediction_column: p\n    min_value: 1\n", encoding="utf-8")
    assert main(["validate", str(path)]) == 0, capsys.readouterr().err
