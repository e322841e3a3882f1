"""jupyter_get_cell_access: the levels the person set (only the person changes them) and who recently changed each
visible cell; hidden cells are only counted.
"""

from __future__ import annotations

from typing import Any, Literal

from webmcp_bridge.access.levels import parse_level
from webmcp_bridge.calls.payloads import Wire, sometimes
from webmcp_bridge.calls.registry import Annotations
from webmcp_bridge.core.bounds import json_bytes
from webmcp_bridge.core.limits import PROVENANCE_PER_CELL, RESULT_HEADROOM
from webmcp_bridge.tools.common import CallContext, CellSelection, tool, unique
from webmcp_bridge.tools.payloads import model


class Provenance(Wire):
    actor: Literal["person", "agent"]
    kind: str
    time: float
    count: int
    revision: int | None


class CellAccess(Wire):
    id: str
    index: int
    access: Literal["write", "read"]
    editable: bool
    deletable: bool
    provenance: list[Provenance]


CellAccessOutput = model(
    "CellAccessOutput",
    path=str,
    notebookAccess=Literal["write", "read"],
    cells=list[CellAccess],
    hiddenCellCount=int,
    truncated=bool,
    omittedCount=int,
    nextStartIndex=(int, sometimes()),
)


async def get_cell_access(ctx: CallContext, args: CellSelection) -> dict[str, Any]:
    args.check_one_way()
    nb = await ctx.notebook(args.notebook_path)
    nb.take_changes()  # bring the change log up to date
    limit = ctx.limits.cells_per_read
    if args.cell_ids is not None:
        ids = unique(args.cell_ids)
        cells = nb.find_cells(ids[:limit])
        asked = len(ids)
    else:
        indices = list(args.index_range(nb.cell_count()))
        cells = nb.read_cells(indices[:limit], head_bytes=0, max_outputs=0)
        asked = len(indices)
    notebook_level = nb.level()
    # whole rows while they fit the result cap (the first always does), so paging by nextStartIndex skips none
    budget = ctx.limits.result_bytes - RESULT_HEADROOM
    rows: list[dict[str, Any]] = []
    for cell in cells:
        level = "read" if notebook_level == "read" or not nb.is_writable(cell.id) else "write"
        history = [
            e
            for e in ctx.changes.provenance(nb.path, cell.id, PROVENANCE_PER_CELL * 3)
            if parse_level(e.access) != "none"
        ][:PROVENANCE_PER_CELL]  # nothing of the time it was hidden
        editable, deletable = nb.locks(cell.id)
        row = {
            "id": cell.id,
            "index": cell.index,
            "access": level,
            "editable": editable,
            "deletable": deletable,
            "provenance": [{k: v for k, v in e.to_json().items() if k not in ("cellId", "seq")} for e in history],
        }
        budget -= json_bytes(row) + 1
        if budget < 0 and rows:
            break
        rows.append(row)
    omitted = asked - len(rows)
    payload: dict[str, Any] = {
        "path": nb.path,
        "notebookAccess": notebook_level,
        "cells": rows,
        "hiddenCellCount": nb.hidden_cell_count(),
        "truncated": omitted > 0,
        "omittedCount": omitted,
    }
    if omitted and args.cell_ids is None:
        payload["nextStartIndex"] = (args.start_index or 0) + len(rows)
    return payload


TOOLS = (
    tool(
        "jupyter_get_cell_access",
        "The access the person gave this notebook and each visible cell (write: you may change it; read: you may only "
        "read it; editable/deletable false: the notebook's author locked its source / its deletion), and who recently "
        "inserted, edited or ran each cell (person or agent, coalesced). Only the person changes access. Cells hidden "
        "from you are only counted (hiddenCellCount).",
        get_cell_access,
        Annotations.read(),
        CellAccessOutput,
    ),
)
