"""The one rule for every kernel run the agent starts: while something is hidden, the person sees the code first.

Code run in a kernel reaches what the kernel reaches: every file of the kernel's drive (in JupyterLite, the whole
workspace, notebooks included, whatever their access level) and the kernel's memory (the variables, functions
and imports hidden cells defined). Access levels govern the bridge's tools, not the kernel. So while anything the
agent could reach through the kernel is hidden from it —

- a ``none`` cell in the notebook whose kernel runs the code, or
- a ``none`` notebook anywhere in the workspace (open, or a file the workspace listing holds) —

every kernel run a tool starts (``jupyter_run_cells``, ``jupyter_run_code``, a site author's tool that runs code)
is shown to the person with its code and waits for Accept, in Direct mode too, unless the person turned asking
off for that notebook (the Agent panel's Access section, "Stop asking"; off by default). The kernel scrub
(:mod:`webmcp_bridge.access.kernel_scrub`) still runs before the code: defence in depth, not the boundary.

The rule is enforced by the access guard (:meth:`GuardedNotebook.run_cell
<webmcp_bridge.access.guard.GuardedNotebook.run_cell>` and ``run_code``), the one way a tool reaches a kernel:
a run whose code the person did not accept in this call is shown to the person there. A tool that shows the
code itself (with ``CallContext.propose``) marks it accepted (:func:`accept_runs`), so the person is asked once.

Pure: the guard hands in what to look at (the notebook's hidden cells, whether an open notebook is hidden, a
folder listing and a level check) and how to ask the person (:func:`ask_to_run`); the lab layer keeps the
person's switch (``lab/run_switches.py``).
"""

from __future__ import annotations

import contextvars
import hashlib
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Sequence

from webmcp_bridge.calls.registry import current_call
from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.core.limits import (
    CODE_BYTES,
    HIDDEN_WALK_ENTRIES,
    HIDDEN_WALK_SECONDS,
    PROPOSAL_SUMMARY_BYTES,
    preview,
    utf8_len,
)
from webmcp_bridge.host.protocol import Entry
from webmcp_bridge.propose.proposals import Decision, Proposal, ProposalDenied

#: why a run is shown to the person (the proposal's summary ends with one of these)
HIDDEN_CELLS = "cells of this notebook are hidden from the agent, and the kernel holds what they defined"
HIDDEN_NOTEBOOK = "something in the workspace is hidden from the agent, and the kernel can read every file"

_accepted: contextvars.ContextVar[frozenset[str]] = contextvars.ContextVar(
    "webmcp_bridge_accepted_runs", default=frozenset()
)


def code_digest(code: str) -> str:
    """The SHA-256 (hex) of a run's code, exactly as it runs (no stripping): how an accepted run is recognised."""
    return hashlib.sha256(code.encode("utf-8", "surrogatepass")).hexdigest()


def accept_runs(codes: Iterable[str]) -> None:
    """Record, for the rest of the current call (its asyncio task), that the person accepted running these codes
    (each a cell's source or a code text, exactly as shown to the person)."""
    _accepted.set(_accepted.get() | {code_digest(code) for code in codes})


def run_accepted(code: str) -> bool:
    """True when the person accepted running exactly ``code`` in the current call."""
    return code_digest(code) in _accepted.get()


ListDir = Callable[[str], Awaitable[Sequence[Entry] | None]]
IsHidden = Callable[[str], Awaitable[bool]]


async def workspace_hides(list_dir: ListDir, is_hidden: IsHidden, max_entries: int = HIDDEN_WALK_ENTRIES) -> bool:
    """True when a notebook of the workspace is hidden from the agent, walking the folders from the root
    breadth first; also True when the walk meets more than ``max_entries`` entries before its end (too big to
    look at: treated as hiding something, so runs are asked rather than let through unchecked).

    Args:
        list_dir: the host's (unguarded) listing: ``path -> entries``, None for a folder that is not there.
        is_hidden: ``notebook path -> True`` when its level is ``none``.
        max_entries: the bound on the entries looked at (files, folders and notebooks counted alike).
    """
    seen = 0
    folders: deque[str] = deque([""])
    while folders:
        entries = await list_dir(folders.popleft())
        for entry in entries or ():
            seen += 1
            if seen > max_entries:
                return True
            if entry.type == "directory":
                folders.append(entry.path)
            elif entry.type == "notebook" and await is_hidden(entry.path):
                return True
    return False


