"""Images an agent can use: the size of a stored image, read from its header, and the copy the bridge returns.

An output's image can be megabytes of base64 that an agent reaching the page through DevTools receives as one
JSON string. ``jupyter_get_output`` therefore returns, by default, a copy whose longest side and byte size are
bounded; these rules decide that copy, and a host makes it (:meth:`webmcp_bridge.host.protocol.LiveNotebook.
encode_output_image`: in the page the browser decodes, resamples and encodes, off the main thread).

The rules (pure, standard library only):

- The original's width and height are read from the first bytes of the file (:func:`image_size`: PNG's IHDR, GIF's
  logical screen, JPEG's first SOF segment, WebP's VP8/VP8L/VP8X header); an image whose header does not parse is
  not an image of that type.
- :func:`first_request`: scaled so its longest side is at most ``max_side`` pixels (never enlarged, aspect kept),
  and smaller still when the original's bytes scaled by the area would be over ``max_bytes``; in the stored format
  (GIF, which the browser cannot encode, as PNG; lossy formats at :data:`LOSSY_QUALITY`). When the original already
  fits both bounds it is returned as stored and no copy is made.
- :func:`capture_request`: the first copy of a rendered output (a chart the page draws: :meth:`webmcp_bridge.host.
  protocol.NotebookCells.capture_output`), which has no stored file to return: as PNG, scaled so its longest side is
  at most ``max_side`` pixels (never enlarged); :func:`next_request` goes on from it as for a stored PNG.
- :func:`next_request`: a PNG copy still over ``max_bytes`` is made again at the same size as lossy WebP
  (:data:`LOSSY_FALLBACK`: a resampled figure gains colours and PNG copies can outgrow the original); a copy still
  over is made again smaller, by the square root of the ratio (the bytes of an image grow with its area) with a
  margin, in the format of the last copy; at most :data:`MAX_ATTEMPTS` copies in all and never below
  :data:`MIN_SIDE` pixels on its longest side; then the call says the image cannot be made that small.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from typing import Literal

#: bytes of an image's start read to find its width and height (a JPEG's SOF segment can follow metadata)
HEADER_BYTES = 64 * 1024
#: copies made for one request at most, each smaller than the last
MAX_ATTEMPTS = 4
#: the smallest longest side a copy is made at, in pixels
MIN_SIDE = 32
#: quality (0..1) of a lossy copy (JPEG, WebP), as the browser's encoder takes it
LOSSY_QUALITY = 0.85
#: each retry aims this far under the byte bound (encoded sizes do not scale exactly with the area)
SHRINK_MARGIN = 0.9
#: the format a copy is encoded in, by the stored format: the same, except GIF (browsers encode no GIF)
COPY_FORMAT = {
    "image/png": "image/png",
    "image/jpeg": "image/jpeg",
    "image/webp": "image/webp",
    "image/gif": "image/png",
}
LOSSY = frozenset({"image/jpeg", "image/webp"})
#: the format a PNG copy over the byte bound is made in next, at the same size, before any smaller copy
LOSSY_FALLBACK = "image/webp"


@dataclass(frozen=True)
class ImageInfo:
    """A stored image: its MIME type, size in pixels and decoded size in bytes."""

    mime: str
    width: int
    height: int
    bytes: int

    def to_json(self) -> dict[str, object]:
        return {"mimeType": self.mime, "width": self.width, "height": self.height, "bytes": self.bytes}


@dataclass(frozen=True)
class ImageRequest:
    """A copy to make: ``width`` x ``height`` pixels (the whole image resampled), encoded as ``mime`` (at
    ``quality`` 0..1 for a lossy format, else None)."""

    width: int
    height: int
    mime: str
    quality: float | None = None


@dataclass(frozen=True)
class EncodedImage:
    """A copy a host made: base64 ``data`` of ``bytes`` decoded bytes, ``width`` x ``height`` pixels, ``mime``
    (what the encoder really produced)."""

    data: str
    bytes: int
    width: int
    height: int
    mime: str


@dataclass(frozen=True)
class OutputCapture:
    """A picture the page took of one output as the person sees it
    (:meth:`webmcp_bridge.host.protocol.NotebookView.capture_output`).

    ``status``: "ok" (the picture is held under ``key`` until released), "empty" (the output renders nothing: no
    text, image or drawing, or no area), or "unavailable" (the page shows no rendering of it: ``reason`` says why,
    one of "not-shown" (the cell is not in the page: scrolled out of a windowed notebook, its outputs collapsed, the
    notebook not on screen), "no-renderer" (the page has no renderer for any of its types), "too-large" (more nodes
    than the page copies), "failed" (the browser could not draw it)). ``mime`` is the MIME type the page rendered it
    from (the person's renderer's); ``width`` x ``height`` its size on screen in CSS pixels; ``picture_width`` x
    ``picture_height`` the picture held (smaller when the output is larger than the capture bound)."""

    status: Literal["ok", "empty", "unavailable"]
    mime: str = ""
    width: int = 0
    height: int = 0
    picture_width: int = 0
    picture_height: int = 0
    key: str = ""
    reason: str = ""


def image_size(mime: str, head: bytes) -> tuple[int, int] | None:
    """``(width, height)`` in pixels of an image of type ``mime`` from the first bytes of its file (at least the
    header; :data:`HEADER_BYTES` holds it for every image seen in practice), or None when ``head`` does not start
    like such an image or its size is zero."""
    size: tuple[int, int] | None = None
    if mime == "image/png":
        if head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR" and len(head) >= 24:
            size = struct.unpack(">II", head[16:24])
    elif mime == "image/gif":
        if head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
            size = struct.unpack("<HH", head[6:10])
    elif mime == "image/webp":
        size = _webp_size(head)
    elif mime == "image/jpeg":
        size = _jpeg_size(head)
    if size is None or size[0] <= 0 or size[1] <= 0:
        return None
    return int(size[0]), int(size[1])


def _webp_size(head: bytes) -> tuple[int, int] | None:
    if head[:4] != b"RIFF" or head[8:12] != b"WEBP" or len(head) < 30:
        return None
    chunk = head[12:16]
    if chunk == b"VP8 " and head[23:26] == b"\x9d\x01\x2a":  # lossy: the key frame's start code, then 14-bit sizes
        width, height = struct.unpack("<HH", head[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and head[20] == 0x2F:  # lossless: signature byte, then 14-bit (size - 1) fields
        bits = int.from_bytes(head[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X":  # extended: 24-bit (size - 1) fields
        return int.from_bytes(head[24:27], "little") + 1, int.from_bytes(head[27:30], "little") + 1
    return None


#: JPEG start-of-frame markers (baseline, extended, progressive, lossless...; not DHT C4, JPG C8, DAC CC)
_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}


def _jpeg_size(head: bytes) -> tuple[int, int] | None:
    if head[:3] != b"\xff\xd8\xff":
        return None
    at = 2
    while at + 4 <= len(head):
        if head[at] != 0xFF:
            return None
        marker = head[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        if marker in (0x01, *range(0xD0, 0xD8)):  # markers without a length
            at += 2
            continue
        length = struct.unpack(">H", head[at + 2 : at + 4])[0]
        if marker in _SOF:
            if at + 9 > len(head):
                return None
            height, width = struct.unpack(">HH", head[at + 5 : at + 9])
            return width, height
        if marker in (0xD9, 0xDA):  # end of image, start of scan: no frame header before it
            return None
        at += 2 + length
    return None


def _scaled(info: ImageInfo, side: float) -> tuple[int, int]:
    """``info``'s size scaled so its longest side is ``side`` pixels (never enlarged; at least 1 x 1)."""
    scale = min(1.0, side / max(info.width, info.height))
    return max(1, round(info.width * scale)), max(1, round(info.height * scale))


