"""``er-expectations label init|export`` (issue 19): exit codes, messages, nothing overwritten."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from er_expectations.cli.common import EXIT_OK, EXIT_USAGE
from er_expectations.cli.main import main
from er_expectations.labelling.project import STORE_FILE, open_project
from er_expectations.labelling.store import Decision

BIG = 2**62 + 1


@pytest.fixture()
def release(tmp_path) -> Path:
    path = tmp_path / "records.parquet"
    pd.DataFrame({"mention_id": pd.Series([BIG + i for i in range(12)], dtype="int64"),
                  "pred": [f"c{i // 3}" for i in range(12)],
                  "first": ["=cmd()", "Ann", "Ann", "Bo", "Bo", "Bo", "Cy", "Cy", "Cy", "Di", "Di", "Di"],
                  "last": ["Lee"] * 12}).to_parquet(path, index=False)
    return path


def _init(release: Path, project: Path, *extra: str) -> int:
    return main(["label", "init", str(project), "--records", str(release), "--record-id", "mention_id",
                 "-p", "pred", "--name", "first", "last", *extra])


def test_init_then_export(release, tmp_path, capsys):
    project = tmp_path / "proj"
    assert _init(release, project, "--draws", "6", "--seed", "2", "--double-share", "0.5") == EXIT_OK
    out = capsys.readouterr().out
    assert "6 draws (3 to be labelled twice" in out and "label serve" in out
    p = open_project(project)
    first = p.store.draws()[0]
    p.store.save(first.draw, "=ann", Decision(removed=[str(BIG + 99)]), expected_version=0)
    p.close()
    target = tmp_path / "labels.parquet"
    assert main(["label", "export", str(project), "-o", str(target)]) == EXIT_OK
    labels = pd.read_parquet(target)
    assert labels["record_id"].tolist() == [int(first.record)] and labels["removed"].tolist()[0].tolist() == [BIG + 99]
    assert main(["label", "export", str(project), "-o", str(tmp_path / "labels.csv")]) == EXIT_OK
    assert "'=ann" in (tmp_path / "labels.csv").read_text()  # the labeller's name neutralised
    # the exported labels are a labels table: the benchmark command reads them (rule 4 breaks here)
    code = main(["benchmark", str(target), str(release), "--record-id", "mention_id", "-p", "pred",
                 "-o", str(tmp_path / "bench.parquet")])
    assert code == EXIT_USAGE and "rule 4" in capsys.readouterr().err


def test_init_refuses_bad_input_with_exit_2(release, tmp_path, capsys):
    project = tmp_path / "proj"
    assert _init(release, project) == EXIT_USAGE
    assert "--sample FILE" in capsys.readouterr().err
    assert _init(release, project, "--draws", "0", "--seed", "1") == EXIT_USAGE
    assert _init(release, project, "--draws", "3", "--seed", "1", "--double-share", "2") == EXIT_USAGE
    assert main(["label", "init", str(project), "--records", str(release), "--record-id", "nope", "-p", "pred",
                 "--draws", "3", "--seed", "1"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "nope" in err and "Traceback" not in err
    assert not (project / STORE_FILE).exists()
    assert _init(release, project, "--draws", "3", "--seed", "1") == EXIT_OK
    before = (project / STORE_FILE).read_bytes()
    assert _init(release, project, "--draws", "3", "--seed", "9") == EXIT_USAGE
    assert "already" in capsys.readouterr().err and (project / STORE_FILE).read_bytes() == before


def test_export_refuses_to_overwrite_and_bad_stores(release, tmp_path, capsys):
    project = tmp_path / "proj"
    assert _init(release, project, "--draws", "3", "--seed", "1") == EXIT_OK
    target = tmp_path / "labels.csv"
    target.write_text("filled in by hand\n")
    assert main(["label", "export", str(project), "-o", str(target)]) == EXIT_USAGE
    assert target.read_text() == "filled in by hand\n" and "--force" in capsys.readouterr().err
    assert main(["label", "export", str(project), "-o", str(project / STORE_FILE)]) == EXIT_USAGE
    (project / STORE_FILE).write_bytes(b"not a database at all" * 100)
    before = (project / STORE_FILE).read_bytes()
    assert main(["label", "export", str(project), "-o", str(tmp_path / "x.parquet")]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert str(project / STORE_FILE) in err and "Traceback" not in err
    assert (project / STORE_FILE).read_bytes() == before and not (tmp_path / "x.parquet").exists()
    assert main(["label", "export", str(tmp_path / "none"), "-o", str(tmp_path / "x.parquet")]) == EXIT_USAGE
    assert "label init" in capsys.readouterr().err


# -- review tags to the error audit (issue 19 item 5 feeds issue 20 item 1) -------------------------


def _answer_every_draw(project: Path, *, lone: int) -> list:
    """Each draw answered from a truth where record ``lone`` is its own entity (an over-merge in
    c0) and every other predicted cluster is right; returns the draws."""
    p = open_project(project)
    try:
        for d in p.store.draws():
            r = int(d.record)
            members = [BIG + i for i in range(12) if f"c{i // 3}" == d.predicted_cluster]
            if r == lone:
                removed = [m for m in members if m != lone]
            else:
                removed = [m for m in members if m == lone]
            p.store.save(d.draw, "ann", Decision(removed=[str(x) for x in removed]), expected_version=0)
        return p.store.draws()
    finally:
        p.close()


@pytest.mark.parametrize("suffix", ["parquet", "csv"])
def test_review_tags_export_under_the_benchmarks_cluster_ids_and_feed_the_error_audit(release, tmp_path, suffix):
    import er_expectations as erx

    project = tmp_path / "proj"
    assert _init(release, project, "--draws", "12", "--seed", "3") == EXIT_OK
    draws = _answer_every_draw(project, lone=BIG + 1)
    over = [d for d in draws if d.predicted_cluster == "c0" and int(d.record) != BIG + 1]
    fine = [d for d in draws if d.predicted_cluster != "c0"]
    assert over and fine, "the seed must draw c0's majority and another cluster"
    p = open_project(project)
    # tagged on the draw reviewed, which need not be the first draw of its true cluster
    p.store.add_tag(f"draw-{over[-1].draw}", "name variant", kind="over", records=[str(BIG + 1)], labeller="ann")
    p.close()
    labels_file, tags_file = tmp_path / f"labels.{suffix}", tmp_path / f"tags.{suffix}"
    assert main(["label", "export", str(project), "-o", str(labels_file), "--tags", str(tags_file)]) == EXIT_OK
    records = pd.read_parquet(release)
    if suffix == "parquet":
        labels, tags = pd.read_parquet(labels_file), pd.read_parquet(tags_file)
    else:
        labels = pd.read_csv(labels_file, dtype=str, keep_default_na=False)
        tags = pd.read_csv(tags_file, dtype=str, keep_default_na=False)
        assert tags["records"].tolist() == [str(BIG + 1)]  # ids joined by ';' as the labels' lists are
        tags["records"] = tags["records"].map(lambda cell: [int(x) for x in cell.split(";") if x])
    bench = erx.benchmark_from_labels(labels, records, "pred", record_id="mention_id")
    # the benchmark names c0's majority by its first draw: the tag names it the same way
    first = min(d.draw for d in over)
    assert tags["cluster"].tolist() == [f"draw-{first}"] and tags["kind"].tolist() == ["over"]
    assert set(bench.loc[bench["reference"] == f"draw-{first}", "mention_id"]) == {BIG, BIG + 2}
    df = records.merge(bench, on="mention_id", how="left")
    audit = erx.error_audit(df, "pred", "reference", tags, record_id="mention_id", weights={"column": "weight"},
                            draws="draws")
    assert audit.examples.loc[audit.examples["tag"] == "name variant", "cluster"].tolist() == [f"draw-{first}"]


def test_tags_on_a_draw_no_longer_answered_are_refused_and_nothing_is_written(release, tmp_path, capsys):
    project = tmp_path / "proj"
    assert _init(release, project, "--draws", "4", "--seed", "1") == EXIT_OK
    p = open_project(project)
    d = p.store.draws()[0]
    p.store.add_tag(f"draw-{d.draw}", "typo", kind="under", records=[], labeller="ann")  # never answered
    p.close()
    labels_file, tags_file = tmp_path / "labels.parquet", tmp_path / "tags.parquet"
    assert main(["label", "export", str(project), "-o", str(labels_file), "--tags", str(tags_file)]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "'typo'" in err and f"draw-{d.draw}" in err and "Traceback" not in err
    assert not labels_file.exists() and not tags_file.exists()
    assert main(["label", "export", str(project), "-o", str(labels_file), "--tags", str(labels_file)]) == EXIT_USAGE
    assert "their own file" in capsys.readouterr().err
