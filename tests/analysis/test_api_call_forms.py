"""The Python API's manners (issue 30 item 9): options after the data are keyword-only, no column
name has a default, and the call forms of 0.1 keep working for one release with a
DeprecationWarning that names the new form."""

from __future__ import annotations

import inspect
import warnings

import pandas as pd
import pytest

import er_expectations as erx

#: every erx function whose data is a table: how many leading positional parameters are data
DATA = {"summarize": 1, "estimate": 1, "exact_metrics": 1, "cluster_errors": 1, "simulate": 1,
        "plan_sample_size": 1, "estimate_by_group": 1, "find_slices": 1, "error_audit": 1,
        "estimate_change": 1, "diff_releases": 1, "draw_sample": 1, "labelling_batch": 2,
        "benchmark_from_labels": 2, "check_labels": 2, "expected_error_probabilities": 1,
        "impute_ethnicity": 1, "topup_candidates": 2, "apply_topup": 3}


@pytest.mark.parametrize("name", sorted(DATA))
def test_options_after_the_data_are_keyword_only_without_demo_defaults(name):
    parameters = list(inspect.signature(getattr(erx, name)).parameters.values())
    data, options = parameters[:DATA[name]], parameters[DATA[name]:]
    assert all(p.kind is p.POSITIONAL_OR_KEYWORD for p in data), name
    assert all(p.kind is p.KEYWORD_ONLY for p in options), (name, [p.name for p in options if p.kind is not p.KEYWORD_ONLY])
    demo = {"inventor_id", "mention_id", "benchmark_id", "true_id"}
    assert not [p.name for p in options if p.default in demo], name


@pytest.fixture
def table():
    return pd.DataFrame({"inventor_id": ["a", "a", "b", "c"], "benchmark_id": ["t1", "t1", "t2", None],
                         "true_id": ["t1", "t1", "t2", "t3"]})


def test_the_old_positional_form_warns_naming_the_new_one_and_gives_the_same_result(table):
    new = erx.estimate(table, prediction="inventor_id", reference="benchmark_id", weights="uniform")
    with pytest.warns(DeprecationWarning, match=r"erx\.estimate\(\.\.\., prediction='inventor_id', "
                                                r"reference='benchmark_id', weights='uniform'\)") as caught:
        old = erx.estimate(table, "inventor_id", "benchmark_id", "uniform")
    assert caught[0].filename == __file__  # points at the caller's line
    pd.testing.assert_frame_equal(old, new)


def test_a_left_out_column_gets_the_old_demo_default_with_a_warning(table):
    with pytest.warns(DeprecationWarning, match=r"erx\.exact_metrics: prediction, reference has no default.*"
                                                r"prediction='inventor_id', reference='true_id'"):
        old = erx.exact_metrics(table)
    pd.testing.assert_series_equal(old, erx.exact_metrics(table, prediction="inventor_id", reference="true_id"))
    with pytest.warns(DeprecationWarning, match="cluster"):
        assert erx.summarize(table)["n_records"] == 4


def test_the_new_form_is_silent_and_misuse_is_a_clear_error(table):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        erx.summarize(table, cluster="inventor_id")
    with pytest.raises(TypeError, match="multiple values for prediction"):
        erx.estimate(table, "inventor_id", prediction="inventor_id", reference="benchmark_id")
    with pytest.raises(TypeError, match=r"takes 1 positional argument \(the data\)"):
        erx.summarize(table, "inventor_id", None, (0, 1), "extra")


def test_release_has_the_same_manners(table):
    """erx.Release: the prediction column is a required keyword; its methods' options keyword-only."""
    for method, data in ((erx.Release.__init__, 2), (erx.Release.summarize, 1), (erx.Release.estimate, 1)):
        options = list(inspect.signature(method).parameters.values())[data:]
        assert all(p.kind is p.KEYWORD_ONLY for p in options), method
        assert not [p.name for p in options if p.default in {"inventor_id", "mention_id", "benchmark_id", "true_id"}]
    new = erx.Release(table, prediction="inventor_id").estimate(reference="benchmark_id", weights="uniform")
    with pytest.warns(DeprecationWarning, match=r"erx\.Release: prediction has no default.*prediction='inventor_id'"):
        old_release = erx.Release(table)
    with pytest.warns(DeprecationWarning, match=r"Release\.estimate\(\.\.\., reference='benchmark_id', weights='uniform'\)"):
        old = old_release.estimate("benchmark_id", "uniform")
    pd.testing.assert_frame_equal(old, new)
    with pytest.warns(DeprecationWarning, match=r"Release\.summarize\(\.\.\., hill_orders=\(0, 1\)\)"):
        assert old_release.summarize((0, 1))["n_records"] == 4
