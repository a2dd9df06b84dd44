"""In a native GX checkpoint too, GX's stored ``statistics`` never count a skipped check as
successful once :class:`OfflineDataDocsAction` ran (issue 29 item 1, issue 30 item 7)."""

from __future__ import annotations

import json
import logging

import great_expectations as gx
import pandas as pd
from great_expectations.checkpoint import UpdateDataDocsAction
from great_expectations.core.run_identifier import RunIdentifier
from great_expectations.data_context.types.base import ProgressBarsConfig

import er_expectations.gx  # noqa: F401  (registers the expectations)
from er_expectations.gx.actions import OfflineDataDocsAction
from er_expectations.gx.expectations import (
    ExpectMatchingRateToBeBetween,
    ExpectStatisticChangeToBeBelow,
)


def test_a_native_checkpoint_stores_statistics_without_the_skipped_check(tmp_path):
    logging.getLogger("great_expectations").setLevel(logging.WARNING)
    ctx = gx.get_context(mode="file", project_root_dir=tmp_path)
    ctx.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    ctx.variables.save()
    batch = (ctx.data_sources.add_pandas("frames").add_dataframe_asset("records")
             .add_batch_definition_whole_dataframe("whole"))
    suite = ctx.suites.add(gx.ExpectationSuite(name="native_counts"))
    suite.add_expectation(ExpectMatchingRateToBeBetween(prediction_column="prediction", min_value=0.0))  # passes
    suite.add_expectation(ExpectMatchingRateToBeBetween(prediction_column="prediction", min_value=0.99,
                                                        severity="warning"))  # fails: 4 of 6 records matched
    # the baseline column is empty: no baseline release, so the change is skipped (on_skip: pass)
    suite.add_expectation(ExpectStatisticChangeToBeBelow(prediction_column="prediction",
                                                         statistic="average_cluster_size", max_change=1.0))
    vd = ctx.validation_definitions.add(gx.ValidationDefinition(name="vd", data=batch, suite=suite))
    checkpoint = ctx.checkpoints.add(gx.Checkpoint(
        name="cp", validation_definitions=[vd],
        actions=[UpdateDataDocsAction(name="docs"), OfflineDataDocsAction(name="offline")]))
    frame = pd.DataFrame({"rid": list("abcdef"), "prediction": ["p1", "p1", "p2", "p2", "p3", "p4"],
                          "prediction__baseline": [None] * 6})
    result = checkpoint.run(batch_parameters={"dataframe": frame}, run_id=RunIdentifier(run_name="r"))
    (identifier, validation) = next(iter(result.run_results.items()))
    assert [r.success for r in validation.results] == [True, False, True]  # GX's view: 2 of 3 succeeded
    assert validation.results[2].result["details"]["skipped"] is True
    expected = {"evaluated_expectations": 2, "successful_expectations": 1, "unsuccessful_expectations": 1,
                "success_percent": 50.0, "skipped_expectations": 1, "checks": 3}
    assert validation.statistics == expected  # in memory, for the actions after it
    stored = next((tmp_path / "gx" / "uncommitted" / "validations").rglob("*.json"))
    assert json.loads(stored.read_text())["statistics"] == expected
    assert validation.success is False  # GX's success is kept: a warning failed, a GX failure
