"""The DuckDB engine: the SQL engine's release with the queries DuckDB plans best (one folder,
one registry line; the release pair and labelling rows are the SQL engine's)."""
