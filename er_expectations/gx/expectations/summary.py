"""Expectations on summary statistics of the predicted clustering (SPEC 3).

``expect_average_cluster_size_to_be_between``, ``expect_matching_rate_to_be_between``,
``expect_hill_number_to_be_between`` (order ``q``), ``expect_homonymy_rate_to_be_between``
and ``expect_name_variation_rate_to_be_between``.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from typing import Any, ClassVar

from great_expectations.compatibility import pydantic
from great_expectations.validator.metric_configuration import MetricConfiguration

from er_expectations.core.text import fmt_number, fmt_q, range_phrase
from er_expectations.gx.expectations.base import BoundedExpectation, ERExpectation, json_number
from er_expectations.gx.expectations.params import (
    ParameterError,
    Threshold,
    field_choices,
    threshold,
)
from er_expectations.gx.metrics.release import CLUSTERING_TABLE, SUMMARY_STATISTIC, TABLE_KEYS
from er_expectations.stats import NAME_STATISTICS, parse_hill_orders
from er_expectations.stats.wording import statistic_label

__all__ = [
    "ExpectAverageClusterSizeToBeBetween",
    "ExpectMatchingRateToBeBetween",
    "ExpectHillNumberToBeBetween",
    "ExpectHomonymyRateToBeBetween",
    "ExpectNameVariationRateToBeBetween",
]


def parse_q(q: Any) -> float:
    """Hill order from a number or 'inf' (:func:`~er_expectations.stats.parse_hill_orders`)."""
    return parse_hill_orders((q,), parameter="q")[0]


NAME_COLUMN_DOC = "Column with the name used for homonymy and name variation."


def _stored_q(cls: type, q: Any) -> Any:
    """q as the configuration stores it: the number, or 'inf' (JSON has no infinity)."""
    return "inf" if isinstance(q, float) and math.isinf(q) else q


class ChosenStatisticExpectation(ERExpectation):
    """Abstract base of the checks of a summary statistic chosen by ``statistic`` (SPEC 3): the
    name column the name statistics need, the order q of ``hill_number`` when the subclass
    declares ``q`` (:class:`ChosenStatisticWithOrder`), and their label."""

    name_column: str | None = pydantic.Field(
        None, description=NAME_COLUMN_DOC + " Required for homonymy_rate and name_variation_rate.", column="batch")

    @pydantic.root_validator(skip_on_failure=False)
    def _check_statistic_needs(cls, values):
        statistic = values.get("statistic")
        if statistic == "hill_number" and "q" in values and values["q"] is None:
            raise ParameterError("statistic 'hill_number' needs its order q", at="statistic",
                                 hint="add q: 2 (or 0, 1, .inf)")
        if statistic in NAME_STATISTICS and "name_column" in values and not values["name_column"]:
            raise ParameterError(f"'name_column' is required when statistic is '{statistic}'", at="statistic",
                                 hint="give name_column, the column with the names")
        return values

    def _name_column(self) -> str | None:
        """The name column when the statistic needs names, else ``None``."""
        return self.name_column if self.statistic in NAME_STATISTICS else None  # type: ignore[attr-defined]

    @classmethod
    def _statistic_label(cls, kwargs: dict[str, Any]) -> str:
        """'Hill number of order 2', 'matching rate'; a stored result with a bad value still renders."""
        statistic = kwargs.get("statistic") or "?"
        try:
            q = parse_q(kwargs["q"]) if statistic == "hill_number" and kwargs.get("q") is not None else None
        except ValueError:
            q = None
        return statistic_label(statistic, q=q) if statistic in field_choices(cls.__fields__["statistic"]) else str(
            statistic)


class ChosenStatisticWithOrder(ChosenStatisticExpectation):
    """A chosen statistic that may be ``hill_number``: with its order ``q``."""

    q: float | str | None = pydantic.Field(None, ge=0.0, allow_inf=True,
                                           description="Order of the Hill number (statistic: hill_number), "
                                           "q >= 0 (.inf allowed).")
    _check_q = pydantic.validator("q", allow_reuse=True)(_stored_q)


class _ClusteringStatisticExpectation(BoundedExpectation):
    """A statistic of the predicted clustering lies in [min_value, max_value]."""

    args_keys: ClassVar[tuple[str, ...]] = ("prediction_column", *BoundedExpectation.BOUND_KEYS)
    success_keys: ClassVar[tuple[str, ...]] = ("prediction_column", "record_id_column",
                                               *BoundedExpectation.BOUND_KEYS)
    needs_names: ClassVar[bool] = False

    @classmethod
    @abstractmethod
    def statistic_id(cls) -> str:
        """The statistic id of SPEC 3 (a key of ``summary_statistics``)."""

    def _q(self) -> float | None:
        return None

    def _metric_configs(self, domain: dict[str, Any]) -> dict[str, MetricConfiguration]:
        name = getattr(self, "name_column", None) if self.needs_names else None
        q = self._q()
        value = {"prediction_column": self.prediction_column, "record_id_column": self.record_id_column,
                 "name_column": name,
                 "statistic": self.statistic_id(), "q": q}
        return {
            SUMMARY_STATISTIC: MetricConfiguration(SUMMARY_STATISTIC, domain, value),
            CLUSTERING_TABLE: MetricConfiguration(CLUSTERING_TABLE, domain, {k: value[k] for k in TABLE_KEYS}),
        }

    @classmethod
    def _label(cls, kwargs: dict[str, Any]) -> str:
        return statistic_label(cls.statistic_id())

    @classmethod
    def _sentence(cls, kwargs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        label = cls._label(kwargs)
        rng = range_phrase(kwargs.get("min_value"), kwargs.get("max_value"))
        params: dict[str, Any] = {"prediction_column": kwargs.get("prediction_column"), "range": rng,
                                  "label": label}
        template = "The $label of the predicted clustering in $prediction_column $range."
        if cls.needs_names:
            params["name_column"] = kwargs.get("name_column")
            template = "The $label of the predicted clustering in $prediction_column (names from $name_column) $range."
        return template, params

    def _validate(self, metrics: dict, runtime_configuration=None, execution_engine=None):
        stat = metrics[SUMMARY_STATISTIC]
        value = float(stat["value"])
        ok = self.in_range(value)
        text = (f"{fmt_number(value)} ({stat['n_records']:,} records in {stat['n_clusters']:,} clusters)")
        return {
            "success": bool(ok),
            "result": {
                "observed_value": json_number(value),
                "details": {
                    "statistic": self.statistic_id(),
                    "n_records": stat["n_records"],
                    "n_clusters": stat["n_clusters"],
                    "observed_text": text,
                },
            },
        }


class ExpectAverageClusterSizeToBeBetween(_ClusteringStatisticExpectation):
    """Average predicted cluster size |R| / |Ĉ| lies in a range (SPEC 3)."""

    @classmethod
    def statistic_id(cls) -> str:
        return "average_cluster_size"


class ExpectMatchingRateToBeBetween(_ClusteringStatisticExpectation):
    """Share of records in predicted clusters of size ≥ 2 lies in a range (SPEC 3)."""

    min_value: Threshold = threshold("min", ge=0.0, le=1.0)
    max_value: Threshold = threshold("max", ge=0.0, le=1.0)

    @classmethod
    def statistic_id(cls) -> str:
        return "matching_rate"


class ExpectHillNumberToBeBetween(_ClusteringStatisticExpectation):
    """Hill number of order q of the cluster-size distribution lies in a range (SPEC 3)."""

    q: float | str = pydantic.Field(..., ge=0.0, allow_inf=True,
                                    description="Order of the Hill number, q >= 0 (.inf allowed).")

    args_keys: ClassVar[tuple[str, ...]] = ("prediction_column", "q", *BoundedExpectation.BOUND_KEYS)
    success_keys: ClassVar[tuple[str, ...]] = ("prediction_column", "record_id_column", "q",
                                               *BoundedExpectation.BOUND_KEYS)

    _check_q = pydantic.validator("q", allow_reuse=True)(_stored_q)

    @classmethod
    def statistic_id(cls) -> str:
        return "hill_number"

    def _q(self) -> float | None:
        return parse_q(self.q)

    @classmethod
    def _label(cls, kwargs: dict[str, Any]) -> str:
        q = kwargs.get("q")
        try:
            return f"Hill number of order {fmt_q(parse_q(q))}"
        except ValueError:  # a page of a stored result with a bad q still renders
            return "Hill number of order ?"


class _NamedStatisticExpectation(_ClusteringStatisticExpectation):
    """A rate over the predicted clusters that needs their names."""

    name_column: str = pydantic.Field(..., description=NAME_COLUMN_DOC, column="batch")
    min_value: Threshold = threshold("min", ge=0.0, le=1.0)
    max_value: Threshold = threshold("max", ge=0.0, le=1.0)
    needs_names: ClassVar[bool] = True
    args_keys: ClassVar[tuple[str, ...]] = ("prediction_column", "name_column", *BoundedExpectation.BOUND_KEYS)
    success_keys: ClassVar[tuple[str, ...]] = ("prediction_column", "name_column", *BoundedExpectation.BOUND_KEYS)


class ExpectHomonymyRateToBeBetween(_NamedStatisticExpectation):
    """Share of predicted clusters sharing a name with another cluster lies in a range (SPEC 3)."""

    @classmethod
    def statistic_id(cls) -> str:
        return "homonymy_rate"


class ExpectNameVariationRateToBeBetween(_NamedStatisticExpectation):
    """Share of predicted clusters with ≥ 2 distinct names lies in a range (SPEC 3)."""

    @classmethod
    def statistic_id(cls) -> str:
        return "name_variation_rate"
