"""The one rule for every kernel run the agent starts: while something is hidden, the person sees the code first
(docs/TOOLS.md, "Hidden cells and the kernel").

Kernel code reaches the kernel's drive (in JupyterLite the whole workspace) and memory (what hidden cells defined),
which levels do not govern. So while a ``none`` cell of this notebook (:data:`HIDDEN_CELLS`) or a ``none`` notebook
or cell elsewhere, open or saved (:data:`HIDDEN_NOTEBOOK`) exists, every kernel run a tool starts is shown with its
code and waits for Accept, in Direct mode too. "Stop asking" (per open notebook, off by default, forgotten when it
closes) covers only that notebook's own hidden cells. Saved notebooks are read again only when their
``last_modified`` changed; a tool that showed the code itself marks it accepted
(:func:`~webmcp_bridge.propose.hold.accept_runs`), so the person is asked once.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any

from webmcp_bridge.access.levels import level_of_block
from webmcp_bridge.calls.registry import current_call
from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.core.limits import CODE_BYTES, HIDDEN_WALK_ENTRIES, utf8_len
from webmcp_bridge.host.protocol import Entry
from webmcp_bridge.propose.hold import hold
from webmcp_bridge.propose.proposals import ProposalBook

#: why a run is shown to the person (the proposal's summary ends with one of these)
HIDDEN_CELLS = "cells of this notebook are hidden from the agent, and the kernel holds what they defined"
HIDDEN_NOTEBOOK = "something in another notebook is hidden from the agent, and the kernel can read every file"

ListDir = Callable[[str], Awaitable[Sequence[Entry] | None]]
#: a saved notebook's access blocks: ``path -> (metadata.webmcp_bridge, [each cell's block])``, None when unreadable
SavedBlocks = Callable[[str], Awaitable[tuple[Any, Sequence[Any]] | None]]


def blocks_hide(notebook_block: Any, cell_blocks: Iterable[Any]) -> bool:
    """True when a notebook's access blocks (untrusted JSON) make it or a cell ``none`` (an unknown level is)."""
    return level_of_block(notebook_block) == "none" or any(level_of_block(b) == "none" for b in cell_blocks)


async def ask_to_run(
    proposals: ProposalBook,
    path: str,
    cell_id: str | None,
    kind: str,
    code: str,
    reason: str,
    still_valid: Callable[[], str | None],
) -> None:
    """Show ``code`` (of cell ``cell_id``, or None) with ``reason`` as a proposal of ``kind`` and wait, in Direct mode
    too (:func:`~webmcp_bridge.propose.hold.hold`; denied when ``still_valid()`` names a reason); accepted, it counts
    for the rest of the call. Raises ProposalDenied, ToolError(TOO_LARGE) over CODE_BYTES (UTF-8 bytes),
    ToolError(PROPOSAL_ALREADY_PENDING)."""
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
    summary = f"{what} ({reason})"
    await hold(proposals, tool, kind, path, summary, cell_id=cell_id, code=code, always=True, still_valid=still_valid)


def changed_since_accept() -> ToolError:
    """The error for a run whose code changed after the person accepted it (nothing was run)."""
    return ToolError(
        ErrorCode.STALE_CELL,
        "The code changed after the person accepted running it; nothing was run. "
        "Read the cell again and ask to run it again.",
    )


class RunConsent:
    """The run rule, and the person's "Stop asking" per open notebook (in memory: it ends with the page or the
    notebook's closing). ``max_entries`` bounds the workspace walk."""

    def __init__(self, *, max_entries: int = HIDDEN_WALK_ENTRIES) -> None:
        self._off: set[str] = set()  # open notebooks asking is off for
        self._max_entries = max_entries
        self._saved: dict[str, tuple[str, bool]] = {}  # path -> (its last_modified when read, whether it hides)

    def set_asking(self, path: str, asking: bool) -> None:
        """The person's switch for an open notebook (its own hidden cells only)."""
        if asking:
            self._off.discard(path)
        else:
            self._off.add(path)

    def asking_off(self, path: str) -> bool:
        """True when the person turned asking off for the notebook at ``path``."""
        return path in self._off

    def keep_open(self, paths: Iterable[str]) -> None:
        """Only ``paths`` are open now: every other switch ends."""
        self._off.intersection_update(paths)

    async def _saved_hides(self, entry: Entry, saved_blocks: SavedBlocks) -> bool:
        stamp = entry.last_modified
        kept = self._saved.get(entry.path)
        if stamp is not None and kept is not None and kept[0] == stamp:
            return kept[1]
        blocks = await saved_blocks(entry.path)
        hides = blocks is not None and blocks_hide(blocks[0], blocks[1])
        if stamp is not None:
            self._saved[entry.path] = (stamp, hides)
        return hides

    async def workspace_hides(self, skip: Iterable[str], list_dir: ListDir, saved_blocks: SavedBlocks) -> bool:
        """True when a saved notebook not in ``skip`` hides something (breadth first from the root, through the
        unguarded ``list_dir``), or when the walk meets over ``max_entries`` entries (too big to look at: asked
        rather than let through)."""
        skipped = set(skip)
        seen = 0
        folders: deque[str] = deque([""])
        while folders:
            entries = await list_dir(folders.popleft())
            for entry in entries or ():
                seen += 1
                if seen > self._max_entries:
                    return True
                if entry.type == "directory":
                    folders.append(entry.path)
                elif entry.type == "notebook" and entry.path not in skipped:
                    if await self._saved_hides(entry, saved_blocks):
                        return True
        return False

    async def reason(
        self,
        path: str,
        hidden_cells: int,
        open_elsewhere: bool,
        open_paths: Iterable[str],
        list_dir: ListDir,
        saved_blocks: SavedBlocks,
    ) -> str | None:
        """:data:`HIDDEN_CELLS`, :data:`HIDDEN_NOTEBOOK` or None for a run at ``path`` with ``hidden_cells``;
        ``open_elsewhere``: another open notebook hides something (live); ``open_paths``' saved files are skipped."""
        if hidden_cells > 0 and not self.asking_off(path):
            return HIDDEN_CELLS
        if open_elsewhere or await self.workspace_hides({path, *open_paths}, list_dir, saved_blocks):
            return HIDDEN_NOTEBOOK
        return None
