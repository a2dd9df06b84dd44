"""Labelling QC in Great Expectations (SPEC 9): the labelling batch, the seven expectations,
the YAML suite and checkpoint, the CLI and the Data Docs.

The answers are those of :func:`er_expectations.analysis.labelqc.qc_labels` on the whole release (the
one implementation of the rules, tested in tests/analysis/test_labels.py): the batch must not
change them, and each expectation must report exactly its rule's violations. The demo labels
and the injected errors are those of tests/support/labeltools.py.
"""

from __future__ import annotations

import re
import textwrap
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import labeltools
from support.gxtools import validate_frame
from support.labeltools import RELEASE, injected, qc
from support.paths import REPO

import er_expectations.gx  # noqa: F401  (registers the expectations)
from er_expectations import InputError
from er_expectations.analysis.labelling_batch import labelling_batch, split_labelling_batch
from er_expectations.analysis.labelqc import qc_labels
from er_expectations.cli.main import main
from er_expectations.config import ConfigError, load_suite
from er_expectations.gx.expectations.labels import (
    LABEL_EXPECTATIONS,
    ExpectLabelsAddedRecordsToResembleSampledRecord,
    ExpectLabelsRemovedWithinPredictedCluster,
)
from er_expectations.run.runner import prepare_run

DATA = REPO / "er_expectations" / "data" / "patentsview"
COLUMNS = {"record_id_column": "mention_id", "prediction_column": RELEASE}
#: The demo labels and the records of their release (the fixture of tests/support/labeltools.py).
demo = labeltools.demo
#: Rule 5's pass share on the clean demo labels is 46 / 50: with mostly = 0.92 the clean labels
#: pass and one more unlike added record fails it.
MOSTLY = 0.92


def batch_of(lab: pd.DataFrame, rec: pd.DataFrame) -> pd.DataFrame:
    return labelling_batch(lab, rec, prediction=RELEASE, record_id="mention_id", block="block", name="name")


def expectations(mostly: float = MOSTLY) -> list:
    out = []
    for rule, cls in sorted(LABEL_EXPECTATIONS.items()):
        extra = {"block_column": "block", "name_column": "name", "mostly": mostly} if rule == 5 else {}
        out.append(cls(**COLUMNS, **extra))
    return out


def by_rule(result) -> dict[int, object]:
    found = {}
    for r in result.results:
        assert not (r.exception_info or {}).get("raised_exception"), r.exception_info
        found[r.result["details"]["rule"]] = r
    return found


# -- the batch ---------------------------------------------------------------------------------


def test_the_expectations_are_registered_under_their_public_names():
    names = {cls.expectation_type for cls in LABEL_EXPECTATIONS.values()}
    assert names == {
        "expect_labels_removed_within_predicted_cluster", "expect_labels_sampled_record_not_removed",
        "expect_labels_added_outside_predicted_cluster", "expect_labels_record_ids_to_exist",
        "expect_labels_added_records_to_resemble_sampled_record", "expect_labels_consistent_across_draws",
        "expect_labels_true_cluster_to_match",
    }
    assert names <= set(er_expectations.gx.expectation_names())


def test_the_batch_holds_the_labels_and_only_the_records_the_rules_read(demo):
    lab, rec = demo
    batch = batch_of(lab, rec)
    label_rows = batch[batch["draw"].notna()]
    record_rows = batch[batch["draw"].isna()]
    assert len(label_rows) == len(lab) == 401
    assert label_rows["mention_id"].tolist() == lab["record_id"].tolist()
    assert label_rows[RELEASE].isna().all() and record_rows["removed"].isna().all()
    # the records: the ids the labels name and every member of the drawn records' clusters, once each
    release = rec.dropna(subset=[RELEASE])
    drawn_clusters = set(release.loc[release["mention_id"].isin(lab["record_id"]), RELEASE])
    named = set(lab["record_id"]) | {i for cell in (*lab["removed"], *lab["added"]) for i in cell}
    expected = set(rec.loc[rec["mention_id"].isin(named), "mention_id"]) | set(
        release.loc[release[RELEASE].isin(drawn_clusters), "mention_id"])
    assert set(record_rows["mention_id"]) == expected
    assert record_rows["mention_id"].is_unique
    assert len(record_rows) < len(rec) / 5


