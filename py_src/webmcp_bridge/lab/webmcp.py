"""Connecting the registry to the tools registered on ``document.modelContext`` (WebMCP), and the page's DOM events
for a site's scripts.

The loader registers the tools from ``tools.json`` at once, so an agent sees them before Python has started (their
calls wait); :meth:`WebMCPRegistration.register` then hands it, through ``webmcp.js``, the registry's own definitions
and the one dispatcher that serves every call. ``webmcp.js`` holds two Python listeners (in a worker, events):
``onCall(id, name, inputJson, invocation, options)`` starts the call, eagerly, inside the loader's turn of the event
loop (:func:`~webmcp_bridge.calls.pending.start_eagerly`), answered by a later ``answer(id, text)``; ``onCancel
(invocation)`` stops one. The answer, JSON text ``{"result", "report", "event"}``, carries the status item's line and
the ``detail`` of the page's ``webmcp-bridge:call`` event; a call that went pending reports later, through the
loader's ``reportCall`` and ``emit``.

``window`` receives a ``CustomEvent`` whose ``detail`` is plain data after each call ends and after each kernel run a
tool started ends (:class:`PageEvents`, through ``session.js``); nothing of a cell's or an agent's text is in them
beyond the call's argument summary:

- ``webmcp-bridge:call``: ``{callId, tool, arguments (a bounded one-line summary), outcome ("ok" or the error
  code; "denied" for a proposal the person denied), duration (seconds)}``;
- ``webmcp-bridge:run``: ``{callId, tool, path, kind ("cell"/"code"), cellId, status, duration (seconds),
  executionCount}`` (:class:`~webmcp_bridge.access.runs.KernelRun`).
"""

from __future__ import annotations

import asyncio
import functools
import json
import traceback
from collections.abc import Callable
from typing import Any

from webmcp_bridge.access.runs import KernelRun
from webmcp_bridge.calls.pending import START_PENDING_ID, start_eagerly
from webmcp_bridge.calls.registry import CallEvent, Registry, envelope, result_json
from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.lab.ffi import Proxies, is_nullish, load_half, quietly


def call_options(text: str | None) -> tuple[str | None, float | None]:
    """``(pending_id, wait_seconds)`` of the loader's options for a call it held while Python was starting
    (docs/loader.md, "No client waits past a bound"): JSON text ``{"pendingId": "s-<n>"}`` (the call was answered
    pending with that id, :data:`~webmcp_bridge.calls.pending.START_PENDING_ID`) or ``{"waitSeconds": s}`` (what is
    left of its bound, 0 to 3600); None for each part that is missing or not that."""
    if not text:
        return None, None
    try:
        options = json.loads(text)
    except ValueError:
        return None, None
    if not isinstance(options, dict):
        return None, None
    pending_id = options.get("pendingId")
    wait = options.get("waitSeconds")
    if not (isinstance(pending_id, str) and START_PENDING_ID.fullmatch(pending_id)):
        pending_id = None
    if isinstance(wait, bool) or not isinstance(wait, (int, float)) or not 0 <= wait <= 3600:
        wait = None
    return pending_id, None if wait is None else float(wait)


def call_detail(event: CallEvent) -> dict[str, Any]:
    """The ``detail`` of ``webmcp-bridge:call``."""
    return {
        "callId": event.call_id,
        "tool": event.tool,
        "arguments": event.arguments,
        "outcome": event.outcome,
        "duration": None if event.duration is None else round(event.duration, 6),
    }


def report_line(event: CallEvent) -> str:
    """The status item's line for a finished call: ``"<tool> <outcome> <ms> ms"``."""
    return f"{event.tool} {event.outcome} {round((event.duration or 0) * 1000)} ms"


def structured_for(runtime: str) -> bool:
    """Whether results carry ``structuredContent`` on the page's WebMCP runtime: not on the browser's native WebMCP,
    whose clients show the model the whole result (so the payload goes once, as the text block); on an MCP server in
    the page (MCP-B), whose clients show one of the two, both (docs/TOOLS.md, "The result envelope")."""
    return runtime != "native"


def answer_json(
    result: dict[str, Any], report: str | None, event: dict[str, Any] | None, *, structured: bool = True
) -> str:
    """The dispatcher's answer as JSON text ``{"result", "report", "event"}``, the result written once by
    :func:`~webmcp_bridge.calls.registry.result_json`."""
    report_text, event_text = json.dumps(report, ensure_ascii=False), json.dumps(event, ensure_ascii=False)
    return f'{{"result":{result_json(result, structured=structured)},"report":{report_text},"event":{event_text}}}'


