"""Install modes beyond the demo site: a site built from the wheel the way docs/hosting.md tells a site author
(a fresh virtual environment, `pip install`, `jupyter lite build` plain and with the kernel-runtime opt-in), and the
demo site on a host that sets no
headers (GitHub Pages). The core agent scenarios (agent_scenarios.py) run in each."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from agent_scenarios import core_agent_scenario
from lite_site import CONTENT, PageLog, new_recorded_page, serve

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from sitebuild.package import build_wheel  # noqa: E402
from sitebuild.pins import read_pins  # noqa: E402

HOSTING = (ROOT / "docs" / "hosting.md").read_text(encoding="utf-8")


def documented_steps() -> tuple[list[str], list[str], list[str]]:
    """The site author's commands, as docs/hosting.md gives them (nothing else: no file to add): the pip command,
    the plain `jupyter lite build` and the same build with the kernel-runtime addon turned on by its flag."""
    section = HOSTING.split("## Building a site (site authors)", 1)[1].split("\n## ", 1)[0]
    commands = [
        line.strip()
        for line in section.splitlines()
        if line.startswith("    pip install") or line.startswith("    jupyter lite build")
    ]
    pip, lite, opt_in = (shlex.split(c) for c in commands)
    return pip, lite, opt_in


KERNEL_SETTINGS = "@jupyterlite/pyodide-kernel-extension:kernel"
SHIPPED_RUNTIME = "./extensions/jupyterlab-webmcp-bridge/static/pyodide/pyodide.mjs"


def built_config(output: Path) -> dict:
    return json.loads((output / "jupyter-lite.json").read_text())["jupyter-config-data"]


@pytest.fixture(scope="module")
def author_env(tmp_path_factory):
    """A site author's environment and builds: the documented pip command in a fresh virtual environment (the
    wheel built from this checkout stands for the package name; the pins are the project's), then on a folder of
    notebooks with no other file: the documented plain `jupyter lite build`, the documented build with
    ``--webmcp-bridge-kernel-runtime``, and the plain build with the documented jupyter_lite_config.json key.
    Yields (env, {"plain" | "flag" | "config": output folder})."""
    pip, lite, opt_in = documented_steps()
    assert pip[:2] == ["pip", "install"] and pip[2] == "jupyterlab-webmcp-bridge"
    pins = read_pins()["jupyterlite"]
    for requirement in pip[3:]:  # the documented JupyterLite versions are the pinned ones
        name = re.split(r"[\[=]", requirement)[0]
        assert requirement.endswith(f"=={pins[name]}"), requirement
    assert lite[:3] == ["jupyter", "lite", "build"] and opt_in == [
        *lite[:3],
        "--webmcp-bridge-kernel-runtime",
        *lite[3:],
    ]
    work = tmp_path_factory.mktemp("author")
    env = work / "env"
    venv.EnvBuilder(with_pip=True).create(env)
    python = env / "bin" / "python"
    subprocess.run(
        [python, "-m", "pip", "install", "-q", "--disable-pip-version-check", str(build_wheel()), *pip[3:]], check=True
    )
    outputs = {}
    for kind, command in (("plain", lite), ("flag", opt_in), ("config", lite)):
        site = work / kind
        (site / "notebooks").mkdir(parents=True)
        (site / "notebooks" / "jupyterlite-empty.ipynb").write_bytes((CONTENT / "jupyterlite-empty.ipynb").read_bytes())
        if kind == "config":
            (site / "jupyter_lite_config.json").write_text(
                json.dumps({"WebmcpBridgeKernelRuntimeAddon": {"enabled": True}})
            )
        subprocess.run([env / "bin" / "jupyter", *command[1:]], cwd=site, check=True, capture_output=True)
        outputs[kind] = site / "_output"
    yield env, outputs


@pytest.fixture(scope="module")
def author_site(author_env):
    """The author's site built with the documented opt-in flag, served: yields its URL."""
    _, outputs = author_env
    server, url = serve(outputs["flag"])
    yield url
    server.shutdown()
    server.server_close()


def test_pip_install_puts_the_labextension_where_jupyter_finds_it(author_env):
    """The wheel installs the prebuilt labextension under the environment's share/jupyter/labextensions/, and the
    plain documented `jupyter lite build` picks it up with no other step."""
    env, outputs = author_env
    ext = env / "share" / "jupyter" / "labextensions" / "jupyterlab-webmcp-bridge"
    package = json.loads((ext / "package.json").read_text())
    assert package["jupyterlab"]["_build"]["load"] == "static/remoteEntry.js"
    assert json.loads((ext / "install.json").read_text())["packageName"] == "jupyterlab-webmcp-bridge"
    assert (ext / "schemas" / "jupyterlab-webmcp-bridge" / "plugin.json").is_file()
    assert (ext / "static" / "pyodide" / "pyodide.asm.wasm").is_file()
    for output in outputs.values():
        names = [e["name"] for e in built_config(output)["federated_extensions"]]
        assert "jupyterlab-webmcp-bridge" in names and "@jupyterlite/pyodide-kernel-extension" in names


def test_a_site_built_as_the_docs_say_keeps_its_kernels_own_pyodide(author_env):
    """Installing the wheel leaves the site's kernel as jupyterlite-pyodide-kernel sets it up: the plain build
    writes no pyodideUrl (the kernel loads its own Pyodide), exactly as a build without the bridge would."""
    env, outputs = author_env
    kernel = built_config(outputs["plain"]).get("litePluginSettings", {}).get(KERNEL_SETTINGS, {})
    assert "pyodideUrl" not in kernel, kernel
    # the build ran the kernel's own addons all the same (its piplite index is set), so the check is not vacuous
    assert any("/pypi/all.json" in u for u in kernel.get("pipliteUrls", [])), kernel


def test_the_opt_in_points_the_kernel_at_the_shipped_runtime(author_env):
    """Turned on by the documented flag or the documented jupyter_lite_config.json key, the addon sets the kernel's
    pyodideUrl to the runtime the extension ships, and that file is in the built site."""
    _, outputs = author_env
    for kind in ("flag", "config"):
        kernel = built_config(outputs[kind])["litePluginSettings"][KERNEL_SETTINGS]
        assert kernel["pyodideUrl"] == SHIPPED_RUNTIME, (kind, kernel)
        assert (outputs[kind] / SHIPPED_RUNTIME).is_file()


def test_a_site_built_as_the_docs_say_serves_the_agent(browser, author_site):
    """The agent's core scenarios on the author's site (built with the documented commands only, the kernel-runtime
    opt-in on); the bridge and the kernel run on the runtime the extension ships, and nothing leaves the site's
    origin (the scenario asserts zero requests to any other origin, the kernel's start and its first run included)."""
    url = author_site
    log = PageLog()
    context, page = new_recorded_page(browser, log)
    try:
        status = core_agent_scenario(page, log, url)
        assert status["runtime"]["url"] == f"{url}/extensions/jupyterlab-webmcp-bridge/static/pyodide/pyodide.mjs"
        assert any("/extensions/jupyterlab-webmcp-bridge/static/pyodide/ipython-" in u for u in log.requests), (
            "the kernel did not use the shipped runtime"
        )
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
