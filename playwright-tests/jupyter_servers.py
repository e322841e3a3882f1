"""Jupyter servers with a real kernel for the server-mode tests (test_lab_server.py, test_notebook7_server.py).

- :func:`server_env`: a virtual environment holding the product's wheel, JupyterLab, Notebook 7 and ipykernel,
  installed with pip exactly as the README tells a user. It is made once per wheel (under
  ``.cache/server-env/<the wheel's cache key>/``, so both server test modules and a rerun on the same checkout
  share it; a changed wheel gets a new one). ``python playwright-tests/jupyter_servers.py prepare`` makes it
  ahead of pytest (``.ci/run`` does, so the install time shows apart from the tests').
- :func:`server_env` with ``rtc=True``: the same plus ``jupyter-collaboration`` (real-time collaboration: the
  notebook is a Yjs document the server holds, every browser session a peer of it), in a folder of its own, for
  test_rtc_server.py; ``prepare`` makes both.
- :func:`server_env` with ``charts=True``: the same plus Bokeh and its JupyterLab renderer (jupyter_bokeh) and Plotly,
  in a folder of its own, for the Bokeh plot and the Plotly figure of test_rendered_browser.py; ``prepare`` makes it
  too.
- ``WEBMCP_BRIDGE_SERVER_REQUIREMENTS`` (the canary, ``.ci/canary``): requirements, separated by spaces, that
  replace :data:`SERVER_REQUIREMENTS` (e.g. ``jupyterlab==4.7.0a2 notebook ipykernel``); never set by the gate.
- :func:`jupyter_server`: ``jupyter lab`` or ``jupyter notebook`` from it on 127.0.0.1 with token auth, over a
  root folder, its Jupyter config, data and runtime folders private to the test (nothing of the machine's own
  Jupyter setup reaches it), ``window.jupyterapp`` exposed for the tests that play the person.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
import venv
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from sitebuild.package import build_wheel  # noqa: E402
from sitebuild.util import CACHE  # noqa: E402

#: what a user installs beside the wheel (README, "In JupyterLab or Notebook 7")
SERVER_REQUIREMENTS = ["jupyterlab>=4.5,<5", "notebook>=7.5,<8", "ipykernel"]
#: what real-time collaboration adds (its 5.x line is the one for JupyterLab 4.5 and 4.6: jupyter-server-ydoc,
#: the collaborative drive and the shared models' UI)
RTC_REQUIREMENTS = ["jupyter-collaboration>=5,<6"]
#: what the rendered-output tests add: Bokeh and its JupyterLab renderer (jupyter_bokeh), the way a user shows a Bokeh
#: plot in JupyterLab, and Plotly (its wheel ships its JupyterLab renderer, jupyterlab-plotly)
CHART_REQUIREMENTS = ["bokeh>=3,<4", "jupyter_bokeh>=4,<5", "plotly>=6,<8"]
#: the environment variable that replaces SERVER_REQUIREMENTS (the canary's next JupyterLab)
REQUIREMENTS_VARIABLE = "WEBMCP_BRIDGE_SERVER_REQUIREMENTS"


def server_requirements(rtc: bool = False, charts: bool = False) -> list[str]:
    """The requirements installed beside the wheel: ``SERVER_REQUIREMENTS`` or the canary's replacement from
    ``WEBMCP_BRIDGE_SERVER_REQUIREMENTS`` (split on spaces), plus ``RTC_REQUIREMENTS`` when ``rtc`` and
    ``CHART_REQUIREMENTS`` when ``charts``."""
    replaced = os.environ.get(REQUIREMENTS_VARIABLE, "").split()
    return [
        *(replaced or SERVER_REQUIREMENTS),
        *(RTC_REQUIREMENTS if rtc else []),
        *(CHART_REQUIREMENTS if charts else []),
    ]


#: a cold `jupyter lab` start on a busy 2-core machine
START_TIMEOUT_S = 180
#: Playwright's waits on a server's page (its default is 30 s): JupyterLab from a server, then the bridge's own
#: Pyodide, on a busy 2-core machine
SLOW_MS = 90_000


def server_env(rtc: bool = False, charts: bool = False) -> Path:
    """The environment's folder (made if missing): ``bin/jupyter`` of it serves JupyterLab and Notebook 7; with
    ``rtc``, with jupyter-collaboration installed (``.cache/server-env-rtc/``); with ``charts``, with Bokeh and its
    renderer (``.cache/server-env-charts/``). One folder per wheel and requirements (``server_requirements``); an
    older one of the same kind is removed."""
    wheel = build_wheel()
    requirements = server_requirements(rtc, charts)
    key, kind = wheel.parent.name, "server-env-rtc" if rtc else "server-env-charts" if charts else "server-env"
    if os.environ.get(REQUIREMENTS_VARIABLE, "").split():  # the canary's: apart, so neither removes the other
        key += "-" + hashlib.sha256(" ".join(requirements).encode()).hexdigest()[:8]
        kind += "-canary"
    env = CACHE / kind / key
    if (env / "installed").is_file():
        return env
    for old in env.parent.glob("*") if env.parent.exists() else []:
        shutil.rmtree(old, ignore_errors=True)  # an older wheel's environment, or an interrupted install
    print(f"[servers] pip install {wheel.name} {' '.join(requirements)} into {env}", flush=True)
    started = time.monotonic()
    venv.EnvBuilder(with_pip=True).create(env)
    subprocess.run(
        [
            env / "bin" / "python",
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            *(["--pre"] if os.environ.get(REQUIREMENTS_VARIABLE, "").split() else []),
            str(wheel),
            *requirements,
        ],
        check=True,
    )
    (env / "installed").write_text(wheel.name + "\n")
    print(f"[servers]   done in {time.monotonic() - started:.0f} s", flush=True)
    return env


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Server:
    """A running server: its base URL, token, root folder (the workspace on disk) and environment."""

    app: str
    base: str
    token: str
    root: Path
    env: Path
    log: Path

    def page(self, path: str, *, reset: bool = True) -> str:
        """The URL of notebook ``path`` in this server's app (``/lab/tree/<path>`` or ``/notebooks/<path>``);
        ``reset`` starts JupyterLab from an empty workspace (no notebook of an earlier test reopened)."""
        prefix = "lab/tree" if self.app == "lab" else "notebooks"
        query = f"token={self.token}" + ("&reset" if reset and self.app == "lab" else "")
        return f"{self.base}/{prefix}/{quote(path)}?{query}"

    def log_tail(self, chars: int = 3000) -> str:
        return self.log.read_text(errors="replace")[-chars:]


@contextmanager
def jupyter_server(app: str, work: Path, rtc: bool = False, charts: bool = False) -> Iterator[Server]:
    """``jupyter <app>`` ("lab" or "notebook") from :func:`server_env` (``rtc``: the one with jupyter-collaboration;
    ``charts``: the one with Bokeh) with ``work/root`` as its root; yields a :class:`Server` once ``/api/status``
    answers, stops it (and its kernels) afterwards."""
    env = server_env(rtc, charts)
    root = work / "root"
    root.mkdir(parents=True, exist_ok=True)
    private = {name: work / "jupyter" / name for name in ("config", "data", "runtime", "ipython")}
    for folder in private.values():
        folder.mkdir(parents=True, exist_ok=True)
    environ = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(private["config"]),
        "JUPYTER_DATA_DIR": str(private["data"]),
        "JUPYTER_RUNTIME_DIR": str(private["runtime"]),
        "IPYTHONDIR": str(private["ipython"]),
        "JUPYTER_PLATFORM_DIRS": "1",
        "PATH": f"{env / 'bin'}:{os.environ.get('PATH', '')}",
    }
    environ.pop("PYTHONPATH", None)  # the server runs the installed wheel, never this checkout's sources
    port, token = free_port(), secrets.token_hex(16)
    expose = "LabApp" if app == "lab" else "JupyterNotebookApp"
    log = work / f"{app}-server.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [
                env / "bin" / "jupyter",
                app,
                "--allow-root",
                "--no-browser",
                "--ServerApp.ip=127.0.0.1",
                f"--ServerApp.port={port}",
                f"--IdentityProvider.token={token}",
                f"--ServerApp.root_dir={root}",
                f"--{expose}.expose_app_in_browser=True",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=environ,
            cwd=root,
        )
    server = Server(app, f"http://127.0.0.1:{port}", token, root, env, log)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                with urllib.request.urlopen(f"{server.base}/api/status?token={token}", timeout=5) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"jupyter {app} did not start (exit {proc.poll()}); its log ends:\n{server.log_tail()}")
            time.sleep(0.5)
        yield server
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


if __name__ == "__main__":  # `python playwright-tests/jupyter_servers.py prepare` (used by .ci/run)
    if sys.argv[1:] == ["prepare"]:
        # the environments two at a time: the installs wait mostly on the index and the disk, not on the two cores
        from concurrent.futures import ThreadPoolExecutor

        build_wheel()  # once, before the installs ask for it
        with ThreadPoolExecutor(2) as pool:
            kinds = ({}, {"rtc": True}, {"charts": True})
            for made in pool.map(lambda kind: server_env(**kind), kinds):
                print(made)
    elif sys.argv[1:] == ["prepare-server"]:  # the canary's: no RTC environment
        print(server_env())
    else:
        sys.exit("usage: jupyter_servers.py prepare | prepare-server")
