"""Writing tools: insert, update, edit, delete and move a cell, clear outputs (``notebooks`` toolset), and
jupyter_set_cell_type (:data:`TYPE_TOOLS`, in the ``batch`` toolset).

No ``await`` comes between a write's check and the write (the host's write methods are synchronous), so a person's
edit either fails the hash check or lands after the write, never overwritten silently. In Direct mode
``ctx.propose`` awaits nothing, so the cell checked is the live one; after a proposal waited, it is checked again.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from webmcp_bridge.access.notebook_guard import GuardedNotebook
from webmcp_bridge.calls.payloads import Payload, Wire, sometimes
from webmcp_bridge.calls.registry import Annotations
from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.core.limits import ID_CHARS, IDS_LISTED, SHORT_ID_CHARS, SUMMARY_IDS, normalize_line_ends
from webmcp_bridge.core.snapshot import check_as_shown, check_hash
from webmcp_bridge.host.protocol import RawCell
from webmcp_bridge.propose.proposals import DeniedPayload
from webmcp_bridge.tools.common import (
    CallContext,
    CellIdField,
    CellIds,
    HashField,
    Id,
    NotebookInput,
    Position,
    cell_ref,
    check_full_read,
    check_write_size,
    note_written,
    tool,
    unique,
    write_block,
)
from webmcp_bridge.tools.payloads import CellRef, NotebookRevision, model

#: The result of an insert, update or edit.
CellWritten = model("CellWritten", cell=CellRef, notebook=NotebookRevision)
IdIndex = model("IdIndex", Wire, id=str, index=int)
CellDeleted = model("CellDeleted", deleted=IdIndex, notebook=NotebookRevision)
CellMoved = model("CellMoved", cell=IdIndex, notebook=NotebookRevision)
OutputsCleared = model(
    "OutputsCleared",
    cleared=list[str],
    notebook=NotebookRevision,
    skippedReadOnly=(list[str], sometimes("Cells left as they were: read-only for the agent.")),
)


class InsertCellInput(NotebookInput):
    reference_cell_id: str | None = Field(
        None,
        description="Insert next to this cell; omit to insert at the end (below) or the start (above).",
        max_length=ID_CHARS,
    )
    position: Position = Field("below", description="Above or below the reference cell.")
    cell_type: Literal["code", "markdown", "raw"] = Field("code", description="The new cell's type.")
    source: str = Field("", description="The new cell's source.")
    activate: bool = Field(False, description="Make the new cell the active cell (moves the person's focus).")


def placement(position: str, reference: str | None) -> str:
    """Where an insert puts its cell, for the person: ``below <reference>``, else at the end or the start."""
    return f"{position} {reference}" if reference else ("at the end" if position == "below" else "at the start")


async def insert_cell(ctx: CallContext, args: InsertCellInput) -> dict[str, Any]:
    check_write_size(args.source, ctx.limits, "source")
    nb = await ctx.notebook(args.notebook_path)
    nb.check_write()
    if args.reference_cell_id is not None:
        nb.find_cell(args.reference_cell_id)
    where = placement(args.position, f"cell {args.reference_cell_id}" if args.reference_cell_id else None)
    # shown under the reference cell (or at the notebook's end), as the new cell's whole source
    summary = f"Insert a {args.cell_type} cell {where}"
    await ctx.propose(
        nb, "jupyter_insert_cell", "insert", args.reference_cell_id, summary, before="", after=args.source
    )
    cell = nb.insert_cell_near(args.reference_cell_id, args.position, args.cell_type, args.source)
    note_written(ctx, nb, cell)
    if args.activate:
        nb.set_focus(cell.id, None, None)
    return {"cell": cell_ref(cell), "notebook": write_block(nb)}


async def _checked_cell(ctx: CallContext, args: Any, **write: bool) -> tuple[GuardedNotebook, RawCell]:
    """The notebook and cell ``args`` name, ``expectedSourceHash`` checked, then the write (``write``: how)."""
    nb = await ctx.notebook(args.notebook_path)
    cell = nb.find_cell(args.cell_id)
    check_hash(cell, args.expected_source_hash, ctx.limits)
    nb.check_write([cell.id], **write)
    return nb, cell


class UpdateCellInput(NotebookInput):
    cell_id: CellIdField
    source: str = Field(description="The cell's whole new source.")
    expected_source_hash: HashField


async def update_cell(ctx: CallContext, args: UpdateCellInput) -> dict[str, Any]:
    check_write_size(args.source, ctx.limits, "source")
    nb, cell = await _checked_cell(ctx, args, source=True)
    check_full_read(ctx, nb, cell)
    if await ctx.propose(
        nb, "jupyter_update_cell", "update", cell.id, "Replace the cell's source", before=cell.source, after=args.source
    ):
        # the person may have typed while it waited
        check_hash(nb.find_cell(cell.id), args.expected_source_hash, ctx.limits)
    written = nb.set_source(cell.id, args.source)
    note_written(ctx, nb, written)
    return {"cell": cell_ref(written), "notebook": write_block(nb)}


class EditCellSourceInput(NotebookInput):
    cell_id: CellIdField
    old_text: str = Field(description="Exact text to replace; it must occur exactly once in the cell.", min_length=1)
    new_text: str = Field(description="Replacement text.")
    expected_source_hash: str | None = Field(
        None,
        description="Optional sourceHash you read; refused with STALE_CELL if the cell changed.",
        max_length=SHORT_ID_CHARS,
    )


def replace_once(source: str, old_text: str, new_text: str, cell_id: str) -> str:
    """``source`` (LF line ends) with its one ``old_text`` replaced by ``new_text`` (both made LF first).
    Raises ToolError(INVALID_ARGUMENT) when ``old_text`` occurs not once."""
    old_text, new_text = normalize_line_ends(old_text), normalize_line_ends(new_text)  # sources hold LF only
    occurrences = source.count(old_text)
    if occurrences != 1:
        raise ToolError(
            ErrorCode.INVALID_ARGUMENT,
            "oldText does not occur in the cell."
            if occurrences == 0
            else f"oldText occurs {occurrences} times; include more surrounding text so it occurs once.",
            cellId=cell_id,
            occurrences=occurrences,
        )
    return source.replace(old_text, new_text, 1)


async def edit_cell_source(ctx: CallContext, args: EditCellSourceInput) -> dict[str, Any]:
    check_write_size(args.new_text, ctx.limits, "newText")
    nb, cell = await _checked_cell(ctx, args, source=True)  # access and lock first: no match makes it writable
    new_source = replace_once(cell.source, args.old_text, args.new_text, cell.id)
    check_write_size(new_source, ctx.limits, "the edited source")
    summary = "Edit part of the cell's source"
    if await ctx.propose(
        nb, "jupyter_edit_cell_source", "edit", cell.id, summary, before=cell.source, after=new_source
    ):
        check_as_shown([nb.find_cell(cell.id)], {cell.id: cell.source}, ctx.limits)
    written = nb.set_source(cell.id, new_source)
    note_written(ctx, nb, written, before=cell)
    return {"cell": cell_ref(written), "notebook": write_block(nb)}


class DeleteCellInput(NotebookInput):
    cell_id: CellIdField
    expected_source_hash: HashField


async def delete_cell(ctx: CallContext, args: DeleteCellInput) -> dict[str, Any]:
    nb, cell = await _checked_cell(ctx, args, delete=True)
    if await ctx.propose(
        nb, "jupyter_delete_cell", "delete", cell.id, "Delete this cell", before=cell.source, after=""
    ):
        # the person may have typed while it waited
        check_hash(nb.find_cell(cell.id), args.expected_source_hash, ctx.limits)
    nb.delete_cell(cell.id)
    return {"deleted": {"id": cell.id, "index": cell.index}, "notebook": write_block(nb, cellCount=nb.cell_count())}


class MoveCellInput(NotebookInput):
    cell_id: CellIdField
    reference_cell_id: Id = Field(description="Move next to this cell.")
    position: Position = Field("below", description="Above or below the reference cell.")


async def move_cell(ctx: CallContext, args: MoveCellInput) -> dict[str, Any]:
    if args.cell_id == args.reference_cell_id:
        raise ToolError(ErrorCode.INVALID_ARGUMENT, "A cell cannot be moved relative to itself.")
    nb = await ctx.notebook(args.notebook_path)
    nb.check_write([args.cell_id])
    nb.find_cells([args.cell_id, args.reference_cell_id])
    await ctx.propose(
        nb, "jupyter_move_cell", "move", args.cell_id, f"Move this cell {args.position} cell {args.reference_cell_id}"
    )
    moved = nb.move_cell_near(args.cell_id, args.reference_cell_id, args.position)
    return {"cell": {"id": moved.id, "index": moved.index}, "notebook": write_block(nb)}


class CellTypeSet(Payload):
    cell: CellRef
    previousType: Literal["code", "markdown", "raw"]
    changed: bool = Field(description="False when the cell already had that type (nothing was written).")
    droppedOutputs: int = sometimes("Outputs the code cell had and lost (nbformat: only code cells have outputs).")
    notebook: NotebookRevision


class SetCellTypeInput(NotebookInput):
    cell_id: CellIdField
    cell_type: Literal["code", "markdown", "raw"] = Field(description="The cell's new type.")
    expected_source_hash: str | None = Field(
        None,
        description="Optional sourceHash you read; refused with STALE_CELL if the cell changed since.",
        max_length=SHORT_ID_CHARS,
    )


async def set_cell_type(ctx: CallContext, args: SetCellTypeInput) -> dict[str, Any]:
    """Change a cell's type, keeping its id, source and metadata (docs/TOOLS.md, "Changing a cell's type"): write
    rules as for a source edit, ``expectedSourceHash`` optional; a code cell loses its outputs and execution count
    (nbformat gives them to code cells only), reported as ``droppedOutputs``; the same type is a no-op."""
    nb, cell = await _checked_cell(ctx, args, source=True)
    if cell.cell_type == args.cell_type:
        return {"cell": cell_ref(cell), "previousType": cell.cell_type, "changed": False, "notebook": write_block(nb)}
    dropped = cell.output_count if cell.cell_type == "code" else 0
    summary = f"Change this {cell.cell_type} cell to {args.cell_type}" + (
        f" (its {dropped} output(s) and execution count are dropped)"
        if dropped
        else (" (its execution count is dropped)" if cell.execution_count is not None else "")
    )
    if await ctx.propose(nb, "jupyter_set_cell_type", "type", cell.id, summary):
        # the person may have typed, changed the type or the levels, or the author a lock, while it waited
        cell = nb.find_cell(cell.id)
        check_hash(cell, args.expected_source_hash, ctx.limits)
        nb.check_write([cell.id], source=True)
        dropped = cell.output_count if cell.cell_type == "code" and args.cell_type != "code" else 0
    previous = cell.cell_type
    written = nb.set_cell_type(cell.id, args.cell_type)
    payload: dict[str, Any] = {
        "cell": cell_ref(written),
        "previousType": previous,
        "changed": previous != args.cell_type,
        "notebook": write_block(nb),
    }
    if dropped:
        payload["droppedOutputs"] = dropped
    return payload


class ClearOutputsInput(NotebookInput):
    cell_ids: CellIds | None = Field(None, description="Cells whose outputs to clear; omit for every code cell.")


async def clear_outputs(ctx: CallContext, args: ClearOutputsInput) -> dict[str, Any]:
    nb = await ctx.notebook(args.notebook_path)
    skipped: list[str] = []
    if args.cell_ids is None:
        nb.check_write()
        code = [c.id for c in nb.read_cells(None, head_bytes=0, max_outputs=0) if c.cell_type == "code"]
        targets = [cell_id for cell_id in code if nb.is_writable(cell_id)]
        skipped = [cell_id for cell_id in code if cell_id not in targets]
    else:
        cells = nb.find_cells(unique(args.cell_ids))  # all ids checked before anything changes
        targets = [c.id for c in cells if c.cell_type == "code"]
        nb.check_write(targets)
    if targets:
        named = f": {', '.join(targets[:SUMMARY_IDS])}" if len(targets) > 1 else ""
        summary = f"Clear the outputs of {len(targets)} cell(s){named}"
        if await ctx.propose(nb, "jupyter_clear_outputs", "clear", targets[0], summary):
            there = {c.id for c in nb.read_cells(None, head_bytes=0, max_outputs=0)}
            targets = [cell_id for cell_id in targets if cell_id in there]  # still there after the person's accept
            nb.check_write(targets)  # and still writable: all checked before anything is cleared
    for cell_id in targets:
        nb.clear_outputs(cell_id)
    payload: dict[str, Any] = {"cleared": targets, "notebook": write_block(nb)}
    if skipped:
        payload["skippedReadOnly"] = skipped[:IDS_LISTED]
    return payload


TOOLS = (
    tool(
        "jupyter_insert_cell",
        "Insert a new code, markdown or raw cell above or below a cell (or at the end). Returns the new cell's id and "
        "sourceHash.",
        insert_cell,
        Annotations.write(destructive=False, idempotent=False),
        CellWritten | DeniedPayload,
    ),
    tool(
        "jupyter_update_cell",
        "Replace a cell's whole source. Needs the sourceHash you read; refused with STALE_CELL if the person changed "
        "the cell since.",
        update_cell,
        Annotations.write(destructive=True, idempotent=True, untrusted_content=True, consequential=True),
        CellWritten | DeniedPayload,
    ),
    tool(
        "jupyter_edit_cell_source",
        "Replace one exact piece of text inside a cell's source (oldText must occur exactly once).",
        edit_cell_source,
        Annotations.write(destructive=True, idempotent=False, untrusted_content=True),
        CellWritten | DeniedPayload,
    ),
    tool(
        "jupyter_delete_cell",
        "Delete a cell. Needs the sourceHash you read; refused with STALE_CELL if the cell changed since.",
        delete_cell,
        Annotations.write(destructive=True, idempotent=True, untrusted_content=True, consequential=True),
        CellDeleted | DeniedPayload,
    ),
    tool(
        "jupyter_move_cell",
        "Move a cell above or below another cell.",
        move_cell,
        Annotations.write(destructive=False, idempotent=True),
        CellMoved | DeniedPayload,
    ),
    tool(
        "jupyter_clear_outputs",
        "Clear the outputs (and execution counts) of some code cells, or of all of them.",
        clear_outputs,
        Annotations.write(destructive=True, idempotent=True, consequential=True),
        OutputsCleared | DeniedPayload,
    ),
)

#: tools of edit.py that are not on the default page (the ``batch`` toolset, see webmcp_bridge.tools)
TYPE_TOOLS = (
    tool(
        "jupyter_set_cell_type",
        "Change a cell's type (code, markdown, raw), keeping its id, source and metadata; a code cell that becomes "
        "markdown or raw loses its outputs and execution count. expectedSourceHash is optional (checked when given).",
        set_cell_type,
        Annotations.write(destructive=True, idempotent=True, untrusted_content=True),
        CellTypeSet | DeniedPayload,
    ),
)
