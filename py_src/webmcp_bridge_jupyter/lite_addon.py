"""A JupyterLite build addon, off unless a site turns it on (docs/hosting.md, "Building a site"): the site's Pyodide
kernel runs on the runtime the bridge's labextension ships, so the site loads nothing from another origin.

Turned on (``--webmcp-bridge-kernel-runtime``, or ``WebmcpBridgeKernelRuntimeAddon.enabled``), after the other addons
wrote ``jupyter-lite.json`` and unless it sets a kernel ``pyodideUrl`` (the site's own runtime always wins), it
completes the shipped runtime with the kernel's wheels ``kernel-lock.json`` pins (cached, or ``pip download`` once,
sha256 checked), makes that lock its ``pyodide-lock.json`` and points ``pyodideUrl`` at it. Only those packages are
there. Without the runtime, or with a wheel missing or not the lock's, the build fails, the settings unchanged.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from jupyterlite_core.addons.base import BaseAddon
from traitlets import Bool

#: the entry point's name (``--disable-addons`` takes it) and the build flag that turns the addon on
ADDON_NAME = "webmcp-bridge-kernel-runtime"
#: the traitlets class name a ``jupyter_lite_config.json`` configures (``{CONFIG_CLASS: {"enabled": true}}``)
CONFIG_CLASS = "WebmcpBridgeKernelRuntimeAddon"
#: the labextension's folder in a built site, its runtime, and the lock of every pinned wheel the kernel needs
EXTENSION_DIR = "extensions/jupyterlab-webmcp-bridge"
RUNTIME_DIR = f"{EXTENSION_DIR}/static/pyodide"
RUNTIME_MODULE = f"{RUNTIME_DIR}/pyodide.mjs"
KERNEL_LOCK = f"{RUNTIME_DIR}/kernel-lock.json"
#: the folder under the Lite dir's cache (``LiteBuildConfig.cache_dir``) that keeps the downloaded kernel wheels
CACHE_FOLDER = "webmcp-bridge-kernel-wheels"

#: how the wheels a folder lacks are fetched: (``name==version`` specs, pip's target options, destination folder)
Fetch = Callable[[list[str], list[str], Path], None]


def pip_target(info: dict[str, Any]) -> list[str]:
    """pip's options selecting wheels for a pyodide-lock.json's ``info`` (``{"python": "3.14.2", "abi_version":
    "2026_0", "arch": "wasm32", ...}``)."""
    python = ".".join(info["python"].split(".")[:2])
    return [
        "--python-version",
        python,
        "--implementation",
        "cp",
        "--abi",
        "cp" + python.replace(".", ""),
        "--platform",
        f"pyemscripten_{info['abi_version']}_{info['arch']}",
    ]


def pip_download(specs: list[str], target: list[str], dest: Path) -> None:
    """``python -m pip download`` of exact ``specs`` (binary, no dependencies) into ``dest`` with the build's pip.
    Raises RuntimeError with pip's last output when it fails."""
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--disable-pip-version-check",
        "--no-deps",
        "--only-binary=:all:",
        *target,
        "--dest",
        str(dest),
        *specs,
    ]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(
            f"{ADDON_NAME}: pip download of the kernel's wheels failed ({' '.join(specs)}):\n"
            f"{(done.stderr or done.stdout)[-2000:]}"
        )


def _has_sha256(path: Path, sha256: str) -> bool:
    return path.is_file() and hashlib.sha256(path.read_bytes()).hexdigest() == sha256


def complete_runtime(output_dir: Path, cache_dir: Path, fetch: Fetch = pip_download) -> list[str]:
    """Put every wheel of ``KERNEL_LOCK`` into the runtime folder (from ``cache_dir``, ``fetch`` filling it in one
    call) and make it the folder's ``pyodide-lock.json``; returns the names added, sorted. Raises FileNotFoundError
    without ``KERNEL_LOCK``, RuntimeError (nothing copied) when a wheel is missing or not the lock's sha256."""
    runtime = output_dir / RUNTIME_DIR
    lock_path = output_dir / KERNEL_LOCK
    if not lock_path.is_file():
        raise FileNotFoundError(
            f"{ADDON_NAME} is on, but the built site has no {KERNEL_LOCK}: is the labextension from "
            "jupyterlab-webmcp-bridge of a matching version?"
        )
    lock = json.loads(lock_path.read_text(encoding="utf-8"))
    missing = {
        name: entry
        for name, entry in sorted(lock["packages"].items())
        if not _has_sha256(runtime / entry["file_name"], entry["sha256"])
    }
    to_fetch = [entry for entry in missing.values() if not _has_sha256(cache_dir / entry["file_name"], entry["sha256"])]
    if to_fetch:
        cache_dir.mkdir(parents=True, exist_ok=True)
        fetch([f"{entry['name']}=={entry['version']}" for entry in to_fetch], pip_target(lock["info"]), cache_dir)
    wrong = [
        entry["file_name"]
        for entry in missing.values()
        if not _has_sha256(cache_dir / entry["file_name"], entry["sha256"])
    ]
    if wrong:
        raise RuntimeError(
            f"{ADDON_NAME}: missing, or not the sha256 of {KERNEL_LOCK}, after the download: {', '.join(wrong)}"
        )
    for entry in missing.values():
        shutil.copyfile(cache_dir / entry["file_name"], runtime / entry["file_name"])
    shutil.copyfile(lock_path, runtime / "pyodide-lock.json")
    return list(missing)


