"""Engine-independent types shared by every backend."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from er_expectations.core.errors import InputError

__all__ = ["DESIGNS", "FIRST_VERSION", "KNOWN_AUTO", "KNOWN_COLUMN", "MAX_DRAWS", "KnownCounts", "drawable_size_weights", "resolve_known", "AggregatedRelease", "Pieces", "WeightsSpec", "check_cluster_values", "cluster_values", "name_flags",
           "parse_weights", "pieces_from_rows", "version_number", "weights_for"]

#: Largest number of draws of one cluster (their sum must stay exact in float64 arithmetic).
MAX_DRAWS = 10**9

DESIGNS = ("cluster_size", "uniform")

#: The column of a benchmark file that lists the records known when it was labelled, with the
#: benchmark version that added each one (SPEC 14). Joined onto a release, it is null on the
#: records added after labelling.
KNOWN_COLUMN = "benchmark_version"

#: ``known="auto"``: use :data:`KNOWN_COLUMN` when the table has it, else evaluate every record.
KNOWN_AUTO = "auto"


def resolve_known(known: object, columns: Sequence[object]) -> str | None:
    """The column marking the records known at labelling, or ``None`` (SPEC 14).

    ``"auto"`` gives :data:`KNOWN_COLUMN` when ``columns`` holds it and ``None`` otherwise;
    ``None`` turns the rule off; any other text must be a column of the table.
    """
    if known is None:
        return None
    if known == KNOWN_AUTO:
        return KNOWN_COLUMN if KNOWN_COLUMN in columns else None
    if not isinstance(known, str) or not known:
        raise InputError(f"known={known!r}: give the column that marks the records known when the benchmark was "
                         f"labelled (e.g. {KNOWN_COLUMN!r}), 'auto' or None")
    if known not in columns:
        raise InputError(f"known={known!r}: no such column in the table; join the benchmark file (its column "
                         f"{KNOWN_COLUMN!r} lists the records known at labelling) or pass known=None to evaluate "
                         "every record (SPEC 14)")
    return known


#: the benchmark version of the records known when the sample was drawn (SPEC 14.1)
FIRST_VERSION = 1


@dataclass(frozen=True, slots=True)
class KnownCounts:
    """What the labelling universe sets aside in one release (SPEC 14).

    ``added``: records of the release without a known mark (added after labelling);
    ``added_in_sampled``: those in a predicted cluster holding a benchmark record;
    ``unmarked_benchmark``: benchmark records without a known mark (an error);
    ``version``: the largest benchmark version in the column (``None`` if not a number).
    """

    added: int
    added_in_sampled: int
    unmarked_benchmark: int
    version: int | None

    def check(self, *, known: str, reference: str) -> None:
        if self.unmarked_benchmark:
            raise InputError(
                f"{self.unmarked_benchmark} benchmark record(s) have a {reference!r} but no {known!r}: every record "
                "of a benchmark cluster was known when it was labelled; rebuild the benchmark with "
                "'er-expectations benchmark' or give those records their version (SPEC 14)")

    @property
    def topped_up(self) -> bool:
        """Whether records were added by a top-up (a version above the first)."""
        return self.version is not None and self.version > FIRST_VERSION

    def apply(self, sample: object, *, known: str) -> object:
        """The sample with these counts (a :class:`~er_expectations.stats.BenchmarkSample`)."""
        return replace(sample, known_column=known, records_added=self.added,
                       records_added_in_sampled=self.added_in_sampled, benchmark_version=self.version)


def drawable_size_weights(sample: object, drawable: dict[object, int]) -> object:
    """The sample with ``cluster_size`` weights counted on the records its draws could hit.

    A draw picked a record known when the benchmark was labelled (``benchmark_version`` 1), so
    π_c ∝ the number of such records of c (SPEC 1, 14.3); a record a top-up added later could
    not be drawn and must not lower w_c = 1/|c|. ``drawable`` maps each cluster label to its
    records of the release known at the first version; a cluster without one keeps the size it
    has in the release (SPEC 2.1). Other designs are returned unchanged.
    """
    if sample.design != "cluster_size":  # type: ignore[attr-defined]
        return sample
    n = np.array([drawable.get(label, 0) for label in sample.labels], dtype=np.float64)  # type: ignore[attr-defined]
    weight = np.where(n > 0, 1.0 / np.maximum(n, 1.0), sample.weight)  # type: ignore[attr-defined]
    return replace(sample, weight=weight)


def version_number(value: object) -> int | None:
    """The largest version as an int, or ``None`` when the column holds no whole number."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return int(number) if number == number and number == int(number) else None


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


