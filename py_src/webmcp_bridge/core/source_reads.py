"""Which bytes of which big cell sources the agent was given: the rule that a write never drops what it never saw.

A source longer than one read page reaches the agent in pages; an agent that writes back "what it read plus a line"
after the first page would delete the rest, with a matching ``sourceHash``. So a whole-source write of a paged cell
is refused (``SOURCE_NOT_FULLY_READ``) unless every byte of exactly that source (same hash) was handed to the agent
in this session, or the agent wrote it itself; partial edits need no full read. A source given in pages stays under
the rule when a bigger result cap would now return it whole. Text files follow the same rule
(``FILE_NOT_FULLY_READ``; a second :class:`SourceReads` with ``""`` as the cell id). At most :data:`MAX_SOURCES`
sources are kept, the oldest forgotten first: forgetting a source paged now can only refuse a write, never allow one.
"""

from __future__ import annotations

from collections import OrderedDict

from webmcp_bridge.core.limits import MAX_SOURCES

Key = tuple[str, str, str]  # (notebook path, cell id, sourceHash)


class SourceReads:
    """Byte ranges (UTF-8, merged and sorted) of paged sources handed to the agent, per ``(path, cell id,
    sourceHash)``; a source marked known counts as read whole."""

    def __init__(self, max_sources: int = MAX_SOURCES) -> None:
        self._ranges: OrderedDict[Key, list[tuple[int, int]]] = OrderedDict()
        self._known: OrderedDict[Key, None] = OrderedDict()
        self._max = max_sources

    def _touch(self, store: OrderedDict, key: Key, value) -> None:
        store[key] = value
        store.move_to_end(key)
        while len(store) > self._max:
            store.popitem(last=False)

    def record(self, path: str, cell_id: str, source_hash: str, start: int, end: int) -> None:
        """The agent was given bytes ``[start, end)`` of the source with this hash (an empty page too: it was
        given that source in pages, :meth:`in_pages`)."""
        key = (path, cell_id, source_hash)
        merged: list[tuple[int, int]] = []
        for lo, hi in sorted([*self._ranges.get(key, []), *([(start, end)] if end > start else [])]):
            if merged and lo <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
            else:
                merged.append((lo, hi))
        self._touch(self._ranges, key, merged)

    def in_pages(self, path: str, cell_id: str, source_hash: str) -> bool:
        """True when that source was given to the agent in pages (whatever the page limits are now)."""
        return (path, cell_id, source_hash) in self._ranges

    def mark_known(self, path: str, cell_id: str, source_hash: str) -> None:
        """The agent knows this whole source (it wrote it)."""
        self._touch(self._known, (path, cell_id, source_hash), None)

    def first_unread(self, path: str, cell_id: str, source_hash: str, total: int) -> int | None:
        """The first byte offset of the source (``total`` bytes) not given to the agent; None: all (or known)."""
        gaps = self.unread_ranges(path, cell_id, source_hash, total, 1)
        return gaps[0][0] if gaps else None

    def unread_ranges(
        self, path: str, cell_id: str, source_hash: str, total: int, limit: int = 8
    ) -> list[tuple[int, int]]:
        """The first ``limit`` byte ranges ``[start, end)`` of the source not given to the agent, in order."""
        key = (path, cell_id, source_hash)
        if key in self._known:
            return []
        gaps: list[tuple[int, int]] = []
        offset = 0
        for lo, hi in [*self._ranges.get(key, []), (total, total)]:
            if lo > offset and offset < total:
                gaps.append((offset, min(lo, total)))
                if len(gaps) >= limit:
                    break
            offset = max(offset, hi)
        return gaps

    def fully_read(self, path: str, cell_id: str, source_hash: str, total: int) -> bool:
        """True when every byte of that source reached the agent (or it wrote it)."""
        return self.first_unread(path, cell_id, source_hash, total) is None
