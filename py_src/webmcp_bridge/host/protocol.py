"""The protocol the tools need from a live notebook application: JupyterLab's (:mod:`webmcp_bridge.lab.notebook`)
and the tests' in-memory host. Shapes are small frozen dataclasses of plain values; :class:`RawItem` text comes
ANSI-stripped and cut to the requested head, so a 20 MB stream never crosses into Python to be described.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from webmcp_bridge.core.images import EncodedImage as EncodedImage
from webmcp_bridge.core.images import ImageRequest as ImageRequest
from webmcp_bridge.core.images import OutputCapture as OutputCapture
from webmcp_bridge.core.raw import CellType as CellType
from webmcp_bridge.core.raw import RawCell as RawCell
from webmcp_bridge.core.raw import RawItem as RawItem
from webmcp_bridge.core.raw import RawOutput as RawOutput
from webmcp_bridge.core.raw import RunState as RunState

EntryType = Literal["notebook", "file", "directory"]


@dataclass(frozen=True)
class TextPage:
    """A page of one output's text: ``text`` spans bytes [offset, offset+len) of ``total_bytes``; ``next_offset`` is
    None at the end."""

    text: str
    offset: int
    next_offset: int | None
    total_bytes: int


@dataclass(frozen=True)
class Entry:
    """A workspace entry (never its contents). ``last_modified``: the contents service's modification time (opaque
    text: equal means unchanged; None: not said). ``open``: a notebook open in the page when listed."""

    path: str
    name: str
    type: EntryType
    last_modified: str | None = None
    open: bool = False


@dataclass(frozen=True)
class Focus:
    """The person's focus: active cell id, cursor and selection as {line, column} dicts (0-based, column in UTF-16
    code units as CodeMirror counts)."""

    cell_id: str | None = None
    cursor: dict | None = None
    selection: dict | None = None


@dataclass(frozen=True)
class KernelInfo:
    """``status``: JupyterLab's (idle, busy, starting, unknown, dead...) or "none" when no kernel is attached."""

    name: str | None
    status: str
    display_name: str | None = None


@dataclass(frozen=True)
class RunResult:
    """Outcome of running one cell: status ok/error/skipped/timeout; ``reason`` explains an unusual end."""

    cell_id: str
    status: str
    execution_count: int | None = None
    reason: str | None = None


@dataclass(frozen=True)
class CodeRun:
    """Outcome of :meth:`LiveNotebook.run_code`. ``status``: "ok", "error" (the code raised, or the kernel refused or
    aborted) or "timeout" (no reply in time; it may still run). ``outputs``: the first outputs (consecutive streams of
    one name merged, as an output area does), heads as asked; ``output_count``: all that arrived;
    ``execution_count``: from the reply (None: none); ``reason``: why an unusual end happened."""

    status: str
    outputs: tuple[RawOutput, ...] = ()
    output_count: int = 0
    execution_count: int | None = None
    reason: str | None = None


Position = Literal["above", "below"]


@dataclass(frozen=True)
class InsertOp:
    """Insert next to ``reference_cell_id`` (``position``), or with none at the start ("above") or end ("below")."""

    cell_type: CellType
    source: str
    reference_cell_id: str | None = None
    position: Position = "below"


@dataclass(frozen=True)
class SetSourceOp:
    """Replace the whole source of cell ``cell_id``."""

    cell_id: str
    source: str


@dataclass(frozen=True)
class DeleteOp:
    """Delete cell ``cell_id``."""

    cell_id: str


@dataclass(frozen=True)
class MoveOp:
    """Move cell ``cell_id`` next to ``reference_cell_id`` (``position`` above/below it)."""

    cell_id: str
    reference_cell_id: str
    position: Position = "below"


EditOp = InsertOp | SetSourceOp | DeleteOp | MoveOp


Actor = Literal["person", "agent"]
#: "run": execution count set (a run's reply); "clear": outputs emptied; "output": an output arrived or changed;
#: "metadata": the cell's bridge metadata; "revert": the person reverted an agent's edit (changes/undo.py);
#: "type": cell type changed
ChangeKind = Literal["insert", "edit", "delete", "move", "run", "clear", "output", "metadata", "revert", "type"]


