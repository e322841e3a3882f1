"""Pure semantics over raw cells (:mod:`webmcp_bridge.core.raw`): source hashes, cell snapshots, output descriptors,
markdown export, as JSON-ready dicts."""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Iterable
from typing import Any

from webmcp_bridge.core.bounds import json_bytes, json_page
from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.core.limits import (
    IMAGE_MIME_TYPES,
    MIN_SOURCE_PAGE_JSON_BYTES,
    RESULT_HEADROOM,
    Limits,
    preview,
    strip_ansi,
    utf8_len,
)
from webmcp_bridge.core.raw import RawCell, RawItem, RawOutput
from webmcp_bridge.core.uris import cell_uri

HASH_HEX_CHARS = 16

#: an output's preview is taken from the first of these present
PREVIEW_ORDER = ("text/plain", "text/markdown", "text/latex", "application/json", "text/html", "image/svg+xml")
TEXT_IMAGE_TYPES = ("image/svg+xml",)  #: image types whose data is text (markup), returned and paged as text


def preview_item(output: RawOutput) -> RawItem | None:
    """The representation an output's text preview is taken from: the first text one in :data:`PREVIEW_ORDER`, else
    any text one, else None."""
    text_items = {item.mime: item for item in output.items if not item.binary}
    return next((text_items[m] for m in PREVIEW_ORDER if m in text_items), next(iter(text_items.values()), None))


def default_mime(output: RawOutput) -> str:
    """The representation ``jupyter_get_output`` returns when none is asked for: a raster image (a figure's
    text/plain is only "<Figure size ...>"), an SVG's markup, the first text one in :data:`PREVIEW_ORDER`, any text
    one, any one; "" for none."""
    mimes = [item.mime for item in output.items]
    text = [item.mime for item in output.items if not item.binary]
    pictures = [m for m in mimes if m in IMAGE_MIME_TYPES] + [m for m in mimes if m in TEXT_IMAGE_TYPES]
    return next(iter(pictures + [m for m in PREVIEW_ORDER if m in text] + text + mimes), "")


#: an output's ``mimeType``: the first of these present, else its first other type (a widget's, a plot library's),
#: text/plain only when it is the only one (it is the fallback beside a figure or a table)
RICHEST_ORDER = (*IMAGE_MIME_TYPES, *TEXT_IMAGE_TYPES, "text/html", "text/markdown", "text/latex", "application/json")


def richest_mime(mimes: list[str]) -> str:
    """The richest of an output's MIME types (:data:`RICHEST_ORDER`; "" for none)."""
    richest = next((m for m in (*RICHEST_ORDER, *mimes) if m in mimes and m != "text/plain"), None)
    return richest or ("text/plain" if "text/plain" in mimes else "")


def renders_as_picture(mimes: list[str]) -> bool:
    """True when an output is best read as a picture of what the page renders (``jupyter_get_output``'s default):
    it has no image and one of its types is one only a renderer of the page draws (Plotly's JSON, Bokeh's, a
    widget's, a site's), none an agent reads (HTML, Markdown, LaTeX, JSON, plain text)."""
    if any(m in IMAGE_MIME_TYPES or m in TEXT_IMAGE_TYPES for m in mimes):
        return False
    return any(m not in RICHEST_ORDER and m != "text/plain" for m in mimes)


def source_hash(source: str) -> str:
    """The ``sourceHash`` of a cell (sent back as ``expectedSourceHash``): 16 hex digits of SHA-256 of the UTF-8."""
    return hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()[:HASH_HEX_CHARS]


IMAGE_SIGNATURES = {
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/gif": (b"GIF87a", b"GIF89a"),
    "image/webp": (b"RIFF",),
}


def is_valid_image(mime: str, data: str) -> bool:
    """True when ``data`` is strict base64 of bytes that start with ``mime``'s file signature (notebooks are
    untrusted: an ``image/png`` entry may hold a script tag, never returned as an image)."""
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return False
    if mime == "image/webp" and raw[8:12] != b"WEBP":
        return False
    return bool(raw) and raw.startswith(IMAGE_SIGNATURES.get(mime, (b"",)))


