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
"""

from __future__ import annotations

import traceback
from collections import deque
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable

from webmcp_bridge.core.limits import CHANGE_COALESCE_SECONDS, CHANGE_LOG_ENTRIES
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

    def to_json(self) -> dict[str, Any]:
        """``{seq, actor, kind, cellId, time, count, revision}`` (the path is given by the caller's context)."""
        return {"seq": self.seq, "actor": self.actor, "kind": self.kind, "cellId": self.cell_id,
                "time": round(self.time, 3), "count": self.count, "revision": self.revision}


class ChangeLog:
    """A bounded log of :class:`ChangeEntry`, newest last.

    Args:
        max_entries: entries kept (older ones are dropped; :meth:`missed_since` tells a reader it missed some).
        coalesce_seconds: window within which repeated changes of one cell merge.
    """

    def __init__(self, max_entries: int = CHANGE_LOG_ENTRIES, coalesce_seconds: float = CHANGE_COALESCE_SECONDS) -> None:
        self._entries: deque[ChangeEntry] = deque(maxlen=max_entries)
        self._seq = 0
        self._dropped_seq = 0  # the newest seq of a change dropped (from the full log or a host's buffer; 0: none)
        self.coalesce_seconds = coalesce_seconds
        self._listeners: list[Listener] = []

    def ingest(self, path: str, changes: Iterable[CellChange]) -> list[ChangeEntry]:
        """Add ``changes`` of the notebook at ``path`` (oldest first); returns the entries added or updated."""
        touched: list[ChangeEntry] = []
        for change in changes:
            if change.dropped_before > 0:  # the host dropped changes before these: their seqs are spent, unseen
                self._seq += change.dropped_before
                self._dropped_seq = self._seq
            self._seq += 1
            last = self._entries[-1] if self._entries else None
            kind = None
            if (last is not None and last.path == path and last.actor == change.actor and last.cell_id == change.cell_id
                    and last.access == change.access and change.time - last.time <= self.coalesce_seconds
                    and change.dropped_before == 0):
                kind = _merged_kind(last.kind, change.kind)
            if last is not None and kind is not None:
                entry = replace(last, seq=self._seq, kind=kind, time=change.time, count=last.count + 1, revision=change.revision)
                self._entries[-1] = entry
                if touched and touched[-1].path == path and touched[-1].cell_id == entry.cell_id and touched[-1].seq == last.seq:
                    touched[-1] = entry
                else:
                    touched.append(entry)
            else:
                entry = ChangeEntry(self._seq, path, change.actor, change.kind, change.cell_id, change.time, change.time,
                                    access=change.access, revision=change.revision)
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

    def oldest_seq(self) -> int:
        """The sequence number of the oldest entry kept (``latest_seq() + 1`` when empty)."""
        return self._entries[0].seq if self._entries else self._seq + 1

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
