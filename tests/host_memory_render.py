"""The in-memory host's stand-in for the page's pictures of rendered outputs (a chart, an HTML table):
:class:`MemoryCaptures`, mixed into :class:`host_memory.MemoryNotebook`."""

from __future__ import annotations

import asyncio
import base64
import uuid
from typing import Any

import png_codec
from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.core.images import EncodedImage, ImageRequest, OutputCapture
from webmcp_bridge.core.nbjson import output_texts
from webmcp_bridge.core.snapshot import richest_mime

#: the MIME types the in-memory host "renders" and the size of their picture, in CSS pixels
RENDERED_SIZES = {
    "application/vnd.plotly.v1+json": (700, 450),
    "application/vnd.bokehjs_exec.v0+json": (600, 400),
    "text/html": (640, 200),
    "text/plain": (640, 40),
}
#: the one colour (RGBA) of the in-memory host's pictures
PICTURE_RGBA = bytes((40, 90, 160, 255))


class MemoryCaptures:
    """``capture_output`` / ``encode_capture`` / ``release_capture`` of the protocol, over the notebook's outputs:
    an output whose MIME types include one of :data:`RENDERED_SIZES` (its richest first, then in its own order)
    "renders" as a picture of that size filled with one colour; such a text that is blank renders nothing
    ("empty"); an output with none of those types has no renderer here. Cells in ``not_shown`` (tests set it)
    stand in for cells the page does not show."""

    not_shown: set[str]
    captures: dict[str, tuple[int, int]]

    def _output(self, cell_id: str, output_index: int) -> dict[str, Any]:  # MemoryNotebook's
        raise NotImplementedError

    async def capture_output(self, cell_id: str, output_index: int, max_side: int) -> OutputCapture:
        output = self._output(cell_id, output_index)
        await asyncio.sleep(0)
        if cell_id in self.not_shown:
            return OutputCapture("unavailable", reason="not-shown")
        texts = output_texts(output)
        ordered = [richest_mime(list(texts)), *texts]
        mime = next((m for m in ordered if m in RENDERED_SIZES), None)
        if mime is None:
            return OutputCapture("unavailable", reason="no-renderer")
        width, height = RENDERED_SIZES[mime]
        if not texts[mime].strip():
            return OutputCapture("empty", mime=mime)
        scale = min(1.0, max_side / max(width, height))
        picture = (max(1, round(width * scale)), max(1, round(height * scale)))
        key = f"capture-{uuid.uuid4().hex[:8]}"
        self.captures[key] = picture
        return OutputCapture("ok", mime, width, height, picture[0], picture[1], key)

    async def encode_capture(self, key: str, request: ImageRequest) -> EncodedImage:
        """A PNG of the one colour at the size asked for (these pictures have no detail to resample)."""
        await asyncio.sleep(0)
        if key not in self.captures:
            raise ToolError(ErrorCode.OUTPUT_NOT_FOUND, "That picture of the output is no longer held.")
        data = png_codec.encode(request.width, request.height, [PICTURE_RGBA * request.width] * request.height)
        return EncodedImage(
            base64.b64encode(data).decode("ascii"), len(data), request.width, request.height, "image/png"
        )

    def release_capture(self, key: str) -> None:
        self.captures.pop(key, None)
