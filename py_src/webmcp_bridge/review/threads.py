"""Review threads: comments anchored to a cell, a range of its source, or one of its outputs.

Used by the tools on the guarded notebook, by the Agent panel on the raw one. Every method is synchronous, so a
write is one read-modify-write of the notebook's ``webmcp_bridge`` metadata with no ``await`` in between.

Storage (schemaVersion 1), in the notebook metadata so threads travel with the file::

    metadata["webmcp_bridge"] = {
        "schemaVersion": 1,                # an int; written as 1 when missing or malformed, else kept
        "threads": [<thread>, ...],        # oldest first; "access" and any other key kept as they are
    }
    <thread> = {
        "id": "3f9a1c2b7d4e",              # 12 lowercase hex digits, random, unique in the notebook
        "status": "open" | "resolved", "anchor": <anchor>,
        "messages": [<message>, ...],      # oldest first; the first opened the thread
        "createdAt": 1718000000.123,       # seconds since the epoch; "updatedAt" likewise (last change)
        "resolvedAt": 1718000000.123, "resolvedBy": "person" | "agent",  # only while resolved
    }
    <message> = {"author": "person" | "agent", "body": str, "time": 1718000000.123,
                 "sig": "9c1f..."}         # the person's, signed: review/signatures.py
    <anchor> = {"kind": "cell", "cellId": str}
        | {"kind": "range", "cellId": str, "quote": str (non-empty),
           "prefix": str, "suffix": str,   # up to CONTEXT_CHARS characters before / after it at creation
           "selection": {"start": {"line", "column"}, "end": {...}}}  # where it was (0-based; UTF-16 columns)
        | {"kind": "output", "cellId": str, "outputIndex": int,
           "fingerprint": str,             # output_fingerprint(); 16 hex digits
           "outputType": str, "mimeTypes": [str, ...]}   # what it was, for display only

Reading is defensive: a non-dict block, a non-list ``threads`` and any invalid entry (wrong types, unknown status or
kind, duplicate id, non-list ``messages``) are skipped, never an error; writes keep skipped entries and other keys as
found (only a non-dict block or non-list ``threads`` is replaced). A malformed message is skipped when read, kept
when written; a wrong-typed optional field reads as absent. A "person" message reads as theirs only when its
``sig`` verifies (:mod:`webmcp_bridge.review.signatures`), else "file".

Anchor states are computed on every read, never stored (docs/TOOLS.md, "Anchor states"): cell ``exact`` /
``cell-missing``; range ``exact`` / ``reanchored`` (the quote once, or once with its stored context) / ``orphaned``
(never a guess) / ``cell-missing``, with the current selection when found; output ``exact`` / ``output-changed``
(fingerprint without execution counts) / ``cell-missing``. A failing call changes nothing.
"""

from __future__ import annotations

import copy
import math
import secrets
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.core.limits import DEFAULT_LIMITS, FINGERPRINT_HEAD_BYTES, SHORT_ID_CHARS, Limits, utf8_len
from webmcp_bridge.core.metadata import SCHEMA_VERSION
from webmcp_bridge.host.protocol import LiveNotebook, RawCell
from webmcp_bridge.review.anchors import (
    context_around,
    index_of,
    is_int,
    is_selection,
    locate_quote,
    occurrences_of,
    output_fingerprint,
    position_of,
)
from webmcp_bridge.review.signatures import shown_author, sign

THREADS_KEY = "threads"
ID_HEX_DIGITS = 12

Author = Literal["person", "agent"]
Status = Literal["open", "resolved"]
StatusFilter = Literal["open", "resolved", "all"]
AUTHORS = ("person", "agent")
STATUSES = ("open", "resolved")


@dataclass(frozen=True)
class CellAnchor:
    """Anchor a thread to a whole cell."""

    cell_id: str


@dataclass(frozen=True)
class RangeAnchor:
    """Anchor a thread to a range of a cell's source: give ``quote`` (exact text occurring exactly once) or
    ``selection`` ({start: {line, column}, end: {line, column}}, UTF-16 columns), not both."""

    cell_id: str
    quote: str | None = None
    selection: dict | None = None


@dataclass(frozen=True)
class OutputAnchor:
    """Anchor a thread to output ``output_index`` of a code cell."""

    cell_id: str
    output_index: int


Anchor = CellAnchor | RangeAnchor | OutputAnchor


