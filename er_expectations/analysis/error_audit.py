"""The error audit by cause (SPEC 12.1): ``erx.error_audit``.

Reviewers tag a benchmark cluster's errors with causes: a *tags table* with one row per
(cluster, kind, tag), kind "over" (records wrongly joined to the entity) or "under"
(records of the entity left out), optionally the records concerned. The audit estimates, per
tag and for the untagged errors, the share of records whose entity carries the tag, the
share of entities and the share among erroneous entities, with the design-based standard
errors and intervals of SPEC 6, and lists example clusters per tag.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from er_expectations.core.deprecation import old_call_forms
from er_expectations.core.errors import InputError
from er_expectations.core.hints import did_you_mean, quote_list
from er_expectations.engines.base import WeightsSpec
from er_expectations.stats import BenchmarkSample, RatioEstimate, cluster_errors
from er_expectations.stats.error_audit import AUDIT_CI_METHOD, check_share, tag_shares
from er_expectations.stats.estimator import (
    DEFAULT_N_BOOT,
    check_ci_level,
    check_interval_options,
    interval_seed,
    uses_bootstrap,
)
from er_expectations.stats.metrics import label_order

__all__ = ["KINDS", "RATE_COLUMNS", "UNTAGGED", "ErrorAudit", "TagColumns", "Tags", "audit_sample",
           "decode_tags", "encode_tags", "error_audit", "parse_tags"]

#: The two kinds of error a tag names (SPEC 2.2: A_r over-clustering, B_r under-clustering).
KINDS = ("over", "under")
#: The row of the erroneous clusters that carry no tag (SPEC 12.1: never dropped).
UNTAGGED = "untagged errors"
#: Columns of :attr:`ErrorAudit.rates`.
RATE_COLUMNS = ("tag", "share", "estimate", "std_error", "ci_lower", "ci_upper", "draws", "clusters", "note",
                "ci_method")
#: Longest tag accepted (a tag is a short cause such as "name typo", shown on pages).
MAX_TAG_LENGTH = 200


@dataclass(frozen=True, slots=True)
class TagColumns:
    """Column names of a tags table (SPEC 12.1); ``records`` is optional in the table."""

    cluster: str = "cluster"
    kind: str = "kind"
    tag: str = "tag"
    records: str = "records"

    @classmethod
    def of(cls, value: TagColumns | Mapping[str, str] | None) -> TagColumns:
        if value is None:
            return cls()
        if isinstance(value, TagColumns):
            return value
        if not isinstance(value, Mapping):
            raise InputError(f"tag_columns={value!r}: give a mapping such as {{'cluster': 'benchmark_id'}}")
        unknown = [k for k in value if k not in cls.__slots__]
        if unknown:
            raise InputError(f"tag_columns: unknown key(s) {quote_list(map(str, unknown), conjunction='and')}; "
                             f"the keys are {quote_list(cls.__slots__, conjunction='and')}")
        for k, v in value.items():
            if not isinstance(v, str) or not v:
                raise InputError(f"tag_columns[{k!r}]={v!r}: give a column name")
        return cls(**dict(value))


@dataclass(frozen=True, slots=True)
class Tags:
    """A validated tags table: one entry per (cluster, kind, tag), in the table's order.

    ``records`` holds the record ids each row names (an empty tuple when none).
    """

    cluster: tuple[object, ...]
    kind: tuple[str, ...]
    tag: tuple[str, ...]
    records: tuple[tuple[object, ...], ...]
    known_tags: tuple[str, ...] | None = None
    source: str = "tags table"

    def __len__(self) -> int:
        return len(self.cluster)

    def names(self) -> tuple[str, ...]:
        """The tags: the known list when given (a tag never used still gets its rate of 0),
        else the tags used, in the order of their first row."""
        used = tuple(dict.fromkeys(self.tag))
        return self.known_tags if self.known_tags is not None else used


def _where(source: str, row: int, column: str) -> str:
    return f"{source}, row {row + 1}, column {column!r}"


def _id_text(v: object) -> str:
    return repr(v.item() if isinstance(v, np.generic) else v)


def _split_records(value: object, separator: str) -> list[object] | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return []
    if isinstance(value, (list, tuple, np.ndarray)):
        return list(value)
    if isinstance(value, str):
        return [p.strip() for p in value.split(separator) if p.strip()]
    return None


def _locate(values: list[object], index: pd.Index) -> np.ndarray:
    """Positions of ``values`` in ``index`` (−1 where absent), exact for ids beyond 2^53."""
    if not values:
        return np.zeros(0, dtype=np.int64)
    probe = pd.Index(values, dtype=object) if index.dtype == object else pd.Index(values)
    if probe.dtype != index.dtype:  # mixed values (a NaN among ids beyond 2^53 reads as float64): compare exactly
        probe = pd.Index(values, dtype=object)
    try:
        return np.asarray(index.get_indexer(probe), dtype=np.int64)
    except (TypeError, ValueError):
        return np.asarray(pd.Index(index, dtype=object).get_indexer(pd.Index(values, dtype=object)), dtype=np.int64)


def _type_hint(value: object, index: pd.Index) -> str:
    text = str(value)
    matches = [v for v in index[:100_000] if str(v) == text]
    if matches:
        return (f" (the benchmark has {_id_text(matches[0])}, of type {type(matches[0]).__name__}, where the table "
                f"has {_id_text(value)} of type {type(value).__name__}: give the ids with the same type)")
    return ""


def parse_tags(tags: pd.DataFrame, *, benchmark_ids: Iterable[object], record_ids: Iterable[object] | None = None,
               known_tags: Sequence[str] | None = None, columns: TagColumns | Mapping[str, str] | None = None,
               separator: str = ";", source: str = "tags table", text_ids: bool = False) -> Tags:
    """Validate a tags table (SPEC 12.1) against the benchmark's cluster ids and the record ids.

    Errors name ``source`` (the file, or "tags table"), the row (1 = first data row) and the
    column: a missing column, an empty cell, a kind other than over/under, a tag that is not
    text, too long, reserved ("untagged errors") or, with ``known_tags``, not in that list,
    a cluster id the benchmark does not hold, a record id the records do not hold (or record
    ids without ``record_ids``), and rows given twice. ``text_ids`` (a CSV file, where every
    cell is text): an id written as a whole number matches an integer id of the benchmark or
    the records.
    """
    if not isinstance(tags, pd.DataFrame):
        raise InputError(f"{source}: give the tags as a table (a pandas DataFrame), not {type(tags).__name__}")
    cols = TagColumns.of(columns)
    missing = [c for c in (cols.cluster, cols.kind, cols.tag) if c not in tags.columns]
    if missing:
        present = quote_list(map(str, tags.columns), conjunction="and") if len(tags.columns) else "none"
        raise InputError(f"{source}: no column {quote_list(missing, conjunction='and')}; the table has {present}. "
                         "Name the columns with tag_columns={'cluster': …, 'kind': …, 'tag': …}")
    if not isinstance(separator, str) or not separator:
        raise InputError(f"separator={separator!r}: give the text that separates record ids, such as ';'")
    known: tuple[str, ...] | None = None
    if known_tags is not None:
        if isinstance(known_tags, str) or not all(isinstance(t, str) and t.strip() for t in known_tags):
            raise InputError(f"known_tags={known_tags!r}: give a list of tag names (non-empty text)")
        known = tuple(dict.fromkeys(t.strip() for t in known_tags))
        if UNTAGGED in known:
            raise InputError(f"known_tags: {UNTAGGED!r} is the name of the untagged errors' row; rename that tag")
    bench = pd.Index(pd.unique(pd.Series(list(benchmark_ids), dtype=object)))
    rec_index = None if record_ids is None else pd.Index(record_ids)

    def as_id(value: object, index: pd.Index | None) -> object:
        if text_ids and isinstance(value, str) and index is not None and len(index) and all(
                isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in index[:1]):
            text = value.strip()
            if text.lstrip("-").isdigit():
                return int(text)
        return value

    has_records = cols.records in tags.columns
    # every id is looked up in one vectorised pass before the rows are checked in order (a lookup
    # per row cost 100 µs of pandas overhead: 4 s at 20,000 rows); errors still name the first bad row
    raw = list(tags.itertuples(index=False, name=None))
    columns_ = list(tags.columns)
    at_cluster = columns_.index(cols.cluster)
    cluster_pos = _locate([as_id(row[at_cluster], bench) for row in raw], bench)
    parsed_records: list[list[object] | None] = []
    record_pos = np.zeros(0, dtype=np.int64)
    offsets = [0]
    if has_records:
        at_records = columns_.index(cols.records)
        flat: list[object] = []
        for row in raw:
            parsed = _split_records(row[at_records], separator)
            parsed_records.append(parsed)
            if parsed is not None and rec_index is not None:
                flat.extend(as_id(v, rec_index) for v in parsed)
            offsets.append(len(flat))
        if rec_index is not None:
            record_pos = _locate(flat, rec_index)
    out_c: list[object] = []
    out_k: list[str] = []
    out_t: list[str] = []
    out_r: list[tuple[object, ...]] = []
    seen: dict[tuple[str, str, str], int] = {}
    for i, row in enumerate(raw):
        rec = dict(zip(columns_, row, strict=True))
        c, kind, tag = as_id(rec[cols.cluster], bench), rec[cols.kind], rec[cols.tag]
        for value, col in ((c, cols.cluster), (kind, cols.kind), (tag, cols.tag)):
            if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA or (
                    isinstance(value, str) and not value.strip()):
                raise InputError(f"{_where(source, i, col)}: the cell is empty; every row needs a cluster id, a kind "
                                 "(over or under) and a tag")
        if not isinstance(kind, str) or kind.strip().lower() not in KINDS:
            close = did_you_mean(str(kind).strip().lower(), KINDS)
            raise InputError(f"{_where(source, i, cols.kind)}: {kind!r} is not a kind of error"
                             f"{'; ' + close if close else ''}. Use 'over' (records wrongly joined to the entity) or "
                             "'under' (records of the entity left out)")
        kind = kind.strip().lower()
        if not isinstance(tag, str):
            raise InputError(f"{_where(source, i, cols.tag)}: {tag!r} is not text; a tag names a cause, such as "
                             "'name typo'")
        tag = tag.strip()
        if len(tag) > MAX_TAG_LENGTH:
            raise InputError(f"{_where(source, i, cols.tag)}: the tag has {len(tag)} characters; give a short cause "
                             f"(at most {MAX_TAG_LENGTH})")
        if tag == UNTAGGED:
            raise InputError(f"{_where(source, i, cols.tag)}: {UNTAGGED!r} is the name of the untagged errors' row; "
                             "rename the tag")
        if known is not None and tag not in known:
            close = did_you_mean(tag, known)
            raise InputError(f"{_where(source, i, cols.tag)}: unknown tag {tag!r}{'; ' + close if close else ''}. "
                             f"The known tags are {quote_list(known, conjunction='and')}: add it to the list or fix "
                             "the row")
        if isinstance(c, float) and c.is_integer():
            raise InputError(f"{_where(source, i, cols.cluster)}: the cluster id {c!r} is a decimal number; give ids "
                             "as integers or text (a column with an empty cell reads as decimals: fill or drop it)")
        if cluster_pos[i] < 0:
            raise InputError(f"{_where(source, i, cols.cluster)}: the cluster {_id_text(c)} is not in the benchmark"
                             f"{_type_hint(c, bench)}; tags belong to benchmark (true) clusters")
        key = (str(type(c)) + str(c), kind, tag)
        if key in seen:
            raise InputError(f"{_where(source, i, cols.tag)}: the row repeats row {seen[key] + 1} (cluster "
                             f"{_id_text(c)}, kind {kind!r}, tag {tag!r}); give each tag of a cluster once, with "
                             "all its records on one row")
        seen[key] = i
        ids: list[object] = []
        if has_records:
            parsed = parsed_records[i]
            if parsed is None:
                raise InputError(f"{_where(source, i, cols.records)}: {rec[cols.records]!r} is not a list of record "
                                 f"ids; give a list or ids joined by {separator!r}")
            ids = [as_id(v, rec_index) for v in parsed]
        if ids:
            if rec_index is None:
                raise InputError(f"{_where(source, i, cols.records)}: the row names records but no record ids were "
                                 "given; pass record_id=<column> so that they can be checked")
            pos = record_pos[offsets[i]:offsets[i + 1]]
            if (pos < 0).any():
                bad = ids[int(np.flatnonzero(pos < 0)[0])]
                raise InputError(f"{_where(source, i, cols.records)}: the record {_id_text(bad)} is not in the "
                                 f"records{_type_hint(bad, rec_index)}")
            ids = [rec_index[p] for p in pos]
        out_c.append(bench[cluster_pos[i]])
        out_k.append(kind)
        out_t.append(tag)
        out_r.append(tuple(dict.fromkeys(ids)))
    return Tags(tuple(out_c), tuple(out_k), tuple(out_t), tuple(out_r), known, source)


@dataclass(frozen=True)
class ErrorAudit:
    """The error audit of one release (SPEC 12.1).

    ``rates``: one row per (tag, share) with :data:`RATE_COLUMNS`, the tags in
    :attr:`tags` order, then :data:`UNTAGGED`. ``examples``: up to ``examples`` clusters per
    tag (most draws first), with columns tag, cluster, kinds, draws, size, records.
    ``estimates[tag][share]`` holds the full :class:`RatioEstimate`. ``notes`` says what was
    set aside (tags on clusters outside the release, or without an error in it).
    """

    rates: pd.DataFrame
    examples: pd.DataFrame
    estimates: dict[str, dict[str, RatioEstimate]] = field(repr=False)
    tags: tuple[str, ...]
    design: str
    ci_level: float
    ci_method: str
    draws: int
    clusters: int
    erroneous_draws: int
    n_boot: int | None = None
    seed: int | None = None
    notes: tuple[str, ...] = ()

    def rate(self, tag: str, share: str = "records") -> RatioEstimate:
        """The estimate of one tag's share (``share``: records, entities or erroneous)."""
        share = check_share(share)
        if tag not in self.estimates:
            close = did_you_mean(str(tag), list(self.estimates))
            raise InputError(f"tag={tag!r} is not in the audit{'; ' + close if close else ''}. Its tags are "
                             f"{quote_list(list(self.estimates), conjunction='and')}")
        return self.estimates[tag][share]


