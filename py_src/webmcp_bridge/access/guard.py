"""Access control: the one checkpoint between every tool and the notebooks.

The person gives each notebook and each cell a level, stored in its metadata under :data:`~webmcp_bridge.core.metadata.METADATA_KEY`
(notebook: ``{"access": level, ...}``, cell: ``{"access": level}``):

- ``write`` (the default): the agent may read and change it.
- ``read``: the agent may read it (and comment on it) but not change it: writes, runs and kernel actions are
  refused with ``CELL_ACCESS_DENIED`` / ``NOTEBOOK_ACCESS_DENIED``.
- ``none``: the agent cannot tell it from something that does not exist. A hidden cell's id gets exactly
  the error of an unknown id; index ranges, cell counts and indices are of the visible cells only (the cells
  are renumbered, so no gap shows where a hidden cell sits); the person's focus on it reads as no focus; its
  review threads are not returned. A hidden notebook is missing from listings, open documents and the
  current notebook, and its path gets exactly the error of a missing one.

An unrecognised level fails closed (read as ``none``); a missing or malformed metadata block is ``write``.

:func:`build_bridge <webmcp_bridge.session.bridge.build_bridge>` wraps the host in :class:`GuardedHost` and hands
only the guard to the tools (``CallContext.host``), so every tool — including any added later — reaches a
notebook through this module. Levels are changed only by the person (the Agent panel, the cell context
menu) with the helpers below, which take the *raw* notebook; no guarded method can change them.

The author's locks (standard cell metadata ``editable: false`` / ``deletable: false``) are enforced here too:
a source change of an uneditable cell, a delete of an undeletable one, is ``CELL_LOCKED``.

Code run in the kernel can read any file the kernel can reach, including the workspace's notebooks, and the
variables hidden cells defined; access levels govern the bridge's tools, not the kernel. So the guard applies
the run rule (:mod:`webmcp_bridge.access.run_consent`) to every kernel run a tool starts: while anything is
hidden, the code is shown to the person and waits for Accept. Before the agent's code runs, the kernel's history
is also scrubbed of hidden cells' sources and results (:meth:`GuardedNotebook._scrub_history`; defence in depth).
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from webmcp_bridge.access.run_consent import RunConsent, accept_runs, run_accepted
from webmcp_bridge.access.runs import RunObservers
from webmcp_bridge.calls.registry import current_call
from webmcp_bridge.changes.log import ChangeLog
from webmcp_bridge.core.errors import ErrorCode, ToolError, cell_not_found, notebook_not_found
from webmcp_bridge.core.limits import CODE_BYTES, PROPOSAL_SUMMARY_BYTES, preview, utf8_len
from webmcp_bridge.core.metadata import SCHEMA_VERSION
from webmcp_bridge.core.paths import is_notebook_path
from webmcp_bridge.host.protocol import (
    CellChange,
    CellType,
    DeleteOp,
    EncodedImage,
    Entry,
    Focus,
    ImageRequest,
    KernelInfo,
    LiveNotebook,
    NotebookHost,
    OpenDocument,
    RawCell,
    RunResult,
    RunState,
    SaveOutcome,
    SetSourceOp,
    TabsState,
    TextPage,
)
from webmcp_bridge.propose.proposals import Proposal, ProposalBook, ProposalDenied, approved

Level = Literal["write", "read", "none"]
LEVELS: tuple[Level, ...] = ("write", "read", "none")


def parse_level(value: Any) -> Level:
    """The level stored as ``value``: None (absent) -> "write"; "write"/"read"/"none" as is; anything else ->
    "none" (fail closed: a level the bridge does not understand hides rather than exposes)."""
    if value is None:
        return "write"
    return value if value in LEVELS else "none"


def level_of_block(block: Any) -> Level:
    """The level in a ``webmcp_bridge`` metadata block (a dict with an ``access`` key); not a dict -> "write"."""
    return parse_level(block.get("access")) if isinstance(block, dict) else "write"


def next_level(level: Level) -> Level:
    """The level after ``level`` when the person cycles it: write -> read -> none -> write."""
    return LEVELS[(LEVELS.index(level) + 1) % len(LEVELS)] if level in LEVELS else "write"


# -- the person's side (raw notebooks) --------------------------------------------------------------------
#: counts the person's changes of a notebook's level in this page (set_notebook_level): the run rule's reused
#: workspace walk is looked at again after any (a notebook hidden and closed before the next run is found at once)
_notebook_level_changes = 0


def notebook_level(nb: LiveNotebook) -> Level:
    """The notebook's level (one read of its metadata)."""
    return level_of_block(nb.bridge_metadata())


def cell_levels(nb: LiveNotebook) -> dict[str, Level]:
    """``{cell id: level}`` of the cells whose level is not "write", in index order."""
    levels = {cell_id: level_of_block(block) for _, cell_id, block in nb.cell_bridge_metadata()}
    return {cell_id: level for cell_id, level in levels.items() if level != "write"}


