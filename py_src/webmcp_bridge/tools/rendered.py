"""jupyter_get_output's pictures of rendered outputs (a chart only a renderer draws, or any output on request) as an MCP
image of what the person sees, bounded like an image's copy (:mod:`webmcp_bridge.core.images`)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from webmcp_bridge.calls.payloads import Wire, sometimes
from webmcp_bridge.calls.registry import ToolResult
from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.core.images import (
    EncodedImage,
    ImageInfo,
    ImageRequest,
    OutputCapture,
    capture_request,
    next_request,
)
from webmcp_bridge.core.limits import CAPTURE_CHARS, CAPTURE_NODES, CAPTURE_SIDE
from webmcp_bridge.tools.common import CallContext
from webmcp_bridge.tools.payloads import ImageFacts, OutputAddress


class RenderedFacts(Wire):
    """The output as the person sees it: the MIME type the page rendered it from, its size on screen (CSS pixels)."""

    mimeType: str
    width: int
    height: int


class OutputRendered(OutputAddress):
    """A picture of the output as the page renders it (a chart, an HTML table): the image follows as MCP image
    content, unless the output renders nothing (``empty``)."""

    rendered: bool = Field(description="Always true: a picture of the rendered output, not a stored representation.")
    original: RenderedFacts
    image: ImageFacts = sometimes("What the image block holds (no key: the output renders nothing).")
    empty: bool = sometimes("The output renders nothing (no text, image or drawing): there is no picture.")
    message: str = sometimes()


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
    """A picture of the output as the page renders it (:meth:`webmcp_bridge.host.protocol.NotebookView.
    capture_output`): an MCP image bounded like an image's copy, with the MIME type it was rendered from and its size
    on screen (``original``); ``empty`` when it renders nothing. When the page has no picture of it: an error
    (OUTPUT_NOT_FOUND) for ``render: true``, else the sentence why, for the stored data's ``note``."""
    limits = ctx.limits
    max_side = args.max_side or limits.image_side
    max_bytes = min(args.max_image_bytes or limits.image_copy_bytes, limits.image_bytes)
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
        request: ImageRequest | None = capture_request(capture.picture_width, capture.picture_height, max_side)
        info = ImageInfo("image/png", capture.picture_width, capture.picture_height, 0)
        made: list[tuple[ImageRequest, int]] = []
        while request is not None:
            copy: EncodedImage = await nb.encode_capture(capture.key, request)
            if copy.bytes <= max_bytes:
                image = {"mimeType": copy.mime, "width": copy.width, "height": copy.height, "bytes": copy.bytes}
                payload = {
                    **base,
                    "image": {**image, "downscaled": (copy.width, copy.height) != (capture.width, capture.height)},
                }
                return ToolResult(payload, images=[{"type": "image", "data": copy.data, "mimeType": copy.mime}])
            made.append((request, copy.bytes))
            request = next_request(info, made, max_bytes)
    finally:
        nb.release_capture(capture.key)
    smallest = made[-1]
    raise ToolError(
        ErrorCode.TOO_LARGE,
        f"A picture of this {capture.width}x{capture.height} output did not fit {max_bytes} bytes (the smallest "
        f"made, {smallest[0].width}x{smallest[0].height}, was {smallest[1]} bytes); raise maxImageBytes (at most "
        f"{limits.image_bytes}) or lower maxSide.",
        maxImageBytes=max_bytes,
        cellId=cell_id,
        outputIndex=index,
    )