@dataclass(frozen=True)
class CellChange:
    """One change to a cell. ``actor``: "agent" for this protocol's writes and for the outputs and count of a run
    :meth:`LiveNotebook.run_cell` started, until it ends; else "person". ``time``: epoch seconds. ``access``: to drop
    changes of a cell hidden then. ``repeats``: equal changes that followed, each within the coalescing window, the
    last at ``last_time`` (``revision`` then the last one's)."""

    actor: Actor
    kind: ChangeKind
    cell_id: str
    time: float
    access: Any = None  # the cell's raw ``webmcp_bridge.access`` metadata value when it changed (None: unset)
    revision: int | None = None  # the notebook's revision (LiveNotebook.revision) around the change
    dropped_before: int = 0  # changes the host's bounded buffer dropped just before this one (never taken)
    repeats: int = 0
    last_time: float | None = None


@dataclass(frozen=True)
class AccessState:
    """What the access guard reads of a notebook in one host read (:meth:`LiveNotebook.access_state`).

    ``notebook_access``: the raw ``access`` of the notebook's ``webmcp_bridge`` block (None: absent or not an
    object). ``cell_access``: ``(index, id, raw access)`` of each cell whose block has a non-null ``access``, in
    index order (the others are "write"). ``cell_count``: all cells, hidden included. ``changes``: as
    :meth:`LiveNotebook.take_changes`. ``locks``: ``(id, editable, deletable)`` of each cell whose nbformat
    ``editable`` or ``deletable`` is false (the author's locks), in index order."""

    revision: int
    notebook_access: Any
    cell_access: tuple[tuple[int, str, Any], ...]
    cell_count: int
    changes: tuple[CellChange, ...] = ()
    locks: tuple[tuple[str, bool, bool], ...] = ()


SaveKind = Literal["saved", "overwritten", "reverted", "cancelled", "dialog-open"]


@dataclass(frozen=True)
class SaveOutcome:
    """How a save ended. ``outcome``: "saved"; "overwritten" (after Overwrite in the "File Changed" dialog: the file
    had changed since this page loaded or saved it); "reverted" / "cancelled" (Revert / Cancel there: nothing
    written); "dialog-open" (that dialog already open: nothing written). ``revision``: the revision written (None:
    nothing). ``last_modified``: the file's time after the save (None: unknown). ``unlocked``: the save waited
    :data:`~webmcp_bridge.core.limits.SAVE_LOCK_WAIT_SECONDS` for the site's save lock and went ahead without it
    (the file's version checked, not atomically with another tab's save)."""

    outcome: SaveKind
    revision: int | None = None
    last_modified: str | None = None
    unlocked: bool = False

    @property
    def saved(self) -> bool:
        """Whether the notebook reached the file."""
        return self.outcome in ("saved", "overwritten")


@dataclass(frozen=True)
class TabsState:
    """``other_tabs``: how many other tabs of the site have the notebook open (None: the browser cannot tell);
    ``saved_elsewhere``: another tab saved it since this page loaded or saved it (the next save meets "File
    Changed")."""

    other_tabs: int | None = 0
    saved_elsewhere: bool = False


@dataclass(frozen=True)
class SavedNotebook:
    """A notebook as its saved file holds it (:meth:`NotebookHost.read_saved_notebook`). ``bridge_metadata`` and
    ``cell_metadata`` (one a cell): ``metadata.webmcp_bridge`` as found (untrusted JSON; None: absent). ``cells``:
    in file order (``id`` "" when the file has none, as nbformat 4.4), described as :meth:`LiveNotebook.find_cells`."""

    bridge_metadata: Any
    cells: tuple[RawCell, ...]
    cell_metadata: tuple[Any, ...]


@dataclass
class OpenDocument:
    """A document open in the application."""

    path: str
    kind: str
    dirty: bool = False