class Message(NamedTuple):
    """A message as read: ``author`` "person" | "agent" | "file" (review/signatures.py), ``time`` in epoch seconds."""

    author: str
    body: str
    time: float


@dataclass(frozen=True)
class ThreadView:
    """A thread as read now: ``anchor`` a copy of the stored one, ``state`` its anchor state, ``cell_index`` None
    when the cell is missing, ``selection`` the quote's {start, end} when found, times in epoch seconds (None:
    unknown or not resolved), ``resolved_by`` only while resolved."""

    id: str
    status: str
    anchor: dict[str, Any]
    state: str
    cell_id: str
    cell_index: int | None
    selection: dict | None
    messages: tuple[Message, ...]
    created_at: float | None = None
    updated_at: float | None = None
    resolved_at: float | None = None
    resolved_by: str | None = None

    @property
    def kind(self) -> str:
        """The anchor kind: "cell" | "range" | "output"."""
        return self.anchor["kind"]

    def to_json(self, max_messages: int | None = None) -> dict[str, Any]:
        """The thread as tools return it (docs/TOOLS.md); with ``max_messages`` only the first message and the
        latest ``max_messages - 1``, ``omittedMessageCount`` counting the rest."""
        shown = list(self.messages)
        if max_messages is not None and len(shown) > max_messages:
            keep = max(1, max_messages)
            shown = shown[:1] + (shown[len(shown) - (keep - 1) :] if keep > 1 else [])
        return {
            "id": self.id,
            "status": self.status,
            "state": self.state,
            "cellId": self.cell_id,
            "cellIndex": self.cell_index,
            "anchor": dict(self.anchor),
            "selection": self.selection,
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
            "resolvedAt": self.resolved_at,
            "resolvedBy": self.resolved_by,
            "messageCount": len(self.messages),
            "messages": [{"author": m.author, "body": m.body, "time": m.time} for m in shown],
            "omittedMessageCount": len(self.messages) - len(shown),
        }


def comment_not_found(thread_id: str) -> ToolError:
    """The one wording for a thread id that does not exist (or that the caller may not see)."""
    return ToolError(
        ErrorCode.COMMENT_NOT_FOUND, f"No comment thread with id {thread_id!r} in this notebook.", threadId=thread_id
    )


def _valid_anchor(anchor: Any) -> bool:
    if not isinstance(anchor, dict) or not isinstance(anchor.get("cellId"), str) or not anchor["cellId"]:
        return False
    kind = anchor.get("kind")
    if kind == "cell":
        return True
    if kind == "range":
        return (
            isinstance(anchor.get("quote"), str)
            and bool(anchor["quote"])
            and isinstance(anchor.get("prefix"), str)
            and isinstance(anchor.get("suffix"), str)
            and is_selection(anchor.get("selection"))
        )
    if kind == "output":
        return is_int(anchor.get("outputIndex")) and isinstance(anchor.get("fingerprint"), str)
    return False


def _valid_thread(entry: Any) -> bool:
    return (
        isinstance(entry, dict)
        and isinstance(entry.get("id"), str)
        and 0 < len(entry["id"]) <= SHORT_ID_CHARS
        and entry.get("status") in STATUSES
        and _valid_anchor(entry.get("anchor"))
        and isinstance(entry.get("messages"), list)
    )


