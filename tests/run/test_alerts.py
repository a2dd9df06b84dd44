"""Alerts (issue 10 item 4): Slack, Teams, generic webhook and e-mail, received by real servers.

A local HTTP server (``http.server`` in a thread) and a local SMTP server (``aiosmtpd``) receive
the messages the runner sends. The toy project (``tests/support/toyproject.py``) has three
releases, of which "beta" fails pairwise precision: it merges the true entities (four records
each) two by two, so each predicted cluster of 8 records holds 2·C(4,2) = 12 true pairs among
C(8,2) = 28, and the pairwise precision is 12/28 = 3/7 (computed here by hand, independently of the package).
"""

from __future__ import annotations

import email
import io
import json
import os
import socket
import threading
import time
from contextlib import contextmanager
from html.parser import HTMLParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from great_expectations.core import config_provider
from support.toyproject import CHECKPOINT, make_toy

from er_expectations.cli.main import main
from er_expectations.config import ConfigError, load_checkpoint
from er_expectations.run.alerts.actions import _serial_config_reads
from er_expectations.run.alerts.render import (
    MAX_RELEASES,
    AlertMessage,
    ErEmailRenderer,
    ErTeamsRenderer,
    FailedCheck,
    ReleaseAlert,
    dumps,
    slack_payload,
)
from er_expectations.run.alerts.targets import Masker
from er_expectations.run.runner import run_checkpoint

aiosmtpd_controller = pytest.importorskip("aiosmtpd.controller")

HOSTILE = 'pred_<b onmouseover="x">&\'beta</b> <!channel>'
LABEL = HOSTILE.removeprefix("pred_")  # the release label: the column name after the glob's prefix
PRECISION_BETA = 12 / 28  # see the module docstring


# -- servers -----------------------------------------------------------------------------------


class _Sink(BaseHTTPRequestHandler):
    """Answers by path: /fail -> 500, /slow -> waits 3 s, anything else -> 200."""

    received: list[tuple[str, dict[str, str], bytes]] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.received.append((self.path, dict(self.headers), body))
        if self.path.startswith("/slow"):
            time.sleep(3)
        status = 500 if self.path.startswith("/fail") else 200
        try:
            self.send_response(status)
            self.end_headers()
            self.wfile.write(b"ok" if status == 200 else b"boom")
        except (BrokenPipeError, ConnectionResetError):  # /slow: the client gave up waiting
            pass

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def http_sink():
    handler = type("Sink", (_Sink,), {"received": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", handler.received
    server.shutdown()
    server.server_close()


class _Mailbox:
    def __init__(self, refuse: bool = False) -> None:
        self.messages: list[tuple[str, list[str], bytes]] = []
        self.refuse = refuse

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):  # noqa: N802
        if self.refuse:
            return "550 mailbox unavailable"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):  # noqa: N802
        self.messages.append((envelope.mail_from, list(envelope.rcpt_tos), envelope.content))
        return "250 Message accepted for delivery"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def closed_port():
    """A port bound but not listening while the test runs: a connection is refused (and no
    other server of the test can get it)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


@contextmanager
def smtp_server(*, refuse: bool = False, logins: list | None = None):
    """A local SMTP server; with ``logins``, it offers AUTH and records each login."""
    mailbox = _Mailbox(refuse)
    options = {}
    if logins is not None:
        from aiosmtpd.smtp import AuthResult

        def authenticator(server, session, envelope, mechanism, auth_data):
            logins.append((auth_data.login.decode(), auth_data.password.decode()))
            return AuthResult(success=True)

        options = {"authenticator": authenticator, "auth_require_tls": False}
    controller = aiosmtpd_controller.Controller(mailbox, hostname="127.0.0.1", port=_free_port(),
                                                **options)
    controller.start()
    try:
        yield controller.port, mailbox
    finally:
        controller.stop()


@contextmanager
def environment(**values: str):
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in old.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


ALERTS = """\
  - build_data_docs: {base_url: "https://docs.example.org/er/"}
  - slack: {webhook: "${ERX_SLACK}"}
  - microsoft_teams:
      webhook: ${ERX_TEAMS}
  - webhook: {url: "${ERX_HOOK}", timeout: 1, headers: {Authorization: "${ERX_HOOK_TOKEN}"}}
  - email:
      smtp_host: 127.0.0.1
      smtp_port: %d
      security: none
      sender: er-alerts@example.org
      receivers: [owner@example.org, second@example.org]
