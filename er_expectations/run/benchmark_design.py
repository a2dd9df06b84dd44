"""What a benchmark file says about its own sampling (SPEC 2.1, 2.2, 12.3), and whether a
checkpoint's suites use it.

``er-expectations benchmark`` writes, beside the record id and the reference, a column
``draws`` (how many draws gave each true cluster), a column ``weight`` (w_c = 1/p_c of the
design) and, for the expected-errors design, a column ``inclusion`` (q_r); a Parquet file
also keeps the design in its pandas metadata. ``init`` wires these columns into the suite it
writes (:func:`read_benchmark_design`); ``run`` and ``validate`` refuse a suite whose
benchmark expectations ignore them when that gives a wrong number
(:func:`benchmark_use_issues`). Every other column of a benchmark (a ``benchmark_version``,
tags, attributes) is left alone.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from er_expectations.config import CheckpointConfig, ConfigIssue, SuiteConfig
from er_expectations.config.errors import IssueCollector, quote_list
from er_expectations.config.schema import default_registry
from er_expectations.config.yamlnodes import Node, compose_file
from er_expectations.core.errors import InputError
from er_expectations.core.io import file_kind, read_table, table_columns

__all__ = ["DRAWS_COLUMN", "INCLUSION_COLUMN", "WEIGHT_COLUMN", "BenchmarkDesign", "BenchmarkWiring",
           "benchmark_use_issues", "benchmark_wiring", "columns_design", "read_benchmark_design"]

#: The columns ``er-expectations benchmark`` writes beside the record id and the reference.
DRAWS_COLUMN = "draws"
WEIGHT_COLUMN = "weight"
INCLUSION_COLUMN = "inclusion"
_DESIGNS = ("cluster_size", "uniform", "expected_errors")
#: How the draws of each design were made, in words.
_DRAWN = {"cluster_size": "records drawn uniformly, the size design", "uniform": "true clusters drawn uniformly",
          "expected_errors": "records drawn by their expected errors", "weighted": "by a design of its own"}


@dataclass(frozen=True, slots=True)
class BenchmarkDesign:
    """The sampling a benchmark file records.

    ``design`` is ``"cluster_size"``, ``"uniform"``, ``"expected_errors"``, ``"weighted"`` (a
    ``weight`` column of some other design) or ``None`` (nothing says: no ``weight`` column, or
    its values were not read); ``evidence`` says, in words, what told it. ``draws_column`` and
    ``weight_column`` are the file's ``draws`` and ``weight`` columns when it has them;
    ``most_draws`` is the largest count of ``draws`` (``None`` when not read).
    """

    design: str | None
    evidence: str
    draws_column: str | None = None
    weight_column: str | None = None
    most_draws: int | None = None


def columns_design(columns: Sequence[str]) -> BenchmarkDesign:
    """The design as far as the column names tell (a table in a database or Spark)."""
    draws = DRAWS_COLUMN if DRAWS_COLUMN in columns else None
    weight = WEIGHT_COLUMN if WEIGHT_COLUMN in columns else None
    if INCLUSION_COLUMN in columns and weight is not None:
        return BenchmarkDesign("expected_errors", f"its column '{INCLUSION_COLUMN}' (records drawn by expected "
                               "errors)", draws, weight)
    return BenchmarkDesign(None, "its columns", draws, weight)


def _metadata_design(path: Path) -> str | None:
    """The ``design`` that ``er-expectations benchmark`` keeps in a Parquet file's pandas metadata."""
    import pyarrow.parquet as pq

    try:
        metadata = pq.read_schema(path).metadata or {}
        attributes = json.loads(metadata.get(b"pandas", b"{}")).get("attributes") or {}
    except (OSError, ValueError, AttributeError):  # unreadable metadata: the columns still tell
        return None
    design = attributes.get("design") if isinstance(attributes, dict) else None
    return design if design in _DESIGNS else None


def _row_place(path: Path, kind: str, row: int) -> str:
    return f"{path}:{row + 2}" if kind == "csv" else f"{path} (row {row + 1})"


