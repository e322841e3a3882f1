"""Calls that outlive ``executionTimeout``: they return ``pending`` and keep running.

Rule (FEATURES.md): a call still running after ``executionTimeout`` (default 20 s) returns
``{status: "pending", pendingId, tool, message}`` and keeps running; ``jupyter_wait_for_result`` collects
it. Settled results are kept for a bounded time and count (``Limits.pending_keep_seconds``,
``Limits.pending_keep_count``); the oldest settled ones go first, running calls are never dropped.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from dataclasses import dataclass, field
from typing import Any


@dataclass
class PendingCall:
    """One call that went pending: its tool, its task (resolving to the final CallToolResult dict) and
    when it started and settled (``time.monotonic`` seconds)."""

    pending_id: str
    tool: str
    task: "asyncio.Future[dict[str, Any]]"
    started: float
    settled: float | None = None
    collected: bool = field(default=False)

    def describe(self, now: float) -> dict[str, Any]:
        """``{pendingId, tool, status: running|settled, seconds}`` for get_context."""
        return {"pendingId": self.pending_id, "tool": self.tool, "status": "settled" if self.task.done() else "running",
                "seconds": round(now - self.started, 1)}


class PendingCalls:
    """The pending calls of one registry.

    Args:
        keep_seconds: how long a settled result stays collectable.
        keep_count: at most this many settled results are kept (oldest dropped first).
    """

    def __init__(self, keep_seconds: float = 600.0, keep_count: int = 50) -> None:
        self.keep_seconds = keep_seconds
        self.keep_count = keep_count
        self._calls: dict[str, PendingCall] = {}
        self._ids = itertools.count(1)

    def add(self, tool: str, task: "asyncio.Future[dict[str, Any]]", started: float) -> PendingCall:
        """Track ``task`` (already running) under a new id like ``"p-3"``."""
        call = PendingCall(f"p-{next(self._ids)}", tool, task, started)
        task.add_done_callback(lambda _t: setattr(call, "settled", time.monotonic()))
        self._calls[call.pending_id] = call
        self._prune()
        return call

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
        settled = [c for c in self._calls.values() if c.settled is not None]
        expired = {c.pending_id for c in settled if now - c.settled > self.keep_seconds}
        extra = max(0, len(settled) - len(expired) - self.keep_count)
        expired.update(c.pending_id for c in sorted((c for c in settled if c.pending_id not in expired), key=lambda c: c.settled)[:extra])
        for pending_id in expired:
            del self._calls[pending_id]


def pending_payload(call: PendingCall) -> dict[str, Any]:
    """The payload of a result that is not ready yet."""
    return {
        "status": "pending",
        "pendingId": call.pending_id,
        "tool": call.tool,
        "message": f"{call.tool} is still running; collect its result with jupyter_wait_for_result.",
    }
