"""The small protocol the semantic layer needs from a live notebook application.

Two implementations exist: :mod:`webmcp_bridge.jupyterlab.adapter` (the live JupyterLab model, reached
through Pyodide's FFI) and :mod:`webmcp_bridge.memory` (plain Python, for tests under CPython and as the
reference behaviour). Tools only ever talk to these protocols, so every rule (hashes, bounds, errors) is
computed in pure Python and tested without a browser.

Shapes are small frozen dataclasses holding plain values. Text in :class:`RawItem` is already ANSI-stripped
and cut to the requested head size by the host, so a 20 MB stream never crosses into Python to be
described.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol, Sequence

CellType = Literal["code", "markdown", "raw"]
EntryType = Literal["notebook", "file", "directory"]


@dataclass(frozen=True)
class RawItem:
    """One representation of an output.

    Attributes:
        mime: the MIME type; streams and errors use "text/plain".
        bytes: full size: UTF-8 bytes of the (ANSI-stripped) text, or decoded bytes for binary data.
        head: the first bytes of the text (at most the head size asked for); "" for binary data.
        binary: True when the data is base64 in nbformat (images).
    """

    mime: str
    bytes: int
    head: str = ""
    binary: bool = False


@dataclass(frozen=True)
class RawOutput:
    """One output of a code cell. ``name`` is the stream name (stdout/stderr) for streams;
    ``ename``/``evalue`` are set for errors."""

    output_type: str
    items: tuple[RawItem, ...]
    name: str | None = None
    ename: str | None = None
    evalue: str | None = None


@dataclass(frozen=True)
class RawCell:
    """One cell as the host read it. ``source`` is the full source text; ``outputs`` is empty for
    non-code cells; ``output_count`` counts all outputs even when ``outputs`` holds only the first few."""

    id: str
    index: int
    cell_type: CellType
    source: str
    execution_count: int | None = None
    outputs: tuple[RawOutput, ...] = ()
    output_count: int = 0


@dataclass(frozen=True)
class TextPage:
    """A page of one output's text: ``text`` spans bytes [offset, offset+len) of ``total_bytes``;
    ``next_offset`` is None at the end."""

    text: str
    offset: int
    next_offset: int | None
    total_bytes: int


@dataclass(frozen=True)
class Entry:
    """A workspace entry (never its contents)."""

    path: str
    name: str
    type: EntryType


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
    """Outcome of running one cell: status ok/error/skipped/timeout."""

    cell_id: str
    status: str
    execution_count: int | None = None


@dataclass
class OpenDocument:
    """A document open in the application."""

    path: str
    kind: str
    dirty: bool = False


class LiveNotebook(Protocol):
    """A notebook open in the application. Reads are of the live model, unsaved edits included.

    All mutating methods are synchronous, so a tool can check a hash and write with no await in between:
    a person's edit can land only before the check (and then the check fails) or after the write.
    Unknown ids raise ``ToolError(CELL_NOT_FOUND)``.
    """

    path: str

    def dirty(self) -> bool: ...
    def revision(self) -> int: ...
    def cell_count(self) -> int: ...
    def find_cell(self, cell_id: str) -> RawCell: ...
    def read_cells(self, indices: Sequence[int] | None, *, head_bytes: int, max_outputs: int) -> list[RawCell]: ...
    def read_output_text(self, cell_id: str, output_index: int, mime: str, offset: int, max_bytes: int) -> TextPage: ...
    def read_output_binary(self, cell_id: str, output_index: int, mime: str, max_bytes: int) -> tuple[str | None, int]: ...
    def language(self) -> str: ...
    def set_source(self, cell_id: str, source: str) -> None: ...
    def insert_cell(self, index: int, cell_type: CellType, source: str) -> str: ...
    def delete_cell(self, cell_id: str) -> None: ...
    def move_cell(self, cell_id: str, to_index: int) -> None: ...
    def clear_outputs(self, cell_id: str) -> None: ...
    def set_focus(self, cell_id: str, cursor: dict | None, selection: dict | None) -> None: ...
    def focus(self) -> Focus: ...
    def kernel(self) -> KernelInfo: ...
    async def save(self) -> None: ...
    async def wait_for_kernel(self, timeout: float) -> KernelInfo: ...
    async def run_cell(self, cell_id: str, timeout: float) -> RunResult: ...
    async def kernel_action(self, action: str, timeout: float) -> KernelInfo: ...


class NotebookHost(Protocol):
    """The application: workspace contents and the open notebooks.

    Paths given to these methods are already normalized by :func:`webmcp_bridge.paths.normalize_path`.
    """

    async def list_dir(self, path: str) -> list[Entry] | None: ...
    async def stat(self, path: str) -> Entry | None: ...
    async def open_notebook(self, path: str, activate: bool) -> LiveNotebook: ...
    async def create_notebook(self, path: str, kernel_name: str | None) -> None: ...
    def open_documents(self) -> list[OpenDocument]: ...
    def current_notebook(self) -> LiveNotebook | None: ...
    def find_open(self, path: str) -> LiveNotebook | None: ...

