"""Reading tools: jupyter_get_cells, jupyter_get_output (with pictures of rendered outputs: a chart only a renderer
draws, or any output on request, as an MCP image of what the person sees), jupyter_export_notebook."""

from __future__ import annotations

from functools import partial
from typing import Any, Literal

from pydantic import Field

from webmcp_bridge.calls.payloads import Payload, Wire, sometimes
from webmcp_bridge.calls.registry import Annotations, ToolResult
from webmcp_bridge.core.bounds import dumps, json_bytes, json_page
from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.core.images import (
    HEADER_BYTES,
    EncodedImage,
    ImageInfo,
    ImageRequest,
    OutputCapture,
    capture_request,
    first_request,
    image_size,
    next_request,
)
from webmcp_bridge.core.limits import (
    BINARY_MIME_TYPES,
    CAPTURE_CHARS,
    CAPTURE_NODES,
    CAPTURE_SIDE,
    DEFAULT_LIMITS,
    EXPORT_CHUNK,
    IDS_LISTED,
    IMAGE_MIME_TYPES,
    KIB,
    MIN_FILE_PAGE_BYTES,
    RESULT_HEADROOM,
    STALE_IDS_SHOWN,
    utf8_len,
)
from webmcp_bridge.core.snapshot import cell_snapshot, default_mime, export_markdown, is_valid_image, renders_as_picture
from webmcp_bridge.core.staleness import names_matter, stale_outputs
from webmcp_bridge.core.uris import MAX_URI_CHARS, notebook_uri, parse_uri
from webmcp_bridge.tools.common import (
    MAX_INT,
    CallContext,
    CellSelection,
    Id,
    Index,
    NotebookInput,
    summary,
    tool,
    unique,
)
from webmcp_bridge.tools.payloads import ImageFacts, NotebookSummary, OutputAddress, OutputListing, model
from webmcp_bridge.tools.rerun import code_sources, names_of


class OutputsStale(Wire):
    """Why a code cell's outputs may no longer match the notebook
    (:func:`webmcp_bridge.core.staleness.stale_outputs`)."""

    sourceEdited: bool = Field(description="The cell's source changed since the run that made its outputs.")
    earlierRanSince: int = Field(
        description="Earlier code cells that ran after this one (out of order, or re-run since)."
    )
    earlierEdited: int = Field(description="Earlier code cells whose source changed since their own last run.")
    earlierRanSinceIds: list[str] = sometimes(
        f"The most recently run of them, newest first (at most {STALE_IDS_SHOWN})."
    )
    earlierEditedIds: list[str] = sometimes(f"The nearest of them above first (at most {STALE_IDS_SHOWN}).")
    readsChanged: dict[str, str] = sometimes(
        "Names its outputs read that changed since, each with the cell that changed it (edited, never ran, ran "
        f"since, stale itself, or rebound the name in between), in name order (at most {STALE_IDS_SHOWN}). Absent "
        "(and no unreadableIds): no name it reads changed, as the sources show."
    )
    readsChangedMore: int = sometimes("How many more names changed.")
    unreadableIds: list[str] = sometimes(
        "Cells whose names cannot be read (a cell magic, a syntax error, another language) that may have changed "
        f"what it read; its own id when it is one (at most {STALE_IDS_SHOWN}, the nearest first)."
    )


class CellSnapshot(Wire):
    """A cell as read (:func:`webmcp_bridge.core.snapshot.cell_snapshot`): each key only where it applies."""

    id: str
    index: int
    type: Literal["code", "markdown", "raw"]
    sourceHash: str
    source: str = sometimes()
    sourceTruncated: bool = sometimes()
    sourceBytes: int = sometimes()
    sourceOffset: int = sometimes()
    nextSourceOffset: int | None = sometimes()
    executionCount: int | None = sometimes("A code cell's (null: never run).")
    outputCount: int = sometimes("A code cell's outputs when they are not listed (no key: none).")
    outputs: list[OutputListing] = sometimes("With includeOutputs, a code cell's outputs (no key: none).")
    outputsOmitted: int = sometimes()
    outputsStale: OutputsStale = sometimes("Only on a code cell with an execution count whose outputs may be stale.")


