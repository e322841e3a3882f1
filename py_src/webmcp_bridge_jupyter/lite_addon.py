"""A JupyterLite build addon, off unless a site turns it on: the site's Pyodide kernel runs on the runtime the
bridge's labextension ships.

Installing the wheel leaves a site's kernel as it was: jupyterlite-pyodide-kernel keeps loading Pyodide from
wherever the site says (its own ``pyodideUrl``, a runtime in the Lite dir's ``static/pyodide/``, or its
default CDN), with every package of Pyodide's full distribution. A site that wants its kernel to load nothing
from another origin turns the addon on, with the build flag or in its ``jupyter_lite_config.json``::

    jupyter lite build --webmcp-bridge-kernel-runtime ...
    {"WebmcpBridgeKernelRuntimeAddon": {"enabled": true}}

Then, after the other addons have written the built site's ``jupyter-lite.json``, it sets the kernel's
``pyodideUrl`` to ``./extensions/webmcp-bridge/static/pyodide/pyodide.mjs`` (the labextension's
``static/pyodide/``: the npm runtime, the kernel's whole package closure and pydantic, with a
``pyodide-lock.json`` for them, see ``sitebuild/extension.py``) unless the built ``jupyter-lite.json`` already
sets one (the site's own runtime always wins). That runtime holds only those packages: a notebook that imports
another Pyodide package (numpy, pandas, ...) needs a runtime that serves it. Turned on in a site whose build
holds no such runtime (the labextension was not copied into ``extensions/webmcp-bridge/``), the build fails.

Registered under the entry point group ``jupyterlite.addon.v0`` (pyproject.toml). Runs under CPython at build
time only; :func:`point_kernel_at_runtime` is the whole rule and needs only the standard library.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

from jupyterlite_core.addons.base import BaseAddon
from traitlets import Bool

#: the entry point's name (``--disable-addons`` takes it) and the build flag that turns the addon on
ADDON_NAME = "webmcp-bridge-kernel-runtime"
#: the traitlets class name a ``jupyter_lite_config.json`` configures (``{CONFIG_CLASS: {"enabled": true}}``)
CONFIG_CLASS = "WebmcpBridgeKernelRuntimeAddon"
#: the labextension's folder in a built site, and the runtime's module in it
EXTENSION_DIR = "extensions/webmcp-bridge"
RUNTIME_MODULE = f"{EXTENSION_DIR}/static/pyodide/pyodide.mjs"
#: jupyterlite-pyodide-kernel's plugin whose settings hold ``pyodideUrl`` (its constants.PYODIDE_KERNEL_PLUGIN_ID)
KERNEL_PLUGIN = "@jupyterlite/pyodide-kernel-extension:kernel"


def point_kernel_at_runtime(config_path: Path, output_dir: Path) -> str | None:
    """Set the kernel's ``pyodideUrl`` in the built ``config_path`` (a ``jupyter-lite.json``) to the shipped
    runtime, following the rule of this module; return the URL written, or None when the site sets its own
    ``pyodideUrl`` (nothing is changed). Raises FileNotFoundError when the built site in ``output_dir`` holds no
    shipped runtime, OSError / ValueError for an unreadable or malformed ``config_path`` (the build then fails
    loudly)."""
    if not (output_dir / RUNTIME_MODULE).is_file():
        raise FileNotFoundError(f"{ADDON_NAME} is on, but the built site has no {RUNTIME_MODULE}: is the jupyterlab-webmcp-bridge "
                                "labextension part of the build (installed, or in LiteBuildConfig.federated_extensions)?")
    config: dict[str, Any] = json.loads(config_path.read_text(encoding="utf-8")) if config_path.exists() else {
        "jupyter-lite-schema-version": 0}
    settings = config.setdefault("jupyter-config-data", {}).setdefault("litePluginSettings", {}).setdefault(KERNEL_PLUGIN, {})
    if settings.get("pyodideUrl"):
        return None
    url = f"./{RUNTIME_MODULE}"
    settings["pyodideUrl"] = url
    config_path.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return url


class WebmcpBridgeKernelRuntimeAddon(BaseAddon):
    """Point the Pyodide kernel at the labextension's runtime after the build, when ``enabled`` (see the module's rule)."""

    __all__ = ["post_build"]

    #: ``jupyter lite build --webmcp-bridge-kernel-runtime`` (jupyterlite-core merges every addon's flags into the CLI)
    flags = {
        ADDON_NAME: (
            {CONFIG_CLASS: {"enabled": True}},
            "Run the site's Pyodide kernel on the runtime the webmcp-bridge labextension ships (nothing from another origin)",
        ),
    }

    enabled = Bool(
        False, help="point the Pyodide kernel at the runtime the webmcp-bridge labextension ships, unless the site sets a pyodideUrl",
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
            actions=[(self._patch, [config_path, manager.output_dir])],
        )

    def _patch(self, config_path: Path, output_dir: Path) -> None:
        url = point_kernel_at_runtime(config_path, output_dir)
        if url is None:
            self.log.info(f"[lite] [{ADDON_NAME}] the site sets its own pyodideUrl: kept")
        else:
            self.log.info(f"[lite] [{ADDON_NAME}] the Pyodide kernel runs on {url} (served by the site)")
