"""Finding the records to add to a true cluster (B_r, SPEC 2.2): a name search with typo tolerance.

The method's authors found the records missing from a predicted cluster with a search tool
tolerant of typographical errors (the paper's data-labelling section). :class:`RecordSearch`
answers such queries over a records table:

* **Normalised names.** A name is folded (Unicode NFKD without accents, ``ß`` → ``ss``,
  ``ø`` → ``o``, …; case folded; apostrophes dropped) and cut into tokens; the token order is
  ignored ("Smith, John" is "John Smith").
* **The index.** The distinct normalised names (U of them), the distinct tokens (the
  vocabulary, grouped by length) and, as numpy arrays, the postings token → names and
  name → records. Nothing scans the names per query.
* **A query.** Each query token is compared (rapidfuzz ``ratio``, an edit similarity: a
  transposed, missing or extra letter keeps it high) with the vocabulary tokens of similar
  length; an initial and a token it starts ("j", "john") have similarity 0.8. The matching
  tokens' postings give every name a token score (the query tokens' best similarities,
  weighted by their lengths). A one-letter query token finds no name by itself: it adds to
  the names the other tokens found. The best names are rescored with
  rapidfuzz's ``token_sort_ratio`` of the whole name: ``score = 0.7 · token score + 0.3 ·
  whole-name similarity``, in [0, 1].
* **Near the drawn record.** With ``near=r`` the records of r's block and with names like
  r's rank first (``rank = score + 0.15 · same block + 0.1 · name similarity to r``) and the
  members of ĉ(r) are marked. An empty query with ``near`` searches r's own name.
* **Nothing out of reach** (issue 31). :meth:`RecordSearch.find` lists at most ``per_name``
  records of one normalised name and says, per name listed, how many records carry it; and
  :meth:`RecordSearch.expand` gives *every* record of one normalised name (or one block),
  grouped by predicted cluster: the members of ĉ(r) apart (nothing to add), the records outside
  the release apart (no predicted cluster: they cannot be added, SPEC 9 rule 4), each other
  predicted cluster a group. An expansion is a few array look-ups (the names' and blocks'
  record lists are built once), whatever the name's size.
"""

from __future__ import annotations

import math
import re
from collections.abc import Hashable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from er_expectations.core.errors import InputError
from er_expectations.core.name_keys import name_key, name_tokens

__all__ = ["Expansion", "Found", "Group", "Hit", "NameCount", "RecordSearch", "name_key", "name_tokens"]

#: Most characters of a query (a name, not a document).
MAX_QUERY = 500
#: Token similarity (rapidfuzz ratio, 0-100) below which a vocabulary token does not match.
TOKEN_CUTOFF = 70
#: Similarity of an initial and a name token it starts ("j" and "john").
INITIAL_SIMILARITY = 0.8
#: Most vocabulary tokens one query token matches (the most similar) and names rescored.
MAX_TOKEN_MATCHES, MAX_RESCORED = 2000, 500

_key = name_key


@dataclass(frozen=True, slots=True)
class Hit:
    """One record found: its id (exact, in the records' type), row, name and block as written,
    ``score`` (query similarity in [0, 1]), ``rank`` (the score with the ``near`` bonuses), and
    with ``near``: ``same_block``, ``name_similarity`` (to r's name) and ``in_predicted``
    (already in ĉ(r): nothing to add); with a prediction, ``in_release`` (False: the record has
    no predicted cluster, so it cannot be added, SPEC 9 rule 4)."""

    record: object
    row: int
    name: object
    block: object
    score: float
    rank: float
    same_block: bool | None = None
    name_similarity: float | None = None
    in_predicted: bool | None = None
    in_release: bool | None = None
    key: str | None = None


@dataclass(frozen=True, slots=True)
class NameCount:
    """A normalised name among the hits: ``records`` carry it, ``shown`` of them are hits (the
    other ``records - shown`` are reached with :meth:`RecordSearch.expand`)."""

    key: str
    name: object
    records: int
    shown: int


