"""The worker's transport (``lab/wire.py``) under CPython: which synchronous crossing a worker uses (shared memory,
JSPI's ``run_sync``, or none, when the loader keeps the bridge on the main thread), that each mode carries a
host-protocol call to the test harness's :class:`~host_wire.WireServer` and back, and the ``page_calls`` entry. The
browser's own crossings (Atomics.wait, JSPI) are ``playwright-tests/test_worker_wire.py``'s.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from host_memory import MemoryWorkspace
from host_remote import RemoteHost
from host_wire import WireServer
from webmcp_bridge.lab.messages import WireError
from webmcp_bridge.lab.wire import MODES, WorkerTransport, crossing_mode


@pytest.mark.parametrize(
    ("isolated", "has_sync_send", "can_run_sync", "mode"),
    [
        (True, True, True, "sab"),
        (True, True, False, "sab"),
        (True, False, True, "jspi"),  # isolated, yet no shared buffers were made
        (False, False, True, "jspi"),  # the no-headers server in a browser with JSPI
        (False, True, True, "jspi"),  # a sync_send without isolation is never used
        (False, False, False, "none"),  # neither: the loader keeps the main thread
        (True, False, False, "none"),
    ],
)
def test_the_crossing_a_worker_uses(isolated: bool, has_sync_send: bool, can_run_sync: bool, mode: str) -> None:
    assert crossing_mode(isolated, has_sync_send, can_run_sync) == mode
    assert mode in MODES


def _server() -> WireServer:
    ws = MemoryWorkspace({"notes/a.txt": "alpha\nbeta\n"})
    return WireServer(ws, ws.dialogs)


def _transport(
    mode: str, server: WireServer, waits: list[str], can_wait: Callable[[], bool] = lambda: True
) -> WorkerTransport:
    """A WorkerTransport whose page is ``server``: sync_send answers at once (the shared buffers), async_send is a
    coroutine (the page's promise, answered by the server's asynchronous side), sync_by_message one answered by its
    synchronous side (as the page answers a synchronous request sent by message), run_sync runs an awaitable to
    its end and records that it waited."""

    async def async_send(text: str) -> str:
        return await server.answer_async(text)

    async def sync_by_message(text: str) -> str:
        waits.append("by message")
        return server.answer(text)

    def run_sync(awaitable: Awaitable[Any]) -> Any:
        waits.append("run_sync")
        loop = asyncio.new_event_loop()
        try:
            return loop.run_until_complete(awaitable)
        finally:
            loop.close()

    return WorkerTransport(mode, server.answer, async_send, run_sync, sync_by_message, can_wait)


@pytest.mark.parametrize("mode", ["sab", "jspi"])
def test_each_mode_carries_sync_and_async_calls(mode: str) -> None:
    """A synchronous host call (open_documents) and an asynchronous one (read_text) cross in either mode; only JSPI
    sends the synchronous one by message and waits for it through run_sync."""
    waits: list[str] = []
    host = RemoteHost(_transport(mode, _server(), waits))
    assert host.open_documents() == []
    assert asyncio.run(host.read_text("notes/a.txt", 100)) == "alpha\nbeta\n"
    assert host.crossings == {"open_documents": 1, "read_text": 1}
    assert waits == (["run_sync", "by message"] if mode == "jspi" else [])


def test_a_jspi_crossing_where_run_sync_cannot_wait_is_refused_before_anything_is_sent() -> None:
    """In a plain call from JS (can_run_sync false) a synchronous call is a WireError and nothing crosses; where it
    can wait again, the same call crosses."""
    waits: list[str] = []
    inside_promising = [False]
    host = RemoteHost(_transport("jspi", _server(), waits, lambda: inside_promising[0]))
    with pytest.raises(WireError, match="cannot wait here"):
        host.open_documents()
    assert waits == []  # not sent, not waited for
    inside_promising[0] = True
    assert host.open_documents() == []
    assert waits == ["run_sync", "by message"]


def test_no_synchronous_crossing_refuses_sync_calls_and_keeps_async_ones() -> None:
    """Mode "none": a synchronous call is a WireError (nothing crosses); an asynchronous call still crosses."""
    host = RemoteHost(_transport("none", _server(), []))
    with pytest.raises(WireError, match="no synchronous crossing"):
        host.open_documents()
    assert asyncio.run(host.read_text("notes/a.txt", 100)) == "alpha\nbeta\n"


@pytest.mark.parametrize(("mode", "sync_send", "run_sync"), [("sab", None, None), ("jspi", None, None), ("x", 1, 1)])
def test_a_mode_without_its_function_is_refused(mode: str, sync_send: Any, run_sync: Any) -> None:
    async def async_send(text: str) -> str:
        return text

    with pytest.raises(ValueError):
        WorkerTransport(mode, sync_send, async_send, run_sync)


def test_the_session_entries_need_the_wire_and_a_stop_without_a_session_stops_nothing(monkeypatch) -> None:
    """The loader's worker mode runs ``session_start`` once the worker is up: before the wire started it is refused
    (WireError, nothing imported or started); ``session_stop`` with no session running answers it stopped nothing."""
    from webmcp_bridge.lab import wire

    monkeypatch.setattr(wire, "_wire", None)
    with pytest.raises(WireError, match="not started"):
        asyncio.run(wire.session_start("{}"))
    assert asyncio.run(wire.session_stop("{}")) == '{"stopped": false}'
    assert {"session_start", "session_stop"} <= set(wire.ENTRIES)
    assert not hasattr(wire.PAGE_CONTEXT, "app") and not hasattr(wire.PAGE_CONTEXT, "__dict__")


def test_page_calls_sends_requests_as_they_are_and_reports_each_answer(monkeypatch) -> None:
    """The diagnosis entry the browser's transport test drives: each request crosses as written (synchronously, or
    awaited with ``async``), its answer is a value or the failure raised again (a ToolError with its code and
    details, a page's exception as a HostFailure); crossings are counted by method and the page's events no half took
    by name."""
    from webmcp_bridge.lab import wire

    def page(text: str) -> str:
        message = json.loads(text)
        if message["method"] == "fails":
            body = {
                "kind": "tool",
                "code": "OUTPUT_NOT_FOUND",
                "message": "No such output.",
                "details": {"cellId": "x"},
            }
            return json.dumps({"id": message["id"], "error": body})
        if message["method"] == "throws":
            body = {"kind": "host", "code": "TypeError", "message": "the panel is gone", "details": {}}
            return json.dumps({"id": message["id"], "error": body})
        return json.dumps({"id": message["id"], "value": [message["target"], message["args"]]})

    async def page_async(text: str) -> str:
        return page(text)

    current = WorkerTransport("sab", page, page_async)
    monkeypatch.setattr(wire, "_wire", current)
    calls = [
        {"target": "host", "method": "read", "args": {"path": "a"}},
        {"target": "nb-1", "method": "read", "args": [1, "b"], "async": True},
        {"target": "host", "method": "fails"},
        {"target": "host", "method": "throws", "async": True},
    ]
    current.on_event(json.dumps({"event": "dialogs"}))
    report = json.loads(asyncio.run(wire.page_calls(json.dumps({"calls": calls, "task": True}))))
    assert report["mode"] == "sab"
    assert report["results"][:2] == [{"value": ["host", {"path": "a"}]}, {"value": ["nb-1", [1, "b"]]}]
    assert report["results"][2]["error"] == {
        "type": "ToolError", "code": "OUTPUT_NOT_FOUND", "message": "No such output.", "details": {"cellId": "x"}
    }  # fmt: skip
    assert report["results"][3]["error"]["type"] == "HostFailure"
    assert "the panel is gone" in report["results"][3]["error"]["message"]
    assert report["crossings"] == {"read": 2, "fails": 1, "throws": 1}
    assert report["events"] == {"dialogs": 1}
    with pytest.raises(WireError, match="page_calls takes"):
        asyncio.run(wire.page_calls('{"calls": [{"method": "x"}]}'))
