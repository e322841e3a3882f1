"""The call step: what a call knows about one notebook (:class:`CallStep`), what ends each fact (:data:`ENDS`), and
the errors of the guard's refusals. :class:`AccessView` holds one notebook's levels and locks at one revision;
:class:`Facts` holds it per notebook for one synchronous stretch of a call.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from webmcp_bridge.access.levels import Level, parse_level
from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.host.protocol import AccessState, CellChange, LiveNotebook, RawCell

Fact = Literal["levels", "sources"]
Event = Literal["turn", "await", "write", "refused", "batch"]


@dataclass(frozen=True)
class AccessView:
    """The levels of one notebook at ``revision``, mapping visible indices (of the non-``none`` cells) to real ones.
    ``hidden_indices``: real indices of ``none`` cells, ascending; ``cell_count``: all cells; ``uneditable`` /
    ``undeletable``: ids of cells the author locked (cell metadata ``editable`` / ``deletable`` false)."""

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
        """The view of an :class:`~webmcp_bridge.host.protocol.AccessState` (its changes not kept)."""
        levels = [(index, cell_id, parse_level(access)) for index, cell_id, access in state.cell_access]
        return cls(
            parse_level(state.notebook_access),
            frozenset(cell_id for _, cell_id, level in levels if level == "none"),
            frozenset(cell_id for _, cell_id, level in levels if level == "read"),
            tuple(sorted(index for index, _, level in levels if level == "none")),
            state.cell_count,
            state.revision,
            frozenset(cell_id for cell_id, editable, _ in state.locks if not editable),
            frozenset(cell_id for cell_id, _, deletable in state.locks if not deletable),
        )

    @property
    def visible_count(self) -> int:
        """How many cells the agent sees."""
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
    """NOTEBOOK_ACCESS_DENIED for a change to a read-only notebook."""
    return ToolError(
        ErrorCode.NOTEBOOK_ACCESS_DENIED,
        f"The person made {path!r} read-only for the agent: it can be read, not changed or run.",
        path=path,
    )


def cell_access_denied(cell_id: str) -> ToolError:
    """CELL_ACCESS_DENIED for a change to a read-only cell."""
    return ToolError(
        ErrorCode.CELL_ACCESS_DENIED,
        f"The person made cell {cell_id!r} read-only for the agent: it can be read, not changed or run.",
        cellId=cell_id,
    )


#: What ends each fact a call knows about one notebook: ``levels`` (one :class:`AccessView`, with the ids seen since)
#: and ``sources`` (each cell's source as the call last read or wrote it, a write's precondition). Events: ``turn``
#: (the next event-loop turn: the person's edits run only when Python yields), ``await`` (of the host, even without
#: suspending), ``write`` (the bridge's own), ``refused`` (a write refused as stale), ``batch`` (of its cells).
ENDS: dict[Fact, frozenset[Event]] = {
    "levels": frozenset({"turn", "await", "write", "refused", "batch"}),
    "sources": frozenset({"batch"}),
}


@dataclass(slots=True, weakref_slot=True)
class _Held:
    """The levels and the seen ids of one notebook, held for the synchronous stretch of one asyncio task."""

    view: AccessView
    task: Any
    seen: set[str] = field(default_factory=set)


class Facts:
    """Per path: the ``levels`` held for the running task (none outside an event loop), and ``ever_hidden``, the ids
    of cells ever seen hidden until the page reloads; ``ingest(path, changes)`` gets every change a read takes."""

    def __init__(self, ingest: Callable[[str, list[CellChange]], object]) -> None:
        self._ingest = ingest
        self._held: dict[str, _Held] = {}
        self.ever_hidden: dict[str, set[str]] = {}

    def ingest(self, path: str, changes: Sequence[CellChange]) -> None:
        """Hand ``changes`` to the change log, noting the cells they show hidden."""
        hidden = [c.cell_id for c in changes if parse_level(c.access) == "none"]
        if hidden:
            self.ever_hidden.setdefault(path, set()).update(hidden)
        self._ingest(path, list(changes))

    def read(self, nb: LiveNotebook) -> AccessView:
        """Read the levels now (one host read, its changes ingested) and hold them for the running task until an
        event of :data:`ENDS` ends them."""
        state = nb.access_state()
        self.ingest(nb.path, state.changes)
        view = AccessView.of(state)
        if view.hidden:
            self.ever_hidden.setdefault(nb.path, set()).update(view.hidden)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._held.pop(nb.path, None)
            return view
        held = _Held(view, asyncio.current_task())
        self._held[nb.path] = held
        loop.call_soon(self._turn, nb.path, weakref.ref(held))
        return view

    def held(self, path: str) -> _Held | None:
        """What is held for ``path``, if it is of the running task."""
        held = self._held.get(path)
        try:
            task = asyncio.current_task()
        except RuntimeError:
            task = None
        return held if held is not None and task is not None and held.task is task else None

    def end(self, path: str, event: Event) -> None:
        """End the held levels if ``event`` ends them (the seen ids go with them)."""
        if event in ENDS["levels"]:
            self._held.pop(path, None)

    def _turn(self, path: str, held: weakref.ref[_Held]) -> None:
        if self._held.get(path) is held():
            self.end(path, "turn")


class CallStep:
    """What one call knows about one notebook: the ``levels`` (shared through :class:`Facts` with the task's other
    lookups) and the ``sources`` it read. :meth:`end` is the one way a fact ends."""

    def __init__(self, facts: Facts, nb: LiveNotebook) -> None:
        self._facts = facts
        self._nb = nb
        self.path = nb.path
        self.sources: dict[str, str] = {}  # cell id -> its source as this call last read or wrote it
        self.captures: dict[str, str] = {}  # key of an output picture this call took -> its cell's id
        self.ever_hidden = facts.ever_hidden.setdefault(self.path, set())

    def view(self) -> AccessView:
        """Held, else read now."""
        held = self._facts.held(self.path)
        return held.view if held is not None else self._facts.read(self._nb)

    def revision(self) -> int:
        """The held levels' revision, else the host's now."""
        held = self._facts.held(self.path)
        return held.view.revision if held is not None else self._nb.revision()

    def read(self, cells: Sequence[RawCell], *, seen: bool = False) -> None:
        """Note the sources of ``cells`` (``seen``: and their ids as existing in this step)."""
        self.sources.update((c.id, c.source) for c in cells)
        held = self._facts.held(self.path) if seen else None
        if held is not None:
            held.seen.update(c.id for c in cells)

    def known(self, cell_ids: Sequence[str]) -> bool:
        """True when every id was seen in this step (so it exists)."""
        held = self._facts.held(self.path)
        return held is not None and all(cell_id in held.seen for cell_id in cell_ids)

    def end(self, event: Event, cells: Sequence[str] = ()) -> None:
        """End what :data:`ENDS` says ``event`` ends: the held levels, and the sources of ``cells``."""
        self._facts.end(self.path, event)
        if event in ENDS["sources"]:
            for cell_id in cells:
                self.sources.pop(cell_id, None)

    def take_changes(self) -> None:
        """Take the notebook's changes now and hand them to the change log."""
        self._facts.ingest(self.path, self._nb.take_changes())


def cell_locked(cell_id: str, lock: Literal["editable", "deletable"]) -> ToolError:
    """The error for a source change (``editable``) or a delete (``deletable``) of an author-locked cell."""
    what = "editing: its source cannot be changed" if lock == "editable" else "deletion: it cannot be deleted"
    return ToolError(
        ErrorCode.CELL_LOCKED,
        f"Cell {cell_id!r} is locked against {what} (cell metadata {lock}: false, set by the notebook's author; "
        "JupyterLab keeps the person from it too).",
        cellId=cell_id,
        lock=lock,
    )
