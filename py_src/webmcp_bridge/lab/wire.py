"""The worker's transport (docs/WORKER.md, "The crossing protocol"): in the bridge's dedicated worker every call of
a JS half is a message to the page's main thread (:mod:`webmcp_bridge.lab.messages`), carried by
``lab/worker_boot.js`` and answered by ``lab/worker.js``.

A synchronous crossing goes through shared buffers (``Atomics.wait``) in a cross-origin isolated worker (mode
"sab"), else by message waited for with ``pyodide.ffi.run_sync`` (JSPI, mode "jspi"), else it is refused (mode
"none"). ``run_sync`` waits only inside a promising call: :func:`start` and :func:`invoke` are entered with
``callPromising`` and Pyodide's event loop runs every asyncio task step as one, but a plain call from JS
(:func:`event`) is not. :data:`ENTRIES` are what the page may run in the worker (``worker.js``'s ``invoke(name,
text)``): the session, and for the browser tests of the crossings and for diagnosis ``page_calls`` and
``half_calls``.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

from webmcp_bridge.core.errors import ToolError
from webmcp_bridge.lab import remote_half
from webmcp_bridge.lab.ffi import Proxies, awaiting, load_half
from webmcp_bridge.lab.messages import HostFailure, WireError, answer_value, dumps, json_value

#: the synchronous crossing of a worker: shared memory, JSPI's run_sync, or none
MODES = ("sab", "jspi", "none")


class WorkerTransport:
    """A :class:`~webmcp_bridge.lab.messages.Transport` in the bridge's worker, its one wire, in crossing ``mode``
    (:data:`MODES`) over ``worker_boot.js``'s ``syncSend`` (blocking; "sab"), ``asyncSend`` (a promise of the
    answer), ``pyodide.ffi.run_sync`` waiting for ``syncByMessage`` ("jspi"; default ``async_send``) where
    ``can_wait()`` (``can_run_sync``, asked before anything is sent). ``crossings`` and ``events`` count the requests
    sent by method and the page's events no half took, by name. Raises ValueError for an unknown mode or one whose
    function is missing."""

    def __init__(
        self,
        mode: str,
        sync_send: Callable[[str], Any] | None,
        async_send: Callable[[str], Awaitable[Any]],
        run_sync: Callable[[Awaitable[Any]], Any] | None = None,
        sync_by_message: Callable[[str], Awaitable[Any]] | None = None,
        can_wait: Callable[[], bool] = lambda: True,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown crossing mode {mode!r} (one of {MODES})")
        if (mode == "sab" and sync_send is None) or (mode == "jspi" and run_sync is None):
            raise ValueError(f"the crossing mode {mode!r} needs its function")
        self.mode = mode
        self._sync_send = sync_send
        self._async_send = async_send
        self._run_sync = run_sync
        self._sync_by_message = async_send if sync_by_message is None else sync_by_message
        self._can_wait = can_wait
        self.crossings: Counter[str] = Counter()
        self.events: Counter[str] = Counter()
        self._next = 0

    def send(self, message: str) -> str:
        """A synchronous crossing: the page's answer (JSON text). Raises WireError in mode "none", and in mode "jspi"
        where ``run_sync`` cannot wait (nothing is sent then)."""
        if self.mode == "sab" and self._sync_send is not None:
            return str(self._sync_send(message))
        if self.mode == "jspi" and self._run_sync is not None:
            if not self._can_wait():
                raise WireError(
                    "a synchronous crossing cannot wait here: JSPI waits only in a promising call (an asyncio task's "
                    "step, or an entry called with callPromising), not in a plain call from JS"
                )
            return str(self._run_sync(self._sync_by_message(message)))
        raise WireError("this worker has no synchronous crossing (neither cross-origin isolation nor JSPI)")

    async def send_async(self, message: str) -> str:
        return str(await self._async_send(message))

    def request(self, call: dict[str, Any]) -> dict[str, Any]:
        """``call`` (``{"target", "method", "args"}``) as a message with a new id; counted by its method."""
        self._next += 1
        self.crossings[str(call["method"])] += 1
        return {"id": self._next, "target": str(call["target"]), "method": str(call["method"]), "args": call["args"]}

    def on_event(self, text: str) -> None:
        """Count an event no half took (JSON text ``{"event": name}``). Raises WireError for another shape."""
        try:
            self.events[str(json.loads(text)["event"])] += 1
        except (ValueError, KeyError, TypeError):
            raise WireError("an event is a JSON object {event: name}") from None


_wire: WorkerTransport | None = None


def crossing_mode(isolated: bool, has_sync_send: bool, can_run_sync: bool) -> str:
    """The synchronous crossing a worker uses (:data:`MODES`, docs/WORKER.md, "Without cross-origin isolation")."""
    if isolated and has_sync_send:
        return "sab"
    if can_run_sync:
        return "jspi"
    return "none"


def start() -> str:
    """Make the worker's wire (once, by ``worker_boot.js``, once the wheels are installed); returns its mode."""
    global _wire
    import js
    from pyodide.ffi import can_run_sync, run_sync

    from webmcp_bridge.lab.ffi import is_nullish

    carrier = js.webmcpBridgeWorker
    sync_send = None if is_nullish(carrier.syncSend) else carrier.syncSend
    mode = crossing_mode(bool(carrier.isolated), sync_send is not None, can_run_sync())
    transport = WorkerTransport(mode, sync_send, carrier.asyncSend, run_sync, carrier.syncByMessage, can_run_sync)
    _wire = transport
    remote_half.install(transport)  # from now on load_half and Proxies work through the page (lab/ffi.py)
    return mode


