"""Top-up through the workbench in a real browser (SPEC 14.3, issue 27 item 2): Debian's
chromium driven by Playwright, network cut. A synthetic population with known truth
(tests/support/topup_data.py: labelling release L = 80 % of the records, later release T all of
them), its benchmark and top-up worksheet; every candidate is answered from the truth by clicks
(the bulk buttons where a person's answers are all alike), one new record is found by search and
added, and the exported worksheet's ``belongs`` equals the truth."""

from __future__ import annotations

import pandas as pd
import pytest
from support.topup_data import LOST, RELEASE, SAMPLED, make_topup_project, population, truth_of
from test_web_browser import new_page

import er_expectations as erx
from er_expectations.cli.main import main

pytestmark = [pytest.mark.browser]


def test_every_candidate_answered_and_a_record_found_through_the_page(chromium, tmp_path, serve, capsys):
    make_topup_project(tmp_path).close()
    folder = tmp_path / "project"
    sheet = pd.read_parquet(tmp_path / "topup.parquet")
    records = population()
    person = dict(zip(records["rid"].astype(str), records["person"], strict=True))
    served = serve(folder)
    page = new_page(chromium, served, "dana")
    entities = list(dict.fromkeys(sheet["entity"]))
    assert page.locator("#entities tbody tr").count() == len(entities)
    bulk = 0
    for n, entity in enumerate(entities, start=1):
        page.goto(f"{served.base}/entity/{n}")
        page.wait_for_selector("body[data-ready='1']")
        assert "Is this the same person as the records above?" in page.inner_text("p.question")
        ids = page.eval_on_selector_all("#candidates tbody tr", "els => els.map(e => e.dataset.id)")
        assert ids == sheet.loc[sheet["entity"] == entity, "rid"].astype(str).tolist()
        answers = ["yes" if f"p{person[i]}" == entity else "no" for i in ids]
        if len(set(answers)) == 1 and len(answers) > 1:
            page.click("#all-yes" if answers[0] == "yes" else "#all-no")
            bulk += 1
        else:
            for i, a in zip(ids, answers, strict=True):
                page.locator(f"#candidates tr[data-id='{i}'] button.{a}").click()
        for i, a in zip(ids, answers, strict=True):
            assert page.locator(f"#candidates tr[data-id='{i}'] button.{a}").get_attribute("aria-pressed") == "true"
        assert page.inner_text("#answered") == f"{len(ids)} of {len(ids)} answered"
        if entity == f"p{person[str(LOST)]}":  # a new record of this person that no row asks about
            page.fill("#search", "Dnia Baranovv")
            page.click("#search-go")
            hit = page.locator(f"#hits li[data-id='{LOST}']")
            hit.wait_for()
            greyed = page.locator("#hits li.not-addable")
            assert greyed.count() >= 1 and "already in the benchmark" in greyed.first.inner_text()
            assert greyed.first.locator("button").count() == 0
            hit.locator("button.add").click()
            assert page.locator(f"#found li[data-id='{LOST}']").count() == 1
        page.click("#save")
        page.wait_for_selector("#status.ok")
        assert page.inner_text("#status") == "saved (version 1)"
    assert bulk >= 1
    assert page.inner_text("#progress") == f"{len(entities)} of {len(entities)} entities answered"
    page.reload()  # the answers are in the store: shown again on a new load
    page.wait_for_selector("body[data-ready='1']")
    last = sheet.loc[sheet["entity"] == entities[-1], "rid"].astype(str).tolist()
    for i in last:
        a = "yes" if f"p{person[i]}" == entities[-1] else "no"
        assert page.locator(f"#candidates tr[data-id='{i}'] button.{a}").get_attribute("aria-pressed") == "true"
    page.context.close()
    served.kill()
    out = tmp_path / "filled.parquet"
    assert main(["label", "export", str(folder), "-o", str(out)]) == 0
    assert "1 record found by search added" in capsys.readouterr().out
    filled = pd.read_parquet(out)
    assert filled["belongs"].iloc[:len(sheet)].tolist() == truth_of(records, sheet)
    found = filled.iloc[len(sheet):]
    assert found[["entity", "rid", "reason", "belongs"]].values.tolist() == [
        [f"p{person[str(LOST)]}", LOST, "found by search", "yes"]]
    # every row that says yes is truly the entity's record
    assert all(f"p{person[str(r)]}" == e for e, r, b in zip(filled["entity"], filled["rid"], filled["belongs"],
                                                             strict=True) if b == "yes")
    # the loop closes (issue 27's done-when): the answers extend the benchmark to version 2, every
    # record of T is then evaluated, and each sampled person's cluster is the truth on T
    new_bench = tmp_path / "benchmark-v2.parquet"
    assert main(["topup", "apply", str(tmp_path / "benchmark.parquet"), str(out), str(tmp_path / "records.parquet"),
                 "--on", "rid", "-p", RELEASE, "-o", str(new_bench)]) == 0
    v2 = pd.read_parquet(new_bench)
    assert set(v2["rid"]) == set(records["rid"]) and v2["benchmark_version"].max() == 2
    got = v2.dropna(subset=["reference"]).groupby("reference")["rid"].agg(set).to_dict()
    truth = records.groupby("person")["rid"].agg(set)
    assert got == {f"p{p}": truth[p] for p in SAMPLED}
    frame = records.merge(v2, on="rid", how="left")
    after = erx.estimate(frame, prediction=RELEASE, reference="reference", draws="draws",
                         metrics=["pairwise_precision", "pairwise_recall"])
    assert after.attrs["records_added"] == 0 and after.attrs["benchmark_version"] == 2
    # the same estimates as a benchmark built from the truth on T for the same people
    oracle = records.assign(reference=[f"p{p}" if p in SAMPLED else None for p in records["person"]],
                            draws=[1 if p in SAMPLED else None for p in records["person"]])
    # a sampled person was drawn through the records known at labelling (version 1): w = 1 / that
    # count, whatever the top-up added (SPEC 14.3)
    known_first = frame.loc[frame["benchmark_version"] == 1, "rid"]
    drawable = records[records["rid"].isin(known_first)].groupby("person").size()
    oracle["w"] = 1.0 / oracle["person"].map(drawable)
    direct = erx.estimate(oracle, prediction=RELEASE, reference="reference", draws="draws", weights={"column": "w"},
                          metrics=["pairwise_precision", "pairwise_recall"], known=None)
    for column in ("estimate", "std_error", "ci_lower", "ci_upper"):
        assert after[column].to_numpy() == pytest.approx(direct[column].to_numpy(), abs=1e-12)
