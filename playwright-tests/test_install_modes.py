"""Install modes beyond the demo site: a site built from the wheel the way docs/hosting.md tells a site author
(a fresh virtual environment, `pip install`, `jupyter lite build`), and the demo site on a host that sets no
headers (GitHub Pages). The core agent scenarios (agent_scenarios.py) run in each."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import threading
import venv
from pathlib import Path

import pytest

from agent_scenarios import core_agent_scenario
from lite_site import CONTENT, PageLog, new_recorded_page

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from sitebuild.package import build_wheel  # noqa: E402
from sitebuild.pins import read_pins  # noqa: E402
from sitebuild.serve import make_server  # noqa: E402

HOSTING = (ROOT / "docs" / "hosting.md").read_text(encoding="utf-8")


def documented_steps() -> tuple[list[str], list[str]]:
    """The site author's two commands, as docs/hosting.md gives them (nothing else: no file to add)."""
    section = HOSTING.split("## Building a site (site authors)", 1)[1].split("\n## ", 1)[0]
    commands = [line.strip() for line in section.splitlines() if line.startswith("    pip install") or line.startswith("    jupyter lite build")]
    pip, lite = (shlex.split(c) for c in commands)
    return pip, lite


def serve(folder: Path, headers: dict | None = None):
    server = make_server(folder, port=0, quiet=True, headers=headers)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


@pytest.fixture(scope="module")
def author_site(tmp_path_factory):
    """A site built as a site author builds it: the documented pip command in a fresh virtual environment (the
    wheel built from this checkout stands for the package name; the pins are the project's), then the documented
    `jupyter lite build` on a folder of notebooks, with no other file. Yields (env, output folder, site URL)."""
    pip, lite = documented_steps()
    assert pip[:2] == ["pip", "install"] and pip[2] == "jupyterlab-webmcp-bridge"
    pins = read_pins()["jupyterlite"]
    for requirement in pip[3:]:  # the documented JupyterLite versions are the pinned ones
        name = re.split(r"[\[=]", requirement)[0]
        assert requirement.endswith(f"=={pins[name]}"), requirement
    work = tmp_path_factory.mktemp("author")
    env = work / "env"
    venv.EnvBuilder(with_pip=True).create(env)
    python = env / "bin" / "python"
    subprocess.run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", str(build_wheel()), *pip[3:]], check=True)
    site = work / "site"
    (site / "notebooks").mkdir(parents=True)
    (site / "notebooks" / "jupyterlite-empty.ipynb").write_bytes((CONTENT / "jupyterlite-empty.ipynb").read_bytes())
    assert lite[:3] == ["jupyter", "lite", "build"]
    subprocess.run([env / "bin" / "jupyter", *lite[1:]], cwd=site, check=True, capture_output=True)
    server, url = serve(site / "_output")
    yield env, site / "_output", url
    server.shutdown()
    server.server_close()


def test_pip_install_puts_the_labextension_where_jupyter_finds_it(author_site):
    """The wheel installs the prebuilt labextension under the environment's share/jupyter/labextensions/."""
    env, output, _ = author_site
    ext = env / "share" / "jupyter" / "labextensions" / "jupyterlab-webmcp-bridge"
    package = json.loads((ext / "package.json").read_text())
    assert package["jupyterlab"]["_build"]["load"] == "static/remoteEntry.js"
    assert json.loads((ext / "install.json").read_text())["packageName"] == "jupyterlab-webmcp-bridge"
    assert (ext / "schemas" / "jupyterlab-webmcp-bridge" / "plugin.json").is_file()
    assert (ext / "static" / "pyodide" / "pyodide.asm.wasm").is_file()
    # `jupyter lite build` picked it up with no other step
    config = json.loads((output / "jupyter-lite.json").read_text())["jupyter-config-data"]
    names = [e["name"] for e in config["federated_extensions"]]
    assert "jupyterlab-webmcp-bridge" in names and "@jupyterlite/pyodide-kernel-extension" in names
    # the wheel's build addon pointed the kernel at the runtime the extension ships (offline by default)
    kernel = config["litePluginSettings"]["@jupyterlite/pyodide-kernel-extension:kernel"]
    assert kernel["pyodideUrl"] == "./extensions/jupyterlab-webmcp-bridge/static/pyodide/pyodide.mjs", kernel


def test_a_site_built_as_the_docs_say_serves_the_agent(browser, author_site):
    """The agent's core scenarios on the author's site (built with the two documented commands only); the bridge
    and the kernel run on the runtime the extension ships, and nothing leaves the site's origin (the scenario
    asserts zero requests to any other origin, the kernel's start and its first run included)."""
    _, _, url = author_site
    log = PageLog()
    context, page = new_recorded_page(browser, log)
    try:
        status = core_agent_scenario(page, log, url)
        assert status["runtime"]["url"] == f"{url}/extensions/jupyterlab-webmcp-bridge/static/pyodide/pyodide.mjs"
        assert any("/extensions/jupyterlab-webmcp-bridge/static/pyodide/ipython-" in u for u in log.requests), "the kernel did not use the shipped runtime"
    finally:
        context.close()


def test_the_demo_site_works_on_a_host_without_headers(browser, site_dir):
    """Served with no COOP/COEP/CSP (GitHub Pages): the page is not cross-origin isolated, and the core agent
    scenarios still pass (the bridge needs no SharedArrayBuffer; the kernel takes its fallback path)."""
    server, url = serve(site_dir, headers={})
    log = PageLog()
    context, page = new_recorded_page(browser, log)
    try:
        core_agent_scenario(page, log, url)
        assert page.evaluate("() => [window.crossOriginIsolated, typeof SharedArrayBuffer]") == [False, "undefined"]
    finally:
        context.close()
        server.shutdown()
        server.server_close()
