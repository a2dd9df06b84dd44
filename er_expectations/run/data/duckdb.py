"""A checkpoint's data in DuckDB (``data.engine: duckdb``): a database file, or files queried in place.

The SQL source (:class:`~.sql.SqlSource`) on a ``duckdb:///`` URL, with what DuckDB adds:

* the database is a file, written ``connection: {url: duckdb:///path.db}`` or
  ``connection: {database: path.db}`` (a relative path is resolved against the checkpoint's
  folder; a missing file is an error, where DuckDB would create an empty database); with
  neither, an in-memory database;
* a table may be ``path:`` Parquet or CSV files (one file or a glob; ``.csv``, ``.tsv``,
  ``.csv.gz``: ``read_csv``, anything else ``read_parquet``), queried in place: the release's
  batch selects from ``read_parquet('...')`` itself, so GX's connection, and every check,
  reads the files; they never come into Python;
* each release's batch is aggregated by the DuckDB engine (``engines/duckdb``), which the
  engine registry picks for GX's batches on a DuckDB connection.

An in-memory database holds nothing GX's own connections would see: there GX does not copy a
release's batch into a temporary table (each check reads the files, which DuckDB scans fast).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from er_expectations.run.data.sql import SqlSource

if TYPE_CHECKING:  # pragma: no cover
    from er_expectations.config.checkpoint import EngineTable

#: file endings that DuckDB reads with ``read_csv`` (any other path: ``read_parquet``)
CSV_SUFFIXES = (".csv", ".tsv", ".csv.gz", ".tsv.gz", ".txt")
IN_MEMORY = "duckdb:///:memory:"
#: ``connect_timeout`` of an in-memory database (no ``data.connection``): the key's default
DEFAULT_TIMEOUT = 30.0


class DuckDbSource(SqlSource):
    """The tables in a DuckDB database file, or Parquet / CSV files DuckDB reads in place."""

    engine = "duckdb"

    @property
    def _connection(self) -> Any:
        return self.data.connection

    @property
    def written_url(self) -> str:
        """``connection.url``, ``duckdb:///`` and ``connection.database``, or the in-memory database."""
        connection = self._connection
        if connection is not None and connection.url is not None:
            return str(connection.url)
        if connection is not None and connection.database is not None:
            return f"duckdb:///{self._file(str(connection.database))}"
        return IN_MEMORY

    @property
    def connect_timeout(self) -> float:
        connection = self._connection
        return float(connection.connect_timeout) if connection is not None else DEFAULT_TIMEOUT

    @property
    def temp_table(self) -> bool:
        """GX copies each batch into a temporary table of a database file (``temp_table``,
        default true), never of an in-memory database (its connections do not share tables)."""
        if self.written_url == IN_MEMORY:
            return False
        connection = self._connection
        return connection is None or bool(connection.temp_table)

    def _file(self, text: str) -> Path:
        path = Path(text).expanduser()
        return path if path.is_absolute() else (Path(self.checkpoint.path).absolute().parent / path).resolve()

    def resolved(self, url: str) -> str:
        """A relative database path made absolute (against the checkpoint's folder); a missing
        database file is an issue at the key that names it."""
        sa = self.sa
        parsed = sa.engine.make_url(url)
        database = parsed.database or ""
        if database in ("", ":memory:"):
            return url
        path = self._file(database)
        if not path.is_file():
            key = ("data.connection.database" if self._connection is not None and self._connection.database is not None
                   else "data.connection.url")
            self.add(key, f"{key}: the DuckDB file {path} does not exist",
                     "check the path (a relative path is resolved against the checkpoint's folder)")
            self.issues.raise_if_any()
        return parsed.set(database=str(path)).render_as_string(hide_password=False)

    def open_table(self, role: str, config: EngineTable) -> tuple[Any, list[str]] | None:
        if config.path is None:
            return super().open_table(role, config)
        path = str(self._file(str(config.path)))  # a glob too: DuckDB expands it
        reader = "read_csv" if path.lower().endswith(CSV_SUFFIXES) else "read_parquet"
        literal = "'" + path.replace("'", "''") + "'"
        return self.open_query(role, f"SELECT * FROM {reader}({literal})", key="path",
                               refused=(f"DuckDB cannot read {path}",
                                        "check the path (a relative path is resolved against the checkpoint's "
                                        "folder; a glob such as data/*.parquet reads every file it matches)"))