class GetCellsOutput(Payload):
    path: str
    uri: str = Field(
        description="The notebook's address: a cell's is {uri}/cells/{id}, an output's "
        "{uri}/cells/{id}/outputs/{index}."
    )
    cellCount: int
    cells: list[CellSnapshot]
    truncated: bool
    omittedCount: int
    hiddenCellCount: int
    nextStartIndex: int = sometimes()
    omittedCellIds: list[str] = sometimes()


#: A page of an output's text (``nextOffset`` null: the last page).
OutputText = model(
    "OutputText",
    OutputAddress,
    text=str,
    offset=int,
    nextOffset=int | None,
    totalBytes=int,
    note=(str, sometimes("Why the output's text came back rather than a picture of it (render left to its default).")),
)


class OutputImage(OutputAddress):
    """An image output: the image itself follows as MCP image content (:func:`_image`)."""

    bytes: int = Field(description="The stored image's decoded size.")
    original: ImageFacts
    image: ImageFacts = Field(description="What the image block holds.")
    note: str = sometimes()


ExportOutput = model(
    "ExportOutput",
    path=str,
    format=Literal["markdown"],
    document=str,
    offset=int,
    nextOffset=int | None,
    truncated=bool,
    exportedCellCount=int,
    notebook=NotebookSummary,
)


class GetCellsInput(CellSelection):
    include_source: bool = Field(True, description="Include each cell's source text.")
    include_outputs: bool = Field(
        False, description="List each code cell's outputs (type, MIME types, size, short preview)."
    )
    source_offset: Index = Field(
        0,
        description="UTF-8 byte offset into each cell's source, to read a long source page by page: "
        "pass the nextSourceOffset of the previous page (use with cellIds of one cell).",
    )


def _fit_outputs(snap: dict[str, Any], budget: int) -> None:
    """Drop trailing outputs of a cell listed alone until it fits ``budget`` (so its source page is never cut)."""
    outputs = snap.get("outputs")
    while outputs and json_bytes(snap) > budget:
        outputs.pop()
        snap["outputsOmitted"] = snap.get("outputsOmitted", 0) + 1


async def get_cells(ctx: CallContext, args: GetCellsInput) -> dict[str, Any] | ToolResult:
    args.check_one_way()
    nb = await ctx.notebook(args.notebook_path)
    limits = ctx.limits
    count = nb.cell_count()
    head = limits.preview_bytes if args.include_outputs else 0
    max_outputs = limits.outputs_per_cell if args.include_outputs else 0
    if args.cell_ids is not None:
        ids = unique(args.cell_ids)
        cells = nb.find_cells(ids[: limits.cells_per_read], head_bytes=head, max_outputs=max_outputs)
        indices = [c.index for c in cells] + [-1] * (len(ids) - len(cells))
    else:
        indices = list(args.index_range(count))
        cells = nb.read_cells(indices[: limits.cells_per_read], head_bytes=head, max_outputs=max_outputs)
    # Keep whole cells while they fit the result cap, so paging by nextStartIndex never skips a cell. The list is
    # measured whole first (one serialization: the usual case, it fits), cell by cell only when it does not.
    budget = limits.result_bytes - RESULT_HEADROOM
    snapshots = [
        cell_snapshot(
            cell,
            limits,
            include_source=args.include_source,
            include_outputs=args.include_outputs,
            source_offset=args.source_offset,
            path=nb.path,
        )
        for cell in cells
    ]
    # outputsStale (core.staleness): the run states when a cell read has run, the sources when names may matter
    run = any(cell.cell_type == "code" and cell.execution_count is not None for cell in cells)
    states = nb.run_states(count - 1) if run else []
    follow = bool(states) and names_matter(states)
    sources = code_sources(nb, states) if follow else None
    hidden = nb.hidden_cell_count()  # the page's last read: the names are parsed after an await
    if states:
        names = await names_of(states, sources) if follow else None
        stale = stale_outputs(states, [cell.id for cell in cells], names)
        for snap in snapshots:
            if snap["id"] in stale:
                snap["outputsStale"] = stale[snap["id"]]
    if snapshots:
        _fit_outputs(snapshots[0], budget)
    payload = _payload(nb.path, hidden, count, snapshots, indices, args)
    # the payload's JSON holds the list's, which is Σ(cell + 1 comma) + 1 bytes: when the payload's is within
    # budget + 1 every cell fits, and its text is the result's (the registry does not serialize it again)
    text = dumps(payload)
    if len(snapshots) > 1 and utf8_len(text) - 1 > budget:
        # too long: serialize each cell once, keep the leading ones that fit, and splice their texts into the
        # payload's (the registry then checks that text and serializes nothing again)
        pieces: list[str] = []
        for snap in snapshots:
            piece = dumps(snap)
            budget -= utf8_len(piece) + 1
            if budget < 0 and pieces:
                break
            pieces.append(piece)
        payload = _payload(nb.path, hidden, count, snapshots[: len(pieces)], indices, args)
        text = _with_cells_text(payload, pieces)
    for snap in payload["cells"]:  # what reached the agent of each source read in pages (core.source_reads)
        if snap.get("sourceTruncated"):
            end = snap["nextSourceOffset"] if snap["nextSourceOffset"] is not None else snap["sourceBytes"]
            ctx.reads.record(nb.path, snap["id"], snap["sourceHash"], snap["sourceOffset"], end)
        elif "source" in snap and ctx.reads.in_pages(nb.path, snap["id"], snap["sourceHash"]):
            ctx.reads.record(nb.path, snap["id"], snap["sourceHash"], 0, utf8_len(snap["source"]))  # whole now
    return ToolResult(payload, text=text)


