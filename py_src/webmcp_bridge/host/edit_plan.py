"""Where each op of a batch of cell edits lands: ids and positions resolved to indices once, in Python, for every
host (the in-memory one and ``notebook.js``, which only carries the steps out).

The rule is :meth:`webmcp_bridge.host.protocol.LiveNotebook.apply_edits`'s: ops address cells by id; every id an op
names (``cell_id``, ``reference_cell_id``) must belong to a cell that is there when the op comes (it existed before
the batch and no earlier op deleted it); positions are resolved when each op is applied, against the order the
earlier ops left. An insert goes above or below its reference cell, or without one at the start (``"above"``) or
the end (``"below"``); a move takes the cell out, then puts it above or below its reference.
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
    """One op of a batch with its indices resolved (0-based positions in the notebook's cell list).

    ``insert``: the new cell goes to ``index`` (``cell_id`` None; ``cell_type`` and ``source`` set);
    ``set_source``: cell ``cell_id``, at ``index``, gets ``source``; ``delete``: cell ``cell_id`` at ``index`` goes;
    ``move``: cell ``cell_id`` is taken out at ``from_index``, then put at ``index`` (an index in the list without it).
    Every index is the one in force when the step runs, after the steps before it.
    """

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
    """The steps that carry out ``ops`` on a notebook whose cells have the ids ``cell_ids``, in order.

    Args:
        cell_ids: the ids of the notebook's cells before the batch, in order.
        ops: the batch (:data:`webmcp_bridge.host.protocol.EditOp` values).

    Returns:
        One :class:`EditStep` per op, in the ops' order.

    Raises:
        ToolError(CELL_NOT_FOUND): an op names an id no cell has when the op comes (never there, or deleted by an
            earlier op of the batch); raised before anything is changed, as the plan is made before any step runs.
        TypeError: an op that is not an EditOp.
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
