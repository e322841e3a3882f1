"""jupyter_get_changes: what changed in a notebook since the agent last looked, and by whom.

Changes come from the bridge's change log (:mod:`webmcp_bridge.changes.log`), fed by the host: each is a
coalesced entry ``{seq, actor (person/agent), kind (insert/edit/delete/move/run/outputs), cellId, time,
count, revision}``. A change of a cell that was hidden from the agent when it happened, or is hidden now,
is left out (only their number is given, as ``hiddenChangeCount``).
"""

from __future__ import annotations

import asyncio
import time
from typing import Annotated, Any

from pydantic import Field

from webmcp_bridge.access.guard import parse_level
from webmcp_bridge.calls.registry import Annotations, Tool
from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.core.limits import CHANGES_POLL_SECONDS, CHANGES_RETURNED, CHANGES_RETURNED_DEFAULT, CHANGES_WAIT_SECONDS
from webmcp_bridge.tools.common import MAX_INT, CallContext, NotebookInput


class GetChangesInput(NotebookInput):
    since: Annotated[int | None, Field(description="Sequence number from a previous result's `seq`: only later changes. Omit for every change kept.", ge=0, le=MAX_INT)] = None
    since_revision: Annotated[int | None, Field(description="Only changes after the notebook had this revision (from jupyter_get_context or a write result).", ge=0, le=MAX_INT)] = None
    wait: Annotated[float, Field(description=f"Seconds to wait for a change when there is none yet (0 to {CHANGES_WAIT_SECONDS:.0f}).", ge=0, le=CHANGES_WAIT_SECONDS)] = 0
    limit: Annotated[int, Field(description="Most changes to return (the newest are kept).", ge=1, le=CHANGES_RETURNED)] = CHANGES_RETURNED_DEFAULT


async def get_changes(ctx: CallContext, args: GetChangesInput) -> dict[str, Any]:
    if args.since is not None and args.since_revision is not None:
        raise ToolError(ErrorCode.INVALID_ARGUMENT, "Give since or sinceRevision, not both.")
    nb = await ctx.notebook(args.notebook_path)
    deadline = time.monotonic() + args.wait
    while True:
        nb.take_changes()  # bring the log up to date
        hidden_now = nb.view().hidden
        entries = ctx.changes.entries(nb.path, args.since)
        if args.since_revision is not None:
            entries = [e for e in entries if e.revision is None or e.revision > args.since_revision]
        shown = [e for e in entries if parse_level(e.access) != "none" and e.cell_id not in hidden_now]
        if shown or time.monotonic() >= deadline:
            break
        await asyncio.sleep(CHANGES_POLL_SECONDS)
    omitted = max(0, len(shown) - args.limit)
    payload: dict[str, Any] = {
        "path": nb.path,
        "seq": ctx.changes.latest_seq(),
        "revision": nb.revision(),
        "changes": [e.to_json() for e in shown[omitted:]],
        "truncated": omitted > 0,
        "omittedCount": omitted,
        "hiddenChangeCount": len(entries) - len(shown),
    }
    if args.since is not None and ctx.changes.missed_since(args.since):
        payload["missed"] = True  # entries newer than `since` were dropped from the bounded log: reread the cells
    return payload


TOOLS = (
    Tool("jupyter_get_changes", "Get changes",
         "What changed in the notebook since a sequence number (`seq` of the previous result) or a revision: each change "
         "with who made it (person or agent), the kind (insert, edit, delete, move, run, outputs) and the cell id, "
         "coalesced. Optionally waits up to 15 s for a change. Use it to follow the person's edits without rereading.",
         GetChangesInput, get_changes, Annotations(read_only=True)),
)