def _with_cells_text(payload: dict[str, Any], pieces: list[str]) -> str:
    """:func:`dumps` of ``payload`` given its cells' texts (``"cells":[]`` comes first in the rest: before it are
    ``cellCount`` and two strings whose quotes are escaped)."""
    rest = dumps({**payload, "cells": []})
    return rest.replace('"cells":[]', '"cells":[' + ",".join(pieces) + "]", 1)


def _payload(
    path: str, hidden: int, count: int, snapshots: list[dict[str, Any]], indices: list[int], args: GetCellsInput
) -> dict[str, Any]:
    """get_cells' payload for the cells kept (``snapshots``) of those asked for (``indices``, -1 for unknown ids)."""
    omitted = indices[len(snapshots) :]
    payload: dict[str, Any] = {
        "path": path,
        "uri": notebook_uri(path),
        "cellCount": count,
        "cells": snapshots,
        "truncated": bool(omitted),
        "omittedCount": len(omitted),
        "hiddenCellCount": hidden,
    }
    if omitted and args.cell_ids is None:
        payload["nextStartIndex"] = omitted[0]
    elif omitted:
        payload["omittedCellIds"] = unique(args.cell_ids or [])[len(snapshots) :][:IDS_LISTED]
    return payload


class GetOutputInput(NotebookInput):
    cell_id: Id | None = Field(
        None, description="The cell's nbformat id, as returned by jupyter_get_cells (with outputIndex; or give uri)."
    )
    output_index: Index | None = Field(
        None, description="Index of the output within the cell, from jupyter_get_cells (with cellId; or give uri)."
    )
    uri: str | None = Field(
        None,
        description="The output's uri, as listed by jupyter_get_cells or jupyter_run_cells "
        "(notebook://{path}/cells/{cellId}/outputs/{index}); instead of notebookPath, cellId and outputIndex.",
        min_length=1,
        max_length=MAX_URI_CHARS,
    )
    mime_type: str | None = Field(
        None,
        description="Which representation (default: the image if there is one, else an SVG's markup, "
        "else the first text one).",
        max_length=128,
    )
    offset: Index = Field(
        0, description="Byte offset into the text (UTF-8) for paging; use nextOffset from the previous page."
    )
    max_bytes: int | None = Field(
        None, description="Most bytes of text to return (default and maximum: the output page limit).", ge=1, le=MAX_INT
    )
    max_side: int | None = Field(
        None,
        description="Images: the longest side, in pixels, of the image returned (default "
        f"{DEFAULT_LIMITS.image_side}); a larger image is returned as a downscaled copy (aspect kept).",
        ge=16,
        le=MAX_INT,
    )
    max_image_bytes: int | None = Field(
        None,
        description="Images: the most bytes of the image returned (default "
        f"{DEFAULT_LIMITS.image_copy_bytes // KIB} KiB, at most the image cap, {DEFAULT_LIMITS.image_bytes // KIB} "
        "KiB); a larger copy is made smaller until it fits.",
        ge=1024,
        le=MAX_INT,
    )
    original: bool = Field(
        False,
        description="Images: return the image exactly as stored (up to the image cap, else TOO_LARGE) "
        "instead of a copy bounded by maxSide and maxImageBytes.",
    )
    render: bool | None = Field(
        None,
        description="Return a picture of the output as the page renders it for the person (an image bounded by "
        "maxSide and maxImageBytes): true for any output (an HTML table or chart), false never. Default: when "
        "its richest type is one only a renderer draws (Plotly, Bokeh, a widget), else its stored data.",
    )


