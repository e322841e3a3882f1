"""The one rule for every kernel run the agent starts: while something is hidden, the person sees the code first.

Code run in a kernel reaches what the kernel reaches: every file of the kernel's drive (in JupyterLite, the whole
workspace, notebooks included, whatever their access level) and the kernel's memory (the variables, functions
and imports hidden cells defined). Access levels govern the bridge's tools, not the kernel. So while anything the
agent could reach through the kernel is hidden from it —

- a ``none`` cell of the notebook whose kernel runs the code (:data:`HIDDEN_CELLS`), or
- a ``none`` notebook or a ``none`` cell of any other notebook of the workspace, open or saved
  (:data:`HIDDEN_NOTEBOOK`),

every kernel run a tool starts (``jupyter_run_cells``, ``jupyter_run_code``, a site author's tool that runs code,
the variables inspection) is shown to the person with its code and waits for Accept, in Direct mode too. The
person may turn asking off for one open notebook (the Agent panel's Access section, "Stop asking"; off by default):
that covers that notebook's own hidden cells only, never what is hidden elsewhere, and it lasts while the notebook
stays open in this page (the lab layer forgets it when the notebook closes). The kernel scrub
(:mod:`webmcp_bridge.access.kernel_scrub`) still runs before the code: defence in depth, not the boundary.

What other notebooks hide is read live for the open ones and from the saved files for the rest, each saved file
read again only when its modification time (the listing's ``last_modified``) changed: a notebook saved as hidden
by another tab or an upload is seen at the next run.

The rule is enforced by the access guard (:meth:`GuardedNotebook.run_cell
<webmcp_bridge.access.guard.GuardedNotebook.run_cell>` and ``run_code``), the one way a tool reaches a kernel:
a run whose code the person did not accept in this call is shown to the person there. A tool that shows the
code itself (with ``CallContext.propose``) marks it accepted (:func:`~webmcp_bridge.propose.hold.accept_runs`), so
the person is asked once.

Pure: the guard hands in what to look at (the notebook's hidden cells, what the other open notebooks hide, a
folder listing and a saved notebook's access blocks) and how to ask the person (:func:`ask_to_run`); the lab
layer keeps the person's switch.
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
    """True when a notebook's access blocks (as found in its metadata: untrusted JSON) hide anything from the agent:
    the notebook's level or a cell's is ``none`` (a level the bridge does not understand counts as ``none``)."""
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
    """Show ``code`` (to run in the notebook at ``path``: cell ``cell_id``, or None for code without a cell) to
    the person with the run rule's ``reason`` as a proposal of ``kind`` and wait, in Direct mode too
    (:func:`~webmcp_bridge.propose.hold.hold` with the session's ``proposals``; denied for the person when
    ``still_valid()`` names a reason). On Accept the code counts as accepted for the rest of the call.

    Raises ProposalDenied (a normal "denied" result), ToolError(TOO_LARGE) for code over CODE_BYTES (bytes, UTF-8:
    too long to show in full), ToolError(PROPOSAL_ALREADY_PENDING)."""
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
    """Whether a kernel run the agent starts is shown to the person first (see the module docstring), and the
    person's "Stop asking" per open notebook (kept here, in memory only: it ends with the page or when the lab layer
    says the notebook closed, so a later notebook at the same path starts asking again).

    Args:
        max_entries: the bound of the workspace walk (:data:`~webmcp_bridge.core.limits.HIDDEN_WALK_ENTRIES`).
    """

    def __init__(self, *, max_entries: int = HIDDEN_WALK_ENTRIES) -> None:
        self._off: set[str] = set()  # open notebooks whose own hidden cells the person stopped being asked about
        self._max_entries = max_entries
        self._saved: dict[str, tuple[str, bool]] = {}  # path -> (its last_modified when read, whether it hides)

    def set_asking(self, path: str, asking: bool) -> None:
        """The person's choice for the open notebook at ``path``: ``asking`` False stops showing runs there because
        of its own hidden cells (what is hidden elsewhere is still asked)."""
        if asking:
            self._off.discard(path)
        else:
            self._off.add(path)

    def asking_off(self, path: str) -> bool:
        """True when the person turned asking off for the notebook at ``path``."""
        return path in self._off

    def keep_open(self, paths: Iterable[str]) -> None:
        """Only the notebooks at ``paths`` are open now: the switch of every other one ends (asking again)."""
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
        """True when a saved notebook of the workspace (other than those in ``skip``: the open ones, looked at
        live by the caller) hides something, walking the folders from the root breadth first; also True when the
        walk meets more than ``max_entries`` entries before its end (too big to look at: treated as hiding
        something, so runs are asked rather than let through unchecked).

        Args:
            skip: notebook paths not to read from their saved files.
            list_dir: the host's (unguarded) listing: ``path -> entries`` (with ``last_modified`` when the host
                knows it: a file is read again only when it changed), None for a folder that is not there.
            saved_blocks: a saved notebook's access blocks (:data:`SavedBlocks`).
        """
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
        """Why a kernel run in the notebook at ``path`` is shown to the person first, or None when it is not.

        Args:
            path: the notebook whose kernel runs the code.
            hidden_cells: how many of its cells are ``none`` now.
            open_elsewhere: True when another open notebook is ``none`` or has a ``none`` cell now (looked at live
                by the caller).
            open_paths: the open notebooks' paths (their saved files are not read: their live state counts).
            list_dir, saved_blocks: as :meth:`workspace_hides`, for the notebooks that are not open.

        Returns :data:`HIDDEN_CELLS`, :data:`HIDDEN_NOTEBOOK` or None (nothing hidden, or only this notebook's own
        cells and the person turned asking off for it)."""
        if hidden_cells > 0 and not self.asking_off(path):
            return HIDDEN_CELLS
        if open_elsewhere or await self.workspace_hides({path, *open_paths}, list_dir, saved_blocks):
            return HIDDEN_NOTEBOOK
        return None
