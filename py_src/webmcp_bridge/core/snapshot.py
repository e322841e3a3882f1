"""Pure semantics over raw cells: source hashes, cell snapshots, output descriptors, markdown export.

No I/O and no browser imports: everything here takes the plain values of :mod:`webmcp_bridge.core.raw` and
returns JSON-ready dicts, so it runs the same under CPython tests and in the page.
"""

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
from webmcp_bridge.core.raw import RawCell, RawOutput
from webmcp_bridge.core.uris import cell_uri

HASH_HEX_CHARS = 16

# When an output has several representations, the preview is taken from the first of these present.
PREVIEW_ORDER = ("text/plain", "text/markdown", "text/latex", "application/json", "text/html", "image/svg+xml")
#: image types whose data is text (markup), returned and paged as text
TEXT_IMAGE_TYPES = ("image/svg+xml",)


def default_mime(output: RawOutput) -> str:
    """The representation ``jupyter_get_output`` returns when none is asked for: the richest one an agent can use.
    A raster image first (a figure's text/plain is only "<Figure size 640x480 with 1 Axes>"), then an SVG's markup
    (its text/plain is only "<IPython.core.display.SVG object>"), then the first text one in :data:`PREVIEW_ORDER`,
    then any text one; "" for an output with no representation."""
    mimes = [item.mime for item in output.items]
    text = [item.mime for item in output.items if not item.binary]
    for chosen in (
        [m for m in mimes if m in IMAGE_MIME_TYPES],
        [m for m in mimes if m in TEXT_IMAGE_TYPES],
        [m for m in PREVIEW_ORDER if m in text],
        text,
        mimes,
    ):
        if chosen:
            return chosen[0]
    return ""


# An output's ``mimeType`` (its richest representation): the first of these present, else the first other type
# in the output's own order (a vendor type: a widget, a plot library's JSON), and text/plain only when it is the
# only one (it is the fallback beside a figure or a table, never the point of the output).
RICHEST_ORDER = (
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
    "image/svg+xml",
    "text/html",
    "text/markdown",
    "text/latex",
    "application/json",
)


def richest_mime(mimes: list[str]) -> str:
    """The richest of an output's MIME types (:data:`RICHEST_ORDER`; "" for an output with none)."""
    for mime in RICHEST_ORDER:
        if mime in mimes:
            return mime
    others = [m for m in mimes if m != "text/plain"]
    return others[0] if others else ("text/plain" if "text/plain" in mimes else "")


def renders_as_picture(mimes: list[str]) -> bool:
    """True when an output with these MIME types is best read as a picture of what the page renders: it has no image
    (a figure's PNG, an SVG: read as they are) and one of its types is none of the ones an agent reads (HTML,
    Markdown, LaTeX, JSON, plain text) but one a renderer of the page draws: a plot library's (Plotly's JSON, Bokeh's
    bokehjs_exec beside its HTML stub and script), a widget's, any renderer a site adds. ``jupyter_get_output`` then
    returns the rendered output as an image by default; an HTML output (a table, an HTML chart) is rendered on
    request."""
    if any(m in IMAGE_MIME_TYPES or m in TEXT_IMAGE_TYPES for m in mimes):
        return False
    return any(m not in RICHEST_ORDER and m != "text/plain" for m in mimes)


def source_hash(source: str) -> str:
    """The ``sourceHash`` of a cell: the first 16 hex digits of SHA-256 over the UTF-8 source.

    Stable across sessions and hosts; what an agent sends back as ``expectedSourceHash``.
    """
    return hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()[:HASH_HEX_CHARS]


IMAGE_SIGNATURES = {
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/gif": (b"GIF87a", b"GIF89a"),
    "image/webp": (b"RIFF",),
}


def is_valid_image(mime: str, data: str) -> bool:
    """True when ``data`` is strict base64 of bytes that start with ``mime``'s file signature.

    Notebooks are untrusted: an ``image/png`` entry may hold text (the corpus has one holding a script tag);
    such data is never returned as an image block.
    """
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return False
    if mime == "image/webp" and raw[8:12] != b"WEBP":
        return False
    return bool(raw) and raw.startswith(IMAGE_SIGNATURES.get(mime, (b"",)))


