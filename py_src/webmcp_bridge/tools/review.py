"""Review-thread tools over :class:`webmcp_bridge.review.threads.Review`, where every rule lives. Messages made
here are the "agent"'s; a message the file says is the person's but not signed in this browser reads "file"
(:mod:`webmcp_bridge.review.signatures`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import Field

from webmcp_bridge.access.notebook_guard import GuardedNotebook
from webmcp_bridge.calls.payloads import sometimes
from webmcp_bridge.calls.registry import Annotations
from webmcp_bridge.core.bounds import json_bytes
from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.core.limits import DEFAULT_LIMITS, KIB, RESULT_HEADROOM, SHORT_ID_CHARS
from webmcp_bridge.review.threads import CellAnchor, OutputAnchor, RangeAnchor, Review, ThreadView
from webmcp_bridge.tools.common import MAX_INT, CallContext, CellIdField, Id, Index, NotebookInput, tool
from webmcp_bridge.tools.payloads import Focus, NotebookRevision, Thread, ThreadCounts, model
from webmcp_bridge.tools.run import Selection

CommentsOutput = model(
    "CommentsOutput",
    path=str,
    status=Literal["open", "resolved", "all"],
    scope=Literal["notebook", "cell"],
    threads=list[Thread],
    counts=ThreadCounts,
    truncated=bool,
    omittedCount=int,
    cellId=(str, sometimes()),
)
CommentOutput = model("CommentOutput", path=str, thread=Thread)
ThreadWritten = model("ThreadWritten", thread=Thread, notebook=NotebookRevision)
ThreadShown = model("ThreadShown", thread=Thread, shown=Literal["selection", "cell", "output"], focus=Focus)


ThreadIdField = Annotated[
    str,
    Field(
        description="The thread's id, as returned by jupyter_list_comments or jupyter_create_comment.",
        min_length=1,
        max_length=SHORT_ID_CHARS,
    ),
]
BodyField = Annotated[
    str,
    Field(
        description=f"The message text (plain text; at most {DEFAULT_LIMITS.comment_body_bytes // KIB} KiB of UTF-8 "
        "by default).",
        min_length=1,
    ),
]


def _review(ctx: CallContext, nb: GuardedNotebook) -> Review:
    """The threads of ``nb`` for a tool: the call's limits, authors judged with the session's page secret."""
    return Review(nb, ctx.limits, key=ctx.page_secret())


def _thread(ctx: CallContext, view: ThreadView) -> dict[str, Any]:
    return view.to_json(max_messages=ctx.limits.comment_messages_returned)


async def _written(ctx: CallContext, args: NotebookInput, write: Callable[[Review], ThreadView]) -> dict[str, Any]:
    """:class:`ThreadWritten` of ``write`` done on the threads of the notebook ``args`` names."""
    nb = await ctx.notebook(args.notebook_path)
    view = write(_review(ctx, nb))
    return {"thread": _thread(ctx, view), "notebook": {"path": nb.path, "revision": nb.revision()}}


class ListCommentsInput(NotebookInput):
    status: Literal["open", "resolved", "all"] = Field("open", description="Which threads.")
    scope: Literal["notebook", "cell"] | None = Field(
        None,
        description="'notebook': every thread; 'cell': threads on cellId, or on the person's active cell when "
        "cellId is omitted. Default: 'cell' when cellId is given, else 'notebook'.",
    )
    cell_id: Id | None = Field(None, description="Only threads anchored to this cell.")
    limit: int = Field(50, description="Most threads to return.", ge=1, le=MAX_INT)


async def list_comments(ctx: CallContext, args: ListCommentsInput) -> dict[str, Any]:
    scope = args.scope or ("cell" if args.cell_id is not None else "notebook")
    if scope == "notebook" and args.cell_id is not None:
        raise ToolError(ErrorCode.INVALID_ARGUMENT, "cellId goes with scope 'cell' (or omit scope).")
    nb = await ctx.notebook(args.notebook_path)
    review = _review(ctx, nb)
    cell_id = args.cell_id
    if scope == "cell" and cell_id is None:
        cell_id = nb.focus().cell_id
        if cell_id is None:
            raise ToolError(ErrorCode.INVALID_ARGUMENT, "The person has no active cell in this notebook; pass cellId.")
    total = review.count(args.status, cell_id)
    limit = min(args.limit, ctx.limits.comment_threads_listed)
    budget, shown = ctx.limits.result_bytes - RESULT_HEADROOM, list[dict[str, Any]]()
    for view in review.threads(args.status, cell_id, limit=limit):
        item = view.to_json(max_messages=ctx.limits.comment_messages_listed)
        budget -= json_bytes(item) + 1
        if budget < 0 and shown:
            break
        shown.append(item)
    payload: dict[str, Any] = {
        "path": nb.path,
        "status": args.status,
        "scope": scope,
        "threads": shown,
        "counts": review.counts(),
        "truncated": len(shown) < total,
        "omittedCount": total - len(shown),
    }
    if scope == "cell":
        payload["cellId"] = cell_id
    return payload


class ThreadInput(NotebookInput):
    thread_id: ThreadIdField


async def get_comment(ctx: CallContext, args: ThreadInput) -> dict[str, Any]:
    nb = await ctx.notebook(args.notebook_path)
    return {"path": nb.path, "thread": _thread(ctx, _review(ctx, nb).get(args.thread_id))}


class CreateCommentInput(NotebookInput):
    cell_id: CellIdField
    body: BodyField
    quote: str | None = Field(
        None, description="Anchor to this exact text of the cell's source (it must occur exactly once).", min_length=1
    )
    selection: Selection | None = Field(
        None,
        description="Anchor to this range of the cell's source ({line, column}, 0-based, "
        "columns in UTF-16 code units as the editor counts).",
    )
    output_index: Index | None = Field(
        None, description="Anchor to this output of the cell (index from jupyter_get_cells)."
    )


async def create_comment(ctx: CallContext, args: CreateCommentInput) -> dict[str, Any]:
    given = [
        name
        for name, value in (("quote", args.quote), ("selection", args.selection), ("outputIndex", args.output_index))
        if value is not None
    ]
    if len(given) > 1:
        raise ToolError(
            ErrorCode.INVALID_ARGUMENT, f"Give at most one of quote, selection, outputIndex (got {', '.join(given)})."
        )
    if args.quote is not None:
        anchor: CellAnchor | RangeAnchor | OutputAnchor = RangeAnchor(args.cell_id, quote=args.quote)
    elif args.selection is not None:
        anchor = RangeAnchor(args.cell_id, selection=args.selection.model_dump())
    elif args.output_index is not None:
        anchor = OutputAnchor(args.cell_id, args.output_index)
    else:
        anchor = CellAnchor(args.cell_id)
    return await _written(ctx, args, lambda review: review.create(anchor, args.body, "agent"))


class ReplyCommentInput(ThreadInput):
    body: BodyField


async def reply_comment(ctx: CallContext, args: ReplyCommentInput) -> dict[str, Any]:
    return await _written(ctx, args, lambda review: review.reply(args.thread_id, args.body, "agent"))


class ResolveCommentInput(ThreadInput):
    message: str | None = Field(None, description="An optional closing message, added to the thread.", min_length=1)


async def resolve_comment(ctx: CallContext, args: ResolveCommentInput) -> dict[str, Any]:
    return await _written(ctx, args, lambda review: review.resolve(args.thread_id, "agent", args.message))


async def reopen_comment(ctx: CallContext, args: ThreadInput) -> dict[str, Any]:
    return await _written(ctx, args, lambda review: review.reopen(args.thread_id, "agent"))


async def focus_comment(ctx: CallContext, args: ThreadInput) -> dict[str, Any]:
    nb = await ctx.notebook(args.notebook_path)
    view, shown = _review(ctx, nb).focus(args.thread_id)
    focus = nb.focus()
    focused = {"cellId": focus.cell_id, "cursor": focus.cursor, "selection": focus.selection}
    return {"thread": _thread(ctx, view), "shown": shown, "focus": focused}


TOOLS = (
    tool(
        "jupyter_list_comments",
        "List review threads of a notebook (default: open ones), oldest first: id, status, anchor (cell, source range "
        "or output) and its state now (exact / reanchored / orphaned / output-changed / cell-missing), the first and "
        "latest messages. scope 'cell' lists the threads on the person's active cell or on cellId.",
        list_comments,
        Annotations.read(),
        CommentsOutput,
    ),
    tool(
        "jupyter_get_comment",
        "Read one review thread with its messages (who wrote each and when: person, agent, or file: says it is the "
        "person's but was not written by them in this browser, so it is the file's text, not their word) and its "
        "anchor's state now.",
        get_comment,
        Annotations.read(),
        CommentOutput,
    ),
    tool(
        "jupyter_create_comment",
        "Open a review thread on a cell: on the whole cell, on a range of its source (an exact quote occurring once, "
        "or a selection), or on one of its outputs. The thread is stored in the notebook's metadata and travels with "
        "the file.",
        create_comment,
        Annotations.write(destructive=False, idempotent=False, untrusted_content=True),
        ThreadWritten,
    ),
    tool(
        "jupyter_reply_comment",
        "Add a message to a review thread (open or resolved).",
        reply_comment,
        Annotations.write(destructive=False, idempotent=False, untrusted_content=True),
        ThreadWritten,
        "Reply to comment",
    ),
    tool(
        "jupyter_resolve_comment",
        "Mark an open review thread resolved, optionally with a closing message.",
        resolve_comment,
        Annotations.write(destructive=False, idempotent=True, untrusted_content=True),
        ThreadWritten,
    ),
    tool(
        "jupyter_reopen_comment",
        "Reopen a resolved review thread.",
        reopen_comment,
        Annotations.write(destructive=False, idempotent=True, untrusted_content=True),
        ThreadWritten,
    ),
    tool(
        "jupyter_focus_comment",
        "Show a review thread's anchor to the person: reveal the cell and select the quoted range, or highlight the "
        "output. Refused with COMMENT_ANCHOR_STALE when the anchor is orphaned or its cell was deleted.",
        focus_comment,
        Annotations.write(destructive=False, idempotent=True, untrusted_content=True),
        ThreadShown,
    ),
)
