"""What every notebook tool shares: the call context, notebook resolution, and argument pieces."""

from __future__ import annotations

import secrets
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Unpack

from pydantic import Field

from webmcp_bridge.access.guard import GuardedHost
from webmcp_bridge.access.notebook_guard import GuardedNotebook
from webmcp_bridge.calls.dialogs import DialogTracker
from webmcp_bridge.calls.pending import PendingCalls
from webmcp_bridge.calls.registry import Annotations, Handler, Tool, ToolInput
from webmcp_bridge.calls.toolsets import ToolsetSwitch
from webmcp_bridge.changes.log import ChangeLog
from webmcp_bridge.core.diagnostics import Diagnostics
from webmcp_bridge.core.errors import ErrorCode, ToolError, notebook_not_found
from webmcp_bridge.core.limits import CELL_IDS, ID_CHARS, MAX_INT, MAX_PATH_BYTES, SHORT_ID_CHARS, Limits, utf8_len
from webmcp_bridge.core.paths import is_notebook_path, normalize_path
from webmcp_bridge.core.snapshot import source_hash, source_is_paged
from webmcp_bridge.core.source_reads import SourceReads
from webmcp_bridge.host.protocol import RawCell
from webmcp_bridge.propose.hold import Shown, hold
from webmcp_bridge.propose.proposals import ProposalBook
from webmcp_bridge.sharing.selections import SharedSelections
from webmcp_bridge.tools.guidance import BASE_GUIDANCE

Index = Annotated[int, Field(ge=0, le=MAX_INT)]
Id = Annotated[str, Field(min_length=1, max_length=ID_CHARS)]
ShortId = Annotated[str, Field(min_length=1, max_length=SHORT_ID_CHARS)]
NotebookPathField = Annotated[
    str | None,
    Field(
        description="Workspace-relative path of the notebook (for example 'demo/analysis.ipynb'). Omit for the "
        "current notebook.",
        max_length=MAX_PATH_BYTES,
    ),
]
CellIdField = Annotated[Id, Field(description="The cell's nbformat id, as returned by jupyter_get_cells.")]
HashField = Annotated[
    ShortId,
    Field(
        description="The sourceHash you read for this cell; the write is refused with STALE_CELL if the cell changed "
        "since."
    ),
]
Position = Literal["above", "below"]
CellIds = Annotated[list[Id], Field(max_length=CELL_IDS)]


def tool(
    name: str, description: str, handler: Handler, annotations: Annotations, output: Any, title: str | None = None
) -> Tool:
    """A Tool whose input model is ``handler``'s ``args`` type; title by default ``name`` as words ("Get cells")."""
    title = title or name.removeprefix("jupyter_").replace("_", " ").capitalize()
    return Tool(name, title, description, typing.get_type_hints(handler)["args"], handler, annotations, output)


def unique(ids: list[str]) -> list[str]:
    return list(dict.fromkeys(ids))  # first occurrences, in order


# the input models' docstrings would be the schemas' descriptions: these bases are said in comments
#: base input of tools that work on one notebook
class NotebookInput(ToolInput):
    notebook_path: NotebookPathField = None


#: base input of tools that take some cells of one notebook: ``cellIds`` **or** an index range ``startIndex``/
#: ``endIndex`` (visible cells, end exclusive and clamped); neither means every cell
class CellSelection(NotebookInput):
    cell_ids: CellIds | None = Field(
        None, description="The cells, by id (each once, in this order). Omit to choose by index range."
    )
    start_index: Index | None = Field(None, description="First index of the range (default 0).")
    end_index: Index | None = Field(None, description="End of the range, exclusive (default: the last cell).")

    def check_one_way(self) -> None:
        """Refuse both ways at once: ToolError(INVALID_ARGUMENT)."""
        if self.cell_ids is not None and (self.start_index is not None or self.end_index is not None):
            raise ToolError(ErrorCode.INVALID_ARGUMENT, "Give cellIds or an index range, not both.")

    def index_range(self, count: int) -> range:
        """[startIndex, min(endIndex, count)) over ``count`` visible cells, empty when the start is past the end."""
        start = self.start_index or 0
        end = count if self.end_index is None else min(self.end_index, count)
        return range(start, max(start, end))


def own_secret() -> Callable[[], bytes | None]:
    """A key of 32 random bytes made now, as the callable :class:`CallContext` asks for (a session outside a page)."""
    key = secrets.token_bytes(32)
    return lambda: key


