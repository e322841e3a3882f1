"""Where a review thread's anchor is in a cell: positions (line, UTF-16 column) and indices into the source, the
quoted text found again, an output's fingerprint.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from webmcp_bridge.core.limits import CONTEXT_CHARS, MAX_INT
from webmcp_bridge.core.snapshot import HASH_HEX_CHARS
from webmcp_bridge.host.protocol import RawOutput


def utf16_units(text: str) -> int:
    """The length of ``text`` in UTF-16 code units (a column's unit)."""
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def index_of(source: str, position: Any) -> int | None:
    """The code-point index of ``position`` {line, column} (0-based, UTF-16 columns) in ``source``; None when it is
    not inside it (past a line's end or the last line, or inside a surrogate pair)."""
    if not is_position(position):
        return None
    line, column = position["line"], position["column"]
    start = 0
    for _ in range(line):
        start = source.find("\n", start) + 1
        if start == 0:
            return None
    end = source.find("\n", start)
    end = len(source) if end == -1 else end
    units = 0
    for i in range(start, end + 1):
        if units == column:
            return i
        if units > column or i == end:
            return None
        units += 2 if ord(source[i]) > 0xFFFF else 1
    return None


def position_of(source: str, index: int) -> dict[str, int]:
    """The {line, column} of ``index`` into ``source`` (column in UTF-16 code units)."""
    line = source.count("\n", 0, index)
    line_start = source.rfind("\n", 0, index) + 1
    return {"line": line, "column": utf16_units(source[line_start:index])}


def is_int(value: Any, low: int = 0) -> bool:
    """True for a JSON integer (not a bool) from ``low`` to MAX_INT."""
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= MAX_INT


def is_position(value: Any) -> bool:
    """True for ``{"line": int, "column": int}`` (both >= 0)."""
    return isinstance(value, dict) and is_int(value.get("line")) and is_int(value.get("column"))


def is_selection(value: Any) -> bool:
    """True for ``{"start": position, "end": position}``."""
    return isinstance(value, dict) and is_position(value.get("start")) and is_position(value.get("end"))


def occurrences_of(source: str, quote: str) -> list[int]:
    """Every index where ``quote`` starts in ``source``, overlapping ones included."""
    found, at = [], source.find(quote)
    while at != -1:
        found.append(at)
        at = source.find(quote, at + 1)
    return found


def context_around(source: str, start: int, end: int) -> tuple[str, str]:
    """The CONTEXT_CHARS characters of ``source`` before ``start`` and after ``end``."""
    return source[max(0, start - CONTEXT_CHARS) : start], source[end : end + CONTEXT_CHARS]


def locate_quote(source: str, anchor: dict[str, Any]) -> tuple[str, tuple[int, int] | None]:
    """``(state, (start, end) or None)`` of a stored range anchor in ``source``: "exact" | "reanchored" |
    "orphaned" (docs/TOOLS.md, "Anchor states")."""
    quote = anchor["quote"]
    at = index_of(source, anchor["selection"]["start"])
    if at is not None and source.startswith(quote, at):
        return "exact", (at, at + len(quote))
    found = occurrences_of(source, quote)
    if len(found) > 1:
        prefix, suffix = anchor["prefix"], anchor["suffix"]
        found = [i for i in found if source.endswith(prefix, 0, i) and source.startswith(suffix, i + len(quote))]
    if len(found) == 1:
        return "reanchored", (found[0], found[0] + len(quote))
    return "orphaned", None


def output_fingerprint(output: RawOutput) -> str:
    """16 hex digits of SHA-256 over the output type, stream name, and per representation its MIME type, byte size
    and text head; an error by ``ename`` and ``evalue``, not its traceback (which names the execution count)."""
    parts: list[Any] = [output.output_type, output.name or ""]
    if output.output_type == "error":
        parts += [output.ename or "", output.evalue or ""]
    else:
        parts += [[item.mime, item.bytes, item.head] for item in output.items]
    text = json.dumps(parts, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:HASH_HEX_CHARS]
