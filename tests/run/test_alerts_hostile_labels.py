"""A release label is data: it reaches Slack as text, never as a mention or a link
(issue 18, item 17). Slack reads ``<!channel>`` and ``<http://…|click me>`` in the top-level
``text`` (the notification and fallback) as well as in the blocks."""

from __future__ import annotations

from er_expectations.run.alerts.render import AlertMessage, FailedCheck, ReleaseAlert, slack_payload

HOSTILE = "<!channel> <http://evil.example/|click me> & co"
ESCAPED = "&lt;!channel&gt; &lt;http://evil.example/|click me&gt; &amp; co"


def message() -> AlertMessage:
    check = FailedCheck(check="pairwise_precision", expectation="expect_estimated_pairwise_precision_to_be_between",
                        suite="s", severity="critical", observed=0.4, observed_text="0.4", expected=">= 0.9")
    release = ReleaseAlert(label=HOSTILE, status="failed", evaluated=5, successful=4, checks=(check,),
                           other_failed=0, pages=())
    return AlertMessage(checkpoint="toy <@U123>", status="failed", success=False, run_name="toy",
                        run_time="2026-01-01T00:00:00Z", total_releases=2, releases=(release,),
                        warning_releases=(HOSTILE,), data_docs="https://docs.example/index.html?a=1&b=2",
                        results_folder=None)


def test_the_top_level_text_escapes_what_slack_would_read_as_markup():
    payload = slack_payload(message())
    text = payload["text"]
    assert "<" not in text and ">" not in text  # no mention, no link, no special command
    assert f"{ESCAPED}: failed (4 of 5 checks passed)" in text
    assert "toy &lt;@U123&gt;" in text
    assert "Passed with failed warning/info checks: " + ESCAPED in text
    # & is escaped once, so Slack shows the URL as written
    assert "https://docs.example/index.html?a=1&amp;b=2" in text


def test_the_blocks_stay_escaped():
    blocks = slack_payload(message())["blocks"]
    sections = [b["text"]["text"] for b in blocks if b["type"] == "section"]
    assert any(ESCAPED in s for s in sections)
    assert not any("<!channel>" in s or "<http://evil" in s for s in sections)
