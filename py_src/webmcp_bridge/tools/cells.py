"""Reading tools: jupyter_get_cells, jupyter_get_output, jupyter_export_notebook."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from webmcp_bridge.calls.payloads import Payload, Wire, sometimes
from webmcp_bridge.calls.registry import Annotations, Tool, ToolResult
from webmcp_bridge.core.bounds import json_bytes, json_page
from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.core.limits import BINARY_MIME_TYPES, EXPORT_CHUNK, ID_CHARS, IDS_LISTED, IMAGE_MIME_TYPES, RESULT_HEADROOM, utf8_len
from webmcp_bridge.core.snapshot import PREVIEW_ORDER, cell_snapshot, export_markdown, is_valid_image
from webmcp_bridge.core.uris import MAX_URI_CHARS, output_uri, parse_uri
from webmcp_bridge.tools.common import MAX_INT, CallContext, CellSelection, NotebookInput, summary, unique
from webmcp_bridge.tools.payloads import NotebookSummary, OutputListing

READ = Annotations(read_only=True, untrusted_content=True)


class CellSnapshot(Wire):
    """A cell as read (:func:`webmcp_bridge.core.snapshot.cell_snapshot`)."""

    id: str
    uri: str = sometimes("notebook://{path}/cells/{cellId}.")
    index: int
    type: Literal["code", "markdown", "raw"]
    sourceHash: str
    source: str = sometimes()
    sourceTruncated: bool = sometimes()
    sourceBytes: int = sometimes()
    sourceOffset: int = sometimes()
    nextSourceOffset: int | None = sometimes()
    executionCount: int | None = sometimes()
    outputCount: int = sometimes()
    outputs: list[OutputListing] = sometimes()
    outputsOmitted: int = sometimes()


class GetCellsOutput(Payload):
    path: str
    cellCount: int
    cells: list[CellSnapshot]
    truncated: bool
    omittedCount: int
    hiddenCellCount: int
    nextStartIndex: int = sometimes()
    omittedCellIds: list[str] = sometimes()


class OutputText(Payload):
    """A page of an output's text."""

    cellId: str
    outputIndex: int
    uri: str
    outputType: str
    mimeType: str
    mimeTypes: list[str]
    text: str
    offset: int
    nextOffset: int | None
    totalBytes: int
    truncated: bool


class OutputImage(Payload):
    """An image output: the image itself follows as MCP image content."""

    cellId: str
    outputIndex: int
    uri: str
    outputType: str
    mimeType: str
    mimeTypes: list[str]
    bytes: int
    image: str


class ExportOutput(Payload):
    path: str
    format: Literal["markdown"]
    document: str
    offset: int
    nextOffset: int | None
    truncated: bool
    exportedCellCount: int
    notebook: NotebookSummary


class GetCellsInput(CellSelection):
    include_source: Annotated[bool, Field(description="Include each cell's source text.")] = True
    include_outputs: Annotated[bool, Field(description="List each code cell's outputs (type, MIME types, size, short preview).")] = False
    source_offset: Annotated[int, Field(description="UTF-8 byte offset into each cell's source, to read a long source page by page: "
                                                    "pass the nextSourceOffset of the previous page (use with cellIds of one cell).",
                                        ge=0, le=MAX_INT)] = 0


def _fit_outputs(snap: dict[str, Any], budget: int) -> None:
    """Drop trailing output descriptors of a cell listed alone until its snapshot fits ``budget`` bytes of JSON
    (counted in ``outputsOmitted``), so the registry never has to cut its source page."""
    outputs = snap.get("outputs")
    while outputs and json_bytes(snap) > budget:
        outputs.pop()
        snap["outputsOmitted"] = snap.get("outputsOmitted", 0) + 1


async def get_cells(ctx: CallContext, args: GetCellsInput) -> dict[str, Any]:
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
    # Keep whole cells while they fit the result cap, so paging by nextStartIndex never skips a cell.
    budget, snapshots = limits.result_bytes - RESULT_HEADROOM, list[dict[str, Any]]()
    for cell in cells:
        snap = cell_snapshot(cell, limits, include_source=args.include_source, include_outputs=args.include_outputs,
                             source_offset=args.source_offset, path=nb.path)
        if not snapshots:
            _fit_outputs(snap, budget)
        budget -= json_bytes(snap) + 1
        if budget < 0 and snapshots:
            break
        snapshots.append(snap)
    for snap in snapshots:  # what reached the agent of each paged source (core.source_reads)
        if snap.get("sourceTruncated"):
            end = snap["nextSourceOffset"] if snap["nextSourceOffset"] is not None else snap["sourceBytes"]
            ctx.reads.record(nb.path, snap["id"], snap["sourceHash"], snap["sourceOffset"], end)
    omitted = indices[len(snapshots):]
    payload: dict[str, Any] = {
        "path": nb.path,
        "cellCount": count,
        "cells": snapshots,
        "truncated": bool(omitted),
        "omittedCount": len(omitted),
        "hiddenCellCount": nb.hidden_cell_count(),
    }
    if omitted and args.cell_ids is None:
        payload["nextStartIndex"] = omitted[0]
    elif omitted:
        payload["omittedCellIds"] = ids[len(snapshots):][:IDS_LISTED]
    return payload


