"""Alembic environment of the history store (run by :func:`er_expectations.history.store`).

The store opens the connection itself (one transaction, locked against concurrent
upgrades) and hands it over in ``config.attributes["connection"]``; this script only
runs the migrations on it, keeping the schema version in the store's own version table
(so that a shared database can also hold another application's Alembic history).
"""

from __future__ import annotations

from alembic import context

connection = context.config.attributes.get("connection")
if connection is None:  # pragma: no cover - the store always passes its connection
    raise RuntimeError(
        "er-expectations history migrations run through er_expectations.history "
        "(HistoryStore), which passes an open connection; they are not run by the alembic CLI"
    )
context.configure(
    connection=connection,
    version_table=context.config.attributes["version_table"],
    transaction_per_migration=False,
)
with context.begin_transaction():
    context.run_migrations()
