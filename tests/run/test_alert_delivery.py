"""Alert delivery (issue 18, items 12 and 15): one wall-clock limit per delivery, every target
at once, failures on stderr and in the report, "Done" printed after them.

A "drip" server (a thread with a socket, bound to 127.0.0.1) answers one byte every 0.2 s:
each read arrives well within the target's ``timeout``, so only a limit on the whole delivery
ends it.
"""

from __future__ import annotations

import io
import json
import socket
import threading
import time
from contextlib import contextmanager

from support.toyproject import CHECKPOINT, make_toy

from er_expectations.cli.main import main
from er_expectations.run.runner import run_checkpoint


@contextmanager
def drip_server(answer: bytes, *, every: float = 0.2, greet: bool = False):
    """Accepts connections; sends ``answer`` one byte every ``every`` seconds (right away for an
    SMTP greeting with ``greet``, after reading the request for HTTP). Yields the port."""
    stop = threading.Event()
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.1)
    connections: list[socket.socket] = []

    def drip(conn: socket.socket) -> None:
        try:
            if not greet:
                conn.settimeout(2)
                conn.recv(65536)  # the request (headers and a small body)
            for byte in answer:
                if stop.wait(every):
                    return
                conn.sendall(bytes([byte]))
        except OSError:
            pass

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except (TimeoutError, OSError):
                continue
            connections.append(conn)
            threading.Thread(target=drip, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join(2)
        for conn in connections:
            conn.close()
        listener.close()


SLOW_HTTP = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok" + b" " * 200
SLOW_SMTP = b"220 " + b"x" * 200 + b"\r\n"


def _project(tmp_path, actions: str):
    text = CHECKPOINT.replace("actions:\n  - build_data_docs\n", "actions:\n  - build_data_docs\n" + actions)
    return make_toy(tmp_path, checkpoint=text)


def test_a_dripping_webhook_and_smtp_server_are_given_up_at_their_timeout(tmp_path, monkeypatch):
    took = _timed(monkeypatch)
    with drip_server(SLOW_HTTP) as http, drip_server(SLOW_SMTP, greet=True) as smtp:
        monkeypatch.setenv("ERX_DRIP_HOOK", f"http://127.0.0.1:{http}/hook")
        path = _project(tmp_path, (
            "  - webhook: {url: '${ERX_DRIP_HOOK}', timeout: 1, notify_on: all}\n"
            f"  - email: {{smtp_host: 127.0.0.1, smtp_port: {smtp}, security: none, sender: a@example.org,"
            " receivers: [b@example.org], timeout: 1, notify_on: all}\n"))
        out, err = io.StringIO(), io.StringIO()
        report = run_checkpoint(path, progress=False, out=out, err=err, releases=["alpha"])
    assert [a.outcome for a in report.alerts] == ["failed", "failed"]
    assert all("not delivered within 1 s" in a.error for a in report.alerts)
    # both at once: about 1 s for the two of them, not 2 s, and not the 40 s of the drip
    (seconds,) = took
    assert 0.9 < seconds < 1.9, seconds
    text = err.getvalue()
    assert text.count("was not delivered") == 2 and "warning: alert webhook" in text
    assert "warning: alert email" in text and "was not delivered" not in out.getvalue()
    assert out.getvalue().rstrip().splitlines()[-1].startswith("Done in ")
    for thread in threading.enumerate():  # the deliveries given up end once their server is gone
        if thread.name.startswith("er-alert-"):
            thread.join(5)
    assert socket.getdefaulttimeout() is None


def _timed(monkeypatch) -> list[float]:
    """Durations of the alert phase (:func:`deliver`, wrapped) of the runs that follow."""
    from er_expectations.run.alerts import actions

    took: list[float] = []
    real = actions.deliver

    def timed(*args, **kwargs):
        started = time.monotonic()
        try:
            return real(*args, **kwargs)
        finally:
            took.append(time.monotonic() - started)

    monkeypatch.setattr(actions, "deliver", timed)
    return took


def test_targets_are_sent_to_at_once_within_one_limit(tmp_path, monkeypatch):
    took = _timed(monkeypatch)
    with drip_server(SLOW_HTTP) as http:
        for i in range(4):
            monkeypatch.setenv(f"ERX_DRIP_HOOK_{i}", f"http://127.0.0.1:{http}/hook/{i}")
        hooks = "".join(f"  - webhook: {{url: '${{ERX_DRIP_HOOK_{i}}}', timeout: 1.5, notify_on: all}}\n"
                        for i in range(4))
        report = run_checkpoint(_project(tmp_path, hooks), progress=False, out=io.StringIO(),
                                err=io.StringIO(), releases=["alpha"])
    assert [d.outcome for d in report.alerts] == ["failed"] * 4
    (seconds,) = took
    assert 1.4 < seconds < 3.5, seconds  # four targets of 1.5 s each, in parallel: not 6 s


def test_failures_reach_stderr_the_json_report_and_done_comes_last(tmp_path, capsys, monkeypatch):
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        monkeypatch.setenv("ERX_CLOSED_HOOK", f"http://127.0.0.1:{closed.getsockname()[1]}/hook")
        path = _project(tmp_path, "  - webhook: {url: '${ERX_CLOSED_HOOK}', timeout: 1, notify_on: all}\n")
        code = main(["run", str(path), "--no-progress", "--release", "alpha", "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0
    document = json.loads(out)  # stdout holds the JSON document only
    assert document["schema"] == "er-expectations/run-report" and document["version"] == 2
    (alert,) = document["alerts"]
    assert alert["outcome"] == "failed" and "refused" in alert["error"]
    assert "warning: alert webhook" in err and "connection refused" in err
    assert err.rstrip().splitlines()[-1].startswith("Done in ")


def test_the_webhook_json_has_its_schema_and_no_local_absolute_path(tmp_path, monkeypatch):
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    received: list[bytes] = []

    class Hook(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - http.server's name
            received.append(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("ERX_LOCAL_HOOK", f"http://127.0.0.1:{server.server_address[1]}/hook")
        path = _project(tmp_path, "  - webhook: {url: '${ERX_LOCAL_HOOK}', notify_on: all}\n")
        report = run_checkpoint(path, progress=False, out=io.StringIO(), err=io.StringIO())
    finally:
        server.shutdown()
        server.server_close()
    (body,) = received
    text = body.decode("utf-8")
    document = json.loads(text)
    assert document["schema"] == "er-expectations/alert" and document["version"] == 2
    assert str(tmp_path) not in text and "/tmp" not in text  # no path of this machine
    assert document["data_docs"] == "gx/uncommitted/data_docs/local_site/index.html"
    assert document["results_folder"] == "gx/uncommitted/validations"
    (failed,) = document["releases"]
    (page,) = failed["pages"]
    assert (report.project_dir / page).is_file() and not page.startswith("/")
    assert "project_dir" not in document
