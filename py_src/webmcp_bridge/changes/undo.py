"""Review and undo after the fact: the agent's source edits, what each changed, and reverting them for the person
(docs/TOOLS.md, "Review and undo after the fact").

The host records every source change the agent makes (:meth:`EditJournal.record`). Reverts are the person's only
(no tool reaches this module): one is written only when the cell still holds exactly what the edit left
(:func:`plan_reverts`), else refused with a reason (:data:`REFUSALS`), so it never overwrites the person's text;
several go newest first. Changed cells stay unseen (:meth:`EditJournal.unseen`) until the person looks at them. The
journal keeps :data:`~webmcp_bridge.core.limits.AGENT_EDITS_KEPT` edits and
:data:`~webmcp_bridge.core.limits.AGENT_EDIT_BYTES` bytes of sources, oldest dropped first.
"""

from __future__ import annotations

import time
import traceback
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from webmcp_bridge.core.limits import AGENT_EDIT_BYTES, AGENT_EDITS_KEPT

#: why a revert was refused, by reason code (what the panel shows the person)
REFUSALS = {
    "gone": "The cell is gone (it was deleted since), so there is nothing to revert.",
    "agent-later": "The agent edited this cell again since: revert that later change first, "
    "or revert every change since this one.",
    "changed": "The cell changed since the agent's edit (you typed in it, or it changed in another way): "
    "reverting would overwrite that, so nothing was changed.",
    "reverted": "This change was already reverted.",
    "unknown": "This change is no longer kept, so it cannot be reverted here (JupyterLab's undo may still).",
}


@dataclass
class AgentEdit:
    """One agent edit of a cell's source: ``id`` from 1, one per edit recorded; ``time`` and ``reverted`` (None
    while it stands) in epoch seconds."""

    id: int
    path: str
    cell_id: str
    before: str
    after: str
    time: float
    reverted: float | None = None

    def size(self) -> int:
        """The UTF-8 bytes of its two sources."""
        return len(self.before.encode("utf-8", "surrogatepass")) + len(self.after.encode("utf-8", "surrogatepass"))


@dataclass(frozen=True)
class RevertStep:
    """One step of a revert plan: write ``source`` when ``refused`` (a :data:`REFUSALS` key) is None and the cell still
    holds ``expected`` (the edit's ``after``)."""

    edit_id: int
    path: str
    cell_id: str
    source: str
    refused: str | None = None
    expected: str = ""

    @property
    def reason(self) -> str | None:
        """The refusal as the person reads it, or None."""
        return REFUSALS[self.refused] if self.refused else None


def plan_reverts(
    edits: Sequence[AgentEdit], later: Sequence[AgentEdit], current: Mapping[str, str]
) -> list[RevertStep]:
    """The steps, newest first, of reverting ``edits`` against ``current`` ({cell id: source}; missing: gone), each
    checked against what the steps before leave. ``later``: standing edits not reverted with these, whose cells are
    refused as "agent-later" rather than "changed"."""
    sources = dict(current)
    standing = [e for e in later if e.reverted is None]
    steps: list[RevertStep] = []
    for edit in sorted(edits, key=lambda e: e.id, reverse=True):
        refused: str | None = None
        now = sources.get(edit.cell_id)
        if edit.reverted is not None:
            refused = "reverted"
        elif now is None:
            refused = "gone"
        elif now != edit.after:
            newer = any(e.cell_id == edit.cell_id and e.id > edit.id for e in standing)
            refused = "agent-later" if newer else "changed"
        if refused is None:
            sources[edit.cell_id] = edit.before
        steps.append(RevertStep(edit.id, edit.path, edit.cell_id, edit.before, refused, edit.after))
    return steps


