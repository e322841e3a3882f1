"""The call step: what a call knows about one notebook, the table of what ends each fact (:data:`ENDS`), and the
errors of the guard's refusals.

:class:`AccessView` holds the levels (:mod:`webmcp_bridge.access.levels`) and the author's locks of one notebook at
one revision and maps the agent's visible indices to real ones; :class:`Facts` holds it per notebook for one
synchronous stretch of a call; :class:`CallStep` is what one call knows about one notebook, the sources it read
included. The access guard (:mod:`webmcp_bridge.access.guard`) asks them and tells them the events.
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


#: What ends each fact a call knows about one notebook. The facts: ``levels`` (the levels, the author's locks, the
#: cell count and the revision: one :class:`AccessView`, read together; with them the ids of the cells seen since,
#: which exist), ``sources`` (each cell's source as the call last read or wrote it, a write's precondition; kept for
#: the lookup, one per call, as the pictures of outputs it took). The events: ``turn`` (the next turn of the event
#: loop: the person's edits are page events, run only when Python yields), ``await`` (of the host, also when it did
#: not suspend), ``write`` (the bridge's own: the revision moved), ``refused`` (a write the host refused as stale),
#: ``batch`` (a batch of edits, of its cells).
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
    """What the guard knows of the session's notebooks, per path: the ``levels`` of :data:`ENDS` for the running
    task (outside a running event loop nothing is held: every question reads afresh), and the ids of the cells ever
    seen hidden (or deleted while hidden; until the page reloads, for the run rule and the review threads).
    ``ingest(path, changes)`` is handed every change a read takes (the bridge's change log). In the bridge's worker
    the page runs its tasks between two crossings of one stretch, so the levels are those of their read, and a write
    that could lose the person's text hands the host the ``sources`` read to check."""

    def __init__(self, ingest: Callable[[str, list[CellChange]], object]) -> None:
        self._ingest = ingest
        self._held: dict[str, _Held] = {}
        self.ever_hidden: dict[str, set[str]] = {}

    def ingest(self, path: str, changes: Sequence[CellChange]) -> None:
        """Hand ``changes`` of the notebook at ``path`` to the change log, noting the cells they show hidden."""
        hidden = [c.cell_id for c in changes if parse_level(c.access) == "none"]
        if hidden:
            self.ever_hidden.setdefault(path, set()).update(hidden)
        self._ingest(path, list(changes))

    def read(self, nb: LiveNotebook) -> AccessView:
        """Read the levels of ``nb`` now (one host read, which also hands over the changes since the last one) and
        hold them for the running task until an event of :data:`ENDS` ends them."""
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
        """End what :data:`ENDS` says ``event`` ends of the notebook at ``path`` (``sources`` are the call's own)."""
        if event in ENDS["levels"]:
            self._held.pop(path, None)  # the seen ids go with the levels they were seen at

    def _turn(self, path: str, held: weakref.ref[_Held]) -> None:
        if self._held.get(path) is held():
            self.end(path, "turn")


class CallStep:
    """What one call knows about one notebook (one per lookup, so one per call): the ``levels`` of :data:`ENDS`,
    shared with the other lookups of the notebook in the same task (:class:`Facts`), and the ``sources`` it read.
    :meth:`end` is the one way a fact ends."""

    def __init__(self, facts: Facts, nb: LiveNotebook) -> None:
        self._facts = facts
        self._nb = nb
        self.path = nb.path
        self.sources: dict[str, str] = {}  # cell id -> its source as this call last read or wrote it
        self.captures: dict[str, str] = {}  # key of a picture of an output taken in this call -> its cell's id
        self.ever_hidden = facts.ever_hidden.setdefault(self.path, set())  # ids of its cells ever seen hidden (Facts)

    def view(self) -> AccessView:
        """The levels, locks, cell count and revision: held, else read now (one host read)."""
        held = self._facts.held(self.path)
        return held.view if held is not None else self._facts.read(self._nb)

    def revision(self) -> int:
        """The revision read with the levels still held, else the host's now (one host read)."""
        held = self._facts.held(self.path)
        return held.view.revision if held is not None else self._nb.revision()

    def read(self, cells: Sequence[RawCell], *, seen: bool = False) -> None:
        """Note the sources of ``cells`` as read (``seen``: and their ids as known to exist in this step)."""
        self.sources.update((c.id, c.source) for c in cells)
        held = self._facts.held(self.path) if seen else None
        if held is not None:
            held.seen.update(c.id for c in cells)

    def known(self, cell_ids: Sequence[str]) -> bool:
        """True when every id was seen in this step (so it exists: no read is needed to report an unknown id)."""
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