#: jupyterlite-pyodide-kernel's plugin whose settings hold ``pyodideUrl`` (its constants.PYODIDE_KERNEL_PLUGIN_ID)
KERNEL_PLUGIN = "@jupyterlite/pyodide-kernel-extension:kernel"


def point_kernel_at_runtime(
    config_path: Path, output_dir: Path, cache_dir: Path, fetch: Fetch = pip_download
) -> str | None:
    """The module's rule on the built site: unless ``config_path`` sets the kernel's ``pyodideUrl`` (then None,
    nothing changed), complete the runtime and point ``pyodideUrl`` at it; returns the URL. Raises FileNotFoundError
    without the shipped runtime, RuntimeError without the wheels, OSError / ValueError for a bad ``config_path``
    (then unchanged: the build fails loudly)."""
    if not (output_dir / RUNTIME_MODULE).is_file():
        raise FileNotFoundError(
            f"{ADDON_NAME} is on, but the built site has no {RUNTIME_MODULE}: is the jupyterlab-webmcp-bridge "
            "labextension part of the build (installed, or in LiteBuildConfig.federated_extensions)?"
        )
    config: dict[str, Any] = (
        json.loads(config_path.read_text(encoding="utf-8"))
        if config_path.exists()
        else {"jupyter-lite-schema-version": 0}
    )
    settings = (
        config.setdefault("jupyter-config-data", {}).setdefault("litePluginSettings", {}).setdefault(KERNEL_PLUGIN, {})
    )
    if settings.get("pyodideUrl"):
        return None
    complete_runtime(output_dir, cache_dir, fetch)
    url = f"./{RUNTIME_MODULE}"
    settings["pyodideUrl"] = url
    config_path.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return url


class WebmcpBridgeKernelRuntimeAddon(BaseAddon):
    """Point the Pyodide kernel at the labextension's runtime after the build, when ``enabled`` (see the module's
    rule)."""

    __all__ = ["post_build"]

    #: ``jupyter lite build --webmcp-bridge-kernel-runtime`` (jupyterlite-core merges every addon's flags into the CLI)
    flags = {
        ADDON_NAME: (
            {CONFIG_CLASS: {"enabled": True}},
            "Run the site's Pyodide kernel on the runtime the webmcp-bridge labextension ships (nothing from another "
            "origin)",
        ),
    }

    enabled = Bool(
        False,
        help="point the Pyodide kernel at the runtime the webmcp-bridge labextension ships, unless the site sets a "
        "pyodideUrl",
    ).tag(config=True)

    def post_build(self, manager: Any) -> Iterator[dict[str, Any]]:
        """On: one doit task each build. Addons of a phase run by name, so this one follows
        jupyterlite-pyodide-kernel's, whose ``post_build`` writes the kernel's settings."""
        if not self.enabled:
            return
        config_path = manager.output_dir / "jupyter-lite.json"
        yield self.task(
            name="kernel-runtime",
            doc="point the Pyodide kernel at the runtime the webmcp-bridge labextension ships, unless the site set one",
            actions=[(self._patch, [config_path, manager.output_dir, Path(manager.cache_dir) / CACHE_FOLDER])],
        )

    def _patch(self, config_path: Path, output_dir: Path, cache_dir: Path) -> None:
        url = point_kernel_at_runtime(config_path, output_dir, cache_dir)
        if url is None:
            self.log.info(f"[lite] [{ADDON_NAME}] the site sets its own pyodideUrl: kept")
        else:
            self.log.info(f"[lite] [{ADDON_NAME}] the Pyodide kernel runs on {url} (served by the site)")
