"""Where each op of a batch of cell edits lands, resolved once in Python for every host (``notebook.js`` only
carries the steps out), by :meth:`webmcp_bridge.host.protocol.LiveNotebook.apply_edits`'s rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from webmcp_bridge.core.errors import cell_not_found
from webmcp_bridge.host.protocol import CellType, DeleteOp, EditOp, InsertOp, MoveOp, SetSourceOp

StepKind = Literal["insert", "set_source", "delete", "move"]


@dataclass(frozen=True)
class EditStep:
    """One op with its 0-based indices resolved, each as in force when the step runs. ``move``: taken out at
    ``from_index``, then put at ``index`` (of the list without it); ``insert``: ``cell_id`` None."""

    op: StepKind
    index: int
    cell_id: str | None = None
    from_index: int | None = None
    cell_type: CellType | None = None
    source: str | None = None

    def wire(self) -> dict[str, object]:
        """The step as ``notebook.js``'s ``applyEdits`` reads it (a JSON object; keys of unset fields left out)."""
        data: dict[str, object] = {"op": self.op, "index": self.index}
        for key in ("cell_id", "from_index", "cell_type", "source"):
            value = getattr(self, key)
            if value is not None:
                data[key] = value
        return data


def plan_edits(cell_ids: Sequence[str], ops: Sequence[EditOp]) -> list[EditStep]:
    """One :class:`EditStep` per op, in order, for a notebook whose cells are ``cell_ids`` before the batch.

    Raises ToolError(CELL_NOT_FOUND) when an op names an id not there when it comes (never there, or deleted by an
    earlier op), before anything changes; TypeError for an op that is not an EditOp.
    """
    order: list[str | None] = list(cell_ids)  # None: a cell this batch inserts (its id is made by the host)

    def at(cell_id: str) -> int:
        try:
            return order.index(cell_id)
        except ValueError:
            raise cell_not_found(cell_id) from None

    steps: list[EditStep] = []
    for op in ops:
        if isinstance(op, InsertOp):
            if op.reference_cell_id is None:
                index = len(order) if op.position == "below" else 0
            else:
                index = at(op.reference_cell_id) + (op.position == "below")
            order.insert(index, None)
            steps.append(EditStep("insert", index, cell_type=op.cell_type, source=op.source))
        elif isinstance(op, SetSourceOp):
            steps.append(EditStep("set_source", at(op.cell_id), op.cell_id, source=op.source))
        elif isinstance(op, DeleteOp):
            index = at(op.cell_id)
            del order[index]
            steps.append(EditStep("delete", index, op.cell_id))
        elif isinstance(op, MoveOp):
            at(op.reference_cell_id)  # named, so it must be there, even when it is the moved cell itself
            start = at(op.cell_id)
            del order[start]
            if op.reference_cell_id == op.cell_id:
                to = start  # next to itself: it stays where it was
            else:
                to = at(op.reference_cell_id) + (op.position == "below")
            order.insert(to, op.cell_id)
            steps.append(EditStep("move", to, op.cell_id, from_index=start))
        else:
            raise TypeError(f"not an edit op: {op!r}")
    return steps