class GetOutputInput(NotebookInput):
    cell_id: Annotated[str | None, Field(description="The cell's nbformat id, as returned by jupyter_get_cells (with outputIndex; or give uri).",
                                         min_length=1, max_length=ID_CHARS)] = None
    output_index: Annotated[int | None, Field(description="Index of the output within the cell, from jupyter_get_cells (with cellId; or give uri).",
                                              ge=0, le=MAX_INT)] = None
    uri: Annotated[str | None, Field(description="The output's uri, as listed by jupyter_get_cells or jupyter_run_cells "
                                                 "(notebook://{path}/cells/{cellId}/outputs/{index}); instead of notebookPath, cellId and outputIndex.",
                                     min_length=1, max_length=MAX_URI_CHARS)] = None
    mime_type: Annotated[str | None, Field(description="Which representation (default: the image if there is one, else the first text one).", max_length=128)] = None
    offset: Annotated[int, Field(description="Byte offset into the text (UTF-8) for paging; use nextOffset from the previous page.", ge=0, le=MAX_INT)] = 0
    max_bytes: Annotated[int | None, Field(description="Most bytes of text to return (default and maximum: the output page limit).", ge=1, le=MAX_INT)] = None


def output_address(args: GetOutputInput) -> tuple[str | None, str, int]:
    """``(notebookPath, cellId, outputIndex)`` from ``uri`` or from the three arguments (INVALID_ARGUMENT when both
    ways, neither, or a uri that names no output)."""
    if args.uri is not None:
        if args.notebook_path is not None or args.cell_id is not None or args.output_index is not None:
            raise ToolError(ErrorCode.INVALID_ARGUMENT, "Give uri alone, or cellId and outputIndex (with notebookPath), not both.")
        address = parse_uri(args.uri)
        if address.cell_id is None or address.output_index is None:
            raise ToolError(ErrorCode.INVALID_ARGUMENT, "That uri names a notebook or a cell, not an output "
                            "(notebook://{path}/cells/{cellId}/outputs/{index}).")
        return address.path, address.cell_id, address.output_index
    if args.cell_id is None or args.output_index is None:
        raise ToolError(ErrorCode.INVALID_ARGUMENT, "Give cellId and outputIndex, or uri.")
    return args.notebook_path, args.cell_id, args.output_index


async def get_output(ctx: CallContext, args: GetOutputInput) -> dict[str, Any] | ToolResult:
    path, cell_id, index = output_address(args)
    nb = await ctx.notebook(path)
    cell = described = nb.find_cells([cell_id], max_outputs=index + 1)[0]
    if index >= described.output_count:
        raise ToolError(ErrorCode.OUTPUT_NOT_FOUND, f"Cell {cell.id!r} has {described.output_count} output(s); there is no index {index}.",
                        cellId=cell.id, outputIndex=index, outputCount=described.output_count)
    output = described.outputs[index]
    mimes = [item.mime for item in output.items]
    if args.mime_type is not None:
        if args.mime_type not in mimes:
            raise ToolError(ErrorCode.OUTPUT_NOT_FOUND, f"That output has no {args.mime_type!r} representation.",
                            cellId=cell.id, outputIndex=index, mimeTypes=mimes)
        mime = args.mime_type
    else:  # an image says more than its "<Figure ...>" text; else the most readable text
        images = [m for m in mimes if m in IMAGE_MIME_TYPES]
        text = [m for m in PREVIEW_ORDER if m in mimes] or [i.mime for i in output.items if not i.binary]
        mime = (images or text or mimes or [""])[0]
    base = {"cellId": cell.id, "outputIndex": index, "uri": output_uri(nb.path, cell.id, index), "outputType": output.output_type,
            "mimeType": mime, "mimeTypes": mimes}
    if mime in BINARY_MIME_TYPES:
        if mime not in IMAGE_MIME_TYPES:
            raise ToolError(ErrorCode.OUTPUT_NOT_FOUND, f"{mime} data cannot be returned; images are returned as {', '.join(IMAGE_MIME_TYPES)}.", **base)
        data, size = nb.read_output_binary(cell.id, index, mime, ctx.limits.image_bytes)
        if data is None:
            raise ToolError(ErrorCode.TOO_LARGE, f"The {mime} output is {size} bytes; images up to {ctx.limits.image_bytes} bytes are returned.",
                            bytes=size, maxBytes=ctx.limits.image_bytes, **base)
        if not is_valid_image(mime, data):
            raise ToolError(ErrorCode.OUTPUT_NOT_FOUND, f"The {mime} data of that output is not a valid {mime} image.", **base)
        return ToolResult({**base, "bytes": size, "image": "returned as MCP image content"},
                          images=[{"type": "image", "data": data, "mimeType": mime}])
    page_max = min(args.max_bytes or ctx.limits.output_page_bytes, ctx.limits.output_page_bytes)
    page = nb.read_output_text(cell.id, index, mime, args.offset, page_max)
    return {**base, "text": page.text, "offset": page.offset, "nextOffset": page.next_offset,
            "totalBytes": page.total_bytes, "truncated": page.next_offset is not None}


