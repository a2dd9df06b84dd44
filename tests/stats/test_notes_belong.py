"""Notes belong to their quantity (issue 27 item 5, SPEC 6): a derived quantity (an F of a
precision and a recall, a change between releases, a subgroup gap, a group row, a slice)
states only what is true of itself; what it says of a component names that component.

The checker (tests/support/notecheck.py) reads every claim about a standard error, a bound
or an interval out of a note and compares it with the numbers of the quantity it is about."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.notecheck import problems

from er_expectations.stats import BenchmarkSample, estimate_metrics
from er_expectations.stats.combine import difference
from er_expectations.stats.differences import bootstrap_difference
from er_expectations.stats.drift import paired_changes
from er_expectations.stats.estimator import f_beta_estimate, ratio_estimate
from er_expectations.stats.joint import JointBootstrap
from er_expectations.stats.metrics import PERFORMANCE_METRICS, fg_values
from er_expectations.stats.subgroups import Membership, estimate_groups_methods

HYP = settings(deadline=None, max_examples=int(os.environ.get("ERX_HYPOTHESIS_EXAMPLES", "40")),
               suppress_health_check=[HealthCheck.too_slow])
F_PARTS = {"b_cubed_f": ("b_cubed_precision", "b_cubed_recall")}
NAMES = {"b_cubed_precision": "b-cubed precision", "b_cubed_recall": "b-cubed recall"}


def sample_of(sizes, pieces, strangers, draws, weight=None) -> BenchmarkSample:
    """A benchmark of true clusters of ``sizes``, cluster c cut into ``pieces[c]`` predicted
    pieces (1: not split) whose predicted clusters hold ``strangers[c]`` records from outside."""
    cluster, n, m, label = [], [], [], []
    for c, (s, p, x) in enumerate(zip(sizes, pieces, strangers, strict=True)):
        p = max(1, min(p, s))
        parts = [s // p + (1 if i < s % p else 0) for i in range(p)]
        for i, part in enumerate(parts):
            cluster.append(c)
            n.append(part)
            m.append(part + (x if i == 0 else 0))
            label.append(f"p{c}_{i}")
    sizes = np.asarray(sizes)
    return BenchmarkSample(labels=np.array([f"c{i:03d}" for i in range(len(sizes))], dtype=object), size=sizes,
                           weight=1.0 / sizes if weight is None else np.asarray(weight, dtype=float),
                           draws=np.asarray(draws), piece_cluster=np.array(cluster), piece_n=np.array(n),
                           piece_m=np.array(m), piece_label=np.array(label, dtype=object), n_records=5000,
                           n_clusters=3000, design="cluster_size")


def recall_perfect_precision_not() -> BenchmarkSample:
    """No sampled entity is split (b-cubed recall 1, no error) but a third of the predicted
    clusters hold a stranger (b-cubed precision below 1, with a standard error)."""
    rng = np.random.default_rng(7)
    sizes = rng.integers(1, 6, 90)
    strangers = (np.arange(90) % 3 == 0).astype(int)
    return sample_of(sizes, np.ones(90, dtype=int), strangers, rng.integers(1, 3, 90))


@st.composite
def samples(draw) -> BenchmarkSample:
    k = draw(st.integers(2, 14))
    sizes = draw(st.lists(st.integers(1, 5), min_size=k, max_size=k))
    # each kind of error on or off for the whole sample, so error-free sides come up often
    split_on, stranger_on = draw(st.booleans()), draw(st.booleans())
    pieces = [draw(st.integers(1, 3)) if split_on else 1 for _ in range(k)]
    strangers = [draw(st.integers(0, 2)) if stranger_on else 0 for _ in range(k)]
    draws = draw(st.lists(st.integers(1, 3), min_size=k, max_size=k))
    return sample_of(sizes, pieces, strangers, draws)


def components(mid: str, results: dict) -> dict:
    return {NAMES[p]: results[p] for p in F_PARTS.get(mid, ())}


def with_parts(sample: BenchmarkSample, metrics, **kw) -> dict:
    """The metrics with the b-cubed parts their F is made of (same method, same seed)."""
    ids = list(dict.fromkeys([*metrics, *(p for m in metrics for p in F_PARTS.get(m, ()))]))
    return estimate_metrics(sample, ids, **kw)


# -- (a) the reproduction: b-cubed F under an error-free recall -------------------------------------


def test_b_cubed_f_does_not_carry_the_recall_bound():
    res = estimate_metrics(recall_perfect_precision_not(), ["b_cubed_precision", "b_cubed_recall", "b_cubed_f"])
    p, r, f = res["b_cubed_precision"], res["b_cubed_recall"], res["b_cubed_f"]
    # the recall is error-free: its own note carries its own bound, and it is true of it
    assert r.interval == "zero_event" and r.estimate == 1.0 and r.std_error == pytest.approx(0.0, abs=1e-12)
    assert "at least" in r.note and not problems(r.note, r)
    # precision has errors and a standard error; F has one of its own, from precision's
    assert p.std_error > 0 and f.std_error > 0 and f.interval == "linearization"
    bound = float(r.note.split("at least ")[1].split()[0])
    assert f.ci_lower < bound  # the contradiction of the issue: F read "at least" above its own interval
    # F's note names recall for what is true of recall, and states no bound of recall's
    assert "at least" not in f.note and f"{bound:.4g}" not in f.note
    assert not f.note.startswith("standard error 0")
    assert "b-cubed recall's standard error is 0" in f.note
    assert "b-cubed precision's uncertainty only" in f.note
    assert not problems(f.note, f, components("b_cubed_f", res)), f.note


def test_the_checker_catches_the_old_inherited_note():
    """The general check fails on the note F used to inherit (recall's, joined verbatim)."""
    res = estimate_metrics(recall_perfect_precision_not(), ["b_cubed_recall", "b_cubed_f"])
    r, f = res["b_cubed_recall"], res["b_cubed_f"]
    found = problems(r.note, f, {"b-cubed recall": r})
    assert any("standard error is 0" in x for x in found) and any("bound" in x for x in found), found


def test_f_of_two_constant_components_says_its_own_standard_error_is_0():
    """Every draw has the same precision (0.5) and the same recall: F's own standard error is 0,
    and F says so of itself; its parts' notes are theirs."""
    sample = sample_of([2] * 6, [2] * 6, [0] * 6, [1] * 6)  # each entity cut in two halves
    res = estimate_metrics(sample, ["b_cubed_precision", "b_cubed_recall", "b_cubed_f"])
    f = res["b_cubed_f"]
    assert res["b_cubed_precision"].interval == "zero_event"  # precision error-free
    assert res["b_cubed_recall"].std_error == pytest.approx(0.0, abs=1e-12)  # recall 0.5 on every draw
    assert f.std_error == pytest.approx(0.0, abs=1e-12)
    assert f.note.startswith("standard error 0") and "at least" not in f.note
    assert not problems(f.note, f, components("b_cubed_f", res)), f.note


def test_f_of_a_zero_recall_names_it():
    p = ratio_estimate(np.array([1.0, 1.0, 0.5]), np.ones(3), zero_event=True)
    r = ratio_estimate(np.zeros(3), np.ones(3), zero_event=True)
    f = f_beta_estimate(p, r, None, beta=1.0, ci_level=0.95, labels=("precision", "recall"))
    assert f.estimate == 0.0 and math.isnan(f.std_error)
    assert f.note.startswith("no standard error: recall is 0") and "at most" not in f.note


# -- (b) every derived quantity, over random small samples -----------------------------------------


@HYP
@given(sample=samples(), method=st.sampled_from(["linearization", "logit", "bootstrap", "bca"]))
def test_every_metric_states_only_what_is_true_of_itself(sample, method):
    res = with_parts(sample, PERFORMANCE_METRICS, ci_method=method, n_boot=200, seed=1)
    for mid in PERFORMANCE_METRICS:
        found = problems(res[mid].note, res[mid], components(mid, res))
        assert not found, (mid, method, res[mid].note, found)


def _domains(sample: BenchmarkSample, mid: str, member: np.ndarray):
    pi = member.astype(float)
    sides = [with_parts(sample, [mid], domain=dom) for dom in (pi, 1 - pi)]
    return sides[0], sides[1]


@HYP
@given(sample=samples(), data=st.data())
def test_differences_state_only_what_is_true_of_themselves(sample, data):
    """Gaps of two domains (SPEC 8) by every method of stats.combine and stats.differences."""
    k = sample.labels.shape[0]
    member = np.array(data.draw(st.lists(st.booleans(), min_size=k, max_size=k)))
    mid = data.draw(st.sampled_from(["pairwise_recall", "b_cubed_precision", "b_cubed_f", "cluster_recall",
                                     "homogeneity"]))
    sa, sb = _domains(sample, mid, member)
    a, b = sa[mid], sb[mid]
    parts = {"first side": (a, components(mid, sa)), "second side": (b, components(mid, sb))}
    d = sample.draws.astype(float)
    for method in ("linearization", "logit"):
        gap = difference(a, b, d, method=method)
        assert not problems(gap.note, gap, parts), (method, gap.note)
    if not (a.defined and b.defined) or a.influence is None or b.influence is None:
        return
    pi = member.astype(float)
    fg = fg_values(sample, mid) if mid != "b_cubed_f" else None
    if fg is None:
        return
    f, g = fg
    boot = JointBootstrap({"a": (f * pi, g * pi), "b": (f * (1 - pi), g * (1 - pi))}, d, n_boot=200, seed=3,
                          bias_adjust=True)
    ta, tb = boot.theta["a"], boot.theta["b"]
    if mid == "homogeneity":
        ta, tb = 1 - ta, 1 - tb
    for combine in ("joint", "mover"):
        gap = bootstrap_difference(a, b, d, ta, tb, method="bootstrap", ci_level=0.95, seed=3, combine=combine)
        assert not problems(gap.note, gap, parts), (combine, gap.note)


@HYP
@given(sample=samples(), data=st.data())
def test_changes_state_only_what_is_true_of_themselves(sample, data):
    """Paired changes between two releases on the same benchmark (SPEC 10), the sides included."""
    k = sample.labels.shape[0]
    touched = np.array(data.draw(st.lists(st.booleans(), min_size=k, max_size=k)))
    # the second release: some drawn clusters get a stranger in their first predicted cluster
    first_piece = np.r_[True, sample.piece_cluster[1:] != sample.piece_cluster[:-1]]
    extra = (touched[sample.piece_cluster] & first_piece).astype(int)
    other = BenchmarkSample(labels=sample.labels, size=sample.size, weight=sample.weight, draws=sample.draws,
                            piece_cluster=sample.piece_cluster, piece_n=sample.piece_n,
                            piece_m=sample.piece_m + extra, piece_label=sample.piece_label,
                            n_records=sample.n_records, n_clusters=sample.n_clusters, design=sample.design)
    metrics = ["pairwise_precision", "b_cubed_precision", "b_cubed_f", "cluster_f"]
    out = paired_changes(other, sample, metrics, methods=("linearization", "logit", "bootstrap"), n_boot=200,
                         seed=2)
    for mid in metrics:
        for method, ch in out[mid].items():
            parts = {"current release": ch.current, "baseline release": ch.baseline}
            assert not problems(ch.change.note, ch.change, parts), (mid, method, ch.change.note)
            for side in (ch.current, ch.baseline):
                assert "at least" not in side.note or side.interval == "zero_event", (mid, method, side.note)


@HYP
@given(sample=samples(), data=st.data())
def test_subgroup_rows_state_only_what_is_true_of_their_parts(sample, data):
    """Group estimates, gaps and the row notes of estimate_groups (SPEC 8), every method."""
    k = sample.labels.shape[0]
    member = np.array(data.draw(st.lists(st.booleans(), min_size=k, max_size=k)))
    ms = Membership(groups=("g",), pi=member.astype(float)[:, None], known=np.ones(k, dtype=bool))
    metrics = ["pairwise_recall", "b_cubed_precision", "b_cubed_recall", "b_cubed_f"]
    rows = estimate_groups_methods(sample, ms, metrics, methods=("linearization", "logit", "bootstrap", "hull"),
                                   min_draws=2, n_boot=200, seed=4)
    for method, found in rows.items():
        for row in found:
            gap_parts = {"group": row.estimate, "comparison": row.comparison}
            assert not problems(row.disparity.note, row.disparity, gap_parts), (method, row.disparity.note)
            parts = {"gap": (row.disparity, gap_parts), "group": row.estimate, "comparison": row.comparison}
            # a row has no number of its own: every clause of its note names the part it is about
            assert not problems(row.note, row.disparity, parts), (method, row.note)
            for clause in filter(None, row.note.split("; ")):
                assert clause.startswith(("gap: ", "group: ", "comparison: ")) or "min_draws" in clause, \
                    (method, row.note)
