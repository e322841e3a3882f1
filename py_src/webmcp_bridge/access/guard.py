"""Access control: the one checkpoint between every tool and the notebooks.

The person gives each notebook and each cell a level, stored in its metadata under :data:`METADATA_KEY`
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

:func:`build_registry <webmcp_bridge.session.bridge.build_registry>` wraps the host in :class:`GuardedHost` and hands
only the guard to the tools (``CallContext.host``), so every tool — including any added later — reaches a
notebook through this module. Levels are changed only by the person (the Agent panel, the cell context
menu) with the helpers below, which take the *raw* notebook; no guarded method can change them.

Known limit: code run in the kernel (``jupyter_run_cells`` on writable cells) can read any file the kernel
can reach, including the workspace's notebooks; access levels govern the bridge's tools, not the kernel.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal, Sequence

from webmcp_bridge.access.changes import ChangeLog
from webmcp_bridge.access.sharing import SharedSelections
from webmcp_bridge.core.errors import ErrorCode, ToolError, cell_not_found, notebook_not_found
from webmcp_bridge.host.protocol import CellType, Entry, Focus, KernelInfo, LiveNotebook, NotebookHost, OpenDocument, RawCell, RunResult, TextPage
from webmcp_bridge.propose.proposals import ProposalBook, approved

METADATA_KEY = "webmcp_bridge"
SCHEMA_VERSION = 1
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
    """The levels of one notebook at one revision.

    ``hidden_indices``: real indices of ``none`` cells, ascending; ``visible`` indices count only the others.
    """

    notebook: Level
    hidden: frozenset[str]
    read_only: frozenset[str]
    hidden_indices: tuple[int, ...]

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
    return ToolError(ErrorCode.NOTEBOOK_ACCESS_DENIED,
                     f"The person made {path!r} read-only for the agent: it can be read, not changed or run.", path=path)


def cell_access_denied(cell_id: str) -> ToolError:
    """The error for a change to a cell the person made read-only for the agent."""
    return ToolError(ErrorCode.CELL_ACCESS_DENIED,
                     f"The person made cell {cell_id!r} read-only for the agent: it can be read, not changed or run.", cellId=cell_id)


class GuardedNotebook:
    """A :class:`~webmcp_bridge.host.protocol.LiveNotebook` that enforces the levels of the notebook it wraps (see the
    module docstring). Indices in and out are visible indices. Built by :class:`GuardedHost`."""

    def __init__(self, guard: "GuardedHost", inner: LiveNotebook) -> None:
        self._guard = guard
        self._inner = inner
        self.path = inner.path

    # -- the view ----------------------------------------------------------------------------------------
    def view(self) -> AccessView:
        """The levels now (cached per notebook until its revision changes)."""
        return self._guard._view(self._inner)

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
                self._inner.find_cells(list(cell_ids))  # unknown ids first, as for any write
                raise cell_access_denied(cell_id)
        return view

    def _gate(self) -> None:
        """In propose mode, refuse a change the person did not accept in this call (the safety net of
        webmcp_bridge.propose.proposals: a tool that forgot to ask cannot change the notebook)."""
        if self._guard.proposals.mode == "propose" and not approved():
            raise ToolError(ErrorCode.INTERNAL_ERROR, "This change was not proposed to the person (Propose mode is on); nothing was changed.")

    def check_write(self, cell_ids: Sequence[str] = ()) -> None:
        """Refuse now what a write to these cells would refuse: NOTEBOOK_ACCESS_DENIED, CELL_NOT_FOUND (also for
        hidden ids), CELL_ACCESS_DENIED. For tools that check a whole request before changing anything."""
        self._writable(cell_ids)
        if cell_ids:
            self._inner.find_cells(list(cell_ids))

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
        self._inner.find_cells([cell_id])
        if view.notebook == "read" or cell_id in view.read_only:
            return "read"
        return "write"

    def hidden_cell_count(self) -> int:
        """How many cells are hidden from the agent (the only thing it learns about them)."""
        return len(self.view().hidden_indices)

    # -- reads -------------------------------------------------------------------------------------------
    def dirty(self) -> bool:
        return self._inner.dirty()

    def revision(self) -> int:
        return self._inner.revision()

    def language(self) -> str:
        return self._inner.language()

    def cell_count(self) -> int:
        return self._inner.cell_count() - len(self.view().hidden_indices)

    def find_cells(self, cell_ids: Sequence[str], *, head_bytes: int = 0, max_outputs: int = 0) -> list[RawCell]:
        view = self.view()
        self._check_ids(cell_ids, view)
        return [self._visible(c, view) for c in self._inner.find_cells(cell_ids, head_bytes=head_bytes, max_outputs=max_outputs)]

    def find_cell(self, cell_id: str) -> RawCell:
        return self.find_cells([cell_id])[0]

    def read_cells(self, indices: Sequence[int] | None, *, head_bytes: int, max_outputs: int) -> list[RawCell]:
        view = self.view()
        if not view.hidden_indices:
            return self._inner.read_cells(indices, head_bytes=head_bytes, max_outputs=max_outputs)
        visible_count = self._inner.cell_count() - len(view.hidden_indices)
        chosen = range(visible_count) if indices is None else [i for i in indices if 0 <= i < visible_count]
        cells = self._inner.read_cells([view.to_real(i) for i in chosen], head_bytes=head_bytes, max_outputs=max_outputs)
        return [self._visible(c, view) for c in cells if c.id not in view.hidden]

    def read_output_text(self, cell_id: str, output_index: int, mime: str, offset: int, max_bytes: int) -> TextPage:
        self._check_ids([cell_id], self.view())
        return self._inner.read_output_text(cell_id, output_index, mime, offset, max_bytes)

    def read_output_binary(self, cell_id: str, output_index: int, mime: str, max_bytes: int) -> tuple[str | None, int]:
        self._check_ids([cell_id], self.view())
        return self._inner.read_output_binary(cell_id, output_index, mime, max_bytes)

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
        self._gate()
        return self._visible(self._inner.set_source(cell_id, source), view)

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
        return self._visible(cell, self.view())

    def insert_cell_near(self, reference_cell_id: str | None, position: str, cell_type: CellType, source: str) -> RawCell:
        """Insert directly above or below a visible cell (None: at the start or the end of the notebook), so a
        hidden neighbour keeps its place. Raises like :meth:`insert_cell` and CELL_NOT_FOUND for the reference."""
        self._writable([])
        self._gate()
        if reference_cell_id is None:
            real = self._inner.cell_count() if position == "below" else 0
        else:
            real = self._inner.find_cell(self.find_cell(reference_cell_id).id).index + (1 if position == "below" else 0)
        return self._visible(self._inner.insert_cell(real, cell_type, source), self.view())

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
                return self.find_cell(cell_id)  # the agent's order is already so: nothing to do, as without hidden cells
        real = self._inner.find_cell(cell_id).index
        target = self._inner.find_cell(reference_cell_id).index + (1 if position == "below" else 0)
        if real < target:
            target -= 1  # the cell leaves its old place first
        moved = self._inner.move_cell(cell_id, target) if target != real else self._inner.find_cell(cell_id)
        return self._visible(moved, self.view())

    def delete_cell(self, cell_id: str) -> RawCell:
        view = self._writable([cell_id])
        self._gate()
        return self._visible(self._inner.delete_cell(cell_id), view)

    def move_cell(self, cell_id: str, to_index: int) -> RawCell:
        view = self._writable([cell_id])
        self._gate()
        if not view.hidden_indices:
            return self._inner.move_cell(cell_id, to_index)
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
        return self._visible(self._inner.move_cell(cell_id, target), self.view())

    def clear_outputs(self, cell_id: str) -> RawCell:
        view = self._writable([cell_id])
        self._gate()
        return self._visible(self._inner.clear_outputs(cell_id), view)

    def set_focus(self, cell_id: str, cursor: dict | None, selection: dict | None) -> None:
        self._check_ids([cell_id], self.view())
        self._inner.set_focus(cell_id, cursor, selection)

    def highlight_output(self, cell_id: str, output_index: int) -> None:
        self._check_ids([cell_id], self.view())
        self._inner.highlight_output(cell_id, output_index)  # type: ignore[attr-defined]

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
        stored = current.get("threads") if isinstance(current.get("threads"), list) else []
        if stored or "threads" in merged:
            given = [t for t in (merged.get("threads") if isinstance(merged.get("threads"), list) else []) if self._thread_visible(t, view)]
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

    def cell_bridge_metadata(self) -> list[tuple[int, str, Any]]:
        view = self.view()
        return [(view.to_visible(i), cid, block) for i, cid, block in self._inner.cell_bridge_metadata() if cid not in view.hidden]

    def set_cell_bridge_metadata(self, cell_id: str, value: dict[str, Any] | None) -> None:
        raise ToolError(ErrorCode.NOTEBOOK_ACCESS_DENIED, "Only the person changes a cell's access.", path=self.path)

    # -- kernel --------------------------------------------------------------------------------------------
    async def save(self) -> bool:
        return await self._inner.save()

    async def wait_for_kernel(self, timeout: float) -> KernelInfo:
        return await self._inner.wait_for_kernel(timeout)

    async def run_cell(self, cell_id: str, timeout: float) -> RunResult:
        self._writable([cell_id])
        self._gate()
        return await self._inner.run_cell(cell_id, timeout)

    async def kernel_action(self, action: str, timeout: float) -> KernelInfo | None:
        self._writable([])
        if action == "restart":
            self._gate()
        return await self._inner.kernel_action(action, timeout)

    # -- batched edits and code without a cell (engineer C; tools/batch.py, tools/code.py) ----------------
    def apply_edits(self, ops: Sequence[Any]) -> list[str]:
        """Ops address cells by id only, so no index is mapped. The cells an op changes (update, edit,
        delete, move) must be writable; a reference cell (insert/move next to it) must be visible and may be
        read-only (it is not changed). Checked for the whole batch before anything is applied."""
        changed = [op.cell_id for op in ops if getattr(op, "cell_id", None) is not None]
        references = [op.reference_cell_id for op in ops if getattr(op, "reference_cell_id", None) is not None]
        view = self._writable(changed)
        self._check_ids(references, view)
        self._gate()
        return self._inner.apply_edits(ops)  # type: ignore[attr-defined]

    async def run_code(self, code: str, timeout: float, *, head_bytes: int, max_outputs: int) -> Any:
        self._writable([])
        self._gate()
        return await self._inner.run_code(code, timeout, head_bytes=head_bytes, max_outputs=max_outputs)  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> Any:
        # A host method this guard does not know (added to the protocol later) is refused rather than passed
        # through unchecked: the guard must be taught about it first.
        raise AttributeError(f"{type(self).__name__} does not expose {name!r}; add it to webmcp_bridge.access.guard with its access rule")


class GuardedHost:
    """A :class:`~webmcp_bridge.host.protocol.NotebookHost` that hides ``none`` notebooks and hands out
    :class:`GuardedNotebook` objects. ``changes`` is the bridge's :class:`~webmcp_bridge.access.changes.ChangeLog`,
    fed from every notebook the guard touches; ``proposals`` the mode and the proposals waiting for the person
    (:mod:`webmcp_bridge.propose.proposals`), which the guard's writes check."""

    def __init__(self, inner: NotebookHost, changes: ChangeLog | None = None, proposals: ProposalBook | None = None) -> None:
        self._inner = inner
        self.changes = changes or ChangeLog()
        self.proposals = proposals or ProposalBook()
        self.shared = SharedSelections()  # output text the person shared (read through the guard's visibility)
        self._views: dict[str, tuple[int, AccessView]] = {}
        self._ever_hidden: dict[str, set[str]] = {}  # ids of cells seen hidden (or deleted while hidden), per path

    @property
    def raw(self) -> NotebookHost:
        """The unguarded host, for the person's side only (the Agent panel); never handed to a tool."""
        return self._inner

    def _collect(self, nb: LiveNotebook) -> None:
        changes = nb.take_changes()
        hidden = [c.cell_id for c in changes if parse_level(c.access) == "none"]
        if hidden:
            self._ever_hidden.setdefault(nb.path, set()).update(hidden)
        self.changes.ingest(nb.path, changes)

    def _view(self, nb: LiveNotebook) -> AccessView:
        revision = nb.revision()
        cached = self._views.get(nb.path)
        if cached is not None and cached[0] == revision:
            return cached[1]
        hidden: set[str] = set()
        read_only: set[str] = set()
        hidden_indices: list[int] = []
        for index, cell_id, block in nb.cell_bridge_metadata():
            level = level_of_block(block)
            if level == "none":
                hidden.add(cell_id)
                hidden_indices.append(index)
            elif level == "read":
                read_only.add(cell_id)
        view = AccessView(notebook_level(nb), frozenset(hidden), frozenset(read_only), tuple(sorted(hidden_indices)))
        self._views[nb.path] = (revision, view)
        if hidden:
            self._ever_hidden.setdefault(nb.path, set()).update(hidden)
        return view

    def _wrap(self, nb: LiveNotebook | None) -> GuardedNotebook | None:
        if nb is None:
            return None
        if self._view(nb).notebook == "none":
            return None
        self._collect(nb)
        return GuardedNotebook(self, nb)

    def notebook(self, nb: LiveNotebook) -> GuardedNotebook | None:
        """Guard a raw notebook (None when it is hidden from the agent)."""
        return self._wrap(nb)

    async def _hidden(self, path: str) -> bool:
        if not path.endswith(".ipynb"):
            return False
        open_nb = self._inner.find_open(path)
        if open_nb is not None:
            return self._view(open_nb).notebook == "none"
        return level_of_block(await self._inner.notebook_bridge_metadata(path)) == "none"

    async def list_dir(self, path: str) -> list[Entry] | None:
        entries = await self._inner.list_dir(path)
        if entries is None:
            return None
        return [e for e in entries if e.type != "notebook" or not await self._hidden(e.path)]

    async def stat(self, path: str) -> Entry | None:
        entry = await self._inner.stat(path)
        if entry is not None and entry.type == "notebook" and await self._hidden(path):
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
        raise ToolError(ErrorCode.NOTEBOOK_ACCESS_DENIED, "The bridge's metadata is read through the notebook.", path=path)

    # -- text files (engineer C; tools/files.py): never a notebook, whatever its level ----------------------
    @staticmethod
    def _not_a_notebook(path: str) -> None:
        if path.lower().endswith(".ipynb"):  # the tools refuse these first; the same answer for every notebook
            raise ToolError(ErrorCode.INVALID_PATH, "Notebooks are not read or written as files; use jupyter_get_cells, "
                            "jupyter_export_notebook and the cell tools.", path=path)

    async def read_text(self, path: str, max_bytes: int) -> str | None:
        self._not_a_notebook(path)
        return await self._inner.read_text(path, max_bytes)  # type: ignore[attr-defined]

    async def write_text(self, path: str, text: str) -> None:
        self._not_a_notebook(path)
        await self._inner.write_text(path, text)  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(f"{type(self).__name__} does not expose {name!r}; add it to webmcp_bridge.access.guard with its access rule")