def audit_sample(sample: BenchmarkSample, tags: Tags, *, ci_level: float = 0.95, bias_adjust: bool = True,
                 ci_method: str = AUDIT_CI_METHOD, n_boot: int = DEFAULT_N_BOOT, seed: int | None = None,
                 examples: int = 5) -> ErrorAudit:
    """The audit of an aggregated benchmark sample (what :func:`error_audit` and the GX metric
    share): the tags' memberships on the sampled clusters, then :func:`tag_shares`."""
    level = check_ci_level(ci_level)
    method, n_boot, seed = check_interval_options(ci_method, n_boot, seed)
    if isinstance(examples, bool) or not isinstance(examples, (int, np.integer)) or not 0 <= int(examples) <= 1000:
        raise InputError(f"examples={examples!r}: give how many example clusters to list per tag (0 to 1000)")
    if uses_bootstrap(method):
        seed = interval_seed(seed)
    err = cluster_errors(sample).ei > 0
    labels = pd.Index(sample.labels)
    pos = _locate(list(tags.cluster), labels)
    names = tags.names()
    members = {t: np.zeros(len(labels), dtype=bool) for t in names}
    kinds: dict[tuple[str, int], set[str]] = {}
    recs: dict[tuple[str, int], list[object]] = {}
    outside, clean = set(), set()
    for j, (p, kind, tag, ids) in enumerate(zip(pos, tags.kind, tags.tag, tags.records, strict=True)):
        if p < 0:
            outside.add(j)
            continue
        if not err[p]:
            clean.add(int(p))
            continue
        members[tag][p] = True
        kinds.setdefault((tag, int(p)), set()).add(kind)
        recs.setdefault((tag, int(p)), []).extend(ids)
    tagged_any = np.zeros(len(labels), dtype=bool)
    for m in members.values():
        tagged_any |= m
    members[UNTAGGED] = err & ~tagged_any
    notes = []
    if outside:
        notes.append(f"{len(outside)} tag row(s) name benchmark clusters with no record in this release; set aside "
                     "(SPEC 2.1)")
    if clean:
        notes.append(f"{len(clean)} tagged cluster(s) have no error in this release; their tags are not counted "
                     "(a tag names the cause of an error)")
    est = tag_shares(sample.size, sample.weight, sample.draws, err, members, ci_level=level, bias_adjust=bias_adjust,
                     ci_method=method, n_boot=n_boot, seed=seed, order=label_order(sample.labels))
    rows = [{"tag": t, "share": s, "estimate": r.estimate, "std_error": r.std_error, "ci_lower": r.ci_lower,
             "ci_upper": r.ci_upper, "draws": r.draws, "clusters": r.clusters, "note": r.note, "ci_method": r.interval}
            for t, row in est.items() for s, r in row.items()]
    rates = pd.DataFrame(rows, columns=list(RATE_COLUMNS)).astype(
        {"estimate": "float64", "std_error": "float64", "ci_lower": "float64", "ci_upper": "float64"})
    ex_rows = []
    order = np.lexsort((np.asarray([str(v) for v in sample.labels]), -sample.size, -sample.draws))
    for t in (*names, UNTAGGED):
        chosen = [int(i) for i in order[np.flatnonzero(members[t][order])[: int(examples)]]]
        for i in chosen:
            ex_rows.append({"tag": t, "cluster": sample.labels[i],
                            "kinds": ", ".join(sorted(kinds.get((t, i), ()))),
                            "draws": int(sample.draws[i]), "size": int(sample.size[i]),
                            "records": tuple(dict.fromkeys(recs.get((t, i), ())))})
    ex = pd.DataFrame(ex_rows, columns=["tag", "cluster", "kinds", "draws", "size", "records"])
    d = sample.draws.astype(np.int64)
    return ErrorAudit(rates=rates, examples=ex, estimates=est, tags=names, design=sample.design, ci_level=level,
                      ci_method=method, draws=int(d.sum()), clusters=int((d > 0).sum()),
                      erroneous_draws=int(d[err].sum()), n_boot=n_boot if uses_bootstrap(method) else None,
                      seed=seed if uses_bootstrap(method) else None, notes=tuple(notes))