class ExportInput(NotebookInput):
    format: Annotated[Literal["markdown"], Field(description="Export format.")] = "markdown"
    include_outputs: Annotated[bool, Field(description="Include text outputs (bounded) and a note for each image.")] = False
    offset: Annotated[int, Field(description="UTF-8 byte offset into the document, to continue a long export: pass the nextOffset "
                                             "of the previous part.", ge=0, le=MAX_INT)] = 0


async def export_notebook(ctx: CallContext, args: ExportInput) -> dict[str, Any]:
    """The Markdown document, one part at a time: ``document`` is bytes ``[offset, nextOffset)`` of the whole
    document (UTF-8, never splitting a character, sized so the result is never cut); ``nextOffset`` is null on
    the last part. Parts of one unchanged notebook (same ``notebook.revision``) join into the whole document."""
    nb = await ctx.notebook(args.notebook_path)
    head = ctx.limits.output_page_bytes // 4 if args.include_outputs else 0
    max_outputs = ctx.limits.outputs_per_cell if args.include_outputs else 0
    language, count = nb.language(), nb.cell_count()
    page_json = ctx.limits.result_bytes - RESULT_HEADROOM - 512
    # Render in chunks and stop once the document reaches past this part: the rest is for the next part. Chunks
    # joined by "\n" equal the whole notebook rendered at once.
    cells_read = 0
    chunks: list[str] = []
    size = 0
    for start in range(0, count, EXPORT_CHUNK):
        chunk = nb.read_cells(range(start, min(count, start + EXPORT_CHUNK)), head_bytes=head, max_outputs=max_outputs)
        cells_read += len(chunk)
        chunks.append(export_markdown(chunk, language=language, include_outputs=args.include_outputs))
        size += utf8_len(chunks[-1]) + 1
        if size > args.offset + page_json:
            break
    document = "\n".join(chunks) if chunks else export_markdown([], language=language, include_outputs=args.include_outputs)
    part, at, nxt, _ = json_page(document, args.offset, page_json, page_json)
    if nxt is None and cells_read < count:  # the part ends where the rendered chunks end: more follows
        nxt = at + utf8_len(part)
    return {"path": nb.path, "format": "markdown", "document": part, "offset": at, "nextOffset": nxt,
            "truncated": nxt is not None, "exportedCellCount": cells_read, "notebook": summary(nb)}


TOOLS = (
    Tool("jupyter_get_cells", "Get cells",
         "Read cells of the live notebook (unsaved edits included): id, index, type, sourceHash, source, execution count, and "
         "with includeOutputs each output listed (type, MIME types, bytes, short preview). A long source comes in pages "
         "(sourceTruncated, nextSourceOffset): read the rest with sourceOffset before replacing it. Use jupyter_get_output to read one output.",
         GetCellsInput, get_cells, READ, GetCellsOutput),
    Tool("jupyter_get_output", "Get output",
         "Read one output of a code cell, by cellId and outputIndex or by its uri: text paged by UTF-8 byte offset (ANSI colours "
         "stripped), or an image as MCP image content.",
         GetOutputInput, get_output, READ, OutputText | OutputImage),
    Tool("jupyter_export_notebook", "Export notebook",
         "The notebook as one Markdown document (sources, optionally text outputs), in parts that fit the result size limit: "
         "pass nextOffset as offset to get the next part.",
         ExportInput, export_notebook, READ, ExportOutput),
)
