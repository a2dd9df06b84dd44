"""Drift checks that read the history store (SPEC 10): control limits and the Data Docs charts.

Six releases of one toy population, validated in order through ``er-expectations run`` (the
history store is on by default): r1-r3 build the history, r4 varies within the limits, r5 lumps
every pair of entities (its average cluster size doubles) and r6 is back to normal. Hostile
release labels go through the chart as text.
"""

from __future__ import annotations

import base64
import io
import json
import re
from pathlib import Path

import pandas as pd
import pytest
from support.chromium import page_problems

import er_expectations.gx  # noqa: F401  (registers the expectations)
from er_expectations.config import ConfigError
from er_expectations.gx.expectations.control import control_limits
from er_expectations.run.runner import run_checkpoint

SUITE = """\
suite: history_checks
defaults:
  prediction_column: prediction
  record_id_column: rid
expectations:
  - expectation: expect_statistic_within_control_limits
    statistic: average_cluster_size
    k: 3
    window: 8
    min_history: 3
  - expectation: expect_statistic_within_control_limits
    statistic: n_clusters
    baseline_release: {pinned}
    min_history: 2
    severity: warning
  - expectation: expect_statistic_change_to_be_below
    statistic: average_cluster_size
    max_relative_change: 0.5
    severity: info
"""

CHECKPOINT = """\
checkpoint: hist
project_dir: ../project
data:
  records: {path: ../data/records.parquet, id_column: rid}
  predictions: {path: ../data/predictions.parquet, id_column: rid, columns: "pred_*"}
releases: all
suites: [history_checks]
suite_paths: [../suites]
actions:
  - build_data_docs
"""

LABELS = ["r1", "r2", "r3", "r4", "r5", "r6"]


def make_project(root: Path, *, pinned: str = "r1", labels: list[str] = LABELS) -> Path:
    ids = [f"x{i:02d}" for i in range(40)]
    entity = [i // 4 for i in range(40)]
    split_one = [f"e{e}" if i != 0 else "lone" for i, e in enumerate(entity)]  # 11 clusters
    columns = {
        labels[0]: [f"e{e}" for e in entity],
        labels[1]: split_one,
        labels[2]: [f"e{e}" for e in entity],
        labels[3]: split_one,
        labels[4]: [f"p{e // 2}" for e in entity],  # pairs of entities lumped: 5 clusters
        labels[5]: [f"e{e}" for e in entity],
    }
    data = root / "data"
    data.mkdir(parents=True)
    pd.DataFrame({"rid": ids}).to_parquet(data / "records.parquet", index=False)
    pd.DataFrame({"rid": ids, **{f"pred_{k}": v for k, v in columns.items()}}).to_parquet(
        data / "predictions.parquet", index=False)
    (root / "suites").mkdir()
    (root / "suites" / "s.yml").write_text(SUITE.format(pinned=pinned), encoding="utf-8")
    (root / "checkpoints").mkdir()
    path = root / "checkpoints" / "hist.yml"
    path.write_text(CHECKPOINT, encoding="utf-8")
    return path


def details(report, label: str, kind: str, statistic: str) -> dict:
    release = next(r for r in report.releases if r.label == label)
    for file in release.result_files:
        for r in json.loads(Path(file).read_text())["results"]:
            cfg = r["expectation_config"]
            if cfg["type"] == kind and cfg["kwargs"].get("statistic") == statistic:
                return {"success": r["success"], **r["result"]["details"],
                        "observed_value": r["result"].get("observed_value")}
    raise AssertionError(f"{kind} {statistic} not found for {label}")


@pytest.fixture(scope="module")
def history_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("history")
    path = make_project(root)
    return root, run_checkpoint(path, progress=False, out=io.StringIO())


CONTROL = "expect_statistic_within_control_limits"


def test_unknown_pinned_release_is_a_config_error(tmp_path):
    path = make_project(tmp_path, pinned="r7")
    with pytest.raises(ConfigError) as info:
        run_checkpoint(path, progress=False, out=io.StringIO())
    (issue,) = info.value.issues
    assert "baseline_release 'r7' is not a release of checkpoint 'hist'" in issue.message
    assert "'r1', 'r2', 'r3', 'r4', 'r5' and 'r6'" in issue.message and (issue.line, issue.column) == (13, 23)


def test_too_little_history_is_skipped_with_n_of_m(history_run):
    _, report = history_run
    for label, n in (("r1", 0), ("r2", 1), ("r3", 2)):
        d = details(report, label, CONTROL, "average_cluster_size")
        assert d["success"] is True and d["skipped"] is True
        assert d["note"] == f"not enough history ({n} of 3 past values needed, failed releases left out)"
        assert d["observed_value"] == pytest.approx(40 / (10 if label != "r2" else 11))


def test_limits_are_mean_plus_minus_k_sd_of_the_past_values(history_run):
    _, report = history_run
    past = [40 / 10, 40 / 11, 40 / 10]
    d4 = details(report, "r4", CONTROL, "average_cluster_size")
    centre, sd, lower, upper = control_limits(past, k=3.0)
    assert d4["success"] is True and d4["history_releases"] == ["r1", "r2", "r3"]
    assert (d4["center"], d4["sd"], d4["lower"], d4["upper"]) == pytest.approx((centre, sd, lower, upper))
    d5 = details(report, "r5", CONTROL, "average_cluster_size")
    assert d5["success"] is False and d5["observed_value"] == pytest.approx(8.0)
    assert "above the control limits" in d5["note"]
    # r5 failed: left out of r6's limits, so a bad release does not become the new normal
    d6 = details(report, "r6", CONTROL, "average_cluster_size")
    assert d6["history_releases"] == ["r1", "r2", "r3", "r4"] and d6["success"] is True
    assert d6["center"] == pytest.approx(sum(past + [40 / 11]) / 4)


def test_pinned_release_centres_the_limits_on_its_stored_value(history_run):
    _, report = history_run
    d = details(report, "r4", CONTROL, "n_clusters")
    _, sd, _, _ = control_limits([10.0, 11.0, 10.0], k=3.0)
    assert d["center"] == 10.0 and d["sd"] == pytest.approx(sd) and d["baseline_release"] == "r1"


def test_drift_pages_embed_the_series_as_a_static_image(history_run):
    _, report = history_run
    site = report.data_docs_index.parent
    html = next(site.glob("validations/**/*release_r5.html")).read_text(encoding="utf-8")
    assert page_problems(html) == []
    assert "<script" not in html.lower()
    images = re.findall(r'<img src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"', html)
    assert len(images) >= 2  # the control chart and the change's series
    svg = base64.b64decode(images[0]).decode("utf-8")
    assert "<script" not in svg and all(label in svg for label in ("r1", "r4", "r5"))


def test_hostile_release_labels_stay_text_in_the_chart(tmp_path):
    labels = ["a1", "a2", "<script>alert(1)</script>", "a4", "a5", "a6"]
    path = make_project(tmp_path, pinned="a1", labels=labels)
    report = run_checkpoint(path, progress=False, out=io.StringIO())
    site = report.data_docs_index.parent
    seen = 0
    for page in site.glob("validations/**/*.html"):
        html = page.read_text(encoding="utf-8")
        assert page_problems(html) == [], page
        for encoded in re.findall(r'src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"', html):
            svg = base64.b64decode(encoded).decode("utf-8")
            assert "<script" not in svg
            if "alert(1)" in svg:
                assert "&lt;script&gt;alert(1)&lt;/script&gt;" in svg
                seen += 1
    assert seen > 0  # the hostile label is drawn (as text) in the charts of the later releases
