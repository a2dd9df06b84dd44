"""Top-up labelling (SPEC 14.3): the candidates of a worksheet and the benchmark's next version.

The candidates are checked on a hand-made example and against a brute-force listing on random
benchmarks; the answers' QC on every hostile worksheet of the contract; and the benchmark after
a top-up answered from the truth against the benchmark built directly from the truth on the
later release for the same sampled entities.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from support import topuptools

import er_expectations as erx
from er_expectations.analysis.topup import (
    REASON_NAME,
    REASON_PREDICTED,
    REASON_SEARCH,
    apply_topup,
    topup_candidates,
)
from er_expectations.core.errors import InputError
from er_expectations.core.name_keys import name_key
from er_expectations.engines.pandas.release import benchmark_sample


def hand_benchmark() -> pd.DataFrame:
    return pd.DataFrame({
        "mention_id": ["a1", "a2", "a3", "a4", "a5", "a6"],
        "reference": ["E1", "E1", "E2", None, None, None],
        "draws": pd.array([2, 2, 1, None, None, None], dtype="Int64"),
        "weight": [0.5, 0.5, 1.0, np.nan, np.nan, np.nan],
        "benchmark_version": [1, 1, 1, 1, 1, 1],
    })


def hand_release() -> pd.DataFrame:
    rows = [  # id, predicted cluster, name
        ("a1", "P1", "John Smith"), ("a2", "P1", "Smith, John"), ("a3", "P2", "Ann Lee"), ("a4", "P2", "Bob Roe"),
        ("a5", "P3", "Cy Doe"), ("a6", None, "Di Fox"),  # a6 dropped by the release
        ("n1", "P1", "Jon Smith"),  # with E1 in P1
        ("n2", "P2", "JÖHN  smith"),  # with E2 in P2, and E1's name (accents, case, spaces)
        ("n3", "P3", "Cy Doe"),  # with a5, which is in no sampled entity
        ("n4", "P4", "john SMITH"),  # alone, E1's name
        ("n5", "P5", "Ann Lee"),  # alone, E2's name
        ("n6", None, "John Smith"),  # not in the release
        ("n7", "P4", None),  # no name
    ]
    return pd.DataFrame(rows, columns=["mention_id", "pred_t", "name"])


def rows_of(sheet: pd.DataFrame) -> list[tuple]:
    return list(zip(sheet["entity"], sheet["mention_id"], sheet["reason"], strict=True))


def test_candidates_of_the_hand_made_example():
    sheet = topup_candidates(hand_benchmark(), hand_release(), prediction="pred_t", record_id="mention_id",
                             name="name", columns=["name"])
    assert rows_of(sheet) == [("E1", "n1", REASON_PREDICTED), ("E1", "n2", REASON_NAME), ("E1", "n4", REASON_NAME),
                              ("E2", "n2", REASON_PREDICTED), ("E2", "n5", REASON_NAME)]
    assert list(sheet.columns) == ["entity", "mention_id", "predicted_cluster", "reason", "belongs", "release",
                                   "benchmark_version", "name"]
    assert sheet["predicted_cluster"].tolist() == ["P1", "P2", "P4", "P2", "P5"]
    assert sheet["belongs"].isna().all() and set(sheet["release"]) == {"pred_t"}
    assert set(sheet["benchmark_version"]) == {1}
    assert sheet["name"].tolist() == ["Jon Smith", "JÖHN  smith", "john SMITH", "JÖHN  smith", "Ann Lee"]
    assert {k: sheet.attrs[k] for k in ("records_added", "records_added_in_sampled", "entities",
                                        "entities_by_prediction", "candidates", "candidates_by_name")} == \
        {"records_added": 6, "records_added_in_sampled": 2, "entities": 2, "entities_by_prediction": 2,
         "candidates": 5, "candidates_by_name": 3}
    without = topup_candidates(hand_benchmark(), hand_release(), prediction="pred_t", record_id="mention_id")
    assert rows_of(without) == [("E1", "n1", REASON_PREDICTED), ("E2", "n2", REASON_PREDICTED)]


def brute_candidates(bench: pd.DataFrame, rel: pd.DataFrame, *, name: bool) -> set[tuple]:
    known = set(bench["mention_id"])
    pred = {r: p for r, p in zip(rel["mention_id"], rel["pred"], strict=True) if not pd.isna(p)}
    names = dict(zip(rel["mention_id"], rel["name"], strict=True))
    out = set()
    for e in pd.unique(bench["reference"].dropna()):
        members = set(bench.loc[bench["reference"] == e, "mention_id"])
        clusters = {pred[r] for r in members if r in pred}
        keys = {name_key(names[r]) for r in members if r in names} - {""}
        for u, p in pred.items():
            if u in known:
                continue
            if p in clusters:
                out.add((e, u, REASON_PREDICTED))
            elif name and name_key(names[u]) in keys:
                out.add((e, u, REASON_NAME))
    return out


@pytest.mark.parametrize("seed", range(12))
def test_candidates_equal_a_brute_force_listing(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 60))
    ids = [f"r{i}" for i in range(n)]
    rel = pd.DataFrame({"mention_id": ids,
                        "pred": [None if rng.random() < 0.1 else f"p{rng.integers(0, max(2, n // 3))}" for _ in ids],
                        "name": [None if rng.random() < 0.1 else ["ann lee", "Lee, Ann", "bo", "Cy D", ""][
                            rng.integers(0, 5)] for _ in ids]})
    known = [i for i in ids if rng.random() < 0.6] or ids[:1]
    refs = [f"E{rng.integers(0, 4)}" if rng.random() < 0.5 else None for _ in known]
    if all(r is None for r in refs):
        refs[0] = "E0"
    bench = pd.DataFrame({"mention_id": known, "reference": refs, "benchmark_version": 1})
    for with_name in (False, True):
        sheet = topup_candidates(bench, rel, prediction="pred", record_id="mention_id",
                                 name="name" if with_name else None)
        assert set(rows_of(sheet)) == brute_candidates(bench, rel, name=with_name)
        assert len(sheet) == len(set(rows_of(sheet)))
        unknown = rel[rel["pred"].notna() & ~rel["mention_id"].isin(known)]
        assert sheet.attrs["records_added"] == len(unknown)
        sampled_clusters = set(rel.loc[rel["mention_id"].isin(bench.loc[bench["reference"].notna(), "mention_id"]),
                                       "pred"].dropna())
        assert sheet.attrs["records_added_in_sampled"] == int(unknown["pred"].isin(sampled_clusters).sum())


def answered(**belongs: str) -> pd.DataFrame:
    """The hand example's worksheet, answered: keys ``E1_n1`` etc."""
    sheet = topup_candidates(hand_benchmark(), hand_release(), prediction="pred_t", record_id="mention_id",
                             name="name")
    sheet["belongs"] = [belongs.get(f"{e}_{r}", "no") for e, r in zip(sheet["entity"], sheet["mention_id"],
                                                                      strict=True)]
    return sheet


