"""Engine-independent types shared by every backend."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InputError

__all__ = ["WeightsSpec", "parse_weights", "DESIGNS"]

DESIGNS = ("cluster_size", "uniform")


@dataclass(frozen=True, slots=True)
class WeightsSpec:
    """How the weight w_c = 1/p_c of a benchmark cluster is obtained (SPEC 1, 2.1).

    ``kind`` is "cluster_size" (p_c ∝ |c ∩ R_t|), "uniform" (p_c ∝ 1) or "column"
    (w_c read from ``column``).
    """

    kind: str
    column: str | None = None

    @property
    def design(self) -> str:
        return self.kind if self.kind != "column" else f"column:{self.column}"

    def describe(self) -> str:
        if self.kind == "cluster_size":
            return "size-proportional sampling (weights 1/|c|)"
        if self.kind == "uniform":
            return "uniform sampling of true clusters"
        return f"weights from column '{self.column}'"


def parse_weights(weights: object, columns: list[str] | None = None) -> WeightsSpec:
    """Parse the ``weights`` argument: 'cluster_size', 'uniform', a column name or {'column': name}."""
    if isinstance(weights, WeightsSpec):
        return weights
    if isinstance(weights, dict):
        if set(weights) != {"column"} or not isinstance(weights["column"], str) or not weights["column"]:
            raise InputError(f"weights={weights!r}: give 'cluster_size', 'uniform' or {{'column': <name>}}")
        return WeightsSpec("column", weights["column"])
    if isinstance(weights, str) and not weights:
        raise InputError("weights='': give 'cluster_size', 'uniform' or the name of a weights column")
    if isinstance(weights, str):
        if weights in DESIGNS:
            return WeightsSpec(weights)
        if columns is None or weights in columns:
            return WeightsSpec("column", weights)
        raise InputError(
            f"weights={weights!r} is neither 'cluster_size', 'uniform' nor a column of the table; "
            "name the column that holds w_c = 1/p_c, or pick one of the two designs"
        )
    raise InputError(f"weights={weights!r}: give 'cluster_size', 'uniform' or the name of a weights column")