# -- assembling a BenchmarkSample from rows aggregated by a database engine (SQL, Spark) ---

@dataclass(frozen=True, slots=True)
class Pieces:
    """The benchmark's contingency with the prediction, as arrays (SPEC 4).

    ``index`` maps a benchmark cluster id to its position in ``labels``.
    """

    labels: np.ndarray
    index: dict
    piece_cluster: np.ndarray
    piece_n: np.ndarray
    piece_m: np.ndarray
    piece_label: np.ndarray
    size: np.ndarray


def _objects(values: Sequence) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = list(values)
    return out


def pieces_from_rows(rows: Sequence[Sequence]) -> Pieces:
    """Arrays from rows ``(true cluster, predicted cluster, n = |c ∩ ĉ|, m = |ĉ|)``.

    Only the benchmark's pieces come back from the database: their number is at most the
    number of benchmark records.
    """
    labels: list = []
    index: dict = {}
    piece_cluster = np.empty(len(rows), dtype=np.int64)
    for j, row in enumerate(rows):
        i = index.get(row[0])
        if i is None:
            i = index[row[0]] = len(labels)
            labels.append(row[0])
        piece_cluster[j] = i
    piece_n = np.array([r[2] for r in rows], dtype=np.int64)
    size = np.bincount(piece_cluster, weights=piece_n, minlength=len(labels)).astype(np.int64)
    return Pieces(labels=_objects(labels), index=index, piece_cluster=piece_cluster, piece_n=piece_n,
                  piece_m=np.array([r[3] for r in rows], dtype=np.int64),
                  piece_label=_objects([r[1] for r in rows]), size=size)


def cluster_values(rows: Iterable[Sequence], pieces: Pieces, *, column: str, what: str,
                   integer: bool) -> np.ndarray:
    """One weights or draws value per benchmark cluster from rows ``(cluster, min, max, nulls)``."""
    k = len(pieces.labels)
    lo, hi, nulls = np.full(k, np.nan), np.full(k, np.nan), np.zeros(k, dtype=bool)
    for c, mn, mx, n_null in rows:
        i = pieces.index[c]
        nulls[i] = bool(n_null)
        if mn is not None:
            lo[i], hi[i] = float(mn), float(mx)
    return check_cluster_values(lo, hi, nulls, pieces.labels, column=column, what=what, integer=integer)


def check_cluster_values(lo: np.ndarray, hi: np.ndarray, nulls: np.ndarray, labels: Sequence, *,
                         column: str, what: str, integer: bool) -> np.ndarray:
    """The value of a per-cluster column (weights, draws) from its per-cluster min and max.

    The value belongs to the cluster (SPEC 2.1): a null, a value varying within the
    cluster, or (draws) a value that is not a whole number in [1, MAX_DRAWS] is an error
    naming the column and the cluster. Every engine reports these the same way.
    """
    if nulls.any():
        i = int(np.flatnonzero(nulls)[0])
        raise InputError(f"{what} column {column!r} is null on a record of benchmark cluster {labels[i]!r}; "
                         f"every benchmark record needs its cluster's {what} value")
    varying = lo != hi
    if varying.any():
        i = int(np.flatnonzero(varying)[0])
        raise InputError(
            f"{what} column {column!r} varies within benchmark cluster {labels[i]!r} (from {lo[i]:g} to "
            f"{hi[i]:g}); {what} belong to the cluster: give every record of a cluster the same value")
    if integer:
        bad = (lo < 1) | (lo > MAX_DRAWS) | (lo != np.floor(lo)) | ~np.isfinite(lo)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InputError(
                f"draws column {column!r}: cluster {labels[i]!r} has {lo[i]:g} draws; draws must be whole "
                f"numbers from 1 to {MAX_DRAWS:,} (how many times the cluster was drawn)")
    return lo


