"""Review and undo after the fact: the agent's source edits, what each changed, and reverting them for the person.

The host records every change the agent makes to a cell's source (:meth:`EditJournal.record`: the notebook's path,
the cell's id, its source before and after, when), whether it came from ``jupyter_edit_cell`` /
``jupyter_update_cell``, a batch, or an accepted proposal. The Agent panel shows them from here: the diff of
one edit (the line diff Propose mode shows, :func:`webmcp_bridge.propose.proposals.source_diff`, drawn by the panel:
this layer does not import Propose mode), **Revert** for one edit, and "revert every agent change since this one".

Reverts are the person's, through the panel only: no tool reaches this module. A revert puts back the source the
cell had before the edit, and only when the cell still holds exactly what the edit left (:func:`plan_reverts`);
otherwise it is refused with a reason for the person, so a revert never overwrites the person's text:

- the cell is gone (deleted since);
- the agent edited the cell again since (revert that later edit first, or revert everything since this one);
- the cell changed since in any other way: the person's typing (or another tab's).

Reverting several edits (everything since one) goes newest first, each checked against the source the reverts
before it leave, so the agent's edits of one cell unwind one after the other, and a cell the person changed since
keeps every one of its edits (all refused, with that reason).

Cells the agent changed carry a marker until the person has looked at them (:meth:`EditJournal.unseen`): a cell
is looked at when the person makes it the active cell while no agent call runs, or opens the diff of one of its
edits in the panel (:meth:`EditJournal.mark_seen`). A revert also counts as looked at.

The journal is bounded: :data:`~webmcp_bridge.core.limits.AGENT_EDITS_KEPT` edits and
:data:`~webmcp_bridge.core.limits.AGENT_EDIT_BYTES` bytes of sources in all; the oldest go first, and an edit that
is no longer kept cannot be reverted from the panel (JupyterLab's own undo still can).
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
    """One change the agent made to one cell's source.

    Attributes:
        id: grows by one per edit recorded (1 for the first); stable while the edit is kept.
        path: the notebook's workspace path.
        cell_id: the cell's id.
        before: the cell's source before the edit.
        after: the cell's source the edit left.
        time: when it was made (seconds since the epoch).
        reverted: when the person reverted it (seconds since the epoch), None while it stands.
    """

    id: int
    path: str
    cell_id: str
    before: str
    after: str
    time: float
    reverted: float | None = None

    def size(self) -> int:
        """The bytes of its two sources (UTF-8): what it counts against the journal's bound."""
        return len(self.before.encode("utf-8", "surrogatepass")) + len(self.after.encode("utf-8", "surrogatepass"))


@dataclass(frozen=True)
class RevertStep:
    """One edit of a revert plan: write ``source`` (the edit's ``before``) into ``cell_id`` when ``refused`` is None
    and the cell still holds ``expected``; else ``refused`` is a key of :data:`REFUSALS` and nothing is written."""

    edit_id: int
    path: str
    cell_id: str
    source: str
    refused: str | None = None
    expected: str = ""  # what the cell must still hold when the step is written (the edit's ``after``)

    @property
    def reason(self) -> str | None:
        """The refusal as the person reads it (None: the step is to be applied)."""
        return REFUSALS[self.refused] if self.refused else None


def plan_reverts(
    edits: Sequence[AgentEdit], later: Sequence[AgentEdit], current: Mapping[str, str]
) -> list[RevertStep]:
    """What reverting ``edits`` (any order; reverted newest first) does to cells whose sources now are ``current``
    (``{cell id: source}``, the cells of the edits' notebook; a cell missing from it is gone).

    ``later`` are the agent's edits still standing that are not reverted with these (of the same notebook): an edit
    whose cell holds what a later standing edit of that cell left is refused as "agent-later" rather than
    "changed". Each step is checked against the source the steps before it leave. Returns the steps, newest first.
    """
    sources = dict(current)
    standing_after: dict[str, list[AgentEdit]] = {}
    for other in later:
        if other.reverted is None:
            standing_after.setdefault(other.cell_id, []).append(other)
    steps: list[RevertStep] = []
    for edit in sorted(edits, key=lambda e: e.id, reverse=True):
        refused: str | None = None
        now = sources.get(edit.cell_id)
        if edit.reverted is not None:
            refused = "reverted"
        elif now is None:
            refused = "gone"
        elif now != edit.after:
            newer = [e for e in standing_after.get(edit.cell_id, ()) if e.id > edit.id]
            refused = "agent-later" if newer else "changed"
        if refused is None:
            sources[edit.cell_id] = edit.before
        steps.append(RevertStep(edit.id, edit.path, edit.cell_id, edit.before, refused, edit.after))
    return steps


