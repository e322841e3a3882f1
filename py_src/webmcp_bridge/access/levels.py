"""The person's access levels, stored as ``{"access": level}`` under
:data:`~webmcp_bridge.core.metadata.METADATA_KEY` of the notebook or a cell: ``write`` (the default, also for a
missing or malformed block), ``read``, ``none``; an unknown level fails closed (``none``). Only the person changes
them, with the helpers below on the *raw* notebook.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from webmcp_bridge.core.errors import ToolError
from webmcp_bridge.core.metadata import SCHEMA_VERSION
from webmcp_bridge.host.protocol import NotebookCells
from webmcp_bridge.review.visibility import mark_hidden_cells

Level = Literal["write", "read", "none"]
LEVELS: tuple[Level, ...] = ("write", "read", "none")


def parse_level(value: Any) -> Level:
    """None -> "write"; a level as is; anything else -> "none" (fail closed: hide rather than expose)."""
    if value is None:
        return "write"
    return value if value in LEVELS else "none"


def level_of_block(block: Any) -> Level:
    """The level in a ``webmcp_bridge`` metadata block (a dict with an ``access`` key); not a dict -> "write"."""
    return parse_level(block.get("access")) if isinstance(block, dict) else "write"


def next_level(level: Level) -> Level:
    """The level after ``level`` when the person cycles it: write -> read -> none -> write."""
    return LEVELS[(LEVELS.index(level) + 1) % len(LEVELS)] if level in LEVELS else "write"


def notebook_level(nb: NotebookCells) -> Level:
    """The notebook's level (one read of its metadata)."""
    return level_of_block(nb.bridge_metadata())


def cell_levels(nb: NotebookCells) -> dict[str, Level]:
    """``{cell id: level}`` of the cells whose level is not "write", in index order."""
    levels = {cell_id: level_of_block(block) for _, cell_id, block in nb.cell_bridge_metadata()}
    return {cell_id: level for cell_id, level in levels.items() if level != "write"}


def _checked(level: Level) -> Level:
    if level not in LEVELS:
        raise ValueError(f"unknown access level {level!r}")
    return level


def _with_level(block: Any, level: Level) -> dict[str, Any]:
    """A copy of ``block`` (a dict, else empty) with ``level``; "write" is stored as no ``access`` key."""
    block = dict(block) if isinstance(block, dict) else {}
    if level == "write":
        block.pop("access", None)
    else:
        block["access"] = level
    return block


def set_notebook_level(nb: NotebookCells, level: Level) -> None:
    """Set the notebook's level (the person's action). Raises ValueError for an unknown level."""
    _checked(level)
    block = _with_level(nb.bridge_metadata(), level)
    block["schemaVersion"] = SCHEMA_VERSION
    nb.set_bridge_metadata(block)


def set_cell_level(nb: NotebookCells, cell_id: str, level: Level) -> None:
    """Set one cell's level (the person's action); "write" removes the cell's block. Raises ValueError for an
    unknown level, ToolError(CELL_NOT_FOUND) for an unknown cell."""
    _checked(level)
    blocks = {cid: block for _, cid, block in nb.cell_bridge_metadata()}
    nb.set_cell_bridge_metadata(cell_id, _with_level(blocks.get(cell_id), level) or None)
    _stamp_threads(nb, {cell_id}, level)


def set_cell_levels(nb: NotebookCells, cell_ids: Sequence[str], level: Level) -> int:
    """:func:`set_cell_level` for several cells with one read; unknown ids skipped. Returns how many were set.
    Raises ValueError for an unknown level."""
    _checked(level)
    blocks = {cid: block for _, cid, block in nb.cell_bridge_metadata()}
    done = 0
    for cell_id in cell_ids:
        try:
            nb.set_cell_bridge_metadata(cell_id, _with_level(blocks.get(cell_id), level) or None)
        except ToolError:
            continue  # deleted meanwhile
        done += 1
    _stamp_threads(nb, set(cell_ids), level)
    return done


def _stamp_threads(nb: NotebookCells, cell_ids: set[str], level: Level) -> None:
    """Mark these cells' review threads ``"hiddenCell": true`` when they become ``none`` (else unmark), so they stay
    hidden after the cell is deleted, in later sessions too."""
    block = nb.bridge_metadata()
    threads = block.get("threads") if isinstance(block, dict) else None
    if isinstance(threads, list) and mark_hidden_cells(threads, cell_ids, level == "none"):
        nb.set_bridge_metadata(block)