def set_notebook_level(nb: LiveNotebook, level: Level) -> None:
    """Set the notebook's level (the person's action). Raises ValueError for an unknown level."""
    if level not in LEVELS:
        raise ValueError(f"unknown access level {level!r}")
    global _notebook_level_changes
    _notebook_level_changes += 1
    block = nb.bridge_metadata()
    block = dict(block) if isinstance(block, dict) else {}
    block["schemaVersion"] = SCHEMA_VERSION
    if level == "write":
        block.pop("access", None)
    else:
        block["access"] = level
    nb.set_bridge_metadata(block)


def set_cell_level(nb: LiveNotebook, cell_id: str, level: Level) -> None:
    """Set one cell's level (the person's action); "write" removes the cell's block. Raises ValueError for an
    unknown level, ToolError(CELL_NOT_FOUND) for an unknown cell."""
    if level not in LEVELS:
        raise ValueError(f"unknown access level {level!r}")
    blocks = {cid: block for _, cid, block in nb.cell_bridge_metadata()}
    block = dict(blocks[cell_id]) if isinstance(blocks.get(cell_id), dict) else {}
    if level == "write":
        block.pop("access", None)
    else:
        block["access"] = level
    nb.set_cell_bridge_metadata(cell_id, block or None)
    _stamp_threads(nb, {cell_id}, level)


def _stamp_threads(nb: LiveNotebook, cell_ids: set[str], level: Level) -> None:
    """Mark the review threads of these cells ``"hiddenCell": true`` when they become ``none`` (and unmark them
    otherwise), so a thread of a hidden cell stays hidden from the agent after the cell is deleted, in this
    session or a later one."""
    block = nb.bridge_metadata()
    threads = block.get("threads") if isinstance(block, dict) else None
    if not isinstance(threads, list):
        return
    changed = False
    for thread in threads:
        anchor = thread.get("anchor") if isinstance(thread, dict) else None
        if isinstance(anchor, dict) and anchor.get("cellId") in cell_ids:
            if level == "none" and thread.get("hiddenCell") is not True:
                thread["hiddenCell"] = True
                changed = True
            elif level != "none" and "hiddenCell" in thread:
                del thread["hiddenCell"]
                changed = True
    if changed:
        nb.set_bridge_metadata(block)


def set_cell_levels(nb: LiveNotebook, cell_ids: Sequence[str], level: Level) -> int:
    """:func:`set_cell_level` for several cells with one read of the cells' blocks (the panel's "apply to all
    cells", in chunks); ids no cell has are skipped. Returns how many cells were set. Raises ValueError for an
    unknown level."""
    if level not in LEVELS:
        raise ValueError(f"unknown access level {level!r}")
    blocks = {cid: block for _, cid, block in nb.cell_bridge_metadata()}
    done = 0
    for cell_id in cell_ids:
        block = dict(blocks[cell_id]) if isinstance(blocks.get(cell_id), dict) else {}
        if level == "write":
            block.pop("access", None)
        else:
            block["access"] = level
        try:
            nb.set_cell_bridge_metadata(cell_id, block or None)
        except ToolError:
            continue  # deleted meanwhile
        done += 1
    _stamp_threads(nb, set(cell_ids), level)
    return done


# -- the agent's side ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class AccessView:
    """The levels of one notebook at one revision (``revision``, as the host read it with the levels).

    ``hidden_indices``: real indices of ``none`` cells, ascending; ``visible`` indices count only the others.
    ``uneditable`` / ``undeletable``: ids of cells the notebook's author locked with the standard cell metadata
    ``editable: false`` / ``deletable: false`` (JupyterLab honours them for the person; the guard for the agent).
    """

    notebook: Level
    hidden: frozenset[str]
    read_only: frozenset[str]
    hidden_indices: tuple[int, ...]
    revision: int = 0
    uneditable: frozenset[str] = frozenset()
    undeletable: frozenset[str] = frozenset()

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


class _Step:
    """The access view of one notebook held for one call step: the synchronous stretch of one asyncio task in
    which it was read. Nothing but the bridge's own writes can change a notebook inside such a stretch (the
    person's edits and the panel's level changes are page events, which run only when Python yields), so every
    question of that stretch is answered from one read. The step ends at the next turn of the event loop (a
    callback scheduled when the view is read), on the guard's own writes and after each await of the host;
    another task never uses it. Outside a running event loop nothing is held."""

    __slots__ = ("view", "task", "seen", "__weakref__")

    def __init__(self, view: AccessView, task: Any) -> None:
        self.view = view
        self.task = task
        self.seen: set[str] = set()  # ids of cells read in this step: known to exist without reading again


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


