"""A JupyterLite build addon, off unless a site turns it on: the site's Pyodide kernel runs on the runtime the
bridge's labextension ships.

Installing the wheel leaves a site's kernel as it was: jupyterlite-pyodide-kernel keeps loading Pyodide from
wherever the site says (its own ``pyodideUrl``, a runtime in the Lite dir's ``static/pyodide/``, or its
default CDN), with every package of Pyodide's full distribution. A site that wants its kernel to load nothing
from another origin turns the addon on, with the build flag or in its ``jupyter_lite_config.json``::

    jupyter lite build --webmcp-bridge-kernel-runtime ...
    {"WebmcpBridgeKernelRuntimeAddon": {"enabled": true}}

Then, after the other addons have written the built site's ``jupyter-lite.json``, unless that file already
sets a ``pyodideUrl`` for the kernel (the site's own runtime always wins: then nothing is done), it

1. completes the labextension's runtime in the built site (``extensions/jupyterlab-webmcp-bridge/static/pyodide/``: the
npm
   runtime and the bridge's wheels, see ``sitebuild/extension.py``) with the Pyodide kernel's wheels (micropip,
   ipython and its closure): each wheel ``kernel-lock.json`` lists and the folder lacks is taken from the Lite
   dir's cache (``<cache_dir>/webmcp-bridge-kernel-wheels/``) or downloaded there once with
   ``python -m pip download`` (the package index the build's pip is configured with, the pinned version,
   ``--no-deps``, binary only), and must have the lock's sha256; ``kernel-lock.json`` then becomes the folder's
   ``pyodide-lock.json``;
2. sets the kernel's ``pyodideUrl`` to ``./extensions/jupyterlab-webmcp-bridge/static/pyodide/pyodide.mjs``.

That runtime holds only those packages: a notebook that imports another Pyodide package (numpy, pandas, ...)
needs a runtime that serves it. Turned on in a site whose build holds no such runtime (the labextension was not
copied into ``extensions/jupyterlab-webmcp-bridge/``), or when a wheel cannot be fetched or differs from the lock, the
build fails and the site's kernel settings are left as they were.

Registered under the entry point group ``jupyterlite.addon.v0`` (pyproject.toml). Runs under CPython at build
time only; :func:`point_kernel_at_runtime` is the whole rule and needs only the standard library.
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
#: the labextension's folder in a built site, its runtime's folder, the runtime's module and the lock of every pinned
#: wheel (the kernel's closure included) that the folder carries beside its own, bridge-only pyodide-lock.json
EXTENSION_DIR = "extensions/jupyterlab-webmcp-bridge"
RUNTIME_DIR = f"{EXTENSION_DIR}/static/pyodide"
RUNTIME_MODULE = f"{RUNTIME_DIR}/pyodide.mjs"
KERNEL_LOCK = f"{RUNTIME_DIR}/kernel-lock.json"
#: the folder under the Lite dir's cache (``LiteBuildConfig.cache_dir``) that keeps the downloaded kernel wheels
CACHE_FOLDER = "webmcp-bridge-kernel-wheels"

#: how the wheels a folder lacks are fetched: (``name==version`` specs, pip's target options, destination folder)
Fetch = Callable[[list[str], list[str], Path], None]


def pip_target(info: dict[str, Any]) -> list[str]:
    """pip's options that select wheels for the runtime a pyodide-lock.json's ``info`` describes (its Python
    version, ABI and platform: ``{"python": "3.14.2", "abi_version": "2026_0", "arch": "wasm32", ...}``)."""
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
    """``python -m pip download`` of exact ``specs`` (binary wheels only, no dependencies) into ``dest`` with the
    build's own interpreter and pip configuration. Raises RuntimeError with pip's last output when it fails."""
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
    """Put every wheel of the built site's ``KERNEL_LOCK`` into its runtime folder and make that lock the folder's
    ``pyodide-lock.json``; return the names of the wheels added (sorted; empty when the folder was complete).

    A wheel is taken from ``cache_dir`` when a file of its name and sha256 is there, else ``fetch`` downloads the
    missing ones into ``cache_dir`` in one call. Raises FileNotFoundError when the site has no ``KERNEL_LOCK``,
    RuntimeError when a fetched wheel is missing or its sha256 differs from the lock (nothing is copied then)."""
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
    """Apply the rule of this module to the built site in ``output_dir``: unless its ``config_path`` (a
    ``jupyter-lite.json``) sets the kernel's ``pyodideUrl``, complete the shipped runtime (:func:`complete_runtime`,
    wheels cached in ``cache_dir``) and set ``pyodideUrl`` to it; return the URL written, or None when the site sets
    its own (nothing is changed). Raises FileNotFoundError when the site holds no shipped runtime, RuntimeError when
    the kernel's wheels cannot be had, OSError / ValueError for an unreadable or malformed ``config_path``; the
    config is then unchanged and the build fails loudly."""
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
        """Off: no task, the kernel's settings are the site's. On: one doit task, run on every build (it has no file
        dependencies): jupyterlite-core runs the addons of a phase in the order of their names, so this one comes
        after jupyterlite-pyodide-kernel's, whose ``post_build`` writes the kernel's settings (``pipliteUrls``, a
        local ``pyodideUrl``)."""
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
