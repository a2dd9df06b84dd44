"""Alert outcomes in the history store (issue 18, item 12): each run records, per alert target,
what became of it (sent, not needed, failed) with the failure's error text, secrets masked
and no absolute path of this machine; ``er-expectations history`` shows them with the run.

Hostile first: the webhook URL carries a secret token, the error names a file of the
project and one outside it, the store is unwritable when the alerts are recorded.
"""

from __future__ import annotations

import io
import json
import socket

from support.toyproject import CHECKPOINT, make_toy

from er_expectations.cli.main import main
from er_expectations.core.text import without_local_paths
from er_expectations.history.store import HistoryStore, default_url
from er_expectations.run.runner import run_checkpoint

SECRET = "s3cr3t-T0KEN-xyz"


def _project(tmp_path, actions: str):
    text = CHECKPOINT.replace("actions:\n  - build_data_docs\n", "actions:\n  - build_data_docs\n" + actions)
    return make_toy(tmp_path, checkpoint=text)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed when the block ends: nothing listens there


def test_a_failed_delivery_is_recorded_per_run_with_its_error_and_no_secret(tmp_path, monkeypatch, capsys):
    port = _closed_port()
    monkeypatch.setenv("ERX_HOOK", f"http://127.0.0.1:{port}/hook?token={SECRET}")
    path = _project(tmp_path, "  - webhook: {url: '${ERX_HOOK}', timeout: 1, notify_on: all}\n"
                              "  - webhook: {url: '${ERX_HOOK}', timeout: 1, notify_on: failure}\n")
    first = run_checkpoint(path, progress=False, out=io.StringIO(), err=io.StringIO(), releases=["alpha"])
    second = run_checkpoint(path, progress=False, out=io.StringIO(), err=io.StringIO(), releases=["alpha"])
    assert [a.outcome for a in first.alerts] == ["failed", "not needed"]  # alpha passes
    with HistoryStore.open(default_url(first.project_dir), create=False) as store:
        alerts = store.alerts("toy")
        one = store.alerts("toy", run_times=[first.run_time])
    assert len(alerts) == 4  # two targets, two runs: nothing merged, nothing lost
    assert list(one["outcome"]) == ["failed", "not needed"] and list(one["position"]) == [0, 1]
    assert set(alerts["gx_run_time"]) == {first.run_time, second.run_time}
    error = one["error"].iloc[0]
    assert "refused" in error.lower(), error
    stored = json.dumps(alerts.astype(str).to_dict(orient="records"))
    assert SECRET not in stored and str(tmp_path) not in stored
    assert one["error"].iloc[1] is None

    # the CLI shows them with the run whose results it prints, the JSON has them too
    capsys.readouterr()
    assert main(["history", str(path), "-e", "pairwise_precision"]) == 0
    out = capsys.readouterr().out
    assert "Alerts of these runs:" in out and out.count("NOT DELIVERED") == 1, out  # the latest run only
    assert "not needed" in out and SECRET not in out
    assert main(["history", str(path), "-e", "pairwise_precision", "--all-versions", "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert [a["outcome"] for a in document["alerts"]] == ["failed", "not needed", "failed", "not needed"]


def test_an_error_naming_local_files_is_stored_without_them(tmp_path, monkeypatch):
    from er_expectations.run.alerts import actions

    project = tmp_path / "project"
    inside = project / "gx" / "uncommitted" / "x.json"

    def fake_deliver(targets, *args, **kwargs):
        return [actions.AlertDelivery(t.kind, t.shown, "failed",
                                      f"OSError: cannot read {inside} nor /etc/ssl/certs/ca.pem; "
                                      "see https://docs.example.org/a/b") for t in targets]

    monkeypatch.setattr(actions, "deliver", fake_deliver)
    monkeypatch.setenv("ERX_HOOK", "http://127.0.0.1:9/hook")
    path = _project(tmp_path, "  - webhook: {url: '${ERX_HOOK}', timeout: 1, notify_on: all}\n")
    report = run_checkpoint(path, progress=False, out=io.StringIO(), err=io.StringIO(), releases=["beta"])
    with HistoryStore.open(default_url(report.project_dir), create=False) as store:
        (error,) = store.alerts("toy")["error"]
    assert error == ("OSError: cannot read <project>/gx/uncommitted/x.json nor <local path>; "
                     "see https://docs.example.org/a/b")


def test_an_unwritable_store_at_alert_time_warns_and_keeps_the_exit_code(tmp_path, monkeypatch):
    from er_expectations.history.store import HistoryError

    def broken(self, **kwargs):
        raise HistoryError("history database sqlite:///x: writing the alert deliveries failed: disk I/O error")

    monkeypatch.setattr(HistoryStore, "record_alerts", broken)
    monkeypatch.setenv("ERX_HOOK", f"http://127.0.0.1:{_closed_port()}/hook")
    path = _project(tmp_path, "  - webhook: {url: '${ERX_HOOK}', timeout: 1, notify_on: all}\n")
    err = io.StringIO()
    report = run_checkpoint(path, progress=False, out=io.StringIO(), err=err, releases=["alpha"])
    assert report.success and report.alerts[0].outcome == "failed"
    assert "the alert outcomes were not recorded in the history: history database" in err.getvalue()


def test_without_local_paths_on_hostile_text():
    cases = {
        "/home/u/.ssh/id_rsa": "<local path>",
        "C:\\Users\\me\\hook.txt failed": "<local path> failed",
        "https://hooks.slack.com/services/T/B/x": "https://hooks.slack.com/services/T/B/x",
        "ratio 3/7 and a/b": "ratio 3/7 and a/b",
        "[Errno 13] Permission denied: '/var/lib/x/y'": "[Errno 13] Permission denied: '<local path>'",
        "timeout 1 s": "timeout 1 s",
    }
    for text, expected in cases.items():
        assert without_local_paths(text) == expected, text
    assert without_local_paths("/p/roj/a.txt", project_dir="/p/roj") == "<project>/a.txt"
    assert without_local_paths("/p/roj2/a.txt", project_dir="/p/roj") == "<local path>"  # not the project


def test_a_hostile_reply_reaches_no_terminal_escape_no_token_and_no_flood(tmp_path, monkeypatch, capsys):
    """Hostile round 3, item 6: the server answers 500 with terminal escape sequences (colour, window
    title, screen clear, a bidi override), the request it got (the secret token in its query, as is,
    percent-encoded and cut in half), a password and 20 kB more. stderr, the history store and
    ``history`` (table and JSON) show none of it raw: no control character, no piece of the token
    of 8 characters or more, at most 300 characters of the reply."""
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer
    from urllib.parse import quote

    secret = "Zq9-" + SECRET + "-w8Rt"

    class Hostile(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - the name http.server calls
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            body = (f"\x1b[31mdenied\x1b[0m \x1b]0;pwned\x07\x1b[2J\u202egnirts for {self.path} "
                    f"({quote(secret, safe='')}) half {secret[: len(secret) // 2]} "
                    '{"password": "hunter22"}\r\n' + "A" * 20_000)
            data = body.encode("utf-8")
            self.send_response(500)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Hostile)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        monkeypatch.setenv("ERX_HOOK", f"http://127.0.0.1:{server.server_port}/hook?token={secret}")
        path = _project(tmp_path, "  - webhook: {url: '${ERX_HOOK}', timeout: 5, notify_on: all}\n")
        err = io.StringIO()
        report = run_checkpoint(path, progress=False, out=io.StringIO(), err=err, releases=["alpha"])
    finally:
        server.shutdown()
        server.server_close()
    capsys.readouterr()
    assert main(["history", str(path), "-e", "pairwise_precision"]) == 0
    table = capsys.readouterr().out
    assert main(["history", str(path), "-e", "pairwise_precision", "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    with HistoryStore.open(default_url(report.project_dir), create=False) as store:
        (stored,) = store.alerts("toy")["error"]
    (error,) = [a.error for a in report.alerts]
    (shown,) = [a["error"] for a in document["alerts"]]
    warning = next(line for line in err.getvalue().splitlines() if "was not delivered" in line)
    for text in (warning, table, stored, error, shown):
        assert not any(ord(c) < 32 or 0x7f <= ord(c) < 0xa0 or c == "\u202e" for c in text.replace("\n", "")), text
        assert all(secret[i:i + 8] not in text for i in range(len(secret) - 7)), text
        assert quote(secret, safe="") not in text and "hunter22" not in text
    assert error.startswith("HTTP 500") and "denied" in error and len(error) <= 300 and error.endswith("…")
    assert stored == error == shown