@pytest.mark.parametrize("rule", [None, 1, 2, 3, 4, 5, 6, 7])
def test_the_batch_gives_the_answer_of_the_whole_release(demo, rule):
    lab, rec = demo
    if rule is not None:
        lab, _ = injected(lab, rec, rule)
    whole = qc(lab, rec)
    labels, records, columns = split_labelling_batch(batch_of(lab, rec), record_id="mention_id", prediction=RELEASE)
    part = qc_labels(labels, records, RELEASE, record_id="mention_id", block="block", name="name", columns=columns)
    pd.testing.assert_frame_equal(part.violations, whole.violations)
    assert part.checked == whole.checked and part.draws == whole.draws


def test_a_batch_of_labels_made_against_another_release_is_refused(demo):
    lab, rec = demo
    with pytest.raises(InputError, match=r"column 'predicted_cluster'.*another release"):
        labelling_batch(lab, rec, prediction="inventor_id_20220630", record_id="mention_id")


def test_a_labels_table_without_draws_is_refused():
    records = pd.DataFrame({"id": ["a", "b"], "p": ["P", "P"]})
    empty = pd.DataFrame({"draw": [], "record_id": [], "removed": [], "added": []})
    with pytest.raises(InputError, match="the table has no draws"):
        labelling_batch(empty, records, prediction="p", record_id="id")


# -- the expectations against check_labels -----------------------------------------------------


def test_clean_demo_labels_pass_every_rule_with_the_counts_of_check_labels(demo, context):
    lab, rec = demo
    result = validate_frame(context, batch_of(lab, rec), expectations(), "labels_clean")
    want = qc(lab, rec)
    found = by_rule(result)
    assert sorted(found) == [1, 2, 3, 4, 5, 6, 7]
    for rule, r in found.items():
        assert r.success, rule
        details = r.result["details"]
        assert r.result["observed_value"] == details["failing_draws"] == want.failed(rule)
        assert details["checked_draws"] == want.checked[rule] and details["draws"] == 401
    # rule 5 passes softly: its few unlike additions are listed all the same
    assert found[5].result["observed_value"] == 4 and found[5].result["details"]["checked_draws"] == 50
    assert [row["draw"] for row in found[5].result["details"]["failing"]] == want.failing(5)["draw"].tolist()


@pytest.mark.parametrize("rule", [1, 2, 3, 4, 5, 6, 7])
def test_each_expectation_fails_on_its_own_injected_error_and_only_it(demo, context, rule):
    lab, rec = demo
    bad, draws = injected(lab, rec, rule)
    result = validate_frame(context, batch_of(bad, rec), expectations(), f"labels_bad_{rule}")
    want = qc(bad, rec)
    found = by_rule(result)
    assert {n for n, r in found.items() if not r.success} == {rule}
    r = found[rule]
    assert r.result["observed_value"] == want.failed(rule)
    listed = r.result["details"]["failing"]
    expected = want.failing(rule)
    assert [row["draw"] for row in listed] == expected["draw"].tolist()
    assert [row["records"] for row in listed] == [list(ids) for ids in expected["records"]]
    assert [row["message"] for row in listed] == expected["message"].tolist()
    assert draws <= {row["draw"] for row in listed}
    assert all(row["rule"] == rule for row in listed)


def test_the_failing_draws_listed_follow_result_format(demo, context):
    lab, rec = demo
    bad = lab.copy()
    bad["added"] = [[*cell, "US0000000-9"] for cell in bad["added"]]  # 401 rule-4 violations
    exp = [ExpectLabelsRemovedWithinPredictedCluster(**COLUMNS), LABEL_EXPECTATIONS[4](**COLUMNS)]
    result = validate_frame(context, batch_of(bad, rec), exp, "labels_many")
    details = result.results[1].result["details"]
    assert not result.results[1].success and details["failing_draws"] == 401
    assert len(details["failing"]) == 20  # GX's partial_unexpected_count by default (BASIC)


