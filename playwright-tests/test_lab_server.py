"""A JupyterLab server with a real kernel: `pip install <the wheel> jupyterlab ipykernel` in a fresh virtual
environment, `jupyter lab` on 127.0.0.1 with token auth, and the core agent scenarios on a notebook that lives
on the server (contents through the server, an ipykernel kernel). The bridge runs on the Pyodide runtime its
extension ships, served by the server from the labextension's static folder."""

from __future__ import annotations

import json
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
import venv
from pathlib import Path

import pytest

from agent_scenarios import core_agent_scenario, open_in
from lite_site import CONTENT, PageLog, new_recorded_page
from test_tools import ok

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from sitebuild.package import build_wheel  # noqa: E402

NOTEBOOK = "jupyterlite-empty.ipynb"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def lab_server(tmp_path_factory):
    """`jupyter lab` from a fresh environment holding the wheel; yields (base URL, token, root folder)."""
    work = tmp_path_factory.mktemp("lab")
    env = work / "env"
    venv.EnvBuilder(with_pip=True).create(env)
    subprocess.run([env / "bin" / "python", "-m", "pip", "install", "-q", "--disable-pip-version-check", str(build_wheel()),
                    "jupyterlab>=4.5,<5", "ipykernel"], check=True)
    listed = subprocess.run([env / "bin" / "jupyter", "labextension", "list"], capture_output=True, text=True)
    assert "webmcp-bridge v0.1.0" in listed.stdout + listed.stderr and "jupyterlab-webmcp-bridge" in listed.stdout + listed.stderr
    root = work / "root"
    root.mkdir()
    (root / NOTEBOOK).write_bytes((CONTENT / NOTEBOOK).read_bytes())
    port, token = free_port(), secrets.token_hex(16)
    log = (work / "server.log").open("w")
    proc = subprocess.Popen([env / "bin" / "jupyter", "lab", "--allow-root", "--no-browser", "--ServerApp.ip=127.0.0.1",
                             f"--ServerApp.port={port}", f"--ServerApp.token={token}", f"--ServerApp.root_dir={root}"],
                            stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    for _ in range(120):
        try:
            with urllib.request.urlopen(f"{base}/api/status?token={token}") as response:
                if response.status == 200:
                    break
        except OSError:
            time.sleep(0.5)
    else:
        proc.terminate()
        pytest.fail("jupyter lab did not start")
    yield base, token, root
    proc.terminate()
    proc.wait(timeout=20)
    log.close()


def test_core_agent_scenarios_in_a_jupyterlab_server(browser, lab_server):
    base, token, root = lab_server
    log = PageLog()
    context, page = new_recorded_page(browser, log)
    try:
        status = core_agent_scenario(page, log, base, name=NOTEBOOK, url=f"{base}/lab/tree/{NOTEBOOK}?token={token}")
        assert status["runtime"] == {"source": "shipped", "url": f"{base}/lab/extensions/webmcp-bridge/static/pyodide/pyodide.mjs"}
        assert ok(page, "jupyter_get_context")["kernel"]["name"] == "python3"  # ipykernel, not Pyodide
    finally:
        context.close()


def test_two_tabs_of_a_server_notebook_never_both_save(browser, lab_server):
    """Two tabs of one browser on a notebook of the server: the save check compares the server's content hash, and
    the check and the write are one step for both tabs (test_two_tabs.py has the JupyterLite rounds)."""
    from test_two_tabs import CELL, PATH, agents_race, live_source, wait_other_tabs

    base, token, root = lab_server
    name = PATH
    (root / name).write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "id": CELL, "metadata": {}, "source": "start = 0", "outputs": [], "execution_count": None}]}))
    log = PageLog()
    context, a = new_recorded_page(browser, log)
    try:
        b = context.new_page()
        b.on("pageerror", lambda error: log.page_errors.append(f"page b: {error}"))
        for page in (a, b):
            assert open_in(page, base, "lab", name, f"{base}/lab/tree/{name}?token={token}")["state"] == "ready"
        wait_other_tabs(a, 1)
        for r in range(3):
            agents_race(a, b, r, lambda: "".join(json.loads((root / name).read_text())["cells"][0]["source"]), live_source)
        assert not log.own_page_errors()
    finally:
        context.close()