class NotebookCells(Protocol):
    """An open notebook's cells, outputs, bridge metadata and changes (JupyterLab: one ``notebook.js`` call each)."""

    @property
    def path(self) -> str:
        """The notebook's workspace path."""

    def dirty(self) -> bool:
        """True when the live model has changes not yet saved."""

    def revision(self) -> int:
        """A counter of changes (sources, outputs, metadata, cells); it only grows, across reopening too (one clock
        for all notebooks), so a revision never names two states of one path."""

    def cell_count(self) -> int:
        """Number of cells."""

    def language(self) -> str:
        """The kernel language, for fencing code in exports ("python" if unknown)."""

    def find_cells(self, cell_ids: Sequence[str], *, head_bytes: int = 0, max_outputs: int = 0) -> list[RawCell]:
        """The cells with these ids, in order (one read); ``max_outputs`` outputs a cell, ``head_bytes`` a text."""

    def find_cell(self, cell_id: str) -> RawCell:
        """One cell, without outputs."""

    def read_cells(self, indices: Sequence[int] | None, *, head_bytes: int, max_outputs: int) -> list[RawCell]:
        """Cells by index (all when None; indices out of range are skipped), as :meth:`find_cells`."""

    def run_states(self, last_index: int) -> list[RunState]:
        """Run states of the code cells at ``0..last_index`` (clipped), in index order."""

    def read_output_text(self, cell_id: str, output_index: int, mime: str, offset: int, max_bytes: int) -> TextPage:
        """A page of one representation's ANSI-stripped text, by UTF-8 byte offset (never splitting a code
        point). Raises ToolError(OUTPUT_NOT_FOUND) for a missing output or MIME type."""

    def read_output_binary(self, cell_id: str, output_index: int, mime: str, max_bytes: int) -> tuple[str | None, int]:
        """``(base64 data, decoded size in bytes)``; data is None when the size is over ``max_bytes`` (then
        nothing is transferred). Raises ToolError(OUTPUT_NOT_FOUND) like :meth:`read_output_text`."""

    def read_output_binary_head(self, cell_id: str, output_index: int, mime: str, max_bytes: int) -> tuple[bytes, int]:
        """``(first max_bytes decoded bytes, decoded size in bytes)`` (an image's header); empty head when not base64.
        Raises ToolError(OUTPUT_NOT_FOUND)."""

    async def encode_output_image(
        self, cell_id: str, output_index: int, mime: str, request: ImageRequest
    ) -> EncodedImage | None:
        """The output's ``mime`` image resampled to ``request.width`` x ``request.height``, encoded as
        ``request.mime`` (:mod:`webmcp_bridge.core.images`); None when this host cannot copy that format. Raises
        ToolError(OUTPUT_NOT_FOUND), also for data that is not a ``mime`` image (notebooks are untrusted)."""

    def set_source(self, cell_id: str, source: str, expected: str | None = None) -> RawCell:
        """Replace the cell's source; returns the cell after. ``expected``: the source the caller's check read (None:
        no check); when the cell holds anything else, nothing is written: ToolError(STALE_CELL) quoting it as it is
        (:func:`~webmcp_bridge.core.snapshot.stale_cell_error`)."""

    def insert_cell(self, index: int, cell_type: CellType, source: str) -> RawCell:
        """Insert a new cell at ``index`` (0..cell_count); returns it (with its new id)."""

    def delete_cell(self, cell_id: str, expected: str | None = None) -> RawCell:
        """Delete the cell; returns it as it was. ``expected`` as for :meth:`set_source` (STALE_CELL)."""

    def move_cell(self, cell_id: str, to_index: int) -> RawCell:
        """Move the cell so that it ends at ``to_index``; returns it after the move."""

    def clear_outputs(self, cell_id: str) -> RawCell:
        """Clear a code cell's outputs and execution count (other cell types are left as they are)."""

    def set_cell_type(self, cell_id: str, cell_type: CellType) -> RawCell:
        """Change the cell's type in one step (one undo step), keeping id, source and metadata. As nbformat 4 has it,
        only code cells keep outputs and an execution count (a new code cell has none), only markdown and raw cells
        attachments. One change of kind "type"; returns the cell after."""

    def apply_edits(self, ops: Sequence[EditOp], expected: dict[str, str] | None = None) -> list[str]:
        """Apply ``ops`` in order, all or nothing, in one synchronous step (one undo step). Ops name cells that exist
        before the batch, by id; positions resolve against the order earlier ops left. Returns per op the id acted
        on (an insert's new id). Before anything changes, raises CELL_NOT_FOUND for an unknown id and STALE_CELL when
        a cell of ``expected`` (id -> source the caller read, of the cells replaced or deleted) holds anything else.
        """

    def bridge_metadata(self) -> Any:
        """The notebook's ``metadata.webmcp_bridge`` value (any JSON value), or None when absent."""

    def set_bridge_metadata(self, value: dict[str, Any]) -> None:
        """Replace the notebook's ``metadata.webmcp_bridge`` with ``value`` (synchronous, one change)."""

    def cell_bridge_metadata(self) -> list[tuple[int, str, Any]]:
        """``(index, id, value)`` of each cell with a ``webmcp_bridge`` metadata key, in index order."""

    def set_cell_bridge_metadata(self, cell_id: str, value: dict[str, Any] | None) -> None:
        """Replace (None: remove) the cell's ``metadata.webmcp_bridge``: the person's side only, no tool reaches it.
        Raises ToolError(CELL_NOT_FOUND)."""

    def take_changes(self) -> list[CellChange]:
        """The changes since the previous call, oldest first; at most :data:`~webmcp_bridge.core.limits.CHANGE_LOG_SIZE`
        buffered, the oldest kept counting those dropped in ``dropped_before``."""

    def access_state(self) -> AccessState:
        """All the access guard needs for one call step, in one read."""


