"""Context and workspace tools: jupyter_get_context, jupyter_list_workspace, jupyter_open_notebook,
jupyter_create_notebook, jupyter_save_notebook."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any

from pydantic import Field

from webmcp_bridge.calls.registry import Annotations, Tool, ToolInput
from webmcp_bridge.core.errors import ErrorCode, ToolError, notebook_not_found
from webmcp_bridge.core.limits import CONTEXT_ITEMS, DEFAULT_LIMITS, ID_CHARS, MAX_PATH_BYTES, WORKSPACE_ENTRIES_DEFAULT
from webmcp_bridge.core.paths import join, normalize_path
from webmcp_bridge.review.threads import Review
from webmcp_bridge.tools.common import CallContext, NotebookInput, summary


class GetContextInput(ToolInput):
    """No arguments."""


async def get_context(ctx: CallContext, args: GetContextInput) -> dict[str, Any]:
    nb = ctx.host.current_notebook()
    focus = nb.focus() if nb else None
    kernel = nb.kernel() if nb else None
    return {
        "notebook": summary(nb) if nb else None,
        "openDocuments": [dataclasses.asdict(d) for d in ctx.host.open_documents()][:CONTEXT_ITEMS],
        "kernel": {"name": kernel.name, "status": kernel.status, "displayName": kernel.display_name} if kernel else None,
        "focus": {"cellId": focus.cell_id, "cursor": focus.cursor, "selection": focus.selection} if focus else None,
        "mode": ctx.proposals.mode,
        "proposals": [{"id": q.id, "tool": q.tool, "kind": q.kind, "cellId": q.cell_id, "path": q.path}
                      for q in ctx.proposals.waiting() if ctx.host.find_open(q.path) is not None][:CONTEXT_ITEMS],
        "review": Review(nb, ctx.limits).counts() if nb else None,
        "pending": ctx.pending.describe()[:CONTEXT_ITEMS],
        "dialogs": ctx.dialogs.describe_all(),
        "diagnostics": ctx.diagnostics.to_json(),
        "limits": {"resultBytes": ctx.limits.result_bytes, "sourceWriteBytes": ctx.limits.source_write_bytes,
                   "outputPageBytes": ctx.limits.output_page_bytes, "imageBytes": ctx.limits.image_bytes},
    }


class ListWorkspaceInput(ToolInput):
    path: Annotated[str, Field(description="Folder to list, relative to the workspace root ('' = the root).", max_length=MAX_PATH_BYTES)] = ""
    recursive: Annotated[bool, Field(description="Also list sub-folders, breadth first.")] = False
    limit: Annotated[int, Field(description="Most entries to return.", ge=1, le=DEFAULT_LIMITS.workspace_entries)] = WORKSPACE_ENTRIES_DEFAULT


async def list_workspace(ctx: CallContext, args: ListWorkspaceInput) -> dict[str, Any]:
    root = normalize_path(args.path, allow_root=True)
    limit = min(args.limit, ctx.limits.workspace_entries)
    first = await ctx.host.list_dir(root)
    if first is None:
        raise ToolError(ErrorCode.PATH_NOT_FOUND, f"No folder at {root!r}.", path=root)
    entries: list[dict[str, str]] = []
    queue, listing, truncated = [], first, False
    while True:
        for entry in sorted(listing, key=lambda e: (e.type != "directory", e.name.lower())):
            if entry.name.startswith("."):
                continue  # hidden files and folders (checkpoints, caches) are not part of the workspace view
            if len(entries) >= limit:
                truncated = True
                break
            entries.append({"path": entry.path, "name": entry.name, "type": entry.type})
            if args.recursive and entry.type == "directory":
                queue.append(entry.path)
        if truncated or not queue:
            break
        listing = await ctx.host.list_dir(queue.pop(0)) or []
    return {"path": root, "entries": entries, "truncated": truncated}


class OpenNotebookInput(ToolInput):
    path: Annotated[str, Field(description="Workspace-relative path of the notebook to open.", min_length=1, max_length=MAX_PATH_BYTES)]
    cell_id: Annotated[str | None, Field(description="Reveal and select this cell once open.", max_length=ID_CHARS)] = None
    activate: Annotated[bool, Field(description="Bring the notebook to the front (the person will see it).")] = True


async def open_notebook(ctx: CallContext, args: OpenNotebookInput) -> dict[str, Any]:
    path = normalize_path(args.path)
    if not path.endswith(".ipynb"):
        raise ToolError(ErrorCode.INVALID_PATH, "A notebook path ends with '.ipynb'.", path=path)
    entry = await ctx.host.stat(path)
    if entry is None or entry.type != "notebook":
        raise notebook_not_found(path)
    nb = await ctx.host.open_notebook(path, activate=False)
    if args.cell_id is not None:
        nb.find_cell(args.cell_id)  # an unknown id fails before the person's view moves
    if args.activate:
        nb = await ctx.host.open_notebook(path, activate=True)
    if args.cell_id is not None:
        nb.set_focus(args.cell_id, None, None)
    return {"notebook": summary(nb)}


class CreateNotebookInput(ToolInput):
    name: Annotated[str, Field(description="File name; '.ipynb' is added if missing.", min_length=1, max_length=255)]
    directory: Annotated[str, Field(description="Folder to create it in, relative to the workspace root.", max_length=MAX_PATH_BYTES)] = ""
    kernel: Annotated[str | None, Field(description="Kernel name (default: the site's default Python kernel).", max_length=128)] = None


async def create_notebook(ctx: CallContext, args: CreateNotebookInput) -> dict[str, Any]:
    if args.name.startswith("."):
        raise ToolError(ErrorCode.INVALID_PATH, "A notebook name may not start with '.' (hidden files are not listed).")
    name = args.name if args.name.endswith(".ipynb") else args.name + ".ipynb"
    path = join(args.directory, name)
    parent = path.rpartition("/")[0]
    if await ctx.host.list_dir(parent) is None:
        raise ToolError(ErrorCode.PATH_NOT_FOUND, f"No folder at {parent!r}.", path=parent)
    if await ctx.host.stat(path) is not None:
        raise ToolError(ErrorCode.PATH_EXISTS, f"Something already exists at {path!r}.", path=path)
    await ctx.host.create_notebook(path, args.kernel)
    nb = await ctx.host.open_notebook(path, activate=True)
    return {"path": path, "notebook": summary(nb)}


class SaveNotebookInput(NotebookInput):
    pass


async def save_notebook(ctx: CallContext, args: SaveNotebookInput) -> dict[str, Any]:
    nb = await ctx.notebook(args.notebook_path)
    if not await nb.save():  # Cancel in JupyterLab's "File Changed" dialog: a normal outcome, nothing written
        return {"saved": False, "path": nb.path, "notebook": summary(nb),
                "message": "The notebook was not saved: Cancel was chosen in JupyterLab's 'File Changed' dialog (the file "
                           "changed on disk since it was opened). The file on disk is unchanged; the notebook keeps its changes."}
    return {"saved": True, "path": nb.path, "notebook": summary(nb)}


TOOLS = (
    Tool("jupyter_get_context", "Get context",
         "What is open and where the person is: the current notebook (path, dirty, revision, cell counts), open documents, "
         "the kernel, the person's focus (active cell, cursor, selection), review counts (open/resolved comment threads), mode, pending calls, open dialogs and the problems of the site's own tools (diagnostics). Start here.",
         GetContextInput, get_context, Annotations(read_only=True)),
    Tool("jupyter_list_workspace", "List workspace",
         "List files and folders of the workspace (names and types, never contents).",
         ListWorkspaceInput, list_workspace, Annotations(read_only=True)),
    Tool("jupyter_open_notebook", "Open notebook",
         "Open a notebook of the workspace in JupyterLab, optionally revealing one cell.",
         OpenNotebookInput, open_notebook),
    Tool("jupyter_create_notebook", "Create notebook",
         "Create a new empty notebook in the workspace and open it. Refused with PATH_EXISTS if the file exists.",
         CreateNotebookInput, create_notebook),
    Tool("jupyter_save_notebook", "Save notebook",
         "Save the notebook to the workspace (notebooks are saved as nbformat 4.5, with their cell ids).",
         SaveNotebookInput, save_notebook),
)
