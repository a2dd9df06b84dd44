"""History store, schema version 1: one row per release run, one row per expectation result.

Revision ID: 0001
Revises:
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "er_history_runs",
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
        sa.UniqueConstraint("checkpoint", "release", "version", name="uq_er_history_runs_version"),
    )
    op.create_index("ix_er_history_runs_release", "er_history_runs", ["checkpoint", "release"])
    op.create_table(
        "er_history_results",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.Integer,
                  sa.ForeignKey("er_history_runs.id", ondelete="CASCADE", name="fk_er_history_results_run"),
                  nullable=False),
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
    )
    op.create_index("ix_er_history_results_run", "er_history_results", ["run_id"])
    op.create_index("ix_er_history_results_expectation", "er_history_results",
                    ["expectation_type", "metric"])


def downgrade() -> None:
    op.drop_table("er_history_results")
    op.drop_table("er_history_runs")