class WebMCPRegistration:
    """The registry's tools as registered on the page's ``modelContext`` through the loader (``loader``: its ctx,
    handed once to ``webmcp.js``). When an invocation's WebMCP signal aborts, :meth:`_abort` stops its call
    (:meth:`Registry.cancel`). ``connect`` also hands the loader the registry's input cap (``Limits.input_bytes``):
    it refuses longer arguments (TOO_LARGE) before they are copied into Python.
    """

    def __init__(self, registry: Registry, loader: Any) -> None:
        self.registry = registry
        self.half = load_half("webmcp_bridge.lab", "webmcp.js", loader)
        self._proxies = Proxies()  # the call and cancel listeners, while connected
        self._dispatch: Any = None
        self._cancel: Any = None
        #: invocation being dispatched -> (report line, call event detail), once known
        self._reports: dict[str, tuple[str, dict[str, Any]] | None] = {}
        self._unhook: Callable[[], None] | None = None  # the after hook, while connected
        self._structured = True  # results carry structuredContent (structured_for the page's runtime, at register)

    def _after(self, event: CallEvent) -> None:
        """The registry's after hook: the report line and the call event go back with the call's answer, or to the
        loader at once for a call that went pending."""
        line, detail = report_line(event), call_detail(event)
        if event.invocation is not None and event.invocation in self._reports:
            self._reports[event.invocation] = (line, detail)
            return
        self.half.reportCall(line)
        quietly(lambda: self.half.emit("call", json.dumps(detail, ensure_ascii=False)))  # fails no call

    def _abort(self, invocation: Any) -> None:
        """The WebMCP signal of ``invocation`` aborted."""
        quietly(lambda: self.registry.cancel(str(invocation)))  # never raise into the page's abort handler

    def _call(self, call_id: Any, name: Any, arguments: Any, invocation: Any = None, options: Any = None) -> None:
        """``webmcp.js``'s dispatcher: serve call ``call_id`` and answer it (module docstring; a bridge failure is an
        INTERNAL_ERROR result). ``invocation``: the loader's id of the WebMCP invocation; ``options``:
        :func:`call_options`."""
        invocation_id = None if is_nullish(invocation) else str(invocation)
        held = None if is_nullish(options) else str(options)
        task = start_eagerly(self._serve(str(name), str(arguments), invocation_id, held))
        answer = functools.partial(self._answer, int(call_id))
        if task.done():
            answer(task)
        else:
            task.add_done_callback(answer)

    def _answer(self, call_id: int, task: asyncio.Future[str]) -> None:
        """Hand call ``call_id``'s ended task's answer to ``webmcp.js``."""
        if task.cancelled():
            self.half.fail(call_id, "the call was cancelled")
            return
        error = task.exception()
        if error is not None:  # _serve catches every failure; this keeps a broken task from leaving the call waiting
            self.half.fail(call_id, f"{type(error).__name__}: {error}"[:200])
            return
        self.half.answer(call_id, task.result())

    async def _serve(self, name: str, arguments: str, invocation: str | None, options: str | None) -> str:
        pending_id, wait_seconds = call_options(options)
        if invocation is not None:  # set before the call's first step, in which the after hook may already run
            self._reports[invocation] = None
        try:
            result = await self.registry.call(
                name, arguments, invocation=invocation, pending_id=pending_id, wait_seconds=wait_seconds
            )
        except Exception:  # Registry.call never raises; this guards the agent's call anyway
            traceback.print_exc()
            result = envelope(
                ToolError(ErrorCode.INTERNAL_ERROR, "The bridge failed unexpectedly.").payload(), is_error=True
            )
        after = self._reports.pop(invocation, None) if invocation is not None else None
        report, detail = after if after is not None else (None, None)
        return answer_json(result, report, detail, structured=self._structured)

    def register(self, definitions: list[dict[str, Any]] | None = None) -> int:
        """Connect the dispatcher and make the registered tools match ``definitions`` (the registry's, if
        not given); returns how many tools are registered. Calling it again first unregisters the old set."""
        self.unregister()
        self._structured = structured_for(str(self.half.runtime()))
        self._unhook = self.registry.on_after(self._after)
        self._dispatch = self._proxies.keep(self._call)
        self._cancel = self._proxies.keep(self._abort)
        return self._connect(definitions)

    def update(self) -> int:
        """Make the registered tools match the registry's with the same dispatcher (only tools that differ are added
        or removed); returns how many are registered. Registers from scratch when not connected yet."""
        return self.register() if self._dispatch is None else self._connect(None)

    def _connect(self, definitions: list[dict[str, Any]] | None) -> int:
        chosen = self.registry.definitions(fresh=False) if definitions is None else definitions
        text = json.dumps(chosen, ensure_ascii=False)
        return int(self.half.connect(text, self._dispatch, self._cancel, self.registry.limits.input_bytes))

    def unregister(self) -> None:
        """Remove every tool, stop reporting calls and free the proxies."""
        if self._unhook is not None:
            self._unhook()
            self._unhook = None
        if self._dispatch is not None:
            self.half.disconnect()
            self._proxies.clear()
            self._dispatch = self._cancel = None


class PageEvents:
    """Dispatches the kernel runs the ``bridge``'s tools started as ``webmcp-bridge:run`` events through
    ``session.js`` (given the loader's ``ctx`` once) and the loader's ``emit``."""

    def __init__(self, ctx: Any, bridge: Any) -> None:
        self.half = load_half("webmcp_bridge.lab", "session.js", ctx)
        self._detach: Callable[[], None] | None = bridge.guard.runs.add(self._run)

    def _run(self, run: KernelRun) -> None:
        detail = json.dumps(KernelRun.to_json(run), ensure_ascii=False)
        quietly(lambda: self.half.emit("run", detail))  # a page's listener fails no call

    def dispose(self) -> None:
        """Stop dispatching (a second call does nothing)."""
        if self._detach is not None:
            self._detach()
            self._detach = None