@dataclass
class EditJournal:
    """The agent's source edits kept for review and revert; ``max_edits`` and ``max_bytes`` bound them."""

    max_edits: int = AGENT_EDITS_KEPT
    max_bytes: int = AGENT_EDIT_BYTES
    clock: Callable[[], float] = time.time
    _edits: OrderedDict[int, AgentEdit] = field(default_factory=OrderedDict)
    _bytes: int = 0
    _next: int = 1
    _unseen: dict[tuple[str, str], int] = field(default_factory=dict)  # (path, cell id) -> newest edit's id
    _listeners: list[Callable[[bool], None]] = field(default_factory=list)

    def record(self, path: str, cell_id: str, before: str, after: str) -> AgentEdit | None:
        """Keep the agent's edit and mark the cell unseen; returns it, or None for equal sources or an edit alone over
        ``max_bytes`` (still marked unseen)."""
        if before == after:
            return None
        newly_unseen = (path, cell_id) not in self._unseen
        self._unseen[(path, cell_id)] = self._next
        edit = AgentEdit(self._next, path, cell_id, before, after, self.clock())
        self._next += 1
        kept: AgentEdit | None = None
        if edit.size() <= self.max_bytes:
            kept = self._edits[edit.id] = edit
            self._bytes += edit.size()
            while len(self._edits) > self.max_edits or self._bytes > self.max_bytes:
                _, gone = self._edits.popitem(last=False)
                self._bytes -= gone.size()
        self._emit(newly_unseen)
        return kept

    def get(self, edit_id: int) -> AgentEdit | None:
        """A kept edit by id."""
        return self._edits.get(edit_id)

    def edits(self, path: str | None = None, cell_id: str | None = None, since_id: int = 0) -> list[AgentEdit]:
        """Kept edits, oldest first, of ``path`` and ``cell_id`` (None: all) with ``id >= since_id``."""
        return [
            e
            for e in self._edits.values()
            if (path is None or e.path == path) and (cell_id is None or e.cell_id == cell_id) and e.id >= since_id
        ]

    def between(self, path: str, cell_id: str, first: float, last: float, slack: float = 1.0) -> list[AgentEdit]:
        """One cell's edits from ``first`` to ``last`` (epoch seconds, widened by ``slack``: the host's and the
        journal's clocks differ by the write's time): what one Activity row stands for."""
        return [e for e in self.edits(path, cell_id) if first - slack <= e.time <= last + slack]

    def plan(self, edit_id: int, current: Mapping[str, str], since: bool = False) -> list[RevertStep]:
        """The plan of reverting ``edit_id`` (with ``since``: and every later edit of its notebook); an edit no longer
        kept gives one step refused as "unknown"."""
        edit = self._edits.get(edit_id)
        if edit is None:
            return [RevertStep(edit_id, "", "", "", "unknown")]
        later = self.edits(edit.path, since_id=edit.id + 1)
        chosen = [edit, *later] if since else [edit]
        return plan_reverts(chosen, [] if since else later, current)

    def mark_reverted(self, edit_id: int) -> None:
        """The person's revert of ``edit_id`` was applied (its cell counts as looked at)."""
        edit = self._edits.get(edit_id)
        if edit is not None and edit.reverted is None:
            edit.reverted = self.clock()
            self._emit(self._unseen.pop((edit.path, edit.cell_id), None) is not None)

    def unseen(self, path: str) -> set[str]:
        """The cells of ``path`` the agent changed that the person has not looked at since."""
        return {cell_id for (p, cell_id) in self._unseen if p == path}

    def mark_seen(self, path: str, cell_id: str) -> bool:
        """The person looked at the cell (made it active, opened a diff of it); True when it was unseen."""
        seen = self._unseen.pop((path, cell_id), None) is not None
        if seen:
            self._emit(True)
        return seen

    def forget_cell(self, path: str, cell_id: str) -> None:
        """The cell was deleted: no marker for it (its edits stay kept, refused as "gone" if reverted)."""
        if self._unseen.pop((path, cell_id), None) is not None:
            self._emit(True)

    def subscribe(self, listener: Callable[[bool], None]) -> Callable[[], None]:
        """Call ``listener(unseen_changed)`` whenever an edit is recorded or reverted or a marker goes
        (``unseen_changed``: :meth:`unseen` changed); returns the unsubscriber."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _emit(self, unseen_changed: bool) -> None:
        for listener in list(self._listeners):
            try:
                listener(unseen_changed)
            except Exception:  # the person's view must not break the agent's write
                traceback.print_exc()
