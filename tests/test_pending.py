"""Calls that outlive the execution timeout return pending and are collected with jupyter_wait_for_result."""

from __future__ import annotations

import asyncio
import json

from helpers import check_envelope
from webmcp_bridge.calls.registry import Registry, Tool, ToolInput, Toolset
from webmcp_bridge.core.limits import Limits
from webmcp_bridge.host.memory import MemoryWorkspace
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


def registry() -> Registry:
    slow = Toolset("test", "a slow tool", (Tool("slow", "Slow", "Sleeps.", SleepInput, sleep_tool),))
    return build_bridge(
        MemoryWorkspace({}), limits=LIMITS, toolsets=[notebooks_toolset(), calls_toolset(), slow]
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
