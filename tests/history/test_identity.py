"""A check's series survives its thresholds (issue 18 item 4), and a shared store keeps projects apart.

Hostile cases first: tightening a threshold between two releases, a store holding rows written
when thresholds were part of the identity, two checks that would share a label, two projects
writing the same checkpoint name to one database.
"""

from __future__ import annotations

import json

import pytest
import sqlalchemy as sa

from er_expectations.history import HistoryError, HistoryStore, ReleaseRun, ResultRecord
from er_expectations.history.store import identifying_kwargs, kwargs_key

CHANGE = "expect_statistic_change_to_be_below"


def change(value: float, **kwargs) -> ResultRecord:
    return ResultRecord(suite="s", expectation_type=CHANGE, label="average_cluster_size_change", severity="critical",
                        kwargs={"prediction_column": "p", "statistic": "average_cluster_size", **kwargs},
                        success=True, metric="average_cluster_size", column="p", value=value)


def release(name: str, position: int, *results: ResultRecord) -> ReleaseRun:
    return ReleaseRun(checkpoint="cp", release=name, position=position, status="passed", results=results)


def test_tightening_a_threshold_keeps_the_series(url):
    with HistoryStore.open(url) as store:
        store.record(release("r1", 0, change(0.05, max_relative_change=0.2, min_overlap=0.5)))
        store.record(release("r2", 1, change(0.07, max_relative_change=0.1, min_overlap=0.8, on_skip="fail")))
        series = store.series(checkpoint="cp", expectation_type=CHANGE)
    assert list(series["release"]) == ["r1", "r2"] and list(series["value"]) == [0.05, 0.07]
    assert series["kwargs_key"].nunique() == 1


def test_a_relative_and_an_absolute_change_are_two_series(url):
    """The threshold's *kind* says what is recorded (a relative or an absolute change): kept."""
    with HistoryStore.open(url) as store:
        store.record(release("r1", 0, change(0.05, max_relative_change=0.2), change(3.0, max_change=5)))
        with pytest.raises(HistoryError, match="match 2 expectations"):
            store.series(checkpoint="cp", expectation_type=CHANGE)
        rel = store.series(checkpoint="cp", expectation_type=CHANGE, kwargs={"max_relative_change": 0.9})
        assert list(rel["value"]) == [0.05]


def test_rows_recorded_with_thresholds_in_their_identity_join_todays_series(url):
    """A row written when max_disparity identified the check (its stored key and JSON hold it)."""
    old = {"prediction_column": "p", "metric": "pairwise_f", "group_column": "g", "max_disparity": 0.2,
           "require_significance": True}
    with HistoryStore.open(url) as store:
        store.record(release("r1", 0, ResultRecord(
            suite="s", expectation_type="expect_subgroup_disparity_to_be_below", kwargs={}, label="gap",
            severity="critical", success=True, metric="pairwise_f", column="p", value=0.1)))
    engine = sa.create_engine(url)
    with engine.begin() as conn:  # as an older version wrote it
        conn.execute(sa.text("UPDATE er_history_results SET kwargs_json = :j, kwargs_key = :k"),
                     {"j": json.dumps(old, sort_keys=True), "k": "0" * 32})
    engine.dispose()
    new = {**old, "max_disparity": 0.05, "require_significance": False}
    with HistoryStore.open(url) as store:
        store.record(release("r2", 1, ResultRecord(
            suite="s", expectation_type="expect_subgroup_disparity_to_be_below", kwargs=new, label="gap",
            severity="critical", success=False, metric="pairwise_f", column="p", value=0.12)))
        series = store.series(checkpoint="cp", metric="pairwise_f", kwargs=new)
    assert list(series["release"]) == ["r1", "r2"] and list(series["value"]) == [0.1, 0.12]


def test_identity_by_hand():
    kw = {"prediction_column": "p", "statistic": "hill_number", "q": 2, "max_relative_change": 0.1,
          "min_overlap": 0.5, "on_skip": "fail", "record_id_column": "rid", "severity": "warning"}
    assert identifying_kwargs(kw) == {"change_kind": "relative", "prediction_column": "p", "q": 2,
                                      "statistic": "hill_number"}
    assert identifying_kwargs(identifying_kwargs(kw)) == identifying_kwargs(kw)  # idempotent on stored JSON
    assert kwargs_key(kw) == kwargs_key({**kw, "max_relative_change": 0.05})
    assert kwargs_key(kw) != kwargs_key({**kw, "max_relative_change": None, "max_change": 1})
    assert kwargs_key(kw) != kwargs_key({**kw, "check_id": "size-gate"})


def test_two_projects_on_one_store_never_mix(url):
    with HistoryStore.open(url) as store:  # a row from before projects were recorded: read by both
        store.record(release("r0", 0, change(0.01, max_change=1)))
    with HistoryStore.open(url, project="team-a") as a, HistoryStore.open(url, project="team-b") as b:
        a.record(release("r1", 1, change(0.5, max_change=1)))
        b.record(release("r1", 1, change(9.0, max_change=1)))
        sa_ = a.series(checkpoint="cp", expectation_type=CHANGE)
        sb = b.series(checkpoint="cp", expectation_type=CHANGE)
        assert list(sa_["value"]) == [0.01, 0.5] and list(sb["value"]) == [0.01, 9.0]
        assert list(a.runs("cp")["release"]) == ["r0", "r1"] and list(a.runs("cp")["project"]) == [None, "team-a"]
    with HistoryStore.open(url) as everyone:  # no project: every row (an auditor's view)
        assert len(everyone.runs("cp", all_versions=True)) == 3
