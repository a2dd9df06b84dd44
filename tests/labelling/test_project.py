"""A labelling project on disk: workbench.yml with located errors, draws made or read, exact ids."""

from __future__ import annotations

import pandas as pd
import pytest

from er_expectations import InputError
from er_expectations.analysis.sampling import draw_sample, write_frame
from er_expectations.config import ConfigError
from er_expectations.labelling.project import CONFIG_FILE, STORE_FILE, init_project, open_project
from er_expectations.labelling.store import Decision

BIG = 2**62 + 1


@pytest.fixture()
def records(tmp_path):
    """Integer ids beyond 2^53 (2^62+1 and 2^62+2 are two records), hostile names."""
    frame = pd.DataFrame({
        "id": pd.Series([BIG + i for i in range(8)], dtype="int64"),
        "pred": pd.Series([10, 10, 10, 11, 11, 12, None, 13], dtype="Int64"),
        "name": ["<script>alert(1)</script>", "=HYPERLINK(1)", "José Smith", "Ann Lee", "Ann Li", "Bo", "X", "Y"],
        "block": ["s", "s", "s", "l", "l", "b", "x", "y"],
    })
    path = tmp_path / "records.parquet"
    frame.to_parquet(path)
    return path


def test_init_draws_and_reopens_with_exact_ids(tmp_path, records):
    project = init_project(tmp_path / "proj", records=records, record_id="id", prediction="pred", name="name",
                           block="block", draws=20, seed=3, double_label_share=0.25)
    draws = project.store.draws()
    assert len(draws) == 20 and sum(d.double for d in draws) == 5
    expected = draw_sample(pd.read_parquet(records), prediction="pred", n=20, seed=3, record_id="id")
    assert [int(d.record) for d in draws] == expected["record_id"].tolist()  # exact: no float on the way
    assert all(int(d.record) != BIG + 6 for d in draws)  # outside the release: never drawn
    project.store.save(1, "ann", Decision(), expected_version=0)
    project.close()
    again = open_project(tmp_path / "proj")
    assert again.config.records == "../records.parquet" and again.config.draws == 20
    assert again.store.decision(1, "ann") is not None
    frame = again.records()
    assert frame["id"].dtype == "int64" and BIG in frame["id"].tolist()
    labels = again.store.labels_frame()
    assert labels["record_id"].tolist() == [int(draws[0].record)]


def test_init_from_a_worksheet(tmp_path, records):
    sheet = draw_sample(pd.read_parquet(records), prediction="pred", n=5, seed=1, record_id="id", columns=["name"])
    write_frame(sheet, tmp_path / "sheet.csv")
    project = init_project(tmp_path / "p", records=records, record_id="id", prediction="pred",
                           sample=tmp_path / "sheet.csv", double_label_share=0)
    assert [int(d.record) for d in project.store.draws()] == sheet["record_id"].tolist()
    assert [d.predicted_cluster for d in project.store.draws()] == [str(c) for c in sheet["predicted_cluster"]]


def test_a_worksheet_of_another_release_is_refused(tmp_path, records):
    sheet = pd.DataFrame({"draw": [1], "record_id": [str(BIG)], "predicted_cluster": ["99"]})
    sheet.to_csv(tmp_path / "sheet.csv", index=False)
    with pytest.raises(InputError, match=r"sheet.csv.*another release"):
        init_project(tmp_path / "p", records=records, record_id="id", prediction="pred", sample=tmp_path / "sheet.csv")
    assert not (tmp_path / "p").exists()


def test_an_existing_project_is_never_replaced(tmp_path, records):
    init_project(tmp_path / "p", records=records, record_id="id", prediction="pred", draws=3, seed=1).close()
    before = (tmp_path / "p" / STORE_FILE).read_bytes()
    with pytest.raises(InputError, match="holds a labelling project already"):
        init_project(tmp_path / "p", records=records, record_id="id", prediction="pred", draws=3, seed=2)
    assert (tmp_path / "p" / STORE_FILE).read_bytes() == before


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"prediction": "nope", "draws": 3, "seed": 1}, "nope"),
    ({"prediction": "pred", "draws": 3}, "seed"),
    ({"prediction": "pred"}, "sample= .* or draws="),
    ({"prediction": "pred", "draws": 3, "seed": 1, "double_label_share": 1.5}, "double_label_share"),
])
def test_bad_arguments_name_the_parameter(tmp_path, records, kwargs, match):
    with pytest.raises(InputError, match=match):
        init_project(tmp_path / "p", records=records, record_id="id", **kwargs)
    assert not (tmp_path / "p" / STORE_FILE).exists()


