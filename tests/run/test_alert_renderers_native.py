"""The Slack and Teams renderers from a native GX checkpoint (issue 18 item 11).

GX's ``SlackNotificationAction`` and ``MicrosoftTeamsNotificationAction`` take
``renderer: {module_name: er_expectations.run.alerts.render, class_name: ErSlackRenderer}``
(or ``ErTeamsRenderer``): the message then lists each failed check with its observed value,
interval and threshold, from the ``CheckpointResult`` alone (no ``er-expectations run``).
A local webhook server (127.0.0.1) receives what GX posts.

The data: ten true entities of four records, every record in the benchmark; the release
merges the entities two by two, so each predicted cluster of 8 records holds 2·C(4,2) = 12
true pairs among C(8,2) = 28, and the pairwise precision is 12/28 = 0.4286 (by hand).
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import great_expectations as gx
import pandas as pd
import pytest
from great_expectations.checkpoint import MicrosoftTeamsNotificationAction, SlackNotificationAction
from great_expectations.data_context.types.base import ProgressBarsConfig

import er_expectations.gx  # noqa: F401  (registers the expectations)
from er_expectations.gx.expectations import (
    ExpectEstimatedPairwisePrecisionToBeBetween,
    ExpectMatchingRateToBeBetween,
)
from er_expectations.run.alerts.render import ErSlackRenderer, ErTeamsRenderer

#: A release label (the data asset's name) made of Slack and Teams markup (GX refuses a "/" in it).
HOSTILE = "<!channel> <mailto:x@evil.example|click me> [x](mailto:x@evil.example)"


class _Hook(BaseHTTPRequestHandler):
    received: list[tuple[str, bytes]] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.received.append((self.path, self.rfile.read(int(self.headers.get("Content-Length") or 0))))
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def hook():
    handler = type("Hook", (_Hook,), {"received": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", handler.received
    server.shutdown()
    server.server_close()


def _frame() -> pd.DataFrame:
    truth = [f"E{i // 4}" for i in range(40)]
    return pd.DataFrame({"rid": [f"r{i:02d}" for i in range(40)], "truth": truth,
                         "pred": [f"P{i // 8}" for i in range(40)]})


@pytest.fixture(scope="module")
def posted(hook):
    """Run a native checkpoint with both actions; the two bodies GX posted, parsed."""
    base, received = hook
    ctx = gx.get_context(mode="ephemeral")
    ctx.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    suite = ctx.suites.add(gx.ExpectationSuite(name="release_checks", expectations=[
        ExpectEstimatedPairwisePrecisionToBeBetween(prediction_column="pred", reference_column="truth",
                                                    record_id_column="rid", min_value=0.9),
        ExpectMatchingRateToBeBetween(prediction_column="pred", min_value=0.0, max_value=1.0),
    ]))
    batch = ctx.data_sources.add_pandas("src").add_dataframe_asset(HOSTILE).add_batch_definition_whole_dataframe("w")
    vd = ctx.validation_definitions.add(gx.ValidationDefinition(name="release", data=batch, suite=suite))
    module = "er_expectations.run.alerts.render"
    checkpoint = ctx.checkpoints.add(gx.Checkpoint(name="nightly", validation_definitions=[vd], actions=[
        SlackNotificationAction(name="slack", slack_webhook=f"{base}/slack", notify_on="failure",
                                renderer={"module_name": module, "class_name": "ErSlackRenderer"}),
        MicrosoftTeamsNotificationAction(name="teams", teams_webhook=f"{base}/teams", notify_on="failure",
                                         renderer={"module_name": module, "class_name": "ErTeamsRenderer"}),
    ]))
    before = len(received)
    result = checkpoint.run(batch_parameters={"dataframe": _frame()})
    assert result.success is False
    bodies = {path: json.loads(body) for path, body in received[before:]}
    assert set(bodies) == {"/slack", "/teams"}
    return bodies


def _strings(value):
    if isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, str):
        yield value


def test_slack_from_a_native_checkpoint_shows_the_numbers(posted):
    text = "\n".join(_strings(posted["/slack"]["blocks"]))
    assert "nightly" in text
    assert "pairwise_precision (critical): observed 0.429" in text
    assert "0.429" in text  # the observed precision, 12/28
    assert "0.9" in text and "at least 0.9" in text  # the threshold, in the expectation's own sentence
    assert "95 % BCa bootstrap CI 0.429" in text  # the default interval (zero width: every draw has the same f/g)
    assert "matching_rate" not in text  # a passing check is not listed
    assert "0.429" in posted["/slack"]["text"]  # the plain-text fallback says it too


def test_slack_markup_in_a_release_label_stays_text(posted):
    body = json.dumps(posted["/slack"])
    assert "<!channel>" not in body and "<mailto:" not in body
    assert "&lt;!channel&gt;" in posted["/slack"]["text"]  # the top-level text too, not only the blocks
    assert any("&lt;!channel&gt;" in s for s in _strings(posted["/slack"]["blocks"]))


def test_teams_from_a_native_checkpoint_shows_the_numbers_as_plain_text(posted):
    card = posted["/teams"]["attachments"][0]["content"]
    runs = [inline for block in card["body"] if block.get("type") == "RichTextBlock" for inline in block["inlines"]]
    assert all(run["type"] == "TextRun" for run in runs)  # never markdown
    text = "\n".join(run["text"] for run in runs)
    assert "pairwise_precision (critical): observed 0.429" in text and "at least 0.9" in text
    assert "95 % BCa bootstrap CI 0.429" in text
    assert HOSTILE in text  # the label, verbatim, as plain text


def test_the_renderers_still_take_a_prebuilt_message():
    # the CLI's run report path: a message built once, the same classes
    from er_expectations.run.alerts.render import AlertMessage

    message = AlertMessage(checkpoint="c", status="passed", success=True, run_name="c", run_time="t",
                           total_releases=1, releases=(), warning_releases=(), data_docs=None,
                           results_folder=None)
    assert ErSlackRenderer(message).concatenate_text_blocks()["blocks"][0]["text"]["text"] == message.title
    assert ErTeamsRenderer(message).render()["attachments"][0]["content"]["body"][0]["inlines"][0]["text"] == \
        message.title
