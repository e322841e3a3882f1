"""Propose mode: every change the agent asks for waits for the person's Accept or Deny (docs/TOOLS.md, "Propose
mode").

The mode is the person's; no tool changes it. In ``propose`` mode a writing tool calls :meth:`ProposalBook.request`
with a diff, code or summary and waits: accepted, it checks everything again and applies as in direct mode; denied
(by the person, or automatically when its cell or notebook goes), the call ends with ``{status: "denied",
proposalId, reason}``; aborted, it is withdrawn. One proposal waits per cell, or per path for workspace changes
(``scope`` "workspace"; a site tool's call accepted as a whole, :func:`whole_call_approved`). Safety net: the access
guard refuses any write in propose mode not approved in the same call (:func:`approved`).
"""

from __future__ import annotations

import asyncio
import bisect
import contextvars
import difflib
import itertools
import time
import traceback
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from pydantic import Field
from pydantic.alias_generators import to_camel

from webmcp_bridge.calls.outcome import CallEnded
from webmcp_bridge.calls.payloads import Payload
from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.core.invisible import code_lines
from webmcp_bridge.core.limits import (
    CODE_BYTES,
    DIFF_LINES,
    PROPOSAL_CHECK_SECONDS,
    PROPOSAL_REASON_BYTES,
    SITE_TOOL_ARGUMENT_BYTES,
    preview,
    utf8_len,
)

Mode = Literal["direct", "propose"]
MODES: tuple[Mode, ...] = ("direct", "propose")

_approved: contextvars.ContextVar[bool] = contextvars.ContextVar("webmcp_bridge_approved", default=False)
_whole_call: contextvars.ContextVar[bool] = contextvars.ContextVar("webmcp_bridge_whole_call", default=False)


def approved() -> bool:
    """True inside a call whose change the person accepted, or that Direct mode decided (:func:`mark_direct`)."""
    return _approved.get()


def whole_call_approved() -> bool:
    """True inside a call the person accepted as a whole (a held site tool): its changes need no proposal."""
    return _whole_call.get()


def mark_whole_call() -> None:
    """Mark the current call as accepted as a whole (after the person accepted its proposal)."""
    _approved.set(True)
    _whole_call.set(True)


def mark_direct() -> None:
    """Mark the current call as decided in Direct mode, so switching to Propose meanwhile does not stop it half way."""
    _approved.set(True)


@dataclass(frozen=True)
class Decision:
    """How a proposal ended; ``reason``: the person's words or the automatic denial's; ``by``: "person" | "bridge"."""

    accepted: bool
    reason: str | None = None
    by: str = "person"


class DeniedPayload(Payload):
    """The result of a change the person denied in Propose mode (``outputSchema`` of every tool that proposes)."""

    status: Literal["denied"]
    proposalId: str
    tool: str
    reason: str | None = Field(
        description="What the person typed, or why the bridge denied it for them; null when nothing was typed."
    )
    message: str


class ProposalDenied(CallEnded):
    """Raised inside a tool whose proposal was denied: a normal result ``{status: "denied", proposalId, tool,
    reason, message}``."""

    outcome = "denied"

    def __init__(self, proposal_id: str, tool: str, reason: str | None, by: str) -> None:
        super().__init__(reason or "denied")
        self.proposal_id, self.tool, self.reason, self.by = proposal_id, tool, reason, by

    def payload(self) -> dict[str, Any]:
        """The result payload of the denied call."""
        who = "The person" if self.by == "person" else "The bridge"
        return {
            "status": "denied",
            "proposalId": self.proposal_id,
            "tool": self.tool,
            "reason": self.reason,
            "message": f"{who} denied this change"
            + (f" ({self.reason.rstrip('.')})." if self.reason else ".")
            + " Nothing was changed.",
        }


def diff_lines_at_least(before: str, after: str) -> int:
    """A linear lower bound on :func:`source_diff`'s lines, checked against :data:`DIFF_LINES` before any diff."""
    return max(len(code_lines(before)), len(code_lines(after)))


#: steps a line diff may take per line of its sides (plus MATCH_STEPS_BASE), so the largest diff the limits allow
#: stays far under 50 ms on the page's main thread (bench/diffs.py)
MATCH_STEPS_PER_LINE = 8
MATCH_STEPS_BASE = 200
#: a line found more often than this in the new text is no anchor of :func:`_anchored` (blank, ``pass``, ``else:``)
POPULAR_LINE = 4


def match_steps(a_lines: int, b_lines: int) -> int:
    """The step budget of one :class:`_Matcher` over sides of ``a_lines`` and ``b_lines`` lines."""
    return MATCH_STEPS_BASE + MATCH_STEPS_PER_LINE * (a_lines + b_lines)


class _OverBudget(Exception):
    """A :class:`_Matcher` would take more steps than its budget."""


