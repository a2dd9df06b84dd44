"""Helpers of the tests that validate frames with GX (one place for the boilerplate)."""

from __future__ import annotations

from typing import Any


def quiet_context() -> Any:
    """An ephemeral GX context without progress bars."""
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig

    ctx = gx.get_context(mode="ephemeral")
    ctx.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    return ctx


def validate_frame(context: Any, df: Any, expectations: list, name: str) -> Any:
    """Validate ``df`` with a new suite ``name`` of ``expectations`` (``batch.validate``)."""
    import great_expectations as gx

    suite = context.suites.add(gx.ExpectationSuite(name=name, expectations=expectations))
    ds = context.data_sources.add_pandas(f"ds_{name}")
    batch_def = ds.add_dataframe_asset("asset").add_batch_definition_whole_dataframe("whole")
    return batch_def.get_batch(batch_parameters={"dataframe": df}).validate(suite)
