"""jupyter_get_notebook_map: a whole notebook's shape in one bounded answer, to decide what to read.

One row per visible cell under ``columns`` (index, id, type, source bytes, outputs, flags ``e`` error output, ``s``
outputs may be stale, ``r`` read-only, and the first non-blank line) and the markdown headings as ``sections``.
Bounded by MAP_CELLS rows, MAP_SECTIONS headings and MAP_LINE_BYTES a line or title; over the result cap the lines
and titles are cut shorter (to MAP_MIN_LINE_BYTES), then the last rows and their headings left for ``nextStartIndex``,
so the registry never cuts it. A cell is never mapped without all its headings: one whose headings alone pass the
bounds is TOO_LARGE (with the ``nextStartIndex`` past it).
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from pydantic import Field

from webmcp_bridge.calls.payloads import Payload, sometimes
from webmcp_bridge.calls.registry import Annotations
from webmcp_bridge.core.bounds import dumps
from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.core.limits import (
    ERROR_SCAN_OUTPUTS,
    EXPORT_CHUNK,
    MAP_CELLS,
    MAP_LINE_BYTES,
    MAP_MIN_LINE_BYTES,
    MAP_SECTIONS,
    MAX_INT,
    RESULT_HEADROOM,
    preview,
    utf8_len,
)
from webmcp_bridge.core.outline import first_line, headings, is_heading
from webmcp_bridge.core.staleness import stale_outputs
from webmcp_bridge.tools.common import CallContext, Index, NotebookInput, tool

COLUMNS = ["index", "id", "type", "bytes", "outputs", "flags", "first"]
#: one row: index, id, type, source bytes, outputs, flags, first line
Row = tuple[int, str, Literal["code", "markdown", "raw"], int, int, str, str]


class NotebookMapOutput(Payload):
    path: str
    cellCount: int = Field(description="Cells the agent can see.")
    hiddenCellCount: int
    access: Literal["read"] = sometimes("The person made the whole notebook read-only for the agent (no row says r).")
    columns: list[str] = Field(description="What each value of a row is: " + ", ".join(COLUMNS) + ".")
    cells: list[Row] = Field(
        description="One row per cell from startIndex. flags: e = an error output, s = outputs may be stale, "
        'r = read-only for the agent. first: the first line that is not blank ("" for a markdown cell that starts '
        "with a heading: see sections)."
    )
    sections: list[tuple[int, int, str]] = Field(description="The headings: [cell index, level 1-6, title].")
    truncated: bool = Field(description="Cells are left for a next answer (startIndex: nextStartIndex).")
    nextStartIndex: int = sometimes()


class NotebookMapInput(NotebookInput):
    start_index: Index = Field(
        0, description="First cell to map (pass nextStartIndex to go on with a notebook too long for one answer)."
    )


def _flags(cell: Any, stale: bool, writable: bool) -> str:
    error = any(o.output_type == "error" for o in cell.outputs)
    return "".join(flag for flag, on in (("e", error), ("s", stale), ("r", not writable)) if on)


def _cut_lines(payload: dict[str, Any], lines: list[str], titles: list[str], max_bytes: int) -> None:
    for row, line in zip(payload["cells"], lines, strict=True):
        row[6] = preview(line, max_bytes) if line else ""
    for section, title in zip(payload["sections"], titles, strict=True):
        section[2] = preview(title, max_bytes)


def _too_large(index: int) -> ToolError:
    """TOO_LARGE: the headings of the cell at ``index`` alone pass what one answer holds."""
    return ToolError(
        ErrorCode.TOO_LARGE,
        f"Cell {index} has more headings than one map answer holds: read it with jupyter_get_cells, and map the "
        f"cells after it with startIndex {index + 1}.",
        nextStartIndex=index + 1,
    )


def _fit(payload: dict[str, Any], lines: list[str], titles: list[str], budget: int) -> None:
    """Make ``payload`` fit ``budget``: the first lines and titles cut to one common length (not below
    MAP_MIN_LINE_BYTES), then the leading rows kept with their headings while they fit, the rest left for
    ``nextStartIndex``. TOO_LARGE when the first row and its headings alone do not fit."""
    if utf8_len(dumps(payload)) <= budget:
        return
    low, high = MAP_MIN_LINE_BYTES, MAP_LINE_BYTES - 1
    while low < high:  # the longest common cut that fits, found by halving
        mid = (low + high + 1) // 2
        _cut_lines(payload, lines, titles, mid)
        if utf8_len(dumps(payload)) <= budget:
            low = mid
        else:
            high = mid - 1
    _cut_lines(payload, lines, titles, low)
    rows, sections = payload["cells"], payload["sections"]
    room = budget - utf8_len(dumps({**payload, "cells": [], "sections": [], "nextStartIndex": MAX_INT}))
    kept = heads = 0
    for row in rows:  # each row with its headings (sections are in row order), a comma each
        more = heads
        while more < len(sections) and sections[more][0] == row[0]:
            more += 1
        room -= sum(utf8_len(dumps(item)) + 1 for item in [row, *sections[heads:more]])
        if room < 0:
            break
        kept, heads = kept + 1, more
    if kept == 0:
        raise _too_large(rows[0][0])
    if kept < len(rows):
        payload.update(truncated=True, nextStartIndex=rows[kept][0])
        del rows[kept:]
        del sections[heads:]


async def notebook_map(ctx: CallContext, args: NotebookMapInput) -> dict[str, Any]:
    nb = await ctx.notebook(args.notebook_path)
    count = nb.cell_count()
    start = min(args.start_index, count)
    end = min(count, start + MAP_CELLS)
    cells: list[Any] = []
    for at in range(start, end, EXPORT_CHUNK):
        if at > start:
            await asyncio.sleep(0)  # a notebook of thousands of cells never holds the page in one stretch
        chunk = range(at, min(end, at + EXPORT_CHUNK))
        cells.extend(nb.read_cells(chunk, head_bytes=0, max_outputs=ERROR_SCAN_OUTPUTS))
    run = [c.id for c in cells if c.cell_type == "code" and c.execution_count is not None]
    stale = stale_outputs(nb.run_states(max(c.index for c in cells)), run) if run else {}
    read_only = nb.level() == "read"  # said once, not on every row
    rows: list[list[Any]] = []
    lines: list[str] = []
    sections: list[list[Any]] = []
    titles: list[str] = []
    for cell in cells:
        line = first_line(cell.source)
        found = headings(cell.source) if cell.cell_type == "markdown" else []
        if len(sections) + len(found) > MAP_SECTIONS:  # its headings start the next answer, whole
            if not rows:
                raise _too_large(cell.index)
            end = cell.index
            break
        sections.extend([cell.index, level, ""] for level, _ in found)
        titles.extend(title for _, title in found)
        if cell.cell_type == "markdown" and is_heading(line):
            line = ""  # in sections
        lines.append(line)
        writable = read_only or nb.is_writable(cell.id)
        flags = _flags(cell, cell.id in stale, writable)
        rows.append([cell.index, cell.id, cell.cell_type, utf8_len(cell.source), cell.output_count, flags, ""])
    payload: dict[str, Any] = {"path": nb.path, "cellCount": count, "hiddenCellCount": nb.hidden_cell_count()}
    if read_only:
        payload["access"] = "read"
    payload.update(columns=COLUMNS, cells=rows, sections=sections, truncated=end < count)
    if end < count:
        payload["nextStartIndex"] = end
    _cut_lines(payload, lines, titles, MAP_LINE_BYTES)
    _fit(payload, lines, titles, ctx.limits.result_bytes - RESULT_HEADROOM)
    return payload


TOOLS = (
    tool(
        "jupyter_get_notebook_map",
        "A whole notebook's shape in one answer, to decide what to read: per cell its index, id, type, source size "
        "(bytes), output count, flags (e: an error output, s: outputs may be stale, r: read-only) and first line; "
        "and the section headings. Read cells with jupyter_get_cells, outputs with jupyter_get_output.",
        notebook_map,
        Annotations.read(),
        NotebookMapOutput,
        "Map the notebook",
    ),
)
