"""The workbench's server: erx.workbench from a notebook, ``label serve`` stopped by signals,
bad --host/--port refused, the warning for an address other machines reach (issue 19)."""

from __future__ import annotations

import signal
import subprocess
import sys
import warnings
from pathlib import Path

import httpx2 as httpx  # the client starlette's TestClient uses (the dev extra)
import pytest
from support.workbench_web import Served, make_hostile_project

import er_expectations as erx
from er_expectations.core.errors import InputError
from er_expectations.web.server import RemoteHostWarning, is_loopback, open_server


def test_erx_workbench_serves_and_stops(tmp_path):
    make_hostile_project(tmp_path).close()
    bench = erx.workbench(tmp_path / "project")
    try:
        assert bench.url.startswith("http://127.0.0.1:") and "?token=" in bench.url
        with httpx.Client(follow_redirects=False) as client:
            r = client.get(bench.url)
            assert r.status_code == 303 and r.headers["location"] == "/"
            assert client.get(bench.url.split("?")[0]).status_code == 303  # the cookie: on to sign-in
        assert httpx.get(bench.url.split("?")[0]).status_code == 403  # no token
        assert bench.url in bench._repr_html_()
    finally:
        bench.stop()
    with pytest.raises(httpx.ConnectError):
        httpx.get(bench.url, timeout=2)
    bench.stop()  # twice is fine


def test_from_the_package_the_name_is_the_function_after_the_labelling_layer_is_imported():
    from er_expectations.labelling import store  # noqa: F401 - the labelling layer imported first

    assert callable(erx.workbench) and erx.workbench.__module__ == "er_expectations.web.server"


@pytest.mark.parametrize(("host", "loopback"), [("127.0.0.1", True), ("localhost", True), ("127.0.0.2", True),
                                                ("::1", True), ("[::1]", True), ("0.0.0.0", False),
                                                ("192.168.1.5", False), ("example.org", False),
                                                # hostile round 3, item 9: other spellings of loopback
                                                ("127.1", True), ("127.0.1", True), ("0x7f.1", True),
                                                ("2130706433", True), ("0177.0.0.1", True), ("LOCALHOST", True),
                                                ("localhost.", True), ("app.localhost", True),
                                                ("::ffff:127.0.0.1", True), ("0:0:0:0:0:0:0:1", True),
                                                ("128.1", False), ("::ffff:10.0.0.1", False), ("1.2.3.4.5", False),
                                                ("notlocalhost", False), ("localhost.example.org", False)])
def test_which_hosts_are_this_machine_only(host, loopback):
    assert is_loopback(host) is loopback


def test_bad_addresses_are_refused_before_anything_runs(tmp_path):
    make_hostile_project(tmp_path).close()
    for kwargs, needle in (({"port": 70000}, "port"), ({"port": -1}, "port"), ({"port": True}, "port"),
                           ({"host": ""}, "host"), ({"host": "no-such-host.invalid"}, "host")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RemoteHostWarning)
            with pytest.raises(InputError, match=needle):
                open_server(tmp_path / "project", **kwargs)
    with pytest.raises(InputError, match="no such project folder"):
        open_server(tmp_path / "nowhere")


def test_127_1_serves_on_loopback_without_the_warning(tmp_path):
    """``--host 127.1`` binds 127.0.0.1: no warning that other machines may reach it."""
    make_hostile_project(tmp_path).close()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RemoteHostWarning)
        bench = erx.workbench(tmp_path / "project", host="127.1")
    try:
        assert bench.url.startswith("http://127.1:")
    finally:
        bench.stop()


def test_a_port_in_use_is_a_clear_error(tmp_path):
    make_hostile_project(tmp_path).close()
    bench = erx.workbench(tmp_path / "project")
    try:
        with pytest.raises(InputError, match="cannot listen on 127.0.0.1"):
            open_server(tmp_path / "project", port=bench.port)
    finally:
        bench.stop()


def _cli(*args: str) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).parent / "er-expectations"
    return subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=120)


def test_cli_refuses_a_bad_port_and_a_missing_project(tmp_path):
    r = _cli("label", "serve", str(tmp_path), "--port", "70000")
    assert r.returncode == 2 and "port" in r.stderr
    r = _cli("label", "serve", str(tmp_path / "nowhere"))
    assert r.returncode == 2 and "no such project folder" in r.stderr


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signals_stop_the_server_cleanly(tmp_path, sig):
    make_hostile_project(tmp_path).close()
    served = Served(tmp_path / "project").start()
    assert httpx.get(served.url, follow_redirects=False).status_code == 303
    code = served.kill(sig)
    rest = served.proc.stdout.read()
    assert code == 0, rest
    assert "workbench stopped" in rest


def test_accepted_connections_have_tcp_nodelay(tmp_path):
    """Issue 31: the listening socket names IPPROTO_TCP, so asyncio sets TCP_NODELAY on every
    accepted connection (with proto 0 it did not, and each keep-alive answer waited for the
    client's delayed ACK)."""
    import socket

    make_hostile_project(tmp_path).close()
    bench = erx.workbench(tmp_path / "project")
    try:
        with httpx.Client(follow_redirects=False) as client:
            assert client.get(bench.url).status_code == 303  # a keep-alive connection, still open
            connections = list(bench._server.inner.server_state.connections)
            assert connections
            for conn in connections:
                sock = conn.transport.get_extra_info("socket")
                assert sock.proto == socket.IPPROTO_TCP
                assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
    finally:
        bench.stop()