def apply(answers: pd.DataFrame, bench: pd.DataFrame | None = None) -> pd.DataFrame:
    return apply_topup(hand_benchmark() if bench is None else bench, answers, hand_release(), prediction="pred_t",
                       record_id="mention_id")


def test_apply_writes_the_next_version():
    new = apply(answered(E1_n1="yes", E2_n2="Yes ", E2_n5="YES"))
    pd.testing.assert_frame_equal(new.iloc[:6], hand_benchmark())
    added = new.iloc[6:].set_index("mention_id")
    assert list(added.index) == ["n1", "n2", "n3", "n4", "n5", "n7"]  # every record of the release, n6 is not
    assert added["reference"].fillna("-").tolist() == ["E1", "E2", "-", "-", "E2", "-"]
    assert added["draws"].tolist()[:2] == [2, 1] and added["draws"].isna().tolist() == [False, False, True, True,
                                                                                      False, True]
    assert added["weight"].tolist()[:2] == [0.5, 1.0]
    assert set(added["benchmark_version"]) == {2}
    assert {k: new.attrs[k] for k in ("benchmark_version", "previous_version", "records_added", "joined",
                                      "answered_no", "rows", "entities_grown", "benchmark_records", "clusters",
                                      "draws", "known_records")} == \
        {"benchmark_version": 2, "previous_version": 1, "records_added": 6, "joined": 3, "answered_no": 2, "rows": 5,
         "entities_grown": 2, "benchmark_records": 6, "clusters": 2, "draws": 3, "known_records": 12}
    # version 2 knows every record of the release: nothing more to top up
    again = topup_candidates(new, hand_release(), prediction="pred_t", record_id="mention_id", name="name")
    assert again.attrs["records_added"] == 0 and len(again) == 0


def test_apply_sets_the_inclusion_of_joined_records_to_zero():
    bench = hand_benchmark().assign(inclusion=[0.1, 0.2, 0.3, np.nan, np.nan, np.nan])
    new = apply(answered(E1_n1="yes"), bench)
    added = new.iloc[6:].set_index("mention_id")
    assert added.loc["n1", "inclusion"] == 0.0 and added["inclusion"].drop("n1").isna().all()
    assert new["inclusion"].iloc[:3].tolist() == [0.1, 0.2, 0.3]


