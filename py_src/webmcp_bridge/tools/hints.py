"""What each built-in tool does to the notebooks and files, as MCP tool annotations.

MCP clients act on these hints (the MCP specification's ``ToolAnnotations``): some ask the person before every
call of a tool marked ``destructiveHint`` and let the others through. Every built-in tool states all of them here,
in one table, so the choices can be read and compared side by side; :func:`with_hints` puts them on the tools'
:class:`~webmcp_bridge.calls.registry.Annotations` (whose ``read_only``, ``untrusted_content`` and
``consequential`` stay beside each tool). The rules:

- **destructive**: the tool may delete, overwrite or reset what is there: a cell's source (update, edit, apply
  edits), a cell (delete), outputs (clear, and a run, which replaces the cell's outputs and changes the kernel's
  state), the kernel's variables (restart, interrupt, code run), a file (save, write), whatever a dialog's button
  does (answering a dialog). Inserting, moving, focusing, commenting and opening only add or point.
- **idempotent**: the same call again changes nothing more: every read; setting a cell's whole source, deleting
  or clearing (the second call finds nothing left to do, or is refused by the hash check); moving next to a
  cell, focusing; saving and writing the same text. Not: inserting (a second cell), a text replacement (the new
  text may hold the old again), runs, kernel actions, new comments, answering a dialog.
- **openWorld**: false for every tool: they act on the page's own workspace, its notebooks and its kernel, and
  reach no other system.

A tool missing from :data:`HINTS` is an error of the bridge (``tests/test_annotations.py`` checks every built-in
tool is listed).
"""

from __future__ import annotations

import dataclasses

from webmcp_bridge.calls.registry import Toolset

#: (destructive, idempotent) of a tool that only reads
READS = (False, True)

#: tool name -> (destructiveHint, idempotentHint); openWorldHint is false for all (module docstring)
HINTS: dict[str, tuple[bool, bool]] = {
    # notebooks
    "jupyter_get_context": READS,
    "jupyter_list_workspace": READS,
    "jupyter_open_notebook": (False, True),
    "jupyter_create_notebook": (False, False),
    "jupyter_save_notebook": (True, True),
    "jupyter_get_cells": READS,
    "jupyter_get_output": READS,
    "jupyter_get_notebook_map": READS,
    "jupyter_insert_cell": (False, False),
    "jupyter_update_cell": (True, True),
    "jupyter_edit_cell_source": (True, False),
    "jupyter_delete_cell": (True, True),
    "jupyter_move_cell": (False, True),
    "jupyter_clear_outputs": (True, True),
    "jupyter_run_cells": (True, False),
    "jupyter_kernel_action": (True, False),
    "jupyter_focus_cell": (False, True),
    # calls
    "jupyter_wait_for_result": READS,
    "jupyter_answer_dialog": (True, False),
    # access
    "jupyter_get_cell_access": READS,
    "jupyter_get_changes": READS,
    "jupyter_get_output_selection": READS,
    # review
    "jupyter_list_comments": READS,
    "jupyter_get_comment": READS,
    "jupyter_create_comment": (False, False),
    "jupyter_reply_comment": (False, False),
    "jupyter_resolve_comment": (False, True),
    "jupyter_reopen_comment": (False, True),
    "jupyter_focus_comment": (False, True),
    # files
    "jupyter_export_notebook": READS,
    "jupyter_read_file": READS,
    "jupyter_write_file": (True, False),  # an overwrite is idempotent, an append is not
    "jupyter_edit_file": (True, False),
    # batch, code
    "jupyter_apply_edits": (True, False),
    "jupyter_set_cell_type": (True, True),  # a code cell's outputs are dropped; the same type again changes nothing
    "jupyter_run_code": (True, False),
    # variables
    "jupyter_list_variables": READS,
    "jupyter_inspect_variable": READS,
    "jupyter_rerun_plan": READS,
    # search
    "jupyter_search": READS,
    # toolsets
    "jupyter_toolsets": (False, True),
}


def with_hints(toolset: Toolset) -> Toolset:
    """``toolset`` with every tool's MCP hints set from :data:`HINTS` (the tools' other annotations kept).

    Raises KeyError naming a tool that is not in the table.
    """
    tools = []
    for tool in toolset.tools:
        if tool.name not in HINTS:
            raise KeyError(f"{tool.name} has no entry in webmcp_bridge.tools.hints.HINTS")
        destructive, idempotent = HINTS[tool.name]
        annotations = dataclasses.replace(
            tool.annotations,
            destructive=destructive and not tool.annotations.read_only,
            idempotent=idempotent,
            open_world=False,
        )
        tools.append(dataclasses.replace(tool, annotations=annotations))
    return dataclasses.replace(toolset, tools=tuple(tools))