def describe_output(index: int, output: RawOutput, limits: Limits, cell_uri: str | None = None) -> dict[str, Any]:
    """An output **listed**, not inlined: ``{index, uri?, outputType, mimeType, mimeTypes?, bytes, preview?,
    previewTruncated?, name?, ename?, evalue?}``, each optional key only where it says something.

    ``uri`` (given the cell's ``notebook://…/cells/{cellId}``, :mod:`webmcp_bridge.core.uris`) addresses the output
    for ``jupyter_get_output`` and as an MCP resource (the product contract: every output descriptor carries it).
    ``mimeType`` is the richest representation (:func:`richest_mime`); ``mimeTypes`` (all of them, in the output's
    order) is left out when text/plain is the only one (always so for a stream and an error).
    ``bytes`` is the sum over representations (text in UTF-8 bytes, images decoded). ``preview`` comes from the first
    text representation in :data:`PREVIEW_ORDER` (or any text one), ANSI-stripped and cut to ``limits.preview_bytes``
    (``previewTruncated: true`` when that text is longer: read the rest with ``jupyter_get_output``); images have
    none, and neither has an error, whose ``ename``/``evalue`` (bounded) say what its traceback's last line says.
    ``name`` is a stream's name when it is not stdout.
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
        text_items = {item.mime: item for item in output.items if not item.binary}
        chosen = next((text_items[m] for m in PREVIEW_ORDER if m in text_items), None)
        if chosen is None and text_items:
            chosen = next(iter(text_items.values()))
        if chosen is not None:
            described["preview"] = preview(chosen.head, limits.preview_bytes)
            head = utf8_len(strip_ansi(chosen.head))  # the host read at most the head asked for
            if head > limits.preview_bytes or chosen.bytes > head:
                described["previewTruncated"] = True
    if output.name and output.name != "stdout":
        described["name"] = output.name
    return described


def source_page_json_bytes(limits: Limits) -> int:
    """The most JSON-text bytes one page of a source takes in a result: half of what the result cap leaves
    after :data:`RESULT_HEADROOM`, so the cell's other fields (its outputs listed) fit beside it."""
    return max(MIN_SOURCE_PAGE_JSON_BYTES, (limits.result_bytes - RESULT_HEADROOM) // 2)


def source_is_paged(source: str, limits: Limits) -> bool:
    """True when a read cannot return ``source`` whole (over ``limits.source_read_bytes`` UTF-8 bytes, or over
    :func:`source_page_json_bytes` once JSON-escaped): it is read in pages, and a whole-source write needs
    every page read first (:mod:`webmcp_bridge.core.source_reads`)."""
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
    """A cell as tools return it: ``{id, index, type, sourceHash, source?, executionCount?, outputCount?, outputs?}``,
    each key only where it applies and says something (its address is the notebook's ``uri`` plus ``/cells/{id}``,
    given once per result; given the notebook's ``path``, each listed output carries its own ``uri``).

    A source that is not returned whole (:func:`source_is_paged`, or ``source_offset`` > 0) is returned one
    page at a time: ``source`` is bytes ``[sourceOffset, nextSourceOffset)`` of it (UTF-8, never splitting a
    character; ``nextSourceOffset`` null on the last page), flagged ``sourceTruncated`` with the full
    ``sourceBytes``. The hash is always of the full source. A code cell has ``executionCount`` (null: never run);
    its outputs are counted in ``outputCount`` when they are not listed (absent: none), and with ``include_outputs``
    the first ``limits.outputs_per_cell`` are described (:func:`describe_output`; ``outputsOmitted`` counts the rest;
    no ``outputs`` key: none).
    """
    snap: dict[str, Any] = {
        "id": cell.id,
        "index": cell.index,
        "type": cell.cell_type,
        "sourceHash": source_hash(cell.source),
    }
    if include_source:
        if source_offset == 0 and not source_is_paged(cell.source, limits):
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
    """STALE_CELL for a write whose ``expectedSourceHash`` no longer matches the live cell.

    Carries the current hash and a bounded preview of the current source, so the agent can reread and
    retry without losing the person's edit.
    """
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
    """After the person accepted a proposal: raise STALE_CELL (expected hash = the hash of what was shown) for the
    first of ``cells`` (re-read now) whose source is no longer ``shown[cell.id]``, the source the person saw."""
    for cell in cells:
        if cell.source != shown[cell.id]:
            raise stale_cell_error(cell, source_hash(shown[cell.id]), limits)


_BACKTICK_RUNS = re.compile("`+")


def _fence(text: str) -> str:
    """A backtick fence longer than any run of backticks inside ``text`` (CommonMark rule). The runs are found by
    the regex engine, not a Python loop over every character (most of an export's time before)."""
    longest = max(map(len, _BACKTICK_RUNS.findall(text)), default=0) if "`" in text else 0
    return "`" * max(3, longest + 1)


def _block(text: str, info: str = "") -> str:
    fence = _fence(text)
    body = text if text.endswith("\n") or not text else text + "\n"
    return f"{fence}{info}\n{body}{fence}"


def export_markdown(cells: Iterable[RawCell], *, language: str, include_outputs: bool) -> str:
    """The notebook as Markdown: markdown cells verbatim, code cells fenced with ``language``, raw
    cells fenced as ``raw``. With ``include_outputs``, each output's text head follows its cell in a
    ``text`` fence (as much of it as the host read), and images become a one-line note. Nothing is
    rendered; content is untrusted text."""
    parts: list[str] = []
    for cell in cells:
        if cell.cell_type == "markdown":
            parts.append(cell.source)
        elif cell.cell_type == "raw":
            parts.append(_block(cell.source, "raw"))
        else:
            parts.append(_block(cell.source, language))
            if include_outputs:
                for output in cell.outputs:
                    parts.append(_output_markdown(output))
    return "\n\n".join(p for p in parts if p is not None) + "\n"


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
    block = _block(text, "text")
    return "\n".join([block, *notes])
