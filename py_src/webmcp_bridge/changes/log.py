"""Who changed which cell, and when: one bounded, coalesced log per bridge, fed the hosts'
:class:`~webmcp_bridge.host.protocol.CellChange` values by the guard and the panel (:meth:`ChangeLog.ingest`).

Changes of one cell by one actor of one kind within ``coalesce_seconds`` merge into one entry (typing a line is one
"edit"; a run's clear and outputs become its "run"), which moves to the end with a new seq, so a reader following
``since=<seq>`` misses no update. The log knows nothing of access: readers answering the agent drop cells it may not
see. Seqs of dropped changes are spent, so :meth:`ChangeLog.missed_since` tells a reader it missed some. The
person's typing comes in bursts (:class:`Typing`) that :mod:`webmcp_bridge.changes.feed` announces once over.
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
    """The merged kind of ``last`` and ``new``, or None: the same kind merges, a run's steps merge forward only."""
    if last == new:
        return new
    if last in _RUN_STEPS and new in _RUN_STEPS and _RUN_STEPS.index(new) > _RUN_STEPS.index(last):
        return new
    if last == "output" and new == "clear":  # outputs replaced in place (clear_output(wait=True) loops)
        return "output"
    return None


@dataclass(frozen=True)
class ChangeEntry:
    """One coalesced change: ``first``/``time`` of its first and last change (epoch seconds), ``count`` merged."""

    seq: int
    path: str
    actor: str
    kind: str
    cell_id: str
    first: float
    time: float
    count: int = 1
    access: Any = None
    revision: int | None = None
    burst: float = 0.0
    burst_seq: int = 0  # 0: the entry began with its burst

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
    """A burst of typing: the person's edits of one cell, each within ``quiet`` seconds of the one before, over
    ``quiet`` seconds after the last or ``longest`` after the first. Every other change is over at once."""

    quiet: float = TYPING_QUIET_SECONDS
    longest: float = TYPING_LONGEST_SECONDS

    @staticmethod
    def applies(entry: ChangeEntry | CellChange) -> bool:
        """Whether ``entry`` is the person's source edit."""
        return entry.actor == "person" and entry.kind == "edit"

    def continues(self, entry: ChangeEntry, change: CellChange) -> bool:
        """Whether ``change`` (same cell and actor) belongs to ``entry``'s current burst."""
        return change.time - entry.time <= self.quiet and change.time - entry.burst < self.longest

    def over(self, entry: ChangeEntry, since: int | None, now: float) -> bool:
        """Whether a reader at seq ``since`` may be told of ``entry`` at ``now``: not typing, its burst over, or it
        holds an earlier, finished burst the reader was not told of."""
        return not self.applies(entry) or entry.burst_seq > (since or 0) or now >= self.over_at(entry)

    def over_at(self, entry: ChangeEntry) -> float:
        """When ``entry``'s burst is over if no edit follows."""
        return min(entry.time + self.quiet, entry.burst + self.longest)


class ChangeLog:
    """A bounded log of :class:`ChangeEntry`, newest last."""

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
        self._dropped_seq = 0  # the newest seq of a dropped change
        self.coalesce_seconds = coalesce_seconds
        self.typing = typing or Typing()
        self._listeners: list[Listener] = []

    def _merges_into(self, path: str, change: CellChange) -> tuple[ChangeEntry, str] | None:
        """The entry ``change`` merges into, with the kind: the newest if it matches; for typing, the burst it
        continues among the last :data:`BURST_LOOKBACK`; else None. Never after dropped changes."""
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
        """Add ``changes`` (oldest first), one with ``repeats`` as that many; returns the entries added or updated."""
        touched: list[ChangeEntry] = []
        for change in changes:
            if change.dropped_before > 0:  # the host dropped changes before these: their seqs are spent, unseen
                self._seq += change.dropped_before
                self._dropped_seq = self._seq
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
                if touched and touched[-1].seq == last.seq:  # seqs are unique: the same entry, updated again
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
        """True when a change newer than ``since`` was dropped (merged ones are not: they skip seqs)."""
        return since < self._dropped_seq

    def entries(self, path: str | None = None, since: int | None = None) -> list[ChangeEntry]:
        """Entries, oldest first, of ``path`` (None: all) with ``seq > since`` (None: all)."""
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