def _draw_counts(table: pd.DataFrame, path: Path, kind: str) -> np.ndarray:
    """The ``draws`` column as whole counts >= 1, or an :class:`InputError` naming the first bad cell."""
    raw = table[DRAWS_COLUMN]
    numbers = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    bad = ~np.isfinite(numbers) | (numbers < 1) | (numbers != np.floor(numbers))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        value = raw.iloc[row]
        shown = "an empty cell" if value is None or (isinstance(value, float) and np.isnan(value)) else repr(value)
        raise InputError(
            f"{_row_place(path, kind, row)}: column '{DRAWS_COLUMN}' holds {shown} ({_cells(int(bad.sum()))}); "
            "it counts how many draws gave each true cluster, a whole number of 1 or more: write the counts "
            "'er-expectations benchmark' wrote, or rebuild the benchmark with it")
    return numbers.astype(np.int64)


def _cells(count: int) -> str:
    return "1 such cell" if count == 1 else f"{count:,} such cells"


def _weights_design(table: pd.DataFrame, reference: str, path: Path, kind: str) -> tuple[str | None, str]:
    """The design read from the ``weight`` values: 1/|c| (the size design), all 1 (uniform), other
    weights, or ``None`` when the column holds something else than weights (then it is not used)."""
    weight = pd.to_numeric(table[WEIGHT_COLUMN], errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    bad = ~np.isfinite(weight) | (weight <= 0)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        return None, (f"its column '{WEIGHT_COLUMN}', which holds {table[WEIGHT_COLUMN].iloc[row]!r} at "
                      f"{_row_place(path, kind, row)}, not a weight above 0")
    size = table.groupby(reference, sort=False, dropna=False)[reference].transform("size").to_numpy(dtype=np.float64)
    if np.allclose(weight, 1.0 / size, rtol=1e-9, atol=0.0):
        return "cluster_size", f"its column '{WEIGHT_COLUMN}' (1 / the size of each true cluster)"
    if np.allclose(weight, 1.0, rtol=1e-9, atol=0.0):
        return "uniform", f"its column '{WEIGHT_COLUMN}' (1 for every true cluster)"
    return "weighted", f"its column '{WEIGHT_COLUMN}' (weights of neither the size nor the uniform design)"


def read_benchmark_design(path: str | Path, *, reference_column: str, format: str | None = None  # noqa: A002
                          ) -> BenchmarkDesign:
    """The design and the ``draws``/``weight`` columns of a benchmark file.

    The design comes from the Parquet metadata that ``er-expectations benchmark`` writes,
    else from a column ``inclusion`` (the expected-errors design, SPEC 12.3), else from the
    ``weight`` values (1/|c|: records drawn uniformly; all 1: true clusters drawn uniformly).
    A ``draws`` column must hold whole counts of 1 or more: anything else raises
    :class:`InputError` naming the file, the line and the column. A ``weight`` column that
    holds something else than numbers above 0 tells no design (``design`` ``None``, said in
    ``evidence``): it is not used.
    """
    p = Path(path)
    kind = file_kind(p, format)
    found = columns_design(table_columns(p, format=format))
    wanted = [c for c in (reference_column, found.draws_column, found.weight_column) if c is not None]
    if found.draws_column is None and found.weight_column is None:
        return found
    table = read_table(p, list(dict.fromkeys(wanted)), format=format)
    table = table[table[reference_column].notna()]  # rows outside the benchmark carry nothing
    most = int(_draw_counts(table, p, kind).max(initial=1)) if found.draws_column is not None else None
    design, evidence = found.design, found.evidence
    stored = _metadata_design(p) if kind == "parquet" else None
    if stored is not None:
        design, evidence = stored, f"the design '{stored}' that 'er-expectations benchmark' recorded in the file"
    elif design is None and found.weight_column is not None:
        design, evidence = _weights_design(table, reference_column, p, kind)
    return BenchmarkDesign(design, evidence, found.draws_column, found.weight_column, most)



@dataclass(frozen=True, slots=True)
class BenchmarkWiring:
    """What ``init`` writes for a benchmark: the suite's ``draws_column`` and weight column
    (``None``: ``weights: cluster_size``), the comment above each (``notes``, by the suite key)
    and the comment under the checkpoint's ``benchmark:``."""

    draws_column: str | None
    weights_column: str | None
    notes: dict[str, str]
    checkpoint_note: str | None


def benchmark_wiring(design: BenchmarkDesign) -> BenchmarkWiring:
    """The suite parameters that make the estimates use what the benchmark records (SPEC 2.1, 2.2, 12.3)."""
    notes: dict[str, str] = {}
    used: list[str] = []
    if design.draws_column is not None:
        once = (" Every true cluster of the file was drawn once: the line changes nothing for this file."
                if design.most_draws == 1 else "")
        notes["draws_column"] = (
            f"The benchmark's column '{design.draws_column}' says how many draws of the sample gave each true "
            "cluster ('er-expectations benchmark' writes it): a cluster drawn twice counts twice (SPEC 2.2). "
            "Without this line each would count once and the estimates would be wrong; `run` refuses that."
            + once)
        used.append(f"'{design.draws_column}' (draws_column)")
    weights_column = None
    if design.design in ("expected_errors", "uniform", "weighted"):
        weights_column = design.weight_column
        why = {
            "expected_errors": "records were drawn by their expected errors: the weights 1/π_c depend on the match "
                               "probabilities of the labelled release and are not recomputed on a release (SPEC 12.3)",
            "uniform": "true clusters were drawn uniformly (a weight of 1 each, SPEC 2.1)",
            "weighted": "they are the sampling weights w_c = 1/p_c of the benchmark's own design (SPEC 2.1)",
        }[design.design]
        notes["weights"] = (f"Weights read from the benchmark's column '{weights_column}', as {design.evidence} "
                            f"says: {why}.")
        used.append(f"'{weights_column}' (weights)")
    elif design.weight_column is not None and design.design is None:
        notes["weights"] = (f"Records taken as drawn uniformly (the size design, SPEC 2.1): nothing records the "
                            f"benchmark's design, and {design.evidence}.")
    elif design.design == "cluster_size":
        notes["weights"] = (f"Records were drawn uniformly (the size design), as {design.evidence} says: the weights "
                            "1/|c| are recomputed on each release over the records a draw could pick (SPEC 2.1, 14.3); the "
                            "benchmark's column "
                            f"'{design.weight_column}' holds the same weights for the labelled release and is not read.")
    checkpoint_note = None
    if used:
        which = (f"columns {' and '.join(used)}: they reach" if len(used) > 1 else f"column {used[0]}: it reaches")
        checkpoint_note = (f"The suite names the benchmark's {which} every release batch with the reference "
                           "(the columns a suite names are read, no other).")
    return BenchmarkWiring(design.draws_column, weights_column, notes, checkpoint_note)

# -- the suites against the benchmark ------------------------------------------------------


def _explicit_nulls(suite: SuiteConfig) -> tuple[set[int], int | None]:
    """The entry lines of a suite whose ``draws_column`` is written as null (the entry's own key,
    else the suite's defaults): each benchmark cluster counted once on purpose; and the line
    of the suite's ``defaults:`` (``None`` without)."""
    root = compose_file(suite.path, IssueCollector(str(suite.path)))
    if root is None or root.kind != "mapping":
        return set(), None
    defaults = root.get("defaults")
    key = root.key("defaults")
    default_null = defaults is not None and defaults.kind == "mapping" and "draws_column" in defaults \
        and _is_null(defaults.get("draws_column"))
    lines: set[int] = set()
    entries = root.get("expectations")
    for item in entries.elements() if entries is not None else ():
        if item.kind != "mapping":
            continue
        if ("draws_column" in item and _is_null(item.get("draws_column"))) or \
                ("draws_column" not in item and default_null):
            lines.add(item.line)
    return lines, key.line if key is not None else None


def _is_null(node: Node | None) -> bool:
    return node is not None and node.is_null


def _wrong_weights(weights: object, design: str | None) -> bool:
    """True when ``weights`` (a design's name) gives other weights than the benchmark's ``design``."""
    if not isinstance(weights, str):  # {column: <weights>}: the column is used as written
        return False
    if design in ("expected_errors", "weighted"):
        return True
    return (design, weights) in (("uniform", "cluster_size"), ("cluster_size", "uniform"))


def _weights_hint(design: BenchmarkDesign) -> str:
    column = design.weight_column or WEIGHT_COLUMN
    if design.design == "cluster_size":
        return "write 'weights: cluster_size' under defaults: of this suite (records drawn uniformly)"
    if design.design == "weighted":
        return (f"write 'weights: {{column: {column}}}' under defaults: of this suite; if the column '{column}' "
                "is not the sampling weights of the benchmark, rename it in the benchmark file")
    return f"write 'weights: {{column: {column}}}' under defaults: of this suite"


def benchmark_use_issues(checkpoint: CheckpointConfig, suites: Sequence[SuiteConfig], design: BenchmarkDesign,
                         *, shown: str) -> list[ConfigIssue]:
    """Suites whose benchmark expectations would ignore the benchmark's draws or design.

    * A ``draws`` column with a count above 1 (or not read: a database or Spark table) that an
      expectation does not name as its ``draws_column``: each cluster would count once however
      often it was drawn (SPEC 2.2), a wrong estimate. Refused, unless the suite writes
      ``draws_column: null`` (for the expectation or in its defaults): counted once on purpose.
    * ``weights: cluster_size`` or ``uniform`` on a benchmark of another design (its recorded
      design, an ``inclusion`` column, or weights of neither design): refused. A ``weight``
      column beside ``weights: cluster_size`` on a benchmark of the size design is fine (the
      same weights, recomputed on each release).

    Other columns of the benchmark are not looked at. ``shown`` names the benchmark (its path
    or table) in the messages. One issue per suite and problem, at its first expectation concerned.
    """
    registry = default_registry()
    issues: list[ConfigIssue] = []
    unread = design.most_draws is None
    draws_matter = design.draws_column is not None and (unread or design.most_draws > 1)
    where = f"the benchmark {shown} (data.benchmark of checkpoint '{checkpoint.name}')"
    for suite in suites:
        nulls, defaults_line = _explicit_nulls(suite) if draws_matter else (set(), None)
        no_draws, wrong = [], []
        for cfg in suite.expectations:
            spec = registry.get(cfg.name)
            if spec is None or spec.param("draws_column") is None or "reference_column" not in cfg.kwargs:
                continue
            if draws_matter and cfg.kwargs.get("draws_column") is None and cfg.line not in nulls:
                no_draws.append(cfg)
            if _wrong_weights(cfg.kwargs.get("weights", "cluster_size"), design.design):
                wrong.append(cfg)
        if no_draws:
            first = no_draws[0]
            count = "" if unread else f" (up to {design.most_draws} times)"
            issues.append(ConfigIssue(
                str(suite.path), defaults_line or first.line, None,
                f"suite '{suite.name}': {_names(no_draws)} count each benchmark cluster once, but {where} says in "
                f"its column '{design.draws_column}' how many times each was drawn{count}: the estimates would "
                "be wrong (SPEC 2.2)",
                f"add 'draws_column: {design.draws_column}' under defaults: of this suite (or to each of these "
                "expectations); to count each cluster once on purpose, write 'draws_column: null' there"))
        if wrong:
            first = wrong[0]
            weights = first.kwargs.get("weights", "cluster_size")
            issues.append(ConfigIssue(
                str(suite.path), first.locations.get("weights", (first.line, None))[0], None,
                f"suite '{suite.name}': {_names(wrong)} weigh the benchmark clusters by the design "
                f"'{weights}', but {where} was drawn otherwise ({_DRAWN[design.design]}, as {design.evidence} "
                "says): the estimates would be wrong (SPEC 2.1, 12.3)",
                _weights_hint(design)))
    return issues


def _names(configs: Sequence[object]) -> str:
    names = list(dict.fromkeys(cfg.name for cfg in configs))  # type: ignore[attr-defined]
    shown = (quote_list(names, conjunction="and") if len(names) <= 3
             else ", ".join(f"'{name}'" for name in names[:3]) + f" and {len(names) - 3} more")
    return f"{len(configs)} benchmark expectation{'s' if len(configs) != 1 else ''} ({shown})"
