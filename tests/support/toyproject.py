"""The toy checkpoint project of the runner tests (``tests/run/test_runner.py`` and the
tests of the CLI, alerts, history and drift that run it).

Three releases of ten true entities of four records: "alpha" is perfect, "beta" merges
entities two by two (pairwise precision 3/7, fails), "gamma" is perfect but leaves one record
out. :func:`make_toy` writes the data, the suite and the checkpoint file.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pandas as pd

from support.paths import PV_DATA, REPO

__all__ = ["CHECKPOINT", "PV_DATA", "REPO", "SUITE", "make_toy", "snapshot"]

SUITE = """\
suite: toy_checks
description: checks of the toy releases
defaults:
  prediction_column: prediction
  reference_column: truth
  name_column: full_name
expectations:
  - expectation: expect_estimated_pairwise_precision_to_be_between
    min_value: 0.9
    note: "Pairs in one predicted cluster must be the same entity."
  - expectation: expect_estimated_pairwise_recall_to_be_between
    min_value: 0.8
  - expectation: expect_matching_rate_to_be_between
    min_value: 0.5
    max_value: 1.0
    severity: warning
  - expectation: expect_hill_number_to_be_between
    q: 2
    min_value: 1.0
    severity: info
  - expectation: expect_homonymy_rate_to_be_between
    max_value: 0.1
    severity: warning
"""

CHECKPOINT = """\
checkpoint: toy
project_dir: ../project
data:
  records: {path: ../data/records.parquet, id_column: rid}
  predictions:
    path: ../data/predictions.parquet
    id_column: rid
    columns: "pred_*"
  benchmark: {path: ../data/benchmark.parquet, id_column: rid, reference_column: truth}
  name: {columns: [first, last]}
releases: all
suites: [toy_checks]
suite_paths: [../suites]
actions:
  - build_data_docs
"""


def make_toy(root: Path, *, suite: str = SUITE, checkpoint: str = CHECKPOINT) -> Path:
    """A toy project under ``root``; returns the checkpoint file.

    Ten true entities of four records. Release alpha is perfect, beta merges entities two
    by two (pairwise precision 3/7, fails), gamma is perfect but leaves one record out.
    """
    data = root / "data"
    data.mkdir(parents=True)
    ids = [f"r{i:02d}" for i in range(40)]
    truth = [f"E{i // 4}" for i in range(40)]
    firsts = ["Ann", "Bo", "Cy", "Di", "Ed", "Fa", "Gu", "Ha", "Io", "Jo"]
    records = pd.DataFrame(
        {
            "rid": ids,
            "first": [firsts[i // 4] for i in range(40)],
            "last": [f"Name{i // 4}" for i in range(40)],
        }
    )
    predictions = pd.DataFrame(
        {
            "rid": ids,
            "pred_alpha": [f"a{i // 4}" for i in range(40)],
            "pred_beta": [f"b{i // 8}" for i in range(40)],
            "pred_gamma": [f"g{i // 4}" if i else None for i in range(40)],
        }
    )
    records.to_parquet(data / "records.parquet", index=False)
    predictions.to_parquet(data / "predictions.parquet", index=False)
    pd.DataFrame({"rid": ids, "truth": truth}).to_parquet(data / "benchmark.parquet", index=False)
    (root / "suites").mkdir()
    (root / "suites" / "toy.yml").write_text(suite, encoding="utf-8")
    (root / "checkpoints").mkdir()
    path = root / "checkpoints" / "toy.yml"
    path.write_text(checkpoint, encoding="utf-8")
    return path


def snapshot(folder: Path) -> dict[str, str] | None:
    """Every file and folder under ``folder`` with a hash of its content (None if absent)."""
    if not folder.exists():
        return None
    state: dict[str, str] = {}
    for item in sorted(folder.rglob("*")):
        key = item.relative_to(folder).as_posix()
        state[key] = hashlib.sha256(item.read_bytes()).hexdigest() if item.is_file() else "<dir>"
    return state