class NotebookKernel(Protocol):
    """An open notebook's kernel (JupyterLab: the panel's session context)."""

    def kernel(self) -> KernelInfo:
        """The kernel attached to the notebook, now."""

    async def wait_for_kernel(self, timeout: float) -> KernelInfo:
        """Wait up to ``timeout`` seconds for the kernel to be idle or busy; returns its state then."""

    async def run_cell(self, cell_id: str, timeout: float) -> RunResult:
        """Run a code cell, waiting up to ``timeout`` seconds (then status "timeout"). Cancelled, it interrupts the
        kernel before re-raising CancelledError."""

    async def kernel_action(self, action: str, timeout: float) -> KernelInfo | None:
        """Interrupt or restart the kernel, then wait up to ``timeout`` seconds for idle. A restart goes through
        JupyterLab's "Restart Kernel?" dialog (unless turned off): None when declined."""

    def agent_kernel(self) -> float | None:
        """Since when (seconds since the epoch) the kernel ran the agent's code (a cell run, or :meth:`run_code` with
        ``as_agent``) without restarting since; None when not (docs/SECURITY.md: its outputs render untrusted)."""

    async def run_code(
        self,
        code: str,
        timeout: float,
        *,
        head_bytes: int,
        max_outputs: int,
        silent: bool = False,
        as_agent: bool = True,
    ) -> CodeRun:
        """Run ``code`` in the kernel without a cell or history entry, waiting up to ``timeout`` seconds; outputs as
        :meth:`find_cells` describes them. ``silent``: the request's flag (no display hook, not counted).
        ``as_agent``: the kernel becomes the agent's first (:meth:`agent_kernel`); False only for the bridge's own
        fixed programs. Raises ToolError(KERNEL_UNAVAILABLE) when there is no kernel."""


class NotebookView(Protocol):
    """What the person sees of an open notebook: focus, a highlighted output, tabs, saving."""

    def set_focus(self, cell_id: str, cursor: dict | None, selection: dict | None) -> None:
        """Make the cell active and visible; place the cursor or select a range (as :class:`Focus`, checked by the
        caller)."""

    def focus(self) -> Focus:
        """The person's focus in this notebook."""

    def highlight_output(self, cell_id: str, output_index: int) -> None:
        """Reveal the cell and mark that output for the person. Raises ToolError(CELL_NOT_FOUND / OUTPUT_NOT_FOUND)."""

    async def capture_output(self, cell_id: str, output_index: int, max_side: int) -> OutputCapture:
        """A picture of the output as the page renders it for the person (never rendered again nor trusted for it),
        at most ``max_side`` pixels a side, held until :meth:`release_capture`. Raises ToolError(CELL_NOT_FOUND /
        OUTPUT_NOT_FOUND)."""

    async def encode_capture(self, key: str, request: ImageRequest) -> EncodedImage:
        """A held capture resampled to the request's size, encoded as ``request.mime`` (OUTPUT_NOT_FOUND: not held)."""

    def release_capture(self, key: str) -> None:
        """Drop a held capture (an unknown key is ignored)."""

    def tabs(self) -> TabsState:
        """The notebook as other tabs of the site see it, as last counted."""

    async def count_tabs(self) -> TabsState:
        """:meth:`tabs`, counted now."""

    async def save(self) -> SaveOutcome:
        """Save (nbformat 4.5) as the person's Save does: a file changed since this page loaded or saved it is not
        written until the "File Changed" dialog is answered; check and write are one step for every tab of the
        site. Other failures raise ToolError."""


class LiveNotebook(NotebookCells, NotebookKernel, NotebookView, Protocol):
    """A notebook open in the application, read live (unsaved edits included). Cells are addressed by nbformat id;
    an unknown id raises ToolError(CELL_NOT_FOUND) (:func:`webmcp_bridge.core.errors.cell_not_found`). Writes are
    synchronous, so a tool checks and writes with no await between. Sizes are UTF-8 bytes, timeouts seconds.
    """