@dataclass
class EditJournal:
    """The agent's source edits kept for review and revert (see the module docstring).

    Args:
        max_edits: edits kept (the oldest go first).
        max_bytes: bytes of sources kept in all (:meth:`AgentEdit.size`); an edit larger than this alone is not
            kept (it cannot be reverted from the panel).
        clock: seconds since the epoch (``time.time``; tests hand in a fake).
    """

    max_edits: int = AGENT_EDITS_KEPT
    max_bytes: int = AGENT_EDIT_BYTES
    clock: Callable[[], float] = time.time
    _edits: OrderedDict[int, AgentEdit] = field(default_factory=OrderedDict)
    _bytes: int = 0
    _next: int = 1
    _unseen: dict[tuple[str, str], int] = field(default_factory=dict)  # (path, cell id) -> newest edit's id
    _listeners: list[Callable[[bool], None]] = field(default_factory=list)

    # -- the host's side -------------------------------------------------------------------------------------------
    def record(self, path: str, cell_id: str, before: str, after: str) -> AgentEdit | None:
        """Keep the agent's edit of ``cell_id`` in notebook ``path`` from ``before`` to ``after``; returns it, or None
        when nothing changed (equal sources) or the edit alone is larger than ``max_bytes``. The cell is marked
        unseen either way when its source changed."""
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

    # -- the panel's side ------------------------------------------------------------------------------------------
    def get(self, edit_id: int) -> AgentEdit | None:
        """A kept edit by id."""
        return self._edits.get(edit_id)

    def edits(self, path: str | None = None, cell_id: str | None = None, since_id: int = 0) -> list[AgentEdit]:
        """Kept edits (oldest first) of notebook ``path`` (None: all), of ``cell_id`` (None: every cell), with
        ``id >= since_id``."""
        return [
            e
            for e in self._edits.values()
            if (path is None or e.path == path) and (cell_id is None or e.cell_id == cell_id) and e.id >= since_id
        ]

    def between(self, path: str, cell_id: str, first: float, last: float, slack: float = 1.0) -> list[AgentEdit]:
        """The kept edits of one cell made from ``first`` to ``last`` (seconds since the epoch, each widened by
        ``slack`` seconds: the host's clock of a change and the journal's differ by the write's own time), oldest
        first: the edits one Activity row (a coalesced change-log entry) stands for."""
        return [e for e in self.edits(path, cell_id) if first - slack <= e.time <= last + slack]

    def plan(self, edit_id: int, current: Mapping[str, str], since: bool = False) -> list[RevertStep]:
        """The revert plan of edit ``edit_id`` alone, or with ``since`` of it and every kept edit of its notebook
        after it, against the notebook's sources ``current`` (see :func:`plan_reverts`). An edit no longer kept
        gives one step refused as "unknown" (cell id and source empty)."""
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
        """The cells of notebook ``path`` the agent changed that the person has not looked at since."""
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
        """Call ``listener(unseen_changed)`` whenever an edit is recorded or reverted or a cell's marker goes;
        ``unseen_changed`` is True when the unseen set (:meth:`unseen`) of the edit's notebook changed (a cell
        newly unseen, or one seen, reverted or forgotten), False when it did not (the agent edited a cell already
        unseen again, or reverted an edit of a cell already seen). Returns a function that unsubscribes."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _emit(self, unseen_changed: bool) -> None:
        for listener in list(self._listeners):
            try:
                listener(unseen_changed)
            except Exception:  # the person's view must not break the agent's write
                traceback.print_exc()