def test_rule_5_is_a_warning_by_default_and_keeps_a_severity_given(context):
    default = ExpectLabelsAddedRecordsToResembleSampledRecord(**COLUMNS, block_column="b")
    assert default.severity.value == "warning"
    assert default.configuration.severity.value == "warning"  # GX drops field defaults: kept explicitly
    critical = ExpectLabelsAddedRecordsToResembleSampledRecord(**COLUMNS, block_column="b", severity="critical")
    assert critical.configuration.severity.value == "critical"
    assert ExpectLabelsRemovedWithinPredictedCluster(**COLUMNS).configuration.severity.value == "critical"


def test_rule_5_needs_a_block_or_a_name_column():
    from great_expectations.compatibility import pydantic

    with pytest.raises(pydantic.ValidationError, match="needs block_column, name_column or both"):
        ExpectLabelsAddedRecordsToResembleSampledRecord(**COLUMNS)


# -- YAML suite and checkpoint -----------------------------------------------------------------


def test_the_shipped_suite_and_checkpoint_validate(capsys):
    assert main(["validate", str(REPO / "suites" / "labelling_qc.yml"),
                 str(REPO / "checkpoints" / "labelling_qc.yml")]) == 0
    out = capsys.readouterr().out
    assert "suite 'labelling_qc', 7 expectations" in out and "checkpoint 'labelling_qc'" in out
    suite = load_suite(REPO / "suites" / "labelling_qc.yml")
    severities = {cfg.name: cfg.severity for cfg in suite.expectations}
    assert severities.pop("expect_labels_added_records_to_resemble_sampled_record") == "warning"
    assert set(severities.values()) == {"critical"}


def _checkpoint(tmp_path: Path, labels: Path, **changes: str) -> Path:
    """A copy of the demo labelling checkpoint in ``tmp_path`` reading ``labels``."""
    text = (REPO / "checkpoints" / "labelling_qc.yml").read_text(encoding="utf-8")
    text = text.replace("../er_expectations/data/patentsview/labels.parquet", str(labels))
    text = text.replace("../er_expectations/", f"{REPO}/er_expectations/").replace("../suites", f"{REPO}/suites")
    text = text.replace("project_dir: ../build/labelling_qc", f"project_dir: {tmp_path / 'project'}")
    for old, new in changes.items():
        assert old in text, old
        text = text.replace(old, new)
    path = tmp_path / "labelling_qc.yml"
    path.write_text(text, encoding="utf-8")
    return path


def _issues(path: Path) -> list[tuple[int | None, int | None, str, str | None]]:
    with pytest.raises(ConfigError) as caught:
        prepare_run(path)
    return [(i.line, i.column, i.message, i.hint) for i in caught.value.issues]


def _line_of(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if text in line)


def test_checkpoint_errors_point_at_the_line_and_column(tmp_path):
    path = _checkpoint(tmp_path, DATA / "labels.parquet", **{
        'release: "2021-12-30"': 'release: "2021-12-31"', "draw_column: draw": "draw_column: drw",
        "separator: \";\" ": "seperator: \";\" "})
    found = _issues(path)
    assert (_line_of(path, "seperator:"), 5, "unknown key 'seperator' in data.labels",
            "did you mean 'separator'?") in found
    # the file loads only without the misspelt key: then the references are checked
    path = _checkpoint(tmp_path, DATA / "labels.parquet", **{
        'release: "2021-12-30"': 'release: "2021-12-31"', "draw_column: draw": "draw_column: drw"})
    found = _issues(path)
    drw = [i for i in found if "drw" in i[2]]
    assert drw and drw[0][:2] == (_line_of(path, "draw_column: drw"), 18)
    assert "did you mean 'draw'?" in drw[0][3]
    path = _checkpoint(tmp_path, DATA / "labels.parquet", **{'release: "2021-12-30"': 'release: "2021-12-31"'})
    (line, column, message, hint), = _issues(path)
    assert (line, column) == (_line_of(path, "release: "), 14)
    assert "'2021-12-31' is not a release of the checkpoint" in message and "2021-12-30" in message
    assert hint.startswith("releases: 2017-08-08")


