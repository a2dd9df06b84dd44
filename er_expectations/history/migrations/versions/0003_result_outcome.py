"""History store, schema version 3: each result's outcome (passed, failed, skipped or error; SPEC 13)
each release run's provenance (inputs with their hashes, versions, run id) and the project that
wrote it (issue 18).

A skipped check (not evaluated: no baseline, too few common records, too little history, no
testable group, an undefined metric) was stored with ``success`` true, as GX reports it. The
outcome column says what it was; rows written before it are filled in from ``error``,
``success`` and the ``skipped`` flag their details already carried.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("er_history_runs") as batch:
        batch.add_column(sa.Column("provenance_json", sa.Text, nullable=True))
        # the project that wrote the run: a shared store keeps each project's series apart
        # (rows written before have none and are read by every project, as before)
        batch.add_column(sa.Column("project", sa.String(255), nullable=True))
    # batch mode: SQLite cannot alter tables in place (a no-op wrapper on other databases)
    with op.batch_alter_table("er_history_results") as batch:
        batch.add_column(sa.Column("outcome", sa.String(16), nullable=True))
    results = sa.table("er_history_results", sa.column("outcome", sa.String), sa.column("error", sa.Text),
                       sa.column("success", sa.Boolean), sa.column("details_json", sa.Text))
    skipped = results.c.details_json.like('%"skipped": true%')
    op.execute(results.update().values(outcome=sa.case(
        (results.c.error.isnot(None), "error"),
        (sa.and_(results.c.success == sa.true(), skipped), "skipped"),
        (results.c.success == sa.true(), "passed"),
        else_="failed")))


def downgrade() -> None:
    with op.batch_alter_table("er_history_results") as batch:
        batch.drop_column("outcome")
    with op.batch_alter_table("er_history_runs") as batch:
        batch.drop_column("provenance_json")
        batch.drop_column("project")
