"""The page's events for a site's JavaScript: every call and every kernel run a tool started, as DOM events.

``window`` receives ``webmcp-bridge:call`` after each call ends and ``webmcp-bridge:run`` after each kernel run a
tool started ends, each a ``CustomEvent`` whose ``detail`` is plain data (parsed from JSON by the loader, so it
holds no live object):

- ``webmcp-bridge:call``: ``{callId, tool, arguments (a bounded one-line summary), outcome ("ok" or the error
  code; "denied" for a proposal the person denied), duration (seconds)}``;
- ``webmcp-bridge:run``: ``{callId, tool, path, kind ("cell"/"code"), cellId, status, duration (seconds),
  executionCount}`` (:class:`~webmcp_bridge.access.runs.KernelRun`).

Python decides what is in them; the loader only dispatches: a call's event rides in the call's own answer
(:mod:`webmcp_bridge.lab.webmcp`, no crossing of its own), a run's through ``events.js``, which hands it to the
loader's ``emit(type, detailJson)`` (this module holds no JS object: the half receives the loader's ``ctx`` once).
Nothing of a cell's or an agent's text is in them beyond the call's argument summary (which the status item's tooltip
shows too).
"""

from __future__ import annotations

import json
import traceback
from collections.abc import Callable
from typing import Any

from webmcp_bridge.access.runs import KernelRun
from webmcp_bridge.calls.registry import CallEvent
from webmcp_bridge.lab.ffi import load_half


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
    """Dispatches the kernel runs tools started as DOM events through ``events.js`` and the loader's ``emit`` (the
    calls' own events are sent by :class:`~webmcp_bridge.lab.webmcp.WebMCPRegistration`, with each call's answer).

    Args:
        ctx: the loader's context (``emit(type, detailJson)``), handed once to ``events.js``.
        bridge: the session (its guard's kernel runs).
    """

    def __init__(self, ctx: Any, bridge: Any) -> None:
        self.half = load_half("webmcp_bridge.lab", "events.js", ctx)
        self._detach: list[Callable[[], None]] = [
            bridge.guard.runs.add(lambda run: self._send("run", KernelRun.to_json(run))),
        ]

    def _send(self, kind: str, detail: dict[str, Any]) -> None:
        try:
            self.half.emit(kind, json.dumps(detail, ensure_ascii=False))
        except Exception:  # a listener of the page never fails a call
            traceback.print_exc()

    def dispose(self) -> None:
        """Stop dispatching (a second call does nothing)."""
        for detach in self._detach:
            detach()
        self._detach.clear()