def test_a_releases_key_in_a_labelling_checkpoint_is_an_error(tmp_path):
    path = _checkpoint(tmp_path, DATA / "labels.parquet", **{"suites: [labelling_qc]":
                                                                "releases: [inventor_id_20211230]\nsuites: [labelling_qc]"})
    (line, _, message, hint), = _issues(path)
    assert line == _line_of(path, "releases:") and "data.labels.release" in message


def test_a_suite_column_missing_from_the_labelling_batch_points_at_the_suite_line(tmp_path):
    suite = (REPO / "suites" / "labelling_qc.yml").read_text(encoding="utf-8").replace(
        "block_column: block", "block_column: blok")
    folder = tmp_path / "suites"
    folder.mkdir()
    (folder / "labelling_qc.yml").write_text(suite, encoding="utf-8")
    path = _checkpoint(tmp_path, DATA / "labels.parquet")
    path.write_text(path.read_text(encoding="utf-8").replace(f"{REPO}/suites", str(folder)), encoding="utf-8")
    (line, column, message, hint), = _issues(path)
    assert (line, column) == (_line_of(folder / "labelling_qc.yml", "blok"), 19)
    assert "block_column 'blok' is not a column of the release batches" in message
    assert "data.labels.block_column" in hint


def test_release_and_labelling_suites_are_not_mixed_up(tmp_path):
    path = _checkpoint(tmp_path, DATA / "labels.parquet", **{
        "suites: [labelling_qc]": "suites: [labelling_qc, patentsview_inventor_disambiguation]"})
    found = _issues(path)
    wrong = [i for i in found if "checks a release, but checkpoint 'labelling_qc' validates the labels" in i[2]]
    suite = REPO / "suites" / "patentsview.yml"
    from er_expectations.config import load_suite

    assert len(wrong) == len(load_suite(suite).expectations)  # every expectation of the release suite, at its line
    assert wrong[0][0] == _line_of(suite, "expect_estimated_pairwise_precision_to_be_between")
    release = (REPO / "checkpoints" / "patentsview.yml").read_text(encoding="utf-8")
    release = release.replace("../er_expectations/", f"{REPO}/er_expectations/").replace(
        "../suites", f"{REPO}/suites").replace("suites: [patentsview_inventor_disambiguation]",
                                               "suites: [labelling_qc]")
    (tmp_path / "release.yml").write_text(release, encoding="utf-8")
    found = _issues(tmp_path / "release.yml")
    wrong = [i for i in found if "checks a labels table, but checkpoint 'patentsview' has no data.labels" in i[2]]
    assert len(wrong) == 7 and "checkpoints/labelling_qc.yml" in wrong[0][3]


