"""Access control: the one checkpoint between every tool and the notebooks (docs/TOOLS.md, "Access control").

Levels (:mod:`webmcp_bridge.access.levels`): ``write``; ``read`` (writes, runs and kernel actions refused:
``CELL_ACCESS_DENIED`` / ``NOTEBOOK_ACCESS_DENIED``); ``none``, indistinguishable from nothing (a hidden cell's id
errs as an unknown one, indices and counts are of the visible cells with no gap, focus on it reads as none, its
threads are not returned; a hidden notebook is missing from listings, open documents and the current notebook).
:func:`build_bridge <webmcp_bridge.session.bridge.build_bridge>` hands the tools only :class:`GuardedHost`, so every
tool, later ones included, goes through here; only the person changes levels, on the raw notebook. The author's
locks are ``CELL_LOCKED`` here too. Every kernel run a tool starts follows the run rule
(:mod:`webmcp_bridge.access.run_consent`), and the kernel's history is scrubbed of hidden cells first.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from webmcp_bridge.access.levels import level_of_block
from webmcp_bridge.access.notebook_guard import GuardedNotebook
from webmcp_bridge.access.run_consent import RunConsent
from webmcp_bridge.access.runs import RunObservers
from webmcp_bridge.access.step import CallStep, Facts
from webmcp_bridge.core.errors import ErrorCode, ToolError, notebook_not_found
from webmcp_bridge.core.paths import is_notebook_path
from webmcp_bridge.host.protocol import CellChange, Entry, LiveNotebook, NotebookHost, OpenDocument, SavedNotebook
from webmcp_bridge.propose.proposals import ProposalBook, approved


class GuardedHost:
    """A :class:`~webmcp_bridge.host.protocol.NotebookHost` hiding ``none`` notebooks and handing out
    :class:`GuardedNotebook` objects; ``ingest(path, changes)`` feeds the change log."""

    def __init__(
        self, inner: NotebookHost, ingest: Callable[[str, list[CellChange]], object], proposals: ProposalBook
    ) -> None:
        self._inner = inner
        self.proposals = proposals
        self._facts = Facts(ingest)
        self.runs = RunObservers()
        self.consent = RunConsent()  # the lab layer sets the person's switch

    def gate(self) -> None:
        """In propose mode, refuse a change the person did not accept in this call (a tool that forgot to ask
        cannot change anything)."""
        if self.proposals.mode == "propose" and not approved():
            raise ToolError(
                ErrorCode.INTERNAL_ERROR,
                "This change was not proposed to the person (Propose mode is on); nothing was changed.",
            )

    @property
    def raw(self) -> NotebookHost:
        """The unguarded host, for the person's side only; never handed to a tool."""
        return self._inner

    def _wrap(self, nb: LiveNotebook | None) -> GuardedNotebook | None:
        if nb is None:
            return None
        if self._facts.read(nb).notebook == "none":  # a fresh read when a call reaches a notebook
            return None
        return GuardedNotebook(self, nb, CallStep(self._facts, nb))

    async def _hidden(self, path: str, listed: Entry | None = None) -> bool:
        """Whether the notebook is ``none``: live when open, else by its saved block (``listed``: this call's listing
        entry of it, not asked again)."""
        if not is_notebook_path(path):
            return False
        open_nb = self._inner.find_open(path) if listed is None or listed.open else None
        if open_nb is not None:
            return self._facts.read(open_nb).notebook == "none"
        closed = listed if listed is not None and not listed.open else None
        return level_of_block(await self._inner.notebook_bridge_metadata(path, closed)) == "none"

    def _open_hides(self, path: str) -> bool:
        """True when another open notebook is ``none`` or has a ``none`` cell now."""
        for doc in self._inner.open_documents():
            nb = self._inner.find_open(doc.path) if doc.path != path else None
            if nb is not None:
                view = self._facts.read(nb)
                if view.notebook == "none" or view.hidden:
                    return True
        return False

    async def run_consent_reason(self, path: str, hidden_cells: int) -> str | None:
        """:meth:`RunConsent.reason <webmcp_bridge.access.run_consent.RunConsent.reason>` for a run at ``path``: other
        open notebooks looked at live, the rest through their saved files."""
        return await self.consent.reason(
            path,
            hidden_cells,
            self._open_hides(path),
            [doc.path for doc in self._inner.open_documents()],
            self._inner.list_dir,
            self._inner.saved_access_blocks,
        )

    async def list_dir(self, path: str) -> list[Entry] | None:
        """The folder's entries without hidden notebooks: a closed one by its saved block, one opened since the
        listing by its live levels."""
        entries = await self._inner.list_dir(path)
        if entries is None:
            return None
        shown = [e for e in entries if not is_notebook_path(e.path) or not await self._hidden(e.path, e)]
        closed = {e.path for e in shown if is_notebook_path(e.path) and not e.open}
        opened = closed & {doc.path for doc in self._inner.open_documents()} if closed else set()
        return [e for e in shown if e.path not in opened or not await self._hidden(e.path)]

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
        """PATH_EXISTS when anything is at ``path``: a hidden notebook is never overwritten, at the price that a
        guessed exact path is learnt to be taken (docs/TOOLS.md)."""
        if await self._inner.stat(path) is not None:
            raise ToolError(ErrorCode.PATH_EXISTS, f"Something already exists at {path!r}.", path=path)
        self.gate()
        await self._inner.create_notebook(path, kernel_name)

    def open_documents(self) -> list[OpenDocument]:
        shown = []
        for doc in self._inner.open_documents():
            nb = self._inner.find_open(doc.path)
            if nb is None or self._facts.read(nb).notebook != "none":
                shown.append(doc)
        return shown

    def current_notebook(self) -> GuardedNotebook | None:
        return self._wrap(self._inner.current_notebook())

    def find_open(self, path: str) -> GuardedNotebook | None:
        return self._wrap(self._inner.find_open(path))

    async def notebook_bridge_metadata(self, path: str, listed: Entry | None = None) -> Any:
        raise ToolError(
            ErrorCode.NOTEBOOK_ACCESS_DENIED, "The bridge's metadata is read through the notebook.", path=path
        )

    async def read_saved_notebook(
        self, path: str, max_bytes: int, *, head_bytes: int, max_outputs: int
    ) -> SavedNotebook | None:
        """A closed notebook's saved cells as the agent may see them: None for a hidden one as for none (its
        TOO_LARGE too) and for an open one (read live); ``none`` cells left out, the rest renumbered; no metadata."""
        if not is_notebook_path(path):
            return None
        try:
            saved = await self._inner.read_saved_notebook(
                path, max_bytes, head_bytes=head_bytes, max_outputs=max_outputs
            )
        except ToolError as exc:
            if exc.code == ErrorCode.TOO_LARGE and await self._hidden(path):
                return None
            raise
        if saved is None or level_of_block(saved.bridge_metadata) == "none":
            return None
        kept = [
            cell
            for cell, block in zip(saved.cells, saved.cell_metadata, strict=True)
            if level_of_block(block) != "none"
        ]
        cells = tuple(dataclasses.replace(cell, index=index) for index, cell in enumerate(kept))
        return SavedNotebook(None, cells, (None,) * len(cells))

    @staticmethod
    def _not_a_notebook(path: str) -> None:
        if is_notebook_path(path):  # the tools refuse these first; the same answer for every notebook
            raise ToolError(
                ErrorCode.INVALID_PATH,
                "Notebooks are not read or written as files; use jupyter_get_notebook_map, "
                "jupyter_get_cells and the cell tools.",
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