"""


def checkpoint_with(actions: str, *, hostile: bool = False) -> str:
    text = CHECKPOINT.replace("actions:\n  - build_data_docs\n", "actions:\n" + actions)
    return text


def make_project(root: Path, actions: str, *, hostile: bool = False) -> Path:
    path = make_toy(root, checkpoint=checkpoint_with(actions))
    if hostile:  # the failing release gets a label full of markup
        import pandas as pd

        file = root / "data" / "predictions.parquet"
        frame = pd.read_parquet(file).rename(columns={"pred_beta": HOSTILE})
        frame.to_parquet(file, index=False)
    return path


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.extend(attrs)


def _tags(html: str) -> _Tags:
    parser = _Tags()
    parser.feed(html)
    return parser


def _strict_json(body: bytes):
    def refuse(token):
        raise ValueError(f"not strict JSON: {token}")

    return json.loads(body.decode("utf-8"), parse_constant=refuse)


# -- one message per run to every target -------------------------------------------------------


@pytest.fixture(scope="module")
def sent(tmp_path_factory, http_sink):
    base, received = http_sink
    root = tmp_path_factory.mktemp("alerts")
    secrets = {"ERX_SLACK": f"{base}/services/T000/B000/SLACKSECRETXYZ",
               "ERX_TEAMS": f"{base}/teams/webhookb2/TEAMSSECRETXYZ",
               "ERX_HOOK": f"{base}/hook?token=HOOKSECRETXYZ",
               "ERX_HOOK_TOKEN": "Bearer TOKENSECRETXYZ"}
    with smtp_server() as (port, mailbox), environment(**secrets):
        path = make_project(root, ALERTS % port, hostile=True)
        out = io.StringIO()
        before = len(received)
        report = run_checkpoint(path, progress=False, out=out)
    mine = received[before:]
    by_path = {p.split("?")[0]: (headers, body) for p, headers, body in mine}
    assert len(mine) == len(by_path)  # one request per target
    return report, out.getvalue(), by_path, mailbox.messages, secrets


def test_one_message_per_target_per_run(sent):
    report, out, by_path, mails, _ = sent
    assert [r.label for r in report.failed_releases] == [LABEL]
    assert sorted(by_path) == ["/hook", "/services/T000/B000/SLACKSECRETXYZ", "/teams/webhookb2/TEAMSSECRETXYZ"]
    assert len(mails) == 1
    assert out.count("Alert sent: ") == 4
    assert [a.outcome for a in report.alerts] == ["sent"] * 4
    assert json.loads(json.dumps(report.to_dict()))["alerts"][0]["outcome"] == "sent"


def test_webhook_json_names_checkpoint_release_check_value_and_page(sent):
    report, _, by_path, _, _ = sent
    headers, body = by_path["/hook"]
    assert headers["Content-Type"].startswith("application/json")
    assert headers["Authorization"] == "Bearer TOKENSECRETXYZ"  # from the environment
    doc = _strict_json(body)
    assert doc["checkpoint"] == "toy" and doc["success"] is False and doc["status"] == "failed"
    assert doc["total_releases"] == 3
    assert [r["label"] for r in doc["releases"]] == [LABEL]  # the label exactly, JSON-escaped
    (check,) = doc["releases"][0]["checks"]
    assert check["check"] == "pairwise_precision" and check["severity"] == "critical"
    assert check["observed"] == pytest.approx(PRECISION_BETA, abs=1e-12)
    assert check["observed_text"].startswith("0.429")
    assert "at least 0.9" in check["expected"]
    (page,) = doc["releases"][0]["pages"]
    assert page.startswith("https://docs.example.org/er/validations/") and page.endswith(".html")
    local = report.data_docs_index.parent / page.removeprefix("https://docs.example.org/er/")
    from urllib.parse import unquote

    assert Path(unquote(str(local))).is_file()  # the link points at a page the run built
    assert doc["data_docs"] == "https://docs.example.org/er/index.html"
    assert "0.429" in doc["text"] and LABEL in doc["text"]


def test_slack_payload_is_block_kit_with_markup_escaped(sent):
    _, _, by_path, _, _ = sent
    doc = _strict_json(by_path["/services/T000/B000/SLACKSECRETXYZ"][1])
    assert doc["blocks"][0] == {"type": "header", "text": {"type": "plain_text",
                                                           "text": "toy: 1 of 3 releases failed"}}
    sections = [b["text"]["text"] for b in doc["blocks"] if b["type"] == "section"]
    release = sections[0]
    assert "pairwise_precision (critical): observed 0.429" in release
    assert "at least 0.9" in release
    assert "&lt;b onmouseover=\"x\"&gt;&amp;'beta&lt;/b&gt; &lt;!channel&gt;" in release
    assert "<!channel>" not in json.dumps(doc["blocks"]) and "<b " not in release
    assert "|Data Docs page>" in release and "<https://docs.example.org/er/validations/" in release
    assert sections[-1] == "<https://docs.example.org/er/index.html|Data Docs>"
    assert "toy: 1 of 3 releases failed" in doc["text"]


def test_teams_payload_is_an_adaptive_card(sent):
    _, _, by_path, _, _ = sent
    doc = _strict_json(by_path["/teams/webhookb2/TEAMSSECRETXYZ"][1])
    assert doc["type"] == "message"
    (attachment,) = doc["attachments"]
    assert attachment["contentType"] == "application/vnd.microsoft.card.adaptive"
    card = attachment["content"]
    assert card["type"] == "AdaptiveCard" and card["version"]
    assert {b["type"] for b in card["body"]} == {"RichTextBlock"}  # plain text runs, no markdown
    texts = ["".join(run["text"] for run in b["inlines"]) for b in card["body"]]
    assert texts[0] == "toy: 1 of 3 releases failed"
    assert any(t.startswith(f"{LABEL}: failed (4 of 5 checks passed)") for t in texts)
    assert any("pairwise_precision (critical): observed 0.429" in t for t in texts)
    links = [run["selectAction"]["url"] for b in card["body"] for run in b["inlines"] if "selectAction" in run]
    assert len(links) == 1 and links[0].startswith("https://docs.example.org/er/validations/")
    assert card["actions"] == [{"type": "Action.OpenUrl", "title": "Open Data Docs",
                                "url": "https://docs.example.org/er/index.html"}]


def test_email_is_received_with_every_value_html_escaped(sent):
    _, _, _, mails, _ = sent
    ((sender, receivers, raw),) = mails
    assert sender == "er-alerts@example.org"
    assert receivers == ["owner@example.org", "second@example.org"]
    message = email.message_from_bytes(raw)
    assert message["Subject"] == "[er-expectations] toy: 1 of 3 releases failed"
    html = next(part for part in message.walk() if part.get_content_type() == "text/html")
    body = html.get_payload(decode=True).decode(html.get_content_charset() or "utf-8")
    tags = _tags(body)
    assert "b" not in tags.tags and not any(name == "onmouseover" for name, _ in tags.attrs)
    assert "&lt;b onmouseover=&#34;x&#34;&gt;&amp;&#39;beta&lt;/b&gt; &lt;!channel&gt;" in body
    assert "pairwise_precision (critical): observed 0.429" in body
    assert 'href="https://docs.example.org/er/index.html"' in body


def test_no_secret_in_output_report_or_messages(sent):
    report, out, by_path, mails, secrets = sent
    shown = out + json.dumps(report.to_dict()) + "".join(b.decode() for _, b in by_path.values())
    shown += "".join(m[2].decode("utf-8", "replace") for m in mails)
    for value in secrets.values():
        assert value not in shown
    for token in ("SLACKSECRETXYZ", "TEAMSSECRETXYZ", "HOOKSECRETXYZ", "TOKENSECRETXYZ"):
        assert token not in shown
    assert "slack (${ERX_SLACK} = http://127.0.0.1:" in out
    for file in report.project_dir.rglob("*"):  # nor in the GX project (stored checkpoints ...)
        if file.is_file():
            content = file.read_bytes()
            assert not any(t.encode() in content for t in ("SLACKSECRETXYZ", "TEAMSSECRETXYZ",
                                                            "HOOKSECRETXYZ", "TOKENSECRETXYZ")), file


# -- notify_on ----------------------------------------------------------------------------------


def test_notify_on_failure_all_success(tmp_path, http_sink):
    base, received = http_sink
    actions = """\
  - build_data_docs
  - slack: {webhook: "${ERX_ON_FAILURE}"}
  - webhook: {url: "${ERX_ON_ALL}", notify_on: all}
  - microsoft_teams: {webhook: "${ERX_ON_SUCCESS}", notify_on: success}
