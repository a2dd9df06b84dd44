"""Offline Data Docs sites built with GX's extension points, and reading their HTML.

:func:`build_demo_site` (two checkpoint runs, one with hostile text) and
:func:`build_severity_site` (a critical, a warning and an info expectation) are the sites of
``tests/gx/test_offline_docs.py``, also opened in headless Chromium by ``tests/e2e/test_browser.py``;
:func:`parse_fetches` and :func:`remote_refs` find what a page would fetch.
"""

from __future__ import annotations

import logging
import re
from html.parser import HTMLParser
from pathlib import Path

import great_expectations as gx
import pandas as pd
from great_expectations.checkpoint import UpdateDataDocsAction
from great_expectations.core.run_identifier import RunIdentifier
from great_expectations.data_context.types.base import ProgressBarsConfig

from er_expectations.gx.actions import OfflineDataDocsAction
from er_expectations.gx.docs.data_docs import local_site_dir

HOSTILE = "<script>alert(1)</script>"
# Run names become folder names, so GX forbids "/" in them: this one has no slash but is live HTML.
HOSTILE_RUN = "release_2022<img src=x onerror=alert(1)>"
GOOD_RUN = "release_2021"
SUITE = "er_offline_checks"
CHECKPOINT = "er_offline_checkpoint"

FETCH_ATTRS = ("src", "href", "srcset", "poster", "data", "action", "formaction", "background")


def demo_frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    good = pd.DataFrame({
        "record_id": [1, 2, 3, 4],
        "cluster_id": ["c1", "c1", "c2", "c3"],
        HOSTILE: ["a", "b", "c", "d"],
    })
    bad = pd.DataFrame({
        "record_id": [1, 2, 3, 4],
        "cluster_id": ["c1", HOSTILE, "c2", "c3"],
        HOSTILE: ["a", None, "c", "d"],
    })
    return good, bad


def build_demo_site(root: Path) -> dict:
    """File context in ``root`` with two checkpoint runs; returns what the tests need."""
    import great_expectations.expectations as gxe

    logging.getLogger("great_expectations").setLevel(logging.WARNING)
    ctx = gx.get_context(mode="file", project_root_dir=root)
    ctx.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    ctx.variables.save()
    asset = ctx.data_sources.add_pandas("frames").add_dataframe_asset("records")
    batch_definition = asset.add_batch_definition_whole_dataframe("whole_frame")
    suite = ctx.suites.add(gx.ExpectationSuite(name=SUITE))
    suite.add_expectation(gxe.ExpectColumnValuesToNotBeNull(column="record_id"))
    suite.add_expectation(gxe.ExpectColumnValuesToNotBeNull(column="cluster_id"))
    suite.add_expectation(gxe.ExpectColumnValuesToBeInSet(column="cluster_id",
                                                          value_set=["c1", "c2", "c3"]))
    suite.add_expectation(gxe.ExpectColumnValuesToNotBeNull(column=HOSTILE))
    vd = ctx.validation_definitions.add(
        gx.ValidationDefinition(name="er_offline_vd", data=batch_definition, suite=suite))
    checkpoint = ctx.checkpoints.add(gx.Checkpoint(
        name=CHECKPOINT,
        validation_definitions=[vd],
        actions=[UpdateDataDocsAction(name="update_data_docs"),
                 OfflineDataDocsAction(name="offline_data_docs")],
    ))
    good, bad = demo_frames()
    first = checkpoint.run(batch_parameters={"dataframe": good},
                           run_id=RunIdentifier(run_name=GOOD_RUN))
    # the second run goes through the checkpoint re-loaded from its JSON file
    reloaded = gx.get_context(project_root_dir=root)
    second = reloaded.checkpoints.get(CHECKPOINT).run(
        batch_parameters={"dataframe": bad}, run_id=RunIdentifier(run_name=HOSTILE_RUN))
    site = local_site_dir(ctx)
    pages = {}
    for result, run in ((first, GOOD_RUN), (second, HOSTILE_RUN)):
        (key,) = result.run_results
        pages[run] = site.joinpath("validations", *key.to_tuple()[:-1], key.to_tuple()[-1] + ".html")
    return {"root": root, "ctx": ctx, "site": site, "first": first, "second": second,
            "pages": pages}


