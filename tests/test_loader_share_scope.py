"""The loader's share-scope lookup (lite/extension/static/remoteEntry.js, run by Node on the file the wheel ships):
each JupyterLab package is taken only in a version within the range package.json declares for it; a required
package out of range fails the bridge with a message naming the range and the versions offered (the page keeps a
plugin that only shows that in the status bar), an optional one is done without. Before, the first version in the
share scope was taken whatever it was. The share scope below stands in for JupyterLab's (``{package: {version:
{get, loaded}}}``); the real one is used by every browser test.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from sitebuild.extension import shared_ranges  # noqa: E402
from sitebuild.util import BuildError  # noqa: E402

LOADER = ROOT / "lite" / "extension" / "static" / "remoteEntry.js"
PACKAGE = json.loads((ROOT / "lite" / "extension" / "package.json").read_text())
RANGES = PACKAGE["dependencies"]

HARNESS = r"""
const fs = require("fs");
const [file, manifestJson, scopeJson] = process.argv.slice(2);
const manifest = JSON.parse(manifestJson);
const logs = [];
global.window = { location: { search: "", origin: "http://site" }, addEventListener() {}, dispatchEvent() {} };
global.CustomEvent = class { constructor(type, init) { this.type = type; this.detail = init && init.detail; } };
global.document = {
  currentScript: { src: "http://site/extensions/jupyterlab-webmcp-bridge/static/remoteEntry.js" },
  getElementById: () => null, querySelector: () => null, createElement: () => ({}), head: { appendChild() {} },
};
global.fetch = async url => ({ ok: true, json: async () => (String(url).endsWith("bridge.json") ? manifest : {
  definitions: [], toolsets: [] }) });
