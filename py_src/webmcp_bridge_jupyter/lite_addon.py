"""A JupyterLite build addon: the site's Pyodide kernel runs on the runtime the bridge's labextension ships.

By default jupyterlite-pyodide-kernel loads Pyodide from a public CDN. The bridge's labextension already
carries a Pyodide runtime with the kernel's whole package closure (``static/pyodide/``: the npm runtime, every
pinned wheel and a ``pyodide-lock.json`` for them, see ``sitebuild/extension.py``), so after the other addons
have written the built site's ``jupyter-lite.json`` this addon sets the kernel's ``pyodideUrl`` to
``./extensions/jupyterlab-webmcp-bridge/static/pyodide/pyodide.mjs`` when:

- the built ``jupyter-lite.json`` sets no ``pyodideUrl`` for the kernel (neither the site's own
  ``jupyter-lite.json`` nor jupyterlite-pyodide-kernel's pyodide addon, which sets one when the Lite dir has
  ``static/pyodide/`` or ``--pyodide`` is given: a site's own runtime always wins), and
- the built site holds that file (the labextension was copied into ``extensions/jupyterlab-webmcp-bridge/``).

A site opts out with JupyterLite's own switch, ``jupyter lite build --disable-addons webmcp-bridge-kernel-runtime``,
or by setting ``pyodideUrl`` itself. The shipped runtime holds only the kernel's closure and the bridge's
(pydantic): a notebook that imports another Pyodide package (numpy, pandas, ...) needs a runtime that serves it.

Registered under the entry point group ``jupyterlite.addon.v0`` (pyproject.toml). Runs under CPython at build
time only; :func:`point_kernel_at_runtime` is the whole rule and needs only the standard library.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

from jupyterlite_core.addons.base import BaseAddon

#: the entry point's name: ``--disable-addons`` takes it
ADDON_NAME = "webmcp-bridge-kernel-runtime"
#: the labextension's folder in a built site, and the runtime's module in it
EXTENSION_DIR = "extensions/jupyterlab-webmcp-bridge"
RUNTIME_MODULE = f"{EXTENSION_DIR}/static/pyodide/pyodide.mjs"
#: jupyterlite-pyodide-kernel's plugin whose settings hold ``pyodideUrl`` (its constants.PYODIDE_KERNEL_PLUGIN_ID)
KERNEL_PLUGIN = "@jupyterlite/pyodide-kernel-extension:kernel"


def point_kernel_at_runtime(config_path: Path, output_dir: Path) -> str | None:
    """Set the kernel's ``pyodideUrl`` in the built ``config_path`` (a ``jupyter-lite.json``) to the shipped
    runtime, following the rule of this module; return the URL written, or None when nothing was changed
    (the site sets its own ``pyodideUrl``, or the built site in ``output_dir`` holds no shipped runtime).
    Raises OSError / ValueError for an unreadable or malformed ``config_path`` (the build then fails loudly)."""
    if not (output_dir / RUNTIME_MODULE).is_file():
        return None
    config: dict[str, Any] = json.loads(config_path.read_text(encoding="utf-8")) if config_path.exists() else {
        "jupyter-lite-schema-version": 0}
    settings = config.setdefault("jupyter-config-data", {}).setdefault("litePluginSettings", {}).setdefault(KERNEL_PLUGIN, {})
    if settings.get("pyodideUrl"):
        return None
    url = f"./{RUNTIME_MODULE}"
    settings["pyodideUrl"] = url
    config_path.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return url


class KernelRuntimeAddon(BaseAddon):
    """Point the Pyodide kernel at the labextension's runtime after the build (see the module's rule)."""

    __all__ = ["post_build"]

    def post_build(self, manager: Any) -> Iterator[dict[str, Any]]:
        """One doit task, run on every build (it has no file dependencies): jupyterlite-core runs the addons of
        a phase in the order of their names, so this one comes after jupyterlite-pyodide-kernel's, whose
        ``post_build`` writes the kernel's settings (``pipliteUrls``, a local ``pyodideUrl``)."""
        config_path = manager.output_dir / "jupyter-lite.json"
        yield self.task(
            name="kernel-runtime",
            doc="point the Pyodide kernel at the runtime the webmcp-bridge labextension ships, unless the site set one",
            actions=[(self._patch, [config_path, manager.output_dir])],
        )

    def _patch(self, config_path: Path, output_dir: Path) -> None:
        url = point_kernel_at_runtime(config_path, output_dir)
        if url is not None:
            self.log.info(f"[lite] [{ADDON_NAME}] the Pyodide kernel runs on {url} (served by the site)")
