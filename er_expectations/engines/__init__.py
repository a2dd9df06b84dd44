"""Engines aggregate the full record table into the small tables of :mod:`er_expectations.stats`.

One backend per engine, imported lazily: ``pandas`` (always available); Spark and SQL
backends live beside it and import their libraries only when used.
"""

from er_expectations.engines.base import WeightsSpec

__all__ = ["WeightsSpec"]
