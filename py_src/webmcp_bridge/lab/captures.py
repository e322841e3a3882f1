"""Pictures of rendered outputs over the live JupyterLab (:class:`LabCaptures`, mixed into
:class:`webmcp_bridge.lab.notebook.LabNotebook`): ``notebook.js`` draws the output's own rendering, as the person
sees it, into a picture it holds by key, and makes copies of it at the sizes Python decides."""

from __future__ import annotations

import json
from typing import Any

from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.core.images import EncodedImage, ImageRequest, OutputCapture
from webmcp_bridge.core.limits import CAPTURE_CHARS, CAPTURE_NODES, CAPTURE_PIXELS, CAPTURE_SLICE_MS
from webmcp_bridge.lab.answers import output_answer
from webmcp_bridge.lab.ffi import is_nullish

#: the statuses and reasons ``notebook.js`` captureOutput answers with (anything else is read as "failed")
_STATUSES = ("ok", "empty", "unavailable")
_REASONS = ("not-shown", "no-renderer", "too-large", "failed")


class LabCaptures:
    """``capture_output`` / ``encode_capture`` / ``release_capture`` of the host protocol, each one crossing of
    ``notebook.js`` (captureOutput, encodeCapture, releaseCapture)."""

    def _call(self, method: str, *args: Any) -> Any:  # LabNotebook's
        raise NotImplementedError

    async def _call_async(self, method: str, *args: Any) -> Any:  # LabNotebook's
        raise NotImplementedError

    async def capture_output(self, cell_id: str, output_index: int, max_side: int) -> OutputCapture:
        """``notebook.js`` captureOutput: the output's rendered node, copied with its computed styles in steps of at
        most :data:`~webmcp_bridge.core.limits.CAPTURE_SLICE_MS` (yielding to the page between them), drawn by the
        browser from an SVG ``foreignObject`` image, at most ``max_side`` pixels on its longest side; an output of more
        than :data:`~webmcp_bridge.core.limits.CAPTURE_NODES` nodes or ``CAPTURE_CHARS`` characters of text and style
        is "too-large"; its images and canvases are copied at most ``CAPTURE_PIXELS`` pixels each."""
        raw = await self._call_async(
            "captureOutput",
            cell_id,
            output_index,
            max_side,
            CAPTURE_SLICE_MS,
            CAPTURE_NODES,
            CAPTURE_CHARS,
            CAPTURE_PIXELS,
        )
        data = output_answer(raw, cell_id)
        status = data.get("status")
        if status not in _STATUSES:
            return OutputCapture("unavailable", reason="failed")
        if status == "unavailable":
            reason = data.get("reason")
            return OutputCapture("unavailable", reason=reason if reason in _REASONS else "failed")
        return OutputCapture(
            status,
            str(data.get("mime") or ""),
            int(data.get("width") or 0),
            int(data.get("height") or 0),
            int(data.get("pictureWidth") or 0),
            int(data.get("pictureHeight") or 0),
            str(data.get("key") or ""),
        )

    async def encode_capture(self, key: str, request: ImageRequest) -> EncodedImage:
        """``notebook.js`` encodeCapture: the held picture resampled by createImageBitmap and encoded by
        OffscreenCanvas.convertToBlob (both asynchronous)."""
        raw = await self._call_async("encodeCapture", key, request.width, request.height, request.mime, request.quality)
        if is_nullish(raw):
            raise ToolError(ErrorCode.OUTPUT_NOT_FOUND, "That picture of the output is no longer held.")
        data = json.loads(str(raw))
        if "error" in data:
            raise ToolError(
                ErrorCode.OUTPUT_NOT_FOUND,
                "The browser could not make a picture of that output; read its stored data with render: false.",
                reason="failed",
            )
        return EncodedImage(
            str(data["data"]), int(data["bytes"]), int(data["width"]), int(data["height"]), str(data["mime"])
        )

    def release_capture(self, key: str) -> None:
        self._call("releaseCapture", key)