def wire() -> WorkerTransport:
    """The wire :func:`start` made. Raises WireError before that."""
    if _wire is None:
        raise WireError("the worker's wire is not started")
    return _wire


def _on_event(text: str) -> None:
    halves = remote_half.current()
    if halves is None or not halves.on_event(text):
        wire().on_event(text)


def event(text: str) -> None:
    """An event of the page (JSON text ``{"event": name}``), dispatched on the worker's loop after the Python running
    now (never inside a crossing that waits): a callback's calls it, any other is counted (:class:`WorkerTransport`)."""
    wire()  # raises before the wire started
    asyncio.get_event_loop().call_soon(_on_event, str(text))


def _error(exc: BaseException) -> dict[str, Any]:
    """A call's failure as its result: ``{"error": {type, code, message, details}}``."""
    if isinstance(exc, ToolError):
        body = {"type": "ToolError", "code": exc.code.value, "message": exc.message, "details": exc.details}
    elif isinstance(exc, HostFailure):
        body = {"type": "HostFailure", "code": exc.kind, "message": str(exc), "details": {}}
    else:
        body = {"type": type(exc).__name__, "code": "", "message": str(exc), "details": {}}
    return {"error": json_value(body, "the failure")}


async def _run_calls(current: WorkerTransport, calls: list[Any]) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []
    for call in calls:
        try:
            message = current.request({**call, "args": json_value(call.get("args", {}), "the arguments")})
            if call.get("async"):
                text = await current.send_async(dumps(message))
            else:
                text = current.send(dumps(message))
            results.append({"value": answer_value(text, message["id"])})
        except Exception as exc:  # each call's failure is its result
            results.append(_error(exc))
    return results


async def page_calls(text: str) -> str:
    """Send requests to the page as they are, one crossing each, in order (the transport's browser test, and a
    diagnosis). ``text``: JSON ``{"calls": [{"target", "method", "args", "async": bool}, ...], "task": bool}``: a
    synchronous crossing each, an asynchronous one with ``"async"``; with ``"task"`` the calls run in an asyncio task
    this entry awaits, as a tool's handler may. Returns JSON ``{"mode", "results": [{"value"} | {"error": {"type",
    "code", "message", "details"}}], "crossings": {method: count}, "events": {name: count}}`` (counted since the wire
    started). A failure of one call is its result. Raises WireError for text of another shape."""
    current = wire()
    try:
        request = json.loads(text)
        calls, in_task = [dict(c) for c in request["calls"]], bool(request.get("task", False))
        for call in calls:
            str(call["target"]), str(call["method"])
    except (ValueError, KeyError, TypeError, AttributeError):
        raise WireError("page_calls takes {calls: [{target, method, args, async}, ...], task: bool}") from None
    if in_task:
        results = await asyncio.ensure_future(_run_calls(current, calls))
    else:
        results = await _run_calls(current, calls)
    return json.dumps(
        {
            "mode": current.mode,
            "results": results,
            "crossings": dict(current.crossings),
            "events": dict(current.events),
        }
    )


class _HalfDiagnosis:
    """What :func:`half_calls` keeps between its calls: halves by name, callbacks by label, their calls' arguments."""

    def __init__(self) -> None:
        self.halves: dict[str, Any] = {}
        self.proxies = Proxies()
        self.callbacks: dict[str, Any] = {}
        self.seen: dict[str, list[Any]] = {}

    def callback(self, label: str, then: dict[str, Any] | None) -> Any:
        if label not in self.callbacks:
            self.seen[label] = []

            def record(*args: Any) -> None:
                # a synchronous crossing from the event's dispatch, its result recorded; under JSPI another call
                # runs while it waits, so the arguments are recorded with its result, never before it
                if then is not None:
                    self.seen.setdefault(f"{label}:then", []).append(_outcome(functools.partial(self.invoke, then)))
                self.seen[label].append(list(args))

            self.callbacks[label] = self.proxies.keep(record)
        return self.callbacks[label]

    def argument(self, value: Any) -> Any:
        if isinstance(value, dict) and "$callback" in value:
            return self.callback(str(value["$callback"]), value.get("then"))
        return value

    def load(self, entry: dict[str, Any]) -> None:
        ctx = True if entry.get("attach") else None  # in the worker any ctx means "the page's"
        self.halves[str(entry["as"])] = load_half(str(entry["package"]), str(entry["filename"]), ctx)

    def invoke(self, call: dict[str, Any]) -> Any:
        """``half.method(*args)`` of ``{"half", "method", "args", "await"}`` (its awaitable with ``"await"``)."""
        half = self.halves[str(call["half"])]
        target = awaiting(half) if call.get("await") else half
        return getattr(target, str(call["method"]))(*[self.argument(a) for a in call.get("args", [])])