async def ask_to_run(
    request: Callable[[Proposal, Callable[[], str | None]], Awaitable[Decision]],
    path: str,
    cell_id: str | None,
    kind: str,
    code: str,
    reason: str,
    still_valid: Callable[[], str | None],
) -> None:
    """Show ``code`` (to run in the notebook at ``path``: cell ``cell_id``, or None for code without a cell) to
    the person with the run rule's ``reason`` as a proposal of ``kind`` and wait (``request``:
    :meth:`ProposalBook.request <webmcp_bridge.propose.proposals.ProposalBook.request>`, denied for the person
    when ``still_valid()`` names a reason). On Accept the code counts as accepted for the rest of the call.

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
    summary = preview(f"{what} ({reason})", PROPOSAL_SUMMARY_BYTES)
    proposal = Proposal("", path, tool, kind, cell_id, summary, None, code)
    decision = await request(proposal, still_valid)
    if not decision.accepted:
        raise ProposalDenied(proposal.id, tool, decision.reason, decision.by)
    accept_runs([code])


def changed_since_accept() -> ToolError:
    """The error for a run whose code changed after the person accepted it (nothing was run)."""
    return ToolError(
        ErrorCode.STALE_CELL,
        "The code changed after the person accepted running it; nothing was run. "
        "Read the cell again and ask to run it again.",
    )


class RunConsent:
    """Whether a kernel run the agent starts is shown to the person first (see the module docstring).

    Args:
        switch: ``notebook path -> True`` when the person turned asking off for that notebook; None: never off.
            A switch that raises counts as on (asking).
        clock: seconds, monotonic (tests pass their own).
        max_entries: the bound of the workspace walk (:data:`~webmcp_bridge.core.limits.HIDDEN_WALK_ENTRIES`).
        ttl: seconds the walk's answer is reused (:data:`~webmcp_bridge.core.limits.HIDDEN_WALK_SECONDS`).
    """

    def __init__(
        self,
        switch: Callable[[str], bool] | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        max_entries: int = HIDDEN_WALK_ENTRIES,
        ttl: float = HIDDEN_WALK_SECONDS,
    ) -> None:
        self._switch = switch
        self._clock = clock
        self._max_entries = max_entries
        self._ttl = ttl
        self._walk: tuple[float, object, bool] | None = None  # (clock at the walk, the caller's stamp then, its answer)

    def set_switch(self, switch: Callable[[str], bool] | None) -> None:
        """Use ``switch`` for the person's "Stop asking" (the lab layer's, once the page is up)."""
        self._switch = switch

    def asking_off(self, path: str) -> bool:
        """True when the person turned asking off for the notebook at ``path``."""
        if self._switch is None:
            return False
        try:
            return bool(self._switch(path))
        except Exception:
            return False

    def forget(self) -> None:
        """Drop the reused walk (the person changed a level): the next run looks again."""
        self._walk = None

    async def _workspace_hides(self, list_dir: ListDir, is_hidden: IsHidden, stamp: object) -> bool:
        now = self._clock()
        if self._walk is not None and now - self._walk[0] < self._ttl and self._walk[1] == stamp:
            return self._walk[2]
        answer = await workspace_hides(list_dir, is_hidden, self._max_entries)
        self._walk = (self._clock(), stamp, answer)
        return answer

    async def reason(
        self,
        path: str,
        hidden_cells: int,
        open_hidden: bool,
        list_dir: ListDir,
        is_hidden: IsHidden,
        stamp: object = None,
    ) -> str | None:
        """Why a kernel run in the notebook at ``path`` is shown to the person first, or None when it is not.

        Args:
            path: the notebook whose kernel runs the code.
            hidden_cells: how many of its cells are ``none`` now.
            open_hidden: True when an open notebook is ``none`` now (looked at live by the caller).
            list_dir, is_hidden: as :func:`workspace_hides`, for the notebooks that are not open (the answer is
                reused for ``ttl`` seconds while ``stamp`` stays equal).
            stamp: what the reused answer depends on (the guard passes a count of the person's level changes and
                the open notebooks' paths: a notebook the person hid and then closed is looked for again at once).

        Returns :data:`HIDDEN_CELLS`, :data:`HIDDEN_NOTEBOOK` or None (nothing hidden, or asking is off)."""
        if self.asking_off(path):
            return None
        if hidden_cells > 0:
            return HIDDEN_CELLS
        if open_hidden or await self._workspace_hides(list_dir, is_hidden, stamp):
            return HIDDEN_NOTEBOOK
        return None