@pytest.mark.parametrize(("tags", "match"), [
    (["typo", "x" * 101], r"tags\[1\].*101 characters; review mode saves tags of at most 100"),
    (["untagged errors"], r"tags\[0\].*'untagged errors' is the error audit's name for the errors nobody tagged"),
    (["Untagged Errors"], r"error audit's name"),
    ([" typo"], r"starts or ends with a space.*write 'typo'"),
])
def test_tags_review_mode_or_the_audit_would_refuse_are_refused_at_init(tmp_path, records, tags, match):
    """Hostile round 3 (issue 29 item 9): ``label init`` accepted tags that review mode (over 100
    characters) or the error audit ('untagged errors') refused later."""
    with pytest.raises((InputError, ConfigError), match=match):
        init_project(tmp_path / "p", records=records, record_id="id", prediction="pred", draws=3, seed=1, tags=tags)
    assert not (tmp_path / "p" / STORE_FILE).exists()
    init_project(tmp_path / "p", records=records, record_id="id", prediction="pred", draws=3, seed=1,
                 tags=["typo", "x" * 100]).close()  # the longest tag review mode saves
    yml = tmp_path / "p" / CONFIG_FILE
    yml.write_text(yml.read_text().replace('"typo"', '"untagged errors"'))
    with pytest.raises(ConfigError, match=r"workbench.yml:\d+:\d+: .*error audit's name"):
        open_project(tmp_path / "p")


def test_a_bad_workbench_yml_is_located(tmp_path, records):
    init_project(tmp_path / "p", records=records, record_id="id", prediction="pred", draws=3, seed=1).close()
    yml = tmp_path / "p" / CONFIG_FILE
    yml.write_text(yml.read_text().replace("double_label_share: 0.1", "double_label_share: 2\nrecod_id: x"))
    with pytest.raises(ConfigError) as info:
        open_project(tmp_path / "p")
    text = str(info.value)
    assert f"{yml}:" in text and "double_label_share" in text and "recod_id" in text


def test_records_that_lost_a_drawn_record_are_refused(tmp_path, records):
    project = init_project(tmp_path / "p", records=records, record_id="id", prediction="pred", draws=5, seed=1)
    gone = int(project.store.draws()[0].record)
    frame = pd.read_parquet(records)
    frame[frame["id"] != gone].to_parquet(records)
    project.close()
    with pytest.raises(InputError, match=rf"records.parquet: the drawn record\(s\) {gone} \(1 in all\)"):
        open_project(tmp_path / "p").records()


def test_predictions_in_their_own_file_and_a_name_of_two_columns(tmp_path):
    pd.DataFrame({"id": ["a", "b", "c"], "first": ["Ann", "Bo", "Cy"], "last": ["Lee", "Li", "Ng"]}).to_parquet(
        tmp_path / "r.parquet")
    pd.DataFrame({"id": ["a", "b", "c"], "2021-12-30": ["x", "x", "y"]}).to_parquet(tmp_path / "p.parquet")
    project = init_project(tmp_path / "proj", records=tmp_path / "r.parquet", predictions=tmp_path / "p.parquet",
                           record_id="id", prediction="2021-12-30", name=["first", "last"], draws=4, seed=0)
    frame = project.records()
    assert frame[project.name_column].tolist() == ["Ann Lee", "Bo Li", "Cy Ng"]
    project.close()
    assert open_project(tmp_path / "proj").config.prediction == "2021-12-30"