class Fetches(HTMLParser):
    """Every URL the browser would fetch (not plain <a href> links), plus <script> tags."""

    def __init__(self) -> None:
        super().__init__()
        self.remote: list[str] = []
        self.scripts = 0
        self.handlers: list[str] = []
        self.in_style = False
        self.css: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "script":
            self.scripts += 1
        self.in_style = tag == "style"
        for name, value in attrs:
            if name.startswith("on"):
                self.handlers.append(f"<{tag} {name}={value}>")
            if name == "style":
                self.css.append(value or "")
        if tag == "a":
            return
        for name, value in attrs:
            value = (value or "").strip().lower()
            if name in FETCH_ATTRS and value.startswith(("http:", "https:", "//")):
                self.remote.append(f"<{tag} {name}={value}>")

    def handle_endtag(self, tag):
        if tag == "style":
            self.in_style = False

    def handle_data(self, data):
        if self.in_style:
            self.css.append(data)


_REMOTE_CSS = re.compile(r"url\(\s*['\"]?\s*(?:https?:)?//[^)]*\)|@import[^;]*//", re.I)


def parse_fetches(text: str) -> Fetches:
    parser = Fetches()
    parser.feed(text)
    parser.close()
    return parser


def remote_refs(text: str) -> tuple[list[str], int]:
    """Remote fetches of a page (tags, inline CSS) and its number of <script> elements."""
    parser = parse_fetches(text)
    css = [m for chunk in parser.css for m in _REMOTE_CSS.findall(chunk)]
    return parser.remote + css, parser.scripts


PAYLOADS = [
    '<img title="a>b" src="https://evil.example.org/x.png">',
    '<div title="x>y" onmouseover=alert(1)>hover</div>',
    '" onmouseover="alert(1)',
    "' onfocus='alert(1)' autofocus='",
    "`onerror=alert(1)`",
    "javascript:alert(1)",
    '<a href="javascript:alert(1)">click</a>',
    "<svg onload=alert(1)>",
    "</title><script>alert(1)</script>",
    "</style><script>alert(1)</script>",
    "&lt;script&gt;alert(1)&lt;/script&gt;",
    "&#60;img src=x onerror=alert(1)&#62;",
    "<!-- <script>alert(1)</script> -->",
    "<![CDATA[<script>alert(1)</script>]]>",
]
SEVERITY_SUITE = "er_severity_checks"
WARN_RUN = "only_warnings_fail"
CRIT_RUN = "critical_fails"


def build_severity_site(root: Path) -> dict:
    """Two runs of a suite with a critical, a warning and an info expectation: the first fails
    only the warning one, the second also the critical one."""
    import great_expectations.expectations as gxe

    logging.getLogger("great_expectations").setLevel(logging.WARNING)
    ctx = gx.get_context(mode="file", project_root_dir=root)
    ctx.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    ctx.variables.save()
    batch_definition = (ctx.data_sources.add_pandas("frames").add_dataframe_asset("records")
                        .add_batch_definition_whole_dataframe("whole_frame"))
    suite = ctx.suites.add(gx.ExpectationSuite(name=SEVERITY_SUITE))
    suite.add_expectation(gxe.ExpectColumnValuesToNotBeNull(column="record_id"))  # critical
    suite.add_expectation(gxe.ExpectColumnValuesToBeInSet(column="cluster_id", value_set=["c1", "c2"],
                                                          severity="warning"))
    suite.add_expectation(gxe.ExpectTableRowCountToBeBetween(min_value=1, max_value=10,
                                                             severity="info"))
    vd = ctx.validation_definitions.add(
        gx.ValidationDefinition(name="severity_vd", data=batch_definition, suite=suite))
    checkpoint = ctx.checkpoints.add(gx.Checkpoint(
        name="severity_cp", validation_definitions=[vd],
        actions=[UpdateDataDocsAction(name="docs"), OfflineDataDocsAction(name="offline")]))
    warn_only = pd.DataFrame({"record_id": [1, 2, 3], "cluster_id": ["c1", "c2", "c9"]})
    critical = pd.DataFrame({"record_id": [1, None, 3], "cluster_id": ["c1", "c2", "c9"]})
    results = {}
    for run, frame in ((WARN_RUN, warn_only), (CRIT_RUN, critical)):
        results[run] = checkpoint.run(batch_parameters={"dataframe": frame},
                                      run_id=RunIdentifier(run_name=run))
    site = local_site_dir(ctx)
    pages = {}
    for run, result in results.items():
        (key,) = result.run_results
        pages[run] = site.joinpath("validations", *key.to_tuple()[:-1], key.to_tuple()[-1] + ".html")
    return {"root": root, "ctx": ctx, "site": site, "results": results, "pages": pages}