@dataclass
class CallContext:
    """What handlers get as ``ctx``, made once by :func:`webmcp_bridge.session.bridge.build_bridge`. ``host`` is the
    access guard (TypeError for a raw host: no handler ever holds an unguarded one). ``page_secret`` gives the key
    review messages are signed and judged with (:mod:`webmcp_bridge.review.signatures`): in the page, this browser's
    secret for the site; by default a random key of this context's own."""

    host: GuardedHost
    limits: Limits
    pending: PendingCalls  # the registry's calls (the very object the registry tracks them in)
    dialogs: DialogTracker  # the page's JupyterLab dialogs
    shared: SharedSelections  # the output text the person shared
    reads: SourceReads  # pages of big sources handed to the agent (this session)
    diagnostics: Diagnostics = field(default_factory=Diagnostics)  # problems of the site's contributions
    toolsets: ToolsetSwitch | None = None  # which toolsets the page serves (the discovery tool switches them)
    guidance: str = BASE_GUIDANCE  # the guidance for agents (build_bridge adds the site's paragraphs)
    file_reads: SourceReads = field(default_factory=SourceReads)  # pages of text files handed to the agent (cell id "")
    changes: ChangeLog = field(kw_only=True)  # the bridge's change log (who changed which cell)
    proposals: ProposalBook = field(kw_only=True)  # the mode (direct/propose) and the proposals waiting for the person
    page_secret: Callable[[], bytes | None] = field(kw_only=True, default_factory=own_secret)

    def __post_init__(self) -> None:
        if not isinstance(self.host, GuardedHost):
            raise TypeError("CallContext.host must be the access guard (GuardedHost), never a raw host")

    async def propose(
        self, nb: GuardedNotebook, tool: str, kind: str, cell_id: str | None, summary: str, **shown: Unpack[Shown]
    ) -> bool:
        """Hold a change of ``nb`` in Propose mode, under ``cell_id``, denied if that cell or the notebook goes while it
        waits; as :func:`~webmcp_bridge.propose.hold.hold` (True when it waited: the caller checks again)."""

        def still_valid() -> str | None:
            if self.host.find_open(nb.path) is None:
                return "the notebook was closed"
            if cell_id is not None:
                try:
                    nb.find_cell(cell_id)
                except ToolError:
                    return "the cell was deleted"
            return None

        return await hold(
            self.proposals, tool, kind, nb.path, summary, cell_id=cell_id, still_valid=still_valid, **shown
        )

    async def propose_workspace(self, tool: str, kind: str, path: str, summary: str, **shown: Unpack[Shown]) -> bool:
        """Hold a change to the workspace outside cells (``path``: the file's) in a box of its own; as
        :func:`~webmcp_bridge.propose.hold.hold`."""
        return await hold(self.proposals, tool, kind, path, summary, scope="workspace", **shown)

    async def notebook(self, path: str | None) -> GuardedNotebook:
        """The notebook at ``path`` (opened in the background if not open), or the current one when ``path`` is
        None. Raises ToolError: NO_ACTIVE_NOTEBOOK, INVALID_PATH, NOTEBOOK_NOT_FOUND."""
        if path is None:
            current = self.host.current_notebook()
            if current is None:
                raise ToolError(
                    ErrorCode.NO_ACTIVE_NOTEBOOK,
                    "No notebook is open and active; pass notebookPath or open one with jupyter_open_notebook.",
                )
            return current
        normalized = normalize_path(path)
        if not is_notebook_path(normalized):
            raise ToolError(ErrorCode.INVALID_PATH, "A notebook path ends with '.ipynb'.", path=normalized)
        found = self.host.find_open(normalized)
        if found is not None:
            return found
        entry = await self.host.stat(normalized)
        if entry is None or entry.type != "notebook":
            raise notebook_not_found(normalized)
        return await self.host.open_notebook(normalized, activate=False)


def summary(nb: GuardedNotebook) -> dict[str, Any]:
    """The notebook block of results (:class:`~webmcp_bridge.tools.payloads.NotebookSummary`)."""
    tabs = nb.tabs()
    return {
        "path": nb.path,
        "dirty": nb.dirty(),
        "revision": nb.revision(),
        "cellCount": nb.cell_count(),
        "hiddenCellCount": nb.hidden_cell_count(),
        "access": nb.level(),
        "otherTabs": tabs.other_tabs,
        "savedElsewhere": tabs.saved_elsewhere,
    }