@old_call_forms(positional=('prediction', 'reference', 'tags'), defaults={'prediction': 'inventor_id', 'reference': 'benchmark_id'})
def error_audit(
    df: pd.DataFrame,
    *,
    prediction: Hashable,
    reference: Hashable,
    tags: pd.DataFrame | None = None,
    record_id: Hashable | None = None,
    weights: str | dict | WeightsSpec = "cluster_size",
    draws: Hashable | None = None,
    known_tags: Sequence[str] | None = None,
    tag_columns: TagColumns | Mapping[str, str] | None = None,
    separator: str = ";",
    ci_level: float = 0.95,
    bias_adjust: bool = True,
    ci_method: str = AUDIT_CI_METHOD,
    n_boot: int = DEFAULT_N_BOOT,
    seed: int | None = None,
    examples: int = 5,
) -> ErrorAudit:
    """The error audit by cause of one release (SPEC 12.1).

    ``df`` is the evaluation table of ``erx.estimate`` (one row per record, ``prediction``
    and ``reference``; ``weights`` and ``draws`` as there). ``tags`` has one row per
    (benchmark cluster, kind, tag): columns ``cluster`` (a ``reference`` id), ``kind``
    ("over" or "under"), ``tag`` and optionally ``records`` (a list, or ids joined by
    ``separator``; checked against ``record_id``); other names through ``tag_columns``.
    ``known_tags`` (optional) is the list of causes reviewers choose from: a tag outside it
    is an error, and a known tag nobody used gets its rate (0, with the zero-event bound).

    Returns an :class:`ErrorAudit`: per tag and for :data:`UNTAGGED` the share of records
    whose entity carries it, the share of entities and the share among entities with an
    error, each with its standard error and interval (``ci_method`` and ``ci_level`` as in
    ``erx.estimate``; the default here is ``"logit"``, :data:`AUDIT_CI_METHOD`: shares of
    causes are small, and the linearised interval under-covers them), and example clusters per tag. A tag counts on a cluster only where
    that cluster has an error in the release (EI > 0, SPEC 4); tags on clusters outside the
    release or without an error there are set aside with a note.

    Parameters
    ----------
    df : pandas.DataFrame
        The evaluation table, one row per record (SPEC 2.1).
    prediction : hashable
        The column of predicted cluster ids (null: outside the release).
    reference : hashable
        The column of true (benchmark) cluster ids (null: not in the benchmark).
    tags : pandas.DataFrame
        One row per (benchmark cluster, kind, tag), above (SPEC 12.1).
    record_id : hashable, optional
        The record id column; needed when the tags name records.
    weights : str, dict or column name
        The sampling design, as in :func:`er_expectations.estimate` (SPEC 1).
    draws : hashable, optional
        A column with the number of times each benchmark cluster was drawn.
    known_tags : sequence of str, optional
        The causes reviewers choose from; a tag outside it is an error.
    tag_columns : TagColumns or mapping, optional
        Names of the tags table's columns (``cluster``, ``kind``, ``tag``, ``records``).
    separator : str
        The text between record ids in a ``records`` cell.
    ci_level : float
        Confidence level of the intervals, in (0, 1).
    bias_adjust : bool
        Use the bias-adjusted ratio estimator (SPEC 6).
    ci_method : str
        The interval method (SPEC 6); default ``"logit"``.
    n_boot : int
        Bootstrap resamples, for the bootstrap methods.
    seed : int, optional
        Seed of the bootstrap; ``None`` is ``DEFAULT_SEED`` (0), recorded.
    examples : int
        How many example clusters to list per tag (0 to 1000).

    Returns
    -------
    ErrorAudit
        The rates per tag and share, with examples and notes.

    Examples
    --------
    X = {1, 2, 3} is split over two predicted clusters (an error, tagged); Y and Z are right.
    X holds 3 of the 6 records, 1 of the 3 entities and the one erroneous entity:

    >>> import pandas as pd
    >>> import er_expectations as erx
    >>> df = pd.DataFrame({"rid": [1, 2, 3, 4, 5, 6], "pred": ["a", "a", "b", "c", "c", "d"],
    ...                    "ref": ["X", "X", "X", "Y", "Y", "Z"]})
    >>> tags = pd.DataFrame({"cluster": ["X"], "kind": ["under"], "tag": ["name typo"], "records": [[3]]})
    >>> audit = erx.error_audit(df, prediction="pred", reference="ref", tags=tags, record_id="rid",
    ...                         weights="uniform", bias_adjust=False)
    >>> [round(audit.rate("name typo", s).estimate, 4) for s in ("records", "entities", "erroneous")]
    [0.5, 0.3333, 1.0]
    """
    from er_expectations.analysis.release import check_flag
    from er_expectations.engines.pandas.release import PandasRelease

    check_ci_level(ci_level)
    check_flag(bias_adjust, parameter="bias_adjust")
    check_interval_options(ci_method, n_boot, seed)
    if tags is None:
        raise InputError("tags=None: give the tags table (columns cluster, kind, tag, optionally records)")
    rel = PandasRelease(df, prediction=prediction, record_id=record_id)
    sample = rel.benchmark_sample(reference=reference, weights=weights, draws=draws)
    parsed = parse_tags(tags, benchmark_ids=rel.df[reference].dropna(),
                        record_ids=None if record_id is None else rel.df[record_id], known_tags=known_tags,
                        columns=tag_columns, separator=separator)
    return audit_sample(sample, parsed, ci_level=ci_level, bias_adjust=bias_adjust, ci_method=ci_method,
                        n_boot=n_boot, seed=seed, examples=examples)