def test_suite_parameter_errors_point_at_the_line(tmp_path):
    path = tmp_path / "s.yml"
    path.write_text(textwrap.dedent("""
        suite: s
        defaults: {record_id_column: id, prediction_column: p}
        expectations:
          - expectation: expect_labels_added_records_to_resemble_sampled_record
            mostly: 1.5
            block_column: b
          - expectation: expect_labels_added_records_to_resemble_sampled_record
            scorer: levenstein
            name_column: n
          - expectation: expect_labels_added_records_to_resemble_sampled_record
            mostly: 0.5
    """).lstrip("\n"), encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_suite(path)
    found = [(i.line, i.column, i.message) for i in caught.value.issues]
    assert found[0] == (5, 13, "mostly: must be <= 1, got 1.5")
    assert found[1][:2] == (8, 13) and "levenstein" in found[1][2]
    assert found[2][0] == 10 and "needs block_column, name_column or both" in found[2][2]


# -- the command line and Data Docs ---------------------------------------------------------------


def _page(out: str) -> str:
    index = re.search(r"^Data Docs: (.+)$", out, re.M)
    assert index, out
    pages = list((Path(index.group(1)).parent / "validations").rglob("*.html"))
    assert len(pages) == 1, pages
    return pages[0].read_text(encoding="utf-8")


def test_run_on_the_clean_demo_labels_exits_0(tmp_path, capsys):
    path = _checkpoint(tmp_path, DATA / "labels.parquet")
    assert main(["run", str(path), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^labels\s+7/7\s+ok", out, re.M), out
    # a labelling run counts labels files, not releases
    assert ": 1 labels file(s), suite(s) labelling_qc" in out and re.search(r"^labels file\s+passed", out, re.M)
    assert "All 1 labels file(s) passed every critical expectation." in out and "release(s) passed" not in out
    page = _page(out)
    # the soft rule passes and still lists its four unlike additions
    assert "Draws that break rule 5" in page and "Draws that break rule 1" not in page
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page))
    assert "Every record removed in removed belongs to the drawn record&#39;s predicted cluster in " \
           "inventor_id (labelling rule 1)." in text
    assert " ? " not in text
    assert "Each true cluster id given in true_cluster (when the labels have it) names the set" in text


def test_run_where_only_the_soft_rule_fails_exits_0_with_a_warning(tmp_path, capsys):
    suite = (REPO / "suites" / "labelling_qc.yml").read_text(encoding="utf-8").replace(
        "mostly: 0.9", "mostly: 0.95")
    (tmp_path / "suites").mkdir()
    (tmp_path / "suites" / "labelling_qc.yml").write_text(suite, encoding="utf-8")
    path = _checkpoint(tmp_path, DATA / "labels.parquet")
    path.write_text(path.read_text(encoding="utf-8").replace(f"{REPO}/suites", str(tmp_path / "suites")),
                    encoding="utf-8")
    assert main(["run", str(path), "--no-progress"]) == 0
    out = capsys.readouterr().out
    # columns: passed, status, skipped, failed critical, errors, failed warning/info
    assert re.search(r"^labels\s+6/7\s+ok \(warnings\)\s+-\s+-\s+-\s+labels_added_records_to_resemble", out, re.M), out
    assert "1 warning/info expectation(s) failed" in out


def test_run_on_labels_with_errors_exits_1_and_lists_the_failing_draws(demo, tmp_path, capsys):
    lab, rec = demo
    bad, draws1 = injected(lab, rec, 1)
    bad, draws4 = injected(bad, rec, 4)
    labels = tmp_path / "labels.parquet"
    bad.to_parquet(labels, index=False)
    path = _checkpoint(tmp_path, labels)
    assert main(["run", str(path), "--no-progress"]) == 1
    out = capsys.readouterr().out
    assert "FAILED" in out and "labels_removed_within_predicted_cluster" in out
    page = _page(out)
    want = qc(bad, rec)
    for rule in (1, 4):
        assert f"Draws that break rule {rule}" in page
        for row in want.failing(rule).itertuples():
            assert f">{row.draw}<" in page.replace(" ", "")
    assert "What is wrong" in page


def test_run_with_labels_of_another_release_exits_2_and_writes_nothing(tmp_path, capsys):
    path = _checkpoint(tmp_path, DATA / "labels.parquet", **{'release: "2021-12-30"': 'release: "2022-06-30"'})
    assert main(["run", str(path), "--no-progress"]) == 2
    err = capsys.readouterr()
    assert "another release" in err.out + err.err
    assert not (tmp_path / "project").exists()


HOSTILE = ["<script>alert(1)</script>", '" onmouseover="alert(1)', "<img src=x onerror=alert(1)>",
           "</td></tr></table><script>alert(2)</script>", "javascript:alert(1)"]


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.bad: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "img", "iframe", "object", "embed"):
            self.bad.append(tag)
        for name, value in attrs:
            if name.startswith("on") or (value or "").strip().lower().startswith("javascript:"):
                self.bad.append(f"{tag} {name}={value}")


