"""Shared by the workbench's web tests (tests/web): a small hostile project, the demo project
(PatentsView, release 2021-12-30), the web app with a test client over it (token cookie, signed
in, :func:`web_app`, :func:`web_client`, :func:`save`), ``er-expectations label serve`` in its
own process, and the chromium flags of Playwright (the network cut of :mod:`support.chromium`)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
from starlette.testclient import TestClient

from er_expectations.web.app import build_app
from er_expectations.web.model import Workspace
from support.chromium import OFFLINE_FLAGS

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "er_expectations" / "data" / "patentsview"
RELEASE = "inventor_id_20211230"
HOSTILE_NAME = "<script>alert(1)</script><img src=x onerror=alert(2)>"
FORMULA = '=HYPERLINK("http://example.invalid","click")'
BIG_ID = 2**62 + 1
LONG_TITLE = "A very long patent title " + "with many words " * 40 + "END-OF-TITLE"
#: chromium flags for Playwright: the network cut of tests/support/chromium.py, whose resolver rule
#: maps every host (the IP literal 127.0.0.1 too) to "not found" except localhost: the server's
#: own address is excluded as well, nothing else
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic", "--no-first-run",
                 "--disable-extensions", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--force-device-scale-factor=1", "--lang=en-US",
                 *(f"{flag} , EXCLUDE 127.0.0.1" for flag in OFFLINE_FLAGS)]


#: the address the in-process test clients use (the app is bound to it: Host and Origin checks)
PORT = 8766
BASE = f"http://127.0.0.1:{PORT}"
ORIGIN = {"Origin": BASE}
FORM = {**ORIGIN, "Content-Type": "application/x-www-form-urlencoded"}
JSON = {**ORIGIN, "Content-Type": "application/json"}


def web_app(project, *, token: str = "tok", folder: Path | None = None):
    """The web app over ``project`` (a :class:`Workspace` is made), bound to :data:`BASE`;
    ``folder``: team mode (the project's access file names the tokens)."""
    app = build_app(Workspace(project), token=token, folder=folder)
    app.guard.bind("127.0.0.1", PORT)
    return app


def web_client(app, *, token: str | None = None, name: str | None = None,
               raise_server_exceptions: bool = True) -> TestClient:
    """A test client of ``app``: with ``token``, the link opened once (its cookie kept); with
    ``name``, signed in under that name. Redirects are not followed (tests read them)."""
    c = TestClient(app.guard, base_url=BASE, follow_redirects=False, raise_server_exceptions=raise_server_exceptions)
    if token is not None:
        r = c.get(f"/?token={token}")
        assert r.status_code == 303, r.text
    if name is not None:
        r = c.post("/signin", content=f"name={name}", headers=FORM)
        assert r.status_code == 303, r.text
    return c


def save(client: TestClient, n: str = "1", **body):
    """POST a decision for draw ``n`` (labelled, nothing removed or added, version 0, unless ``body`` says)."""
    payload = {"status": "labelled", "removed": [], "added": [], "expected_version": 0, **body}
    return client.post(f"/api/draw/{n}/save", content=json.dumps(payload), headers=JSON)


def hostile_records() -> pd.DataFrame:
    """Ten records with integer ids (one beyond 2^53), two predicted clusters, hostile names."""
    ids = [1, 2, 3, 4, 5, 6, 7, BIG_ID, 9, 10]
    return pd.DataFrame({
        "rid": pd.Series(ids, dtype="int64"),
        "pred": ["c1", "c1", "c1", "c1", "c2", "c2", "c2", "c1", None, "c2"],
        "name": [HOSTILE_NAME, "John Smith", "Jon Smith", FORMULA, "Maria Núñez", "Maria Nunez", "Mario Nunez",
                 "Johnny Smith", "Nobody", "María Núñez"],
        "block": ["smith", "smith", "smith", "smith", "nunez", "nunez", "nunez", "smith", "x", "nunez"],
        "title": [LONG_TITLE, "t2", "t3", "t4", "t5", "t6", "t7", "t8", "t9", "t10"],
    })


def make_hostile_project(folder: Path):
    """A project on :func:`hostile_records` with three draws: the hostile record, record 5, record 2^62+1."""
    from er_expectations.labelling.project import init_project

    folder.mkdir(parents=True, exist_ok=True)
    hostile_records().to_parquet(folder / "records.parquet")
    pd.DataFrame({"draw": [1, 2, 3], "record_id": pd.Series([1, 5, BIG_ID], dtype="int64"),
                  "predicted_cluster": ["c1", "c2", "c1"], "removed": [[], [], []], "added": [[], [], []]}
                 ).to_parquet(folder / "sheet.parquet")
    return init_project(folder / "project", records=folder / "records.parquet", record_id="rid", prediction="pred",
                        name="name", block="block", attributes=["name", "block", "title"],
                        sample=folder / "sheet.parquet", double_label_share=0)


def make_demo_project(folder: Path, *, sample: Path | None = None):
    """The demo project: the bundled PatentsView records, release 2021-12-30, the 401 demo draws."""
    from er_expectations.labelling.project import init_project

    return init_project(folder, records=DATA / "records.parquet", predictions=DATA / "predictions.parquet",
                        record_id="mention_id", prediction=RELEASE, name=["name_first", "name_last"], block="block",
                        attributes=["name_first", "name_last", "block", "patent_date", "city", "country",
                                    "assignee_organization", "patent_title"],
                        sample=sample or DATA / "labels.parquet", double_label_share=0.1)


class Served:
    """``er-expectations label serve`` in its own process: its URL (with the token) and base."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.proc: subprocess.Popen | None = None
        self.url = self.base = ""

    def start(self, timeout: float = 120) -> Served:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen([str(Path(sys.executable).parent / "er-expectations"), "label", "serve",
                                      str(self.folder)],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                                     start_new_session=True)
        deadline = time.monotonic() + timeout
        lines = []
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            m = re.search(r"(http://\S+\?token=\S+)", line)
            if m:
                self.url = m.group(1)
                self.base = self.url.split("/?token=")[0]
                return self
        self.kill()
        raise RuntimeError("the workbench did not print its URL:\n" + "".join(lines))

    def kill(self, sig: int = signal.SIGKILL) -> int | None:
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, sig)
            try:
                return self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                return self.proc.wait(30)
        return None if self.proc is None else self.proc.returncode


