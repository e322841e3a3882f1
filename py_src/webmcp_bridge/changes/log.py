"""Who changed which cell, and when: one bounded, coalesced log per bridge.

Hosts report raw :class:`~webmcp_bridge.host.protocol.CellChange` values (``LiveNotebook.take_changes``); the access
guard and the Agent panel feed them here with :meth:`ChangeLog.ingest`. Consecutive changes of one cell of one
notebook by the same actor and of the same kind within ``coalesce_seconds`` merge into one entry (a person
typing a line is one "edit", not forty), which then moves to the end of the log with a new sequence number,
so a reader following ``since=<seq>`` never misses an update. A run reaches the log as output changes (its
outputs cleared, new ones arriving) followed by its execution count ("run"): output changes of a cell followed
by a run of it (same actor, within the window) become that one "run" entry; output changes with no run after
them stay "outputs" (a clear). Readers that answer an agent (tools) must drop
entries of cells the agent may not see; the log itself knows nothing of access.
"""

from __future__ import annotations

import traceback
from collections import deque
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable

from webmcp_bridge.core.limits import CHANGE_COALESCE_SECONDS, CHANGE_LOG_ENTRIES
from webmcp_bridge.host.protocol import CellChange

Listener = Callable[["ChangeEntry"], None]


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
        self._dropped_seq = 0  # the seq of the newest entry dropped from the full log (0: none ever dropped)
        self.coalesce_seconds = coalesce_seconds
        self._listeners: list[Listener] = []

    def ingest(self, path: str, changes: Iterable[CellChange]) -> list[ChangeEntry]:
        """Add ``changes`` of the notebook at ``path`` (oldest first); returns the entries added or updated."""
        touched: list[ChangeEntry] = []
        for change in changes:
            self._seq += 1
            last = self._entries[-1] if self._entries else None
            if (last is not None and last.path == path and last.actor == change.actor
                    and (last.kind == change.kind or (last.kind == "outputs" and change.kind == "run"))
                    and last.cell_id == change.cell_id and last.access == change.access
                    and change.time - last.time <= self.coalesce_seconds):
                entry = replace(last, seq=self._seq, kind=change.kind, time=change.time, count=last.count + 1, revision=change.revision)
                self._entries[-1] = entry
                if touched and touched[-1].path == path and touched[-1].cell_id == entry.cell_id and touched[-1].seq == last.seq:
                    touched[-1] = entry
                else:
                    touched.append(entry)
            else:
                entry = ChangeEntry(self._seq, path, change.actor, change.kind, change.cell_id, change.time, change.time,
                                    access=change.access, revision=change.revision)
                if len(self._entries) == self._entries.maxlen:
                    self._dropped_seq = self._entries[0].seq  # the oldest falls out of the bounded log
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
        """True when an entry newer than ``since`` was dropped from the bounded log, so a reader that last saw
        ``since`` cannot learn every change from :meth:`entries`. Changes merged into one entry are not dropped
        (its ``count`` says how many; the sequence numbers they used are simply skipped)."""
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
