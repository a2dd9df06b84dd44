"""The GX objects a run stores and runs (``run/stored.py``, issue 32 item 4): fresh without
reading the store back, each result written once, stored as GX's own classes store them."""

from __future__ import annotations

import io
import json

import great_expectations as gx
import pytest
from great_expectations.checkpoint.checkpoint import Checkpoint
from great_expectations.core.validation_definition import ValidationDefinition
from great_expectations.data_context.store.validation_results_store import ValidationResultsStore
from support.toyproject import make_toy

import er_expectations  # noqa: F401  registers the expectations before any context use
from er_expectations.run.provenance import PROVENANCE_KEY
from er_expectations.run.runner import run_checkpoint
from er_expectations.run.stored import StoredCheckpoint, StoredDefinition


def _counting(monkeypatch, cls, name):
    calls = []
    original = getattr(cls, name)

    def counted(self, *args, **kwargs):
        calls.append(getattr(self, "name", None))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(cls, name, counted)
    return calls


@pytest.mark.parametrize("runs", [1, 2], ids=["fresh", "rerun"])
def test_each_result_written_once_and_no_freshness_read_back(tmp_path, monkeypatch, runs):
    path = make_toy(tmp_path)
    for _ in range(runs - 1):
        run_checkpoint(path, progress=False, out=io.StringIO())
    writes = _counting(monkeypatch, ValidationResultsStore, "set")
    definition_checks = _counting(monkeypatch, ValidationDefinition, "is_fresh")
    checkpoint_checks = _counting(monkeypatch, Checkpoint, "is_fresh")
    report = run_checkpoint(path, progress=False, out=io.StringIO())
    # three releases, one suite: three results, each written once (with its provenance)
    assert len(writes) == 3
    assert definition_checks == [] and checkpoint_checks == []  # GX's checks read the store back
    files = [f for r in report.releases for f in r.result_files]
    assert len(files) == 3
    for file in files:
        stored = json.loads(file.read_text(encoding="utf-8"))
        assert PROVENANCE_KEY in stored["meta"]
        assert stored["statistics"]["evaluated_expectations"] == 5


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("stored")
    run_checkpoint(make_toy(root), progress=False, out=io.StringIO())
    return gx.get_context(mode="file", project_root_dir=str(root / "project"))


def _parts(ctx):
    suite = ctx.suites.get("toy_checks")
    batch = ctx.data_sources.get("toy").get_asset("releases").get_batch_definition("release_alpha")
    return suite, batch


def test_stored_as_gx_stores_its_own_classes(project):
    suite, batch = _parts(project)
    theirs = project.validation_definitions.get("toy__alpha__toy_checks")
    ours = StoredDefinition(name=theirs.name, data=batch, suite=suite, id=theirs.id)
    store = project.validation_definition_store
    assert store.serialize(ours) == store.serialize(theirs)
    checkpoints = project.checkpoint_store
    assert checkpoints.serialize(StoredCheckpoint(name="c", validation_definitions=[ours], id="1")) == \
        checkpoints.serialize(Checkpoint(name="c", validation_definitions=[theirs], id="1"))


def test_only_a_marked_unchanged_object_skips_gx_checks(project, monkeypatch):
    suite, batch = _parts(project)
    definition = StoredDefinition(name="toy__never_stored", data=batch, suite=suite)
    assert not definition.is_fresh().success  # not stored, not marked: GX says so
    project.validation_definitions.add(definition)
    checks = _counting(monkeypatch, ValidationDefinition, "is_fresh")
    definition.mark_stored()
    assert definition.is_fresh().success and checks == []
    definition.name = "toy__renamed"  # changed after it was stored: GX checks it again
    assert not definition.is_fresh().success and checks == ["toy__renamed"]
    checkpoint = StoredCheckpoint(name="toy__stored_checkpoint", validation_definitions=[definition])
    assert not checkpoint.is_fresh().success
    checkpoint.mark_stored()
    assert checkpoint.is_fresh().success
    checkpoint.result_format = {"result_format": "COMPLETE"}
    assert not checkpoint.is_fresh().success