class _Matcher(difflib.SequenceMatcher[str]):
    """:class:`difflib.SequenceMatcher` (``autojunk`` off) raising :class:`_OverBudget` before it passes ``budget``
    steps. A step is a line of ``a`` visited by ``find_longest_match`` or a position of it in ``b``, counted exactly
    from prefix sums before each call (unbounded, repeated lines take 0.2 to 2 s for 400 lines a side). ``popular``
    > 0 drops lines found more often in ``b`` from the index (they match only next to other matches)."""

    # set by SequenceMatcher (documented attributes its typing stub leaves out)
    a: list[str]
    b: list[str]
    b2j: dict[str, list[int]]
    bpopular: set[str]

    def __init__(self, a: list[str], b: list[str], budget: int, popular: int = 0) -> None:
        super().__init__(None, a, b, autojunk=False)
        if popular:
            for line in [line for line, where in self.b2j.items() if len(where) > popular]:
                del self.b2j[line]
                self.bpopular.add(line)
        where = self.b2j
        self.cost = [0, *itertools.accumulate(1 + len(where.get(line, ())) for line in a)]
        self.budget, self.steps = budget, 0

    def find_longest_match(self, alo: int = 0, ahi: int | None = None, blo: int = 0, bhi: int | None = None) -> Any:
        ahi = len(self.a) if ahi is None else ahi
        steps = self.cost[ahi] - self.cost[alo] + 1
        if self.steps + steps > self.budget:
            raise _OverBudget
        self.steps += steps
        return super().find_longest_match(alo, ahi, blo, len(self.b) if bhi is None else bhi)


#: (tag, a-start, a-end, b-start, b-end) as :meth:`difflib.SequenceMatcher.get_opcodes` gives them
Opcode = tuple[str, int, int, int, int]


def _bounded_opcodes(a: list[str], b: list[str], budget: int, popular: int = 0) -> tuple[list[Opcode] | None, int]:
    """A :class:`_Matcher`'s opcodes within ``budget`` (None past it), and the steps taken."""
    matcher = _Matcher(a, b, budget, popular)
    try:
        return list(matcher.get_opcodes()), matcher.steps
    except _OverBudget:
        return None, matcher.steps


def _anchored(a: list[str], b: list[str], budget: int) -> list[Opcode]:
    """Opcodes in bounded time: lines found once on each side are anchors (their longest common order, as patience
    diff); each gap keeps its common head and tail, the rest gets a :class:`_Matcher` from the shared ``budget``, or
    one replace block when its sides share no line or the budget is spent."""
    counts_a, counts_b = Counter(a), Counter(b)
    in_b = {line: j for j, line in enumerate(b) if counts_b[line] == 1}
    pairs = [(i, in_b[line]) for i, line in enumerate(a) if counts_a[line] == 1 and line in in_b]
    ops: list[Opcode] = []
    i = j = 0
    for ai, bj in [*_increasing(pairs), (len(a), len(b))]:
        head = 0
        while i + head < ai and j + head < bj and a[i + head] == b[j + head]:
            head += 1
        tail = 0
        while i + head < ai - tail and j + head < bj - tail and a[ai - 1 - tail] == b[bj - 1 - tail]:
            tail += 1
        ops.append(("equal", i, i + head, j, j + head))
        gap_a, gap_b = a[i + head : ai - tail], b[j + head : bj - tail]
        found: list[Opcode] | None = None
        if gap_a and gap_b and budget > 0 and not set(gap_a).isdisjoint(gap_b):
            found, steps = _bounded_opcodes(gap_a, gap_b, budget, POPULAR_LINE)
            budget -= steps
        if found is None:
            found = [("replace" if gap_a and gap_b else "delete" if gap_a else "insert", 0, len(gap_a), 0, len(gap_b))]
        ops.extend((tag, i1 + i + head, i2 + i + head, j1 + j + head, j2 + j + head) for tag, i1, i2, j1, j2 in found)
        ops.append(("equal", ai - tail, ai + 1, bj - tail, bj + 1))  # the gap's tail and the anchor itself
        i, j = ai + 1, bj + 1
    last = ops.pop()  # the end marker is no line: keep only the last gap's tail
    ops.append(("equal", last[1], len(a), last[3], len(b)))
    return ops


