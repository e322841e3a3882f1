"""jupyter_get_output_selection: the output text the person selected and chose to share, or null."""

from __future__ import annotations

from typing import Any

from webmcp_bridge.calls.payloads import Wire
from webmcp_bridge.calls.registry import Annotations
from webmcp_bridge.core.errors import ToolError
from webmcp_bridge.tools.common import CallContext, NotebookInput, tool
from webmcp_bridge.tools.payloads import model

SharedText = model("SharedText", Wire, cellId=str, outputIndex=int, text=str, bytes=int, truncated=bool, time=float)
OutputSelectionOutput = model("OutputSelectionOutput", path=str, selection=SharedText | None)


async def get_output_selection(ctx: CallContext, args: NotebookInput) -> dict[str, Any]:
    nb = await ctx.notebook(args.notebook_path)
    shared = ctx.shared.latest(nb.path)
    if shared is not None:
        try:
            nb.find_cell(shared.cell_id)  # a cell hidden from the agent (or gone) shares nothing
        except ToolError:
            shared = None
    selection = (
        None
        if shared is None
        else {
            "cellId": shared.cell_id,
            "outputIndex": shared.output_index,
            "text": shared.text,
            "bytes": shared.bytes,
            "truncated": shared.truncated,
            "time": round(shared.time, 3),
        }
    )
    return {"path": nb.path, "selection": selection}


TOOLS = (
    tool(
        "jupyter_get_output_selection",
        "The output text the person selected and shared with you (output context menu: 'Share selected output text "
        "with the agent'): cell id, output index and the text (bounded), or selection: null when nothing is shared.",
        get_output_selection,
        Annotations.read(),
        OutputSelectionOutput,
        "Get shared output selection",
    ),
)