def output_address(args: GetOutputInput) -> tuple[str | None, str, int]:
    """``(notebookPath, cellId, outputIndex)`` from ``uri`` or the three arguments (else INVALID_ARGUMENT)."""
    if args.uri is not None:
        if args.notebook_path is not None or args.cell_id is not None or args.output_index is not None:
            raise ToolError(
                ErrorCode.INVALID_ARGUMENT, "Give uri alone, or cellId and outputIndex (with notebookPath), not both."
            )
        address = parse_uri(args.uri)
        if address.cell_id is None or address.output_index is None:
            raise ToolError(
                ErrorCode.INVALID_ARGUMENT,
                "That uri names a notebook or a cell, not an output "
                "(notebook://{path}/cells/{cellId}/outputs/{index}).",
            )
        return address.path, address.cell_id, address.output_index
    if args.cell_id is None or args.output_index is None:
        raise ToolError(ErrorCode.INVALID_ARGUMENT, "Give cellId and outputIndex, or uri.")
    return args.notebook_path, args.cell_id, args.output_index


async def get_output(ctx: CallContext, args: GetOutputInput) -> dict[str, Any] | ToolResult:
    path, cell_id, index = output_address(args)
    nb = await ctx.notebook(path)
    cell = described = nb.find_cells([cell_id], max_outputs=index + 1)[0]
    if index >= described.output_count:
        raise ToolError(
            ErrorCode.OUTPUT_NOT_FOUND,
            f"Cell {cell.id!r} has {described.output_count} output(s); there is no index {index}.",
            cellId=cell.id,
            outputIndex=index,
            outputCount=described.output_count,
        )
    output = described.outputs[index]
    mimes = [item.mime for item in output.items]
    if args.render and (args.mime_type is not None or args.original):
        raise ToolError(
            ErrorCode.INVALID_ARGUMENT,
            "render: true pictures the output as the page shows it; mimeType and original pick stored data.",
        )
    note = None
    if args.render or (
        args.render is None and args.mime_type is None and not args.original and renders_as_picture(mimes)
    ):
        rendered = await rendered_output(ctx, nb, cell.id, index, args)
        if not isinstance(rendered, str):
            return rendered
        note = rendered
    if args.mime_type is not None and args.mime_type not in mimes:
        raise ToolError(
            ErrorCode.OUTPUT_NOT_FOUND,
            f"That output has no {args.mime_type!r} representation.",
            cellId=cell.id,
            outputIndex=index,
            mimeTypes=mimes,
        )
    mime = default_mime(output) if args.mime_type is None else args.mime_type
    # what the agent asked for, and the representation chosen (its type, address and representations are the
    # listing's: not repeated)
    base = {"cellId": cell.id, "outputIndex": index, "mimeType": mime}
    if mime in BINARY_MIME_TYPES:
        if mime not in IMAGE_MIME_TYPES:
            raise ToolError(
                ErrorCode.OUTPUT_NOT_FOUND,
                f"{mime} data cannot be returned; images are returned as {', '.join(IMAGE_MIME_TYPES)}.",
                mimeTypes=mimes,
                **base,
            )
        return await _image(ctx, nb, cell.id, index, args, mime, base)
    page_max = min(args.max_bytes or ctx.limits.output_page_bytes, ctx.limits.output_page_bytes)
    while True:  # JSON escaping (control characters) can make a page's text much longer: keep it whole
        page = nb.read_output_text(cell.id, index, mime, args.offset, page_max)
        if page_max <= MIN_FILE_PAGE_BYTES or json_bytes(page.text) <= ctx.limits.result_bytes - RESULT_HEADROOM:
            break
        page_max //= 2
    result: dict[str, Any] = {
        **base,
        "text": page.text,
        "offset": page.offset,
        "nextOffset": page.next_offset,
        "totalBytes": page.total_bytes,
    }
    return result if note is None else {**result, "note": note}