def _increasing(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest run of ``pairs`` (sorted by first item) with increasing second items, O(n log n)."""
    tops: list[int] = []  # tops[k]: the smallest second item ending an increasing run of k + 1 pairs
    ends: list[int] = []  # ends[k]: the index of that pair
    back = [-1] * len(pairs)
    for index, (_, j) in enumerate(pairs):
        k = bisect.bisect_left(tops, j)
        if k == len(tops):
            tops.append(j)
            ends.append(index)
        else:
            tops[k], ends[k] = j, index
        back[index] = ends[k - 1] if k else -1
    run, index = [], ends[-1] if ends else -1
    while index >= 0:
        run.append(pairs[index])
        index = back[index]
    return run[::-1]


def source_diff(before: str, after: str, max_lines: int | None = DIFF_LINES) -> list[list[str]]:
    """A line diff ``[[op, line], ...]`` (op " ", "-", "+"), at most ``max_lines`` then ``["…", "<n> more lines"]``.
    Lines split as Python splits code (:func:`webmcp_bridge.core.invisible.code_lines`). A replaced block shows its
    removed lines, then its added ones (no intra-line pass). The matcher's work is bounded (main thread); past its
    budget the diff is anchored (:func:`_anchored`): never wrong, but a few kept lines may show removed and added.
    """
    a, b = code_lines(before), code_lines(after)
    budget = match_steps(len(a), len(b))
    opcodes, _ = _bounded_opcodes(a, b, budget)
    if opcodes is None:
        opcodes = _anchored(a, b, budget)
    ops: list[list[str]] = []
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            ops.extend([" ", line] for line in a[i1:i2])
            continue
        ops.extend(["-", line] for line in a[i1:i2])
        ops.extend(["+", line] for line in b[j1:j2])
    if max_lines is not None and len(ops) > max_lines:
        return ops[:max_lines] + [["…", f"{len(ops) - max_lines} more lines"]]
    return ops


@dataclass
class Proposal:
    """One change waiting for the person. ``kind``: update | edit | insert | delete | move | clear | type | run |
    run_code | batch, or for ``scope`` "workspace" write_file | append_file | edit_file | create_notebook |
    site_tool. ``cell_id``: the cell it shows under (None: the end, or none). ``path``: the notebook's or file's
    ("" for a site tool). ``diff``: :func:`source_diff`'s; ``code``: what a run would execute."""

    id: str
    path: str
    tool: str
    kind: str
    cell_id: str | None
    summary: str
    diff: list[list[str]] | None = None
    code: str | None = None
    created: float = field(default_factory=time.time)
    future: asyncio.Future | None = None
    task: Any = None  # the call's task while it waits (dialogs opening meanwhile are not the call's)
    scope: str = "cell"

    def to_json(self) -> dict[str, Any]:
        """``{id, path, tool, kind, cellId, summary, diff, code, created, scope}``: every field but ``future`` and
        ``task``, so a field added to this class reaches the panel."""
        data = {to_camel(f.name): getattr(self, f.name) for f in fields(self) if f.name not in ("future", "task")}
        return {**data, "created": round(self.created, 3)}


Listener = Callable[[str, Proposal], None]  # (event: "created" | "settled", proposal)


class ProposalBook:
    """The mode and the proposals waiting for the person."""

    def __init__(self, mode: Mode = "direct") -> None:
        self.mode: Mode = mode
        self._waiting: dict[str, Proposal] = {}
        self._listeners: list[Listener] = []
        self._mode_listeners: list[Callable[[Mode], None]] = []

    def set_mode(self, mode: Mode) -> None:
        """Switch Direct/Propose (the person's action). Proposals already waiting keep waiting."""
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}")
        self.mode = mode
        _tell(self._mode_listeners, mode)

    def on_mode(self, listener: Callable[[Mode], None]) -> Callable[[], None]:
        """Call ``listener(mode)`` whenever the mode changes; returns an unsubscribe function."""
        self._mode_listeners.append(listener)
        return lambda: self._mode_listeners.remove(listener) if listener in self._mode_listeners else None

    def accept(self, proposal_id: str) -> bool:
        """Accept a waiting proposal; False when there is none with that id (already settled)."""
        return self._settle(proposal_id, Decision(True))

    def deny(self, proposal_id: str, reason: str | None = None, by: str = "person") -> bool:
        """Deny a waiting proposal with an optional reason (cut to PROPOSAL_REASON_BYTES); False when there is none."""
        return self._settle(
            proposal_id, Decision(False, preview(reason, PROPOSAL_REASON_BYTES) if reason else None, by)
        )

    def waiting(self, path: str | None = None) -> list[Proposal]:
        """Proposals waiting, oldest first (of notebook ``path``, or all)."""
        return [p for p in self._waiting.values() if path is None or p.path == path]

    def get(self, proposal_id: str) -> Proposal | None:
        """A waiting proposal by id."""
        return self._waiting.get(proposal_id)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(event, proposal)`` on "created" and "settled"; returns an unsubscribe function."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    async def request(self, proposal: Proposal, still_valid: Callable[[], str | None] | None = None) -> Decision:
        """Show ``proposal`` and wait for the decision; accepted, the call is :func:`approved`. A reason
        ``still_valid()`` returns (asked every PROPOSAL_CHECK_SECONDS) denies it; cancelling withdraws it. Raises
        ToolError(PROPOSAL_ALREADY_PENDING) when one already waits on the same place."""
        for other in self._waiting.values():
            if proposal.scope == "workspace" and not proposal.path:
                break  # a site tool's calls: each waits on its own
            if other.path == proposal.path and other.cell_id == proposal.cell_id and other.scope == proposal.scope:
                where = (
                    f"{proposal.path!r}"
                    if proposal.scope == "workspace"
                    else f"cell {proposal.cell_id!r}"
                    if proposal.cell_id
                    else "the end of the notebook"
                )
                raise ToolError(
                    ErrorCode.PROPOSAL_ALREADY_PENDING,
                    f"A proposal ({other.tool}) already waits for the person on {where}; wait for it to be settled.",
                    proposalId=other.id,
                    cellId=proposal.cell_id,
                )
        proposal.id = proposal.id or uuid.uuid4().hex[:10]
        proposal.future = asyncio.get_event_loop().create_future()
        proposal.task = asyncio.current_task()
        self._waiting[proposal.id] = proposal
        self._emit("created", proposal)
        try:
            while True:
                done, _ = await asyncio.wait({proposal.future}, timeout=PROPOSAL_CHECK_SECONDS)
                if done:
                    break
                reason = still_valid() if still_valid else None
                if reason:
                    self._settle(proposal.id, Decision(False, reason, "bridge"))
            decision: Decision = proposal.future.result()
        except asyncio.CancelledError:
            self._settle(proposal.id, Decision(False, "the call was aborted", "bridge"))
            raise
        if decision.accepted:
            _approved.set(True)
        return decision

    def _settle(self, proposal_id: str, decision: Decision) -> bool:
        proposal = self._waiting.pop(proposal_id, None)
        if proposal is None:
            return False
        if proposal.future is not None and not proposal.future.done():
            proposal.future.set_result(decision)
        self._emit("settled", proposal)
        return True

    def _emit(self, event: str, proposal: Proposal) -> None:
        _tell(self._listeners, event, proposal)


