"""Tools about calls themselves: jupyter_wait_for_result (collecting a call that went pending)."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from pydantic import Field

from ..errors import ErrorCode, ToolError
from ..pending import pending_payload
from ..registry import Annotations, Tool, ToolInput, ToolResult
from .common import CallContext

WAIT_MARGIN_SECONDS = 0.5  # a wait ends this much before the execution timeout, so the wait itself never goes pending


class WaitForResultInput(ToolInput):
    pending_id: Annotated[str, Field(description="The pendingId a pending result gave.", min_length=1, max_length=64)]
    timeout: Annotated[float | None, Field(description="Seconds to wait at most (default and maximum: just under the execution timeout).",
                                           ge=0, le=3600)] = None


async def wait_for_result(ctx: CallContext, args: WaitForResultInput) -> ToolResult | dict[str, Any]:
    call = ctx.pending.get(args.pending_id)
    if call is None:
        raise ToolError(ErrorCode.PENDING_NOT_FOUND, f"No pending call {args.pending_id!r} (unknown, or its result was dropped after it settled).",
                        pendingId=args.pending_id)
    execution = ctx.limits.execution_timeout_seconds
    longest = execution - min(WAIT_MARGIN_SECONDS, execution / 10)
    timeout = longest if args.timeout is None else min(args.timeout, longest)
    if not call.task.done():
        await asyncio.wait({call.task}, timeout=timeout)
    if not call.task.done():
        return pending_payload(call)
    call.collected = True
    return ToolResult({}, final=call.task.result())


TOOLS = (
    Tool("jupyter_wait_for_result", "Wait for result",
         "Collect the result of a call that returned status 'pending': waits up to timeout seconds, then returns the "
         "call's own final result, or pending again if it is still running.",
         WaitForResultInput, wait_for_result, Annotations(read_only=True, untrusted_content=True)),
)
