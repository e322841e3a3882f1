"""Tool families. Each module contributes tools; :func:`notebooks_toolset` groups the core ones."""

from __future__ import annotations

from ..registry import Toolset
from . import cells, edit, run, workspace


def notebooks_toolset() -> Toolset:
    """The ``notebooks`` toolset: the 17 core tools of FEATURES.md (context, workspace, cells, kernel)."""
    return Toolset(
        "notebooks",
        "Read, edit and run the notebooks of the JupyterLab workspace.",
        (*workspace.TOOLS, *cells.TOOLS, *edit.TOOLS, *run.TOOLS),
    )
