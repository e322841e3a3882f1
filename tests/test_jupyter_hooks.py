"""The wheel's CPython hooks into Jupyter's tools (webmcp_bridge_jupyter), without a browser: the JupyterLite
build addon's rule for the kernel's runtime, and the server extension's answer about paths outside the root, on
real files and symbolic links. (A real `jupyter lite build` with the addon runs in
playwright-tests/test_install_modes.py; the server extension in a real server in test_lab_server.py.)"""

from __future__ import annotations

import hashlib
import json
import os
import tomllib
from pathlib import Path

import pytest

from webmcp_bridge_jupyter.lite_addon import (
    ADDON_NAME,
    CONFIG_CLASS,
    KERNEL_LOCK,
    KERNEL_PLUGIN,
    RUNTIME_DIR,
    RUNTIME_MODULE,
    WebmcpBridgeKernelRuntimeAddon,
    point_kernel_at_runtime,
)
from webmcp_bridge_jupyter.server import outside_paths

ROOT = Path(__file__).resolve().parents[1]


BRIDGE_WHEEL, KERNEL_WHEEL = b"the bridge's wheel", b"the kernel's wheel"
INFO = {"python": "3.14.2", "abi_version": "2026_0", "arch": "wasm32", "platform": "emscripten_5_0_3"}


def lock_entry(name: str, data: bytes) -> dict:
    return {
        "name": name,
        "version": "1.0",
        "file_name": f"{name}-1.0-py3-none-any.whl",
        "sha256": hashlib.sha256(data).hexdigest(),
        "depends": [],
        "imports": [name],
        "install_dir": "site",
        "package_type": "package",
        "unvendored_tests": False,
    }


def built_site(tmp_path: Path, kernel_settings: dict | None, runtime: bool = True) -> Path:
    """A built site's folder: its jupyter-lite.json (with these kernel settings) and, if ``runtime``, the shipped
    runtime as the labextension ships it: the module, the bridge's wheel with a lock for it, and the kernel lock
    that also lists a kernel wheel the folder lacks."""
    if runtime:
        folder = tmp_path / RUNTIME_DIR
        folder.mkdir(parents=True)
        (tmp_path / RUNTIME_MODULE).write_text("export const version = '314.0.6';\n")
        (folder / "pydantic-1.0-py3-none-any.whl").write_bytes(BRIDGE_WHEEL)
        bridge = {"pydantic": lock_entry("pydantic", BRIDGE_WHEEL)}
        (folder / "pyodide-lock.json").write_text(json.dumps({"info": INFO, "packages": bridge}))
        (tmp_path / KERNEL_LOCK).write_text(
            json.dumps({"info": INFO, "packages": {**bridge, "ipython": lock_entry("ipython", KERNEL_WHEEL)}})
        )
    config = {"jupyter-lite-schema-version": 0, "jupyter-config-data": {"appName": "site", "litePluginSettings": {}}}
    if kernel_settings is not None:
        config["jupyter-config-data"]["litePluginSettings"][KERNEL_PLUGIN] = kernel_settings
    (tmp_path / "jupyter-lite.json").write_text(json.dumps(config))
    return tmp_path / "jupyter-lite.json"


class FakeIndex:
    """Stands for pip download: records each call, writes the requested wheels (``data`` for each name) into the
    folder."""

    def __init__(self, data: dict[str, bytes] | None = None) -> None:
        self.calls: list[tuple[list[str], list[str]]] = []
        self.data = {"ipython": KERNEL_WHEEL} if data is None else data

    def __call__(self, specs: list[str], target: list[str], dest: Path) -> None:
        self.calls.append((specs, target))
        for spec in specs:
            name, version = spec.split("==")
            if name in self.data:
                (dest / f"{name}-{version}-py3-none-any.whl").write_bytes(self.data[name])


def kernel_settings(config_path: Path) -> dict:
    return json.loads(config_path.read_text())["jupyter-config-data"]["litePluginSettings"][KERNEL_PLUGIN]


def test_a_site_without_a_pyodide_url_gets_the_shipped_runtime_completed_with_the_kernels_wheels(tmp_path):
    urls = ["./extensions/@jupyterlite/pyodide-kernel-extension/static/pypi/all.json"]
    config = built_site(tmp_path / "site", {"pipliteUrls": urls})
    site, cache, index = config.parent, tmp_path / "cache", FakeIndex()
    assert (
        point_kernel_at_runtime(config, site, cache, index)
        == "./extensions/jupyterlab-webmcp-bridge/static/pyodide/pyodide.mjs"
    )
    assert kernel_settings(config) == {
        "pipliteUrls": urls,
        "pyodideUrl": "./extensions/jupyterlab-webmcp-bridge/static/pyodide/pyodide.mjs",
    }
    assert json.loads(config.read_text())["jupyter-config-data"]["appName"] == "site"  # the rest is kept
    # one download of the one wheel the folder lacked, for the runtime's Python and platform
    assert index.calls == [
        (
            ["ipython==1.0"],
            [
                "--python-version",
                "3.14",
                "--implementation",
                "cp",
                "--abi",
                "cp314",
                "--platform",
                "pyemscripten_2026_0_wasm32",
            ],
        )
    ]
    assert (site / RUNTIME_DIR / "ipython-1.0-py3-none-any.whl").read_bytes() == KERNEL_WHEEL
    assert (site / RUNTIME_DIR / "pyodide-lock.json").read_bytes() == (site / KERNEL_LOCK).read_bytes()
    assert (
        point_kernel_at_runtime(config, site, cache, index) is None and len(index.calls) == 1
    )  # a rebuild changes nothing more


