"""The Data Context of a checkpoint's actions through public GX API (gx/owner.py).

Run on the oldest and the newest supported GX by .ci/compat: each branch of the version shim
(``get_current_project`` or the data sources of the current project) is checked where it is
the one the installed GX takes.
"""

from __future__ import annotations

from typing import Any, Literal

import great_expectations as gx
import pandas as pd
import pytest
from great_expectations.checkpoint.actions import ValidationAction
from great_expectations.data_context import project_manager
from great_expectations.datasource.fluent.config_str import ConfigStr

from er_expectations.core.errors import InputError
from er_expectations.gx.owner import (
    ContextBound,
    bound_context_attr,
    config_value,
    context_of,
    current_context,
)

seen: list[Any] = []


class RecordContextAction(ContextBound, ValidationAction):
    """Records the context it would work in."""

    type: Literal["er_test_record_context"] = "er_test_record_context"
    _er_context: Any = bound_context_attr()

    def run(self, checkpoint_result: Any, action_context: Any = None) -> dict:
        seen.append(self.context_for(checkpoint_result))
        return {}


def _checkpoint(context: Any, name: str, action: ValidationAction) -> Any:
    suite = context.suites.add(gx.ExpectationSuite(
        name=f"{name}_suite", expectations=[gx.expectations.ExpectColumnToExist(column="a")]))
    batch = (context.data_sources.add_pandas(f"{name}_ds").add_dataframe_asset("frame")
             .add_batch_definition_whole_dataframe("whole"))
    definition = context.validation_definitions.add(
        gx.ValidationDefinition(name=f"{name}_vd", data=batch, suite=suite))
    return context.checkpoints.add(gx.Checkpoint(name=name, validation_definitions=[definition],
                                                 actions=[action]))


def test_an_action_in_a_checkpoint_works_in_the_context_that_owns_the_data(tmp_path):
    owner = gx.get_context(mode="file", project_root_dir=tmp_path / "owner")
    checkpoint = _checkpoint(owner, "cp", RecordContextAction(name="record"))
    frame = {"dataframe": pd.DataFrame({"a": [1, 2]})}
    seen.clear()
    result = checkpoint.run(batch_parameters=frame)
    assert result.success and [owner] == seen
    other = gx.get_context(mode="file", project_root_dir=tmp_path / "other")  # now the current one
    assert context_of(result) is owner and owner is not other
    if hasattr(project_manager, "get_current_project"):
        # newer GX runs a checkpoint in its own context while another is current: so do its actions
        seen.clear()
        assert checkpoint.run(batch_parameters=frame).success
        assert [owner] == seen
    else:  # GX 1.15 looks the checkpoint's suite and data source up in the current project only
        with pytest.raises(Exception, match="cp_suite|cp_ds"):
            checkpoint.run(batch_parameters=frame)


def test_a_bound_context_comes_first(tmp_path):
    """An action run by hand (as the runner sends its alerts) works in the context bound to it."""
    owner = gx.get_context(mode="file", project_root_dir=tmp_path / "owner")
    result = _checkpoint(owner, "cp", RecordContextAction(name="record")).run(
        batch_parameters={"dataframe": pd.DataFrame({"a": [1]})})
    bound = gx.get_context(mode="ephemeral")
    action = RecordContextAction(name="by_hand").bind(bound)
    seen.clear()
    action.run(checkpoint_result=result)
    assert seen == [bound]
    assert action.bind(None).bound_context is None
    action.run(checkpoint_result=result)
    assert seen[-1] is owner
    # the bound context is no field: a checkpoint saves the action without it
    assert action.bind(bound).dict() == {"type": "er_test_record_context", "name": "by_hand"}


def test_bind_refuses_what_is_not_a_context():
    with pytest.raises(InputError, match="context: expected a GX Data Context, got str"):
        RecordContextAction(name="record").bind("project/")


def test_without_an_owner_the_current_project_is_used(tmp_path):
    gx.get_context(mode="file", project_root_dir=tmp_path / "first")
    latest = gx.get_context(mode="file", project_root_dir=tmp_path / "second")
    if hasattr(project_manager, "get_current_project"):  # newer GX: the current project itself
        assert current_context() is latest
    else:  # GX 1.15: reached through a data source of the current project only
        with pytest.raises(InputError, match=r"gx\.get_context|action\.bind"):
            current_context()
        latest.data_sources.add_pandas("any")
        assert current_context() is latest
    assert context_of(None) is latest
    assert context_of(object()) is latest  # a result without a checkpoint


def test_config_value_substitutes_from_the_context(tmp_path, monkeypatch):
    monkeypatch.setenv("ER_TEST_OWNER_HOOK", "https://hooks.invalid/abc")
    context = gx.get_context(mode="file", project_root_dir=tmp_path)
    assert config_value(ConfigStr("${ER_TEST_OWNER_HOOK}/x"), context) == "https://hooks.invalid/abc/x"
    assert config_value("${ER_TEST_OWNER_HOOK}", context) == "${ER_TEST_OWNER_HOOK}"  # a plain str is kept
    assert config_value(None, context) is None
