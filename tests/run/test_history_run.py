"""History recorded by ``er-expectations run`` and read by ``er-expectations history`` (issue #10).

Hostile first: a store that cannot be reached or is of a newer schema never loses the
validation results or the Data Docs (exit code 6), an unset variable or a password written
in the file is a configuration error before anything is written, and no password reaches
the output or the GX project.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import sqlalchemy as sa
from support.historytools import postgres_schema_url
from support.toyproject import CHECKPOINT, make_toy

from er_expectations.cli.main import main
from er_expectations.history import HISTORY_FILE, HistoryStore, default_url
from er_expectations.history.schema import VERSION_TABLE

PASSWORD = "TopSecret-9f3e"
UNREACHABLE = f"postgresql+psycopg://erx:{PASSWORD}@127.0.0.1:9/history"


def with_history(section: str) -> str:
    return CHECKPOINT + section


def project_text(root: Path) -> str:
    """Every file of the GX project folder as text (to look for leaked secrets)."""
    return "\n".join(p.read_bytes().decode("utf-8", "replace") for p in (root / "project").rglob("*") if p.is_file())


def result_files(root: Path) -> list[Path]:
    return sorted((root / "project" / "gx" / "uncommitted" / "validations").rglob("*.json"))


def data_docs_index(out: str) -> Path:
    found = re.search(r"^Data Docs: (.+)$", out, re.M)
    assert found, out
    return Path(found.group(1))


# -- hostile ----------------------------------------------------------------------------------


def test_an_unreachable_store_keeps_results_and_data_docs_and_exits_6(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ER_HISTORY_URL", UNREACHABLE)
    path = make_toy(tmp_path, checkpoint=with_history("history:\n  url: ${ER_HISTORY_URL}\n"))
    assert main(["run", str(path), "--release", "alpha", "gamma", "--no-progress"]) == 6
    captured = capsys.readouterr()
    assert "All 2 release(s) passed" in captured.out
    assert "History NOT recorded (releases not recorded: alpha, gamma)" in captured.out
    assert "cannot reach the history database postgresql+psycopg://erx:***@127.0.0.1:9/history" in captured.err
    assert data_docs_index(captured.out).is_file()
    assert len(result_files(tmp_path)) == 2  # one validation result per release, kept
    for text in (captured.out, captured.err, project_text(tmp_path)):
        assert PASSWORD not in text
    # a release that fails says so first (exit 1); the history problem is still reported
    assert main(["run", str(path), "--release", "beta", "--no-progress"]) == 1
    captured = capsys.readouterr()
    assert "the history was not recorded" in captured.err and PASSWORD not in captured.err + captured.out


def test_a_store_of_a_newer_schema_is_refused_and_left_untouched(tmp_path, capsys):
    path = make_toy(tmp_path)
    store_file = tmp_path / "project" / HISTORY_FILE
    HistoryStore.open(default_url(tmp_path / "project")).close()
    engine = sa.create_engine(f"sqlite:///{store_file}")
    with engine.begin() as conn:
        conn.execute(sa.text(f"UPDATE {VERSION_TABLE} SET version_num = '0042'"))
    engine.dispose()
    before = store_file.read_bytes()
    assert main(["run", str(path), "--release", "alpha", "--no-progress"]) == 6
    captured = capsys.readouterr()
    assert "has schema version '0042', newer than this er-expectations knows" in captured.err
    assert data_docs_index(captured.out).is_file() and len(result_files(tmp_path)) == 1
    assert store_file.read_bytes() == before


def test_an_unset_variable_is_a_configuration_error_before_anything_is_written(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("ER_NO_SUCH_HISTORY", raising=False)
    path = make_toy(tmp_path, checkpoint=with_history("history:\n  url: ${ER_NO_SUCH_HISTORY}\n"))
    assert main(["run", str(path), "--no-progress"]) == 2
    err = capsys.readouterr().err
    line = CHECKPOINT.count("\n") + 2
    assert re.search(rf"toy\.yml:{line}:8: history\.url: the environment variable ER_NO_SUCH_HISTORY is not set",
                     err), err
    assert not (tmp_path / "project").exists()


def test_a_password_written_in_the_file_is_refused(tmp_path, capsys):
    path = make_toy(tmp_path, checkpoint=with_history(f"history:\n  url: {UNREACHABLE}\n"))
    assert main(["run", str(path), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "history.url: the URL holds a password, written in the file" in err
    assert "${ER_HISTORY_URL}" in err and PASSWORD not in err
    assert not (tmp_path / "project").exists()
    ok = make_toy(tmp_path / "ok", checkpoint=with_history(
        "history:\n  url: postgresql+psycopg://erx:${PGPASSWORD}@db/history\n"))
    from er_expectations.config import load_checkpoint

    assert load_checkpoint(ok).history.url == "postgresql+psycopg://erx:${PGPASSWORD}@db/history"


# -- recording --------------------------------------------------------------------------------


def test_every_release_is_recorded_and_reruns_are_versioned(tmp_path, capsys):
    path = make_toy(tmp_path)
    assert main(["run", str(path), "--no-progress"]) == 1
    out = capsys.readouterr().out
    assert f"History: 3 release(s) recorded in {tmp_path / 'project' / HISTORY_FILE}." in out
    assert main(["run", str(path), "--release", "beta", "--no-progress"]) == 1
    assert ("these releases were validated before, so this run is their version 2 (earlier versions are kept: "
            "`er-expectations history --all-versions` lists every run)") in capsys.readouterr().out
    with HistoryStore.open(default_url(tmp_path / "project"), create=False) as store:
        runs = store.runs("toy", all_versions=True)
        assert list(zip(runs["release"], runs["version"], runs["status"], strict=True)) == [
            ("alpha", 1, "passed"), ("beta", 1, "failed"), ("beta", 2, "failed"), ("gamma", 1, "passed")]
        assert list(runs["position"]) == [0, 1, 1, 2]
        precision = store.series(checkpoint="toy", metric="pairwise_precision")
        # beta merges the true entities of four records two by two: every predicted cluster of
        # 8 records holds 2 x C(4,2) = 12 true pairs out of C(8,2) = 28 -> 3/7
        assert list(precision["release"]) == ["alpha", "beta", "gamma"]
        assert precision["value"].tolist() == pytest.approx([1.0, 3 / 7, 1.0])
        assert precision["success"].tolist() == [True, False, True]
        assert (precision["ci_level"] == 0.95).all() and (precision["ci_lower"] <= precision["value"]).all()
        assert precision.loc[1, "version"] == 2
        assert set(store.results(checkpoint="toy")["label"]) == {
            "pairwise_precision", "pairwise_recall", "matching_rate", "hill_number(q=2)", "homonymy_rate"}


def test_expectations_see_the_release_under_validation(tmp_path, monkeypatch):
    import great_expectations.checkpoint.checkpoint as gx_checkpoint

    from er_expectations.history.context import active_release
    from er_expectations.run.runner import run_checkpoint

    seen = []
    original = gx_checkpoint.Checkpoint.run

    def spy(self, *args, **kwargs):
        active = active_release()
        if active is not None:
            past = active.store.series(checkpoint=active.checkpoint, metric="pairwise_precision",
                                       before_position=active.position)
            seen.append((active.release, active.position, list(past["release"])))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(gx_checkpoint.Checkpoint, "run", spy)
    import io

    run_checkpoint(make_toy(tmp_path), progress=False, out=io.StringIO())
    assert seen == [("alpha", 0, []), ("beta", 1, ["alpha"]), ("gamma", 2, ["alpha", "beta"])]
    assert active_release() is None


def test_history_disabled_records_nothing(tmp_path, capsys):
    path = make_toy(tmp_path, checkpoint=with_history("history:\n  enabled: false\n"))
    assert main(["run", str(path), "--release", "alpha", "--no-progress"]) == 0
    assert "History" not in capsys.readouterr().out
    assert not (tmp_path / "project" / HISTORY_FILE).exists()
    assert main(["history", str(path), "-e", "pairwise_precision"]) == 2
    assert "is disabled" in capsys.readouterr().err


def test_a_shared_store_from_an_environment_variable(tmp_path, capsys, monkeypatch):
    shared = tmp_path / "shared" / "team.sqlite"
    monkeypatch.setenv("ER_HISTORY_URL", f"sqlite:///{shared}")
    path = make_toy(tmp_path / "a", checkpoint=with_history("history:\n  url: ${ER_HISTORY_URL}\n"))
    assert main(["run", str(path), "--release", "alpha", "--no-progress"]) == 0
    assert not (tmp_path / "a" / "project" / HISTORY_FILE).exists()
    with HistoryStore.open(f"sqlite:///{shared}", create=False) as store:
        assert list(store.runs("toy")["release"]) == ["alpha"]
    capsys.readouterr()


@pytest.mark.postgres
def test_a_run_records_into_postgresql(tmp_path, capsys, monkeypatch):
    with postgres_schema_url() as url:
        monkeypatch.setenv("ER_HISTORY_URL", url)
        path = make_toy(tmp_path, checkpoint=with_history("history:\n  url: ${ER_HISTORY_URL}\n"))
        assert main(["run", str(path), "--no-progress"]) == 1
        captured = capsys.readouterr()
        assert "History: 3 release(s) recorded in postgresql+psycopg://" in captured.out
        password = sa.engine.make_url(url).password
        if password:
            assert str(password) not in captured.out + captured.err + project_text(tmp_path)
        with HistoryStore.open(url, create=False) as store:
            values = store.series(checkpoint="toy", metric="pairwise_precision")["value"].tolist()
        assert values == pytest.approx([1.0, 3 / 7, 1.0])
        assert main(["history", str(path), "-e", "pairwise_precision"]) == 0
        assert "FAILED" in capsys.readouterr().out


# -- the history command ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    root = tmp_path_factory.mktemp("history_cli")
    path = make_toy(root)
    assert main(["run", str(path), "--no-progress"]) == 1
    assert main(["run", str(path), "--release", "beta", "--no-progress"]) == 1
    return root, path


def test_history_table(recorded, capsys):
    root, path = recorded
    capsys.readouterr()
    assert main(["history", str(path), "--expectation", "pairwise_precision"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("pairwise_precision (expect_estimated_pairwise_precision_to_be_between, "
                               "suite 'toy_checks') of checkpoint 'toy' over 3 release(s)")
    assert lines[1].split() == ["release", "version", "value", "std", "error", "95%", "CI", "result", "run"]
    rows = [line.split() for line in lines[3:]]
    assert [(r[0], r[1], r[2]) for r in rows] == [("alpha", "1", "1"), ("beta", "2", "0.4286"), ("gamma", "1", "1")]
    assert [r[7] for r in rows] == ["ok", "FAILED", "ok"]  # value, SE, "lo - hi", result


def test_history_json_csv_release_filter_and_versions(recorded, capsys):
    root, path = recorded
    capsys.readouterr()
    assert main(["history", str(path), "-e", "hill_number(q=2)", "--all-versions", "--format", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert [(s["release"], s["version"]) for s in payload["series"]] == [
        ("alpha", 1), ("beta", 1), ("beta", 2), ("gamma", 1)]
    assert payload["series"][0]["kwargs_json"] == '{"prediction_column": "prediction", "q": 2.0}'
    assert main(["history", str(path), "-e", "expect_estimated_pairwise_recall_to_be_between",
                 "--release", "gamma", "--format", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("release,position,version,value,") and len(lines) == 2
    assert lines[1].startswith("gamma,2,1,1.0,")
    assert main(["history", str(path), "-e", "pairwise_precision", "--last", "1", "--format", "csv"]) == 0
    assert [line.split(",")[0] for line in capsys.readouterr().out.splitlines()[1:]] == ["gamma"]


def test_history_chart_svg_and_png(recorded, capsys, tmp_path):
    root, path = recorded
    assert main(["history", str(path), "-e", "pairwise_precision", "--chart", str(tmp_path / "pp.svg")]) == 0
    svg = (tmp_path / "pp.svg").read_text(encoding="utf-8")
    assert svg.startswith("<svg") and "alpha" in svg and "gamma" in svg and "failed" in svg
    assert main(["history", str(path), "-e", "pairwise_precision", "--chart", str(tmp_path / "pp.png")]) == 0
    assert (tmp_path / "pp.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    capsys.readouterr()


@pytest.mark.parametrize("args, message", [
    (["-e", "pairwise_precison"], "--expectation 'pairwise_precison': no such expectation in the history of "
                                  "checkpoint 'toy'; did you mean 'pairwise_precision'?"),
    (["-e", "hill_number", "--release", "delta"], "--release delta: not recorded for this expectation"),
    (["-e", "pairwise_precision", "--chart", "out.pdf"], "--chart out.pdf: give a file ending in .svg or .png"),
    (["-e", "pairwise_precision", "--chart", "no/such/folder/x.svg"], "does not exist; create it first"),
])
def test_history_bad_arguments_exit_2(recorded, capsys, args, message):
    root, path = recorded
    capsys.readouterr()
    assert main(["history", str(path), *args]) == 2
    assert message in capsys.readouterr().err


def test_history_before_any_run_says_what_to_do(tmp_path, capsys):
    path = make_toy(tmp_path)
    assert main(["history", str(path), "-e", "pairwise_precision"]) == 2
    err = capsys.readouterr().err
    assert "no history store at" in err and "run 'er-expectations run <checkpoint>' first" in err
    assert not (tmp_path / "project").exists()


# -- GX's own checkpoint run records too ------------------------------------------------------


def test_gx_running_the_stored_checkpoint_records_the_history(tmp_path, capsys, monkeypatch):
    import great_expectations as gx

    shared = tmp_path / "shared.sqlite"
    monkeypatch.setenv("ER_HISTORY_URL", f"sqlite:///{shared}")
    path = make_toy(tmp_path, checkpoint=with_history("history:\n  url: ${ER_HISTORY_URL}\n"))
    assert main(["run", str(path), "--no-progress"]) == 1
    capsys.readouterr()
    stored = (tmp_path / "project" / "gx" / "checkpoints" / "toy.json").read_text(encoding="utf-8")
    assert '"type": "er_history"' in stored and '"url": "${ER_HISTORY_URL}"' in stored
    context = gx.get_context(mode="file", project_root_dir=str(tmp_path / "project"))
    context.checkpoints.get("toy").run()
    with HistoryStore.open(f"sqlite:///{shared}", create=False) as store:
        runs = store.runs("toy", all_versions=True)
        assert sorted(zip(runs["release"], runs["version"], strict=True)) == [
            ("alpha", 1), ("alpha", 2), ("beta", 1), ("beta", 2), ("gamma", 1), ("gamma", 2)]
        latest = store.runs("toy")
        assert list(zip(latest["release"], latest["position"], latest["status"], strict=True)) == [
            ("alpha", 0, "passed"), ("beta", 1, "failed"), ("gamma", 2, "passed")]
        both = store.series(checkpoint="toy", metric="pairwise_precision", all_versions=True)
        assert both["value"].tolist() == pytest.approx([1.0, 1.0, 3 / 7, 3 / 7, 1.0, 1.0])


def test_the_gx_action_keeps_results_when_the_store_is_unreachable(tmp_path, capsys, monkeypatch, caplog):
    import great_expectations as gx

    monkeypatch.setenv("ER_HISTORY_URL", f"sqlite:///{tmp_path / 'ok.sqlite'}")
    path = make_toy(tmp_path, checkpoint=with_history("history:\n  url: ${ER_HISTORY_URL}\n"))
    assert main(["run", str(path), "--release", "alpha", "--no-progress"]) == 0
    capsys.readouterr()
    monkeypatch.setenv("ER_HISTORY_URL", UNREACHABLE)
    before = len(result_files(tmp_path))
    context = gx.get_context(mode="file", project_root_dir=str(tmp_path / "project"))
    result = context.checkpoints.get("toy").run()
    assert result.success and len(result_files(tmp_path)) == before + 1
    assert "cannot reach the history database postgresql+psycopg://erx:***@127.0.0.1:9" in caplog.text
    assert PASSWORD not in caplog.text


FILES_LAYOUT = """\
checkpoint: toy
project_dir: ../project
data:
  records: {path: ../data/records.parquet, id_column: rid}
  predictions:
    id_column: rid
    prediction_column: prediction
    files:
FILES
  benchmark: {path: ../data/benchmark.parquet, id_column: rid, reference_column: truth}
  name: {columns: [first, last]}
suites: [toy_checks]
suite_paths: [../suites]
"""


def test_hostile_release_labels_are_recorded_verbatim(tmp_path, capsys):
    import pandas as pd

    labels = ["<b>\"O'Brien\"</b> & co", "2020-09-29'; DROP TABLE er_history_runs; --"]
    path = make_toy(tmp_path)
    predictions = pd.read_parquet(tmp_path / "data" / "predictions.parquet")
    listed = []
    for i, (label, column) in enumerate(zip(labels, ["pred_alpha", "pred_beta"], strict=True)):
        file = tmp_path / "data" / f"release{i}.parquet"
        predictions[["rid", column]].rename(columns={column: "prediction"}).to_parquet(file, index=False)
        listed.append(f"      {json.dumps(label)}: ../data/release{i}.parquet")
    path.write_text(FILES_LAYOUT.replace("FILES", "\n".join(listed)), encoding="utf-8")
    assert main(["run", str(path), "--no-progress"]) == 1
    capsys.readouterr()
    assert main(["history", str(path), "-e", "pairwise_precision", "--format", "json"]) == 0
    series = json.loads(capsys.readouterr().out)["series"]
    assert [s["release"] for s in series] == labels
    assert [s["value"] for s in series] == pytest.approx([1.0, 3 / 7])


@pytest.mark.parametrize("section, message", [
    ("history:\n  ulr: x.sqlite\n", "toy.yml:17:3: unknown key 'ulr' in history; did you mean 'url'?"),
    ("history:\n  enabled: 3\n", "toy.yml:17:12: history.enabled: expected true or false, got the number 3"),
    ("history: on\n", "toy.yml:16:10: history: expected a mapping"),
    ("histroy:\n  url: a\n", "toy.yml:16:1: unknown key 'histroy' in the checkpoint file; did you mean 'history'?"),
    ("history:\n  url: ${bad name}\n", "toy.yml:17:8: history.url: '${bad name}' is not an environment variable"),
    ("history:\n  url: 'postgresql://u:${PW@h/db'\n", "toy.yml:17:8: history.url: unclosed '${' in the URL"),
])
def test_history_section_errors_are_located(tmp_path, capsys, section, message):
    path = make_toy(tmp_path, checkpoint=CHECKPOINT + section)
    assert main(["validate", str(path)]) == 2
    assert message in capsys.readouterr().err


def test_a_bug_turning_results_into_rows_keeps_the_data_docs(tmp_path, capsys, monkeypatch):
    import er_expectations.gx.history_action as record

    def broken(suite, evr):
        raise KeyError("observed_value")

    monkeypatch.setattr(record, "result_record", broken)
    path = make_toy(tmp_path)
    assert main(["run", str(path), "--release", "alpha", "--no-progress"]) == 6
    captured = capsys.readouterr()
    assert "the results of release 'alpha' could not be turned into history rows (KeyError" in captured.err
    assert data_docs_index(captured.out).is_file() and len(result_files(tmp_path)) == 1