def _outcome(get: Callable[[], Any]) -> dict[str, Any]:
    """``{"value": get()}``, or its failure as the result."""
    try:
        return {"value": json_value(get(), "the value")}
    except Exception as exc:
        return _error(exc)


_diagnosis: _HalfDiagnosis | None = None


async def half_calls(text: str) -> str:
    """Load JS halves and call their methods through the remote halves (the crossing's browser test, and a diagnosis).
    ``text``: JSON ``{"load": [{"as", "package", "filename", "attach": bool}], "calls": [{"half", "method", "args",
    "await": bool}], "remove": [label, ...]}`` (each key optional). Each call is ``half.method(*args)``, or ``await
    awaiting(half).method(*args)`` with ``"await"``; an argument ``{"$callback": label, "then": call}`` is a callback
    kept by a :class:`~webmcp_bridge.lab.ffi.Proxies` (one per label, recording its calls' arguments; with ``then``, a
    synchronous call made from each of its calls, results under ``"<label>:then"``); ``remove`` destroys them. Halves
    and callbacks are kept between calls. Returns JSON ``{"loaded": [{"value": null} | {"error"}], "results": [{"value"}
    | {"error"}], "callbacks": {label: [[arg, ...], ...]}, "alive": <callbacks kept>, "crossings": {half: {method:
    count}}}``. A failure of one load or call is its result. Raises WireError for text of another shape."""
    global _diagnosis
    wire()
    halves = remote_half.current()
    if halves is None:
        raise WireError("the worker's remote halves are not installed")
    try:
        request = json.loads(text)
        loads, calls, removes = list(request.get("load", [])), list(request.get("calls", [])), request.get("remove", [])
    except (ValueError, TypeError, AttributeError):
        raise WireError("half_calls takes {load: [...], calls: [...], remove: [...]}") from None
    state = _diagnosis = _diagnosis or _HalfDiagnosis()
    loaded = [_outcome(functools.partial(state.load, entry)) for entry in loads]
    results: list[dict[str, Any]] = []
    for call in calls:
        try:
            value = state.invoke(call)
            results.append({"value": json_value(await value if call.get("await") else value, "the value")})
        except Exception as exc:  # each call's failure is its result
            results.append(_error(exc))
    for label in removes:
        callback = state.callbacks.pop(str(label), None)
        if callback is not None:
            state.proxies.remove(callback)
    return json.dumps(
        {
            "loaded": loaded,
            "results": results,
            "callbacks": state.seen,
            "alive": len(halves.callbacks),
            "crossings": {name: dict(counts) for name, counts in halves.crossings.items()},
        }
    )


#: what stands for the loader's ctx in the worker: it has no attribute (the page holds the real one); handed to
#: :func:`webmcp_bridge.lab.ffi.load_half` it only says "attach this half to the page's ctx"
PAGE_CONTEXT = object()

_session: Any = None  # the running LabSession (session_start)


async def session_start(text: str) -> str:
    """Start the page's bridge in this worker (a session already running is stopped first; ``text`` is ignored).
    Returns the session's reply (lab/session.py). Raises what the start raised, and WireError before the wire
    started."""
    global _session
    del text
    wire()
    from webmcp_bridge.lab import session as lab_session

    if _session is not None:
        _session.stop()
        _session = None
    _session = await lab_session.start(PAGE_CONTEXT)
    return str(_session.reply)


async def session_stop(text: str) -> str:
    """Stop the session :func:`session_start` started; returns JSON ``{"stopped": bool}``."""
    global _session
    del text
    running, _session = _session, None
    if running is not None:
        running.stop()
    return json.dumps({"stopped": running is not None})


#: the entries of :func:`invoke`: name -> a function of JSON text to JSON text (or its awaitable)
ENTRIES: dict[str, Callable[[str], Awaitable[str]]] = {
    "session_start": session_start,
    "session_stop": session_stop,
    "page_calls": page_calls,
    "half_calls": half_calls,
}


def invoke(name: str, text: str) -> Awaitable[str]:
    """Run the entry ``name`` on ``text`` as a task on the worker's loop (``worker.js`` ``invoke``). Raises WireError
    for a name not in :data:`ENTRIES`."""
    entry = ENTRIES.get(str(name))
    if entry is None:
        raise WireError(f"the worker has no entry {name!r}")
    return asyncio.ensure_future(entry(str(text)))