"""
    env = {"ERX_ON_FAILURE": f"{base}/notify/failure", "ERX_ON_ALL": f"{base}/notify/all",
           "ERX_ON_SUCCESS": f"{base}/notify/success"}
    path = make_project(tmp_path, actions)
    with environment(**env):
        before = len(received)
        out = io.StringIO()
        passed = run_checkpoint(path, releases=["pred_alpha"], progress=False, out=out)
        paths = sorted(p for p, _, _ in received[before:])
        assert passed.success
        assert paths == ["/notify/all", "/notify/success"]
        assert [a.outcome for a in passed.alerts] == ["not needed", "sent", "sent"]
        assert "Alert not needed (notify_on: failure; no check failed): slack (${ERX_ON_FAILURE}" in out.getvalue()
        doc = _strict_json(next(b for p, _, b in received[before:] if p == "/notify/all"))
        assert doc["title"] == "toy: all 1 release passed" and doc["releases"] == []

        before = len(received)
        failed = run_checkpoint(path, progress=False, out=io.StringIO())
        paths = sorted(p for p, _, _ in received[before:])
        assert not failed.success
        assert paths == ["/notify/all", "/notify/failure"]


def test_parallel_deliveries_read_the_config_variables_one_at_a_time(tmp_path, http_sink, monkeypatch):
    """GX parses config_variables.yml with one module-level ruamel.yaml parser that is not
    thread-safe; deliveries run in parallel, and two reading it at once lost alerts under load
    ("'DocumentEndEvent' object has no attribute 'anchor'"). The reads are serialised: no two
    threads are ever inside it, and every target gets its message."""
    base, received = http_sink
    provider_class = config_provider._ConfigurationVariablesConfigurationProvider
    unlocked = provider_class.get_values
    inside, most, guard = [0], [0], threading.Lock()

    def slow_read(self):
        with guard:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        try:
            time.sleep(0.02)  # long enough for the other deliveries to arrive
            return unlocked(self)
        finally:
            with guard:
                inside[0] -= 1

    monkeypatch.setattr(provider_class, "get_values", slow_read)
    actions = "  - build_data_docs\n" + "".join(
        f'  - webhook: {{url: "${{ERX_PAR_{i}}}", notify_on: all}}\n' for i in range(6))
    path = make_project(tmp_path, actions)
    with environment(**{f"ERX_PAR_{i}": f"{base}/parallel/{i}" for i in range(6)}):
        before = len(received)
        report = run_checkpoint(path, releases=["pred_alpha"], progress=False, out=io.StringIO(),
                                err=io.StringIO())
    assert [a.outcome for a in report.alerts] == ["sent"] * 6, report.alerts
    assert sorted(p for p, _, _ in received[before:]) == [f"/parallel/{i}" for i in range(6)]
    assert most[0] == 1  # 2 or more before the reads were serialised


def test_the_serialised_reads_leave_the_provider_as_it_was():
    class Provider:
        def get_values(self):
            return {"A": "1"}

    class Context:
        config_provider = Provider()

    context = Context()
    with _serial_config_reads(context):
        assert "get_values" in vars(context.config_provider)
        assert context.config_provider.get_values() == {"A": "1"}
    assert "get_values" not in vars(context.config_provider)


# -- unreachable targets ------------------------------------------------------------------------


def test_unreachable_targets_warn_and_keep_results_and_exit_code(tmp_path, http_sink, capsys):
    base, _ = http_sink
    with closed_port() as closed, smtp_server(refuse=True) as (port, mailbox):
        actions = ALERTS % port
        path = make_project(tmp_path, actions)
        env = {"ERX_SLACK": f"{base}/fail/slack/SLACKSECRET500",
               "ERX_TEAMS": f"http://127.0.0.1:{closed}/teams/TEAMSSECRETREFUSED",
               "ERX_HOOK": f"{base}/slow/hook/HOOKSECRETSLOW", "ERX_HOOK_TOKEN": "tok-HOOKTOKEN"}
        with environment(**env):
            started = time.perf_counter()
            code = main(["run", str(path), "--no-progress"])
            elapsed = time.perf_counter() - started
    out, err = capsys.readouterr()
    assert code == 1  # beta failed its critical check: the alerts do not change the exit code
    assert elapsed < 30
    assert "warning: alert slack (${ERX_SLACK} = " in err and "HTTP 500" in err  # warnings: on stderr
    assert f"warning: alert microsoft_teams (${{ERX_TEAMS}} = http://127.0.0.1:{closed}/***)" in err
    assert "connection refused" in err
    assert "warning: alert webhook (${ERX_HOOK} = " in err and "no answer within 1 s" in err
    assert "warning: alert email (127.0.0.1:" in err and "550" in err
    assert mailbox.messages == []
    for token in ("SLACKSECRET500", "TEAMSSECRETREFUSED", "HOOKSECRETSLOW", "HOOKTOKEN"):
        assert token not in out + err
    project = tmp_path / "project"
    assert (project / "gx" / "uncommitted" / "data_docs" / "local_site" / "index.html").is_file()
    results = list((project / "gx" / "uncommitted" / "validations").rglob("*.json"))
    assert len(results) == 3


def test_smtp_server_down_is_a_warning(tmp_path):
    with closed_port() as closed:
        actions = (f"  - build_data_docs\n  - email: {{smtp_host: 127.0.0.1, smtp_port: {closed}, "
                   "security: none, sender: a@example.org, receivers: [b@example.org]}\n")
        path = make_project(tmp_path, actions)
        out = io.StringIO()
        report = run_checkpoint(path, progress=False, out=out, err=out)
    assert [a.outcome for a in report.alerts] == ["failed"]
    assert "warning: alert email (127.0.0.1:" in out.getvalue()
    assert report.data_docs_index is not None and report.data_docs_index.is_file()


def test_smtp_login_takes_the_password_from_the_environment(tmp_path):
    logins: list = []
    with smtp_server(logins=logins) as (port, mailbox), environment(ERX_SMTP_PASSWORD="pw-SMTPSECRET"):
        actions = (f"  - email:\n      smtp_host: 127.0.0.1\n      smtp_port: {port}\n"
                   "      security: none\n      sender: a@example.org\n      receivers: [b@example.org]\n"
                   "      login: alerts-user\n      password: ${ERX_SMTP_PASSWORD}\n")
        path = make_project(tmp_path, actions)
        out = io.StringIO()
        report = run_checkpoint(path, progress=False, out=out)
    assert logins == [("alerts-user", "pw-SMTPSECRET")]
    assert len(mailbox.messages) == 1 and [a.outcome for a in report.alerts] == ["sent"]
    assert "SMTPSECRET" not in out.getvalue() + json.dumps(report.to_dict())


def test_smtp_server_that_never_answers_times_out(tmp_path):
    with socket.socket() as silent:  # accepts connections (backlog) and never says hello
        silent.bind(("127.0.0.1", 0))
        silent.listen(5)
        port = silent.getsockname()[1]
        actions = (f"  - email: {{smtp_host: 127.0.0.1, smtp_port: {port}, security: none, "
                   "sender: a@example.org, receivers: [b@example.org], timeout: 1}\n")
        path = make_project(tmp_path, actions)
        out = io.StringIO()
        started = time.perf_counter()
        report = run_checkpoint(path, progress=False, out=out, err=out)
        elapsed = time.perf_counter() - started
    assert [a.outcome for a in report.alerts] == ["failed"]
    assert "no answer within 1 s" in out.getvalue()
    assert elapsed < 20
    assert socket.getdefaulttimeout() is None  # the default timeout is restored


def test_a_check_that_could_not_be_computed_is_reported_with_its_error(tmp_path, http_sink):
    import pandas as pd
    from support.toyproject import SUITE

    base, received = http_sink
    suite = SUITE.replace("  name_column: full_name\n", "  name_column: full_name\n  weights: {column: w}\n")
    path = make_toy(tmp_path, suite=suite, checkpoint=checkpoint_with(
        '  - webhook: {url: "${ERX_ERRORS}"}\n'))
    bench = pd.read_parquet(tmp_path / "data" / "benchmark.parquet")
    bench["w"] = [-1.0 if i < 4 else 0.25 for i in range(len(bench))]  # a negative weight raises
    bench.to_parquet(tmp_path / "data" / "benchmark.parquet", index=False)
    with environment(ERX_ERRORS=f"{base}/errors"):
        before = len(received)
        report = run_checkpoint(path, releases=["pred_alpha"], progress=False, out=io.StringIO())
    assert report.status == "error"
    (body,) = [b for p, _, b in received[before:] if p == "/errors"]
    doc = _strict_json(body)
    assert doc["title"] == "toy: 1 of 1 release could not be fully checked"
    (release,) = doc["releases"]
    assert release["status"] == "error"
    assert [c["check"] for c in release["checks"]] == ["pairwise_precision", "pairwise_recall"]
    assert all("weight -1.0" in c["error"] for c in release["checks"])
    assert "pairwise_precision (critical): could not be computed: weights column 'w'" in doc["text"]


# -- configuration errors: before any work ------------------------------------------------------


def _run_config_error(path: Path, **env: str) -> ConfigError:
    with environment(**env), pytest.raises(ConfigError) as caught:
        run_checkpoint(path, progress=False, out=io.StringIO())
    return caught.value


@pytest.mark.parametrize(("value", "expected"), [
    ("not a url", "contains spaces or control characters"),
    ("hooks.slack.com/services/T0/B0/SECRETVALUE", "is not an http:// or https:// URL"),
    ("ftp://example.org/SECRETVALUE", "is not an http:// or https:// URL"),
    ("https:///SECRETVALUE", "has no host name"),
    ("https://example.org:99999/SECRETVALUE", "has an invalid port"),
    ("   ", "is empty"),
])
def test_malformed_webhook_url_is_a_config_error_before_any_work(tmp_path, value, expected):
    path = make_project(tmp_path, '  - build_data_docs\n  - slack: {webhook: "${ERX_BAD}"}\n')
    error = _run_config_error(path, ERX_BAD=value)
    (issue,) = error.issues
    assert (issue.line, issue.column) == (16, 22)
    assert "actions[1].slack.webhook" in issue.message and "ERX_BAD" in issue.message
    assert expected in issue.message
    assert "SECRETVALUE" not in str(error)
    assert not (tmp_path / "project").exists()


def test_unset_variable_is_a_config_error_before_any_work(tmp_path, capsys):
    path = make_project(tmp_path, "  - build_data_docs\n  - webhook:\n      url: ${ERX_SURELY_UNSET_1}\n"
                                  "  - email:\n      smtp_host: ${ERX_SURELY_UNSET_2}\n"
                                  "      sender: a@example.org\n      receivers: [b@example.org]\n")
    os.environ.pop("ERX_SURELY_UNSET_1", None)
    os.environ.pop("ERX_SURELY_UNSET_2", None)
    code = main(["run", str(path), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2
    assert f"{path}:17:12: actions[1].webhook.url: the environment variable ERX_SURELY_UNSET_1 is not set" in err
    assert f"{path}:19:18: actions[2].email.smtp_host: the environment variable ERX_SURELY_UNSET_2 is not set" in err
    assert "export ERX_SURELY_UNSET_1=" in err
    assert not (tmp_path / "project").exists()


def test_bad_email_address_from_the_environment(tmp_path):
    path = make_project(tmp_path, "  - email: {smtp_host: localhost, sender: a@example.org, "
                                  "receivers: [\"${ERX_TO}\"]}\n")
    error = _run_config_error(path, ERX_TO="owner@example.org\nBcc: all@example.org")
    assert "actions[0].email.receivers[0]: not an e-mail address" in str(error)


@pytest.mark.parametrize(("written", "hint"), [
    ("https://hooks.slack.com/services/T0/B0/LITERALSECRET", "write 'webhook: ${SLACK_WEBHOOK}'"),
    ("$SLACK_HOOK", "write it as ${SLACK_HOOK} (with braces)"),
    ("https://hooks.slack.com/services/${LITERALSECRET}", "write 'webhook: ${SLACK_WEBHOOK}'"),
    ("12345", "write 'webhook: ${SLACK_WEBHOOK}'"),
])
def test_literal_secret_is_refused_at_its_position_without_echo(tmp_path, written, hint):
    path = make_project(tmp_path, f"  - build_data_docs\n  - slack:\n      notify_on: all\n"
                                  f"      webhook: {written}\n")
    with pytest.raises(ConfigError) as caught:
        load_checkpoint(path)
    (issue,) = caught.value.issues
    assert (issue.line, issue.column) == (18, 16)
    assert issue.message.startswith("actions[1].slack.webhook: a secret may not be written in the "
                                    "checkpoint file")
    assert hint in issue.hint
    assert "LITERALSECRET" not in str(caught.value) and "12345" not in str(caught.value)


def test_literal_header_value_and_bad_header_name_are_refused(tmp_path):
    path = make_project(tmp_path, '  - webhook:\n      url: "${A}"\n      headers:\n'
                                  "        Authorization: Bearer LITERALTOKEN\n"
                                  '        "X Bad": "${B}"\n')
    with pytest.raises(ConfigError) as caught:
        load_checkpoint(path)
    text = str(caught.value)
    assert "toy.yml:18:24: actions[0].webhook.headers.Authorization: a secret may not be written" in text
    assert 'headers: {<name>: "${ALERT_WEBHOOK_TOKEN}"}' in text
    assert "'X Bad' is not a header this action can set" in text
    assert "LITERALTOKEN" not in text


def test_literal_password_is_refused_and_lint_reports_it(tmp_path, capsys):
    path = make_project(tmp_path, "  - email:\n      smtp_host: smtp.example.org\n      sender: a@example.org\n"
                                  "      receivers: [b@example.org]\n      login: a@example.org\n"
                                  "      password: hunter2LITERAL\n")
    code = main(["validate", str(path)])
    err = capsys.readouterr()
    assert code == 2
    text = err.out + err.err
    assert f"{path}:20:17: actions[0].email.password: a secret may not be written" in text
    assert "password: ${SMTP_PASSWORD}" in text and "hunter2LITERAL" not in text


def test_other_option_errors(tmp_path):
    path = make_project(tmp_path, "  - slack: {webhook: \"${A}\", notify_on: always, timeout: 0}\n"
                                  "  - email: {smtp_host: h, sender: a@example.org, receivers: [], "
                                  "login: a@example.org}\n"
                                  "  - webhook: {url: \"${B}\", secret: x}\n"
                                  "  - build_data_docs: {base_url: \"docs.example.org\"}\n")
    with pytest.raises(ConfigError) as caught:
        load_checkpoint(path)
    text = str(caught.value)
    assert "actions[0].slack.notify_on: expected one of 'failure', 'all', 'success', 'critical', 'warning' or 'info'" in text
    assert "actions[0].slack.timeout" in text
    assert "actions[1].email.receivers: the list is empty" in text
    assert "unknown option 'secret' for action webhook" in text
    assert "actions[3].build_data_docs.base_url: expected an http(s) or file URL" in text


# -- renderers on hostile content ---------------------------------------------------------------


def _hostile_message(n_releases: int = 1) -> AlertMessage:
    check = FailedCheck(check="x<script>", expectation="expect_x", suite="s", severity="critical",
                        observed=float("nan"), observed_text='<img src=x onerror="alert(1)"> & more',
                        expected="is at most </li><li>injected", error=None)
    releases = tuple(
        ReleaseAlert(label=f"r{i} <a href='javascript:alert(1)'>click</a>\n\"quoted\"", status="failed",
                     evaluated=2, successful=1, checks=(check,), other_failed=1,
                     pages=(f"/tmp/site dir/<p{i}>.html",))
        for i in range(n_releases))
    return AlertMessage(checkpoint="cp", status="failed", success=False, run_name="cp",
                        run_time="2026-11-26T07:00:00+00:00", total_releases=n_releases,
                        releases=releases, warning_releases=("w<b>",), data_docs="/tmp/site dir/index.html",
                        results_folder="/tmp/r")


def test_hostile_values_html_escaped_in_email():
    subject, html = ErEmailRenderer(_hostile_message()).render()
    tags = _tags(html)
    assert set(tags.tags) <= {"html", "head", "meta", "title", "body", "h2", "p", "strong", "h3",
                              "ul", "li", "code"}
    assert tags.tags.count("li") == 2  # the check and the warning count; no injected item
    assert not any(value and "javascript:" in value for _, value in tags.attrs)
    assert "&lt;img src=x onerror=&#34;alert(1)&#34;&gt; &amp; more" in html
    assert "\n" not in subject and subject.startswith("[er-expectations] cp: 1 of 1 release failed")


def test_hostile_values_give_valid_json_payloads():
    message = _hostile_message()
    for payload in (slack_payload(message), ErTeamsRenderer(message).render(), message.to_json()):
        body = dumps(payload)
        assert _strict_json(body) == json.loads(body)
    doc = message.to_json()
    assert doc["releases"][0]["checks"][0]["observed"] is None  # NaN is not JSON
    slack = json.dumps(slack_payload(message)["blocks"])
    assert "<a href" not in slack and "<img" not in slack and "&lt;img src=x" in slack
    assert "/tmp/site dir/&lt;p0&gt;.html" in slack  # a local page is shown, not linked


def test_many_failed_releases_are_capped_in_slack():
    payload = slack_payload(_hostile_message(MAX_RELEASES + 7))
    sections = [b for b in payload["blocks"] if b["type"] == "section"]
    assert len(sections) == MAX_RELEASES + 1
    assert "… and 7 more releases failed" in sections[-1]["text"]["text"]
    assert len(payload["blocks"]) <= 50
    assert all(len(s["text"]["text"]) <= 3000 for s in sections)


def test_masker_hides_url_secrets_in_error_text():
    mask = Masker(["https://hooks.example.org/services/T0/B0/XYZ?key=abc"])
    text = ("HTTPSConnectionPool(host='hooks.example.org', port=443): Max retries exceeded with url: "
            "/services/T0/B0/XYZ?key=abc; https://hooks.example.org/services/T0/B0/XYZ?key=abc")
    shown = mask(text)
    assert "XYZ" not in shown and "key=abc" not in shown and "hooks.example.org" in shown
    assert Masker(["t"])("connection refused") == "connection refused"  # too short to hide


# -- the bundled PatentsView releases -----------------------------------------------------------


def test_patentsview_alert_names_the_failed_release_and_its_recall(tmp_path, http_sink):
    """2020-09-29 fails pairwise recall (0.897 < 0.9, README); both releases fail the drift check."""
    import shutil

    from support.toyproject import PV_DATA, REPO

    base, received = http_sink
    (tmp_path / "checkpoints").mkdir()
    shutil.copytree(REPO / "suites", tmp_path / "suites")
    text = (REPO / "checkpoints" / "patentsview.yml").read_text()
    text = text.replace("../er_expectations/data/patentsview", PV_DATA.as_posix())
    text = text.replace("  - build_data_docs\n", '  - build_data_docs\n  - slack: {webhook: "${ERX_PV}"}\n'
                                                 '  - webhook: {url: "${ERX_PV_JSON}"}\n')
    path = tmp_path / "checkpoints" / "patentsview.yml"
    path.write_text(text)
    with environment(ERX_PV=f"{base}/pv/slack", ERX_PV_JSON=f"{base}/pv/json"):
        before = len(received)
        report = run_checkpoint(path, releases=["2020-09-29", "2022-06-30"], progress=False,
                                out=io.StringIO())
    bodies = {p: b for p, _, b in received[before:]}
    assert sorted(bodies) == ["/pv/json", "/pv/slack"]
    september = next(r for r in report.releases if r.label == "2020-09-29")
    (recall,) = [f for f in september.critical_failures if f.label == "pairwise_recall"]
    doc = _strict_json(bodies["/pv/json"])
    # the fixed-subset change of the average cluster size fails both releases (README demo)
    assert doc["title"] == "patentsview: 2 of 2 releases failed"
    release = next(r for r in doc["releases"] if r["label"] == "2020-09-29")
    assert {r["label"] for r in doc["releases"]} == {"2020-09-29", "2022-06-30"}
    check = next(c for c in release["checks"] if c["check"] == "pairwise_recall")
    assert check["check"] == "pairwise_recall" and check["observed"] == recall.observed
    assert round(check["observed"], 3) == 0.897 and check["observed_text"].startswith("0.897 ± ")
    assert "Estimated pairwise recall of inventor_id is at least 0.9" in check["expected"]
    slack = _strict_json(bodies["/pv/slack"])
    section = next(b["text"]["text"] for b in slack["blocks"] if b["type"] == "section")
    assert "*2020-09-29: failed (" in section
    assert "pairwise_recall (critical): observed 0.897 ± " in section


def test_validate_leaves_the_variables_to_the_run(tmp_path, capsys):
    """A CI lint step without the secrets: `validate` passes, `run` refuses before any work."""
    path = make_project(tmp_path, '  - slack: {webhook: "${ERX_UNSET_WEBHOOK_FOR_LINT}"}\n')
    os.environ.pop("ERX_UNSET_WEBHOOK_FOR_LINT", None)
    assert main(["validate", str(path)]) == 0
    capsys.readouterr()
    assert main(["run", str(path), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "ERX_UNSET_WEBHOOK_FOR_LINT" in err and "is not set" in err


# -- notify_on: severity levels (issue 18 item 9) -------------------------------------------------

#: Alpha passes the critical precision check; the Hill number of order 2 is at least 1 for any
#: clustering, so ``max_value: 0.5`` fails on every release, with the severity written in.
LEVEL_SUITE = """\
suite: toy_checks
defaults:
  prediction_column: prediction
  reference_column: truth