def _tell(listeners: list[Any], *args: Any) -> None:
    for listener in list(listeners):
        try:
            listener(*args)
        except Exception:  # the person's view must not break the agent's call
            traceback.print_exc()


def too_large_to_show(lines: int) -> ToolError:
    """TOO_LARGE for a change of ``lines`` diff lines, more than Propose mode shows."""
    return ToolError(
        ErrorCode.TOO_LARGE,
        f"This change is at least {lines} diff lines; Propose mode shows at most {DIFF_LINES} "
        "lines to the person. Split it into smaller changes.",
        lines=lines,
        maxLines=DIFF_LINES,
    )


def shown_diff(
    before: str | None, after: str | None, diff: list[list[str]] | None, code: str | None
) -> list[list[str]] | None:
    """The diff a proposal shows (from ``before``/``after`` unless given). What cannot be shown in full is refused,
    never cut: ToolError(TOO_LARGE) over DIFF_LINES lines or ``code`` over CODE_BYTES bytes."""
    if diff is None and (before is not None or after is not None):
        at_least = diff_lines_at_least(before or "", after or "")  # no diff computed for a change too big
        if at_least > DIFF_LINES:
            raise too_large_to_show(at_least)
        diff = source_diff(before or "", after or "", max_lines=None)
    if diff is not None and len(diff) > DIFF_LINES:
        raise too_large_to_show(len(diff))
    if code is not None and utf8_len(code) > CODE_BYTES:
        raise ToolError(
            ErrorCode.TOO_LARGE,
            f"This code is {utf8_len(code)} bytes; Propose mode shows at most {CODE_BYTES} "
            "bytes to the person. Run less at once.",
            bytes=utf8_len(code),
            maxBytes=CODE_BYTES,
        )
    return diff


def shown_arguments(shown: str) -> list[str]:
    """The lines a site tool's proposal shows of its arguments' JSON. Raises ToolError(TOO_LARGE) over
    SITE_TOOL_ARGUMENT_BYTES bytes or DIFF_LINES lines (never cut)."""
    if utf8_len(shown) > SITE_TOOL_ARGUMENT_BYTES:
        raise ToolError(
            ErrorCode.TOO_LARGE,
            f"These arguments are {utf8_len(shown)} bytes; Propose mode shows at most "
            f"{SITE_TOOL_ARGUMENT_BYTES} bytes of a site tool's arguments to the person.",
            bytes=utf8_len(shown),
            maxBytes=SITE_TOOL_ARGUMENT_BYTES,
        )
    lines = shown.splitlines() or [""]
    if len(lines) > DIFF_LINES:
        raise too_large_to_show(len(lines))
    return lines
