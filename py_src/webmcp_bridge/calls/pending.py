"""Agent calls while they run, and the ones that outlive ``executionTimeout`` and return ``pending`` (docs/TOOLS.md,
"Pending calls"). Every call is tracked from its start (the dialog rules need the running calls, an abort its task);
a pending call is collected by id, no longer tied to its invocation; settled results are kept for
``Limits.pending_keep_seconds`` and at most ``pending_keep_count`` (running calls never dropped).
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

#: The loader answers ``pending`` itself while Python is not up within ``START_ANSWER_MS`` (docs/loader.md), with
#: ids ``s-<n>`` (ours are ``p-<n>``) handed to :meth:`PendingCalls.promote` later; it fills the message's ``{tool}``
#: and ``{step}``; the build writes both into ``bridge.json`` (``startPending``).
START_PENDING_ID = re.compile(r"s-[1-9][0-9]{0,8}")
START_PENDING_MESSAGE = (
    "{tool} waits for the bridge to start ({step}); collect its result with jupyter_wait_for_result."
)

#: Python >= 3.12 starts a task eagerly when asked (``asyncio.Task(..., eager_start=True)``); Pyodide's is 3.14
EAGER_TASKS = sys.version_info >= (3, 12)


def start_eagerly(coro: Any) -> asyncio.Task[Any]:
    """A task running its first step at once, up to its first suspension (Python >= 3.12), so a call that never
    waits finishes in the caller's turn: in Pyodide each scheduled step is one more browser task, and page work
    may run before it."""
    loop = asyncio.get_running_loop()
    if EAGER_TASKS:
        return asyncio.Task(coro, loop=loop, eager_start=True)  # type: ignore[call-arg]
    return loop.create_task(coro)


@dataclass(eq=False)
class PendingCall:
    """One agent call (times ``time.monotonic``): ``pending_id`` "" until pending; ``invocation`` the loader's id;
    ``started_running``: its first step ran (before, an abort is only noted in ``abort_requested``); ``starting``: the
    eager first step runs now, so a :meth:`wake` sets ``woken_while_starting`` (nobody waits yet)."""

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

    def wake(self) -> None:
        """End every :meth:`wait` in progress now (a dialog was given to this call)."""
        if self.starting:
            self.woken_while_starting = True
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    async def wait(self, timeout: float) -> None:
        """Wait until the task settles, :meth:`wake`, or ``timeout`` seconds; never cancels the call."""
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
    """The calls of one registry: running, and pending (settled ones kept ``keep_seconds``, ``keep_count`` at most)."""

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
        """Track a call until its task settles. ``task`` None: a not-done placeholder until :meth:`run`."""
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
        """Run ``coro`` as ``call``'s task, eagerly (settled here when its first step finishes it)."""
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
        """Make ``call`` pending under a new ``"p-<n>"`` or the loader's ``pending_id`` (:data:`START_PENDING_ID`;
        another or a used one: ValueError). Idempotent."""
        if not call.pending_id:
            if pending_id is not None and (not START_PENDING_ID.fullmatch(pending_id) or pending_id in self._calls):
                raise ValueError(f"not a free id of the loader's: {pending_id[:40]!r}")
            call.pending_id = pending_id or f"p-{next(self._ids)}"
            self._calls[call.pending_id] = call
            self._prune()
        return call

    def running(self) -> list[PendingCall]:
        """The calls whose task has not settled, oldest first (pending or not)."""
        return [c for c in self._running if not c.task.done()]

    def by_invocation(self, invocation: str) -> PendingCall | None:
        """The running call started for this WebMCP invocation, or None."""
        return next((c for c in self._running if c.invocation == invocation and not c.task.done()), None)

    def note_early_abort(self, invocation: str) -> None:
        """Remember an abort that overtook its call: the call begins aborted."""
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
    """The payload of a result not ready yet."""
    return {
        "status": "pending",
        "pendingId": call.pending_id,
        "tool": call.tool,
        "message": f"{call.tool} is still running; collect its result with jupyter_wait_for_result.",
    }
