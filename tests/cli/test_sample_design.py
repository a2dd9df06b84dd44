"""The design travels with the sample (issue 28 item 1; SPEC 1, 12.3).

``sample`` writes WORKSHEET.design.json; the labels keep it (beside a labels file filled in
from the worksheet, and through the workbench: ``label init --sample`` → ``label export``);
``benchmark`` recomputes the weights from it, never from a default, and refuses options that
contradict it. Every weight is checked against q_r of ``expected_error_probabilities`` summed
over each true cluster by hand (w_c = 1/π_c), to 1e-12, and against the weights of the wrong
floor (so the tests fail if the record is ignored).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from er_expectations.analysis.expected_errors import (
    DEFAULT_FLOOR,
    LEGACY_FLOOR,
    expected_error_probabilities,
)
from er_expectations.analysis.sample_design import DEFF_WARNING, design_effect, design_path
from er_expectations.analysis.sampling import write_frame
from er_expectations.cli.main import main
from er_expectations.core.io import read_table
from er_expectations.labelling.project import open_project
from er_expectations.labelling.store import Decision


def _population(folder: Path) -> None:
    """About 430 records of 120 entities; the prediction lumps every tenth entity into the next and
    splits every seventh; the pairs score every pair of a predicted cluster and a few missed matches."""
    rng = np.random.default_rng(11)
    sizes = rng.integers(1, 7, size=120)
    truth = np.repeat(np.arange(len(sizes)), sizes)
    ids = [f"m{i:04d}" for i in range(len(truth))]
    position = np.concatenate([np.arange(s) for s in sizes])
    lumped = np.where(truth % 10 == 0, truth + 1, truth)
    split = (truth % 7 == 3) & (position >= 1)
    prediction = [f"p{p}" + ("b" if s else "") for p, s in zip(lumped, split, strict=True)]
    pd.DataFrame({"mention_id": ids, "pred": prediction}).to_parquet(folder / "records.parquet", index=False)
    pd.DataFrame({"mention_id": ids, "truth": [f"E{t}" for t in truth]}).to_parquet(folder / "truth.parquet",
                                                                                   index=False)
    frame = pd.DataFrame({"id": ids, "pred": prediction, "truth": truth})
    pairs = []
    for _, members in frame.groupby("pred"):
        rows = members.to_numpy()
        for i in range(len(rows)):
            for j in range(i + 1, len(rows)):
                pairs.append((rows[i][0], rows[j][0], 0.95 if rows[i][2] == rows[j][2] else 0.55))
    for _, members in frame.groupby("truth"):
        rows = members.to_numpy()
        pairs += [(rows[0][0], row[0], 0.45) for row in rows[1:] if row[1] != rows[0][1]]
    pd.DataFrame(pairs, columns=["record_a", "record_b", "p"]).to_parquet(folder / "pairs.parquet", index=False)


def _answers(sheet: pd.DataFrame, truth_file: Path) -> tuple[list[list[str]], list[list[str]]]:
    truth = pd.read_parquet(truth_file).set_index("mention_id")["truth"]
    members_of = {key: set(index) for key, index in truth.groupby(truth).groups.items()}
    removed, added = [], []
    for record, members in zip(sheet["record_id"], sheet["members"], strict=True):
        true = members_of[truth[record]]
        removed.append(sorted(set(members) - true))
        added.append(sorted(true - set(members)))
    return removed, added


def _fill(worksheet: Path, labels: Path, truth_file: Path) -> None:
    """The worksheet answered from the truth, written as a labels file (Parquet or CSV by suffix)."""
    sheet = read_table(worksheet)
    if sheet["members"].map(lambda v: isinstance(v, str)).all():  # a CSV worksheet
        sheet["members"] = sheet["members"].map(lambda v: v.split(";"))
    sheet["removed"], sheet["added"] = _answers(sheet, truth_file)
    sheet["labeller"] = "truth"
    write_frame(sheet, labels)


def _cli(*args: object) -> int:
    return main([str(a) for a in args])


COMMON = ["--on", "mention_id", "-p", "pred"]


def _expected_weights(folder: Path, floor: float) -> pd.Series:
    """w_c = 1/π_c of every true cluster, π_c = Σ q_r over its records (SPEC 1, 12.3), by hand."""
    records = pd.read_parquet(folder / "records.parquet")
    q = expected_error_probabilities(records, prediction="pred", record_id="mention_id",
                                     match_probabilities=pd.read_parquet(folder / "pairs.parquet"), floor=floor)
    truth = pd.read_parquet(folder / "truth.parquet").set_index("mention_id")["truth"]
    pi: dict[str, float] = {}
    for rid, qr in zip(q["mention_id"], q["inclusion"], strict=True):
        pi[truth[rid]] = pi.get(truth[rid], 0.0) + float(qr)
    return pd.Series({entity: 1.0 / p for entity, p in pi.items()})


def _check_weights(folder: Path, bench_file: Path, floor: float) -> None:
    bench = read_table(bench_file)
    bench = bench[bench["reference"].notna()]
    truth = pd.read_parquet(folder / "truth.parquet").set_index("mention_id")["truth"]
    entity = truth.reindex(bench["mention_id"]).to_numpy()
    got = pd.to_numeric(bench["weight"]).to_numpy()
    right = _expected_weights(folder, floor).reindex(entity).to_numpy()
    np.testing.assert_allclose(got, right, rtol=1e-12, atol=0)
    wrong = _expected_weights(folder, 0.1).reindex(entity).to_numpy()
    assert np.max(np.abs(wrong / right - 1)) > 0.05  # the default floor gives other weights: the test can fail


@pytest.fixture()
def world(tmp_path) -> Path:
    _population(tmp_path)
    return tmp_path


def _sample(world: Path, out: Path, floor: float | None = 0.3, n: int = 60) -> None:
    extra = [] if floor is None else ["--floor", floor]
    assert _cli("sample", world / "records.parquet", *COMMON, "-n", n, "--seed", 5, "--design", "expected_errors",
                "--match-probabilities", world / "pairs.parquet", *extra, "-o", out) == 0


def test_the_worksheet_records_its_design(world, capsys):
    _sample(world, world / "sheet.parquet")
    record = json.loads(design_path(world / "sheet.parquet").read_text())
    assert record["name"] == "expected_errors" and record["floor"] == 0.3 and record["seed"] == 5
    assert record["release"] == "pred" and record["population"] == len(pd.read_parquet(world / "records.parquet"))
    import hashlib

    assert record["match_probabilities_sha256"] == hashlib.sha256((world / "pairs.parquet").read_bytes()).hexdigest()
    assert record["draws"] == 60 and "sheet.parquet.design.json" in capsys.readouterr().out


def test_recorded_floor_is_used_without_any_design_option(world, capsys):
    _sample(world, world / "sheet.parquet")
    _fill(world / "sheet.parquet", world / "labels.parquet", world / "truth.parquet")
    design_path(world / "labels.parquet").write_bytes(design_path(world / "sheet.parquet").read_bytes())
    capsys.readouterr()
    assert _cli("benchmark", world / "labels.parquet", world / "records.parquet", *COMMON,
                "-o", world / "bench.parquet") == 0
    out = capsys.readouterr()
    assert "design is not recorded" not in out.err and "as recorded with the sample" in out.out
    _check_weights(world, world / "bench.parquet", 0.3)
    manifest = json.loads((world / "bench.parquet.manifest.json").read_text())
    assert manifest["design"]["name"] == "expected_errors" and manifest["design"]["floor"] == 0.3
    assert manifest["design"]["recorded"]["floor"] == 0.3
    bench = read_table(world / "bench.parquet")
    assert manifest["design"]["design_effect"] == pytest.approx(design_effect(bench, reference="reference").value)


def test_an_old_sample_without_a_record_keeps_todays_weights_with_a_warning(world, capsys):
    _sample(world, world / "sheet.parquet", floor=LEGACY_FLOOR)  # drawn as the versions before the record did
    _fill(world / "sheet.parquet", world / "labels.parquet", world / "truth.parquet")
    capsys.readouterr()
    assert not design_path(world / "labels.parquet").exists()  # as an old sample: no record beside the labels
    assert _cli("benchmark", world / "labels.parquet", world / "records.parquet", *COMMON, "--design",
                "expected_errors", "--match-probabilities", world / "pairs.parquet", "-o", world / "bench.parquet") == 0
    err = capsys.readouterr().err
    assert "design is not recorded" in err
    assert "floor 0.1 (the default of the versions that did not record it)" in err
    bench = read_table(world / "bench.parquet")
    bench = bench[bench["reference"].notna()]
    truth = pd.read_parquet(world / "truth.parquet").set_index("mention_id")["truth"]
    right = _expected_weights(world, 0.1).reindex(truth.reindex(bench["mention_id"]).to_numpy()).to_numpy()
    np.testing.assert_allclose(bench["weight"].to_numpy(), right, rtol=1e-12, atol=0)
    # without any option: today's default design, refused because the worksheet's inclusion column
    # says the sample was drawn by expected errors (hostile round 3, item 1)
    err = _refused(world, capsys)
    assert "design cluster_size (records drawn uniformly)" in err
    assert "labels.parquet, column 'inclusion': the sample was drawn by expected errors" in err
    assert "design cluster_size: the weights would be wrong" in err


@pytest.mark.parametrize("wrong", ["floor", "pairs"])
def test_an_unrecorded_sample_drawn_otherwise_is_refused_by_its_inclusion_column(world, capsys, wrong):
    """Hostile round 3, item 1: with no design file, a benchmark built with another floor or other pair
    probabilities than the sample's gave biased estimates with exit 0. The worksheet's inclusion
    column (q_r as drawn) is compared with the recomputed q_r: refused, naming the draw and the fix;
    the right options still build it (weights checked by hand)."""
    _sample(world, world / "sheet.parquet", floor=0.3)
    _fill(world / "sheet.parquet", world / "labels.parquet", world / "truth.parquet")
    assert not design_path(world / "labels.parquet").exists()
    pairs = world / "pairs.parquet"
    if wrong == "pairs":
        other = pd.read_parquet(pairs)
        other["p"] = np.where(other["p"] > 0.9, 0.99, other["p"])
        other.to_parquet(world / "pairs2.parquet", index=False)
        options = ["--floor", 0.3, "--match-probabilities", world / "pairs2.parquet"]
    else:
        options = ["--floor", 0.9, "--match-probabilities", pairs]
    err = _refused(world, capsys, "--design", "expected_errors", *options)
    assert "labels.parquet, column 'inclusion', draw " in err and "the sample drew it with inclusion probability" in err
    assert "give the --design, --match-probabilities and --floor the sample was drawn with" in err
    assert _cli("benchmark", world / "labels.parquet", world / "records.parquet", *COMMON, "--design",
                "expected_errors", "--floor", 0.3, "--match-probabilities", pairs, "-o", world / "bench.parquet") == 0
    _check_weights(world, world / "bench.parquet", 0.3)


def test_a_new_sample_records_the_default_floor_and_benchmark_uses_it(world, capsys):
    """Drawn without --floor: the design file records today's default (not the legacy one), and
    the weights follow the record, not the floor an unrecorded sample would get."""
    assert DEFAULT_FLOOR != LEGACY_FLOOR
    _sample(world, world / "sheet.parquet", floor=None)
    assert json.loads(design_path(world / "sheet.parquet").read_text())["floor"] == DEFAULT_FLOOR
    _fill(world / "sheet.parquet", world / "labels.parquet", world / "truth.parquet")
    design_path(world / "labels.parquet").write_bytes(design_path(world / "sheet.parquet").read_bytes())
    capsys.readouterr()
    assert _cli("benchmark", world / "labels.parquet", world / "records.parquet", *COMMON,
                "-o", world / "bench.parquet") == 0
    assert "design is not recorded" not in capsys.readouterr().err
    _check_weights(world, world / "bench.parquet", DEFAULT_FLOOR)


def _refused(world: Path, capsys, *extra: object) -> str:
    out = world / "refused.parquet"
    capsys.readouterr()
    assert _cli("benchmark", world / "labels.parquet", world / "records.parquet", *COMMON, *extra, "-o", out) == 2
    assert not out.exists() and not Path(str(out) + ".manifest.json").exists()
    return capsys.readouterr().err


def test_options_contradicting_the_record_are_refused(world, capsys):
    _sample(world, world / "labels.parquet")  # labels filled in place: the design sits beside them
    _fill(world / "labels.parquet", world / "labels.parquet", world / "truth.parquet")
    err = _refused(world, capsys, "--floor", 0.1)
    assert "--floor 0.1" in err and "drawn with 0.3" in err and "give --floor 0.3" in err
    err = _refused(world, capsys, "--design", "cluster_size")
    assert "--design cluster_size" in err and "expected_errors" in err and "leave --design out" in err
    assert _cli("benchmark", world / "labels.parquet", world / "records.parquet", *COMMON, "--floor", 0.3,
                "--design", "expected_errors", "-o", world / "agreeing.parquet") == 0
    _check_weights(world, world / "agreeing.parquet", 0.3)


def test_a_changed_match_probability_file_is_refused(world, capsys):
    _sample(world, world / "labels.parquet")
    _fill(world / "labels.parquet", world / "labels.parquet", world / "truth.parquet")
    pairs = pd.read_parquet(world / "pairs.parquet")
    pairs.loc[0, "p"] = 0.5
    pairs.to_parquet(world / "pairs2.parquet", index=False)
    err = _refused(world, capsys, "--match-probabilities", world / "pairs2.parquet")
    assert "pairs2.parquet" in err and "SHA-256" in err and "the weights would be wrong" in err
    pairs.to_parquet(world / "pairs.parquet", index=False)  # the recorded file itself changed
    err = _refused(world, capsys)
    assert "pairs.parquet: not the file the sample was drawn with" in err


def test_a_broken_design_file_is_an_error_naming_it(world, capsys):
    _sample(world, world / "labels.parquet")
    _fill(world / "labels.parquet", world / "labels.parquet", world / "truth.parquet")
    where = design_path(world / "labels.parquet")
    record = json.loads(where.read_text())
    where.write_text("{not json")
    err = _refused(world, capsys)
    assert "labels.parquet.design.json: the sample's design cannot be read" in err
    where.write_text(json.dumps({**record, "floor": 0}))
    assert "needs its floor in (0, 1], found 0" in _refused(world, capsys)
    err = _refused(world, capsys, "--sample-design", world / "missing.design.json")
    assert "missing.design.json: no such file" in err


def test_a_csv_worksheet_keeps_its_design(world, capsys):
    _sample(world, world / "sheet.csv")
    assert design_path(world / "sheet.csv").is_file()
    _fill(world / "sheet.csv", world / "labels.csv", world / "truth.parquet")  # saved under another name
    capsys.readouterr()
    assert _cli("benchmark", world / "labels.csv", world / "records.parquet", *COMMON, "--sample-design",
                design_path(world / "sheet.csv"), "-o", world / "bench.csv") == 0
    assert "warning: " not in capsys.readouterr().err.replace("warning: design effect", "")
    _check_weights(world, world / "bench.csv", 0.3)


def test_the_workbench_round_trip_keeps_the_design(world, capsys):
    _sample(world, world / "sheet.parquet")
    project = world / "project"
    assert _cli("label", "init", project, "--records", world / "records.parquet", "--record-id", "mention_id",
                "-p", "pred", "--sample", world / "sheet.parquet", "--double-share", 0) == 0
    assert "design:" in (project / "workbench.yml").read_text()
    opened = open_project(project)
    try:
        assert opened.config.sample_design().floor == 0.3
        sheet = pd.read_parquet(world / "sheet.parquet")
        removed, added = _answers(sheet, world / "truth.parquet")
        for draw, rem, add in zip(sheet["draw"], removed, added, strict=True):
            opened.store.save(int(draw), "ann", Decision(removed=tuple(rem), added=tuple(add)), expected_version=0)
    finally:
        opened.close()
    capsys.readouterr()
    assert _cli("label", "export", project, "-o", world / "labels.parquet") == 0
    assert "design" in capsys.readouterr().out
    assert json.loads(design_path(world / "labels.parquet").read_text()) == \
        json.loads(design_path(world / "sheet.parquet").read_text())
    assert _cli("benchmark", world / "labels.parquet", world / "records.parquet", *COMMON,
                "-o", world / "bench.parquet") == 0
    assert "design is not recorded" not in capsys.readouterr().err
    _check_weights(world, world / "bench.parquet", 0.3)


def test_a_project_of_an_old_worksheet_exports_no_design_and_removes_a_stale_one(world, capsys):
    _sample(world, world / "sheet.parquet")
    design_path(world / "sheet.parquet").unlink()  # a worksheet of an older version
    project = world / "project"
    assert _cli("label", "init", project, "--records", world / "records.parquet", "--record-id", "mention_id",
                "-p", "pred", "--sample", world / "sheet.parquet", "--double-share", 0) == 0
    opened = open_project(project)
    try:
        opened.store.save(1, "ann", Decision(), expected_version=0)
    finally:
        opened.close()
    design_path(world / "labels.parquet").write_text("{}")  # left by an earlier export of another sample
    capsys.readouterr()
    assert _cli("label", "export", project, "-o", world / "labels.parquet") == 0
    assert not design_path(world / "labels.parquet").exists()
    assert "does not record how its draws were made" in capsys.readouterr().err


def test_the_design_effect_is_kish_over_the_draws(world, capsys):
    """deff = k Σ v² / (Σ v)² over the draws, v = |c|·w_c, by a loop over the labels' draws."""
    _sample(world, world / "labels.parquet", floor=0.05, n=120)
    _fill(world / "labels.parquet", world / "labels.parquet", world / "truth.parquet")
    capsys.readouterr()
    assert _cli("benchmark", world / "labels.parquet", world / "records.parquet", *COMMON,
                "-o", world / "bench.parquet") == 0
    out = capsys.readouterr()
    truth = pd.read_parquet(world / "truth.parquet").set_index("mention_id")["truth"]
    sizes = truth.value_counts()
    weights = _expected_weights(world, 0.05)
    v = [sizes[truth[r]] * weights[truth[r]] for r in pd.read_parquet(world / "labels.parquet")["record_id"]]
    expected = len(v) * sum(x * x for x in v) / sum(v) ** 2
    got = design_effect(read_table(world / "bench.parquet"), reference="reference")
    assert got.value == pytest.approx(expected, rel=1e-12) and got.draws == 120
    assert f"design effect of the weights {expected:.2f}" in out.out
    assert (expected > DEFF_WARNING) == ("intervals at 120 draws behave like" in out.err)
    assert expected > DEFF_WARNING, "this population at floor 0.05 should warn"


