"""jupyter_get_changes: what changed in a notebook since the agent last looked, and by whom.

From the bridge's change log (:mod:`webmcp_bridge.changes.log`), coalesced; a change of a cell hidden then or now is
only counted; "revert" is the person's revert of an agent's edit in the Agent panel. With ``wait`` the call follows
the person's typing (:mod:`webmcp_bridge.changes.feed`): a burst is told once it is over (``seq`` stops before one
under way); without, every change kept comes at once, a burst under way marked ``typing: true``.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Literal

from pydantic import Field

from webmcp_bridge.access.levels import parse_level
from webmcp_bridge.calls.payloads import Payload, Wire, sometimes
from webmcp_bridge.calls.registry import Annotations
from webmcp_bridge.changes.feed import wait_for_announcement
from webmcp_bridge.changes.log import ChangeEntry
from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.core.limits import (
    CHANGES_RETURNED,
    CHANGES_RETURNED_DEFAULT,
    CHANGES_WAIT_SECONDS,
    TYPING_LONGEST_SECONDS,
    TYPING_QUIET_SECONDS,
)
from webmcp_bridge.tools.common import CallContext, Index, NotebookInput, tool


class GetChangesInput(NotebookInput):
    since: Index | None = Field(
        None,
        description="Sequence number from a previous result's `seq`: only later changes. Omit for every change kept.",
    )
    since_revision: Index | None = Field(
        None,
        description="Only changes after the notebook had this revision (from jupyter_get_context or a write result).",
    )
    wait: float = Field(
        0,
        description=f"Seconds to wait for a change when there is none yet (0 to {CHANGES_WAIT_SECONDS:.0f}); a "
        f"burst of the person's typing is told once it is over ({TYPING_QUIET_SECONDS} s after a pause, at most "
        f"{TYPING_LONGEST_SECONDS:.0f} s after it began).",
        ge=0,
        le=CHANGES_WAIT_SECONDS,
    )
    limit: int = Field(
        CHANGES_RETURNED_DEFAULT, description="Most changes to return (the newest are kept).", ge=1, le=CHANGES_RETURNED
    )


class Change(Wire):
    seq: int
    actor: Literal["person", "agent"]
    kind: Literal["insert", "edit", "delete", "move", "run", "clear", "output", "metadata", "revert", "type"]
    cellId: str
    time: float
    count: int = Field(description="Changes merged into this one (a burst of keystrokes is one edit).")
    revision: int | None
    typing: bool = sometimes(
        "Without wait: the person is still typing in this cell (told again once the burst is over)."
    )


class ChangesOutput(Payload):
    path: str
    seq: int = Field(description="Pass it as since next time.")
    revision: int
    changes: list[Change]
    truncated: bool
    omittedCount: int
    hiddenChangeCount: int
    missed: bool = sometimes("Entries newer than since were dropped from the bounded log: read the cells again.")


async def get_changes(ctx: CallContext, args: GetChangesInput) -> dict[str, Any]:
    if args.since is not None and args.since_revision is not None:
        raise ToolError(ErrorCode.INVALID_ARGUMENT, "Give since or sinceRevision, not both.")
    nb = await ctx.notebook(args.notebook_path)
    log = ctx.changes
    hidden = 0

    def read() -> list[ChangeEntry]:
        """The visible entries newer than the caller's mark, the log brought up to date first (one host read)."""
        nonlocal hidden
        nb.take_changes()
        hidden_now = nb.view().hidden
        entries = log.entries(nb.path, args.since)
        if args.since_revision is not None:
            entries = [e for e in entries if e.revision is None or e.revision > args.since_revision]
        shown = [e for e in entries if parse_level(e.access) != "none" and e.cell_id not in hidden_now]
        hidden = len(entries) - len(shown)
        return shown

    if args.wait > 0:
        told = await wait_for_announcement(read, args.since, args.wait, log.typing, time.time, asyncio.sleep)
        shown, seq, typing = told.ready, told.seq, set[int]()
    else:  # at once: everything kept, a burst under way marked as such
        shown, seq, now = read(), None, time.time()
        typing = {e.seq for e in shown if not log.typing.over(e, args.since, now)}
    omitted = max(0, len(shown) - args.limit)
    payload: dict[str, Any] = {
        "path": nb.path,
        "seq": log.latest_seq() if seq is None else seq,
        "revision": nb.revision(),
        "changes": [{**e.to_json(), **({"typing": True} if e.seq in typing else {})} for e in shown[omitted:]],
        "truncated": omitted > 0,
        "omittedCount": omitted,
        "hiddenChangeCount": hidden,
    }
    if args.since is not None and ctx.changes.missed_since(args.since):
        # changes newer than `since` were dropped (the bounded log, a host's buffer): reread the cells
        payload["missed"] = True
    return payload


TOOLS = (
    tool(
        "jupyter_get_changes",
        "What changed in the notebook since a sequence number (`seq` of the previous result) or a revision: each "
        "change with who made it (person or agent), the kind (insert, edit, delete, move, run, clear: outputs "
        "cleared, output: outputs arrived with no run yet) and the cell id, coalesced. Optionally waits up to "
        f"{CHANGES_WAIT_SECONDS:.0f} s for a change (the person's typing is told in bursts, once each is over). Use "
        "it to follow the person's edits without rereading: pass the result's seq as since next time.",
        get_changes,
        Annotations.read(),
        ChangesOutput,
    ),
)
