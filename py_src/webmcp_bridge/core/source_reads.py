"""Which bytes of which big cell sources the agent was given: the rule that a write never drops what it never saw.

A source longer than one read page (``Limits.source_read_bytes``, or less when JSON escaping makes the page
longer than the result cap allows) reaches the agent in pages (``jupyter_get_cells`` with ``sourceOffset``).
An agent that writes back "what it read plus a line" after reading only the first page would delete the
rest, with a matching ``sourceHash`` and no error. So a whole-source write (``jupyter_update_cell``, the
``update`` op of ``jupyter_apply_edits``) of a cell whose current source is paged is refused with
``SOURCE_NOT_FULLY_READ`` unless every byte of exactly that source (same ``sourceHash``) was handed to the
agent in this session, or the agent wrote that very source itself (insert, update, or an edit of a source it
had read in full). A person's edit changes the hash, so the agent must read the new text again before
replacing it. Partial edits (``jupyter_edit_cell_source``) keep every byte they do not replace and need no
full read.

The same rule holds for text files (``jupyter_read_file`` pages a file 16 KiB at a time): a whole-file
overwrite by ``jupyter_write_file`` is refused with ``FILE_NOT_FULLY_READ`` unless every byte of exactly that
version (same ``hash``) was handed to the agent, or the agent wrote that version itself; a second
:class:`SourceReads` keeps the files' ranges with ``""`` as the cell id. ``jupyter_edit_file`` and
``jupyter_write_file``'s ``append`` keep every byte they do not replace and need no full read.

Kept in memory, per page session, for at most :data:`MAX_SOURCES` sources (the oldest forgotten first: the
agent then reads again; forgetting can only refuse a write, never allow one).
"""

from __future__ import annotations

from collections import OrderedDict

from webmcp_bridge.core.limits import MAX_SOURCES

Key = tuple[str, str, str]  # (notebook path, cell id, sourceHash)


class SourceReads:
    """Byte ranges of paged sources handed to the agent, per ``(path, cell id, sourceHash)``.

    Offsets are UTF-8 bytes. Ranges are kept merged and sorted; a source marked known counts as read whole.
    """

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
        """The agent was given bytes ``[start, end)`` of the source with this hash."""
        if end <= start:
            return
        key = (path, cell_id, source_hash)
        merged: list[tuple[int, int]] = []
        for lo, hi in sorted([*self._ranges.get(key, []), (start, end)]):
            if merged and lo <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
            else:
                merged.append((lo, hi))
        self._touch(self._ranges, key, merged)

    def mark_known(self, path: str, cell_id: str, source_hash: str) -> None:
        """The agent knows this whole source (it wrote it)."""
        self._touch(self._known, (path, cell_id, source_hash), None)

    def first_unread(self, path: str, cell_id: str, source_hash: str, total: int) -> int | None:
        """The first byte offset of the source (``total`` bytes) the agent was not given, or None when it was
        given all of it (or knows it)."""
        key = (path, cell_id, source_hash)
        if key in self._known:
            return None
        offset = 0
        for lo, hi in self._ranges.get(key, []):
            if lo > offset:
                break
            offset = max(offset, hi)
        return None if offset >= total else offset

    def unread_ranges(
        self, path: str, cell_id: str, source_hash: str, total: int, limit: int = 8
    ) -> list[tuple[int, int]]:
        """The byte ranges ``[start, end)`` of the source (``total`` bytes) the agent was not given, in order, at
        most ``limit`` of them (the first ones); empty when it was given all of it (or knows it)."""
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
