"""Reading nbformat 4 output dicts into the raw values of :mod:`webmcp_bridge.core.raw` (the in-memory host; the
page's ``reader.js`` applies the same rules): a stream is one ``text/plain`` item, an error one of its traceback
(else ``ename: evalue``), a result one item per MIME type; text is ANSI-stripped before it is measured.
"""

from __future__ import annotations

import json
from typing import Any

from webmcp_bridge.core.limits import BINARY_MIME_TYPES, base64_decoded_len, strip_ansi, truncate_utf8, utf8_len
from webmcp_bridge.core.raw import RawItem, RawOutput


def text_of(value: Any) -> str:
    """An nbformat multiline string (str or list of str) or a JSON value (compact JSON), as one string."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "".join(value)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def output_texts(output: dict[str, Any]) -> dict[str, str]:
    """Each representation of ``output`` as text (base64 for binary MIME types), in nbformat order."""
    kind = output.get("output_type")
    if kind == "stream":
        return {"text/plain": strip_ansi(text_of(output.get("text", "")))}
    if kind == "error":
        trace = output.get("traceback") or []
        text = "\n".join(map(str, trace)) if trace else f"{output.get('ename', '')}: {output.get('evalue', '')}"
        return {"text/plain": strip_ansi(text)}
    data = output.get("data") or {}
    if not isinstance(data, dict):
        return {}
    return {
        str(mime): (text_of(v) if mime in BINARY_MIME_TYPES else strip_ansi(text_of(v))) for mime, v in data.items()
    }


def raw_output(output: dict[str, Any], head_bytes: int) -> RawOutput:
    """``output`` (an nbformat output dict) as a :class:`RawOutput` with text heads of ``head_bytes``."""
    items = []
    for mime, text in output_texts(output).items():
        if mime in BINARY_MIME_TYPES:
            items.append(RawItem(mime, base64_decoded_len(text), "", True))
        else:
            items.append(RawItem(mime, utf8_len(text), truncate_utf8(text, head_bytes), False))
    kind = str(output.get("output_type", "unknown"))
    return RawOutput(
        kind,
        tuple(items),
        name=output.get("name") if kind == "stream" else None,
        ename=str(output.get("ename", "")) if kind == "error" else None,
        evalue=str(output.get("evalue", "")) if kind == "error" else None,
    )
