"""The tables of the history store as SQLAlchemy Core objects (what the queries use).

The database itself is created and upgraded only by the Alembic migrations shipped in
``migrations/versions`` (one file per schema version); this module must describe the
newest of them. ``tests/history/test_history_store.py`` checks that both agree.
"""

from __future__ import annotations

import sqlalchemy as sa

from er_expectations.history.reading import VERSION_TABLE

__all__ = ["ALERTS", "METADATA", "RESULTS", "RUNS", "VERSION_TABLE"]


METADATA = sa.MetaData()

#: One row per release validated by a run (a rerun of the release adds a new ``version``).
RUNS = sa.Table(
    "er_history_runs",
    METADATA,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("checkpoint", sa.String(255), nullable=False),
    sa.Column("release", sa.String(512), nullable=False),
    sa.Column("position", sa.Integer, nullable=True),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("success", sa.Boolean, nullable=False),
    sa.Column("gx_run_name", sa.String(255), nullable=True),
    sa.Column("gx_run_time", sa.DateTime(timezone=True), nullable=True),
    sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("tool_version", sa.String(32), nullable=True),
    sa.Column("provenance_json", sa.Text, nullable=True),  # schema version 0003: inputs, versions, run id
    sa.Column("project", sa.String(255), nullable=True),  # schema version 0003: who wrote it (shared stores)
    sa.UniqueConstraint("checkpoint", "release", "version", name="uq_er_history_runs_version"),
)

#: One row per expectation result of a release run.
RESULTS = sa.Table(
    "er_history_results",
    METADATA,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("run_id", sa.Integer, sa.ForeignKey("er_history_runs.id", ondelete="CASCADE"), nullable=False),
    sa.Column("suite", sa.String(255), nullable=False),
    sa.Column("expectation_type", sa.String(255), nullable=False),
    sa.Column("metric", sa.String(255), nullable=True),
    sa.Column("column_name", sa.String(255), nullable=True),
    sa.Column("kwargs_key", sa.String(64), nullable=False),
    sa.Column("kwargs_json", sa.Text, nullable=False),
    sa.Column("label", sa.String(255), nullable=False),
    sa.Column("severity", sa.String(16), nullable=False),
    sa.Column("success", sa.Boolean, nullable=False),
    sa.Column("error", sa.Text, nullable=True),
    sa.Column("value", sa.Float, nullable=True),
    sa.Column("estimate", sa.Float, nullable=True),
    sa.Column("std_error", sa.Float, nullable=True),
    sa.Column("ci_lower", sa.Float, nullable=True),
    sa.Column("ci_upper", sa.Float, nullable=True),
    sa.Column("ci_level", sa.Float, nullable=True),
    sa.Column("observed_text", sa.Text, nullable=True),
    sa.Column("details_json", sa.Text, nullable=True),  # schema version 0002
    sa.Column("outcome", sa.String(16), nullable=True),  # schema version 0003: passed/failed/skipped/error
)

#: One row per alert target of a checkpoint run (schema version 0004): sent, not needed or failed,
#: with the error of a failure (secrets masked, no local absolute paths).
ALERTS = sa.Table(
    "er_history_alerts",
    METADATA,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("checkpoint", sa.String(255), nullable=False),
    sa.Column("project", sa.String(255), nullable=True),
    sa.Column("gx_run_name", sa.String(255), nullable=True),
    sa.Column("gx_run_time", sa.DateTime(timezone=True), nullable=True),
    sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("position", sa.Integer, nullable=False),  # the target's place in the checkpoint file
    sa.Column("action", sa.String(64), nullable=False),
    sa.Column("target", sa.Text, nullable=False),
    sa.Column("outcome", sa.String(16), nullable=False),
    sa.Column("error", sa.Text, nullable=True),
    sa.Index("ix_er_history_alerts_run", "checkpoint", "gx_run_time"),
)
