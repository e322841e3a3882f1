"""Tool families. Each module contributes tools; :func:`notebooks_toolset` groups the core ones.

The modules are imported when the toolset is built, not when this package is imported, so start-up can
import them one at a time (see :mod:`webmcp_bridge.jupyterlab.boot`).
"""

from __future__ import annotations

from ..registry import Toolset


def notebooks_toolset() -> Toolset:
    """The ``notebooks`` toolset: the 17 core tools of FEATURES.md (context, workspace, cells, kernel)."""
    from . import cells, edit, run, workspace

    return Toolset(
        "notebooks",
        "Read, edit and run the notebooks of the JupyterLab workspace.",
        (*workspace.TOOLS, *cells.TOOLS, *edit.TOOLS, *run.TOOLS),
    )


def calls_toolset() -> Toolset:
    """The ``calls`` toolset: collecting calls that went pending (``jupyter_wait_for_result``)."""
    from . import calls

    return Toolset("calls", "Follow calls that outlived the execution timeout.", calls.TOOLS)
