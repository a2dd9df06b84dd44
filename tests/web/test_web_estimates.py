"""The estimates-so-far page: the numbers of erx.estimate on the labels typed in so far
(issue 19, SPEC 6), the draws still needed, and clear messages before there are enough."""

from __future__ import annotations

import re

import pandas as pd
import pytest
from starlette.testclient import TestClient
from support.workbench_web import DATA, RELEASE, make_demo_project

from er_expectations.analysis.benchmark import benchmark_from_labels
from er_expectations.analysis.release import estimate
from er_expectations.labelling.store import Decision
from er_expectations.web.app import build_app
from er_expectations.web.model import Workspace

BASE = "http://127.0.0.1:8766"


def _client(project) -> TestClient:
    app = build_app(Workspace(project), token="t")
    app.guard.bind("127.0.0.1", 8766)
    c = TestClient(app.guard, base_url=BASE, follow_redirects=False)
    c.get("/?token=t")
    c.post("/signin", content="name=ann", headers={"Origin": BASE, "Content-Type": "application/x-www-form-urlencoded"})
    return c


@pytest.mark.slow
def test_the_page_shows_the_estimates_of_the_demo_labels(tmp_path):
    labels = pd.read_parquet(DATA / "labels.parquet")
    first = labels[labels["draw"] <= 120]
    project = make_demo_project(tmp_path / "p")
    try:
        for row in first.itertuples():
            project.store.save(row.draw, "ann", Decision(removed=list(row.removed), added=list(row.added)),
                               expected_version=0)
        client = _client(project)
        html = client.get("/estimates").text
        records = project.records()
        bench = benchmark_from_labels(first, records, prediction=RELEASE, record_id="mention_id")
        table = records[["mention_id", RELEASE]].merge(bench, on="mention_id", how="left")
        want = estimate(table, prediction=RELEASE, reference="reference", weights="cluster_size", draws="draws",
                        metrics=["pairwise_precision", "pairwise_recall", "pairwise_f"])
        assert "Estimates after 120 labelled draws" in html
        for metric, row in want.iterrows():
            cells = re.search(rf"<td>{metric}</td><td class=\"num\">([0-9.]+)</td><td class=\"num\">([0-9.]+)</td>",
                              html)
            assert cells, metric
            assert float(cells.group(1)) == pytest.approx(row["estimate"], abs=5e-4)
            assert float(cells.group(2)) == pytest.approx(row["std_error"], abs=5e-4)
        needed = re.findall(r"<td class=\"num\">([0-9,]+)</td><td>", html)
        assert len(needed) == 3 and all(int(n.replace(",", "")) >= 1 for n in needed)
    finally:
        project.close()


def test_too_few_draws_and_a_bad_target(tmp_path):
    project = make_demo_project(tmp_path / "p")
    try:
        client = _client(project)
        assert "no draw is labelled yet" in client.get("/estimates").text
        for bad in ("abc", "0", "1.5", "-0.1"):
            r = client.get("/estimates", params={"target_se": bad})
            assert r.status_code == 422 and "target_se" in r.text
    finally:
        project.close()