class WorkspaceContents(Protocol):
    """The workspace's files. Paths are already normalized (:func:`webmcp_bridge.core.paths.normalize_path`)."""

    async def list_dir(self, path: str) -> list[Entry] | None:
        """The entries of folder ``path`` ("" = root), each notebook's ``open`` said; None: no folder there."""

    async def stat(self, path: str) -> Entry | None:
        """The entry at ``path``, or None."""

    async def read_text(self, path: str, max_bytes: int) -> str | None:
        """The file's text: live when open in an editor, else saved; None when nothing is there. Raises ToolError:
        INVALID_PATH for a folder (:func:`webmcp_bridge.core.errors.is_a_folder`) or non-UTF-8 file
        (:func:`webmcp_bridge.core.errors.not_a_text_file`); TOO_LARGE over ``max_bytes`` (before loading when the
        size is known)."""

    async def write_text(self, path: str, text: str) -> None:
        """Write the file whole (its folder exists); one open in an editor is written through its model and saved."""

    async def create_notebook(self, path: str, kernel_name: str | None) -> None:
        """Write a new empty nbformat 4.5 notebook at ``path`` (the caller checked nothing is there)."""

    async def notebook_bridge_metadata(self, path: str, listed: Entry | None = None) -> Any:
        """``metadata.webmcp_bridge`` of the notebook: live when open, else saved (may be cached by modification
        time); None when absent or unreadable. ``listed``: this call's listing entry of it (closed then: not asked
        again)."""

    async def saved_access_blocks(self, path: str) -> tuple[Any, list[Any]] | None:
        """The saved (never live) notebook's ``metadata.webmcp_bridge`` and each cell's that has one, as found, for
        :mod:`webmcp_bridge.access.run_consent`. None when it is no notebook."""

    async def read_saved_notebook(
        self, path: str, max_bytes: int, *, head_bytes: int, max_outputs: int
    ) -> SavedNotebook | None:
        """The saved notebook, read without opening it. None when it is no notebook or is open in the page (read it
        live: its levels there are the latest). Heads as :meth:`LiveNotebook.find_cells`. Raises
        ToolError(TOO_LARGE) over ``max_bytes``."""


class OpenNotebooks(Protocol):
    """The notebooks open in the application. Paths are already normalized."""

    def open_documents(self) -> list[OpenDocument]:
        """The notebooks open in the application."""

    def current_notebook(self) -> LiveNotebook | None:
        """The notebook the person last focused, or None."""

    def find_open(self, path: str) -> LiveNotebook | None:
        """The open notebook at ``path``, or None."""

    async def open_notebook(self, path: str, activate: bool) -> LiveNotebook:
        """Open (or find) it; ``activate`` brings it to the front. Raises ToolError(NOTEBOOK_NOT_FOUND)."""


class NotebookHost(WorkspaceContents, OpenNotebooks, Protocol):
    """The application: workspace contents and the open notebooks."""


@dataclass(frozen=True)
class RawButton:
    """A dialog button: ``accept`` OK-like (else Cancel-like), ``warn`` (Restart, Delete), ``disabled``."""

    label: str
    accept: bool
    warn: bool = False
    disabled: bool = False


@dataclass(frozen=True)
class RawInput:
    """A dialog body's first input (``type``: "text", "checkbox", "select"...); ``value`` None for a password (never
    read) and for a checkbox (``checked``)."""

    type: str
    value: str | None = None
    checked: bool | None = None


@dataclass(frozen=True)
class RawDialog:
    """An open dialog. ``id``: "d-<n>", never reused in a page; ``shown`` False when queued behind another;
    ``body_cut``: the source cut the body; ``by_person``: opened right after the person's key or pointer press."""

    id: str
    title: str
    body: str
    buttons: tuple[RawButton, ...]
    shown: bool
    body_cut: bool = False
    input: RawInput | None = None
    checkbox: tuple[str, bool] | None = None
    by_person: bool = False


class DialogSource(Protocol):
    """The application's dialogs, for :class:`webmcp_bridge.calls.dialogs.DialogTracker`."""

    def snapshot(self, max_chars: int) -> list[RawDialog]:
        """The open dialogs, in the order they opened; texts cut to at most ``max_chars`` characters."""

    def click(self, dialog_id: str, index: int) -> str:
        """Click button ``index`` as the person would: "clicked", or "gone", "queued", "disabled", "no-button"."""

    def watch(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` soon whenever a dialog opens, is shown or closes."""

    def close(self) -> None:
        """Stop watching."""
