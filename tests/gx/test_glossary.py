"""The glossary (issue 29 item 5): docs/glossary.md is written from the same list the pages use, every
term a demo page names is defined, and a validation page carries the definitions of its own terms
(Data Docs are published without the documentation site, so the page explains itself)."""

from __future__ import annotations

import io
import re
from pathlib import Path

from support.chromium import visible_text
from support.paths import REPO
from support.toyproject import make_toy

from er_expectations.gx.docs.glossary import GLOSSARY, glossary_markdown, terms_on
from er_expectations.run.runner import run_checkpoint


def test_the_docs_glossary_is_the_pages_glossary_and_in_the_nav():
    assert (REPO / "docs" / "glossary.md").read_text(encoding="utf-8") == glossary_markdown(), (
        "regenerate docs/glossary.md with er_expectations.gx.docs.glossary.glossary_markdown()")
    assert "glossary.md" in (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    assert "(glossary.md)" in (REPO / "docs" / "reading-the-reports.md").read_text(encoding="utf-8")
    anchors = [t.anchor for t in GLOSSARY]
    assert len(set(anchors)) == len(anchors)


def test_the_terms_the_issue_names_are_defined():
    names = " ".join(t.name.lower() for t in GLOSSARY)
    for wanted in ("hill numbers", "name variation", "homogeneity", "effective draws", "homonymy",
                   "matching rate", "b-cubed", "skipped", "severity", "set aside", "confidence interval"):
        assert wanted in names, wanted
    assert [t.name for t in terms_on("Hill number of order 2 and the homonymy rate")] == [
        "Hill numbers (order 0, 1, 2, ∞)", "Homonymy rate"]


def test_a_validation_page_defines_its_own_terms(tmp_path):
    report = run_checkpoint(make_toy(tmp_path), progress=False, out=io.StringIO(), releases=["beta"])
    (page,) = report.releases[0].pages
    html = Path(page.removeprefix("file://")).read_text(encoding="utf-8")
    assert '<a href="#glossary">Terms on this page</a>' in html
    glossary = html[html.index('<details class="er-glossary" id="glossary">'):]
    glossary = glossary[:glossary.index("</details>")]
    body = visible_text(html[:html.index('<details class="er-glossary"')])
    shown = re.findall(r'<dt id="term-([a-z0-9-]+)">', glossary)
    # exactly the terms the rest of the page uses, each with its definition
    assert shown == [t.anchor for t in terms_on(body)] and shown
    pairwise = next(t for t in GLOSSARY if t.name.startswith("Pairwise"))
    assert pairwise.anchor in shown and pairwise.definition in visible_text(glossary)
