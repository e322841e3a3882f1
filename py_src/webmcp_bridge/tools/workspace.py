"""Context and workspace tools: jupyter_get_context, jupyter_list_workspace, jupyter_open_notebook,
jupyter_create_notebook, jupyter_save_notebook.

The context's errors summary (``includeErrors``) lists the cells of the current notebook whose last run raised (an
``error`` output among their first ERROR_SCAN_OUTPUTS: a run that raises ends with one, the next run clears the
outputs first), at most ERRORS_LISTED in notebook order, each with its error's name and message cut to
ERROR_MESSAGE_BYTES (the traceback is read with ``jupyter_get_output``). Read through the access guard: a hidden cell
is never listed and indices count visible cells.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
from typing import Any, Literal

from pydantic import Field

from webmcp_bridge.access.notebook_guard import GuardedNotebook
from webmcp_bridge.calls.payloads import DialogReport, Payload, Wire, sometimes
from webmcp_bridge.calls.registry import Annotations, ToolInput
from webmcp_bridge.core.diagnostics import Kind, Severity
from webmcp_bridge.core.errors import ErrorCode, ToolError, notebook_not_found
from webmcp_bridge.core.limits import (
    CONTEXT_ITEMS,
    DEFAULT_LIMITS,
    ERROR_MESSAGE_BYTES,
    ERROR_SCAN_OUTPUTS,
    ERRORS_LISTED,
    EXPORT_CHUNK,
    ID_CHARS,
    MAX_PATH_BYTES,
    SAVE_LOCK_WAIT_SECONDS,
    WORKSPACE_ENTRIES_DEFAULT,
    preview,
)
from webmcp_bridge.core.paths import is_notebook_path, join, normalize_path
from webmcp_bridge.core.uris import notebook_uri
from webmcp_bridge.host.protocol import SaveKind
from webmcp_bridge.propose.proposals import DeniedPayload
from webmcp_bridge.review.threads import Review
from webmcp_bridge.tools.common import CallContext, NotebookInput, summary, tool
from webmcp_bridge.tools.payloads import Focus, Kernel, NotebookSummary, ThreadCounts, model

#: the name the Pyodide kernel (jupyterlite-pyodide-kernel 0.8.6, ``str(type(error))``) gives an error
_CLASS_REPR = re.compile(r"<class '(?:[\w.]*\.)?(\w+)'>")


def error_name(ename: str) -> str:
    """The error's class name: the Pyodide kernel's ``<class 'module.Name'>`` becomes ``Name``."""
    match = _CLASS_REPR.fullmatch(ename.strip())
    return match.group(1) if match else ename


class CellError(Wire):
    """One cell whose last run raised."""

    cellId: str
    index: int
    executionCount: int | None
    ename: str
    evalue: str
    outputIndex: int


#: The cells of the current notebook whose last run raised (:func:`errors_summary`).
ErrorsSummary = model("ErrorsSummary", Wire, path=str, uri=str, count=int, cells=list[CellError], truncated=bool)


async def errors_summary(nb: GuardedNotebook) -> dict[str, Any]:
    """:class:`ErrorsSummary` of ``nb`` (module docstring), read EXPORT_CHUNK cells at a time with a yield between."""
    found: list[dict[str, Any]] = []
    count = 0
    total = nb.cell_count()
    for start in range(0, total, EXPORT_CHUNK):
        if start:
            await asyncio.sleep(0)
        for cell in nb.read_cells(
            range(start, min(total, start + EXPORT_CHUNK)), head_bytes=0, max_outputs=ERROR_SCAN_OUTPUTS
        ):
            index = next((i for i, o in enumerate(cell.outputs) if o.output_type == "error"), None)
            if index is None:
                continue
            count += 1
            if len(found) >= ERRORS_LISTED:
                continue
            output = cell.outputs[index]
            found.append(
                {
                    "cellId": cell.id,
                    "index": cell.index,
                    "executionCount": cell.execution_count,
                    "ename": preview(error_name(output.ename or ""), ERROR_MESSAGE_BYTES),
                    "evalue": preview(output.evalue or "", ERROR_MESSAGE_BYTES),
                    "outputIndex": index,
                }
            )
    return {
        "path": nb.path,
        "uri": notebook_uri(nb.path),
        "count": count,
        "cells": found,
        "truncated": count > len(found),
    }


class OpenDocumentOut(Wire):
    path: str
    kind: str
    dirty: bool


class ProposalOut(Wire):
    id: str
    tool: str
    kind: str
    cellId: str | None
    path: str


class PendingCallOut(Wire):
    pendingId: str
    tool: str
    status: Literal["running", "settled"]
    seconds: float


class DiagnosticOut(Wire):
    """A problem of the site's own tools (:mod:`webmcp_bridge.core.diagnostics`)."""

    name: str
    kind: Kind
    severity: Severity
    reason: str