def write_block(nb: GuardedNotebook, **more: Any) -> dict[str, Any]:
    """The notebook block of write results: ``{path, revision, ...more}``, plus ``otherTabs`` and ``savedElsewhere``
    when another tab of the site has it open or saved it (the two saves will meet)."""
    tabs = nb.tabs()
    block = {"path": nb.path, "revision": nb.revision(), **more}
    if tabs.other_tabs or tabs.saved_elsewhere:
        block.update(otherTabs=tabs.other_tabs, savedElsewhere=tabs.saved_elsewhere)
    return block


def cell_ref(cell: RawCell) -> dict[str, Any]:
    """The short form of a cell in write results: ``{id, index, sourceHash}``."""
    return {"id": cell.id, "index": cell.index, "sourceHash": source_hash(cell.source)}


def check_size(size: int, cap: int, message: str, **details: Any) -> None:
    """TOO_LARGE (never a cut) for ``size`` bytes over ``cap``: ``message`` formatted, with ``bytes``, ``maxBytes``."""
    if size > cap:
        raise ToolError(ErrorCode.TOO_LARGE, message.format(size=size, cap=cap), **details, bytes=size, maxBytes=cap)


def check_count(count: int, cap: int, message: str) -> None:
    """TOO_LARGE, with ``count`` and ``maxCount``, for ``count`` items over ``cap`` (``message`` formatted)."""
    if count > cap:
        raise ToolError(ErrorCode.TOO_LARGE, message.format(count=count, cap=cap), count=count, maxCount=cap)


def check_write_size(text: str, limits: Limits, field: str) -> None:
    """Refuse (never truncate) a write over ``limits.source_write_bytes``: TOO_LARGE."""
    message = field + " is {size} bytes; the limit for one cell is {cap}."
    check_size(utf8_len(text), limits.source_write_bytes, message, field=field)


def _in_pages(ctx: CallContext, nb: GuardedNotebook, cell: RawCell, digest: str) -> bool:
    """True when the cell's source (``digest``: its hash) is read in pages now, or was given to the agent in pages (a
    bigger result cap since then does not make a cut read whole)."""
    return source_is_paged(cell.source, ctx.limits) or ctx.reads.in_pages(nb.path, cell.id, digest)


def check_full_read(ctx: CallContext, nb: GuardedNotebook, cell: RawCell) -> None:
    """SOURCE_NOT_FULLY_READ (``nextSourceOffset``: the first byte not read) for a whole-source write of a source
    read in pages that the agent was not given every page of (:mod:`webmcp_bridge.core.source_reads`)."""
    digest = source_hash(cell.source)
    if not _in_pages(ctx, nb, cell, digest):
        return
    total = utf8_len(cell.source)
    unread = ctx.reads.first_unread(nb.path, cell.id, digest, total)
    if unread is None:
        return
    raise ToolError(
        ErrorCode.SOURCE_NOT_FULLY_READ,
        f"Cell {cell.id!r} is {total} bytes and you have read only part of its current source, so this write would "
        f"delete what you did not see. Read the rest with jupyter_get_cells (cellIds [{cell.id!r}], sourceOffset "
        f"{unread}, then each nextSourceOffset until it is null) and send the whole new source, or change part of "
        "it with jupyter_edit_cell_source.",
        cellId=cell.id,
        sourceBytes=total,
        nextSourceOffset=unread,
        sourceHash=digest,
    )


def note_written(ctx: CallContext, nb: GuardedNotebook, cell: RawCell, before: RawCell | None = None) -> None:
    """After a write: the agent knows the new source whole when it sent all of it (``before`` None), or edited
    a source it had read whole (``before``: the cell before the edit); an edit of a cut read leaves the new source
    cut (read in pages, none of it read)."""
    digest = source_hash(cell.source)
    if before is not None:
        was, size = source_hash(before.source), utf8_len(before.source)
        if _in_pages(ctx, nb, before, was) and not ctx.reads.fully_read(nb.path, before.id, was, size):
            ctx.reads.record(nb.path, cell.id, digest, 0, 0)
            return
    if _in_pages(ctx, nb, cell, digest):
        ctx.reads.mark_known(nb.path, cell.id, digest)
