"""Propose mode's holding of a call: a change shown to the person and waited for before it is made (:func:`hold`), a
site author's tool held as a whole (:func:`hold_site_tool`), and the kernel runs the person accepted in a call
(:func:`accept_runs`, which the run rule asks with :func:`run_accepted`). The tools hold through ``CallContext``.
"""

from __future__ import annotations

import contextvars
import dataclasses
import functools
import hashlib
import json
import operator
import types
import typing
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypedDict, Unpack

from webmcp_bridge.calls.registry import Tool
from webmcp_bridge.core.limits import PROPOSAL_SUMMARY_BYTES, preview
from webmcp_bridge.propose.proposals import (
    DeniedPayload,
    Proposal,
    ProposalBook,
    ProposalDenied,
    approved,
    mark_direct,
    mark_whole_call,
    shown_arguments,
    shown_diff,
    whole_call_approved,
)

_accepted: contextvars.ContextVar[frozenset[str]] = contextvars.ContextVar(
    "webmcp_bridge_accepted_runs", default=frozenset()
)


def code_digest(code: str) -> str:
    """The SHA-256 (hex) of a run's code, exactly as it runs (no stripping): how an accepted run is recognised."""
    return hashlib.sha256(code.encode("utf-8", "surrogatepass")).hexdigest()


def accept_runs(codes: Iterable[str]) -> None:
    """Record, for the rest of the current call (its asyncio task), that the person accepted running these codes
    (each a cell's source or a code text, exactly as shown to the person)."""
    _accepted.set(_accepted.get() | {code_digest(code) for code in codes})


def run_accepted(code: str) -> bool:
    """True when the person accepted running exactly ``code`` in the current call."""
    return code_digest(code) in _accepted.get()


class Shown(TypedDict, total=False):
    """What a proposal shows: ``before``/``after`` (sources) make the diff, or ``diff`` ready-made (as ``source_diff``);
    ``code`` is what a run would execute; ``always``: shown in Direct mode and in a call accepted as a whole too;
    ``runs``: the texts (cells' sources) the code is made of, accepted as runs with it (else ``code``)."""

    before: str | None
    after: str | None
    code: str | None
    diff: list[list[str]] | None
    always: bool
    runs: Sequence[str] | None


async def hold(
    book: ProposalBook,
    tool: str,
    kind: str,
    path: str,
    summary: str,
    *,
    cell_id: str | None = None,
    still_valid: Callable[[], str | None] | None = None,
    scope: str = "cell",
    **shown: Unpack[Shown],
) -> bool:
    """In Propose mode (``book.mode``), show the change to the person and wait for the decision; in Direct mode, or
    inside a call the person accepted as a whole, return False / True at once (unless ``shown["always"]``).
    ``path``: the notebook's, or for ``scope`` "workspace" (a box of its own) the file's; ``cell_id`` the cell it
    is shown under; ``summary`` is cut to PROPOSAL_SUMMARY_BYTES bytes; ``still_valid()`` is asked while it waits
    (a reason in words denies it). An accepted run (:class:`Shown`) counts as accepted by the run rule for the rest
    of the call. Returns True when the change was accepted (the caller checks its preconditions again before
    writing), False in Direct mode. Raises ProposalDenied (a normal "denied" result), ToolError
    (PROPOSAL_ALREADY_PENDING; TOO_LARGE: more than DIFF_LINES lines or CODE_BYTES bytes of code to show)."""
    always, code, runs = shown.get("always", False), shown.get("code"), shown.get("runs")
    if book.mode != "propose" and not always:
        mark_direct()
        return False
    if whole_call_approved() and not always:
        return True  # the person accepted this call as a whole (a site author's tool, see hold_site_tool)
    diff = shown_diff(shown.get("before"), shown.get("after"), shown.get("diff"), code)
    proposal = Proposal(
        "", path, tool, kind, cell_id, preview(summary, PROPOSAL_SUMMARY_BYTES), diff, code, scope=scope
    )
    decision = await book.request(proposal, still_valid)
    if not decision.accepted:
        raise ProposalDenied(proposal.id, tool, decision.reason, decision.by)
    if runs is not None or code is not None:
        accept_runs(runs if runs is not None else [code or ""])
    return True


def hold_site_tool(tool: Tool) -> Tool:
    """``tool`` (a site author's, not declared read-only) held in Propose mode: before its handler runs, the
    person sees a proposal naming the tool with its arguments (JSON, at most SITE_TOOL_ARGUMENT_BYTES bytes, else
    TOO_LARGE) and decides; on Accept the call runs, and what it changes counts as accepted (its own proposals
    are not asked again, unless they are shown in Direct mode too: ``always``). Denied: the normal "denied"
    result, the handler never runs. In Direct mode the handler runs at once. A tool that declares itself
    read-only (``Annotations(read_only=True)``) is returned unchanged; the access guard refuses any write it
    attempts in Propose mode anyway."""
    if tool.annotations.read_only:
        return tool
    inner = tool.handler

    async def held(ctx: Any, args: Any) -> Any:
        if ctx.proposals.mode == "propose" and not approved():
            shown = json.dumps(
                args.model_dump(mode="json", by_alias=True, exclude_none=True), ensure_ascii=False, indent=1
            )
            summary = preview(f"Run the site's tool {tool.title!r} with these arguments", PROPOSAL_SUMMARY_BYTES)
            rows = [[" ", line] for line in shown_arguments(shown)]
            proposal = Proposal("", "", tool.name, "site_tool", None, summary, rows, None, scope="workspace")
            decision = await ctx.proposals.request(proposal)
            if not decision.accepted:
                raise ProposalDenied(proposal.id, tool.name, decision.reason, decision.by)
            mark_whole_call()
        return await inner(ctx, args)

    return dataclasses.replace(tool, handler=held, output_model=_with_denied(tool.output_model))


def _with_denied(model: Any) -> Any:
    """``model`` (a tool's output model, or a union of them) with the "denied" payload added when it lacks it."""
    if model is None:
        return None
    union = isinstance(model, types.UnionType) or typing.get_origin(model) is typing.Union
    members = typing.get_args(model) if union else (model,)
    if DeniedPayload in members:
        return model
    return functools.reduce(operator.or_, (*members, DeniedPayload))