def _hostile_project(tmp_path: Path) -> Path:
    """A labelling checkpoint whose record ids, cluster ids and blocks are HTML payloads."""
    ids = ["a", "b", HOSTILE[2], "d", HOSTILE[1]]
    records = pd.DataFrame({"id": ids, "first": ["Ann", "Ann", "Bob", "Bob", "Cy"], "last": ["X", "X", "Y", "Y", "Z"],
                            "blk": HOSTILE[3:4] * 5})
    predictions = pd.DataFrame({"id": ids, "r1": ["P1", "P1", HOSTILE[0], HOSTILE[0], "P3"]})
    labels = pd.DataFrame({"draw": [1, 2], "record_id": ["a", "d"],
                           "removed": [f"{HOSTILE[1]}", ""],              # rule 1: another cluster
                           "added": [f"{HOSTILE[0]}|{HOSTILE[4]}", "a"]})  # rule 4: unknown ids
    for name, frame in (("records", records), ("predictions", predictions)):
        frame.to_parquet(tmp_path / f"{name}.parquet", index=False)
    labels.to_csv(tmp_path / "labels.csv", index=False)
    suite = (REPO / "suites" / "labelling_qc.yml").read_text(encoding="utf-8").replace(
        "mention_id", "id").replace("block_column: block", "block_column: blk")
    (tmp_path / "suites").mkdir()
    (tmp_path / "suites" / "labelling_qc.yml").write_text(suite, encoding="utf-8")
    (tmp_path / "cp.yml").write_text(textwrap.dedent("""
        checkpoint: hostile
        project_dir: project
        data:
          records: {path: records.parquet, id_column: id}
          predictions: {path: predictions.parquet, id_column: id, batch_column: inventor_id}
          name: {columns: [first, last], output_column: full_name}
          labels: {path: labels.csv, separator: "|", block_column: blk}
        suites: [labelling_qc]
        suite_paths: [suites]
        actions: [build_data_docs]
    """), encoding="utf-8")
    return tmp_path / "cp.yml"


def test_hostile_ids_and_messages_are_escaped_in_data_docs(tmp_path, capsys):
    assert main(["run", str(_hostile_project(tmp_path)), "--no-progress"]) == 1
    page = _page(capsys.readouterr().out)
    assert "Draws that break rule 1" in page and "Draws that break rule 4" in page
    parser = _Tags()
    parser.feed(page)
    assert parser.bad == []
    for text in HOSTILE[:4]:
        assert text not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page


def test_the_failing_draw_table_renders_hostile_text_as_text():
    """Every cell of the table (draw, rule, records, message) and the title go through GX's
    escaped string templates and the autoescaped page view (payloads of test_offline_docs)."""
    from great_expectations.core import ExpectationValidationResult
    from great_expectations.render import RenderedDocumentContent, RenderedSectionContent
    from support.chromium import page_problems, visible_text
    from support.datadocs import PAYLOADS, parse_fetches, remote_refs

    from er_expectations.gx.docs import data_docs

    cls = LABEL_EXPECTATIONS[4]
    exp = cls(**COLUMNS, notes=["safe note"])
    rows = [{"draw": payload, "rule": payload, "records": [payload, payload], "message": payload}
            for payload in PAYLOADS]
    result = ExpectationValidationResult(
        success=False, expectation_config=exp.configuration,
        result={"observed_value": len(rows), "details": {"rule": PAYLOADS[8], "rule_name": PAYLOADS[2],
                                                          "violations": len(rows),
                                                          "failing": rows, "observed_text": PAYLOADS[1]}})
    blocks = cls._diagnostic_unexpected_table_renderer(result=result)
    assert blocks and blocks[-1].to_json_dict()["content_block_type"] == "table"
    doc = RenderedDocumentContent(
        sections=[RenderedSectionContent(content_blocks=blocks, section_name="labels")],
        renderer_type="ValidationResultsPageRenderer", page_title="labels", expectation_suite_name="suite")
    page = data_docs.OfflinePageView().render(doc)
    assert remote_refs(page) == ([], 0)
    assert parse_fetches(page).handlers == [] and page_problems(page) == []
    shown = visible_text(page)
    for payload in PAYLOADS:
        assert payload in shown, payload
    assert f"Draws that break rule {PAYLOADS[8]} ({PAYLOADS[2]})" in shown
    assert f"{PAYLOADS[0]}; {PAYLOADS[0]}" in shown