def test_a_worksheet_read_from_csv_and_integer_ids():
    bench = hand_benchmark().assign(mention_id=range(1, 7))
    release = hand_release().assign(mention_id=[1, 2, 3, 4, 5, 6, 11, 12, 13, 14, 15, 16, 17])
    sheet = topup_candidates(bench, release, prediction="pred_t", record_id="mention_id")
    sheet["belongs"] = ["yes", "no"]
    text = sheet.astype(str)  # what read_table gives for a CSV worksheet: every cell text
    new = apply_topup(bench, text, release, prediction="pred_t", record_id="mention_id")
    assert new["mention_id"].dtype == np.int64
    assert new.set_index("mention_id").loc[11, "reference"] == "E1"
    # a CSV benchmark: every cell text too
    csv_bench = bench.astype(str).replace({"None": None, "nan": None, "<NA>": None})
    new2 = apply_topup(csv_bench, text, release, prediction="pred_t", record_id="mention_id")
    assert new2["mention_id"].tolist() == new["mention_id"].tolist()
    assert new2["reference"].tolist() == new["reference"].tolist()


def test_rows_found_by_search_are_kept():
    sheet = answered(E1_n1="yes")
    extra = sheet.iloc[[0]].assign(mention_id="n3", predicted_cluster="P3", reason=REASON_SEARCH, belongs="yes",
                                   release=None, benchmark_version=None)
    new = apply(pd.concat([sheet, extra], ignore_index=True))
    assert new.set_index("mention_id").loc["n3", "reference"] == "E1"
    assert new.attrs["found_by_search"] == 1


@pytest.mark.parametrize(("change", "message"), [
    (lambda s: s.assign(belongs=[None, "yes", None, "no", "no"]), r"2 of the worksheet's 5 rows are not answered: "
     r"row 1 \(entity 'E1', mention_id 'n1'\), row 3"),
    (lambda s: s.assign(belongs=["maybe", "no", "no", "no", "no"]), r"other than yes or no.*row 1.*'maybe'"),
    (lambda s: s.assign(belongs=["no", "yes", "no", "yes", "no"]), r"'n2' is answered yes for 2 entities \(rows 2, 4"),
    (lambda s: pd.concat([s, s.iloc[[0]].assign(mention_id="a4")], ignore_index=True),
     r"already knows: row 6 \(entity 'E1', mention_id 'a4'\) known since version 1"),
    (lambda s: pd.concat([s, s.iloc[[0]].assign(mention_id="n6", reason=REASON_SEARCH)], ignore_index=True),
     r"not in release 'pred_t'.*row 6 \(entity 'E1', mention_id 'n6'\)"),
    (lambda s: pd.concat([s, s.iloc[[0]].assign(mention_id="zz")], ignore_index=True), r"not in release.*'zz'"),
    (lambda s: s.assign(entity=["E1", "E9", "E1", "E2", "E2"]), r"row 2 of the worksheet: the entity 'E9' is not a "
     r"true cluster"),
    (lambda s: s.assign(entity=[None, "E1", "E1", "E2", "E2"]), r"row 1 of the worksheet has no 'entity'"),
    (lambda s: s.assign(release="pred_u"), r"made for release 'pred_u'.*not for 'pred_t'"),
    (lambda s: s.assign(benchmark_version=3), r"made for version 3 of the benchmark.*at version 1"),
    (lambda s: s.assign(benchmark_version="one"), r"'benchmark_version' is 'one'"),
    (lambda s: pd.concat([s, s.iloc[[2]]], ignore_index=True), r"same entity and record twice: row 3 .*row 6"),
    (lambda s: s.iloc[1:], r"lacks 1 candidate.*entity 'E1', mention_id 'n1'"),
    (lambda s: s.drop(columns="belongs"), r"no column 'belongs'.*topup list"),
    (lambda s: s.assign(mention_id=[None, "n2", "n4", "n2", "n5"]), r"row 1 of the worksheet has no record id"),
])
def test_hostile_worksheets_are_refused_naming_the_rows_and_the_fix(change, message):
    with pytest.raises(InputError, match=message):
        apply(change(answered(E1_n1="yes")))


def test_a_stale_worksheet_is_refused_once_the_benchmark_moved_on():
    sheet = answered(E1_n1="yes")
    v2 = apply(sheet)
    with pytest.raises(InputError, match=r"made for version 1 of the benchmark.*at version 2.*stale.*topup list"):
        apply(sheet, v2)


