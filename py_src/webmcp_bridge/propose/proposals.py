"""Propose mode: every change the agent asks for waits for the person's Accept or Deny.

The mode is the person's (the Agent panel, the command palette, the ``defaultMode`` setting); no tool can
change it. In ``direct`` mode a writing tool applies its change at once. In ``propose`` mode the tool, after
checking its arguments, calls :meth:`ProposalBook.request` with what it is about to do (a diff of the cell
source, the code it would run, or a one-line summary); the call waits (and goes pending past the execution
timeout like any long call) until:

- the person accepts: the tool checks everything again (a cell the person changed since is refused with
  ``STALE_CELL``, never overwritten) and applies the change through the same path as direct mode;
- the person denies, with an optional reason: the tool returns a normal (non-error) result
  ``{status: "denied", proposalId, reason}``;
- the cell it is anchored to is deleted or the notebook closed: denied automatically, with that reason;
- the call is aborted (its WebMCP signal): the proposal is withdrawn, nothing is applied.

At most one proposal waits per cell (a second gets ``PROPOSAL_ALREADY_PENDING``). A proposal that inserts at
the notebook's start or end is anchored to that place (``cell_id`` None).

Changes to the workspace outside a notebook's cells are proposed the same way, with ``scope`` "workspace":
``jupyter_write_file`` (an append too), ``jupyter_edit_file``, ``jupyter_create_notebook`` (``path`` is the
file's, ``cell_id`` None; at most one waits per path) and a site author's tool that does not declare itself
read-only (``path`` ""; the person accepts the call with its arguments, and what it then changes counts as
accepted: :func:`whole_call_approved`). The person's side shows these in a box of their own, not in a cell.

Safety net: the access guard refuses any write in propose mode that was not approved in the same call
(:func:`approved`), so a tool that forgets to ask cannot change the notebook behind the person's back.
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
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import Field

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
    """True inside a call whose change the person accepted (set by :meth:`ProposalBook.request`), or that
    decided in Direct mode that it needed no proposal (:func:`mark_direct`)."""
    return _approved.get()


def whole_call_approved() -> bool:
    """True inside a call the person accepted as a whole (a site author's tool held in Propose mode, see
    :func:`mark_whole_call`): the changes it then asks for need no proposal of their own."""
    return _whole_call.get()


def mark_whole_call() -> None:
    """Mark the current call as accepted as a whole (after the person accepted its proposal)."""
    _approved.set(True)
    _whole_call.set(True)


def mark_direct() -> None:
    """Mark the current call as decided in Direct mode, so the person switching to Propose while it runs does
    not stop it half way (its later writes are part of the change it already started)."""
    _approved.set(True)


@dataclass(frozen=True)
class Decision:
    """How a proposal ended: ``accepted``; ``reason`` (the person's words, or why it was denied for them);
    ``by`` is "person" or "bridge" (automatic denial)."""

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
    """Raised inside a tool when its proposal was denied: a neutral end of the call
    (:class:`~webmcp_bridge.calls.outcome.CallEnded`),
    which the registry turns into a normal result ``{status: "denied", proposalId, tool, reason, message}``."""

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
    """A lower bound on the lines of :func:`source_diff` (every line of the longer side shows once), in one
    linear pass: what Propose mode checks against :data:`DIFF_LINES` before computing any diff."""
    return max(len(code_lines(before)), len(code_lines(after)))


#: steps a line diff may take per line of its two sides (plus MATCH_STEPS_BASE): see :class:`_Matcher`.
#: Chosen so that the largest diff the limits allow (DIFF_LINES lines a side) stays far under 50 ms on the
#: page's main thread (bench/diffs.py prints the figures, CPython and Pyodide).
MATCH_STEPS_PER_LINE = 8
MATCH_STEPS_BASE = 200
#: a line found more often than this in the new text is no anchor when the diff is anchored (see
#: :func:`_anchored`): a blank line, ``pass``, ``else:`` are matched only next to the lines around them
POPULAR_LINE = 4


def match_steps(a_lines: int, b_lines: int) -> int:
    """The step budget of one :class:`_Matcher` over sides of ``a_lines`` and ``b_lines`` lines."""
    return MATCH_STEPS_BASE + MATCH_STEPS_PER_LINE * (a_lines + b_lines)


class _OverBudget(Exception):
    """A :class:`_Matcher` would take more steps than its budget."""


class _Matcher(difflib.SequenceMatcher[str]):
    """:class:`difflib.SequenceMatcher` (``autojunk`` off) that stops, raising :class:`_OverBudget`, before it
    takes more than ``budget`` steps.

    Its cost is in ``find_longest_match(alo, ahi, blo, bhi)``, which visits every line ``a[i]`` of its range and,
    for each, every position of that line in ``b`` (``b2j``). A step is one such visit, or one line of ``a``
    visited: counted before each call, exactly, from prefix sums (one subtraction), so the matcher never
    starts a call that would pass the budget. Without a bound it is quadratic and worse on repeated lines (a
    blank line between rewritten statements, many ``pass`` lines, two alternating lines: 0.2 to 2 s for 400
    lines a side under CPython). ``popular`` > 0 also drops lines found more than that many times in ``b``
    from the index (difflib's "popular" lines: they still match next to other matches, never as anchors)."""

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
    """The opcodes of a :class:`_Matcher` of ``a`` and ``b`` within ``budget`` steps (None past it), and the
    steps it took."""
    matcher = _Matcher(a, b, budget, popular)
    try:
        return list(matcher.get_opcodes()), matcher.steps
    except _OverBudget:
        return None, matcher.steps


def _anchored(a: list[str], b: list[str], budget: int) -> list[Opcode]:
    """Opcodes in bounded time whatever the lines. The lines found exactly once on each side are anchors (the
    longest run of them in the same order on both sides, as patience diff takes them); in each gap between
    two anchors (and before the first, after the last) the common head and tail are kept, and what is left
    gets a :class:`_Matcher` (popular lines dropped) from ``budget`` steps shared by all gaps, or, when its
    two sides share no line or the budget is spent, one replace block (its removed lines, then its added ones)."""
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
    """The longest subsequence of ``pairs`` (sorted by their first item) whose second items increase, in
    O(n log n) (patience sorting)."""
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
    """A line diff ``[[op, line], ...]`` with op " " (kept), "-" (removed), "+" (added), at most ``max_lines``
    (then a last ``["…", "<n> more lines"]``). Lines keep no trailing newline; they are split where Python
    splits them (:func:`webmcp_bridge.core.invisible.code_lines`), so a form feed or U+2028 stays in its line.

    The opcodes of :class:`difflib.SequenceMatcher` (``autojunk`` off): a replaced block shows its removed
    lines, then its added ones (``difflib.ndiff``'s lines without its intra-line pass, which compares every
    pair of lines of a replaced block). The matcher runs on the page's main thread, so its work is bounded
    (:class:`_Matcher`): past its budget the diff is anchored instead (:func:`_anchored`), which is never
    wrong (each side reads back exactly) but may show a few kept lines as removed and added. Callers bound
    the size first (:func:`diff_lines_at_least`); bench/diffs.py prints the figures.
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
    """One change waiting for the person.

    ``kind``: update | edit | insert | delete | move | clear | type | run | run_code | batch, and for ``scope``
    "workspace": write_file | append_file | edit_file | create_notebook | site_tool. ``cell_id``: the cell it
    is shown under (None: the notebook's end, or no cell for a workspace proposal). ``path``: the notebook's
    path, or for a workspace proposal the file's ("" for a site tool). ``diff``: see :func:`source_diff` (None
    when not a source change); ``code``: the code a run would execute (bounded); ``summary``: one line for the
    person; ``scope``: "cell" (shown in the notebook) or "workspace" (shown in a box of its own).
    """

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
        """``{id, path, tool, kind, cellId, summary, diff, code, created, scope}``."""
        return {
            "id": self.id,
            "path": self.path,
            "tool": self.tool,
            "kind": self.kind,
            "cellId": self.cell_id,
            "summary": self.summary,
            "diff": self.diff,
            "code": self.code,
            "created": round(self.created, 3),
            "scope": self.scope,
        }


Listener = Callable[[str, Proposal], None]  # (event: "created" | "settled", proposal)


class ProposalBook:
    """The mode and the proposals waiting for the person.

    Args:
        mode: the starting mode ("direct" unless the person's settings say otherwise).
    """

    def __init__(self, mode: Mode = "direct") -> None:
        self.mode: Mode = mode
        self._waiting: dict[str, Proposal] = {}
        self._listeners: list[Listener] = []
        self._mode_listeners: list[Callable[[Mode], None]] = []

    # -- the person's side ------------------------------------------------------------------------------
    def set_mode(self, mode: Mode) -> None:
        """Switch Direct/Propose (the person's action). Proposals already waiting keep waiting."""
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}")
        self.mode = mode
        for listener in list(self._mode_listeners):
            try:
                listener(mode)
            except Exception:
                traceback.print_exc()

    def on_mode(self, listener: Callable[[Mode], None]) -> Callable[[], None]:
        """Call ``listener(mode)`` whenever the mode changes; returns an unsubscribe function (as :meth:`subscribe`)."""
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

    # -- the agent's side ------------------------------------------------------------------------------
    async def request(self, proposal: Proposal, still_valid: Callable[[], str | None] | None = None) -> Decision:
        """Show ``proposal`` and wait for the person's decision.

        ``still_valid()`` is called every PROPOSAL_CHECK_SECONDS; a string it returns denies the proposal with that
        reason (the cell was deleted, the notebook closed). On return of an accepted decision the current
        call is marked approved (see :func:`approved`). Cancelling the awaiting task withdraws the proposal.

        Raises ToolError(PROPOSAL_ALREADY_PENDING) when a proposal already waits on the same cell.
        """
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
        for listener in list(self._listeners):
            try:
                listener(event, proposal)
            except Exception:  # the person's view must not break the agent's call
                traceback.print_exc()


# -- what Propose mode can show the person: all of it, or a refusal -----------------------------------------
def too_large_to_show(lines: int) -> ToolError:
    """The error for a change of ``lines`` diff lines or more: more than Propose mode shows (DIFF_LINES)."""
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
    """The diff a proposal shows (made from ``before``/``after`` unless given; ``[[kind, line], ...]`` as
    :func:`source_diff`), after checking that the person can see all of it: what cannot be shown in full is refused
    (ToolError(TOO_LARGE): more than DIFF_LINES lines, or ``code`` over CODE_BYTES bytes), never cut."""
    if diff is None and (before is not None or after is not None):
        at_least = diff_lines_at_least(
            before or "", after or ""
        )  # size first: no diff is computed for a change too big
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
    """The lines a site tool's proposal shows of its arguments (``shown``: their JSON text). Raises
    ToolError(TOO_LARGE) for more than SITE_TOOL_ARGUMENT_BYTES bytes or DIFF_LINES lines (refused, never cut)."""
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