def test_the_project_search_uses_its_name_block_and_prediction(tmp_path):
    pd.DataFrame({"id": ["a", "b", "c"], "first": ["José", "Jose", "Ann"], "last": ["Ruiz", "Ruis", "Lee"],
                  "block": ["r", "r", "l"], "pred": ["x", "y", "z"]}).to_parquet(tmp_path / "r.parquet")
    project = init_project(tmp_path / "proj", records=tmp_path / "r.parquet", record_id="id", prediction="pred",
                           name=["first", "last"], block="block", draws=3, seed=0)
    hits = project.search().search("Ruiz Jose", near="a")
    assert [h.record for h in hits[:2]] == ["a", "b"] and hits[0].in_predicted and not hits[1].in_predicted
    assert all(h.in_release for h in hits)
    assert project.search() is project.search()


def test_a_hand_written_workbench_yml(tmp_path):
    from er_expectations.labelling.project import load_config

    path = tmp_path / CONFIG_FILE
    path.write_text("records: r.parquet\nrecord_id: 7\nprediction: 2021-12-30\nname: full name\n"
                    "sample: s.csv\ntags: [typo, typo]\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert f"{path}:6:" in str(info.value) and "'typo' is listed twice" in str(info.value)
    path.write_text("records: r.parquet\nrecord_id: 7\nprediction: 2021-12-30\nname: full name\nsample: s.csv\n")
    config = load_config(path)
    assert (config.record_id, config.prediction, config.name) == ("7", "2021-12-30", ("full name",))
    path.write_text("record_id: id\nprediction: p\n")
    with pytest.raises(ConfigError, match=r"workbench.yml:1:1: .*missing required key 'records'"):
        load_config(path)
    path.write_text("records: r.parquet\nrecord_id: id\nprediction: p\n")
    with pytest.raises(ConfigError, match=r"say how the draws were made; give 'sample: <worksheet file>'"):
        load_config(path)


def test_members_of_a_draws_predicted_cluster(tmp_path, records):
    project = init_project(tmp_path / "p", records=records, record_id="id", prediction="pred", name="name",
                           draws=10, seed=4)
    frame = pd.read_parquet(records)
    for d in project.store.draws():
        got = project.members(d.draw)
        want = frame.loc[frame["pred"] == int(d.predicted_cluster), "id"]
        assert got["id"].iloc[0] == int(d.record) and sorted(got["id"]) == sorted(want)
        assert got["id"].dtype == "int64" and list(got.columns) == ["id", "pred", "name"]


def test_csv_records_keep_ids_as_written(tmp_path):
    (tmp_path / "r.csv").write_text("id,pred,name\n007,A,Ann\n7,A,Ann\n 7,B,Bo\n")
    project = init_project(tmp_path / "p", records=tmp_path / "r.csv", record_id="id", prediction="pred", name="name",
                           draws=30, seed=0)
    assert {d.record for d in project.store.draws()} == {"007", "7", " 7"}
    d = next(d for d in project.store.draws() if d.record == "007")
    assert sorted(project.members(d.draw)["id"]) == ["007", "7"]
    project.store.save(d.draw, "ann", Decision(removed=["7"]), expected_version=0)
    assert project.store.labels_frame()["removed"].tolist() == [["7"]]


def test_the_store_refuses_an_added_record_outside_the_release(tmp_path, records):
    """Issue 27 leftover 3: the web page refused it, the Python API saved it (SPEC 9 rule 4)."""
    project = init_project(tmp_path / "proj", records=records, record_id="id", prediction="pred",
                           draws=4, seed=3, double_label_share=0)
    outside = str(BIG + 6)  # null prediction: outside the release
    with pytest.raises(InputError, match=rf"{outside}.*not in the release.*take it out of the added records"):
        project.store.save(1, "ann", Decision(added=(outside,)), expected_version=0)
    assert project.store.decision(1, "ann") is None  # nothing written
    inside = str(BIG + 5)
    saved = project.store.save(1, "ann", Decision(added=(inside,)), expected_version=0)
    assert saved.decision.added == (inside,)
    project.close()
    again = open_project(tmp_path / "proj")  # the check survives reopening
    with pytest.raises(InputError, match=outside):
        again.store.save(2, "ann", Decision(added=(inside, outside)), expected_version=0)
    again.close()