def weights_for(spec: WeightsSpec, size: np.ndarray, labels: Sequence,
                column_values: np.ndarray | None = None) -> np.ndarray:
    """w_c of every benchmark cluster under the design (SPEC 2.1: 1/|c ∩ R_t| for cluster_size).

    ``size`` is |c ∩ R_t| per cluster; ``column_values`` the values of the weights column
    (design "column"), which must be finite and > 0.
    """
    if spec.kind == "cluster_size":
        return 1.0 / np.asarray(size, dtype=np.float64)
    if spec.kind == "uniform":
        return np.ones(len(labels))
    weight = np.asarray(column_values, dtype=np.float64)
    bad = ~np.isfinite(weight) | (weight <= 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"weights column {spec.column!r}: cluster {labels[i]!r} has weight {float(weight[i])!r}; "
            "weights w_c = 1/p_c must be finite and > 0 (fix the value, or use weights='cluster_size')")
    return weight


def name_flags(rows: Iterable[Sequence], pieces: Pieces) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Homonymy, name-variation and has-name flags from rows ``(cluster, distinct names, shared)`` (SPEC 7).

    ``shared`` is true when one of the cluster's names occurs on more records of the
    release than inside the cluster; clusters without a named record have no row.
    """
    k = len(pieces.labels)
    homonym = np.zeros(k, dtype=bool)
    variation = np.zeros(k, dtype=bool)
    has_name = np.zeros(k, dtype=bool)
    for c, n_names, shared in rows:
        i = pieces.index[c]
        has_name[i] = True
        variation[i] = int(n_names) >= 2
        homonym[i] = bool(shared)
    return homonym, variation, has_name


class AggregatedRelease(ABC):
    """What the SQL and Spark releases share: the size histogram and the checks on the counts.

    A subclass sets ``prediction`` and implements :meth:`_size_rows`, the rows
    ``(cluster size, number of clusters)`` aggregated where the data lives.
    """

    prediction: str
    _hist: tuple[np.ndarray, np.ndarray] | None = None

    @abstractmethod
    def _size_rows(self) -> Sequence[Sequence[int]]:
        """Rows ``(cluster size, number of clusters of that size)`` of the release, in any order."""

    def size_histogram(self) -> tuple[np.ndarray, np.ndarray]:
        """Distinct cluster sizes (ascending) and how many clusters have each (SPEC 3)."""
        if self._hist is None:
            rows = sorted((int(m), int(k)) for m, k in self._size_rows())
            self._hist = (np.array([r[0] for r in rows], dtype=np.int64),
                          np.array([r[1] for r in rows], dtype=np.int64))
        return self._hist

    @property
    def n_records(self) -> int:
        sizes, counts = self.size_histogram()
        return int((sizes * counts).sum())

    @property
    def n_clusters(self) -> int:
        return int(self.size_histogram()[1].sum())

    def nonempty_histogram(self) -> tuple[np.ndarray, np.ndarray]:
        sizes, counts = self.size_histogram()
        if sizes.size == 0:
            raise InputError(f"prediction column {self.prediction!r} is null on every row: the release is empty")
        return sizes, counts

    @staticmethod
    def check_draws_argument(draws: object) -> None:
        if isinstance(draws, bool):
            raise InputError(f"draws={draws!r}: give the name of the column that holds each cluster's number "
                             "of draws, or None")

    def check_benchmark_counts(self, reference: str, n_bench: int, clusters_in: int) -> None:
        """The benchmark exists and meets the release (SPEC 2.1)."""
        if n_bench == 0:
            raise InputError(f"reference column {reference!r} is null on every row: there is no benchmark to "
                             "estimate from")
        if clusters_in == 0:
            raise InputError(
                f"the benchmark is empty after restriction to the release: none of the {n_bench} records with a "
                f"{reference!r} has a {self.prediction!r}; check that the benchmark and the release share record "
                "ids (SPEC 2.1)")
