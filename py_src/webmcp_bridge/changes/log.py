"""Who changed which cell, and when: one bounded, coalesced log per bridge.

Hosts report raw :class:`~webmcp_bridge.host.protocol.CellChange` values (``LiveNotebook.take_changes``); the access
guard and the Agent panel feed them here with :meth:`ChangeLog.ingest`. Consecutive changes of one cell of one
notebook by the same actor and of the same kind within ``coalesce_seconds`` merge into one entry (a person
typing a line is one "edit", not forty), which then moves to the end of the log with a new sequence number,
so a reader following ``since=<seq>`` never misses an update. A run reaches the log as output changes (its
outputs cleared: "clear", new ones arriving: "output") followed by its execution count ("run"): a cell's clear
and output changes followed by a run of it (same actor, within the window) become that one "run" entry; a clear
followed by outputs is "output" (outputs arrived), and a clear alone stays "clear". A clear or an output after a
run starts a new entry. Readers that answer an agent (tools) must drop entries of cells the agent may not see;
the log itself knows nothing of access.

Dropped changes: the log keeps :data:`~webmcp_bridge.core.limits.CHANGE_LOG_ENTRIES` entries, and a host's own
buffer may drop changes before the log ever sees them (``CellChange.dropped_before``). Either way the sequence
numbers the dropped changes would have used are spent, and :meth:`ChangeLog.missed_since` tells a reader behind
them that it missed some.

Typing comes in bursts (:class:`Typing`): the person's edits of one cell, each at most ``quiet`` seconds (0.25)
after the one before, and none later than ``longest`` seconds (2) after the burst's first. An entry records the
start of its current burst (``burst``) and the sequence number it had before that burst began (``burst_seq``),
so a reader that follows the log knows whether an entry holds a burst it has not been told of that already
ended. A person's edit that continues a burst joins that burst's entry even when other entries (the agent's
changes elsewhere) came in between, so one burst of typing stays one entry. :mod:`webmcp_bridge.changes.feed`
announces an entry once its burst is over.
"""

from __future__ import annotations

import traceback
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from webmcp_bridge.core.limits import (
    BURST_LOOKBACK,
    CHANGE_COALESCE_SECONDS,
    CHANGE_LOG_ENTRIES,
    TYPING_LONGEST_SECONDS,
    TYPING_QUIET_SECONDS,
)
from webmcp_bridge.host.protocol import CellChange

Listener = Callable[["ChangeEntry"], None]

#: the output changes of a run, in the order they lead up to it: merging keeps the later of two (a clear then an
#: output is "output"; either then the execution count is "run")
_RUN_STEPS = ("clear", "output", "run")


def _merged_kind(last: str, new: str) -> str | None:
    """The kind of ``last`` merged with a ``new`` change of the same cell and actor, or None when they stay two
    entries: the same kind merges (repeated edits, a stream of outputs), and the steps of a run merge forward
    (clear -> output -> run), never backward (a clear after a run is a new change)."""
    if last == new:
        return new
    if last in _RUN_STEPS and new in _RUN_STEPS and _RUN_STEPS.index(new) > _RUN_STEPS.index(last):
        return new
    if last == "output" and new == "clear":  # outputs replaced in place (clear_output(wait=True) loops)
        return "output"
    return None


@dataclass(frozen=True)
class ChangeEntry:
    """One coalesced change. ``seq`` grows by one per new or updated entry; ``first``/``time`` are seconds since
    the epoch of the first and last change merged into it; ``count`` is how many were merged."""

    seq: int
    path: str
    actor: str
    kind: str
    cell_id: str
    first: float
    time: float
    count: int = 1
    access: Any = None  # the cell's raw access value when it changed (see CellChange.access)
    revision: int | None = None  # the notebook's revision around the last merged change
    burst: float = 0.0  # when the entry's current burst of typing began (seconds since the epoch; see Typing)
    burst_seq: int = 0  # the entry's seq just before its current burst began (0: the entry began with it)

    def to_json(self) -> dict[str, Any]:
        """``{seq, actor, kind, cellId, time, count, revision}`` (the path is given by the caller's context)."""
        return {
            "seq": self.seq,
            "actor": self.actor,
            "kind": self.kind,
            "cellId": self.cell_id,
            "time": round(self.time, 3),
            "count": self.count,
            "revision": self.revision,
        }


