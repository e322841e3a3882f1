"""Several cell edits at once: jupyter_apply_edits (rules also in docs/TOOLS.md).

Insert, update, edit, delete and move ops take the single-cell tools' arguments and apply in order, each seeing the
earlier ones' effects. Cell ids name cells that exist before the batch (a deleted one cannot be named again) and
``expectedSourceHash`` is the hash read before it. Everything is checked up front, then applied all or nothing (a
failure says ``editIndex``, "edit N: ..."). No await between checks and write, so a person's edit lands before the
check (STALE_CELL) or after the batch; the host applies it in one synchronous stretch (JupyterLab: one undo step).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from webmcp_bridge.access.notebook_guard import GuardedNotebook
from webmcp_bridge.calls.payloads import Wire, sometimes
from webmcp_bridge.calls.registry import Annotations, ToolInput
from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.core.limits import DEFAULT_LIMITS, normalize_line_ends, preview
from webmcp_bridge.core.snapshot import check_as_shown, check_hash
from webmcp_bridge.host.protocol import DeleteOp, EditOp, InsertOp, MoveOp, RawCell, SetSourceOp
from webmcp_bridge.propose.proposals import DIFF_LINES, DeniedPayload, diff_lines_at_least, source_diff
from webmcp_bridge.tools.common import (
    CallContext,
    CellIdField,
    HashField,
    Id,
    NotebookInput,
    Position,
    ShortId,
    cell_ref,
    check_count,
    check_full_read,
    check_write_size,
    note_written,
    tool,
    unique,
    write_block,
)
from webmcp_bridge.tools.edit import placement, replace_once
from webmcp_bridge.tools.payloads import CellRef, NotebookRevision, model

PositionField = Annotated[Position, Field(description="Above or below the reference cell.")]


class InsertEdit(ToolInput):
    op: Literal["insert"]
    reference_cell_id: Id | None = Field(
        None,
        description="Insert next to this cell (one that exists before this batch); omit to insert at the end "
        "(below) or the start (above).",
    )
    position: PositionField = "below"
    cell_type: Literal["code", "markdown", "raw"] = Field("code", description="The new cell's type.")
    source: str = Field("", description="The new cell's source.")


class UpdateEdit(ToolInput):
    op: Literal["update"]
    cell_id: CellIdField
    source: str = Field(description="The cell's whole new source.")
    expected_source_hash: HashField


class TextEdit(ToolInput):
    op: Literal["edit"]
    cell_id: CellIdField
    old_text: str = Field(
        description="Exact text to replace; it must occur exactly once in the cell (as the earlier edits of this "
        "batch left it).",
        min_length=1,
    )
    new_text: str = Field(description="Replacement text.")
    expected_source_hash: ShortId | None = Field(None, description="Optional sourceHash you read (before this batch).")


class DeleteEdit(ToolInput):
    op: Literal["delete"]
    cell_id: CellIdField
    expected_source_hash: HashField


class MoveEdit(ToolInput):
    op: Literal["move"]
    cell_id: CellIdField
    reference_cell_id: Id = Field(description="The cell to place it next to (a cell that exists before this batch).")
    position: PositionField = "below"


Edit = Annotated[InsertEdit | UpdateEdit | TextEdit | DeleteEdit | MoveEdit, Field(discriminator="op")]


def _plain_union(node: Any) -> None:
    """Plain JSON Schema for pydantic's discriminated union: no ``discriminator`` (its ``mapping`` points
    into ``$defs`` the registry inlines away) and ``anyOf`` for ``oneOf`` (each variant pins ``op`` with ``const``)."""
    if isinstance(node, dict):
        node.pop("discriminator", None)
        if "oneOf" in node:
            node["anyOf"] = node.pop("oneOf")
        for value in node.values():
            _plain_union(value)
    elif isinstance(node, list):
        for value in node:
            _plain_union(value)


class ApplyEditsInput(NotebookInput):
    edits: list[Edit] = Field(
        description=f"The edits, applied in order, all or nothing (at most {DEFAULT_LIMITS.batch_edits}). Each "
        "is one of: "
        "{op: 'insert', referenceCellId?, position?, cellType?, source?}, "
        "{op: 'update', cellId, source, expectedSourceHash}, "
        "{op: 'edit', cellId, oldText, newText, expectedSourceHash?}, "
        "{op: 'delete', cellId, expectedSourceHash}, "
        "{op: 'move', cellId, referenceCellId, position?}.",
        min_length=1,
        max_length=DEFAULT_LIMITS.batch_edits,
    )

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        schema = super().model_json_schema(*args, **kwargs)
        _plain_union(schema)
        return schema


def _at(index: int, err: ToolError) -> ToolError:
    """``err`` saying which edit of the batch it is about."""
    return ToolError(err.code, f"edit {index}: {err.message}", editIndex=index, **err.details)


def plan(edits: list[Any], cells: dict[str, RawCell], nb: GuardedNotebook, ctx: CallContext) -> list[EditOp]:
    """The host ops of ``edits``, each checked against ``cells`` (id -> cell before the batch), the access levels
    and the earlier edits; raises the first failure."""
    sources = {cell_id: cell.source for cell_id, cell in cells.items()}
    deleted: dict[str, int] = {}
    ops: list[EditOp] = []

    def alive(cell_id: str, *, changed: bool = True, source: bool = False, delete: bool = False) -> RawCell:
        if cell_id in deleted:
            raise ToolError(
                ErrorCode.INVALID_ARGUMENT,
                f"cell {cell_id!r} is deleted by edit {deleted[cell_id]} of this batch.",
                cellId=cell_id,
            )
        if changed:  # CELL_ACCESS_DENIED for a read-only cell, CELL_LOCKED for a locked one, said for this edit
            nb.check_write([cell_id], source=source, delete=delete)
        return cells[cell_id]

    for index, edit in enumerate(edits):
        try:
            if isinstance(edit, InsertEdit):
                check_write_size(edit.source, ctx.limits, "source")
                if edit.reference_cell_id is not None:
                    alive(edit.reference_cell_id, changed=False)
                ops.append(InsertOp(edit.cell_type, edit.source, edit.reference_cell_id, edit.position))
            elif isinstance(edit, UpdateEdit):
                check_write_size(edit.source, ctx.limits, "source")
                check_hash(alive(edit.cell_id, source=True), edit.expected_source_hash, ctx.limits)
                check_full_read(ctx, nb, cells[edit.cell_id])  # every byte it replaces must have been read
                sources[edit.cell_id] = normalize_line_ends(edit.source)
                ops.append(SetSourceOp(edit.cell_id, sources[edit.cell_id]))
            elif isinstance(edit, TextEdit):
                check_write_size(edit.new_text, ctx.limits, "newText")
                check_hash(alive(edit.cell_id, source=True), edit.expected_source_hash, ctx.limits)
                sources[edit.cell_id] = replace_once(sources[edit.cell_id], edit.old_text, edit.new_text, edit.cell_id)
                check_write_size(sources[edit.cell_id], ctx.limits, "the edited source")
                ops.append(SetSourceOp(edit.cell_id, sources[edit.cell_id]))
            elif isinstance(edit, DeleteEdit):
                check_hash(alive(edit.cell_id, delete=True), edit.expected_source_hash, ctx.limits)
                deleted[edit.cell_id] = index
                ops.append(DeleteOp(edit.cell_id))
            else:
                if edit.cell_id == edit.reference_cell_id:
                    raise ToolError(
                        ErrorCode.INVALID_ARGUMENT, "A cell cannot be moved relative to itself.", cellId=edit.cell_id
                    )
                alive(edit.cell_id)
                alive(edit.reference_cell_id, changed=False)
                ops.append(MoveOp(edit.cell_id, edit.reference_cell_id, edit.position))
        except ToolError as err:
            raise _at(index, err) from None
    return ops


def _named(edit: Any) -> list[str]:
    return [i for i in (getattr(edit, "cell_id", None), getattr(edit, "reference_cell_id", None)) if i is not None]


class DeletedId(Wire):
    id: str


class EditDone(Wire):
    """One edit of the batch, as the whole batch left its cell."""

    editIndex: int
    op: Literal["insert", "update", "edit", "delete", "move"]
    cell: CellRef = sometimes()
    deleted: DeletedId = sometimes()


EditsApplied = model("EditsApplied", path=str, results=list[EditDone], notebook=NotebookRevision)


async def apply_edits(ctx: CallContext, args: ApplyEditsInput) -> dict[str, Any]:
    """Check and apply a batch of cell edits, all or nothing: :class:`EditsApplied`, one result per edit. Raises
    ToolError, changing nothing, with ``editIndex``: CELL_NOT_FOUND, CELL_ACCESS_DENIED, STALE_CELL, INVALID_ARGUMENT,
    TOO_LARGE (a source over ``Limits.source_write_bytes``); without it, TOO_LARGE (over ``Limits.batch_edits``)."""
    check_count(len(args.edits), ctx.limits.batch_edits, "{count} edits; at most {cap} in one call.")
    nb = await ctx.notebook(args.notebook_path)
    named = unique([cell_id for edit in args.edits for cell_id in _named(edit)])
    try:
        found = nb.find_cells(named)
    except ToolError as err:
        if err.code is ErrorCode.CELL_NOT_FOUND:
            missing = err.details.get("cellId")
            first = next((i for i, edit in enumerate(args.edits) if missing in _named(edit)), None)
            if first is not None:
                raise _at(first, err) from None
        raise
    nb.check_write([])  # NOTEBOOK_ACCESS_DENIED for a read-only notebook
    cells = {cell.id: cell for cell in found}
    ops = plan(list(args.edits), cells, nb, ctx)
    if ctx.proposals.mode == "propose":  # one proposal for the whole batch, then every check again
        anchor = next((c for edit in args.edits for c in _named(edit)), None)
        shown = {cell.id: cell.source for cell in found}
        view = nb.view()  # the person's positions (1-based, hidden cells counted): the box is theirs, never the agent's
        positions = {cell.id: view.to_real(cell.index) + 1 for cell in found}
        diff = batch_diff(ops, dict(shown), positions)  # (it advances its copy edit by edit)
        await ctx.propose(
            nb, "jupyter_apply_edits", "batch", anchor, f"Apply {len(ops)} edit(s) as one step", diff=diff
        )
        now = nb.find_cells(named)
        check_as_shown(now, shown, ctx.limits)  # accepted: every cell must still be exactly what the diff showed
        cells = {cell.id: cell for cell in now}
        ops = plan(list(args.edits), cells, nb, ctx)
    # No await from here to the write: on the page's main thread the checks see exactly what the batch is applied to;
    # in the bridge's worker the page runs tasks between crossings, and the host refuses the batch (STALE_CELL) when a
    # cell it changes no longer holds the source read here (lab/notebook.py).
    touched = nb.apply_edits(ops)
    gone = {op.cell_id for op in ops if isinstance(op, DeleteOp)}
    alive = unique([cell_id for cell_id in touched if cell_id not in gone])
    after = {cell.id: cell for cell in nb.find_cells(alive)}
    # what the agent knows whole of each source it wrote: all of it after an insert or update, else as edit_cell_source
    whole = {c for edit, c in zip(args.edits, touched, strict=True) if edit.op in ("insert", "update")}
    for edit, c in zip(args.edits, touched, strict=True):
        if edit.op in ("insert", "update", "edit") and c in after:
            note_written(ctx, nb, after[c], before=None if c in whole else cells[c])
    # a cell not in ``after`` is deleted: by its own edit, or by a later edit of the batch
    results = [
        {"editIndex": i, "op": edit.op, **({"cell": cell_ref(after[c])} if c in after else {"deleted": {"id": c}})}
        for i, (edit, c) in enumerate(zip(args.edits, touched, strict=True))
    ]
    return {"path": nb.path, "results": results, "notebook": write_block(nb, cellCount=nb.cell_count())}


#: most bytes of a cell's first line in a batch's header (Propose mode)
HEADER_LINE_BYTES = 60


def cell_name(cell_id: str, positions: dict[str, int], sources: dict[str, str]) -> str:
    """``cell 4 «import os»``: a cell by its 1-based position (else ``cell <id>``) and first non-blank line."""
    where = f"cell {positions[cell_id]}" if cell_id in positions else f"cell {cell_id}"
    line = next((ln.strip() for ln in sources.get(cell_id, "").split("\n") if ln.strip()), "")
    return f"{where} «{preview(line, HEADER_LINE_BYTES) if line else '(empty)'}»"


def batch_diff(ops: list[Any], sources: dict[str, str], positions: dict[str, int] | None = None) -> list[list[str]]:
    """A batch for the person (Propose mode): per op a header ``["@", "edit N of M: ..."]`` naming cells as they are
    before the batch, and its source diff in full. Stops past DIFF_LINES, so a batch too big to show costs no more."""
    lines: list[list[str]] = []
    before = dict(sources)  # the names: what the person sees now
    places = positions or {}

    def name(cell_id: str) -> str:
        return cell_name(cell_id, places, before)

    def add_diff(old: str, new: str) -> None:
        if len(lines) + diff_lines_at_least(old, new) > DIFF_LINES:
            lines.extend([["…", "too large to show"]] * (DIFF_LINES + 1 - len(lines)))
        else:
            lines.extend(source_diff(old, new, max_lines=None))

    for index, op in enumerate(ops):
        if len(lines) > DIFF_LINES:
            break
        head = f"edit {index + 1} of {len(ops)}:"
        if isinstance(op, SetSourceOp):
            lines.append(["@", f"{head} change {name(op.cell_id)}"])
            add_diff(sources.get(op.cell_id, ""), op.source)
            sources[op.cell_id] = op.source
        elif isinstance(op, InsertOp):
            where = placement(op.position, name(op.reference_cell_id) if op.reference_cell_id else None)
            lines.append(["@", f"{head} insert a {op.cell_type} cell {where}"])
            add_diff("", op.source)
        elif isinstance(op, DeleteOp):
            lines.append(["@", f"{head} delete {name(op.cell_id)}"])
            add_diff(sources.get(op.cell_id, ""), "")
        elif isinstance(op, MoveOp):
            lines.append(["@", f"{head} move {name(op.cell_id)} {op.position} {name(op.reference_cell_id)}"])
    return lines


TOOLS = (
    tool(
        "jupyter_apply_edits",
        "Apply several cell edits (insert, update, edit, delete, move) in order, all or nothing: everything is "
        "checked first (ids, sourceHashes, oldText occurring once) and a failing check changes nothing and names the "
        "failing editIndex. Ids must be of cells that exist before the batch. The person can undo the batch as one "
        "step.",
        apply_edits,
        Annotations.write(destructive=True, idempotent=False, untrusted_content=True, consequential=True),
        EditsApplied | DeniedPayload,
    ),
)