# -- the tags as a column of the records (for GX batches and checkpoints) ---------------------------


def _json_id(v: object) -> object:
    v = v.item() if isinstance(v, np.generic) else v
    if isinstance(v, (str, int)) and not isinstance(v, bool):
        return v
    raise InputError(f"the record id {v!r} cannot be written in a tags column: give ids as integers or text")


def encode_tags(tags: Tags, df: pd.DataFrame, reference: Hashable) -> pd.Series:
    """The column that carries ``tags`` on every record of its benchmark cluster, for a GX batch
    (``tags_column`` of ``expect_error_cause_rate_to_be_below``): JSON text, a list of
    ``[kind, tag, [record ids]]`` per cluster, null on records of untagged clusters. JSON keeps
    any tag text (quotes, HTML, separators) and integer ids beyond 2^53 exactly."""
    import json

    per: dict[object, list] = {}
    for c, kind, tag, ids in zip(tags.cluster, tags.kind, tags.tag, tags.records, strict=True):
        per.setdefault(c, []).append([kind, tag, [_json_id(i) for i in ids]])
    text = {c: json.dumps(rows, ensure_ascii=False) for c, rows in per.items()}
    ref = df[reference]
    index = pd.Index(list(text), dtype=object) if ref.dtype == object else pd.Index(list(text))
    pos = index.get_indexer(ref) if len(index) else np.full(len(ref), -1)
    values = np.asarray(list(text.values()), dtype=object)
    out = np.where(pos >= 0, values[np.maximum(pos, 0)] if len(values) else None, None)
    return pd.Series(out, index=df.index, dtype=object)


