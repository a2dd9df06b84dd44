"""Atomic writes and their temporary files (issue 18, item 14): only what a run created is deleted."""

from __future__ import annotations

import os

import pytest

from er_expectations.core.io import atomic_write, remove_stale_temporaries


def test_only_the_runs_own_temporary_files_are_removed(tmp_path):
    users = [tmp_path / ".x.abcdefgh.tmp", tmp_path / "sub" / ".notes.12345678.tmp", tmp_path / "y.tmp"]
    for path in users:
        path.parent.mkdir(exist_ok=True)
        path.write_text("mine")
    ours = tmp_path / "sub" / ".page.html.er-expectations-ab_12CD3.tmp"
    ours.write_text("half")
    assert remove_stale_temporaries(tmp_path) == [ours]
    assert all(path.read_text() == "mine" for path in users)


def test_a_failed_write_leaves_nothing_and_keeps_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "result.json"
    target.write_text("old")

    def full_disk(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(OSError):
        atomic_write(target, "new")
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["result.json"]


def test_temporary_files_carry_the_mark(tmp_path, monkeypatch):
    seen = []
    real = os.replace

    def spy(src, dst):
        seen.append(os.path.basename(src))
        return real(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    atomic_write(tmp_path / "a.txt", "x")
    (name,) = seen
    assert name.startswith(".a.txt.er-expectations-") and name.endswith(".tmp")
    assert remove_stale_temporaries(tmp_path) == []
