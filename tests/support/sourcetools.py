"""Checkpoints whose tables live in a database or in Spark (``data.engine: sql | spark``).

A small synthetic warehouse (records, wide predictions with two releases, a benchmark) is
written to SQLite, PostgreSQL or Parquet files read by Spark; :func:`write_checkpoint` writes
the checkpoint file and a small suite next to it.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd

SUITE = """\
suite: warehouse_checks
defaults:
  prediction_column: prediction
  record_id_column: rid
  reference_column: truth
  name_column: full_name
expectations:
  - expectation: expect_average_cluster_size_to_be_between
    min_value: 1.0
  - expectation: expect_estimated_pairwise_precision_to_be_between
    min_value: 0.0
  - expectation: expect_homonymy_rate_to_be_between
    max_value: 1.0
    severity: warning
"""

CHECKPOINT = """\
checkpoint: warehouse
project_dir: ../project
data:
  engine: {engine}
{connection}  records: {{{records}, id_column: rid}}
  predictions: {{{predictions}, id_column: rid, columns: "pred_*", batch_column: prediction}}
  benchmark: {{{benchmark}, id_column: rid, reference_column: truth}}
  name: {{columns: [first, last]}}
releases: all
suites: [warehouse_checks]
suite_paths: [../suites]
actions:
  - build_data_docs
"""


def toy_tables(seed: int = 0, n: int = 300) -> dict[str, pd.DataFrame]:
    """records (rid, first, last), predictions (rid, pred_alpha, pred_beta), benchmark (rid, truth)."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, n // 4, n)
    rid = [f"r{i:04d}" for i in range(n)]
    first = pd.Series([f"F{t % 20}" for t in truth], dtype=object)
    first[rng.random(n) < 0.1] = None
    records = pd.DataFrame({"rid": rid, "first": first, "last": [f" L{t % 30}" for t in truth]})
    alpha = pd.Series([f"a{t}" for t in truth], dtype=object)
    alpha[rng.random(n) < 0.05] = None
    beta = pd.Series([f"b{t if rng.random() < 0.9 else t + 1}" for t in truth], dtype=object)
    predictions = pd.DataFrame({"rid": rid, "pred_alpha": alpha, "pred_beta": beta})
    sampled = rng.choice(np.unique(truth), size=15, replace=False)
    keep = np.isin(truth, sampled)
    benchmark = pd.DataFrame({"rid": np.array(rid)[keep], "truth": [f"t{t}" for t in truth[keep]]})
    return {"records": records, "predictions": predictions, "benchmark": benchmark}


def sqlite_warehouse(path: Path, tables: dict[str, pd.DataFrame]) -> str:
    """The tables written to a SQLite file; returns its URL."""
    import sqlalchemy as sa

    url = f"sqlite:///{path}"
    engine = sa.create_engine(url)
    for name, frame in tables.items():
        frame.to_sql(name, engine, index=False, if_exists="replace")
    engine.dispose()
    return url


def postgres_warehouse(url: str, tables: dict[str, pd.DataFrame]) -> dict[str, str]:
    """The tables written to PostgreSQL under fresh names; returns {role: table name}."""
    import sqlalchemy as sa

    engine = sa.create_engine(url)
    names = {}
    suffix = uuid.uuid4().hex[:8]
    for role, frame in tables.items():
        names[role] = f"{role}_{suffix}"
        frame.to_sql(names[role], engine, index=False)
    engine.dispose()
    return names


def write_checkpoint(root: Path, *, engine: str = "sql", url: str = "${WAREHOUSE_URL}",
                     records: str = "table: records", predictions: str = "table: predictions",
                     benchmark: str = "table: benchmark", suite: str = SUITE,
                     text: str | None = None) -> Path:
    """The checkpoint file (``root/checkpoints/warehouse.yml``) and its suite."""
    (root / "suites").mkdir(parents=True, exist_ok=True)
    (root / "suites" / "warehouse_checks.yml").write_text(suite, encoding="utf-8")
    (root / "checkpoints").mkdir(exist_ok=True)
    connection = f"  connection: {{url: \"{url}\"}}\n" if engine == "sql" else ""
    body = text if text is not None else CHECKPOINT.format(
        engine=engine, connection=connection, records=records, predictions=predictions, benchmark=benchmark)
    path = root / "checkpoints" / "warehouse.yml"
    path.write_text(body, encoding="utf-8")
    return path


def project_text(root: Path) -> str:
    """Every file of the GX project folder as text (to look for leaked secrets)."""
    return "\n".join(p.read_bytes().decode("utf-8", "replace")
                     for p in (root / "project").rglob("*") if p.is_file())


@contextmanager
def count_fetched_rows() -> Iterator[list[int]]:
    """Rows every SQLAlchemy result brings back to Python while inside (one count per result).

    The fetch strategies of SQLAlchemy's cursor results are wrapped, so whatever runs the
    query (our engines or GX's metrics) is counted.
    """
    from sqlalchemy.engine import cursor

    counts: dict[int, int] = {}
    alive: list = []  # the results counted, kept so that no later result gets the id of a freed one
    classes = [cursor.CursorFetchStrategy, cursor.BufferedRowCursorFetchStrategy,
               cursor.FullyBufferedCursorFetchStrategy]
    saved = {(cls, name): cls.__dict__[name] for cls in classes for name in ("fetchone", "fetchmany", "fetchall")
             if name in cls.__dict__}

    def wrap(original):
        def counted(self, result, *args, **kwargs):
            rows = original(self, result, *args, **kwargs)
            n = (0 if rows is None else 1) if original.__name__ == "fetchone" else len(rows)
            if id(result) not in counts:
                alive.append(result)
            counts[id(result)] = counts.get(id(result), 0) + n
            return rows
        return counted

    for (cls, name), original in saved.items():
        setattr(cls, name, wrap(original))
    fetched: list[int] = []
    try:
        yield fetched
    finally:
        for (cls, name), original in saved.items():
            setattr(cls, name, original)
        fetched.extend(counts.values())


@contextmanager
def count_statements(marker: str) -> Iterator[list[str]]:
    """The SQL statements run while inside whose text holds ``marker`` (any engine, any caller)."""
    import sqlalchemy as sa
    from sqlalchemy import event

    seen: list[str] = []

    def record(conn, cursor, statement, parameters, context, executemany):  # noqa: ARG001 - the event's signature
        if marker in statement:
            seen.append(statement)

    event.listen(sa.engine.Engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(sa.engine.Engine, "before_cursor_execute", record)