def _not_an_image(mime: str, base: dict[str, Any]) -> ToolError:
    return ToolError(ErrorCode.OUTPUT_NOT_FOUND, f"The {mime} data of that output is not a valid {mime} image.", **base)


def _bounds(ctx: CallContext, args: GetOutputInput) -> tuple[int, int]:
    """The longest side (pixels) and the most bytes of an image returned: maxSide and maxImageBytes, or the limits."""
    limits = ctx.limits
    return args.max_side or limits.image_side, min(args.max_image_bytes or limits.image_copy_bytes, limits.image_bytes)


async def _fitted(
    encode: Any, info: ImageInfo, request: ImageRequest | None, max_bytes: int
) -> tuple[EncodedImage | None, list[tuple[ImageRequest, int]]]:
    """The first copy ``encode`` makes within ``max_bytes`` (None: none fit, or the host makes none) and the
    ``(request, bytes)`` of those over it."""
    made: list[tuple[ImageRequest, int]] = []
    while request is not None:
        copy: EncodedImage | None = await encode(request)
        if copy is None or copy.bytes <= max_bytes:
            return copy, made
        made.append((request, copy.bytes))
        request = next_request(info, made, max_bytes)
    return None, made


def _too_large(what: str, max_bytes: int, made: list[tuple[ImageRequest, int]], cap: int, **details: Any) -> ToolError:
    """TOO_LARGE: no copy of ``what`` ("copy of this WxH image") fitted ``max_bytes``; the smallest made is named."""
    smallest, size = made[-1]
    return ToolError(
        ErrorCode.TOO_LARGE,
        f"A {what} did not fit {max_bytes} bytes (the smallest made, {smallest.width}x{smallest.height}, was {size} "
        f"bytes); raise maxImageBytes (at most {cap}) or lower maxSide.",
        maxImageBytes=max_bytes,
        **details,
    )


def _with_image(payload: dict[str, Any], image: dict[str, Any], data: str, downscaled: bool) -> ToolResult:
    """``payload`` with ``image`` (its facts) and the image itself as MCP image content."""
    payload["image"] = {**image, "downscaled": downscaled}
    return ToolResult(payload, images=[{"type": "image", "data": data, "mimeType": image["mimeType"]}])


def _copy_facts(copy: EncodedImage) -> dict[str, Any]:
    return {"mimeType": copy.mime, "width": copy.width, "height": copy.height, "bytes": copy.bytes}


async def _image(
    ctx: CallContext, nb: Any, cell_id: str, index: int, args: GetOutputInput, mime: str, base: dict[str, Any]
) -> ToolResult:
    """An image output as MCP image content: a copy within ``maxSide`` and ``maxImageBytes``, else the original
    (when asked, or when it fits both)."""
    limits = ctx.limits
    head, size = nb.read_output_binary_head(cell_id, index, mime, HEADER_BYTES)
    dimensions = image_size(mime, head)
    if dimensions is None:
        raise _not_an_image(mime, base)
    info = ImageInfo(mime, dimensions[0], dimensions[1], size)
    max_side, max_bytes = _bounds(ctx, args)
    request = None if args.original else first_request(info, max_side, max_bytes)
    payload: dict[str, Any] = {**base, "bytes": size, "original": info.to_json()}
    copy, made = await _fitted(partial(nb.encode_output_image, cell_id, index, mime), info, request, max_bytes)
    if copy is not None:
        return _with_image(payload, _copy_facts(copy), copy.data, True)
    if made:  # every copy was over the bound
        image = f"copy of this {info.width}x{info.height} image"
        raise _too_large(image, max_bytes, made, limits.image_bytes, original=info.to_json(), **base)
    if request is not None:  # this host cannot make copies of this format: the original, if it fits
        payload["note"] = (
            f"This page cannot make a smaller copy of a {mime} image; the original is returned when it fits."
        )
    cap = limits.image_bytes if args.original else max_bytes
    data, _ = nb.read_output_binary(cell_id, index, mime, cap)
    if data is None:
        hint = "" if args.original else f" (maxImageBytes, at most {limits.image_bytes}; or original: true)"
        raise ToolError(
            ErrorCode.TOO_LARGE,
            f"The {mime} output is {size} bytes; images up to {cap} bytes are returned{hint}.",
            bytes=size,
            maxBytes=cap,
            original=info.to_json(),
            **base,
        )
    if not is_valid_image(mime, data):
        raise _not_an_image(mime, base)
    return _with_image(payload, info.to_json(), data, False)


