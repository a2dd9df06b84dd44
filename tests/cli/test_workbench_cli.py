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


def test_export_with_force_refuses_every_file_the_project_reads(release, tmp_path, capsys):
    """Hostile round 3, item 3: ``label export -o <the project's records> --force`` overwrote them and the
    project no longer opened. Every file workbench.yml names (records, predictions, sample) is an
    input: exit 2, the file unchanged, and the project still opens."""
    predictions = tmp_path / "predictions.parquet"
    pd.read_parquet(release)[["mention_id", "pred"]].to_parquet(predictions, index=False)
    project = tmp_path / "proj"
    assert main(["label", "init", str(project), "--records", str(release), "--predictions", str(predictions),
                 "--record-id", "mention_id", "-p", "pred", "--draws", "3", "--seed", "1"]) == EXIT_OK
    capsys.readouterr()
    for target in (release, predictions, project / "workbench.yml", project / STORE_FILE):
        before = target.read_bytes()
        for argv in (["-o", str(target), "--force"],
                     ["-o", str(tmp_path / "out.csv"), "--tags", str(target), "--force"]):
            argv = ["label", "export", str(project), *argv]
            assert main(argv) == EXIT_USAGE, argv
            err = capsys.readouterr().err
            assert "is also an input of the command" in err and "Traceback" not in err, err
            assert target.read_bytes() == before
    open_project(project).close()  # the project still opens


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
    bench = erx.benchmark_from_labels(labels, records, prediction="pred", record_id="mention_id")
    # the benchmark names c0's majority by its first draw: the tag names it the same way
    first = min(d.draw for d in over)
    assert tags["cluster"].tolist() == [f"draw-{first}"] and tags["kind"].tolist() == ["over"]
    assert set(bench.loc[bench["reference"] == f"draw-{first}", "mention_id"]) == {BIG, BIG + 2}
    df = records.merge(bench, on="mention_id", how="left")
    audit = erx.error_audit(df, prediction="pred", reference="reference", tags=tags, record_id="mention_id", weights={"column": "weight"},
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


# -- what the export decides (issue 27 item 4) ----------------------------------------------------


def _unsure_and_a_differing_double(release: Path, project: Path) -> tuple:
    """Six draws, three labelled twice: a double whose answers differ, one answered unsure,
    a double that agrees; returns (differing draw, unsure draw, agreeing draw, its record)."""
    assert _init(release, project, "--draws", "6", "--seed", "2", "--double-share", "0.5") == EXIT_OK
    p = open_project(project)
    try:
        draws = p.store.draws()
        doubles = [d for d in draws if d.double]
        singles = [d for d in draws if not d.double]
        differ, agree, unsure = doubles[0], doubles[1], singles[0]

        def other(d):  # a member of ĉ(r) other than r
            k = int(d.predicted_cluster[1:])
            return next(BIG + i for i in range(3 * k, 3 * k + 3) if BIG + i != int(d.record))

        p.store.save(differ.draw, "ann", Decision(removed=[str(other(differ))]), expected_version=0)
        p.store.save(differ.draw, "bob", Decision(), expected_version=0)
        p.store.save(agree.draw, "ann", Decision(), expected_version=0)
        p.store.save(agree.draw, "bob", Decision(), expected_version=0)
        p.store.save(unsure.draw, "ann", Decision(status="unsure", removed=[str(other(unsure))]), expected_version=0)
        return (differ.draw, other(differ)), (unsure.draw, other(unsure)), agree.draw
    finally:
        p.close()


def test_export_refuses_unsure_and_differing_answers_without_a_choice(release, tmp_path, capsys):
    project = tmp_path / "proj"
    (differ, _), (unsure, _), agree = _unsure_and_a_differing_double(release, project)
    target = tmp_path / "labels.parquet"
    capsys.readouterr()
    assert main(["label", "export", str(project), "-o", str(target)]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert not target.exists() and "Traceback" not in err and "nothing was written" in err
    assert f"draw {differ} (ann, bob)" in err and f"draw {unsure})" in err
    for fix in ("--unsure skip", "--unsure keep", "--first-answer", f"label reconcile {project} --draw {differ}"):
        assert fix in err
    assert main(["label", "export", str(project), "-o", str(target), "--unsure", "skip"]) == EXIT_USAGE
    assert main(["label", "export", str(project), "-o", str(target), "--first-answer"]) == EXIT_USAGE
    assert main(["label", "export", str(project), "-o", str(target), "--unsure", "maybe"]) == EXIT_USAGE
    assert not target.exists()


@pytest.mark.parametrize(("choice", "rows"), [
    (["--unsure", "skip", "--first-answer"], {"differ": (["m"], "ann", "first_of_two")}),
    (["--unsure", "keep", "--first-answer"], {"differ": (["m"], "ann", "first_of_two"),
                                              "unsure": (["m"], "ann", "unsure_kept")}),
    (["--unsure", "skip", "--reconcile-bob"], {"differ": ([], "bob", "reconciled")}),
])
def test_export_with_each_choice_writes_the_chosen_answers_and_says_so(release, tmp_path, capsys, choice, rows):
    project = tmp_path / "proj"
    differ, unsure, agree = _unsure_and_a_differing_double(release, project)
    if "--reconcile-bob" in choice:
        choice = [c for c in choice if c != "--reconcile-bob"]
        assert main(["label", "reconcile", str(project), "--draw", str(differ[0]), "--use", "bob", "--by",
                     "lead"]) == 0
        assert f"draw {differ[0]}: bob's answer" in capsys.readouterr().out
    target = tmp_path / "labels.parquet"
    assert main(["label", "export", str(project), "-o", str(target), *choice]) == EXIT_OK
    out = capsys.readouterr().out
    labels = pd.read_parquet(target)
    picked = {"differ": differ, "unsure": unsure}  # (draw, the member of ĉ(r) its answer removed)
    want = {picked[k][0]: ([picked[k][1]] if removed else [], who, how) for k, (removed, who, how) in rows.items()}
    want[agree] = ([], "ann", "agreed")
    got = {int(r.draw): (list(r.removed), r.labeller, r.answer) for r in labels.itertuples()}
    assert got == want
    kept = "1 unsure kept" if "keep" in choice else None
    expected = (f"{len(want)} draws exported: 1 double that agrees, "
                + ("1 reconciled" if "reconciled" in str(rows) else "1 first-of-two (--first-answer)")
                + (f", {kept}" if kept else "") + ("" if kept else "; 1 unsure skipped")
                + ("; " if kept else ", ") + "3 not yet labelled")
    assert expected in out and "column 'answer'" in out


def test_reconcile_refuses_clearly(release, tmp_path, capsys):
    project = tmp_path / "proj"
    (differ, _), (unsure, _), agree = _unsure_and_a_differing_double(release, project)
    capsys.readouterr()
    cases = [(["--draw", str(unsure), "--use", "ann"], "only a draw answered twice"),
             (["--draw", str(differ), "--use", "carol"], "'carol' did not answer"),
             (["--draw", str(2**63), "--use", "ann"], "no such draw"),
             (["--draw", "99", "--use", "ann"], "not a draw of this project"),
             (["--draw", "-1", "--use", "ann"], "give a draw number"),
             (["--draw", str(agree), "--use", "ann"], "nothing to reconcile")]
    for args, message in cases:
        assert main(["label", "reconcile", str(project), *args, "--by", "lead"]) == EXIT_USAGE, args
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, (args, err)
    p = open_project(project)
    try:
        assert p.store.reconciliations() == []
    finally:
        p.close()


# -- top-up projects (SPEC 14.3) -------------------------------------------------------------------


def _topup_init(files, project: Path, *extra: str) -> int:
    from support.topup_data import RELEASE

    return main(["label", "init", str(project), "--topup", str(files["worksheet"]), "--benchmark",
                 str(files["benchmark"]), "--records", str(files["records"]), "--record-id", "rid", "-p", RELEASE,
                 "--name", "name", "--attributes", "name", "block", *extra])


def test_topup_init_answer_export_with_unanswered_refused_then_written(tmp_path, capsys):
    from support.topup_data import population, truth_of, write_all

    from er_expectations.labelling.topup_store import TopupStore

    files = write_all(tmp_path / "data")
    project = tmp_path / "top"
    assert _topup_init(files, project, "--draws", "5") == EXIT_USAGE
    assert "--draws: a top-up project" in capsys.readouterr().err and not project.exists()
    assert main(["label", "init", str(project), "--topup", str(files["worksheet"]), "--records",
                 str(files["records"]), "--record-id", "rid", "-p", "pred_t"]) == EXIT_USAGE
    assert "--topup needs --benchmark" in capsys.readouterr().err
    assert _topup_init(files, project) == EXIT_OK
    out = capsys.readouterr().out
    sheet = pd.read_parquet(files["worksheet"])
    assert f"{sheet['entity'].nunique()} entities with {len(sheet)} candidate records" in out
    out_file = tmp_path / "filled.csv"
    assert main(["label", "export", str(project), "-o", str(out_file)]) == EXIT_USAGE
    assert "not answered" in capsys.readouterr().err and not out_file.exists()
    assert main(["label", "export", str(project), "-o", str(out_file), "--unsure", "skip"]) == EXIT_USAGE
    assert "--unsure: a top-up project has no draws" in capsys.readouterr().err
    person = dict(zip(population()["rid"].astype(str), population()["person"], strict=True))
    p = open_project(project)
    try:
        topups = TopupStore(p.store)
        for t in topups.tasks()[1:]:
            topups.save(t.task, "ann", belongs={c.record: "yes" if f"p{person[c.record]}" == t.entity else "no"
                                                for c in t.candidates}, expected_version=0)
        skipped = len(topups.tasks()[0].candidates)
    finally:
        p.close()
    assert main(["label", "export", str(project), "-o", str(out_file), "--unanswered", "no"]) == EXIT_OK
    out = capsys.readouterr().out
    assert f"{skipped} unanswered written 'no' (--unanswered no)" in out and "topup apply" in out
    filled = pd.read_csv(out_file, dtype={"rid": "int64"})
    truth = truth_of(population(), sheet)
    first = sheet["entity"] == sheet["entity"].iloc[0]
    assert filled["belongs"].tolist() == ["no" if f else t for f, t in zip(first, truth, strict=True)]
    assert filled["rid"].tolist() == sheet["rid"].tolist()


def test_unanswered_is_refused_on_a_draws_project(release, tmp_path, capsys):
    project = tmp_path / "proj"
    assert _init(release, project, "--draws", "3", "--seed", "1") == EXIT_OK
    capsys.readouterr()
    assert main(["label", "export", str(project), "-o", str(tmp_path / "x.csv"), "--unanswered", "no"]) == EXIT_USAGE
    assert "--unanswered is for a top-up project" in capsys.readouterr().err
    assert _init(release, tmp_path / "p2", "--benchmark", "b.parquet", "--draws", "3", "--seed", "1") == EXIT_USAGE
    assert "--benchmark is for a top-up project" in capsys.readouterr().err


def _can_mount_read_only() -> bool:
    import subprocess

    try:
        return subprocess.run(["unshare", "-rm", "true"], capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


@pytest.mark.skipif(not _can_mount_read_only(), reason="needs unshare -rm to mount a folder read-only")
def test_export_works_from_read_only_media(release, tmp_path):
    """Hostile round 3 item 8: the project on read-only media is exported, its store never written."""
    import hashlib
    import subprocess
    import sys

    project, mount, out = tmp_path / "proj", tmp_path / "mount", tmp_path / "out"
    assert _init(release, project, "--draws", "4", "--seed", "3") == EXIT_OK
    p = open_project(project)
    first = p.store.draws()[0]
    p.store.save(first.draw, "ann", Decision(removed=[str(BIG + 98)]), expected_version=0)
    p.close()
    mount.mkdir()
    out.mkdir()
    digest = hashlib.sha256((project / STORE_FILE).read_bytes()).hexdigest()
    files = sorted(f.name for f in project.iterdir())
    cli = "import sys; from er_expectations.cli.main import main; sys.exit(main(sys.argv[1:]))"
    done = subprocess.run(
        ["unshare", "-rm", "sh", "-c", f'mount --bind -o ro "{project}" "{mount}" && exec "$0" "$@"', sys.executable,
         "-c", cli, "label", "export", str(mount), "-o", str(out / "labels.parquet")],
        capture_output=True, text=True, timeout=300)
    assert done.returncode == EXIT_OK, done.stderr
    labels = pd.read_parquet(out / "labels.parquet")
    assert labels["removed"].tolist()[0].tolist() == [BIG + 98]
    assert hashlib.sha256((project / STORE_FILE).read_bytes()).hexdigest() == digest
    assert sorted(f.name for f in project.iterdir()) == files