def test_labels_with_their_own_column_names_and_integer_ids(context):
    records = pd.DataFrame({"rid": [1, 2, 3, 4, 5, 6], "pred": ["P", "P", "P", "Q", "Q", None],
                            "blk": ["x", "x", "x", "y", "x", "x"]})
    labels = pd.DataFrame({"n": [1, 2, 3], "who": ["1", "4", "2"], "minus": ["3", "", "1"],
                           "plus": ["5", "9", ""], "truth": ["t1", "t2", "t1"]})
    names = {"draw": "n", "record_id": "who", "removed": "minus", "added": "plus", "true_cluster": "truth"}
    batch = labelling_batch(labels, records, prediction="pred", record_id="rid", block="blk", columns=names, separator=";")
    assert list(batch.columns) == ["n", "minus", "plus", "truth", "rid", "pred", "blk"]
    assert batch.loc[batch["n"].notna(), "rid"].tolist() == [1, 4, 2]  # ids in the records' type
    want = qc_labels(labels, records, "pred", record_id="rid", block="blk", columns=names)
    assert set(want.violations["rule"]) == {4, 6, 7}  # 9 unknown; draws 1 and 3 disagree on record 1
    kwargs = {"record_id_column": "rid", "prediction_column": "pred", "draw_column": "n",
              "removed_column": "minus", "added_column": "plus", "true_cluster_column": "truth"}
    exps = [cls(**kwargs, **({"block_column": "blk", "mostly": 1.0} if rule == 5 else {}))
            for rule, cls in sorted(LABEL_EXPECTATIONS.items())]
    found = by_rule(validate_frame(context, batch, exps, "labels_own_names"))
    for rule, r in found.items():
        assert r.result["observed_value"] == want.failed(rule), rule
        assert r.success == (want.failed(rule) == 0), rule


@pytest.mark.browser
def test_the_failing_draw_table_in_the_browser(tmp_path, capsys):
    from support.chromium import (
        chromium_available,
        dump_dom,
        page_problems,
        screenshot,
        visible_text,
    )

    if not chromium_available():
        pytest.skip("headless Chromium is not installed (Debian: apt-get install -y chromium)")
    assert main(["run", str(_hostile_project(tmp_path)), "--no-progress"]) == 1
    out = capsys.readouterr().out
    index = Path(re.search(r"^Data Docs: (.+)$", out, re.M).group(1))
    page = next((index.parent / "validations").rglob("*.html"))
    dom = dump_dom(page)
    assert "<script" not in dom.lower() and "<img" not in dom.lower()
    text = visible_text(dom)
    for needle in ("Draws that break rule 1", "Draws that break rule 4", "What is wrong", HOSTILE[0], HOSTILE[1],
                   HOSTILE[2], "Status: Failed"):
        assert needle in text, needle
    assert page_problems(dom) == []
    assert screenshot(page, tmp_path / "labels.png", height=1600).stat().st_size > 10_000


def test_a_long_list_of_records_is_cut_in_the_table_and_kept_in_the_result():
    from er_expectations.gx.expectations.labels import SHOWN_RECORDS, _records_text

    ids = [f"r{i}" for i in range(SHOWN_RECORDS + 3)]
    assert _records_text(ids) == "; ".join(ids[:SHOWN_RECORDS]) + "; … and 3 more"
    assert _records_text(ids[:2]) == "r0; r1" and _records_text([]) == ""


def test_rule_5_sentence_states_its_parameters_also_at_their_defaults():
    cls = ExpectLabelsAddedRecordsToResembleSampledRecord
    template, params = cls._sentence_for(dict(cls(**COLUMNS, name_column="nm").configuration.kwargs))
    assert params["mostly"] == "90 %" and params["min_similarity"] == 0.8
    assert params["scorer"] == "token_sort_ratio" and params["added_column"] == "added"
    assert "$block_column" not in template and "$name_column" in template
    _, params = cls._sentence_for(dict(cls(**COLUMNS, name_column="nm", min_similarity=0, mostly=0.5,
                                           block_column="b").configuration.kwargs))
    assert params["min_similarity"] == 0.0 and params["mostly"] == "50 %" and params["block_column"] == "b"