def _time(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def _messages(raw: list[Any], thread_id: str, key: bytes | None) -> tuple[Message, ...]:
    """The valid messages of a stored list, each with the author it is shown with (``key``: the page secret)."""
    out = []
    for index, m in enumerate(raw):
        when = _time(m.get("time")) if isinstance(m, dict) else None
        if when is not None and m.get("author") in AUTHORS and isinstance(m.get("body"), str):
            author = shown_author(key, thread_id, index, m["author"], m["body"], when, m.get("sig"))
            out.append(Message(author, m["body"], when))
    return tuple(out)


def parse_threads(meta: Any) -> list[dict[str, Any]]:
    """The valid thread entries (the stored dicts themselves) of a ``webmcp_bridge`` block, in order; invalid entries
    and later duplicates of an id skipped."""
    if not isinstance(meta, dict) or not isinstance(meta.get(THREADS_KEY), list):
        return []
    seen: set[str] = set()
    valid = []
    for entry in meta[THREADS_KEY]:
        if _valid_thread(entry) and entry["id"] not in seen:
            seen.add(entry["id"])
            valid.append(entry)
    return valid


def _selection_in(source: str, selection: Any, name: str = "selection") -> tuple[int, int]:
    """Ordered (start, end) indices of a selection argument; INVALID_ARGUMENT outside ``source`` or empty."""
    if not is_selection(selection):
        raise ToolError(
            ErrorCode.INVALID_ARGUMENT,
            f"{name} must be {{start: {{line, column}}, end: {{line, column}}}} with non-negative integers.",
        )
    bounds: list[int] = []
    for side in ("start", "end"):
        at = index_of(source, selection[side])
        if at is None:
            pos = selection[side]
            raise ToolError(
                ErrorCode.INVALID_ARGUMENT,
                f"{name}.{side} (line {pos['line']}, column {pos['column']}) is not a position in the cell's source.",
            )
        bounds.append(at)
    start, end = sorted(bounds)
    if start == end:
        raise ToolError(ErrorCode.INVALID_ARGUMENT, f"{name} is empty; select some text, or comment on the whole cell.")
    return start, end


class Review:
    """Review threads of one notebook (guarded for tools, raw for the panel); caps are ``Limits.comment_*``; ``now``
    a clock in epoch seconds. ``key`` (the page secret) signs the person's messages and judges stored ones (None:
    none reads as the person's, theirs are stored unsigned)."""

    def __init__(
        self,
        nb: LiveNotebook,
        limits: Limits = DEFAULT_LIMITS,
        now: Callable[[], float] = time.time,
        key: bytes | None = None,
    ) -> None:
        self.nb = nb
        self.limits = limits
        self._now = now
        self.key = key

    def counts(self) -> dict[str, int]:
        """``{"open": n, "resolved": m}`` (no cell is read)."""
        threads = parse_threads(self.nb.bridge_metadata())
        return {s: sum(1 for t in threads if t["status"] == s) for s in STATUSES}

    def counts_by_cell(self, status: StatusFilter = "open") -> dict[str, int]:
        """Threads with ``status`` per anchor cell id (no cell is read)."""
        return dict(Counter(t["anchor"]["cellId"] for t in self._select(status, None)))

    def count(self, status: StatusFilter = "open", cell_id: str | None = None) -> int:
        """How many threads :meth:`threads` would return without a limit (no cell is read)."""
        return len(self._select(status, cell_id))

    def threads(
        self, status: StatusFilter = "open", cell_id: str | None = None, limit: int | None = None
    ) -> list[ThreadView]:
        """Threads with ``status`` ("all": both), of ``cell_id`` when given, oldest first, at most ``limit``; the
        cells read once."""
        if status not in ("open", "resolved", "all"):
            raise ToolError(ErrorCode.INVALID_ARGUMENT, "status must be 'open', 'resolved' or 'all'.")
        chosen = self._select(status, cell_id)
        return self._resolve(chosen if limit is None else chosen[: max(0, limit)])

    def get(self, thread_id: str) -> ThreadView:
        """One thread. Raises COMMENT_NOT_FOUND."""
        return self._resolve([self._find(parse_threads(self.nb.bridge_metadata()), thread_id)])[0]

    def create(self, anchor: Anchor, body: str, author: Author) -> ThreadView:
        """Open a thread on ``anchor``. Raises CELL_NOT_FOUND, OUTPUT_NOT_FOUND, INVALID_ARGUMENT (quote not once:
        ``occurrences``; bad selection), TOO_LARGE (body, quote, ``comment_threads_stored`` reached)."""
        self._check_author(author)
        self._check_body(body, "body")
        stored = self._anchor(anchor)
        meta, entries = self._load()
        if len(entries) >= self.limits.comment_threads_stored:
            raise ToolError(
                ErrorCode.TOO_LARGE,
                f"This notebook already holds {len(entries)} comment threads; at most "
                f"{self.limits.comment_threads_stored} are kept. Resolve and remove old ones first.",
                count=len(entries),
                maxCount=self.limits.comment_threads_stored,
            )
        taken = {e.get("id") for e in entries if isinstance(e, dict)}
        thread_id = secrets.token_hex(ID_HEX_DIGITS // 2)
        while thread_id in taken:
            thread_id = secrets.token_hex(ID_HEX_DIGITS // 2)
        now = self._time()
        entries.append(
            {
                "id": thread_id,
                "status": "open",
                "anchor": stored,
                "messages": [sign(self.key, thread_id, 0, {"author": author, "body": body, "time": now})],
                "createdAt": now,
                "updatedAt": now,
            }
        )
        return self._store(meta, entries, thread_id)

    def reply(self, thread_id: str, body: str, author: Author) -> ThreadView:
        """Add a message (the status is kept). Raises COMMENT_NOT_FOUND, INVALID_ARGUMENT, TOO_LARGE (body, or
        ``comment_messages_stored`` reached)."""
        self._check_author(author)
        self._check_body(body, "body")
        meta, entries = self._load()
        thread = self._find(parse_threads(meta), thread_id)
        if len(thread["messages"]) >= self.limits.comment_messages_stored:
            raise ToolError(
                ErrorCode.TOO_LARGE,
                f"Thread {thread_id!r} already holds {len(thread['messages'])} messages; "
                f"at most {self.limits.comment_messages_stored} are kept.",
                threadId=thread_id,
                count=len(thread["messages"]),
                maxCount=self.limits.comment_messages_stored,
            )
        now = self._time()
        self._append(thread, author, body, now)
        thread["updatedAt"] = now
        return self._store(meta, entries, thread_id)

    def resolve(self, thread_id: str, author: Author, message: str | None = None) -> ThreadView:
        """Resolve an open thread, with an optional closing ``message``. Raises COMMENT_NOT_FOUND, INVALID_ARGUMENT
        (already resolved), TOO_LARGE."""
        self._check_author(author)
        if message is not None:
            self._check_body(message, "message")
        meta, entries = self._load()
        thread = self._find(parse_threads(meta), thread_id)
        if thread["status"] == "resolved":
            raise ToolError(
                ErrorCode.INVALID_ARGUMENT,
                f"Thread {thread_id!r} is already resolved.",
                threadId=thread_id,
                status="resolved",
            )
        if message is not None and len(thread["messages"]) >= self.limits.comment_messages_stored:
            raise ToolError(
                ErrorCode.TOO_LARGE,
                f"Thread {thread_id!r} already holds {len(thread['messages'])} messages; resolve it without a message.",
                threadId=thread_id,
                maxCount=self.limits.comment_messages_stored,
            )
        now = self._time()
        if message is not None:
            self._append(thread, author, message, now)
        thread.update(status="resolved", resolvedAt=now, resolvedBy=author, updatedAt=now)
        return self._store(meta, entries, thread_id)

    def reopen(self, thread_id: str, author: Author) -> ThreadView:
        """Reopen a resolved thread. Raises COMMENT_NOT_FOUND, INVALID_ARGUMENT (already open)."""
        self._check_author(author)
        meta, entries = self._load()
        thread = self._find(parse_threads(meta), thread_id)
        if thread["status"] == "open":
            raise ToolError(
                ErrorCode.INVALID_ARGUMENT, f"Thread {thread_id!r} is already open.", threadId=thread_id, status="open"
            )
        thread["status"] = "open"
        thread.pop("resolvedAt", None)
        thread.pop("resolvedBy", None)
        thread["updatedAt"] = self._time()
        return self._store(meta, entries, thread_id)

    def reanchor(self, thread_id: str, cell_id: str, selection: dict | None) -> ThreadView:
        """The person moves a thread to ``selection`` of cell ``cell_id`` (None: the whole cell). Raises
        COMMENT_NOT_FOUND, CELL_NOT_FOUND, INVALID_ARGUMENT, TOO_LARGE."""
        anchor: Anchor = CellAnchor(cell_id) if selection is None else RangeAnchor(cell_id, selection=selection)
        stored = self._anchor(anchor)
        meta, entries = self._load()
        thread = self._find(parse_threads(meta), thread_id)
        thread["anchor"] = stored
        thread["updatedAt"] = self._time()
        return self._store(meta, entries, thread_id)

    def focus(self, thread_id: str) -> tuple[ThreadView, str]:
        """Show a thread's anchor to the person: select the range, highlight the output (the cell when it is gone),
        or reveal the cell; returns ``(view, "selection" | "cell" | "output")``. Raises COMMENT_NOT_FOUND,
        COMMENT_ANCHOR_STALE (orphaned or cell-missing: ``threadId``, ``state``)."""
        view = self.get(thread_id)
        if view.state in ("orphaned", "cell-missing"):
            why = (
                "its cell was deleted"
                if view.state == "cell-missing"
                else "the quoted text is no longer found unambiguously in its cell (the person can re-anchor it)"
            )
            raise ToolError(
                ErrorCode.COMMENT_ANCHOR_STALE,
                f"Thread {thread_id!r} cannot be shown: {why}.",
                threadId=thread_id,
                state=view.state,
                cellId=view.cell_id,
            )
        if view.kind == "output":
            index = view.anchor["outputIndex"]
            cell = self.nb.find_cells([view.cell_id], max_outputs=index + 1)[0]
            if index < cell.output_count:
                self.nb.highlight_output(view.cell_id, index)
                return view, "output"
        self.nb.set_focus(view.cell_id, None, view.selection)
        return view, ("selection" if view.selection is not None else "cell")

    def _time(self) -> float:
        return round(float(self._now()), 3)

    def _select(self, status: str, cell_id: str | None) -> list[dict[str, Any]]:
        return [
            t
            for t in parse_threads(self.nb.bridge_metadata())
            if (status == "all" or t["status"] == status) and (cell_id is None or t["anchor"]["cellId"] == cell_id)
        ]

    @staticmethod
    def _find(threads: list[dict[str, Any]], thread_id: str) -> dict[str, Any]:
        for t in threads:
            if t["id"] == thread_id:
                return t
        raise comment_not_found(thread_id)

    @staticmethod
    def _check_author(author: Any) -> None:
        if author not in AUTHORS:
            raise ToolError(ErrorCode.INVALID_ARGUMENT, "author must be 'person' or 'agent'.")

    def _check_body(self, body: Any, name: str) -> None:
        if not isinstance(body, str) or not body.strip():
            raise ToolError(ErrorCode.INVALID_ARGUMENT, f"{name} is empty.")
        size = utf8_len(body)
        if size > self.limits.comment_body_bytes:
            raise ToolError(
                ErrorCode.TOO_LARGE,
                f"{name} is {size} bytes; a comment is at most {self.limits.comment_body_bytes}.",
                field=name,
                bytes=size,
                maxBytes=self.limits.comment_body_bytes,
            )

    def _load(self) -> tuple[dict[str, Any], list[Any]]:
        """(the ``webmcp_bridge`` dict, its threads list), to mutate and store back."""
        meta = self.nb.bridge_metadata()
        if not isinstance(meta, dict):
            meta = {}
        if not isinstance(meta.get(THREADS_KEY), list):
            meta[THREADS_KEY] = []
        return meta, meta[THREADS_KEY]

    def _store(self, meta: dict[str, Any], entries: list[Any], thread_id: str) -> ThreadView:
        """Write the block back; the thread ``thread_id`` as read after."""
        meta[THREADS_KEY] = entries
        if not is_int(meta.get("schemaVersion"), 1):
            meta["schemaVersion"] = SCHEMA_VERSION
        self.nb.set_bridge_metadata(meta)
        return self.get(thread_id)

    def _append(self, thread: dict[str, Any], author: Author, body: str, now: float) -> None:
        added = {"author": author, "body": body, "time": now}
        thread["messages"].append(sign(self.key, thread["id"], len(thread["messages"]), added))

    def _anchor(self, anchor: Anchor) -> dict[str, Any]:
        """The stored form of an anchor argument, checked against the live cell."""
        if not isinstance(anchor, (CellAnchor, RangeAnchor, OutputAnchor)):
            raise ToolError(ErrorCode.INVALID_ARGUMENT, "anchor must be a CellAnchor, RangeAnchor or OutputAnchor.")
        if isinstance(anchor, CellAnchor):
            cell = self.nb.find_cell(anchor.cell_id)
            return {"kind": "cell", "cellId": cell.id}
        if isinstance(anchor, OutputAnchor):
            if not is_int(anchor.output_index):
                raise ToolError(ErrorCode.INVALID_ARGUMENT, "outputIndex must be a non-negative integer.")
            cell = self.nb.find_cells(
                [anchor.cell_id], head_bytes=FINGERPRINT_HEAD_BYTES, max_outputs=anchor.output_index + 1
            )[0]
            if anchor.output_index >= cell.output_count or anchor.output_index >= len(cell.outputs):
                raise ToolError(
                    ErrorCode.OUTPUT_NOT_FOUND,
                    f"Cell {cell.id!r} has {cell.output_count} output(s); there is no index {anchor.output_index}.",
                    cellId=cell.id,
                    outputIndex=anchor.output_index,
                    outputCount=cell.output_count,
                )
            output = cell.outputs[anchor.output_index]
            return {
                "kind": "output",
                "cellId": cell.id,
                "outputIndex": anchor.output_index,
                "fingerprint": output_fingerprint(output),
                "outputType": output.output_type,
                "mimeTypes": [item.mime for item in output.items],
            }
        if (anchor.quote is None) == (anchor.selection is None):
            raise ToolError(ErrorCode.INVALID_ARGUMENT, "A range anchor needs quote or selection (one of them).")
        cell = self.nb.find_cell(anchor.cell_id)
        source = cell.source
        if anchor.quote is not None:
            if not isinstance(anchor.quote, str) or not anchor.quote:
                raise ToolError(ErrorCode.INVALID_ARGUMENT, "quote is empty.")
            found = occurrences_of(source, anchor.quote)
            if len(found) != 1:
                raise ToolError(
                    ErrorCode.INVALID_ARGUMENT,
                    "quote does not occur in the cell's source."
                    if not found
                    else f"quote occurs {len(found)} times in the cell's source; quote more text so it occurs once, "
                    "or give a selection.",
                    cellId=cell.id,
                    occurrences=len(found),
                )
            start, end = found[0], found[0] + len(anchor.quote)
        else:
            start, end = _selection_in(source, anchor.selection)
        quote = source[start:end]
        size = utf8_len(quote)
        if size > self.limits.comment_quote_bytes:
            raise ToolError(
                ErrorCode.TOO_LARGE,
                f"The quoted text is {size} bytes; a range anchor quotes at most "
                f"{self.limits.comment_quote_bytes}. Comment on the whole cell instead.",
                field="quote",
                bytes=size,
                maxBytes=self.limits.comment_quote_bytes,
            )
        prefix, suffix = context_around(source, start, end)
        return {
            "kind": "range",
            "cellId": cell.id,
            "quote": quote,
            "prefix": prefix,
            "suffix": suffix,
            "selection": {"start": position_of(source, start), "end": position_of(source, end)},
        }

    def _read_cells(self, cell_ids: Sequence[str], max_outputs: int) -> dict[str, RawCell]:
        """The existing cells of ``cell_ids``, by id: one read, or one per id when some are missing."""
        if not cell_ids:
            return {}
        head = FINGERPRINT_HEAD_BYTES if max_outputs else 0
        try:
            return {c.id: c for c in self.nb.find_cells(cell_ids, head_bytes=head, max_outputs=max_outputs)}
        except ToolError as err:
            if err.code != ErrorCode.CELL_NOT_FOUND:
                raise
        found: dict[str, RawCell] = {}
        for cell_id in cell_ids:
            try:
                found[cell_id] = self.nb.find_cells([cell_id], head_bytes=head, max_outputs=max_outputs)[0]
            except ToolError as err:
                if err.code != ErrorCode.CELL_NOT_FOUND:
                    raise
        return found

    def _resolve(self, threads: list[dict[str, Any]]) -> list[ThreadView]:
        ids = list(dict.fromkeys(t["anchor"]["cellId"] for t in threads))
        max_outputs = max(
            (t["anchor"]["outputIndex"] + 1 for t in threads if t["anchor"]["kind"] == "output"), default=0
        )
        cells = self._read_cells(ids, max_outputs)
        return [self._view(t, cells.get(t["anchor"]["cellId"]), self.key) for t in threads]

    @staticmethod
    def _view(thread: dict[str, Any], cell: RawCell | None, key: bytes | None) -> ThreadView:
        anchor = thread["anchor"]
        selection = None
        if cell is None:
            state = "cell-missing"
        elif anchor["kind"] == "cell":
            state = "exact"
        elif anchor["kind"] == "range":
            state, span = locate_quote(cell.source, anchor)
            if span is not None:
                selection = {"start": position_of(cell.source, span[0]), "end": position_of(cell.source, span[1])}
        else:
            index = anchor["outputIndex"]
            same = index < len(cell.outputs) and output_fingerprint(cell.outputs[index]) == anchor["fingerprint"]
            state = "exact" if same else "output-changed"
        resolved = thread["status"] == "resolved"
        return ThreadView(
            id=thread["id"],
            status=thread["status"],
            anchor=copy.deepcopy(anchor),
            state=state,
            cell_id=anchor["cellId"],
            cell_index=cell.index if cell is not None else None,
            selection=selection,
            messages=_messages(thread["messages"], thread["id"], key),
            created_at=_time(thread.get("createdAt")),
            updated_at=_time(thread.get("updatedAt")),
            resolved_at=_time(thread.get("resolvedAt")) if resolved else None,
            resolved_by=thread.get("resolvedBy") if resolved and thread.get("resolvedBy") in AUTHORS else None,
        )
