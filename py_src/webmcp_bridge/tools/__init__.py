"""Tool families: each function here makes one toolset, importing its modules only then, so start-up can import
them one at a time (see :mod:`webmcp_bridge.lab.session`).
"""

from __future__ import annotations

from webmcp_bridge.calls.registry import Toolset


def notebooks_toolset() -> Toolset:
    """The 17 core tools of the product contract: context, workspace, the notebook's map, cells, kernel."""
    from webmcp_bridge.tools import cells, edit, notebook_map, run, workspace

    return Toolset(
        "notebooks",
        "Read, edit and run the notebooks of the JupyterLab workspace.",
        (*workspace.TOOLS, *notebook_map.TOOLS, *cells.TOOLS, *edit.TOOLS, *run.TOOLS),
    )


def calls_toolset() -> Toolset:
    from webmcp_bridge.tools import calls

    return Toolset(
        "calls", "Follow calls that outlived the execution timeout and answer the dialogs they opened.", calls.TOOLS
    )


def review_toolset() -> Toolset:
    """The 7 review-thread tools (:mod:`webmcp_bridge.review.threads`)."""
    from webmcp_bridge.tools import review

    return Toolset("review", "Read, write and show the review threads (comments) of a notebook.", review.TOOLS)


def access_toolset() -> Toolset:
    from webmcp_bridge.tools import access, changes, sharing

    return Toolset(
        "access",
        "See what the person allows the agent to read and change, what changed, and what the person shared.",
        (*access.TOOLS, *changes.TOOLS, *sharing.TOOLS),
    )


def files_toolset() -> Toolset:
    from webmcp_bridge.tools import cells, files

    return Toolset(
        "files",
        "Read, write and edit the workspace's text files (notebooks go through the cell tools); export a notebook as "
        "Markdown.",
        (*files.TOOLS, *cells.EXPORT_TOOLS),
    )


def batch_toolset() -> Toolset:
    from webmcp_bridge.tools import batch, edit

    return Toolset(
        "batch",
        "Apply several cell edits at once, all or nothing, and change a cell's type (code, markdown, raw).",
        (*batch.TOOLS, *edit.TYPE_TOOLS),
    )


def code_toolset() -> Toolset:
    """``jupyter_run_code``: code run in the notebook's kernel without a cell."""
    from webmcp_bridge.tools import code

    return Toolset("code", "Run code in a notebook's kernel without creating a cell.", code.TOOLS)


def variables_toolset() -> Toolset:
    from webmcp_bridge.tools import rerun, variables

    return Toolset(
        "variables",
        "See what a notebook's kernel holds without running code of your own: its variables, and which cells to run "
        "again for stale outputs.",
        (*variables.TOOLS, *rerun.TOOLS),
    )


def search_toolset() -> Toolset:
    """``jupyter_search``: a string or a bounded regular expression over notebooks, open or not, and text files."""
    from webmcp_bridge.tools import search

    return Toolset(
        "search", "Find text in the workspace's notebooks (sources and outputs) and text files.", search.TOOLS
    )


def toolsets_toolset() -> Toolset:
    """``jupyter_toolsets``, the always-on discovery tool (:mod:`webmcp_bridge.calls.toolsets`)."""
    from webmcp_bridge.tools import toolsets

    return Toolset("toolsets", "List this page's toolsets and turn them on or off.", toolsets.TOOLS)
