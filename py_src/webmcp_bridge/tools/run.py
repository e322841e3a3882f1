"""Kernel and focus tools: jupyter_run_cells, jupyter_kernel_action, jupyter_focus_cell."""

from __future__ import annotations

import time
from typing import Any, Literal

from pydantic import Field

from webmcp_bridge.calls.payloads import Payload, Wire, sometimes
from webmcp_bridge.calls.registry import Annotations, ToolInput
from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.core.limits import DEFAULT_LIMITS, INTERRUPT_WAIT_SECONDS
from webmcp_bridge.core.snapshot import check_as_shown, describe_output
from webmcp_bridge.core.uris import cell_uri
from webmcp_bridge.host.protocol import RunResult
from webmcp_bridge.propose.proposals import DeniedPayload
from webmcp_bridge.tools.common import (
    CallContext,
    CellIdField,
    CellSelection,
    Index,
    NotebookInput,
    check_count,
    tool,
    unique,
)
from webmcp_bridge.tools.payloads import Focus, OutputListing, model


class KernelOut(Wire):
    name: str | None
    status: str


class CellRun(Wire):
    """One cell of a run: ok, error, skipped (with reason) or running (the call stopped waiting; with reason)."""

    cellId: str
    index: int = sometimes()
    status: Literal["ok", "error", "skipped", "running"]
    executionCount: int | None = sometimes()
    outputs: list[OutputListing] = sometimes("Its outputs, listed (none: no key).")
    outputsOmitted: int = sometimes("Outputs past the listed ones.")
    reason: str = sometimes()


RunCellsOutput = model("RunCellsOutput", path=str, results=list[CellRun], kernel=KernelOut)


class KernelActionOutput(Payload):
    path: str
    action: Literal["interrupt", "restart"]
    kernel: KernelOut
    restarted: bool = sometimes(
        "restart: true once restarted; false when the restart was cancelled in its dialog (see message)."
    )
    interrupted: bool = sometimes("interrupt: true when a running cell stopped (see reason otherwise).")
    reason: str = sometimes()
    message: str = sometimes()


FocusOutput = model("FocusOutput", focus=Focus)


class RunCellsInput(CellSelection):
    stop_on_error: bool = Field(True, description="Skip the remaining cells after a cell fails.")
    timeout: float | None = Field(
        None,
        description="Seconds to wait for each cell (default: the runTimeout setting, "
        f"{DEFAULT_LIMITS.run_timeout_seconds:g} s). A cell still running then is reported as running, not "
        "failed.",
        gt=0,
        le=86400,
    )


async def _kernel_ready(ctx: CallContext, nb) -> None:
    """Wait up to ``Limits.kernel_wait_seconds`` for the kernel; KERNEL_UNAVAILABLE when not idle or busy by then."""
    began = time.monotonic()
    info = await nb.wait_for_kernel(ctx.limits.kernel_wait_seconds)
    if info.status not in ("idle", "busy"):
        waited = time.monotonic() - began
        raise ToolError(
            ErrorCode.KERNEL_UNAVAILABLE,
            kernel_unavailable_message(info.status, waited),
            kernel={"name": info.name, "status": info.status},
            waitedSeconds=round(waited, 1),
        )


def kernel_unavailable_message(status: str, waited: float) -> str:
    """Why no code can run now, from the kernel's status after ``waited`` seconds, and what the agent can do."""
    if status == "none":
        return (
            "This notebook has no kernel (the person chose No Kernel): nothing runs until the person selects one "
            "(Kernel > Change Kernel)."
        )
    if status == "dead":
        return (
            "The kernel is dead: restart it (jupyter_kernel_action restart, which the person confirms) and run again."
        )
    return (
        f"The kernel was not ready after waiting {waited:.0f} s (status {status!r}): it is still starting, or its "
        "start failed. A first start loads Python and its packages in the page and can take minutes on a busy "
        "machine: call again in a while (jupyter_get_context shows the kernel's status). If the status stays the "
        "same, the kernel did not start: restart it (jupyter_kernel_action restart) or ask the person to reload the "
        "page."
    )


