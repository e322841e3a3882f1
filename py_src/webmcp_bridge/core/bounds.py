"""Fitting a tool's payload under the result cap, in stages, saying what was cut and where (docs/TOOLS.md,
"Bounds"): stage 1 cuts the longest strings to one common length (the largest that fits: "water filling"), stage 2
drops trailing items of the longest lists; each cut is reported in ``truncation``. :data:`PROTECTED_KEYS` (ids,
hashes, codes) are never shortened.
"""

from __future__ import annotations

import json
from typing import Any

from webmcp_bridge.core.limits import (
    MAX_REPORTED_CUTS,
    MIN_KEPT_BYTES,
    TRUNCATION_REPORT_BYTES,
    slice_utf8,
    truncate_utf8,
)

PROTECTED_KEYS = frozenset({"id", "cellId", "sourceHash", "path", "error", "status", "pendingId", "type", "outputType"})
MARKER = "…"


def dumps(payload: Any) -> str:
    """The canonical JSON text of a payload (compact, non-ASCII kept; no cycle check: payloads are trees)."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"), check_circular=False)


def json_bytes(payload: Any) -> int:
    """Size of :func:`dumps` in UTF-8 bytes."""
    return len(dumps(payload).encode("utf-8", "surrogatepass"))


def fit_payload_text(payload: dict[str, Any], cap: int, text: str | None = None) -> tuple[dict[str, Any], str]:
    """:func:`fit_payload` and its :func:`dumps` text (``text``: that of ``payload``, if the caller made it)."""
    text = dumps(payload) if text is None else text
    if (len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))) <= cap:
        return payload, text
    fitted = fit_payload(payload, cap)
    return fitted, dumps(fitted)


def _leaves(node: Any, path: str, out: list[tuple[str, Any, Any, int]], lists: list[tuple[str, list]]) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            child = f"{path}.{key}" if path else key
            if isinstance(value, str):
                if key not in PROTECTED_KEYS:
                    out.append((child, node, key, json_bytes(value)))
            else:
                _leaves(value, child, out, lists)
    elif isinstance(node, list):
        lists.append((path, node))
        for i, value in enumerate(node):
            child = f"{path}[{i}]"
            if isinstance(value, str):
                out.append((child, node, i, json_bytes(value)))
            else:
                _leaves(value, child, out, lists)


def _water_level(sizes: list[int], budget: int) -> int:
    """The largest L with sum(min(s, L)) <= budget (L >= 0)."""
    ordered = sorted(sizes)
    remaining, count = budget, len(ordered)
    for i, size in enumerate(ordered):
        share = remaining // (count - i)
        if size > share:
            return max(0, share)
        remaining -= size
    return ordered[-1] if ordered else 0


def fit_payload(payload: dict[str, Any], cap: int) -> dict[str, Any]:
    """``payload`` (mutated in place) with its JSON text at most ``cap`` bytes: when anything was cut, with
    ``truncated: true`` and ``truncation: [{path, keptBytes, totalBytes} | {path, keptItems, totalItems}]``; a
    payload that fits is untouched. Raises nothing: when even the skeleton does not fit, ``{truncated, message}``.
    """
    size = json_bytes(payload)
    if size <= cap:
        return payload
    cuts: list[dict[str, Any]] = []
    # Stage 1: shorten long strings to a common length.
    for _ in range(4):
        leaves: list[tuple[str, Any, Any, int]] = []
        _leaves(payload, "", leaves, [])
        if not leaves:
            break
        total_strings = sum(s for *_, s in leaves)
        fixed = size - total_strings
        budget = cap - fixed - TRUNCATION_REPORT_BYTES
        level = max(MIN_KEPT_BYTES, _water_level([s for *_, s in leaves], max(0, budget)))
        changed = False
        for path, parent, key, json_size in leaves:
            if json_size > level:
                value = parent[key]
                raw = len(value.encode("utf-8", "surrogatepass"))
                ratio = raw / max(1, json_size - 2)  # escaping makes JSON text longer than the raw string
                kept = truncate_utf8(value, int((level - 2 - len(MARKER.encode())) * ratio))
                parent[key] = kept + MARKER
                cuts.append({"path": path, "keptBytes": len(kept.encode("utf-8", "surrogatepass")), "totalBytes": raw})
                changed = True
        size = json_bytes(payload) + TRUNCATION_REPORT_BYTES
        if size <= cap or not changed or level <= MIN_KEPT_BYTES:
            break
    # Stage 2: drop trailing items of the longest lists, keeping as many as fit (binary search).
    while json_bytes(payload) + TRUNCATION_REPORT_BYTES > cap:
        lists: list[tuple[str, list]] = []
        _leaves(payload, "", [], lists)
        lists = [(p, lst) for p, lst in lists if lst]
        if not lists:
            break
        path, longest = max(lists, key=lambda pl: json_bytes(pl[1]))
        items = list(longest)
        lo, hi = 0, len(items) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            longest[:] = items[:mid]
            if json_bytes(payload) + TRUNCATION_REPORT_BYTES <= cap:
                lo = mid
            else:
                hi = mid - 1
        longest[:] = items[:lo]
        cuts.append({"path": path, "keptItems": lo, "totalItems": len(items)})
    merged: dict[str, dict[str, Any]] = {}
    for cut in cuts:  # a string cut twice is reported once, with its original size
        merged.setdefault(cut["path"], dict(cut)).update({k: v for k, v in cut.items() if k.startswith("kept")})
    report = sorted(merged.values(), key=lambda c: "keptItems" not in c)  # dropped items first: they matter most
    payload["truncated"] = True
    payload["truncation"] = report[:MAX_REPORTED_CUTS]
    if len(report) > MAX_REPORTED_CUTS:
        payload["truncationOmitted"] = len(report) - MAX_REPORTED_CUTS
    while json_bytes(payload) > cap and payload["truncation"]:
        payload["truncation"].pop()
        payload["truncationOmitted"] = payload.get("truncationOmitted", 0) + 1
    if json_bytes(payload) > cap:
        return {
            "truncated": True,
            "message": "The result did not fit the result cap even when shortened; ask for less.",
        }
    return payload


def json_page(text: str, offset: int, max_bytes: int, max_json_bytes: int) -> tuple[str, int, int | None, int]:
    """:func:`~webmcp_bridge.core.limits.slice_utf8` of ``text`` whose page also fits ``max_json_bytes``
    JSON-escaped, so :func:`fit_payload` never cuts a page. Returns ``(page, start, next_offset, total_bytes)``;
    ValueError for a negative offset."""
    limit = max(1, max_bytes)
    while True:
        page, start, nxt, total = slice_utf8(text, offset, limit)
        size = json_bytes(page)
        if size <= max_json_bytes or limit <= 1:
            return page, start, nxt, total
        limit = max(1, min(limit - 1, int(limit * max_json_bytes / size) - 8))