class _Killed(BaseException):
    """The process dies here (nothing catches it, as with SIGKILL nothing runs after)."""


@pytest.mark.parametrize("dies_in", ["write_frame", "write_design"])
def test_a_killed_sample_never_leaves_a_worksheet_without_its_design(world, monkeypatch, dies_in):
    """Issue 27 leftover 4: the worksheet was written before its design, so a run killed between
    the two left a worksheet whose weights were then recomputed from a default design. Over an
    older sample (--force) neither may the old worksheet stay beside the new design."""
    import er_expectations.analysis.sample_design as sample_design
    import er_expectations.analysis.sampling as sampling

    sheet = world / "sheet.parquet"
    _sample(world, sheet, floor=0.3)
    old_design = design_path(sheet).read_text()
    for force in (False, True):
        target = sheet if force else world / "fresh.parquet"
        module = sampling if dies_in == "write_frame" else sample_design

        def die(*args, **kwargs):
            raise _Killed

        with monkeypatch.context() as m:
            m.setattr(module, dies_in, die)
            with pytest.raises(_Killed):
                _cli("sample", world / "records.parquet", *COMMON, "-n", 40, "--seed", 9, "--design",
                     "expected_errors", "--match-probabilities", world / "pairs.parquet", "--floor", 0.2,
                     "-o", target, *(["--force"] if force else []))
        if target.exists():  # a worksheet left behind has the design it was drawn with beside it
            assert design_path(target).is_file()
            record = json.loads(design_path(target).read_text())
            drawn = read_table(target)
            if record["seed"] == 9:
                assert len(drawn) == 40
            else:
                assert design_path(target).read_text() == old_design and len(drawn) == 60