@dataclass(frozen=True)
class Typing:
    """The rule of a burst of typing: the person's edits of one cell, each at most ``quiet`` seconds after the one
    before and none ``longest`` seconds or more after the burst's first. A burst is over once ``quiet`` seconds
    passed without an edit, or ``longest`` seconds after it began however the person goes on typing (the next
    edit then begins a new burst). Only the person's edits come in bursts; every other change is over at once."""

    quiet: float = TYPING_QUIET_SECONDS
    longest: float = TYPING_LONGEST_SECONDS

    @staticmethod
    def applies(entry: ChangeEntry | CellChange) -> bool:
        """Whether ``entry`` is of the person's typing (a source edit by the person)."""
        return entry.actor == "person" and entry.kind == "edit"

    def continues(self, entry: ChangeEntry, change: CellChange) -> bool:
        """Whether ``change`` (same cell and actor) belongs to ``entry``'s current burst."""
        return change.time - entry.time <= self.quiet and change.time - entry.burst < self.longest

    def over(self, entry: ChangeEntry, since: int | None, now: float) -> bool:
        """Whether a reader that has seen the log up to seq ``since`` (None: nothing) may be told of ``entry`` at time
        ``now`` (seconds since the epoch): it is not typing, its current burst is over, or it holds an earlier burst
        that is over and that this reader was not told of (``burst_seq > since``)."""
        return not self.applies(entry) or entry.burst_seq > (since or 0) or now >= self.over_at(entry)

    def over_at(self, entry: ChangeEntry) -> float:
        """When ``entry``'s current burst is over if no edit follows (seconds since the epoch)."""
        return min(entry.time + self.quiet, entry.burst + self.longest)


