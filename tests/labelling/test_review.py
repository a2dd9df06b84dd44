"""Review mode's picture of a true cluster against the prediction, worked by hand (issue 19)."""

from __future__ import annotations

import pandas as pd
import pytest
from support.older_store import without_release_guard

from er_expectations import InputError
from er_expectations.labelling.project import init_project
from er_expectations.labelling.review import picture
from er_expectations.labelling.store import Decision

BIG = 2**62 + 1


def rid(i: int) -> int:
    return BIG + i


@pytest.fixture()
def project(tmp_path):
    """A = {0, 1, 2}, B = {3, 4, 5}, C = {6}; record 7 outside the release."""
    frame = pd.DataFrame({"id": pd.Series([rid(i) for i in range(8)], dtype="int64"),
                          "pred": pd.Series([10, 10, 10, 11, 11, 11, 12, None], dtype="Int64")})
    frame.to_parquet(tmp_path / "r.parquet")
    pd.DataFrame({"draw": [1, 2], "record_id": [rid(0), rid(6)]}).to_parquet(tmp_path / "s.parquet")
    p = init_project(tmp_path / "p", records=tmp_path / "r.parquet", record_id="id", prediction="pred",
                     sample=tmp_path / "s.parquet", double_label_share=0)
    yield p
    p.close()


def test_a_split_and_merged_entity(project):
    store = project.store
    with pytest.raises(InputError, match="no answer"):
        picture(project, 1)
    # entity of record 0: {0, 1} of A, {3, 4} of B; 7 (outside the release) is ignored
    with without_release_guard(store):  # 7: as a store written before the save-time refusal holds it
        store.save(1, "ann", Decision(removed=[str(rid(2))], added=[str(rid(3)), str(rid(4)), str(rid(7))]),
                   expected_version=0)
    store.add_tag("draw-1", "name variant", kind="under", records=[rid(3)], labeller="ann")
    got = picture(project, 1)
    assert got.key == "draw-1" and got.labeller == "ann" and [t.tag for t in got.tags] == ["name variant"]
    assert got.true_cluster == (rid(0), rid(1), rid(3), rid(4))
    assert [(r.predicted_cluster, r.size) for r in got.rows] == [(10, 3), (11, 3)]
    assert got.rows[0].shared == (rid(0), rid(1)) and got.rows[0].beyond == (rid(2),)
    assert got.rows[1].shared == (rid(3), rid(4)) and got.rows[1].beyond == (rid(5),)
    assert got.split and got.merged


def test_a_correct_singleton(project):
    project.store.save(2, "bob", Decision(true_cluster="E6"), expected_version=0)
    got = picture(project, 2, labeller="bob")
    assert got.key == "E6" and got.true_cluster == (rid(6),) and not got.split and not got.merged
    with pytest.raises(InputError, match="by 'ann'"):
        picture(project, 2, labeller="ann")