class GuardedNotebook:
    """A :class:`~webmcp_bridge.host.protocol.LiveNotebook` that enforces the levels of the notebook it wraps (see the
    module docstring). Indices in and out are visible indices. Built by :class:`GuardedHost`."""

    def __init__(self, guard: GuardedHost, inner: LiveNotebook) -> None:
        self._guard = guard
        self._inner = inner
        self.path = inner.path

    # -- the view ----------------------------------------------------------------------------------------
    def view(self) -> AccessView:
        """The levels now: read once per call step (see :class:`_Step`), one host read."""
        step = self._guard._step(self.path)
        return step.view if step is not None else self._guard._view(self._inner)

    def _lapse(self) -> None:
        """End the step: the next question reads the notebook again (after a write or an await)."""
        self._guard._steps.pop(self.path, None)

    def _seen(self, cells: Sequence[RawCell]) -> None:
        step = self._guard._step(self.path)
        if step is not None:
            step.seen.update(c.id for c in cells)

    def _known(self, cell_ids: Sequence[str]) -> bool:
        """True when every id was read in this step (so it exists: no read is needed to report an unknown id)."""
        step = self._guard._step(self.path)
        return step is not None and all(cell_id in step.seen for cell_id in cell_ids)

    def _visible(self, cell: RawCell, view: AccessView) -> RawCell:
        return dataclasses.replace(cell, index=view.to_visible(cell.index)) if view.hidden_indices else cell

    def _check_ids(self, cell_ids: Sequence[str], view: AccessView) -> None:
        """Raise for the first id (in order) that is hidden or unknown, exactly as for an unknown id."""
        for pos, cell_id in enumerate(cell_ids):
            if cell_id in view.hidden:
                if pos:
                    self._inner.find_cells(list(cell_ids[:pos]))  # an unknown id before it is reported first
                raise cell_not_found(cell_id)

    def _writable(self, cell_ids: Sequence[str]) -> AccessView:
        view = self.view()
        if view.notebook != "write":
            raise notebook_access_denied(self.path)
        self._check_ids(cell_ids, view)
        for cell_id in cell_ids:
            if cell_id in view.read_only:
                self._find(cell_ids)  # unknown ids first, as for any write
                raise cell_access_denied(cell_id)
        return view

    def _find(self, cell_ids: Sequence[str], head_bytes: int = 0, max_outputs: int = 0) -> list[RawCell]:
        """The inner cells (raising CELL_NOT_FOUND for the first unknown id), remembered as seen in this step."""
        cells = self._inner.find_cells(list(cell_ids), head_bytes=head_bytes, max_outputs=max_outputs)
        self._seen(cells)
        return cells

    def _gate(self) -> None:
        self._guard.gate()

    def check_write(self, cell_ids: Sequence[str] = (), *, source: bool = False, delete: bool = False) -> None:
        """Refuse now what a write to these cells would refuse: NOTEBOOK_ACCESS_DENIED, CELL_NOT_FOUND (also for
        hidden ids), CELL_ACCESS_DENIED, and CELL_LOCKED when the write changes their sources (``source``) or
        deletes them (``delete``). For tools that check a whole request before changing anything."""
        view = self._writable(cell_ids)
        if cell_ids and not self._known(cell_ids):
            self._find(cell_ids)
        self._check_locks(view, cell_ids if source else (), cell_ids if delete else ())

    @staticmethod
    def _check_locks(view: AccessView, sources: Sequence[str], deletes: Sequence[str]) -> None:
        for cell_id in sources:
            if cell_id in view.uneditable:
                raise cell_locked(cell_id, "editable")
        for cell_id in deletes:
            if cell_id in view.undeletable:
                raise cell_locked(cell_id, "deletable")

    def locks(self, cell_id: str) -> tuple[bool, bool]:
        """``(editable, deletable)`` of a visible cell as the notebook's author set them (True unless false)."""
        view = self.view()
        return cell_id not in view.uneditable, cell_id not in view.undeletable

    def is_writable(self, cell_id: str) -> bool:
        """True when the agent may change this (visible) cell."""
        view = self.view()
        return view.notebook == "write" and cell_id not in view.read_only and cell_id not in view.hidden

    def level(self, cell_id: str | None = None) -> Level:
        """The level of the notebook (``cell_id`` None) or of one visible cell (the notebook's "read" applies
        to its cells). Raises CELL_NOT_FOUND for hidden or unknown ids."""
        view = self.view()
        if cell_id is None:
            return view.notebook
        self._check_ids([cell_id], view)
        if not self._known([cell_id]):
            self._find([cell_id])
        if view.notebook == "read" or cell_id in view.read_only:
            return "read"
        return "write"

    def hidden_cell_count(self) -> int:
        """How many cells are hidden from the agent (the only thing it learns about them)."""
        return len(self.view().hidden_indices)

    # -- reads -------------------------------------------------------------------------------------------
    def dirty(self) -> bool:
        return self._inner.dirty()

    def tabs(self) -> TabsState:
        return self._inner.tabs()

    def revision(self) -> int:
        step = self._guard._step(self.path)
        return step.view.revision if step is not None else self._inner.revision()

    def language(self) -> str:
        return self._inner.language()

    def cell_count(self) -> int:
        return self._inner.cell_count() - len(self.view().hidden_indices)

    def find_cells(self, cell_ids: Sequence[str], *, head_bytes: int = 0, max_outputs: int = 0) -> list[RawCell]:
        view = self.view()
        self._check_ids(cell_ids, view)
        return [self._visible(c, view) for c in self._find(cell_ids, head_bytes, max_outputs)]

    def find_cell(self, cell_id: str) -> RawCell:
        return self.find_cells([cell_id])[0]

    def read_cells(self, indices: Sequence[int] | None, *, head_bytes: int, max_outputs: int) -> list[RawCell]:
        view = self.view()
        if not view.hidden_indices:
            return self._inner.read_cells(indices, head_bytes=head_bytes, max_outputs=max_outputs)
        visible_count = self._inner.cell_count() - len(view.hidden_indices)
        chosen = range(visible_count) if indices is None else [i for i in indices if 0 <= i < visible_count]
        cells = self._inner.read_cells(
            [view.to_real(i) for i in chosen], head_bytes=head_bytes, max_outputs=max_outputs
        )
        return [self._visible(c, view) for c in cells if c.id not in view.hidden]

    def run_states(self, last_index: int) -> list[RunState]:
        """The visible code cells' run states up to visible index ``last_index``: a hidden cell's runs and edits are
        left out (so they never make a visible cell's outputs read as stale), indices are the visible ones."""
        view = self.view()
        if not view.hidden_indices:
            return self._inner.run_states(last_index)
        visible_count = self._inner.cell_count() - len(view.hidden_indices)
        last = min(last_index, visible_count - 1)
        if last < 0:
            return []
        states = self._inner.run_states(view.to_real(last))
        return [dataclasses.replace(s, index=view.to_visible(s.index)) for s in states if s.id not in view.hidden]

    def read_output_text(self, cell_id: str, output_index: int, mime: str, offset: int, max_bytes: int) -> TextPage:
        self._check_ids([cell_id], self.view())
        return self._inner.read_output_text(cell_id, output_index, mime, offset, max_bytes)

    def read_output_binary(self, cell_id: str, output_index: int, mime: str, max_bytes: int) -> tuple[str | None, int]:
        self._check_ids([cell_id], self.view())
        return self._inner.read_output_binary(cell_id, output_index, mime, max_bytes)

    def read_output_binary_head(self, cell_id: str, output_index: int, mime: str, max_bytes: int) -> tuple[bytes, int]:
        self._check_ids([cell_id], self.view())
        return self._inner.read_output_binary_head(cell_id, output_index, mime, max_bytes)

    async def encode_output_image(
        self, cell_id: str, output_index: int, mime: str, request: ImageRequest
    ) -> EncodedImage | None:
        """A read: the cell is checked before the host starts, and again after it answers (the person may have
        hidden the cell while the copy was made: then nothing of it is returned)."""
        self._check_ids([cell_id], self.view())
        try:
            image = await self._inner.encode_output_image(cell_id, output_index, mime, request)
        finally:
            self._lapse()
        self._check_ids([cell_id], self.view())
        return image

    def focus(self) -> Focus:
        focus = self._inner.focus()
        return Focus() if focus.cell_id is not None and focus.cell_id in self.view().hidden else focus

    def kernel(self) -> KernelInfo:
        return self._inner.kernel()

    def take_changes(self) -> list:
        """Changes are collected by the guard (``GuardedHost.changes``); tools read them from there."""
        self._guard._collect(self._inner)
        return []

    # -- writes ------------------------------------------------------------------------------------------
    def set_source(self, cell_id: str, source: str) -> RawCell:
        view = self._writable([cell_id])
        self._check_locks(view, [cell_id], ())
        self._gate()
        return self._wrote(self._inner.set_source(cell_id, source), view)

    def _wrote(self, cell: RawCell, view: AccessView) -> RawCell:
        """After a write that moved no cell: the step ends (the revision changed), ``cell`` in visible indices."""
        self._lapse()
        return self._visible(cell, view)

    def _placed(self, cell: RawCell, view: AccessView) -> RawCell:
        """After a write that inserted or moved a cell: the step ends, and ``cell``'s visible index is of the
        notebook as it is now (read again only when hidden cells shift the numbering)."""
        self._lapse()
        return self._visible(cell, self.view()) if view.hidden_indices else cell

    def _real_insert_index(self, index: int, view: AccessView) -> int:
        """Where visible index ``index`` falls among all cells: right after the visible cell before it (at 0:
        right before the first visible cell)."""
        visible_count = self._inner.cell_count() - len(view.hidden_indices)
        if visible_count == 0:
            return 0 if not view.hidden_indices else self._inner.cell_count()
        if index <= 0:
            return view.to_real(0)
        return view.to_real(min(index, visible_count) - 1) + 1

    def insert_cell(self, index: int, cell_type: CellType, source: str) -> RawCell:
        view = self._writable([])
        self._gate()
        cell = self._inner.insert_cell(self._real_insert_index(index, view), cell_type, source)
        return self._placed(cell, view)

    def insert_cell_near(
        self, reference_cell_id: str | None, position: str, cell_type: CellType, source: str
    ) -> RawCell:
        """Insert directly above or below a visible cell (None: at the start or the end of the notebook), so a
        hidden neighbour keeps its place. Raises like :meth:`insert_cell` and CELL_NOT_FOUND for the reference."""
        view = self._writable([])
        self._gate()
        if reference_cell_id is None:
            real = self._inner.cell_count() if position == "below" else 0
        else:
            self._check_ids([reference_cell_id], view)
            real = self._find([reference_cell_id])[0].index + (1 if position == "below" else 0)
        return self._placed(self._inner.insert_cell(real, cell_type, source), view)

    def move_cell_near(self, cell_id: str, reference_cell_id: str, position: str) -> RawCell:
        """Move a cell directly above or below another visible cell. Raises like :meth:`move_cell`."""
        self._writable([cell_id])
        self._gate()
        self.find_cells([cell_id, reference_cell_id])
        view = self.view()
        if view.hidden_indices:
            visible = [c.id for c in self.read_cells(None, head_bytes=0, max_outputs=0)]
            others = [i for i in visible if i != cell_id]
            at = others.index(reference_cell_id) + (1 if position == "below" else 0)
            if others[:at] + [cell_id] + others[at:] == visible:
                return self.find_cell(
                    cell_id
                )  # the agent's order is already so: nothing to do, as without hidden cells
        real = self._inner.find_cell(cell_id).index
        target = self._inner.find_cell(reference_cell_id).index + (1 if position == "below" else 0)
        if real < target:
            target -= 1  # the cell leaves its old place first
        moved = self._inner.move_cell(cell_id, target) if target != real else self._inner.find_cell(cell_id)
        return self._placed(moved, view)

    def delete_cell(self, cell_id: str) -> RawCell:
        view = self._writable([cell_id])
        self._check_locks(view, (), [cell_id])
        self._gate()
        return self._placed(self._inner.delete_cell(cell_id), view)

    def move_cell(self, cell_id: str, to_index: int) -> RawCell:
        view = self._writable([cell_id])
        self._gate()
        if not view.hidden_indices:
            return self._placed(self._inner.move_cell(cell_id, to_index), view)
        real = self._inner.find_cell(cell_id).index
        total = self._inner.cell_count()
        others = [i for i in range(total) if i != real and i not in set(view.hidden_indices)]
        after_removal = lambda i: i - (1 if i > real else 0)  # noqa: E731
        if not others:
            target = real
        elif to_index <= 0:
            target = after_removal(others[0])
        else:
            target = after_removal(others[min(to_index, len(others)) - 1]) + 1
        return self._placed(self._inner.move_cell(cell_id, target), view)

    def clear_outputs(self, cell_id: str) -> RawCell:
        view = self._writable([cell_id])
        self._gate()
        return self._wrote(self._inner.clear_outputs(cell_id), view)

    def set_cell_type(self, cell_id: str, cell_type: CellType) -> RawCell:
        """Change a writable cell's type; a cell the author made uneditable (``editable: false``) is CELL_LOCKED,
        as for a change of its source (what the cell is, code or text, is part of its content)."""
        view = self._writable([cell_id])
        self._check_locks(view, [cell_id], ())
        self._gate()
        return self._wrote(self._inner.set_cell_type(cell_id, cell_type), view)

    def set_focus(self, cell_id: str, cursor: dict | None, selection: dict | None) -> None:
        self._check_ids([cell_id], self.view())
        self._inner.set_focus(cell_id, cursor, selection)

    def highlight_output(self, cell_id: str, output_index: int) -> None:
        self._check_ids([cell_id], self.view())
        self._inner.highlight_output(cell_id, output_index)

    # -- the bridge's metadata: review threads pass, access never changes ---------------------------------
    def _thread_visible(self, thread: Any, view: AccessView) -> bool:
        anchor = thread.get("anchor") if isinstance(thread, dict) else None
        cell_id = anchor.get("cellId") if isinstance(anchor, dict) else None
        if not isinstance(cell_id, str) or cell_id in view.hidden:
            return False
        if thread.get("hiddenCell") is True or cell_id in self._guard._ever_hidden.get(self.path, ()):
            # of a cell that was hidden: shown only while that cell exists again (and is visible now)
            try:
                self._inner.find_cells([cell_id])
            except ToolError:
                return False
        return True

    def bridge_metadata(self) -> Any:
        block = self._inner.bridge_metadata()
        if not isinstance(block, dict):
            return block
        view = self.view()
        threads = block.get("threads")
        shown = dict(block)
        if isinstance(threads, list):
            shown["threads"] = [t for t in threads if self._thread_visible(t, view)]
        return shown

    def set_bridge_metadata(self, value: dict[str, Any]) -> None:
        view = self.view()
        current = self._inner.bridge_metadata()
        current = current if isinstance(current, dict) else {}
        merged = dict(value)
        stored_threads, given_threads = current.get("threads"), merged.get("threads")
        stored: list[Any] = stored_threads if isinstance(stored_threads, list) else []
        if stored or "threads" in merged:
            given = [
                t for t in (given_threads if isinstance(given_threads, list) else []) if self._thread_visible(t, view)
            ]
            by_id = {t.get("id"): t for t in given if isinstance(t.get("id"), str)}
            threads, used = [], set()
            for old in stored:  # stored order kept: hidden and malformed entries untouched, visible ones updated
                if not self._thread_visible(old, view):
                    threads.append(old)
                elif old.get("id") in by_id and old.get("id") not in used:
                    threads.append(by_id[old["id"]])
                    used.add(old["id"])
            threads.extend(t for t in given if t.get("id") not in used or not isinstance(t.get("id"), str))
            merged["threads"] = threads
        merged.pop("access", None)
        if "access" in current:
            merged["access"] = current["access"]
        self._inner.set_bridge_metadata(merged)
        self._lapse()

    def cell_bridge_metadata(self) -> list[tuple[int, str, Any]]:
        view = self.view()
        return [
            (view.to_visible(i), cid, block)
            for i, cid, block in self._inner.cell_bridge_metadata()
            if cid not in view.hidden
        ]

    def set_cell_bridge_metadata(self, cell_id: str, value: dict[str, Any] | None) -> None:
        raise ToolError(ErrorCode.NOTEBOOK_ACCESS_DENIED, "Only the person changes a cell's access.", path=self.path)

    # -- kernel --------------------------------------------------------------------------------------------
    # Every await of the host ends the step (the person may act meanwhile), also when it did not suspend.
    async def save(self) -> SaveOutcome:
        try:
            return await self._inner.save()
        finally:
            self._lapse()

    async def count_tabs(self) -> TabsState:
        try:
            return await self._inner.count_tabs()
        finally:
            self._lapse()

    async def wait_for_kernel(self, timeout: float) -> KernelInfo:
        try:
            return await self._inner.wait_for_kernel(timeout)
        finally:
            self._lapse()

    async def _scrub_history(self, view: AccessView) -> None:
        """Before the agent's code runs in the kernel: when the notebook has hidden cells, blank their sources
        (and outputs) in the kernel's history, so ``In``, ``_ih``, ``_iN``, ``Out``... cannot show them. A host
        without a kernel history to scrub (no ``scrub_kernel_history``) has nothing to blank. What a hidden
        cell defined stays reachable (docs/TOOLS.md, "Hidden cells and the kernel")."""
        scrub = getattr(self._inner, "scrub_kernel_history", None)
        if not view.hidden or not callable(scrub):
            return
        hidden = self._inner.find_cells(sorted(view.hidden))
        await scrub([c.execution_count for c in hidden if c.execution_count is not None], [c.source for c in hidden])

    async def run_consent(self) -> str | None:
        """Why a kernel run in this notebook is shown to the person first (:mod:`webmcp_bridge.access.run_consent`):
        a reason in words, or None when it is not (nothing hidden, or the person turned asking off). Ends the step."""
        view = self.view()
        try:
            return await self._guard.run_consent_reason(self.path, len(view.hidden))
        finally:
            self._lapse()

    def _source_of(self, cell_id: str) -> str:
        return self._inner.find_cells([cell_id])[0].source

    async def _consent(self, code: str, cell_id: str | None, kind: str) -> bool:
        """Apply the run rule before the agent's code runs: when it holds and the person has not accepted exactly
        ``code`` in this call, show it (a proposal, in Direct mode too) and wait. Returns True when the rule held
        (the caller checks again, right before the run, that the code is still what was accepted).

        Raises ProposalDenied (a normal "denied" result), ToolError(TOO_LARGE) for code too long to show in full,
        ToolError(PROPOSAL_ALREADY_PENDING)."""
        reason = await self.run_consent()
        if reason is None:
            return False
        if run_accepted(code):
            return True
        if utf8_len(code) > CODE_BYTES:
            raise ToolError(
                ErrorCode.TOO_LARGE,
                f"This code is {utf8_len(code)} bytes; the person is shown at most {CODE_BYTES} "
                "bytes before it runs. Run less at once.",
                bytes=utf8_len(code),
                maxBytes=CODE_BYTES,
            )
        call = current_call.get()
        tool = call.tool if call is not None else "kernel run"
        what = "Run this cell in the kernel" if cell_id is not None else "Run code in the kernel"
        proposal = Proposal(
            "", self.path, tool, kind, cell_id, preview(f"{what} ({reason})", PROPOSAL_SUMMARY_BYTES), None, code
        )

        def still_valid() -> str | None:
            if self._guard._inner.find_open(self.path) is None:
                return "the notebook was closed"
            if cell_id is not None:
                try:
                    self._inner.find_cells([cell_id])
                except ToolError:
                    return "the cell was deleted"
            return None

        decision = await self._guard.proposals.request(proposal, still_valid)
        self._lapse()
        if not decision.accepted:
            raise ProposalDenied(proposal.id, tool, decision.reason, decision.by)
        accept_runs([code])
        return True

    @staticmethod
    def _changed_since_accept() -> ToolError:
        return ToolError(
            ErrorCode.STALE_CELL,
            "The code changed after the person accepted running it; nothing was run. "
            "Read the cell again and ask to run it again.",
        )

    async def run_cell(self, cell_id: str, timeout: float) -> RunResult:
        view = self._writable([cell_id])
        self._gate()
        began, status, count = time.monotonic(), "failed", None
        try:
            asked = await self._consent(self._source_of(cell_id), cell_id, "run")
            await self._scrub_history(view)
            # no await from here to the run: the cell runs exactly what the person accepted
            self._writable([cell_id])
            if asked and not run_accepted(self._source_of(cell_id)):
                raise self._changed_since_accept()
            result = await self._inner.run_cell(cell_id, timeout)
            status, count = result.status, result.execution_count
            return result
        except asyncio.CancelledError:
            status = "aborted"
            raise
        finally:
            self._lapse()
            self._guard.runs.tell(self.path, "cell", cell_id, status, time.monotonic() - began, count)

    async def kernel_action(self, action: str, timeout: float) -> KernelInfo | None:
        self._writable([])
        if action == "restart":
            self._gate()
        try:
            return await self._inner.kernel_action(action, timeout)
        finally:
            self._lapse()

    # -- batched edits and code without a cell (tools/batch.py, tools/code.py) ----------------
    def apply_edits(self, ops: Sequence[Any]) -> list[str]:
        """Ops address cells by id only, so no index is mapped. The cells an op changes (update, edit,
        delete, move) must be writable; a reference cell (insert/move next to it) must be visible and may be
        read-only (it is not changed). Checked for the whole batch before anything is applied."""
        changed = [op.cell_id for op in ops if getattr(op, "cell_id", None) is not None]
        references = [op.reference_cell_id for op in ops if getattr(op, "reference_cell_id", None) is not None]
        view = self._writable(changed)
        self._check_ids(references, view)
        self._check_locks(
            view,
            [op.cell_id for op in ops if isinstance(op, SetSourceOp)],
            [op.cell_id for op in ops if isinstance(op, DeleteOp)],
        )
        self._gate()
        try:
            return self._inner.apply_edits(ops)
        finally:
            self._lapse()

    async def run_code(self, code: str, timeout: float, *, head_bytes: int, max_outputs: int) -> Any:
        view = self._writable([])
        self._gate()
        began, status, count = time.monotonic(), "failed", None
        try:
            await self._consent(code, None, "run_code")
            await self._scrub_history(view)
            self._writable([])
            run = await self._inner.run_code(code, timeout, head_bytes=head_bytes, max_outputs=max_outputs)
            status, count = run.status, run.execution_count
            return run
        except asyncio.CancelledError:
            status = "aborted"
            raise
        finally:
            self._lapse()
            self._guard.runs.tell(self.path, "code", None, status, time.monotonic() - began, count)

    def __getattr__(self, name: str) -> Any:
        # A host method this guard does not know (added to the protocol later) is refused rather than passed
        # through unchecked: the guard must be taught about it first.
        raise AttributeError(
            f"{type(self).__name__} does not expose {name!r}; add it to webmcp_bridge.access.guard with its access rule"
        )


