"""Hatchling build hook: put the prebuilt labextension into the wheel (``share/jupyter/labextensions/``).

It runs ``sitebuild.extension.stage_labextension`` (no Node bundler: the loader is hand-written) into
``build/labextension/`` and hands that folder to the wheel as shared data. An editable install skips it:
the labextension of a development checkout is staged by ``python build.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class LabextensionHook(BuildHookInterface):
    """Stage the labextension and add it to the wheel's data (installed under the environment's prefix)."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict) -> None:
        """Hatchling calls this before building a target; only a standard wheel gets the labextension."""
        if self.target_name != "wheel" or version == "editable":
            return
        root = Path(self.root)
        sys.path.insert(0, str(root))
        from sitebuild.extension import SHARE_PATH, stage_labextension

        folder = stage_labextension(root / "build" / "labextension")
        build_data["shared_data"][str(folder)] = SHARE_PATH
