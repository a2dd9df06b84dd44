"""The engines: which folder aggregates a batch held by which engine.

One line per engine. A line names the engine (the ``data.engine`` of a checkpoint file), the
class of the Great Expectations execution engine whose batches it aggregates, and where its
aggregators are: the release (every statistic of SPEC 3-7 from one pass over the batch), the
release pair (the drift sums of SPEC 10) and, where the batch may hold the whole release, the
labelling rows of SPEC 9. The classes are named by dotted path and imported on first use, so
that no engine's library (SQLAlchemy, pyspark) is imported for another engine.

Engines that serve the same GX execution engine are told apart by the SQLAlchemy dialect of its
connection (``dialect``): GX's ``SqlAlchemyExecutionEngine`` on a ``duckdb:///`` URL is served by
the DuckDB engine, on any other database by the SQL engine (the line without a dialect).

Adding an engine is one folder under ``engines/`` and one line here
(``docs/dev/architecture.md``).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from er_expectations.core.errors import InputError

__all__ = ["ENGINES", "CheckpointKeys", "EngineEntry", "engine_for", "engine_named", "engines_with"]


@dataclass(frozen=True, slots=True)
class CheckpointKeys:
    """What the ``data`` section of a checkpoint file may hold for one engine (checked by
    :class:`er_expectations.config.data.EngineData` from these fields, with no engine named).

    ``connection``: ``"url"`` (``connection.url`` is required), ``"file"`` (``connection.url``
    or ``connection.database``, a database file, or neither: an in-memory database whose tables
    are all ``path`` files) or ``None`` (no ``connection``: the engine reads its tables itself);
    ``url_scheme``: the scheme a literal ``connection.url`` must have (``None``: any);
    ``database``: what messages call that database; ``paths``: whether a table may be ``path``
    files read in place; ``session``: the key of the engine's own session settings (``spark``),
    refused for the other engines.
    """

    connection: str | None = None
    url_scheme: str | None = None
    database: str = "database"
    paths: bool = False
    session: str | None = None


@dataclass(frozen=True, slots=True)
class EngineEntry:
    """One engine: its name, the GX execution engine it serves and its aggregators."""

    #: the name of ``data.engine`` in a checkpoint file
    name: str
    #: the class name of the GX execution engine whose batches it aggregates
    gx_engine: str
    #: ``module:Class`` of the release aggregator (``Class.from_batch(table, connection=...)``)
    release: str
    #: ``module:Class`` of the release pair (current and baseline release of one batch)
    pair: str
    #: ``module:Class`` of the labelling rows fetched from a batch holding the whole release,
    #: or ``None`` when the batch is the labelling table itself (pandas)
    labelling: str | None = None
    #: the attribute of the GX execution engine that holds the connection the release needs
    connection: str | None = None
    #: the SQLAlchemy dialect of that connection this engine serves (``None``: any dialect the
    #: engines with a dialect do not claim)
    dialect: str | None = None
    #: what a checkpoint's ``data`` section holds for this engine (``None``: files, the
    #: ``DataSources`` form of ``data``)
    checkpoint: CheckpointKeys | None = None

    def serves(self, execution_engine: Any) -> bool:
        """Whether this engine aggregates the batches of ``execution_engine`` (by the class of
        the GX execution engine, or a class it derives from, and the dialect when one is set)."""
        if not any(cls.__name__ == self.gx_engine for cls in type(execution_engine).__mro__):
            return False
        if self.dialect is None:
            return True
        bind = getattr(execution_engine, self.connection) if self.connection else None
        return getattr(getattr(bind, "dialect", None), "name", None) == self.dialect

    def load(self, part: str) -> Any:
        """The class named by ``part`` (``release``, ``pair`` or ``labelling``), imported now."""
        target = getattr(self, part)
        if target is None:
            raise InputError(f"the {self.name} engine has no {part} aggregator")
        module, _, name = target.partition(":")
        return getattr(importlib.import_module(module), name)

    def release_of(self, table: Any, *, execution_engine: Any = None, prediction: str,
                   record_id: str | None = None) -> Any:
        """The release aggregator of a batch's ``table`` (a DataFrame or a selectable)."""
        connection = getattr(execution_engine, self.connection) if self.connection else None
        return self.load("release").from_batch(table, connection=connection, prediction=prediction,
                                               record_id=record_id)


#: Every engine, by name.
ENGINES: dict[str, EngineEntry] = {
    entry.name: entry
    for entry in (
        EngineEntry("pandas", "PandasExecutionEngine",
                    release="er_expectations.engines.pandas.release:PandasRelease",
                    pair="er_expectations.engines.pandas.pairs:ReleasePair"),
        EngineEntry("sql", "SqlAlchemyExecutionEngine",
                    release="er_expectations.engines.sql.release:SqlRelease",
                    pair="er_expectations.engines.sql.pairs:SqlReleasePair",
                    labelling="er_expectations.engines.sql.labelling:SqlLabelling",
                    connection="engine", checkpoint=CheckpointKeys(connection="url")),
        EngineEntry("duckdb", "SqlAlchemyExecutionEngine",
                    release="er_expectations.engines.duckdb.release:DuckDbRelease",
                    pair="er_expectations.engines.sql.pairs:SqlReleasePair",
                    labelling="er_expectations.engines.sql.labelling:SqlLabelling",
                    connection="engine", dialect="duckdb",
                    checkpoint=CheckpointKeys(connection="file", url_scheme="duckdb", database="DuckDB",
                                              paths=True)),
        EngineEntry("spark", "SparkDFExecutionEngine",
                    release="er_expectations.engines.spark.release:SparkRelease",
                    pair="er_expectations.engines.spark.pairs:SparkReleasePair",
                    labelling="er_expectations.engines.spark.labelling:SparkLabelling",
                    checkpoint=CheckpointKeys(paths=True, session="spark")),
    )
}


def engines_with(test: Any) -> list[str]:
    """The names of the engines of checkpoint tables whose :class:`CheckpointKeys` pass ``test``."""
    return [e.name for e in ENGINES.values() if e.checkpoint is not None and test(e.checkpoint)]


def engine_named(name: str) -> EngineEntry:
    """The engine called ``name`` (``pandas``, ``sql``, ``duckdb`` or ``spark``)."""
    try:
        return ENGINES[name]
    except KeyError:
        raise InputError(f"unknown engine {name!r}; the engines are {', '.join(ENGINES)}") from None


def engine_for(execution_engine: Any) -> EngineEntry:
    """The engine that aggregates the batches of a GX execution engine (by its class, or a
    class it derives from): an engine with a ``dialect`` matching the connection first, else the
    engine without one."""
    entries = sorted(ENGINES.values(), key=lambda e: e.dialect is None)
    for entry in entries:
        if entry.serves(execution_engine):
            return entry
    supported = ", ".join(f"{e.name} ({e.gx_engine}{f' on {e.dialect}' if e.dialect else ''})"
                          for e in ENGINES.values())
    raise InputError(f"er-expectations has no engine for GX's {type(execution_engine).__name__}; "
                     f"it runs on {supported}")
