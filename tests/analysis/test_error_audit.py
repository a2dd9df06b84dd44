"""``erx.error_audit`` (SPEC 12.1, issue 20): shares of errors by cause.

* a hand-worked three-cluster example;
* on RLdata10000 with every true cluster "drawn" under an exact design, the shares equal a
  brute-force count over the records and entities of the full truth;
* the interval methods keep the estimate and standard error and only change the interval;
* every bad tags table gets a clear error naming the row and column.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import er_expectations as erx
from er_expectations.analysis.error_audit import UNTAGGED, parse_tags
from er_expectations.analysis.examples import rldata_frame
from er_expectations.core.errors import InputError


def small():
    # X = {1,2,3} is split over a and b (error); Y = {4,5} is exactly c (no error);
    # Z = {6} shares d with record 7 outside the benchmark (error: over-clustering)
    df = pd.DataFrame({"rid": [1, 2, 3, 4, 5, 6, 7], "pred": ["a", "a", "b", "c", "c", "d", "d"],
                       "ref": ["X", "X", "X", "Y", "Y", "Z", None]})
    tags = pd.DataFrame({"cluster": ["X", "Y"], "kind": ["under", "under"], "tag": ["name typo", "date"],
                         "records": [[3], []]})
    return df, tags


def test_hand_worked_three_clusters():
    df, tags = small()
    a = erx.error_audit(df, prediction="pred", reference="ref", tags=tags, record_id="rid", weights="uniform", bias_adjust=False)
    r = a.rates.set_index(["tag", "share"])["estimate"]
    # records: X has 3 of the 6 benchmark records; entities: 1 of 3; among erroneous (X, Z): 1 of 2
    assert r[("name typo", "records")] == pytest.approx(3 / 6)
    assert r[("name typo", "entities")] == pytest.approx(1 / 3)
    assert r[("name typo", "erroneous")] == pytest.approx(1 / 2)
    # Y carries a tag but has no error: not counted, with a note
    assert r[("date", "records")] == 0.0 and r[("date", "erroneous")] == 0.0
    assert any("no error in this release" in n for n in a.notes)
    # Z is an error without a tag: 1 of 6 records, 1 of 3 entities, 1 of 2 erroneous
    assert r[(UNTAGGED, "records")] == pytest.approx(1 / 6)
    assert r[(UNTAGGED, "entities")] == pytest.approx(1 / 3)
    assert r[(UNTAGGED, "erroneous")] == pytest.approx(1 / 2)
    # the standard error of SPEC 6 by hand for the entity share of "name typo": f = (1,0,0), g = (1,1,1)
    f, g = np.array([1.0, 0, 0]), np.ones(3)
    fb, gb = f.mean(), g.mean()
    v = (fb / gb) ** 2 * ((g / gb - f / fb) ** 2).sum() / (3 * 2)
    assert a.rate("name typo", "entities").std_error == pytest.approx(math.sqrt(v))
    # the example of "name typo" is X with the record named
    ex = a.examples[a.examples["tag"] == "name typo"]
    assert ex["cluster"].tolist() == ["X"] and ex["records"].tolist() == [(3,)] and ex["kinds"].tolist() == ["under"]
    assert a.examples[a.examples["tag"] == UNTAGGED]["cluster"].tolist() == ["Z"]


def test_a_zero_share_gets_the_zero_event_bound_not_a_point():
    df, tags = small()
    a = erx.error_audit(df, prediction="pred", reference="ref", tags=tags, record_id="rid", known_tags=["name typo", "date", "merge of twins"],
                        weights="uniform")
    res = a.rate("merge of twins", "entities")
    assert res.estimate == 0.0 and res.interval == "zero_event"
    assert res.ci_upper == pytest.approx(1 - 0.05 ** (1 / 3))


def _rldata_tags(df: pd.DataFrame, seed: int) -> tuple[pd.DataFrame, dict]:
    """Tags on RLdata's erroneous true clusters by a rule plus noise, and the erroneous set
    computed by brute force: a true cluster is right when its records' predicted cluster is
    exactly the set of its records."""
    rng = np.random.default_rng(seed)
    pred_members: dict[object, set] = {}
    for i, p in enumerate(df["pred"].tolist()):
        pred_members.setdefault(p, set()).add(i)
    true_members: dict[object, set] = {}
    for i, t in enumerate(df["truth"].tolist()):
        true_members.setdefault(t, set()).add(i)
    erroneous = {}
    for t, recs in true_members.items():
        preds = {df["pred"].iat[i] for i in recs}
        erroneous[t] = not (len(preds) == 1 and pred_members[next(iter(preds))] == recs)
    rows = []
    for t, recs in true_members.items():
        if not erroneous[t]:
            if rng.random() < 0.01:  # a stray tag on a right cluster: must not count
                rows.append((t, "over", "typo"))
            continue
        names = {df["fname_c1"].iat[i] for i in recs}
        if len(names) > 1:
            rows.append((t, "under", "typo"))
        if rng.random() < 0.3:
            rows.append((t, "over", "twins"))
    return pd.DataFrame(rows, columns=["cluster", "kind", "tag"]), {"true": true_members, "err": erroneous,
                                                                     "rows": rows}


def test_census_of_rldata_equals_brute_force(rldata_dir):
    df = rldata_frame(rldata_dir)
    tags, truth = _rldata_tags(df, 7)
    tagged = {}
    for t, _kind, tag in truth["rows"]:
        if truth["err"][t]:
            tagged.setdefault(tag, set()).add(t)
    untagged = {t for t, e in truth["err"].items() if e and not any(t in s for s in tagged.values())}
    tagged[UNTAGGED] = untagged
    n_rec = len(df)
    n_ent = len(truth["true"])
    n_err = sum(truth["err"].values())
    want = {}
    for tag, clusters in tagged.items():
        recs = sum(len(truth["true"][t]) for t in clusters)
        want[tag] = {"records": recs / n_rec, "entities": len(clusters) / n_ent, "erroneous": len(clusters) / n_err}
    # every cluster once, uniform design; and every cluster drawn |c| times with weights 1/|c|
    census = df.assign(ref=df["truth"], d=df.groupby("truth")["truth"].transform("size"))
    for weights, draws in (("uniform", None), ("cluster_size", "d")):
        a = erx.error_audit(census, prediction="pred", reference="ref", tags=tags, weights=weights, draws=draws, bias_adjust=False)
        assert set(a.estimates) == set(want)
        for tag, shares in want.items():
            for share, value in shares.items():
                assert a.rate(tag, share).estimate == pytest.approx(value, rel=1e-12), (weights, tag, share)
    assert want["typo"]["records"] > 0 and want["twins"]["erroneous"] > 0.1 and want[UNTAGGED]["entities"] > 0


def test_interval_methods_change_only_the_interval():
    rng = np.random.default_rng(3)
    n = 400
    truth = rng.integers(0, 150, size=n)
    pred = np.where(rng.random(n) < 0.15, truth + 1000, truth)
    df = pd.DataFrame({"pred": pred, "ref": truth})
    errs = [t for t in np.unique(truth) if len(np.unique(pred[truth == t])) > 1]
    tags = pd.DataFrame({"cluster": errs[::2], "kind": "under", "tag": "split"})
    base = erx.error_audit(df, prediction="pred", reference="ref", tags=tags)
    for method in ("logit", "bootstrap", "bca", "studentized", "recommended"):
        other = erx.error_audit(df, prediction="pred", reference="ref", tags=tags, ci_method=method, seed=5, n_boot=300)
        pd.testing.assert_series_equal(base.rates["estimate"], other.rates["estimate"])
        pd.testing.assert_series_equal(base.rates["std_error"], other.rates["std_error"])
        row = other.rates[(other.rates["tag"] == "split") & (other.rates["share"] == "erroneous")].iloc[0]
        assert row["ci_method"] == ("bca" if method == "recommended" else method)
        assert row["ci_lower"] < row["estimate"] < row["ci_upper"]
    again = erx.error_audit(df, prediction="pred", reference="ref", tags=tags, ci_method="bca", seed=5, n_boot=300)
    assert again.rates.equals(erx.error_audit(df, prediction="pred", reference="ref", tags=tags, ci_method="bca", seed=5, n_boot=300).rates)


# -- bad input -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("change", "message"), [
    (lambda t: t.assign(cluster=["X", "nope"]), r"row 2, column 'cluster'.*'nope' is not in the benchmark"),
    (lambda t: t.assign(kind=["under", "ovre"]), r"row 2, column 'kind'.*'ovre' is not a kind.*'over'"),
    (lambda t: t.assign(tag=["name typo", None]), r"row 2, column 'tag'.*empty"),
    (lambda t: t.assign(tag=["name typo", 3]), r"row 2, column 'tag'.*not text"),
    (lambda t: t.assign(tag=["name typo", UNTAGGED]), r"row 2.*untagged errors"),
    (lambda t: pd.concat([t, t.iloc[[0]]]), r"row 3, column 'tag'.*repeats row 1"),
    (lambda t: t.drop(columns="kind"), r"no column 'kind'; the table has"),
    (lambda t: t.assign(records=[[3], [99]]), r"row 2, column 'records'.*record 99 is not in the records"),
    (lambda t: t.assign(records=[[3], 5]), r"row 2, column 'records'.*not a list"),
])
def test_bad_tags_tables(change, message):
    df, tags = small()
    with pytest.raises(InputError, match=message):
        erx.error_audit(df, prediction="pred", reference="ref", tags=change(tags), record_id="rid")


def test_unknown_tag_with_a_list_and_records_without_ids():
    df, tags = small()
    with pytest.raises(InputError, match=r"row 1, column 'tag': unknown tag 'name typo'.*'name typos'"):
        erx.error_audit(df, prediction="pred", reference="ref", tags=tags, known_tags=["name typos", "date"])
    with pytest.raises(InputError, match=r"pass record_id="):
        erx.error_audit(df, prediction="pred", reference="ref", tags=tags)
    with pytest.raises(InputError, match=r"tag='nope' is not in the audit"):
        erx.error_audit(df, prediction="pred", reference="ref", tags=tags.drop(columns="records")).rate("nope")
    with pytest.raises(InputError, match=r"share='all' is not a share"):
        erx.error_audit(df, prediction="pred", reference="ref", tags=tags.drop(columns="records")).rate("date", "all")


def test_ids_beyond_2_53_and_hostile_tags():
    big = 2**62 + 1
    df = pd.DataFrame({"pred": [1, 1, 2], "ref": [big, big, big + 1], "rid": [big, big + 2, big + 4]})
    hostile = '<script>alert(1)</script>=HYPERLINK("x")'
    tags = pd.DataFrame({"cluster": [big], "kind": ["over"], "tag": [hostile], "records": [[big + 4]]})
    # big = {two records of ĉ 1} is right, big + 1 = {ĉ 2} too: the tag on big is set aside
    a = erx.error_audit(df, prediction="pred", reference="ref", tags=tags, record_id="rid", weights="uniform")
    assert a.tags == (hostile,) and a.rate(hostile, "entities").estimate == 0.0
    assert a.examples.empty and any("no error" in n for n in a.notes)
    # ids that differ beyond float precision stay apart
    with pytest.raises(InputError, match=r"cluster 4611686018427387907 is not in the benchmark"):
        parse_tags(tags.assign(cluster=[big + 2]), benchmark_ids=[big, big + 1])
    with pytest.raises(InputError, match=r"the benchmark has '4611686018427387905', of type str"):
        parse_tags(tags, benchmark_ids=[str(big)])


def test_text_ids_of_a_csv_match_integer_ids_only_when_asked():
    big = 2**62 + 1
    tags = pd.DataFrame({"cluster": [str(big)], "kind": ["under"], "tag": ["typo"], "records": [f"{big};7"]})
    parsed = parse_tags(tags, benchmark_ids=[big, 3], record_ids=[big, 7, 8], text_ids=True)
    assert parsed.cluster == (big,) and parsed.records == ((big, 7),)
    with pytest.raises(InputError, match="of type int"):
        parse_tags(tags, benchmark_ids=[big, 3], record_ids=[big, 7, 8])


def test_ids_are_looked_up_together_but_rows_are_checked_in_order():
    """The ids of all rows are looked up in one pass; the first bad row still gives the error, a
    NaN cell among ids beyond 2^53 does not make the other ids floats, and each row gets its own
    records."""
    big = 2**62
    bench = [big, big + 1, big + 2]
    rows = pd.DataFrame({"cluster": [big + 1, big + 2, big], "kind": ["over", "under", "over"],
                         "tag": ["a", "b", "c"], "records": [[big + 3], [big + 4, big + 3], []]})
    parsed = parse_tags(rows, benchmark_ids=bench, record_ids=[big + 3, big + 4, 5])
    assert parsed.cluster == (big + 1, big + 2, big)
    assert parsed.records == ((big + 3,), (big + 4, big + 3), ())
    # row 1 names a cluster the benchmark lacks (2^62 + 5 is 2^62 + 4 as a float); row 2 a bad kind: row 1 first
    bad = rows.assign(cluster=[big + 5, big + 2, big], kind=["over", "sideways", "over"])
    with pytest.raises(InputError, match=r"row 1, column 'cluster'.*4611686018427387909 is not in the benchmark"):
        parse_tags(bad, benchmark_ids=[*bench, big + 4])
    # a NaN on row 3 after exact big ids: rows 1 and 2 pass, row 3 is the empty cell
    holes = rows.assign(cluster=pd.Series([big + 1, big + 2, np.nan], dtype=object))
    with pytest.raises(InputError, match=r"row 3, column 'cluster': the cell is empty"):
        parse_tags(holes, benchmark_ids=bench, record_ids=[big + 3, big + 4, 5])
    # row 1's record 2^62 + 5, which a float lookup (a NaN among the records of row 2) would take for
    # the record 2^62 + 4, is row 1's error
    holes = rows.assign(records=[[big + 5], [np.nan], []])
    with pytest.raises(InputError, match=r"row 1, column 'records': the record 4611686018427387909 is not"):
        parse_tags(holes, benchmark_ids=bench, record_ids=[big + 3, big + 4, 5])
    # a record of row 2 missing: row 2 named, with that record
    gone = rows.assign(records=[[big + 3], [big + 4, big + 7], [big + 9]])
    with pytest.raises(InputError, match=r"row 2, column 'records': the record 4611686018427387911 is not"):
        parse_tags(gone, benchmark_ids=bench, record_ids=[big + 3, big + 4, 5])


def test_many_tags_examples_are_the_first_in_order():
    """Examples per tag are the first clusters by (most draws, largest, label), as before the
    vectorised selection: checked against a plain loop over the sampled clusters."""
    rng = np.random.default_rng(3)
    truth = np.repeat(np.arange(300), rng.integers(1, 5, 300))
    pred = truth.copy()
    moved = rng.random(len(pred)) < 0.3
    pred[moved] = rng.integers(0, 300, moved.sum())
    df = pd.DataFrame({"pred": pred, "ref": truth})
    wrong = np.unique(truth[moved])
    tags = pd.DataFrame({"cluster": wrong, "kind": "over", "tag": [f"t{i % 7}" for i in range(len(wrong))]})
    a = erx.error_audit(df, prediction="pred", reference="ref", tags=tags, weights="uniform", examples=3)
    size = pd.Series(truth).value_counts()
    for t in sorted(set(tags["tag"])):
        mine = tags.loc[tags["tag"] == t, "cluster"].tolist()
        expected = sorted(mine, key=lambda c: (-size[c], str(c)))[:3]
        assert a.examples.loc[a.examples["tag"] == t, "cluster"].tolist() == expected


# -- against an independent implementation of SPEC 4, 6 and 12.1 ------------------------------------


def _reference_audit(df: pd.DataFrame, tags: pd.DataFrame) -> dict:
    """Every share of every tag by brute force: sets of records per cluster (restricted to the
    release), EI by comparing sets, the draws expanded into rows, and SPEC 6's formulas."""
    from support.reference_impl import ratio_estimator

    rel = df[df["pred"].notna()]
    chat: dict = {}
    for r, p in zip(rel["record"], rel["pred"], strict=True):
        chat.setdefault(p, set()).add(r)
    rows = []
    for t, grp in rel[rel["ref"].notna()].groupby("ref", sort=False):
        c = set(grp["record"])
        ei = any(chat[p] != c for p in grp["pred"])
        rows.append({"t": t, "s": len(c), "w": float(grp["w"].iloc[0]), "d": int(grp["n_draws"].iloc[0]),
                     "err": ei})
    wmax = max(r["w"] for r in rows)
    out = {}
    names = list(dict.fromkeys(tags["tag"]))
    tagged = {name: set(tags.loc[tags["tag"] == name, "cluster"]) for name in names}
    for name in [*names, UNTAGGED]:
        def has(r, name=name):
            if not r["err"]:
                return False
            if name == UNTAGGED:
                return not any(r["t"] in s for s in tagged.values())
            return r["t"] in tagged[name]
        expanded = [r for r in rows for _ in range(r["d"])]
        fg = {
            "records": ([r["s"] * has(r) * r["w"] / wmax for r in expanded], [r["s"] * r["w"] / wmax for r in expanded]),
            "entities": ([has(r) * r["w"] / wmax for r in expanded], [r["w"] / wmax for r in expanded]),
            "erroneous": ([has(r) * r["w"] / wmax for r in expanded], [r["err"] * r["w"] / wmax for r in expanded]),
        }
        out[name] = {share: ratio_estimator(*fg[share]) for share in fg}
    return out


