"""The loader's page-wide ``Atomics.waitAsync`` fix (lite/extension/static/remoteEntry.js, run by Node on the file the
wheel ships) is installed only on a page that runs the Pyodide kernel: one whose ``jupyter-config-data`` lists
``@jupyterlite/pyodide-kernel-extension`` among its federated extensions. A JupyterLab server's page, or a page whose
config cannot be read, keeps the runtime's own ``Atomics.waitAsync`` (``window.webmcpBridge.waitAsyncFix`` says
which). In a browser: test_site.py (installed) and test_lab_server.py (not needed).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LOADER = ROOT / "lite" / "extension" / "static" / "remoteEntry.js"

HARNESS = r"""
const fs = require("fs");
const [file, configText] = process.argv.slice(2);
const native = Atomics.waitAsync;
global.window = { location: { search: "", origin: "http://site" }, addEventListener() {}, dispatchEvent() {} };
global.CustomEvent = class { constructor(type, init) { this.type = type; this.detail = init && init.detail; } };
global.document = {
  currentScript: { src: "http://site/extensions/jupyterlab-webmcp-bridge/static/remoteEntry.js" },
  getElementById: id => (id === "jupyter-config-data" && configText !== "none" ? { textContent: configText } : null),
  querySelector: () => null, createElement: () => ({}), head: { appendChild() {} },
};
global.fetch = async () => ({ ok: true, json: async () => ({ bounds: {}, shared: {} }) });
console.warn = () => {};
console.error = () => {};
eval(fs.readFileSync(file, "utf8"));
// a reply already there: the wrapper hands it over as an asynchronous answer; the runtime's own answers at once
const buffer = new Int32Array(new SharedArrayBuffer(8));
buffer[0] = 1;
const answer = Atomics.waitAsync(buffer, 0, 0);
console.log(JSON.stringify({ fix: window.webmcpBridge.waitAsyncFix, wrapped: Atomics.waitAsync !== native,
                             async: answer.async,
                             thenable: typeof (answer.value && answer.value.then) === "function" }));
"""

KERNEL = {"name": "@jupyterlite/pyodide-kernel-extension", "load": "static/remoteEntry.js"}
BRIDGE = {"name": "jupyterlab-webmcp-bridge", "load": "static/remoteEntry.js"}


def run_loader(tmp_path: Path, config: str) -> dict:
    """Evaluate the loader under Node with this page config text (``"none"``: no jupyter-config-data element)."""
    if not shutil.which("node"):
        pytest.fail("node is needed (the machine setup installs it with npm)")
    harness = tmp_path / "harness.js"
    harness.write_text(HARNESS)
    done = subprocess.run(["node", str(harness), str(LOADER), config], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_page_with_the_pyodide_kernel_gets_the_fix(tmp_path):
    config = json.dumps({"federated_extensions": [KERNEL, BRIDGE]})
    assert run_loader(tmp_path, config) == {"fix": "installed", "wrapped": True, "async": True, "thenable": True}


@pytest.mark.parametrize(
    "config",
    [
        json.dumps({"federated_extensions": [BRIDGE]}),  # a JupyterLab server's page: no Pyodide kernel
        json.dumps({"baseUrl": "/"}),
        "none",  # no page config at all
        "{not json",  # a page config that cannot be read
    ],
)
def test_a_page_without_the_pyodide_kernel_keeps_the_runtimes_own_wait(tmp_path, config):
    assert run_loader(tmp_path, config) == {"fix": "not needed", "wrapped": False, "async": False, "thenable": False}
