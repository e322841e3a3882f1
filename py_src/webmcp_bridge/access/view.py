"""What the access guard reads of one notebook for one call step, and the errors of its refusals.

:class:`AccessView` holds the levels (:mod:`webmcp_bridge.access.levels`) and the author's locks of one notebook at
one revision and maps the agent's visible indices to real ones; :class:`Step` is the view held for one
synchronous stretch of a call (:mod:`webmcp_bridge.access.guard` reads and ends it).
"""

from __future__ import annotations

import asyncio
import weakref
from dataclasses import dataclass
from typing import Any, Literal

from webmcp_bridge.access.levels import Level, parse_level
from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.host.protocol import AccessState


@dataclass(frozen=True)
class AccessView:
    """The levels of one notebook at one revision (``revision``, as the host read it with the levels).

    ``hidden_indices``: real indices of ``none`` cells, ascending; ``visible`` indices count only the others.
    ``cell_count``: all the notebook's cells at ``revision`` (hidden ones included), read with the levels.
    ``uneditable`` / ``undeletable``: ids of cells the notebook's author locked with the standard cell metadata
    ``editable: false`` / ``deletable: false`` (JupyterLab honours them for the person; the guard for the agent).
    """

    notebook: Level
    hidden: frozenset[str]
    read_only: frozenset[str]
    hidden_indices: tuple[int, ...]
    cell_count: int
    revision: int = 0
    uneditable: frozenset[str] = frozenset()
    undeletable: frozenset[str] = frozenset()

    @classmethod
    def of(cls, state: AccessState) -> AccessView:
        """The view of a notebook's :class:`~webmcp_bridge.host.protocol.AccessState` (its changes are not kept)."""
        hidden: set[str] = set()
        read_only: set[str] = set()
        hidden_indices: list[int] = []
        for index, cell_id, access in state.cell_access:
            level = parse_level(access)
            if level == "none":
                hidden.add(cell_id)
                hidden_indices.append(index)
            elif level == "read":
                read_only.add(cell_id)
        return cls(
            parse_level(state.notebook_access),
            frozenset(hidden),
            frozenset(read_only),
            tuple(sorted(hidden_indices)),
            state.cell_count,
            state.revision,
            frozenset(cell_id for cell_id, editable, _ in state.locks if not editable),
            frozenset(cell_id for cell_id, _, deletable in state.locks if not deletable),
        )

    @property
    def visible_count(self) -> int:
        """How many cells the agent sees (all but the hidden ones) at ``revision``."""
        return self.cell_count - len(self.hidden_indices)

    def to_visible(self, real: int) -> int:
        """The visible index of the (visible) cell at real index ``real``."""
        return real - sum(1 for h in self.hidden_indices if h < real)

    def to_real(self, visible: int) -> int:
        """The real index of the ``visible``-th visible cell (past the end: counts on from the last cell)."""
        real = visible
        for h in self.hidden_indices:
            if h <= real:
                real += 1
            else:
                break
        return real


def notebook_access_denied(path: str) -> ToolError:
    """The error for a change to a notebook the person made read-only for the agent."""
    return ToolError(
        ErrorCode.NOTEBOOK_ACCESS_DENIED,
        f"The person made {path!r} read-only for the agent: it can be read, not changed or run.",
        path=path,
    )


def cell_access_denied(cell_id: str) -> ToolError:
    """The error for a change to a cell the person made read-only for the agent."""
    return ToolError(
        ErrorCode.CELL_ACCESS_DENIED,
        f"The person made cell {cell_id!r} read-only for the agent: it can be read, not changed or run.",
        cellId=cell_id,
    )


class Step:
    """The access view of one notebook held for one call step: the synchronous stretch of one asyncio task in
    which it was read. On the page's main thread nothing but the bridge's own writes can change a notebook inside
    such a stretch (the person's edits and the panel's level changes are page events, which run only when Python
    yields); in the bridge's worker the page runs its tasks between two crossings of the stretch, so the view is
    the levels as of its read, and the writes that could lose the person's text check the cell's source again in
    the write's own task (``lab/notebook.py``). Every question of that stretch is answered from one read. The step
    ends at the next turn of the event loop (a
    callback scheduled when the view is read), on the guard's own writes and after each await of the host;
    another task never uses it. Outside a running event loop nothing is held."""

    __slots__ = ("view", "task", "seen", "__weakref__")

    def __init__(self, view: AccessView, task: Any) -> None:
        self.view = view
        self.task = task
        self.seen: set[str] = set()  # ids of cells read in this step: known to exist without reading again


class Steps:
    """The :class:`Step` held per notebook path (see there for when one ends)."""

    def __init__(self) -> None:
        self._held: dict[str, Step] = {}

    def get(self, path: str) -> Step | None:
        """The step held for ``path``, if it is of the running task."""
        step = self._held.get(path)
        if step is None:
            return None
        try:
            task = asyncio.current_task()
        except RuntimeError:
            task = None
        return step if task is not None and step.task is task else None

    def hold(self, path: str, view: AccessView) -> None:
        """Hold ``view`` for ``path`` until the next turn of the event loop (outside one nothing is held)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._held.pop(path, None)  # no event loop: nothing is held, every question reads afresh
            return
        step = Step(view, asyncio.current_task())
        self._held[path] = step
        loop.call_soon(self._end_step, path, weakref.ref(step))

    def end(self, path: str) -> None:
        """End the step of ``path`` now: the next question reads the notebook again."""
        self._held.pop(path, None)

    def _end_step(self, path: str, step: weakref.ref[Step]) -> None:
        if self._held.get(path) is step():
            self._held.pop(path, None)


def cell_locked(cell_id: str, lock: Literal["editable", "deletable"]) -> ToolError:
    """The error for a source change (``editable``) or a delete (``deletable``) of a cell the notebook's author
    locked with that standard metadata set to false."""
    what = "editing: its source cannot be changed" if lock == "editable" else "deletion: it cannot be deleted"
    return ToolError(
        ErrorCode.CELL_LOCKED,
        f"Cell {cell_id!r} is locked against {what} (cell metadata {lock}: false, set by the notebook's author; "
        "JupyterLab keeps the person from it too).",
        cellId=cell_id,
        lock=lock,
    )
