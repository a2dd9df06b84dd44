"""Bad input raises erx.InputError (a ValueError) whose message names the
offending column or parameter; benchmark records outside a release are not an
error but are counted in attrs["records_set_aside"]."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest


def good_frame():
    return pd.DataFrame(
        {
            "rec_key": ["r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7"],
            "pred_col": ["a", "a", "b", "b", "c", "d", "d", None],
            "bench_col": ["T1", "T1", "T1", "T2", None, "T3", "T3", "T3"],
            "weight_col": [0.5, 0.5, 0.5, 2.0, np.nan, 1.0, 1.0, 1.0],
            "draws_col": pd.Series([1, 1, 1, 2, None, 3, 3, 3], dtype="Int64"),
            "name_col": ["ann", "ann", "bo", "bo", "cy", "di", None, "di"],
        }
    )


ARGS = {"prediction": "pred_col", "reference": "bench_col"}


def assert_input_error(erx, excinfo, *needles):
    err = excinfo.value
    assert isinstance(err, erx.InputError)
    assert isinstance(err, ValueError)
    message = str(err)
    assert any(needle in message for needle in needles), (needles, message)
    return message


def test_input_error_is_value_error(erx):
    assert issubclass(erx.InputError, ValueError)


def test_good_frame_is_accepted(erx):
    df = good_frame()
    res = erx.estimate(
        df, weights="weight_col", draws="draws_col", name="name_col", record_id="rec_key", **ARGS
    )
    assert int(res.loc["pairwise_precision", "clusters"]) == 3
    assert int(res.loc["pairwise_precision", "draws"]) == 1 + 2 + 3
    erx.summarize(df, cluster="pred_col", name="name_col", record_id="rec_key")
    erx.exact_metrics(df.assign(bench_col=df["bench_col"].fillna("T9")), **ARGS)


# ---------------------------------------------------------------------------
# missing columns
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "param,value",
    [
        ("prediction", "no_such_pred"),
        ("reference", "no_such_ref"),
        ("weights", "no_such_w"),
        ("draws", "no_such_draws"),
        ("name", "no_such_name"),
        ("record_id", "no_such_id"),
    ],
)
def test_estimate_missing_column(erx, param, value):
    kwargs = dict(ARGS)
    kwargs[param] = value
    with pytest.raises(erx.InputError) as excinfo:
        erx.estimate(good_frame(), **kwargs)
    assert_input_error(erx, excinfo, value)


@pytest.mark.parametrize(
    "kwargs,needle",
    [
        ({"cluster": "no_such_cluster"}, "no_such_cluster"),
        ({"cluster": "pred_col", "name": "no_such_name"}, "no_such_name"),
        ({"cluster": "pred_col", "record_id": "no_such_id"}, "no_such_id"),
    ],
)
def test_summarize_missing_column(erx, kwargs, needle):
    with pytest.raises(erx.InputError) as excinfo:
        erx.summarize(good_frame(), **kwargs)
    assert_input_error(erx, excinfo, needle)


@pytest.mark.parametrize("param", ["prediction", "reference"])
def test_exact_metrics_missing_column(erx, param):
    kwargs = dict(ARGS)
    kwargs[param] = "nowhere_col"
    with pytest.raises(erx.InputError) as excinfo:
        erx.exact_metrics(good_frame(), **kwargs)
    assert_input_error(erx, excinfo, "nowhere_col")


# ---------------------------------------------------------------------------
# duplicate record ids
# ---------------------------------------------------------------------------


def test_estimate_duplicate_record_ids(erx):
    df = good_frame()
    df.loc[3, "rec_key"] = "r0"
    with pytest.raises(erx.InputError) as excinfo:
        erx.estimate(df, record_id="rec_key", **ARGS)
    assert_input_error(erx, excinfo, "rec_key")


def test_summarize_duplicate_record_ids(erx):
    df = good_frame()
    df.loc[5, "rec_key"] = "r4"
    with pytest.raises(erx.InputError) as excinfo:
        erx.summarize(df, cluster="pred_col", record_id="rec_key")
    assert_input_error(erx, excinfo, "rec_key")


def test_duplicate_ids_without_record_id_are_not_checked(erx):
    df = good_frame()
    df.loc[3, "rec_key"] = "r0"
    erx.estimate(df, **ARGS)  # no record_id given: nothing to check


# ---------------------------------------------------------------------------
# weights
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [0.0, -1.0, np.nan, np.inf, -np.inf])
def test_bad_weight_value(erx, bad):
    df = good_frame()
    df.loc[[0, 1, 2], "weight_col"] = bad  # the whole cluster T1, inside the release
    with pytest.raises(erx.InputError) as excinfo:
        erx.estimate(df, weights="weight_col", **ARGS)
    assert_input_error(erx, excinfo, "weight_col")


def test_weight_varying_within_cluster(erx):
    df = good_frame()
    df.loc[1, "weight_col"] = 0.75
    with pytest.raises(erx.InputError) as excinfo:
        erx.estimate(df, weights="weight_col", **ARGS)
    assert_input_error(erx, excinfo, "weight_col")


def test_weight_string_column(erx):
    df = good_frame().assign(weight_col=lambda d: d["weight_col"].astype(str))
    df.loc[[0, 1, 2], "weight_col"] = "heavy"
    with pytest.raises(erx.InputError) as excinfo:
        erx.estimate(df, weights="weight_col", **ARGS)
    assert_input_error(erx, excinfo, "weight_col")


# ---------------------------------------------------------------------------
# draws
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [0, -2, 1.5, 2.25])
def test_bad_draws(erx, bad):
    df = good_frame()
    draws = df["draws_col"].astype("float64")
    draws[[3]] = bad  # cluster T2 (one record, in the release)
    df["draws_col"] = draws
    with pytest.raises(erx.InputError) as excinfo:
        erx.estimate(df, draws="draws_col", **ARGS)
    assert_input_error(erx, excinfo, "draws_col")


def test_draws_as_integer_valued_floats_are_fine(erx):
    df = good_frame()
    df["draws_col"] = df["draws_col"].astype("float64")
    res = erx.estimate(df, draws="draws_col", **ARGS)
    assert int(res.loc["pairwise_recall", "draws"]) == 6


def test_draws_null_on_benchmark_record(erx):
    df = good_frame()
    df.loc[0, "draws_col"] = None  # r0 belongs to T1, inside the release
    with pytest.raises(erx.InputError) as excinfo:
        erx.estimate(df, draws="draws_col", **ARGS)
    assert_input_error(erx, excinfo, "draws_col")


def test_draws_varying_within_cluster(erx):
    df = good_frame()
    df.loc[0, "draws_col"] = 2
    with pytest.raises(erx.InputError) as excinfo:
        erx.estimate(df, draws="draws_col", **ARGS)
    assert_input_error(erx, excinfo, "draws_col")


# ---------------------------------------------------------------------------
# empty benchmark
# ---------------------------------------------------------------------------


def test_empty_benchmark_after_restriction(erx):
    df = good_frame()
    df.loc[df["bench_col"].notna(), "pred_col"] = None  # no benchmark record in the release
    with pytest.raises(erx.InputError) as excinfo:
        erx.estimate(df, **ARGS)
    assert_input_error(erx, excinfo, "bench_col", "benchmark", "reference")


def test_empty_table(erx):
    with pytest.raises(erx.InputError):
        erx.estimate(good_frame().iloc[:0], **ARGS)


def test_no_benchmark_at_all(erx):
    df = good_frame().assign(bench_col=None)
    with pytest.raises(erx.InputError) as excinfo:
        erx.estimate(df, **ARGS)
    assert_input_error(erx, excinfo, "bench_col", "benchmark", "reference")


# ---------------------------------------------------------------------------
# parameters
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("metrics", [["pairwise_precision", "pairwise_accuracy"], ["f1"]])
def test_unknown_metric(erx, metrics):
    with pytest.raises(erx.InputError) as excinfo:
        erx.estimate(good_frame(), metrics=metrics, **ARGS)
    assert_input_error(erx, excinfo, metrics[-1])


def test_known_metric_subset(erx):
    res = erx.estimate(good_frame(), metrics=["pairwise_recall", "b_cubed_f"], **ARGS)
    assert set(res.index) == {"pairwise_recall", "b_cubed_f"}


@pytest.mark.parametrize("beta", [0, -1.0, 0.0])
def test_bad_beta(erx, beta):
    with pytest.raises(erx.InputError) as excinfo:
        erx.estimate(good_frame(), beta=beta, **ARGS)
    assert_input_error(erx, excinfo, "beta")
    with pytest.raises(erx.InputError) as excinfo:
        erx.exact_metrics(good_frame().assign(bench_col="T"), beta=beta, **ARGS)
    assert_input_error(erx, excinfo, "beta")


@pytest.mark.parametrize("beta", [math.nan, math.inf])
def test_non_finite_beta(erx, beta):
    with pytest.raises(erx.InputError) as excinfo:
        erx.estimate(good_frame(), beta=beta, **ARGS)
    assert_input_error(erx, excinfo, "beta")


@pytest.mark.parametrize("level", [0, 1, 1.5, -0.1, math.nan])
def test_bad_ci_level(erx, level):
    with pytest.raises(erx.InputError) as excinfo:
        erx.estimate(good_frame(), ci_level=level, **ARGS)
    assert_input_error(erx, excinfo, "ci_level")


@pytest.mark.parametrize("orders", [(-1,), (0, 1, -0.5), (-math.inf,), (math.nan,)])
def test_bad_hill_order(erx, orders):
    with pytest.raises(erx.InputError) as excinfo:
        erx.summarize(good_frame(), cluster="pred_col", hill_orders=orders)
    assert_input_error(erx, excinfo, "hill")


@pytest.mark.parametrize("weights", ["size", "Uniform", ""])
def test_unknown_weights_design(erx, weights):
    with pytest.raises(erx.InputError) as excinfo:
        erx.estimate(good_frame(), weights=weights, **ARGS)
    assert_input_error(erx, excinfo, "weights", *([weights] if weights else []))


# ---------------------------------------------------------------------------
# not an error: benchmark records outside the release
# ---------------------------------------------------------------------------


def test_benchmark_records_outside_release_are_set_aside(erx):
    df = good_frame()
    res = erx.estimate(df, **ARGS)
    assert res.attrs["records_set_aside"] == 1  # r7 (T3) has no prediction
    df.loc[[0, 3], "pred_col"] = None  # T1 loses one record, T2 leaves the release
    res = erx.estimate(df, **ARGS)
    assert res.attrs["records_set_aside"] == 3
    assert int(res.loc["pairwise_precision", "clusters"]) == 2  # T1 and T3 remain


def test_message_explains_fix(erx):
    """A message must say how to fix the input, not only what is wrong."""
    with pytest.raises(erx.InputError) as excinfo:
        erx.estimate(good_frame(), prediction="missing_pred", reference="bench_col")
    message = str(excinfo.value)
    assert "missing_pred" in message
    # a helpful message lists what is there or what to pass instead
    assert any(col in message for col in good_frame().columns) or len(message) > 40
