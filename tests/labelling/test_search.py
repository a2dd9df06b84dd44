"""The workbench's record search (issue 19): typo tolerance checked on hand-made names, ranking
near the drawn record, and the index against a brute-force scan."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz import fuzz

from er_expectations import InputError
from er_expectations.labelling.search import RecordSearch, name_tokens

BIG = 2**62 + 1

NAMES = ["John Smith", "Jane Smith", "Johan Smithers", "José Álvarez", "Thomas Müller", "Anna Mueller",
         "Li Wei", "Wei Li", "O'Brien Sean", "Jon Smyth", "Peter Jones", "<script>alert(1)</script>", None, "--",
         "Zoë Ødegaard", "Straße Hans"]


@pytest.fixture(scope="module")
def index():
    frame = pd.DataFrame({"id": pd.Series([BIG + i for i in range(len(NAMES))], dtype="int64"), "name": NAMES,
                          "block": ["smith", "smith", "smith", "alvarez", "muller", "muller", "li", "li", "obrien",
                                    "smith", "jones", "x", "y", "z", "o", "s"],
                          "pred": pd.Series([1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, None], dtype="Int64")})
    return RecordSearch.build(frame, record_id="id", name="name", block="block", prediction="pred")


def _names(hits):
    return [h.name for h in hits]


@pytest.mark.parametrize(("query", "want"), [
    ("Jonh Smith", "John Smith"),       # transposed letters
    ("Jhn Smith", "John Smith"),        # a missing letter
    ("Smith, John", "John Smith"),      # name order
    ("smith john", "John Smith"),
    ("JOHN SMITH", "John Smith"),       # case
    ("Jose Alvarez", "José Álvarez"),   # accents
    ("josé álvarez", "José Álvarez"),
    ("Thomas Mueller", "Thomas Müller"),  # ü written ue
    ("Anna Müller", "Anna Mueller"),
    ("obrien", "O'Brien Sean"),
    ("Zoe Odegaard", "Zoë Ødegaard"),
    ("Hans Strasse", "Straße Hans"),
    ("Peter Jones", "Peter Jones"),
])
def test_typos_accents_case_and_order(index, query, want):
    assert _names(index.search(query, limit=3))[0] == want


def test_initials_meet_full_names():
    frame = pd.DataFrame({"id": ["a", "b", "c", "d"], "name": ["J. Smith", "Jane Doe", "Kim Smith", "John Q. Smith"]})
    index = RecordSearch.build(frame, record_id="id", name="name")
    assert _names(index.search("John Smith", limit=2)) == ["John Q. Smith", "J. Smith"]
    assert _names(index.search("J Smith", limit=2)) == ["J. Smith", "John Q. Smith"]


def test_exact_ids_and_scores(index):
    hit = index.search("John Smith", limit=1)[0]
    assert hit.record == BIG and isinstance(hit.record, int) and hit.score == pytest.approx(1.0)
    assert all(0 <= h.score <= 1 for h in index.search("smith", limit=20))


def test_near_ranks_the_block_first_and_marks_the_predicted_cluster(index):
    # drawn record: Jane Smith (block smith, cluster 1 with John Smith)
    hits = index.search("Jon Smith", near=BIG + 1, limit=5)
    assert {h.name for h in hits[:3]} >= {"John Smith", "Jon Smyth"}
    john = next(h for h in hits if h.name == "John Smith")
    assert john.in_predicted and john.same_block
    assert next(h for h in hits if h.name == "Jon Smyth").in_predicted is False
    assert index.search("", near=str(BIG + 1), limit=3)[0].name == "Jane Smith"  # its own name


def test_records_outside_the_release_are_marked(index):
    assert index.search("Hans Strasse", limit=1)[0].in_release is False
    assert index.search("John Smith", limit=1)[0].in_release is True


def test_hostile_and_empty_queries(index):
    assert index.search("", limit=5) == [] and index.search("--", limit=5) == []
    assert _names(index.search("<script>", limit=1)) == ["<script>alert(1)</script>"]  # text, returned as written
    with pytest.raises(InputError, match="near="):
        index.search("x", near="nobody")
    with pytest.raises(InputError, match="limit"):
        index.search("x", limit=0)
    with pytest.raises(InputError, match="at most 500"):
        index.search("a" * 501)


def test_normalisation():
    assert name_tokens("O'Brien-Núñez, JOSÉ") == ["obrien", "nunez", "jose"]
    assert name_tokens("Straße Ødegaard") == ["strasse", "odegaard"]
    assert name_tokens(None) == []


_WORDS = ["ann", "anne", "bob", "rob", "li", "lee", "smith", "smyth", "garcia", "garcía", "zoe", "chen", "a", "b",
          "s", "l"]


@settings(max_examples=150, deadline=None)
@given(names=st.lists(st.lists(st.sampled_from(_WORDS), min_size=1, max_size=3).map(" ".join), min_size=1,
                      max_size=30),
       query=st.lists(st.sampled_from(_WORDS), min_size=1, max_size=2).map(" ".join))
def test_the_best_hit_is_the_best_name_by_brute_force(names, query):
    """Against scoring every name directly: same best score (the index only prunes)."""
    frame = pd.DataFrame({"id": [f"r{i}" for i in range(len(names))], "name": names})
    hits = RecordSearch.build(frame, record_id="id", name="name").search(query, limit=len(names), per_name=len(names))
    q = name_tokens(query)
    q = list(dict.fromkeys(q))
    weights = [len(t) / sum(map(len, q)) for t in q]

    def sim(t: str, u: str) -> float:
        r = fuzz.ratio(t, u) / 100 if fuzz.ratio(t, u) >= 70 else 0.0
        return max(r, 0.8) if len(t) > 1 and len(u) == 1 and t[0] == u else r

    def brute(name: str) -> float:
        toks = name_tokens(name)
        token = sum(w * max(sim(t, u) for u in toks) for t, w in zip(q, weights, strict=True))
        if token == 0:
            return 0.0  # not found: a one-letter token alone finds nothing
        token += sum(w * 0.8 for t, w in zip(q, weights, strict=True)
                     if len(t) == 1 and t not in toks and any(u.startswith(t) for u in toks))
        return 0.7 * min(token, 1.0) + 0.3 * fuzz.token_sort_ratio(" ".join(sorted(q)), " ".join(sorted(toks))) / 100

    want = sorted(((brute(n), n) for n in names), reverse=True)
    want = [w for w in want if w[0] > 0]
    assert len(hits) == len(want)
    if not want:
        return
    assert hits[0].score == pytest.approx(want[0][0], abs=1e-5)
    assert sorted(h.score for h in hits) == pytest.approx(sorted(w[0] for w in want), abs=1e-5)


# -- every record of a name or a block (issue 31) ---------------------------------------------------------
_FIRST = ["Ann", "Anne", "Bo", "José", "Jose", "Li", None]
_LAST = ["Smith", "Smith-Jones", "Wei", "Núñez", "Nunez"]


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.tuples(st.sampled_from(_FIRST), st.sampled_from(_LAST),
                               st.one_of(st.none(), st.integers(0, 4)), st.integers(0, 2)), min_size=1, max_size=40),
       near=st.integers(0, 39), query=st.tuples(st.sampled_from(_FIRST[:-1]), st.sampled_from(_LAST)))
def test_expand_returns_every_record_of_the_name_exactly_once(rows, near, query):
    from er_expectations.labelling.search import name_key

    frame = pd.DataFrame({"id": [f"r{i}" for i in range(len(rows))],
                          "name": [None if f is None else f"{f} {last}" for f, last, _, _ in rows],
                          "pred": pd.Series([c for _, _, c, _ in rows], dtype="Int64"),
                          "block": [f"b{b}" for _, _, _, b in rows]})
    index = RecordSearch.build(frame, record_id="id", name="name", block="block", prediction="pred")
    near_id = frame["id"].iloc[near % len(frame)]
    text = f"{query[1]}, {query[0]}"  # another order and punctuation: the same name
    e = index.expand(name=text, near=near_id)
    # brute force: the rows whose normalised name is the query's
    want = [i for i, n in enumerate(frame["name"]) if n is not None and name_key(n) == name_key(text)]
    got = list(e.in_draw) + list(e.outside) + [r for g in e.groups for r in g.rows]
    assert sorted(got) == want and len(got) == len(set(got)) == e.records
    own = frame["pred"].iloc[near % len(frame)]
    for r in e.in_draw:
        assert frame["pred"].iloc[r] == own
    assert all(pd.isna(frame["pred"].iloc[r]) for r in e.outside)
    sizes = frame["pred"].value_counts()
    for g in e.groups:
        assert not pd.isna(g.cluster) and (pd.isna(own) or g.cluster != own)
        assert all(frame["pred"].iloc[r] == g.cluster for r in g.rows) and g.cluster_size == sizes[g.cluster]
    assert len({g.cluster for g in e.groups}) == len(e.groups)
    assert [len(g.rows) for g in e.groups] == sorted((len(g.rows) for g in e.groups), reverse=True)
    # the same by block: every record of the near record's block, once
    block = frame["block"].iloc[near % len(frame)]
    b = index.expand(block=block, near=near_id)
    got = list(b.in_draw) + list(b.outside) + [r for g in b.groups for r in g.rows]
    assert sorted(got) == list(np.flatnonzero(frame["block"].to_numpy() == block))


@settings(max_examples=40, deadline=None)
@given(rows=st.lists(st.tuples(st.sampled_from(_FIRST), st.sampled_from(_LAST)), min_size=1, max_size=40),
       query=st.sampled_from(["Ann Smith", "Jose Nunez", "Li Wei", "Bo Smith-Jones"]),
       per_name=st.integers(1, 4), limit=st.integers(1, 30))
def test_find_counts_every_record_of_each_listed_name(rows, query, per_name, limit):
    from er_expectations.labelling.search import name_key

    frame = pd.DataFrame({"id": range(len(rows)), "name": [None if f is None else f"{f} {last}" for f, last in rows]})
    index = RecordSearch.build(frame, record_id="id", name="name")
    found = index.find(query, limit=limit, per_name=per_name)
    keys = [None if n is None else name_key(n) for n in frame["name"]]
    assert [n.key for n in found.names] == list(dict.fromkeys(h.key for h in found.hits))
    for n in found.names:
        assert n.records == keys.count(n.key)
        assert n.shown == sum(h.key == n.key for h in found.hits) <= min(per_name, n.records)
    assert len(found.hits) <= limit
    assert not found.truncated or len(found.hits) == limit


def test_expand_needs_one_of_name_and_block(index):
    with pytest.raises(InputError, match="one of the two"):
        index.expand()
    with pytest.raises(InputError, match="one of the two"):
        index.expand(name="x", block="y")
    frame = pd.DataFrame({"id": ["a"], "name": ["Al"]})
    with pytest.raises(InputError, match="without a block column"):
        RecordSearch.build(frame, record_id="id", name="name").expand(block="b")
    assert index.expand(name="nobody at all").records == 0