LimitsOut = model("LimitsOut", Wire, resultBytes=int, sourceWriteBytes=int, outputPageBytes=int, imageBytes=int)
ContextOutput = model(
    "ContextOutput",
    notebook=NotebookSummary | None,
    openDocuments=list[OpenDocumentOut],
    kernel=Kernel | None,
    focus=Focus | None,
    mode=Literal["direct", "propose"],
    proposals=list[ProposalOut],
    review=ThreadCounts | None,
    pending=list[PendingCallOut],
    dialogs=list[DialogReport],
    diagnostics=list[DiagnosticOut],
    limits=LimitsOut,
    errors=(
        ErrorsSummary | None,
        sometimes("With includeErrors: the current notebook's cells whose last run raised (null without a notebook)."),
    ),
    guidance=(str, sometimes("With includeGuidance: how to work in this page (under 2 KB).")),
)


class EntryOut(Wire):
    path: str
    name: str
    type: Literal["notebook", "file", "directory"]


ListWorkspaceOutput = model("ListWorkspaceOutput", path=str, entries=list[EntryOut], truncated=bool)
OpenNotebookOutput = model("OpenNotebookOutput", notebook=NotebookSummary)
CreateNotebookOutput = model("CreateNotebookOutput", path=str, notebook=NotebookSummary)


class SaveNotebookOutput(Payload):
    saved: bool = Field(description="True only when this tab's notebook reached the file.")
    outcome: SaveKind
    path: str
    notebook: NotebookSummary
    savedRevision: int | None = sometimes("The notebook's revision when the save started: that content is in the file.")
    lastModified: str | None = sometimes("The file's modification time after the save.")
    unsavedChanges: bool = sometimes("The notebook changed while it saved: save again.")
    lockTimedOut: bool = sometimes("The save waited for the lock the site's tabs share and went ahead without it.")
    message: str = sometimes("Why nothing was saved (saved: false), or what to know of what was.")


class GetContextInput(ToolInput):
    include_errors: bool = Field(
        False,
        description="Also list the current notebook's cells whose last run raised (the cell, its error's name, "
        "short message and output index).",
    )
    include_guidance: bool = Field(
        False, description="Also return the guidance: how to work in this page (under 2 KB; read it once)."
    )


