"""The suite page shows each check's severity as a badge styled as on the validation pages
(issue 18, item 7): ``er-sev er-sev-<severity>`` from templates/docs.css, the class of the
check's own severity (GX shares one styling dict between a page's sentences: every badge
once got the class of the last check drawn), and no stray quote marks."""

from __future__ import annotations

import io
import re

from support.chromium import visible_text
from support.toyproject import make_toy

from er_expectations.run.runner import run_checkpoint

BADGE = re.compile(r'Severity: <span class="([^"]*)">([^<]*)</span>')


def test_each_badge_has_its_own_severity_class(tmp_path):
    report = run_checkpoint(make_toy(tmp_path), progress=False, out=io.StringIO(), releases=["alpha"])
    site = report.data_docs_index.parent
    (page,) = site.glob("expectations/*.html")
    html = page.read_text(encoding="utf-8")
    badges = BADGE.findall(html)
    # the toy suite: precision and recall critical, matching rate warning, Hill number info, homonymy warning
    assert [word for _, word in badges] == ["critical", "critical", "warning", "info", "warning"]
    for classes, word in badges:
        assert classes.split() == ["er-sev", f"er-sev-{word}"], (classes, word)
    css = (site / "index.html").read_text(encoding="utf-8")  # the one stylesheet, inlined in every page
    for word in ("critical", "warning", "info"):
        assert f".er-sev-{word}{{" in css
    text = visible_text(html)
    assert '"' not in text and "''" not in text and "Severity: critical." in text
    # the validation page states the severity in its status cells, with the same classes
    validation = next(site.glob("validations/**/*release_alpha.html")).read_text(encoding="utf-8")
    assert "Severity:" not in visible_text(validation)
    assert re.findall(r'<span class="er-sev er-sev-(\w+)"', validation) == [w for _, w in badges]