async def run_cells(ctx: CallContext, args: RunCellsInput) -> dict[str, Any]:
    args.check_one_way()
    nb = await ctx.notebook(args.notebook_path)
    read_only: set[str] = set()
    if args.cell_ids is not None:
        ids = [c.id for c in nb.find_cells(unique(args.cell_ids))]
        nb.check_write(ids)  # a named read-only cell refuses the whole call before anything runs
    else:
        nb.check_write()
        cells = nb.read_cells(None, head_bytes=0, max_outputs=0)
        ids = [cells[i].id for i in args.index_range(len(cells))]
        read_only = {cell_id for cell_id in ids if not nb.is_writable(cell_id)}  # skipped, with the reason
    check_count(len(ids), ctx.limits.run_cells, "{count} cells asked; at most {cap} run in one call.")
    runnable = [c for c in nb.find_cells([i for i in ids if i not in read_only]) if c.cell_type == "code"]
    if runnable:
        code = "\n\n".join(f"# cell {c.id}\n{c.source}" for c in runnable)
        # the run rule (access/run_consent.py): while something is hidden, the person sees the code first
        reason = await nb.run_consent()
        summary = f"Run {len(runnable)} code cell(s)" + (f" ({reason})" if reason else "")
        runs = [c.source for c in runnable]
        if await ctx.propose(
            nb, "jupyter_run_cells", "run", runnable[0].id, summary, code=code, always=reason is not None, runs=runs
        ):
            # accepted: run only the code the person was shown
            check_as_shown(nb.find_cells([c.id for c in runnable]), {c.id: c.source for c in runnable}, ctx.limits)
    await _kernel_ready(ctx, nb)
    results: list[dict[str, Any]] = []
    failed = False
    still_running = False
    wait = args.timeout if args.timeout is not None else ctx.limits.run_timeout_seconds
    for cell_id in ids:
        skip, cell = None, None
        if still_running:  # it would queue behind the running cell: not started, the agent decides
            skip = "an earlier cell is still running"
        elif failed and args.stop_on_error:
            skip = "an earlier cell failed"
        else:
            try:
                cell = nb.find_cell(cell_id)
            except ToolError:
                skip = "the cell was deleted"
        if cell is not None and cell.cell_type != "code":
            skip = f"a {cell.cell_type} cell"
        elif cell is not None and cell_id in read_only:
            skip = "read-only for the agent"
        if skip is not None:
            index = {} if cell is None else {"index": cell.index}
            results.append({"cellId": cell_id, **index, "status": "skipped", "reason": skip})
            continue
        outcome = await nb.run_cell(cell_id, wait)
        if outcome.status == "timeout":  # the kernel has not answered: the cell is still running, not failed
            outcome = RunResult(cell_id, "running", outcome.execution_count, running_reason(wait))
            still_running = True
        failed = failed or outcome.status == "error"
        count = outcome.execution_count
        try:
            after = nb.find_cells(
                [cell_id], head_bytes=ctx.limits.preview_bytes, max_outputs=ctx.limits.outputs_per_cell
            )[0]
        except ToolError:  # deleted (by the person or another call) while it ran: its code did run
            gone = "the cell was deleted while it ran; its outputs are gone"
            results.append({"cellId": cell_id, "status": outcome.status, "executionCount": count, "reason": gone})
            continue
        ran: dict[str, Any] = {
            "cellId": cell_id,
            "index": after.index,
            "status": outcome.status,
            "executionCount": count if count is not None else after.execution_count,
        }
        if after.outputs:  # listed as jupyter_get_cells lists them; none: no key
            uri = cell_uri(nb.path, cell_id)
            ran["outputs"] = [describe_output(i, o, ctx.limits, uri) for i, o in enumerate(after.outputs)]
        if after.output_count > len(after.outputs):
            ran["outputsOmitted"] = after.output_count - len(after.outputs)
        if outcome.reason:
            ran["reason"] = outcome.reason
        results.append(ran)
    kernel = nb.kernel()
    return {"path": nb.path, "results": results, "kernel": {"name": kernel.name, "status": kernel.status}}


def running_reason(wait: float) -> str:
    """Why a cell is reported ``running``: the call stopped waiting after ``wait`` seconds, not the cell."""
    return (
        f"still running after {wait:g} s, when this call stopped waiting (the `timeout` argument, else the runTimeout "
        "setting); it goes on in the kernel: its outputs and execution count appear as it runs (read them with "
        "jupyter_get_cells or jupyter_get_output, or follow jupyter_get_changes); cells after it were not started"
    )


def interrupt_reason(before: str, info: Any) -> str | None:
    """What an interrupt did, in words, when it did not stop a running cell (None when it did)."""
    if before == "idle":
        return "nothing was running: the kernel was idle"
    names = f"{info.name or ''} {info.display_name or ''}".lower()
    if "pyodide" in names:  # idle after the wait means the cell ended on its own, not that it was stopped
        ended = "it has ended on its own since" if info.status == "idle" else "it runs to its end"
        return (
            "JupyterLite's Pyodide kernel cannot stop code that is already running (its interrupt only drops queued "
            f"requests), so the running cell was not stopped: {ended}. Instead: wait for it (a run that went pending "
            "is collected with jupyter_wait_for_result; its outputs appear in jupyter_get_cells), or restart the "
            "kernel (jupyter_kernel_action restart: every variable is lost)"
        )
    if info.status == "idle":
        return None
    return f"the kernel was still {info.status} {INTERRUPT_WAIT_SECONDS:g} s after the interrupt"


class KernelActionInput(NotebookInput):
    action: Literal["interrupt", "restart"] = Field(
        description="interrupt stops the running cell; restart clears all kernel state."
    )


