"""Calls that outlive the execution timeout return pending and are collected with jupyter_wait_for_result."""

from __future__ import annotations

import asyncio
import json

from helpers import check_envelope
from host_memory import MemoryWorkspace
from webmcp_bridge.calls.registry import Registry, Tool, ToolInput, Toolset
from webmcp_bridge.core.limits import Limits
from webmcp_bridge.session.bridge import build_bridge
from webmcp_bridge.tools import calls_toolset, notebooks_toolset

LIMITS = Limits(execution_timeout_seconds=0.2, pending_keep_count=2)


class SleepInput(ToolInput):
    seconds: float


async def sleep_tool(ctx, args: SleepInput):
    await asyncio.sleep(args.seconds)
    if args.seconds < 0.01:
        return {"slept": args.seconds}
    return {"slept": args.seconds, "note": "x" * 10}


def slow_toolset() -> Toolset:
    return Toolset("test", "a slow tool", (Tool("slow", "Slow", "Sleeps.", SleepInput, sleep_tool),))


def registry(limits: Limits = LIMITS) -> Registry:
    return build_bridge(
        MemoryWorkspace({}), limits=limits, toolsets=[notebooks_toolset(), calls_toolset(), slow_toolset()]
    ).registry


def run(coro):
    return asyncio.run(coro)


def test_a_slow_call_goes_pending_and_is_collected():
    async def scenario():
        reg = registry()
        first = await reg.call("slow", {"seconds": 0.6})
        check_envelope(first, LIMITS)
        assert first["isError"] is False
        pending = first["structuredContent"]
        assert pending["status"] == "pending" and pending["tool"] == "slow" and pending["pendingId"]
        context = (await reg.call("jupyter_get_context"))["structuredContent"]
        assert [p["pendingId"] for p in context["pending"]] == [pending["pendingId"]]
        assert context["pending"][0]["status"] == "running"
        again = (await reg.call("jupyter_wait_for_result", {"pendingId": pending["pendingId"], "timeout": 0.01}))[
            "structuredContent"
        ]
        assert again["status"] == "pending" and again["pendingId"] == pending["pendingId"]
        final = None
        for _ in range(20):
            final = await reg.call("jupyter_wait_for_result", {"pendingId": pending["pendingId"]})
            if final["structuredContent"].get("status") != "pending":
                break
        assert final["structuredContent"] == {"slept": 0.6, "note": "x" * 10}
        assert json.loads(final["content"][0]["text"]) == final["structuredContent"]
        # a settled result can be collected again until it is dropped
        assert (await reg.call("jupyter_wait_for_result", {"pendingId": pending["pendingId"]}))["structuredContent"][
            "slept"
        ] == 0.6

    run(scenario())


def test_a_quick_call_is_answered_at_once():
    result = run(registry().call("slow", {"seconds": 0.0}))
    assert result["structuredContent"] == {"slept": 0.0}


def test_unknown_pending_ids_and_bad_timeouts_are_errors():
    reg = registry()
    assert (
        run(reg.call("jupyter_wait_for_result", {"pendingId": "p-999"}))["structuredContent"]["error"]
        == "PENDING_NOT_FOUND"
    )
    assert (
        run(reg.call("jupyter_wait_for_result", {"pendingId": "p-1", "timeout": -1}))["structuredContent"]["error"]
        == "INVALID_ARGUMENT"
    )


def test_settled_results_are_kept_in_bounded_number():
    async def scenario():
        reg = registry()
        ids = [(await reg.call("slow", {"seconds": 0.3}))["structuredContent"]["pendingId"] for _ in range(4)]
        await asyncio.sleep(0.4)
        kept = [p["pendingId"] for p in reg.pending.describe()]
        assert kept == ids[-2:]  # keep_count = 2: the oldest settled results were dropped
        assert (await reg.call("jupyter_wait_for_result", {"pendingId": ids[0]}))["structuredContent"][
            "error"
        ] == "PENDING_NOT_FOUND"

    run(scenario())


def test_hooks_see_the_real_outcome_of_a_pending_call():
    async def scenario():
        reg = registry()
        seen = []
        reg.on_after(lambda e: seen.append((e.tool, e.outcome)))
        first = (await reg.call("slow", {"seconds": 0.4}))["structuredContent"]
        assert ("slow", "ok") not in seen
        await reg.pending.get(first["pendingId"]).task
        assert ("slow", "ok") in seen

    run(scenario())


def test_a_call_the_loader_answered_pending_while_python_started_is_collected_by_the_loaders_id():
    """The loader answered a call ``pending`` with its own id (``s-<n>``) while Python was starting; handed over once
    Python is up, the call runs pending under that id from its start, and jupyter_wait_for_result collects its result
    by it. Another form of id, or one in use, is refused."""

    async def scenario():
        reg = registry()
        held = asyncio.ensure_future(reg.call("slow", {"seconds": 0.3}, pending_id="s-1"))
        await asyncio.sleep(0)
        context = (await reg.call("jupyter_get_context"))["structuredContent"]
        assert [(p["pendingId"], p["status"]) for p in context["pending"]] == [("s-1", "running")]
        for _ in range(50):  # each wait lasts at most the execution timeout (0.2 s here)
            collected = await reg.call("jupyter_wait_for_result", {"pendingId": "s-1"})
            if collected["structuredContent"].get("status") != "pending":
                break
        assert collected["structuredContent"] == {"slept": 0.3, "note": "x" * 10}
        assert (await held)["structuredContent"] == collected["structuredContent"]
        call = reg.pending.begin("slow", None, 0.0)
        for wrong in ("s-1", "p-9", "s-0", "s-x"):
            try:
                reg.pending.promote(call, wrong)
            except ValueError:
                continue
            raise AssertionError(f"{wrong} was taken")

    run(scenario())


def test_a_call_handed_the_rest_of_the_loaders_bound_goes_pending_at_its_end():
    """A call made while Python was starting and taken up within the loader's bound is handed what is left of it:
    it goes pending then (a ``p-`` id), sooner than the execution timeout."""

    async def scenario():
        reg = registry(Limits(execution_timeout_seconds=20))
        loop = asyncio.get_running_loop()
        began = loop.time()
        first = await reg.call("slow", {"seconds": 1.0}, wait_seconds=0.2)
        assert loop.time() - began < 0.9
        assert first["structuredContent"]["status"] == "pending"
        assert first["structuredContent"]["pendingId"].startswith("p-")

    run(scenario())
