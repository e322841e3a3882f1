"""The wheel's CPython hooks into Jupyter's tools (webmcp_bridge_jupyter), without a browser: the JupyterLite
build addon's rule for the kernel's runtime, and the server extension's answer about paths outside the root, on
real files and symbolic links. (A real `jupyter lite build` with the addon runs in
playwright-tests/test_install_modes.py; the server extension in a real server in test_lab_server.py.)"""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

from webmcp_bridge_jupyter.lite_addon import ADDON_NAME, KERNEL_PLUGIN, RUNTIME_MODULE, KernelRuntimeAddon, point_kernel_at_runtime
from webmcp_bridge_jupyter.server import outside_paths

ROOT = Path(__file__).resolve().parents[1]


def built_site(tmp_path: Path, kernel_settings: dict | None, runtime: bool = True) -> Path:
    """A built site's folder: its jupyter-lite.json (with these kernel settings) and, if ``runtime``, the shipped runtime."""
    if runtime:
        (tmp_path / RUNTIME_MODULE).parent.mkdir(parents=True)
        (tmp_path / RUNTIME_MODULE).write_text("export const version = '314.0.6';\n")
    config = {"jupyter-lite-schema-version": 0, "jupyter-config-data": {"appName": "site", "litePluginSettings": {}}}
    if kernel_settings is not None:
        config["jupyter-config-data"]["litePluginSettings"][KERNEL_PLUGIN] = kernel_settings
    (tmp_path / "jupyter-lite.json").write_text(json.dumps(config))
    return tmp_path / "jupyter-lite.json"


def kernel_settings(config_path: Path) -> dict:
    return json.loads(config_path.read_text())["jupyter-config-data"]["litePluginSettings"][KERNEL_PLUGIN]


def test_a_site_without_a_pyodide_url_gets_the_shipped_runtime(tmp_path):
    urls = ["./extensions/@jupyterlite/pyodide-kernel-extension/static/pypi/all.json"]
    config = built_site(tmp_path, {"pipliteUrls": urls})
    assert point_kernel_at_runtime(config, tmp_path) == "./extensions/jupyterlab-webmcp-bridge/static/pyodide/pyodide.mjs"
    assert kernel_settings(config) == {"pipliteUrls": urls, "pyodideUrl": "./extensions/jupyterlab-webmcp-bridge/static/pyodide/pyodide.mjs"}
    assert json.loads(config.read_text())["jupyter-config-data"]["appName"] == "site"  # the rest is kept
    assert point_kernel_at_runtime(config, tmp_path) is None  # a rebuild changes nothing more


def test_a_site_with_no_kernel_settings_at_all_gets_them(tmp_path):
    config = built_site(tmp_path, None)
    point_kernel_at_runtime(config, tmp_path)
    assert kernel_settings(config) == {"pyodideUrl": f"./{RUNTIME_MODULE}"}


def test_a_site_that_sets_its_own_runtime_keeps_it(tmp_path):
    for own in ("./static/pyodide/pyodide.mjs", "https://example.org/pyodide/v314.0.6/full/pyodide.mjs"):
        config = built_site(tmp_path / own.split("/")[2], {"pyodideUrl": own, "disablePyPIFallback": True})
        before = config.read_bytes()
        assert point_kernel_at_runtime(config, config.parent) is None
        assert config.read_bytes() == before


def test_a_site_without_the_extension_is_left_alone(tmp_path):
    config = built_site(tmp_path, {"pipliteUrls": []}, runtime=False)
    before = config.read_bytes()
    assert point_kernel_at_runtime(config, tmp_path) is None and config.read_bytes() == before


def test_the_documented_opt_out_names_the_registered_addon():
    """`--disable-addons <name>` takes the entry point's name: pyproject, the module and the docs agree."""
    entry_points = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["jupyterlite.addon.v0"]
    assert entry_points == {ADDON_NAME: "webmcp_bridge_jupyter.lite_addon:KernelRuntimeAddon"}
    assert KernelRuntimeAddon.__all__ == ["post_build"]
    for doc in ("README.md", "docs/hosting.md"):
        assert f"--disable-addons {ADDON_NAME}" in (ROOT / doc).read_text(), doc


def test_outside_paths_resolves_links_and_parents(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "sub").mkdir(parents=True)
    (outside / "folder").mkdir(parents=True)
    (outside / "secret.txt").write_text("x")
    (root / "sub" / "note.txt").write_text("y")
    os.symlink("../outside/secret.txt", root / "escape.txt")
    os.symlink(outside / "folder", root / "escape-dir")
    os.symlink("sub/note.txt", root / "alias.txt")
    os.symlink("/nonexistent-webmcp-target", root / "dangling.txt")
    os.symlink(root / "sub", root / "sub-alias")
    paths = ["", "sub", "sub/note.txt", "alias.txt", "sub-alias/note.txt", "sub/new.txt", "new-folder/new.txt",
             "/sub/note.txt", "escape.txt", "escape-dir", "escape-dir/new.txt", "dangling.txt", "../outside/secret.txt",
             "sub/../../outside"]
    assert outside_paths(str(root), paths) == ["escape.txt", "escape-dir", "escape-dir/new.txt", "dangling.txt",
                                               "../outside/secret.txt", "sub/../../outside"]


def test_outside_paths_with_a_root_reached_through_a_link(tmp_path):
    """A server started on a linked root: paths inside its real folder are inside."""
    (tmp_path / "real" / "a").mkdir(parents=True)
    os.symlink(tmp_path / "real", tmp_path / "linked-root")
    os.symlink(tmp_path, tmp_path / "real" / "up")
    assert outside_paths(str(tmp_path / "linked-root"), ["a", "a/x.txt", "up", "up/real/a"]) == ["up"]


def test_the_wheel_enables_the_server_extension():
    """The shared-data file the wheel installs under etc/jupyter/jupyter_server_config.d/ names the extension module."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    shared = pyproject["tool"]["hatch"]["build"]["targets"]["wheel"]["shared-data"]
    (source, target), = shared.items()
    assert target == "etc/jupyter/jupyter_server_config.d/jupyterlab-webmcp-bridge.json"
    config = json.loads((ROOT / source).read_text())
    assert config == {"ServerApp": {"jpserver_extensions": {"webmcp_bridge_jupyter.server": True}}}
    from webmcp_bridge_jupyter import server

    assert server._jupyter_server_extension_points() == [{"module": "webmcp_bridge_jupyter.server"}]
