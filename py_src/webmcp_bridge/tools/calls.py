"""Tools about calls: jupyter_wait_for_result (collect a call that went pending) and jupyter_answer_dialog
(answer a JupyterLab dialog one of the agent's calls opened, :mod:`webmcp_bridge.calls.dialogs`).

An aborted wait ends at once with ABORTED naming the call it waited for. A pending run is stopped with it (an
interrupt); any other pending call goes on, since stopping it half way could leave a file or a dialog half done.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from pydantic import Field

from webmcp_bridge.calls.dialogs import ANSWER_TOOL
from webmcp_bridge.calls.payloads import AnyPayload, Wire
from webmcp_bridge.calls.pending import PendingCall
from webmcp_bridge.calls.registry import Annotations, ToolInput, ToolResult
from webmcp_bridge.core.bounds import dumps, fit_payload
from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.core.limits import BUTTON_LABEL_CHARS, WAIT_FOR_RESULT_SECONDS, WAIT_MARGIN_SECONDS, Limits
from webmcp_bridge.tools.common import CallContext, Index, ShortId, tool

#: pending calls an aborted wait stops too: runs, whose stop is an interrupt (nothing is left half written)
STOPPED_WITH_THEIR_WAIT = frozenset({"jupyter_run_cells", "jupyter_run_code"})


def _longest_wait(limits: Limits, asked: float | None) -> float:
    """Seconds a wait may last: ``asked``, at most just under the execution timeout (the default)."""
    execution = limits.execution_timeout_seconds
    longest = execution - min(WAIT_MARGIN_SECONDS, execution / 10)
    return longest if asked is None else min(asked, longest)


async def _collect(ctx: CallContext, call: PendingCall, timeout: float) -> ToolResult | dict[str, Any]:
    """Wait up to ``timeout`` s for ``call``: its final result (marked collected), else its pending payload."""
    await call.wait(timeout)
    if not call.task.done():
        return ctx.dialogs.pending_payload(call)
    call.collected = True
    return ToolResult({}, final=call.task.result())


class WaitForResultInput(ToolInput):
    pending_id: ShortId = Field(description="The pendingId a pending result gave.")
    timeout: float | None = Field(
        None,
        description="Seconds to wait at most (default and maximum: just under the execution timeout).",
        ge=0,
        le=WAIT_FOR_RESULT_SECONDS,
    )


async def wait_for_result(ctx: CallContext, args: WaitForResultInput) -> ToolResult | dict[str, Any]:
    call = ctx.pending.get(args.pending_id)
    if call is None:
        raise ToolError(
            ErrorCode.PENDING_NOT_FOUND,
            f"No pending call {args.pending_id!r} (unknown, or its result was dropped after it settled).",
            pendingId=args.pending_id,
        )
    try:
        return await _collect(ctx, call, _longest_wait(ctx.limits, args.timeout))
    except asyncio.CancelledError:  # the agent's client aborted this wait (Registry.cancel)
        stopped = call.tool in STOPPED_WITH_THEIR_WAIT and not call.task.done()
        if stopped:
            call.task.cancel()  # its handler stops at its next await and its result becomes ABORTED
            then = "which was stopped too (a running cell was interrupted; the cells after it did not run)."
        elif call.task.done():
            then = "which had already finished: collect it again."
        else:
            then = "which goes on running: collect it later."
        raise ToolError(
            ErrorCode.ABORTED,
            f"jupyter_wait_for_result was aborted: it stopped waiting for {call.pending_id} ({call.tool}), {then}",
            tool="jupyter_wait_for_result",
            pendingId=call.pending_id,
            pendingTool=call.tool,
            stopped=stopped,
        ) from None


ButtonLabel = Annotated[str, Field(min_length=1, max_length=BUTTON_LABEL_CHARS)]


class AnswerDialogInput(ToolInput):
    button: ButtonLabel | Index = Field(
        description="The button to click: its label as reported (e.g. 'Restart'; "
        "an exact match first, then ignoring case) or its index."
    )
    dialog_id: ShortId | None = Field(
        None, description="The dialog's id (e.g. 'd-1'); required when several dialogs are open."
    )
    timeout: float | None = Field(
        None,
        description="Seconds to wait for the owning call's result after the click (default and "
        "maximum: just under the execution timeout).",
        ge=0,
        le=WAIT_FOR_RESULT_SECONDS,
    )


class AnsweredDialog(Wire):
    dialogId: str
    button: str = Field(description="The label clicked.")
    buttonIndex: int


class DialogAnswered(AnyPayload):
    """The owning call's own result (or its pending payload), with ``answered``."""

    answered: AnsweredDialog


async def answer_dialog(ctx: CallContext, args: AnswerDialogInput) -> ToolResult | dict[str, Any]:
    """Click a button of a dialog one of the agent's calls opened; that call's result (or pending payload) with
    ``answered`` {dialogId, button (its label), buttonIndex}."""
    owner, answered = ctx.dialogs.answer(args.button, args.dialog_id)
    ctx.pending.promote(owner)  # collectable by id even if its own call has not returned pending yet
    outcome = await _collect(ctx, owner, _longest_wait(ctx.limits, args.timeout))
    if isinstance(outcome, dict):
        return {**outcome, "answered": answered}
    final = outcome.final or {}
    payload = fit_payload({**final.get("structuredContent", {}), "answered": answered}, ctx.limits.result_bytes)
    content = [{"type": "text", "text": dumps(payload)}, *final.get("content", [])[1:]]
    return ToolResult({}, final={**final, "content": content, "structuredContent": payload})


TOOLS = (
    tool(
        "jupyter_wait_for_result",
        "Collect the result of a call that returned status 'pending': waits up to timeout seconds, then returns the "
        "call's own final result, or pending again if it is still running (at once, with `dialog`, when a JupyterLab "
        "dialog opened by that call needs an answer: see jupyter_answer_dialog).",
        wait_for_result,
        Annotations.read(),
        AnyPayload,
    ),
    tool(
        ANSWER_TOOL,
        "Click a button of the JupyterLab dialog on screen that one of your calls opened (a pending result's "
        "`dialog`, or `dialogs` with answerable: true), by label or index, as the person would; then wait for that "
        "call and return its result with `answered` {dialogId, button (the label), buttonIndex}. Refused "
        "(INVALID_ARGUMENT, nothing clicked) for a dialog the person opened, a queued dialog, several open dialogs "
        "without dialogId, or an unknown button.",
        answer_dialog,
        Annotations.write(destructive=True, idempotent=False, untrusted_content=True, consequential=True),
        DialogAnswered,
    ),
)