#: The output as the person sees it: the MIME type the page rendered it from, its size on screen (CSS pixels).
RenderedFacts = model("RenderedFacts", Wire, mimeType=str, width=int, height=int)
#: A picture of the output as the page renders it (a chart, an HTML table): the image follows as MCP image
#: content, unless the output renders nothing (``empty``).
OutputRendered = model(
    "OutputRendered",
    OutputAddress,
    rendered=(bool, Field(description="Always true: a picture of the rendered output, not a stored representation.")),
    original=RenderedFacts,
    image=(ImageFacts, sometimes("What the image block holds (no key: the output renders nothing).")),
    empty=(bool, sometimes("The output renders nothing (no text, image or drawing): there is no picture.")),
    message=(str, sometimes()),
)


#: the types the page may render an output from that an agent reads as text as well: an output the page shows as one
#: of these is returned as its stored data unless a picture is asked for (render: true)
SHOWN_AS_TEXT = frozenset({"text/plain", "text/markdown", "text/latex", "application/json"})

#: why the page has no picture of an output (:class:`webmcp_bridge.core.images.OutputCapture` ``reason``)
UNRENDERED = {
    "not-shown": "the page does not show it now (its cell is scrolled out of a windowed notebook, its outputs are "
    "collapsed, or the notebook is not on screen)",
    "no-renderer": "the page has no renderer for its types",
    "too-large": f"it has more than {CAPTURE_NODES} elements and texts, or {CAPTURE_CHARS} characters, to copy",
    "failed": "the browser could not draw it",
}


async def rendered_output(ctx: CallContext, nb: Any, cell_id: str, index: int, args: Any) -> ToolResult | str:
    """A picture of the output as the page renders it (``NotebookView.capture_output``), bounded like an image's
    copy; ``empty`` when it renders nothing. No picture: OUTPUT_NOT_FOUND for ``render: true``, else why."""
    max_side, max_bytes = _bounds(ctx, args)
    capture: OutputCapture = await nb.capture_output(cell_id, index, CAPTURE_SIDE)
    if capture.status == "unavailable":
        why = UNRENDERED.get(capture.reason, UNRENDERED["failed"])
        if args.render:
            raise ToolError(
                ErrorCode.OUTPUT_NOT_FOUND,
                f"No picture of that output: {why}. Read its stored data with render: false.",
                cellId=cell_id,
                outputIndex=index,
                reason=capture.reason,
            )
        return f"Its stored data, not a picture: {why}."
    if args.render is None and capture.mime in SHOWN_AS_TEXT:
        # the page shows it as a text the agent reads as well (a widget with no renderer in the page shows its
        # text/plain): that text, not a picture of it
        if capture.key:
            nb.release_capture(capture.key)
        return f"Its stored data, not a picture: the page shows it as its {capture.mime}."
    base = {
        "cellId": cell_id,
        "outputIndex": index,
        "mimeType": capture.mime,
        "rendered": True,
        "original": {"mimeType": capture.mime, "width": capture.width, "height": capture.height},
    }
    if capture.status == "empty":
        return ToolResult(
            {
                **base,
                "empty": True,
                "message": "That output renders nothing in the page (a script output, such as Bokeh's, may draw into "
                "another output of the cell: picture that one with render: true).",
            }
        )
    try:
        info = ImageInfo("image/png", capture.picture_width, capture.picture_height, 0)
        request = capture_request(capture.picture_width, capture.picture_height, max_side)
        copy, made = await _fitted(partial(nb.encode_capture, capture.key), info, request, max_bytes)
    finally:
        nb.release_capture(capture.key)
    if copy is not None:
        downscaled = (copy.width, copy.height) != (capture.width, capture.height)
        return _with_image(base, _copy_facts(copy), copy.data, downscaled)
    picture = f"picture of this {capture.width}x{capture.height} output"
    raise _too_large(picture, max_bytes, made, ctx.limits.image_bytes, cellId=cell_id, outputIndex=index)