@pytest.mark.parametrize("seed", range(40))
def test_random_cases_equal_the_reference(seed):
    from support.reference_impl import random_case

    df = random_case(seed, n_max=60)
    rng = np.random.default_rng(seed)
    bench = list(pd.unique(df["ref"].dropna()))
    picked = [c for c in bench if rng.random() < 0.5]
    tags = pd.DataFrame({"cluster": picked, "kind": rng.choice(["over", "under"], size=len(picked)),
                         "tag": rng.choice(["a", "b"], size=len(picked))}).drop_duplicates(["cluster", "kind", "tag"])
    try:
        got = erx.error_audit(df, prediction="pred", reference="ref", tags=tags, weights={"column": "w"}, draws="n_draws", record_id="record")
    except InputError as error:
        assert "empty after restriction" in str(error)
        return
    want = _reference_audit(df, tags)
    assert set(got.estimates) == set(want)
    for name, shares in want.items():
        for share, ref in shares.items():
            res = got.rate(name, share)
            if ref["case"] == "undefined":
                assert math.isnan(res.estimate), (name, share)
                continue
            assert res.estimate == pytest.approx(ref["estimate"], rel=1e-9, abs=1e-12), (name, share)
            if ref["case"] == "ok":
                assert res.std_error == pytest.approx(ref["std_error"], rel=1e-9, abs=1e-12), (name, share)
            else:
                assert math.isnan(res.std_error)


def test_the_default_interval_of_a_cause_is_the_logit_interval():
    """Shares of causes are small: the audit's default is the logit interval (the coverage study
    of benchmarks/README.md), on the estimate and standard error every method shares."""
    from er_expectations.stats.intervals import logit_interval

    df, tags = small()
    default = erx.error_audit(df, prediction="pred", reference="ref", tags=tags, record_id="rid", weights="uniform")
    lin = erx.error_audit(df, prediction="pred", reference="ref", tags=tags, record_id="rid", weights="uniform", ci_method="linearization")
    assert default.ci_method == "logit"
    est = default.rate("name typo", "entities")
    assert est.estimate == lin.rate("name typo", "entities").estimate and est.std_error > 0
    lo, hi = logit_interval(est.estimate, est.std_error, ci_level=0.95)
    assert (est.ci_lower, est.ci_upper) == pytest.approx((float(lo), float(hi)))
    assert (est.ci_lower, est.ci_upper) != pytest.approx((lin.rate("name typo", "entities").ci_lower,
                                                         lin.rate("name typo", "entities").ci_upper))
