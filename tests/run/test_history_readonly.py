"""A SQLite URL that opens read-only (``?mode=ro&uri=true``) never creates a folder or a
database (issue 18, item 16): a run, which records into the history, refuses it before
anything is written; reading an existing store read-only works."""

from __future__ import annotations

import io

import pytest
from support.toyproject import CHECKPOINT, make_toy, snapshot

from er_expectations.cli.common import EXIT_USAGE
from er_expectations.cli.main import main
from er_expectations.history.store import HistoryError, HistoryStore
from er_expectations.run.runner import run_checkpoint


def test_a_run_refuses_a_read_only_history_url_and_writes_nothing(tmp_path, capsys):
    path = make_toy(tmp_path, checkpoint=CHECKPOINT + 'history:\n  url: "sqlite:///../nested/deeper/h.sqlite?mode=ro&uri=true"\n')
    before = snapshot(tmp_path)
    code = main(["run", str(path), "--no-progress"])
    err = capsys.readouterr().err
    assert code == EXIT_USAGE, err
    assert "history.url" in err and "read-only" in err and "mode=ro" in err
    assert snapshot(tmp_path) == before  # no folder, no database, no project


@pytest.mark.parametrize("mode", ["ro", "rw"])
def test_opening_a_missing_store_with_mode_ro_or_rw_creates_nothing(tmp_path, mode):
    url = f"sqlite:///{tmp_path / 'a' / 'b' / 'h.sqlite'}?mode={mode}&uri=true"
    for create in (False, True):
        with pytest.raises(HistoryError, match="no history store at"):
            HistoryStore.open(url, create=create)
    assert list(tmp_path.iterdir()) == []


def test_an_existing_store_reads_read_only(tmp_path):
    path = make_toy(tmp_path)
    run_checkpoint(path, progress=False, out=io.StringIO())
    store_file = tmp_path / "project" / "er_history.sqlite"
    before = store_file.read_bytes()
    with HistoryStore.open(f"sqlite:///{store_file}?mode=ro&uri=true", create=False) as store:
        assert store.checkpoints() == ["toy"]
        assert len(store.results(checkpoint="toy")) == 15
    assert store_file.read_bytes() == before


def test_a_read_only_warehouse_url_reads_the_database_and_changes_nothing(tmp_path, capsys, monkeypatch):
    from support.sourcetools import sqlite_warehouse, toy_tables, write_checkpoint

    warehouse = tmp_path / "w.db"
    sqlite_warehouse(warehouse, toy_tables())
    before = warehouse.read_bytes()
    path = write_checkpoint(tmp_path / "a", url=f"sqlite:///{warehouse}?mode=ro&uri=true")
    code = main(["run", str(path), "--no-progress"])
    assert code in (0, 1), capsys.readouterr().err
    assert warehouse.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "w.db"]  # no 'w.db?mode=ro' beside it
    # a missing database is named, and no folder is made for it
    missing = write_checkpoint(tmp_path / "b", url=f"sqlite:///{tmp_path / 'x' / 'y' / 'w.db'}?mode=ro&uri=true")
    code = main(["run", str(missing), "--no-progress"])
    err = capsys.readouterr().err
    assert code == EXIT_USAGE, err
    assert "does not exist" in err and not (tmp_path / "x").exists()