async def kernel_action(ctx: CallContext, args: KernelActionInput) -> dict[str, Any]:
    nb = await ctx.notebook(args.notebook_path)
    if args.action == "restart":  # a restart loses every variable: in Propose mode the person decides first
        nb.check_write()
        await ctx.propose(nb, "jupyter_kernel_action", "restart", None, "Restart the kernel (all variables are lost)")
    wait = INTERRUPT_WAIT_SECONDS if args.action == "interrupt" else ctx.limits.kernel_wait_seconds
    before = nb.kernel().status
    info = await nb.kernel_action(args.action, wait)
    if info is None:  # a restart the confirmation dialog declined: a normal result, nothing changed
        kernel = nb.kernel()
        return {
            "path": nb.path,
            "action": args.action,
            "restarted": False,
            "kernel": {"name": kernel.name, "status": kernel.status},
            "message": "The kernel was not restarted: Cancel was chosen in JupyterLab's 'Restart Kernel?' dialog. Its "
            "state is unchanged.",
        }
    payload: dict[str, Any] = {
        "path": nb.path,
        "action": args.action,
        "kernel": {"name": info.name, "status": info.status},
    }
    if args.action == "interrupt":
        reason = interrupt_reason(before, info)
        payload["interrupted"] = reason is None  # a running cell stopped: the kernel was busy and is idle now
        if reason is not None:
            payload["reason"] = reason
    else:
        payload["restarted"] = True
    return payload


class Position2D(ToolInput):
    line: Index = Field(description="0-based line.")
    column: Index = Field(description="0-based column, in UTF-16 code units as the editor counts.")


def check_position(source: str, position: Position2D, name: str) -> dict[str, int]:
    """``position`` as a dict, if it lies inside ``source``; else INVALID_ARGUMENT (nothing is changed)."""
    lines = source.split("\n")
    if position.line >= len(lines):
        raise ToolError(
            ErrorCode.INVALID_ARGUMENT, f"{name}: line {position.line} is past the cell's {len(lines)} line(s)."
        )
    width = len(lines[position.line].encode("utf-16-le", "surrogatepass")) // 2
    if position.column > width:
        raise ToolError(
            ErrorCode.INVALID_ARGUMENT,
            f"{name}: column {position.column} is past the end of line {position.line} ({width}).",
        )
    return {"line": position.line, "column": position.column}


class Selection(ToolInput):
    start: Position2D
    end: Position2D


class FocusCellInput(NotebookInput):
    cell_id: CellIdField
    cursor: Position2D | None = Field(None, description="Put the cursor here.")
    selection: Selection | None = Field(None, description="Select this range of the source.")


async def focus_cell(ctx: CallContext, args: FocusCellInput) -> dict[str, Any]:
    if args.cursor is not None and args.selection is not None:
        raise ToolError(ErrorCode.INVALID_ARGUMENT, "Give cursor or selection, not both.")
    nb = await ctx.notebook(args.notebook_path)
    cell = nb.find_cell(args.cell_id)
    cursor = check_position(cell.source, args.cursor, "cursor") if args.cursor else None
    selection = (
        {
            "start": check_position(cell.source, args.selection.start, "selection.start"),
            "end": check_position(cell.source, args.selection.end, "selection.end"),
        }
        if args.selection
        else None
    )
    nb.set_focus(cell.id, cursor, selection)
    focus = nb.focus()
    return {"focus": {"cellId": focus.cell_id, "cursor": focus.cursor, "selection": focus.selection}}


TOOLS = (
    tool(
        "jupyter_run_cells",
        "Run code cells in the notebook's kernel (by ids, an index range, or all), waiting for the kernel to be "
        "ready. Returns per cell: status (ok/error/skipped/running), execution count and a bounded summary of its "
        "outputs. A cell still running after `timeout` seconds (default: the runTimeout setting, "
        f"{DEFAULT_LIMITS.run_timeout_seconds:g} s) is reported running, with a reason; it goes on in the kernel and "
        "the cells after it are not started.",
        run_cells,
        Annotations.write(destructive=True, idempotent=False, untrusted_content=True, consequential=True),
        RunCellsOutput | DeniedPayload,
    ),
    tool(
        "jupyter_kernel_action",
        "Interrupt or restart the notebook's kernel. An interrupt reports interrupted: true when it stopped a "
        f"running cell, else false with a reason (nothing was running; still busy {INTERRUPT_WAIT_SECONDS:.0f} s "
        "later; a kernel that cannot stop running code, such as JupyterLite's Pyodide, with what to do instead). A "
        "restart asks the person first, with JupyterLab's own 'Restart Kernel?' dialog: the call returns pending "
        "with that `dialog` at once; answer it with jupyter_answer_dialog ('Restart' or 'Cancel') or let the person "
        "answer. Cancel gives restarted: false.",
        kernel_action,
        Annotations.write(destructive=True, idempotent=False, consequential=True),
        KernelActionOutput | DeniedPayload,
    ),
    tool(
        "jupyter_focus_cell",
        "Reveal a cell to the person and make it active, optionally placing the cursor or selecting a range of its "
        "source.",
        focus_cell,
        Annotations.write(destructive=False, idempotent=True),
        FocusOutput,
    ),
)