class GuardedHost:
    """A :class:`~webmcp_bridge.host.protocol.NotebookHost` that hides ``none`` notebooks and hands out
    :class:`GuardedNotebook` objects. ``changes`` is the bridge's :class:`~webmcp_bridge.changes.log.ChangeLog`,
    fed from every notebook the guard touches; ``proposals`` the mode and the proposals waiting for the person
    (:mod:`webmcp_bridge.propose.proposals`), which the guard's writes check; ``runs`` the observers told of each
    kernel run a tool starts (:mod:`webmcp_bridge.access.runs`)."""

    def __init__(self, inner: NotebookHost, changes: ChangeLog, proposals: ProposalBook) -> None:
        self._inner = inner
        self.changes = changes
        self.proposals = proposals
        self._steps: dict[str, _Step] = {}  # per notebook path: the view held for the current call step
        self._ever_hidden: dict[str, set[str]] = {}  # ids of cells seen hidden (or deleted while hidden), per path
        self.runs = RunObservers()  # told of every kernel run a tool starts here (access/runs.py)
        self.consent = RunConsent()  # the run rule (access/run_consent.py); the lab layer sets the person's switch

    def gate(self) -> None:
        """In propose mode, refuse a change the person did not accept in this call (the safety net of
        webmcp_bridge.propose.proposals: a tool that forgot to ask cannot change the notebook or the workspace)."""
        if self.proposals.mode == "propose" and not approved():
            raise ToolError(
                ErrorCode.INTERNAL_ERROR,
                "This change was not proposed to the person (Propose mode is on); nothing was changed.",
            )

    @property
    def raw(self) -> NotebookHost:
        """The unguarded host, for the person's side only (the Agent panel); never handed to a tool."""
        return self._inner

    def _collect(self, nb: LiveNotebook) -> None:
        self._ingest(nb.path, nb.take_changes())

    def _ingest(self, path: str, changes: Sequence[CellChange]) -> None:
        hidden = [c.cell_id for c in changes if parse_level(c.access) == "none"]
        if hidden:
            self._ever_hidden.setdefault(path, set()).update(hidden)
        self.changes.ingest(path, list(changes))

    def _step(self, path: str) -> _Step | None:
        """The step held for ``path``, if it is of the running task (see :class:`_Step`)."""
        step = self._steps.get(path)
        if step is None:
            return None
        try:
            task = asyncio.current_task()
        except RuntimeError:
            task = None
        return step if task is not None and step.task is task else None

    def _view(self, nb: LiveNotebook) -> AccessView:
        """Read the levels of ``nb`` now (one host read: :meth:`LiveNotebook.access_state`, which also hands over
        the changes since the last read, fed to the change log) and hold them for the current call step."""
        state = nb.access_state()
        self._ingest(nb.path, state.changes)
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
        uneditable = frozenset(cell_id for cell_id, editable, _ in state.locks if not editable)
        undeletable = frozenset(cell_id for cell_id, _, deletable in state.locks if not deletable)
        view = AccessView(
            parse_level(state.notebook_access),
            frozenset(hidden),
            frozenset(read_only),
            tuple(sorted(hidden_indices)),
            state.revision,
            uneditable,
            undeletable,
        )
        if hidden:
            self._ever_hidden.setdefault(nb.path, set()).update(hidden)
        self._hold(nb.path, view)
        return view

    def _hold(self, path: str, view: AccessView) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._steps.pop(path, None)  # no event loop: nothing is held, every question reads afresh
            return
        step = _Step(view, asyncio.current_task())
        self._steps[path] = step
        loop.call_soon(self._end_step, path, weakref.ref(step))

    def _end_step(self, path: str, step: weakref.ref[_Step]) -> None:
        if self._steps.get(path) is step():
            self._steps.pop(path, None)

    def _wrap(self, nb: LiveNotebook | None) -> GuardedNotebook | None:
        if nb is None:
            return None
        if self._view(nb).notebook == "none":  # a fresh read when a call reaches a notebook; changes taken with it
            return None
        return GuardedNotebook(self, nb)

    def notebook(self, nb: LiveNotebook) -> GuardedNotebook | None:
        """Guard a raw notebook (None when it is hidden from the agent)."""
        return self._wrap(nb)

    async def _hidden(self, path: str) -> bool:
        if not is_notebook_path(path):
            return False
        open_nb = self._inner.find_open(path)
        if open_nb is not None:
            return self._view(open_nb).notebook == "none"
        return level_of_block(await self._inner.notebook_bridge_metadata(path)) == "none"

    def _open_hidden(self) -> bool:
        """True when an open notebook is ``none`` now (its live metadata)."""
        for doc in self._inner.open_documents():
            nb = self._inner.find_open(doc.path)
            if nb is not None and self._view(nb).notebook == "none":
                return True
        return False

    async def run_consent_reason(self, path: str, hidden_cells: int) -> str | None:
        """The run rule's reason for a run in the notebook at ``path`` with ``hidden_cells`` hidden cells
        (:meth:`RunConsent.reason <webmcp_bridge.access.run_consent.RunConsent.reason>`), or None."""
        # the walk is reused while no notebook level changed and the same notebooks are open
        stamp = (_notebook_level_changes, tuple(sorted(doc.path for doc in self._inner.open_documents())))
        return await self.consent.reason(
            path, hidden_cells, self._open_hidden(), self._inner.list_dir, self._hidden, stamp
        )

    async def list_dir(self, path: str) -> list[Entry] | None:
        entries = await self._inner.list_dir(path)
        if entries is None:
            return None
        return [
            e
            for e in entries
            if (e.type != "notebook" and not is_notebook_path(e.path)) or not await self._hidden(e.path)
        ]

    async def stat(self, path: str) -> Entry | None:
        entry = await self._inner.stat(path)
        if entry is not None and (entry.type == "notebook" or is_notebook_path(path)) and await self._hidden(path):
            return None
        return entry

    async def open_notebook(self, path: str, activate: bool) -> GuardedNotebook:
        if await self._hidden(path):
            raise notebook_not_found(path)
        nb = self._wrap(await self._inner.open_notebook(path, activate))
        if nb is None:
            raise notebook_not_found(path)
        return nb

    async def create_notebook(self, path: str, kernel_name: str | None) -> None:
        """Create, unless anything (a hidden notebook included) is at ``path``: PATH_EXISTS. A person's hidden
        notebook is never overwritten; the price is that an agent guessing its exact path learns that the
        path is taken (documented in docs/TOOLS.md)."""
        if await self._inner.stat(path) is not None:
            raise ToolError(ErrorCode.PATH_EXISTS, f"Something already exists at {path!r}.", path=path)
        self.gate()
        await self._inner.create_notebook(path, kernel_name)

    def open_documents(self) -> list[OpenDocument]:
        shown = []
        for doc in self._inner.open_documents():
            nb = self._inner.find_open(doc.path)
            if nb is None or self._view(nb).notebook != "none":
                shown.append(doc)
        return shown

    def current_notebook(self) -> GuardedNotebook | None:
        return self._wrap(self._inner.current_notebook())

    def find_open(self, path: str) -> GuardedNotebook | None:
        return self._wrap(self._inner.find_open(path))

    async def notebook_bridge_metadata(self, path: str) -> Any:
        raise ToolError(
            ErrorCode.NOTEBOOK_ACCESS_DENIED, "The bridge's metadata is read through the notebook.", path=path
        )

    # -- text files (tools/files.py): never a notebook, whatever its level ----------------------
    @staticmethod
    def _not_a_notebook(path: str) -> None:
        if is_notebook_path(path):  # the tools refuse these first; the same answer for every notebook
            raise ToolError(
                ErrorCode.INVALID_PATH,
                "Notebooks are not read or written as files; use jupyter_get_cells, "
                "jupyter_export_notebook and the cell tools.",
                path=path,
            )

    async def read_text(self, path: str, max_bytes: int) -> str | None:
        self._not_a_notebook(path)
        return await self._inner.read_text(path, max_bytes)

    async def write_text(self, path: str, text: str) -> None:
        self._not_a_notebook(path)
        self.gate()
        await self._inner.write_text(path, text)

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(
            f"{type(self).__name__} does not expose {name!r}; add it to webmcp_bridge.access.guard with its access rule"
        )