@dataclass(frozen=True, slots=True)
class Found:
    """A search's answer: the ``hits``, each listed name with its record count (``names``, in
    the order of their first hit), and ``truncated`` (True when more records matched than the
    ``limit`` listed: ask again with a larger limit, or expand a name)."""

    hits: list[Hit]
    names: list[NameCount]
    truncated: bool


@dataclass(frozen=True, slots=True)
class Group:
    """The records of one predicted cluster in an expansion: its value as written, its
    ``rows`` (table rows, in table order) and ``cluster_size`` (all its records in the release)."""

    cluster: object
    rows: tuple[int, ...]
    cluster_size: int


@dataclass(frozen=True, slots=True)
class Expansion:
    """Every record of one normalised name (``kind="name"``) or one block (``kind="block"``),
    each exactly once: ``in_draw`` (members of the near record's predicted cluster ĉ(r),
    nothing to add), ``groups`` (one per other predicted cluster, the largest first) and
    ``outside`` (no predicted cluster: not in the release, never addable). ``records`` is their
    total; ``name`` the name as written of its first record (None for a block or no record)."""

    kind: str
    value: str
    name: object
    records: int
    in_draw: tuple[int, ...]
    groups: tuple[Group, ...]
    outside: tuple[int, ...]


def _csr(groups: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Members of each group: ``order[start[g]:start[g + 1]]`` are the positions with group g
    (positions with a negative group are left out)."""
    keep = np.flatnonzero(groups >= 0)
    order = keep[np.argsort(groups[keep], kind="stable")]
    start = np.zeros(n_groups + 1, dtype=np.int64)
    np.cumsum(np.bincount(groups[keep], minlength=n_groups), out=start[1:])
    return order.astype(np.int64, copy=False), start


class RecordSearch:
    """A typo-tolerant name search over a records table; make one with :meth:`build`."""

    def __init__(self) -> None:  # filled by build()
        self.size = 0
        self._ids: object = np.empty(0)  # the id column's array (numpy or Arrow): no Python object per record
        self._name_code: np.ndarray = np.empty(0, dtype=np.int64)  # row -> distinct name as written
        self._name_text: list = []
        self._block_text: list = []
        self._block_code: np.ndarray | None = None
        self._cluster_code: np.ndarray | None = None
        self._row_key: np.ndarray = np.empty(0, dtype=np.int32)
        self._keys: list[str] = []
        self._key_rows: tuple[np.ndarray, np.ndarray] = (np.empty(0, dtype=np.int64), np.zeros(1, dtype=np.int64))
        self._token_keys: tuple[np.ndarray, np.ndarray] = (np.empty(0, dtype=np.int64), np.zeros(1, dtype=np.int64))
        self._words: list[str] = []  # the vocabulary, by length
        self._word_ids: np.ndarray = np.empty(0, dtype=np.int64)
        self._length_start: np.ndarray = np.zeros(1, dtype=np.int64)  # words of length L: [start[L], start[L+1])
        self._initials: dict[str, int] = {}  # the one-letter words (initials) of the vocabulary
        self._index: pd.Index | None = None
        self._cluster_text: list = []
        self._cluster_size: np.ndarray = np.empty(0, dtype=np.int64)
        self._key_of: dict[str, int] = {}  # normalised name -> its number
        self._block_of: dict[str, int] | None = None  # block text -> its code
        self._block_rows: tuple[np.ndarray, np.ndarray] = (np.empty(0, dtype=np.int64), np.zeros(1, dtype=np.int64))

    @classmethod
    def build(cls, records: pd.DataFrame, *, record_id: Hashable, name: Hashable, block: Hashable | None = None,
              prediction: Hashable | None = None) -> RecordSearch:
        """Index ``records[name]`` (one row per record; a null name is not searchable).

        ``block`` ranks candidates from the drawn record's block first; ``prediction`` (the
        predicted cluster column) marks the members of ĉ(r).
        """
        from rapidfuzz import process  # noqa: F401 - fail here, not at the first query, if missing

        from er_expectations.analysis.labels import check_records

        frame = check_records(records, record_id, record_id if prediction is None else prediction,
                              (("name", name), ("block", block)))
        self = cls()
        self.size = len(frame)
        self._ids = frame[record_id].array
        raw_codes, raw_names = pd.factorize(frame[name], use_na_sentinel=True)
        self._name_code, self._name_text = raw_codes, raw_names.tolist()
        keys = [_key(v) for v in self._name_text]
        key_codes, unique_keys = pd.factorize(pd.Series(keys, dtype=object))
        empty = np.flatnonzero(unique_keys == "")
        key_of_raw = key_codes.astype(np.int64)
        if empty.size:  # a name of punctuation only: not searchable
            key_of_raw[key_of_raw == empty[0]] = -1
        # every name null: no key at all (indexing the empty key list would fail)
        row_key = (np.where(raw_codes >= 0, key_of_raw[np.maximum(raw_codes, 0)], -1) if key_of_raw.size
                   else np.full(raw_codes.shape, -1, dtype=np.int64))
        self._row_key = row_key.astype(np.int32 if len(unique_keys) < 2**31 else np.int64)
        self._keys = unique_keys.tolist()
        self._key_rows = _csr(row_key, len(self._keys))
        self._key_of = {k: i for i, k in enumerate(self._keys)}
        vocab: dict[str, int] = {}
        tok: list[int] = []
        owner: list[int] = []
        for k, key in enumerate(self._keys):
            for t in set(key.split()):
                tok.append(vocab.setdefault(t, len(vocab)))
                owner.append(k)
        tok_arr, owner_arr = np.asarray(tok, dtype=np.int64), np.asarray(owner, dtype=np.int64)
        order, start = _csr(tok_arr, len(vocab))
        self._token_keys = (owner_arr[order], start)
        words = list(vocab)
        lengths = np.fromiter((len(w) for w in words), dtype=np.int64, count=len(words))
        by_length = np.argsort(lengths, kind="stable")
        self._words = [words[i] for i in by_length.tolist()]
        self._word_ids = by_length
        self._length_start = np.searchsorted(lengths[by_length], np.arange(int(lengths.max(initial=0)) + 2))
        self._initials = {w: i for w, i in vocab.items() if len(w) == 1}
        if block is not None:
            codes, blocks = pd.factorize(frame[block], use_na_sentinel=True)
            self._block_code, self._block_text = codes, blocks.tolist()
            self._block_rows = _csr(np.asarray(codes, dtype=np.int64), len(self._block_text))
            self._block_of = {str(_plain(b)): i for i, b in enumerate(self._block_text)}
        if prediction is not None:
            self._cluster_code, clusters = pd.factorize(frame[prediction], use_na_sentinel=True)
            self._cluster_text = clusters.tolist()
            self._cluster_size = np.bincount(self._cluster_code[self._cluster_code >= 0], minlength=len(clusters))
        return self

    # -- looking up ---------------------------------------------------------------------------------
    def row_of(self, record: object) -> int:
        """The row of a record id (its exact value, or its text); raises when unknown."""
        if self._index is None:
            self._index = pd.Index(self._ids)
        alt = str(record) if isinstance(record, (int, np.integer)) and not isinstance(record, bool) else None
        for candidate in (record, _as_int(record), alt):
            if candidate is None:
                continue
            try:
                loc = self._index.get_loc(candidate)
            except (KeyError, TypeError):
                continue
            if isinstance(loc, (int, np.integer)):
                return int(loc)
            raise InputError(f"record id {record!r} appears more than once in the records; each record appears once")
        raise InputError(f"near={record!r}: no such record id in the records")

    def _similar_words(self, t: str) -> tuple[np.ndarray, np.ndarray]:
        """The vocabulary words whose rapidfuzz ratio with ``t`` reaches :data:`TOKEN_CUTOFF`, and
        their similarities in [0, 1]. Only the words of a length that can reach it are compared:
        ratio = 2·LCS / (|t| + |u|) ≤ 2·min(|t|, |u|) / (|t| + |u|)."""
        from rapidfuzz import fuzz, process

        cut = TOKEN_CUTOFF / 100.0
        low, high = math.ceil(len(t) * cut / (2 - cut) - 1e-9), math.floor(len(t) * (2 - cut) / cut + 1e-9)
        last = len(self._length_start) - 1
        a, b = int(self._length_start[min(low, last)]), int(self._length_start[min(high + 1, last)])
        if a == b:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)
        sims = process.cdist([t], self._words[a:b], scorer=fuzz.ratio, score_cutoff=TOKEN_CUTOFF, dtype=np.float32,
                             workers=1)[0]
        hit = np.flatnonzero(sims)
        return self._word_ids[a + hit], sims[hit] / np.float32(100.0)

    def _token_scores(self, tokens: list[str]) -> np.ndarray:
        """Per distinct name, the length-weighted best similarity of each query token, in [0, 1]."""
        total = np.zeros(len(self._keys), dtype=np.float32)
        owners, start = self._token_keys
        weight = _weights(tokens)
        for t, w in zip(tokens, weight.tolist(), strict=True):
            tids, sims = self._similar_words(t)
            initial = self._initials.get(t[0]) if len(t) > 1 else None
            if initial is not None:  # "john" meets the initial "j" of "J. Smith"
                tids = np.append(tids, np.int64(initial))
                sims = np.append(sims, np.float32(INITIAL_SIMILARITY))
            if tids.size == 0:
                continue
            if tids.size > MAX_TOKEN_MATCHES:
                best = np.argpartition(-sims, MAX_TOKEN_MATCHES - 1)[:MAX_TOKEN_MATCHES]
                tids, sims = tids[best], sims[best]
            up = np.argsort(sims, kind="stable")  # ascending: the best match of a name is written last
            tids, sims = tids[up], sims[up]
            counts = start[tids + 1] - start[tids]
            pos = np.repeat(start[tids] - np.cumsum(counts) + counts, counts) + np.arange(int(counts.sum()))
            best_of_name = np.zeros(len(self._keys), dtype=np.float32)
            best_of_name[owners[pos]] = np.repeat(sims, counts)
            total += np.float32(w) * best_of_name
        return total

    def search(self, text: str, *, near: object | None = None, limit: int = 20, per_name: int = 5) -> list[Hit]:
        """The hits of :meth:`find` (the ``limit`` records whose names best match ``text``)."""
        return self.find(text, near=near, limit=limit, per_name=per_name).hits

    def find(self, text: str, *, near: object | None = None, limit: int = 20, per_name: int = 5) -> Found:
        """The ``limit`` records whose names best match ``text`` (typos, accents, case and name
        order tolerated), best first; ``near`` is the drawn record's id (see the module). At most
        ``per_name`` records of one (normalised) name are listed, those of r's block first, so
        that a common name does not hide the other spellings; :attr:`Found.names` counts every
        record of each listed name (the rest: :meth:`expand`)."""
        from rapidfuzz import fuzz, process

        if not isinstance(text, str):
            raise InputError(f"text={text!r}: give the name to search for")
        if isinstance(limit, bool) or not isinstance(limit, (int, np.integer)) or not 1 <= limit <= 1000:
            raise InputError(f"limit={limit!r}: give a whole number from 1 to 1000")
        if isinstance(per_name, bool) or not isinstance(per_name, (int, np.integer)) or not 1 <= per_name <= 1000:
            raise InputError(f"per_name={per_name!r}: give a whole number from 1 to 1000")
        if len(text) > MAX_QUERY:
            raise InputError(f"text: {len(text):,} characters; a search is a name of at most {MAX_QUERY}")
        near_row = None if near is None else self.row_of(near)
        near_key = None if near_row is None else int(self._row_key[near_row])
        tokens = name_tokens(text)
        if not tokens and near_key is not None and near_key >= 0:
            tokens = self._keys[near_key].split()
        tokens = [t for t in dict.fromkeys(tokens)]
        nothing = Found(hits=[], names=[], truncated=False)
        if not tokens or not self._keys:
            return nothing
        total = self._token_scores(tokens)
        found = np.flatnonzero(total)
        n_top = min(MAX_RESCORED, int(found.size))
        if n_top == 0:
            return nothing
        top = found[np.argpartition(-total[found], n_top - 1)[:n_top]] if found.size > n_top else found
        query = " ".join(sorted(tokens))
        names = [self._keys[k] for k in top.tolist()]
        whole = process.cdist([query], names, scorer=fuzz.token_sort_ratio, dtype=np.float32, workers=1)[0] / 100.0
        token_score = total[top].astype(np.float64)
        for t, w in zip(tokens, _weights(tokens).tolist(), strict=True):
            if len(t) == 1:  # the initial "j" meets "john" of the names found by the other tokens
                token_score += [w * INITIAL_SIMILARITY if t not in n.split() and any(u.startswith(t) for u in n.split())
                                else 0.0 for n in names]
        score = 0.7 * np.minimum(token_score, 1.0) + 0.3 * whole
        like_near = None
        if near_key is not None and near_key >= 0:
            like_near = process.cdist([self._keys[near_key]], names, scorer=fuzz.token_sort_ratio, dtype=np.float32,
                                      workers=1)[0] / 100.0
        hits = self._hits(top, score, like_near, near_row, limit, per_name)
        start = self._key_rows[1]
        listable = int(np.minimum(start[top + 1] - start[top], per_name).sum())
        counts: dict[str, list] = {}
        for h in hits:
            if h.key not in counts:
                k = self.key_number(h.key)
                counts[h.key] = [h.name, int(start[k + 1] - start[k]), 0]
            counts[h.key][2] += 1
        return Found(hits=hits, names=[NameCount(key=k, name=v[0], records=v[1], shown=v[2]) for k, v in counts.items()],
                     truncated=listable > len(hits))

    def _hits(self, top: np.ndarray, score: np.ndarray, like_near: np.ndarray | None, near_row: int | None,
              limit: int, per_name: int) -> list[Hit]:
        rows_of, start = self._key_rows
        by_score = np.argsort(-score, kind="stable")
        rows: list[int] = []
        row_score: list[float] = []
        row_like: list[float] = []
        near_block = None if near_row is None or self._block_code is None else int(self._block_code[near_row])
        for i in by_score.tolist():
            k = int(top[i])
            members = rows_of[start[k]:start[k + 1]]
            if near_block is not None and near_block >= 0 and members.size > 1:
                members = members[np.argsort(self._block_code[members] != near_block, kind="stable")]
            members = members[:per_name]
            rows.extend(members.tolist())
            row_score.extend([float(score[i])] * members.size)
            row_like.extend([float(like_near[i]) if like_near is not None else 0.0] * members.size)
            if near_row is None and len(rows) >= limit:
                break
            if len(rows) >= 50 * limit:
                break
        r = np.asarray(rows, dtype=np.int64)
        s = np.asarray(row_score, dtype=np.float64)
        same = in_pred = None
        rank = s.copy()
        if near_row is not None:
            rank += 0.1 * np.asarray(row_like)
            if near_block is not None:
                same = (self._block_code[r] == near_block) & (near_block >= 0)
                rank += 0.15 * same
            if self._cluster_code is not None:
                c = int(self._cluster_code[near_row])
                in_pred = (self._cluster_code[r] == c) & (c >= 0)
        order = np.argsort(-rank, kind="stable")[:limit]
        return [Hit(record=_plain(self._ids[int(r[j])]), row=int(r[j]),
                    name=self._text(self._name_code, self._name_text, r[j]),
                    block=self._text(self._block_code, self._block_text, r[j]), score=round(float(s[j]), 6),
                    rank=round(float(rank[j]), 6), same_block=None if same is None else bool(same[j]),
                    name_similarity=None if near_row is None else round(float(row_like[j]), 6),
                    in_predicted=None if in_pred is None else bool(in_pred[j]),
                    in_release=None if self._cluster_code is None else bool(self._cluster_code[r[j]] >= 0),
                    key=self._keys[int(self._row_key[r[j]])])
                for j in order.tolist()]

    # -- every record of a name or a block ---------------------------------------------------------------
    def key_number(self, key: str) -> int:
        """The number of a normalised name (:func:`name_key`), -1 when no record has it."""
        return self._key_of.get(key, -1)

    def expand(self, *, name: str | None = None, block: object | None = None, near: object | None = None) -> Expansion:
        """Every record of the normalised name of ``name`` (any spelling of it: "Droz,
        Pierre-Yves" is "Pierre-Yves Droz") or of the block ``block`` (its value or text),
        grouped by predicted cluster (see :class:`Expansion`); ``near`` is the drawn record's id,
        whose predicted cluster's members are set apart. An unknown name or block has no record."""
        if (name is None) == (block is None):
            raise InputError("expand: give name=<a name> or block=<a block>, one of the two")
        near_row = None if near is None else self.row_of(near)
        if name is not None:
            if not isinstance(name, str) or len(name) > MAX_QUERY:
                raise InputError(f"name={str(name)[:40]!r}: give a name of at most {MAX_QUERY} characters")
            kind, value = "name", name_key(name)
            k = self.key_number(value)
            rows_of, start = self._key_rows
            rows = rows_of[start[k]:start[k + 1]] if k >= 0 else rows_of[:0]
        else:
            if self._block_code is None:
                raise InputError("expand: the search was built without a block column; expand a name")
            kind, value = "block", str(block)
            b = self._block_number(value)
            rows_of, start = self._block_rows
            rows = rows_of[start[b]:start[b + 1]] if b >= 0 else rows_of[:0]
        rows = np.sort(rows)
        label = self._text(self._name_code, self._name_text, int(rows[0])) if kind == "name" and rows.size else None
        if self._cluster_code is None:  # no prediction: one group of everything
            return Expansion(kind=kind, value=value, name=label, records=int(rows.size), in_draw=(),
                             groups=(Group(cluster=None, rows=tuple(rows.tolist()), cluster_size=0),) if rows.size
                             else (), outside=())
        codes = self._cluster_code[rows]
        own = -1 if near_row is None else int(self._cluster_code[near_row])
        in_draw = rows[(codes == own) & (own >= 0)]
        outside = rows[codes < 0]
        rest = (codes >= 0) & (codes != own)
        by_cluster = np.argsort(codes[rest], kind="stable")  # rows stay in table order within a cluster
        rest_rows, rest_codes = rows[rest][by_cluster], codes[rest][by_cluster]
        clusters, first, sizes = np.unique(rest_codes, return_index=True, return_counts=True)
        groups = []
        for c in sorted(range(clusters.size), key=lambda i: (-int(sizes[i]), int(rest_rows[first[i]]))):
            code, a = int(clusters[c]), int(first[c])
            groups.append(Group(cluster=_plain(self._cluster_text[code]), rows=tuple(rest_rows[a:a + int(sizes[c])].tolist()),
                                cluster_size=int(self._cluster_size[code])))
        return Expansion(kind=kind, value=value, name=label, records=int(rows.size),
                         in_draw=tuple(in_draw.tolist()), groups=tuple(groups), outside=tuple(outside.tolist()))

    def block_of(self, row: int) -> object:
        """The block of a table row as written (None without a block column or when null)."""
        return self._text(self._block_code, self._block_text, row)

    def _block_number(self, text: str) -> int:
        return -1 if self._block_of is None else self._block_of.get(text, -1)

    @staticmethod
    def _text(codes: np.ndarray | None, texts: list, row: int) -> object:
        """A row's value as written (None when null), from its code."""
        if codes is None or codes[row] < 0:
            return None
        return texts[int(codes[row])]


def _weights(tokens: list[str]) -> np.ndarray:
    """Each query token's weight: its share of the query's letters."""
    weight = np.asarray([len(t) for t in tokens], dtype=np.float64)
    return weight / weight.sum()


def _plain(value: object) -> object:
    return value.item() if isinstance(value, np.generic) else value


def _as_int(value: object) -> int | None:
    if isinstance(value, str) and re.fullmatch(r"-?[0-9]+", value):
        return int(value)
    return None