def describe_output(index: int, output: RawOutput, limits: Limits, cell_uri: str | None = None) -> dict[str, Any]:
    """An output listed, not inlined: ``{index, uri?, outputType, mimeType, mimeTypes?, bytes, preview?,
    previewTruncated?, name?, ename?, evalue?}``, each optional key only where it says something.

    ``uri`` (given the cell's URI) addresses the output (the product contract: every descriptor carries it);
    ``mimeTypes`` is left out when text/plain is the only one; ``bytes`` sums the representations (text in UTF-8,
    images decoded); ``preview`` is ANSI-stripped and cut to ``limits.preview_bytes``; an error has ``ename`` and
    ``evalue`` instead; ``name`` is a stream's name other than stdout.
    """
    mimes = [item.mime for item in output.items]
    described: dict[str, Any] = {"index": index}
    if cell_uri is not None:
        described["uri"] = f"{cell_uri}/outputs/{index}"
    described.update(outputType=output.output_type, mimeType=richest_mime(mimes))
    if mimes != ["text/plain"]:
        described["mimeTypes"] = mimes
    described["bytes"] = sum(item.bytes for item in output.items)
    if output.ename is not None:
        described["ename"] = preview(output.ename, limits.preview_bytes)
        described["evalue"] = preview(output.evalue or "", limits.preview_bytes)
    else:
        if (chosen := preview_item(output)) is not None:
            described["preview"] = preview(chosen.head, limits.preview_bytes)
            head = utf8_len(strip_ansi(chosen.head))  # the host read at most the head asked for
            if head > limits.preview_bytes or chosen.bytes > head:
                described["previewTruncated"] = True
    if output.name and output.name != "stdout":
        described["name"] = output.name
    return described