@pytest.mark.parametrize(("bench", "message"), [
    (hand_benchmark().drop(columns="benchmark_version"), r"no 'benchmark_version' column.*rebuild"),
    (hand_benchmark().assign(benchmark_version=[1, 1, None, 1, 1, 1]), r"'benchmark_version' is empty for the record 'a3'"),
    (hand_benchmark().assign(benchmark_version=[1, 1, 1.5, 1, 1, 1]), r"is 1.5 for the record 'a3'"),
    (hand_benchmark().assign(mention_id=["a1", "a1", "a3", "a4", "a5", "a6"]), r"lists the record 'a1' twice"),
    (hand_benchmark().drop(columns="reference"), r"reference='reference': no such column in the benchmark"),
])
def test_a_damaged_benchmark_is_refused(bench, message):
    with pytest.raises(InputError, match=message):
        topup_candidates(bench, hand_release(), prediction="pred_t", record_id="mention_id")


def test_bad_options_are_refused():
    with pytest.raises(InputError, match="name='nom'"):
        topup_candidates(hand_benchmark(), hand_release(), prediction="pred_t", record_id="mention_id", name="nom")
    with pytest.raises(InputError, match="'entity' is also a worksheet column"):
        topup_candidates(hand_benchmark(), hand_release().assign(entity=1), prediction="pred_t",
                         record_id="mention_id", columns=["entity"])
    with pytest.raises(InputError, match="prediction='pred_x'"):
        topup_candidates(hand_benchmark(), hand_release(), prediction="pred_x", record_id="mention_id")
    release = hand_release().assign(mention_id=range(13))
    with pytest.raises(InputError, match="not an integer"):
        topup_candidates(hand_benchmark(), release, prediction="pred_t", record_id="mention_id")


def _summary(sample) -> tuple:
    """The sample, independent of the order of clusters and pieces."""
    clusters = {str(label): (int(s), float(w), int(d)) for label, s, w, d in
                zip(sample.labels, sample.size, sample.weight, sample.draws, strict=True)}
    pieces = sorted((str(sample.labels[c]), str(lab), int(n), int(m)) for c, lab, n, m in
                    zip(sample.piece_cluster, sample.piece_label, sample.piece_n, sample.piece_m, strict=True))
    return clusters, pieces, sample.n_records, sample.n_clusters


@pytest.mark.parametrize("seed", [3, 4])
def test_after_a_top_up_from_the_truth_the_sample_is_the_truths(seed):
    """Imperfect predictions on L and T: the benchmark labelled on L from the truth, topped up on T
    from the truth (by prediction and by name), gives the BenchmarkSample of the truth on T for
    the same sampled entities with the same draws."""
    records = topuptools.population(seed, perfect=False, int_ids=seed % 2 == 0)
    lab = records[records["pred_L"].notna()]
    sheet = erx.draw_sample(lab, prediction="pred_L", n=60, seed=seed, record_id="mention_id")
    labels = topuptools.fill_sample(sheet, records, "pred_L")
    v1 = erx.benchmark_from_labels(labels, lab, prediction="pred_L", record_id="mention_id")
    cand = topup_candidates(v1, records, prediction="pred_T", record_id="mention_id", name="name")
    assert cand.attrs["records_added"] == int(records["pred_L"].isna().sum())
    v2 = apply_topup(v1, topuptools.fill_topup(cand, v1, records), records, prediction="pred_T",
                     record_id="mention_id")
    joined = records.merge(v2, on="mention_id", how="left")
    after = benchmark_sample(joined, prediction="pred_T", reference="reference", draws="draws")
    assert after.records_added == 0 and after.benchmark_version == 2
    # the truth on T: every record of a sampled entity carries its reference and the entity's draws
    bench = v1[v1["reference"].notna()]
    truth_of = dict(zip(records["mention_id"], records["truth"], strict=True))
    entity = {truth_of[r]: e for r, e in zip(bench["mention_id"], bench["reference"], strict=True)}
    draws = dict(zip(bench["reference"], bench["draws"], strict=True))
    direct = records.assign(reference=records["truth"].map(entity))
    direct["draws"] = direct["reference"].map(draws)
    # an entity was drawn through its records of L: w = 1 / |c ∩ L| whatever the top-up added (SPEC 14.3)
    in_l = records["truth"][records["pred_L"].notna()].value_counts()
    direct["w"] = 1.0 / direct["truth"].map(in_l)
    truth_sample = benchmark_sample(direct, prediction="pred_T", reference="reference", draws="draws", known=None,
                                    weights={"column": "w"})
    assert _summary(after) == _summary(truth_sample)
    # and the labelling release L, untouched by the top-up, reads as the truth on L
    before = benchmark_sample(records.merge(v1, on="mention_id", how="left"), prediction="pred_L",
                              reference="reference", draws="draws")
    direct_l = direct[records["pred_L"].notna()]
    assert _summary(before) == _summary(benchmark_sample(direct_l, prediction="pred_L", reference="reference",
                                                         draws="draws", known=None))
