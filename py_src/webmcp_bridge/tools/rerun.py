"""jupyter_rerun_plan: which cells to run, in order, so that stale outputs are fresh again (nothing runs); and
the names of a notebook's code cells as the stale-output reads follow them (:func:`code_sources`, :func:`names_of`).

The plan (:func:`webmcp_bridge.core.rerun_plan.rerun_plan`) sees only visible cells and never names or hints at a
hidden cell that binds a name (an agent could probe what hidden cells bind); ``hiddenCellCount`` says it may miss
what they do. The sources are parsed in slices of NAMES_SLICE_SECONDS, yielding between them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import Field

from webmcp_bridge.calls.payloads import Payload, Wire, sometimes
from webmcp_bridge.calls.registry import Annotations
from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.core.limits import NAMES_SLICE_SECONDS, STALE_IDS_SHOWN
from webmcp_bridge.core.names import OTHER_LANGUAGE, CellNames, cell_names, unreadable
from webmcp_bridge.core.raw import RunState
from webmcp_bridge.core.rerun_plan import rerun_plan
from webmcp_bridge.tools.common import CallContext, Id, NotebookInput, tool


def code_sources(nb: Any, states: Sequence[RunState]) -> dict[str, str] | None:
    """``{cell id: source}`` of the code cells of ``states``, or None when the language is not Python."""
    if nb.language().lower() != "python":
        return None
    cells = nb.read_cells([state.index for state in states], head_bytes=0, max_outputs=0)
    return {cell.id: cell.source for cell in cells if cell.cell_type == "code"}


async def names_of(states: Sequence[RunState], sources: Mapping[str, str] | None) -> dict[str, CellNames]:
    """What each cell of ``states`` binds and reads, parsed in slices that yield to the page (no source: left out)."""
    if sources is None:
        other = unreadable(OTHER_LANGUAGE)
        return {state.id: other for state in states}
    found: dict[str, CellNames] = {}
    started = time.monotonic()
    for state in states:
        source = sources.get(state.id)
        if source is None:
            continue
        found[state.id] = cell_names(source)
        if time.monotonic() - started >= NAMES_SLICE_SECONDS:
            await asyncio.sleep(0)
            started = time.monotonic()
    return found


class RerunPlanInput(NotebookInput):
    cell_id: Id | None = Field(
        None,
        description="A code cell: plan for its outputs, with the cells it needs first. Omit to plan for every "
        "run cell of the notebook.",
    )


class PlanCell(Wire):
    id: str
    index: int
    why: Literal["edited", "stale", "unreadable", "provides", "follows", "target"] = Field(
        description="edited: its source changed since its run; stale: its outputs read names that changed (names); "
        "unreadable: its names cannot be read (a cell magic, a syntax error...) and a cell above it changed; "
        "provides: a later cell here reads names it binds, which the kernel does not hold (names); follows: a cell "
        "before it here rebinds names it read (names); target: the cell asked about never ran."
    )
    names: list[str] = sometimes(f"The names that say so, in name order (at most {STALE_IDS_SHOWN}).")
    readOnly: bool = sometimes("The person made this cell read-only: ask the person to run it.")


class Orphan(Wire):
    cellId: str
    name: str


class RerunPlanOutput(Payload):
    path: str
    cells: list[PlanCell] = Field(description="The cells to run, in this order (notebook order); empty: none.")
    omittedCount: int = sometimes("Cells of the plan left out of this list (past the read cap): ask again after.")
    orphans: list[Orphan] = sometimes(
        "A run cell read a name that only cells below it bind: no run of the cells above gives it (at most "
        f"{STALE_IDS_SHOWN})."
    )
    staleAfterIds: list[str] = sometimes(
        f"Run cells outside the plan whose outputs are still stale after it, in notebook order (at most "
        f"{STALE_IDS_SHOWN}; staleAfterCount counts them all)."
    )
    staleAfterCount: int = sometimes()
    hiddenCellCount: int = Field(description="Hidden cells: the plan cannot see what they bind or read.")


async def plan(ctx: CallContext, args: RerunPlanInput) -> dict[str, Any]:
    nb = await ctx.notebook(args.notebook_path)
    target_id = None
    if args.cell_id is not None:
        cell = nb.find_cell(args.cell_id)
        if cell.cell_type != "code":
            raise ToolError(
                ErrorCode.INVALID_ARGUMENT,
                f"Cell {cell.id!r} is a {cell.cell_type} cell: only code cells have outputs to plan for.",
                cellId=cell.id,
                cellType=cell.cell_type,
            )
        target_id = cell.id
    states = nb.run_states(nb.cell_count() - 1)
    sources = code_sources(nb, states)
    read_only = {state.id for state in states if not nb.is_writable(state.id)}
    hidden = nb.hidden_cell_count()
    names = await names_of(states, sources)  # nothing of the page is read after this
    target = next((p for p, s in enumerate(states) if s.id == target_id), None) if target_id else None
    made = rerun_plan(states, names, target)
    cap = ctx.limits.cells_per_read
    cells: list[dict[str, Any]] = []
    for step in made.steps[:cap]:
        state = states[step.position]
        entry: dict[str, Any] = {"id": state.id, "index": state.index, "why": step.why}
        if step.names:
            entry["names"] = list(step.names[:STALE_IDS_SHOWN])
        if state.id in read_only:
            entry["readOnly"] = True
        cells.append(entry)
    payload: dict[str, Any] = {"path": nb.path, "cells": cells}
    if len(made.steps) > cap:
        payload["omittedCount"] = len(made.steps) - cap
    if made.orphans:
        payload["orphans"] = [{"cellId": states[p].id, "name": name} for p, name in made.orphans[:STALE_IDS_SHOWN]]
    if made.stale_after:
        payload["staleAfterIds"] = [states[p].id for p in made.stale_after[:STALE_IDS_SHOWN]]
        payload["staleAfterCount"] = len(made.stale_after)
    payload["hiddenCellCount"] = hidden
    return payload


TOOLS = (
    tool(
        "jupyter_rerun_plan",
        "Which cells to run, in order, so that stale outputs are fresh again: for one code cell (cellId: its outputs, "
        "with the cells it needs first) or for every run cell of the notebook. It follows the names cells bind and "
        "read (outputsStale.readsChanged in jupyter_get_cells) and says why each cell is there. Runs nothing: run the "
        "cells with jupyter_run_cells.",
        plan,
        Annotations.read(),
        RerunPlanOutput,
        "Re-run plan",
    ),
)
