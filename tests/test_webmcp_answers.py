"""lab/webmcp.py's side of the dispatcher: Python is handed each call by a listener and answers it by a later call of
``webmcp.js`` (``answer(id, text)``), never by a return value, so that in a worker the call and its answer are two
messages. A call that never waits is answered before the listener returns (the page's main thread then returns the
text itself, as before); one that waits is answered when it ends; an abort reaches the registry.

``webmcp.js`` is replaced by a stand-in recording what Python calls on it (the JS file itself runs under Node in
tests/test_page_halves_js.py); the registry and its tools are the real ones over the in-memory workspace.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from helpers import StandInProxy
from host_memory import MemoryWorkspace
from webmcp_bridge.calls.pending import EAGER_TASKS
from webmcp_bridge.calls.registry import Tool, ToolInput, Toolset
from webmcp_bridge.core.limits import Limits
from webmcp_bridge.lab import webmcp
from webmcp_bridge.lab.ffi import Proxies
from webmcp_bridge.session.bridge import build_bridge
from webmcp_bridge.tools import calls_toolset, notebooks_toolset


class SleepInput(ToolInput):
    seconds: float


async def sleep_tool(ctx: Any, args: SleepInput) -> dict[str, Any]:
    if args.seconds:  # 0: a tool that never waits
        await asyncio.sleep(args.seconds)
    return {"slept": args.seconds}


class Half:
    """Stands in for webmcp.js: records every call Python makes on it."""

    def __init__(self, runtime: str = "mcp-b") -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.listeners: tuple[Any, Any] | None = None
        self._runtime = runtime

    def runtime(self) -> str:
        return self._runtime

    def connect(self, text: str, on_call: Any, on_cancel: Any, cap: int) -> int:
        self.listeners = (on_call, on_cancel)
        self.calls.append(("connect", len(json.loads(text)), cap))
        return len(json.loads(text))

    def disconnect(self) -> None:
        self.calls.append(("disconnect",))

    def answer(self, call_id: int, text: str) -> bool:
        self.calls.append(("answer", call_id, json.loads(text)))
        return True

    def fail(self, call_id: int, message: str) -> bool:
        self.calls.append(("fail", call_id, message))
        return True

    def reportCall(self, line: str) -> None:  # noqa: N802 (the JS half's name)
        self.calls.append(("reportCall", line))

    def emit(self, kind: str, detail: str) -> None:
        self.calls.append(("emit", kind))


@pytest.fixture
def registration(monkeypatch: pytest.MonkeyPatch) -> tuple[webmcp.WebMCPRegistration, Half]:
    half = Half()
    monkeypatch.setattr(webmcp, "load_half", lambda package, filename, ctx: half)
    slow = Toolset("test", "a slow tool", (Tool("slow", "Slow", "Sleeps.", SleepInput, sleep_tool),))
    bridge = build_bridge(
        MemoryWorkspace({}),
        limits=Limits(execution_timeout_seconds=5),
        toolsets=[notebooks_toolset(), calls_toolset(), slow],
    )
    reg = webmcp.WebMCPRegistration(bridge.registry, object())
    reg._proxies = Proxies(create=StandInProxy)
    return reg, half


def answers(half: Half) -> list[tuple[Any, ...]]:
    return [c for c in half.calls if c[0] in ("answer", "fail")]


def test_a_call_that_never_waits_is_answered_before_the_listener_returns(registration) -> None:
    reg, half = registration

    async def scenario() -> None:
        assert reg.register() == len(reg.registry.definitions())
        on_call, _ = half.listeners
        assert on_call(1, "slow", '{"seconds": 0}', "inv-1") is None  # nothing is returned to JS
        if not EAGER_TASKS:  # Python < 3.12 runs a task's first step a turn later; Pyodide's Python (3.14) does not
            for _ in range(20):
                await asyncio.sleep(0)
        [(kind, call_id, answer)] = answers(half)
        assert (kind, call_id) == ("answer", 1)
        assert answer["result"]["structuredContent"] == {"slept": 0}
        assert answer["report"].startswith("slow ok ") and answer["event"]["tool"] == "slow"

    asyncio.run(scenario())


def test_a_call_that_waits_is_answered_when_it_ends_and_an_abort_stops_it(registration) -> None:
    reg, half = registration

    async def scenario() -> None:
        reg.register()
        on_call, on_cancel = half.listeners
        on_call(2, "slow", '{"seconds": 0.05}', "inv-2")
        on_call(3, "slow", '{"seconds": 3}', "inv-3")
        assert answers(half) == []  # neither has ended yet
        on_cancel("inv-3")
        for _ in range(100):
            if len(answers(half)) == 2:
                break
            await asyncio.sleep(0.01)
        done = {c[1]: c[2] for c in answers(half)}
        assert done[2]["result"]["structuredContent"] == {"slept": 0.05}
        assert done[3]["result"]["isError"] is True
        assert done[3]["result"]["structuredContent"]["error"] == "ABORTED"

    asyncio.run(scenario())


def test_a_call_whose_task_is_cancelled_fails_instead_of_waiting_forever(registration) -> None:
    reg, half = registration

    async def scenario() -> None:
        reg.register()
        on_call, _ = half.listeners
        on_call(4, "slow", '{"seconds": 3}', None)
        for task in asyncio.all_tasks():
            if task is not asyncio.current_task():
                task.cancel()
        for _ in range(100):
            if answers(half):
                break
            await asyncio.sleep(0.01)
        assert answers(half) == [("fail", 4, "the call was cancelled")]

    asyncio.run(scenario())


def test_unregistering_disconnects_and_frees_the_listeners(registration) -> None:
    reg, half = registration
    reg.register()
    assert len(reg._proxies) == 2
    reg.unregister()
    assert ("disconnect",) in half.calls and len(reg._proxies) == 0
    reg.unregister()  # a second time does nothing
    assert half.calls.count(("disconnect",)) == 1


def test_on_native_webmcp_a_result_carries_its_payload_once_as_its_text(registration) -> None:
    """On the browser's native WebMCP (the loader's webmcpRuntime "native") the clients show the model the whole
    result (Playwright MCP, chrome-devtools-mcp): the answer has the payload as its text block and no
    structuredContent; an error likewise. On MCP-B (an MCP server in the page) both parts are there."""
    reg, half = registration
    half._runtime = "native"

    async def scenario() -> None:
        reg.register()
        on_call, _ = half.listeners
        on_call(1, "slow", '{"seconds": 0}', "inv-1")
        on_call(2, "slow", '{"seconds": "no"}', "inv-2")
        for _ in range(20):
            await asyncio.sleep(0)
        (_, _, ok), (_, _, failed) = answers(half)
        assert set(ok["result"]) == {"content", "isError"} and ok["result"]["isError"] is False
        assert json.loads(ok["result"]["content"][0]["text"]) == {"slept": 0}
        assert set(failed["result"]) == {"content", "isError"} and failed["result"]["isError"] is True
        assert json.loads(failed["result"]["content"][0]["text"])["error"] == "INVALID_ARGUMENT"
        # the same page on MCP-B: both parts, equal
        half._runtime = "mcp-b"
        reg.register()
        on_call, _ = half.listeners
        on_call(3, "slow", '{"seconds": 0}', "inv-3")
        for _ in range(20):
            await asyncio.sleep(0)
        (_, _, both) = answers(half)[-1]
        assert both["result"]["structuredContent"] == json.loads(both["result"]["content"][0]["text"]) == {"slept": 0}

    asyncio.run(scenario())


def test_the_loaders_options_for_a_call_made_while_python_started_are_read_strictly():
    """``{"pendingId": "s-<n>"}`` and ``{"waitSeconds": s}`` are taken; anything else is as if none were given (the
    call runs as any call)."""
    assert webmcp.call_options('{"pendingId": "s-3"}') == ("s-3", None)
    assert webmcp.call_options('{"waitSeconds": 4.5}') == (None, 4.5)
    for text in (
        None,
        "",
        "[]",
        "nope",
        '{"pendingId": "p-3"}',
        '{"pendingId": 3}',
        '{"waitSeconds": -1}',
        '{"waitSeconds": true}',
        '{"waitSeconds": 1e9}',
        '{"pendingId": "s-1; x"}',
    ):
        assert webmcp.call_options(text) == (None, None), text
