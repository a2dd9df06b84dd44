"""Sampling by expected errors (SPEC 12.3): the per-record inclusion probabilities.

An ER system that scores pairs gives match probabilities p(r, r′). For a record r of the
release, E|A_r| = Σ_{r′ ∈ ĉ(r), r′ ≠ r} (1 − p(r, r′)) is the expected number of records
to remove from its predicted cluster and E|B_r| = Σ_{r′ ∉ ĉ(r)} p(r, r′) the expected
number to add; a pair not listed adds nothing (p = 1 inside ĉ(r), 0 outside). Records are
drawn with replacement with q_r = (1 − λ)·e_r/Σe + λ/N, e_r = E|A_r| + E|B_r|, so that a
true cluster c is drawn with probability π_c = Σ_{r∈c} q_r per draw and weighs
w_c = 1/π_c (SPEC 1).

Everything is an aggregation over the pairs (``np.bincount``): no Python loop over records
or pairs, so a release of 10⁵–10⁶ records with a few million scored pairs takes seconds.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from er_expectations.core.deprecation import old_call_forms
from er_expectations.core.errors import InputError
from er_expectations.core.hints import quote_list

__all__ = ["DEFAULT_FLOOR", "EXPECTED_ERRORS", "INCLUSION", "LEGACY_FLOOR", "PairColumns", "check_floor",
           "cluster_inclusion", "expected_error_probabilities", "true_cluster_inclusion"]

#: The name of the design (``draw_sample(design=…)``, ``simulate(designs=…)``).
EXPECTED_ERRORS = "expected_errors"
#: The column holding q_r (the per-draw inclusion probability of a record).
INCLUSION = "inclusion"
#: The uniform floor λ of SPEC 12.3 when none is given (drawing, simulating, recomputing the
#: weights of a sample drawn with the default), chosen in issue 28 from the coverage study
#: ``benchmarks/studies/coverage_design_floor.py`` (benchmarks/README.md, "Default floor and default
#: interval"; SPEC 12.3): at 800 draws the lowest coverage over the 12 metrics rose with λ on
#: both populations, to 94.5 % (RLdata10000) and 93.4 % (heavy-tailed) at λ = 0.7 with BCa,
#: from 90.2 % and 78.4 % at λ = 0.1 (and 93.4 %, 91.6 % at 0.5).
DEFAULT_FLOOR = 0.7
#: The default floor before issue 28. A sample drawn by expected errors without a design
#: record (``<worksheet>.design.json``) was drawn by an older version, so with this floor
#: unless ``--floor`` was given: ``er-expectations benchmark`` recomputes its weights with it
#: (and says so), never with :data:`DEFAULT_FLOOR`.
LEGACY_FLOOR = 0.1


@dataclass(frozen=True, slots=True)
class PairColumns:
    """Column names of a match-probabilities table: two record ids and the probability."""

    record_a: str = "record_a"
    record_b: str = "record_b"
    p: str = "p"

    @classmethod
    def of(cls, value: PairColumns | Mapping[str, str] | None) -> PairColumns:
        if value is None:
            return cls()
        if isinstance(value, PairColumns):
            return value
        if not isinstance(value, Mapping) or any(k not in cls.__slots__ for k in value) or not all(
                isinstance(v, str) and v for v in value.values()):
            raise InputError(f"pair_columns={value!r}: give a mapping with keys among "
                             f"{quote_list(cls.__slots__, conjunction='and')} and column names as values, such as "
                             "{'record_a': 'unique_id_l', 'record_b': 'unique_id_r', 'p': 'match_probability'}")
        return cls(**dict(value))


def check_floor(floor: object, *, parameter: str = "floor") -> float:
    """The uniform floor λ of SPEC 12.3: a number in (0, 1]."""
    if isinstance(floor, bool) or not isinstance(floor, (int, float, np.integer, np.floating)) or not (
            math.isfinite(float(floor)) and 0.0 < float(floor) <= 1.0):
        raise InputError(f"{parameter}={floor!r}: give the uniform floor λ as a number in (0, 1], such as 0.1 "
                         "(every record keeps a probability of at least λ/N; λ = 1 is the size-proportional design)")
    return float(floor)


def _plain(v: object) -> object:
    return v.item() if isinstance(v, np.generic) else v


def _row(frame: pd.DataFrame, pos: int) -> str:
    return f"row {pos + 1} (index {frame.index[pos]!r})"


def _codes(ids: pd.Series, index: pd.Index, *, column: str, frame: pd.DataFrame, source: str) -> np.ndarray:
    try:
        codes = np.asarray(index.get_indexer(ids), dtype=np.int64)
    except (TypeError, ValueError):
        codes = np.asarray(pd.Index(index, dtype=object).get_indexer(pd.Index(ids, dtype=object)), dtype=np.int64)
    bad = np.flatnonzero(codes < 0)
    if bad.size:
        pos = int(bad[0])
        value = ids.iloc[pos]
        same_text = str(value) in set(map(str, index[:100_000]))
        hint = (" (an id with the same text exists with another type: give the ids with the records' type)"
                if same_text else "")
        raise InputError(f"{source}, {_row(frame, pos)}, column {column!r}: the record {value!r} is not in the "
                         f"records{hint}; {bad.size} pair(s) name unknown records. Give pairs of the records' ids")
    return codes


@old_call_forms(positional=('prediction',))
def expected_error_probabilities(
    df: pd.DataFrame,
    *,
    prediction: Hashable,
    record_id: Hashable,
    match_probabilities: pd.DataFrame,
    floor: float = DEFAULT_FLOOR,
    pair_columns: PairColumns | Mapping[str, str] | None = None,
    source: str = "match_probabilities",
) -> pd.DataFrame:
    """Per record of the release: E|A_r|, E|B_r|, e_r and q_r of SPEC 12.3.

    ``df`` has one row per record (``prediction`` null: outside the release, never drawn);
    ``match_probabilities`` one row per scored pair: two record ids and p (columns
    ``record_a``, ``record_b``, ``p``, or as ``pair_columns`` names them, e.g. Splink's
    ``unique_id_l``, ``unique_id_r``, ``match_probability``). Each unordered pair once,
    p in [0, 1], no self pair, ids of records of ``df``: anything else is an error naming
    the row and the column. Pairs with a record outside the release are left out (counted
    in ``attrs['pairs_outside']``).

    Returns a frame in the order of ``df``'s release rows with columns ``record_id`` (named
    like the argument), ``expected_removed`` (E|A_r|), ``expected_added`` (E|B_r|),
    ``expected_errors`` (e_r) and ``inclusion`` (q_r, summing to 1). ``floor`` is λ in
    (0, 1], by default :data:`DEFAULT_FLOOR` (0.7; 0.1 before issue 28): to recompute the
    weights of a sample, give the floor it was drawn with (its design file, or the worksheet's
    ``attrs['floor']``), never the default. With Σe = 0 every q_r is 1/N (a note in
    ``attrs['note']``).


    Parameters
    ----------
    df : pandas.DataFrame
        One row per record.
    prediction : hashable
        The column of predicted cluster ids (null: outside the release).
    record_id : hashable
        The record id column.
    match_probabilities : pandas.DataFrame
        One row per scored record pair with its match probability p.
    floor : float
        λ in (0, 1]: the uniform share of q_r (SPEC 12.3); default :data:`DEFAULT_FLOOR`.
        Give the floor the sample was drawn with when recomputing its weights.
    pair_columns : PairColumns or mapping, optional
        Names of the pair table's columns (``record_a``, ``record_b``, ``p``).
    source : str
        How the pair table is named in error messages.

    Returns
    -------
    pandas.DataFrame
        ``record_id``, ``expected_removed``, ``expected_added``, ``expected_errors`` and
        ``inclusion``, above.

    Examples
    --------
    With λ = 0.1, q_a = 0.9 · 0.1/0.6 + 0.1/3 (e = 0.1, 0.3, 0.2):

    >>> import pandas as pd
    >>> import er_expectations as erx
    >>> df = pd.DataFrame({"id": ["a", "b", "c"], "pred": ["P1", "P1", "P2"]})
    >>> pairs = pd.DataFrame({"record_a": ["a", "b"], "record_b": ["b", "c"], "p": [0.9, 0.2]})
    >>> q = erx.expected_error_probabilities(df, prediction="pred", record_id="id", match_probabilities=pairs,
    ...                                     floor=0.1)
    >>> q["inclusion"].round(4).tolist()
    [0.1833, 0.4833, 0.3333]
    """
    from er_expectations.engines.pandas.release import PandasRelease

    lam = check_floor(floor)
    cols = PairColumns.of(pair_columns)
    if not isinstance(match_probabilities, pd.DataFrame):
        raise InputError(f"{source}: give the pairs as a table (a pandas DataFrame) with columns "
                         f"{cols.record_a!r}, {cols.record_b!r} and {cols.p!r}, not {type(match_probabilities).__name__}")
    pairs = match_probabilities
    missing = [c for c in (cols.record_a, cols.record_b, cols.p) if c not in pairs.columns]
    if missing:
        have = quote_list(map(str, pairs.columns), conjunction="and") if len(pairs.columns) else "none"
        raise InputError(f"{source}: no column {quote_list(missing, conjunction='and')}; the table has {have}. "
                         "Name the columns with pair_columns={'record_a': …, 'record_b': …, 'p': …}")
    rel = PandasRelease(df, prediction=prediction, record_id=record_id)
    frame = rel.df
    ids = pd.Index(frame[record_id])
    for c in (cols.record_a, cols.record_b, cols.p):
        null = pairs[c].isna().to_numpy()
        if null.any():
            raise InputError(f"{source}, {_row(pairs, int(np.flatnonzero(null)[0]))}, column {c!r}: the cell is empty; "
                             f"{int(null.sum())} row(s) have an empty {c!r}")
    p_col = pairs[cols.p]
    if p_col.dtype == object or pd.api.types.is_bool_dtype(p_col) or not pd.api.types.is_numeric_dtype(p_col):
        bad = pd.to_numeric(p_col, errors="coerce").isna().to_numpy() | p_col.map(
            lambda v: isinstance(v, (bool, np.bool_))).to_numpy()
        if not bad.any():
            raise InputError(f"{source}, column {cols.p!r}: holds text, not numbers (row 1: {p_col.iloc[0]!r}); "
                             "convert it to numbers in [0, 1] (pd.to_numeric)")
        pos = int(np.flatnonzero(bad)[0])
        raise InputError(f"{source}, {_row(pairs, pos)}, column {cols.p!r}: {_plain(p_col.iloc[pos])!r} is not a probability; "
                         "give numbers in [0, 1]")
    p = p_col.to_numpy(dtype=np.float64)
    out_of_range = ~((p >= 0.0) & (p <= 1.0))  # NaN and ±inf included
    if out_of_range.any():
        pos = int(np.flatnonzero(out_of_range)[0])
        raise InputError(f"{source}, {_row(pairs, pos)}, column {cols.p!r}: {float(p[pos])!r} is outside [0, 1]; "
                         f"{int(out_of_range.sum())} row(s) are. Give match probabilities (not scores or weights: "
                         "convert a match weight m to 2^m / (1 + 2^m))")
    a = _codes(pairs[cols.record_a], ids, column=cols.record_a, frame=pairs, source=source)
    b = _codes(pairs[cols.record_b], ids, column=cols.record_b, frame=pairs, source=source)
    self_pair = a == b
    if self_pair.any():
        pos = int(np.flatnonzero(self_pair)[0])
        raise InputError(f"{source}, {_row(pairs, pos)}, columns {cols.record_a!r} and {cols.record_b!r}: the pair "
                         f"joins the record {pairs[cols.record_a].iloc[pos]!r} to itself; drop self pairs")
    n = len(ids)
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    key = lo * np.int64(n) + hi
    order = np.argsort(key, kind="stable")
    dup_sorted = np.flatnonzero(key[order][1:] == key[order][:-1])
    if dup_sorted.size:
        second = int(order[dup_sorted[0] + 1])
        first = int(order[dup_sorted[0]])
        first, second = min(first, second), max(first, second)
        reversed_ = a[first] != a[second]
        what = ("gives the pair of " + _row(pairs, first) + " in the other order" if reversed_
                else "repeats the pair of " + _row(pairs, first))
        raise InputError(f"{source}, {_row(pairs, second)}, columns {cols.record_a!r} and {cols.record_b!r}: the row "
                         f"{what} ({pairs[cols.record_a].iloc[second]!r}, {pairs[cols.record_b].iloc[second]!r}); "
                         "give each unordered pair once")
    codes = rel.pred_codes
    inside = (codes[a] >= 0) & (codes[b] >= 0)
    a, b, p = a[inside], b[inside], p[inside]
    same = codes[a] == codes[b]
    removed = np.bincount(a, weights=np.where(same, 1.0 - p, 0.0), minlength=n) + np.bincount(
        b, weights=np.where(same, 1.0 - p, 0.0), minlength=n)
    added = np.bincount(a, weights=np.where(same, 0.0, p), minlength=n) + np.bincount(
        b, weights=np.where(same, 0.0, p), minlength=n)
    rows = np.flatnonzero(codes >= 0)
    if rows.size == 0:
        raise InputError(f"prediction column {prediction!r} is null on every row: the release is empty")
    removed, added = removed[rows], added[rows]
    e = removed + added
    total = float(e.sum())
    note = ""
    if total > 0:
        q = (1.0 - lam) * e / total + lam / rows.size
    else:
        q = np.full(rows.size, 1.0 / rows.size)
        note = ("no pair shows an expected error (every listed pair inside a predicted cluster has p = 1 and every "
                "pair across clusters p = 0): every record gets q = 1/N, the size-proportional design")
    out = pd.DataFrame({record_id: frame[record_id].to_numpy()[rows], "expected_removed": removed,
                        "expected_added": added, "expected_errors": e, INCLUSION: q})
    out.attrs.update({"floor": lam, "population": int(rows.size), "pairs": int(inside.sum()),
                      "pairs_outside": int((~inside).sum()), "note": note})
    return out


def cluster_inclusion(inclusion: np.ndarray, cluster_codes: np.ndarray, n_clusters: int) -> np.ndarray:
    """π_c = Σ_{r∈c} q_r per cluster code (SPEC 1, 12.3); ``cluster_codes`` −1 are left out."""
    keep = cluster_codes >= 0
    return np.bincount(cluster_codes[keep], weights=np.asarray(inclusion, dtype=np.float64)[keep],
                       minlength=n_clusters)


def true_cluster_inclusion(df: pd.DataFrame, prediction: Hashable, truth: Hashable, labels: np.ndarray, *,
                           record_id: Hashable | None, match_probabilities: pd.DataFrame | None, floor: float,
                           pair_columns: PairColumns | Mapping[str, str] | None) -> np.ndarray:
    """π_c of every true cluster in ``labels`` (ids of column ``truth``) on a table whose
    truth is known: what ``simulate`` draws the expected-errors design with (SPEC 12.3)."""
    if match_probabilities is None:
        raise InputError("design 'expected_errors' needs match_probabilities: a table of record pairs with the "
                         "ER system's match probability p (columns record_a, record_b, p)")
    if record_id is None:
        raise InputError("design 'expected_errors' needs record_id=<column>: the match probabilities name "
                         "records by their ids")
    inc = expected_error_probabilities(df, prediction=prediction, record_id=record_id,
                                       match_probabilities=match_probabilities,
                                       floor=floor, pair_columns=pair_columns)
    rows = df[prediction].notna().to_numpy()
    codes = np.asarray(pd.Index(labels).get_indexer(df[truth].to_numpy()[rows]), dtype=np.int64)
    return cluster_inclusion(inc[INCLUSION].to_numpy(), codes, len(labels))
