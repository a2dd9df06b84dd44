"""History store, schema version 4: what became of each alert of a run (issue 18, item 12).

One row per alert target of a checkpoint run: the target as messages show it (secrets
masked), its outcome (``sent``, ``not needed`` or ``failed``) and, for a failure, the error
text with secrets masked and local absolute paths replaced. A run is the checkpoint, the
project and the GX run time its release runs carry (``er_history_runs.gx_run_time``).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "er_history_alerts",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("checkpoint", sa.String(255), nullable=False),
        sa.Column("project", sa.String(255), nullable=True),
        sa.Column("gx_run_name", sa.String(255), nullable=True),
        sa.Column("gx_run_time", sa.DateTime(timezone=True), nullable=True),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("action", sa.String(64), nullable=False),
        sa.Column("target", sa.Text, nullable=False),
        sa.Column("outcome", sa.String(16), nullable=False),
        sa.Column("error", sa.Text, nullable=True),
    )
    op.create_index("ix_er_history_alerts_run", "er_history_alerts", ["checkpoint", "gx_run_time"])


def downgrade() -> None:
    op.drop_index("ix_er_history_alerts_run", table_name="er_history_alerts")
    op.drop_table("er_history_alerts")