class ChangeLog:
    """A bounded log of :class:`ChangeEntry`, newest last.

    Args:
        max_entries: entries kept (older ones are dropped; :meth:`missed_since` tells a reader it missed some).
        coalesce_seconds: window within which repeated changes of one cell merge.
        typing: the rule of a burst of the person's typing (see :class:`Typing`).
    """

    #: how many entries back a person's edit looks for the entry of the burst it continues
    BURST_LOOKBACK = BURST_LOOKBACK

    def __init__(
        self,
        max_entries: int = CHANGE_LOG_ENTRIES,
        coalesce_seconds: float = CHANGE_COALESCE_SECONDS,
        typing: Typing | None = None,
    ) -> None:
        self._entries: deque[ChangeEntry] = deque(maxlen=max_entries)
        self._seq = 0
        self._dropped_seq = 0  # the newest seq of a change dropped (from the full log or a host's buffer; 0: none)
        self.coalesce_seconds = coalesce_seconds
        self.typing = typing or Typing()
        self._listeners: list[Listener] = []

    def _merges_into(self, path: str, change: CellChange) -> tuple[ChangeEntry, str] | None:
        """The entry ``change`` merges into and the merged kind: the newest entry if it is of the same cell and
        actor within ``coalesce_seconds`` and the kinds merge (:func:`_merged_kind`); else, for the person's typing,
        the entry of the burst it continues among the last :data:`BURST_LOOKBACK`; else None (a new entry). A
        change after changes the host dropped never merges (what came between is unknown)."""
        if change.dropped_before > 0:
            return None
        last = self._entries[-1] if self._entries else None
        if (
            last is not None
            and last.path == path
            and last.actor == change.actor
            and last.cell_id == change.cell_id
            and last.access == change.access
            and change.time - last.time <= self.coalesce_seconds
        ):
            kind = _merged_kind(last.kind, change.kind)
            if kind is not None:
                return last, kind
        if not Typing.applies(change):
            return None
        for back, entry in enumerate(reversed(self._entries)):
            if back >= self.BURST_LOOKBACK:
                break
            if (
                entry.path == path
                and entry.cell_id == change.cell_id
                and Typing.applies(entry)
                and entry.access == change.access
                and self.typing.continues(entry, change)
            ):
                return entry, change.kind
        return None

    def ingest(self, path: str, changes: Iterable[CellChange]) -> list[ChangeEntry]:
        """Add ``changes`` of the notebook at ``path`` (oldest first); returns the entries added or updated. A change
        with ``repeats`` (:class:`~webmcp_bridge.host.protocol.CellChange`) counts as itself and its repeats, leaving
        the log as those changes reported one by one would."""
        touched: list[ChangeEntry] = []
        for change in changes:
            if change.dropped_before > 0:  # the host dropped changes before these: their seqs are spent, unseen
                self._seq += change.dropped_before
                self._dropped_seq = self._seq
            # a change reported with its repeats (CellChange.repeats) is that many changes: the same seqs are spent
            # and counted, and the entry ends at the last one's time
            changes_in = 1 + max(0, change.repeats)
            end = change.last_time if change.repeats > 0 and change.last_time is not None else change.time
            self._seq += changes_in
            merge = self._merges_into(path, change)
            if merge is not None:
                last, kind = merge
                same_burst = self.typing.continues(last, change)
                entry = replace(
                    last,
                    seq=self._seq,
                    kind=kind,
                    time=end,
                    count=last.count + changes_in,
                    revision=change.revision,
                    burst=last.burst if same_burst else change.time,
                    burst_seq=last.burst_seq if same_burst else last.seq,
                )
                if self._entries[-1] is last:
                    self._entries[-1] = entry
                else:  # a burst that other entries came in between: it moves to the end, as every update does
                    self._entries.remove(last)
                    self._entries.append(entry)
                if (
                    touched
                    and touched[-1].path == path
                    and touched[-1].cell_id == entry.cell_id
                    and touched[-1].seq == last.seq
                ):
                    touched[-1] = entry
                else:
                    touched.append(entry)
            else:
                entry = ChangeEntry(
                    self._seq,
                    path,
                    change.actor,
                    change.kind,
                    change.cell_id,
                    change.time,
                    end,
                    count=changes_in,
                    access=change.access,
                    revision=change.revision,
                    burst=change.time,
                )
                if len(self._entries) == self._entries.maxlen:
                    self._dropped_seq = max(self._dropped_seq, self._entries[0].seq)  # the oldest falls out of the log
                self._entries.append(entry)
                touched.append(entry)
        for entry in touched:
            for listener in list(self._listeners):
                try:
                    listener(entry)
                except Exception:  # a broken listener (the panel) must not break a tool call
                    traceback.print_exc()
        return touched

    def latest_seq(self) -> int:
        """The sequence number of the newest entry (0 before any)."""
        return self._seq

    def missed_since(self, since: int) -> bool:
        """True when a change newer than ``since`` was dropped, from the bounded log or from a host's buffer before
        it reached the log (``CellChange.dropped_before``), so a reader that last saw ``since`` cannot learn every
        change from :meth:`entries`. Changes merged into one entry are not dropped (its ``count`` says how many;
        the sequence numbers they used are simply skipped)."""
        return since < self._dropped_seq

    def entries(self, path: str | None = None, since: int | None = None) -> list[ChangeEntry]:
        """Entries (oldest first) of notebook ``path`` (None: all) with ``seq > since`` (None: all kept)."""
        return [e for e in self._entries if (path is None or e.path == path) and (since is None or e.seq > since)]

    def provenance(self, path: str, cell_id: str, limit: int = 5) -> list[ChangeEntry]:
        """The last ``limit`` entries of one cell, newest first."""
        found: list[ChangeEntry] = []
        for entry in reversed(self._entries):
            if entry.path == path and entry.cell_id == cell_id:
                found.append(entry)
                if len(found) >= limit:
                    break
        return found

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(entry)`` for every new or updated entry; returns a function that unsubscribes."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None
