"""host/edit_plan.py: a batch's ids and positions resolved to the indices every host carries out.

The plan is what ``notebook.js`` executes in the page (it no longer resolves positions itself), so each case
checks the indices the steps name and the order they leave, written out by hand, on the cell ids of a real notebook
(the Euler notebook's first cells).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.host.edit_plan import EditStep, plan_edits
from webmcp_bridge.host.protocol import DeleteOp, InsertOp, MoveOp, SetSourceOp

NOTEBOOK = Path(__file__).parent.parent / "lite" / "content" / "pytudes-euler.ipynb"


@pytest.fixture
def ids() -> list[str]:
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    return [str(c.get("id") or f"cell-{i}") for i, c in enumerate(cells)][:5]


def carry_out(ids: list[str], steps: list[EditStep]) -> list[str]:
    """The order the steps leave (a new cell shows as ``new<n>``), as a host carries them out."""
    order, made = list(ids), 0
    for step in steps:
        if step.op == "insert":
            order.insert(step.index, f"new{made}")
            made += 1
        elif step.op == "delete":
            assert order[step.index] == step.cell_id
            del order[step.index]
        elif step.op == "move":
            assert order[step.from_index or 0] == step.cell_id
            order.insert(step.index, order.pop(step.from_index or 0))
        else:
            assert order[step.index] == step.cell_id
    return order


def test_a_mixed_batch_resolves_each_position_against_the_order_the_earlier_ops_left(ids):
    a, b, c, d, e = ids
    ops = [
        InsertOp("markdown", "# note", b, "below"),  # a b N c d e
        MoveOp(a, d, "below"),  # b N c d a e
        DeleteOp(b),  # N c d a e
        SetSourceOp(d, "x = 1"),
        MoveOp(e, c, "above"),  # N e c d a
    ]
    steps = plan_edits(ids, ops)
    assert [(s.op, s.index, s.from_index) for s in steps] == [
        ("insert", 2, None),
        ("move", 4, 0),
        ("delete", 0, None),
        ("set_source", 2, None),
        ("move", 1, 4),
    ]
    assert carry_out(ids, steps) == ["new0", e, c, d, a]
    assert steps[0].cell_type == "markdown" and steps[0].source == "# note" and steps[3].source == "x = 1"


def test_an_insert_without_a_reference_goes_to_the_start_or_the_end(ids):
    steps = plan_edits(ids, [InsertOp("code", "top", None, "above"), InsertOp("raw", "end", None, "below")])
    assert [s.index for s in steps] == [0, len(ids) + 1]
    assert carry_out(ids, steps) == ["new0", *ids, "new1"]


def test_a_move_next_to_a_neighbour_and_next_to_itself(ids):
    a, b, c, _, _ = ids
    assert carry_out(ids, plan_edits(ids, [MoveOp(a, b, "below")]))[:3] == [b, a, c]
    assert carry_out(ids, plan_edits(ids, [MoveOp(c, b, "above")]))[:3] == [a, c, b]
    assert carry_out(ids, plan_edits(ids, [MoveOp(b, b, "below")])) == ids


@pytest.mark.parametrize("named", ["unknown", "deleted-earlier"])
def test_an_id_not_there_when_its_op_comes_is_cell_not_found(ids, named):
    gone = "no-such-cell" if named == "unknown" else ids[1]
    ops = [DeleteOp(ids[1]), SetSourceOp(gone, "y")] if named == "deleted-earlier" else [SetSourceOp(gone, "y")]
    with pytest.raises(ToolError) as err:
        plan_edits(ids, ops)
    assert err.value.code is ErrorCode.CELL_NOT_FOUND and err.value.details["cellId"] == gone


def test_a_value_that_is_not_an_edit_op_is_refused(ids):
    with pytest.raises(TypeError):
        plan_edits(ids, [object()])  # type: ignore[list-item]


def test_the_wire_form_leaves_unset_fields_out(ids):
    steps = plan_edits(ids, [InsertOp("code", "a"), DeleteOp(ids[0]), MoveOp(ids[1], ids[2])])
    assert [s.wire() for s in steps] == [
        {"op": "insert", "index": 5, "cell_type": "code", "source": "a"},
        {"op": "delete", "index": 0, "cell_id": ids[0]},
        {"op": "move", "index": 1, "cell_id": ids[1], "from_index": 0},
    ]
