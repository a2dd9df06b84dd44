"""History store, schema version 2: the details of each result (counts, design, notes) as JSON.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # batch mode: SQLite cannot alter tables in place (a no-op wrapper on other databases)
    with op.batch_alter_table("er_history_results") as batch:
        batch.add_column(sa.Column("details_json", sa.Text, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("er_history_results") as batch:
        batch.drop_column("details_json")
