"""Tool families. Each module contributes tools; :func:`notebooks_toolset` groups the core ones.

The modules are imported when the toolset is built, not when this package is imported, so start-up can
import them one at a time (see :mod:`webmcp_bridge.lab.session`).
"""

from __future__ import annotations

from webmcp_bridge.calls.registry import Toolset


def notebooks_toolset() -> Toolset:
    """The ``notebooks`` toolset: the 17 core tools of the product contract (context, workspace, the notebook's map,
    cells, kernel)."""
    from webmcp_bridge.tools import cells, edit, notebook_map, run, workspace

    return Toolset(
        "notebooks",
        "Read, edit and run the notebooks of the JupyterLab workspace.",
        (*workspace.TOOLS, *notebook_map.TOOLS, *cells.TOOLS, *edit.TOOLS, *run.TOOLS),
    )


def calls_toolset() -> Toolset:
    """The ``calls`` toolset: collecting calls that went pending (``jupyter_wait_for_result``) and answering the
    dialogs they opened (``jupyter_answer_dialog``)."""
    from webmcp_bridge.tools import calls

    return Toolset(
        "calls", "Follow calls that outlived the execution timeout and answer the dialogs they opened.", calls.TOOLS
    )


def review_toolset() -> Toolset:
    """The ``review`` toolset: the 7 review-thread tools (``jupyter_*_comment(s)``, see
    :mod:`webmcp_bridge.review.threads`)."""
    from webmcp_bridge.tools import review

    return Toolset("review", "Read, write and show the review threads (comments) of a notebook.", review.TOOLS)


def access_toolset() -> Toolset:
    """The ``access`` toolset: ``jupyter_get_cell_access`` (levels are the person's to change, never a tool's) and
    ``jupyter_get_changes`` (who changed what, from the guard's change log) and ``jupyter_get_output_selection``
    (output text the person shared)."""
    from webmcp_bridge.tools import access, changes, sharing

    return Toolset(
        "access",
        "See what the person allows the agent to read and change, what changed, and what the person shared.",
        (*access.TOOLS, *changes.TOOLS, *sharing.TOOLS),
    )


def files_toolset() -> Toolset:
    """The ``files`` toolset: ``jupyter_read_file`` / ``jupyter_write_file`` / ``jupyter_edit_file`` (bounded text
    files, never notebooks) and ``jupyter_export_notebook`` (a notebook as one Markdown document)."""
    from webmcp_bridge.tools import cells, files

    return Toolset(
        "files",
        "Read, write and edit the workspace's text files (notebooks go through the cell tools); export a notebook as "
        "Markdown.",
        (*files.TOOLS, *cells.EXPORT_TOOLS),
    )


def batch_toolset() -> Toolset:
    """The ``batch`` toolset: the structural cell edits that are not on the default page: ``jupyter_apply_edits``
    (several cell edits checked up front, applied all or nothing) and ``jupyter_set_cell_type``."""
    from webmcp_bridge.tools import batch, edit

    return Toolset(
        "batch",
        "Apply several cell edits at once, all or nothing, and change a cell's type (code, markdown, raw).",
        (*batch.TOOLS, *edit.TYPE_TOOLS),
    )


def code_toolset() -> Toolset:
    """The ``code`` toolset: ``jupyter_run_code`` (code run in the notebook's kernel without a cell)."""
    from webmcp_bridge.tools import code

    return Toolset("code", "Run code in a notebook's kernel without creating a cell.", code.TOOLS)


def variables_toolset() -> Toolset:
    """The ``variables`` toolset: ``jupyter_list_variables`` and ``jupyter_inspect_variable`` (the kernel's variables,
    read by the bridge's own inspection, :mod:`webmcp_bridge.core.kernel_inspect`) and ``jupyter_rerun_plan`` (which
    cells to run so that the kernel gives what the notebook says, :mod:`webmcp_bridge.tools.rerun`): what the kernel
    holds, beside the notebook, without running code."""
    from webmcp_bridge.tools import rerun, variables

    return Toolset(
        "variables",
        "See what a notebook's kernel holds without running code of your own: its variables, and which cells to run "
        "again for stale outputs.",
        (*variables.TOOLS, *rerun.TOOLS),
    )


def search_toolset() -> Toolset:
    """The ``search`` toolset: ``jupyter_search`` (a string or a bounded regular expression over the notebooks, open or
    not, and the text files of the workspace)."""
    from webmcp_bridge.tools import search

    return Toolset(
        "search", "Find text in the workspace's notebooks (sources and outputs) and text files.", search.TOOLS
    )


def toolsets_toolset() -> Toolset:
    """The ``toolsets`` toolset: ``jupyter_toolsets``, the discovery tool (always on: it lists the page's toolsets and
    turns the others on, see :mod:`webmcp_bridge.calls.toolsets`)."""
    from webmcp_bridge.tools import toolsets

    return Toolset("toolsets", "List this page's toolsets and turn them on or off.", toolsets.TOOLS)