class ExportInput(NotebookInput):
    format: Literal["markdown"] = Field("markdown", description="Export format.")
    include_outputs: bool = Field(False, description="Include text outputs (bounded) and a note for each image.")
    offset: Index = Field(
        0,
        description="UTF-8 byte offset into the document, to continue a long export: pass the nextOffset "
        "of the previous part.",
    )


async def export_notebook(ctx: CallContext, args: ExportInput) -> dict[str, Any]:
    """The Markdown document in parts: ``document`` is UTF-8 bytes ``[offset, nextOffset)`` of the whole, sized so
    the result is never cut; ``nextOffset`` null on the last part."""
    nb = await ctx.notebook(args.notebook_path)
    head = ctx.limits.output_page_bytes // 4 if args.include_outputs else 0
    max_outputs = ctx.limits.outputs_per_cell if args.include_outputs else 0
    language, count = nb.language(), nb.cell_count()
    page_json = ctx.limits.result_bytes - RESULT_HEADROOM - 512
    # Render in chunks and stop once the document reaches past this part: the rest is for the next part. Chunks
    # joined by "\n" equal the whole notebook rendered at once.
    cells_read, size, chunks = 0, 0, list[str]()
    for start in range(0, count, EXPORT_CHUNK):
        chunk = nb.read_cells(range(start, min(count, start + EXPORT_CHUNK)), head_bytes=head, max_outputs=max_outputs)
        cells_read += len(chunk)
        chunks.append(export_markdown(chunk, language=language, include_outputs=args.include_outputs))
        size += utf8_len(chunks[-1]) + 1
        if size > args.offset + page_json:
            break
    document = (
        "\n".join(chunks) if chunks else export_markdown([], language=language, include_outputs=args.include_outputs)
    )
    part, at, nxt, _ = json_page(document, args.offset, page_json, page_json)
    if nxt is None and cells_read < count:  # the part ends where the rendered chunks end: more follows
        nxt = at + utf8_len(part)
    return {
        "path": nb.path,
        "format": "markdown",
        "document": part,
        "offset": at,
        "nextOffset": nxt,
        "truncated": nxt is not None,
        "exportedCellCount": cells_read,
        "notebook": summary(nb),
    }


TOOLS = (
    tool(
        "jupyter_get_cells",
        "Read cells of the live notebook (unsaved edits included): id, index, type, sourceHash, source, execution "
        "count, and with includeOutputs each output listed (type, MIME types, bytes, short preview). A long source "
        "comes in pages (sourceTruncated, nextSourceOffset): read the rest with sourceOffset before replacing it. Use "
        "jupyter_get_output to read one output.",
        get_cells,
        Annotations.read(),
        GetCellsOutput,
    ),
    tool(
        "jupyter_get_output",
        "Read one output of a code cell, by cellId and outputIndex or by its uri: text paged by UTF-8 byte offset "
        "(ANSI colours stripped; an SVG as its markup), or an image as MCP image content: by default a copy at most "
        "maxSide pixels on its longest side and maxImageBytes bytes (the original's size is reported); original: true "
        "returns it as stored. A chart only a renderer draws (Plotly, Bokeh) comes back as a picture of what the "
        "person sees; render: true pictures any output (an HTML table or chart).",
        get_output,
        Annotations.read(),
        OutputText | OutputImage | OutputRendered,
    ),
)

#: jupyter_export_notebook, served in the ``files`` toolset (the notebook as one Markdown document: off the default
#: page, where jupyter_get_notebook_map and jupyter_get_cells read a notebook for far fewer characters)
EXPORT_TOOLS = (
    tool(
        "jupyter_export_notebook",
        "The notebook as one Markdown document (sources, optionally text outputs), in parts that fit the result size "
        "limit: pass nextOffset as offset to get the next part.",
        export_notebook,
        Annotations.read(),
        ExportOutput,
    ),
)
