"""Agent calls while they run, and the ones that outlive ``executionTimeout``: they return ``pending``.

Rule (the product contract, docs/TOOLS.md): a call still running after ``executionTimeout`` (default 20 s) returns
``{status: "pending", pendingId, tool, message}`` and keeps running; ``jupyter_wait_for_result`` collects
it. Settled results are kept for a bounded time and count (``Limits.pending_keep_seconds``,
``Limits.pending_keep_count``); the oldest settled ones go first, running calls are never dropped.

Every call is tracked from its start (:meth:`PendingCalls.begin`): the dialog rules
(:mod:`webmcp_bridge.calls.dialogs`) need to know which calls are running when a dialog opens, and an abort of
the WebMCP invocation (:meth:`PendingCalls.by_invocation`) needs the call's task. A call that went pending
(:meth:`PendingCalls.promote`) is no longer tied to its invocation: its result is collected by id.
A call also returns early, pending, when a dialog is given to it (:meth:`PendingCall.wake`), so the agent can
answer that dialog instead of waiting out the timeout.
"""

from __future__ import annotations

import asyncio
import itertools
import re
import sys
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from webmcp_bridge.core.limits import DEFAULT_LIMITS, EARLY_ABORTS_KEPT

#: A call the loader answered ``pending`` itself because the bridge's Python was not up within the loader's bound
#: (``core/limits.py`` ``START_ANSWER_MS``; docs/loader.md, "No client waits past a bound"): the loader's ids are
#: ``s-<n>`` (``p-<n>`` are this module's), the call is handed to Python once it is up with that id
#: (:meth:`PendingCalls.promote`), and ``jupyter_wait_for_result`` collects it as any pending call. The loader fills
#: ``{tool}`` and ``{step}`` (the start-up step it is at: runtime, packages, tools) of the message; the build writes
#: both into ``bridge.json`` (``startPending``).
START_PENDING_ID = re.compile(r"s-[1-9][0-9]{0,8}")
START_PENDING_MESSAGE = (
    "{tool} waits for the bridge to start ({step}); collect its result with jupyter_wait_for_result."
)

#: Python >= 3.12 starts a task eagerly when asked (``asyncio.Task(..., eager_start=True)``); Pyodide's is 3.14
EAGER_TASKS = sys.version_info >= (3, 12)


def start_eagerly(coro: Any) -> asyncio.Task[Any]:
    """Start ``coro`` as a task of the running loop that runs its first step at once, synchronously, up to its
    first real suspension (Python >= 3.12; an older Python schedules it like ``ensure_future``).

    A call that never waits for anything (most reads and writes: their host methods are synchronous) then
    finishes inside the caller's own turn of the browser's event loop: in Pyodide each scheduled step is one
    more browser task (``setTimeout``) with its own cost, and other page work may run before it."""
    loop = asyncio.get_running_loop()
    if EAGER_TASKS:
        return asyncio.Task(coro, loop=loop, eager_start=True)  # type: ignore[call-arg]
    return loop.create_task(coro)