console.warn = (...a) => logs.push(["warn", a.map(String).join(" ")]);
console.error = (...a) => logs.push(["error", a.map(String).join(" ")]);
eval(fs.readFileSync(file, "utf8"));
const scope = {};
for (const [pkg, versions] of Object.entries(JSON.parse(scopeJson))) {
  scope[pkg] = {};
  for (const [version, loaded] of Object.entries(versions)) {
    scope[pkg][version] = { loaded, get: async () => () => ({ pkg, version, INotebookTracker: `${pkg}@${version}`,
      IDocumentManager: `${pkg}@${version}`, IStatusBar: `${pkg}@${version}`, Widget: class {} }) };
  }
}
const container = window._JUPYTERLAB["jupyterlab-webmcp-bridge"];
container.init(scope);
container.get("./extension").then(factory => {
  const plugins = factory().default;
  console.log(JSON.stringify({ plugins: plugins.map(p => ({ id: p.id, requires: p.requires || [],
    optional: p.optional || [] })),
                                status: window.webmcpBridge && window.webmcpBridge.status && {
                                  state: window.webmcpBridge.status.state, reason: window.webmcpBridge.status.reason },
                                logs }));
}, error => { console.log(JSON.stringify({ thrown: String(error), logs })); });
"""

#: Node's resolve hook: the modules the loader imports from beside itself (http://site/.../static/<file>.js), read
#: from the package's lab/ folder as the build copies them there
HOOKS = r"""
import { register } from "node:module";
import { pathToFileURL } from "node:url";
const lab = process.env.WEBMCP_BRIDGE_LAB;
register("data:text/javascript," + encodeURIComponent(`
export async function resolve(spec, context, next) {
  if (spec.startsWith("http://site/")) return { url: ${JSON.stringify(pathToFileURL(lab).href)} + "/" +
    spec.split("/").pop(), shortCircuit: true, format: "module" };
  return next(spec, context);
}`));
"""
LAB = ROOT / "py_src" / "webmcp_bridge" / "lab"

#: what JupyterLite 0.8.6 (JupyterLab 4.6.4) offers of the packages the loader uses
LITE = {
    "@jupyterlab/notebook": {"4.6.4": True},
    "@jupyterlab/docmanager": {"4.6.4": True},
    "@jupyterlab/cells": {"4.6.4": False},
    "@lumino/widgets": {"2.8.0": True},
    "@jupyterlab/statusbar": {"4.6.4": True},
    "@jupyterlab/apputils": {"4.7.4": True},
    "@jupyterlab/settingregistry": {"4.6.4": True},
    "@jupyterlab/translation": {"4.6.4": True},
    "@jupyterlab/application": {"4.6.4": True},
    "@jupyterlab/statedb": {"4.6.4": True},
    "@jupyterlab/ui-components": {"4.6.4": True},
}


def load(tmp_path: Path, scope: dict, ranges: dict | None = None) -> dict:
    """Run the loader under Node with this share scope; what ``get('./extension')`` gave and the bridge's status."""
    if not shutil.which("node"):
        pytest.fail("node is needed (the machine setup installs it with npm)")
    harness = tmp_path / "harness.js"
    harness.write_text(HARNESS)
    hooks = tmp_path / "hooks.mjs"
    hooks.write_text(HOOKS)
    manifest = {"bounds": {"failureChars": 200, "recentCalls": 5}, "shared": RANGES if ranges is None else ranges}
    done = subprocess.run(
        ["node", "--import", hooks.as_uri(), str(harness), str(LOADER), json.dumps(manifest), json.dumps(scope)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "WEBMCP_BRIDGE_LAB": str(LAB)},
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_versions_jupyterlite_offers_are_taken(tmp_path):
    out = load(tmp_path, LITE)
    assert out["plugins"] == [
        {
            "id": "jupyterlab-webmcp-bridge:plugin",
            "requires": ["@jupyterlab/notebook@4.6.4", "@jupyterlab/docmanager@4.6.4"],
            "optional": ["@jupyterlab/statusbar@4.6.4"],
        }
    ]
    assert out["status"]["state"] == "loading" and out["logs"] == []


def test_a_version_out_of_range_is_never_taken_even_when_loaded(tmp_path):
    scope = {**LITE, "@jupyterlab/notebook": {"3.6.8": True, "4.6.4": False, "4.5.2": False}}
    out = load(tmp_path, scope)
    assert out["plugins"][0]["requires"][0] == "@jupyterlab/notebook@4.6.4"  # the newest in range


def test_a_required_package_out_of_range_fails_with_a_message_and_the_status_item_stays(tmp_path):
    out = load(tmp_path, {**LITE, "@jupyterlab/notebook": {"5.0.0": True, "3.6.8": False}})
    assert out["status"] == {
        "state": "failed",
        "reason": "@jupyterlab/notebook ^4.5.0 is needed; this JupyterLab offers 5.0.0, 3.6.8",
    }
    # the one plugin left only shows that in the status bar: it requires nothing of the notebook
    assert out["plugins"] == [
        {"id": "jupyterlab-webmcp-bridge:plugin", "requires": [], "optional": ["@jupyterlab/statusbar@4.6.4"]}
    ]


def test_a_missing_required_package_says_none_is_offered(tmp_path):
    scope = {k: v for k, v in LITE.items() if k != "@jupyterlab/docmanager"}
    out = load(tmp_path, scope)
    assert out["status"]["reason"] == "@jupyterlab/docmanager ^4.5.0 is needed; this JupyterLab offers none"


def test_an_optional_package_out_of_range_is_done_without(tmp_path):
    out = load(tmp_path, {**LITE, "@jupyterlab/statusbar": {"5.1.0": True}})
    assert out["plugins"][0]["optional"] == [] and out["status"]["state"] == "loading"
    assert [
        "warn",
        "[webmcp-bridge] @jupyterlab/statusbar ^4.5.0 is needed; this JupyterLab offers 5.1.0: going on without it",
    ] in out["logs"]


def test_a_pre_release_counts_by_its_release_numbers(tmp_path):
    """4.7.0-alpha.1 is in ^4.5.0 (as `jupyter labextension list` compares, dropping the pre-release); 5.0.0-alpha.0 is
    not."""
    out = load(tmp_path, {**LITE, "@jupyterlab/notebook": {"4.7.0-alpha.1": True}})
    assert out["plugins"][0]["requires"][0] == "@jupyterlab/notebook@4.7.0-alpha.1"
    out = load(tmp_path, {**LITE, "@jupyterlab/notebook": {"5.0.0-alpha.0": True}})
    assert out["status"]["state"] == "failed"


def test_a_package_without_a_declared_range_is_refused(tmp_path):
    ranges = {k: v for k, v in RANGES.items() if k != "@jupyterlab/cells"}
    out = load(tmp_path, LITE, ranges)
    assert out["status"] == {"state": "failed", "reason": "@jupyterlab/cells has no version range in bridge.json"}


def test_every_package_the_loader_takes_is_declared_and_shared_not_bundled():
    """package.json is what `jupyter labextension list` checks against JupyterLab's versions: it must name each
    package the loader takes (shared('...') in remoteEntry.js), and nothing else."""
    import re

    taken = set(re.findall(r"shared\('([^']+)'", LOADER.read_text()))
    assert taken == set(RANGES), (taken, RANGES)
    assert shared_ranges(PACKAGE) == RANGES
    assert all(PACKAGE["jupyterlab"]["sharedPackages"][name]["bundled"] is False for name in RANGES)


def test_the_build_refuses_a_range_the_loader_cannot_read():
    for spec in (">=4.5", "~4.5.0", "4.x", "^4.5"):
        package = {**PACKAGE, "dependencies": {**RANGES, "@jupyterlab/notebook": spec}}
        with pytest.raises(BuildError, match="not a caret range"):
            shared_ranges(package)
    package = {**PACKAGE, "jupyterlab": {**PACKAGE["jupyterlab"], "sharedPackages": {}}}
    with pytest.raises(BuildError, match="sharedPackages"):
        shared_ranges(package)
