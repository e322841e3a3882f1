"""jupyter_run_code: code run in the notebook's kernel (the cells' namespace) without a cell, outside its history.

Output texts come inline, sharing ``Limits.output_page_bytes``: each gets at most an equal share of what the others
leave (a short error after a long stream keeps its traceback).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from webmcp_bridge.calls.payloads import Payload, sometimes
from webmcp_bridge.calls.registry import Annotations
from webmcp_bridge.core.limits import DEFAULT_LIMITS, KIB, RUN_CODE_TIMEOUT_SECONDS, Limits, truncate_utf8
from webmcp_bridge.core.snapshot import describe_output, preview_item
from webmcp_bridge.host.protocol import RawOutput
from webmcp_bridge.propose.proposals import DeniedPayload
from webmcp_bridge.tools.common import CallContext, NotebookInput, check_write_size, tool
from webmcp_bridge.tools.payloads import OutputListing
from webmcp_bridge.tools.run import KernelOut, _kernel_ready


class RunCodeInput(NotebookInput):
    code: str = Field(
        description=f"Code to run in the notebook's kernel (at most {DEFAULT_LIMITS.source_write_bytes // KIB} "
        "KiB). No cell is created.",
        min_length=1,
    )
    timeout: float | None = Field(
        None,
        description=f"Seconds to wait for the run to finish (default {DEFAULT_LIMITS.run_timeout_seconds:.0f}, "
        f"at most {RUN_CODE_TIMEOUT_SECONDS:.0f}). Past it the "
        "result says status 'timeout' with the outputs so far; the code may still be running.",
        gt=0,
        le=RUN_CODE_TIMEOUT_SECONDS,
    )


def _shares(sizes: list[int], budget: int) -> list[int]:
    """Bytes of text kept per output: the largest common cap L with sum(min(size, L)) <= budget."""
    kept, remaining, ordered = list(sizes), budget, sorted(range(len(sizes)), key=lambda i: sizes[i])
    for rank, i in enumerate(ordered):
        share = remaining // (len(ordered) - rank)
        if sizes[i] > share:
            for j in ordered[rank:]:
                kept[j] = share
            break
        remaining -= sizes[i]
    return kept


def describe_run_outputs(outputs: tuple[RawOutput, ...], limits: Limits) -> list[dict[str, Any]]:
    """Outputs listed as run results list them, the preview's representation (:func:`preview_item`) inline as ``text``
    (sharing ``output_page_bytes``) in place of the preview."""
    items = [preview_item(o) for o in outputs]
    heads = [item.head if item else "" for item in items]
    shares = _shares([len(h.encode("utf-8", "surrogatepass")) for h in heads], limits.output_page_bytes)
    described = []
    for i, (output, item, head, share) in enumerate(zip(outputs, items, heads, shares, strict=True)):
        entry = describe_output(i, output, limits)
        entry.pop("preview", None)
        entry.pop("previewTruncated", None)
        if item is not None:
            entry["text"] = truncate_utf8(head, share)
            entry["textTruncated"] = len(entry["text"].encode("utf-8", "surrogatepass")) < item.bytes
        described.append(entry)
    return described


class CodeRun(Payload):
    path: str
    status: Literal["ok", "error", "timeout"]
    executionCount: int | None
    outputs: list[OutputListing]
    outputCount: int
    truncated: bool
    kernel: KernelOut
    reason: str = sometimes()


async def run_code(ctx: CallContext, args: RunCodeInput) -> dict[str, Any]:
    """Run code in the kernel without a cell: :class:`CodeRun` (``status`` "error" when it raised or was refused).
    Raises ToolError: the notebook's errors, NOTEBOOK_ACCESS_DENIED, KERNEL_UNAVAILABLE, TOO_LARGE (code over
    ``Limits.source_write_bytes``)."""
    check_write_size(args.code, ctx.limits, "code")
    nb = await ctx.notebook(args.notebook_path)
    nb.check_write()  # NOTEBOOK_ACCESS_DENIED before the person is asked anything
    # The run rule (access/run_consent.py): while something the kernel reaches is hidden from the agent, the person
    # sees the code first, in Direct mode too (docs/TOOLS.md, "Hidden cells and the kernel").
    reason = await nb.run_consent()
    summary = "Run code in the kernel (no cell is created)" + (f" ({reason})" if reason else "")
    await ctx.propose(nb, "jupyter_run_code", "run_code", None, summary, code=args.code, always=reason is not None)
    await _kernel_ready(ctx, nb)
    timeout = args.timeout if args.timeout is not None else ctx.limits.run_timeout_seconds
    run = await nb.run_code(
        args.code, timeout, head_bytes=ctx.limits.output_page_bytes, max_outputs=ctx.limits.outputs_per_cell
    )
    outputs = describe_run_outputs(run.outputs, ctx.limits)
    kernel = nb.kernel()
    payload: dict[str, Any] = {
        "path": nb.path,
        "status": run.status,
        "executionCount": run.execution_count,
        "outputs": outputs,
        "outputCount": run.output_count,
        "truncated": run.output_count > len(outputs) or any(o.get("textTruncated") for o in outputs),
        "kernel": {"name": kernel.name, "status": kernel.status},
    }
    if run.reason:
        payload["reason"] = run.reason
    return payload


TOOLS = (
    tool(
        "jupyter_run_code",
        "Run code in the notebook's kernel without creating a cell (the cells' namespace; not stored in history). "
        "Returns status (ok/error/timeout), the execution count and the outputs with their text inline (bounded: 16 "
        "KiB in all, ANSI stripped).",
        run_code,
        Annotations.write(destructive=True, idempotent=False, untrusted_content=True, consequential=True),
        CodeRun | DeniedPayload,
    ),
)