def _request(info: ImageInfo, side: float, mime: str | None = None) -> ImageRequest:
    mime = mime or COPY_FORMAT.get(info.mime, "image/png")
    width, height = _scaled(info, side)
    return ImageRequest(width, height, mime, LOSSY_QUALITY if mime in LOSSY else None)


def first_request(info: ImageInfo, max_side: int, max_bytes: int) -> ImageRequest | None:
    """The first copy to make of ``info`` for an agent that wants at most ``max_side`` pixels on the longest side
    and ``max_bytes`` decoded bytes; None when the original fits both and is returned as stored."""
    longest = max(info.width, info.height)
    if longest <= max_side and info.bytes <= max_bytes:
        return None
    side: float = min(max_side, longest)
    if info.bytes * (side / longest) ** 2 > max_bytes:  # bytes grow with the area: aim under the bound at once
        side = max(MIN_SIDE, longest * math.sqrt(max_bytes / info.bytes) * SHRINK_MARGIN)
    return _request(info, side)


def next_request(info: ImageInfo, made: list[tuple[ImageRequest, int]], max_bytes: int) -> ImageRequest | None:
    """The next copy to make after the copies ``made`` (each request with the bytes it came to) were all over
    ``max_bytes``; None when :data:`MAX_ATTEMPTS` copies were made or the next would be under :data:`MIN_SIDE`."""
    if not made or len(made) >= MAX_ATTEMPTS:
        return None
    last, got = made[-1]
    if last.mime == "image/png" and not any(request.mime == LOSSY_FALLBACK for request, _ in made):
        # a resampled figure gains colours (smoothed edges) and the browser's PNG encoder compresses lightly: the
        # copy can be larger than the original. The same pixels as lossy WebP are a fraction of that.
        return ImageRequest(last.width, last.height, LOSSY_FALLBACK, LOSSY_QUALITY)
    side = max(last.width, last.height) * math.sqrt(max_bytes / max(got, 1)) * SHRINK_MARGIN
    side = min(side, max(last.width, last.height) - 1)  # always smaller than the last copy
    if side < MIN_SIDE:
        return None
    return _request(info, side, last.mime)


def capture_request(width: int, height: int, max_side: int) -> ImageRequest:
    """The first copy of a picture of ``width`` x ``height`` pixels that the page took of a rendered output: a PNG at
    most ``max_side`` pixels on its longest side (aspect kept, never enlarged, at least 1 x 1)."""
    return _request(ImageInfo("image/png", max(1, width), max(1, height), 0), min(max_side, max(width, height, 1)))