def test_a_second_site_takes_the_kernels_wheels_from_the_cache(tmp_path):
    cache, index = tmp_path / "cache", FakeIndex()
    for name in ("one", "two"):
        config = built_site(tmp_path / name, None)
        point_kernel_at_runtime(config, config.parent, cache, index)
        assert kernel_settings(config) == {"pyodideUrl": f"./{RUNTIME_MODULE}"}
        assert (config.parent / RUNTIME_DIR / "ipython-1.0-py3-none-any.whl").read_bytes() == KERNEL_WHEEL
    assert len(index.calls) == 1


def test_a_wheel_that_differs_from_the_lock_fails_and_changes_nothing(tmp_path):
    for data in ({"ipython": b"another file"}, {}):  # a different file, or none at all
        config = built_site(tmp_path / str(len(data)), {"pipliteUrls": []})
        before, lock_before = config.read_bytes(), (config.parent / RUNTIME_DIR / "pyodide-lock.json").read_bytes()
        with pytest.raises(RuntimeError, match="ipython-1.0-py3-none-any.whl"):
            point_kernel_at_runtime(config, config.parent, tmp_path / f"cache{len(data)}", FakeIndex(data))
        assert config.read_bytes() == before
        assert (config.parent / RUNTIME_DIR / "pyodide-lock.json").read_bytes() == lock_before
        assert not (config.parent / RUNTIME_DIR / "ipython-1.0-py3-none-any.whl").exists()


def test_a_site_that_sets_its_own_runtime_keeps_it_and_nothing_is_fetched(tmp_path):
    index = FakeIndex()
    for own in ("./static/pyodide/pyodide.mjs", "https://example.org/pyodide/v314.0.6/full/pyodide.mjs"):
        config = built_site(tmp_path / own.split("/")[2], {"pyodideUrl": own, "disablePyPIFallback": True})
        before = config.read_bytes()
        assert point_kernel_at_runtime(config, config.parent, tmp_path / "cache", index) is None
        assert config.read_bytes() == before
    assert index.calls == []


def test_turned_on_in_a_site_without_the_extension_fails_and_changes_nothing(tmp_path):
    config = built_site(tmp_path, {"pipliteUrls": []}, runtime=False)
    before = config.read_bytes()
    with pytest.raises(FileNotFoundError, match="no extensions/jupyterlab-webmcp-bridge/static/pyodide/pyodide.mjs"):
        point_kernel_at_runtime(config, tmp_path, tmp_path / "cache", FakeIndex())
    assert config.read_bytes() == before


class FakeManager:
    def __init__(self, output_dir: Path) -> None:
        self.output_dir = output_dir
        self.cache_dir = output_dir / ".cache"


def test_the_addon_is_off_unless_the_site_turns_it_on(tmp_path):
    """Off by default: no build task, so the kernel's settings stay the site's. The documented flag and the
    documented jupyter_lite_config.json key both set ``enabled``, the one trait the task depends on."""
    from jupyterlite_core.manager import LiteManager
    from traitlets.config import Config

    manager = LiteManager(output_dir=tmp_path)
    off = WebmcpBridgeKernelRuntimeAddon(manager)
    assert off.enabled is False and list(off.post_build(FakeManager(tmp_path))) == []
    flag_config, _ = WebmcpBridgeKernelRuntimeAddon.flags[ADDON_NAME]
    assert flag_config == {CONFIG_CLASS: {"enabled": True}} and CONFIG_CLASS == WebmcpBridgeKernelRuntimeAddon.__name__
    on_manager = LiteManager(output_dir=tmp_path, config=Config({CONFIG_CLASS: {"enabled": True}}))
    on = WebmcpBridgeKernelRuntimeAddon(on_manager)
    tasks = list(on.post_build(FakeManager(tmp_path)))
    assert on.enabled is True and [t["name"] for t in tasks] == ["kernel-runtime"]


def test_the_documented_switches_name_the_registered_addon():
    """The flag is the entry point's name and the config key the class's: pyproject, the module and the docs agree."""
    entry_points = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"][
        "jupyterlite.addon.v0"
    ]
    assert entry_points == {ADDON_NAME: "webmcp_bridge_jupyter.lite_addon:WebmcpBridgeKernelRuntimeAddon"}
    assert WebmcpBridgeKernelRuntimeAddon.__all__ == ["post_build"]
    for doc in ("README.md", "docs/hosting.md"):
        text = (ROOT / doc).read_text()
        assert f"jupyter lite build --{ADDON_NAME}" in text, doc
        assert f'{{"{CONFIG_CLASS}": {{"enabled": true}}}}' in text, doc


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
    paths = [
        "",
        "sub",
        "sub/note.txt",
        "alias.txt",
        "sub-alias/note.txt",
        "sub/new.txt",
        "new-folder/new.txt",
        "/sub/note.txt",
        "escape.txt",
        "escape-dir",
        "escape-dir/new.txt",
        "dangling.txt",
        "../outside/secret.txt",
        "sub/../../outside",
    ]
    assert outside_paths(str(root), paths) == [
        "escape.txt",
        "escape-dir",
        "escape-dir/new.txt",
        "dangling.txt",
        "../outside/secret.txt",
        "sub/../../outside",
    ]


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
    ((source, target),) = shared.items()
    assert target == "etc/jupyter/jupyter_server_config.d/jupyterlab-webmcp-bridge.json"
    config = json.loads((ROOT / source).read_text())
    assert config == {"ServerApp": {"jpserver_extensions": {"webmcp_bridge_jupyter.server": True}}}
    from webmcp_bridge_jupyter import server

    assert server._jupyter_server_extension_points() == [{"module": "webmcp_bridge_jupyter.server"}]