async def get_context(ctx: CallContext, args: GetContextInput) -> dict[str, Any]:
    nb = ctx.host.current_notebook()
    if nb is not None:
        await nb.count_tabs()  # the other tabs counted now, for otherTabs below
        nb = ctx.host.current_notebook()  # the person may have switched notebooks meanwhile
    focus = nb.focus() if nb else None
    kernel = nb.kernel() if nb else None
    result: dict[str, Any] = {
        "notebook": summary(nb) if nb else None,
        "openDocuments": [dataclasses.asdict(d) for d in ctx.host.open_documents()][:CONTEXT_ITEMS],
        "kernel": {"name": kernel.name, "status": kernel.status, "displayName": kernel.display_name}
        if kernel
        else None,
        "focus": {"cellId": focus.cell_id, "cursor": focus.cursor, "selection": focus.selection} if focus else None,
        "mode": ctx.proposals.mode,
        "proposals": [
            {"id": q.id, "tool": q.tool, "kind": q.kind, "cellId": q.cell_id, "path": q.path}
            for q in ctx.proposals.waiting()
            if q.scope == "workspace" or ctx.host.find_open(q.path) is not None
        ][:CONTEXT_ITEMS],
        "review": Review(nb, ctx.limits).counts() if nb else None,
        "pending": ctx.pending.describe()[:CONTEXT_ITEMS],
        "dialogs": ctx.dialogs.describe_all(),
        "diagnostics": ctx.diagnostics.to_json(),
        "limits": {
            "resultBytes": ctx.limits.result_bytes,
            "sourceWriteBytes": ctx.limits.source_write_bytes,
            "outputPageBytes": ctx.limits.output_page_bytes,
            "imageBytes": ctx.limits.image_bytes,
        },
    }
    if args.include_errors:
        result["errors"] = await errors_summary(nb) if nb else None
    if args.include_guidance:
        result["guidance"] = ctx.guidance
    return result


class ListWorkspaceInput(ToolInput):
    path: str = Field(
        "", description="Folder to list, relative to the workspace root ('' = the root).", max_length=MAX_PATH_BYTES
    )
    recursive: bool = Field(False, description="Also list sub-folders, breadth first.")
    limit: int = Field(
        WORKSPACE_ENTRIES_DEFAULT, description="Most entries to return.", ge=1, le=DEFAULT_LIMITS.workspace_entries
    )


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
    path: str = Field(
        description="Workspace-relative path of the notebook to open.", min_length=1, max_length=MAX_PATH_BYTES
    )
    cell_id: str | None = Field(None, description="Reveal and select this cell once open.", max_length=ID_CHARS)
    activate: bool = Field(True, description="Bring the notebook to the front (the person will see it).")


async def open_notebook(ctx: CallContext, args: OpenNotebookInput) -> dict[str, Any]:
    path = normalize_path(args.path)
    if not is_notebook_path(path):
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
    name: str = Field(description="File name; '.ipynb' is added if missing.", min_length=1, max_length=255)
    directory: str = Field(
        "", description="Folder to create it in, relative to the workspace root.", max_length=MAX_PATH_BYTES
    )
    kernel: str | None = Field(
        None, description="Kernel name (default: the site's default Python kernel).", max_length=128
    )


async def create_notebook(ctx: CallContext, args: CreateNotebookInput) -> dict[str, Any]:
    if args.name.startswith("."):
        raise ToolError(ErrorCode.INVALID_PATH, "A notebook name may not start with '.' (hidden files are not listed).")
    name = args.name if is_notebook_path(args.name) else args.name + ".ipynb"
    path = join(args.directory, name)
    parent = path.rpartition("/")[0]
    if await ctx.host.list_dir(parent) is None:
        raise ToolError(ErrorCode.PATH_NOT_FOUND, f"No folder at {parent!r}.", path=parent)
    if await ctx.host.stat(path) is not None:
        raise ToolError(ErrorCode.PATH_EXISTS, f"Something already exists at {path!r}.", path=path)
    kernel = f" with the kernel {args.kernel!r}" if args.kernel else ""
    await ctx.propose_workspace(
        "jupyter_create_notebook", "create_notebook", path, f"Create the notebook {path}{kernel} and open it"
    )
    await ctx.host.create_notebook(path, args.kernel)  # checks again that nothing is at the path (PATH_EXISTS)
    nb = await ctx.host.open_notebook(path, activate=True)
    return {"path": path, "notebook": summary(nb)}


