"""Propose mode's holding of a call: a change shown and waited for (:func:`hold`), a site tool held as a whole
(:func:`hold_site_tool`), and the kernel runs the person accepted in a call (:func:`accept_runs`, :func:`run_accepted`).
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
    """Record for the rest of the current call (its task) that the person accepted running these texts, as shown."""
    _accepted.set(_accepted.get() | {code_digest(code) for code in codes})


def run_accepted(code: str) -> bool:
    """True when the person accepted running exactly ``code`` in the current call."""
    return code_digest(code) in _accepted.get()


class Shown(TypedDict, total=False):
    """What a proposal shows: a diff of ``before``/``after`` or a ready ``diff``; ``code`` a run would execute;
    ``always``: shown in Direct mode and in a call accepted as a whole too; ``runs``: the texts accepted as runs
    (else ``code``)."""

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
    """In Propose mode show the change and wait: True when accepted (the caller checks again before writing; an
    accepted run counts for the run rule for the rest of the call). Direct mode: False at once; inside a call
    accepted as a whole: True at once (neither with ``always``). ``summary`` is cut to PROPOSAL_SUMMARY_BYTES;
    ``still_valid()`` may deny it while it waits. Raises ProposalDenied, ToolError(PROPOSAL_ALREADY_PENDING /
    TOO_LARGE)."""
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
    """A site author's non-read-only ``tool`` held in Propose mode: the person first sees its arguments (JSON, at
    most SITE_TOOL_ARGUMENT_BYTES); accepted, what it changes counts as accepted (except ``always`` proposals);
    denied, the handler never runs. A read-only tool is returned unchanged (the guard refuses its writes anyway)."""
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
    """``model`` (or union) with the "denied" payload added."""
    if model is None:
        return None
    union = isinstance(model, types.UnionType) or typing.get_origin(model) is typing.Union
    members = typing.get_args(model) if union else (model,)
    if DeniedPayload in members:
        return model
    return functools.reduce(operator.or_, (*members, DeniedPayload))