@st.composite
def _release_and_labels(draw):
    n = draw(st.integers(3, 25))
    clusters = draw(st.lists(st.one_of(st.none(), st.integers(0, 5)), min_size=n, max_size=n))
    if all(c is None for c in clusters):
        clusters[0] = 0
    records = pd.DataFrame({"rid": list(range(n)), "pred": pd.array(clusters, dtype="Int64"),
                            "blk": draw(st.lists(st.sampled_from("xyz"), min_size=n, max_size=n))})
    records = records.sample(frac=1, random_state=draw(st.integers(0, 99))).reset_index(drop=True)
    inside = [i for i, c in zip(records["rid"], clusters_of(records), strict=True) if c is not None]
    ids = st.integers(0, n + 3)  # a few ids that are not records
    k = draw(st.integers(1, 6))
    rows = [{"draw": d + 1, "record_id": draw(st.sampled_from(inside)),
             "removed": draw(st.lists(ids, max_size=4)), "added": draw(st.lists(ids, max_size=4)),
             "true_cluster": draw(st.one_of(st.none(), st.sampled_from("ab")))} for d in range(k)]
    return records, pd.DataFrame(rows)


def clusters_of(records: pd.DataFrame) -> list:
    return [None if pd.isna(c) else c for c in records["pred"]]


@settings(max_examples=150, deadline=None)
@given(case=_release_and_labels())
def test_the_batch_gives_the_answer_of_the_whole_release_on_random_labels(case):
    records, labels = case
    whole = qc_labels(labels, records, "pred", record_id="rid", block="blk")
    batch = labelling_batch(labels, records, prediction="pred", record_id="rid", block="blk")
    lab, rec, columns = split_labelling_batch(batch, record_id="rid", prediction="pred")
    part = qc_labels(lab, rec, "pred", record_id="rid", block="blk", columns=columns)
    pd.testing.assert_frame_equal(part.violations, whole.violations)
    assert part.checked == whole.checked and len(rec) <= len(records)


def test_gx_unexpected_keys_follow_result_format(demo, context):
    """Issue 30 item 10: a draw is a row, as in GX's column map expectations; COMPLETE lists
    every failing draw, SUMMARY the first 20 with their violation counts, BASIC the first 20."""
    import great_expectations as gx

    lab, rec = demo
    bad = lab.copy()
    bad["added"] = [[*cell, "US0000000-9"] for cell in bad["added"]]  # every draw breaks rule 4
    want = qc(bad, rec)
    failing = want.failing(4)["draw"].drop_duplicates().tolist()
    assert len(failing) == 401 == want.checked[4]
    suite = context.suites.add(gx.ExpectationSuite(name="labels_formats", expectations=[LABEL_EXPECTATIONS[4](**COLUMNS)]))
    batch = (context.data_sources.add_pandas("ds_labels_formats").add_dataframe_asset("asset")
             .add_batch_definition_whole_dataframe("whole").get_batch(batch_parameters={"dataframe": batch_of(bad, rec)}))
    results = {level: batch.validate(suite, result_format=level).results[0].result
               for level in ("BOOLEAN_ONLY", "BASIC", "SUMMARY", "COMPLETE")}
    assert "unexpected_count" not in results["BOOLEAN_ONLY"]
    for level in ("BASIC", "SUMMARY", "COMPLETE"):
        r = results[level]
        assert r["element_count"] == 401 and r["unexpected_count"] == 401
        assert r["unexpected_percent"] == pytest.approx(100.0)
        assert r["partial_unexpected_list"] == failing[:20]
    assert "partial_unexpected_counts" not in results["BASIC"]
    assert results["SUMMARY"]["partial_unexpected_counts"] == [{"value": d, "count": 1} for d in failing[:20]]
    assert "unexpected_list" not in results["SUMMARY"]
    assert results["COMPLETE"]["unexpected_list"] == failing  # more than SUMMARY gives
    assert len(results["COMPLETE"]["details"]["failing"]) == 401 > len(results["SUMMARY"]["details"]["failing"])


def test_a_clean_batch_reports_zero_unexpected(demo, context):
    lab, rec = demo
    result = validate_frame(context, batch_of(lab, rec), [LABEL_EXPECTATIONS[1](**COLUMNS)], "labels_zero")
    r = result.results[0].result
    assert r["unexpected_count"] == 0 and r["partial_unexpected_list"] == [] and r["element_count"] > 0
