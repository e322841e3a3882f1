"""The small protocol the semantic layer needs from a live notebook application.

Two implementations exist: :mod:`webmcp_bridge.lab.notebook` (the live JupyterLab model, reached through Pyodide's
FFI) and the test harness's in-memory host, ``tests/host_memory.py`` (plain Python, for tests under CPython and as the
reference behaviour). Tools only ever talk to these protocols, so every rule (hashes, bounds, errors) is computed in
pure Python and tested without a browser.

Shapes are small frozen dataclasses holding plain values (the cell and output values :class:`RawCell`,
:class:`RawOutput`, :class:`RawItem` are defined in :mod:`webmcp_bridge.core.raw`, below the protocol, since the pure
semantics in ``core/`` works on them). Text in :class:`RawItem` is already ANSI-stripped and cut to the requested head
size by the host, so a 20 MB stream never crosses into Python to be described.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from webmcp_bridge.core.images import EncodedImage as EncodedImage
from webmcp_bridge.core.images import ImageRequest as ImageRequest
from webmcp_bridge.core.images import OutputCapture as OutputCapture

# the plain values of cells and outputs live in core (the pure semantics over them needs them); re-exported here
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
    """A workspace entry (never its contents). ``last_modified``: the file's modification time as the contents
    service gives it (opaque text: equal means unchanged), None when the host does not say. ``open``: a notebook
    open in the page when it was listed (a listing says it, so that a caller does not ask again per notebook)."""

    path: str
    name: str
    type: EntryType
    last_modified: str | None = None
    open: bool = False


@dataclass(frozen=True)
class Focus:
    """The person's focus in the current notebook: active cell id, cursor and selection as
    {line, column} dicts (0-based, column in UTF-16 code units as CodeMirror counts)."""

    cell_id: str | None = None
    cursor: dict | None = None
    selection: dict | None = None


@dataclass(frozen=True)
class KernelInfo:
    """The notebook's kernel: ``status`` is JupyterLab's (idle, busy, starting, unknown, dead...) or
    "none" when no kernel is attached."""

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
    """Outcome of :meth:`LiveNotebook.run_code` (code run in the kernel without a cell).

    Attributes:
        status: "ok", "error" (the code raised, or the kernel refused or aborted the request) or "timeout"
            (no reply within the timeout; the code may still be running in the kernel).
        outputs: the first outputs that arrived (consecutive stream messages of one name merged into one
            output, as a cell's output area does), text ANSI-stripped with heads as asked.
        output_count: every output that arrived, including those not in ``outputs``.
        execution_count: the kernel's execution count from its reply, or None (no reply, or none given).
        reason: why an unusual end happened ("timeout", a failed request...), or None."""

    status: str
    outputs: tuple[RawOutput, ...] = ()
    output_count: int = 0
    execution_count: int | None = None
    reason: str | None = None


Position = Literal["above", "below"]


@dataclass(frozen=True)
class InsertOp:
    """Insert a new cell next to ``reference_cell_id`` (``position`` above/below it), or, with no reference,
    at the start ("above") or the end ("below") of the notebook."""

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
#: what changed: a cell inserted, its source edited, deleted, moved; "run": its execution count was set (a run's
#: reply); "clear": its outputs were cleared (the list became empty); "output": an output arrived or changed
#: (outputs not empty); "metadata": the bridge's metadata of the cell (access levels); "revert": the person reverted
#: an agent's edit of its source through the Agent panel (changes/undo.py; always the person's); "type": its cell
#: type changed (code, markdown, raw; the source and the metadata kept)
ChangeKind = Literal["insert", "edit", "delete", "move", "run", "clear", "output", "metadata", "revert", "type"]


@dataclass(frozen=True)
class CellChange:
    """One change to a cell as the host saw it: ``actor`` is "agent" for changes made through this
    protocol's write methods and for the outputs and execution count of a run started by
    :meth:`LiveNotebook.run_cell` until that execution ends (also after the call stopped waiting for it),
    "person" for everything else (typing, the notebook toolbar, the person's runs). ``time`` is seconds since the
    epoch. ``access`` lets a reader drop changes of a cell that was hidden from the agent when it changed (even if
    it is gone now).

    A host may report a run of equal changes as one: ``repeats`` more changes of the same actor, kind, cell and
    access followed this one, each at most the change log's coalescing window (seconds) after the one before, the
    last at ``last_time`` (seconds since the epoch); ``revision`` is then the last one's. The change log counts them
    as if each had been reported (:meth:`webmcp_bridge.changes.log.ChangeLog.ingest`)."""

    actor: Actor
    kind: ChangeKind
    cell_id: str
    time: float
    access: Any = None  # the cell's raw ``webmcp_bridge.access`` metadata value when it changed (None: unset)
    revision: int | None = None  # the notebook's revision (LiveNotebook.revision) around the change
    dropped_before: int = 0  # changes the host's bounded buffer dropped just before this one (never taken)
    repeats: int = 0  # equal changes that followed this one, reported with it (see above)
    last_time: float | None = None  # when the last of the repeats happened (None: no repeats)


@dataclass(frozen=True)
class AccessState:
    """What the access guard reads of a notebook for one call step, in one read of the host
    (:meth:`LiveNotebook.access_state`).

    Attributes:
        revision: the notebook's revision now (as :meth:`LiveNotebook.revision`).
        notebook_access: the raw ``access`` value of the notebook's ``webmcp_bridge`` metadata block; None when
            the block is absent, not a JSON object, or has no ``access``.
        cell_access: ``(index, cell id, raw access value)`` for each cell whose ``webmcp_bridge`` block is a JSON
            object with a non-null ``access``, in index order (the others are "write").
        cell_count: how many cells the notebook has (hidden ones included), read with the rest.
        changes: the cell changes since the previous take, as :meth:`LiveNotebook.take_changes` (then forgotten).
        locks: ``(id, editable, deletable)`` for every cell whose metadata sets the standard nbformat ``editable``
            or ``deletable`` to false (the notebook author's locks, which JupyterLab honours for the person), in
            index order; other cells are not listed."""

    revision: int
    notebook_access: Any
    cell_access: tuple[tuple[int, str, Any], ...]
    cell_count: int
    changes: tuple[CellChange, ...] = ()
    locks: tuple[tuple[str, bool, bool], ...] = ()


SaveKind = Literal["saved", "overwritten", "reverted", "cancelled", "dialog-open"]


@dataclass(frozen=True)
class SaveOutcome:
    """How a save of a notebook ended.

    ``outcome``: "saved" (this page's notebook reached the file), "overwritten" (it reached the file after
    Overwrite was chosen in the application's "File Changed" dialog: the file had changed since this page
    loaded or last saved it), "reverted" (Revert in that dialog: nothing written, the page now shows the file),
    "cancelled" (Cancel in that dialog: nothing written), "dialog-open" (that dialog is already open for this
    notebook: nothing written). ``revision``: the notebook's revision when the save started, whose content
    was written (None when nothing was). ``last_modified``: the file's modification time after the save, as
    the contents service reports it (None when unknown). ``unlocked``: the save waited
    :data:`~webmcp_bridge.core.limits.SAVE_LOCK_WAIT_SECONDS` for the lock the site's tabs take around a save
    and went ahead without it (something else held it: the file's version was checked, not atomically with
    another tab's save)."""

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
    """The notebook as other tabs of the same site see it. ``other_tabs``: how many other tabs (pages of the
    same origin in this browser) have it open (None when the browser cannot tell); ``saved_elsewhere``: another
    tab saved its file since this page loaded or last saved it (this page's copy is then not the file's, and
    its next save meets "File Changed")."""

    other_tabs: int | None = 0
    saved_elsewhere: bool = False


@dataclass(frozen=True)
class SavedNotebook:
    """A notebook as its saved file holds it (:meth:`NotebookHost.read_saved_notebook`), for reads that must not
    open it (``jupyter_search``).

    Attributes:
        bridge_metadata: the notebook's ``metadata.webmcp_bridge`` value as found (untrusted JSON), None when absent.
        cells: every cell in file order (``index`` its position in the file; ``id`` "" for a cell without one, as
            nbformat 4.4 files have), outputs described as :meth:`LiveNotebook.find_cells` describes them.
        cell_metadata: per cell, in the same order, its ``metadata.webmcp_bridge`` value as found (None: absent)."""

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
    """The live model of an open notebook: its cells, their outputs, the bridge's metadata, the changes made to
    it and edits of it (in JupyterLab each read or write is one call of ``notebook.js``).
    """

    @property
    def path(self) -> str:
        """The notebook's workspace path."""
        ...

    def dirty(self) -> bool:
        """True when the live model has changes not yet saved."""
        ...

    def revision(self) -> int:
        """A counter of changes to the notebook (sources, outputs, metadata, cells); it only grows, also across
        closing and reopening the notebook (hosts count on one clock for all notebooks), so a revision never
        names two different states of one path."""
        ...

    def cell_count(self) -> int:
        """Number of cells."""
        ...

    def language(self) -> str:
        """The kernel language, for fencing code in exports ("python" if unknown)."""
        ...

    def find_cells(self, cell_ids: Sequence[str], *, head_bytes: int = 0, max_outputs: int = 0) -> list[RawCell]:
        """The cells with these ids, in the order given (one read). Output items carry at most
        ``head_bytes`` of text; at most ``max_outputs`` outputs are described per cell."""
        ...

    def find_cell(self, cell_id: str) -> RawCell:
        """One cell, without outputs."""
        ...

    def read_cells(self, indices: Sequence[int] | None, *, head_bytes: int, max_outputs: int) -> list[RawCell]:
        """Cells by index (all when None; indices out of range are skipped), as :meth:`find_cells`."""
        ...

    def run_states(self, last_index: int) -> list[RunState]:
        """The run states of the code cells at indices ``0..last_index`` (clipped to the notebook), in index order
        (one read): what :mod:`webmcp_bridge.core.staleness` judges a cell's outputs by."""
        ...

    def read_output_text(self, cell_id: str, output_index: int, mime: str, offset: int, max_bytes: int) -> TextPage:
        """A page of one representation's ANSI-stripped text, by UTF-8 byte offset (never splitting a code
        point). Raises ToolError(OUTPUT_NOT_FOUND) for a missing output or MIME type."""
        ...

    def read_output_binary(self, cell_id: str, output_index: int, mime: str, max_bytes: int) -> tuple[str | None, int]:
        """``(base64 data, decoded size in bytes)``; data is None when the size is over ``max_bytes`` (then
        nothing is transferred). Raises ToolError(OUTPUT_NOT_FOUND) like :meth:`read_output_text`."""
        ...

    def read_output_binary_head(self, cell_id: str, output_index: int, mime: str, max_bytes: int) -> tuple[bytes, int]:
        """``(the first max_bytes decoded bytes or fewer, decoded size in bytes)`` of a binary representation (an
        image's header, to read its size); the head is empty when the stored text is not base64. Raises
        ToolError(OUTPUT_NOT_FOUND) like :meth:`read_output_text`."""
        ...

    async def encode_output_image(
        self, cell_id: str, output_index: int, mime: str, request: ImageRequest
    ) -> EncodedImage | None:
        """A copy of the image stored as ``mime`` in that output, resampled to ``request.width`` x ``request.height``
        and encoded as ``request.mime`` (the caller decided both: :mod:`webmcp_bridge.core.images`). None when this
        host cannot make copies of that format (the caller then falls back to the original). Raises
        ToolError(OUTPUT_NOT_FOUND) like :meth:`read_output_text`, and when the data does not decode as an image of
        type ``mime`` (notebooks are untrusted). In the page the work is asynchronous (the browser decodes and
        encodes off the main thread), never one long task."""
        ...

    def set_source(self, cell_id: str, source: str, expected: str | None = None) -> RawCell:
        """Replace the cell's source; returns the cell after the write.

        ``expected``: the source the caller's check read (None: no check). When the cell holds anything else by
        now (the person typed between the check and the write), nothing is written: ToolError(STALE_CELL) quoting
        the cell as it is (:func:`~webmcp_bridge.core.snapshot.stale_cell_error`)."""
        ...

    def insert_cell(self, index: int, cell_type: CellType, source: str) -> RawCell:
        """Insert a new cell at ``index`` (0..cell_count); returns it (with its new id)."""
        ...

    def delete_cell(self, cell_id: str, expected: str | None = None) -> RawCell:
        """Delete the cell; returns it as it was. ``expected`` as for :meth:`set_source`: a cell changed since the
        check is not deleted (STALE_CELL)."""
        ...

    def move_cell(self, cell_id: str, to_index: int) -> RawCell:
        """Move the cell so that it ends at ``to_index``; returns it after the move."""
        ...

    def clear_outputs(self, cell_id: str) -> RawCell:
        """Clear a code cell's outputs and execution count (other cell types are left as they are)."""
        ...

    def set_cell_type(self, cell_id: str, cell_type: CellType) -> RawCell:
        """Change the cell's type to ``cell_type`` in one synchronous step (JupyterLab: one transaction, one undo
        step), keeping its id, its source exactly and its metadata (the bridge's access block included). As
        nbformat 4 has it, only a code cell has outputs and an execution count: a code cell that becomes markdown or
        raw loses them, a cell that becomes code starts with none; attachments are kept by markdown and raw cells
        only. Recorded as one change of kind "type". Returns the cell after the change."""
        ...

    def apply_edits(self, ops: Sequence[EditOp], expected: dict[str, str] | None = None) -> list[str]:
        """Apply ``ops`` in order, all or nothing, in one synchronous stretch (JupyterLab: one transaction of
        the notebook's shared model, so the person undoes the batch as one step).

        Ops address cells by id only; every id they name (``cell_id``, ``reference_cell_id``) must belong to
        a cell that exists before the batch (the caller checked that no op names a cell an earlier op
        deleted). Positions are resolved when each op is applied, against the order the earlier ops left.
        Returns, per op, the id of the cell it acted on (the new id for an insert). Raises
        ToolError(CELL_NOT_FOUND) for an unknown id, before anything changes. ``expected``: cell id -> the source
        the caller's check read, for the cells whose source the batch replaces or which it deletes (the writes that
        can lose text); one of them holding anything else refuses the whole batch, before anything changes
        (STALE_CELL, as :meth:`set_source`).
        """
        ...

    def bridge_metadata(self) -> Any:
        """The notebook's ``metadata.webmcp_bridge`` value (any JSON value), or None when absent."""
        ...

    def set_bridge_metadata(self, value: dict[str, Any]) -> None:
        """Replace the notebook's ``metadata.webmcp_bridge`` with ``value`` (synchronous, one change)."""
        ...

    def cell_bridge_metadata(self) -> list[tuple[int, str, Any]]:
        """``(index, id, value)`` for every cell whose metadata has a ``webmcp_bridge`` key, in index order
        (one read; cells without the key are not listed)."""
        ...

    def set_cell_bridge_metadata(self, cell_id: str, value: dict[str, Any] | None) -> None:
        """Replace (None: remove) the cell's ``metadata.webmcp_bridge``. For the person's side (the Agent
        panel); no tool reaches it (see webmcp_bridge.access.guard). Raises ToolError(CELL_NOT_FOUND)."""
        ...

    def take_changes(self) -> list[CellChange]:
        """The cell changes seen since the previous call, oldest first. The host buffers at most
        :data:`~webmcp_bridge.core.limits.CHANGE_LOG_SIZE`; when more wait, the oldest are dropped and the oldest
        change kept counts them in ``dropped_before`` (so the change log can tell readers they missed some)."""
        ...

    def access_state(self) -> AccessState:
        """The revision, the raw access values of the notebook and its cells, and the changes since the previous
        take (as :meth:`take_changes`), in one read: all the access guard needs for one call step."""
        ...


class NotebookKernel(Protocol):
    """The kernel of an open notebook: its state, waiting for it, runs and the kernel actions (in JupyterLab through
    the panel's session context: several crossings, and awaits of the kernel).
    """

    def kernel(self) -> KernelInfo:
        """The kernel attached to the notebook, now."""
        ...

    async def wait_for_kernel(self, timeout: float) -> KernelInfo:
        """Wait up to ``timeout`` seconds for the kernel to be idle or busy; returns its state then."""
        ...

    async def run_cell(self, cell_id: str, timeout: float) -> RunResult:
        """Run one code cell in the kernel, waiting up to ``timeout`` seconds (status "timeout" after).
        Cancelled (the agent aborted the call), it interrupts the kernel before re-raising CancelledError."""
        ...

    async def kernel_action(self, action: str, timeout: float) -> KernelInfo | None:
        """Interrupt or restart the kernel, then wait up to ``timeout`` seconds for it to be idle. A restart goes
        through the application's own confirmation (JupyterLab's "Restart Kernel?" dialog, unless the person
        turned it off) and returns None when that confirmation was declined (nothing changed)."""
        ...

    def agent_kernel(self) -> float | None:
        """Since when (seconds since the epoch) the notebook's kernel is the agent's: it ran the agent's code (a
        cell run, or :meth:`run_code` with ``as_agent``) and has not restarted since; None when it is not (the
        kernel model, docs/SECURITY.md: its outputs render untrusted meanwhile)."""
        ...

    # -- batched edits and code without a cell (tools/batch.py, tools/code.py) ---------------------------

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
        """Run ``code`` in the notebook's kernel without creating a cell (not stored in the kernel's history),
        waiting up to ``timeout`` seconds. The notebook's cells are not changed. Outputs are described like
        :meth:`find_cells` describes a cell's: at most ``max_outputs`` of them, text heads of ``head_bytes``.
        ``silent``: the request's ``silent`` flag (the kernel runs no display hook or run events and does not count
        the run; the bridge's own inspection). ``as_agent``: the code is the agent's (or a site tool's), so the
        kernel becomes the agent's before it is sent (:meth:`agent_kernel`); False only for the bridge's own fixed
        programs (the kernel scrub, the variables inspection). Raises ToolError(KERNEL_UNAVAILABLE) when the
        notebook has no kernel."""
        ...


class NotebookView(Protocol):
    """What the person sees of an open notebook: the focus, a highlighted output, its tabs, and saving the document
    (in JupyterLab through ``notebook.js`` and ``tabs.js``, saving through the document's context).
    """

    def set_focus(self, cell_id: str, cursor: dict | None, selection: dict | None) -> None:
        """Make the cell active and visible; place the cursor or select a range ({line, column}, 0-based,
        already checked against the source by the caller)."""
        ...

    def focus(self) -> Focus:
        """The person's focus in this notebook."""
        ...

    def highlight_output(self, cell_id: str, output_index: int) -> None:
        """Reveal the cell and mark output ``output_index`` of it for the person (a review thread's
        anchor). Raises ToolError(CELL_NOT_FOUND) / ToolError(OUTPUT_NOT_FOUND)."""
        ...

    async def capture_output(self, cell_id: str, output_index: int, max_side: int) -> OutputCapture:
        """A picture of the output as the page renders it for the person (its own rendering, never rendered again
        nor trusted for it), at most ``max_side`` pixels on its longest side, held until :meth:`release_capture`.
        Raises ToolError(CELL_NOT_FOUND / OUTPUT_NOT_FOUND). In the page it yields between short steps."""
        ...

    async def encode_capture(self, key: str, request: ImageRequest) -> EncodedImage:
        """A held capture resampled to the request's size, encoded as ``request.mime`` (OUTPUT_NOT_FOUND: not held)."""
        ...

    def release_capture(self, key: str) -> None:
        """Drop a held capture (an unknown key is ignored)."""
        ...

    def tabs(self) -> TabsState:
        """The notebook as other tabs of the site see it, as last counted (synchronous; a host may count in the
        background)."""
        ...

    async def count_tabs(self) -> TabsState:
        """:meth:`tabs`, counted now."""
        ...

    # -- the bridge's own metadata (access levels, review threads) ---------------------------------
    # Stored under the key ``webmcp_bridge`` of the notebook's and the cells' metadata (see
    # webmcp_bridge.core.metadata.METADATA_KEY). Hosts return it as found: untrusted JSON, parsed defensively by
    # the caller.

    async def save(self) -> SaveOutcome:
        """Save to the workspace (nbformat 4.5 with cell ids), as the person's Save does. When the file changed
        since this page loaded or last saved it (another tab, another program), nothing is written until the
        application's "File Changed" dialog is answered (Cancel, Revert, Overwrite); the check and the write
        are one step for every tab of the site, however close two saves are. Other failures raise ToolError."""
        ...


class LiveNotebook(NotebookCells, NotebookKernel, NotebookView, Protocol):
    """A notebook open in the application. Reads are of the live model, unsaved edits included.

    Cells are addressed by nbformat id; any method given an id no cell has raises
    ``ToolError(CELL_NOT_FOUND)`` (the one wording, :func:`webmcp_bridge.core.errors.cell_not_found`). All mutating
    methods are synchronous, so a tool can check a hash and write with no await in between: a person's
    edit can land only before the check (and then the check fails) or after the write. Sizes are UTF-8
    bytes; timeouts are seconds.

    The union of :class:`NotebookCells`, :class:`NotebookKernel` and :class:`NotebookView`: a part that needs
    only one group may be typed with that one.
    """


class WorkspaceContents(Protocol):
    """The workspace's files: listings, a file's entry, text files, a new notebook, a closed notebook's bridge
    metadata (in JupyterLab through the contents manager, and the document manager to create a notebook).

    Paths given to these methods are already normalized by :func:`webmcp_bridge.core.paths.normalize_path`.
    """

    async def list_dir(self, path: str) -> list[Entry] | None:
        """The entries of folder ``path`` ("" = root), each notebook's ``open`` said; None: no folder there."""
        ...

    async def stat(self, path: str) -> Entry | None:
        """The entry at ``path``, or None."""
        ...

    async def read_text(self, path: str, max_bytes: int) -> str | None:
        """The text of the file at ``path``: the live text when it is open in an editor (unsaved edits
        included), else the saved file. None when nothing is there.

        Raises ToolError: INVALID_PATH for a folder (:func:`webmcp_bridge.core.errors.is_a_folder`) or a file that
        is not UTF-8 text (:func:`webmcp_bridge.core.errors.not_a_text_file`); TOO_LARGE when the file is over
        ``max_bytes`` UTF-8 bytes (checked before loading it when the application knows its size).
        """
        ...

    async def write_text(self, path: str, text: str) -> None:
        """Write ``text`` to the file at ``path`` (created, or replaced whole); its folder exists (the caller
        checked). A file open in an editor is written through the editor's model and saved, so the person
        sees the new text at once."""
        ...

    async def create_notebook(self, path: str, kernel_name: str | None) -> None:
        """Write a new empty nbformat 4.5 notebook at ``path`` (the caller checked nothing is there)."""
        ...

    async def notebook_bridge_metadata(self, path: str, listed: Entry | None = None) -> Any:
        """``metadata.webmcp_bridge`` of the notebook at ``path``: of the live model when it is open, else of the saved
        file (hosts may cache it by modification time); None when absent or unreadable. ``listed``: this call's
        listing entry of the notebook, closed then: its saved block, nothing asked again (when it changed either)."""
        ...

    async def saved_access_blocks(self, path: str) -> tuple[Any, list[Any]] | None:
        """The access blocks of the notebook saved at ``path`` (never the live model): its ``metadata.webmcp_bridge``
        and the ``metadata.webmcp_bridge`` of each of its cells that has one, as found (untrusted JSON), for the run
        rule (:mod:`webmcp_bridge.access.run_consent`). None when nothing is there or it is not a notebook."""
        ...

    async def read_saved_notebook(
        self, path: str, max_bytes: int, *, head_bytes: int, max_outputs: int
    ) -> SavedNotebook | None:
        """The notebook saved at ``path``, read through the contents service without opening it (no tab, no kernel).
        None when nothing is there, it is not a notebook, or it is open in the page when read (read it live: its
        levels there are the person's latest). Output texts carry at most ``head_bytes``, at most ``max_outputs``
        outputs a cell. Raises ToolError(TOO_LARGE) when the file is over ``max_bytes`` (checked before loading it
        when the application knows its size)."""
        ...

    # -- text files (tools/files.py; the caller refuses notebook paths before calling these) --------------


class OpenNotebooks(Protocol):
    """The notebooks open in the application: which, the current one, a lookup by path, and opening one (in
    JupyterLab the open notebooks are ``notebook.js``'s; opening goes through the document manager).

    Paths given to these methods are already normalized by :func:`webmcp_bridge.core.paths.normalize_path`.
    """

    def open_documents(self) -> list[OpenDocument]:
        """The notebooks open in the application."""
        ...

    def current_notebook(self) -> LiveNotebook | None:
        """The notebook the person last focused, or None."""
        ...

    def find_open(self, path: str) -> LiveNotebook | None:
        """The open notebook at ``path``, or None."""
        ...

    async def open_notebook(self, path: str, activate: bool) -> LiveNotebook:
        """Open (or find) the notebook at ``path``; ``activate`` brings it to the front. Raises
        ToolError(NOTEBOOK_NOT_FOUND) when the application cannot open it as a notebook."""
        ...


class NotebookHost(WorkspaceContents, OpenNotebooks, Protocol):
    """The application: workspace contents and the open notebooks.

    Paths given to these methods are already normalized by :func:`webmcp_bridge.core.paths.normalize_path`.

    The union of :class:`WorkspaceContents` and :class:`OpenNotebooks`.
    """


# -- dialogs (the call machinery's view of them: :mod:`webmcp_bridge.calls.dialogs`) ------------------------
@dataclass(frozen=True)
class RawButton:
    """A dialog button as JupyterLab rendered it: ``accept`` (an OK-like button) or reject (Cancel-like),
    ``warn`` for a warning button (Restart, Delete), ``disabled`` while the dialog's input is invalid."""

    label: str
    accept: bool
    warn: bool = False
    disabled: bool = False


@dataclass(frozen=True)
class RawInput:
    """The first input of a dialog's body: ``type`` is the element's type ("text", "checkbox", "select",
    "textarea", "password", ...); ``value`` is None for a password (never read) and for a checkbox, whose
    state is ``checked``."""

    type: str
    value: str | None = None
    checked: bool | None = None


@dataclass(frozen=True)
class RawDialog:
    """One open dialog as the source saw it. ``id`` is stable while it is open ("d-<n>", never reused in a
    page); ``shown`` is False for a dialog queued behind the one on screen; texts may be longer than the
    report's bounds (the tracker cuts them) and ``body_cut`` says the source already cut the body;
    ``by_person`` is True when it opened right after a key or pointer press of the person."""

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
    """The application's dialogs, as :class:`webmcp_bridge.calls.dialogs.DialogTracker` reads them (JupyterLab:
    :class:`webmcp_bridge.lab.dialogs.LabDialogs`; tests: ``MemoryDialogs`` of ``tests/host_memory_dialogs.py``)."""

    def snapshot(self, max_chars: int) -> list[RawDialog]:
        """The open dialogs, in the order they opened; texts cut to at most ``max_chars`` characters."""
        ...

    def click(self, dialog_id: str, index: int) -> str:
        """Click button ``index`` of the dialog, as the person would. Returns "clicked", or why not: "gone"
        (not open any more), "queued" (not the one shown), "disabled", "no-button"."""
        ...

    def watch(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` (soon, not necessarily at once) whenever a dialog opens, is shown or closes."""
        ...

    def close(self) -> None:
        """Stop watching."""
        ...