expectations:
  - expectation: expect_estimated_pairwise_precision_to_be_between
    min_value: 0.9
  - expectation: expect_hill_number_to_be_between
    q: 2
    max_value: 0.5
    severity: %s
"""

LEVEL_ACTIONS = """\
  - webhook: {url: "${ERX_LEVEL_CRITICAL}", notify_on: critical}
  - webhook: {url: "${ERX_LEVEL_WARNING}", notify_on: warning}
  - webhook: {url: "${ERX_LEVEL_INFO}", notify_on: info}
  - webhook: {url: "${ERX_LEVEL_FAILURE}", notify_on: failure}
"""


@pytest.mark.parametrize(("severity", "expected"), [
    ("info", ["/level/failure", "/level/info"]),  # GX's failure: a check failed, whatever its severity
    ("warning", ["/level/failure", "/level/warning"]),
])
def test_notify_on_severity_levels(tmp_path, http_sink, severity, expected):
    base, received = http_sink
    path = make_toy(tmp_path, suite=LEVEL_SUITE % severity, checkpoint=checkpoint_with(LEVEL_ACTIONS))
    env = {f"ERX_LEVEL_{level.upper()}": f"{base}/level/{level}"
           for level in ("critical", "warning", "info", "failure")}
    with environment(**env):
        before = len(received)
        out = io.StringIO()
        report = run_checkpoint(path, releases=["pred_alpha"], progress=False, out=out)
    assert report.success  # only a warning/info check failed: the run passes
    assert sorted(p for p, _, _ in received[before:]) == expected
    assert "Alert not needed (notify_on: critical" in out.getvalue()


def test_notify_on_critical_is_failure(tmp_path, http_sink):
    base, received = http_sink
    path = make_toy(tmp_path, suite=LEVEL_SUITE % "info", checkpoint=checkpoint_with(LEVEL_ACTIONS))
    env = {f"ERX_LEVEL_{level.upper()}": f"{base}/level/{level}"
           for level in ("critical", "warning", "info", "failure")}
    with environment(**env):
        before = len(received)
        report = run_checkpoint(path, releases=["pred_beta"], progress=False, out=io.StringIO())
    assert not report.success  # beta fails the critical precision check (3/7 < 0.9)
    # GX's rule: a level sends when the WORST failed check is of that level (an info check failed too)
    assert sorted(p for p, _, _ in received[before:]) == ["/level/critical", "/level/failure"]


def test_notify_on_levels_rule():
    """One meaning of notify_on (issue 30 item 7): the CLI decides exactly as GX's own actions,
    for every value and every combination of failed severities (GX's should_notify is the oracle)."""
    import itertools

    from great_expectations.checkpoint.actions import should_notify
    from great_expectations.expectations.metadata_types import FailureSeverity

    from er_expectations.core.severity import NOTIFY_ON, SEVERITIES, wants_notification

    for n in range(len(SEVERITIES) + 1):
        for failed in itertools.combinations(SEVERITIES, n):
            worst = next((FailureSeverity(s) for s in SEVERITIES if s in failed), None)
            for notify_on in NOTIFY_ON:
                gx = should_notify(success=not failed, notify_on=notify_on, max_severity=worst)
                assert wants_notification(notify_on, failed_severities=failed) is gx, (notify_on, failed)
    assert wants_notification("failure", failed_severities=["info"])  # a warning/info failure is GX's failure
    assert not wants_notification("warning", failed_severities=["critical", "warning"])  # GX: the worst only
    with pytest.raises(ValueError, match="notify_on"):
        wants_notification("sometimes", failed_severities=())