def decode_tags(df: pd.DataFrame, *, reference: Hashable, column: Hashable, record_id: Hashable | None,
                known_tags: Sequence[str] | None = None) -> Tags:
    """The tags carried by ``column`` (written by :func:`encode_tags`), checked: the value must be
    the same on every record of a benchmark cluster, valid JSON of ``[kind, tag, [ids]]`` rows, and
    each row passes :func:`parse_tags` (the errors name the column and the cluster)."""
    import json

    where = f"column {column!r}"
    if column not in df.columns:
        raise InputError(f"tags_column={column!r}: the batch has no such column; a checkpoint writes it from its "
                         "data.tags source (or add it with erx's encode_tags)")
    rows = df.loc[df[reference].notna() & df[column].notna(), [reference, column]]
    per = rows.drop_duplicates()
    dup = per[reference].duplicated(keep=False)
    if dup.any():
        c = per.loc[dup, reference].iloc[0]
        raise InputError(f"{where}: the records of benchmark cluster {_id_text(c)} carry different tags; the tags "
                         "of a cluster must be the same on each of its records")
    cluster, kind, tag, recs = [], [], [], []
    for c, value in per.itertuples(index=False, name=None):
        try:
            parsed = json.loads(value) if isinstance(value, str) else None
        except ValueError:
            parsed = None
        ok = isinstance(parsed, list) and all(
            isinstance(r, list) and len(r) == 3 and isinstance(r[2], list) for r in parsed)
        if not ok:
            raise InputError(f"{where}, benchmark cluster {_id_text(c)}: {str(value)[:80]!r} is not a list of "
                             "[kind, tag, [record ids]] in JSON (write the column with encode_tags)")
        for k, t, ids in parsed:
            cluster.append(c)
            kind.append(k)
            tag.append(t)
            recs.append(ids)
    table = pd.DataFrame({"cluster": pd.Series(cluster, dtype=object), "kind": kind, "tag": tag, "records": recs})
    return parse_tags(table, benchmark_ids=df[reference].dropna(),
                      record_ids=None if record_id is None else df[record_id], known_tags=known_tags,
                      source=where)
