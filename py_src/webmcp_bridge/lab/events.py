"""The page's events for a site's JavaScript: every call and every kernel run a tool started, as DOM events.

``window`` receives a ``CustomEvent`` whose ``detail`` is plain data after each call ends and after each kernel run a
tool started ends:

- ``webmcp-bridge:call``: ``{callId, tool, arguments (a bounded one-line summary), outcome ("ok" or the error
  code; "denied" for a proposal the person denied), duration (seconds)}``;
- ``webmcp-bridge:run``: ``{callId, tool, path, kind ("cell"/"code"), cellId, status, duration (seconds),
  executionCount}`` (:class:`~webmcp_bridge.access.runs.KernelRun`).

A call's event rides in the call's own answer (:mod:`webmcp_bridge.lab.webmcp`), a run's goes through ``events.js``
to the loader's ``emit(type, detailJson)``. Nothing of a cell's or an agent's text is in them beyond the call's
argument summary.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from webmcp_bridge.access.runs import KernelRun
from webmcp_bridge.calls.registry import CallEvent
from webmcp_bridge.lab.ffi import load_half, quietly


def call_detail(event: CallEvent) -> dict[str, Any]:
    """The ``detail`` of ``webmcp-bridge:call``."""
    return {
        "callId": event.call_id,
        "tool": event.tool,
        "arguments": event.arguments,
        "outcome": event.outcome,
        "duration": None if event.duration is None else round(event.duration, 6),
    }


class PageEvents:
    """Dispatches the kernel runs the ``bridge``'s tools started as DOM events through ``events.js`` (given the
    loader's ``ctx`` once) and the loader's ``emit``."""

    def __init__(self, ctx: Any, bridge: Any) -> None:
        self.half = load_half("webmcp_bridge.lab", "events.js", ctx)
        self._detach: list[Callable[[], None]] = [
            bridge.guard.runs.add(lambda run: self._send("run", KernelRun.to_json(run))),
        ]

    def _send(self, kind: str, detail: dict[str, Any]) -> None:
        quietly(lambda: self.half.emit(kind, json.dumps(detail, ensure_ascii=False)))  # a page's listener fails no call

    def dispose(self) -> None:
        """Stop dispatching (a second call does nothing)."""
        for detach in self._detach:
            detach()
        self._detach.clear()