def source_page_json_bytes(limits: Limits) -> int:
    """The most JSON-text bytes one page of a source takes in a result: half the cap after :data:`RESULT_HEADROOM`."""
    return max(MIN_SOURCE_PAGE_JSON_BYTES, (limits.result_bytes - RESULT_HEADROOM) // 2)


def source_is_paged(source: str, limits: Limits) -> bool:
    """True when a read pages ``source`` (over ``source_read_bytes``, or :func:`source_page_json_bytes` as JSON)."""
    if utf8_len(source) > limits.source_read_bytes:
        return True
    return len(source) * 6 + 2 > source_page_json_bytes(limits) and json_bytes(source) > source_page_json_bytes(limits)


def cell_snapshot(
    cell: RawCell,
    limits: Limits,
    *,
    include_source: bool = True,
    include_outputs: bool = False,
    source_offset: int = 0,
    path: str | None = None,
) -> dict[str, Any]:
    """A cell as tools return it: ``{id, index, type, sourceHash, source?, executionCount?, outputCount?, outputs?,
    outputsOmitted?}``, each key only where it applies (given ``path``, each listed output carries its ``uri``).

    A paged source (:func:`source_is_paged`) is bytes ``[sourceOffset, nextSourceOffset)`` of it (never splitting a
    character; ``nextSourceOffset`` null on the last page), with ``sourceTruncated`` and ``sourceBytes``; any other
    source is whole, whatever ``source_offset`` (a source that shrank between two page reads is not cut into a
    tail). The hash is of the full source. Outputs are counted (``outputCount``) unless
    ``include_outputs`` describes the first ``limits.outputs_per_cell`` of them.
    """
    snap: dict[str, Any] = {
        "id": cell.id,
        "index": cell.index,
        "type": cell.cell_type,
        "sourceHash": source_hash(cell.source),
    }
    if include_source:
        if not source_is_paged(cell.source, limits):
            snap["source"] = cell.source
        else:
            page, start, nxt, total = json_page(
                cell.source, source_offset, limits.source_read_bytes, source_page_json_bytes(limits)
            )
            snap.update(source=page, sourceTruncated=True, sourceBytes=total, sourceOffset=start, nextSourceOffset=nxt)
    if cell.cell_type == "code":
        snap["executionCount"] = cell.execution_count
        if include_outputs:
            shown = cell.outputs[: limits.outputs_per_cell]
            if shown:
                uri = None if path is None else cell_uri(path, cell.id)
                snap["outputs"] = [describe_output(i, o, limits, uri) for i, o in enumerate(shown)]
            if cell.output_count > len(shown):
                snap["outputsOmitted"] = cell.output_count - len(shown)
        elif cell.output_count:
            snap["outputCount"] = cell.output_count
    return snap


def stale_cell_error(cell: RawCell, expected: str, limits: Limits) -> ToolError:
    """STALE_CELL for a stale ``expectedSourceHash``, with the current hash and a bounded preview of the source."""
    return ToolError(
        ErrorCode.STALE_CELL,
        "The cell changed since you read it (the person's edit wins). Read it again and retry with the new sourceHash.",
        cellId=cell.id,
        expectedSourceHash=expected,
        currentSourceHash=source_hash(cell.source),
        currentSourcePreview=preview(cell.source, limits.error_preview_bytes),
    )


def check_hash(cell: RawCell, expected: str | None, limits: Limits) -> None:
    """Raise STALE_CELL unless ``expected`` is None or equals the cell's current hash."""
    if expected is not None and expected != source_hash(cell.source):
        raise stale_cell_error(cell, expected, limits)


def check_as_shown(cells: Iterable[RawCell], shown: dict[str, str], limits: Limits) -> None:
    """After an Accept: raise STALE_CELL for the first of ``cells`` whose source is no longer ``shown[cell.id]``."""
    for cell in cells:
        if cell.source != shown[cell.id]:
            raise stale_cell_error(cell, source_hash(shown[cell.id]), limits)


_BACKTICK_RUNS = re.compile("`+")


def _fence(text: str) -> str:
    """A backtick fence longer than any run of backticks inside ``text`` (CommonMark rule)."""
    longest = max(map(len, _BACKTICK_RUNS.findall(text)), default=0) if "`" in text else 0
    return "`" * max(3, longest + 1)


def _block(text: str, info: str = "") -> str:
    fence = _fence(text)
    body = text if text.endswith("\n") or not text else text + "\n"
    return f"{fence}{info}\n{body}{fence}"


def export_markdown(cells: Iterable[RawCell], *, language: str, include_outputs: bool) -> str:
    """The notebook as Markdown: markdown cells verbatim, code cells fenced with ``language``, raw cells as ``raw``;
    with ``include_outputs``, each output's text head in a ``text`` fence, an image as a one-line note."""
    parts: list[str] = []
    for cell in cells:
        if cell.cell_type == "markdown":
            parts.append(cell.source)
        else:
            parts.append(_block(cell.source, "raw" if cell.cell_type == "raw" else language))
            if include_outputs:
                parts += [_output_markdown(output) for output in cell.outputs]
    return "\n\n".join(parts) + "\n"


def _output_markdown(output: RawOutput) -> str:
    text_items = {item.mime: item for item in output.items if not item.binary}
    chosen = next((text_items[m] for m in PREVIEW_ORDER if m in text_items), None)
    notes = [
        f"[{item.mime} output, {item.bytes} bytes]"
        for item in output.items
        if item.mime in IMAGE_MIME_TYPES or item.mime in TEXT_IMAGE_TYPES
    ]
    if chosen is None:
        return "\n".join(notes) if notes else f"[{output.output_type} output]"
    text = chosen.head
    if utf8_len(text) < chosen.bytes:
        text += f"\n[… output cut: {chosen.bytes} bytes in all]"
    return "\n".join([_block(text, "text"), *notes])