#: what a save that wrote nothing tells the agent, by outcome (see :class:`~webmcp_bridge.host.protocol.SaveOutcome`)
NOT_SAVED = {
    "cancelled": "The notebook was not saved: Cancel was chosen in JupyterLab's 'File Changed' dialog (the file "
    "changed on disk since this tab loaded or last saved it, e.g. saved from another tab). The file on disk is "
    "unchanged; the notebook keeps its changes.",
    "reverted": "The notebook was not saved: Revert was chosen in JupyterLab's 'File Changed' dialog, so this tab now "
    "shows the file on disk and its unsaved changes are gone. Read the cells again before changing them.",
    "dialog-open": "The notebook was not saved: JupyterLab's 'File Changed' dialog is already open for it (see "
    "dialogs). Nothing was written; the notebook keeps its changes.",
}


#: what a save that waited for the tabs' lock and went ahead without it adds to its message
LOCK_TIMED_OUT = (
    "The lock this site's tabs take around a save was held by something else for {seconds:g} s (code left running "
    "in a kernel can hold it), so the save went ahead without it: the file was checked for changes first, not "
    "atomically with another tab's save. The person was warned."
)


async def save_notebook(ctx: CallContext, args: NotebookInput) -> dict[str, Any]:
    nb = await ctx.notebook(args.notebook_path)
    done = await nb.save()
    await nb.count_tabs()
    result: dict[str, Any] = {"saved": done.saved, "outcome": done.outcome, "path": nb.path}
    unlocked = [LOCK_TIMED_OUT.format(seconds=SAVE_LOCK_WAIT_SECONDS)] if done.unlocked else []
    if done.unlocked:
        result["lockTimedOut"] = True
    if not done.saved:
        return {**result, "notebook": summary(nb), "message": " ".join([NOT_SAVED[done.outcome], *unlocked])}
    result.update(savedRevision=done.revision, lastModified=done.last_modified, notebook=summary(nb))
    notes = unlocked
    if done.outcome == "overwritten":
        notes.append(
            "The file had changed since this tab loaded or last saved it; Overwrite replaced it with this tab's "
            "notebook."
        )
    if done.revision is not None and nb.revision() != done.revision:
        result["unsavedChanges"] = True
        notes.append(
            f"The file holds the notebook as it was at revision {done.revision}; changes made since (now revision "
            f"{nb.revision()}) are not in it: save again."
        )
    if notes:
        result["message"] = " ".join(notes)
    return result


TOOLS = (
    tool(
        "jupyter_get_context",
        "What is open and where the person is: the current notebook (path, dirty, revision, cell counts), open "
        "documents, the kernel, the person's focus (active cell, cursor, selection), review counts (open/resolved "
        "comment threads), mode, pending calls, open dialogs and the problems of the site's own tools (diagnostics). "
        "Start here; includeGuidance returns how to work in this page, includeErrors the cells whose last run raised.",
        get_context,
        Annotations.read(),
        ContextOutput,
    ),
    tool(
        "jupyter_list_workspace",
        "List files and folders of the workspace (names and types, never contents).",
        list_workspace,
        Annotations.read(),
        ListWorkspaceOutput,
    ),
    tool(
        "jupyter_open_notebook",
        "Open a notebook of the workspace in JupyterLab, optionally revealing one cell.",
        open_notebook,
        Annotations.write(destructive=False, idempotent=True),
        OpenNotebookOutput,
    ),
    tool(
        "jupyter_create_notebook",
        "Create a new empty notebook in the workspace and open it. Refused with PATH_EXISTS if the file exists.",
        create_notebook,
        Annotations.write(destructive=False, idempotent=False),
        CreateNotebookOutput | DeniedPayload,
    ),
    tool(
        "jupyter_save_notebook",
        "Save the notebook to the workspace (notebooks are saved as nbformat 4.5, with their cell ids). saved: true "
        "only when this tab's notebook reached the file; if the file changed since this tab loaded or last saved it "
        "(another tab saved it), JupyterLab's 'File Changed' dialog asks first (the call returns pending with that "
        "dialog).",
        save_notebook,
        Annotations.write(destructive=True, idempotent=True),
        SaveNotebookOutput,
    ),
)
