"""Hatchling build hook: the prebuilt labextension, staged once and carried by the sdist and the wheel.

From a checkout (a git clone: no ``PKG-INFO`` at the root) both targets stage it with
``sitebuild.extension.stage_labextension`` (no Node bundler: the loader is hand-written) into
``build/labextension/``: that fetches the pinned Pyodide runtime and MCP-B (``npm pack``) and the pinned
in-browser wheels (``python -m pip download``, pip being a build requirement) into ``.cache/`` the first time.
The sdist carries the staged folder (``[tool.hatch.build.targets.sdist] artifacts``), so a wheel built from an
unpacked sdist (``PKG-INFO`` at its root) takes the folder as it is and needs neither npm nor a package index
(the "skip if exists" of the JupyterLab extension template, keyed on the file every sdist has and a checkout
never has, so a stale folder in a checkout is never shipped). The wheel puts it under
``share/jupyter/labextensions/jupyterlab-webmcp-bridge/`` as shared data. An editable install skips the hook: the
labextension of a development checkout is staged by ``python build.py``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

#: where the staged labextension lives, relative to the project root (the sdist's artifact)
STAGED = "build/labextension"
#: files a complete staged labextension holds (the loader's manifest is written last by the staging step)
COMPLETE = (
    "package.json",
    "install.json",
    "schemas/jupyterlab-webmcp-bridge/plugin.json",
    "static/remoteEntry.js",
    "static/bridge.json",
    "static/tools.json",
    "static/worker.js",
    "static/worker_boot.js",
    "static/crossings.js",
    "static/halves.js",
    "static/halves/webmcp_bridge/lab/dialogs.js",
    "static/pyodide/pyodide.asm.wasm",
    "static/pyodide/pyodide-lock.json",
    "static/pyodide/kernel-lock.json",
)


def prebuilt_labextension(root: Path, version: str) -> Path | None:
    """The staged labextension of an unpacked sdist (``root/PKG-INFO`` exists) when it is complete and of this
    ``version`` (its package.json); None in a checkout. Raises RuntimeError for an sdist whose folder is missing
    or incomplete (it would otherwise be fetched again, needing npm and an index)."""
    if not (root / "PKG-INFO").is_file():
        return None
    folder = root / STAGED
    missing = [rel for rel in COMPLETE if not (folder / rel).is_file()]
    if missing:
        raise RuntimeError(f"this sdist's {STAGED}/ lacks {', '.join(missing)}: rebuild the sdist from a checkout")
    found = json.loads((folder / "package.json").read_text(encoding="utf-8")).get("version")
    if found != version:
        raise RuntimeError(f"this sdist's {STAGED}/package.json is version {found!r}, the project {version!r}")
    return folder


class LabextensionHook(BuildHookInterface):
    """Stage the labextension (or take the sdist's) for the sdist and the wheel."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict) -> None:
        """Hatchling calls this before building a target: the sdist gets the staged folder as an artifact (by
        pyproject's ``artifacts``), a standard wheel gets it as shared data; an editable wheel gets nothing."""
        if version == "editable":
            return
        root = Path(self.root)
        sys.path.insert(0, str(root))
        from sitebuild.extension import SHARE_PATH, stage_labextension

        folder = prebuilt_labextension(root, self.metadata.version) or stage_labextension(root / STAGED)
        if self.target_name == "wheel":
            build_data["shared_data"][str(folder)] = SHARE_PATH
