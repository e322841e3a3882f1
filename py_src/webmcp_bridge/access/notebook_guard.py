"""The access guard of one notebook: :class:`GuardedNotebook`, which :class:`~webmcp_bridge.access.guard.GuardedHost`
hands to the tools instead of the host's notebook (the rules: :mod:`webmcp_bridge.access.guard`)."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from webmcp_bridge.access.levels import Level
from webmcp_bridge.access.run_consent import ask_to_run, changed_since_accept
from webmcp_bridge.access.step import AccessView, CallStep, cell_access_denied, cell_locked, notebook_access_denied
from webmcp_bridge.core.errors import ErrorCode, ToolError, cell_not_found, notebook_not_found
from webmcp_bridge.host.protocol import (
    CellType,
    DeleteOp,
    EncodedImage,
    Focus,
    ImageRequest,
    KernelInfo,
    LiveNotebook,
    OutputCapture,
    RawCell,
    RunResult,
    RunState,
    SaveOutcome,
    SetSourceOp,
    TabsState,
    TextPage,
)
from webmcp_bridge.propose.hold import run_accepted
from webmcp_bridge.review.visibility import merge_threads, thread_visible

if TYPE_CHECKING:
    from webmcp_bridge.access.guard import GuardedHost

_T = TypeVar("_T")


class GuardedNotebook:
    """A :class:`~webmcp_bridge.host.protocol.LiveNotebook` enforcing the wrapped notebook's levels, in visible indices,
    one per lookup with the call's ``step``. Every write goes through :meth:`_write`; one that can lose text hands the
    host the source this object read, so a cell the person changed since is refused (STALE_CELL)."""

    def __init__(self, guard: GuardedHost, inner: LiveNotebook, step: CallStep) -> None:
        self._guard = guard
        self._inner = inner
        self._step = step
        self.path = inner.path

    def view(self) -> AccessView:
        """The levels now: read once per call step (:data:`~webmcp_bridge.access.step.ENDS`)."""
        return self._step.view()

    async def _awaited(self, pending: Awaitable[_T]) -> _T:
        """Await the host; the step ends however it went (the person may act meanwhile)."""
        try:
            return await pending
        finally:
            self._step.end("await")

    def _visible(self, cell: RawCell, view: AccessView) -> RawCell:
        return dataclasses.replace(cell, index=view.to_visible(cell.index)) if view.hidden_indices else cell

    def _check_ids(self, cell_ids: Sequence[str], view: AccessView) -> None:
        """Raise for the first id (in order) that is hidden or unknown, exactly as for an unknown id."""
        for pos, cell_id in enumerate(cell_ids):
            if cell_id in view.hidden:
                if pos:
                    self._inner.find_cells(list(cell_ids[:pos]))  # an unknown id before it is reported first
                raise cell_not_found(cell_id)

    def _still_readable(self, cell_id: str) -> None:
        """After an await of a read: the notebook or cell hidden meanwhile answers as unknown."""
        view = self.view()
        if view.notebook == "none":
            raise notebook_not_found(self.path)
        self._check_ids([cell_id], view)

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
        """The inner cells (CELL_NOT_FOUND for the first unknown id), noted as seen in this step."""
        cells = self._inner.find_cells(list(cell_ids), head_bytes=head_bytes, max_outputs=max_outputs)
        self._step.read(cells, seen=True)
        return cells

    def check_write(self, cell_ids: Sequence[str] = (), *, source: bool = False, delete: bool = False) -> None:
        """Refuse now what a write to these cells would (as :meth:`_write`; CELL_LOCKED when it changes their sources
        or deletes them), for tools that check a whole request before changing anything."""
        view = self._writable(cell_ids)
        if cell_ids and not self._step.known(cell_ids):
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
        """``(editable, deletable)`` of a visible cell as the notebook's author set them."""
        view = self.view()
        return cell_id not in view.uneditable, cell_id not in view.undeletable

    def is_writable(self, cell_id: str) -> bool:
        """True when the agent may change this (visible) cell."""
        view = self.view()
        return view.notebook == "write" and cell_id not in view.read_only and cell_id not in view.hidden

    def level(self, cell_id: str | None = None) -> Level:
        """The level of the notebook (``cell_id`` None) or of a visible cell (the notebook's "read" is its cells').
        Raises CELL_NOT_FOUND for hidden or unknown ids."""
        view = self.view()
        if cell_id is None:
            return view.notebook
        self._check_ids([cell_id], view)
        if not self._step.known([cell_id]):
            self._find([cell_id])
        if view.notebook == "read" or cell_id in view.read_only:
            return "read"
        return "write"

    def hidden_cell_count(self) -> int:
        """How many cells are hidden from the agent (the only thing it learns about them)."""
        return len(self.view().hidden_indices)

    def dirty(self) -> bool:
        return self._inner.dirty()

    def tabs(self) -> TabsState:
        return self._inner.tabs()

    def revision(self) -> int:
        return self._step.revision()

    def language(self) -> str:
        return self._inner.language()

    def cell_count(self) -> int:
        return self.view().visible_count  # read with the levels: no second host read, the same moment

    def find_cells(self, cell_ids: Sequence[str], *, head_bytes: int = 0, max_outputs: int = 0) -> list[RawCell]:
        view = self.view()
        self._check_ids(cell_ids, view)
        return [self._visible(c, view) for c in self._find(cell_ids, head_bytes, max_outputs)]

    def find_cell(self, cell_id: str) -> RawCell:
        return self.find_cells([cell_id])[0]

    def read_cells(self, indices: Sequence[int] | None, *, head_bytes: int, max_outputs: int) -> list[RawCell]:
        view = self.view()
        if not view.hidden_indices:
            cells = self._inner.read_cells(indices, head_bytes=head_bytes, max_outputs=max_outputs)
            self._step.read(cells)
            return cells
        chosen = range(view.visible_count) if indices is None else [i for i in indices if 0 <= i < view.visible_count]
        cells = self._inner.read_cells(
            [view.to_real(i) for i in chosen], head_bytes=head_bytes, max_outputs=max_outputs
        )
        shown = [self._visible(c, view) for c in cells if c.id not in view.hidden]
        self._step.read(shown)
        return shown

    def run_states(self, last_index: int) -> list[RunState]:
        """Visible code cells' run states up to visible ``last_index``: hidden cells' runs and edits left out (they
        never make a visible cell's outputs stale)."""
        view = self.view()
        if not view.hidden_indices:
            return self._inner.run_states(last_index)
        last = min(last_index, view.visible_count - 1)
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
        self._check_ids([cell_id], self.view())
        return await self._read_after(cell_id, self._inner.encode_output_image(cell_id, output_index, mime, request))

    async def _read_after(self, cell_id: str, pending: Awaitable[_T]) -> _T:
        """Await a read of a visible cell, checked again after (hidden meanwhile: nothing of it returned)."""
        result = await self._awaited(pending)
        self._still_readable(cell_id)
        return result

    async def capture_output(self, cell_id: str, output_index: int, max_side: int) -> OutputCapture:
        """Checked before the page draws it and again after (hidden meanwhile: the capture is dropped)."""
        self._check_ids([cell_id], self.view())
        capture = await self._awaited(self._inner.capture_output(cell_id, output_index, max_side))
        try:
            self._still_readable(cell_id)
        except ToolError:
            if capture.key:
                self._inner.release_capture(capture.key)
            raise
        if capture.key:
            self._step.captures[capture.key] = cell_id
        return capture

    async def encode_capture(self, key: str, request: ImageRequest) -> EncodedImage:
        """A copy of a capture this call took, its cell checked again after."""
        cell_id = self._step.captures.get(key)
        if cell_id is None:
            raise ToolError(ErrorCode.OUTPUT_NOT_FOUND, "That picture of the output is no longer held.")
        return await self._read_after(cell_id, self._inner.encode_capture(key, request))

    def release_capture(self, key: str) -> None:
        self._step.captures.pop(key, None)
        self._inner.release_capture(key)

    def focus(self) -> Focus:
        focus = self._inner.focus()
        return Focus() if focus.cell_id is not None and focus.cell_id in self.view().hidden else focus

    def agent_kernel(self) -> float | None:
        return self._inner.agent_kernel()

    def kernel(self) -> KernelInfo:
        return self._inner.kernel()

    def take_changes(self) -> list:
        """Changes go to the bridge's change log; tools read them there."""
        self._step.take_changes()
        return []

    def _write(
        self,
        changed: Sequence[str],
        write: Callable[[AccessView, dict[str, str]], _T],
        *,
        sources: Sequence[str] = (),
        deletes: Sequence[str] = (),
        references: Sequence[str] = (),
    ) -> _T:
        """The one path of every write: ``changed`` writable (NOTEBOOK_ACCESS_DENIED, CELL_NOT_FOUND,
        CELL_ACCESS_DENIED), ``references`` visible, ``sources`` / ``deletes`` not author-locked (CELL_LOCKED),
        Propose mode's gate; then ``write(view, expected)``, ``expected`` the sources read of ``sources`` and
        ``deletes`` (the host's precondition); a STALE_CELL goes through :meth:`_refusal`."""
        view = self._writable(changed)
        self._check_ids(references, view)
        self._check_locks(view, sources, deletes)
        self._guard.gate()
        expected = {i: self._step.sources[i] for i in (*sources, *deletes) if i in self._step.sources}
        try:
            return write(view, expected)
        except ToolError as exc:
            raise self._refusal(exc, changed) from None

    def set_source(self, cell_id: str, source: str, expected: str | None = None) -> RawCell:
        """``expected`` (what the caller read) is checked by the host; without it, what this object read."""

        def write(view: AccessView, read: dict[str, str]) -> RawCell:
            written = self._inner.set_source(cell_id, source, expected if expected is not None else read.get(cell_id))
            self._step.read([written])
            return self._wrote(written, view)

        return self._write([cell_id], write, sources=[cell_id])

    def _refusal(self, error: ToolError, cell_ids: Sequence[str]) -> ToolError:
        """A host's STALE_CELL quotes the cell as it is now, so the levels are read again first: a cell or notebook
        hidden since the check answers as unknown, nothing of it quoted."""
        if error.code != ErrorCode.STALE_CELL:
            return error
        self._step.end("refused")
        view = self.view()
        if view.notebook == "none":
            return notebook_not_found(self.path)
        hidden = [cell_id for cell_id in cell_ids if cell_id in view.hidden]
        return cell_not_found(hidden[0]) if hidden else error

    def set_cell_type(self, cell_id: str, cell_type: CellType) -> RawCell:
        """An author-uneditable cell is CELL_LOCKED, as for its source (its type is part of its content)."""
        return self._write(
            [cell_id],
            lambda view, _: self._wrote(self._inner.set_cell_type(cell_id, cell_type), view),
            sources=[cell_id],
        )

    def _wrote(self, cell: RawCell, view: AccessView) -> RawCell:
        """After a write that moved no cell: the step ends, ``cell`` in visible indices."""
        self._step.end("write")
        return self._visible(cell, view)

    def _placed(self, cell: RawCell, view: AccessView) -> RawCell:
        """After an insert or move: the step ends, ``cell``'s visible index of the notebook now."""
        self._step.end("write")
        return self._visible(cell, self.view()) if view.hidden_indices else cell

    def _real_insert_index(self, index: int, view: AccessView) -> int:
        """Real index for visible ``index``: right after the visible cell before it (0: before the first visible)."""
        if view.visible_count == 0:
            return 0 if not view.hidden_indices else self._inner.cell_count()  # the end as it is now
        if index <= 0:
            return view.to_real(0)
        return view.to_real(min(index, view.visible_count) - 1) + 1

    def insert_cell(self, index: int, cell_type: CellType, source: str) -> RawCell:
        def write(view: AccessView, _: dict[str, str]) -> RawCell:
            return self._placed(self._inner.insert_cell(self._real_insert_index(index, view), cell_type, source), view)

        return self._write([], write)

    def insert_cell_near(
        self, reference_cell_id: str | None, position: str, cell_type: CellType, source: str
    ) -> RawCell:
        """Insert right above or below a visible cell (None: start or end), so a hidden neighbour keeps its place."""

        def write(view: AccessView, _: dict[str, str]) -> RawCell:
            if reference_cell_id is None:
                real = self._inner.cell_count() if position == "below" else 0
            else:
                real = self._find([reference_cell_id])[0].index + (1 if position == "below" else 0)
            return self._placed(self._inner.insert_cell(real, cell_type, source), view)

        return self._write([], write, references=[] if reference_cell_id is None else [reference_cell_id])

    def move_cell_near(self, cell_id: str, reference_cell_id: str, position: str) -> RawCell:
        """Move a cell right above or below another visible cell."""

        def write(_: AccessView, __: dict[str, str]) -> RawCell:
            self.find_cells([cell_id, reference_cell_id])
            view = self.view()
            if view.hidden_indices:
                visible = [c.id for c in self.read_cells(None, head_bytes=0, max_outputs=0)]
                others = [i for i in visible if i != cell_id]
                at = others.index(reference_cell_id) + (1 if position == "below" else 0)
                if others[:at] + [cell_id] + others[at:] == visible:
                    return self.find_cell(cell_id)  # the agent's order is already so: nothing to do
            real = self._inner.find_cell(cell_id).index
            target = self._inner.find_cell(reference_cell_id).index + (1 if position == "below" else 0)
            if real < target:
                target -= 1  # the cell leaves its old place first
            moved = self._inner.move_cell(cell_id, target) if target != real else self._inner.find_cell(cell_id)
            return self._placed(moved, view)

        return self._write([cell_id], write)

    def delete_cell(self, cell_id: str, expected: str | None = None) -> RawCell:
        """``expected`` as for :meth:`set_source`."""

        def write(view: AccessView, read: dict[str, str]) -> RawCell:
            deleted = self._inner.delete_cell(cell_id, expected if expected is not None else read.get(cell_id))
            return self._placed(deleted, view)

        return self._write([cell_id], write, deletes=[cell_id])

    def move_cell(self, cell_id: str, to_index: int) -> RawCell:
        def write(view: AccessView, _: dict[str, str]) -> RawCell:
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

        return self._write([cell_id], write)

    def clear_outputs(self, cell_id: str) -> RawCell:
        return self._write([cell_id], lambda view, _: self._wrote(self._inner.clear_outputs(cell_id), view))

    def set_focus(self, cell_id: str, cursor: dict | None, selection: dict | None) -> None:
        self._check_ids([cell_id], self.view())
        self._inner.set_focus(cell_id, cursor, selection)

    def highlight_output(self, cell_id: str, output_index: int) -> None:
        self._check_ids([cell_id], self.view())
        self._inner.highlight_output(cell_id, output_index)

    # the bridge's metadata: review threads pass, access never changes
    def _thread_visible(self, thread: Any, view: AccessView) -> bool:
        return thread_visible(thread, view.hidden, self._step.ever_hidden, self._exists)

    def _exists(self, cell_id: str) -> bool:
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
            merged["threads"] = merge_threads(stored, given_threads, lambda t: self._thread_visible(t, view))
        merged.pop("access", None)
        if "access" in current:
            merged["access"] = current["access"]
        self._inner.set_bridge_metadata(merged)
        self._step.end("write")

    def cell_bridge_metadata(self) -> list[tuple[int, str, Any]]:
        view = self.view()
        return [
            (view.to_visible(i), cid, block)
            for i, cid, block in self._inner.cell_bridge_metadata()
            if cid not in view.hidden
        ]

    def set_cell_bridge_metadata(self, cell_id: str, value: dict[str, Any] | None) -> None:
        raise ToolError(ErrorCode.NOTEBOOK_ACCESS_DENIED, "Only the person changes a cell's access.", path=self.path)

    async def save(self) -> SaveOutcome:
        return await self._awaited(self._inner.save())

    async def count_tabs(self) -> TabsState:
        return await self._awaited(self._inner.count_tabs())

    async def wait_for_kernel(self, timeout: float) -> KernelInfo:
        return await self._awaited(self._inner.wait_for_kernel(timeout))

    async def _scrub_history(self, view: AccessView) -> None:
        """Before the agent's code runs: blank hidden cells' sources and outputs in the kernel's history (``In``,
        ``_ih``, ``Out``...), when the host has one. What they defined stays reachable (docs/TOOLS.md)."""
        scrub = getattr(self._inner, "scrub_kernel_history", None)
        if not view.hidden or not callable(scrub):
            return
        hidden = self._inner.find_cells(sorted(view.hidden))
        await scrub([c.execution_count for c in hidden if c.execution_count is not None], [c.source for c in hidden])

    async def run_consent(self) -> str | None:
        """Why a kernel run here is shown to the person first (:mod:`webmcp_bridge.access.run_consent`), or None.
        Ends the step. A cell seen hidden and since deleted still counts until the page reloads: the kernel may
        hold what it ran, which no scrub finds by a cell that is gone."""
        view = self.view()

        async def reason() -> str | None:
            gone = [i for i in self._step.ever_hidden if i not in view.hidden and not self._exists(i)]
            return await self._guard.run_consent_reason(self.path, len(view.hidden) + len(gone))

        return await self._awaited(reason())

    async def _consent(self, code: str, cell_id: str | None, kind: str) -> bool:
        """The run rule: when it holds and the person has not accepted exactly ``code``, show it (a proposal, in
        Direct mode too) and wait. True when it held (the caller checks right before the run that the code is still
        the accepted one). Raises ProposalDenied, ToolError(TOO_LARGE / PROPOSAL_ALREADY_PENDING)."""
        reason = await self.run_consent()
        if reason is None:
            return False
        if run_accepted(code):
            return True

        def still_valid() -> str | None:
            if self._guard.raw.find_open(self.path) is None:
                return "the notebook was closed"
            if cell_id is not None:
                try:
                    self._inner.find_cells([cell_id])
                except ToolError:
                    return "the cell was deleted"
            return None

        await self._awaited(ask_to_run(self._guard.proposals, self.path, cell_id, kind, code, reason, still_valid))
        return True

    async def run_cell(self, cell_id: str, timeout: float) -> RunResult:
        return await self._kernel_run(
            "cell",
            cell_id,
            lambda: self._inner.find_cells([cell_id])[0].source,
            lambda: self._inner.run_cell(cell_id, timeout),
        )

    async def _kernel_run(
        self,
        kind: Literal["cell", "code"],
        cell_id: str | None,
        code: Callable[[], str],
        start: Callable[[], Awaitable[Any]],
    ) -> Any:
        """A tool's kernel run (of cell ``cell_id``, or ``code()`` without one): a write's checks, the run rule and
        the scrub, then ``start()``, whose result is returned; the run observers are told however it ends."""
        ids = [cell_id] if cell_id is not None else []
        view = self._writable(ids)
        self._guard.gate()
        began, status, count = time.monotonic(), "failed", None
        try:
            asked = await self._consent(code(), cell_id, "run" if kind == "cell" else "run_code")
            await self._scrub_history(view)
            # no await from here to the run: a cell runs exactly what the person accepted
            self._writable(ids)
            if asked and cell_id is not None and not run_accepted(code()):
                raise changed_since_accept()
            result = await start()
            status, count = result.status, result.execution_count
            return result
        except asyncio.CancelledError:
            status = "aborted"
            raise
        finally:
            self._step.end("await")
            self._guard.runs.tell(self.path, kind, cell_id, status, time.monotonic() - began, count)

    async def kernel_action(self, action: str, timeout: float) -> KernelInfo | None:
        self._writable([])
        if action == "restart":
            self._guard.gate()
        return await self._awaited(self._inner.kernel_action(action, timeout))

    def apply_edits(self, ops: Sequence[Any], expected: dict[str, str] | None = None) -> list[str]:
        """Checked for the whole batch first: cells an op changes writable, reference cells visible (read-only is
        fine). The sources read of cells replaced or deleted (``expected`` added) are the host's precondition."""
        changed = [op.cell_id for op in ops if getattr(op, "cell_id", None) is not None]

        def write(view: AccessView, read: dict[str, str]) -> list[str]:
            try:
                return self._inner.apply_edits(ops, {**read, **(expected or {})})
            finally:
                self._step.end("batch", changed)  # what a later write of these cells checks is read again

        return self._write(
            changed,
            write,
            sources=[op.cell_id for op in ops if isinstance(op, SetSourceOp)],
            deletes=[op.cell_id for op in ops if isinstance(op, DeleteOp)],
            references=[op.reference_cell_id for op in ops if getattr(op, "reference_cell_id", None) is not None],
        )

    async def run_code(
        self,
        code: str,
        timeout: float,
        *,
        head_bytes: int,
        max_outputs: int,
        silent: bool = False,
        as_agent: bool = True,
    ) -> Any:
        """A tool's code is the agent's whatever ``as_agent`` says (only the guard's own programs are not)."""
        return await self._kernel_run(
            "code",
            None,
            lambda: code,
            lambda: self._inner.run_code(
                code, timeout, head_bytes=head_bytes, max_outputs=max_outputs, silent=silent, as_agent=True
            ),
        )

    async def inspect_kernel(self, program: str, timeout: float, *, head_bytes: int) -> Any:
        """Run the bridge's own variables inspection silently: a read (allowed read-only, never held, no observer
        told), under the run rule and the scrub as every kernel run. Returns the host's CodeRun. Raises
        ProposalDenied, ToolError(KERNEL_UNAVAILABLE)."""
        view = self.view()

        async def inspect() -> Any:
            asked = await self._consent(program, None, "run_code")
            await self._scrub_history(view)
            self.view()
            if asked and not run_accepted(program):
                raise changed_since_accept()
            return await self._inner.run_code(
                program, timeout, head_bytes=head_bytes, max_outputs=5, silent=True, as_agent=False
            )

        return await self._awaited(inspect())

    def __getattr__(self, name: str) -> Any:
        # a host method the guard does not know is refused, never passed through unchecked
        raise AttributeError(
            f"{type(self).__name__} does not expose {name!r}; add it to webmcp_bridge.access.notebook_guard with its "
            "access rule"
        )
