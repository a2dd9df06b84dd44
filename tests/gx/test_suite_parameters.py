"""Suite parameters ``{"$PARAMETER": name}`` on every numeric threshold and level (issue 18 item 8).

GX core lets a bound be a suite parameter (``SuiteParameterDict``) that ``ValidationDefinition.run``
/ ``Checkpoint.run`` fill in from ``expectation_parameters``. Here every threshold and level of
our expectations takes one, the filled-in value gets the same checks as a written one, and a
parameter nobody supplies is an error, never a pass.
"""

from __future__ import annotations

import great_expectations as gx
import numpy as np
import pandas as pd
import pytest

import er_expectations as erx
import er_expectations.gx  # noqa: F401  (registers the expectations)
from er_expectations.gx import expectations as gxe
from er_expectations.gx.expectations.params import number_type

#: Number parameters that are not a threshold or a level: counts of work, seeds, a table's year,
#: the order q of a statistic (also text), rows shown, and the settings of the slice search (its
#: depth, the share of draws that search, how many slices are tested: they change what is
#: searched, not the limit a slice is held to). Every other number parameter takes a suite parameter.
NOT_THRESHOLDS = {"n_boot", "seed", "diff_examples", "ethnicity_year", "q", "examples", "max_depth", "split",
                  "max_slices"}


def _number_parameters():
    for name in gxe.__all__:
        cls = getattr(gxe, name)
        for field_name, field in cls.parameter_fields().items():
            if number_type(field) is not None and field_name not in NOT_THRESHOLDS:
                yield cls, field_name


NUMBER_PARAMETERS = sorted({(cls.__name__, p) for cls, p in _number_parameters()})


def test_the_thresholds_named_in_the_issue_are_covered():
    names = {p for _, p in NUMBER_PARAMETERS}
    assert {"max_change", "max_relative_change", "max_disparity", "ci_level", "k", "mostly",
            "min_value", "max_value", "min_similarity", "window", "min_history", "min_draws"} <= names


@pytest.mark.parametrize(("class_name", "parameter"), NUMBER_PARAMETERS)
def test_every_threshold_takes_a_suite_parameter(class_name, parameter):
    cls = getattr(gxe, class_name)
    field = cls.parameter_fields()[parameter]
    assert dict in _arms(field.outer_type_) or "dict" in repr(field.outer_type_), (
        f"{class_name}.{parameter} does not accept {{'$PARAMETER': name}}")


def _arms(annotation):
    import typing

    return typing.get_args(annotation) or (annotation,)


def _frame(seed: int = 0, n: int = 3000) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    true = rng.zipf(2.0, size=n // 2).clip(max=40)
    truth = np.repeat(np.arange(true.size), true)[:n]
    pred = np.where(rng.random(truth.size) < 0.9, truth, rng.integers(0, truth.max() + 1, truth.size))
    sampled = rng.choice(np.unique(truth), size=60, replace=False)
    return pd.DataFrame({"pred": [f"p{x}" for x in pred],
                         "ref": np.where(np.isin(truth, sampled), [f"t{x}" for x in truth], None)})


@pytest.fixture(scope="module")
def context():
    from great_expectations.data_context.types.base import ProgressBarsConfig

    ctx = gx.get_context(mode="ephemeral")
    ctx.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    return ctx


_COUNT = iter(range(10**6))


def _run(context, df, expectations, parameters):
    name = f"params{next(_COUNT)}"
    suite = context.suites.add(gx.ExpectationSuite(name=name, expectations=expectations))
    batch = (context.data_sources.add_pandas(f"ds_{name}").add_dataframe_asset("asset")
             .add_batch_definition_whole_dataframe("whole"))
    vd = context.validation_definitions.add(gx.ValidationDefinition(name=name, data=batch, suite=suite))
    return vd.run(batch_parameters={"dataframe": df}, expectation_parameters=parameters)


def _recall(**kwargs):
    return gxe.ExpectEstimatedPairwiseRecallToBeBetween(prediction_column="pred", reference_column="ref",
                                                        bound="interval", **kwargs)


def test_ci_level_from_a_parameter_is_the_level_itself(context):
    """The interval of ci_level {$PARAMETER: level} with level = 0.8 is erx.estimate's 80 % interval."""
    df = _frame()
    est = erx.estimate(df, prediction="pred", reference="ref", metrics=["pairwise_recall"],
                       ci_level=0.8).iloc[0]
    lower = float(est.ci_lower)
    at_80 = _run(context, df, [_recall(min_value=lower - 1e-9, ci_level={"$PARAMETER": "level"})],
                 {"level": 0.8}).results[0]
    assert at_80.success is True
    assert at_80.result["details"]["ci_lower"] == pytest.approx(lower)
    # a wider interval (99 %) reaches below the 80 % lower bound: the same check fails
    at_99 = _run(context, df, [_recall(min_value=lower - 1e-9, ci_level={"$PARAMETER": "level"})],
                 {"level": 0.99}).results[0]
    assert at_99.success is False and at_99.result["details"]["ci_lower"] < lower


def test_a_filled_in_value_gets_the_checks_of_a_written_one(context):
    """GX builds the expectation again from the filled-in values: 95 is refused as a level (with
    the hint a written 95 gets), the run raises instead of reporting anything."""
    check = _recall(min_value=0.1, ci_level={"$PARAMETER": "level"})
    with pytest.raises(Exception, match=r"ci_level\s+must be strictly between 0 and 1, got 95; write it as a "
                                        r"fraction, e\.g\. 0\.95"):
        _run(context, _frame(), [check], {"level": 95})


def test_a_missing_parameter_is_an_error_not_a_pass(context):
    check = _recall(min_value=0.0, ci_level={"$PARAMETER": "level"})
    with pytest.raises(Exception, match="No value found for \\$PARAMETER level"):
        _run(context, _frame(), [check], {"other": 0.9})


def test_the_suite_page_names_the_parameter():
    exp = gxe.ExpectStatisticChangeToBeBelow(prediction_column="pred", statistic="matching_rate",
                                             max_relative_change={"$PARAMETER": "drift_limit"})
    template, params = exp._sentence_for(exp.configuration.kwargs)
    text = template
    for key in sorted(params, key=len, reverse=True):
        text = text.replace(f"${key}", str(params[key]))
    assert "the suite parameter drift_limit" in text
    recall = _recall(min_value=0.5, ci_level={"$PARAMETER": "level"})
    template, params = recall._sentence_for(recall.configuration.kwargs)
    assert params["level"] == "the suite parameter level"