@dataclass(eq=False)
class PendingCall:
    """One agent call: its tool, its task (resolving to the final CallToolResult dict) and when it started and
    settled (``time.monotonic`` seconds).

    Attributes:
        pending_id: "" while the call is running and has not returned; ``"p-<n>"`` once it went pending.
        invocation: the id the loader gave the WebMCP invocation (None when called another way); only a call
            that has not gone pending can be aborted through it.
        can_own_dialogs: whether a dialog that opens while this call runs may belong to it (calls of
            read-only tools and ``jupyter_answer_dialog`` never own one, see :mod:`webmcp_bridge.calls.dialogs`).
        started_running: set by the registry when the task's first step ran (before it, an abort is noted in
            ``abort_requested`` rather than thrown into a coroutine that never started).
        starting: True while :meth:`PendingCalls.run` runs the task's first step (eagerly, inside the caller's
            turn); a :meth:`wake` then (a dialog opened synchronously by the call itself) sets
            ``woken_while_starting``, since nobody waits yet.
    """

    pending_id: str
    tool: str
    task: asyncio.Future[dict[str, Any]]
    started: float
    settled: float | None = None
    collected: bool = field(default=False)
    invocation: str | None = None
    can_own_dialogs: bool = False
    started_running: bool = False
    abort_requested: bool = False
    starting: bool = False
    woken_while_starting: bool = False
    _waiters: list[asyncio.Future[None]] = field(default_factory=list, repr=False)

    def describe(self, now: float) -> dict[str, Any]:
        """``{pendingId, tool, status: running|settled, seconds}`` for get_context."""
        return {
            "pendingId": self.pending_id,
            "tool": self.tool,
            "status": "settled" if self.task.done() else "running",
            "seconds": round(now - self.started, 1),
        }

    def running(self) -> bool:
        """True until the task settled."""
        return not self.task.done()

    def wake(self) -> None:
        """End every :meth:`wait` in progress now (a dialog was given to this call)."""
        if self.starting:
            self.woken_while_starting = True
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    async def wait(self, timeout: float) -> None:
        """Wait until the task settles, :meth:`wake` is called, or ``timeout`` seconds pass (whichever is first).
        Cancelling the waiter never cancels the call itself."""
        if self.task.done():
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            either: list[asyncio.Future[Any]] = [self.task, waiter]
            await asyncio.wait(either, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if waiter in self._waiters:
                self._waiters.remove(waiter)
            waiter.cancel()


class PendingCalls:
    """The calls of one registry: the running ones and the ones that went pending.

    Args:
        keep_seconds: how long a settled result stays collectable.
        keep_count: at most this many settled results are kept (oldest dropped first).
    """

    def __init__(
        self,
        keep_seconds: float = DEFAULT_LIMITS.pending_keep_seconds,
        keep_count: int = DEFAULT_LIMITS.pending_keep_count,
    ) -> None:
        self.keep_seconds = keep_seconds
        self.keep_count = keep_count
        self._calls: dict[str, PendingCall] = {}
        self._ids = itertools.count(1)
        self._running: list[PendingCall] = []
        self._early_aborts: deque[str] = deque(maxlen=EARLY_ABORTS_KEPT)

    def begin(
        self,
        tool: str,
        task: asyncio.Future[dict[str, Any]] | None,
        started: float,
        *,
        invocation: str | None = None,
        can_own_dialogs: bool = False,
    ) -> PendingCall:
        """Track a call from its start until its task settles (it is not pending: it has no id yet).

        ``task`` None: the call is tracked before its task exists (it runs from :meth:`run`); until then its
        ``task`` is a future of the running loop that is not done, so the call counts as running."""
        placeholder = task is None
        if task is None:
            task = asyncio.get_running_loop().create_future()
        call = PendingCall("", tool, task, started, invocation=invocation, can_own_dialogs=can_own_dialogs)
        if invocation is not None and invocation in self._early_aborts:
            self._early_aborts.remove(invocation)
            call.abort_requested = True
        self._running.append(call)
        if not placeholder:
            task.add_done_callback(lambda _task: self._settled(call))
        return call

    def run(self, call: PendingCall, coro: Any) -> asyncio.Task[dict[str, Any]]:
        """Run ``coro`` as the task of ``call`` (tracked by :meth:`begin` with no task), started eagerly
        (:func:`start_eagerly`): when it finishes within its first step the call is settled here, with no
        further turn of the event loop. Returns the task."""
        placeholder = call.task
        call.starting = True
        try:
            task = start_eagerly(coro)
        finally:
            call.starting = False
        call.task = task
        placeholder.cancel()
        if task.done():
            self._settled(call)
        else:
            task.add_done_callback(lambda _task: self._settled(call))
        return task

    def _settled(self, call: PendingCall) -> None:
        call.settled = time.monotonic()
        if call in self._running:
            self._running.remove(call)
        call.wake()

    def promote(self, call: PendingCall, pending_id: str | None = None) -> PendingCall:
        """Make ``call`` pending: give it an id like ``"p-3"`` under which its result is collected, or
        ``pending_id``, the id the loader already answered it with (:data:`START_PENDING_ID`; another id, or one in
        use, is a ValueError). Idempotent."""
        if not call.pending_id:
            if pending_id is not None and (not START_PENDING_ID.fullmatch(pending_id) or pending_id in self._calls):
                raise ValueError(f"not a free id of the loader's: {pending_id[:40]!r}")
            call.pending_id = pending_id or f"p-{next(self._ids)}"
            self._calls[call.pending_id] = call
            self._prune()
        return call

    def add(self, tool: str, task: asyncio.Future[dict[str, Any]], started: float) -> PendingCall:
        """Track ``task`` (already running) as pending under a new id (:meth:`begin` + :meth:`promote`)."""
        return self.promote(self.begin(tool, task, started))

    def running(self) -> list[PendingCall]:
        """The calls whose task has not settled, oldest first (pending or not)."""
        return [c for c in self._running if not c.task.done()]

    def by_invocation(self, invocation: str) -> PendingCall | None:
        """The running call started for this WebMCP invocation, or None."""
        return next((c for c in self._running if c.invocation == invocation and not c.task.done()), None)

    def note_early_abort(self, invocation: str) -> None:
        """Remember an abort for a call that has not begun yet (the abort overtook the call): it begins aborted."""
        self._early_aborts.append(invocation)

    def get(self, pending_id: str) -> PendingCall | None:
        """The call with this id, or None (unknown, or its result was dropped)."""
        self._prune()
        return self._calls.get(pending_id)

    def describe(self) -> list[dict[str, Any]]:
        """Every tracked call, oldest first, for get_context."""
        self._prune()
        now = time.monotonic()
        return [c.describe(now) for c in self._calls.values()]

    def _prune(self) -> None:
        now = time.monotonic()
        settled = [(c.settled, c) for c in self._calls.values() if c.settled is not None]
        expired = {c.pending_id for at, c in settled if now - at > self.keep_seconds}
        extra = max(0, len(settled) - len(expired) - self.keep_count)
        oldest_first = sorted(((at, c) for at, c in settled if c.pending_id not in expired), key=lambda pair: pair[0])
        expired.update(c.pending_id for _, c in oldest_first[:extra])
        for pending_id in expired:
            del self._calls[pending_id]


def pending_payload(call: PendingCall) -> dict[str, Any]:
    """The payload of a result that is not ready yet (:meth:`webmcp_bridge.calls.dialogs.DialogTracker.pending_payload`
    adds the dialog the call waits on, if any)."""
    return {
        "status": "pending",
        "pendingId": call.pending_id,
        "tool": call.tool,
        "message": f"{call.tool} is still running; collect its result with jupyter_wait_for_result.",
    }
